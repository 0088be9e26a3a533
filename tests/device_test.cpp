// The storage seam: memory and POSIX backends, asynchronous submission,
// and the errors for bad requests.
#include <gtest/gtest.h>
#include <sys/stat.h>
#include <unistd.h>

#include <fstream>
#include <numeric>

#include "f2fscore/device.hpp"
#include "support/test_support.hpp"

using namespace f2fscore;

namespace {
std::vector<std::uint8_t> pattern(std::size_t n, std::uint8_t seed) {
  std::vector<std::uint8_t> v(n);
  for (std::size_t i = 0; i < n; ++i) v[i] = static_cast<std::uint8_t>(seed + i * 7);
  return v;
}

void exercise(BlockDevice& dev) {
  const auto data = pattern(8192, 3);
  ASSERT_TRUE(write_at(dev, 4096, data));
  std::vector<std::uint8_t> back(8192);
  ASSERT_TRUE(read_at(dev, 4096, back));
  EXPECT_EQ(back, data);
  ASSERT_TRUE(flush(dev));
  // write_zeroes guarantees zeroes, also in a partial chunk.
  ASSERT_TRUE(write_zeroes(dev, 4096, 4096));
  ASSERT_TRUE(read_at(dev, 4096, back));
  EXPECT_TRUE(std::all_of(back.begin(), back.begin() + 4096, [](auto b) { return b == 0; }));
  EXPECT_TRUE(std::equal(back.begin() + 4096, back.end(), data.begin() + 4096));
  // Past the end: a clear error with the offset.
  std::vector<std::uint8_t> one(512);
  auto r = read_at(dev, dev.info().size_bytes, one);
  ASSERT_FALSE(r);
  EXPECT_EQ(r.error().code, Errc::out_of_range);
  EXPECT_EQ(r.error().offset, dev.info().size_bytes);
  EXPECT_NE(r.error().to_string().find("past the end"), std::string::npos);
  // Unaligned offset and length.
  r = read_at(dev, 100, one);
  ASSERT_FALSE(r);
  EXPECT_EQ(r.error().code, Errc::unaligned);
  std::vector<std::uint8_t> odd(100);
  r = write_at(dev, 0, odd);
  ASSERT_FALSE(r);
  EXPECT_EQ(r.error().code, Errc::unaligned);
}
}  // namespace

TEST(MemoryDevice, ReadWriteZeroesAndErrors) {
  auto dev = make_memory_device(1 << 20);
  EXPECT_EQ(dev->info().size_bytes, 1u << 20);
  EXPECT_EQ(dev->info().logical_block_size, 512u);
  exercise(*dev);
}

TEST(MemoryDevice, UnwrittenReadsAsZeroesEvenWhenHuge) {
  auto dev = make_memory_device(16ull << 40);  // 16 TiB, sparse
  std::vector<std::uint8_t> b(4096, 0xAA);
  ASSERT_TRUE(read_at(*dev, (16ull << 40) - 4096, b));
  EXPECT_TRUE(std::all_of(b.begin(), b.end(), [](auto x) { return x == 0; }));
}

TEST(MemoryDevice, CompletionsRunOnlyInPollInSubmissionOrder) {
  auto dev = make_memory_device(1 << 20);
  std::vector<int> order;
  struct Ctx {
    std::vector<int>* order;
    int id;
  };
  IoRequest reqs[3];
  Ctx ctx[3];
  std::vector<std::uint8_t> buf(4096 * 3, 1);
  for (int i = 0; i < 3; ++i) {
    ctx[i] = {&order, i};
    reqs[i].op = IoOp::write;
    reqs[i].offset = static_cast<std::uint64_t>(i) * 4096;
    reqs[i].length = 4096;
    reqs[i].buf = buf.data() + i * 4096;
    reqs[i].user = &ctx[i];
    reqs[i].on_complete = [](IoRequest& r) noexcept {
      auto* c = static_cast<Ctx*>(r.user);
      c->order->push_back(c->id);
    };
    dev->submit(reqs[i]);
  }
  EXPECT_TRUE(order.empty());
  EXPECT_EQ(dev->in_flight(), 3u);
  EXPECT_EQ(dev->poll(true), 3u);
  EXPECT_EQ(order, (std::vector<int>{0, 1, 2}));
  EXPECT_EQ(dev->in_flight(), 0u);
  for (auto& r : reqs) EXPECT_EQ(r.transferred, 4096u);
}

