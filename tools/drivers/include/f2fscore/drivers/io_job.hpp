// An fio-like I/O job on a BlockDevice: sequential or random reads or
// writes of one block size at a fixed queue depth, for a number of bytes or
// a time, with IOPS, bandwidth and latency percentiles. f2fscore-io is a
// thin front end over run_io_job(); the benchmarks and tests call it too.
#pragma once

#include <array>
#include <cstdint>
#include <string>
#include <string_view>

#include "f2fscore/device.hpp"
#include "f2fscore/result.hpp"

namespace f2fscore {

enum class IoPattern : std::uint8_t { read, write, randread, randwrite };
std::string_view io_pattern_name(IoPattern p) noexcept;  ///< "read", "randwrite", ...
/// Parses "read", "write", "randread", "randwrite".
Result<IoPattern> parse_io_pattern(std::string_view s);

struct IoJob {
  IoPattern pattern = IoPattern::randread;
  std::uint32_t block_size = 4096;  ///< bytes; a multiple of the device's logical block size
  std::uint32_t queue_depth = 1;    ///< requests kept in flight (1..4096)
  std::uint64_t offset = 0;         ///< start of the region, bytes
  std::uint64_t size = 0;           ///< bytes of the region; 0: to the end of the device
  double runtime_s = 0;             ///< >0: run this long, wrapping around; 0: one pass over the region
  std::uint64_t max_ios = 0;        ///< >0: stop after this many requests
  std::uint64_t seed = 0x2545F4914F6CDD1Dull;  ///< random offsets
  bool measure_latency = true;      ///< two clock reads per request
  std::uint16_t tag = 0;            ///< IoRequest::tag (iostat type) of every request
  std::uint8_t flags = 0;           ///< IoRequest::flags of every request (io_flag::sync, fua)
};

/// Completion latencies in log-linear buckets (64 per power of two, so a
/// percentile is within 1.6% of the true value). Fixed size, no allocation.
class LatencyHistogram {
 public:
  void record(std::uint64_t ns) noexcept;
  void merge(const LatencyHistogram& o) noexcept;
  std::uint64_t count() const noexcept { return count_; }
  std::uint64_t min_ns() const noexcept { return count_ ? min_ : 0; }
  std::uint64_t max_ns() const noexcept { return max_; }
  double mean_ns() const noexcept { return count_ ? static_cast<double>(sum_) / static_cast<double>(count_) : 0; }
  /// The value below which `pct` percent of the samples fall (0 < pct <= 100).
  std::uint64_t percentile_ns(double pct) const noexcept;

 private:
  static constexpr unsigned kSub = 64;
  static constexpr unsigned kGroups = 64;
  std::array<std::uint64_t, kSub * kGroups> buckets_{};
  std::uint64_t count_ = 0, sum_ = 0, min_ = ~std::uint64_t{0}, max_ = 0;
};

struct IoJobReport {
  std::uint64_t ios = 0;    ///< completed requests
  std::uint64_t bytes = 0;  ///< bytes moved
  double seconds = 0;       ///< from the first submission to the last completion
  LatencyHistogram latency;  ///< submission to completion (empty unless measure_latency)
  double iops() const noexcept { return seconds > 0 ? static_cast<double>(ios) / seconds : 0; }
  double bytes_per_second() const noexcept { return seconds > 0 ? static_cast<double>(bytes) / seconds : 0; }
};

/// Runs `job` on `dev` and waits for every request. Errors: the job's
/// arguments (Errc::invalid_argument: zero or unaligned block size, queue
/// depth, region past the end), or the first failed request's error (the
/// job stops at the first failure). An IostatDevice is driven through its
/// own type, so that with iostat off a request costs one load more than on
/// the device below (no virtual forward); switching iostat on or off during
/// the run takes effect at the next submission.
Result<IoJobReport> run_io_job(BlockDevice& dev, const IoJob& job);

/// Human-readable summary: IOPS, bandwidth, latency min/avg/max and the
/// 50/90/99/99.9/99.99th percentiles.
std::string format_io_report(const IoJob& job, const IoJobReport& r);
/// The same as a JSON object (without surrounding braces' newline).
std::string io_report_json(const IoJob& job, const IoJobReport& r);

}  // namespace f2fscore
