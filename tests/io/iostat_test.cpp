// iostat: exact counters for scripted sequences of every type, latency
// buckets with an injected clock, the on/off gate and its reset, period
// records, and the kernel's text layout.
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>
#include <sstream>
#include <string>
#include <vector>

#include "f2fscore/iostat.hpp"
#include "io/io_test_util.hpp"

using namespace f2fscore;
using iotest::FakeClock;

namespace {

constexpr std::size_t N = kIostatTypes;

std::size_t ix(IostatType t) { return static_cast<std::size_t>(t); }

IoOp op_for(IostatType t) {
  const auto i = ix(t);
  if (t == IostatType::fs_discard_io) return IoOp::discard;
  if (t == IostatType::fs_flush_io) return IoOp::flush;
  return i < ix(IostatType::app_direct_read_io) ? IoOp::write : IoOp::read;
}

// Submits one request through the layer and completes it.
void one(BlockDevice& dev, IoOp op, std::uint64_t off, std::uint64_t len, std::uint16_t tag,
         std::uint8_t flags = 0) {
  static iotest::AlignedBuf buf(1 << 20);
  IoRequest r;
  r.op = op;
  r.offset = off;
  r.length = len;
  r.tag = tag;
  r.flags = flags;
  r.buf = (op == IoOp::read || op == IoOp::write) ? buf.data() : nullptr;
  bool done = false;
  r.user = &done;
  r.on_complete = [](IoRequest& q) noexcept { *static_cast<bool*>(q.user) = true; };
  dev.submit(r);
  while (!done) dev.poll(true);
  ASSERT_TRUE(r.ok()) << r.error().to_string();
  EXPECT_EQ(r.user, &done) << "the layer must restore the caller's user pointer";
}

struct Fixture {
  FakeClock clk;
  Iostat stats{clk.clock()};
  IostatDevice dev{make_memory_device(64 << 20, 512), stats};
};

}  // namespace

TEST(Iostat, OffByDefaultAndCountsNothing) {
  Fixture f;
  EXPECT_FALSE(f.stats.enabled());
  EXPECT_EQ(f.stats.period_ms(), 3000u);
  one(f.dev, IoOp::write, 0, 4096, io_tag(IostatType::fs_node_io));
  one(f.dev, IoOp::read, 0, 4096, 0);
  one(f.dev, IoOp::flush, 0, 0, 0);
  const auto s = f.stats.snapshot();
  for (std::size_t i = 0; i < N; ++i) {
    EXPECT_EQ(s.bytes[i], 0u);
    EXPECT_EQ(s.count[i], 0u);
  }
  EXPECT_EQ(f.clk.reads, 1u) << "only snapshot() read the clock";
  EXPECT_EQ(format_iostat_info(s, 0), "") << "iostat_info is empty when disabled";
}

TEST(Iostat, EveryTypeCountedExactly) {
  Fixture f;
  f.stats.set_enabled(true);
  // Scripted: type i gets (i % 3) + 1 requests of 4 KiB * (i % 4 + 1).
  std::array<std::uint64_t, N> want_bytes{}, want_count{};
  for (std::size_t i = 0; i < N; ++i) {
    const auto t = static_cast<IostatType>(i);
    const std::uint64_t len = 4096 * (i % 4 + 1);
    for (std::size_t k = 0; k < i % 3 + 1; ++k) {
      if (t == IostatType::fs_zone_reset_io) {
        // No zone-reset op on a BlockDevice: the engine accounts it itself.
        EXPECT_TRUE(f.stats.account(t, len));
      } else {
        const IoOp op = op_for(t);
        one(f.dev, op, 8192 * i, op == IoOp::flush ? 0 : len, io_tag(t));
      }
      want_bytes[i] += t == IostatType::fs_flush_io ? 0 : len;
      want_count[i] += 1;
    }
  }
  // The hidden sums follow buffered + direct, as f2fs_update_iostat().
  const auto aw = ix(IostatType::app_write_io), ar = ix(IostatType::app_read_io);
  for (auto t : {IostatType::app_direct_io, IostatType::app_buffered_io}) {
    want_bytes[aw] += want_bytes[ix(t)];
    want_count[aw] += want_count[ix(t)];
  }
  for (auto t : {IostatType::app_direct_read_io, IostatType::app_buffered_read_io}) {
    want_bytes[ar] += want_bytes[ix(t)];
    want_count[ar] += want_count[ix(t)];
  }
  const auto s = f.stats.snapshot();
  for (std::size_t i = 0; i < N; ++i) {
    SCOPED_TRACE(std::string(iostat_type_key(static_cast<IostatType>(i))));
    EXPECT_EQ(s.bytes[i], want_bytes[i]);
    EXPECT_EQ(s.count[i], want_count[i]);
    if (static_cast<IostatType>(i) != IostatType::fs_zone_reset_io) {
      EXPECT_EQ(s.completed[i], want_count[i]) << "every accounted submission completed";
    }
  }
  EXPECT_EQ(s.bytes_of(IostatType::fs_flush_io), 0u);
  EXPECT_EQ(s.count_of(IostatType::fs_flush_io), 1u);
}

