// Space reclaim: block allocation (LFS and SSR), free-section accounting,
// foreground and background garbage collection (docs/gc.md). The rules are
// Linux 6.1's: f2fs_allocate_data_block(), allocate_segment_by_default(),
// get_ssr_segment(), f2fs_need_SSR() in fs/f2fs/segment.c,
// has_not_enough_free_secs() in fs/f2fs/segment.h, f2fs_gc(),
// get_victim_by_default(), get_gc_cost(), get_cb_cost(),
// gc_data_segment() and gc_node_segment() in fs/f2fs/gc.c.
#include <algorithm>
#include <climits>
#include <vector>

#include "meta/meta_internal.hpp"
#include "writer/writer_internal.hpp"

namespace f2fscore {

using namespace disk;
using meta::fmt;

namespace {
constexpr std::uint32_t kSeg = wr::kBlocksPerSeg;
constexpr std::uint32_t kNoSeg = 0xFFFFFFFFu;
}  // namespace

// ---- Accounting -----------------------------------------------------------------

// The kernel's clock for SIT mtimes: seconds the volume has been mounted
// (get_mtime(): elapsed_time of the checkpoint plus the time since mount).
std::uint64_t Writer::Impl::get_mtime() const {
  const std::uint64_t t = now();
  return mtime_base + (t >= clock_base ? t - clock_base : 0);
}

void Writer::Impl::gc_load() {
  mtime_base = cp.elapsed_time.get();
  clock_base = now();
  // init_min_max_mtime(): the oldest section's mean mtime, and now.
  min_mtime = sm.min_section_mtime();
  max_mtime = get_mtime();
  cur_victim_sec = kNoSeg;
}

std::uint32_t Writer::Impl::reserved_sections() const { return cp.rsvd_segment_count.get() / vol->geometry().segs_per_sec(); }

// f2fs_need_SSR() (6.1): get_blocktype_secs() rounds dirty pages up to
// segments, then down to sections. Dentry pages and inode metadata are
// written with their nodes here, so they count as zero.
bool Writer::Impl::need_ssr() const {
  const Geometry& g = vol->geometry();
  const std::uint64_t segs = (nm.dirty_pages() + g.blocks_per_sec() - 1) / kSeg;
  const std::uint64_t node_secs = segs / g.segs_per_sec();
  const std::uint32_t min_ssr =
      ipu.min_ssr_sections == IpuOptions::kKernelDefault ? reserved_sections() : ipu.min_ssr_sections;
  return free_sections() <= node_secs + min_ssr + reserved_sections();
}

bool Writer::Impl::has_not_enough_free_secs(std::uint32_t freed, std::uint32_t needed) const {
  const std::uint64_t per_sec = vol->geometry().blocks_per_sec();
  const std::uint64_t node_total = nm.dirty_pages();
  const std::uint64_t node_secs = node_total / per_sec, node_blocks = node_total % per_sec;
  // Ours: the page cache holds dirty data the kernel would have balanced
  // page by page; its sections are needed too.
  const std::uint64_t data_secs = (dirty_pages(0) + per_sec - 1) / per_sec;
  const std::uint64_t free = static_cast<std::uint64_t>(free_sections()) + freed;
  const std::uint64_t need_lower = node_secs + data_secs + reserved_sections() + needed;
  const std::uint64_t need_upper = need_lower + (node_blocks ? 1 : 0);
  if (free > need_upper) return false;
  if (free <= need_lower) return true;
  // has_curseg_enough_space(): the rest fits each node log's segment.
  for (std::uint8_t t = wr::kHotNode; t <= wr::kColdNode; ++t) {
    const auto& l = logs[t];
    const std::uint64_t left = l.segno < main_segs ? kSeg - sm.ckpt_valid_count(l.segno) : 0;
    if (!log_usable[t] || node_blocks > left) return true;
  }
  return false;
}

Status Writer::Impl::check_space(std::uint64_t blocks) const {
  if (valid_blocks + reserved_blocks + pending_new_nodes + blocks > cp.user_block_count.get())
    return make_error(Errc::no_space, fmt("writer: every user block is in use (%llu of user_block_count %llu)",
                                          valid_blocks + reserved_blocks + pending_new_nodes, cp.user_block_count.get()));
  return {};
}

// ---- Allocation -------------------------------------------------------------------

namespace {
struct SegView {
  const Writer::Impl& w;
  bool is_cur_seg(std::uint32_t s) const {
    for (const auto& l : w.logs)
      if (l.segno == s) return true;
    return false;
  }
  bool is_cur_sec(std::uint32_t sec) const {
    for (const auto& l : w.logs)
      if (l.segno < w.main_segs && w.vol->geometry().sec_of_seg(l.segno) == sec) return true;
    return false;
  }
  bool sec_free(std::uint32_t sec) const { return !is_cur_sec(sec) && w.sm.section_free(sec); }
  std::uint32_t next_free(std::uint32_t s, std::uint32_t from) const { return w.sm.next_free_blkoff(s, from); }
};
}  // namespace

// new_curseg() / change_curseg() as allocate_segment_by_default() picks:
// the warm node log always takes a new segment unless the checkpoint has
// CP_CRC_RECOVERY_FLAG (fsync chains); an LFS log the next segment of its
// section when free; under need_SSR() a dirty segment (get_ssr_segment());
// else the first wholly free section after the log's.
Status Writer::Impl::new_segment(std::uint8_t type) {
  SegView v{*this};
  auto& l = logs[type];
  const Geometry& g = vol->geometry();
  const std::uint32_t nsecs = g.main_sections();
  // A free segment starts a blank summary; its SIT entry and summary are
  // written by the next checkpoint.
  auto take_free = [&](std::uint32_t seg) -> Status {
    sm.take(seg);
    sm.set_type(seg, type);
    auto sp = sm.dirty_summary(*vol, seg, true);
    if (!sp) return make_error(sp.error());
    l = {seg, 0, 0};
    log_usable[type] = true;
    ++stats.segments_allocated;
    return {};
  };
  // An SSR segment keeps its summary (read from the SSA) for the blocks
  // still valid in it.
  auto take_ssr = [&](std::uint32_t seg) -> Status {
    sm.set_type(seg, type);
    auto sp = sm.dirty_summary(*vol, seg, false);
    if (!sp) return make_error(sp.error());
    l = {seg, static_cast<std::uint16_t>(v.next_free(seg, 0)), 1};
    log_usable[type] = true;
    ++stats.segments_allocated;
    return {};
  };
  // get_ssr_segment(): the log's own type first, then the others of its
  // kind (node or data) towards hot or cold as 6.1 orders them; greedy on
  // ckpt_valid_blocks (get_gc_cost() for SSR), a full one never chosen.
  auto ssr = [&]() -> std::uint32_t {
    return sm.ssr_segment(type, [&](std::uint32_t sec) { return v.is_cur_sec(sec) || sec == cur_victim_sec; });
  };
  // The log's next segment when it is in the same section, free and no
  // other log's (an LFS log stays in its section).
  auto next_in_sec = [&] {
    return log_usable[type] && l.alloc_type == 0 && l.segno + 1 < main_segs &&
           g.sec_of_seg(l.segno + 1) == g.sec_of_seg(l.segno) && sm.free_at_cp(l.segno + 1) && !v.is_cur_seg(l.segno + 1);
  };
  const bool crc = cp.ckpt_flags.get() & cp_flag::crc_recovery;
  const bool warm_node_lfs = type == wr::kWarmNode && !crc;
  if (!warm_node_lfs && next_in_sec())
    return take_free(l.segno + 1);
  // Not while rolling forward: the fsync chain's blocks are in no
  // checkpoint yet and must survive until the recovery's checkpoint.
  if (!warm_node_lfs && need_ssr() && !fsync_recovering) {
    const std::uint32_t s = ssr();
    if (s != kNoSeg) return take_ssr(s);
  }
  // new_curseg(): the next free segment of the log's section (LFS), else the
  // first wholly free section after it (get_new_segment(), ALLOC_RIGHT).
  if (next_in_sec())
    return take_free(l.segno + 1);
  const std::uint32_t start = l.segno < main_segs ? g.sec_of_seg(l.segno) : 0;
  for (std::uint32_t sec = sm.next_free_section(start), k = 0; sec != kNoSeg && k < nsecs;
       sec = sm.next_free_section(sec), ++k)
    if (v.sec_free(sec)) return take_free(g.first_seg_of_sec(sec));
  // No free section: the kernel never gets here (GC keeps the reserve);
  // rather than fail, reuse a dirty segment's free blocks if any.
  const std::uint32_t s = fsync_recovering ? kNoSeg : ssr();
  if (s != kNoSeg) return take_ssr(s);
  log_usable[type] = false;
  return make_error(Errc::no_space, fmt("writer: no free section and no segment with a free block for log %llu", type) +
                                        fmt(" (free %llu, reserved %llu, dirty nodes %llu, dirty pages %llu)", free_sections(),
                                            reserved_sections(), nm.dirty_pages(), dirty_pages(0)) +
                                        fmt(" (in_gc %llu, depth %llu)", in_gc, call_depth));
}

Result<block_t> Writer::Impl::next_block(std::uint8_t type) {
  auto& l = logs[type];
  if (!log_usable[type] || l.blkoff >= kSeg) F2FSCORE_TRY(new_segment(type));
  return static_cast<block_t>(vol->segment_start(l.segno) + l.blkoff);
}

// f2fs_allocate_data_block(): the log's next block; SIT information (here
// ckpt_valid and the segment's mtime) before the log moves on; a full log
// takes its next segment at once, so that the next block is known (node
// footers' next_blkaddr, fsync chains).
Result<block_t> Writer::Impl::allocate_block(std::uint8_t type) {
  auto a = next_block(type);
  if (!a) return make_error(a.error());
  auto& l = logs[type];
  const std::uint32_t seg = l.segno;
  sm.mark_ckpt_valid(seg, off_of(*a));
  // update_segment_mtime(): the mean of the blocks' times, a GC move keeping
  // its old segment's time.
  const std::uint64_t ctime = get_mtime();
  const std::uint64_t m = gc_move_mtime ? gc_move_mtime : ctime;
  const std::uint64_t mt = sm.mtime(seg);
  sm.set_mtime(seg, mt ? (mt * sm.valid(seg) + m) / (sm.valid(seg) + 1u) : m);
  max_mtime = std::max(max_mtime, ctime);
  if (l.alloc_type) {
    ++stats.gc.ssr_blocks;
    l.blkoff = static_cast<std::uint16_t>(SegView{*this}.next_free(seg, l.blkoff + 1u));
  } else {
    ++stats.gc.lfs_blocks;
    ++l.blkoff;
  }
  if (l.blkoff >= kSeg) (void)new_segment(type);  // on failure the next call tries again
  return *a;
}

// ---- Garbage collection ------------------------------------------------------------

namespace {

// f2fs_start_bidx_of_node(): the first file block a direct node maps.
std::uint64_t start_bidx_of_node(std::uint32_t node_ofs, std::uint32_t addrs_per_inode) {
  if (node_ofs == 0) return 0;
  const std::uint32_t indirect_blks = 2 * kNidsPerBlock + 4;
  std::uint64_t bidx;
  if (node_ofs <= 2) bidx = node_ofs - 1;
  else if (node_ofs <= indirect_blks) bidx = node_ofs - 2 - (node_ofs - 4) / (kNidsPerBlock + 1);
  else bidx = node_ofs - 5 - (node_ofs - indirect_blks - 3) / (kNidsPerBlock + 1);
  return bidx * kDefAddrsPerBlock + addrs_per_inode;
}

struct Gc {
  Writer::Impl& w;
  std::unordered_set<std::uint32_t> tried{};  ///< sections already moved in this run

