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

#include "f2fscore/iostat.hpp"
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
std::uint64_t Writer::Impl::get_mtime() const { return sm.sit_mtime(now()); }

void Writer::Impl::gc_load() {
  sm.start_mtime(cp.elapsed_time.get(), now());
  sm.set_victim_sec(kNoSeg);
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
  const std::uint64_t free = static_cast<std::uint64_t>(free_sections()) + freed;
  // Called for every block a write dirties: first a bound without
  // divisions. The sections asked below are at most
  // (node_total + dirty data) / per_sec + 2 + reserved + needed, and the
  // reserved sections' blocks at most rsvd_segment_count's.
  if (free > std::uint64_t{needed} + 2 &&
      (free - needed - 2) * per_sec > node_total + dirty_pages(0) + std::uint64_t{cp.rsvd_segment_count.get()} * kSeg)
    return false;
  const std::uint64_t node_secs = node_total / per_sec, node_blocks = node_total % per_sec;
  // Ours: the page cache holds dirty data the kernel would have balanced
  // page by page; its sections are needed too.
  const std::uint64_t data_secs = (dirty_pages(0) + per_sec - 1) / per_sec;
  const std::uint64_t need_lower = node_secs + data_secs + reserved_sections() + needed;
  const std::uint64_t need_upper = need_lower + (node_blocks ? 1 : 0);
  if (free > need_upper) return false;
  if (free <= need_lower) return true;
  // has_curseg_enough_space(): the rest fits each node log's segment.
  for (std::uint8_t t = wr::kHotNode; t <= wr::kColdNode; ++t) {
    const wr::Curseg& l = sm.curseg(t);
    const std::uint64_t left = l.segno < sm.main_segs() ? kSeg - sm.ckpt_valid_count(l.segno) : 0;
    if (!l.usable || node_blocks > left) return true;
  }
  return false;
}

Status Writer::Impl::check_space(std::uint64_t blocks) const {
  if (valid_user_blocks() + blocks > cp.user_block_count.get())
    return make_error(Errc::no_space, fmt("writer: every user block is in use (%llu of user_block_count %llu)",
                                          valid_user_blocks(), cp.user_block_count.get()));
  return {};
}

// ---- Allocation -------------------------------------------------------------------

// The segment manager allocates (writer/segment_manager.cpp); the writer
// gives the rules that depend on its state.
wr::AllocRules Writer::Impl::alloc_rules(std::uint8_t type) const {
  wr::AllocRules r;
  r.lfs_only = type == wr::kWarmNode && !(cp.ckpt_flags.get() & cp_flag::crc_recovery);
  // Not while rolling forward: the fsync chain's blocks are in no
  // checkpoint yet and must survive until the recovery's checkpoint.
  // Nor on an ro image being built: the segments' summaries live in no SSA.
  r.no_ssr = fsync_recovering || ro_image;
  r.need_ssr = [this] { return need_ssr(); };
  r.limit_segno = opts.allocation_limit_segno;
  r.floor_segno = opts.allocation_floor_segno;
  return r;
}

namespace {
// A no_space from the segment manager's allocation, with what the writer
// holds (the reserve, dirty node and data pages); other errors as they are.
tl::unexpected<Error> alloc_failure(const Writer::Impl& w, const Error& e) {
  if (e.code != Errc::no_space) return tl::unexpected<Error>(e);
  return make_error(Errc::no_space, e.message + fmt(" (reserved %llu, dirty nodes %llu, dirty pages %llu)",
                                                   w.reserved_sections(), w.nm.dirty_pages(), w.dirty_pages(0)));
}
}  // namespace

Status Writer::Impl::new_segment(std::uint8_t type) {
  type = log_for(type);
  const std::uint64_t n0 = sm.alloc_counts().segments;
  auto r = sm.new_segment(*vol, type, alloc_rules(type));
  stats.segments_allocated += sm.alloc_counts().segments - n0;
  if (!r) return alloc_failure(*this, r.error());
  return r;
}

Result<block_t> Writer::Impl::next_block(std::uint8_t type) {
  type = log_for(type);
  const std::uint64_t n0 = sm.alloc_counts().segments;
  auto a = sm.next_block(*vol, type, alloc_rules(type));
  stats.segments_allocated += sm.alloc_counts().segments - n0;
  if (!a) return alloc_failure(*this, a.error());
  return a;
}