TEST(Iostat, CompressedInodesAlsoCountTheCdataVariant) {
  Fixture f;
  f.stats.set_enabled(true);
  using T = IostatType;
  const std::pair<T, T> pairs[] = {{T::app_buffered_io, T::app_buffered_cdata_io},
                                   {T::app_mapped_io, T::app_mapped_cdata_io},
                                   {T::fs_data_io, T::fs_cdata_io},
                                   {T::app_buffered_read_io, T::app_buffered_cdata_read_io},
                                   {T::app_mapped_read_io, T::app_mapped_cdata_read_io},
                                   {T::fs_data_read_io, T::fs_cdata_read_io}};
  for (auto [t, c] : pairs) one(f.dev, op_for(t), 0, 8192, io_tag(t, true));
  // Direct I/O on a compressed inode has no cdata variant in the kernel.
  one(f.dev, IoOp::write, 0, 4096, io_tag(T::app_direct_io, true));
  const auto s = f.stats.snapshot();
  for (auto [t, c] : pairs) {
    EXPECT_EQ(s.bytes_of(t), 8192u);
    EXPECT_EQ(s.bytes_of(c), 8192u) << iostat_type_key(c);
    EXPECT_EQ(s.count_of(c), 1u);
  }
  EXPECT_EQ(s.bytes_of(T::app_write_io), 8192u + 4096u);  // buffered + direct
  EXPECT_EQ(s.bytes_of(T::app_read_io), 8192u);
}

TEST(Iostat, UntaggedRequestsAreClassifiedByOp) {
  Fixture f;
  f.stats.set_enabled(true);
  one(f.dev, IoOp::read, 0, 4096, 0);
  one(f.dev, IoOp::write, 0, 8192, 0);
  one(f.dev, IoOp::discard, 0, 1 << 16, 0);
  one(f.dev, IoOp::flush, 0, 0, 0);
  one(f.dev, IoOp::write_zeroes, 0, 4096, 0);  // not accounted
  const auto s = f.stats.snapshot();
  EXPECT_EQ(s.bytes_of(IostatType::app_direct_read_io), 4096u);
  EXPECT_EQ(s.bytes_of(IostatType::app_direct_io), 8192u);
  EXPECT_EQ(s.bytes_of(IostatType::fs_discard_io), 65536u);
  EXPECT_EQ(s.count_of(IostatType::fs_flush_io), 1u);
  std::uint64_t total = 0;
  for (auto c : s.count) total += c;
  EXPECT_EQ(total, 6u) << "4 requests + the two hidden sums";
}

TEST(Iostat, DisablingResetsLikeTheKernel) {
  Fixture f;
  f.stats.set_enabled(true);
  one(f.dev, IoOp::write, 0, 4096, io_tag(IostatType::fs_meta_io));
  EXPECT_EQ(f.stats.snapshot().count_of(IostatType::fs_meta_io), 1u);
  f.stats.set_enabled(false);
  f.stats.set_enabled(true);
  const auto s = f.stats.snapshot();
  EXPECT_EQ(s.count_of(IostatType::fs_meta_io), 0u);
  EXPECT_EQ(s.bytes_of(IostatType::fs_meta_io), 0u);
  EXPECT_EQ(s.lat(IostatLat::write_async, IostatPage::meta).count, 0u);
}

