// The backends behind open_device(): io_uring and POSIX on a regular file
// and on a loop block device, and the memory device; bad input; short,
// partial and interrupted transfers; the O_DIRECT and io_uring fallbacks.
#include <gtest/gtest.h>
#include <signal.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/time.h>
#include <sys/wait.h>
#include <unistd.h>

#if defined(__linux__)
#include <linux/filter.h>
#include <linux/seccomp.h>
#include <sys/syscall.h>
#endif

#include <array>
#include <atomic>
#include <cerrno>
#include <fstream>

#include "f2fscore/drivers/io_job.hpp"
#include "f2fscore/fault_device.hpp"
#include "f2fscore/iostat.hpp"
#include "f2fscore/uring_device.hpp"
#include "io/io_test_util.hpp"
#include "support/test_support.hpp"

using namespace f2fscore;
using iotest::AlignedBuf;

namespace {

std::unique_ptr<BlockDevice> open_or_fail(const std::string& path, Backend b, bool direct, bool ro = false,
                                          BackendOptions bo = {}) {
  OpenOptions oo;
  oo.direct = direct;
  oo.read_only = ro;
  bo.backend = b;
  auto r = open_device(path, oo, bo);
  EXPECT_OK(r);
  if (!r) return nullptr;
  if (b != Backend::automatic) EXPECT_EQ(r->backend, b);
  return std::move(r->device);
}

// Writes a pattern with many requests in flight, reads it back with many
// in flight, compares; then the synchronous ops and the errors.
void exercise(BlockDevice& dev, std::uint32_t depth) {
  const std::uint32_t bs = 4096 * 4;
  const std::uint64_t n = std::min<std::uint64_t>(256, dev.info().size_bytes / bs);
  AlignedBuf src(bs * n), dst(bs * n);
  iotest::fill_pattern(src.data(), src.size, 42);
  std::vector<IoRequest> reqs(n);
  std::uint64_t done = 0, bad = 0;
  struct Ctx {
    std::uint64_t* done;
    std::uint64_t* bad;
  } ctx{&done, &bad};
  auto run = [&](IoOp op, AlignedBuf& buf) {
    done = 0;
    std::uint64_t next = 0;
    while (done < n) {
      while (next < n && next - done < depth) {
        auto& r = reqs[next];
        r = IoRequest{};
        r.op = op;
        r.offset = bs * next;
        r.length = bs;
        r.buf = buf.data() + bs * next;
        r.user = &ctx;
        r.on_complete = [](IoRequest& q) noexcept {
          auto& c = *static_cast<Ctx*>(q.user);
          ++*c.done;
          if (!q.ok() || q.transferred != q.length) ++*c.bad;
        };
        dev.submit(r);
        ++next;
      }
      dev.poll(true);
    }
  };
  run(IoOp::write, src);
  ASSERT_EQ(bad, 0u);
  ASSERT_TRUE(flush(dev));
  run(IoOp::read, dst);
  ASSERT_EQ(bad, 0u);
  EXPECT_EQ(std::memcmp(src.data(), dst.data(), src.size), 0);
  // write-zeroes is guaranteed; discard is a hint.
  ASSERT_TRUE(write_zeroes(dev, bs, bs));
  ASSERT_TRUE(read_at(dev, 0, {dst.data(), 2 * bs}));
  EXPECT_EQ(std::memcmp(dst.data(), src.data(), bs), 0);
  EXPECT_TRUE(std::all_of(dst.data() + bs, dst.data() + 2 * bs, [](auto x) { return x == 0; }));
  (void)discard(dev, 2 * bs, bs);
  // Errors come back through the callback, never from submit().
  auto r = read_at(dev, dev.info().size_bytes, {dst.data(), 4096});
  ASSERT_FALSE(r);
  EXPECT_EQ(r.error().code, Errc::out_of_range);
  EXPECT_EQ(r.error().offset, dev.info().size_bytes);
  EXPECT_NE(r.error().to_string().find("past the end"), std::string::npos);
  r = read_at(dev, dev.info().size_bytes - 4096, {dst.data(), 8192});
  ASSERT_FALSE(r);
  EXPECT_EQ(r.error().code, Errc::out_of_range) << "straddling the end";
  EXPECT_EQ(dev.in_flight(), 0u);
}

// Direct I/O: unaligned buffer, offset and length are refused before the
// kernel sees them, with a clear error.
void expect_direct_alignment_errors(BlockDevice& dev) {
  ASSERT_TRUE(dev.info().direct);
  const std::uint32_t a = dev.info().buffer_alignment;
  ASSERT_GE(a, 512u);
  AlignedBuf buf(3 * a);
  auto r = read_at(dev, 0, {buf.data() + 512 % a + (a == 512 ? 1 : 0), a});
  ASSERT_FALSE(r);
  EXPECT_EQ(r.error().code, Errc::unaligned) << "buffer";
  EXPECT_NE(r.error().to_string().find("not aligned"), std::string::npos);
  r = read_at(dev, 512, {buf.data(), a});
  if (dev.info().logical_block_size > 512) {
    ASSERT_FALSE(r);
    EXPECT_EQ(r.error().code, Errc::unaligned) << "offset";
  }
  r = read_at(dev, 0, {buf.data(), a + 512});
  ASSERT_FALSE(r);
  EXPECT_EQ(r.error().code, Errc::unaligned) << "length";
  r = write_at(dev, 100, {buf.data(), a});
  ASSERT_FALSE(r);
  EXPECT_EQ(r.error().code, Errc::unaligned);
}

class FileBackends : public ::testing::TestWithParam<std::tuple<Backend, bool>> {};

}  // namespace

