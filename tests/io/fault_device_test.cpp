// Failure injection: fail request n, fail all after n, short transfers,
// garbage after discard, drop what was not flushed.
#include <gtest/gtest.h>

#include "f2fscore/fault_device.hpp"
#include "f2fscore/iostat.hpp"
#include "io/io_test_util.hpp"

using namespace f2fscore;

namespace {

std::vector<std::uint8_t> block(std::uint8_t v, std::size_t n = 4096) { return std::vector<std::uint8_t>(n, v); }

std::unique_ptr<FaultDevice> make(FaultPlan plan = {}) {
  return std::make_unique<FaultDevice>(make_memory_device(1 << 20, 512), plan);
}

}  // namespace

TEST(FaultDevice, PassesThroughWithoutAPlan) {
  auto d = make();
  ASSERT_TRUE(write_at(*d, 4096, block(7)));
  std::vector<std::uint8_t> back(4096);
  ASSERT_TRUE(read_at(*d, 4096, back));
  EXPECT_EQ(back, block(7));
  ASSERT_TRUE(flush(*d));
  EXPECT_EQ(d->counted(), 3u);
  EXPECT_EQ(d->failed(), 0u);
  // Validation is the device's: past the end.
  auto r = read_at(*d, 1 << 20, back);
  ASSERT_FALSE(r);
  EXPECT_EQ(r.error().code, Errc::out_of_range);
}

TEST(FaultDevice, FailRequestN) {
  FaultPlan p;
  p.fail_request = 2;  // the third request
  auto d = make(p);
  std::vector<std::uint8_t> b(4096);
  EXPECT_TRUE(write_at(*d, 0, block(1)));
  EXPECT_TRUE(read_at(*d, 0, b));
  auto r = write_at(*d, 0, block(2));
  ASSERT_FALSE(r);
  EXPECT_EQ(r.error().code, Errc::io);
  EXPECT_EQ(r.error().sys_errno, 5);
  EXPECT_EQ(r.error().offset, 0u);
  EXPECT_TRUE(read_at(*d, 0, b));
  EXPECT_EQ(b, block(1)) << "the failed write never reached the device";
  EXPECT_EQ(d->failed(), 1u);
}

TEST(FaultDevice, FailAllAfterNOnlyCountingSelectedOps) {
  FaultPlan p;
  p.fail_after = 2;
  p.ops = io_op_bit(IoOp::write);  // reads pass and are not counted
  p.error = Errc::cancelled;
  auto d = make(p);
  std::vector<std::uint8_t> b(4096);
  EXPECT_TRUE(write_at(*d, 0, block(1)));
  EXPECT_TRUE(read_at(*d, 0, b));
  EXPECT_TRUE(write_at(*d, 4096, block(2)));
  for (int i = 0; i < 5; ++i) {
    auto r = write_at(*d, 8192, block(3));
    ASSERT_FALSE(r);
    EXPECT_EQ(r.error().code, Errc::cancelled);
    EXPECT_TRUE(read_at(*d, 0, b));
  }
  EXPECT_EQ(d->counted(), 7u);
  EXPECT_EQ(d->failed(), 5u);
  d->set_plan({}, true);
  EXPECT_TRUE(write_at(*d, 8192, block(3)));
}

TEST(FaultDevice, ShortTransfer) {
  FaultPlan p;
  p.short_request = 1;
  auto d = make(p);
  ASSERT_TRUE(write_at(*d, 0, block(9, 16384)));
  std::vector<std::uint8_t> b(16384, 0);
  auto r = read_at(*d, 0, b);
  ASSERT_FALSE(r);
  EXPECT_EQ(r.error().code, Errc::short_io);
  EXPECT_NE(r.error().message.find("after 8192 bytes"), std::string::npos) << r.error().to_string();
  EXPECT_TRUE(std::all_of(b.begin(), b.begin() + 8192, [](auto x) { return x == 9; }));
}

TEST(FaultDevice, GarbageForDiscardedBlocksUntilRewritten) {
  FaultPlan p;
  p.garbage_after_discard = true;
  auto d = make(p);
  ASSERT_TRUE(write_at(*d, 0, block(0x11, 16384)));
  ASSERT_TRUE(discard(*d, 4096, 8192));
  std::vector<std::uint8_t> b(16384);
  ASSERT_TRUE(read_at(*d, 0, b));
  EXPECT_TRUE(std::all_of(b.begin(), b.begin() + 4096, [](auto x) { return x == 0x11; }));
  std::size_t zero = 0, old = 0;
  for (std::size_t i = 4096; i < 12288; ++i) zero += b[i] == 0, old += b[i] == 0x11;
  EXPECT_LT(zero, 8192u / 16) << "garbage, not zeroes";
  EXPECT_LT(old, 8192u / 16) << "garbage, not the old data";
  EXPECT_TRUE(std::all_of(b.begin() + 12288, b.end(), [](auto x) { return x == 0x11; }));
  // Rewriting one block and zeroing another make them defined again.
  ASSERT_TRUE(write_at(*d, 4096, block(0x22)));
  ASSERT_TRUE(write_zeroes(*d, 8192, 4096));
  ASSERT_TRUE(read_at(*d, 0, b));
  EXPECT_TRUE(std::all_of(b.begin() + 4096, b.begin() + 8192, [](auto x) { return x == 0x22; }));
  EXPECT_TRUE(std::all_of(b.begin() + 8192, b.begin() + 12288, [](auto x) { return x == 0; }));
}

