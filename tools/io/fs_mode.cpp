// f2fscore-io fs: workloads through the filesystem engine (workload.hpp) on
// an image file or a block device holding an F2FS volume. A thin front end:
// parse options, open the device under an iostat layer, mount the writer,
// run_workload(), print, plot, unmount.
#if !defined(_WIN32)
#include <sys/wait.h>
#include <unistd.h>
#endif

#include <CLI/CLI.hpp>
#include <cctype>
#include <cstdio>
#include <cstdlib>
#include <optional>
#include <string>

#include "f2fscore/iostat.hpp"
#include "f2fscore/uring_device.hpp"
#include "f2fscore/drivers/workload.hpp"
#include "f2fscore/writer.hpp"
#include "io_tool.hpp"

namespace f2fscore::io_tool {

namespace {

const char* kFsFooter =
    "Workloads (docs/stats.md):\n"
    "  seqwrite    create FILE, write --size bytes in --bs calls (--sync after each), then sync\n"
    "  randwrite   FILE of --size (setup), then --ops writes of --bs at random offsets\n"
    "  seqread     FILE of --size (setup), read front to back; randread: --ops random reads\n"
    "  overwrite   FILE of --size in 4 KiB writes + fsync (setup), then --ops writes of --bs at\n"
    "              block (i*97) mod blocks, each followed by --sync (default fdatasync)\n"
    "  sqlite      SQLite-like transactions (--journal wal|rollback, --pages-per-txn, --ops\n"
    "              transactions, --sync fdatasync by default) on a database of --size (default 4m)\n"
    "  smallfiles  --files files of --file-bytes in DIR/d, sync, delete them all, sync\n"
    "  fill        files of --size until utilization reaches --fill percent (or no space)\n"
    "The target must hold an F2FS volume (mkfs.f2fs or f2fscore-mkfs). Sizes take k, m, g suffixes.\n"
    "IPU tunables as /sys/fs/f2fs/<dev>/: --ipu-policy 0x81 or force|honor_opu_write (default:\n"
    "the kernel's for the volume size), --min-ipu-util, --min-fsync-blocks, --fdatasync-in-place.\n"
    "--iostat switches iostat on (reset after setup); --iostat-period sets iostat_period_ms and the\n"
    "period of the series. --plot FILE.svg or FILE.png draws the series with gnuplot (skipped, with\n"
    "a note, if gnuplot is not installed; other names are refused; what gnuplot prints is shown only\n"
    "when it fails).\n"
    "Exit status: 0 success; 1 failure (cannot open or mount the target, an engine error during\n"
    "the run); 2 usage error (bad option or value).";

#if !defined(_WIN32)
bool has_gnuplot() { return std::system("command -v gnuplot >/dev/null 2>&1") == 0; }

// Runs gnuplot on `script` with its output captured: what it prints (its
// warnings about flat ranges, for one) is returned in the error when it
// fails and dropped when it succeeds.
Status run_gnuplot(const std::string& script) {
  char path[] = "/tmp/f2fscore-gnuplot-XXXXXX";
  const int fd = ::mkstemp(path);
  if (fd < 0) return make_error(Errc::io, "cannot create a file for gnuplot's messages");
  ::close(fd);
  const std::string cmd = std::string("gnuplot >/dev/null 2>'") + path + "'";
  FILE* g = ::popen(cmd.c_str(), "w");
  if (g == nullptr) {
    ::unlink(path);
    return make_error(Errc::io, "cannot run gnuplot");
  }
  const bool wrote = std::fwrite(script.data(), 1, script.size(), g) == script.size();
  const int rc = ::pclose(g);
  std::string said;
  if (FILE* f = std::fopen(path, "r")) {
    char buf[4096];
    std::size_t n;
    while ((n = std::fread(buf, 1, sizeof buf, f)) > 0) said.append(buf, n);
    std::fclose(f);
  }
  ::unlink(path);
  while (!said.empty() && (said.back() == '\n' || said.back() == ' ')) said.pop_back();
  if (rc != 0 || !wrote)
    return make_error(Errc::io, (rc != 0 ? "exit status " + std::to_string(WIFEXITED(rc) ? WEXITSTATUS(rc) : rc) : std::string("short write")) +
                                    (said.empty() ? "" : "; gnuplot said:\n" + said));
  return {};
}
#else
// Windows: gnuplot is run through a POSIX shell; no plot there.
bool has_gnuplot() { return false; }
Status run_gnuplot(const std::string&) { return make_error(Errc::unsupported, "no gnuplot on Windows"); }
#endif

}  // namespace

int fs_main(int argc, char** argv) {
  CLI::App app{"Run a workload through the f2fscore filesystem engine (f2fscore " F2FSCORE_VERSION_STRING ")",
               "f2fscore-io fs"};
  app.footer(kFsFooter);
  std::string target, workload_s, dir = "/", size_s, bs_s, sync_s, journal_s = "wal", policy_s, data_s = "random", plot, backend_s = "auto";
  std::uint64_t ops = 0, seed = 1;
  std::uint32_t files = 5000, file_bytes = 1024, fill = 80, pages = 2, min_util = 70, min_fsync = 8;
  std::uint32_t period_ms = Iostat::kDefaultPeriodMs;
  double runtime = 0;
  bool direct = false, no_final_sync = false, iostat_on = false, json = false, fdatasync_ipu = false;
  bool no_unmount = false;
  app.add_option("target", target, "Image file or block device with an F2FS volume")->required();
  std::vector<std::string> other_devices;
  f2fscore::tools::add_device_option(app, other_devices);
  app.add_option("-w,--workload", workload_s, "seqwrite, randwrite, seqread, randread, overwrite, sqlite, smallfiles, fill")
      ->required();
  app.add_option("--dir", dir, "Directory of the workload's files (default /)");
  app.add_option("--size", size_s, "File size (default 64m; overwrite 1m; sqlite 4m; fill 4m)");
  app.add_option("--bs", bs_s, "Bytes per write/read call (default 1m; overwrite and random 4k)");
  app.add_option("--ops", ops, "Calls (randwrite, randread, overwrite) or transactions (sqlite)");
  app.add_option("--sync", sync_s, "none, fsync or fdatasync after each write (overwrite/sqlite default fdatasync)");
  app.add_flag("--no-final-sync", no_final_sync, "Do not sync when the workload is done");
  app.add_flag("--direct", direct, "Direct writes (WriteFlags::direct), the target opened O_DIRECT (buffered when its "
               "file system refuses O_DIRECT, with a note)");
  app.add_option("--files", files, "smallfiles: number of files (default 5000)");
  app.add_option("--file-bytes", file_bytes, "smallfiles: bytes per file (default 1024)");
  app.add_option("--fill", fill, "fill: target utilization, percent (default 80)")->check(CLI::Range(0u, 100u));
  app.add_option("--journal", journal_s, "sqlite: wal or rollback (default wal)");
  app.add_option("--pages-per-txn", pages, "sqlite: pages per transaction (default 2)")->check(CLI::Range(1u, 100000u));
  app.add_option("--runtime", runtime, "Stop the measured phase after this many seconds")->check(CLI::Range(0.0, 1e7));
  app.add_option("--data", data_s, "random or stamped (each 4 KiB block: 16 bytes of seed and index, then zeros)");
  app.add_option("--seed", seed, "Seed for random offsets and data")->check(f2fscore::tools::decimal_count("seed"));
  app.add_option("--ipu-policy", policy_s, "ipu_policy: a number or bit names joined by | (default: the kernel's)");
  app.add_option("--min-ipu-util", min_util, "min_ipu_util, percent (default 70)")->check(CLI::Range(0u, 100u));
  app.add_option("--min-fsync-blocks", min_fsync, "min_fsync_blocks (default 8)");
  app.add_flag("--fdatasync-in-place", fdatasync_ipu, "fdatasync (and small fsyncs) always write in place");
  app.add_flag("--iostat", iostat_on, "Switch iostat on and print iostat_info");
  app.add_option("--iostat-period,--iostat-period-ms", period_ms, "iostat_period_ms and the series' period (100..8640000, default 3000)");
  app.add_flag("--json", json, "Print one JSON object");
  app.add_option("--plot", plot, "Draw the per-period series into FILE.svg or FILE.png (gnuplot)");
  app.add_option("--backend", backend_s, "auto, io_uring (through Asio), uring (liburing directly), posix or sync (synchronous calls), "
                 "overlapped (Windows)");
  app.add_flag("--no-unmount", no_unmount, "Leave the volume as after the last sync (no unmount checkpoint)");
  if (auto rc = tools::parse_device_command_line(app, argc, argv, kExitUsage, target)) return *rc;
  auto usage = [&](const std::string& m) {
    return tools::report_usage_error("f2fscore-io fs", target, json, m, kExitUsage);
  };
  auto fail = [&](const std::string& m) { return tools::report_device_failure("f2fscore-io fs", target, json, m); };

  WorkloadSpec spec;
  auto wk = parse_workload(workload_s);
  if (!wk) return usage(wk.error().message);
  spec.kind = *wk;
  spec.dir = dir;
  if (dir.empty() || dir[0] != '/') return usage("--dir must be an absolute path in the volume ('" + dir + "')");
  const bool small_io = spec.kind == Workload::overwrite || spec.kind == Workload::randwrite ||
                        spec.kind == Workload::randread;
  std::uint64_t size = spec.kind == Workload::overwrite ? (1ull << 20)
                       : (spec.kind == Workload::sqlite || spec.kind == Workload::fill) ? (4ull << 20)
                                                                                          : (64ull << 20);
  std::uint64_t bs = small_io ? 4096 : (1u << 20);
  if (!size_s.empty() && (!parse_size(size_s, size) || size == 0)) return usage("bad size '" + size_s + "'");
  if (!bs_s.empty() && (!parse_size(bs_s, bs) || bs == 0)) return usage("bad block size '" + bs_s + "'");
  if (bs > (256u << 20)) return usage("block size '" + bs_s + "' is larger than 256 MiB");
  spec.file_size = size;
  spec.block_size = static_cast<std::uint32_t>(bs);
  spec.ops = ops;
  spec.sync = (spec.kind == Workload::overwrite || spec.kind == Workload::sqlite) ? SyncMode::fdatasync : SyncMode::none;
  if (!sync_s.empty()) {
    auto m = parse_sync_mode(sync_s);
    if (!m) return usage(m.error().message);
    spec.sync = *m;
  }
  spec.sync_at_end = !no_final_sync;
  spec.direct = direct;
  spec.files = files;
  spec.file_bytes = file_bytes;
  spec.fill_percent = fill;
  if (data_s == "random") spec.data = WorkloadSpec::Data::random;
  else if (data_s == "stamped") spec.data = WorkloadSpec::Data::stamped;
  else return usage("unknown data '" + data_s + "' (random, stamped)");
  if (journal_s == "wal") spec.journal = WorkloadSpec::Journal::wal;
  else if (journal_s == "rollback" || journal_s == "delete") spec.journal = WorkloadSpec::Journal::rollback;
  else return usage("unknown journal '" + journal_s + "' (wal, rollback)");
  spec.pages_per_txn = pages;
  spec.runtime_s = runtime;
  spec.seed = seed;
  if (period_ms < Iostat::kMinPeriodMs || period_ms > Iostat::kMaxPeriodMs)
    return usage("--iostat-period " + std::to_string(period_ms) + " outside [100, 8640000]");
  spec.period_ms = period_ms;
  if (direct && (bs % 4096 || size % 4096)) return usage("--direct needs --bs and --size in multiples of 4k");
  std::optional<PlotFormat> plot_fmt;
  if (!plot.empty()) {
    plot_fmt = plot_format(plot);
    if (!plot_fmt) return usage("--plot " + plot + ": the name must end in .svg or .png (the image format)");
  }

  MountOptions mo;
  if (!policy_s.empty()) {
    auto p = parse_ipu_policy(policy_s);
    if (!p) return usage(p.error().message);
    mo.ipu.ipu_policy = *p;
  }
  mo.ipu.min_ipu_util = min_util;
  mo.ipu.min_fsync_blocks = min_fsync;
  mo.ipu.fdatasync_in_place = fdatasync_ipu;
  mo.checkpoint_interval_s = 0;  // checkpoints only where the workload asks: repeatable runs

  BackendOptions bo;
  if (backend_s == "auto") bo.backend = Backend::automatic;
  else if (backend_s == "io_uring") bo.backend = Backend::uring;
  else if (backend_s == "uring" || backend_s == "liburing") bo.backend = Backend::liburing;
  else if (backend_s == "posix" || backend_s == "sync") bo.backend = Backend::posix;
  else if (backend_s == "overlapped") bo.backend = Backend::overlapped;
  else return usage("unknown backend '" + backend_s + "' (auto, io_uring, uring, posix or sync, overlapped)");
  // --direct: the target opened O_DIRECT, so that direct writes bypass the
  // host's page cache too (the engine copies its own unaligned metadata
  // buffers into aligned ones for such a device); else through the host's
  // page cache, as the engine's buffered writes are meant.
  OpenOptions oo;
  oo.direct = direct;
  bo.buffered_if_direct_refused = true;
  oo.refuse_in_use = true;  // mounted, behind a mounted or held loop device, held with O_EXCL
  auto opened = open_device(target, oo, bo);
  if (!opened)
    return fail(opened.error().code == Errc::busy ? opened.error().message + "; refusing to write to it"
                                                  : opened.error().to_string());
  if (!opened->note.empty()) std::fprintf(stderr, "f2fscore-io fs: %s\n", opened->note.c_str());
  // A multi-device volume: its other devices, opened alike.
  {
    auto whole = f2fscore::tools::open_whole_volume(std::move(opened->device), other_devices, [&](const std::string& p) -> f2fscore::Result<std::unique_ptr<f2fscore::BlockDevice>> {
        auto o = open_device(p, oo, bo);
        if (!o) return f2fscore::make_error(o.error());
        return std::move(o->device);
      });
    if (!whole) return fail(whole.error().message + (whole.error().code == Errc::busy ? "; refusing to write to it" : ""));
    opened->device = std::move(*whole);
  }
  const bool buffered = !opened->device->info().direct;
  Iostat stats;
  IostatDevice dev(std::move(opened->device), stats);
  auto w = Writer::mount(dev, mo);
  if (!w) return fail("cannot mount " + target + ": " + w.error().to_string());
  if (iostat_on) {
    (void)stats.set_period_ms(period_ms);
    stats.set_enabled(true);
  }
  auto rep = run_workload(**w, spec, &stats);
  if (!rep) {
    if (rep.error().code == Errc::invalid_argument && rep.error().message.rfind("workload: ", 0) == 0 &&
        rep.error().message.find(": ", 10) == std::string::npos)
      return usage(rep.error().message);
    return fail(rep.error().to_string());
  }
  const IpuOptions ipu_in_force = (*w)->ipu_options();
  if (!no_unmount) {
    if (auto st = (*w)->unmount(); !st) return fail("unmount: " + st.error().to_string());
  }
  // The plot is drawn before the report is printed, so that a failure
  // under --json is one error object.
  std::string plot_error, plot_note;
  if (!plot.empty()) {
    if (!has_gnuplot()) {
#if defined(_WIN32)
      plot_note = "plots are drawn with gnuplot on Linux only: no plot written";
#else
      plot_note = "gnuplot is not installed (apt-get install gnuplot-nox): no plot written";
#endif
    } else if (auto st = run_gnuplot(workload_gnuplot_script(*rep, plot, *plot_fmt)); !st) {
      plot_error = "gnuplot failed writing " + plot + ": " + st.error().message;
    }
  }
  if (!plot_note.empty()) std::fprintf(stderr, "f2fscore-io fs: %s\n", plot_note.c_str());
  if (json && !plot_error.empty()) return fail(plot_error);
  if (json) {
    tools::Json j;
    j["device"] = target;
    j["ipu_policy"] = ipu_in_force.ipu_policy;  // a number, as f2fscore-dump ipu gives it
    j["ipu_policy_string"] = ipu_policy_string(ipu_in_force.ipu_policy);
    j["min_ipu_util"] = ipu_in_force.min_ipu_util;
    j["min_fsync_blocks"] = ipu_in_force.min_fsync_blocks;
    j["fdatasync_in_place"] = ipu_in_force.fdatasync_in_place;
    j["report"] = nested_json(workload_report_json(*rep));
    j["exit_code"] = kExitOk;
    if (!tools::print_json(j, tools::JsonLayout::line_spaced)) return kExitFailure;
  } else {
    std::printf("f2fscore-io fs: %s (%s, %s); ipu_policy %s, min_ipu_util %u, min_fsync_blocks %u%s\n", target.c_str(),
                std::string(backend_name(opened->backend)).c_str(), buffered ? "buffered" : "direct",
                ipu_policy_string(ipu_in_force.ipu_policy).c_str(), ipu_in_force.min_ipu_util,
                ipu_in_force.min_fsync_blocks, ipu_in_force.fdatasync_in_place ? ", fdatasync in place" : "");
    std::fputs(format_workload_report(*rep).c_str(), stdout);
  }
  if (!plot_error.empty()) return fail(plot_error);
  if (!plot.empty() && plot_note.empty() && !json) std::printf("plot: %s\n", plot.c_str());
  return kExitOk;
}

}  // namespace f2fscore::io_tool
