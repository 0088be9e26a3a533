// The writer's segment manager (as fs/f2fs/segment.c's sm_i with sit_i,
// free_i and dirty_i): SIT valid counts, types and mtimes kept by SIT block
// (55 segments) and only for SIT blocks with an entry that is not zero,
// valid bitmaps only for segments partially valid, a free bit per segment,
// the checkpoint-valid map only for segments changed since the checkpoint,
// the summaries of segments written since the checkpoint, the six active
// logs (curseg_info) and block allocation from them (LFS/SSR), the GC
// victim section. The writer (writer/gc.cpp, writer/mount.cpp) calls it.
#pragma once

#include <array>
#include <cstdint>
#include <functional>
#include <memory>
#include <unordered_map>
#include <vector>

#include "f2fscore/disk/checkpoint.hpp"
#include "f2fscore/disk/sit.hpp"
#include "f2fscore/disk/summary.hpp"
#include "f2fscore/meta_rebuild.hpp"
#include "f2fscore/result.hpp"

namespace f2fscore {
class Volume;
class BlockDevice;
}  // namespace f2fscore

namespace f2fscore::wr {

/// A segment's valid map: 512 bits, MSB first (the SIT's valid_map order).
using SegBitmap = std::array<std::uint8_t, 64>;

/// One active log (curseg_info in fs/f2fs/segment.h): its main-area
/// segment, the offset of the block it hands out next, LFS (0) or SSR (1),
/// and whether it can be written on at that offset. The summary block being
/// filled is the segment's dirty summary (SegmentManager::dirty_summary()).
struct Curseg {
  std::uint32_t segno = 0xFFFFFFFFu;  ///< 0xFFFFFFFF: no segment
  std::uint16_t next_blkoff = 0;
  std::uint8_t alloc_type = 0;
  bool usable = false;
};

/// What the writer decides for allocate_segment_by_default() in
/// fs/f2fs/segment.c (Linux 6.1).
struct AllocRules {
  /// The log always takes a fresh LFS segment when full (the warm node log
  /// without CP_CRC_RECOVERY_FLAG: fsync chains continue in it).
  bool lfs_only = false;
  /// No dirty segment is reused (roll-forward in progress: the recovered
  /// blocks are in no checkpoint yet).
  bool no_ssr = false;
  /// f2fs_need_SSR(), asked only when a segment is opened; empty: false.
  std::function<bool()> need_ssr;
  /// Sections reaching segment `limit_segno` or past it get no new blocks
  /// (MountOptions::allocation_limit_segno: a shrink's cut); 0: no limit.
  std::uint32_t limit_segno = 0;
  /// Sections starting below segment `floor_segno` get no new blocks
  /// (MountOptions::allocation_floor_segno); 0: no floor.
  std::uint32_t floor_segno = 0;
};

class SegmentManager {
 public:
  static constexpr std::uint32_t kSeg = 512;

  /// Sizes the per-segment state for `main_segs` segments at `main_blk`
  /// and reads the SIT (current copy of each block, the SIT journal on
  /// top, as build_sit_entries() in fs/f2fs/segment.c), in batches of
  /// blocks. Blocks the device reports in a hole (BlockDevice::next_data())
  /// are not read: they hold zero entries (free segments, type 0, mtime 0),
  /// as do blocks read as all zero; neither costs memory. Errors: corrupt
  /// for a valid count over 512 or one that disagrees with its valid map
  /// (check_block_count()); io.
  /// `secs_per_zone`: the zone rule of allocation (get_new_segment()).
  /// The active logs are none until load_cursegs().
  Status load(Volume& vol, BlockDevice& dev, std::uint64_t main_blk, std::uint32_t main_segs, std::uint32_t segs_per_sec,
              std::uint32_t secs_per_zone = 1);