  std::uint32_t sec_valid(std::uint32_t sec) const { return w.sm.section_valid(sec); }

  // get_cb_cost(): age and utilisation of the section.
  std::uint64_t cb_cost(std::uint32_t sec) {
    std::uint64_t mtime = 0;
    const Geometry& g = w.vol->geometry();
    const std::uint32_t first = g.first_seg_of_sec(sec);
    for (std::uint32_t s = first; s < first + g.segs_per_sec(); ++s) mtime += w.sm.mtime(s);
    mtime /= g.segs_per_sec();
    const std::uint64_t vblocks = sec_valid(sec) / g.segs_per_sec();
    const std::uint64_t u = (vblocks * 100) / kSeg;
    if (mtime < w.min_mtime) w.min_mtime = mtime;
    if (mtime > w.max_mtime) w.max_mtime = mtime;
    std::uint64_t age = 0;
    if (w.max_mtime != w.min_mtime) age = 100 - (100 * (mtime - w.min_mtime)) / (w.max_mtime - w.min_mtime);
    return UINT_MAX - ((100 * (100 - u) * age) / (100 + u));
  }

  // get_victim_by_default() in LFS mode: a dirty section holding no active
  // log, of least cost (valid blocks for greedy, get_cb_cost() for
  // cost-benefit); ties go to the lowest section.
  std::uint32_t select_victim(GcPolicy policy) {
    SegView v{w};
    std::uint64_t best_cost = policy == GcPolicy::greedy ? 2ull * w.vol->geometry().blocks_per_sec() : UINT_MAX;
    std::uint32_t best = kNoSeg;
    // Candidates: the sections in the dirty segment list (some segment
    // holds valid blocks but is not full), ascending.
    for (std::uint32_t sec : w.sm.dirty_sections()) {
      if (v.is_cur_sec(sec) || sec == w.cur_victim_sec || tried.count(sec)) continue;
      const std::uint64_t cost = policy == GcPolicy::greedy ? sec_valid(sec) : cb_cost(sec);
      if (cost < best_cost) {
        best_cost = cost;
        best = sec;
      }
    }
    return best;
  }

