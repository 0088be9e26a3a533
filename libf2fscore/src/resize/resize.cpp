// Resizing a volume with its metadata areas kept in place (f2fscore/resize.hpp).
#include "f2fscore/resize.hpp"
#include "f2fscore/multi_device.hpp"

#include <algorithm>
#include <cstddef>
#include <cstring>
#include <memory>
#include <vector>

#include "f2fscore/checksum.hpp"
#include "f2fscore/disk/checkpoint.hpp"
#include "f2fscore/disk/constants.hpp"
#include "f2fscore/disk/geometry.hpp"
#include "f2fscore/disk/sit.hpp"
#include "f2fscore/disk/superblock.hpp"
#include "f2fscore/meta_rebuild.hpp"
#include "f2fscore/volume.hpp"
#include "f2fscore/writer.hpp"
#include "mkfs/plan_internal.hpp"
#include "util/text.hpp"

namespace f2fscore {

using namespace disk;
using detail::fmt;

namespace {

constexpr std::uint32_t kSeg = kBlocksPerSeg;
constexpr std::uint32_t kNoSeg = 0xFFFFFFFFu;

struct Loaded {
  std::unique_ptr<Volume> vol;
  ResizePlan plan;
  bool truncated = false;  ///< the device ends before the volume
  /// The size is the target's, but the checkpoint's free segment count and
  /// user blocks are not this size's: a resize cut between its superblocks
  /// and its pack.
  bool stale_counts = false;
  /// Not cleanly unmounted (load_and_plan()'s `allow_unclean`): fsynced
  /// nodes to roll forward, or no unmount checkpoint.
  bool unclean = false;
};

// The metadata areas mkfs.f2fs lays out for `seg_count` segments from
// segment0 (f2fs_prepare_super_block() in mkfs/f2fs_format.c, without a
// large NAT bitmap): SIT for every segment, NAT for the blocks past CP and
// SIT capped by the version bitmap room in the CP block, SSA a block a
// segment, padded to whole zones.
struct MetaLayout {
  std::uint32_t sit = 0, nat = 0, ssa = 0;  ///< segment_count_sit/_nat/_ssa
  std::uint32_t cp_payload = 0;
  std::uint32_t meta_zones = 0, main_segments = 0;
};

MetaLayout mkfs_meta_layout(std::uint32_t seg_count, std::uint32_t segs_per_zone) {
  auto div_up = [](std::uint64_t a, std::uint64_t b) { return (a + b - 1) / b; };
  MetaLayout m;
  m.sit = static_cast<std::uint32_t>(div_up(div_up(seg_count, kSitEntryPerBlock), kSeg)) * 2;
  std::uint64_t avail = static_cast<std::uint64_t>(seg_count - std::min(seg_count, kCheckpointPacks + m.sit)) * kSeg;
  auto nat_segs = static_cast<std::uint32_t>(div_up(div_up(avail, kNatEntryPerBlock), kSeg));
  constexpr auto kMaxSitBitmap = static_cast<std::uint32_t>(
      (static_cast<std::uint64_t>(kMaxSegments + kSitEntryPerBlock - 1) / kSitEntryPerBlock + kSeg - 1) / kSeg * kSeg / 8);
  const std::uint32_t max_sit_bitmap = std::min(m.sit / 2 * kSeg / 8, kMaxSitBitmap);
  std::uint32_t max_nat_bitmap = 0;
  if (max_sit_bitmap > kMaxSitBitmapSizeInCkpt) {
    max_nat_bitmap = kMaxBitmapSizeInCkpt;
    m.cp_payload = static_cast<std::uint32_t>(div_up(max_sit_bitmap, kBlockSize));
  } else {
    max_nat_bitmap = kMaxBitmapSizeInCkpt - max_sit_bitmap;
  }
  nat_segs = std::min(nat_segs, (max_nat_bitmap * 8) >> kLogBlocksPerSeg);
  m.nat = nat_segs * 2;
  avail = static_cast<std::uint64_t>(seg_count - std::min(seg_count, kCheckpointPacks + m.sit + m.nat)) * kSeg;
  m.ssa = static_cast<std::uint32_t>(div_up(avail / kSeg + 1, kSeg));
  const std::uint32_t meta = kCheckpointPacks + m.sit + m.nat + m.ssa;
  if (meta % segs_per_zone) m.ssa += segs_per_zone - meta % segs_per_zone;
  m.meta_zones = static_cast<std::uint32_t>(div_up(kCheckpointPacks + m.sit + m.nat + m.ssa, segs_per_zone));
  const std::uint32_t zones = seg_count / segs_per_zone;
  m.main_segments = zones > m.meta_zones ? (zones - m.meta_zones) * segs_per_zone : 0;
  return m;
}

// The segment numbers of the six active logs of a checkpoint.
std::array<std::uint32_t, kNrCursegType> curseg_segnos(const Checkpoint& cp) {
  std::array<std::uint32_t, kNrCursegType> s{};
  for (unsigned i = 0; i < 3; ++i) {
    s[i] = cp.cur_data_segno[i].get();
    s[3 + i] = cp.cur_node_segno[i].get();
  }
  return s;
}

// Fsynced node chains past the checkpoint, or a checkpoint not written by an
// unmount: the volume must be mounted (rolled forward) and unmounted first.
bool pending_or_dirty(const OpenReport& rep, const Checkpoint& cp) {
  return rep.pending_fsync_nodes != 0 || !(cp.ckpt_flags.get() & cp_flag::umount);
}

// The nids a smaller NAT cuts, [new_nat_blocks x 455, max_nid), must all be
// free (block_addr NULL_ADDR in the current NAT copy and in the checkpoint's
// NAT journal), as resize.f2fs's shrink_nats() requires. mkfs's rule gives a
// smaller NAT for some larger sizes: the NAT version bitmap shares the CP
// block with the SIT's, which grows with the volume. Errors: Errc::unsupported
// naming the first nid in use, the device's.
Status check_cut_nids(Volume& vol, std::uint32_t new_nat_blocks) {
  const Geometry& g = vol.geometry();
  const nid_t first = static_cast<nid_t>(static_cast<std::uint64_t>(new_nat_blocks) * kNatEntryPerBlock);
  auto in_use = [&](nid_t nid) {
    return make_error(Errc::unsupported,
                      fmt("the new size's NAT ends at nid %llu (mkfs's rule for that size) and nid %llu is in use: "
                          "nids past the new NAT must be free",
                          first, nid));
  };
  const Checkpoint& cp = vol.checkpoint();
  auto sum = vol.summary(cp.cur_data_segno[0].get());
  if (!sum) return make_error(sum.error());
  const disk::Journal& j = sum->journal;
  const std::uint32_t n = std::min<std::uint32_t>(j.n_entries.get(), disk::kNatJournalEntries);
  for (std::uint32_t i = 0; i < n; ++i)
    if (j.nat_j.entries[i].nid.get() >= first && j.nat_j.entries[i].ne.block_addr.get() != kNullAddr)
      return in_use(j.nat_j.entries[i].nid.get());
  std::vector<std::uint8_t> b(kBlockSize);
  for (std::uint32_t idx = new_nat_blocks; idx < g.nat_blocks(); ++idx) {
    F2FSCORE_TRY(read_at(vol.device(), g.current_nat_addr(idx, vol.version_bitmaps()) * kBlockSize, b));
    const auto* blk = reinterpret_cast<const disk::NatBlock*>(b.data());
    for (std::uint32_t e = 0; e < kNatEntryPerBlock; ++e) {
      if (blk->entries[e].block_addr.get() == kNullAddr) continue;
      const nid_t nid = static_cast<nid_t>(static_cast<std::uint64_t>(idx) * kNatEntryPerBlock + e);
      // The journal holds the newer entry of a nid it names.
      bool journaled = false;
      for (std::uint32_t i = 0; i < n && !journaled; ++i) journaled = j.nat_j.entries[i].nid.get() == nid;
      if (!journaled) return in_use(nid);
    }
  }
  return {};
}

// Opens the volume; a truncated image (the device ends inside the main
// area) is opened as the checker opens it, the blocks past the device's end
// read as errors. `truncated` says which.
Result<std::unique_ptr<Volume>> open_volume(BlockDevice& dev, bool& truncated) {
  truncated = false;
  auto v = Volume::open(dev);
  if (v) return v;
  // Device 0 of a multi-device volume: refused as unsupported before the
  // lenient open (which would take it for a truncated image).
  if (v.error().code == Errc::unsupported) {
    std::vector<std::uint8_t> b(kBlockSize);
    SuperBlock sb;
    if (read_at(dev, 0, b) && (std::memcpy(&sb, b.data() + kSuperOffset, sizeof sb), is_multi_device(sb)))
      return make_error(Errc::unsupported, "multi-device volumes cannot be resized");
  }
  VolumeOpenOptions lo;
  lo.lenient_checkpoint = true;
  auto t = Volume::open(dev, lo);
  const std::uint64_t dev_blocks = dev.info().size_bytes / kBlockSize;
  // Only the truncation may be what the normal open refused: nothing the
  // lenient open clamps in the checkpoint.
  if (!t || (*t)->superblock().block_count.get() <= dev_blocks || (*t)->open_report().next_free_nid_clamped ||
      (*t)->open_report().nat_journal_claimed || (*t)->open_report().sit_journal_claimed)
    return make_error(v.error().code, "cannot open the volume: " + v.error().message);
  truncated = true;
  return t;
}

// How resize mounts the writer (to move blocks, or to settle a volume not
// cleanly unmounted): the caller opened the device (see resize.hpp), no
// periodic checkpoint, background GC or discard.
MountOptions writer_options() {
  MountOptions mo;
  mo.refuse_in_use = false;
  mo.checkpoint_interval_s = 0;
  mo.gc.background = false;
  mo.discard = false;
  return mo;
}

Result<Loaded> load_and_plan(BlockDevice& dev, const ResizeOptions& o, bool allow_unclean = false) {
  bool truncated = false;
  auto v = open_volume(dev, truncated);
  if (!v) return make_error(v.error());
  Loaded l{std::move(*v), {}};
  l.truncated = truncated;
  Volume& vol = *l.vol;
  const SuperBlock& sb = vol.superblock();
  const Checkpoint& cp = vol.checkpoint();
  const Geometry& g = vol.geometry();
  const OpenReport& rep = vol.open_report();
  const std::uint32_t feat = sb.feature.get();
  if (feat & (feature::blkzoned | feature::ro))
    return make_error(Errc::unsupported, "zoned and read-only volumes cannot be resized");
  if (sb.devs[0].path[0] != 0)
    return make_error(Errc::unsupported, "multi-device volumes cannot be resized");
  l.unclean = pending_or_dirty(rep, cp);
  if (l.unclean && !allow_unclean)
    return make_error(Errc::unsupported,
                      "the volume was not cleanly unmounted (fsynced data to roll forward or no unmount checkpoint): "
                      "mount and unmount it first");
  const std::uint32_t flags = cp.ckpt_flags.get();
  if (flags & (cp_flag::error | cp_flag::fsck | cp_flag::disabled | cp_flag::resizefs))
    return make_error(Errc::unsupported, fmt("the checkpoint asks for a check (ckpt_flags 0x%llx): run f2fscore-fsck first", flags));

  const std::uint64_t dev_bytes = dev.info().size_bytes;
  if (o.target_sectors > UINT64_MAX / 512)
    return make_error(Errc::invalid_argument, fmt("target size %llu sectors does not fit in 64 bits of bytes", o.target_sectors));
  const std::uint64_t target_bytes = o.target_sectors ? o.target_sectors * 512 : dev_bytes;
  if (target_bytes > dev_bytes)
    return make_error(Errc::invalid_argument, fmt("target size %llu bytes is larger than the device (%llu bytes)",
                                                  target_bytes, dev_bytes));
  ResizePlan& p = l.plan;
  p.old_block_count = sb.block_count.get();
  p.old_segment_count = sb.segment_count.get();
  p.old_main_segments = sb.segment_count_main.get();
  p.old_user_block_count = cp.user_block_count.get();
  p.valid_block_count = cp.valid_block_count.get();
  p.new_block_count = target_bytes / kBlockSize;
  const std::uint32_t segs_per_sec = g.segs_per_sec();
  const std::uint32_t segs_per_zone = segs_per_sec * sb.secs_per_zone.get();
  const std::uint64_t seg0 = sb.segment0_blkaddr.get();
  // The device's whole segments from segment0, and those in whole zones
  // (segment_count), as mkfs.f2fs counts them for a device of the new size.
  const std::uint64_t dev_segs = p.new_block_count > seg0 ? (p.new_block_count - seg0) / kSeg : 0;
  const std::uint64_t whole = dev_segs / segs_per_zone * segs_per_zone;
  const std::uint32_t meta = g.meta_segments();
  if (whole <= meta + kNrCursegType)
    return make_error(Errc::invalid_argument, fmt("target size %llu bytes leaves no room for the main area (%llu metadata segments)",
                                                  target_bytes, meta));
  if (whole > 0xFFFFFFFFull) return make_error(Errc::unsupported, "target size past 2^32 segments");
  p.new_segment_count = static_cast<std::uint32_t>(whole);
  p.new_main_segments = (p.new_segment_count - meta) / segs_per_sec * segs_per_sec;
  p.sit_capacity_segments = g.sit_blocks() * kSitEntryPerBlock;
  p.ssa_capacity_segments = static_cast<std::uint32_t>(std::min<std::uint64_t>(
      0xFFFFFFFFull, static_cast<std::uint64_t>(sb.segment_count_ssa.get()) * kSeg));
  const bool smaller = p.new_main_segments < p.old_main_segments || p.new_block_count < p.old_block_count;
  if (smaller && !o.shrink && l.truncated)
    return make_error(Errc::invalid_argument,
                      fmt("the device (%llu bytes) ends before the volume (%llu bytes, a truncated image): fitting the "
                          "volume to it is a shrink: give --shrink",
                          dev_bytes, p.old_block_count * kBlockSize));
  if (smaller && !o.shrink)
    return make_error(Errc::invalid_argument,
                      fmt("target size %llu bytes is smaller than the volume (%llu bytes): shrinking needs --shrink",
                          target_bytes, p.old_block_count * kBlockSize));
  if (l.truncated) {
    // The SIT (before the device's end) says what the lost tail held: a
    // truncated image is fitted to the device only when none of the blocks
    // past the device's end is in use.
    const std::uint64_t dev_blocks = dev_bytes / kBlockSize;
    const std::uint64_t main0 = g.main_blkaddr();
    const auto first_lost = static_cast<std::uint32_t>(dev_blocks > main0 ? (dev_blocks - main0) / kSeg : 0);
    std::uint64_t lost = 0;
    if (first_lost < p.old_main_segments) {
      std::vector<SegmentInfo> segs;
      F2FSCORE_TRY(vol.segments(first_lost, p.old_main_segments - first_lost, segs));
      for (std::size_t i = 0; i < segs.size(); ++i)
        for (std::uint32_t b = 0; b < kSeg; ++b)
          if (((segs[i].valid_map[b / 8] >> (7 - b % 8)) & 1) &&
              main0 + (static_cast<std::uint64_t>(first_lost) + i) * kSeg + b >= dev_blocks)
            ++lost;
    }
    if (lost)
      return make_error(Errc::corrupt,
                        fmt("the device ends at block %llu, before the volume's %llu blocks (a truncated image), and ",
                            dev_blocks, p.old_block_count) +
                            fmt("%llu blocks in use lie past its end: they are lost; restore the image's tail or run "
                                "f2fscore-fsck",
                                lost));
  }
  const std::uint32_t cap = std::min(p.sit_capacity_segments, p.ssa_capacity_segments);
  p.new_main_blkaddr = sb.main_blkaddr.get();
  if (p.new_main_segments > cap) {
    // The SIT, NAT and SSA areas as mkfs.f2fs lays them for the new size;
    // the main area starts later by the segments they grow by.
    const MetaLayout m = mkfs_meta_layout(p.new_segment_count, segs_per_zone);
    const std::uint64_t new_main = seg0 + static_cast<std::uint64_t>(m.meta_zones) * segs_per_zone * kSeg;
    auto refuse = [&](const std::string& why) {
      return make_error(Errc::unsupported, fmt("growing to %llu main segments needs larger SIT/SSA areas (they describe "
                                               "%llu segments): ", p.new_main_segments, cap) + why);
    };
    if (cp.ckpt_flags.get() & cp_flag::large_nat_bitmap)
      return refuse("moving the metadata of a volume with a large NAT bitmap is not supported");
    if (m.cp_payload != sb.cp_payload.get())
      return refuse(fmt("the new layout needs cp_payload %llu (the volume has %llu)", m.cp_payload, sb.cp_payload.get()));
    if (m.sit < sb.segment_count_sit.get() || m.ssa < sb.segment_count_ssa.get() || new_main <= sb.main_blkaddr.get())
      return refuse("the new size's SIT or SSA area would be smaller than the volume's");
    if (m.nat < sb.segment_count_nat.get()) F2FSCORE_TRY(check_cut_nids(vol, m.nat / 2 * kSeg));
    const auto front = static_cast<std::uint32_t>((new_main - sb.main_blkaddr.get()) / kSeg);
    if (front >= p.old_main_segments) return refuse("the metadata areas would cover the whole main area");
    // Staged past the old end: the new SIT..SSA, the pack and two
    // superblock blocks.
    const std::uint64_t staged = new_main - sb.sit_blkaddr.get() + cp.cp_pack_total_block_count.get() + 2;
    if (p.old_block_count + staged > p.new_block_count)
      return refuse(fmt("moving them needs %llu blocks past the volume's end to stage the copy, the grow adds %llu",
                        staged, p.new_block_count - p.old_block_count));
    p.moves_metadata = true;
    p.front_segments = front;
    p.new_main_blkaddr = new_main;
    p.new_main_segments = m.main_segments;
  }
  // Reserved and overprovision segments as mkfs.f2fs 1.15 computes them
  // for a device of the new size (f2fs_format.c): from the usable segments
  // (every whole segment of the device past the metadata zones, as
  // f2fs_get_usable_segments() counts them) and the average segments a
  // section (usable segments over sections, rounded up); user_block_count
  // is (usable - overprovision segments) x 512.
  const std::uint64_t meta_area_segs = (p.new_main_blkaddr - seg0) / kSeg;
  const auto usable = static_cast<std::uint32_t>(dev_segs - std::min(dev_segs, meta_area_segs));
  const std::uint32_t sections = p.new_main_segments / segs_per_sec;
  const std::uint32_t segs_per_sec_avg = sections ? (usable + sections - 1) / sections : 1;
  p.overprovision = best_overprovision(p.new_main_segments, usable, segs_per_sec_avg);
  if (p.overprovision <= 0) return make_error(Errc::invalid_argument, "target size too small for an F2FS volume");
  p.reserved_segments = static_cast<std::uint32_t>((2 * (100 / p.overprovision + 1) + kNrCursegType) * segs_per_sec_avg);
  const auto ovp = static_cast<std::uint32_t>((usable - std::min(usable, p.reserved_segments)) * p.overprovision / 100);
  p.overprov_segments = ovp + p.reserved_segments;
  if (p.new_main_segments < kNrCursegType || p.new_main_segments - kNrCursegType < p.reserved_segments ||
      p.new_main_segments <= p.overprov_segments || usable <= p.overprov_segments)
    return make_error(Errc::invalid_argument,
                      fmt("target size too small: %llu main segments, %llu reserved", p.new_main_segments, p.reserved_segments));
  p.new_user_block_count = static_cast<std::uint64_t>(usable - p.overprov_segments) * kSeg;
  if (p.valid_block_count > p.new_user_block_count)
    return make_error(Errc::no_space, fmt("the data does not fit: %llu blocks in use, the new size holds %llu",
                                          p.valid_block_count, p.new_user_block_count));
  if (p.new_main_segments < p.old_main_segments) {
    std::vector<SegmentInfo> segs;
    F2FSCORE_TRY(vol.segments(p.new_main_segments, p.old_main_segments - p.new_main_segments, segs));
    for (const auto& s : segs)
      if (s.valid_blocks) {
        ++p.segments_to_empty;
        p.blocks_to_move += s.valid_blocks;
      }
  }
  if (p.moves_metadata) {
    std::vector<SegmentInfo> segs;
    F2FSCORE_TRY(vol.segments(0, p.front_segments, segs));
    for (const auto& s : segs) p.blocks_to_move += s.valid_blocks;
  }
  p.unclean = l.unclean;
  // Moving blocks (the writer's GC) and settling an unclean volume mount the
  // writer: a volume it does not take is refused here, before any write.
  if (p.blocks_to_move || l.unclean) {
    auto st = Writer::check_features(sb);
    if (!st)
      return make_error(st.error().code, fmt("%llu valid blocks to move", p.blocks_to_move) +
                                             (l.unclean ? " and a volume to settle" : "") +
                                             ", which needs the writer: " + st.error().message);
  }
  if (p.unchanged() && p.new_user_block_count != p.old_user_block_count) {
    std::vector<SegmentInfo> segs;
    F2FSCORE_TRY(vol.segments(0, p.new_main_segments, segs));
    const auto logs = curseg_segnos(cp);
    std::uint32_t free_segs = 0;
    for (std::uint32_t s = 0; s < p.new_main_segments; ++s)
      if (!segs[s].valid_blocks && std::find(logs.begin(), logs.end(), s) == logs.end()) ++free_segs;
    l.stale_counts = free_segs != cp.free_segment_count.get();
  }
  if (l.truncated) {
    if (p.segments_to_empty)
      return make_error(Errc::unsupported,
                        fmt("a truncated image with %llu blocks in use past the new end: grow the image back to %llu "
                            "bytes first (f2fscore-fsck -y does), then resize",
                            p.blocks_to_move, p.old_block_count * kBlockSize));
  }
  return l;
}

// A checkpoint of the old layout from the truth (meta::rebuild()): empty
// journals, CP_UMOUNT_FLAG, and every active log in a free section in
// [front, the smaller main area).
Status checkpoint_before_resize(BlockDevice& dev, Volume& vol, const ResizePlan& p, std::uint32_t front, ResizeReport& r) {
  const std::uint32_t keep = std::min(p.old_main_segments, p.new_main_segments);
  auto plan = meta::plan_from_volume(vol);
  if (!plan) return make_error(plan.error());
  const Checkpoint& cp = vol.checkpoint();
  std::array<meta::LogPosition, 6> logs{};
  for (unsigned i = 0; i < 3; ++i) {
    logs[i] = {cp.cur_data_segno[i].get(), cp.cur_data_blkoff[i].get(), cp.alloc_type[i]};
    logs[3 + i] = {cp.cur_node_segno[i].get(), cp.cur_node_blkoff[i].get(), cp.alloc_type[3 + i]};
  }
  // Segments in use, to find free ones for logs that must move: a whole
  // free section below the new end that no other log holds.
  const Geometry& g = vol.geometry();
  std::vector<SegmentInfo> segs;
  F2FSCORE_TRY(vol.segments(0, keep, segs));
  const std::uint32_t sps = g.segs_per_sec();
  auto sec_taken = [&](std::uint32_t sec) {
    for (const auto& lg : logs)
      if (lg.segno != kNoSeg && lg.segno < p.old_main_segments && lg.segno / sps == sec) return true;
    for (std::uint32_t s = sec * sps; s < (sec + 1) * sps; ++s)
      if (s >= keep || segs[s].valid_blocks) return true;
    return false;
  };
  std::uint32_t next_sec = (front + sps - 1) / sps;
  for (auto& lg : logs) {
    if (lg.segno < keep && lg.segno >= front) continue;
    while (next_sec < keep / sps && sec_taken(next_sec)) ++next_sec;
    if (next_sec >= keep / sps)
      return make_error(Errc::no_space, "no free section below the new end for an active log");
    lg = {next_sec * sps, 0, 0};
    ++r.cursegs_moved;
  }
  plan->cursegs = logs;
  plan->umount = true;
  auto st = meta::rebuild(dev, vol, *plan);
  if (!st) return make_error(st.error().code, "checkpoint before the resize: " + st.error().message);
  return {};
}

// ---- A grow that moves the metadata areas ----------------------------------
//
// The new SIT, NAT and SSA overlap the old ones (the areas are contiguous:
// sanity_check_area_boundary() in fs/f2fs/super.c), so no write order keeps
// the old or the new volume valid at every write. The copy is staged: the
// new blocks are first written past the old end (space the old volume does
// not use), then a record in block 0 names them, both superblocks are made
// invalid, the staged blocks are copied into place and the new superblocks
// written. A rerun of resize_volume() completes an interrupted copy.

// The record: block 0, bytes [0, 1024), which F2FS leaves unused (the
// superblock is at 1024); the bytes it covers are staged and put back.
constexpr char kRecordMagic[16] = {'f', '2', 'f', 's', 'c', 'o', 'r', 'e', '-', 'r', 'e', 's', 'i', 'z', 'e', '1'};
struct MoveRecord {
  char magic[16];
  Le64 staging_blkaddr;   ///< first staged block
  Le64 region_blkaddr;    ///< where the staged SIT..SSA go (the SIT's start)
  Le64 region_blocks;     ///< new SIT + NAT + SSA blocks
  Le64 pack_blkaddr;      ///< where the staged CP pack goes
  Le32 pack_blocks;
  Le32 staged_crc;        ///< f2fs_crc32 of every staged block in order
  Le64 old_block_count, new_block_count;
  Le64 new_main_blkaddr;
  Le32 crc;               ///< f2fs_crc32 of the bytes before it
};
static_assert(sizeof(MoveRecord) < kSuperOffset);

std::uint64_t staged_blocks(const MoveRecord& m) {
  return m.region_blocks.get() + m.pack_blocks.get() + 2;  // + superblock blocks 0 and 1
}

bool parse_record(const std::uint8_t* b0, MoveRecord& m) {
  std::memcpy(&m, b0, sizeof m);
  if (std::memcmp(m.magic, kRecordMagic, sizeof kRecordMagic) != 0) return false;
  return f2fs_crc32(kSuperMagic, &m, offsetof(MoveRecord, crc)) == m.crc.get();
}

// Whether superblock copy `b` (a 4 KiB block) carries the F2FS magic and,
// when `want_blocks` is not 0, that block count.
bool sb_magic(const std::uint8_t* b, std::uint64_t want_blocks = 0) {
  SuperBlock sb;
  std::memcpy(&sb, b + kSuperOffset, sizeof sb);
  return sb.magic.get() == kSuperMagic && (want_blocks == 0 || sb.block_count.get() == want_blocks);
}

constexpr std::size_t kChunkBlocks = 256;

// Reads the staged blocks in order, calling `fn(index, block_span)` per chunk.
template <typename Fn>
Status for_staged(BlockDevice& dev, const MoveRecord& m, Fn&& fn) {
  std::vector<std::uint8_t> buf(kChunkBlocks * kBlockSize);
  const std::uint64_t n = staged_blocks(m);
  for (std::uint64_t i = 0; i < n; i += kChunkBlocks) {
    const std::size_t k = static_cast<std::size_t>(std::min<std::uint64_t>(kChunkBlocks, n - i));
    std::span<std::uint8_t> s(buf.data(), k * kBlockSize);
    F2FSCORE_TRY(read_at(dev, (m.staging_blkaddr.get() + i) * kBlockSize, s));
    F2FSCORE_TRY(fn(i, s));
  }
  return {};
}

// Where staged block `i` goes.
std::uint64_t staged_target(const MoveRecord& m, std::uint64_t i) {
  const std::uint64_t r = m.region_blocks.get(), pk = m.pack_blocks.get();
  if (i < r) return m.region_blkaddr.get() + i;
  if (i < r + pk) return m.pack_blkaddr.get() + (i - r);
  return i - r - pk;  // superblock blocks 0, 1
}

// The copy and the commit: staged SIT..SSA and pack into place, flush,
// superblock copy 1, flush, block 0 (copy 0, the record's bytes put back),
// flush. Called with both superblocks invalid (or the copy done).
Status finish_copy(BlockDevice& dev, const MoveRecord& m, bool copy) {
  std::uint32_t crc = kSuperMagic;
  auto sum = [&](std::uint64_t, std::span<std::uint8_t> s) -> Status {
    crc = f2fs_crc32(crc, s.data(), s.size());
    return {};
  };
  if (auto st = for_staged(dev, m, sum); !st) return st;
  if (crc != m.staged_crc.get())
    return make_error(Errc::corrupt, "the staged metadata of the interrupted resize does not match its record "
                                     "(checksum): it cannot be completed");
  std::vector<std::uint8_t> sb0, sb1;
  const std::uint64_t n = staged_blocks(m);
  auto put = [&](std::uint64_t i, std::span<std::uint8_t> s) -> Status {
    for (std::size_t k = 0; k < s.size() / kBlockSize; ++k) {
      const std::uint64_t idx = i + k;
      auto blk = s.subspan(k * kBlockSize, kBlockSize);
      if (idx == n - 2) sb0.assign(blk.begin(), blk.end());
      else if (idx == n - 1) sb1.assign(blk.begin(), blk.end());
    }
    if (!copy) return {};
    // Runs of the chunk that go to consecutive addresses.
    const std::size_t nb = s.size() / kBlockSize;
    std::size_t a = 0;
    while (a < nb && i + a < n - 2) {
      std::size_t e = a + 1;
      while (e < nb && i + e < n - 2 && staged_target(m, i + e) == staged_target(m, i + a) + (e - a)) ++e;
      F2FSCORE_TRY(write_at(dev, staged_target(m, i + a) * kBlockSize, s.subspan(a * kBlockSize, (e - a) * kBlockSize)));
      a = e;
    }
    return {};
  };
  if (auto st = for_staged(dev, m, put); !st) return st;
  F2FSCORE_TRY(flush(dev));
  F2FSCORE_TRY(write_at(dev, kBlockSize, sb1));
  F2FSCORE_TRY(flush(dev));
  F2FSCORE_TRY(write_at(dev, 0, sb0));
  F2FSCORE_TRY(flush(dev));
  if (copy) {
    // The staging area is free main-area space of the grown volume now: a
    // discard (a punched hole in an image file) returns it; a device that
    // cannot discard keeps the bytes, which nothing reads.
    (void)discard(dev, m.staging_blkaddr.get() * kBlockSize, n * kBlockSize);
  }
  return {};
}

// A record in block 0: completes the interrupted grow it names or, when a
// superblock of the old size is still valid (the copy had not begun),
// removes the record. `done`: the volume is the grown one.
Status resume_interrupted(BlockDevice& dev, bool& done, ResizePlan& plan) {
  done = false;
  std::vector<std::uint8_t> b(2 * kBlockSize);
  if (dev.info().size_bytes < b.size()) return {};
  F2FSCORE_TRY(read_at(dev, 0, b));
  MoveRecord m;
  if (!parse_record(b.data(), m)) return {};
  plan.old_block_count = m.old_block_count.get();
  plan.new_block_count = m.new_block_count.get();
  plan.new_main_blkaddr = m.new_main_blkaddr.get();
  plan.moves_metadata = true;
  if ((m.staging_blkaddr.get() + staged_blocks(m)) * kBlockSize > dev.info().size_bytes)
    return make_error(Errc::corrupt, "block 0 names an interrupted resize whose staged blocks lie past the device's end");
  if (m.new_block_count.get() > dev.info().size_bytes / kBlockSize)
    return make_error(Errc::invalid_argument,
                      fmt("block 0 names an interrupted resize to %llu blocks, but the device holds %llu: give the device "
                          "back at least %llu bytes and run the resize again (nothing written)",
                          m.new_block_count.get(), dev.info().size_bytes / kBlockSize,
                          m.new_block_count.get() * kBlockSize));
  const bool new0 = sb_magic(b.data(), m.new_block_count.get()), new1 = sb_magic(b.data() + kBlockSize, m.new_block_count.get());
  const bool any0 = sb_magic(b.data()), any1 = sb_magic(b.data() + kBlockSize);
  if (new0 || new1) {
    // The copy is done (the new superblock is written after it).
    F2FSCORE_TRY(finish_copy(dev, m, false));
    done = true;
    return {};
  }
  if (any0 || any1) {
    // The old volume is intact: put the record's bytes back.
    std::vector<std::uint8_t> sb0;
    const std::uint64_t n = staged_blocks(m);
    sb0.resize(kBlockSize);
    F2FSCORE_TRY(read_at(dev, (m.staging_blkaddr.get() + n - 2) * kBlockSize, sb0));
    std::memcpy(b.data(), sb0.data(), kSuperOffset);
    F2FSCORE_TRY(write_at(dev, 0, std::span<const std::uint8_t>(b).first(kBlockSize)));
    return flush(dev);
  }
  F2FSCORE_TRY(finish_copy(dev, m, true));
  done = true;
  return {};
}

Result<ResizeReport> grow_moving(BlockDevice& dev, const ResizeOptions& opts, Loaded l, ResizeReport r) {
  const std::uint32_t front = l.plan.front_segments;
  // 1. The main area's first `front` segments emptied by the writer's GC
  // (its checkpoints: the old volume at every write).
  {
    std::vector<SegmentInfo> segs;
    F2FSCORE_TRY(l.vol->segments(0, front, segs));
    std::uint64_t used = 0;
    for (const auto& s : segs) used += s.valid_blocks;
    if (used) {
      l.vol.reset();
      auto w = Writer::mount(dev, writer_options());
      if (!w) return make_error(w.error().code, "mounting to move the blocks of the main area's start: " + w.error().message);
      auto left = (*w)->evacuate_front(front);
      if (!left) return make_error(left.error().code, "moving the blocks of the main area's start: " + left.error().message);
      F2FSCORE_TRY((*w)->unmount());
      if (*left)
        return make_error(Errc::no_space, fmt("%llu valid blocks could not be moved out of the main area's first %llu "
                                              "segments (the new metadata areas need them)",
                                              *left, front));
      r.blocks_moved = used;
      auto again = load_and_plan(dev, opts);
      if (!again) return make_error(again.error());
      l = std::move(*again);
      if (!l.plan.moves_metadata || l.plan.front_segments != front)
        return make_error(Errc::unsupported, "the layout changed while moving the blocks");
    }
  }
  const ResizePlan p = l.plan;
  r.plan = p;
  // 2. A checkpoint of the old layout: empty journals, logs past the front.
  F2FSCORE_TRY(checkpoint_before_resize(dev, *l.vol, p, front, r));
  l.vol.reset();
  auto v = Volume::open(dev);
  if (!v) return make_error(v.error().code, "reopening after the checkpoint: " + v.error().message);
  Volume& vol = **v;
  const SuperBlock& osb = vol.superblock();
  const Checkpoint& ocp = vol.checkpoint();
  const Geometry& og = vol.geometry();
  const int cur = vol.open_report().checkpoint_pack;
  std::vector<SegmentInfo> segs;
  F2FSCORE_TRY(vol.segments(0, p.old_main_segments, segs));
  const auto logs = curseg_segnos(ocp);
  for (std::uint32_t s = 0; s < front; ++s)
    if (segs[s].valid_blocks || std::find(logs.begin(), logs.end(), s) != logs.end())
      return make_error(Errc::corrupt, fmt("main segment %llu is still in use after emptying the main area's start", s));

  // 3. The new superblock.
  SuperBlock nsb = osb;
  const MetaLayout m = mkfs_meta_layout(p.new_segment_count, og.segs_per_zone());
  nsb.block_count.set(p.new_block_count);
  nsb.segment_count.set(p.new_segment_count);
  nsb.segment_count_sit.set(m.sit);
  nsb.segment_count_nat.set(m.nat);
  nsb.segment_count_ssa.set(m.ssa);
  nsb.segment_count_main.set(p.new_main_segments);
  nsb.section_count.set(p.new_main_segments / og.segs_per_sec());
  nsb.nat_blkaddr.set(osb.sit_blkaddr.get() + m.sit * kSeg);
  nsb.ssa_blkaddr.set(nsb.nat_blkaddr.get() + m.nat * kSeg);
  nsb.main_blkaddr.set(static_cast<std::uint32_t>(p.new_main_blkaddr));
  if (nsb.feature.get() & feature::sb_checksum) nsb.crc.set(superblock_checksum(nsb));
  F2FSCORE_TRY(validate_superblock(nsb, dev.info().size_bytes / kBlockSize, 0));
  const Geometry ng(nsb);
  if (ng.main_blkaddr() != p.new_main_blkaddr || ng.ssa_blkaddr() + static_cast<std::uint64_t>(m.ssa) * kSeg != p.new_main_blkaddr)
    return make_error(Errc::corrupt, "the new metadata areas are not contiguous");

  // 4. The new pack: the current one with the new counts, the active logs
  // renumbered, the version bitmaps cleared (every NAT and SIT block in
  // copy 0), no nat_bits, version + 1, in the other slot.
  const std::uint32_t nblocks = ocp.cp_pack_total_block_count.get();
  std::vector<std::uint8_t> pack(static_cast<std::size_t>(nblocks) * kBlockSize);
  F2FSCORE_TRY(read_at(dev, og.cp_pack_start(cur) * kBlockSize, pack));
  Checkpoint ncp;
  std::memcpy(&ncp, pack.data(), sizeof ncp);
  ncp.checkpoint_ver.set(ocp.checkpoint_ver.get() + 1);
  ncp.user_block_count.set(p.new_user_block_count);
  ncp.rsvd_segment_count.set(p.reserved_segments);
  ncp.overprov_segment_count.set(p.overprov_segments);
  for (unsigned i = 0; i < 3; ++i) {
    ncp.cur_data_segno[i].set(ocp.cur_data_segno[i].get() - front);
    ncp.cur_node_segno[i].set(ocp.cur_node_segno[i].get() - front);
  }
  std::uint32_t free_segs = 0;
  const auto nlogs = curseg_segnos(ncp);
  for (std::uint32_t s = 0; s < p.new_main_segments; ++s) {
    const std::uint64_t os = static_cast<std::uint64_t>(s) + front;
    if (os < p.old_main_segments && segs[static_cast<std::size_t>(os)].valid_blocks) continue;
    if (std::find(nlogs.begin(), nlogs.end(), s) != nlogs.end()) continue;
    ++free_segs;
  }
  ncp.free_segment_count.set(free_segs);
  // A smaller NAT (its cut nids checked free by the plan): next_free_nid
  // within it, as mkfs sets it on a fresh volume.
  if (ncp.next_free_nid.get() >= ng.max_nid()) ncp.next_free_nid.set(kRootIno + 1);
  ncp.sit_ver_bitmap_bytesize.set(ng.sit_bitmap_bytes());
  ncp.nat_ver_bitmap_bytesize.set(ng.nat_bitmap_bytes());
  ncp.ckpt_flags.set(ncp.ckpt_flags.get() & ~cp_flag::nat_bits);
  std::memcpy(pack.data(), &ncp, sizeof ncp);
  const std::uint32_t csum_off = ncp.checksum_offset.get();
  if (csum_off > kCpBitmapOffset && csum_off <= kCpChecksumOffset)
    std::memset(pack.data() + kCpBitmapOffset, 0, csum_off - kCpBitmapOffset);
  for (std::uint32_t k = 1; k <= osb.cp_payload.get() && k < nblocks; ++k)
    std::memset(pack.data() + static_cast<std::size_t>(k) * kBlockSize, 0, kBlockSize);
  seal_checkpoint(pack.data());
  std::memcpy(pack.data() + static_cast<std::size_t>(nblocks - 1) * kBlockSize, pack.data(), kBlockSize);
  r.checkpoint_ver = ncp.checkpoint_ver.get();

  // 5. The superblock blocks as they will be (bytes [0, 1024) kept).
  std::vector<std::uint8_t> sbb(2 * kBlockSize);
  F2FSCORE_TRY(read_at(dev, 0, sbb));
  std::vector<std::uint8_t> new_sbb = sbb;
  for (std::size_t slot : {0u, 1u}) std::memcpy(new_sbb.data() + slot * kBlockSize + kSuperOffset, &nsb, sizeof nsb);

  // 6. The record and the staging: the new SIT (copy 0 from the current
  // copies, renumbered by `front`), NAT (copy 0 from the current copies),
  // SSA (renumbered), zero elsewhere; the pack; the superblock blocks.
  MoveRecord rec{};
  std::memcpy(rec.magic, kRecordMagic, sizeof kRecordMagic);
  rec.staging_blkaddr.set(p.old_block_count);
  rec.region_blkaddr.set(osb.sit_blkaddr.get());
  rec.region_blocks.set(p.new_main_blkaddr - osb.sit_blkaddr.get());
  rec.pack_blkaddr.set(ng.cp_pack_start(1 - cur));
  rec.pack_blocks.set(nblocks);
  rec.old_block_count.set(p.old_block_count);
  rec.new_block_count.set(p.new_block_count);
  rec.new_main_blkaddr.set(p.new_main_blkaddr);
  const disk::VersionBitmaps& bm = vol.version_bitmaps();
  std::vector<std::uint8_t> old_sit(kBlockSize);
  std::uint32_t old_sit_idx = kNoSeg;
  auto make_block = [&](std::uint64_t addr, std::uint8_t* out) -> Status {
    std::memset(out, 0, kBlockSize);
    std::uint32_t idx = 0;
    int copy = 0;
    if (addr < ng.nat_blkaddr()) {
      if (!ng.sit_index(addr, &idx, &copy) || copy != 0 || idx >= ng.sit_blocks_used()) return {};
      auto* blk = reinterpret_cast<SitBlock*>(out);
      for (std::uint32_t e = 0; e < kSitEntryPerBlock; ++e) {
        const std::uint64_t ns = static_cast<std::uint64_t>(idx) * kSitEntryPerBlock + e;
        const std::uint64_t os = ns + front;
        if (ns >= p.new_main_segments || os >= p.old_main_segments) break;
        const auto oi = Geometry::sit_block_of(static_cast<std::uint32_t>(os));
        if (oi != old_sit_idx) {
          F2FSCORE_TRY(read_at(dev, og.current_sit_addr(oi, bm) * kBlockSize, old_sit));
          old_sit_idx = oi;
        }
        std::memcpy(&blk->entries[e], &reinterpret_cast<const SitBlock*>(old_sit.data())->entries[os % kSitEntryPerBlock],
                    sizeof(SitEntry));
      }
      return {};
    }
    if (addr < ng.ssa_blkaddr()) {
      if (!ng.nat_index(addr, &idx, &copy) || copy != 0 || idx >= og.nat_blocks()) return {};
      return read_at(dev, og.current_nat_addr(idx, bm) * kBlockSize, std::span<std::uint8_t>(out, kBlockSize));
    }
    const std::uint64_t os = addr - ng.ssa_blkaddr() + front;
    if (os >= p.old_main_segments) return {};
    return read_at(dev, og.ssa_addr(static_cast<std::uint32_t>(os)) * kBlockSize, std::span<std::uint8_t>(out, kBlockSize));
  };
  const std::uint64_t region = rec.region_blocks.get();
  const std::uint64_t total = staged_blocks(rec);
  std::vector<std::uint8_t> buf(kChunkBlocks * kBlockSize);
  std::uint32_t crc = kSuperMagic;
  for (std::uint64_t i = 0; i < total; i += kChunkBlocks) {
    const std::size_t k = static_cast<std::size_t>(std::min<std::uint64_t>(kChunkBlocks, total - i));
    for (std::size_t j = 0; j < k; ++j) {
      const std::uint64_t idx = i + j;
      std::uint8_t* out = buf.data() + j * kBlockSize;
      if (idx < region) F2FSCORE_TRY(make_block(rec.region_blkaddr.get() + idx, out));
      else if (idx < region + nblocks) std::memcpy(out, pack.data() + (idx - region) * kBlockSize, kBlockSize);
      else std::memcpy(out, new_sbb.data() + (idx - region - nblocks) * kBlockSize, kBlockSize);
    }
    std::span<const std::uint8_t> s(buf.data(), k * kBlockSize);
    crc = f2fs_crc32(crc, s.data(), s.size());
    F2FSCORE_TRY(write_at(dev, (rec.staging_blkaddr.get() + i) * kBlockSize, s));
  }
  r.blocks_staged = total;
  rec.staged_crc.set(crc);
  rec.crc.set(f2fs_crc32(kSuperMagic, &rec, offsetof(MoveRecord, crc)));
  F2FSCORE_TRY(flush(dev));

  // 7. The record (superblock copy 0 still valid), flush; copy 1 made
  // invalid, flush; copy 0, flush. From here only a rerun brings the volume
  // back (Linux and fsck.f2fs find no superblock).
  std::memcpy(sbb.data(), &rec, sizeof rec);
  F2FSCORE_TRY(write_at(dev, 0, std::span<const std::uint8_t>(sbb).first(kBlockSize)));
  F2FSCORE_TRY(flush(dev));
  for (std::size_t slot : {1u, 0u}) {
    std::memset(sbb.data() + slot * kBlockSize + kSuperOffset, 0, 4);  // the magic
    F2FSCORE_TRY(write_at(dev, slot * kBlockSize, std::span<const std::uint8_t>(sbb).subspan(slot * kBlockSize, kBlockSize)));
    F2FSCORE_TRY(flush(dev));
  }
  // 8. The copy and the new superblocks.
  F2FSCORE_TRY(finish_copy(dev, rec, true));
  r.resized = true;
  return r;
}

}  // namespace

Result<ResizePlan> plan_resize(BlockDevice& dev, const ResizeOptions& opts) {
  auto l = load_and_plan(dev, opts, true);
  if (!l) return make_error(l.error());
  return l->plan;
}

Result<ResizeReport> resize_volume(BlockDevice& dev, const ResizeOptions& opts) {
  ResizeReport r;
  {
    bool done = false;
    auto st = resume_interrupted(dev, done, r.plan);
    if (!st) return make_error(st.error().code, "completing an interrupted resize: " + st.error().message);
    if (done) {
      r.finished_interrupted = r.resized = true;
      // The new layout's counts, as the completed volume has them.
      if (auto v = Volume::open(dev)) {
        const SuperBlock& nsb = (*v)->superblock();
        const Checkpoint& ncp = (*v)->checkpoint();
        r.plan.new_segment_count = nsb.segment_count.get();
        r.plan.new_main_segments = nsb.segment_count_main.get();
        r.plan.new_main_blkaddr = nsb.main_blkaddr.get();
        r.plan.new_user_block_count = ncp.user_block_count.get();
        r.plan.reserved_segments = ncp.rsvd_segment_count.get();
        r.plan.overprov_segments = ncp.overprov_segment_count.get();
        r.plan.valid_block_count = ncp.valid_block_count.get();
        r.plan.moves_metadata = true;
        r.checkpoint_ver = ncp.checkpoint_ver.get();
      }
      return r;
    }
  }
  auto l = load_and_plan(dev, opts, true);
  if (!l) return make_error(l.error());
  if (l->unclean) {
    // Not cleanly unmounted, and the resize would go ahead: the writer's
    // mount (its pre-mount check refuses a damaged volume with nothing
    // written; roll-forward of fsynced nodes) and unmount settle it first,
    // as a kernel mount and umount would.
    l->vol.reset();
    auto w = Writer::mount(dev, writer_options());
    if (!w)
      return make_error(w.error().code, "the volume was not cleanly unmounted, and mounting it to settle it failed: " +
                                            w.error().message);
    F2FSCORE_TRY((*w)->unmount());
    r.settled_unclean = true;
    l = load_and_plan(dev, opts);
    if (!l) return make_error(l.error());
  }
  r.plan = l->plan;
  r.finished_interrupted = false;
  const ResizePlan& p = r.plan;
  if (p.unchanged() && !l->stale_counts) return r;
  r.checkpoint_counts_fixed = l->stale_counts;
  if (p.moves_metadata) return grow_moving(dev, opts, std::move(*l), r);
  if (p.segments_to_empty) {
    // A shrink over data: the writer's GC moves the blocks below the new
    // end, each move committed by its checkpoints (the volume stays the old
    // one, with the same tree).
    l->vol.reset();
    auto w = Writer::mount(dev, writer_options());
    if (!w) return make_error(w.error().code, "mounting to move the blocks past the new end: " + w.error().message);
    auto left = (*w)->evacuate(p.new_main_segments);
    if (!left) return make_error(left.error().code, "moving the blocks past the new end: " + left.error().message);
    F2FSCORE_TRY((*w)->unmount());
    if (*left)
      return make_error(Errc::no_space, fmt("%llu valid blocks could not be moved below segment %llu", *left,
                                            p.new_main_segments));
    r.blocks_moved = p.blocks_to_move;
    auto again = load_and_plan(dev, opts);
    if (!again) return make_error(again.error());
    l = std::move(again);
    if (l->plan.segments_to_empty)
      return make_error(Errc::no_space, "blocks are still past the new end after moving them");
    r.plan = l->plan;
  }
  const bool grow = p.new_main_segments >= p.old_main_segments;
  const std::uint32_t keep = std::min(p.old_main_segments, p.new_main_segments);

  // 1. A checkpoint of the old layout from the truth: empty journals (every
  // SIT and NAT entry in its block, so none names a segment a shrink cuts),
  // the active logs below the new end.
  F2FSCORE_TRY(checkpoint_before_resize(dev, *l->vol, p, 0, r));
  bool truncated = false;
  auto v = open_volume(dev, truncated);
  if (!v) return make_error(v.error().code, "reopening after the checkpoint: " + v.error().message);
  Volume& vol = **v;
  const SuperBlock& osb = vol.superblock();
  const Checkpoint& ocp = vol.checkpoint();
  const Geometry& g = vol.geometry();
  const int cur = vol.open_report().checkpoint_pack;

  // 2. The current pack as stored, and its nat_bits.
  const std::uint32_t nblocks = ocp.cp_pack_total_block_count.get();
  std::vector<std::uint8_t> pack(static_cast<std::size_t>(nblocks) * kBlockSize);
  F2FSCORE_TRY(read_at(dev, g.cp_pack_start(cur) * kBlockSize, pack));
  const bool nat_bits = ocp.ckpt_flags.get() & cp_flag::nat_bits;
  std::vector<std::uint8_t> nb;
  if (nat_bits) {
    nb.resize(static_cast<std::size_t>(g.nat_bits_layout().blocks) * kBlockSize);
    F2FSCORE_TRY(read_at(dev, g.nat_bits_addr(cur) * kBlockSize, nb));
  }

  // 3. Free segments of the new main area (no valid block, no active log).
  std::vector<SegmentInfo> segs;
  F2FSCORE_TRY(vol.segments(0, keep, segs));
  const auto logs = curseg_segnos(ocp);
  std::uint32_t free_segs = 0;
  for (std::uint32_t s = 0; s < p.new_main_segments; ++s) {
    if (s < keep && segs[s].valid_blocks) continue;
    if (std::find(logs.begin(), logs.end(), s) != logs.end()) continue;
    ++free_segs;
  }

  // 4. A grow: the added segments' SIT entries must read as free in the
  // current copy; stale ones (left by an earlier shrink) are zeroed in place
  // (the old volume does not read entries past its main area).
  if (grow) {
    const std::uint32_t first_blk = Geometry::sit_block_of(p.old_main_segments);
    const std::uint32_t last_blk = Geometry::sit_block_of(p.new_main_segments - 1);
    std::vector<std::uint8_t> b(kBlockSize);
    bool wrote = false;
    for (std::uint32_t idx = first_blk; idx <= last_blk; ++idx) {
      const std::uint64_t addr = g.current_sit_addr(idx, vol.version_bitmaps());
      F2FSCORE_TRY(read_at(dev, addr * kBlockSize, b));
      auto* blk = reinterpret_cast<SitBlock*>(b.data());
      bool dirty = false;
      for (std::uint32_t e = 0; e < kSitEntryPerBlock; ++e) {
        const std::uint32_t segno = idx * kSitEntryPerBlock + e;
        if (segno < p.old_main_segments || segno >= p.new_main_segments) continue;
        static const SitEntry zero{};
        if (std::memcmp(&blk->entries[e], &zero, sizeof zero) != 0) {
          std::memset(&blk->entries[e], 0, sizeof(SitEntry));
          dirty = true;
        }
      }
      if (!dirty) continue;
      F2FSCORE_TRY(write_at(dev, addr * kBlockSize, b));
      ++r.sit_blocks_zeroed;
      wrote = true;
    }
    if (wrote) F2FSCORE_TRY(flush(dev));
  }

  // 5. The new pack: the current one with the new size's counts, version + 1.
  Checkpoint ncp;
  std::memcpy(&ncp, pack.data(), sizeof ncp);
  ncp.checkpoint_ver.set(ocp.checkpoint_ver.get() + 1);
  ncp.user_block_count.set(p.new_user_block_count);
  ncp.rsvd_segment_count.set(p.reserved_segments);
  ncp.overprov_segment_count.set(p.overprov_segments);
  ncp.free_segment_count.set(free_segs);
  std::memcpy(pack.data(), &ncp, sizeof ncp);
  seal_checkpoint(pack.data());
  std::memcpy(pack.data() + static_cast<std::size_t>(nblocks - 1) * kBlockSize, pack.data(), kBlockSize);
  if (nat_bits) {
    const std::uint64_t h = nat_bits_header(pack.data());
    for (int i = 0; i < 8; ++i) nb[static_cast<std::size_t>(i)] = static_cast<std::uint8_t>(h >> (8 * i));
  }
  r.checkpoint_ver = ncp.checkpoint_ver.get();
  const int other = 1 - cur;
  auto write_pack = [&]() -> Status {
    F2FSCORE_TRY(write_at(dev, g.cp_pack_start(other) * kBlockSize,
                          std::span<const std::uint8_t>(pack).first(static_cast<std::size_t>(nblocks - 1) * kBlockSize)));
    if (nat_bits) F2FSCORE_TRY(write_at(dev, g.nat_bits_addr(other) * kBlockSize, nb));
    F2FSCORE_TRY(flush(dev));
    F2FSCORE_TRY(write_at(dev, (g.cp_pack_start(other) + nblocks - 1) * kBlockSize,
                          std::span<const std::uint8_t>(pack).last(kBlockSize)));
    return flush(dev);
  };

  // 6. The new superblock.
  SuperBlock nsb = osb;
  nsb.block_count.set(p.new_block_count);
  nsb.segment_count.set(p.new_segment_count);
  nsb.segment_count_main.set(p.new_main_segments);
  nsb.section_count.set(p.new_main_segments / g.segs_per_sec());
  if (nsb.feature.get() & feature::sb_checksum) nsb.crc.set(superblock_checksum(nsb));
  F2FSCORE_TRY(validate_superblock(nsb, dev.info().size_bytes / kBlockSize, 0));
  std::vector<std::uint8_t> sbb(2 * kBlockSize);
  F2FSCORE_TRY(read_at(dev, 0, sbb));
  auto write_sbs = [&]() -> Status {
    for (std::uint64_t slot : {1u, 0u}) {
      std::span<std::uint8_t> b(sbb.data() + slot * kBlockSize, kBlockSize);
      std::memcpy(b.data() + kSuperOffset, &nsb, sizeof nsb);
      F2FSCORE_TRY(write_at(dev, slot * kBlockSize, b));
      F2FSCORE_TRY(flush(dev));
    }
    return {};
  };
  // A grow: the superblocks first (a larger main area with the old pack's
  // smaller user_block_count is valid); a shrink: the pack first (its
  // smaller user_block_count is valid for the old main area).
  if (grow) {
    F2FSCORE_TRY(write_sbs());
    F2FSCORE_TRY(write_pack());
  } else {
    F2FSCORE_TRY(write_pack());
    F2FSCORE_TRY(write_sbs());
  }
  r.resized = true;
  return r;
}

}  // namespace f2fscore

namespace f2fscore {

Result<std::string> interrupted_resize(BlockDevice& dev) {
  std::vector<std::uint8_t> b(2 * kBlockSize);
  if (dev.info().size_bytes < b.size()) return std::string();
  F2FSCORE_TRY(read_at(dev, 0, b));
  MoveRecord m;
  if (!parse_record(b.data(), m) || sb_magic(b.data()) || sb_magic(b.data() + kBlockSize)) return std::string();
  return fmt("a resize from %llu to %llu blocks moving the metadata areas was interrupted in its copy (the staged "
             "metadata at block %llu): run f2fscore-resize on the device to complete it",
             m.old_block_count.get(), m.new_block_count.get(), m.staging_blkaddr.get());
}

}  // namespace f2fscore
