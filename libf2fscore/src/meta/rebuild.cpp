// rebuild(): SIT, SSA, NAT, nat_bits and a new checkpoint pack from a plan.
// See docs/checkpoint.md for the order of the writes and what a power cut
// leaves at each step.
#include <algorithm>
#include <cstring>
#include <memory>
#include <map>
#include <numeric>
#include <set>
#include <unordered_map>

#include "disk/cp_pack.hpp"
#include "f2fscore/checksum.hpp"
#include "f2fscore/iostat.hpp"
#include "f2fscore/meta_rebuild.hpp"
#include "meta/meta_internal.hpp"
#include "util/aligned.hpp"

namespace f2fscore::meta {

using namespace disk;

namespace {

using Block = std::vector<std::uint8_t>;
Block to_block(std::span<const std::uint8_t> b) { return Block(b.begin(), b.end()); }
constexpr std::uint32_t kMapBytes = kSitVblockMapSize;
constexpr std::uint8_t kLfs = 0, kSsr = 1;  // alloc_type values

bool is_node_type(std::uint8_t t) { return t >= static_cast<std::uint8_t>(CursegType::hot_node) && t < kNrCursegType; }

struct Curseg {
  std::uint32_t segno = 0;
  std::uint32_t blkoff = 0;
  std::uint8_t alloc = kLfs;
};

// Blocks of data summaries the logs `c` need (disk::compact_summary_blocks()).
std::uint32_t compact_summary_blocks(const Curseg (&c)[kNrCursegType]) {
  std::uint32_t n = 0;
  for (int t = 0; t < 3; ++t) n += c[t].alloc == kSsr ? kBlocksPerSeg : c[t].blkoff;
  return disk::compact_summary_blocks(n);
}

class Rebuilder {
 public:
  Rebuilder(BlockDevice& dev, Volume& vol, const RebuildPlan& plan) : dev_(dev), vol_(vol), plan_(plan), mv_(vol, dev) {}

  Result<RebuildStats> run() {
    F2FSCORE_TRY(mv_.load());
    const SuperBlock& sb = mv_.sb;
    // A read-only (ro feature) volume is written only by the writer's
    // build-time mode, through a delta: two active logs, no SSA.
    ro_ = sb.feature.get() & feature::ro;
    if (ro_ && !plan_.delta)
      return make_error(Errc::unsupported, "metadata rebuild of a read-only (ro feature) volume");
    main_segs_ = vol_.main_segments();
    max_nid_ = vol_.max_nid();
    new_umount_ = plan_.umount ? *plan_.umount : (mv_.cp.ckpt_flags.get() & cp_flag::umount) != 0;
    if (plan_.delta) {
      delta_ = &*plan_.delta;
      incremental_ = true;
      F2FSCORE_TRY(check_delta());
    } else {
      F2FSCORE_TRY(check_plan());
      incremental_ = plan_.changed_nids.has_value() && plan_.changed_segments.has_value();
      nat_src_ = &plan_.nat;
      valid_block_count_ = plan_.blocks.size() + plan_.reserved_blocks;
    }
    F2FSCORE_TRY(place_cursegs());
    if (!delta_) assign_types();
    F2FSCORE_TRY(build_sit());
    F2FSCORE_TRY(build_nat());
    F2FSCORE_TRY(build_ssa());
    F2FSCORE_TRY(build_pack());
    F2FSCORE_TRY(write_all());
    return stats_;
  }

 private:
  // ---- The plan, checked and indexed --------------------------------------
  Status check_plan() {
    valid_.assign(static_cast<std::size_t>(main_segs_) * kMapBytes, 0);
    vblocks_.assign(main_segs_, 0);
    has_node_.assign(main_segs_, 0);
    has_data_.assign(main_segs_, 0);
    order_.resize(plan_.blocks.size());
    std::iota(order_.begin(), order_.end(), std::size_t{0});
    for (std::size_t i = 0; i < plan_.blocks.size(); ++i) {
      const BlockUse& u = plan_.blocks[i];
      if (!vol_.is_valid_main_addr(u.blkaddr))
        return bad(fmt("plan block %llu: address %llu is outside the main area", i, u.blkaddr));
      if (u.nid == 0 || u.nid >= max_nid_) return bad(fmt("plan block %llu: nid %llu outside [1, %llu)", u.blkaddr, u.nid, max_nid_));
      if (!u.node && u.ofs_in_node >= kDefAddrsPerBlock)
        return bad(fmt("plan block %llu: ofs_in_node %llu beyond an address array", u.blkaddr, u.ofs_in_node));
      const std::uint32_t seg = mv_.geo.segno_of(u.blkaddr);
      std::uint8_t* map = &valid_[static_cast<std::size_t>(seg) * kMapBytes];
      const std::uint32_t off = mv_.geo.blkoff_of(u.blkaddr);
      if (test_bit_msb(map, off)) return bad(fmt("plan names block %llu twice", u.blkaddr));
      set_bit_msb(map, off);
      ++vblocks_[seg];
      (u.node ? has_node_ : has_data_)[seg] = 1;
      if (has_node_[seg] && has_data_[seg])
        return bad(fmt("plan puts node and data blocks in segment %llu (block %llu)", seg, u.blkaddr));
      if (u.node) ++node_blocks_;
    }
    std::sort(order_.begin(), order_.end(),
              [&](std::size_t a, std::size_t b) { return plan_.blocks[a].blkaddr < plan_.blocks[b].blkaddr; });
    // NAT: one entry per nid; every node block has its entry and every entry
    // (node_ino and meta_ino aside) points at the node block of its nid.
    const nid_t node_ino = mv_.sb.node_ino.get(), meta_ino = mv_.sb.meta_ino.get();
    std::size_t nat_nodes = 0;
    for (std::size_t i = 0; i < plan_.nat.size(); ++i) {
      const NatUse& n = plan_.nat[i];
      if (n.nid == 0 || n.nid >= max_nid_) return bad(fmt("plan NAT entry %llu: nid %llu outside [1, %llu)", i, n.nid, max_nid_));
      if (!nat_index_.emplace(n.nid, i).second) return bad(fmt("plan names nid %llu twice in its NAT", n.nid));
      if (n.nid == node_ino || n.nid == meta_ino) continue;
      const BlockUse* b = find_block(n.blkaddr);
      if (!b || !b->node || b->nid != n.nid)
        return bad(fmt("plan NAT entry of nid %llu points at block %llu, which the plan does not list as node %llu", n.nid,
                       n.blkaddr, n.nid));
      if (n.ino == 0 || n.ino >= max_nid_) return bad(fmt("plan NAT entry of nid %llu: ino %llu outside the NAT", n.nid, n.ino));
      ++nat_nodes;
    }
    if (nat_nodes != node_blocks_)
      return bad(fmt("plan lists %llu node blocks but %llu NAT entries point at nodes", node_blocks_, nat_nodes));
    if (!plan_.segment_mtimes.empty() && plan_.segment_mtimes.size() != main_segs_)
      return bad(fmt("segment_mtimes has %llu entries for %llu main segments", plan_.segment_mtimes.size(), main_segs_));
    if (!plan_.segment_types.empty()) {
      if (plan_.segment_types.size() != main_segs_)
        return bad(fmt("segment_types has %llu entries for %llu main segments", plan_.segment_types.size(), main_segs_));
      for (std::uint32_t s = 0; s < main_segs_; ++s) {
        const std::uint8_t t = plan_.segment_types[s];
        if (t >= kNrCursegType) return bad(fmt("segment_types[%llu] = %llu is not a log type", s, t));
        if ((has_node_[s] && !is_node_type(t)) || (has_data_[s] && is_node_type(t)))
          return bad(fmt("segment_types[%llu] = %llu does not fit its blocks (", s, t) + (has_node_[s] ? "node)" : "data)"));
      }
    }
    const std::uint32_t payload = mv_.sb.cp_payload.get();
    const std::uint64_t max_orphans =
        static_cast<std::uint64_t>(kBlocksPerSeg - kCheckpointPacks - kNrCursegType - payload) * kOrphansPerBlock;
    if (plan_.orphans.size() > max_orphans)
      return bad(fmt("plan has %llu orphans, a pack holds at most %llu", plan_.orphans.size(), max_orphans));
    if (plan_.blocks.size() + plan_.reserved_blocks > mv_.cp.user_block_count.get())
      return bad(fmt("plan uses %llu blocks (%llu reserved), more than user_block_count %llu", plan_.blocks.size(),
                     plan_.reserved_blocks, mv_.cp.user_block_count.get()));
    for (nid_t o : plan_.orphans)
      if (o == 0 || o >= max_nid_) return bad(fmt("orphan inode %llu outside [1, %llu)", o, max_nid_));
    return {};
  }