// update_segment_mtime(): a GC move keeps its old segment's time.
Result<block_t> Writer::Impl::allocate_block(std::uint8_t type) {
  type = log_for(type);
  const wr::SegmentManager::AllocCounts c0 = sm.alloc_counts();
  auto a = sm.allocate_block(*vol, type, alloc_rules(type), get_mtime(), gc_move_mtime);
  const wr::SegmentManager::AllocCounts& c = sm.alloc_counts();
  stats.segments_allocated += c.segments - c0.segments;
  stats.gc.ssr_blocks += c.ssr_blocks - c0.ssr_blocks;
  stats.gc.lfs_blocks += c.lfs_blocks - c0.lfs_blocks;
  if (!a) return alloc_failure(*this, a.error());
  return a;
}

// ---- Garbage collection ------------------------------------------------------------

namespace {

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
    w.sm.note_mtime(mtime);
    const std::uint64_t lo = w.sm.min_mtime(), hi = w.sm.max_mtime();
    std::uint64_t age = 0;
    if (hi != lo) age = 100 - (100 * (mtime - lo)) / (hi - lo);
    return UINT_MAX - ((100 * (100 - u) * age) / (100 + u));
  }

  // get_victim_by_default() in LFS mode: a dirty section holding no active
  // log, of least cost (valid blocks for greedy, get_cb_cost() for
  // cost-benefit); ties go to the lowest section.
  std::uint32_t select_victim(GcPolicy policy) {
    std::uint64_t best_cost = policy == GcPolicy::greedy ? 2ull * w.vol->geometry().blocks_per_sec() : UINT_MAX;
    std::uint32_t best = kNoSeg;
    // Candidates: the sections in the dirty segment list (some segment
    // holds valid blocks but is not full), ascending.
    for (std::uint32_t sec : w.sm.dirty_sections()) {
      if (w.sm.is_cur_sec(sec) || sec == w.sm.victim_sec() || tried.count(sec)) continue;
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
    w.sm.set_victim_sec(sec);
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
          index = disk::start_bidx_of_node(ofs, api, w.addrs_per_block(**ip)) + o.ofs_in_node;
        }
        if (cur != o.blkaddr) {  // not alive: the summary entry is stale
          all = false;
          continue;
        }
        wr::WriteContext ctx;
        ctx.origin = wr::WriteContext::Origin::gc;
        auto ip = w.node(ino);
        if (!ip) return make_error(ip.error());
        if (Writer::Impl::compressed(**ip)) {
          // A compressed file's block moves as it is on the device, whatever
          // the page cache holds (move_data_block(): f2fs_post_read_required()).
          if (!w.io_batch().idle()) F2FSCORE_TRY(w.io_batch().drain());
          F2FSCORE_TRY(read_at(w.dev, static_cast<std::uint64_t>(o.blkaddr) * kBlockSize, std::span<std::uint8_t>(buf),
                               io_tag(IostatType::fs_gdata_read_io)));
          w.gc_move_mtime = w.sm.mtime(s) ? w.sm.mtime(s) : 1;
          ctx.no_ipu = true;
          auto a = w.place_file_block(ino, index, wr::kColdData, ctx);
          w.gc_move_mtime = 0;
          if (!a) return make_error(a.error());
          F2FSCORE_TRY(w.io_batch().add(*a, buf.data(), wr::data_write_tag(ctx)));
          F2FSCORE_TRY(w.io_batch().drain());
          ++w.stats.gc.data_blocks_moved;
          continue;
        }
        // The page as the file has it: a dirty cached page is newer than the
        // block (move_data_page() writes the page cache's page); writing it
        // leaves the page clean.
        F2FSCORE_TRY(w.read_file_block(ino, index, buf.data()));
        w.gc_move_mtime = w.sm.mtime(s) ? w.sm.mtime(s) : 1;
        auto r = w.write_file_block(ino, index, buf.data(), wr::kColdData, ctx);
        w.gc_move_mtime = 0;
        if (!r) return make_error(r.error());
        ++w.stats.gc.data_blocks_moved;
      }
    }
    w.sm.set_victim_sec(kNoSeg);
    return all;
  }

  std::uint32_t prefree_segments() const {
    return static_cast<std::uint32_t>(w.sm.prefree().size());
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
        w.sm.set_victim_sec(wr::SegmentManager::kNoSeg);
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
      for (std::uint32_t sec : victims) freed += !w.sm.is_cur_sec(sec) && w.sm.section_free(sec);
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
  // An ro image has no reserve to restore and no SSA for GC to read.
  if (call_depth > 1 || in_gc || unmounted || opts.read_only || ro_image) return {};
  if (opts.gc.background) {
    const std::uint64_t t = now();
    if (t - std::min(t, last_call_time) >= opts.gc.idle_interval_s) {
      auto r = Gc{*this}.run(false, 1, false);
      if (!r) return make_error(r.error());
    }
    last_call_time = t;
  }
  if (!has_not_enough_free_secs(0, 0)) return {};
  const std::uint64_t futile_key = (stats.checkpoints << 32) | free_sections();
  if (gc_futile_at == futile_key) return {};
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
  if (in_gc || ro_image) return 0u;
  return Gc{*this}.run(true, std::max<std::uint32_t>(1, sections), true);
}

