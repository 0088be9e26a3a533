// The asynchronous backend of the platform behind open_device() (io_uring
// on Linux, overlapped I/O and a completion port on Windows) and the
// synchronous one beside it, on an image file: many requests in flight and
// more than the queue depth waiting, completions only inside poll(),
// partial transfers resumed, reads that reach the end of the file, direct
// I/O's alignment, the backends each platform offers.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstring>
#include <filesystem>
#include <vector>

#include "f2fscore/uring_device.hpp"
#include "io/io_test_util.hpp"
#include "support/test_support.hpp"

using namespace f2fscore;
using iotest::AlignedBuf;

namespace {

#if defined(_WIN32)
constexpr bool kWindows = true;
#else
constexpr bool kWindows = false;
#endif

// What Backend::automatic gives on this platform and build.
Backend platform_async() {
  if (kWindows) return Backend::overlapped;
  return uring_compiled() ? Backend::uring : Backend::posix;
}

Result<OpenedDevice> open_with(const std::string& path, Backend b, std::uint32_t depth, bool direct = false,
                               UringHooks hooks = {}) {
  OpenOptions oo;
  oo.direct = direct;
  BackendOptions bo;
  bo.backend = b;
  bo.queue_depth = depth;
  bo.buffered_if_direct_refused = true;  // tmpfs refuses O_DIRECT
  bo.hooks = hooks;
  return open_device(path, oo, bo);
}

struct Counter {
  int done = 0;
  int bad = 0;
};

void count(IoRequest& r) noexcept {
  auto& c = *static_cast<Counter*>(r.user);
  ++c.done;
  if (!r.ok() || r.transferred != r.length) ++c.bad;
}

// `n` requests of `bs` bytes submitted at once (more than the device's
// queue depth when n > depth), none completed inside submit(); then
// polled until every callback ran.
void all_at_once(BlockDevice& dev, IoOp op, std::uint8_t* buf, std::uint32_t n, std::uint32_t bs, Counter& c) {
  std::vector<IoRequest> reqs(n);
  c = Counter{};
  for (std::uint32_t i = 0; i < n; ++i) {
    auto& r = reqs[i];
    r.op = op;
    r.offset = std::uint64_t{bs} * i;
    r.length = bs;
    r.buf = buf + std::size_t{bs} * i;
    r.user = &c;
    r.on_complete = count;
    dev.submit(r);
  }
  EXPECT_EQ(c.done, 0) << "a callback ran inside submit()";
  EXPECT_EQ(dev.in_flight(), n);
  while (dev.in_flight() > 0) dev.poll(true);
  EXPECT_EQ(c.done, static_cast<int>(n));
  EXPECT_EQ(c.bad, 0);
}

class AsyncDevice : public ::testing::TestWithParam<Backend> {
 protected:
  void SetUp() override {
    path_ = (tmp_ / "dev.img").string();
    f2fstest::make_sparse_file(path_, 4 << 20);
  }
  f2fstest::TempDir tmp_;
  std::string path_;
};

}  // namespace

TEST(AsyncDevice, EachPlatformsBackends) {
  f2fstest::TempDir tmp;
  const auto path = (tmp / "dev.img").string();
  f2fstest::make_sparse_file(path, 1 << 20);
  auto a = open_with(path, Backend::automatic, 8);
  ASSERT_OK(a);
  EXPECT_EQ(a->backend, platform_async());
  a->device.reset();
  auto s = open_with(path, Backend::posix, 8);
  ASSERT_OK(s);
  EXPECT_EQ(s->backend, Backend::posix);
  EXPECT_EQ(backend_name(Backend::posix), kWindows ? "sync" : "posix");
  EXPECT_EQ(backend_name(Backend::overlapped), "overlapped");
  s->device.reset();
  // What the platform does not have is refused with the reason, never
  // replaced by another backend.
  for (Backend b : {Backend::uring, Backend::liburing, Backend::overlapped}) {
    const bool has = kWindows ? b == Backend::overlapped : b != Backend::overlapped && uring_compiled();
    auto r = open_with(path, b, 8);
    if (has) {
      ASSERT_OK(r);
      EXPECT_EQ(r->backend, b);
      continue;
    }
    ASSERT_FALSE(r) << backend_name(b);
    EXPECT_EQ(r.error().code, Errc::unsupported);
    EXPECT_NE(r.error().message.find(b == Backend::overlapped ? "overlapped" : "io_uring"), std::string::npos)
        << r.error().message;
  }
}