TEST_P(FileBackends, RegularFile) {
  const auto [backend, direct] = GetParam();
  if ((backend == Backend::uring || backend == Backend::liburing) && !uring_compiled())
    GTEST_SKIP() << "built without io_uring";
  f2fstest::TempDir tmp;
  const auto path = (tmp / "dev.img").string();
  f2fstest::make_sparse_file(path, 8 << 20);
  auto dev = open_or_fail(path, backend, direct);
  ASSERT_TRUE(dev);
  EXPECT_EQ(dev->info().kind, DeviceKind::regular_file);
  EXPECT_EQ(dev->info().size_bytes, 8u << 20);
  EXPECT_EQ(dev->info().direct, direct);
  exercise(*dev, 1);
  exercise(*dev, 32);
  if (direct) expect_direct_alignment_errors(*dev);
}

INSTANTIATE_TEST_SUITE_P(Pipeline, FileBackends,
                         ::testing::Combine(::testing::Values(Backend::uring, Backend::liburing, Backend::posix),
                                            ::testing::Bool()),
                         [](const auto& i) {
                           const Backend b = std::get<0>(i.param);
                           return std::string(b == Backend::uring ? "uring" : b == Backend::liburing ? "liburing" : "posix") +
                                  (std::get<1>(i.param) ? "_direct" : "_buffered");
                         });

TEST(Pipeline, InMemoryBehindTheLayers) {
  Iostat stats;
  stats.set_enabled(true);
  IostatDevice dev(std::make_unique<FaultDevice>(make_memory_device(8 << 20, 4096)), stats);
  exercise(dev, 1);
  exercise(dev, 32);
  EXPECT_GT(stats.snapshot().count_of(IostatType::app_direct_io), 0u);
}

TEST(Pipeline, MoreRequestsThanSlotsWaitInOrder) {
  if (!uring_compiled()) GTEST_SKIP() << "built without io_uring";
  f2fstest::TempDir tmp;
  const auto path = (tmp / "dev.img").string();
  f2fstest::make_sparse_file(path, 4 << 20);
  BackendOptions bo;
  bo.queue_depth = 2;
  for (Backend b : {Backend::uring, Backend::liburing}) {
    auto dev = open_or_fail(path, b, true, false, bo);
    ASSERT_TRUE(dev);
    exercise(*dev, 64);
  }
}

