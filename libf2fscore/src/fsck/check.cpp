// The checker's driver and its global comparisons: the SIT against the
// blocks reached, the counts against the checkpoint, the SSA against the
// owners, the active logs, nat_bits, unreachable NAT entries and the
// fsynced node chain; the preen fast check. Rules as fsck_verify(),
// check_curseg_offsets(), check_nat_bits() and fsck_chk_meta() in
// fsck/fsck.c and fsck/mount.c (f2fs-tools), and find_fsync_dnodes() in
// fs/f2fs/recovery.c.
#include <algorithm>
#include <bit>
#include <cstdio>
#include <cstring>
#include <unordered_set>

#include "f2fscore/checksum.hpp"
#include "f2fscore/disk/checkpoint.hpp"
#include "f2fscore/disk/superblock.hpp"
#include "fsck/fsck_internal.hpp"
#include "io/align_device.hpp"
#include "util/text.hpp"

namespace f2fscore::fsck {

using namespace disk;

namespace {
using detail::fmt;
constexpr std::uint32_t kBps = Geometry::blocks_per_seg();

bool is_cur_seg(const Checkpoint& cp, std::uint32_t segno) {
  for (int i = 0; i < 3; ++i)
    if (cp.cur_data_segno[i].get() == segno || cp.cur_node_segno[i].get() == segno) return true;
  return false;
}
}  // namespace

void Checker::check_global() {
  // Per segment: vblocks against the map, the map against the blocks in use.
  std::uint32_t free_segs = 0;
  std::uint32_t bitmap_reports = 0;
  constexpr std::uint32_t kMaxBitmapReports = 64;
  std::uint64_t bitmap_diffs = 0;
  std::size_t pi = 0;  // into partial_segnos_
  const std::uint64_t steps = 2ull * main_segs_;
  progress(4, 0, steps);
  for (std::uint32_t s = 0; s < main_segs_; ++s) {
    progress(4, s, steps);
    const SegState& e = segs_[s];
    const std::uint8_t* pmap = nullptr;
    if (e.map() == SegState::kMapPartial) {
      while (partial_segnos_[pi] < s) ++pi;
      pmap = partial_maps_[pi].data();
    }
    std::uint32_t pop = e.map() == SegState::kMapFull ? kBps : 0;
    if (pmap)
      for (std::uint32_t k = 0; k < kSitVblockMapSize; ++k) pop += static_cast<std::uint32_t>(std::popcount(pmap[k]));
    const std::uint32_t vb = e.vblocks;
    if (vb != pop) {
      Problem p = prob(Code::SIT_VBLOCKS_MISMATCH);
      p.segno = s;
      p.detail = fmt("SIT valid blocks %llu, valid map has %llu", vb, pop);
      add(p);
    }
    if (vb == 0 && !is_cur_seg(cp_, s)) ++free_segs;
    const auto* umap = e.used == SegState::kNone ? nullptr : used_maps_[e.used].data();
    bool same = false;
    if (!pmap && !umap) same = e.map() == SegState::kMapEmpty;
    else if (!pmap && e.map() == SegState::kMapFull)
      same = std::all_of(umap, umap + kBps / 64, [](std::uint64_t w) { return w == ~0ull; });
    if (!same) {
      const block_t start = main_blk_ + s * kBps;
      for (std::uint32_t b = 0; b < kBps; ++b) {
        const bool sbit = pmap ? test_bit_msb(pmap, b) : e.map() == SegState::kMapFull;
        const bool u = umap && (umap[b >> 6] >> (b & 63) & 1);
        if (sbit == u) continue;
        ++bitmap_diffs;
        if (bitmap_reports++ < kMaxBitmapReports) {
          Problem p = prob(Code::SIT_BITMAP_MISMATCH);
          p.blkaddr = start + b;
          p.segno = s;
          p.detail = sbit ? fmt("block 0x%llx is valid in the SIT but nothing uses it", start + b)
                          : fmt("block 0x%llx is in use but not valid in the SIT", start + b);
          add(p);
        }
      }
    }
    const std::uint8_t type = e.type;
    const bool has_node = e.flags & SegState::kHasNode, has_data = e.flags & SegState::kHasData;
    if ((has_node && type < 3) || (has_data && type >= 3 && type < 6) || type >= 6) {
      if (has_node || has_data) {
        Problem p = prob(Code::SIT_TYPE_MISMATCH);
        p.segno = s;
        p.detail = fmt("SIT type %llu, but the segment holds ", type) +
                   (has_node && has_data ? "node and data" : has_node ? "node" : "data") + " blocks";
        add(p);
      }
    }
  }
  if (bitmap_reports > kMaxBitmapReports) {
    Problem p = prob(Code::SIT_BITMAP_MISMATCH);
    p.detail = fmt("%llu blocks differ between the SIT and the blocks in use (%llu more not listed)", bitmap_diffs,
                   bitmap_diffs - kMaxBitmapReports);
    add(p);
  }
  // Counts against the checkpoint (fsck_verify()).
  auto count = [&](Code c, const char* what, std::uint64_t cpv, std::uint64_t counted) {
    if (cpv == counted) return;
    Problem p = prob(c);
    p.detail = std::string("checkpoint ") + what + fmt(" %llu, counted %llu", cpv, counted);
    add(p);
  };
  count(Code::CP_VALID_BLOCK_COUNT, "valid_block_count", cp_.valid_block_count.get(), valid_blocks_);
  count(Code::CP_VALID_NODE_COUNT, "valid_node_count", cp_.valid_node_count.get(), node_count_);
  count(Code::CP_VALID_INODE_COUNT, "valid_inode_count", cp_.valid_inode_count.get(), inode_count_);
  count(Code::CP_FREE_SEGMENT_COUNT, "free_segment_count", cp_.free_segment_count.get(), free_segs);

  // A read-only image has no SSA and two active logs, hot data and hot
  // node (fsck.f2fs skips both checks for the ro feature:
  // is_valid_ssa_node_blk(), is_valid_ssa_data_blk(), check_curseg_offsets()).
  const bool ro = sb_.feature.get() & feature::ro;
  if (!ro) check_ssa();

  // Active logs (check_curseg_offsets()): the next block must be free and,
  // for LFS logs, every block after it.
  for (int t = 0; t < 6; ++t) {
    if (ro && t != 0 && t != 3) continue;
    const std::uint32_t segno = t < 3 ? cp_.cur_data_segno[t].get() : cp_.cur_node_segno[t - 3].get();
    const std::uint32_t off = t < 3 ? cp_.cur_data_blkoff[t].get() : cp_.cur_node_blkoff[t - 3].get();
    if (segno >= main_segs_) continue;
    const bool lfs = cp_.alloc_type[t] == 0;
    for (std::uint32_t b = off; b < kBps; ++b) {
      if (sit_bit(segno, b)) {
        Problem p = prob(Code::CURSEG_NEXT_BLOCK_NOT_FREE);
        p.segno = segno;
        p.blkaddr = main_blk_ + segno * kBps + b;
        p.detail = fmt("active log %llu: block %llu of segment %llu (next offset %llu) is in use", t, b, segno, off);
        add(p);
        break;
      }
      if (!lfs) break;
    }
    // The SIT type of an active log's segment is the log's own (hot, warm,
    // cold data 0-2, node 3-5), as fsck_chk_curseg_info() in
    // fsck.f2fs's fsck.c requires.
    const std::uint8_t type = segs_[segno].type;
    if (type != t) {
      Problem p = prob(Code::CURSEG_TYPE_MISMATCH);
      p.segno = segno;
      p.detail = fmt("active log %llu is in segment %llu whose SIT type is %llu", t, segno, type);
      add(p);
    }
  }

  // Unreachable NAT entries (fsck_verify(): "NID[0x%x] is unreachable").
  nids_.for_each(sb_.root_ino.get(), [&](nid_t n, const NidTable::Rec& rec) {
    if (n >= max_nid_ || rec.node.reached) return;
    const NatRec& ne = rec.nat;
    if (ne.blkaddr == kNullAddr || !valid_main(ne.blkaddr)) return;
    Problem p = prob(Code::NAT_ENTRY_UNREACHABLE);
    p.nid = n;
    p.ino = ne.ino;
    p.blkaddr = ne.blkaddr;
    p.detail = fmt("NAT entry of nid %llu (ino %llu, block 0x%llx) is reached by nothing", n, ne.ino, ne.blkaddr);
    add(p);
  });
  check_nat_bits();
}

// The SSA against the owners: the summary blocks of the segments holding a
// block in use, read in bulk in segment order, a batch at a time (a
// sixteenth of them, from 64 to 1,024 blocks: a pass over the uses each);
// the active logs' summaries come from the checkpoint pack. Without an unmount the node
// logs' summaries are rebuilt from the node footers at mount
// (restore_node_summary() in fs/f2fs/node.c): not authoritative.
void Checker::check_ssa() {
  if (use_count_ == 0) return;
  const bool umount = cp_.ckpt_flags.get() & cp_flag::umount;
  std::vector<std::pair<std::uint32_t, std::unique_ptr<SummaryBlock>>> cur;  // later entries win
  std::vector<std::uint32_t> untrusted;
  for (int t = 0; t < 6; ++t) {
    const std::uint32_t segno = t < 3 ? cp_.cur_data_segno[t].get() : cp_.cur_node_segno[t - 3].get();
    if (segno >= main_segs_) continue;
    if (t >= 3 && !umount) untrusted.push_back(segno);
    auto sb = vol_->summary(segno);
    if (sb) cur.emplace_back(segno, std::make_unique<SummaryBlock>(*sb));
  }
  auto cur_of = [&](std::uint32_t segno) -> const SummaryBlock* {
    const SummaryBlock* r = nullptr;
    for (const auto& [s, b] : cur)
      if (s == segno) r = b.get();
    return r;
  };
  auto is_untrusted = [&](std::uint32_t segno) {
    return std::find(untrusted.begin(), untrusted.end(), segno) != untrusted.end();
  };
  // Mismatches by use ordinal (for_each_use() order); only the first
  // kMaxReports are reported.
  constexpr std::size_t kMaxReports = 256;
  std::vector<std::pair<std::size_t, Problem>> found;
  auto by_ordinal = [](const auto& a, const auto& b) { return a.first < b.first; };
  auto eval = [&](std::size_t i, const meta::BlockUse& u, const SummaryBlock& sum) {
    const std::uint32_t s = segno_of(u.blkaddr);
    const Summary& e = sum.entries[(u.blkaddr - main_blk_) & (kBps - 1)];
    std::string detail;
    if (u.node) {
      if (sum.footer.entry_type != kSumTypeNode)
        detail = fmt("segment %llu's summary says data, block 0x%llx is node %llu", s, u.blkaddr, u.nid);
      else if (e.nid.get() != u.nid)
        detail = fmt("summary of node block 0x%llx names nid %llu, not %llu", u.blkaddr, e.nid.get(), u.nid);
    } else {
      if (sum.footer.entry_type != kSumTypeData)
        detail = fmt("segment %llu's summary says node, block 0x%llx is data of nid %llu", s, u.blkaddr, u.nid);
      else if (e.nid.get() != u.nid || e.ofs_in_node.get() != u.ofs_in_node)
        detail = fmt("summary of data block 0x%llx names nid %llu slot %llu, owner is nid %llu", u.blkaddr, e.nid.get(),
                     e.ofs_in_node.get(), u.nid) +
                 fmt(" slot %llu", u.ofs_in_node);
      // The version its owner's NAT entry has, as the kernel writes it
      // (set_summary() in do_write_page()); is_alive() in fs/f2fs/gc.c and
      // fsck.f2fs's is_valid_ssa_data_blk() check it.
      else if (e.version != u.version)
        detail = fmt("summary of data block 0x%llx has version %llu, nid %llu's NAT entry %llu", u.blkaddr, e.version,
                     u.nid, u.version);
    }
    if (detail.empty()) return;
    Problem p = prob(u.node ? Code::SSA_NODE_MISMATCH : Code::SSA_DATA_MISMATCH);
    p.blkaddr = u.blkaddr;
    p.segno = s;
    p.nid = u.nid;
    p.detail = std::move(detail);
    found.emplace_back(i, std::move(p));
    if (found.size() >= 4 * kMaxReports) {
      std::sort(found.begin(), found.end(), by_ordinal);
      found.resize(kMaxReports);
    }
  };
  // The segments whose SSA block is read: those holding a claimed block,
  // neither an active log nor untrusted.
  std::vector<std::uint32_t> segs;
  for (std::uint32_t s = 0; s < main_segs_; ++s)
    if ((segs_[s].flags & (SegState::kHasNode | SegState::kHasData)) && !is_untrusted(s) && !cur_of(s)) segs.push_back(s);
  // Each batch of SSA blocks costs one pass over every use: at most four
  // passes while the batch's blocks stay at most 4 MiB.
  constexpr std::size_t kSsaBatchMin = 64, kSsaBatchMax = 1024;
  const std::size_t batch = std::clamp((segs.size() + 3) / 4, kSsaBatchMin, kSsaBatchMax);
  const Geometry& g = vol_->geometry();
  const block_t ssa_base = static_cast<block_t>(g.ssa_addr(0));
  std::vector<SummaryBlock> sums;
  std::vector<std::uint8_t> have;
  std::vector<block_t> addrs;
  std::size_t b0 = 0;
  do {
    const std::size_t b1 = std::min(segs.size(), b0 + batch);
    const bool first = b0 == 0;
    sums.assign(b1 - b0, SummaryBlock{});
    have.assign(b1 - b0, 0);
    addrs.clear();
    for (std::size_t k = b0; k < b1; ++k) addrs.push_back(static_cast<block_t>(g.ssa_addr(segs[k])));
    auto st = read_blocks_batched(
        dev_, addrs, opts_.batch_blocks, opts_.queue_depth, 4,
        [&](block_t a, const std::uint8_t* data) {
          const std::uint32_t s = a - ssa_base;
          progress(4, static_cast<std::uint64_t>(main_segs_) + s, 2ull * main_segs_);
          const auto k = static_cast<std::size_t>(
              std::lower_bound(segs.begin() + static_cast<std::ptrdiff_t>(b0), segs.begin() + static_cast<std::ptrdiff_t>(b1), s) -
              segs.begin()) - b0;
          std::memcpy(&sums[k], data, sizeof sums[k]);
          have[k] = 1;
        },
        &report_.stats.bytes_read);
    if (!st) ssa_status_ = st;  // an operational error of the run
    const std::uint32_t lo = b1 > b0 ? segs[b0] : 0, hi = b1 > b0 ? segs[b1 - 1] : 0;
    std::size_t ordinal = 0;
    for_each_use([&](const meta::BlockUse& u) {
      const std::size_t i = ordinal++;
      const std::uint32_t s = segno_of(u.blkaddr);
      if (first && !cur.empty() && !is_untrusted(s))
        if (const SummaryBlock* c = cur_of(s)) {
          eval(i, u, *c);
          return;
        }
      if (b1 == b0 || s < lo || s > hi) return;
      auto it = std::lower_bound(segs.begin() + static_cast<std::ptrdiff_t>(b0), segs.begin() + static_cast<std::ptrdiff_t>(b1), s);
      if (*it != s) return;
      const auto k = static_cast<std::size_t>(it - segs.begin()) - b0;
      if (have[k]) eval(i, u, sums[k]);
    });
    b0 = b1;
  } while (b0 < segs.size());
  std::sort(found.begin(), found.end(), by_ordinal);
  if (found.size() > kMaxReports) found.resize(kMaxReports);
  for (auto& [i, p] : found) add(std::move(p));
}

void Checker::check_nat_bits() {
  if (!(cp_.ckpt_flags.get() & cp_flag::nat_bits) || !vol_->nat_bits_valid()) return;
  const Geometry& g = vol_->geometry();
  const auto nb = g.nat_bits_layout();
  std::vector<std::uint8_t> bits(static_cast<std::size_t>(nb.blocks) * kBlockSize);
  if (!read_at(dev_, g.nat_bits_addr(vol_->open_report().checkpoint_pack) * kBlockSize, bits)) return;
  const std::uint32_t nat_blocks = g.nat_blocks();
  const std::uint8_t* full = bits.data() + nb.full_offset;
  const std::uint8_t* empty = bits.data() + nb.empty_offset;
  std::uint32_t bad = 0;
  std::uint32_t first_bad = 0;
  for (std::uint32_t b = 0; b < nat_blocks; ++b) {
    std::uint32_t valid = 0;
    if (b == 0 || nids_.has_block(b)) {
      for (std::uint32_t i = 0; i < kNatEntryPerBlock; ++i) {
        const nid_t nid = b * kNatEntryPerBlock + i;
        if (nid >= max_nid_) break;
        if (nid == 0 || nat(nid).blkaddr != kNullAddr) ++valid;
      }
    }
    const bool want_full = valid == kNatEntryPerBlock, want_empty = valid == 0;
    if (test_bit_le(full, b) != want_full || test_bit_le(empty, b) != want_empty) {
      if (bad++ == 0) first_bad = b;
    }
  }
  if (bad) {
    Problem p = prob(Code::NAT_BITS_MISMATCH);
    p.detail = fmt("nat_bits wrong for %llu NAT blocks (first: NAT block %llu)", bad, first_bad);
    add(p);
  }
}

// Roll-forward recovery's chain: from the warm node log's next block while
// the nodes carry this checkpoint's version (is_recoverable_dnode()).
void Checker::check_fsync_chain() {
  const std::uint32_t flags = cp_.ckpt_flags.get();
  std::uint64_t want = cp_.checkpoint_ver.get();
  const auto cpb = vol_->checkpoint_blocks();
  const std::uint32_t crc_ofs = std::min<std::uint32_t>(cp_.checksum_offset.get(), kCpChecksumOffset);
  const std::uint64_t crc = load_le32(cpb.data(), crc_ofs);
  if (flags & cp_flag::crc_recovery) want |= crc << 32;
  if (cp_.cur_node_segno[1].get() >= main_segs_) return;
  block_t addr = main_blk_ + cp_.cur_node_segno[1].get() * kBps + cp_.cur_node_blkoff[1].get();
  std::vector<std::uint8_t> b(kBlockSize);
  std::unordered_set<block_t> seen;
  const std::uint64_t limit = static_cast<std::uint64_t>(main_segs_) * kBps;
  for (std::uint64_t steps = 0; steps < limit && valid_main(addr); ++steps) {
    if (!read_at(dev_, static_cast<std::uint64_t>(addr) * kBlockSize, b)) return;
    const auto* n = reinterpret_cast<const Node*>(b.data());
    const std::uint64_t ver = n->footer.cp_ver.get();
    const bool match = (flags & cp_flag::nocrc_recovery) ? (ver << 32) == (want << 32) : ver == want;
    if (!match) return;
    if (!seen.insert(addr).second) {
      Problem p = prob(Code::FSYNC_CHAIN_LOOP);
      p.blkaddr = addr;
      p.segno = segno_of(addr);
      p.detail = fmt("the fsynced node chain comes back to block 0x%llx after %llu nodes", addr, seen.size());
      add(p);
      return;
    }
    const nid_t nid = n->footer.nid.get(), ino = n->footer.ino.get();
    std::string why;
    if (nid < sb_.root_ino.get() || nid >= max_nid_) why = fmt("names nid %llu, out of range", nid);
    else if (ino < sb_.root_ino.get() || ino >= max_nid_) why = fmt("names ino %llu, out of range", ino);
    else if (sit_valid(addr)) why = fmt("lies in block 0x%llx, which the SIT says is in use", addr);
    if (!why.empty()) {
      Problem p = prob(Code::FSYNC_CHAIN_BAD);
      p.blkaddr = addr;
      p.nid = nid;
      p.detail = "fsynced node " + why;
      add(p);
      return;
    }
    addr = n->footer.next_blkaddr.get();
  }
}

// Preen's fast check on a cleanly unmounted volume: every node the NAT
// points at (read in bulk) has the right footer, inodes have valid
// checksums and modes; counts in the NAT and SIT agree with the checkpoint.
bool Checker::fast_check() {
  std::uint64_t nat_nodes = 0, nat_inodes = 0;
  nids_.for_each(sb_.root_ino.get(), [&](nid_t n, const NidTable::Rec& rec) {
    const NatRec& ne = rec.nat;
    if (n >= max_nid_ || ne.blkaddr == kNullAddr || !valid_main(ne.blkaddr)) return;
    ++nat_nodes;
    const NodeRec& r = rec.node;
    auto bad = [&](Code c, std::string d) {
      Problem p = prob(c);
      p.nid = n;
      p.ino = ne.ino;
      p.blkaddr = ne.blkaddr;
      p.detail = std::move(d);
      add(p);
    };
    if (!r.read_ok) bad(Code::NODE_UNREADABLE, fmt("node block 0x%llx cannot be read", ne.blkaddr));
    else if (footer_nid(n) != n) bad(Code::NODE_FOOTER_NID, fmt("node block 0x%llx has footer nid %llu, not %llu", ne.blkaddr, footer_nid(n), n));
    else if (footer_ino(n) != ne.ino) bad(Code::NODE_FOOTER_INO, fmt("node block 0x%llx has footer ino %llu, NAT says %llu", ne.blkaddr, footer_ino(n), ne.ino));
    else if (ne.ino == n && r.inode() < 0) bad(Code::NODE_NOT_INODE, fmt("nid %llu is its own ino but its block is not an inode", n));
    if (r.inode() >= 0) {
      ++nat_inodes;
      if (r.inode() != NodeRec::kNoInodeRec)
        for (const auto& is : extras(inodes_[static_cast<std::size_t>(r.inode())]).issues)
          // Informational findings do not send a clean volume to the full check.
          if (definition(is.code).severity != Severity::info) bad(is.code, is.detail);
    }
  });
  std::uint32_t free_segs = 0;
  std::size_t pi = 0;
  for (std::uint32_t s = 0; s < main_segs_; ++s) {
    const SegState& e = segs_[s];
    std::uint32_t pop = e.map() == SegState::kMapFull ? kBps : 0;
    if (e.map() == SegState::kMapPartial) {
      while (partial_segnos_[pi] < s) ++pi;
      for (std::uint32_t k = 0; k < kSitVblockMapSize; ++k)
        pop += static_cast<std::uint32_t>(std::popcount(partial_maps_[pi][k]));
    }
    if (pop != e.vblocks) {
      Problem p = prob(Code::SIT_VBLOCKS_MISMATCH);
      p.segno = s;
      p.detail = fmt("SIT valid blocks %llu, valid map has %llu", e.vblocks, pop);
      add(p);
    }
    if (e.vblocks == 0 && !is_cur_seg(cp_, s)) ++free_segs;
  }
  if (cp_.valid_node_count.get() != nat_nodes) {
    Problem p = prob(Code::CP_VALID_NODE_COUNT);
    p.detail = fmt("checkpoint valid_node_count %llu, NAT has %llu", cp_.valid_node_count.get(), nat_nodes);
    add(p);
  }
  if (cp_.valid_inode_count.get() != nat_inodes) {
    Problem p = prob(Code::CP_VALID_INODE_COUNT);
    p.detail = fmt("checkpoint valid_inode_count %llu, NAT has %llu inodes", cp_.valid_inode_count.get(), nat_inodes);
    add(p);
  }
  if (cp_.free_segment_count.get() != free_segs) {
    Problem p = prob(Code::CP_FREE_SEGMENT_COUNT);
    p.detail = fmt("checkpoint free_segment_count %llu, SIT has %llu", cp_.free_segment_count.get(), free_segs);
    add(p);
  }
  report_.stats.nodes = nat_nodes;
  report_.stats.inodes = nat_inodes;
  return report_.problems.empty();
}

Result<Report> Checker::run() {
  F2FSCORE_TRY(open_volume());
  check_superblocks();
  const std::uint32_t flags = cp_.ckpt_flags.get();
  const bool clean = (flags & cp_flag::umount) && !(flags & (cp_flag::fsck | cp_flag::error | cp_flag::quota_need_fsck));
  light_scan_ = opts_.fast_only || (opts_.mode == Mode::preen && clean && !opts_.force && report_.problems.empty());
  F2FSCORE_TRY(load_nat());
  F2FSCORE_TRY(scan_nodes());
  if (opts_.fast_only) {
    fast_check();
    check_fsync_chain();
    report_.full_check = false;
    return std::move(report_);
  }
  if (light_scan_) {
    if (report_.problems.empty() && fast_check()) {
      report_.full_check = false;
      return std::move(report_);
    }
    light_scan_ = false;
    report_.problems.clear();
    report_.stats.inodes = report_.stats.nodes = 0;  // the walk counts them
    check_superblocks();
    // The NAT scan's problems again (scan_nodes reported them once).
    nids_.clear();
    addrs_.clear();
    inodes_.clear();
    ids_.clear();
    exts_.clear();
    inode_extras_.clear();
    xattr_blocks_.clear();
    footer_odd_.clear();
    F2FSCORE_TRY(load_nat());
    F2FSCORE_TRY(scan_nodes());
  }
  report_.full_check = true;
  adopt_quota_inodes();
  walk_namespace();
  check_global();
  F2FSCORE_TRY(ssa_status_);
  check_fsync_chain();
  check_truncated_tail();
  progress(4, 2ull * main_segs_, 2ull * main_segs_);
  walked_ = true;
  if (opts_.mode != Mode::check_only) repair();
  return std::move(report_);
}

Result<Report> check(BlockDevice& dev, const Options& opts) {
  // A direct-I/O device: the checker's own scans read into aligned
  // buffers; its single-block reads go through aligned copies.
  if (dev.info().buffer_alignment > 1) {
    detail::AlignDevice aligned(dev);
    Checker c(aligned, opts);
    return c.run();
  }
  Checker c(dev, opts);
  return c.run();
}

}  // namespace f2fscore::fsck
