// The gate, proven: with iostat off, a request costs no heap allocation
// and no clock read, at queue depth 1 and 32, on every backend. This binary
// replaces the global operator new/delete with counting versions (so it is
// a separate executable), and injects a counting clock into iostat.
#include <gtest/gtest.h>

#include <atomic>
#include <cstdlib>
#include <new>

#include "f2fscore/iostat.hpp"
#include "f2fscore/uring_device.hpp"
#include "io/io_test_util.hpp"
#include "support/test_support.hpp"

namespace {
std::atomic<bool> g_counting{false};
std::atomic<std::uint64_t> g_allocs{0};

void* counted_alloc(std::size_t n, std::size_t align) {
  if (g_counting.load(std::memory_order_relaxed)) g_allocs.fetch_add(1, std::memory_order_relaxed);
  if (n == 0) n = 1;
  void* p = align > alignof(std::max_align_t) ? std::aligned_alloc(align, (n + align - 1) / align * align)
                                              : std::malloc(n);
  if (p == nullptr) throw std::bad_alloc();
  return p;
}
}  // namespace

void* operator new(std::size_t n) { return counted_alloc(n, 0); }
void* operator new[](std::size_t n) { return counted_alloc(n, 0); }
void* operator new(std::size_t n, std::align_val_t a) { return counted_alloc(n, static_cast<std::size_t>(a)); }
void* operator new[](std::size_t n, std::align_val_t a) { return counted_alloc(n, static_cast<std::size_t>(a)); }
void* operator new(std::size_t n, const std::nothrow_t&) noexcept {
  try {
    return counted_alloc(n, 0);
  } catch (...) {
    return nullptr;
  }
}
void operator delete(void* p) noexcept { std::free(p); }
void operator delete[](void* p) noexcept { std::free(p); }
void operator delete(void* p, std::size_t) noexcept { std::free(p); }
void operator delete[](void* p, std::size_t) noexcept { std::free(p); }
void operator delete(void* p, std::align_val_t) noexcept { std::free(p); }
void operator delete[](void* p, std::align_val_t) noexcept { std::free(p); }
void operator delete(void* p, std::size_t, std::align_val_t) noexcept { std::free(p); }
void operator delete[](void* p, std::size_t, std::align_val_t) noexcept { std::free(p); }

using namespace f2fscore;

namespace {

struct Counts {
  std::uint64_t allocs;
  std::uint64_t clock_reads;
};

// Runs `n` requests at `depth` through an IostatDevice over `inner` and
// returns what the measured part allocated and how often it read the clock.
Counts measure(std::unique_ptr<BlockDevice> inner, std::uint32_t depth, IoOp op, bool iostat_on,
               std::uint64_t n = 2000) {
  iotest::FakeClock clk;
  Iostat stats(clk.clock());
  stats.set_enabled(iostat_on);
  IostatDevice dev(std::move(inner), stats);
  const std::uint64_t region = std::min<std::uint64_t>(dev.info().size_bytes, 4 << 20);
  iotest::Loop loop(dev, depth, op, region, 4096, io_tag(IostatType::fs_data_io));
  loop.run(2 * depth + 500);  // warm up: the memory device allocates its chunks on first write
  EXPECT_EQ(loop.errors, 0u);
  const std::uint64_t reads0 = clk.reads;
  g_allocs = 0;
  g_counting = true;
  loop.run(n);
  g_counting = false;
  EXPECT_EQ(loop.errors, 0u);
  return {g_allocs.load(), clk.reads - reads0};
}

std::unique_ptr<BlockDevice> open_file(const std::string& path, Backend b) {
  OpenOptions oo;
  oo.direct = true;
  BackendOptions bo;
  bo.backend = b;
  bo.queue_depth = 32;
  auto r = open_device(path, oo, bo);
  EXPECT_TRUE(r) << r.error().to_string();
  if (!r) return nullptr;
  EXPECT_EQ(r->backend, b);
  return std::move(r->device);
}

class Gate : public ::testing::TestWithParam<std::tuple<Backend, std::uint32_t, IoOp>> {
 protected:
  void SetUp() override {
    const auto b = std::get<0>(GetParam());
    if ((b == Backend::uring || b == Backend::liburing) && !uring_compiled()) GTEST_SKIP() << "built without io_uring";
    path_ = (tmp_ / "gate.img").string();
    f2fstest::make_sparse_file(path_, 8 << 20);
  }
  std::unique_ptr<BlockDevice> device() {
    const auto b = std::get<0>(GetParam());
    if (b == Backend::automatic) return make_memory_device(8 << 20, 4096);  // "memory" in this suite
    return open_file(path_, b);
  }
  f2fstest::TempDir tmp_;
  std::string path_;
};

}  // namespace

TEST_P(Gate, OffMeansNoAllocationAndNoClockRead) {
  const auto [b, depth, op] = GetParam();
  auto dev = device();
  ASSERT_TRUE(dev);
  const Counts c = measure(std::move(dev), depth, op, false);
  EXPECT_EQ(c.allocs, 0u) << "heap allocations in 2000 requests with iostat off";
  EXPECT_EQ(c.clock_reads, 0u) << "clock reads in 2000 requests with iostat off";
}

TEST_P(Gate, OnMeansOneClockReadPerCompletionAndStillNoAllocation) {
  const auto [b, depth, op] = GetParam();
  auto dev = device();
  ASSERT_TRUE(dev);
  const Counts c = measure(std::move(dev), depth, op, true);
  EXPECT_EQ(c.allocs, 0u) << "the request carries the iostat context: nothing to allocate";
  // A completion stamp per request, and a submit stamp for the `depth`
  // requests the loop submits outside a callback; the ones its callbacks
  // resubmit take their completion's stamp (the rule in iostat.hpp).
  EXPECT_EQ(c.clock_reads, 2000u + depth) << "one clock read per completion, none per resubmission";
}

INSTANTIATE_TEST_SUITE_P(
    AllocGate, Gate,
    ::testing::Combine(::testing::Values(Backend::uring, Backend::liburing, Backend::posix, Backend::automatic),
                       ::testing::Values(1u, 32u), ::testing::Values(IoOp::read, IoOp::write)),
    [](const auto& i) {
      const auto b = std::get<0>(i.param);
      return std::string(b == Backend::uring      ? "uring"
                         : b == Backend::liburing ? "liburing"
                         : b == Backend::posix    ? "posix"
                                                  : "memory") +
             "_qd" +
             std::to_string(std::get<1>(i.param)) + (std::get<2>(i.param) == IoOp::read ? "_read" : "_write");
    });

TEST(AllocGate, TheCountingAllocatorCounts) {
  g_allocs = 0;
  g_counting = true;
  auto* p = new int(3);
  g_counting = false;
  delete p;
  EXPECT_EQ(g_allocs.load(), 1u);
}