  // The delta, checked and indexed: segments in the main area once each,
  // counts matching their maps, log types, NAT entries inside the NAT.
  Status check_delta() {
    const CheckpointDelta& d = *delta_;
    if (!plan_.cursegs) return bad("an incremental delta needs the active logs (cursegs)");
    for (std::size_t i = 0; i < d.segments.size(); ++i) {
      const SegmentUpdate& u = d.segments[i];
      if (u.segno >= main_segs_) return bad(fmt("delta segment %llu past the main area (%llu)", u.segno, main_segs_));
      if (!seg_index_.emplace(u.segno, i).second) return bad(fmt("delta names segment %llu twice", u.segno));
      if (u.type >= kNrCursegType) return bad(fmt("delta segment %llu: type %llu is not a log type", u.segno, u.type));
      std::uint32_t n = 0;
      for (std::uint32_t j = 0; j < kBlocksPerSeg; ++j) n += test_bit_msb(u.valid_map.data(), j);
      if (n != u.valid_blocks)
        return bad(fmt("delta segment %llu: %llu valid blocks, its map %llu", u.segno, u.valid_blocks, n));
    }
    for (std::size_t i = 0; i < d.nat.size(); ++i) {
      const NatUse& n = d.nat[i];
      if (n.nid == 0 || n.nid >= max_nid_) return bad(fmt("delta NAT entry %llu: nid %llu outside [1, %llu)", i, n.nid, max_nid_));
      if (!nat_index_.emplace(n.nid, i).second) return bad(fmt("delta names nid %llu twice", n.nid));
      if (n.blkaddr != kNullAddr && !vol_.is_valid_main_addr(n.blkaddr))
        return bad(fmt("delta NAT entry of nid %llu points at %llu, outside the main area", n.nid, n.blkaddr));
    }
    nat_src_ = &d.nat;
    const std::uint32_t payload = mv_.sb.cp_payload.get();
    const std::uint64_t max_orphans =
        static_cast<std::uint64_t>(kBlocksPerSeg - kCheckpointPacks - kNrCursegType - payload) * kOrphansPerBlock;
    if (plan_.orphans.size() > max_orphans)
      return bad(fmt("plan has %llu orphans, a pack holds at most %llu", plan_.orphans.size(), max_orphans));
    if (d.valid_block_count > mv_.cp.user_block_count.get())
      return bad(fmt("delta counts %llu valid blocks, more than user_block_count %llu", d.valid_block_count,
                     mv_.cp.user_block_count.get()));
    valid_block_count_ = d.valid_block_count;
    node_blocks_ = d.valid_node_count;
    return {};
  }

  const SegmentUpdate* delta_seg(std::uint32_t s) const {
    auto it = seg_index_.find(s);
    return it == seg_index_.end() ? nullptr : &delta_->segments[it->second];
  }

  tl::unexpected<Error> bad(const std::string& m) const {
    return make_error(Errc::invalid_argument, "rebuild: " + m);
  }

  const BlockUse* find_block(block_t addr) const {
    auto it = std::lower_bound(order_.begin(), order_.end(), addr,
                               [&](std::size_t i, block_t a) { return plan_.blocks[i].blkaddr < a; });
    if (it == order_.end() || plan_.blocks[*it].blkaddr != addr) return nullptr;
    return &plan_.blocks[*it];
  }

