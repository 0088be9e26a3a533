// iostat toggled thousands of times while several threads keep devices
// busy: no snapshot ever shows a completion without its submission, and
// once everything is drained with iostat on, accounted submissions equal
// accounted completions for every type.
#include <gtest/gtest.h>

#include <atomic>
#include <thread>

#include "f2fscore/iostat.hpp"
#include "f2fscore/uring_device.hpp"
#include "io/io_test_util.hpp"
#include "support/test_support.hpp"

using namespace f2fscore;

namespace {

// One I/O thread: its own device, a mix of types and ops at queue depth 8.
struct Worker {
  std::unique_ptr<IostatDevice> dev;
  std::vector<IoRequest> reqs;
  std::unique_ptr<iotest::AlignedBuf> buf;
  std::uint64_t rng;
  std::uint64_t blocks;
  std::atomic<bool>* stop;
  std::uint64_t completed = 0;
  std::uint64_t errors = 0;

  static constexpr IostatType kTypes[] = {
      IostatType::app_direct_io,   IostatType::app_buffered_io,  IostatType::fs_node_io,
      IostatType::fs_cp_meta_io,   IostatType::fs_gc_data_io,    IostatType::app_direct_read_io,
      IostatType::fs_node_read_io, IostatType::fs_meta_read_io,  IostatType::fs_data_read_io,
      IostatType::fs_discard_io,   IostatType::fs_flush_io,      IostatType::app_mapped_io};

  void refill(IoRequest& r) {
    rng = rng * 6364136223846793005ull + 1442695040888963407ull;
    const auto t = kTypes[(rng >> 33) % std::size(kTypes)];
    r.tag = io_tag(t, (rng >> 40) & 1);
    r.flags = (rng >> 41) & 1 ? io_flag::sync : 0;
    r.offset = ((rng >> 20) % blocks) * 4096;
    r.length = 4096;
    switch (t) {
      case IostatType::fs_discard_io: r.op = IoOp::discard; break;
      case IostatType::fs_flush_io: r.op = IoOp::flush; break;
      case IostatType::app_direct_read_io: case IostatType::fs_node_read_io:
      case IostatType::fs_meta_read_io: case IostatType::fs_data_read_io: r.op = IoOp::read; break;
      default: r.op = IoOp::write; break;
    }
  }

  static void done(IoRequest& r) noexcept {
    auto& w = *static_cast<Worker*>(r.user);
    ++w.completed;
    if (!r.ok() && r.status != Errc::unsupported) ++w.errors;  // discard may be unsupported
    if (w.stop->load(std::memory_order_relaxed)) return;
    w.refill(r);
    w.dev->submit(r);
  }

  void run() {
    for (auto& r : reqs) {
      refill(r);
      r.buf = buf->data() + 4096 * (&r - reqs.data());
      r.on_complete = &done;
      r.user = this;
      dev->submit(r);
    }
    while (dev->in_flight() > 0) dev->poll(true);
  }
};

}  // namespace