  // do_garbage_collect(): every valid block of the section, checked alive
  // through its owner (is_alive(): the NAT for nodes, the dnode's pointer
  // for data). Data blocks are rewritten now to the cold data log
  // (move_data_page(), page_private_gcing -> CURSEG_COLD_DATA); node blocks
  // are dirtied and move with the next checkpoint's node writes
  // (f2fs_move_node_page()). Returns whether every valid block was handled.
  Result<bool> move_section(std::uint32_t sec) {
    w.cur_victim_sec = sec;
    std::vector<std::uint8_t> buf(kBlockSize);
    bool all = true;
    const Geometry& g = w.vol->geometry();
    const std::uint32_t first = g.first_seg_of_sec(sec);
    for (std::uint32_t s = first; s < first + g.segs_per_sec(); ++s) {
      if (w.sm.valid(s) == 0) continue;
      // The owners of the segment's blocks: its summary (the SSA, the CP
      // pack for an active log, or the one being built since the checkpoint).
      auto sum = w.sm.summary(*w.vol, s);
      if (!sum) return make_error(sum.error());
      const bool node_seg = w.sm.type(s) >= wr::kHotNode;
      for (std::uint32_t off = 0; off < kSeg; ++off) {
        if (!w.sm.is_valid(s, off)) continue;
        const Summary& se = sum->entries[off];
        const auto addr = static_cast<block_t>(g.segment_start(s) + off);
        const meta::BlockUse o{addr, se.nid.get(), se.ofs_in_node.get(), se.version, node_seg};
        if (o.node) {
          if (o.nid == 0 || o.nid >= w.max_nid || w.nm.get(o.nid).addr != o.blkaddr) {
            all = false;
            continue;
          }
          auto np = w.node(o.nid);
          if (!np) return make_error(np.error());
          w.mark_dirty(o.nid);
          ++w.stats.gc.node_blocks_moved;
          continue;
        }
        const nid_t dn = o.nid;
        if (dn == 0 || dn >= w.max_nid || w.nm.get(dn).addr == kNullAddr || o.ofs_in_node >= kDefAddrsPerBlock) {
          all = false;
          continue;
        }
        auto np = w.node(dn);
        if (!np) return make_error(np.error());
        const Node& n = **np;
        const nid_t ino = n.footer.ino.get();
        const std::uint32_t ofs = n.footer.flag.get() >> node_flag::offset_shift;
        std::uint64_t index = 0;
        block_t cur = kNullAddr;
        if (ofs == 0 && ino == dn) {
          if (w.extra_words(n) + o.ofs_in_node >= kDefAddrsPerInode) {  // a stale summary entry
            all = false;
            continue;
          }
          cur = n.i.i_addr[w.extra_words(n) + o.ofs_in_node].get();
          index = o.ofs_in_node;
        } else {
          auto ip = w.node(ino);
          if (!ip) return make_error(ip.error());
          const std::uint32_t api = w.addrs_per_inode(**ip);
          auto np2 = w.node(dn);
          if (!np2) return make_error(np2.error());
          cur = (*np2)->dn.addr[o.ofs_in_node].get();
          index = start_bidx_of_node(ofs, api) + o.ofs_in_node;
        }
        if (cur != o.blkaddr) {  // not alive: the summary entry is stale
          all = false;
          continue;
        }
        // The page as the file has it: a dirty cached page is newer than the
        // block (move_data_page() writes the page cache's page); writing it
        // leaves the page clean.
        F2FSCORE_TRY(w.read_file_block(ino, index, buf.data()));
        wr::WriteContext ctx;
        ctx.origin = wr::WriteContext::Origin::gc;
        w.gc_move_mtime = w.sm.mtime(s) ? w.sm.mtime(s) : 1;
        auto r = w.write_file_block(ino, index, buf.data(), wr::kColdData, ctx);
        w.gc_move_mtime = 0;
        if (!r) return make_error(r.error());
        ++w.stats.gc.data_blocks_moved;
      }
    }
    w.cur_victim_sec = kNoSeg;
    return all;
  }