  bool seg_bit(std::uint32_t seg, std::uint32_t off) const {
    if (delta_) {
      const SegmentUpdate* u = delta_seg(seg);
      return u && test_bit_msb(u->valid_map.data(), off);
    }
    return test_bit_msb(&valid_[static_cast<std::size_t>(seg) * kMapBytes], off);
  }

  // ---- Active logs ----------------------------------------------------------
  // A log must be able to write its next block: that block free and, for an
  // LFS log, every block after it (check_curseg_offset() in fsck/fsck.c,
  // sanity_check_curseg() in fs/f2fs/segment.c), and the segment must hold
  // only blocks of the log's kind.
  bool busy(int t, const Curseg& c) const {
    if (c.segno >= main_segs_ || c.blkoff >= kBlocksPerSeg) return true;
    const bool node_log = t >= 3;
    if (delta_) {
      const SegmentUpdate* u = delta_seg(c.segno);
      if (!u || !u->summary || (u->valid_blocks && is_node_type(u->type) != node_log)) return true;
    } else if (node_log ? has_data_[c.segno] : has_node_[c.segno]) {
      return true;
    }
    if (seg_bit(c.segno, c.blkoff)) return true;
    if (c.alloc == kSsr) return false;
    for (std::uint32_t j = c.blkoff + 1; j < kBlocksPerSeg; ++j)
      if (seg_bit(c.segno, j)) return true;
    return false;
  }

  Status place_cursegs() {
    const Checkpoint& cp = mv_.cp;
    for (int t = 0; t < 3; ++t) {
      cur_[t] = {cp.cur_data_segno[t].get(), cp.cur_data_blkoff[t].get(), cp.alloc_type[t]};
      cur_[t + 3] = {cp.cur_node_segno[t].get(), cp.cur_node_blkoff[t].get(), cp.alloc_type[t + 3]};
    }
    if (plan_.cursegs)
      for (int t = 0; t < 6; ++t) {
        const LogPosition& l = (*plan_.cursegs)[t];
        if (l.alloc_type > kSsr) return bad(fmt("cursegs[%llu]: alloc_type %llu is neither LFS nor SSR", t, l.alloc_type));
        cur_[t] = {l.segno, l.blkoff, l.alloc_type};
      }
    for (int t = 0; t < 6; ++t)
      for (int o = 0; o < t; ++o)
        if (active(o) && active(t) && cur_[o].segno == cur_[t].segno && cur_[t].segno < main_segs_ && plan_.cursegs)
          return bad(fmt("cursegs: logs %llu and %llu share segment %llu", o, t, cur_[t].segno));
    for (int t = 0; t < 6; ++t) {
      if (!active(t) || !busy(t, cur_[t])) continue;
      if (delta_)
        return bad(fmt("active log %llu (segment %llu, next block %llu) is in use or not in the delta", t, cur_[t].segno,
                       cur_[t].blkoff));
      if (!plan_.move_busy_cursegs)
        return bad(fmt("active log %llu (segment %llu, next block %llu) is in use and move_busy_cursegs is off", t, cur_[t].segno,
                       cur_[t].blkoff));
      // The first wholly free section after the log's segment, holding no
      // other log (as fsck.f2fs's update_curseg_info() looks for a free one).
      const Geometry& g = mv_.geo;
      const std::uint32_t secs = g.main_sections();
      const std::uint32_t start = cur_[t].segno < main_segs_ ? g.sec_of_seg(cur_[t].segno) : 0;
      bool found = false;
      for (std::uint32_t k = 1; k <= secs && !found; ++k) {
        const std::uint32_t sec = (start + k) % secs;
        bool free = true;
        for (std::uint32_t s = g.first_seg_of_sec(sec); s < g.first_seg_of_sec(sec + 1) && free; ++s) {
          if (vblocks_[s]) free = false;
          for (int o = 0; o < 6 && free; ++o)
            if (o != t && g.sec_of_seg(cur_[o].segno) == sec) free = false;
        }
        if (!free) continue;
        cur_[t] = {g.first_seg_of_sec(sec), 0, kLfs};
        ++stats_.cursegs_moved;
        found = true;
      }
      if (!found) return make_error(Errc::no_space, fmt("rebuild: active log %llu must move and no section is free", t));
    }
    return {};
  }

  // An ro volume's two logs (hot data, hot node) are written; its other
  // four stay as mkfs left them (sanity_check_curseg() in fs/f2fs/segment.c
  // skips them).
  bool active(int t) const { return !ro_ || t == 0 || t == 3; }

  bool is_curseg(std::uint32_t seg, int* which = nullptr) const {
    for (int t = 0; t < 6; ++t)
      if (active(t) && cur_[t].segno == seg) {
        if (which) *which = t;
        return true;
      }
    return false;
  }

  // ---- SIT ------------------------------------------------------------------
  void assign_types() {
    types_.assign(main_segs_, 0xFF);  // 0xFF: keep the old type (free segments)
    for (std::uint32_t s = 0; s < main_segs_; ++s) {
      int t = 0;
      if (is_curseg(s, &t)) types_[s] = static_cast<std::uint8_t>(t);
      else if (!plan_.segment_types.empty()) types_[s] = plan_.segment_types[s];
    }
  }

  std::uint8_t type_for(std::uint32_t s, std::uint8_t old) const {
    if (types_[s] != 0xFF) return types_[s];
    // Keep the SIT's type when it fits the blocks (fsck.f2fs only checks
    // node versus data: f2fs_set_main_bitmap() in fsck/fsck.c).
    if (has_node_[s]) return is_node_type(old) ? old : static_cast<std::uint8_t>(CursegType::warm_node);
    if (has_data_[s]) return old < kNrCursegType && !is_node_type(old) ? old : static_cast<std::uint8_t>(CursegType::warm_data);
    return old < kNrCursegType ? old : static_cast<std::uint8_t>(CursegType::warm_data);
  }