  // ---- Per-segment state (4 KiB blocks, main-area segment numbers) ----
  std::uint32_t main_segs() const noexcept { return main_segs_; }
  std::uint64_t main_blocks() const noexcept { return static_cast<std::uint64_t>(main_segs_) * kSeg; }
  std::uint16_t valid(std::uint32_t seg) const noexcept {
    const SegChunk* c = chunk_of(seg);
    return c ? c->valid[seg % kChunkSegs] : std::uint16_t{0};
  }
  /// The SIT type (0..5); 0 for a segment whose SIT entry is zero.
  std::uint8_t type(std::uint32_t seg) const noexcept {
    const SegChunk* c = chunk_of(seg);
    return c ? c->type[seg % kChunkSegs] : std::uint8_t{0};
  }
  void set_type(std::uint32_t seg, std::uint8_t t);
  /// The SIT mtime (seconds of mounted time, get_mtime()).
  std::uint64_t mtime(std::uint32_t seg) const noexcept {
    const SegChunk* c = chunk_of(seg);
    return c ? c->mtime[seg % kChunkSegs] : std::uint64_t{0};
  }
  void set_mtime(std::uint32_t seg, std::uint64_t t) { chunk(seg).mtime[seg % kChunkSegs] = t; }
  /// The lowest mean mtime of a section (init_min_max_mtime() in
  /// fs/f2fs/segment.c); 0 without a whole section.
  std::uint64_t min_section_mtime() const;
  /// Starts the clock of SIT mtimes (sit_i's elapsed_time and
  /// mounted_time): `elapsed_time` seconds (the checkpoint's) at `now`
  /// seconds of the caller's clock; min_mtime() and max_mtime() as
  /// init_min_max_mtime() sets them.
  void start_mtime(std::uint64_t elapsed_time, std::uint64_t now);
  /// get_mtime() in fs/f2fs/segment.h: the checkpoint's elapsed_time plus
  /// the seconds since start_mtime().
  std::uint64_t sit_mtime(std::uint64_t now) const noexcept {
    return mtime_base_ + (now >= clock_base_ ? now - clock_base_ : 0);
  }
  /// sit_i->min_mtime / max_mtime: the range cost-benefit GC ages by.
  std::uint64_t min_mtime() const noexcept { return min_mtime_; }
  std::uint64_t max_mtime() const noexcept { return max_mtime_; }
  /// Widens the range to take `t` (get_cb_cost() in fs/f2fs/gc.c).
  void note_mtime(std::uint64_t t) noexcept {
    if (t < min_mtime_) min_mtime_ = t;
    if (t > max_mtime_) max_mtime_ = t;
  }
  /// Calls f(seg) for every segment that may have valid blocks, a type or
  /// an mtime (every other one has a zero SIT entry), ascending.
  template <class F>
  void for_each_loaded(F f) const {
    for (std::size_t i = 0; i < chunks_.size(); ++i) {
      if (!chunks_[i]) continue;
      const auto first = static_cast<std::uint32_t>(i * kChunkSegs);
      for (std::uint32_t s = first; s < first + kChunkSegs && s < main_segs_; ++s) f(s);
    }
  }
  /// Free at the last checkpoint and not taken since (the kernel's free
  /// segmap with prefree segments kept out).
  bool free_at_cp(std::uint32_t seg) const noexcept { return free_[seg]; }
  void take(std::uint32_t seg);
  /// Keeps `seg` from allocation until the next checkpoint (active logs,
  /// blocks roll-forward recovered), without marking it changed.
  void hold(std::uint32_t seg);
  /// Segments free_at_cp().
  std::uint32_t free_segments() const noexcept { return free_count_; }

