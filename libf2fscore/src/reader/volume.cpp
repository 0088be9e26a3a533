// Opening a volume: superblock and checkpoint selection, journals,
// summaries and the NAT/SIT lookups. Rules as f2fs_fill_super(),
// get_valid_checkpoint() and sanity_check_ckpt() in fs/f2fs/super.c and
// fs/f2fs/checkpoint.c.
#include <algorithm>
#include <cstdio>
#include <cstring>
#include <unordered_set>

#include "f2fscore/checksum.hpp"
#include "f2fscore/multi_device.hpp"
#include "reader/volume_internal.hpp"
#include "util/text.hpp"

namespace f2fscore {

using namespace disk;

namespace {
using detail::fmt;
}  // namespace

std::string at_block(std::uint64_t blkaddr) { return fmt(" (block %llu)", blkaddr); }

// The blocks the volume claims: block_count, or for a multi-device volume
// the end of its device list (block_count there counts every device's
// whole size, tails past their last segment included, as mkfs.f2fs sums
// them; a MultiDevice addresses the segments only).
std::uint64_t claimed_blocks(const SuperBlock& sb) {
  if (!is_multi_device(sb)) return sb.block_count.get();
  const auto r = device_ranges(sb);
  return r.back().start_blkaddr + r.back().blocks;
}

Status Volume::Impl::read(std::uint64_t blkaddr, void* out, std::uint32_t nblocks) {
  return read_at(*dev, blkaddr * kBlockSize,
                 std::span<std::uint8_t>(static_cast<std::uint8_t*>(out), static_cast<std::size_t>(nblocks) * kBlockSize));
}

Volume::Volume() : impl_(std::make_unique<Impl>()) {}
Volume::~Volume() = default;

const SuperBlock& Volume::superblock() const { return impl_->sb; }
const Checkpoint& Volume::checkpoint() const { return impl_->cp; }
std::span<const std::uint8_t> Volume::checkpoint_blocks() const { return impl_->cp_blocks; }
const OpenReport& Volume::open_report() const { return impl_->report; }
BlockDevice& Volume::device() { return *impl_->dev; }
const Geometry& Volume::geometry() const { return impl_->geo; }
const VersionBitmaps& Volume::version_bitmaps() const { return impl_->bitmaps; }
std::uint64_t Volume::main_blkaddr() const { return impl_->geo.main_blkaddr(); }
std::uint32_t Volume::main_segments() const { return impl_->geo.main_segments(); }
std::uint64_t Volume::segment_start(std::uint32_t segno) const { return impl_->geo.segment_start(segno); }
bool Volume::is_valid_main_addr(block_t a) const { return impl_->geo.is_main_addr(a); }
std::uint32_t Volume::segno_of(block_t a) const { return impl_->geo.segno_of(a); }
nid_t Volume::max_nid() const { return impl_->geo.max_nid(); }
bool Volume::nat_bits_valid() const { return impl_->nat_bits_ok; }

namespace {

// One CP pack, validated as validate_checkpoint(): head and tail blocks with
// good CRCs and equal versions.
struct PackCandidate {
  bool ok = false;
  std::string why;
  std::uint64_t version = 0;
  std::vector<std::uint8_t> head;
};

PackCandidate read_pack(Volume::Impl& v, std::uint64_t start, int idx) {
  PackCandidate c;
  c.head.assign(kBlockSize, 0);
  const std::string name = fmt("checkpoint pack %llu", static_cast<unsigned long long>(idx));
  if (!v.read(start, c.head.data())) {
    c.why = name + ": cannot read" + at_block(start);
    return c;
  }
  const std::uint32_t ofs = load_le32(c.head.data(), offsetof(Checkpoint, checksum_offset));
  if (ofs < kCpMinChecksumOffset || ofs > kCpChecksumOffset) {
    c.why = name + fmt(": checksum_offset %llu outside [192,4092]", ofs) + at_block(start);
    return c;
  }
  if (load_le32(c.head.data(), ofs) != checkpoint_checksum(c.head.data())) {
    c.why = name + ": CRC mismatch" + at_block(start);
    return c;
  }
  const std::uint32_t total = load_le32(c.head.data(), offsetof(Checkpoint, cp_pack_total_block_count));
  if (total <= kCheckpointPacks || total > kBlocksPerSeg) {  // as f2fs_get_valid_checkpoint()
    c.why = name + fmt(": cp_pack_total_block_count %llu out of range", total) + at_block(start);
    return c;
  }
  std::vector<std::uint8_t> tail(kBlockSize);
  if (!v.read(start + total - 1, tail.data())) {
    c.why = name + ": cannot read the closing block" + at_block(start + total - 1);
    return c;
  }
  const std::uint32_t tofs = load_le32(tail.data(), offsetof(Checkpoint, checksum_offset));
  if (tofs < kCpMinChecksumOffset || tofs > kCpChecksumOffset || load_le32(tail.data(), tofs) != checkpoint_checksum(tail.data())) {
    c.why = name + ": closing block CRC mismatch" + at_block(start + total - 1);
    return c;
  }
  c.version = load_le64(c.head.data(), 0);
  if (load_le64(tail.data(), 0) != c.version) {
    c.why = name + ": versions of the opening and closing blocks differ" + at_block(start);
    return c;
  }
  c.ok = true;
  return c;
}

// sanity_check_ckpt(): the counts must fit the superblock's geometry.
Status sanity_check_checkpoint(const SuperBlock& sb, const Checkpoint& cp, std::uint64_t where, bool check_next_free_nid) {
  auto bad = [&](const std::string& m) { return make_error(Errc::corrupt, "checkpoint: " + m + at_block(where), where * kBlockSize); };
  const Geometry geo(sb);
  const std::uint32_t main_segs = geo.main_segments();
  const std::uint64_t fsmeta = static_cast<std::uint64_t>(geo.meta_segments()) + cp.rsvd_segment_count.get();
  if (fsmeta >= sb.segment_count.get()) return bad(fmt("reserved segments %llu leave no room", cp.rsvd_segment_count.get()));
  // A read-only image has no overprovision: every main block is the
  // user's, and sanity_check_ckpt() in fs/f2fs/super.c counts one segment
  // more for the ro feature.
  const std::uint64_t user = cp.user_block_count.get();
  const std::uint64_t user_bound = geo.main_blocks() + ((sb.feature.get() & feature::ro) ? kBlocksPerSeg : 0);
  if (user == 0 || user >= user_bound)
    return bad(fmt("user_block_count %llu outside (0, %llu)", user, user_bound));
  if (cp.valid_block_count.get() > user)
    return bad(fmt("valid_block_count %llu exceeds user_block_count %llu", cp.valid_block_count.get(), user));
  // free_segment_count is not bounded by the main area: mkfs.f2fs writes its
  // usable segments less the active logs, which with zones of several
  // segments can exceed segment_count_main; the kernel does not check it.
  for (int i = 0; i < 3; ++i) {
    if (cp.cur_node_segno[i].get() >= main_segs || cp.cur_node_blkoff[i].get() >= kBlocksPerSeg)
      return bad(fmt("cur_node_segno[%llu] %llu / blkoff %llu out of range", static_cast<unsigned long long>(i),
                     cp.cur_node_segno[i].get(), cp.cur_node_blkoff[i].get()));
    if (cp.cur_data_segno[i].get() >= main_segs || cp.cur_data_blkoff[i].get() > kBlocksPerSeg)
      return bad(fmt("cur_data_segno[%llu] %llu / blkoff %llu out of range", static_cast<unsigned long long>(i),
                     cp.cur_data_segno[i].get(), cp.cur_data_blkoff[i].get()));
  }
  // A read-only image uses two logs (hot node, hot data); mkfs leaves the
  // other four at segment 0, and sanity_check_ckpt() in fs/f2fs/super.c
  // skips the cross check for the ro feature.
  const bool two_logs = sb.feature.get() & feature::ro;
  for (int i = 0; i < 3 && !two_logs; ++i)
    for (int j = 0; j < 3; ++j)
      if (cp.cur_node_segno[i].get() == cp.cur_data_segno[j].get())
        return bad(fmt("node log %llu and data log %llu share segment %llu", static_cast<unsigned long long>(i),
                       static_cast<unsigned long long>(j), cp.cur_node_segno[i].get()));
  const std::uint32_t sit_bytes = geo.sit_bitmap_bytes();
  const std::uint32_t nat_bytes = geo.nat_bitmap_bytes();
  if (cp.sit_ver_bitmap_bytesize.get() != sit_bytes || cp.nat_ver_bitmap_bytesize.get() != nat_bytes)
    return bad(fmt("version bitmap sizes %llu/%llu, expected %llu", cp.sit_ver_bitmap_bytesize.get(),
                   cp.nat_ver_bitmap_bytesize.get(), sit_bytes) + fmt("/%llu", nat_bytes));
  const std::uint32_t payload = sb.cp_payload.get();
  const std::uint32_t start_sum = cp.cp_pack_start_sum.get();
  if (start_sum < 1 + payload || start_sum >= cp.cp_pack_total_block_count.get())
    return bad(fmt("cp_pack_start_sum %llu outside [%llu, %llu)", start_sum, 1 + payload, cp.cp_pack_total_block_count.get()));
  if (!(cp.ckpt_flags.get() & cp_flag::large_nat_bitmap) && payload == 0 &&
      static_cast<std::uint64_t>(sit_bytes) + nat_bytes > kMaxBitmapSizeInCkpt)
    return bad("version bitmaps do not fit the checkpoint block");
  // With cp_payload the NAT bitmap stays in the CP block and the SIT bitmap
  // fills the payload blocks (__bitmap_ptr() in fs/f2fs/f2fs.h).
  if (!(cp.ckpt_flags.get() & cp_flag::large_nat_bitmap) && payload > 0 &&
      (nat_bytes > kMaxBitmapSizeInCkpt || static_cast<std::uint64_t>(sit_bytes) > static_cast<std::uint64_t>(payload) * kBlockSize))
    return bad(fmt("version bitmaps of %llu/%llu bytes do not fit the CP block and %llu payload blocks", sit_bytes, nat_bytes,
                   payload));
  if ((cp.ckpt_flags.get() & cp_flag::large_nat_bitmap) && cp.checksum_offset.get() != kCpMinChecksumOffset)
    return bad(fmt("large_nat_bitmap with checksum_offset %llu, not 192", cp.checksum_offset.get()));
  if (check_next_free_nid && cp.next_free_nid.get() >= geo.max_nid())
    return bad(fmt("next_free_nid %llu is past the NAT", cp.next_free_nid.get()));
  return {};
}

}  // namespace

Result<std::unique_ptr<Volume>> Volume::open(BlockDevice& dev, const VolumeOpenOptions& opts) {
  std::unique_ptr<Volume> vol(new Volume());
  Impl& v = *vol->impl_;
  v.dev = &dev;
  v.opts = opts;
  const std::uint64_t dev_blocks = dev.info().size_bytes / kBlockSize;
  if (dev_blocks < 2)
    return make_error(Errc::corrupt,
                      fmt("device has %llu bytes: too small to hold an F2FS superblock (ends at byte %llu)",
                          dev.info().size_bytes, 2ull * kBlockSize),
                      dev.info().size_bytes);

  // Superblocks: the first valid copy, as the kernel's read_raw_super_block().
  // The checker's lenient open takes a copy that describes more blocks than
  // the device holds (a truncated image) only when the other copy does too:
  // a copy that fits the device is the more credible one.
  std::string first_error;
  Errc first_code = Errc::corrupt;
  bool found = false, found_fits = false;
  for (int copy = 0; copy < 2; ++copy) {
    std::vector<std::uint8_t> b(kBlockSize);
    if (!v.read(static_cast<std::uint64_t>(copy), b.data())) {
      v.report.warnings.push_back(fmt("superblock #%llu: cannot read block %llu", static_cast<unsigned long long>(copy),
                                      static_cast<unsigned long long>(copy)));
      continue;
    }
    SuperBlock sb;
    std::memcpy(&sb, b.data() + kSuperOffset, sizeof sb);
    // The checker's lenient open takes a truncated device (below).
    auto st = validate_superblock(sb, opts.lenient_checkpoint ? 0 : dev_blocks, copy);
    if (!st) {
      if (first_error.empty()) {
        first_error = st.error().message;
        first_code = st.error().code;
      }
      v.report.warnings.push_back(st.error().message);
      continue;
    }
    const bool fits = claimed_blocks(sb) <= dev_blocks;
    const bool chosen = copy == opts.superblock_copy && (fits || !found_fits);
    if (!found || (fits && !found_fits) || chosen) {
      if (found && copy == 1 && !chosen)
        v.report.warnings.push_back(fmt("superblock #0: block_count %llu is past the device's %llu blocks, where "
                                        "superblock #1 fits it",
                                        v.sb.block_count.get(), dev_blocks));
      v.sb = sb;
      v.report.superblock_copy = copy;
      found = true;
      found_fits = fits;
    }
  }
  if (!found) {
    std::string all;
    for (const auto& w : v.report.warnings) all += (all.empty() ? "" : "; ") + w;
    return make_error(first_code == Errc::unsupported ? Errc::unsupported : Errc::corrupt,
                      "no valid superblock: " + all, kSuperOffset);
  }
  const SuperBlock& sb = v.sb;
  v.geo = Geometry(sb);
  const Geometry& geo = v.geo;
  // A multi-device volume is read through all its devices as one address
  // space (open_volume_devices(), MultiDevice): its first device alone is
  // too short.
  if (is_multi_device(sb) && geo.volume_end() > dev_blocks) {
    const auto ranges = device_ranges(sb);
    std::string names;
    for (std::size_t i = 1; i < ranges.size(); ++i) names += (i > 1 ? ", " : "") + ranges[i].path;
    return make_error(Errc::unsupported,
                      dev.info().name + fmt(" holds device 0 of a volume of %llu devices (the others: ",
                                            static_cast<unsigned long long>(ranges.size())) +
                          names + "); open them all (open_volume_devices(); the tools find them by these paths, or "
                                  "--device names them)");
  }
  if (geo.volume_end() > dev_blocks || (opts.lenient_checkpoint && claimed_blocks(sb) > dev_blocks)) {
    const std::uint64_t need = std::max<std::uint64_t>(geo.volume_end(), claimed_blocks(sb));
    const std::string what = fmt("superblock #%llu: the volume needs %llu blocks but the device has %llu: truncated image?",
                                 static_cast<unsigned long long>(v.report.superblock_copy), need, dev_blocks) +
                             fmt(" (the device ends at byte %llu)", dev.info().size_bytes);
    // The checker checks a truncated volume as far as it goes (fsck.f2fs
    // does too); blocks past the end read as errors.
    if (!opts.lenient_checkpoint || dev_blocks <= geo.main_blkaddr())
      return make_error(Errc::corrupt, what, dev.info().size_bytes);
    v.report.warnings.push_back("device: " + what);
  }
  if (sb.feature.get() & feature::inode_checksum) v.chksum_seed = inode_checksum_seed(sb.uuid);

  // Checkpoint: the newer of the two valid packs.
  PackCandidate packs[2];
  for (int i = 0; i < 2; ++i) packs[i] = read_pack(v, geo.cp_pack_start(i), i);
  int pick = -1;
  if (packs[0].ok && packs[1].ok) pick = packs[1].version > packs[0].version ? 1 : 0;
  else if (packs[0].ok) pick = 0;
  else if (packs[1].ok) pick = 1;
  for (int i = 0; i < 2; ++i)
    if (!packs[i].ok) v.report.warnings.push_back(packs[i].why);
  if (pick < 0)
    return make_error(Errc::corrupt, "no valid checkpoint: " + packs[0].why + "; " + packs[1].why,
                      static_cast<std::uint64_t>(sb.cp_blkaddr.get()) * kBlockSize);
  std::memcpy(&v.cp, packs[pick].head.data(), sizeof(Checkpoint));
  if (opts.lenient_checkpoint) {
    // For the checker: a sealed pack that fails sanity_check_ckpt() gets
    // the fields the superblock determines recomputed (user_block_count as
    // mkfs sets it, (main segments - overprov_segment_count) x 512;
    // cp_pack_start_sum 1 + cp_payload without orphan blocks; the version
    // bitmap sizes); if it still fails, the other sealed pack is used when
    // it passes. Each step is a warning. The kernel and fsck.f2fs refuse.
    auto st = sanity_check_checkpoint(sb, v.cp, geo.cp_pack_start(pick), false);
    if (!st) {
      Checkpoint fixed = v.cp;
      std::vector<std::string> notes;
      const std::uint64_t ovp = fixed.overprov_segment_count.get();
      if (ovp < geo.main_segments()) {
        const std::uint64_t user = (geo.main_segments() - ovp) * kBlocksPerSeg;
        if (fixed.user_block_count.get() != user) {
          notes.push_back(fmt("checkpoint: user_block_count %llu, the superblock and overprov_segment_count give %llu",
                              fixed.user_block_count.get(), user));
          fixed.user_block_count.set(user);
        }
      }
      if (!(fixed.ckpt_flags.get() & cp_flag::orphan_present) && fixed.cp_pack_start_sum.get() != 1 + sb.cp_payload.get()) {
        notes.push_back(fmt("checkpoint: cp_pack_start_sum %llu, the superblock's cp_payload gives %llu (no orphan blocks)",
                            fixed.cp_pack_start_sum.get(), 1 + sb.cp_payload.get()));
        fixed.cp_pack_start_sum.set(1 + sb.cp_payload.get());
      }
      if (fixed.sit_ver_bitmap_bytesize.get() != geo.sit_bitmap_bytes() ||
          fixed.nat_ver_bitmap_bytesize.get() != geo.nat_bitmap_bytes()) {
        notes.push_back(fmt("checkpoint: sit/nat_ver_bitmap_bytesize %llu/%llu, the superblock gives %llu",
                            fixed.sit_ver_bitmap_bytesize.get(), fixed.nat_ver_bitmap_bytesize.get(), geo.sit_bitmap_bytes()) +
                        fmt("/%llu", geo.nat_bitmap_bytes()));
        fixed.sit_ver_bitmap_bytesize.set(geo.sit_bitmap_bytes());
        fixed.nat_ver_bitmap_bytesize.set(geo.nat_bitmap_bytes());
      }
      const int other = 1 - pick;
      Checkpoint other_cp{};
      if (packs[other].ok) std::memcpy(&other_cp, packs[other].head.data(), sizeof(Checkpoint));
      if (!notes.empty() && sanity_check_checkpoint(sb, fixed, geo.cp_pack_start(pick), false)) {
        v.cp = fixed;
        for (auto& n : notes) v.report.warnings.push_back(n + " (recomputed)" + at_block(geo.cp_pack_start(pick)));
      } else if (packs[other].ok && sanity_check_checkpoint(sb, other_cp, geo.cp_pack_start(other), false)) {
        v.report.warnings.push_back(fmt("checkpoint pack %llu: ", static_cast<unsigned long long>(pick)) +
                                    "fails the superblock's bounds, the other pack is used: " + st.error().message);
        pick = other;
        v.cp = other_cp;
      }
    }
  }
  v.cp_start = geo.cp_pack_start(pick);
  v.report.checkpoint_pack = pick;
  v.report.checkpoint_ver = packs[pick].version;
  v.report.clean_unmount = v.cp.ckpt_flags.get() & cp_flag::umount;
  F2FSCORE_TRY(sanity_check_checkpoint(sb, v.cp, v.cp_start, !opts.lenient_checkpoint));
  if (opts.lenient_checkpoint &&
      v.cp.next_free_nid.get() >= geo.max_nid()) {
    v.report.next_free_nid_clamped = true;
    v.report.raw_next_free_nid = v.cp.next_free_nid.get();
    v.cp.next_free_nid.set(sb.root_ino.get() + 1);
    v.report.warnings.push_back(fmt("checkpoint: next_free_nid %llu is past the NAT (clamped to %llu)",
                                    v.report.raw_next_free_nid, v.cp.next_free_nid.get()) +
                                at_block(v.cp_start));
  }
  v.cp_blocks.assign(static_cast<std::size_t>(1 + sb.cp_payload.get()) * kBlockSize, 0);
  std::memcpy(v.cp_blocks.data(), packs[pick].head.data(), kBlockSize);
  std::memcpy(v.cp_blocks.data(), &v.cp, sizeof(Checkpoint));
  if (sb.cp_payload.get() > 0) F2FSCORE_TRY(v.read(v.cp_start + 1, v.cp_blocks.data() + kBlockSize, sb.cp_payload.get()));
  if ((v.cp.ckpt_flags.get() & cp_flag::large_nat_bitmap) &&
      4 + static_cast<std::uint64_t>(v.cp.nat_ver_bitmap_bytesize.get()) + v.cp.sit_ver_bitmap_bytesize.get() >
          kCpChecksumOffset - kCpBitmapOffset + static_cast<std::uint64_t>(sb.cp_payload.get()) * kBlockSize)
    return make_error(Errc::corrupt, "checkpoint: version bitmaps overflow the checkpoint" + at_block(v.cp_start));
  auto bitmaps = geo.version_bitmaps(v.cp_blocks);
  if (!bitmaps) return make_error(Errc::corrupt, bitmaps.error().message + at_block(v.cp_start), v.cp_start * kBlockSize);
  v.bitmaps = *bitmaps;

  // Summaries of the active logs and the two journals.
  const std::uint32_t flags = v.cp.ckpt_flags.get();
  F2FSCORE_TRY(load_curseg_summaries(dev, geo, v.cp, v.cp_start, SummaryScope::all, v.sums));
  // A journal count past its capacity (38 NAT, 6 SIT entries): clamped
  // with a warning when opened leniently, else refused.
  struct JournalCheck {
    const char* name;
    Journal& j;
    std::uint32_t capacity;
    std::uint64_t blk;
    std::uint32_t& claimed;
    SummaryBlock& normal_sum;  // holds the journal in a normal-summary pack
  };
  const JournalCheck checks[2] = {
      {"NAT", v.sums.nat_journal, kNatJournalEntries, v.sums.nat_journal_blk, v.report.nat_journal_claimed, v.sums.sum[0]},
      {"SIT", v.sums.sit_journal, kSitJournalEntries, v.sums.sit_journal_blk, v.report.sit_journal_claimed, v.sums.sum[2]}};
  for (const JournalCheck& c : checks) {
    const std::uint32_t n = c.j.n_entries.get();
    if (n <= c.capacity) continue;
    const std::string what = std::string("checkpoint: ") + c.name + fmt(" journal holds %llu entries, at most %llu", n, c.capacity);
    if (!opts.lenient_checkpoint) return make_error(Errc::corrupt, what + at_block(c.blk), c.blk * kBlockSize);
    c.claimed = n;
    c.j.n_entries.set(static_cast<std::uint16_t>(c.capacity));
    if (!(flags & cp_flag::compact_sum)) c.normal_sum.journal.n_entries = c.j.n_entries;
    v.report.warnings.push_back(what + " (clamped)" + at_block(c.blk));
  }
  // nat_bits: valid when its header equals this checkpoint's version and CRC.
  if (flags & cp_flag::nat_bits) {
    const NatBitsLayout nb = geo.nat_bits_layout();
    if (nb.blocks < kBlocksPerSeg) {
      v.nat_bits.assign(static_cast<std::size_t>(nb.blocks) * kBlockSize, 0);
      if (v.read(geo.nat_bits_addr(pick), v.nat_bits.data(), nb.blocks))
        v.nat_bits_ok = load_le64(v.nat_bits.data(), 0) == nat_bits_header(v.cp_blocks.data());
    }
  }
  vol->count_pending_fsync_nodes();
  return vol;
}

// Roll-forward recovery would start at the next free block of the warm node
// log and follow next_blkaddr while the nodes carry this checkpoint's
// version (is_recoverable_dnode() in fs/f2fs/recovery.c); count the ones
// with the fsync mark. A chain that comes back to a block it passed stops
// there with a warning (find_fsync_dnodes() stops at a "looped node chain").
void Volume::count_pending_fsync_nodes() {
  Impl& v = *impl_;
  const std::uint32_t flags = v.cp.ckpt_flags.get();
  std::uint64_t want = v.cp.checkpoint_ver.get();
  const std::uint32_t crc_ofs = std::min<std::uint32_t>(v.cp.checksum_offset.get(), kCpChecksumOffset);
  const std::uint64_t crc = load_le32(v.cp_blocks.data(), crc_ofs);
  if (flags & cp_flag::crc_recovery) want |= crc << 32;
  std::uint64_t addr = segment_start(v.cp.cur_node_segno[1].get()) + v.cp.cur_node_blkoff[1].get();
  std::vector<std::uint8_t> b(kBlockSize);
  const std::uint64_t limit = v.geo.main_blocks();
  std::unordered_set<std::uint64_t> seen;
  for (std::uint64_t steps = 0; steps < limit && is_valid_main_addr(static_cast<block_t>(addr)); ++steps) {
    if (!seen.insert(addr).second) {
      v.report.warnings.push_back("fsync node chain loops back to block " + std::to_string(addr));
      break;
    }
    if (!v.read(addr, b.data())) break;
    const auto* n = reinterpret_cast<const Node*>(b.data());
    const std::uint64_t ver = n->footer.cp_ver.get();
    const bool match = (flags & cp_flag::nocrc_recovery) ? (ver << 32) == (want << 32) : ver == want;
    if (!match) break;
    if (n->footer.flag.get() & node_flag::fsync) ++v.report.pending_fsync_nodes;
    addr = n->footer.next_blkaddr.get();
  }
}

Result<NatEntry> Volume::nat_entry(nid_t nid) { return impl_->nat_lookup(nid, nullptr); }

Result<NatEntry> Volume::Impl::nat_lookup(nid_t nid, std::uint64_t* from_blk) {
  const nid_t max = geo.max_nid();
  if (nid >= max) return make_error(Errc::out_of_range, fmt("nid %llu is past the NAT (%llu entries)", nid, max));
  for (std::uint32_t i = 0; i < sums.nat_journal.n_entries.get(); ++i)
    if (sums.nat_journal.nat_j.entries[i].nid.get() == nid) {
      if (from_blk) *from_blk = sums.nat_journal_blk;
      return sums.nat_journal.nat_j.entries[i].ne;
    }
  const std::uint64_t addr = geo.current_nat_addr(Geometry::nat_block_of(nid), bitmaps);
  if (from_blk) *from_blk = addr;
  NatBlock nb;
  std::vector<std::uint8_t> b(kBlockSize);
  F2FSCORE_TRY(read(addr, b.data()));
  std::memcpy(&nb, b.data(), sizeof nb);
  return nb.entries[nid % kNatEntryPerBlock];
}

Result<SegmentInfo> Volume::segment(std::uint32_t segno) {
  if (segno >= main_segments()) return make_error(Errc::out_of_range, fmt("segment %llu is past the main area (%llu)", segno, main_segments()));
  std::vector<SegmentInfo> one;
  F2FSCORE_TRY(segments(segno, 1, one));
  return one[0];
}

Status Volume::segments(std::uint32_t first, std::uint32_t count, std::vector<SegmentInfo>& out) {
  Impl& v = *impl_;
  out.assign(count, SegmentInfo{});
  if (count == 0) return {};
  if (first >= main_segments() || count > main_segments() - first)
    return make_error(Errc::out_of_range, fmt("segments %llu..%llu are past the main area (%llu)", first,
                                              static_cast<std::uint64_t>(first) + count - 1, main_segments()));
  constexpr std::uint32_t kRunBlocks = 64;
  const std::uint32_t b0 = Geometry::sit_block_of(first), b1 = Geometry::sit_block_of(first + count - 1);
  std::vector<std::uint8_t> buf(static_cast<std::size_t>(std::min(kRunBlocks, b1 - b0 + 1)) * kBlockSize);
  auto decode = [&](std::uint32_t segno, const SitEntry& e, std::uint64_t addr) -> Status {
    SegmentInfo& s = out[segno - first];
    s.valid_blocks = sit_vblocks(e);
    s.type = sit_type(e);
    std::memcpy(s.valid_map, e.valid_map, sizeof s.valid_map);
    s.mtime = e.mtime.get();
    if (s.valid_blocks > kBlocksPerSeg)
      return make_error(Errc::corrupt, fmt("SIT: segment %llu claims %llu valid blocks", segno, s.valid_blocks) + at_block(addr),
                        addr * kBlockSize);
    return {};
  };
  for (std::uint32_t b = b0; b <= b1;) {
    const std::uint64_t start = v.geo.current_sit_addr(b, v.bitmaps);
    std::uint32_t n = 1;
    while (b + n <= b1 && n < kRunBlocks && v.geo.current_sit_addr(b + n, v.bitmaps) == start + n) ++n;
    F2FSCORE_TRY(v.read(start, buf.data(), n));
    for (std::uint32_t k = 0; k < n; ++k) {
      const std::uint32_t lo = std::max(first, (b + k) * kSitEntryPerBlock);
      const std::uint32_t hi = std::min(first + count, (b + k + 1) * kSitEntryPerBlock);
      for (std::uint32_t segno = lo; segno < hi; ++segno) {
        SitEntry e;
        std::memcpy(&e, buf.data() + static_cast<std::size_t>(k) * kBlockSize + (segno % kSitEntryPerBlock) * sizeof(SitEntry),
                    sizeof e);
        F2FSCORE_TRY(decode(segno, e, start + k));
      }
    }
    b += n;
  }
  for (std::uint32_t i = 0; i < v.sums.sit_journal.n_entries.get() && i < kSitJournalEntries; ++i) {
    const std::uint32_t segno = v.sums.sit_journal.sit_j.entries[i].segno.get();
    if (segno >= first && segno - first < count) F2FSCORE_TRY(decode(segno, v.sums.sit_journal.sit_j.entries[i].se, v.sums.sit_journal_blk));
  }
  return {};
}

Result<SummaryBlock> Volume::summary(std::uint32_t segno) {
  Impl& v = *impl_;
  if (segno >= main_segments()) return make_error(Errc::out_of_range, fmt("segment %llu is past the main area", segno));
  const bool ro = v.sb.feature.get() & feature::ro;
  for (int t = 0; t < 6; ++t) {
    if (ro && t != 0 && t != 3) continue;  // two logs: hot data, hot node
    const std::uint32_t cur = t < 3 ? v.cp.cur_data_segno[t].get() : v.cp.cur_node_segno[t - 3].get();
    if (cur == segno && v.sums.loaded[t]) return v.sums.sum[t];
  }
  if (ro && v.sb.segment_count_ssa.get() == 0)
    return make_error(Errc::unsupported,
                      fmt("segment %llu has no summary: a read-only image keeps only its active logs' summaries", segno));
  SummaryBlock s;
  F2FSCORE_TRY(v.read(v.geo.ssa_addr(segno), &s));
  return s;
}

Result<std::vector<nid_t>> Volume::orphans() {
  Impl& v = *impl_;
  std::vector<nid_t> out;
  if (!(v.cp.ckpt_flags.get() & cp_flag::orphan_present)) return out;
  const std::uint64_t first = v.cp_start + 1 + v.sb.cp_payload.get();
  const std::uint64_t end = v.cp_start + v.cp.cp_pack_start_sum.get();
  for (std::uint64_t blk = first; blk < end; ++blk) {
    OrphanBlock ob;
    F2FSCORE_TRY(v.read(blk, &ob));
    const std::uint32_t n = ob.entry_count.get();
    if (n > kOrphansPerBlock)
      return make_error(Errc::corrupt, fmt("orphan block: entry_count %llu > 1020", n) + at_block(blk), blk * kBlockSize);
    for (std::uint32_t i = 0; i < n; ++i) out.push_back(ob.ino[i].get());
  }
  return out;
}

Status Volume::read_block(block_t blkaddr, std::span<std::uint8_t> out) {
  if (out.size() < kBlockSize) return make_error(Errc::invalid_argument, "read_block needs a 4096-byte buffer");
  return impl_->read(blkaddr, out.data());
}

}  // namespace f2fscore