  SitEntry sit_value(std::uint32_t s, const SitEntry& cur) const {
    if (delta_) {
      const SegmentUpdate* u = delta_seg(s);
      if (!u) return cur;
      SitEntry e{};
      int t = 0;
      const std::uint8_t type = is_curseg(s, &t) ? static_cast<std::uint8_t>(t) : u->type;
      e.mtime.set(u->mtime);
      e.vblocks.set(make_sit_vblocks(type, u->valid_blocks));
      std::memcpy(e.valid_map, u->valid_map.data(), kMapBytes);
      return e;
    }
    SitEntry e{};
    e.mtime = cur.mtime;
    if (s < plan_.segment_mtimes.size()) e.mtime.set(plan_.segment_mtimes[s]);
    e.vblocks.set(make_sit_vblocks(type_for(s, sit_type(cur)), static_cast<std::uint16_t>(vblocks_[s])));
    std::memcpy(e.valid_map, &valid_[static_cast<std::size_t>(s) * kMapBytes], kMapBytes);
    return e;
  }

  // SIT block `b` as the plan says (its journal entries folded in), to the
  // other copy when it differs from the current one.
  Status sit_block(std::uint32_t b, const std::unordered_map<std::uint32_t, const SitEntry*>& journal) {
    const int copy = mv_.sit_copy(b);
    Block old(kBlockSize);
    F2FSCORE_TRY(mv_.read(mv_.sit_addr(b, copy), old.data()));
    Block nb = old;
    auto* entries = reinterpret_cast<SitEntry*>(nb.data());
    for (std::uint32_t i = 0; i < kSitEntryPerBlock; ++i) {
      const std::uint32_t s = b * kSitEntryPerBlock + i;
      if (s >= main_segs_) break;
      SitEntry cur = entries[i];
      if (auto it = journal.find(s); it != journal.end()) cur = *it->second;
      entries[i] = sit_value(s, cur);
    }
    if (nb != old) {
      const int other = 1 - copy;
      if (other) set_bit_msb(new_sit_bitmap_.data(), b);
      else clear_bit_msb(new_sit_bitmap_.data(), b);
      writes_meta_.push_back({mv_.sit_addr(b, other), std::move(nb)});
      ++stats_.sit_blocks_written;
    }
    return {};
  }

  // The segments an incremental plan changes, with the active logs' old and
  // new segments (their types and summaries move).
  std::set<std::uint32_t> changed_segments() const {
    std::set<std::uint32_t> ds;
    if (delta_) {
      for (const SegmentUpdate& u : delta_->segments) ds.insert(u.segno);
      return ds;
    }
    for (std::uint32_t s : *plan_.changed_segments)
      if (s < main_segs_) ds.insert(s);
    for (int t = 0; t < 3; ++t) {
      ds.insert(mv_.cp.cur_data_segno[t].get());
      ds.insert(mv_.cp.cur_node_segno[t].get());
    }
    for (const auto& c : cur_) ds.insert(c.segno);
    for (auto it = ds.begin(); it != ds.end();) it = *it >= main_segs_ ? ds.erase(it) : std::next(it);
    return ds;
  }

  Status build_sit() {
    const std::uint32_t nblk = mv_.geo.sit_blocks_used();
    new_sit_bitmap_.assign(mv_.sit_bitmap(), mv_.sit_bitmap() + mv_.cp.sit_ver_bitmap_bytesize.get());
    new_sit_journal_ = Journal{};
    std::unordered_map<std::uint32_t, const SitEntry*> journal;
    for (std::uint32_t i = 0; i < mv_.sit_journal.n_entries.get() && i < kSitJournalEntries; ++i)
      journal[mv_.sit_journal.sit_j.entries[i].segno.get()] = &mv_.sit_journal.sit_j.entries[i].se;
    if (nblk > mv_.sit_blocks) return make_error(Errc::corrupt, "rebuild: the SIT is smaller than the main area");
    if (!incremental_) {
      for (std::uint32_t b = 0; b < nblk; ++b) F2FSCORE_TRY(sit_block(b, journal));
      return {};
    }
    std::set<std::uint32_t> ds = changed_segments();
    for (const auto& [seg, e] : journal)
      if (seg < main_segs_) ds.insert(seg);
    if (ds.size() > kSitJournalEntries) {
      // Too many for the journal: the blocks holding them (and the
      // journal's old entries), journal empty (remove_sits_in_journal()).
      std::set<std::uint32_t> blocks;
      for (std::uint32_t seg : ds) blocks.insert(Geometry::sit_block_of(seg));
      for (std::uint32_t b : blocks) F2FSCORE_TRY(sit_block(b, journal));
      return {};
    }
    std::map<std::uint32_t, Block> read;  // SIT blocks read for the old entries
    std::uint16_t n = 0;
    for (std::uint32_t seg : ds) {
      SitEntry cur{};
      if (auto it = journal.find(seg); it != journal.end()) {
        cur = *it->second;
      } else {
        const std::uint32_t b = Geometry::sit_block_of(seg);
        auto r = read.find(b);
        if (r == read.end()) {
          Block blk(kBlockSize);
          F2FSCORE_TRY(mv_.read(mv_.sit_addr(b, mv_.sit_copy(b)), blk.data()));
          r = read.emplace(b, std::move(blk)).first;
        }
        std::memcpy(&cur, r->second.data() + static_cast<std::size_t>(seg % kSitEntryPerBlock) * sizeof(SitEntry), sizeof cur);
      }
      new_sit_journal_.sit_j.entries[n].segno.set(seg);
      new_sit_journal_.sit_j.entries[n].se = sit_value(seg, cur);
      ++n;
    }
    new_sit_journal_.n_entries.set(n);
    stats_.sit_journal_entries = n;
    return {};
  }

  // ---- NAT ------------------------------------------------------------------
  // What NAT entry `nid` must say, given what it says now (`cur`).
  NatEntry nat_value(nid_t nid, const NatEntry& cur) const {
    const nid_t node_ino = mv_.sb.node_ino.get(), meta_ino = mv_.sb.meta_ino.get();
    NatEntry e = cur;
    if (nid != 0 && (nid == node_ino || nid == meta_ino)) {
      // As mkfs.f2fs writes them, whatever the plan says; fsck.f2fs
      // expects block_addr 1 (build_nat_area_bitmap() in fsck/mount.c).
      if (auto it = nat_index_.find(nid); it != nat_index_.end()) e.version = (*nat_src_)[it->second].version;
      e.ino.set(nid);
      e.block_addr.set(1);
    } else if (auto it = nat_index_.find(nid); it != nat_index_.end()) {
      const NatUse& u = (*nat_src_)[it->second];
      e.version = u.version;
      e.ino.set(u.ino);
      e.block_addr.set(u.blkaddr);
    } else if (delta_) {
      if (nid == 0) e = NatEntry{};
    } else if (cur.block_addr.get() != kNullAddr || nid == 0) {
      e.ino.set(0);
      e.block_addr.set(kNullAddr);
      if (nid == 0) e.version = 0;
    }
    return e;
  }