// Moves the valid blocks of the sections [sec_from, sec_to) elsewhere (the
// allocation limits keep new blocks out of them): the logs in the range move
// on at once, then up to four rounds of GC over its sections, each ended by
// a checkpoint. Returns the valid blocks left in segments [seg_from, seg_to).
Result<std::uint64_t> Writer::Impl::evacuate_sections(std::uint32_t sec_from, std::uint32_t sec_to, std::uint32_t seg_from,
                                                      std::uint32_t seg_to) {
  const Geometry& g = vol->geometry();
  auto left = [&] {
    std::uint64_t n = 0;
    for (std::uint32_t s = seg_from; s < seg_to; ++s) n += sm.valid(s);
    return n;
  };
  for (std::uint8_t t = 0; t < kNrCursegType; ++t) {
    const std::uint32_t seg = sm.curseg(t).segno;
    if (seg < sm.main_segs() && g.sec_of_seg(seg) >= sec_from && g.sec_of_seg(seg) < sec_to) F2FSCORE_TRY(new_segment(t));
  }
  for (int round = 0; round < 4 && left(); ++round) {
    Gc gc{*this};
    in_gc = true;
    for (std::uint32_t sec = sec_from; sec < sec_to; ++sec) {
      if (sm.section_valid(sec) == 0) continue;
      auto r = gc.move_section(sec);
      if (!r) {
        in_gc = false;
        sm.set_victim_sec(kNoSeg);
        return make_error(r.error());
      }
      ++stats.gc.victims;
    }
    in_gc = false;
    sm.set_victim_sec(kNoSeg);
    F2FSCORE_TRY(checkpoint(false));
  }
  return left();
}

Result<std::uint64_t> Writer::Impl::evacuate(std::uint32_t first) {
  const Geometry& g = vol->geometry();
  const std::uint32_t nsegs = sm.main_segs();
  if (first >= nsegs) return make_error(Errc::invalid_argument, fmt("segment %llu is past the main area", first));
  opts.allocation_limit_segno = first;
  return evacuate_sections(g.sec_of_seg(first), g.main_sections(), first, nsegs);
}

Result<std::uint64_t> Writer::Impl::evacuate_front(std::uint32_t end) {
  const Geometry& g = vol->geometry();
  const std::uint32_t nsegs = sm.main_segs();
  const std::uint32_t sps = g.segs_per_sec();
  if (end >= nsegs) return make_error(Errc::invalid_argument, fmt("segment %llu is past the main area", end));
  const std::uint32_t end_sec = (end + sps - 1) / sps;
  opts.allocation_floor_segno = end_sec * sps;
  return evacuate_sections(0, end_sec, 0, end_sec * sps);
}

Result<std::uint64_t> Writer::evacuate_front(std::uint32_t end_segno) {
  F2FSCORE_WRITER_LOCK(impl_);
  F2FSCORE_TRY(impl_->usable(true));
  return impl_->evacuate_front(end_segno);
}

Result<std::uint64_t> Writer::evacuate(std::uint32_t first_segno) {
  F2FSCORE_WRITER_LOCK(impl_);
  F2FSCORE_TRY(impl_->usable(true));
  return impl_->evacuate(first_segno);
}

Result<std::uint32_t> Writer::gc(std::uint32_t sections) {
  F2FSCORE_WRITER_LOCK(impl_);
  F2FSCORE_TRY(impl_->usable(true));
  return impl_->gc_foreground(sections);
}

}  // namespace f2fscore
