// The synchronous ops and flags of both file backends (io_uring and POSIX):
// write-zeroes when the file system has no zeroing call (the fallback
// writes zeroes, from a buffer aligned for O_DIRECT), and FUA writes, which
// must be durable when they complete.
#include <gtest/gtest.h>
#include <sys/stat.h>
#include <sys/vfs.h>
#include <unistd.h>

#if defined(__linux__)
#include <fcntl.h>
#include <linux/magic.h>
#include <sys/syscall.h>
#endif

#include <algorithm>
#include <cerrno>
#include <tuple>

#include "f2fscore/uring_device.hpp"
#include "io/io_test_util.hpp"
#include "support/test_support.hpp"

using namespace f2fscore;
using iotest::AlignedBuf;

namespace {

std::unique_ptr<BlockDevice> open_file(const std::string& path, Backend b, bool direct, BackendOptions bo = {}) {
  OpenOptions oo;
  oo.direct = direct;
  bo.backend = b;
  auto r = open_device(path, oo, bo);
  EXPECT_OK(r);
  if (!r) return nullptr;
  EXPECT_EQ(r->backend, b);
  return std::move(r->device);
}

std::uint64_t blocks_of(const std::string& path) {
  struct stat st {};
  EXPECT_EQ(::stat(path.c_str(), &st), 0);
  return static_cast<std::uint64_t>(st.st_blocks);
}

class BothBackends : public ::testing::TestWithParam<Backend> {
 protected:
  void SetUp() override {
    if ((GetParam() == Backend::uring || GetParam() == Backend::liburing) && !uring_compiled())
      GTEST_SKIP() << "built without io_uring";
  }
};

}  // namespace

// A file system without PUNCH_HOLE, ZERO_RANGE (vfat), simulated: write-
// zeroes writes zeroes. Under O_DIRECT the buffer it writes them from must
// be aligned, or every write fails with EINVAL; 1 MiB + 8 KiB spans two
// chunks of the fallback's buffer.
TEST_P(BothBackends, WriteZeroesFallbackUnderODirect) {
  f2fstest::TempDir tmp;
  const auto path = (tmp / "dev.img").string();
  f2fstest::make_sparse_file(path, 4 << 20);
  BackendOptions bo;
  bo.faults.refuse_zeroing = true;
  auto dev = open_file(path, GetParam(), true, bo);
  ASSERT_TRUE(dev);
  EXPECT_TRUE(dev->info().direct);
  EXPECT_FALSE(dev->info().cheap_write_zeroes) << "no zeroing call: zeroes are written";
  const std::uint64_t len = (1 << 20) + 8192;
  AlignedBuf src(len + 8192), back(len + 8192);
  iotest::fill_pattern(src.data(), src.size, 5);
  ASSERT_TRUE(write_at(*dev, 0, {src.data(), src.size}));
  ASSERT_TRUE(flush(*dev));
  const std::uint64_t before = blocks_of(path);
  auto z = write_zeroes(*dev, 4096, len);
  ASSERT_OK(z);
  ASSERT_TRUE(read_at(*dev, 0, {back.data(), back.size}));
  EXPECT_EQ(std::memcmp(back.data(), src.data(), 4096), 0) << "the block before is kept";
  EXPECT_TRUE(std::all_of(back.data() + 4096, back.data() + 4096 + len, [](auto b) { return b == 0; }));
  EXPECT_EQ(std::memcmp(back.data() + 4096 + len, src.data() + 4096 + len, 4096), 0) << "the block after is kept";
  EXPECT_EQ(blocks_of(path), before) << "zeroes written, not a hole punched";
  // discard has no fallback: it is a hint, and says it was not done.
  auto d = discard(*dev, 0, 4096);
  ASSERT_FALSE(d);
  EXPECT_EQ(d.error().code, Errc::unsupported);
}

// With the zeroing calls available, write-zeroes on a file punches a hole
// (the space is given back), for both backends alike.
TEST_P(BothBackends, WriteZeroesPunchesAHoleInAFile) {
  f2fstest::TempDir tmp;
  const auto path = (tmp / "dev.img").string();
  f2fstest::make_sparse_file(path, 4 << 20);
  auto dev = open_file(path, GetParam(), true);
  ASSERT_TRUE(dev);
  EXPECT_TRUE(dev->info().cheap_write_zeroes);
  AlignedBuf src(2 << 20), back(8192);
  iotest::fill_pattern(src.data(), src.size, 6);
  ASSERT_TRUE(write_at(*dev, 0, {src.data(), src.size}));
  ASSERT_TRUE(flush(*dev));
  const std::uint64_t before = blocks_of(path);
  ASSERT_TRUE(write_zeroes(*dev, 0, 1 << 20));
  EXPECT_LT(blocks_of(path), before);
  ASSERT_TRUE(read_at(*dev, 4096, {back.data(), back.size}));
  EXPECT_TRUE(std::all_of(back.data(), back.data() + back.size, [](auto b) { return b == 0; }));
}