  Status nat_block(std::uint32_t b, const std::unordered_map<nid_t, const NatEntry*>& journal) {
    const int copy = mv_.nat_copy(b);
    Block old(kBlockSize);
    F2FSCORE_TRY(mv_.read(mv_.nat_addr(b, copy), old.data()));
    Block nb = old;
    auto* entries = reinterpret_cast<NatEntry*>(nb.data());
    for (std::uint32_t i = 0; i < kNatEntryPerBlock; ++i) {
      const nid_t nid = b * kNatEntryPerBlock + i;
      NatEntry cur = entries[i];
      if (auto it = journal.find(nid); it != journal.end()) cur = *it->second;
      entries[i] = nat_value(nid, cur);
    }
    if (nb != old) {
      const int other = 1 - copy;
      if (other) set_bit_msb(new_nat_bitmap_.data(), b);
      else clear_bit_msb(new_nat_bitmap_.data(), b);
      writes_meta_.push_back({mv_.nat_addr(b, other), std::move(nb)});
      ++stats_.nat_blocks_written;
    }
    return {};
  }

  Status build_nat() {
    const nid_t node_ino = mv_.sb.node_ino.get(), meta_ino = mv_.sb.meta_ino.get();
    new_nat_bitmap_.assign(mv_.nat_bitmap(), mv_.nat_bitmap() + mv_.cp.nat_ver_bitmap_bytesize.get());
    new_nat_journal_ = Journal{};
    std::unordered_map<nid_t, const NatEntry*> journal;
    for (std::uint32_t i = 0; i < mv_.nat_journal.n_entries.get() && i < kNatJournalEntries; ++i)
      journal[mv_.nat_journal.nat_j.entries[i].nid.get()] = &mv_.nat_journal.nat_j.entries[i].ne;
    // nat_bits count every entry with an address, nid 0 as used
    // (update_nat_bits() in fs/f2fs/node.c): from the plan, which names
    // every nid in use (node_ino and meta_ino always are).
    const std::uint32_t bytes = mv_.nat_blocks / 8;
    if (delta_) {
      F2FSCORE_TRY(delta_nat_bits(bytes));
      return build_nat_changes(journal);
    }
    full_bits_.assign(bytes, 0);
    empty_bits_.assign(bytes, 0);
    std::vector<std::uint32_t> used(mv_.nat_blocks, 0);
    auto count = [&](nid_t n) {
      if (Geometry::nat_block_of(n) < used.size()) ++used[Geometry::nat_block_of(n)];
    };
    count(0);
    count(node_ino);
    if (meta_ino != node_ino) count(meta_ino);
    for (const NatUse& u : plan_.nat)
      if (u.nid != node_ino && u.nid != meta_ino) count(u.nid);
    for (std::uint32_t b = 0; b < mv_.nat_blocks; ++b) {
      if (used[b] == 0) set_bit_le(empty_bits_.data(), b);
      else if (used[b] == kNatEntryPerBlock) set_bit_le(full_bits_.data(), b);
    }
    if (!incremental_) {
      for (std::uint32_t b = 0; b < mv_.nat_blocks; ++b) F2FSCORE_TRY(nat_block(b, journal));
      return {};
    }
    return build_nat_changes(journal);
  }

  // nat_bits of a delta: the current pack's, the changed blocks' bits set
  // from their counts; none when the current pack has none valid.
  Status delta_nat_bits(std::uint32_t bytes) {
    full_bits_.clear();
    empty_bits_.clear();
    drop_nat_bits_ = true;
    if (!vol_.nat_bits_valid()) return {};
    const NatBitsSize nbs = nat_bits_size(mv_.sb.segment_count_nat.get());
    Block bits(static_cast<std::size_t>(nbs.blocks) * kBlockSize);
    F2FSCORE_TRY(mv_.read(mv_.cp_start + kBlocksPerSeg - nbs.blocks, bits.data(), nbs.blocks));
    if (load_le64(bits.data(), 0) != nat_bits_header(mv_.cp_blocks.data()) || bytes > nbs.bitmap_bytes) return {};
    full_bits_.assign(bits.begin() + 8, bits.begin() + 8 + bytes);
    empty_bits_.assign(bits.begin() + 8 + nbs.bitmap_bytes, bits.begin() + 8 + nbs.bitmap_bytes + bytes);
    for (const auto& [b, used] : delta_->nat_block_used) {
      if (b >= mv_.nat_blocks) continue;
      clear_bit_le(full_bits_.data(), b);
      clear_bit_le(empty_bits_.data(), b);
      if (used == 0) set_bit_le(empty_bits_.data(), b);
      else if (used >= kNatEntryPerBlock) set_bit_le(full_bits_.data(), b);
    }
    drop_nat_bits_ = false;
    return {};
  }

