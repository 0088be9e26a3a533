// f2fscore-tune: change what an unmounted F2FS volume allows to change
// offline (label, uuid, features that may be turned on after format), as
// tune2fs does for ext4 and fsck.f2fs -O/-C for f2fs. A thin front end:
// parse the arguments, open the device (read-only to show; refusing a
// device in use to change), read_tune_state() or tune_volume(), print.
#ifndef _FILE_OFFSET_BITS
#define _FILE_OFFSET_BITS 64
#endif
#include <CLI/CLI.hpp>
#include <cstdio>
#include <random>
#include <string>
#include <utility>
#include <vector>

#include "f2fscore/device.hpp"
#include "f2fscore/disk/superblock.hpp"
#include "f2fscore/mkfs.hpp"
#include "f2fscore/tools/common.hpp"
#include "f2fscore/tune.hpp"

namespace {

namespace ftools = f2fscore::tools;
constexpr int kExitOk = ftools::exit_code::ok, kExitFailure = ftools::exit_code::failure,
              kExitUsage = ftools::exit_code::usage;

const char* kFooter =
    "Without a change: prints the label, uuid, features and casefold encoding. Changes go to both\n"
    "superblock copies and nowhere else; a device in use is refused, and nothing is written when any\n"
    "change is refused. Features that can be turned on: encrypt, casefold (with -C, default utf8),\n"
    "verity, sb_checksum; the others need what only mkfs lays down. None can be turned off.\n"
    "The uuid cannot change with inode_checksum (it seeds every inode's checksum) or encrypt.\n"
    "With encrypt, f2fscore's writer changes no encrypted directory without its key (ENOKEY).\n"
    "Exit status: 0 success; 1 failure (cannot open the device, no valid F2FS superblock, device in\n"
    "use, a change refused, I/O error); 2 usage error (bad option, feature name, uuid or encoding).";

std::string uuid_text(const std::array<std::uint8_t, 16>& u) {
  std::uint8_t raw[16];
  for (int i = 0; i < 16; ++i) raw[i] = u[static_cast<std::size_t>(i)];
  return f2fscore::format_uuid(raw);
}

ftools::Json state_json(const f2fscore::TuneState& s) {
  ftools::Json j;
  j["label"] = s.label;
  j["uuid"] = uuid_text(s.uuid);
  j["features"] = ftools::name_array(f2fscore::disk::feature_names(s.features));
  if (s.features & f2fscore::disk::feature::casefold) {
    const std::string name = f2fscore::encoding_name(s.encoding, 0);
    j["encoding"] = name;
    j["encoding_strict"] = (s.encoding_flags & f2fscore::disk::kEncStrictModeFl) != 0;
    // The flags by the names -C takes: "utf8:strict,hashonly" -> ["strict", "hashonly"].
    const std::string full = f2fscore::encoding_name(s.encoding, s.encoding_flags);
    std::string flags = full.size() > name.size() ? full.substr(name.size() + 1) : "";
    for (auto& c : flags)
      if (c == ',') c = ' ';
    j["encoding_flags"] = ftools::name_array(flags);
  }
  return j;
}

void print_state(const f2fscore::TuneState& s) {
  std::printf("label:    %s\n", s.label.c_str());
  std::printf("uuid:     %s\n", uuid_text(s.uuid).c_str());
  std::printf("features: %s\n", f2fscore::disk::feature_names(s.features).c_str());
  if (s.features & f2fscore::disk::feature::casefold)
    std::printf("encoding: %s\n", f2fscore::encoding_name(s.encoding, s.encoding_flags).c_str());
}

}  // namespace