TEST(Pipeline, CallbacksNeverRunInsideSubmit) {
  f2fstest::TempDir tmp;
  const auto path = (tmp / "dev.img").string();
  f2fstest::make_sparse_file(path, 1 << 20);
  for (Backend b : {Backend::uring, Backend::liburing, Backend::posix}) {
    if (b != Backend::posix && !uring_compiled()) continue;
    auto dev = open_or_fail(path, b, true);
    ASSERT_TRUE(dev);
    static bool in_submit;
    static int ran;
    ran = 0;
    AlignedBuf buf(4096);
    IoRequest reqs[4];
    reqs[0].op = IoOp::read, reqs[0].length = 4096;           // fine
    reqs[1].op = IoOp::read, reqs[1].offset = 1 << 20, reqs[1].length = 4096;  // past the end
    reqs[2].op = IoOp::flush;                                   // synchronous op
    reqs[3].op = IoOp::read, reqs[3].length = 100;             // unaligned
    for (auto& r : reqs) {
      r.buf = buf.data();
      r.on_complete = [](IoRequest&) noexcept {
        EXPECT_FALSE(in_submit);
        ++ran;
      };
      in_submit = true;
      dev->submit(r);
      in_submit = false;
    }
    EXPECT_EQ(ran, 0);
    EXPECT_EQ(dev->in_flight(), 4u);
    drain(*dev);
    EXPECT_EQ(ran, 4);
    EXPECT_TRUE(reqs[0].ok());
    EXPECT_EQ(reqs[1].status, Errc::out_of_range);
    EXPECT_TRUE(reqs[2].ok());
    EXPECT_EQ(reqs[3].status, Errc::unaligned);
  }
}

TEST(Pipeline, ReadOnlyDevice) {
  f2fstest::TempDir tmp;
  const auto path = (tmp / "dev.img").string();
  f2fstest::make_sparse_file(path, 1 << 20);
  for (Backend b : {Backend::automatic, Backend::posix}) {
    auto dev = open_or_fail(path, b, true, /*ro=*/true);
    ASSERT_TRUE(dev);
    AlignedBuf buf(4096);
    EXPECT_TRUE(read_at(*dev, 0, {buf.data(), 4096}));
    auto r = write_at(*dev, 0, {buf.data(), 4096});
    ASSERT_FALSE(r);
    EXPECT_EQ(r.error().code, Errc::read_only);
    EXPECT_NE(r.error().to_string().find("read-only"), std::string::npos);
    EXPECT_FALSE(write_zeroes(*dev, 0, 4096));
    EXPECT_TRUE(flush(*dev)) << "flushing a read-only device is a no-op";
  }
}

TEST(Pipeline, OpenErrors) {
  OpenOptions oo;
  auto r = open_device("/nonexistent/f2fscore/x", oo);
  ASSERT_FALSE(r);
  EXPECT_EQ(r.error().code, Errc::not_found);
  r = open_device("/dev/null", oo);
  ASSERT_FALSE(r);
  EXPECT_EQ(r.error().code, Errc::unsupported);
  EXPECT_NE(r.error().message.find("neither a regular file nor a block device"), std::string::npos);
  BackendOptions bo;
  bo.queue_depth = 0;
  f2fstest::TempDir tmp;
  const auto path = (tmp / "dev.img").string();
  f2fstest::make_sparse_file(path, 1 << 20);
  r = open_device(path, oo, bo);
  ASSERT_FALSE(r);
  EXPECT_EQ(r.error().code, Errc::invalid_argument);
}