  // The changed NAT entries, with those the current journal holds: to the
  // new journal when they fit, else the NAT blocks holding them.
  Status build_nat_changes(const std::unordered_map<nid_t, const NatEntry*>& journal) {
    const nid_t max_nid = mv_.geo.max_nid();
    std::set<nid_t> d;
    if (delta_) {
      for (const NatUse& u : delta_->nat)
        if (u.nid > 0 && u.nid < max_nid) d.insert(u.nid);
    } else {
      for (nid_t n : *plan_.changed_nids)
        if (n > 0 && n < max_nid) d.insert(n);
    }
    for (const auto& [n, e] : journal)
      if (n < max_nid) d.insert(n);
    if (d.size() > kNatJournalEntries || new_umount_) {
      std::set<std::uint32_t> blocks;
      for (nid_t n : d) blocks.insert(Geometry::nat_block_of(n));
      for (std::uint32_t b : blocks) F2FSCORE_TRY(nat_block(b, journal));
      return {};
    }
    std::map<std::uint32_t, Block> read;  // NAT blocks read for entries the journal lacks
    std::uint16_t k = 0;
    for (nid_t n : d) {
      NatEntry cur{};
      if (auto it = journal.find(n); it != journal.end()) {
        cur = *it->second;
      } else {
        const std::uint32_t b = Geometry::nat_block_of(n);
        auto r = read.find(b);
        if (r == read.end()) {
          Block blk(kBlockSize);
          F2FSCORE_TRY(mv_.read(mv_.nat_addr(b, mv_.nat_copy(b)), blk.data()));
          r = read.emplace(b, std::move(blk)).first;
        }
        std::memcpy(&cur, r->second.data() + static_cast<std::size_t>(n % kNatEntryPerBlock) * sizeof(NatEntry), sizeof cur);
      }
      new_nat_journal_.nat_j.entries[k].nid.set(n);
      new_nat_journal_.nat_j.entries[k].ne = nat_value(n, cur);
      ++k;
    }
    new_nat_journal_.n_entries.set(k);
    stats_.nat_journal_entries = k;
    return {};
  }

  // ---- SSA ------------------------------------------------------------------
  // Summary entries: data blocks name their dnode, its NAT version and the
  // slot; node blocks name their nid with version and offset 0, as the
  // kernel's f2fs_do_write_node_page() does.
  void fill_summary(std::uint32_t seg, SummaryBlock& s) const {
    const std::uint64_t start = vol_.segment_start(seg);
    auto it = std::lower_bound(order_.begin(), order_.end(), start,
                               [&](std::size_t i, std::uint64_t a) { return plan_.blocks[i].blkaddr < a; });
    for (; it != order_.end() && plan_.blocks[*it].blkaddr < start + kBlocksPerSeg; ++it) {
      const BlockUse& u = plan_.blocks[*it];
      Summary& e = s.entries[u.blkaddr - start];
      e.nid.set(u.nid);
      e.version = u.node ? 0 : u.version;
      e.ofs_in_node.set(u.node ? 0 : u.ofs_in_node);
    }
  }

  Status build_ssa() {
    for (int t = 0; t < 6; ++t) {
      cur_sum_[t] = SummaryBlock{};
      if (delta_) {
        const SegmentUpdate* u = delta_seg(cur_[t].segno);
        if (u && u->summary) cur_sum_[t] = *u->summary;
      } else {
        fill_summary(cur_[t].segno, cur_sum_[t]);
      }
      if (!active(t)) cur_sum_[t] = SummaryBlock{};
      cur_sum_[t].footer.entry_type = t >= 3 ? kSumTypeNode : kSumTypeData;
    }
    // No SSA (an ro volume as mkfs.f2fs makes it): the pack holds the logs'.
    if (ro_ && mv_.sb.segment_count_ssa.get() == 0) return {};
    if (delta_) {
      for (const SegmentUpdate& u : delta_->segments) {
        int t = -1;
        const bool cur = is_curseg(u.segno, &t);
        if (cur && t < 3) continue;  // data logs' summaries go into the pack
        if (!u.summary) continue;
        Block nb(kBlockSize, 0);
        auto* sum = reinterpret_cast<SummaryBlock*>(nb.data());
        if (cur) *sum = cur_sum_[t];
        else {
          *sum = *u.summary;
          sum->footer.entry_type = is_node_type(u.type) ? kSumTypeNode : kSumTypeData;
        }
        writes_meta_.push_back({mv_.geo.ssa_addr(u.segno), std::move(nb)});
        ++stats_.ssa_blocks_written;
      }
      return {};
    }
    Block old(kBlockSize);
    // Incremental: only the changed segments' blocks, written without
    // comparing (new blocks landed there).
    std::set<std::uint32_t> only;
    if (incremental_) only = changed_segments();
    for (std::uint32_t s = 0; s < main_segs_; ++s) {
      if (incremental_ && !only.count(s)) continue;
      int t = -1;
      const bool cur = is_curseg(s, &t);
      if (cur && t < 3) continue;  // data logs' summaries go into the pack
      if (!cur && vblocks_[s] == 0) continue;
      Block nb(kBlockSize, 0);
      auto* sum = reinterpret_cast<SummaryBlock*>(nb.data());
      if (cur) *sum = cur_sum_[t];
      else {
        sum->footer.entry_type = has_node_[s] ? kSumTypeNode : kSumTypeData;
        fill_summary(s, *sum);
      }
      if (!incremental_) F2FSCORE_TRY(mv_.read(mv_.geo.ssa_addr(s), old.data()));
      if (incremental_ || nb != old) {
        writes_meta_.push_back({mv_.geo.ssa_addr(s), std::move(nb)});
        ++stats_.ssa_blocks_written;
      }
    }
    return {};
  }