#if defined(__linux__) && !defined(__alpha__)
namespace {

// cachestat(2) (Linux 6.5): page-cache state of a file range, including
// how many pages are dirty or under writeback. The number is the same on
// every architecture but alpha.
struct CacheStatRange {
  std::uint64_t off, len;
};
struct CacheStat {
  std::uint64_t nr_cache, nr_dirty, nr_writeback, nr_evicted, nr_recently_evicted;
};
constexpr long kSysCachestat = 451;

bool cachestat_of(const std::string& path, std::uint64_t off, std::uint64_t len, CacheStat& out) {
  const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) return false;
  CacheStatRange r{off, len};
  out = CacheStat{};
  const long rc = ::syscall(kSysCachestat, fd, &r, &out, 0);
  ::close(fd);
  return rc == 0;
}

}  // namespace

// A FUA write is durable when its callback runs: its page is neither dirty
// nor under writeback (buffered I/O, where the page cache shows it). The
// same write without FUA leaves its page dirty, which shows that the check
// can tell the two apart here.
TEST_P(BothBackends, FuaWriteIsDurableOnCompletion) {
  f2fstest::TempDir tmp;
  const auto path = (tmp / "dev.img").string();
  struct statfs sfs {};
  ASSERT_EQ(::statfs(tmp.path().c_str(), &sfs), 0);
  if (sfs.f_type == TMPFS_MAGIC) GTEST_SKIP() << "tmpfs: fdatasync does not clean pages";
  f2fstest::make_sparse_file(path, 1 << 20);
  CacheStat cs{};
  if (!cachestat_of(path, 0, 4096, cs)) GTEST_SKIP() << "no cachestat(2) (Linux before 6.5)";
  auto dev = open_file(path, GetParam(), false);
  ASSERT_TRUE(dev);
  AlignedBuf buf(4096);
  iotest::fill_pattern(buf.data(), buf.size, 8);
  ASSERT_TRUE(write_at(*dev, 0, {buf.data(), 4096}));
  ASSERT_TRUE(cachestat_of(path, 0, 4096, cs));
  if (cs.nr_dirty == 0) GTEST_SKIP() << "writeback cleaned the page at once: the check cannot tell";
  IoRequest r;
  r.op = IoOp::write;
  r.flags = io_flag::fua;
  r.offset = 65536;
  r.length = 4096;
  r.buf = buf.data();
  dev->submit(r);
  drain(*dev);
  ASSERT_TRUE(r.ok()) << r.error().to_string();
  EXPECT_EQ(r.transferred, 4096u);
  ASSERT_TRUE(cachestat_of(path, 65536, 4096, cs));
  EXPECT_EQ(cs.nr_cache, 1u);
  EXPECT_EQ(cs.nr_dirty, 0u) << "FUA write still dirty in the page cache";
  EXPECT_EQ(cs.nr_writeback, 0u);
}

namespace {
// open_device() of `path` on backend `b` with OpenOptions::direct_large_writes.
Result<OpenedDevice> open_direct_writes(const std::string& path, Backend b, bool refuse_direct = false) {
  OpenOptions oo;
  oo.direct_large_writes = true;
  BackendOptions bo;
  bo.backend = b;
  bo.faults.refuse_direct = refuse_direct;
  return open_device(path, oo, bo);
}
}  // namespace

