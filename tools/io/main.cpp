// f2fscore-io: run reads or writes on a file or block device through the
// I/O pipeline (io_uring or POSIX backend, iostat layer) and report IOPS,
// bandwidth, latency percentiles and the iostat dump. A thin front end:
// parse options, open_device(), run_io_job(), print.
#include <sys/stat.h>
#include <unistd.h>

#include <CLI/CLI.hpp>
#include <algorithm>
#include <cmath>
#include <cctype>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <ctime>
#include <string>

#include "f2fscore/drivers/io_job.hpp"
#include "f2fscore/iostat.hpp"
#include "f2fscore/uring_device.hpp"
#include "io_tool.hpp"

namespace f2fscore::io_tool {

const char* kFooter =
    "Filesystem workloads: f2fscore-io fs TARGET --workload ... (f2fscore-io fs --help).\n"
    "Sizes take k, m, g, t suffixes (powers of 1024): 4k, 128k, 1g.\n"
    "Without --runtime the job makes one pass over --size bytes; with it, it runs that long,\n"
    "wrapping around. iostat is off unless --iostat; the dump follows the run (the kernel's\n"
    "iostat_info layout, then the latency table in microseconds).\n"
    "Writes refuse a target in use (mounted, swap, an image behind a mounted or held loop device,\n"
    "a block device held with O_EXCL) and, without --force, one holding another file system.\n"
    "Exit status: 0 success; 1 failure (cannot open the target, the target refused for writes,\n"
    "O_DIRECT or io_uring refused without a fallback, an I/O error during the run); 2 usage\n"
    "error (bad option or value).";

bool parse_size(const std::string& s, std::uint64_t& out) {
  if (s.empty() || !std::isdigit(static_cast<unsigned char>(s[0]))) return false;
  std::size_t pos = 0;
  unsigned long long v;
  try {
    v = std::stoull(s, &pos, 10);
  } catch (...) {
    return false;
  }
  std::string suf = s.substr(pos);
  for (auto& c : suf) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  unsigned shift = 0;
  if (suf.empty() || suf == "b") shift = 0;
  else if (suf == "k" || suf == "kb" || suf == "kib") shift = 10;
  else if (suf == "m" || suf == "mb" || suf == "mib") shift = 20;
  else if (suf == "g" || suf == "gb" || suf == "gib") shift = 30;
  else if (suf == "t" || suf == "tb" || suf == "tib") shift = 40;
  else return false;
  if (shift > 0 && v > (~0ull >> shift)) return false;
  out = v << shift;
  return true;
}

tools::Json nested_json(const std::string& text) { return tools::Json::parse(text); }

}  // namespace f2fscore::io_tool

namespace {
using f2fscore::io_tool::kExitFailure;
using f2fscore::io_tool::kExitOk;
using f2fscore::io_tool::kExitUsage;
using f2fscore::io_tool::nested_json;
using f2fscore::io_tool::parse_size;
using f2fscore::io_tool::kFooter;

struct PeriodSum {
  f2fscore::IostatSnapshot total;  // latency merged over the period records
  unsigned periods = 0;
};

void on_period(const f2fscore::IostatSnapshot& p, void* ctx) {
  auto& sum = *static_cast<PeriodSum*>(ctx);
  ++sum.periods;
  for (std::size_t l = 0; l < f2fscore::kIostatLats; ++l)
    for (std::size_t g = 0; g < f2fscore::kIostatPages; ++g) {
      auto& t = sum.total.latency[l][g];
      const auto& x = p.latency[l][g];
      t.sum_ns += x.sum_ns;
      t.count += x.count;
      if (x.peak_ns > t.peak_ns) t.peak_ns = x.peak_ns;
    }
}

}  // namespace