TEST_P(AsyncDevice, ManyInFlightMoreThanTheDepthWriteThenReadBack) {
  for (std::uint32_t depth : {1u, 4u, 32u}) {
    auto o = open_with(path_, GetParam(), depth);
    ASSERT_OK(o);
    BlockDevice& dev = *o->device;
    constexpr std::uint32_t kN = 100, kBs = 16384;
    AlignedBuf src(kN * kBs), dst(kN * kBs);
    iotest::fill_pattern(src.data(), src.size, depth);
    Counter c;
    all_at_once(dev, IoOp::write, src.data(), kN, kBs, c);
    ASSERT_TRUE(flush(dev));
    all_at_once(dev, IoOp::read, dst.data(), kN, kBs, c);
    EXPECT_EQ(std::memcmp(src.data(), dst.data(), src.size), 0) << "depth " << depth;
  }
  // What was written is in the file, for another open to read.
  auto o = open_with(path_, Backend::posix, 1);
  ASSERT_OK(o);
  AlignedBuf want(16384), got(16384);
  iotest::fill_pattern(want.data(), want.size, 32);
  ASSERT_TRUE(read_at(*o->device, 0, {got.data(), got.size}));
  EXPECT_EQ(std::memcmp(want.data(), got.data(), got.size), 0);
}

TEST_P(AsyncDevice, CallbacksSubmitAgainAndRunOnlyInPoll) {
  auto o = open_with(path_, GetParam(), 2);
  ASSERT_OK(o);
  BlockDevice& dev = *o->device;
  AlignedBuf buf(4096);
  // A chain of 50 reads, each submitted by the callback of the one before.
  struct Chain {
    BlockDevice* dev;
    int left = 50;
    int ran = 0;
    bool in_submit = false;
    bool ran_in_submit = false;
  } chain{&dev};
  IoRequest r;
  r.op = IoOp::read;
  r.length = 4096;
  r.buf = buf.data();
  r.user = &chain;
  r.on_complete = [](IoRequest& q) noexcept {
    auto& ch = *static_cast<Chain*>(q.user);
    ++ch.ran;
    if (ch.in_submit) ch.ran_in_submit = true;
    if (!q.ok() || --ch.left == 0) return;
    q.offset = (q.offset + 4096) % (1 << 20);
    ch.in_submit = true;
    ch.dev->submit(q);
    ch.in_submit = false;
  };
  chain.in_submit = true;
  dev.submit(r);
  chain.in_submit = false;
  while (dev.in_flight() > 0) dev.poll(true);
  EXPECT_EQ(chain.ran, 50);
  EXPECT_FALSE(chain.ran_in_submit);
  EXPECT_TRUE(r.ok());
  // poll() without a wait and nothing in flight returns at once.
  EXPECT_EQ(dev.poll(false), 0u);
  EXPECT_EQ(dev.poll(true), 0u);
}

TEST_P(AsyncDevice, PartialAndInterruptedTransfersAreResumed) {
  UringHooks hooks;
  hooks.max_chunk = 4096;     // every 64 KiB request moves in sixteen pieces
  hooks.interrupt_every = 3;  // every third completion is done again
  auto o = open_with(path_, GetParam(), 8, false, hooks);
  ASSERT_OK(o);
  BlockDevice& dev = *o->device;
  constexpr std::uint32_t kN = 20, kBs = 65536;
  AlignedBuf src(kN * kBs), dst(kN * kBs);
  iotest::fill_pattern(src.data(), src.size, 7);
  Counter c;
  all_at_once(dev, IoOp::write, src.data(), kN, kBs, c);
  all_at_once(dev, IoOp::read, dst.data(), kN, kBs, c);
  EXPECT_EQ(std::memcmp(src.data(), dst.data(), src.size), 0);
}