  // ---- Sections (free_i's free_secmap, dirty_i's dirty segmap) ----
  std::uint32_t segs_per_sec() const noexcept { return segs_per_sec_; }
  /// Whole sections of the main area (a trailing part section is never
  /// allocated).
  std::uint32_t main_sections() const noexcept { return main_segs_ / segs_per_sec_; }
  /// Whether every segment of section `sec` is free_at_cp() (the kernel's
  /// free_secmap bit clear). Active logs' segments are held, so their
  /// sections are never free.
  bool section_free(std::uint32_t sec) const { return sec < free_sec_.size() && free_sec_[sec]; }
  /// Sections section_free() (free_sections() in fs/f2fs/segment.h).
  std::uint32_t free_sections() const noexcept { return free_sec_count_; }
  /// The first free section after `sec`, wrapping round (ALLOC_RIGHT of
  /// get_new_segment() in fs/f2fs/segment.c); 0xFFFFFFFF: none.
  std::uint32_t next_free_section(std::uint32_t sec) const;
  /// Valid blocks of section `sec` (get_valid_blocks() with a section).
  std::uint32_t section_valid(std::uint32_t sec) const;
  /// Sections holding a segment neither empty nor full (the kernel's
  /// dirty_segmap[DIRTY] by section: GC victim candidates), ascending.
  std::vector<std::uint32_t> dirty_sections() const;
  /// Sections whose every segment is full, those `skip_sec` names aside.
  template <class SkipSec>
  std::uint32_t full_sections(SkipSec skip_sec) const {
    std::uint32_t n = 0, cur = 0xFFFFFFFFu, sum = 0;
    auto close = [&] {
      if (cur != 0xFFFFFFFFu && cur < main_sections() && sum == segs_per_sec_ * kSeg && !skip_sec(cur)) ++n;
    };
    for_each_loaded([&](std::uint32_t s) {
      const std::uint32_t sec = s / segs_per_sec_;
      if (sec != cur) {
        close();
        cur = sec;
        sum = 0;
      }
      sum += valid(s);
    });
    close();
    return n;
  }
  /// Segments with no valid block.
  std::uint32_t empty_segments() const noexcept { return empty_count_; }
  /// Segments with no valid block that were not free at the last
  /// checkpoint, the active logs' aside (the kernel's prefree segments),
  /// ascending.
  std::vector<std::uint32_t> prefree() const;
  /// Whether main-area block `off` of `seg` is valid now.
  bool is_valid(std::uint32_t seg, std::uint32_t off) const;
  /// Valid at the last checkpoint or allocated since (ckpt_valid_map):
  /// SSR never hands such a block out, the last checkpoint may reference it.
  bool ckpt_valid(std::uint32_t seg, std::uint32_t off) const;
  /// ckpt_valid_blocks of `seg`.
  std::uint16_t ckpt_valid_count(std::uint32_t seg) const;
  /// Marks a block allocated since the checkpoint in the checkpoint-valid map.
  void mark_ckpt_valid(std::uint32_t seg, std::uint32_t off);
  /// Sets / clears one block's valid bit (counts follow); false when it
  /// was already in that state.
  bool set_valid(std::uint32_t seg, std::uint32_t off);
  bool clear_valid(std::uint32_t seg, std::uint32_t off);
  /// The segment's valid map (all clear / all set for empty / full ones).
  SegBitmap bitmap(std::uint32_t seg) const;
  /// Segments changed since the checkpoint (SIT entry, blocks or type).
  bool changed(std::uint32_t seg) const { return changed_.count(seg) != 0; }
  void mark_changed(std::uint32_t seg);
  std::vector<std::uint32_t> changed_segments() const;
  /// Edits of the SIT state, the logs' positions or the segments' types
  /// since the manager was made (loading the logs' summaries is none): a
  /// value that moved since the last checkpoint means the next one has
  /// something to write.
  std::uint64_t edits() const noexcept { return edits_; }

  /// The first block at or after `from` that SSR may hand out: free now
  /// and not valid at the last checkpoint nor allocated since
  /// (__next_free_blkoff() in fs/f2fs/segment.c: cur_valid_map |
  /// ckpt_valid_map); 512 when none.
  std::uint32_t next_free_blkoff(std::uint32_t seg, std::uint32_t from) const;
  /// The segment SSR gives log `log_type` (get_ssr_segment() in
  /// fs/f2fs/segment.c, Linux 6.1): a segment of the log's own type first,
  /// then of the other types of its kind (node or data) — the warm and
  /// cold logs look towards hot from cold, the hot log towards cold; among
  /// them the one with the fewest checkpoint-valid blocks (get_gc_cost()
  /// with SSR: ckpt_valid_blocks), lowest number on ties; a segment with no
  /// valid block or none free is never chosen, nor one of a section
  /// `skip_sec` names (active logs, the GC victim). 0xFFFFFFFF: none.
  template <class SkipSec>
  std::uint32_t ssr_segment(std::uint8_t log_type, SkipSec skip_sec) const {
    std::uint8_t order[3];
    const std::uint8_t base = log_type >= 3 ? 3 : 0;
    const int rel = log_type - base;
    int n = 0;
    order[n++] = log_type;
    if (rel >= 1) {
      for (int r = 2; r >= 0; --r)
        if (r != rel) order[n++] = static_cast<std::uint8_t>(base + r);
    } else {
      for (int r = 0; r <= 2; ++r)
        if (r != rel) order[n++] = static_cast<std::uint8_t>(base + r);
    }
    for (int k = 0; k < n; ++k) {
      std::uint32_t best = 0xFFFFFFFFu, best_cost = kSeg;
      for_each_loaded([&](std::uint32_t s) {
        const std::uint16_t v = valid(s);
        if (type(s) != order[k] || v == 0 || v >= kSeg) return;
        if (skip_sec(s / segs_per_sec_)) return;
        const std::uint16_t c = ckpt_valid_count(s);
        if (c < best_cost) {
          best_cost = c;
          best = s;
        }
      });
      if (best != 0xFFFFFFFFu) return best;
    }
    return 0xFFFFFFFFu;
  }
  /// Log `type` moves to the first segment emptied since the checkpoint
  /// (prefree()), for a checkpoint that finds no free section: an ro image
  /// being built has no GC reserve, and the checkpoint that records the log
  /// there frees the segment (nothing is written to it before). LFS, offset
  /// 0. Errc::no_space when no segment is prefree.
  Status park_on_prefree(Volume& vol, std::uint8_t type);
  /// Segments with a valid map of their own (neither empty nor full).
  std::size_t partial_segments() const noexcept { return partial_.size(); }