TEST(Iostat, DecisionIsMadeAtSubmission) {
  Fixture f;
  iotest::AlignedBuf buf(4096);
  auto mk = [&](IoRequest& r) {
    r.op = IoOp::read;
    r.length = 4096;
    r.buf = buf.data();
    r.tag = io_tag(IostatType::fs_node_read_io);
  };
  // Submitted while off, completed while on: not counted at all.
  IoRequest a;
  mk(a);
  f.dev.submit(a);
  f.stats.set_enabled(true);
  drain(f.dev);
  auto s = f.stats.snapshot();
  EXPECT_EQ(s.count_of(IostatType::fs_node_read_io), 0u);
  EXPECT_EQ(s.completed[ix(IostatType::fs_node_read_io)], 0u);
  EXPECT_EQ(a.on_complete, nullptr) << "a request submitted while off is never detoured";
  // Submitted while on, completed after off+on: its submission was reset,
  // so its completion is not recorded either.
  IoRequest b;
  mk(b);
  f.dev.submit(b);
  EXPECT_EQ(f.stats.snapshot().count_of(IostatType::fs_node_read_io), 1u);
  f.stats.set_enabled(false);
  f.stats.set_enabled(true);
  drain(f.dev);
  s = f.stats.snapshot();
  EXPECT_EQ(s.count_of(IostatType::fs_node_read_io), 0u);
  EXPECT_EQ(s.completed[ix(IostatType::fs_node_read_io)], 0u);
  EXPECT_EQ(s.lat(IostatLat::read, IostatPage::node).count, 0u);
  EXPECT_EQ(b.on_complete, nullptr) << "the caller's callback is restored";
  // Submitted while on, completed while off: counted nowhere after reset.
  IoRequest c;
  mk(c);
  f.dev.submit(c);
  f.stats.set_enabled(false);
  drain(f.dev);
  s = f.stats.snapshot();
  EXPECT_EQ(s.count_of(IostatType::fs_node_read_io), 0u);
  EXPECT_EQ(s.completed[ix(IostatType::fs_node_read_io)], 0u);
}