TEST_P(AsyncDevice, ReadsReachingTheEndOfTheFileAreShort) {
  auto o = open_with(path_, GetParam(), 16);
  ASSERT_OK(o);
  BlockDevice& dev = *o->device;
  AlignedBuf data(8192);
  iotest::fill_pattern(data.data(), data.size, 5);
  ASSERT_TRUE(write_at(dev, 0, {data.data(), 8192}));
  // Someone truncates the file underneath: the device still believes in
  // 4 MiB; reads get 5120 bytes, then none.
  std::error_code ec;
  std::filesystem::resize_file(path_, 5120, ec);
  ASSERT_FALSE(ec) << ec.message();
  AlignedBuf buf(8192);
  IoRequest r;
  r.op = IoOp::read;
  r.length = 8192;
  r.buf = buf.data();
  dev.submit(r);
  drain(dev);
  EXPECT_EQ(r.status, Errc::short_io);
  EXPECT_EQ(r.transferred, 5120u);
  EXPECT_EQ(std::memcmp(buf.data(), data.data(), 5120), 0);
  // Many reads past the end at once: each short with nothing moved, and
  // the device goes on working (no completion left behind for a slot).
  std::vector<IoRequest> past(40);
  AlignedBuf big(40 * 4096);
  for (std::size_t i = 0; i < past.size(); ++i) {
    past[i].op = IoOp::read;
    past[i].offset = 8192 + 4096 * i;
    past[i].length = 4096;
    past[i].buf = big.data() + 4096 * i;
    dev.submit(past[i]);
  }
  drain(dev);
  for (auto& p : past) {
    EXPECT_EQ(p.status, Errc::short_io);
    EXPECT_EQ(p.transferred, 0u);
  }
  ASSERT_TRUE(write_at(dev, 4096, {data.data(), 4096}));
  ASSERT_TRUE(read_at(dev, 0, {buf.data(), 4096}));
  EXPECT_EQ(std::memcmp(buf.data(), data.data(), 4096), 0);
  ASSERT_TRUE(read_at(dev, 4096, {buf.data(), 4096}));
  EXPECT_EQ(std::memcmp(buf.data(), data.data(), 4096), 0);
}

TEST_P(AsyncDevice, DirectIoRefusesUnalignedRequestsAtPoll) {
  auto o = open_with(path_, GetParam(), 8, true);
  ASSERT_OK(o);
  BlockDevice& dev = *o->device;
  if (!dev.info().direct) GTEST_SKIP() << "the file system refuses direct I/O: " << o->note;
  const std::uint32_t a = dev.info().buffer_alignment;
  EXPECT_GE(a, 4096u);
  EXPECT_EQ(dev.info().logical_block_size, a);
  AlignedBuf buf(3 * a);
  IoRequest bad_buf, bad_off, bad_len;
  for (auto* r : {&bad_buf, &bad_off, &bad_len}) {
    r->op = IoOp::read;
    r->length = a;
    r->buf = buf.data();
  }
  bad_buf.buf = buf.data() + 512;
  bad_off.offset = 512;
  bad_len.length = a + 512;
  Counter c;
  for (auto* r : {&bad_buf, &bad_off, &bad_len}) {
    r->user = &c;
    r->on_complete = count;
    dev.submit(*r);
  }
  EXPECT_EQ(c.done, 0);
  drain(dev);
  EXPECT_EQ(c.done, 3);
  for (auto* r : {&bad_buf, &bad_off, &bad_len}) EXPECT_EQ(r->status, Errc::unaligned);
  // Aligned requests go through, many in flight.
  constexpr std::uint32_t kN = 64;
  AlignedBuf src(kN * a, a), dst(kN * a, a);
  iotest::fill_pattern(src.data(), src.size, 11);
  all_at_once(dev, IoOp::write, src.data(), kN, a, c);
  all_at_once(dev, IoOp::read, dst.data(), kN, a, c);
  EXPECT_EQ(std::memcmp(src.data(), dst.data(), src.size), 0);
}

