// (stats) The writer's space as the IPU, SSR and GC rules see it
// (Writer::space(), docs/stats.md).
#include "writer/writer_internal.hpp"

namespace f2fscore {

SpaceState Writer::space() const {
  F2FSCORE_WRITER_LOCK(impl_);
  const Impl& m = *impl_;
  SpaceState s;
  s.user_blocks = m.cp.user_block_count.get();
  // As the kernel's total_valid_block_count: blocks reserved for dirty
  // cached pages and nodes not yet written count from the moment they are
  // reserved (inc_valid_block_count(), inc_valid_node_count()).
  s.valid_blocks = m.valid_blocks + m.reserved_blocks + m.pending_new_nodes;
  s.segs_per_sec = m.segs_per_sec ? m.segs_per_sec : 1;
  s.main_sections = m.main_segs / s.segs_per_sec;
  s.reserved_sections = m.cp.rsvd_segment_count.get() / s.segs_per_sec;
  s.overprov_sections = m.cp.overprov_segment_count.get() / s.segs_per_sec;
  std::array<std::uint32_t, 6> log_secs{};
  for (std::size_t t = 0; t < 6; ++t) log_secs[t] = m.logs[t].segno / s.segs_per_sec;
  for (std::uint32_t sec = 0; sec < s.main_sections; ++sec) {
    bool active = false, all_free = true;
    std::uint64_t valid = 0;
    if (sec == log_secs[0] || sec == log_secs[1] || sec == log_secs[2] || sec == log_secs[3] || sec == log_secs[4] ||
        sec == log_secs[5])
      active = true;
    for (std::uint32_t k = 0; k < s.segs_per_sec && !active; ++k) {
      const std::uint32_t seg = sec * s.segs_per_sec + k;
      valid += m.sm.valid(seg);
      // Free in the kernel's sense: free at the last checkpoint and not
      // taken since (a segment emptied since then is prefree: dirty).
      all_free = all_free && m.sm.free_at_cp(seg) && m.sm.valid(seg) == 0;
    }
    if (active) continue;
    if (all_free) ++s.free_sections;
    else if (valid == static_cast<std::uint64_t>(s.segs_per_sec) * wr::kBlocksPerSeg) ++s.full_sections;
    else ++s.dirty_sections;
  }
  return s;
}

}  // namespace f2fscore