  // ---- The checkpoint pack --------------------------------------------------
  Status build_pack() {
    const SuperBlock& sb = mv_.sb;
    const std::uint32_t payload = sb.cp_payload.get();
    Checkpoint cp = mv_.cp;
    std::uint32_t flags = cp.ckpt_flags.get();
    flags &= ~(cp_flag::fsck | cp_flag::error | cp_flag::compact_sum | cp_flag::orphan_present);
    if (plan_.umount) flags = *plan_.umount ? (flags | cp_flag::umount) : (flags & ~cp_flag::umount);
    if (plan_.clear_quota_need_fsck) flags &= ~cp_flag::quota_need_fsck;
    const std::uint32_t orphan_blocks =
        static_cast<std::uint32_t>((plan_.orphans.size() + kOrphansPerBlock - 1) / kOrphansPerBlock);
    if (orphan_blocks) flags |= cp_flag::orphan_present;
    const std::uint32_t data_sum = compact_summary_blocks(cur_);
    const bool compact = data_sum < 3;
    if (compact) flags |= cp_flag::compact_sum;
    const bool umount = flags & cp_flag::umount;
    const std::uint32_t total = 1 + payload + orphan_blocks + data_sum + (umount ? 3 : 0) + 1;
    if (total > kBlocksPerSeg) return bad(fmt("the new checkpoint pack needs %llu blocks, more than a segment", total));
    const NatBitsLayout nbs = mv_.geo.nat_bits_layout();
    // nat_bits fit after the pack or are dropped, as the kernel does
    // (enabled_nat_bits() / do_checkpoint() in fs/f2fs/checkpoint.c).
    if ((flags & cp_flag::nat_bits) && (total + nbs.blocks > kBlocksPerSeg || drop_nat_bits_)) flags &= ~cp_flag::nat_bits;

    // next_free_nid is kept unless it is past the NAT or the volume was
    // opened leniently and clamped it: then the lowest nid above the root
    // that the new NAT leaves free, as mkfs.f2fs starts it (root_ino + 1
    // + the quota and lost+found inodes).
    const nid_t max_nid = mv_.geo.max_nid();
    if (cp.next_free_nid.get() >= max_nid || mv_.vol.open_report().next_free_nid_clamped) {
      nid_t n = mv_.sb.root_ino.get() + 1;
      while (n < max_nid && nat_index_.count(n)) ++n;
      cp.next_free_nid.set(n < max_nid ? n : mv_.sb.root_ino.get() + 1);
    }
    cp.checkpoint_ver.set(mv_.cp.checkpoint_ver.get() + 1);
    if (plan_.elapsed_time) cp.elapsed_time.set(*plan_.elapsed_time);
    cp.valid_block_count.set(valid_block_count_);
    cp.valid_node_count.set(static_cast<std::uint32_t>(node_blocks_));
    cp.valid_inode_count.set(plan_.valid_inode_count);
    // Free segments: no valid block and not an active log, counted per
    // segment (build_sit_area_bitmap() in fsck/mount.c; free_segments in
    // fs/f2fs/segment.c counts segments too).
    std::uint32_t free_segs = 0;
    if (delta_) free_segs = delta_->free_segment_count;
    else
      for (std::uint32_t s = 0; s < main_segs_; ++s)
        if (vblocks_[s] == 0 && !is_curseg(s)) ++free_segs;
    cp.free_segment_count.set(free_segs);
    for (int t = 0; t < 3; ++t) {
      cp.cur_data_segno[t].set(cur_[t].segno);
      cp.cur_data_blkoff[t].set(static_cast<std::uint16_t>(cur_[t].blkoff));
      cp.cur_node_segno[t].set(cur_[t + 3].segno);
      cp.cur_node_blkoff[t].set(static_cast<std::uint16_t>(cur_[t + 3].blkoff));
    }
    for (int t = 0; t < 6; ++t) cp.alloc_type[t] = cur_[t].alloc;
    cp.ckpt_flags.set(flags);
    cp.cp_pack_total_block_count.set(total);
    cp.cp_pack_start_sum.set(1 + payload + orphan_blocks);
    stats_.checkpoint_ver = cp.checkpoint_ver.get();

    // The pack: the CP block and payload as they stand, with the new
    // header, version bitmaps, orphans, summaries, journals and nat_bits.
    CpPackContents c;
    c.head = mv_.cp_blocks;
    c.cp = &cp;
    c.nat_bitmap = new_nat_bitmap_;
    c.sit_bitmap = new_sit_bitmap_;
    c.orphans = plan_.orphans;
    c.nat_journal = &new_nat_journal_;
    c.sit_journal = &new_sit_journal_;
    c.data_sums = &cur_sum_[0];
    c.node_sums = &cur_sum_[3];
    c.nat_bits_full = full_bits_;
    c.nat_bits_empty = empty_bits_;
    auto pack = encode_cp_pack(mv_.geo, c);
    if (!pack) return make_error(Errc::corrupt, "rebuild: " + pack.error().message);
    const std::uint64_t start = mv_.geo.cp_pack_start(1 - mv_.pack);
    const std::uint32_t last = pack->block_count() - 1;
    for (std::uint32_t i = 0; i < last; ++i) writes_pack_.push_back({start + i, to_block(pack->block(i))});
    tail_ = {start + last, to_block(pack->block(last))};
    for (std::uint32_t i = 0; i < pack->nat_bits.size() / kBlockSize; ++i)
      writes_pack_.push_back({start + pack->nat_bits_start + i,
                              to_block(std::span<const std::uint8_t>(pack->nat_bits).subspan(
                                  static_cast<std::size_t>(i) * kBlockSize, kBlockSize))});
    return {};
  }

  // ---- Writing ----------------------------------------------------------------
  Status put(const std::pair<std::uint64_t, Block>& w) {
    return write_at(dev_, w.first * kBlockSize, std::span<const std::uint8_t>(w.second.data(), w.second.size()),
                    io_tag(IostatType::fs_cp_meta_io));
  }

