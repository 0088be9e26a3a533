// run_io_job(): the fio-like job behind f2fscore-io, and its histogram.
#include <gtest/gtest.h>

#include <memory>

#include "support/assert_ok.hpp"

#include "f2fscore/fault_device.hpp"
#include "f2fscore/drivers/io_job.hpp"
#include "f2fscore/iostat.hpp"

using namespace f2fscore;

TEST(LatencyHistogram, PercentilesWithinTheBucketError) {
  LatencyHistogram h;
  for (std::uint64_t v = 1; v <= 100000; ++v) h.record(v * 10);  // 10 ns .. 1 ms, uniform
  EXPECT_EQ(h.count(), 100000u);
  EXPECT_EQ(h.min_ns(), 10u);
  EXPECT_EQ(h.max_ns(), 1000000u);
  EXPECT_NEAR(h.mean_ns(), 500005.0, 1.0);
  for (double p : {1.0, 50.0, 90.0, 99.0, 99.9}) {
    const double want = p / 100 * 1e6;
    EXPECT_NEAR(static_cast<double>(h.percentile_ns(p)), want, want * 0.02) << p;
  }
  EXPECT_EQ(h.percentile_ns(100), 1000000u);
  LatencyHistogram small;
  small.record(5);
  EXPECT_EQ(small.percentile_ns(50), 5u);
  small.merge(h);
  EXPECT_EQ(small.count(), 100001u);
  EXPECT_EQ(small.min_ns(), 5u);
}

TEST(IoJob, OnePassCoversTheRegionExactly) {
  Iostat stats;
  stats.set_enabled(true);
  IostatDevice dev(make_memory_device(4 << 20, 512), stats);
  for (IoPattern p : {IoPattern::write, IoPattern::read, IoPattern::randwrite, IoPattern::randread}) {
    IoJob job;
    job.pattern = p;
    job.block_size = 8192;
    job.queue_depth = 7;
    job.size = 1 << 20;
    job.tag = io_tag(IostatType::fs_data_io);
    stats.set_enabled(false);
    stats.set_enabled(true);
    auto r = run_io_job(dev, job);
    ASSERT_OK(r);
    EXPECT_EQ(r->ios, 128u) << io_pattern_name(p);
    EXPECT_EQ(r->bytes, 1u << 20);
    EXPECT_EQ(r->latency.count(), 128u);
    EXPECT_GT(r->iops(), 0);
    EXPECT_EQ(stats.snapshot().count_of(IostatType::fs_data_io), 128u);
  }
}

TEST(IoJob, TimeBasedAndMaxIos) {
  auto dev = make_memory_device(1 << 20, 4096);
  IoJob job;
  job.pattern = IoPattern::randread;
  job.queue_depth = 4;
  job.runtime_s = 0.05;
  job.measure_latency = false;
  auto r = run_io_job(*dev, job);
  ASSERT_TRUE(r);
  EXPECT_GT(r->ios, 256u) << "wrapped around the 1 MiB region";
  EXPECT_GE(r->seconds, 0.05);
  EXPECT_EQ(r->latency.count(), 0u);
  job.max_ios = 1000;
  job.runtime_s = 10;
  r = run_io_job(*dev, job);
  ASSERT_TRUE(r);
  EXPECT_EQ(r->ios, 1000u);
}

TEST(IoJob, BadArgumentsAndDeviceErrors) {
  auto dev = make_memory_device(1 << 20, 4096);
  IoJob job;
  job.block_size = 1000;
  auto r = run_io_job(*dev, job);
  ASSERT_FALSE(r);
  EXPECT_EQ(r.error().code, Errc::invalid_argument);
  job.block_size = 4096;
  job.size = 2 << 20;
  r = run_io_job(*dev, job);
  ASSERT_FALSE(r);
  EXPECT_EQ(r.error().code, Errc::invalid_argument);
  EXPECT_NE(r.error().message.find("past the end"), std::string::npos);
  job.size = 0;
  job.queue_depth = 0;
  EXPECT_FALSE(run_io_job(*dev, job));
  // The job stops at the first failed request and reports it.
  FaultPlan p;
  p.fail_request = 10;
  FaultDevice faulty(make_memory_device(1 << 20, 4096), p);
  job.queue_depth = 4;
  r = run_io_job(faulty, job);
  ASSERT_FALSE(r);
  EXPECT_EQ(r.error().code, Errc::io);
  EXPECT_EQ(faulty.in_flight(), 0u) << "every request drained before returning";
}

TEST(IoJob, Reports) {
  auto dev = make_memory_device(1 << 20, 4096);
  IoJob job;
  job.pattern = IoPattern::write;
  job.size = 64 << 10;
  auto r = run_io_job(*dev, job);
  ASSERT_TRUE(r);
  const std::string text = format_io_report(job, *r);
  EXPECT_NE(text.find("write: bs=4096 iodepth=1: ios=16 bytes=65536"), std::string::npos) << text;
  EXPECT_NE(text.find("IOPS="), std::string::npos);
  EXPECT_NE(text.find("99.90th=["), std::string::npos);
  const std::string json = io_report_json(job, *r);
  EXPECT_NE(json.find("\"rw\": \"write\", \"bs\": 4096, \"iodepth\": 1, \"ios\": 16"), std::string::npos) << json;
  EXPECT_NE(json.find("\"percentile\": {\"50.00\": "), std::string::npos);
  EXPECT_TRUE(parse_io_pattern("randwrite"));
  EXPECT_FALSE(parse_io_pattern("trim"));
}

// The job drives an IostatDevice through its own type; the route is still
// read at every submission, so iostat switched on during the run counts
// exactly the requests submitted after the switch.
TEST(IoJob, IostatSwitchedOnDuringTheRunCountsWhatFollows) {
  // Below the layer: a memory device that switches iostat on inside its
  // 100th submission (which came through the off route, uncounted).
  struct SwitchingDevice final : BlockDevice {
    SwitchingDevice(std::unique_ptr<BlockDevice> d, Iostat& s) : inner(std::move(d)), stats(s) {}
    std::unique_ptr<BlockDevice> inner;
    Iostat& stats;
    unsigned submits = 0;
    const DeviceInfo& info() const noexcept override { return inner->info(); }
    void submit(IoRequest& r) noexcept override {
      inner->submit(r);
      if (++submits == 100) stats.set_enabled(true);
    }
    std::size_t poll(bool wait) noexcept override { return inner->poll(wait); }
    std::size_t in_flight() const noexcept override { return inner->in_flight(); }
  };
  Iostat stats;
  auto below = std::make_unique<SwitchingDevice>(make_memory_device(1 << 20, 4096), stats);
  SwitchingDevice* sw = below.get();
  IostatDevice dev(std::move(below), stats);
  IoJob job;
  job.pattern = IoPattern::randwrite;
  job.queue_depth = 4;
  job.tag = io_tag(IostatType::app_direct_io);
  BlockDevice& ref = dev;  // as f2fscore-io hands it over
  auto r = run_io_job(ref, job);
  ASSERT_OK(r);
  EXPECT_EQ(r->ios, 256u);  // one pass over 1 MiB in 4 KiB requests
  EXPECT_EQ(sw->submits, 256u);
  const IostatSnapshot s = stats.snapshot();
  EXPECT_EQ(s.count_of(IostatType::app_direct_io), 256u - 100u);
  EXPECT_EQ(s.bytes_of(IostatType::app_direct_io), (256u - 100u) * 4096u);
  EXPECT_EQ(s.completed[static_cast<std::size_t>(IostatType::app_direct_io)], 256u - 100u);
}