TEST(Iostat, LatencyBucketsWithAnInjectedClock) {
  Fixture f;
  f.stats.set_enabled(true);
  iotest::AlignedBuf buf(1 << 16);
  struct Case {
    IoOp op;
    IostatType type;
    std::uint8_t flags;
    std::uint64_t ns;
    IostatLat lat;
    IostatPage page;
  };
  using T = IostatType;
  const Case cases[] = {
      {IoOp::read, T::app_direct_read_io, 0, 300, IostatLat::read, IostatPage::data},
      {IoOp::read, T::fs_data_read_io, 0, 100, IostatLat::read, IostatPage::data},
      {IoOp::read, T::fs_node_read_io, 0, 700, IostatLat::read, IostatPage::node},
      {IoOp::read, T::fs_meta_read_io, 0, 50, IostatLat::read, IostatPage::meta},
      {IoOp::write, T::fs_node_io, io_flag::sync, 1000, IostatLat::write_sync, IostatPage::node},
      {IoOp::write, T::fs_cp_node_io, io_flag::sync, 3000, IostatLat::write_sync, IostatPage::node},
      {IoOp::write, T::fs_cp_meta_io, io_flag::sync | io_flag::fua, 5000, IostatLat::write_sync, IostatPage::meta},
      {IoOp::write, T::fs_data_io, 0, 2000, IostatLat::write_async, IostatPage::data},
      {IoOp::write, T::fs_gc_data_io, 0, 4000, IostatLat::write_async, IostatPage::data},
      {IoOp::write, T::fs_gc_node_io, 0, 6000, IostatLat::write_async, IostatPage::node},
      {IoOp::write, T::fs_meta_io, 0, 10, IostatLat::write_async, IostatPage::meta},
  };
  // All in flight at once, completing at scripted times: each request's
  // latency is its own completion time minus its own submission time.
  std::vector<IoRequest> reqs(std::size(cases));
  for (std::size_t i = 0; i < std::size(cases); ++i) {
    auto& r = reqs[i];
    r.op = cases[i].op;
    r.flags = cases[i].flags;
    r.tag = io_tag(cases[i].type);
    r.offset = 4096 * i;
    r.length = 4096;
    r.buf = buf.data() + 4096 * i;
  }
  // Submit at t = 1000 + i; the memory device completes in poll(), in
  // order; advance the clock inside each completion.
  struct Ctx {
    FakeClock* clk;
    const Case* cases;
    std::size_t next = 0;
  } ctx{&f.clk, cases};
  for (std::size_t i = 0; i < std::size(cases); ++i) {
    f.clk.t = 1000 + i;
    reqs[i].user = &ctx;
    reqs[i].on_complete = [](IoRequest& r) noexcept {
      auto& c = *static_cast<Ctx*>(r.user);
      ++c.next;
      if (c.next < 11) c.clk->t = 1000 + c.next + c.cases[c.next].ns;  // the next one's completion time
    };
    f.dev.submit(reqs[i]);
  }
  const std::uint64_t reads_before = f.clk.reads;
  f.clk.t = 1000 + 0 + cases[0].ns;
  drain(f.dev);
  EXPECT_EQ(f.clk.reads - reads_before, std::size(cases)) << "one clock read per completion";
  const auto s = f.stats.snapshot();
  auto expect = [&](IostatLat l, IostatPage p, std::uint64_t peak, std::uint64_t sum, std::uint64_t n) {
    const auto& b = s.lat(l, p);
    EXPECT_EQ(b.peak_ns, peak) << int(l) << "/" << int(p);
    EXPECT_EQ(b.sum_ns, sum) << int(l) << "/" << int(p);
    EXPECT_EQ(b.count, n) << int(l) << "/" << int(p);
  };
  expect(IostatLat::read, IostatPage::data, 300, 400, 2);
  expect(IostatLat::read, IostatPage::node, 700, 700, 1);
  expect(IostatLat::read, IostatPage::meta, 50, 50, 1);
  expect(IostatLat::write_sync, IostatPage::data, 0, 0, 0);
  expect(IostatLat::write_sync, IostatPage::node, 3000, 4000, 2);
  expect(IostatLat::write_sync, IostatPage::meta, 5000, 5000, 1);
  expect(IostatLat::write_async, IostatPage::data, 4000, 6000, 2);
  expect(IostatLat::write_async, IostatPage::node, 6000, 6000, 1);
  expect(IostatLat::write_async, IostatPage::meta, 10, 10, 1);
  EXPECT_EQ(s.lat(IostatLat::write_async, IostatPage::data).avg_ns(), 3000u);
  EXPECT_EQ(format_iostat_latency(s),
            "iotype [peak lat.(us)/avg lat.(us)/count], rd_data [0/0/2], rd_node [0/0/1], rd_meta [0/0/1], "
            "wr_sync_data [0/0/0], wr_sync_node [3/2/2], wr_sync_meta [5/5/1], wr_async_data [4/3/2], "
            "wr_async_node [6/6/1], wr_async_meta [0/0/1]\n");
}

TEST(Iostat, TwoClockReadsPerAccountedRequestNoneForFlushOrDiscard) {
  Fixture f;
  f.stats.set_enabled(true);
  const auto r0 = f.clk.reads;
  one(f.dev, IoOp::read, 0, 4096, 0);
  EXPECT_EQ(f.clk.reads - r0, 2u);
  one(f.dev, IoOp::flush, 0, 0, 0);
  one(f.dev, IoOp::discard, 0, 4096, 0);
  EXPECT_EQ(f.clk.reads - r0, 2u);
}

