// Zero blocks of extracted data stay holes in both extraction back ends
// (extract.cpp, extract_win32.cpp): what is written is the runs of blocks
// that hold a non-zero byte.
#pragma once

#include <algorithm>
#include <cstddef>
#include <cstdint>

#include "f2fscore/disk/constants.hpp"
#include "f2fscore/result.hpp"

namespace f2fscore::host_detail {

inline bool all_zero(const std::uint8_t* p, std::size_t n) {
  return std::all_of(p, p + n, [](std::uint8_t b) { return b == 0; });
}

/// Calls `write(start, length)` (byte offsets into `p`) for each run of
/// 4 KiB blocks of [p, p + n) that holds a non-zero byte, in order; the last
/// block may be short. Stops at the first error `write` returns.
template <typename Write>
Status for_each_nonzero_run(const std::uint8_t* p, std::size_t n, Write&& write) {
  std::size_t k = 0;
  while (k < n) {
    const std::size_t len = std::min<std::size_t>(disk::kBlockSize, n - k);
    if (all_zero(p + k, len)) {
      k += len;
      continue;
    }
    std::size_t end = k + len;
    while (end < n && !all_zero(p + end, std::min<std::size_t>(disk::kBlockSize, n - end)))
      end += std::min<std::size_t>(disk::kBlockSize, n - end);
    F2FSCORE_TRY(write(k, end - k));
    k = end;
  }
  return {};
}

}  // namespace f2fscore::host_detail