int main(int argc, char** argv) {
  CLI::App app{"Change the label, uuid or features of an unmounted F2FS file system (f2fscore " F2FSCORE_VERSION_STRING
               ")",
               "f2fscore-tune"};
  app.footer(kFooter);
  std::string device, label, uuid, features, encoding;
  bool json = false, version = false, dry_run = false;
  app.add_option("device", device, "Block device or image file");
  auto* label_opt = app.add_option("-l,--label", label, "New volume label (UTF-8, at most 512 UTF-16 units)");
  auto* uuid_opt = app.add_option("-U,--uuid", uuid, "New uuid: xxxxxxxx-xxxx-xxxx-xxxx-xxxxxxxxxxxx, or random");
  auto* feat_opt = app.add_option("-O,--features", features, "Features to turn on, comma-separated: encrypt, casefold, verity, sb_checksum");
  auto* enc_opt = app.add_option("-C,--encoding", encoding, "Casefold encoding utf8[:strict] (turns casefold on)");
  app.add_flag("-n,--dry-run", dry_run, "Check the changes and print the result without writing");
  app.add_flag("--json", json, "Print one JSON object {\"device\", \"before\", \"after\", \"written\"}");
  app.add_flag("-V,--version", version, "Print the version and exit");
  if (auto rc = ftools::parse_device_command_line(app, argc, argv, kExitUsage, device, true)) return *rc;
  if (version) return ftools::print_version("f2fscore-tune", json);
  auto usage = [&](const std::string& m) {
    return ftools::report_usage_error("f2fscore-tune", device, json, m, kExitUsage);
  };
  if (device.empty()) return usage("a device is required");

  f2fscore::TuneChanges changes;
  if (label_opt->count()) changes.label = label;
  if (uuid_opt->count()) {
    if (uuid == "random") {
      std::random_device rd;
      std::array<std::uint8_t, 16> u{};
      for (auto& b : u) b = static_cast<std::uint8_t>(rd());
      u[6] = static_cast<std::uint8_t>((u[6] & 0x0F) | 0x40);  // version 4
      u[8] = static_cast<std::uint8_t>((u[8] & 0x3F) | 0x80);  // RFC 4122 variant
      changes.uuid = u;
    } else {
      auto u = f2fscore::parse_uuid(uuid);
      if (!u) return usage("-U: " + u.error().message);
      changes.uuid = *u;
    }
  }
  if (feat_opt->count()) {
    if (features.find('^') != std::string::npos) return usage("-O: features cannot be turned off (^name)");
    auto bits = f2fscore::parse_features(features);
    if (!bits) return usage("-O: " + bits.error().message);
    changes.add_features = *bits;
  }
  if (enc_opt->count()) {
    auto e = f2fscore::parse_encoding(encoding);
    if (!e) return usage("-C: " + e.error().message);
    changes.encoding = *e;
  }
  const bool change = label_opt->count() || uuid_opt->count() || feat_opt->count() || enc_opt->count();

  auto fail = [&](const std::string& m) { return ftools::report_device_failure("f2fscore-tune", device, json, m); };
  f2fscore::OpenOptions oo;
  oo.read_only = !change || dry_run;
  oo.refuse_in_use = change && !dry_run;
  auto dev = f2fscore::open_posix_device(device, oo);
  if (!dev) {
    const auto& e = dev.error();
    if (e.code == f2fscore::Errc::busy) return fail(e.message + "; refusing to change it");
    return fail(ftools::open_failure_text(device, e));
  }
  if (!change) {
    auto s = f2fscore::read_tune_state(**dev);
    if (!s) return fail(device + ": " + s.error().message);
    if (json)
      return ftools::print_json({{"device", device}, {"state", state_json(*s)}, {"exit_code", kExitOk}}) ? kExitOk
                                                                                                        : kExitFailure;
    print_state(*s);
    return kExitOk;
  }
  auto r = f2fscore::tune_volume(**dev, changes, dry_run);
  if (!r) return fail(device + ": " + r.error().message + " (nothing written)");
  if (json) {
    ftools::Json j;
    j["device"] = device;
    j["before"] = state_json(r->before);
    j["after"] = state_json(r->after);
    j["written"] = r->written;
    j["dry_run"] = dry_run;
    j["warnings"] = ftools::Json::array();  // none: every feature that can be turned on leaves the volume writable
    j["exit_code"] = kExitOk;
    return ftools::print_json(j) ? kExitOk : kExitFailure;
  }
  if (dry_run) std::printf("dry run: nothing written; the volume would read:\n");
  else if (!r->written) std::printf("nothing to change; the volume reads:\n");
  print_state(r->after);
  return kExitOk;
}
