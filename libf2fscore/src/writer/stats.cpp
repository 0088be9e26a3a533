// (stats) The writer's space as the IPU, SSR and GC rules see it
// (Writer::space(), docs/stats.md).
#include <algorithm>

#include "writer/writer_internal.hpp"

namespace f2fscore {

// f2fs_statfs() in fs/f2fs/super.c (6.1) with no reserved or unusable
// blocks: F2FS_RESERVED_NODE_NUM (3) nids are no inodes.
WriterStatfs Writer::statfs() const {
  F2FSCORE_WRITER_LOCK(impl_);
  const Impl& m = *impl_;
  WriterStatfs s;
  s.blocks = m.sb.block_count.get() - m.sb.segment0_blkaddr.get();
  const std::uint64_t user = m.cp.user_block_count.get();
  const std::uint64_t valid = m.valid_user_blocks();
  s.bfree = user > valid ? user - valid : 0;
  s.bavail = s.bfree;
  const std::uint64_t avail_nodes = m.max_nid > 3 ? m.max_nid - 3 : 0;
  const std::uint64_t nodes = m.sm.valid_node_blocks() + m.pending_new_nodes;
  if (avail_nodes > user) {
    s.files = user;
    s.ffree = s.bavail;
  } else {
    s.files = avail_nodes;
    s.ffree = std::min(avail_nodes > nodes ? avail_nodes - nodes : 0, s.bavail);
  }
  return s;
}

SpaceState Writer::space() const {
  F2FSCORE_WRITER_LOCK(impl_);
  const Impl& m = *impl_;
  SpaceState s;
  s.user_blocks = m.cp.user_block_count.get();
  // As the kernel's total_valid_block_count: blocks reserved for dirty
  // cached pages and nodes not yet written count from the moment they are
  // reserved (inc_valid_block_count(), inc_valid_node_count()).
  s.valid_blocks = m.valid_user_blocks();
  const disk::Geometry& g = m.vol->geometry();
  s.segs_per_sec = g.segs_per_sec();
  s.main_sections = g.main_sections();
  s.reserved_sections = m.reserved_sections();
  s.overprov_sections = m.cp.overprov_segment_count.get() / s.segs_per_sec;
  // Sections holding an active log count in none of the three; a section
  // is free when every segment is free at the last checkpoint and not taken
  // since (a segment emptied since then is prefree: dirty), which an active
  // log's never is (its segment is held).
  std::array<std::uint32_t, 6> log_secs{};
  std::uint32_t active = 0;
  for (std::size_t t = 0; t < 6; ++t) {
    log_secs[t] = g.sec_of_seg(m.sm.curseg(static_cast<std::uint8_t>(t)).segno);
    bool dup = log_secs[t] >= s.main_sections;
    for (std::size_t u = 0; u < t && !dup; ++u) dup = log_secs[u] == log_secs[t];
    active += !dup;
  }
  auto is_active = [&](std::uint32_t sec) {
    for (std::uint32_t l : log_secs)
      if (l == sec) return true;
    return false;
  };
  s.free_sections = m.sm.free_sections();
  s.full_sections = m.sm.full_sections(is_active);
  s.dirty_sections = s.main_sections - active - s.free_sections - s.full_sections;
  return s;
}

}  // namespace f2fscore
