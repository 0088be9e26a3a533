// Aligned buffers for direct I/O (private). std::aligned_alloc is C11's and
// the Windows C runtime lacks it (its _aligned_malloc needs _aligned_free),
// so every aligned buffer is taken and given back through these two.
#pragma once

#include <cstddef>
#include <cstdlib>
#if defined(_WIN32)
#include <malloc.h>
#endif
#if defined(__linux__)
#include <sys/mman.h>
#endif

namespace f2fscore::detail {

/// `n` bytes aligned to `align` (a power of two); `n` is rounded up to a
/// multiple of `align`. nullptr when out of memory. Free with aligned_free().
inline void* aligned_alloc_bytes(std::size_t align, std::size_t n) noexcept {
  const std::size_t rounded = (n + align - 1) / align * align;
#if defined(_WIN32)
  return ::_aligned_malloc(rounded == 0 ? align : rounded, align);
#else
  return std::aligned_alloc(align, rounded == 0 ? align : rounded);
#endif
}

/// A hint that [p, p + n), aligned to 2 MiB, is filled and reused as a
/// whole (the page cache's slabs): on Linux MADV_HUGEPAGE, so that
/// transparent huge pages in their "madvise" mode back it with one fault
/// per 2 MiB instead of 512; nothing elsewhere, and a refusal is ignored.
inline void advise_huge_pages(void* p, std::size_t n) noexcept {
#if defined(__linux__) && defined(MADV_HUGEPAGE)
  (void)::madvise(p, n, MADV_HUGEPAGE);
#else
  (void)p;
  (void)n;
#endif
}

/// Frees what aligned_alloc_bytes() returned (nullptr is ignored).
inline void aligned_free(void* p) noexcept {
#if defined(_WIN32)
  ::_aligned_free(p);
#else
  std::free(p);
#endif
}

}  // namespace f2fscore::detail