int main(int argc, char** argv) {
  using namespace f2fscore;
  if (argc >= 2 && std::string(argv[1]) == "fs") return io_tool::fs_main(argc - 1, argv + 1);
  CLI::App app{"Run reads or writes through the f2fscore I/O pipeline (f2fscore " F2FSCORE_VERSION_STRING ")",
               "f2fscore-io"};
  app.footer(kFooter);
  std::string target, rw = "randread", bs_s = "4k", size_s, backend_s = "auto";
  unsigned iodepth = 1, period_ms = Iostat::kDefaultPeriodMs;
  double runtime = 0;
  bool buffered = false, direct = false, iostat_on = false, json = false, create = false, no_lat = false;
  bool sync_writes = false, version = false, force = false;
  std::uint64_t seed = 0;
  app.add_option("target", target, "File or block device")->required();
  app.add_option("--rw", rw, "read, write, randread or randwrite (default randread)");
  app.add_option("--bs", bs_s, "Block size (default 4k)");
  app.add_option("--iodepth", iodepth, "Requests kept in flight (default 1)")->check(CLI::Range(1u, 4096u));
  app.add_option("--size", size_s, "Bytes of the target to use (default: all of it)");
  app.add_option("--runtime", runtime, "Seconds to run, wrapping around (default: one pass)")
      ->check(CLI::Range(0.0, 1e7));
  app.add_flag("--direct", direct, "O_DIRECT (the default)");
  app.add_flag("--buffered", buffered, "Through the page cache instead of O_DIRECT");
  app.add_option("--backend", backend_s, "auto (io_uring if available, else posix; on Windows overlapped), io_uring (through Asio), uring "
                 "(liburing directly), posix or sync (synchronous calls), overlapped (Windows: overlapped I/O "
                 "and a completion port)");
  app.add_flag("--iostat", iostat_on, "Switch iostat on and print its dump after the run");
  app.add_option("--iostat-period-ms", period_ms, "iostat_period_ms (100..8640000, default 3000)");
  app.add_flag("--sync", sync_writes, "Mark writes REQ_SYNC (iostat: sync instead of async write latency)");
  app.add_flag("--no-latency", no_lat, "Do not time each request");
  app.add_flag("--force", force,
               "Write over a file system, F2FS included (never over a device in use: mounted, or held by "
               "another program)");
  app.add_flag("--create", create, "Create the file with --size bytes if it does not exist");
  app.add_option("--seed", seed, "Seed for random offsets")->check(f2fscore::tools::decimal_count("seed"));
  app.add_flag("--json", json, "Print one JSON object");
  app.add_flag("-V,--version", version, "Print the version and exit");
  if (auto rc = f2fscore::tools::parse_device_command_line(app, argc, argv, kExitUsage, target, true)) return *rc;
  if (version) return f2fscore::tools::print_version("f2fscore-io", json);
  auto usage = [&](const std::string& m) {
    return f2fscore::tools::report_usage_error("f2fscore-io", target, json, m, kExitUsage);
  };
  auto fail = [&](const std::string& m) {
    return f2fscore::tools::report_device_failure("f2fscore-io", target, json, m);
  };

  IoJob job;
  auto pat = parse_io_pattern(rw);
  if (!pat) return usage(pat.error().message);
  job.pattern = *pat;
  std::uint64_t bs = 0, size = 0;
  if (!parse_size(bs_s, bs) || bs == 0) return usage("bad block size '" + bs_s + "'");
  if (bs > (1u << 30)) return usage("block size '" + bs_s + "' is larger than 1 GiB");
  if (!std::isfinite(runtime)) return usage("--runtime must be a number of seconds");
  if (!size_s.empty() && (!parse_size(size_s, size) || size == 0)) return usage("bad size '" + size_s + "'");
  if (size != 0 && size < bs) return usage("--size is smaller than --bs");
  if (buffered && direct) return usage("--direct and --buffered exclude each other");
  BackendOptions bo;
  if (backend_s == "auto") bo.backend = Backend::automatic;
  else if (backend_s == "io_uring") bo.backend = Backend::uring;
  else if (backend_s == "uring" || backend_s == "liburing") bo.backend = Backend::liburing;
  else if (backend_s == "posix" || backend_s == "sync") bo.backend = Backend::posix;
  else if (backend_s == "overlapped") bo.backend = Backend::overlapped;
  else return usage("unknown backend '" + backend_s + "' (auto, io_uring, uring, posix or sync, overlapped)");
  if (period_ms < Iostat::kMinPeriodMs || period_ms > Iostat::kMaxPeriodMs)
    return usage("--iostat-period-ms " + std::to_string(period_ms) + " outside [100, 8640000]");
  if (create && size == 0) return usage("--create needs --size");
  job.block_size = static_cast<std::uint32_t>(bs);
  job.queue_depth = iodepth;
  job.size = size;
  job.runtime_s = runtime;
  job.measure_latency = !no_lat;
  if (seed != 0) job.seed = seed;
  if (sync_writes) job.flags = io_flag::sync;
  const bool write = job.pattern == IoPattern::write || job.pattern == IoPattern::randwrite;
  job.tag = io_tag(buffered ? (write ? IostatType::app_buffered_io : IostatType::app_buffered_read_io)
                            : (write ? IostatType::app_direct_io : IostatType::app_direct_read_io));

  struct stat st {};
  if (::stat(target.c_str(), &st) != 0 && create) {
    FILE* f = std::fopen(target.c_str(), "wb");
    if (f == nullptr || ::ftruncate(fileno(f), static_cast<off_t>(size)) != 0) {
      const int e = errno;
      if (f != nullptr) std::fclose(f);
      return fail("cannot create " + target + ": " + std::strerror(e));
    }
    std::fclose(f);
    if (!write) std::fprintf(stderr, "f2fscore-io: created %s sparse: reads of holes are not disk reads\n",
                             target.c_str());
  }

  // Raw writes destroy whatever is there: a device or image in use is
  // refused, and one holding a file system (F2FS too) unless --force (said
  // on stderr).
  OpenOptions oo;
  oo.read_only = !write;
  oo.direct = !buffered;
  oo.refuse_in_use = write;
  oo.refuse_other_file_system = write && !force;
  // An Android sparse image is a file's bytes to a raw job (read as they
  // are; written over only with --force).
  oo.sparse_as_raw = !write || force;
  if (write && force) {
    InUseCheck what;
    what.other_file_system = what.f2fs_too = true;
    if (InUse u = check_in_use(target, what); u.kind == InUseKind::other_file_system)
      std::fprintf(stderr, "f2fscore-io: warning: %s; writing over it (--force)\n", u.detail.c_str());
  }
  bo.queue_depth = std::max<std::uint32_t>(iodepth, 1);
  auto opened = open_device(target, oo, bo);
  if (!opened)
    return fail(opened.error().code == Errc::busy
                    ? opened.error().message + (write ? "; refusing to write to it" : "")
                    : opened.error().to_string());
  if (!opened->note.empty()) std::fprintf(stderr, "f2fscore-io: %s\n", opened->note.c_str());

  Iostat stats;
  PeriodSum periods;
  if (iostat_on) {
    (void)stats.set_period_ms(period_ms);
    stats.set_sink(&on_period, &periods);
    stats.set_enabled(true);
  }
  IostatDevice dev(std::move(opened->device), stats);

  auto report = run_io_job(dev, job);
  if (!report) {
    if (report.error().code == Errc::invalid_argument) return usage(report.error().message);
    return fail(report.error().to_string());
  }
  IostatSnapshot snap = stats.snapshot();
  for (std::size_t l = 0; l < kIostatLats; ++l)  // fold in the latency of earlier periods
    for (std::size_t g = 0; g < kIostatPages; ++g) {
      auto& t = snap.latency[l][g];
      const auto& x = periods.total.latency[l][g];
      t.sum_ns += x.sum_ns;
      t.count += x.count;
      if (x.peak_ns > t.peak_ns) t.peak_ns = x.peak_ns;
    }
  const auto now = static_cast<std::int64_t>(std::time(nullptr));
  const DeviceInfo& di = dev.info();
  if (json) {
    f2fscore::tools::Json j;
    j["device"] = target;
    j["backend"] = backend_name(opened->backend);
    j["direct"] = di.direct;
    j["job"] = nested_json(io_report_json(job, *report));
    if (iostat_on) j["iostat"] = nested_json(iostat_json(snap, now));
    j["exit_code"] = kExitOk;
    if (!f2fscore::tools::print_json(j, f2fscore::tools::JsonLayout::line_spaced)) return kExitFailure;
  } else {
    std::printf("f2fscore-io: %s on %s (%s, %s, %llu bytes)\n", std::string(io_pattern_name(job.pattern)).c_str(),
                target.c_str(), std::string(backend_name(opened->backend)).c_str(),
                di.direct ? "direct" : "buffered", static_cast<unsigned long long>(di.size_bytes));
    std::fputs(format_io_report(job, *report).c_str(), stdout);
    if (iostat_on) {
      std::printf("iostat_info:\n");
      std::fputs(format_iostat_info(snap, now).c_str(), stdout);
      std::fputs(format_iostat_latency(snap).c_str(), stdout);
    }
  }
  return kExitOk;
}
