// f2fscore-sload: copy a host directory tree into an F2FS image, as
// sload.f2fs does. A thin front end: parse options, open the device, mount
// it read-write (f2fscore::Writer), f2fscore::populate(), unmount, print
// the report.
#ifndef _FILE_OFFSET_BITS
#define _FILE_OFFSET_BITS 64
#endif
#include <CLI/CLI.hpp>
#include <chrono>
#include <cstdio>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "f2fscore/android_rules.hpp"
#include "f2fscore/populate.hpp"
#include "f2fscore/tools/common.hpp"
#include "f2fscore/tools/compression_args.hpp"
#include "f2fscore/tools/populate_json.hpp"
#include "f2fscore/tools/progress.hpp"
#include "f2fscore/tools/sparse_output.hpp"
#include "f2fscore/uring_device.hpp"
#include "f2fscore/volume.hpp"
#include "f2fscore/writer.hpp"

namespace {

namespace ftools = f2fscore::tools;
constexpr int kExitOk = ftools::exit_code::ok, kExitFailure = ftools::exit_code::failure,
              kExitUsage = ftools::exit_code::usage;

const char* kExitHelp =
    "Exit status: 0 every entry copied and the image unmounted cleanly; 1 failure (no such\n"
    "source directory or not a directory, image missing or not F2FS, a volume the writer\n"
    "refuses, no space left, an entry that could not be copied: each is named); 2 usage error.\n"
    "Into an image that has entries already: directories are merged into, existing files\n"
    "are kept unless --overwrite replaces them.\n"
    "Unlike sload.f2fs the image needs no fsck afterwards.";

// The part of the summary line about entries that existed in the image.
std::string merge_text(const f2fscore::PopulateReport& r) {
  if (r.merged_directories == 0 && r.kept == 0 && r.replaced == 0) return "";
  return "; existing: " + std::to_string(r.merged_directories) + " directories merged into, " + std::to_string(r.kept) +
         " entries kept, " + std::to_string(r.replaced) + " replaced";
}

}  // namespace