// OpenOptions::direct_large_writes: an aligned write of 64 KiB or more
// passes the host's page cache (none of its pages cached afterwards, the
// file being sparse there before); a smaller one, or one from a buffer not
// aligned to 4 KiB, is cached as any buffered write. A block written
// buffered and then overwritten by a direct write reads back as the direct
// data (the kernel writes back and drops the cached pages of the range).
TEST_P(BothBackends, LargeAlignedWritesPassThePageCache) {
  f2fstest::TempDir tmp;
  const auto path = (tmp / "dev.img").string();
  f2fstest::make_sparse_file(path, 8 << 20);
  CacheStat cs{};
  if (!cachestat_of(path, 0, 4096, cs)) GTEST_SKIP() << "no cachestat(2) (Linux before 6.5)";
  auto opened = open_direct_writes(path, GetParam());
  ASSERT_OK(opened);
  BlockDevice& dev = *opened->device;
  if (dev.info().direct_write_min == 0) GTEST_SKIP() << "O_DIRECT refused here: " << opened->note;
  EXPECT_EQ(dev.info().direct_write_min, kDirectWriteMin);
  EXPECT_FALSE(dev.info().direct);
  EXPECT_EQ(dev.info().buffer_alignment, 1u) << "buffered: any buffer";
  constexpr std::uint64_t kMiB = 1 << 20;
  AlignedBuf big(2 * kMiB), small(4096), back(2 * kMiB);
  iotest::fill_pattern(big.data(), big.size, 11);
  iotest::fill_pattern(small.data(), small.size, 12);

  ASSERT_TRUE(write_at(dev, 3 * kMiB, {small.data(), 4096}));
  ASSERT_TRUE(cachestat_of(path, 3 * kMiB, 4096, cs));
  EXPECT_EQ(cs.nr_cache, 1u) << "a 4 KiB write is buffered";

  ASSERT_TRUE(write_at(dev, 0, {big.data(), kMiB}));
  ASSERT_TRUE(cachestat_of(path, 0, kMiB, cs));
  EXPECT_EQ(cs.nr_cache, 0u) << "a 1 MiB aligned write went through the page cache";

  ASSERT_TRUE(write_at(dev, 3 * kMiB, {big.data() + kMiB, 64 << 10}));  // over the buffered block
  ASSERT_TRUE(read_at(dev, 3 * kMiB, {back.data(), 64 << 10}));
  EXPECT_EQ(std::memcmp(back.data(), big.data() + kMiB, 64 << 10), 0) << "the direct write reads back";

  ASSERT_TRUE(write_at(dev, 5 * kMiB, {big.data() + 512, 64 << 10}));  // a buffer off 4 KiB alignment
  ASSERT_TRUE(cachestat_of(path, 5 * kMiB, 64 << 10, cs));
  EXPECT_EQ(cs.nr_cache, 16u) << "an unaligned buffer is written buffered";
  ASSERT_TRUE(write_at(dev, 6 * kMiB, {big.data(), 32 << 10}));
  ASSERT_TRUE(cachestat_of(path, 6 * kMiB, 32 << 10, cs));
  EXPECT_EQ(cs.nr_cache, 8u) << "32 KiB is below the bound: buffered";

  ASSERT_TRUE(flush(dev));
  ASSERT_TRUE(read_at(dev, 0, {back.data(), kMiB}));
  EXPECT_EQ(std::memcmp(back.data(), big.data(), kMiB), 0);
  ASSERT_TRUE(read_at(dev, 5 * kMiB, {back.data(), 64 << 10}));
  EXPECT_EQ(std::memcmp(back.data(), big.data() + 512, 64 << 10), 0);
  ASSERT_TRUE(read_at(dev, 6 * kMiB, {back.data(), 32 << 10}));
  EXPECT_EQ(std::memcmp(back.data(), big.data(), 32 << 10), 0);
}

// Where the second open with O_DIRECT is refused (tmpfs, simulated), every
// write stays buffered and the note says so.
TEST_P(BothBackends, LargeWritesStayBufferedWhereODirectIsRefused) {
  f2fstest::TempDir tmp;
  const auto path = (tmp / "dev.img").string();
  f2fstest::make_sparse_file(path, 4 << 20);
  CacheStat cs{};
  if (!cachestat_of(path, 0, 4096, cs)) GTEST_SKIP() << "no cachestat(2) (Linux before 6.5)";
  auto opened = open_direct_writes(path, GetParam(), true);
  ASSERT_OK(opened);
  EXPECT_EQ(opened->device->info().direct_write_min, 0u);
  EXPECT_NE(opened->note.find("large writes stay buffered"), std::string::npos) << opened->note;
  AlignedBuf big(1 << 20);
  iotest::fill_pattern(big.data(), big.size, 13);
  ASSERT_TRUE(write_at(*opened->device, 0, {big.data(), big.size}));
  ASSERT_TRUE(cachestat_of(path, 0, big.size, cs));
  EXPECT_EQ(cs.nr_cache, 256u);
}
#endif

INSTANTIATE_TEST_SUITE_P(BackendOps, BothBackends, ::testing::Values(Backend::uring, Backend::liburing, Backend::posix),
                         [](const auto& info) {
                           return std::string(info.param == Backend::uring      ? "uring"
                                              : info.param == Backend::liburing ? "liburing"
                                                                                : "posix");
                         });