TEST(PosixDevice, RegularFile) {
  f2fstest::TempDir tmp;
  const auto path = tmp / "dev.img";
  f2fstest::make_sparse_file(path, 1 << 20);
  auto dev = open_posix_device(path.string(), {});
  ASSERT_OK(dev);
  EXPECT_EQ((*dev)->info().kind, DeviceKind::regular_file);
  EXPECT_EQ((*dev)->info().size_bytes, 1u << 20);
  exercise(**dev);
}

TEST(PosixDevice, DiscardAndZeroesOnAFilePunchHoles) {
  f2fstest::TempDir tmp;
  const auto path = tmp / "dev.img";
  f2fstest::make_sparse_file(path, 4 << 20);
  auto dev = open_posix_device(path.string(), {});
  ASSERT_TRUE(dev);
  const auto data = pattern(2 << 20, 9);
  ASSERT_TRUE(write_at(**dev, 0, data));
  ASSERT_TRUE(flush(**dev));
  struct stat before {};
  ::stat(path.c_str(), &before);
  ASSERT_TRUE(write_zeroes(**dev, 0, 2 << 20));
  struct stat after {};
  ::stat(path.c_str(), &after);
  EXPECT_LT(after.st_blocks, before.st_blocks);  // space given back, not zeroes written
  std::vector<std::uint8_t> back(4096, 1);
  ASSERT_TRUE(read_at(**dev, 8192, back));
  EXPECT_TRUE(std::all_of(back.begin(), back.end(), [](auto b) { return b == 0; }));
}

TEST(PosixDevice, ReadOnlyRefusesWrites) {
  f2fstest::TempDir tmp;
  const auto path = tmp / "ro.img";
  f2fstest::make_sparse_file(path, 1 << 20);
  OpenOptions o;
  o.read_only = true;
  auto dev = open_posix_device(path.string(), o);
  ASSERT_TRUE(dev);
  std::vector<std::uint8_t> b(4096, 1);
  auto r = write_at(**dev, 0, b);
  ASSERT_FALSE(r);
  EXPECT_EQ(r.error().code, Errc::read_only);
  EXPECT_TRUE(read_at(**dev, 0, b));
}

TEST(PosixDevice, MissingPathAndWrongKind) {
  auto r = open_posix_device("/nonexistent/f2fscore.img", {});
  ASSERT_FALSE(r);
  EXPECT_EQ(r.error().code, Errc::not_found);
  EXPECT_NE(r.error().message.find("/nonexistent/f2fscore.img"), std::string::npos);
  f2fstest::TempDir tmp;
  auto d = open_posix_device(tmp.path().string(), {});
  ASSERT_FALSE(d);
  EXPECT_EQ(d.error().code, Errc::unsupported);
}

TEST(PosixDevice, FileShrunkUnderneathGivesShortRead) {
  f2fstest::TempDir tmp;
  const auto path = tmp / "shrink.img";
  f2fstest::make_sparse_file(path, 1 << 20);
  auto dev = open_posix_device(path.string(), {});
  ASSERT_TRUE(dev);
  ASSERT_EQ(::truncate(path.c_str(), 4096), 0);
  std::vector<std::uint8_t> b(8192);
  auto r = read_at(**dev, 0, b);
  ASSERT_FALSE(r);
  EXPECT_EQ(r.error().code, Errc::short_io);
}
