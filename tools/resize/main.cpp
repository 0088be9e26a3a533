// f2fscore-resize: grow or shrink an unmounted F2FS volume, keeping its
// metadata areas in place (f2fscore/resize.hpp). A thin front end: parse the
// arguments, open the device refusing one in use, resize_volume(), print.
#ifndef _FILE_OFFSET_BITS
#define _FILE_OFFSET_BITS 64
#endif
#include <CLI/CLI.hpp>
#include <cstdio>
#include <string>

#include "f2fscore/device.hpp"
#include "f2fscore/resize.hpp"
#include "f2fscore/tools/common.hpp"

namespace {

namespace ftools = f2fscore::tools;
constexpr int kExitOk = ftools::exit_code::ok, kExitFailure = ftools::exit_code::failure,
              kExitUsage = ftools::exit_code::usage;

const char* kFooter =
    "Grows the volume to the device's size (or -t SECTORS of 512 bytes), or shrinks it with --shrink.\n"
    "A grow within what the SIT and SSA areas describe keeps the metadata areas in place; a larger\n"
    "grow lays them out as mkfs would for the new size, moving the blocks at the front of the main\n"
    "area first and staging the new metadata past the old end (a rerun completes an interrupted\n"
    "copy). A shrink first moves the blocks past the new end below it (the data must fit the new\n"
    "size). -t takes 1 to 36028797018963967 sectors.\n"
    "Exit status: 0 success (also when there is nothing to do); 1 failure (device in use, not F2FS,\n"
    "damaged, the data does not fit, a layout that cannot be reached safely, I/O\n"
    "error; nothing is written on a refusal); 2 usage error.";

// "DEVICE: MESSAGE", or, when DEVICE holds a file system of another kind
// (libblkid's probe, as dump and mkfs name it), that instead.
std::string foreign_or(const std::string& device, const std::string& message) {
  if (auto f = ftools::foreign_file_system(device); !f.empty()) return f;
  return device + ": " + message;
}

}  // namespace

