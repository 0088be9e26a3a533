// run_io_job(): keep queue_depth requests in flight on a device; each
// completion resubmits its own request with the next offset.
#include "f2fscore/drivers/io_job.hpp"
#include "f2fscore/iostat.hpp"
#include "f2fscore/tools/common.hpp"

#include <algorithm>
#include <bit>
#include <chrono>
#include <cinttypes>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#if defined(_WIN32)
#include <malloc.h>
#endif
#include <memory>
#include <vector>

namespace f2fscore {

std::string_view io_pattern_name(IoPattern p) noexcept {
  switch (p) {
    case IoPattern::read: return "read";
    case IoPattern::write: return "write";
    case IoPattern::randread: return "randread";
    case IoPattern::randwrite: return "randwrite";
  }
  return "?";
}

Result<IoPattern> parse_io_pattern(std::string_view s) {
  for (IoPattern p : {IoPattern::read, IoPattern::write, IoPattern::randread, IoPattern::randwrite})
    if (s == io_pattern_name(p)) return p;
  return make_error(Errc::invalid_argument,
                    "unknown pattern '" + std::string(s) + "' (read, write, randread, randwrite)");
}

// ---- Histogram ----

void LatencyHistogram::record(std::uint64_t ns) noexcept {
  unsigned idx;
  if (ns < kSub) {
    idx = static_cast<unsigned>(ns);
  } else {
    const unsigned msb = 63u - static_cast<unsigned>(std::countl_zero(ns));  // >= 6
    const unsigned group = msb - 5;                                          // 1..58
    const unsigned sub = static_cast<unsigned>(ns >> (msb - 6)) & (kSub - 1);
    idx = group * kSub + sub;
  }
  if (idx >= buckets_.size()) idx = static_cast<unsigned>(buckets_.size() - 1);
  ++buckets_[idx];
  ++count_;
  sum_ += ns;
  min_ = std::min(min_, ns);
  max_ = std::max(max_, ns);
}

void LatencyHistogram::merge(const LatencyHistogram& o) noexcept {
  for (std::size_t i = 0; i < buckets_.size(); ++i) buckets_[i] += o.buckets_[i];
  count_ += o.count_;
  sum_ += o.sum_;
  min_ = std::min(min_, o.min_);
  max_ = std::max(max_, o.max_);
}

std::uint64_t LatencyHistogram::percentile_ns(double pct) const noexcept {
  if (count_ == 0) return 0;
  const auto want = static_cast<std::uint64_t>(static_cast<double>(count_) * pct / 100.0 + 0.5);
  std::uint64_t seen = 0;
  for (std::size_t i = 0; i < buckets_.size(); ++i) {
    seen += buckets_[i];
    if (seen >= std::max<std::uint64_t>(want, 1)) {
      if (i < kSub) return i;
      const std::size_t group = i / kSub, sub = i % kSub;
      const unsigned shift = static_cast<unsigned>(group) - 1;  // msb - 6
      const std::uint64_t lo = (std::uint64_t{kSub} + sub) << shift;
      const std::uint64_t hi = lo + (std::uint64_t{1} << shift);
      return std::clamp<std::uint64_t>((lo + hi) / 2, min_, max_);
    }
  }
  return max_;
}

// ---- The job ----

namespace {

std::uint64_t now_ns() noexcept {
  return static_cast<std::uint64_t>(std::chrono::duration_cast<std::chrono::nanoseconds>(
                                        std::chrono::steady_clock::now().time_since_epoch())
                                        .count());
}

// The job on a device of type Dev. Through an IostatDevice, its type
// (final, with the gate inline): when iostat is off a request then costs
// one load more than on the device below, where a call through
// BlockDevice& would add the layer's virtual forward to every submit()
// and poll().
template <typename Dev>
struct Runner;

template <typename Dev>
struct Slot {
  IoRequest req;
  Runner<Dev>* run = nullptr;
  std::uint64_t t0 = 0;
};

template <typename Dev>
struct Runner {
  Dev* dev = nullptr;
  IoJob job;
  std::uint64_t region_blocks = 0;
  std::uint64_t next_seq = 0;  // sequential: next block
  std::uint64_t rng = 0;
  std::uint64_t issued = 0;
  std::uint64_t pass_ios = 0;  // ios in one pass (no runtime)
  bool stopping = false;
  bool time_based = false;
  std::uint64_t deadline = 0;
  IoJobReport report;
  bool failed = false;
  Error error;