  // The blocks of `ws`, whose order among themselves does not matter (a
  // flush follows them): sorted by address (of one address the last
  // given), consecutive addresses joined into one request of up to 2 MiB,
  // up to 8 requests in flight, every one waited for. The first failure is
  // returned once all are done.
  Status put_batch(const std::vector<std::pair<std::uint64_t, Block>>& ws) {
    constexpr std::size_t kMaxRun = 512, kDepth = 8;
    std::vector<std::size_t> idx(ws.size());
    std::iota(idx.begin(), idx.end(), std::size_t{0});
    std::stable_sort(idx.begin(), idx.end(), [&](std::size_t a, std::size_t b) { return ws[a].first < ws[b].first; });
    std::vector<std::size_t> order;
    for (std::size_t k = 0; k < idx.size(); ++k) {
      if (ws[idx[k]].second.size() != kBlockSize) {  // not one block: on its own
        F2FSCORE_TRY(put(ws[idx[k]]));
        continue;
      }
      if (!order.empty() && ws[order.back()].first == ws[idx[k]].first) order.back() = idx[k];
      else order.push_back(idx[k]);
    }
    struct Req {
      IoRequest io;
      std::uint8_t* buf = nullptr;
      std::size_t cap = 0;  // blocks buf holds
      bool busy = false, done = false;
    };
    std::vector<Req> reqs(kDepth);
    Status failure;
    const std::size_t align = std::max<std::size_t>(kBlockSize, dev_.info().buffer_alignment);
    auto reap = [&](Req& r) {
      if (!r.io.ok() && failure) failure = make_error(r.io.error());
      r.busy = r.done = false;
    };
    for (std::size_t i = 0; i < order.size();) {
      std::size_t j = i + 1;
      while (j < order.size() && j - i < kMaxRun && ws[order[j]].first == ws[order[j - 1]].first + 1) ++j;
      Req* slot = nullptr;
      while (!slot) {
        for (auto& r : reqs) {
          if (r.busy && r.done) reap(r);
          if (!r.busy) {
            slot = &r;
            break;
          }
        }
        if (!slot) dev_.poll(true);
      }
      if (slot->cap < j - i) {  // a buffer as long as the run (most runs are a few blocks)
        detail::aligned_free(slot->buf);
        slot->cap = j - i;
        slot->buf = static_cast<std::uint8_t*>(detail::aligned_alloc_bytes(align, slot->cap * kBlockSize));
        if (!slot->buf) {
          failure = make_error(Errc::io, "checkpoint: no memory for a write buffer");
          break;
        }
      }
      for (std::size_t k = i; k < j; ++k)
        std::memcpy(slot->buf + (k - i) * kBlockSize, ws[order[k]].second.data(), kBlockSize);
      slot->io = IoRequest{};
      slot->io.op = IoOp::write;
      slot->io.tag = io_tag(IostatType::fs_cp_meta_io);
      slot->io.offset = ws[order[i]].first * kBlockSize;
      slot->io.length = static_cast<std::uint64_t>(j - i) * kBlockSize;
      slot->io.buf = slot->buf;
      slot->io.user = slot;
      slot->io.on_complete = [](IoRequest& r) noexcept { static_cast<Req*>(r.user)->done = true; };
      slot->busy = true;
      dev_.submit(slot->io);
      i = j;
    }
    for (auto& r : reqs) {
      while (r.busy && !r.done) dev_.poll(true);
      if (r.busy) reap(r);
      detail::aligned_free(r.buf);
    }
    return failure;
  }

  Status write_all() {
    // 1. NAT and SIT blocks to the copies the current checkpoint does not
    //    use, SSA blocks in place; 2. the new pack but its closing block,
    //    nat_bits; 3. flush; 4. the closing block; 5. flush
    //    (do_checkpoint(): the meta pages written and waited for, then
    //    commit_checkpoint() writes the closing block with PREFLUSH|FUA;
    //    f2fs_flush_device_cache() flushes only the extra devices of a
    //    multi-device volume). Nothing orders 1 before 2: the pack is no
    //    valid checkpoint until its closing block lands.
    F2FSCORE_TRY(put_batch(writes_meta_));
    F2FSCORE_TRY(put_batch(writes_pack_));
    F2FSCORE_TRY(flush(dev_));
    F2FSCORE_TRY(put(tail_));
    stats_.cp_blocks_written = static_cast<std::uint32_t>(writes_pack_.size() + 1);
    F2FSCORE_TRY(flush(dev_));
    if (plan_.restore_superblocks) F2FSCORE_TRY(restore_superblocks());
    return {};
  }

  // The superblock in use, to both slots (its CRC refreshed when the volume
  // has sb_checksum), only where a slot differs.
  Status restore_superblocks() {
    const int copy = vol_.open_report().superblock_copy;
    Block src(kBlockSize);
    F2FSCORE_TRY(mv_.read(static_cast<std::uint64_t>(copy), src.data()));
    SuperBlock sb = vol_.superblock();
    if (plan_.qf_ino)
      for (std::size_t t = 0; t < plan_.qf_ino->size(); ++t) sb.qf_ino[t].set((*plan_.qf_ino)[t]);
    if (sb.feature.get() & feature::sb_checksum) sb.crc.set(superblock_checksum(sb));
    std::memcpy(src.data() + kSuperOffset, &sb, sizeof sb);
    bool wrote = false;
    for (std::uint64_t slot = 0; slot < 2; ++slot) {
      Block cur(kBlockSize);
      F2FSCORE_TRY(mv_.read(slot, cur.data()));
      if (cur == src) continue;
      F2FSCORE_TRY(put({slot, src}));
      wrote = true;
    }
    if (wrote) F2FSCORE_TRY(flush(dev_));
    return {};
  }

  BlockDevice& dev_;
  Volume& vol_;
  const RebuildPlan& plan_;
  MetaView mv_;
  RebuildStats stats_;
  std::uint32_t main_segs_ = 0;
  nid_t max_nid_ = 0;
  std::vector<std::uint8_t> valid_;  // MSB-first valid maps, 64 bytes per segment
  std::vector<std::uint16_t> vblocks_;
  std::vector<std::uint8_t> has_node_, has_data_, types_;
  std::vector<std::size_t> order_;  // plan.blocks indexes by address
  std::unordered_map<nid_t, std::size_t> nat_index_;
  std::size_t node_blocks_ = 0;
  bool ro_ = false;
  Curseg cur_[kNrCursegType];
  SummaryBlock cur_sum_[kNrCursegType];
  std::vector<std::uint8_t> new_sit_bitmap_, new_nat_bitmap_, full_bits_, empty_bits_;
  std::vector<std::pair<std::uint64_t, Block>> writes_meta_, writes_pack_;
  bool incremental_ = false, new_umount_ = false, drop_nat_bits_ = false;
  const CheckpointDelta* delta_ = nullptr;
  const std::vector<NatUse>* nat_src_ = nullptr;
  std::unordered_map<std::uint32_t, std::size_t> seg_index_;  // delta segments by segno
  std::uint64_t valid_block_count_ = 0;
  Journal new_nat_journal_{}, new_sit_journal_{};
  std::pair<std::uint64_t, Block> tail_;
};

}  // namespace

Result<RebuildStats> rebuild(BlockDevice& dev, Volume& vol, const RebuildPlan& plan) {
  auto r = std::make_unique<Rebuilder>(dev, vol, plan);
  return r->run();
}

}  // namespace f2fscore::meta
