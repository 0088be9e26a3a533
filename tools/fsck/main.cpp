// f2fscore-fsck: check (and repair) an F2FS volume. A thin front end: parse
// options, refuse a device in use for repairs, open it, call f2fscore::fsck::check(),
// print one line per problem (or JSON) and exit with e2fsck's codes.
// Never asks a question: the mode decides.
#ifndef _FILE_OFFSET_BITS
#define _FILE_OFFSET_BITS 64
#endif
#include <sys/stat.h>
#include <unistd.h>

#include <CLI/CLI.hpp>
#include <algorithm>
#include <chrono>
#include <climits>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <cerrno>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include "f2fscore/fsck.hpp"
#include "f2fscore/resize.hpp"
#include "f2fscore/tools/common.hpp"
#include "f2fscore/tools/progress.hpp"
#include "f2fscore/uring_device.hpp"

namespace {

namespace fexit = f2fscore::tools::fsck_exit_code;
constexpr int kExitClean = fexit::clean, kExitOperational = fexit::operational, kExitUsage = fexit::usage;

const char* kExitHelp =
    "Exit status (as e2fsck): 0 no problems; 1 problems found and all repaired; 4 problems left\n"
    "unrepaired (always with -n when any is found; also a resize interrupted while it moved the\n"
    "metadata areas, which a rerun of f2fscore-resize completes); 8 operational error (device missing, unreadable\n"
    "or, for -p/-a/-y, in use: mounted or held by another program; no usable superblock or\n"
    "checkpoint); 16 usage error (bad option). An informational finding alone (a checkpoint pack\n"
    "torn by a power cut, the other pack in use) exits 0.\n"
    "Modes: -n checks only and opens the device read-only, mounted or not (with a warning);\n"
    "-p/-a preen (on a read-only device or image: checks as -n): on a volume unmounted\n"
    "cleanly a fast check (every node's footer, inode checksums, NAT/SIT counts), then a full check\n"
    "if that finds anything, repairing only safe problems; -y repairs everything; -f forces the full\n"
    "check. Without -n, -p, -a or -y the default is -n. No question is ever asked.\n"
    "Progress (-C FD, as e2fsck): FD > 0 gets one line \"PASS CURRENT MAX DEVICE\" per step (passes: 1 NAT\n"
    "and SIT, 2 node blocks, 3 namespace walk, 4 SIT and SSA comparison, 5 repair writes); -C 0 draws a\n"
    "bar on stdout when it is a terminal. Without -C nothing is printed while the check runs.";

}  // namespace