TEST(Pipeline, FileSystemRefusingODirect) {
  f2fstest::TempDir tmp;
  const auto path = (tmp / "dev.img").string();
  f2fstest::make_sparse_file(path, 1 << 20);
  OpenOptions oo;
  oo.direct = true;
  for (Backend b : {Backend::automatic, Backend::uring, Backend::posix}) {
    BackendOptions bo;
    bo.backend = b;
    bo.faults.refuse_direct = true;
    auto r = open_device(path, oo, bo);
    ASSERT_FALSE(r) << "no silent fallback by default";
    EXPECT_EQ(r.error().code, Errc::unsupported);
    EXPECT_NE(r.error().message.find("refuses O_DIRECT"), std::string::npos) << r.error().to_string();
    EXPECT_EQ(r.error().sys_errno, EINVAL);
    // The documented fallback: buffered I/O, reported.
    bo.buffered_if_direct_refused = true;
    if (b == Backend::uring && !uring_compiled()) continue;
    r = open_device(path, oo, bo);
    ASSERT_OK(r);
    EXPECT_FALSE(r->device->info().direct);
    EXPECT_NE(r->note.find("O_DIRECT"), std::string::npos);
    exercise(*r->device, 8);
  }
}

TEST(Pipeline, KernelRefusingIoUringInjected) {
  f2fstest::TempDir tmp;
  const auto path = (tmp / "dev.img").string();
  f2fstest::make_sparse_file(path, 1 << 20);
  OpenOptions oo;
  oo.direct = true;
  BackendOptions bo;
  bo.faults.refuse_uring = true;
  auto r = open_device(path, oo, bo);  // automatic: falls back
  ASSERT_OK(r);
  EXPECT_EQ(r->backend, Backend::posix);
  EXPECT_NE(r->note.find("io_uring"), std::string::npos);
  EXPECT_NE(r->note.find("POSIX"), std::string::npos);
  EXPECT_TRUE(r->device->info().direct);
  exercise(*r->device, 8);
  bo.backend = Backend::uring;  // asked for io_uring explicitly: an error
  r = open_device(path, oo, bo);
  ASSERT_FALSE(r);
  EXPECT_EQ(r.error().code, Errc::unsupported);
  EXPECT_NE(r.error().message.find("io_uring"), std::string::npos);
}

#if defined(__linux__) && defined(__x86_64__)
// The real thing: a seccomp filter makes io_uring_setup fail with EPERM
// (as Docker's default profile and kernel.io_uring_disabled do), so Asio's
// io_uring service throws at construction; open_device() must catch it
// and fall back. In a child process, since seccomp cannot be undone.
TEST(Pipeline, KernelRefusingIoUringForReal) {
  if (!uring_compiled()) GTEST_SKIP() << "built without io_uring";
  f2fstest::TempDir tmp;
  const auto path = (tmp / "dev.img").string();
  f2fstest::make_sparse_file(path, 1 << 20);
  const pid_t pid = ::fork();
  ASSERT_GE(pid, 0);
  if (pid == 0) {
    sock_filter filter[] = {
        BPF_STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(seccomp_data, nr)),
        BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, __NR_io_uring_setup, 0, 1),
        BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ERRNO | (EPERM & SECCOMP_RET_DATA)),
        BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW),
    };
    sock_fprog prog{static_cast<unsigned short>(std::size(filter)), filter};
    if (::prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) != 0 || ::prctl(PR_SET_SECCOMP, SECCOMP_MODE_FILTER, &prog) != 0)
      ::_exit(10);
    OpenOptions oo;
    oo.direct = true;
    auto r = open_device(path, oo);
    if (!r) ::_exit(11);
    if (r->backend != Backend::posix) ::_exit(12);
    if (r->note.find("io_uring") == std::string::npos) ::_exit(13);
    AlignedBuf buf(4096);
    if (!write_at(*r->device, 0, {buf.data(), 4096}) || !read_at(*r->device, 0, {buf.data(), 4096})) ::_exit(14);
    BackendOptions bo;
    bo.backend = Backend::uring;
    auto u = open_device(path, oo, bo);
    if (u || u.error().code != Errc::unsupported || u.error().sys_errno != EPERM) ::_exit(15);
    ::_exit(0);
  }
  int status = 0;
  ASSERT_EQ(::waitpid(pid, &status, 0), pid);
  ASSERT_TRUE(WIFEXITED(status));
  EXPECT_EQ(WEXITSTATUS(status), 0) << "child step that failed: " << WEXITSTATUS(status);
}
#endif