TEST(Iostat, PeriodRangeAndRecords) {
  Fixture f;
  EXPECT_FALSE(f.stats.set_period_ms(99));
  EXPECT_EQ(f.stats.set_period_ms(99).error().code, Errc::invalid_argument);
  EXPECT_FALSE(f.stats.set_period_ms(8640001));
  EXPECT_TRUE(f.stats.set_period_ms(100));
  EXPECT_TRUE(f.stats.set_period_ms(8640000));
  ASSERT_TRUE(f.stats.set_period_ms(100));
  std::vector<IostatSnapshot> records;
  f.stats.set_sink([](const IostatSnapshot& p, void* c) { static_cast<std::vector<IostatSnapshot>*>(c)->push_back(p); },
                   &records);
  f.stats.set_enabled(true);
  const std::uint64_t ms = 1000000;
  f.clk.t = 0;
  one(f.dev, IoOp::read, 0, 4096, 0);  // starts the first period at t=0
  f.clk.t = 50 * ms;
  one(f.dev, IoOp::read, 0, 8192, 0);  // inside it
  EXPECT_TRUE(records.empty());
  f.clk.t = 100 * ms;
  one(f.dev, IoOp::read, 0, 4096, 0);  // due: one record
  ASSERT_EQ(records.size(), 1u);
  EXPECT_EQ(records[0].bytes_of(IostatType::app_direct_read_io), 16384u);  // delta since the start
  EXPECT_EQ(records[0].count_of(IostatType::app_direct_read_io), 3u);
  EXPECT_EQ(records[0].lat(IostatLat::read, IostatPage::data).count, 3u);
  f.clk.t = 150 * ms;
  one(f.dev, IoOp::read, 0, 4096, 0);
  f.clk.t = 199 * ms;
  one(f.dev, IoOp::read, 0, 4096, 0);
  EXPECT_EQ(records.size(), 1u) << "at most one record per period";
  f.clk.t = 200 * ms;
  one(f.dev, IoOp::write, 0, 4096, 0);
  ASSERT_EQ(records.size(), 2u);
  EXPECT_EQ(records[1].bytes_of(IostatType::app_direct_read_io), 8192u) << "a delta";
  EXPECT_EQ(records[1].bytes_of(IostatType::app_direct_io), 4096u);
  EXPECT_EQ(records[1].lat(IostatLat::read, IostatPage::data).count, 2u) << "latency cleared after each record";
  EXPECT_EQ(records[1].lat(IostatLat::write_async, IostatPage::data).count, 1u);
  // Cumulative counters are untouched by records.
  EXPECT_EQ(f.stats.snapshot().bytes_of(IostatType::app_direct_read_io), 24576u);
}

TEST(Iostat, TextLayoutIsTheKernels) {
  IostatSnapshot s;
  s.enabled = true;
  s.bytes[ix(IostatType::app_direct_io)] = 12288;
  s.count[ix(IostatType::app_direct_io)] = 3;
  s.count[ix(IostatType::fs_flush_io)] = 7;
  s.bytes[ix(IostatType::fs_discard_io)] = 1 << 20;
  s.count[ix(IostatType::fs_discard_io)] = 2;
  const std::string text = format_iostat_info(s, 1700000000);
  std::istringstream in(text);
  std::vector<std::string> lines;
  for (std::string l; std::getline(in, l);) lines.push_back(l);
  ASSERT_EQ(lines.size(), 2u + 1 + 14 + 1 + 10 + 1 + 3);
  EXPECT_EQ(lines[0], "time:\t\t1700000000      ");
  EXPECT_EQ(lines[1], "\t\t\tio_bytes         count            avg_bytes       ");
  EXPECT_EQ(lines[2], "[WRITE]");
  EXPECT_EQ(lines[3], "app buffered data:      0                0                0               ");
  EXPECT_EQ(lines[4], "app direct data:        12288            3                4096            ");
  EXPECT_EQ(lines[17], "[READ]");
  EXPECT_EQ(lines[18].substr(0, 24), "app buffered data:      ");
  EXPECT_EQ(lines[28], "[OTHER]");
  EXPECT_EQ(lines[29], "fs discard:             1048576          2                524288          ");
  EXPECT_EQ(lines[30], "fs flush:               0                7                0               ");
  EXPECT_EQ(lines[31].substr(0, 24), "fs zone reset:          ");
  // The order of names, as iostat_info_seq_show() prints them.
  const char* names[] = {"app buffered data", "app direct data", "app mapped data", "app buffered cdata",
                         "app mapped cdata", "fs data", "fs cdata", "fs node", "fs meta", "fs gc data",
                         "fs gc node", "fs cp data", "fs cp node", "fs cp meta"};
  for (std::size_t i = 0; i < 14; ++i) EXPECT_EQ(lines[3 + i].rfind(std::string(names[i]) + ":", 0), 0u) << i;
  const char* rnames[] = {"app buffered data", "app direct data", "app mapped data", "app buffered cdata",
                          "app mapped cdata", "fs data", "fs gc data", "fs cdata", "fs node", "fs meta"};
  for (std::size_t i = 0; i < 10; ++i) EXPECT_EQ(lines[18 + i].rfind(std::string(rnames[i]) + ":", 0), 0u) << i;
}