// The operations done at submission, beside reads and writes in flight:
// write-zeroes (a punched or zeroed range, or zero buffers written when
// the zeroing calls are refused), flush, discard, a FUA write.
TEST_P(AsyncDevice, ZeroesFlushDiscardAndFuaBesideRequestsInFlight) {
  for (bool refuse_zeroing : {false, true}) {
    OpenOptions oo;
    BackendOptions bo;
    bo.backend = GetParam();
    bo.queue_depth = 8;
    bo.faults.refuse_zeroing = refuse_zeroing;
    auto o = open_device(path_, oo, bo);
    ASSERT_OK(o);
    BlockDevice& dev = *o->device;
    constexpr std::uint32_t kN = 32, kBs = 65536;
    AlignedBuf src(kN * kBs), dst(kN * kBs);
    iotest::fill_pattern(src.data(), src.size, refuse_zeroing ? 3 : 4);
    Counter c;
    all_at_once(dev, IoOp::write, src.data(), kN, kBs, c);
    // Zeroes over the second MiB (two 64 KiB requests in the middle of
    // it stay), a flush and a discard hint submitted while reads are in
    // flight over the first MiB.
    std::vector<IoRequest> reads(16);
    for (std::uint32_t i = 0; i < 16; ++i) {
      reads[i].op = IoOp::read;
      reads[i].offset = std::uint64_t{kBs} * i;
      reads[i].length = kBs;
      reads[i].buf = dst.data() + std::size_t{kBs} * i;
      dev.submit(reads[i]);
    }
    IoRequest z, f, d;
    z.op = IoOp::write_zeroes;
    z.offset = 1 << 20;
    z.length = 1 << 20;
    f.op = IoOp::flush;
    d.op = IoOp::discard;
    d.offset = 3 << 20;
    d.length = 1 << 20;
    dev.submit(z);
    dev.submit(f);
    dev.submit(d);
    drain(dev);
    for (auto& r : reads) EXPECT_TRUE(r.ok() && r.transferred == kBs) << r.error().to_string();
    EXPECT_EQ(std::memcmp(dst.data(), src.data(), 1 << 20), 0);
    EXPECT_TRUE(z.ok()) << z.error().to_string();
    EXPECT_TRUE(f.ok()) << f.error().to_string();
    EXPECT_TRUE(d.ok() || d.status == Errc::unsupported) << d.error().to_string();
    ASSERT_TRUE(read_at(dev, 1 << 20, {dst.data(), 1 << 20}));
    EXPECT_TRUE(std::all_of(dst.data(), dst.data() + (1 << 20), [](auto b) { return b == 0; }))
        << (refuse_zeroing ? "zero buffers" : "zeroing call");
    // A FUA write completes durable, and reads back.
    IoRequest w;
    w.op = IoOp::write;
    w.flags = io_flag::fua;
    w.offset = 2 << 20;
    w.length = kBs;
    w.buf = src.data();
    dev.submit(w);
    drain(dev);
    EXPECT_TRUE(w.ok() && w.transferred == kBs) << w.error().to_string();
    ASSERT_TRUE(read_at(dev, 2 << 20, {dst.data(), kBs}));
    EXPECT_EQ(std::memcmp(dst.data(), src.data(), kBs), 0);
  }
}

INSTANTIATE_TEST_SUITE_P(Backends, AsyncDevice, ::testing::Values(Backend::automatic, Backend::posix),
                         [](const auto& info) {
                           return std::string(info.param == Backend::automatic ? "automatic" : "sync");
                         });
