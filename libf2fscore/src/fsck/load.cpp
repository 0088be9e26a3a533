// The checker's first passes: open the volume, load the NAT, SIT and SSA
// in bulk (large coalesced reads), and scan every node block the NAT
// points at, in block order, keeping a compact record of each. Rules as
// fsck_chk_meta() and sanity_check_nid() in fsck/fsck.c (f2fs-tools) and
// sanity_check_inode() in fs/f2fs/inode.c.
#include <algorithm>
#include <bit>
#include <cstdio>
#include <cstdlib>
#include <cstring>

#include "f2fscore/checksum.hpp"
#include "f2fscore/disk/checkpoint.hpp"
#include "f2fscore/disk/superblock.hpp"
#include "f2fscore/disk/xattr.hpp"
#include "disk/summaries.hpp"
#include "fsck/fsck_internal.hpp"
#include "reader/volume_internal.hpp"
#include "util/text.hpp"
#include "util/aligned.hpp"

namespace f2fscore::fsck {

using namespace disk;

namespace {
using detail::fmt;

struct AlignedBuf {
  std::uint8_t* p = nullptr;
  explicit AlignedBuf(std::size_t n) { p = static_cast<std::uint8_t*>(detail::aligned_alloc_bytes(4096, n)); }
  ~AlignedBuf() { detail::aligned_free(p); }
  AlignedBuf(const AlignedBuf&) = delete;
  AlignedBuf& operator=(const AlignedBuf&) = delete;
};

struct Slot {
  IoRequest req;
  std::unique_ptr<AlignedBuf> buf;
  bool busy = false, done = false;
  std::size_t first = 0, last = 0;  // indexes into addrs: [first, last)
  block_t start = 0;
};

void on_done(IoRequest& r) noexcept { static_cast<Slot*>(r.user)->done = true; }

// Appends (slot, value) for every non-zero little-endian 32-bit word of
// `words`[0, n) to `out`, in slot order. Most address slots of a node are
// zero: runs of eight zero words are passed over 32 bytes at a time.
void push_nonzero_slots(const std::uint8_t* words, std::uint32_t n, std::uint16_t first_slot, AddrTable& out) {
  std::uint32_t k = 0;
  while (k < n) {
    if (k + 8 <= n) {
      std::uint64_t w[4];
      std::memcpy(w, words + 4 * static_cast<std::size_t>(k), sizeof w);
      if ((w[0] | w[1] | w[2] | w[3]) == 0) {
        k += 8;
        continue;
      }
    }
    const std::uint32_t end = std::min(n, k + 8);
    for (; k < end; ++k)
      if (const std::uint32_t v = load_le32(words, 4 * static_cast<std::size_t>(k)); v != 0)
        out.push_back({static_cast<std::uint16_t>(first_slot + k), v});
  }
}
}  // namespace

Status read_blocks_batched(BlockDevice& dev, const std::vector<block_t>& addrs, std::uint32_t batch_blocks,
                           std::uint32_t queue_depth, std::uint32_t gap,
                           const std::function<void(block_t, const std::uint8_t*)>& on_block,
                           std::uint64_t* bytes_read) {
  if (addrs.empty()) return {};
  // Buffers no larger than the span of `addrs` needs, no more slots than
  // requests.
  const std::uint64_t span = static_cast<std::uint64_t>(addrs.back()) - addrs.front() + 1;
  batch_blocks = std::max<std::uint32_t>(1, std::min<std::uint32_t>(batch_blocks, 4096));
  batch_blocks = static_cast<std::uint32_t>(std::min<std::uint64_t>(batch_blocks, span));
  queue_depth = std::max<std::uint32_t>(1, std::min<std::uint32_t>(queue_depth, 64));
  queue_depth = static_cast<std::uint32_t>(std::min<std::uint64_t>(queue_depth, addrs.size()));
  const std::uint64_t dev_blocks = dev.info().size_bytes / kBlockSize;
  std::vector<Slot> slots(queue_depth);
  for (auto& s : slots) s.buf = std::make_unique<AlignedBuf>(static_cast<std::size_t>(batch_blocks) * kBlockSize);
  std::size_t next = 0;  // next address to schedule
  std::size_t head = 0;  // the oldest slot (processed in order)
  std::size_t tail = 0;  // next slot to fill
  std::size_t busy = 0;
  Status failure;
  auto schedule = [&](Slot& s) {
    s.first = next;
    s.start = addrs[next];
    std::size_t j = next + 1;
    while (j < addrs.size() && addrs[j] - s.start < batch_blocks && addrs[j] - addrs[j - 1] <= gap &&
           addrs[j] < dev_blocks)
      ++j;
    s.last = j;
    next = j;
    const std::uint64_t n = static_cast<std::uint64_t>(addrs[j - 1]) - s.start + 1;
    s.req = IoRequest{};
    s.req.op = IoOp::read;
    s.req.offset = static_cast<std::uint64_t>(s.start) * kBlockSize;
    s.req.length = n * kBlockSize;
    s.req.buf = s.buf->p;
    s.req.on_complete = on_done;
    s.req.user = &s;
    s.busy = true;
    s.done = false;
    dev.submit(s.req);
  };
  while (next < addrs.size() && busy < queue_depth) {
    schedule(slots[tail]);
    tail = (tail + 1) % queue_depth;
    ++busy;
  }
  while (busy > 0) {
    Slot& s = slots[head];
    while (!s.done) dev.poll(true);
    s.busy = false;
    --busy;
    if (!s.req.ok()) {
      if (failure) failure = make_error(s.req.error());
    } else if (failure) {
      if (bytes_read) *bytes_read += s.req.length;
      for (std::size_t k = s.first; k < s.last; ++k)
        on_block(addrs[k], s.buf->p + static_cast<std::size_t>(addrs[k] - s.start) * kBlockSize);
    }
    head = (head + 1) % queue_depth;
    if (failure && next < addrs.size()) {
      schedule(slots[tail]);
      tail = (tail + 1) % queue_depth;
      ++busy;
    }
  }
  drain(dev);
  return failure;
}

std::size_t Checker::add(Problem p) {
  report_.problems.push_back(std::move(p));
  return report_.problems.size() - 1;
}

bool Checker::sit_bit(std::uint32_t segno, std::uint32_t off) const {
  const SegState& e = segs_[segno];
  if (e.map() != SegState::kMapPartial) return e.map() == SegState::kMapFull;
  const auto it = std::lower_bound(partial_segnos_.begin(), partial_segnos_.end(), segno);
  return test_bit_msb(partial_maps_[static_cast<std::size_t>(it - partial_segnos_.begin())].data(), off);
}

bool Checker::sit_valid(block_t a) const {
  if (!valid_main(a)) return false;
  return sit_bit(segno_of(a), geo_->blkoff_of(a));
}

Status Checker::open_volume() {
  VolumeOpenOptions vo;
  vo.verify_inode_checksums = false;
  vo.lenient_checkpoint = true;  // journal counts and next_free_nid are reported, not fatal
  auto v = Volume::open(dev_, vo);
  if (!v) return make_error(v.error());
  // Two valid superblocks whose feature sets differ: the kernel takes #0,
  // but a feature set that the root inode contradicts (its extra attribute
  // flag, sanity_check_inode() in fs/f2fs/inode.c) is the damaged one when
  // #1's agrees; #1 is used and #0 restored from it (SB_PRIMARY_BAD).
  if ((*v)->open_report().superblock_copy == 0) {
    std::vector<std::uint8_t> b1(kBlockSize);
    SuperBlock sb1{};
    if (read_at(dev_, kBlockSize, b1)) std::memcpy(&sb1, b1.data() + kSuperOffset, sizeof sb1);
    // A copy: `v` may be replaced below, and its superblock with it.
    const SuperBlock sb0 = (*v)->superblock();
    if (sb1.magic.get() == kSuperMagic && sb1.feature.get() != sb0.feature.get() &&
        validate_superblock(sb1, 0, 1)) {
      auto root = (*v)->read_node(sb0.root_ino.get());
      if (root && root->footer.ino.get() == sb0.root_ino.get()) {
        const bool extra = root->i.i_inline & inline_flag::extra_attr;
        const bool agrees0 = extra == static_cast<bool>(sb0.feature.get() & feature::extra_attr);
        const bool agrees1 = extra == static_cast<bool>(sb1.feature.get() & feature::extra_attr);
        if (!agrees0 && agrees1) {
          VolumeOpenOptions vo1 = vo;
          vo1.superblock_copy = 1;
          auto v1 = Volume::open(dev_, vo1);
          if (v1 && (*v1)->open_report().superblock_copy == 1) {
            v = std::move(v1);
            sb_feature_disagrees_ = fmt("superblock #0: feature 0x%llx contradicts the root inode (extra attributes ",
                                        sb0.feature.get()) +
                                    (extra ? "present" : "absent") +
                                    fmt("), superblock #1's 0x%llx agrees with it", sb1.feature.get());
          }
        }
      }
    }
  }
  vol_ = std::move(*v);
  sb_ = vol_->superblock();
  cp_ = vol_->checkpoint();
  features_ = sb_.feature.get();
  if (features_ & feature::inode_checksum) chksum_seed_ = inode_checksum_seed(sb_.uuid);
  main_blk_ = static_cast<block_t>(vol_->main_blkaddr());
  main_segs_ = vol_->main_segments();
  geo_ = &vol_->geometry();
  main_end_ = static_cast<block_t>(geo_->main_end());
  max_nid_ = vol_->max_nid();
  return {};
}

void Checker::check_superblocks() {
  const auto& rep = vol_->open_report();
  if (!sb_feature_disagrees_.empty()) {
    Problem p = prob(Code::SB_PRIMARY_BAD);
    p.blkaddr = 0;
    p.detail = sb_feature_disagrees_;
    add(p);
  }
  for (const auto& w : rep.warnings) {
    if (w.rfind("superblock #0", 0) == 0) {
      Problem p = prob(Code::SB_PRIMARY_BAD);
      p.blkaddr = 0;
      p.detail = w;
      add(p);
    } else if (w.rfind("superblock #1", 0) == 0) {
      Problem p = prob(Code::SB_BACKUP_BAD);
      p.blkaddr = 1;
      p.detail = w;
      add(p);
    } else if (w.rfind("device: ", 0) == 0) {
      Problem p = prob(Code::VOLUME_TRUNCATED);
      p.blkaddr = static_cast<block_t>(dev_.info().size_bytes / kBlockSize);
      p.detail = w.substr(8);
      truncated_problem_ = add(p);
    } else if (w.rfind("checkpoint: NAT journal", 0) == 0) {
      Problem p = prob(Code::NAT_JOURNAL_BAD);
      p.detail = w;
      add(p);
    } else if (w.rfind("checkpoint: SIT journal", 0) == 0) {
      Problem p = prob(Code::SIT_JOURNAL_BAD);
      p.detail = w;
      add(p);
    } else if (w.rfind("checkpoint: next_free_nid", 0) == 0) {
      Problem p = prob(Code::CP_NEXT_FREE_NID);
      p.nid = static_cast<nid_t>(std::min<std::uint64_t>(rep.raw_next_free_nid, 0xffffffffu));
      p.detail = w;
      add(p);
    } else if (w.rfind("checkpoint: user_block_count", 0) == 0 || w.rfind("checkpoint: cp_pack_start_sum", 0) == 0 ||
               w.rfind("checkpoint: sit/nat_ver_bitmap_bytesize", 0) == 0 ||
               (w.rfind("checkpoint pack", 0) == 0 && w.find("fails the superblock's bounds") != std::string::npos)) {
      Problem p = prob(Code::CP_FIELD_BAD);
      p.blkaddr = static_cast<block_t>(vol_->geometry().cp_pack_start(
          w.rfind("checkpoint pack", 0) == 0 ? (w.rfind("checkpoint pack 1", 0) == 0 ? 1 : 0) : rep.checkpoint_pack));
      p.detail = w;
      add(p);
    } else if (w.rfind("checkpoint pack", 0) == 0) {
      Problem p = prob(Code::CP_PACK_BAD);
      p.blkaddr = static_cast<block_t>(vol_->geometry().cp_pack_start(w.rfind("checkpoint pack 1", 0) == 0 ? 1 : 0));
      p.detail = w;
      add(p);
    }
  }
  // Quota inode numbers without the quota_ino feature: the kernel ignores
  // them, fsck.f2fs checks those inodes as quota files all the same
  // (fsck_chk_quota_node() reads qf_ino[] whatever the features) and
  // unlinks what they name. The repair zeroes them in both copies.
  if (!(features_ & feature::quota_ino)) {
    std::string which;
    for (std::uint32_t t = 0; t < kMaxQuotas; ++t)
      if (sb_.qf_ino[t].get() != 0) which += fmt(" qf_ino[%llu] %llu", t, sb_.qf_ino[t].get());
    if (!which.empty()) {
      Problem p = prob(Code::QUOTA_INODE_BAD);
      p.blkaddr = 0;
      p.detail = "superblock" + which + " on a volume without the quota_ino feature";
      sb_quota_problem_ = add(p);
    }
  }
  bool sb1_reported = false;
  for (const auto& pr : report_.problems) sb1_reported |= pr.code == Code::SB_BACKUP_BAD || pr.code == Code::SB_PRIMARY_BAD;
  if (!sb1_reported) {
    std::vector<std::uint8_t> b0(kBlockSize), b1(kBlockSize);
    if (read_at(dev_, 0, b0) && read_at(dev_, kBlockSize, b1) &&
        std::memcmp(b0.data() + kSuperOffset, b1.data() + kSuperOffset, sizeof(SuperBlock)) != 0) {
      Problem p = prob(Code::SB_BACKUP_BAD);
      p.blkaddr = 1;
      p.detail = "superblock #1 differs from superblock #0";
      add(p);
    }
  }
  const std::uint32_t flags = cp_.ckpt_flags.get();
  if (flags & (cp_flag::fsck | cp_flag::error | cp_flag::quota_need_fsck)) {
    Problem p = prob(Code::CP_FLAGS);
    std::string names;
    if (flags & cp_flag::fsck) names += " fsck";
    if (flags & cp_flag::error) names += " error";
    if (flags & cp_flag::quota_need_fsck) names += " quota_need_fsck";
    p.detail = fmt("checkpoint flags 0x%llx (", flags) + names.substr(1) + ")";
    add(p);
  }
}


// Reads NAT blocks `blocks` (indexes, ascending) through the version
// bitmap; keeps the entries of the blocks holding one in use. Entries that
// the NAT journal set are left as the journal has them.
Status Checker::read_nat_blocks(const std::vector<std::uint32_t>& blocks) {
  const Geometry& g = vol_->geometry();
  const VersionBitmaps& vb = vol_->version_bitmaps();
  std::vector<block_t> addrs;
  addrs.reserve(blocks.size());
  for (std::uint32_t b : blocks) addrs.push_back(static_cast<block_t>(g.current_nat_addr(b, vb)));
  std::sort(addrs.begin(), addrs.end());
  return read_blocks_batched(
      dev_, addrs, opts_.batch_blocks, opts_.queue_depth, 1,
      [&](block_t a, const std::uint8_t* data) {
        progress(1, ++pass1_done_, pass1_max_);
        std::uint32_t b = 0;
        int copy = 0;
        if (!g.nat_index(a, &b, &copy)) return;
        const auto* nb = reinterpret_cast<const NatBlock*>(data);
        bool any = nids_.has_block(b);
        for (std::uint32_t i = 0; i < kNatEntryPerBlock && !any; ++i) any = nb->entries[i].block_addr.get() != kNullAddr;
        if (!any) return;
        for (std::uint32_t i = 0; i < kNatEntryPerBlock; ++i) {
          const nid_t nid = b * kNatEntryPerBlock + i;
          if (nid >= max_nid_) break;
          NidTable::Rec& r = nids_.get(nid);
          if (r.nat.from_journal) continue;
          r.nat = {nb->entries[i].block_addr.get(), nb->entries[i].ino.get(), nb->entries[i].version};
        }
      },
      &report_.stats.bytes_read);
}

// Loads the NAT (journal applied) and the SIT (journal applied). With valid
// nat_bits and without Options::force the NAT blocks they mark empty are
// not read (f2fs_enable_nat_bits() in fs/f2fs/node.c trusts them so at
// mount); if the nodes the NAT then holds differ from the checkpoint's
// valid_node_count, the skipped blocks are read as well. With force every
// NAT block is read, as fsck.f2fs reads the whole NAT, so entries in a
// block nat_bits calls empty are checked too.
Status Checker::load_nat() {
  const Geometry& g = vol_->geometry();
  const int pack = vol_->open_report().checkpoint_pack;
  const std::uint32_t nat_blocks = g.nat_blocks();
  nids_.clear();
  std::vector<std::uint32_t> want, skipped;
  std::vector<std::uint8_t> bits;
  if (!opts_.force && (cp_.ckpt_flags.get() & cp_flag::nat_bits) && vol_->nat_bits_valid()) {
    bits.resize(static_cast<std::size_t>(g.nat_bits_layout().blocks) * kBlockSize);
    if (!read_at(dev_, g.nat_bits_addr(pack) * kBlockSize, bits)) bits.clear();
    else report_.stats.bytes_read += bits.size();
  }
  const std::uint8_t* empty = bits.empty() ? nullptr : bits.data() + g.nat_bits_layout().empty_offset;
  for (std::uint32_t b = 0; b < nat_blocks; ++b) {
    if (static_cast<std::uint64_t>(b) * kNatEntryPerBlock >= max_nid_) break;
    (empty && test_bit_le(empty, b) ? skipped : want).push_back(b);
  }
  pass1_done_ = 0;
  pass1_max_ = want.size() + g.sit_blocks_used();
  progress(1, 0, pass1_max_);
  F2FSCORE_TRY(read_nat_blocks(want));
  // The NAT and SIT journals, from the checkpoint pack in use.
  auto sums = std::make_unique<CursegSummaries>();
  F2FSCORE_TRY(load_curseg_summaries(dev_, g, cp_, g.cp_pack_start(pack), SummaryScope::journals, *sums));
  const Journal& nj = sums->nat_journal;
  const Journal& sj = sums->sit_journal;
  for (std::uint32_t i = 0; i < nj.n_entries.get() && i < kNatJournalEntries; ++i) {
    const nid_t nid = nj.nat_j.entries[i].nid.get();
    if (nid >= max_nid_) {
      Problem p = prob(Code::NAT_JOURNAL_BAD);
      p.nid = nid;
      p.detail = fmt("NAT journal entry %llu names nid %llu, past the NAT (%llu nids)", i, nid, max_nid_);
      add(p);
      continue;
    }
    const auto& ne = nj.nat_j.entries[i].ne;
    NidTable::Rec& r = nids_.get(nid);
    r.nat = {ne.block_addr.get(), ne.ino.get(), ne.version, true};
  }
  if (!skipped.empty()) {
    std::uint64_t nodes = 0;
    nids_.for_each(sb_.root_ino.get(), [&](nid_t, const NidTable::Rec& r) { nodes += r.nat.blkaddr != kNullAddr; });
    if (nodes != cp_.valid_node_count.get()) {
      pass1_max_ += skipped.size();
      F2FSCORE_TRY(read_nat_blocks(skipped));
    }
  }
  // SIT.
  std::map<std::uint32_t, SitEntry> sit_journal;
  for (std::uint32_t i = 0; i < sj.n_entries.get() && i < kSitJournalEntries; ++i) {
    const std::uint32_t segno = sj.sit_j.entries[i].segno.get();
    if (segno >= main_segs_) {
      Problem p = prob(Code::SIT_JOURNAL_BAD);
      p.detail = fmt("SIT journal entry %llu names segment %llu, past the main area (%llu segments)", i, segno, main_segs_);
      add(p);
      continue;
    }
    sit_journal[segno] = sj.sit_j.entries[i].se;
  }
  return read_sit(sit_journal);
}

// Reads the SIT blocks of the main area through the version bitmap and
// keeps, per segment, the valid count, the type and the map's kind; the
// maps of partially valid segments are kept apart.
Status Checker::read_sit(const std::map<std::uint32_t, SitEntry>& journal) {
  const Geometry& g = vol_->geometry();
  const VersionBitmaps& vb = vol_->version_bitmaps();
  segs_.assign(main_segs_, SegState{});
  partial_segnos_.clear();
  partial_maps_.clear();
  used_maps_.clear();
  std::vector<block_t> saddrs;
  for (std::uint32_t i = 0; i < g.sit_blocks_used(); ++i) saddrs.push_back(static_cast<block_t>(g.current_sit_addr(i, vb)));
  std::sort(saddrs.begin(), saddrs.end());
  // Blocks are handed over in address order, which is not segment order
  // when the version bitmap mixes the two copies: partial maps are sorted after.
  std::vector<std::pair<std::uint32_t, std::array<std::uint8_t, kSitVblockMapSize>>> partial;
  auto keep = [&](std::uint32_t segno, const SitEntry& e) {
    SegState& st = segs_[segno];
    st.vblocks = sit_vblocks(e);
    st.type = sit_type(e);
    bool zero = true, ones = true;
    for (std::uint32_t k = 0; k < kSitVblockMapSize; ++k) {
      zero &= e.valid_map[k] == 0;
      ones &= e.valid_map[k] == 0xFF;
    }
    st.flags = zero ? SegState::kMapEmpty : ones ? SegState::kMapFull : SegState::kMapPartial;
    if (st.flags == SegState::kMapPartial) {
      partial.emplace_back(segno, std::array<std::uint8_t, kSitVblockMapSize>{});
      std::memcpy(partial.back().second.data(), e.valid_map, kSitVblockMapSize);
    }
  };
  auto decode = [&](block_t a, const std::uint8_t* data) {
    progress(1, ++pass1_done_, pass1_max_);
    std::uint32_t blk = 0;
    int copy = 0;
    if (!g.sit_index(a, &blk, &copy)) return;
    for (std::uint32_t i = 0; i < kSitEntryPerBlock; ++i) {
      const std::uint32_t segno = blk * kSitEntryPerBlock + i;
      if (segno >= main_segs_) break;
      auto j = journal.find(segno);
      if (j != journal.end()) {
        keep(segno, j->second);
        // The block's own entry, which the journal supersedes, must still be
        // consistent: the kernel checks it while it loads the SIT
        // (build_sit_entries() -> check_block_count() in fs/f2fs/segment.c)
        // and refuses to mount otherwise. The rebuild rewrites the block.
        SitEntry e;
        std::memcpy(&e, data + i * sizeof(SitEntry), sizeof(SitEntry));
        std::uint32_t bits = 0;
        for (std::uint32_t k = 0; k < kSitVblockMapSize; ++k) bits += static_cast<std::uint32_t>(std::popcount(e.valid_map[k]));
        if (bits != sit_vblocks(e) || sit_type(e) >= 6) {
          Problem p = prob(Code::SIT_VBLOCKS_MISMATCH);
          p.segno = segno;
          p.blkaddr = a;
          p.detail = fmt("SIT block entry of segment %llu (the journal's supersedes it): vblocks %llu, type %llu, ", segno,
                         sit_vblocks(e), sit_type(e)) +
                     fmt("%llu bits set in its bitmap", bits);
          add(p);
        }
        continue;
      }
      SitEntry e;
      std::memcpy(&e, data + i * sizeof(SitEntry), sizeof(SitEntry));
      keep(segno, e);
    }
  };
  // SIT blocks the device reports in a hole (a sparse image file:
  // BlockDevice::next_data()) read as zeroes: decoded without a read.
  std::vector<block_t> reads;
  {
    static const std::uint8_t kZeroBlock[kBlockSize] = {};
    const std::uint64_t dev_end = dev_.info().size_bytes;
    std::uint64_t hole_lo = 0, hole_hi = 0, data_lo = 0, data_hi = 0;  // known [lo, hi) ranges
    reads.reserve(saddrs.size());
    for (block_t a : saddrs) {
      const std::uint64_t off = static_cast<std::uint64_t>(a) * kBlockSize, end = off + kBlockSize;
      if (end > dev_end) {
        reads.push_back(a);  // past the device: the read reports it
        continue;
      }
      if (!(off >= hole_lo && end <= hole_hi) && !(off >= data_lo && off < data_hi)) {
        const std::uint64_t d = dev_.next_data(off, dev_end);
        if (d >= end) {
          hole_lo = off;
          hole_hi = d;
        } else {
          data_lo = off;
          data_hi = std::max(dev_.next_hole(std::max(d, off), dev_end), end);
        }
      }
      if (off >= hole_lo && end <= hole_hi) decode(a, kZeroBlock);
      else reads.push_back(a);
    }
  }
  F2FSCORE_TRY(read_blocks_batched(dev_, reads, opts_.batch_blocks, opts_.queue_depth, 1, decode,
                                   &report_.stats.bytes_read));
  std::sort(partial.begin(), partial.end(), [](const auto& x, const auto& y) { return x.first < y.first; });
  partial_segnos_.reserve(partial.size());
  partial_maps_.reserve(partial.size());
  for (auto& [s, m] : partial) {
    partial_segnos_.push_back(s);
    partial_maps_.push_back(m);
  }
  return {};
}

Status Checker::scan_nodes() {
  std::vector<std::pair<block_t, nid_t>> list;
  std::size_t inode_guess = 0;
  const nid_t first = sb_.root_ino.get() < 3 ? 3 : sb_.root_ino.get();
  nids_.for_each(first, [&](nid_t nid, NidTable::Rec& rec) {
    rec.node = NodeRec{};
    const NatRec& n = rec.nat;
    if (nid >= max_nid_ || n.blkaddr == kNullAddr) return;
    if (!valid_main(n.blkaddr)) {
      Problem p = prob(Code::NAT_BLKADDR_INVALID);
      p.nid = nid;
      p.ino = n.ino;
      p.blkaddr = n.blkaddr;
      p.detail = fmt("NAT entry of nid %llu has block address 0x%llx, outside the main area [0x%llx, 0x%llx)", nid,
                     n.blkaddr, main_blk_, main_end_);
      add(p);
      return;
    }
    if (!sit_valid(n.blkaddr)) {
      Problem p = prob(Code::NAT_BLKADDR_NOT_IN_SIT);
      p.nid = nid;
      p.ino = n.ino;
      p.blkaddr = n.blkaddr;
      p.segno = segno_of(n.blkaddr);
      p.detail = fmt("node block 0x%llx of nid %llu is not valid in the SIT", n.blkaddr, nid);
      add(p);
    }
    list.emplace_back(n.blkaddr, nid);
    inode_guess += n.ino == nid;
  });
  std::sort(list.begin(), list.end());
  // One record per inode the NAT names (ino == nid): reserved so that the
  // table does not grow by doubling.
  if (!light_scan_) inodes_.reserve(inodes_.size() + inode_guess);
  std::vector<block_t> addrs;
  addrs.reserve(list.size());
  for (auto& [a, n] : list)
    if (addrs.empty() || addrs.back() != a) addrs.push_back(a);
  std::size_t li = 0;
  std::uint64_t done = 0;
  progress(2, 0, addrs.size());
  auto st = read_blocks_batched(
      dev_, addrs, opts_.batch_blocks, opts_.queue_depth, 8,
      [&](block_t a, const std::uint8_t* data) {
        progress(2, ++done, addrs.size());
        while (li < list.size() && list[li].first < a) ++li;
        for (; li < list.size() && list[li].first == a; ++li) scan_node(list[li].second, a, data);
      },
      &report_.stats.bytes_read);
  if (!st) {
    // Fall back to one block at a time, so one bad sector costs one node.
    std::vector<std::uint8_t> b(kBlockSize);
    for (auto& [a, nid] : list) {
      if (node(nid).read_ok) continue;
      if (read_at(dev_, static_cast<std::uint64_t>(a) * kBlockSize, b)) scan_node(nid, a, b.data());
    }
  }
  progress(2, addrs.size(), addrs.size());
  return {};
}

void Checker::scan_node(nid_t nid, block_t addr, const std::uint8_t* blk) {
  NodeRec& r = nids_.get(nid).node;
  // The block as read (a 4 KiB buffer): Node is bytes only (alignment 1).
  static_assert(alignof(Node) == 1 && sizeof(Node) == kBlockSize);
  const Node& n = *reinterpret_cast<const Node*>(blk);
  r.read_ok = true;
  const nid_t fnid = n.footer.nid.get(), fino = n.footer.ino.get();
  r.set_footer_ofs(n.footer.flag.get() >> node_flag::offset_shift);
  if (fnid != nid || fino != nat(nid).ino) {
    r.footer_odd = true;
    footer_odd_[nid] = {fnid, fino};
  }
  if (fnid != nid) return;
  if (r.footer_ofs() == 0 && fino == nid) {
    scan_inode(nid, addr, n, r);
    return;
  }
  if (light_scan_) return;
  if (r.footer_ofs() == (0xFFFFFFFFu >> node_flag::offset_shift)) {  // XATTR_NODE_OFFSET
    xattr_blocks_[nid].assign(blk, blk + kNodeFooterOffset);
    return;
  }
  r.addr_begin = addrs_.begin_run(kDefAddrsPerBlock);
  push_nonzero_slots(reinterpret_cast<const std::uint8_t*>(n.dn.addr), kDefAddrsPerBlock, 0, addrs_);
  r.addr_count = static_cast<std::uint16_t>(addrs_.size() - r.addr_begin);
}


// Parses dentries laid out as bitmap / DirEntry[] / names[][8] (a dentry
// block, or an inline area), as __chk_dentries() reads them.
void parse_dentries(const std::uint8_t* bitmap, const DirEntry* de, const std::uint8_t* names, std::uint32_t slots,
                    std::uint32_t bidx, block_t blkaddr, std::vector<Dent>& out, std::vector<LocalIssue>& issues) {
  for_each_dentry(bitmap, de, names, slots, [&](const DentrySlot& s) {
    const std::uint32_t i = s.slot;
    const std::string where = bidx == Dent::kInline ? fmt("inline slot %llu", i) : fmt("block %llu slot %llu", bidx, i);
    switch (s.fault) {
      case DentryFault::empty_slot:
        issues.push_back({Code::DENTRY_BITMAP, where + ": bitmap bit set for an empty slot", i});
        return true;
      case DentryFault::zero_name_len:
        issues.push_back({Code::DENTRY_NAMELEN, where + fmt(": dentry for ino %llu has name_len 0", s.entry.ino.get()), i});
        return true;
      case DentryFault::name_past_end:
        issues.push_back(
            {Code::DENTRY_NAMELEN, where + fmt(": name_len %llu runs past the %llu slots", s.entry.name_len.get(), slots), i});
        return true;
      case DentryFault::none: break;
    }
    Dent d;
    d.name.assign(s.name);
    d.ino = s.entry.ino.get();
    d.type = s.entry.file_type;
    d.hash = s.entry.hash_code.get();
    d.bidx = bidx;
    d.slot = i;
    d.blkaddr = blkaddr;
    out.push_back(std::move(d));
    return true;
  });
}

// An out-of-range compression pair (i_log_cluster_size, i_compress_algorithm)
// replaced by the valid one under which the first compressed cluster of
// i_addr (COMPRESS_ADDR at a cluster-aligned slot, then its valid blocks)
// decompresses to exactly its cluster's size; a field in range is kept. A
// file without a compressed cluster in i_addr gets the kernel's defaults
// for what is out of range (log 2, MIN_COMPRESS_LOG_SIZE; lz4, the
// compress_algorithm mount option's default): its data reads the same under
// any pair. nullopt when no pair decompresses the cluster.
std::optional<std::pair<std::uint32_t, std::uint8_t>> Checker::infer_compression(const Node& n, std::uint32_t base,
                                                                                std::uint32_t addrs, std::uint32_t log,
                                                                                std::uint8_t alg) {
  const bool log_ok = log >= 2 && log <= 8, alg_ok = alg <= 3;
  std::uint32_t first = addrs;
  for (std::uint32_t k = 0; k < addrs && first == addrs; ++k)
    if (n.i.i_addr[base + k].get() == kCompressAddr) first = k;
  if (first == addrs) return std::pair<std::uint32_t, std::uint8_t>{log_ok ? log : 2u, alg_ok ? alg : std::uint8_t{1}};
  std::vector<std::uint8_t> in, out;
  for (std::uint32_t l = log_ok ? log : 2; l <= (log_ok ? log : 8u); ++l) {
    const std::uint32_t cluster = 1u << l;
    if (first % cluster != 0 || first + cluster > addrs) continue;
    in.clear();
    for (std::uint32_t k = first + 1; k < first + cluster; ++k) {
      const block_t b = n.i.i_addr[base + k].get();
      if (b == kNullAddr || b == kNewAddr || b == kCompressAddr) break;
      if (!valid_main(b)) {
        in.clear();
        break;
      }
      const std::size_t at = in.size();
      in.resize(at + kBlockSize);
      if (!read_at(dev_, static_cast<std::uint64_t>(b) * kBlockSize, std::span<std::uint8_t>(in.data() + at, kBlockSize))) {
        in.clear();
        break;
      }
    }
    if (in.empty()) continue;
    out.assign(static_cast<std::size_t>(cluster) * kBlockSize, 0);
    for (std::uint8_t a = alg_ok ? alg : 0; a <= (alg_ok ? alg : std::uint8_t{3}); ++a)
      if (decompress_cluster(a, in, out, nullptr)) return std::pair<std::uint32_t, std::uint8_t>{l, a};
  }
  return std::nullopt;
}

void Checker::scan_inode(nid_t nid, block_t addr, const Node& n, NodeRec& rec) {
  InodeRec in;
  const Inode& i = n.i;
  in.ino = nid;
  in.mode = i.i_mode.get();
  in.advise = i.i_advise;
  in.inline_flags = i.i_inline;
  in.dir_level = i.i_dir_level;
  in.links = i.i_links.get();
  in.flags = i.i_flags.get();
  in.pino = i.i_pino.get();
  in.size = i.i_size.get();
  in.has_ext = i.i_ext.len.get() != 0;
  InodeExtras ex;
  if (const std::uint32_t v = i.i_namelen.get(); v > 0xFF) {
    in.namelen_big = true;
    ex.namelen = v;
  } else {
    in.namelen_low = static_cast<std::uint8_t>(v);
  }
  if (const nid_t v = i.i_xattr_nid.get(); v != 0) {
    in.has_xattr_nid = true;
    ex.xattr_nid = v;
  }
  if (const std::uint64_t v = i.i_blocks.get(); v > 0xFFFFFFFFull) {
    in.blocks_big = true;
    ex.blocks = v;
  } else {
    in.blocks_low = static_cast<std::uint32_t>(v);
  }
  // extra_isize as the walk and the repair take it (in [4, 36] or 0).
  std::uint32_t extra_isize = 0;
  auto issue = [&](Code c, std::string d) { ex.issues.push_back({c, std::move(d)}); };

  const std::uint32_t type = in.mode & 0xF000;
  if (file_type_of_mode(in.mode) == 0) issue(Code::INODE_MODE, fmt("i_mode 0%llo has no valid file type", in.mode));
  // flexible_inline_xattr keeps i_inline_xattr_size among the extra
  // attributes: an inode without them is corrupted (sanity_check_inode() in
  // fs/f2fs/inode.c). Walked as the repair leaves it: the flag set again.
  const bool extra_missing = (features_ & feature::flexible_inline_xattr) && (features_ & feature::extra_attr) &&
                             !(in.inline_flags & inline_flag::extra_attr);
  if (extra_missing) {
    issue(Code::INODE_EXTRA_ISIZE, "lacks the extra_attr flag that the flexible_inline_xattr feature requires");
    in.inline_flags = static_cast<std::uint8_t>(in.inline_flags | inline_flag::extra_attr);
  }
  if (in.inline_flags & inline_flag::extra_attr) {
    extra_isize = i.extra.i_extra_isize.get();
    if (!(features_ & feature::extra_attr)) {
      // Walked as the repair leaves it: without extra attributes.
      issue(Code::INODE_EXTRA_ISIZE, "has the extra_attr flag but the volume lacks the extra_attr feature");
      extra_isize = 0;
    } else if (extra_isize % 4 != 0 || extra_isize < 4 || extra_isize > sizeof(InodeExtra)) {
      // Walked with the size the repair writes (the feature set's).
      issue(Code::INODE_EXTRA_ISIZE, fmt("i_extra_isize %llu is not a multiple of 4 in [4, 36]", extra_isize));
      extra_isize = extra_isize_for_features(features_);
    }
    if (extra_isize >= offsetof(InodeExtra, i_inode_checksum)) ex.projid = i.extra.i_projid.get();
  }
  in.extra_isize = static_cast<std::uint8_t>(extra_isize);
  if (in.inline_flags & inline_flag::xattr) {
    if (features_ & feature::flexible_inline_xattr) {
      in.inline_xattr_addrs = in.extra_isize >= 4 ? i.extra.i_inline_xattr_size.get() : std::uint16_t{0};
      const std::uint32_t max = kDefAddrsPerInode - sizeof(InodeExtra) / 4 - kDefInlineReservedSize - 4;
      if (in.inline_xattr_addrs == 0 || in.inline_xattr_addrs > max) {
        issue(Code::INODE_INLINE_XATTR_SIZE,
              fmt("i_inline_xattr_size %llu is 0 or above %llu", in.inline_xattr_addrs, max));
        in.inline_xattr_addrs = kDefaultInlineXattrAddrs;  // what the repair writes
      }
    } else {
      in.inline_xattr_addrs = kDefaultInlineXattrAddrs;
    }
  } else if ((features_ & feature::flexible_inline_xattr) && in.extra_isize >= 4) {
    // With flexible_inline_xattr the kernel lays the inode out with
    // i_inline_xattr_size whatever the flag (do_read_inode() in
    // fs/f2fs/inode.c; sanity_check_inode() checks it only with the flag,
    // and only the flag makes it hold xattrs). A size past the inode leaves
    // no layout (fsck.f2fs 1.15 crashes on it): walked as the repair leaves
    // it, 0, as f2fs_new_inode() writes it without the flag.
    const std::uint32_t size = i.extra.i_inline_xattr_size.get();
    if (size > kDefAddrsPerInode - sizeof(InodeExtra) / 4 - kDefInlineReservedSize - 4)
      issue(Code::INODE_INLINE_XATTR_SIZE,
            fmt("i_inline_xattr_size %llu (without the inline_xattr flag) is past the inode", size));
    else
      in.inline_xattr_addrs = static_cast<std::uint16_t>(size);
  } else if (!(features_ & feature::flexible_inline_xattr) && (in.inline_flags & inline_flag::dentry)) {
    // Without flexible_inline_xattr an inline-dentry directory keeps the
    // default inline xattr area out of its layout even without the
    // inline_xattr flag (do_read_inode() in fs/f2fs/inode.c); it holds no
    // xattrs then (inline_xattr_size()).
    in.inline_xattr_addrs = kDefaultInlineXattrAddrs;
  }
  // Inode checksum (f2fs_inode_chksum_verify(): only when the field fits).
  if ((features_ & feature::inode_checksum) && (in.inline_flags & inline_flag::extra_attr) && !extra_missing &&
      in.extra_isize >= offsetof(InodeExtra, i_inode_checksum) + 4) {
    const std::uint32_t want = inode_checksum(chksum_seed_, reinterpret_cast<const std::uint8_t*>(&n));
    if (want != i.extra.i_inode_checksum.get())
      issue(Code::INODE_CHECKSUM, fmt("inode checksum 0x%llx, computed 0x%llx", i.extra.i_inode_checksum.get(), want));
  }
  // Flags.
  if ((in.flags & iflag::casefold) && (!(features_ & feature::casefold) || type != 0x4000))
    issue(Code::INODE_FLAGS, type != 0x4000 ? "casefold flag on a non-directory"
                                            : "casefold flag but the volume lacks the casefold feature");
  if (in.flags & iflag::compr) {
    if (!(features_ & feature::compression) || (type != 0x8000 && type != 0x4000)) {
      issue(Code::INODE_FLAGS, "compression flag where the volume or the file type does not allow it");
    } else if (type == 0x8000) {
      if (in.extra_isize < sizeof(InodeExtra)) {
        issue(Code::INODE_FLAGS, "compressed but the extra attributes lack the compression fields");
        in.sane = false;
      } else {
        const std::uint32_t log = i.extra.i_log_cluster_size;
        ex.compr_alg = i.extra.i_compress_algorithm;
        ex.compr_blocks = i.extra.i_compr_blocks.get();
        if (log < 2 || log > 8 || ex.compr_alg > 3) {
          // The kernel refuses such an inode (sanity_check_inode() in
          // fs/f2fs/inode.c: MIN/MAX_COMPRESS_LOG_SIZE, COMPRESS_MAX). Its
          // blocks are kept: the attributes are inferred from the first
          // compressed cluster of i_addr (the pair that decompresses it
          // to exactly the cluster's size), and the repair writes them.
          const auto guess = infer_compression(n, in.extra_isize / 4, in.addrs_per_inode(), log, ex.compr_alg);
          if (!guess) {
            issue(Code::INODE_FLAGS, fmt("i_log_cluster_size %llu / i_compress_algorithm %llu invalid, and no valid pair "
                                         "decompresses the first compressed cluster", log, ex.compr_alg));
            in.sane = false;
          } else {
            issue(Code::INODE_FLAGS, fmt("i_log_cluster_size %llu / i_compress_algorithm %llu invalid (the clusters read as "
                                         "i_log_cluster_size %llu, i_compress_algorithm %llu)",
                                         log, ex.compr_alg, guess->first, guess->second));
            ex.compr_log_fix = static_cast<std::uint8_t>(guess->first);
            ex.compr_alg = guess->second;
            in.cluster_log = static_cast<std::uint8_t>(guess->first & 0xFu);  // in [2, 8]
          }
        } else {
          in.cluster_log = static_cast<std::uint8_t>(log & 0xFu);  // in [2, 8]
        }
      }
    }
  }
  // A regular file keeps i_gc_failures in the first two bytes of
  // i_current_depth (struct f2fs_inode in include/linux/f2fs_fs.h): the
  // kernel counts there the failed garbage collections of a pinned file;
  // fsck.f2fs 1.15 resets a non-zero value in every repair run
  // (fsck_chk_inode_blk() in fsck/fsck.c), so a repaired volume it accepts
  // has none. Informational: the kernel's own value is no inconsistency.
  if (type == 0x8000) {
    if (const std::uint32_t gc = i.i_current_depth.get() & 0xFFFFu; gc != 0)
      issue(Code::INODE_GC_FAILURES, fmt("i_gc_failures %llu (i_current_depth 0x%llx)", gc, i.i_current_depth.get()));
  }
  if ((in.inline_flags & inline_flag::data) && type != 0x8000 && type != 0xA000) {
    // Only regular files and symlinks hold inline data (support_inline_data()
    // in fs/f2fs/inline.c). A device, fifo or socket mode is the field in
    // doubt: the walk takes the type from the dentry naming the inode
    // (Checker::mode_from_dentry()).
    const bool special = file_type_of_mode(in.mode) != 0 && type != 0x4000;
    issue(special ? Code::INODE_MODE : Code::INODE_FLAGS,
          fmt("inline data flag on i_mode 0%llo (only regular files and symlinks hold inline data)", in.mode));
    in.sane = false;
  }
  if ((in.inline_flags & inline_flag::dentry) && type != 0x4000) {
    // Walked as if the flag were clear; the repair clears it.
    issue(Code::INLINE_DENTRY_BAD, fmt("inline dentry flag on i_mode 0%llo", in.mode));
    in.inline_flags = static_cast<std::uint8_t>(in.inline_flags & ~inline_flag::dentry);
  }
  constexpr std::uint64_t kMaxBytes = (static_cast<std::uint64_t>(kDefAddrsPerInode) + 2ull * kDefAddrsPerBlock +
                                        2ull * kDefAddrsPerBlock * kNidsPerBlock +
                                        1ull * kDefAddrsPerBlock * kNidsPerBlock * kNidsPerBlock) * kBlockSize;
  if (in.size > kMaxBytes)
    issue(Code::INODE_SIZE, fmt("i_size %llu exceeds the largest file", in.size));
  if (ex.xattr_nid != 0 && (ex.xattr_nid < sb_.root_ino.get() || ex.xattr_nid >= max_nid_))
    issue(Code::XATTR_NID_BAD, fmt("i_xattr_nid %llu is out of range", ex.xattr_nid));

  const auto* raw = reinterpret_cast<const std::uint8_t*>(&n);
  const std::uint32_t max_inline = max_inline_data(in.extra_isize, in.inline_xattr_addrs);
  const std::uint32_t inline_off = inline_data_offset(in.extra_isize);
  if (in.inline_xattr_addrs && in.sane && (in.inline_flags & inline_flag::xattr)) {
    const std::uint32_t off = inline_xattr_offset(in.inline_xattr_addrs);
    const std::uint8_t* p = raw + off;
    bool any = false;
    for (std::uint32_t k = 0; k < in.inline_xattr_addrs * 4; ++k) any |= p[k] != 0;
    if (any) ex.inline_xattr.assign(p, p + in.inline_xattr_addrs * 4);
  }
  if (in.sane && (in.inline_flags & (inline_flag::data | inline_flag::dentry))) {
    if (i.i_addr[in.extra_isize / 4].get() != 0)
      issue(Code::INLINE_DATA_RESERVED, fmt("reserved i_addr[%llu] is 0x%llx, not 0", in.extra_isize / 4,
                                            i.i_addr[in.extra_isize / 4].get()));
    if ((in.inline_flags & inline_flag::data) && in.size > max_inline)
      issue(Code::INLINE_DATA_SIZE, fmt("inline i_size %llu exceeds the inline area of %llu bytes", in.size, max_inline));
    if ((in.inline_flags & inline_flag::data) && type == 0xA000) {
      const std::uint8_t* p = raw + inline_off;
      std::uint32_t l = 0;
      while (l < max_inline && p[l]) ++l;
      ex.symlink_len = static_cast<std::uint16_t>(l);
    }
    if (in.inline_flags & inline_flag::dentry) {
      if (max_inline == 0) {
        issue(Code::INLINE_DENTRY_BAD, "inline dentries with no room for them");
      } else {
        const auto lay = inline_dentry_layout(max_inline);
        const std::uint8_t* base = raw + inline_off;
        parse_dentries(base, reinterpret_cast<const DirEntry*>(base + lay.dentry_offset()), base + lay.filename_offset(),
                       lay.nr_slots, Dent::kInline, addr, ex.inline_dents, ex.inline_dent_issues);
      }
    }
  } else if (in.sane && !light_scan_) {
    rec.addr_begin = addrs_.begin_run(in.addrs_per_inode() + 5);
    const std::uint32_t base = in.extra_isize / 4;
    push_nonzero_slots(reinterpret_cast<const std::uint8_t*>(i.i_addr + base), in.addrs_per_inode(), 0, addrs_);
    push_nonzero_slots(reinterpret_cast<const std::uint8_t*>(i.i_nid), 5, AddrSlot::kINid, addrs_);
    rec.addr_count = static_cast<std::uint16_t>(addrs_.size() - rec.addr_begin);
  }
  if (light_scan_ && ex.issues.empty()) {
    rec.set_inode(NodeRec::kNoInodeRec);
    return;
  }
  if (!ex.empty()) {
    in.extras = static_cast<std::uint32_t>(inode_extras_.size());
    inode_extras_.push_back(std::move(ex));
  }
  rec.set_inode(static_cast<std::int32_t>(inodes_.size()));
  if (in.has_ext) exts_.emplace_back(static_cast<std::uint32_t>(inodes_.size()), i.i_ext);
  if (features_ & feature::quota_ino) {
    ids_.resize(inodes_.size());
    ids_.emplace_back(i.i_uid.get(), i.i_gid.get());
  }
  inodes_.push_back(in);
}

}  // namespace f2fscore::fsck
