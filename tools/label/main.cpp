// f2fscore-label: show or change the volume label of an F2FS file system,
// as f2fslabel and e2label. A thin front end: parse the arguments, open the
// device (read-only to show; refusing a device in use to change),
// read_volume_label() or write_volume_label(), print.
#ifndef _FILE_OFFSET_BITS
#define _FILE_OFFSET_BITS 64
#endif
#include <CLI/CLI.hpp>
#include <cstdio>
#include <string>

#include "f2fscore/device.hpp"
#include "f2fscore/tools/common.hpp"
#include "f2fscore/tune.hpp"

namespace {

namespace ftools = f2fscore::tools;
constexpr int kExitOk = ftools::exit_code::ok, kExitFailure = ftools::exit_code::failure,
              kExitUsage = ftools::exit_code::usage;

const char* kFooter =
    "Without LABEL: prints the label (the superblock's volume_name). With LABEL: stores it in both\n"
    "superblock copies (at most 512 UTF-16 units; \"\" clears it). A device in use is refused.\n"
    "Exit status: 0 success; 1 failure (cannot open the device, no valid F2FS superblock, device in\n"
    "use, label too long or not UTF-8, I/O error; nothing is written on a refusal); 2 usage error.";

}  // namespace

int main(int argc, char** argv) {
  CLI::App app{"Show or change the label of an F2FS file system (f2fscore " F2FSCORE_VERSION_STRING ")",
               "f2fscore-label"};
  app.footer(kFooter);
  std::string device, label;
  bool json = false, version = false;
  app.add_option("device", device, "Block device or image file");
  auto* label_opt = app.add_option("label", label, "New label (UTF-8)");
  app.add_flag("--json", json, "Print one JSON object {\"device\", \"label\"}");
  app.add_flag("-V,--version", version, "Print the version and exit");
  if (auto rc = ftools::parse_device_command_line(app, argc, argv, kExitUsage, device, true)) return *rc;
  if (version) return ftools::print_version("f2fscore-label", json);
  if (device.empty()) return ftools::report_usage_error("f2fscore-label", device, json, "a device is required", kExitUsage);
  const bool set = label_opt->count() > 0;
  auto fail = [&](const std::string& m) { return ftools::report_device_failure("f2fscore-label", device, json, m); };
  // What a device that is not F2FS holds, for the message.
  auto why = [&](const f2fscore::Error& e) {
    if (e.code == f2fscore::Errc::corrupt)
      if (auto f = ftools::foreign_file_system(device); !f.empty()) return device + ": " + f;
    return device + ": " + e.message;
  };

  f2fscore::OpenOptions oo;
  oo.read_only = !set;
  oo.refuse_in_use = set;  // mounted, an image behind a mounted or held loop device, O_EXCL elsewhere
  auto dev = f2fscore::open_posix_device(device, oo);
  if (!dev) {
    const auto& e = dev.error();
    if (e.code == f2fscore::Errc::busy) return fail(e.message + "; refusing to change its label");
    return fail(ftools::open_failure_text(device, e));
  }
  if (!set) {
    auto l = f2fscore::read_volume_label(**dev);
    if (!l) return fail(why(l.error()));
    if (json) {
      ftools::print_json({{"device", device}, {"label", *l}, {"exit_code", kExitOk}});
    } else {
      std::printf("%s\n", l->c_str());
    }
    return kExitOk;
  }
  if (auto st = f2fscore::write_volume_label(**dev, label); !st) return fail(why(st.error()));
  if (json) {
    if (!ftools::print_json({{"device", device}, {"label", label}, {"exit_code", kExitOk}})) return kExitFailure;
  }
  return kExitOk;
}
