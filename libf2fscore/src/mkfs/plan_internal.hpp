// The format planner's rules that resize shares with mkfs.
#pragma once

#include <cstdint>

namespace f2fscore {

/// The overprovision percentage mkfs.f2fs 1.15 picks for a main area of
/// `segment_count_main` segments, `usable` of them usable, `segs_per_sec_avg`
/// segments a section (get_best_overprovision() in mkfs/f2fs_format.c: the
/// candidate leaving the most user space).
double best_overprovision(std::uint32_t segment_count_main, std::uint32_t usable, std::uint32_t segs_per_sec_avg);

}  // namespace f2fscore