TEST(Pipeline, ShortReadAtTheEndOfAShrunkenFile) {
  f2fstest::TempDir tmp;
  const auto path = (tmp / "dev.img").string();
  f2fstest::make_sparse_file(path, 1 << 20);
  for (Backend b : {Backend::uring, Backend::liburing, Backend::posix}) {
    if (b != Backend::posix && !uring_compiled()) continue;
    for (bool direct : {true, false}) {
      f2fstest::make_sparse_file(path, 1 << 20);
      auto dev = open_or_fail(path, b, direct);
      ASSERT_TRUE(dev);
      // Someone truncates the file under us: the device still believes
      // in 1 MiB, the kernel returns fewer bytes, then none.
      ASSERT_EQ(::truncate(path.c_str(), (1 << 20) - 4096), 0);
      AlignedBuf buf(8192);
      IoRequest r;
      r.op = IoOp::read;
      r.offset = (1 << 20) - 8192;
      r.length = 8192;
      r.buf = buf.data();
      dev->submit(r);
      drain(*dev);
      EXPECT_EQ(r.status, Errc::short_io) << backend_name(b) << (direct ? " direct" : " buffered");
      EXPECT_EQ(r.transferred, 4096u);
      auto st = read_at(*dev, (1 << 20) - 8192, {buf.data(), 8192});
      ASSERT_FALSE(st);
      EXPECT_EQ(st.error().code, Errc::short_io);
      EXPECT_NE(st.error().message.find("after 4096 bytes"), std::string::npos) << st.error().to_string();
    }
  }
}

TEST(Pipeline, PartialAndInterruptedTransfersAreResumed) {
  if (!uring_compiled()) GTEST_SKIP() << "built without io_uring";
  f2fstest::TempDir tmp;
  const auto path = (tmp / "dev.img").string();
  f2fstest::make_sparse_file(path, 8 << 20);
  BackendOptions bo;
  bo.hooks.max_chunk = 4096;       // every 16 KiB request moves in four pieces
  bo.hooks.interrupt_every = 3;    // and every third completion is -EINTR
  for (Backend b : {Backend::uring, Backend::liburing}) {
    auto dev = open_or_fail(path, b, true, false, bo);
    ASSERT_TRUE(dev);
    exercise(*dev, 1);
    exercise(*dev, 32);
  }
}

namespace {
std::atomic<int> g_signals{0};
void on_alarm(int) { g_signals.fetch_add(1, std::memory_order_relaxed); }
}  // namespace

TEST(Pipeline, SignalsWhileWaitingDoNotLoseCompletions) {
  // SIGALRM every 200 us, without SA_RESTART: the blocking io_uring_enter
  // in poll(true) returns EINTR again and again.
  f2fstest::TempDir tmp;
  const auto path = (tmp / "dev.img").string();
  {
    std::ofstream f(path, std::ios::binary);
    std::vector<char> mb(1 << 20, 'x');
    for (int i = 0; i < 16; ++i) f.write(mb.data(), static_cast<std::streamsize>(mb.size()));
  }
  struct sigaction sa {};
  sa.sa_handler = &on_alarm;
  sigemptyset(&sa.sa_mask);
  sa.sa_flags = 0;
  struct sigaction old {};
  ASSERT_EQ(::sigaction(SIGALRM, &sa, &old), 0);
  itimerval it{{0, 200}, {0, 200}};
  ASSERT_EQ(::setitimer(ITIMER_REAL, &it, nullptr), 0);
  for (Backend b : {Backend::uring, Backend::liburing, Backend::posix}) {
    if (b != Backend::posix && !uring_compiled()) continue;
    auto dev = open_or_fail(path, b, true, true);
    ASSERT_TRUE(dev);
    iotest::Loop loop(*dev, 16, IoOp::read, 16 << 20);
    loop.run(4000);
    EXPECT_EQ(loop.errors, 0u) << backend_name(b);
    EXPECT_EQ(loop.done, 4000u);
  }
  itimerval off{};
  ::setitimer(ITIMER_REAL, &off, nullptr);
  ::sigaction(SIGALRM, &old, nullptr);
  EXPECT_GT(g_signals.load(), 0);
}