TEST(IostatStress, ToggleThousandsOfTimesUnderLoad) {
  Iostat stats;  // the real clock
  std::atomic<bool> stop{false};
  f2fstest::TempDir tmp;
  std::vector<std::unique_ptr<Worker>> workers;
  auto add = [&](std::unique_ptr<BlockDevice> d, std::uint64_t seed) {
    auto w = std::make_unique<Worker>();
    w->blocks = d->info().size_bytes / 4096;
    w->dev = std::make_unique<IostatDevice>(std::move(d), stats);
    w->reqs.resize(8);
    w->buf = std::make_unique<iotest::AlignedBuf>(8 * 4096);
    w->rng = seed;
    w->stop = &stop;
    workers.push_back(std::move(w));
  };
  add(make_memory_device(8 << 20, 512), 1);
  add(make_memory_device(8 << 20, 4096), 2);
  // A real asynchronous device too, where requests stay in flight longer.
  const auto file = tmp / "stress.img";
  f2fstest::make_sparse_file(file, 16 << 20);
  OpenOptions oo;
  oo.direct = true;
  auto opened = open_device(file.string(), oo, {});
  ASSERT_OK(opened);
  add(std::move(opened->device), 3);

  std::vector<std::thread> threads;
  for (auto& w : workers) threads.emplace_back([&w] { w->run(); });

  // The toggler, and a checker looking at consistent snapshots meanwhile.
  // 4,000 switches take about a second natively; under emulation (qemu-user
  // for the cross builds) the time bound ends it first.
  constexpr int kToggles = 4000;
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(20);
  std::uint64_t violations = 0, checks = 0;
  int toggles = 0;
  for (int i = 0; i < kToggles && std::chrono::steady_clock::now() < deadline; ++i, ++toggles) {
    stats.set_enabled(i % 2 == 0);
    if (i % 8 == 0) {
      const auto s = stats.snapshot();
      ++checks;
      for (std::size_t t = 0; t < kIostatTypes; ++t)
        if (s.completed[t] > s.count[t]) ++violations;
      if (!s.enabled) {
        for (std::size_t t = 0; t < kIostatTypes; ++t)
          if (s.count[t] != 0 || s.completed[t] != 0) ++violations;
      }
    }
    if (i % 64 == 0) std::this_thread::yield();
  }
  stats.set_enabled(true);  // end with iostat on and let the load run on
  std::this_thread::sleep_for(std::chrono::milliseconds(50));
  stop = true;
  for (auto& t : threads) t.join();

  EXPECT_EQ(violations, 0u) << "a completion without its submission, or counters while off (" << checks
                            << " checks)";
  std::uint64_t total = 0;
  for (auto& w : workers) {
    EXPECT_EQ(w->errors, 0u);
    total += w->completed;
  }
  EXPECT_GT(total, 1000u) << "the load ran while toggling";
  EXPECT_GE(toggles, 200) << "iostat was switched often enough to matter";
  const auto s = stats.snapshot();
  std::uint64_t accounted = 0;
  for (std::size_t t = 0; t < kIostatTypes; ++t) {
    SCOPED_TRACE(std::string(iostat_type_key(static_cast<IostatType>(t))));
    EXPECT_EQ(s.count[t], s.completed[t]) << "accounted submissions == accounted completions";
    accounted += s.count[t];
  }
  EXPECT_GT(accounted, 0u) << "something was accounted after the last switch-on";
}

namespace {

// A fixed mix on one device: `n` requests of 4 KiB, cycling through
// `types`, at depth 8, resubmitted from the callbacks. At every tenth of
// the run it waits for a snapshot taken since its last wait (`snapshots`
// counts them), so that snapshots race with counting however the threads
// are scheduled.
struct MixWorker {
  std::unique_ptr<IostatDevice> dev;
  std::vector<IostatType> types;
  std::uint64_t n = 0;
  std::uint64_t submitted = 0;
  std::uint64_t errors = 0;
  const std::atomic<std::uint64_t>* snapshots = nullptr;
  std::uint64_t seen = 0;
  std::vector<IoRequest> reqs = std::vector<IoRequest>(8);
  iotest::AlignedBuf buf{8 * 4096};

  void fill(IoRequest& r) {
    if (submitted > 0 && submitted % (n / 10) == 0) {
      while (snapshots->load() <= seen) std::this_thread::yield();
      seen = snapshots->load();
    }
    const IostatType t = types[submitted % types.size()];
    r.tag = io_tag(t);
    r.op = static_cast<std::size_t>(t) >= static_cast<std::size_t>(IostatType::app_direct_read_io) ? IoOp::read
                                                                                                     : IoOp::write;
    r.flags = submitted % 3 == 0 ? io_flag::sync : 0;
    r.offset = (submitted % 64) * 4096;
    r.length = 4096;
    ++submitted;
  }
  static void done(IoRequest& r) noexcept {
    auto& w = *static_cast<MixWorker*>(r.user);
    if (!r.ok()) ++w.errors;
    if (w.submitted == w.n) return;
    w.fill(r);
    w.dev->submit(r);
  }
  void run() {
    for (auto& r : reqs) {
      r.buf = buf.data() + 4096 * (&r - reqs.data());
      r.on_complete = &done;
      r.user = this;
      fill(r);
      dev->submit(r);
    }
    while (dev->in_flight() > 0) dev->poll(true);
  }
};

}  // namespace