int main(int argc, char** argv) {
  CLI::App app{"Copy a host directory into an F2FS image (f2fscore " F2FSCORE_VERSION_STRING ")", "f2fscore-sload"};
  app.footer(kExitHelp);
  std::string device, source, target = "/";
  std::int64_t timestamp = -1;
  bool preserve = false, quiet = false, json = false, version = false, no_xattrs = false, verbose = false,
       overwrite = false;
  std::uint64_t cache_mib = 4;  // a stream of new data: a small cache stays in the CPU caches, measured faster than 64
  std::string backend = "auto";
  app.add_option("device", device, "Image file or block device holding an F2FS volume");
  std::vector<std::string> other_devices;
  ftools::add_device_option(app, other_devices);
  app.add_option("-f,--from", source, "Source directory on the host");
  // sload.f2fs's Android options (-t -C -s -p -d), one block.
  std::string mount_point = "/", fs_config_file, file_contexts_arg, product_out;
  int debug_level = 0;
  app.add_option("--target-dir", target, "Directory in the image to copy into, created if missing (default /)");
  app.add_option("-t,--mount-point", mount_point,
                 "Where the image is mounted on the device, as sload.f2fs -t: the prefix of the paths looked up in "
                 "the fs_config and file_contexts rules (default /); the tree still goes into --target-dir");
  app.add_option("-C,--fs-config", fs_config_file,
                 "Android canned fs_config file (lines \"path uid gid mode [capabilities=N]\"): each entry's owner, "
                 "permission bits and file capabilities (security.capability) from its rule; an entry without one "
                 "is an error before anything is written");
  app.add_option("-s,--file-contexts", file_contexts_arg,
                 "SELinux file_contexts, FILE[,FILE...] (at most 8): each entry's security.selinux from "
                 "selabel_lookup() of its path; needs a build with libselinux");
  app.add_option("-p,--product-out", product_out,
                 "Android product-out directory, as sload.f2fs -p: accepted only with -C, whose file holds every "
                 "rule (sload.f2fs reads the directory only for Android's built-in fs_config tables, which "
                 "f2fscore does not have)");
  app.add_option("-d,--debug", debug_level, "Debug level, as sload.f2fs -d: 1 or more prints each path as -v does")
      ->check(CLI::Range(0, 9));
  app.add_option("-T,--timestamp", timestamp, "Every inode's times, seconds since the epoch (default: the source's)")
      ->check(CLI::NonNegativeNumber);
  app.add_flag("-P,--preserve-owner", preserve, "Keep the source's uid and gid (default: root, 0:0)");
  app.add_flag("--no-xattrs", no_xattrs, "Do not copy extended attributes");
  app.add_flag("--overwrite", overwrite,
               "Replace files that already exist in the image (default: keep them; existing directories are always "
               "merged into)");
  app.add_option("--cache-mib", cache_mib, "Page cache bound of the writer, MiB (default 4: copying streams data through it)")->check(CLI::Range(1, 1 << 20));
  app.add_option("--backend", backend, "I/O backend: auto (io_uring if available; on Windows overlapped), posix or sync "
                 "(synchronous calls), io_uring (through Asio), uring (liburing directly) or overlapped (Windows)")
      ->check(CLI::IsMember({"auto", "posix", "sync", "io_uring", "uring", "overlapped"}));
  int progress_fd = -1;
  app.add_option("--progress", progress_fd,
                 "Progress as e2fsck -C: lines \"1 CURRENT MAX DEVICE\" to descriptor FD; 0: a bar on the terminal");
  bool sparse = false;
  app.add_flag("-S,--sparse", sparse,
               "The device is an Android sparse image (make_f2fs -S, img2simg): copied into and written back as one, "
               "replacing the file when the copy is complete, as sload.f2fs -S");
  app.add_flag("-v,--verbose", verbose, "Print each path as it is copied");
  app.add_flag("-q,--quiet", quiet, "Print only errors");
  app.add_flag("--json", json, "Print a machine-readable summary");
  app.add_flag("-V,--version", version, "Print the version and exit");
  // Compression, as sload.f2fs: -c on; -a, -L, -i / -x, -m, -r its sub-options.
  ftools::CompressionArgs compression;
  compression.add_to(app, {"-c", "-a", "-L", "-i", "-x", "-m", "-r"});
  // With --json, a usage error prints the failure object too (exit_code 2).
  auto usage = [&](const std::string& m) {
    if (json) ftools::print_json({{"device", device}, {"source", source}, {"error", m}, {"exit_code", kExitUsage}});
    return ftools::print_error("f2fscore-sload", m, kExitUsage, true);
  };
  if (auto done = ftools::parse_or(app, argc, argv, [&](const CLI::ParseError&, const std::string& m) {
        json = ftools::json_requested(argc, argv);
        return usage(m);
      }))
    return *done;
  if (version) return ftools::print_version("f2fscore-sload", json);
  if (device.empty()) return usage("a device is required");
  if (source.empty()) return usage("a source directory is required (-f DIR)");
  if (target.empty() || target[0] != '/') return usage("--target-dir: the target must be an absolute path in the image");
  if (!product_out.empty() && fs_config_file.empty())
    return usage("-p: the product-out directory serves Android's built-in fs_config tables (libcutils fs_config()), "
                 "which f2fscore does not have; give the canned fs_config file with -C");
  if (debug_level > 0) verbose = true;
  f2fscore::MountOptions::Compression compress_opts;
  if (auto e = compression.apply(compress_opts)) return usage(*e);
  auto fail = [&](const std::string& m) {
    if (json)
      ftools::print_json({{"device", device}, {"source", source}, {"error", m}, {"exit_code", kExitFailure}});
    else
      std::fprintf(stderr, "f2fscore-sload: %s\n", m.c_str());
    return kExitFailure;
  };

  // The Android rules are read and every entry's rules looked up before
  // the image is opened: a bad rule file or a missing rule writes nothing.
  f2fscore::PopulateOptions po;
  po.target = target;
  po.mount_point = mount_point;
  if (!fs_config_file.empty()) {
    auto c = f2fscore::FsConfig::load(fs_config_file);
    if (!c) return fail(c.error().message + "; nothing written");
    po.fs_config = std::make_shared<const f2fscore::FsConfig>(std::move(*c));
  }
  if (!file_contexts_arg.empty()) {
    auto fc = f2fscore::FileContexts::open_list(file_contexts_arg);
    if (!fc) return fail("-s: " + fc.error().message + "; nothing written");
    po.file_contexts = std::move(*fc);
  }
  if (auto c = f2fscore::check_populate_rules(source, po); !c) return fail(c.error().message);
  po.rules_checked = true;

  // A device in use (mounted, an image behind a mounted or held loop
  // device, held with O_EXCL by another program) is refused, unwritten.
  f2fscore::OpenOptions oo;
  oo.refuse_in_use = true;
  f2fscore::BackendOptions bo;
  bo.backend = backend == "posix" || backend == "sync" ? f2fscore::Backend::posix
               : backend == "overlapped"                ? f2fscore::Backend::overlapped
               : backend == "io_uring"                  ? f2fscore::Backend::uring
               : backend == "uring"                     ? f2fscore::Backend::liburing
                                                        : f2fscore::Backend::automatic;
  // -S: the copy goes into a raw staging file expanded from the sparse
  // image, written back as a sparse image at the end.
  std::optional<ftools::SparseStaging> staging;
  if (sparse) {
    auto st = ftools::SparseStaging::expand(device);
    if (!st) return fail("-S: " + st.error().message);
    staging.emplace(std::move(*st));
  }
  auto opened = f2fscore::open_device(staging ? staging->raw_path() : device, oo, bo);
  if (!opened)
    return fail(opened.error().code == f2fscore::Errc::busy ? opened.error().message + "; refusing to write to it"
                                                            : ftools::open_failure_text(device, opened.error()));
  // A multi-device volume: every device is checked and opened before the
  // first write.
  {
    auto whole = ftools::open_whole_volume(std::move(opened->device), other_devices, [&](const std::string& p) -> f2fscore::Result<std::unique_ptr<f2fscore::BlockDevice>> {
        auto o = f2fscore::open_device(p, oo, bo);
        if (!o) return f2fscore::make_error(o.error());
        return std::move(o->device);
      });
    if (!whole)
      return fail(whole.error().message + (whole.error().code == f2fscore::Errc::busy ? "; refusing to write to it" : ""));
    opened->device = std::move(*whole);
  }
  f2fscore::MountOptions mo;
  if (timestamp >= 0) mo.fixed_time = static_cast<std::uint64_t>(timestamp);
  mo.cache_bytes = cache_mib << 20;
  mo.checkpoint_interval_s = 0;  // no timed checkpoints (the node page cache takes its own when half dirty)
  mo.node_cache_pages = 1024;    // the copy's nodes stream through a small cache too (a directory, the files being made)
  // A read-only image (the ro feature, mkfs -O ro) is filled at build time,
  // as sload.f2fs does: the writer's build mode, the only one that writes it.
  if (auto v = f2fscore::Volume::open(*opened->device); v && ((*v)->superblock().feature.get() & f2fscore::disk::feature::ro))
    mo.build_ro_image = true;
  // On a volume without the compression feature the mount refuses these
  // (sload.f2fs returns 0 there): nothing is written.
  mo.compression = compress_opts;
  auto w = f2fscore::Writer::mount(*opened->device, mo);
  if (!w) return fail(device + ": cannot mount read-write: " + w.error().message);

  if (timestamp >= 0) po.fixed_time = static_cast<std::uint64_t>(timestamp);
  po.preserve_owner = preserve;
  po.xattrs = !no_xattrs;
  po.overwrite = overwrite;
  po.release_compressed = compression.release();
  if (compression.enabled()) po.compress = [&](const std::string& p, std::uint64_t n) { return compression.wants(p, n); };
  if (verbose && !quiet && !json) po.on_entry = [](const std::string& p) { std::printf("%s\n", p.c_str()); };
  f2fscore::tools::Progress prog(progress_fd, device, 1);
  if (!(verbose && !quiet && !json)) po.progress = prog.for_pass(1, json);
  const auto t0 = std::chrono::steady_clock::now();
  auto rep = f2fscore::populate(**w, source, po);
  prog.finish();
  // Unmount in every case: what was copied is kept, consistently; after a
  // failed unmount the image is as its last checkpoint left it.
  auto um = (*w)->unmount();
  const double secs = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  if (!rep) {
    std::string m = rep.error().code == f2fscore::Errc::no_space
                        ? "no space left in the image: " + rep.error().message +
                              (um && !staging ? "; what was copied before is kept and the image is consistent" : "")
                        : rep.error().message;
    if (!um) m += "; unmount failed too: " + um.error().to_string();
    if (staging) m += "; " + device + " unchanged (-S replaces it only after a complete copy)";
    return fail(m);
  }
  if (!um) return fail(device + ": unmount (checkpoint) failed: " + um.error().to_string());
  if (staging) {
    w->reset();
    opened->device.reset();
    if (auto st = staging->commit(); !st) return fail("-S: " + st.error().message + "; " + device + " unchanged");
  }
  const auto& r = *rep;
  const int code = r.problems.empty() ? kExitOk : kExitFailure;
  if (json) {
    ftools::Json j;
    j["device"] = device;
    j["source"] = source;
    j["target"] = target;
    j["mount_point"] = mount_point;
    ftools::add_populate_report(j, r);
    j["seconds"] = secs;
    j["exit_code"] = code;
    if (!ftools::print_json(j)) return kExitFailure;
    return code;
  }
  for (const auto& p : r.problems) std::fprintf(stderr, "f2fscore-sload: %s\n", p.to_string().c_str());
  if (!quiet)
    std::printf("Copied %s into %s:%s: %llu directories, %llu files, %llu hard links, %llu symlinks, %llu special "
                "files, %llu xattrs; %llu bytes of data, %llu bytes left as holes; %.3f s%s%s\n",
                source.c_str(), device.c_str(), target.c_str(), static_cast<unsigned long long>(r.directories),
                static_cast<unsigned long long>(r.files), static_cast<unsigned long long>(r.hard_links),
                static_cast<unsigned long long>(r.symlinks), static_cast<unsigned long long>(r.specials),
                static_cast<unsigned long long>(r.xattrs), static_cast<unsigned long long>(r.bytes_written),
                static_cast<unsigned long long>(r.hole_bytes), secs, merge_text(r).c_str(),
                r.problems.empty() ? "" : (" (" + std::to_string(r.problems.size()) + " entries not copied)").c_str());
  return code;
}