TEST(Pipeline, FuaAndSyncFlagsAreAccepted) {
  f2fstest::TempDir tmp;
  const auto path = (tmp / "dev.img").string();
  f2fstest::make_sparse_file(path, 1 << 20);
  auto dev = open_or_fail(path, Backend::automatic, true);
  ASSERT_TRUE(dev);
  AlignedBuf buf(4096);
  IoRequest r;
  r.op = IoOp::write;
  r.flags = io_flag::fua | io_flag::sync;
  r.length = 4096;
  r.buf = buf.data();
  dev->submit(r);
  drain(*dev);
  EXPECT_TRUE(r.ok());
  EXPECT_EQ(r.transferred, 4096u);
}

// ---- Loop block device (root and losetup needed) ----

namespace {

struct LoopDevice {
  std::string dev;
  explicit LoopDevice(const std::string& file, bool ro, unsigned sector = 512) {
    std::string cmd = "losetup --find --show " + std::string(ro ? "-r " : "") +
                      (sector != 512 ? "--sector-size " + std::to_string(sector) + " " : "") +
                      f2fstest::shell_quote(file) + " 2>&1";
    auto r = f2fstest::run(cmd);
    if (r.exit_code == 0 && r.output.rfind("/dev/loop", 0) == 0) dev = r.output.substr(0, r.output.find('\n'));
  }
  ~LoopDevice() {
    if (!dev.empty()) (void)f2fstest::run("losetup -d " + dev);
  }
};

bool loop_available(std::string& why) {
  if (::geteuid() != 0) {
    why = "needs root for losetup";
    return false;
  }
  if (f2fstest::run("command -v losetup").exit_code != 0) {
    why = "losetup not installed";
    return false;
  }
  return true;
}

}  // namespace

TEST(PipelineLoop, BlockDeviceBothBackends) {
  std::string why;
  if (!loop_available(why)) {
    if (f2fstest::required("LOOP")) FAIL() << why;
    GTEST_SKIP() << why;
  }
  f2fstest::TempDir tmp;
  const auto file = (tmp / "loop.img").string();
  f2fstest::make_sparse_file(file, 32 << 20);
  for (unsigned sector : {512u, 4096u}) {
    LoopDevice loop(file, false, sector);
    if (loop.dev.empty()) {
      if (f2fstest::required("LOOP")) FAIL() << "losetup failed";
      GTEST_SKIP() << "losetup failed (no loop devices in this container?)";
    }
    for (Backend b : {Backend::uring, Backend::liburing, Backend::posix}) {
      if (b != Backend::posix && !uring_compiled()) continue;
      auto dev = open_or_fail(loop.dev, b, true);
      ASSERT_TRUE(dev);
      EXPECT_EQ(dev->info().kind, DeviceKind::block_device);
      EXPECT_EQ(dev->info().size_bytes, 32u << 20);
      EXPECT_EQ(dev->info().logical_block_size, 4096u) << "direct: max(4096, BLKSSZGET)";
      exercise(*dev, 32);
      expect_direct_alignment_errors(*dev);
      auto buffered = open_or_fail(loop.dev, b, false);
      ASSERT_TRUE(buffered);
      EXPECT_EQ(buffered->info().logical_block_size, sector) << "BLKSSZGET";
      exercise(*buffered, 8);
    }
  }
}