  std::uint32_t prefree_segments() const {
    return static_cast<std::uint32_t>(w.sm.prefree(w.logs).size());
  }

  // f2fs_gc(): foreground until enough sections are free (and at least
  // `want` were reclaimed), or one background victim. Foreground ends with
  // a checkpoint, which frees the victims; returns how many it freed.
  Result<std::uint32_t> run(bool foreground, std::uint32_t want, bool forced) {
    w.in_gc = true;
    struct Reset {
      Writer::Impl& w;
      ~Reset() {
        w.in_gc = false;
        w.cur_victim_sec = kNoSeg;
      }
    } reset{w};
    // Segments emptied since the last checkpoint become free with the next
    // one: take it first when that is enough (f2fs_gc()'s BG_GC start).
    if (foreground && !forced && w.has_not_enough_free_secs(0, 0) && prefree_segments()) {
      F2FSCORE_TRY(w.checkpoint(false));
      if (!w.has_not_enough_free_secs(0, 0)) return 0u;
    }
    std::vector<std::uint32_t> victims;
    std::uint32_t sec_freed = 0, done = 0, freed = 0;
    // The checkpoint that commits the moves so far: their victims are free
    // after it (the writer reloads).
    auto commit = [&]() -> Status {
      F2FSCORE_TRY(w.checkpoint(false));
      SegView v{w};
      for (std::uint32_t sec : victims) freed += v.sec_free(sec);
      victims.clear();
      sec_freed = 0;
      return {};
    };
    const GcPolicy policy = foreground ? w.opts.gc.foreground_policy : w.opts.gc.background_policy;
    const std::uint64_t per_sec = w.vol->geometry().blocks_per_sec();
    for (;;) {
      if (foreground && !forced && done >= want && !w.has_not_enough_free_secs(sec_freed, 0)) break;
      if (forced && done >= want) break;
      // Moves need room and the moved victims are free only after a
      // checkpoint: take one when the free sections run out (f2fs_gc():
      // free_sections() < NR_CURSEG_PERSIST_TYPE with prefree segments),
      // here also keeping the sections the dirtied nodes need.
      if (foreground && !victims.empty() &&
          w.free_sections() <= kNrCursegType + (w.nm.dirty_pages() + per_sec - 1) / per_sec && prefree_segments())
        F2FSCORE_TRY(commit());
      std::uint32_t sec = select_victim(policy);
      // Foreground GC must make room: when cost-benefit sees no age
      // difference (every cost UINT_MAX) it falls back to greedy, the
      // kernel's only foreground policy.
      if (sec == kNoSeg && foreground && policy != GcPolicy::greedy) sec = select_victim(GcPolicy::greedy);
      if (sec == kNoSeg) break;
      ++w.stats.gc.victims;
      tried.insert(sec);
      auto r = move_section(sec);
      if (!r) return make_error(r.error());
      victims.push_back(sec);
      if (*r) {
        ++sec_freed;
        ++done;
      }
      if (!foreground) break;
    }
    if (foreground) ++w.stats.gc.foreground_runs;
    else ++w.stats.gc.background_runs;
    if (!foreground) return 0u;
    if (!victims.empty()) F2FSCORE_TRY(commit());
    w.stats.gc.sections_freed += freed;
    return freed;
  }
};

}  // namespace

Status Writer::Impl::balance_fs() {
  if (call_depth > 1 || in_gc || unmounted || opts.read_only) return {};
  const std::uint64_t t = now();
  if (opts.gc.background && t - std::min(t, last_call_time) >= opts.gc.idle_interval_s) {
    auto r = Gc{*this}.run(false, 1, false);
    if (!r) return make_error(r.error());
  }
  last_call_time = t;
  const std::uint64_t futile_key = (stats.checkpoints << 32) | free_sections();
  if (!has_not_enough_free_secs(0, 0) || gc_futile_at == futile_key) return {};
  const std::uint64_t victims = stats.gc.victims, cps = stats.checkpoints;
  auto r = Gc{*this}.run(true, 1, false);
  if (!r) return make_error(r.error());
  // Nothing to move and no checkpoint: the reserve cannot be restored now
  // (a small volume whose reserve is most of it); allocation goes on into
  // it, and GC is tried again once a section is taken or a checkpoint
  // changes the picture.
  if (stats.gc.victims == victims && stats.checkpoints == cps) gc_futile_at = futile_key;
  return {};
}

Result<std::uint32_t> Writer::Impl::gc_foreground(std::uint32_t sections) {
  if (in_gc) return 0u;
  return Gc{*this}.run(true, std::max<std::uint32_t>(1, sections), true);
}

Result<std::uint32_t> Writer::gc(std::uint32_t sections) {
  F2FSCORE_WRITER_LOCK(impl_);
  F2FSCORE_TRY(impl_->usable(true));
  return impl_->gc_foreground(sections);
}

}  // namespace f2fscore
