// Renderers of a fsck::Report: the text and the JSON f2fscore-fsck prints.
#include <cstdio>
#include <nlohmann/json.hpp>
#include <string>

#include "f2fscore/fsck.hpp"

namespace f2fscore::fsck {

namespace {

using Json = nlohmann::ordered_json;

std::string line(const Json& j) { return j.dump(-1, ' ', false, Json::error_handler_t::replace) + "\n"; }

}  // namespace

std::string_view severity_name(Severity s) noexcept {
  switch (s) {
    case Severity::info: return "info";
    case Severity::warning: return "warning";
    case Severity::error: break;
  }
  return "error";
}

std::string_view mode_name(Mode m) noexcept {
  switch (m) {
    case Mode::check_only: return "check_only";
    case Mode::preen: return "preen";
    case Mode::repair_all: break;
  }
  return "repair_all";
}

std::string render_report_text(const Report& r, const ReportContext& c, bool quiet) {
  std::string out;
  for (const auto& p : r.problems) out += p.to_string() + "\n";
  if (quiet) return out;
  std::size_t fixed = 0;
  for (const auto& p : r.problems) fixed += p.fixed ? 1 : 0;
  char buf[1024];
  // A fast check (preen of a clean volume) reads the NAT and the node
  // blocks but walks no directory: it counts inodes and nodes only.
  if (r.full_check)
    std::snprintf(buf, sizeof buf,
                  "%s: full check (%s): %zu problem%s, %zu fixed; %llu inodes (%llu dirs, %llu files), %llu nodes, "
                  "%llu data blocks; %.3f s\n",
                  c.device.c_str(), std::string(mode_name(c.mode)).c_str(), r.problems.size(),
                  r.problems.size() == 1 ? "" : "s", fixed, static_cast<unsigned long long>(r.stats.inodes),
                  static_cast<unsigned long long>(r.stats.dirs), static_cast<unsigned long long>(r.stats.files),
                  static_cast<unsigned long long>(r.stats.nodes), static_cast<unsigned long long>(r.stats.data_blocks),
                  c.seconds);
  else
    std::snprintf(buf, sizeof buf,
                  "%s: fast check (%s): %zu problem%s, %zu fixed; %llu inodes, %llu nodes in the NAT (no directory "
                  "walked: -f for a full check); %.3f s\n",
                  c.device.c_str(), std::string(mode_name(c.mode)).c_str(), r.problems.size(),
                  r.problems.size() == 1 ? "" : "s", fixed, static_cast<unsigned long long>(r.stats.inodes),
                  static_cast<unsigned long long>(r.stats.nodes), c.seconds);
  out += buf;
  const int code = r.exit_code();
  out += code == 0 ? "clean\n" : code == 1 ? "all problems repaired\n" : "problems left unrepaired\n";
  return out;
}

std::string render_report_json(const Report& r, const ReportContext& c) {
  Json j;
  j["device"] = c.device;
  j["mode"] = mode_name(c.mode);
  j["full_check"] = r.full_check;
  Json problems = Json::array();
  for (const auto& p : r.problems) {
    Json o;
    o["code"] = code_name(p.code);
    o["severity"] = severity_name(definition(p.code).severity);
    if (p.ino) o["ino"] = *p.ino;
    if (p.nid) o["nid"] = *p.nid;
    if (p.blkaddr) o["blkaddr"] = *p.blkaddr;
    if (p.segno) o["segno"] = *p.segno;
    if (!p.path.empty()) o["path"] = p.path;
    if (!p.detail.empty()) o["detail"] = p.detail;
    o["fixed"] = p.fixed;
    problems.push_back(std::move(o));
  }
  j["problems"] = std::move(problems);
  const auto& s = r.stats;
  // A fast check walks no directory: no dirs, files or data_blocks (absent,
  // not 0).
  Json stats = {{"inodes", s.inodes}, {"nodes", s.nodes}};
  if (r.full_check) {
    stats["data_blocks"] = s.data_blocks;
    stats["dirs"] = s.dirs;
    stats["files"] = s.files;
  }
  stats["bytes_read"] = s.bytes_read;
  stats["seconds"] = c.seconds;
  j["stats"] = std::move(stats);
  j["wrote"] = r.wrote;
  j["exit_code"] = r.exit_code();
  return line(j);
}

std::string render_error_json(const ReportContext& c, std::string_view message, int exit_code) {
  Json j;
  j["device"] = c.device;
  j["mode"] = mode_name(c.mode);
  j["error"] = message;
  j["exit_code"] = exit_code;
  return line(j);
}

}  // namespace f2fscore::fsck