// Two threads count into one Iostat, each through its own layer, while
// snapshots are taken: every snapshot is consistent (completions never
// ahead of submissions, 4 KiB per request in every type, the hidden sums
// equal to their parts, nothing going backwards), and the end state is
// exactly the requests made (kernel rules: f2fs_update_iostat() per
// submission, APP_WRITE_IO = buffered + direct, APP_READ_IO likewise).
TEST(IostatStress, TwoThreadsCountAndSnapshotsStayConsistent) {
  using T = IostatType;
  Iostat stats;
  stats.set_enabled(true);
  constexpr std::uint64_t kN = 30000;
  MixWorker a, b;
  a.dev = std::make_unique<IostatDevice>(make_memory_device(1 << 20, 4096), stats);
  a.types = {T::app_direct_io, T::fs_node_read_io, T::app_direct_read_io};
  a.n = kN;
  b.dev = std::make_unique<IostatDevice>(make_memory_device(1 << 20, 4096), stats);
  b.types = {T::app_buffered_io, T::fs_meta_io, T::app_direct_read_io, T::fs_node_read_io};
  b.n = kN;
  std::atomic<std::uint64_t> snapshots{0};
  a.snapshots = b.snapshots = &snapshots;
  std::atomic<int> running{2};
  std::thread ta([&] { a.run(); --running; });
  std::thread tb([&] { b.run(); --running; });

  auto ix = [](T t) { return static_cast<std::size_t>(t); };
  std::uint64_t violations = 0, checks = 0;
  IostatSnapshot last;
  auto check = [&](const IostatSnapshot& s) {
    ++checks;
    for (std::size_t t = 0; t < kIostatTypes; ++t) {
      if (s.completed[t] > s.count[t]) ++violations;
      if (s.bytes[t] != 4096 * s.count[t]) ++violations;
      if (s.count[t] < last.count[t] || s.completed[t] < last.completed[t]) ++violations;
    }
    if (s.count[ix(T::app_write_io)] != s.count[ix(T::app_direct_io)] + s.count[ix(T::app_buffered_io)]) ++violations;
    if (s.count[ix(T::app_read_io)] != s.count[ix(T::app_direct_read_io)]) ++violations;
    std::uint64_t timed = 0, done = 0;
    for (const auto& row : s.latency)
      for (const auto& l : row) timed += l.count;
    for (std::size_t t = 0; t < kIostatTypes; ++t)
      if (t != ix(T::app_write_io) && t != ix(T::app_read_io)) done += s.completed[t];
    if (timed != done) ++violations;  // every completion here is a timed read or write
    last = s;
  };
  while (running.load() > 0) {
    check(stats.snapshot());
    ++snapshots;
  }
  ta.join();
  tb.join();
  const auto s = stats.snapshot();
  check(s);
  EXPECT_EQ(violations, 0u) << checks << " snapshots";
  EXPECT_GE(checks, 10u);  // each worker waited for 9 of them
  EXPECT_EQ(a.errors + b.errors, 0u);
  // The exact totals: request i of a worker has type types[i % size].
  auto want = [&](const MixWorker& w, T t) {
    std::uint64_t c = 0;
    for (std::size_t k = 0; k < w.types.size(); ++k)
      if (w.types[k] == t) c += (w.n - k + w.types.size() - 1) / w.types.size();
    return c;
  };
  for (T t : {T::app_direct_io, T::app_buffered_io, T::fs_meta_io, T::fs_node_read_io, T::app_direct_read_io}) {
    SCOPED_TRACE(std::string(iostat_type_key(t)));
    EXPECT_EQ(s.count_of(t), want(a, t) + want(b, t));
    EXPECT_EQ(s.completed[ix(t)], s.count_of(t));
    EXPECT_EQ(s.bytes_of(t), 4096 * s.count_of(t));
  }
  EXPECT_EQ(s.count_of(T::app_write_io), want(a, T::app_direct_io) + want(b, T::app_buffered_io));
  EXPECT_EQ(s.count_of(T::app_read_io), want(a, T::app_direct_read_io) + want(b, T::app_direct_read_io));
  // The layers' counters stay in the volume's sums after the layers go.
  a.dev.reset();
  b.dev.reset();
  EXPECT_EQ(stats.snapshot().count, s.count);
  EXPECT_EQ(stats.snapshot().completed, s.completed);
}