TEST(Iostat, Json) {
  IostatSnapshot s;
  s.enabled = true;
  s.bytes[ix(IostatType::fs_node_io)] = 8192;
  s.count[ix(IostatType::fs_node_io)] = 2;
  s.bytes[ix(IostatType::fs_flush_io)] = 0;
  s.count[ix(IostatType::fs_flush_io)] = 7;
  s.latency[1][1] = {3000, 4000, 2};  // wr_sync_node: peak 3 us, sum 4 us over 2
  s.latency[0][0] = {1500, 4501, 3};  // rd_data: 4501 ns over 3, avg 1500 ns (integer division)
  const nlohmann::ordered_json j = nlohmann::ordered_json::parse(iostat_json(s, 5));
  // The top level, in this order.
  std::vector<std::string> keys;
  for (const auto& [k, v] : j.items()) keys.push_back(k);
  EXPECT_EQ(keys, (std::vector<std::string>{"enabled", "time", "types", "latency"}));
  EXPECT_EQ(j["enabled"], true);
  EXPECT_EQ(j["time"], 5);
  // Every type of the kernel's enum, by key, with its iostat_info name.
  ASSERT_EQ(j["types"].size(), kIostatTypes);
  for (std::size_t i = 0; i < kIostatTypes; ++i) {
    const auto t = static_cast<IostatType>(i);
    const auto& e = j["types"][std::string(iostat_type_key(t))];
    EXPECT_EQ(e["name"], std::string(iostat_type_name(t))) << i;
    EXPECT_EQ(e.size(), 4u) << i;
  }
  const auto& node = j["types"]["fs_node_io"];
  EXPECT_EQ(node["name"], "fs node");
  EXPECT_EQ(node["bytes"], 8192);
  EXPECT_EQ(node["count"], 2);
  EXPECT_EQ(node["avg_bytes"], 4096);
  EXPECT_EQ(j["types"]["fs_flush_io"]["count"], 7);
  EXPECT_EQ(j["types"]["fs_flush_io"]["avg_bytes"], 0);
  EXPECT_EQ(j["types"]["app_direct_io"]["avg_bytes"], 0);  // no division by a zero count
  // The nine latency buckets of the f2fs_iostat_latency tracepoint.
  ASSERT_EQ(j["latency"].size(), 9u);
  for (const char* b : {"rd_data", "rd_node", "rd_meta", "wr_sync_data", "wr_sync_node", "wr_sync_meta",
                        "wr_async_data", "wr_async_node", "wr_async_meta"})
    EXPECT_TRUE(j["latency"].contains(b)) << b;
  EXPECT_DOUBLE_EQ(j["latency"]["wr_sync_node"]["peak_us"].get<double>(), 3.0);
  EXPECT_DOUBLE_EQ(j["latency"]["wr_sync_node"]["avg_us"].get<double>(), 2.0);
  EXPECT_EQ(j["latency"]["wr_sync_node"]["count"], 2);
  EXPECT_DOUBLE_EQ(j["latency"]["rd_data"]["peak_us"].get<double>(), 1.5);
  EXPECT_DOUBLE_EQ(j["latency"]["rd_data"]["avg_us"].get<double>(), 1.5);
  EXPECT_EQ(j["latency"]["rd_meta"]["count"], 0);
}

TEST(Iostat, SharedByTwoDevicesOfAVolume) {
  FakeClock clk;
  Iostat stats(clk.clock());
  IostatDevice a(make_memory_device(1 << 20), stats), b(make_memory_device(1 << 20), stats);
  stats.set_enabled(true);
  one(a, IoOp::write, 0, 4096, io_tag(IostatType::fs_data_io));
  one(b, IoOp::write, 0, 8192, io_tag(IostatType::fs_data_io));
  EXPECT_EQ(stats.snapshot().bytes_of(IostatType::fs_data_io), 12288u);
  stats.set_enabled(false);
  one(a, IoOp::write, 0, 4096, io_tag(IostatType::fs_data_io));
  one(b, IoOp::write, 0, 4096, io_tag(IostatType::fs_data_io));
  EXPECT_EQ(stats.snapshot().bytes_of(IostatType::fs_data_io), 0u);
}