  // ---- Active logs (curseg_info) and allocation ----
  static constexpr std::uint32_t kNoSeg = 0xFFFFFFFFu;
  /// The six logs as checkpoint `cp` records them (cur_data_segno /
  /// cur_data_blkoff / alloc_type, then the node ones), hot data first.
  /// A log is usable when its segment is in the main area and its next
  /// block free and, for an LFS log, every block after it (as
  /// sanity_check_curseg() in fs/f2fs/segment.c demands); else its first
  /// write opens a new segment. The logs' segments are held (hold()).
  void load_cursegs(const disk::Checkpoint& cp);
  const Curseg& curseg(std::uint8_t type) const { return cursegs_[type]; }
  Curseg& curseg(std::uint8_t type) { return cursegs_[type]; }
  /// The logs' positions, for the checkpoint pack.
  std::array<meta::LogPosition, 6> curseg_positions() const;
  /// Whether log `type` can go on at its position: the rule of
  /// load_cursegs(), its usable flag aside.
  bool curseg_writable(std::uint8_t type) const;
  /// Every log opens a new segment on its next write (roll-forward:
  /// f2fs_allocate_new_segments()).
  void close_cursegs();
  /// Whether segment `seg` / section `sec` holds an active log.
  bool is_cur_seg(std::uint32_t seg) const;
  bool is_cur_sec(std::uint32_t sec) const;
  /// The section GC is moving (never an SSR target); kNoSeg: none.
  std::uint32_t victim_sec() const noexcept { return victim_sec_; }
  void set_victim_sec(std::uint32_t sec) noexcept { victim_sec_ = sec; }

  /// Opens a new segment for log `type` as allocate_segment_by_default()
  /// and new_curseg() / change_curseg() in fs/f2fs/segment.c (6.1) do: the
  /// log's next segment when in its section and free (an LFS log stays in
  /// its section), unless `lfs_only`; under need_ssr() a dirty segment
  /// (ssr_segment(), the active logs' and the victim's sections skipped),
  /// the log then at its first free block (next_free_blkoff()); else the
  /// first wholly free section after the log's, wrapping round
  /// (get_new_segment() with ALLOC_RIGHT), skipping with several sections a
  /// zone a zone another log is in; with no free section, a dirty segment
  /// unless `no_ssr`. A free segment taken starts a blank summary, an SSR
  /// one keeps its summary. Errors: no_space naming the log when neither
  /// is left (the log is then not usable); io reading a summary.
  Status new_segment(Volume& vol, std::uint8_t type, const AllocRules& rules);
  /// The block log `type` hands out next (NEXT_FREE_BLKADDR), opening a
  /// segment when the log has none (new_segment()'s errors).
  Result<disk::block_t> next_block(Volume& vol, std::uint8_t type, const AllocRules& rules);
  /// f2fs_allocate_data_block(): the log's next block, marked in the
  /// checkpoint-valid map, the segment's mtime moved to the mean with
  /// `old_mtime` (a GC move keeping its old segment's time) or else `ctime`
  /// (sit_mtime() now), max_mtime() raised to `ctime`
  /// (update_segment_mtime()); the log moves on (LFS: the
  /// next block, SSR: the next free one by next_free_blkoff()) and a full
  /// log opens its next segment at once, so that the next block is known
  /// (a failure there is left for the next call). The block's valid bit is
  /// the caller's to set. Errors: next_block()'s.
  Result<disk::block_t> allocate_block(Volume& vol, std::uint8_t type, const AllocRules& rules, std::uint64_t ctime,
                                       std::uint64_t old_mtime = 0);
  /// Segments opened, blocks given by LFS and by SSR since load().
  struct AllocCounts {
    std::uint64_t segments = 0, lfs_blocks = 0, ssr_blocks = 0;
  };
  const AllocCounts& alloc_counts() const noexcept { return counts_; }