  std::uint64_t next_offset() noexcept {
    std::uint64_t blk;
    if (job.pattern == IoPattern::randread || job.pattern == IoPattern::randwrite) {
      // xorshift64*
      rng ^= rng >> 12;
      rng ^= rng << 25;
      rng ^= rng >> 27;
      blk = (rng * 0x2545F4914F6CDD1Dull) % region_blocks;
    } else {
      blk = next_seq;
      next_seq = next_seq + 1 == region_blocks ? 0 : next_seq + 1;
    }
    return job.offset + blk * job.block_size;
  }

  bool may_issue() const noexcept {
    if (stopping) return false;
    if (job.max_ios != 0 && issued >= job.max_ios) return false;
    if (!time_based && issued >= pass_ios) return false;
    return true;
  }

  void issue(Slot<Dev>& s) noexcept {
    s.req.offset = next_offset();
    ++issued;
    if (job.measure_latency) s.t0 = now_ns();
    dev->submit(s.req);
  }

  static void done(IoRequest& req) noexcept {
    auto& s = *static_cast<Slot<Dev>*>(req.user);
    Runner& r = *s.run;
    std::uint64_t t = 0;
    if (r.job.measure_latency) {
      t = now_ns();
      r.report.latency.record(t - s.t0);
    }
    if (!req.ok() || req.transferred != req.length) {
      if (!r.failed) {
        if (req.ok()) req.status = Errc::short_io;
        r.failed = true;
        r.error = req.error();
      }
      r.stopping = true;
      return;
    }
    ++r.report.ios;
    r.report.bytes += req.length;
    if (r.time_based) {
      // Devices that complete inside poll() (memory, POSIX) run these
      // callbacks back to back without returning: check the time here.
      if (!r.job.measure_latency && (r.report.ios & 63) == 0) t = now_ns();
      if (t >= r.deadline && (r.job.measure_latency || (r.report.ios & 63) == 0)) r.stopping = true;
    }
    if (r.may_issue()) r.issue(s);
  }
};

// run_io_job() once the arguments are checked; `size` is the region's.
template <typename Dev>
Result<IoJobReport> run_checked(Dev& dev, const IoJob& job, std::uint64_t size) {
  const DeviceInfo& di = dev.info();
  Runner<Dev> r;
  r.dev = &dev;
  r.job = job;
  r.region_blocks = size / job.block_size;
  r.rng = job.seed != 0 ? job.seed : 1;
  r.time_based = job.runtime_s > 0;
  r.pass_ios = r.region_blocks;
  const bool write = job.pattern == IoPattern::write || job.pattern == IoPattern::randwrite;

  const std::size_t align = std::max<std::size_t>(4096, di.buffer_alignment);
  const std::size_t buf_bytes = (job.block_size + align - 1) / align * align;
#if defined(_WIN32)  // the Windows C runtime has _aligned_malloc, freed by _aligned_free
  std::unique_ptr<std::uint8_t, void (*)(void*)> bufs(
      static_cast<std::uint8_t*>(::_aligned_malloc(buf_bytes * job.queue_depth, align)), &::_aligned_free);
#else
  std::unique_ptr<std::uint8_t, void (*)(void*)> bufs(
      static_cast<std::uint8_t*>(std::aligned_alloc(align, buf_bytes * job.queue_depth)), &std::free);
#endif
  if (!bufs) return make_error(Errc::no_space, "cannot allocate the I/O buffers");
  std::uint64_t x = r.rng;
  for (std::size_t i = 0; i < buf_bytes * job.queue_depth; ++i) {  // incompressible data for writes
    x = x * 6364136223846793005ull + 1442695040888963407ull;
    bufs.get()[i] = static_cast<std::uint8_t>(x >> 56);
  }
  std::vector<Slot<Dev>> slots(job.queue_depth);
  for (std::uint32_t i = 0; i < job.queue_depth; ++i) {
    Slot<Dev>& s = slots[i];
    s.run = &r;
    s.req.op = write ? IoOp::write : IoOp::read;
    s.req.flags = job.flags;
    s.req.tag = job.tag;
    s.req.length = job.block_size;
    s.req.buf = bufs.get() + i * buf_bytes;
    s.req.on_complete = &Runner<Dev>::done;
    s.req.user = &s;
  }

  const std::uint64_t start = now_ns();
  r.deadline = start + static_cast<std::uint64_t>(job.runtime_s * 1e9);
  for (auto& s : slots)
    if (r.may_issue()) r.issue(s);
  while (dev.in_flight() > 0) {
    dev.poll(true);
    if (r.time_based && !r.job.measure_latency && !r.stopping && now_ns() >= r.deadline) r.stopping = true;
  }
  r.report.seconds = static_cast<double>(now_ns() - start) / 1e9;
  if (r.failed) return make_error(std::move(r.error));
  return r.report;
}

}  // namespace

Result<IoJobReport> run_io_job(BlockDevice& dev, const IoJob& job) {
  const DeviceInfo& di = dev.info();
  if (job.block_size == 0 || job.block_size % di.logical_block_size != 0)
    return make_error(Errc::invalid_argument, "block size " + std::to_string(job.block_size) +
                                                  " is not a multiple of the device's block size " +
                                                  std::to_string(di.logical_block_size));
  if (job.queue_depth < 1 || job.queue_depth > 4096)
    return make_error(Errc::invalid_argument, "queue depth " + std::to_string(job.queue_depth) +
                                                  " outside [1, 4096]");
  if (job.offset % job.block_size != 0 || job.offset > di.size_bytes)
    return make_error(Errc::invalid_argument, "offset " + std::to_string(job.offset) +
                                                  " is unaligned or past the end of the device");
  const std::uint64_t size = job.size != 0 ? job.size : di.size_bytes - job.offset;
  if (size > di.size_bytes - job.offset)
    return make_error(Errc::invalid_argument, "the region of " + std::to_string(size) +
                                                  " bytes runs past the end of the device (" +
                                                  std::to_string(di.size_bytes) + " bytes)");
  if (size < job.block_size)
    return make_error(Errc::invalid_argument, "the region is smaller than one block");
  if (auto* io = dynamic_cast<IostatDevice*>(&dev)) return run_checked(*io, job, size);
  return run_checked(dev, job, size);
}

// ---- Reports ----

namespace {
struct Pct {
  double p;
  const char* name;
};
constexpr Pct kPcts[] = {{50, "50.00"}, {90, "90.00"}, {99, "99.00"}, {99.9, "99.90"}, {99.99, "99.99"}};
}  // namespace

std::string format_io_report(const IoJob& job, const IoJobReport& r) {
  char buf[512];
  std::string out;
  std::snprintf(buf, sizeof buf, "%s: bs=%u iodepth=%u: ios=%" PRIu64 " bytes=%" PRIu64 " runtime=%.3fs\n",
                std::string(io_pattern_name(job.pattern)).c_str(), job.block_size, job.queue_depth, r.ios,
                r.bytes, r.seconds);
  out += buf;
  std::snprintf(buf, sizeof buf, "  IOPS=%.0f, BW=%.1fMiB/s (%.1fMB/s)\n", r.iops(),
                r.bytes_per_second() / 1048576.0, r.bytes_per_second() / 1e6);
  out += buf;
  const LatencyHistogram& h = r.latency;
  if (h.count() > 0) {
    std::snprintf(buf, sizeof buf, "  lat (usec): min=%.2f, avg=%.2f, max=%.2f\n",
                  static_cast<double>(h.min_ns()) / 1e3, h.mean_ns() / 1e3, static_cast<double>(h.max_ns()) / 1e3);
    out += buf;
    out += "  lat percentiles (usec):";
    for (const auto& p : kPcts) {
      std::snprintf(buf, sizeof buf, " %sth=[%.1f]", p.name, static_cast<double>(h.percentile_ns(p.p)) / 1e3);
      out += buf;
    }
    out += "\n";
  }
  return out;
}

std::string io_report_json(const IoJob& job, const IoJobReport& r) {
  using Json = tools::Json;
  const LatencyHistogram& h = r.latency;
  Json pct = Json::object();
  for (const auto& p : kPcts) pct[p.name] = h.percentile_ns(p.p);
  Json j = {{"rw", std::string(io_pattern_name(job.pattern))},
            {"bs", job.block_size},
            {"iodepth", job.queue_depth},
            {"ios", r.ios},
            {"bytes", r.bytes},
            {"runtime_s", r.seconds},
            {"iops", r.iops()},
            {"bw_bytes", r.bytes_per_second()},
            {"lat_ns", {{"count", h.count()}, {"min", h.min_ns()}, {"mean", h.mean_ns()}, {"max", h.max_ns()},
                        {"percentile", std::move(pct)}}}};
  return tools::json_line_spaced(j);
}

}  // namespace f2fscore