int main(int argc, char** argv) {
  using namespace f2fscore;
  CLI::App app{"f2fscore-fsck: check and repair an F2FS file system", "f2fscore-fsck"};
  app.footer(kExitHelp);
  bool no = false, preen = false, auto_ = false, yes = false, force = false, json = false, quiet = false, version = false;
  std::string device;
  std::uint32_t batch = 64, depth = 16;
  int progress_fd = -1;
  app.add_flag("-n", no, "check only: open read-only, change nothing");
  app.add_flag("-p", preen, "preen: fast check on a clean volume, repair safe problems");
  app.add_flag("-a", auto_, "same as -p");
  app.add_flag("-y", yes, "repair everything");
  app.add_flag("-f", force, "force a full check even if the volume is marked clean");
  app.add_flag("--json", json, "print the result as JSON");
  app.add_flag("-q,--quiet", quiet, "print only problems (no summary)");
  app.add_option("--batch-blocks", batch, "4 KiB blocks per read request (default 64)")->check(CLI::Range(1, 4096));
  app.add_option("--queue-depth", depth, "read requests in flight (default 16)")->check(CLI::Range(1, 64));
  app.add_option("-C", progress_fd, "progress: lines \"pass current max device\" to descriptor FD; 0: a bar on the terminal")
      ->check(CLI::NonNegativeNumber);
  app.add_flag("-V,--version", version, "print the version");
  app.add_option("device", device, "block device or image file");
  std::vector<std::string> other_devices;
  f2fscore::tools::add_device_option(app, other_devices);
  fsck::Options opts;
  // A usage or operational error: "f2fscore-fsck: MESSAGE" on stderr and,
  // with --json, render_error_json() on stdout.
  auto error_exit = [&](const std::string& m, int code, bool hint = false) {
    f2fscore::tools::print_error("f2fscore-fsck", m, code, hint);
    if (json) {
      fsck::ReportContext c;
      c.device = device;
      c.mode = opts.mode;
      std::fputs(fsck::render_error_json(c, m, code).c_str(), stdout);
    }
    return code;
  };
  if (auto done = f2fscore::tools::parse_or(app, argc, argv, [&](const CLI::ParseError&, const std::string& m) {
        json = f2fscore::tools::json_requested(argc, argv);
        return error_exit(m, kExitUsage, true);
      }))
    return *done;
  if (version) return f2fscore::tools::print_version("f2fscore-fsck", json);
  opts.mode = yes ? fsck::Mode::repair_all : (preen || auto_) ? fsck::Mode::preen : fsck::Mode::check_only;
  if (device.empty()) return error_exit("a device is required", kExitUsage, true);
  const int modes = (no ? 1 : 0) + ((preen || auto_) ? 1 : 0) + (yes ? 1 : 0);
  if (modes > 1) return error_exit("-n, -p/-a and -y exclude each other", kExitUsage, true);
  opts.force = force;
  opts.batch_blocks = batch;
  opts.queue_depth = depth;

  // A device in use (mounted, swap, an image behind a mounted or held loop
  // device, held with O_EXCL): -n checks it read-only with a warning, as
  // e2fsck -n does; a repair mode refuses it (exit 8).
  const bool check_only = opts.mode == fsck::Mode::check_only;
  if (check_only) {
    InUseCheck what;
    what.writer_lock = true;  // an f2fscore tool writing the image (a FUSE daemon finishing its unmount)
    if (InUse u = check_in_use(device, what))
      std::fprintf(stderr, "f2fscore-fsck: warning: %s; checking it read-only (what is found may be in flux)\n",
                   u.detail.c_str());
  }
  OpenOptions oo;
  oo.read_only = check_only;
  oo.refuse_in_use = !check_only;
  // The checker reads the metadata in its own coalesced requests; the
  // kernel's read-ahead would add the data blocks around them.
  oo.random_access = true;
  // A check reads its 4 KiB blocks once each: -n reads them with direct
  // I/O (no copy through the page cache), or buffered where the file
  // system refuses it. Repairs read and write buffered.
  oo.direct = check_only;
  BackendOptions bo;
  bo.buffered_if_direct_refused = true;
  auto opened = open_device(device, oo, bo);
  if (!opened && opened.error().code == Errc::busy)
    return error_exit(opened.error().message + "; refusing to repair it (-n checks it read-only)", kExitOperational);
  if (!opened && opened.error().code == Errc::read_only && opts.mode == fsck::Mode::preen) {
    // A write-protected device or an image without write permission: preen
    // checks it read-only, as e2fsck falls back for -p.
    std::fprintf(stderr, "f2fscore-fsck: %s is read-only: checking it without repairs (as -n)\n", device.c_str());
    opts.mode = fsck::Mode::check_only;
    oo.read_only = true;
    oo.refuse_in_use = false;
    oo.direct = true;
    opened = open_device(device, oo, bo);
  }
  if (!opened) return error_exit(f2fscore::tools::open_failure_text(device, opened.error()), kExitOperational);
  // A multi-device volume: its other devices, opened alike.
  {
    auto whole = f2fscore::tools::open_whole_volume(std::move(opened->device), other_devices, [&](const std::string& p) -> f2fscore::Result<std::unique_ptr<f2fscore::BlockDevice>> {
        auto o = open_device(p, oo, bo);
        if (!o) return f2fscore::make_error(o.error());
        return std::move(o->device);
      });
    if (!whole)
      return error_exit(whole.error().message + (whole.error().code == Errc::busy ? "; refusing to repair it (-n checks it read-only)" : ""),
                        whole.error().code == Errc::invalid_argument ? kExitUsage : kExitOperational);
    opened->device = std::move(*whole);
  }
  // An image file shorter than its volume may be grown back by a repair
  // (only when the lost tail held nothing in use).
  struct stat dst {};
  // Not a multi-device volume: its device 0 is no image of the whole.
  if (opts.mode != fsck::Mode::check_only && opened->device->info().kind != DeviceKind::other &&
      ::stat(device.c_str(), &dst) == 0 && S_ISREG(dst.st_mode))
    opts.grow = [&device](std::uint64_t bytes) -> Status {
      struct stat now {};
      if (::stat(device.c_str(), &now) != 0 || static_cast<std::uint64_t>(now.st_size) >= bytes)
        return make_error(Errc::invalid_argument, "the image is not shorter than the volume");
      if (::truncate(device.c_str(), static_cast<off_t>(bytes)) != 0)
        return make_error(Errc::io, std::string("truncate: ") + std::strerror(errno));
      return {};
    };
  f2fscore::tools::Progress prog(progress_fd, device, 5);
  if (prog.active(json)) opts.progress = [&prog](int pass, std::uint64_t cur, std::uint64_t max) { prog(pass, cur, max); };
  const auto t0 = std::chrono::steady_clock::now();
  auto r = fsck::check(*opened->device, opts);
  prog.finish();
  const double secs = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  fsck::ReportContext ctx;
  ctx.device = device;
  ctx.mode = opts.mode;
  ctx.seconds = secs;
  if (!r) {
    // A resize that moves the metadata areas, interrupted in its copy: no
    // superblock is valid until f2fscore-resize completes it.
    if (auto ir = f2fscore::interrupted_resize(*opened->device); ir && !ir->empty()) {
      if (json)
        std::fputs(fsck::render_error_json(ctx, *ir, fexit::left_unrepaired).c_str(), stdout);
      else
        std::fprintf(stderr, "f2fscore-fsck: %s: %s\n", device.c_str(), ir->c_str());
      return fexit::left_unrepaired;
    }
    if (json)
      std::fputs(fsck::render_error_json(ctx, r.error().message, kExitOperational).c_str(), stdout);
    else
      std::fprintf(stderr, "f2fscore-fsck: %s: %s\n", device.c_str(), r.error().message.c_str());
    return kExitOperational;
  }
  const std::string out = json ? fsck::render_report_json(*r, ctx) : fsck::render_report_text(*r, ctx, quiet);
  if (std::fwrite(out.data(), 1, out.size(), stdout) != out.size() || std::fflush(stdout) != 0) return kExitOperational;
  return r->exit_code();
}