  // ---- Summaries ----
  /// The summary block being built for `seg` (written by the next
  /// checkpoint): read from the SSA (or the CP pack for active logs) the
  /// first time, or a blank one for a segment taken free (`fresh`).
  Result<disk::SummaryBlock*> dirty_summary(Volume& vol, std::uint32_t seg, bool fresh);
  /// The summary of `seg` as it stands: the dirty one, else read.
  Result<disk::SummaryBlock> summary(Volume& vol, std::uint32_t seg) const;
  const disk::SummaryBlock* find_dirty_summary(std::uint32_t seg) const;

  /// Replaces the SIT state by `blocks` (every valid main-area block, as a
  /// walk of the tree finds them): every segment holding one or valid in
  /// the SIT is changed, with a summary made of `blocks`, so that the next
  /// checkpoint writes the truth. For volumes whose checkpoint and SIT
  /// disagree.
  void reset_to(const std::vector<meta::BlockUse>& blocks);

  /// After a checkpoint committed the state: the checkpoint-valid maps and
  /// the change sets start over, segments with no valid block become free
  /// but for the active logs' (held).
  void committed();

  /// Σ valid counts.
  std::uint64_t valid_blocks() const noexcept { return total_valid_; }
  /// Σ valid counts of node-typed segments (valid_node_count).
  std::uint64_t valid_node_blocks() const noexcept { return total_node_; }
  /// Bytes held (for tests and reports).
  std::size_t memory_bytes() const;

 private:
  /// The SIT state of the segments of one SIT block.
  static constexpr std::uint32_t kChunkSegs = disk::kSitEntryPerBlock;
  struct SegChunk {
    std::array<std::uint64_t, kChunkSegs> mtime{};
    std::array<std::uint16_t, kChunkSegs> valid{};
    std::array<std::uint8_t, kChunkSegs> type{};
  };
  const SegChunk* chunk_of(std::uint32_t seg) const noexcept { return chunks_[seg / kChunkSegs].get(); }
  SegChunk& chunk(std::uint32_t seg);
  void ensure_ckpt_entry(std::uint32_t seg);
  std::uint32_t main_segs_ = 0, segs_per_sec_ = 1;
  std::uint64_t main_blk_ = 0;
  /// One per SIT block; null while every entry of the block is zero.
  std::vector<std::unique_ptr<SegChunk>> chunks_;
  std::vector<bool> free_;
  /// Per whole section: every segment free_[].
  std::vector<bool> free_sec_;
  std::uint32_t free_sec_count_ = 0;
  void reset_free();
  std::uint64_t total_valid_ = 0, total_node_ = 0;
  std::uint32_t free_count_ = 0, empty_count_ = 0;
  /// Segments kept from allocation without a change (hold()).
  std::vector<std::uint32_t> held_;
  void set_free(std::uint32_t seg, bool f);
  /// Valid maps of segments neither empty nor full.
  std::unordered_map<std::uint32_t, SegBitmap> partial_;
  struct CkptSeg {
    SegBitmap map{};
    std::uint16_t count = 0;
  };
  /// Segments changed since the checkpoint, with their checkpoint-valid map.
  std::unordered_map<std::uint32_t, CkptSeg> changed_;
  std::uint64_t edits_ = 0;
  std::unordered_map<std::uint32_t, std::unique_ptr<disk::SummaryBlock>> dirty_sum_;
  std::uint32_t secs_per_zone_ = 1;
  std::array<Curseg, 6> cursegs_{};
  std::uint32_t victim_sec_ = kNoSeg;
  AllocCounts counts_;
  std::uint64_t mtime_base_ = 0, clock_base_ = 0, min_mtime_ = 0, max_mtime_ = 0;
  /// The first free section from `start` on that get_new_segment() takes.
  std::uint32_t new_section(std::uint8_t type, std::uint32_t start, std::uint32_t limit_segno,
                            std::uint32_t floor_segno = 0) const;
};

}  // namespace f2fscore::wr
