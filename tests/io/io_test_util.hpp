// Helpers for the I/O pipeline tests: a scriptable clock, aligned buffers,
// a request loop that keeps N requests in flight.
#pragma once

#include <cstdint>
#include <cstdlib>
#include <cstring>
#if defined(_WIN32)
#include <malloc.h>
#endif
#include <memory>
#include <vector>

#include "f2fscore/device.hpp"
#include "f2fscore/iostat.hpp"

namespace iotest {

/// A clock that only moves when told to, and counts its reads.
struct FakeClock {
  std::uint64_t t = 1000;
  std::uint64_t reads = 0;
  static std::uint64_t now(void* c) noexcept {
    auto* f = static_cast<FakeClock*>(c);
    ++f->reads;
    return f->t;
  }
  f2fscore::IostatClock clock() noexcept { return {&FakeClock::now, this}; }
};

/// Aligned, zeroed memory.
struct AlignedBuf {
  explicit AlignedBuf(std::size_t n, std::size_t align = 4096)
#if defined(_WIN32)  // no aligned_alloc in the Windows C runtime
      : size(n), p(static_cast<std::uint8_t*>(::_aligned_malloc((n + align - 1) / align * align, align))) {
#else
      : size(n), p(static_cast<std::uint8_t*>(std::aligned_alloc(align, (n + align - 1) / align * align))) {
#endif
    std::memset(p, 0, n);
  }
#if defined(_WIN32)
  ~AlignedBuf() { ::_aligned_free(p); }
#else
  ~AlignedBuf() { std::free(p); }
#endif
  AlignedBuf(const AlignedBuf&) = delete;
  AlignedBuf& operator=(const AlignedBuf&) = delete;
  std::uint8_t* data() { return p; }
  std::size_t size;
  std::uint8_t* p;
};

inline void fill_pattern(std::uint8_t* p, std::size_t n, std::uint64_t seed) {
  for (std::size_t i = 0; i < n; ++i) p[i] = static_cast<std::uint8_t>((seed * 131 + i * 7 + (i >> 9)) & 0xff);
}

/// Keeps `depth` requests in flight until `total` completed; each
/// completion resubmits its request at a pseudo-random block. No
/// allocation after construction.
struct Loop {
  f2fscore::BlockDevice* dev = nullptr;
  std::uint64_t blocks = 0;  // region in units of `len`
  std::uint64_t rng = 0x9E3779B97F4A7C15ull;
  std::uint64_t left = 0;
  std::uint64_t done = 0;
  std::uint64_t errors = 0;
  std::vector<f2fscore::IoRequest> reqs;
  std::unique_ptr<AlignedBuf> buf;
  std::uint32_t len = 4096;

  Loop(f2fscore::BlockDevice& d, std::uint32_t depth, f2fscore::IoOp op, std::uint64_t region_bytes,
       std::uint32_t length = 4096, std::uint16_t tag = 0)
      : dev(&d), blocks(region_bytes / length), reqs(depth), buf(new AlignedBuf(std::size_t{length} * depth)),
        len(length) {
    fill_pattern(buf->data(), buf->size, 7);
    for (std::uint32_t i = 0; i < depth; ++i) {
      auto& r = reqs[i];
      r.op = op;
      r.tag = tag;
      r.length = length;
      r.buf = buf->data() + std::size_t{length} * i;
      r.on_complete = &Loop::on_done;
      r.user = this;
    }
  }

  std::uint64_t next() noexcept {
    rng ^= rng << 13;
    rng ^= rng >> 7;
    rng ^= rng << 17;
    return (rng % blocks) * len;
  }

  static void on_done(f2fscore::IoRequest& r) noexcept {
    auto& l = *static_cast<Loop*>(r.user);
    ++l.done;
    if (!r.ok() || r.transferred != r.length) ++l.errors;
    if (l.left == 0) return;
    --l.left;
    r.offset = l.next();
    l.dev->submit(r);
  }

  /// Runs `total` requests and waits for all of them.
  void run(std::uint64_t total) {
    left = total;
    const std::uint64_t target = done + total;
    for (auto& r : reqs) {
      if (left == 0) break;
      --left;
      r.offset = next();
      dev->submit(r);
    }
    while (done < target) dev->poll(true);
  }
};

}  // namespace iotest