TEST(FaultDevice, PowerCutDropsWhatWasNotFlushed) {
  FaultPlan p;
  p.drop_unflushed = true;
  auto d = make(p);
  ASSERT_TRUE(write_at(*d, 0, block(1)));
  ASSERT_TRUE(flush(*d));
  ASSERT_TRUE(write_at(*d, 0, block(2)));      // volatile
  ASSERT_TRUE(write_at(*d, 4096, block(3)));   // volatile
  IoRequest fua;                               // durable at once
  iotest::AlignedBuf fb(4096);
  std::memset(fb.data(), 4, 4096);
  fua.op = IoOp::write;
  fua.flags = io_flag::fua;
  fua.offset = 8192;
  fua.length = 4096;
  fua.buf = fb.data();
  bool done = false;
  fua.user = &done;
  fua.on_complete = [](IoRequest& r) noexcept { *static_cast<bool*>(r.user) = true; };
  d->submit(fua);
  while (!done) d->poll(true);
  ASSERT_TRUE(fua.ok());
  EXPECT_EQ(d->unflushed_bytes(), 8192u);
  std::vector<std::uint8_t> b(12288);
  ASSERT_TRUE(read_at(*d, 0, b));  // the caller sees its own writes before the cut
  EXPECT_EQ(std::vector<std::uint8_t>(b.begin(), b.begin() + 4096), block(2));
  EXPECT_EQ(std::vector<std::uint8_t>(b.begin() + 4096, b.begin() + 8192), block(3));
  d->power_cut();
  ASSERT_TRUE(read_at(*d, 0, b));
  EXPECT_EQ(std::vector<std::uint8_t>(b.begin(), b.begin() + 4096), block(1)) << "the flushed version";
  EXPECT_EQ(std::vector<std::uint8_t>(b.begin() + 4096, b.begin() + 8192), block(0)) << "never flushed";
  EXPECT_EQ(std::vector<std::uint8_t>(b.begin() + 8192, b.end()), block(4)) << "FUA";
  // Flushed writes survive a cut.
  ASSERT_TRUE(write_at(*d, 4096, block(5)));
  ASSERT_TRUE(flush(*d));
  d->power_cut();
  ASSERT_TRUE(read_at(*d, 4096, {b.data(), 4096}));
  EXPECT_EQ(std::vector<std::uint8_t>(b.begin(), b.begin() + 4096), block(5));
  // What reached the device below is exactly what was flushed.
  ASSERT_TRUE(read_at(d->inner(), 0, b));
  EXPECT_EQ(std::vector<std::uint8_t>(b.begin(), b.begin() + 4096), block(1));
}

TEST(FaultDevice, CrashAtEveryWriteOfASequence) {
  // The crash-test pattern: power is lost after write n; what survives is
  // a prefix of the flushed history.
  for (std::uint64_t n = 0; n <= 6; ++n) {
    FaultPlan p;
    p.drop_unflushed = true;
    p.fail_after = n;
    p.ops = io_op_bit(IoOp::write) | io_op_bit(IoOp::flush);
    auto d = make(p);
    // history: w(A) flush w(B) flush w(C) [no flush]
    (void)write_at(*d, 0, block(0xA));
    (void)flush(*d);
    (void)write_at(*d, 0, block(0xB));
    (void)flush(*d);
    (void)write_at(*d, 0, block(0xC));
    d->power_cut();
    d->set_plan({}, true);
    std::vector<std::uint8_t> b(4096);
    ASSERT_TRUE(read_at(*d, 0, b));
    const std::uint8_t want = n >= 4 ? 0xB : n >= 2 ? 0xA : 0;
    EXPECT_EQ(b[0], want) << "crash after " << n << " counted requests";
  }
}

TEST(FaultDevice, StacksUnderIostatAndKeepsTheCallersRequestIntact) {
  Iostat stats;
  stats.set_enabled(true);
  FaultPlan p;
  p.fail_request = 1;
  IostatDevice dev(std::make_unique<FaultDevice>(make_memory_device(1 << 20), p), stats);
  std::vector<std::uint8_t> b(4096);
  EXPECT_TRUE(write_at(dev, 0, block(1), io_tag(IostatType::fs_node_io)));
  EXPECT_FALSE(read_at(dev, 0, b, io_tag(IostatType::fs_node_read_io)));
  const auto s = stats.snapshot();
  EXPECT_EQ(s.count_of(IostatType::fs_node_io), 1u);
  EXPECT_EQ(s.count_of(IostatType::fs_node_read_io), 1u) << "a failed request is still an accounted one";
  EXPECT_EQ(s.completed[static_cast<std::size_t>(IostatType::fs_node_read_io)], 1u);
}