int main(int argc, char** argv) {
  CLI::App app{"Grow or shrink an F2FS file system (f2fscore " F2FSCORE_VERSION_STRING ")", "f2fscore-resize"};
  app.footer(kFooter);
  std::string device;
  std::string sectors_text;
  bool shrink = false, json = false, version = false, dry_run = false, force = false;
  app.add_option("device", device, "Block device or image file");
  auto* sectors_opt =
      app.add_option("-t,--target-sectors", sectors_text, "New size in 512-byte sectors (default: the device's size)");
  app.add_flag("-s,--shrink", shrink, "Allow a size smaller than the volume's");
  app.add_flag("-n,--dry-run", dry_run, "Print the plan and write nothing");
  app.add_flag("-f,--force", force, "Accepted for resize.f2fs compatibility (no prompt is ever asked)");
  app.add_flag("--json", json, "Print one JSON object with the old and new layout");
  app.add_flag("-V,--version", version, "Print the version and exit");
  if (auto rc = ftools::parse_device_command_line(app, argc, argv, kExitUsage, device, true)) return *rc;
  if (version) return ftools::print_version("f2fscore-resize", json);
  auto usage = [&](const std::string& m) {
    return ftools::report_usage_error("f2fscore-resize", device, json, m, kExitUsage);
  };
  if (device.empty()) return usage("a device is required");
  // -t: decimal digits, at least 1, at most what 64 bits of bytes hold.
  std::uint64_t sectors = 0;
  if (sectors_opt->count()) {
    bool ok = !sectors_text.empty() && sectors_text.size() <= 20;
    for (char c : sectors_text) ok = ok && c >= '0' && c <= '9';
    if (ok) {
      for (char c : sectors_text) {
        const auto d = static_cast<std::uint64_t>(c - '0');
        if (sectors > (UINT64_MAX / 512 - d) / 10) {
          ok = false;
          break;
        }
        sectors = sectors * 10 + d;
      }
    }
    if (!ok || sectors == 0) {
      return usage("-t: \"" + sectors_text + "\" is not a sector count from 1 to " + std::to_string(UINT64_MAX / 512));
    }
  }
  auto fail = [&](const std::string& m) { return ftools::report_device_failure("f2fscore-resize", device, json, m); };
  f2fscore::OpenOptions oo;
  oo.read_only = dry_run;
  oo.refuse_in_use = !dry_run;
  auto dev = f2fscore::open_posix_device(device, oo);
  if (!dev) {
    const auto& e = dev.error();
    if (e.code == f2fscore::Errc::busy) return fail(e.message + "; refusing to resize it");
    return fail(ftools::open_failure_text(device, e));
  }
  f2fscore::ResizeOptions ro;
  ro.target_sectors = sectors;
  ro.shrink = shrink;
  f2fscore::ResizeReport rep;
  if (dry_run) {
    // A moving grow cut in its copy has no superblock to plan from: name it.
    auto staged = f2fscore::interrupted_resize(**dev);
    if (!staged) return fail(device + ": " + staged.error().message);
    if (!staged->empty()) return fail(device + ": " + *staged);
    auto p = f2fscore::plan_resize(**dev, ro);
    if (!p) return fail(foreign_or(device, p.error().message));
    rep.plan = *p;
    rep.settled_unclean = p->unclean;  // what the run would do first
  } else {
    auto r = f2fscore::resize_volume(**dev, ro);
    if (!r) return fail(foreign_or(device, r.error().message));
    rep = *r;
  }
  const auto& p = rep.plan;
  if (json) {
    ftools::Json j{{"device", device},
                   {"resized", rep.resized},
                   {"dry_run", dry_run},
                   {"old", {{"block_count", p.old_block_count}, {"segment_count_main", p.old_main_segments},
                            {"user_block_count", p.old_user_block_count}}},
                   {"new", {{"block_count", p.new_block_count}, {"segment_count_main", p.new_main_segments},
                            {"user_block_count", p.new_user_block_count}, {"reserved_segments", p.reserved_segments},
                            {"overprov_segments", p.overprov_segments}}},
                   {"valid_block_count", p.valid_block_count},
                   {"moves_metadata", p.moves_metadata},
                   {"finished_interrupted", rep.finished_interrupted},
                   {"settled_unclean", rep.settled_unclean},
                   {"checkpoint_ver", rep.checkpoint_ver},
                   {"exit_code", kExitOk}};
    if (!ftools::print_json(j)) return kExitFailure;
    return kExitOk;
  }
  if (rep.settled_unclean)
    std::printf("%s: not cleanly unmounted: %s first (fsynced data rolled forward)\n", device.c_str(),
                dry_run ? "would be mounted and unmounted" : "mounted and unmounted");
  if (rep.finished_interrupted) {
    std::printf("%s: completed an interrupted resize that moves the metadata areas: %llu -> %llu blocks\n",
                device.c_str(), static_cast<unsigned long long>(p.old_block_count),
                static_cast<unsigned long long>(p.new_block_count));
    if (sectors != 0 && sectors / 8 != p.new_block_count)
      std::printf("%s: -t %s was not applied (the interrupted resize is completed first): run f2fscore-resize "
                  "again for it\n",
                  device.c_str(), sectors_text.c_str());
    return kExitOk;
  }
  if (rep.checkpoint_counts_fixed) {
    std::printf("%s: already %llu blocks; the checkpoint's counts were another size's (an interrupted resize): "
                "rewritten for this size\n",
                device.c_str(), static_cast<unsigned long long>(p.old_block_count));
    return kExitOk;
  }
  if (p.unchanged()) {
    std::printf("%s: already %llu blocks (%u main segments): nothing to do\n", device.c_str(),
                static_cast<unsigned long long>(p.old_block_count), p.old_main_segments);
    return kExitOk;
  }
  std::printf("%s: %s %llu -> %llu blocks, main area %u -> %u segments, user blocks %llu -> %llu\n", device.c_str(),
              dry_run ? "would resize" : "resized", static_cast<unsigned long long>(p.old_block_count),
              static_cast<unsigned long long>(p.new_block_count), p.old_main_segments, p.new_main_segments,
              static_cast<unsigned long long>(p.old_user_block_count),
              static_cast<unsigned long long>(p.new_user_block_count));
  return kExitOk;
}