// A sequential stream at depth 8 must reach the device as 8 requests in
// flight, not merged: the kernel merges contiguous requests sent in one
// io_uring_enter of more than two SQEs (one block plug), which makes
// 8 x 128 KiB one 1 MiB request at depth 1 (7 of 8 requests merged in the
// device's stat file) unless a request that continues its predecessor is
// sent on its own.
TEST(PipelineLoop, SequentialRequestsReachTheDeviceUnmerged) {
  std::string why;
  if (!loop_available(why)) {
    if (f2fstest::required("LOOP")) FAIL() << why;
    GTEST_SKIP() << why;
  }
  if (!uring_compiled()) GTEST_SKIP() << "built without io_uring";
  f2fstest::TempDir tmp;
  const auto file = (tmp / "loop.img").string();
  f2fstest::make_sparse_file(file, 16 << 20);
  LoopDevice loop(file, false);
  if (loop.dev.empty()) {
    if (f2fstest::required("LOOP")) FAIL() << "losetup failed";
    GTEST_SKIP() << "losetup failed (no loop devices in this container?)";
  }
  // Fields 1, 2, 5, 6 of the block layer's stat file: reads and writes
  // completed, and merged (Documentation/block/stat.rst).
  const std::string stat = "/sys/block/" + loop.dev.substr(loop.dev.rfind('/') + 1) + "/stat";
  auto counters = [&] {
    std::ifstream in(stat);
    std::array<std::uint64_t, 8> v{};
    for (auto& x : v) in >> x;
    return v;
  };
  for (Backend b : {Backend::uring, Backend::liburing}) {
    for (IoPattern pat : {IoPattern::read, IoPattern::write}) {
      auto dev = open_or_fail(loop.dev, b, true);
      ASSERT_TRUE(dev);
      IoJob job;
      job.pattern = pat;
      job.block_size = 128 << 10;
      job.queue_depth = 8;
      job.max_ios = 1024;  // 8 passes over the 16 MiB
      job.runtime_s = 60;
      job.measure_latency = false;
      const auto before = counters();
      auto r = run_io_job(*dev, job);
      const auto after = counters();
      ASSERT_OK(r);
      ASSERT_EQ(r->ios, 1024u);
      const bool rd = pat == IoPattern::read;
      const std::uint64_t merged = after[rd ? 1 : 5] - before[rd ? 1 : 5];
      const std::uint64_t requests = after[rd ? 0 : 4] - before[rd ? 0 : 4];
      EXPECT_LE(merged * 8, r->ios) << backend_name(b) << " " << io_pattern_name(pat) << ": " << merged
                                    << " of " << r->ios << " requests merged (" << requests << " reached the device)";
    }
  }
}

TEST(PipelineLoop, ReadOnlyBlockDeviceOpenedForWriting) {
  std::string why;
  if (!loop_available(why)) {
    if (f2fstest::required("LOOP")) FAIL() << why;
    GTEST_SKIP() << why;
  }
  f2fstest::TempDir tmp;
  const auto file = (tmp / "loop.img").string();
  f2fstest::make_sparse_file(file, 8 << 20);
  LoopDevice loop(file, true);
  if (loop.dev.empty()) GTEST_SKIP() << "losetup failed";
  // Linux opens a read-only block device O_RDWR (the writes fail later
  // with EPERM): BLKROGET must refuse it at open, for every way in.
  {
    OpenOptions oo;
    auto r = open_posix_device(loop.dev, oo);
    ASSERT_FALSE(r) << "open_posix_device opened a read-only device for writing";
    EXPECT_EQ(r.error().code, Errc::read_only);
    EXPECT_NE(r.error().to_string().find("read-only"), std::string::npos) << r.error().to_string();
    oo.read_only = true;
    EXPECT_TRUE(open_posix_device(loop.dev, oo));
  }
  for (Backend b : {Backend::automatic, Backend::uring, Backend::posix}) {
    if (b == Backend::uring && !uring_compiled()) continue;
    OpenOptions oo;
    oo.direct = true;
    BackendOptions bo;
    bo.backend = b;
    auto r = open_device(loop.dev, oo, bo);
    ASSERT_FALSE(r) << "a read-only device must not open for writing";
    EXPECT_EQ(r.error().code, Errc::read_only);
    EXPECT_NE(r.error().to_string().find("read-only"), std::string::npos) << r.error().to_string();
    oo.read_only = true;
    r = open_device(loop.dev, oo, bo);
    ASSERT_OK(r);
    AlignedBuf buf(4096);
    EXPECT_TRUE(read_at(*r->device, 0, {buf.data(), 4096}));
  }
}
