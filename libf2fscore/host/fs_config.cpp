// Canned fs_config files and the security.capability value
// (android_rules.hpp).
#include <fstream>
#include <sstream>

#include "f2fscore/android_rules.hpp"
#include "f2fscore/endian.hpp"

namespace f2fscore {

namespace {

bool digits_of_base(std::string_view s, unsigned base) {
  if (s.empty()) return false;
  for (char c : s) {
    const bool ok = base == 8    ? (c >= '0' && c <= '7')
                    : base == 10 ? (c >= '0' && c <= '9')
                                 : ((c >= '0' && c <= '9') || (c >= 'a' && c <= 'f') || (c >= 'A' && c <= 'F'));
    if (!ok) return false;
  }
  return true;
}

// Digits of `base` to a number no larger than `max`; false if not.
bool to_number(std::string_view s, unsigned base, std::uint64_t max, std::uint64_t& out) {
  if (!digits_of_base(s, base)) return false;
  std::uint64_t v = 0;
  for (char c : s) {
    const unsigned d = c <= '9' ? static_cast<unsigned>(c - '0')
                                : static_cast<unsigned>((c | 0x20) - 'a') + 10u;
    if (v > (max - d) / base) return false;
    v = v * base + d;
  }
  out = v;
  return true;
}

// A number in C notation (strtoull base 0): 0x.. hex, 0.. octal, decimal.
bool c_number(std::string_view s, std::uint64_t& out) {
  if (s.size() > 2 && s[0] == '0' && (s[1] == 'x' || s[1] == 'X'))
    return to_number(s.substr(2), 16, UINT64_MAX, out);
  if (s.size() > 1 && s[0] == '0') return to_number(s.substr(1), 8, UINT64_MAX, out);
  return to_number(s, 10, UINT64_MAX, out);
}

}  // namespace

Result<FsConfig> FsConfig::parse(std::string_view text, const std::string& name) {
  FsConfig cfg;
  cfg.name_ = name;
  std::size_t line_no = 0;
  for (std::size_t p = 0; p < text.size();) {
    std::size_t e = text.find('\n', p);
    if (e == std::string_view::npos) e = text.size();
    std::string line(text.substr(p, e - p));
    p = e + 1;
    ++line_no;
    if (!line.empty() && line.back() == '\r') line.pop_back();
    if (line.empty()) continue;
    auto bad = [&](const std::string& why) {
      return make_error(Errc::invalid_argument, name + ":" + std::to_string(line_no) + ": " + why);
    };
    // A line that begins with a space names the mount point (libcutils
    // reads " 0 0 0755" as the path "/").
    if (line[0] == ' ') line.insert(line.begin(), '/');
    std::vector<std::string_view> tok;
    std::string_view rest(line);
    while (!rest.empty()) {
      const std::size_t a = rest.find_first_not_of(" \t");
      if (a == std::string_view::npos) break;
      rest.remove_prefix(a);
      const std::size_t b = std::min(rest.find_first_of(" \t"), rest.size());
      tok.push_back(rest.substr(0, b));
      rest.remove_prefix(b);
    }
    if (tok.size() < 4) return bad("expected \"path uid gid mode [capabilities=N]\", not \"" + line + "\"");
    std::string path(tok[0]);
    if (!path.empty() && path[0] == '/') path.erase(0, 1);
    FsConfigRule r;
    std::uint64_t v = 0;
    if (!to_number(tok[1], 10, UINT32_MAX, v))
      return bad("uid \"" + std::string(tok[1]) + "\" is not a decimal number below 2^32");
    r.uid = static_cast<std::uint32_t>(v);
    if (!to_number(tok[2], 10, UINT32_MAX, v))
      return bad("gid \"" + std::string(tok[2]) + "\" is not a decimal number below 2^32");
    r.gid = static_cast<std::uint32_t>(v);
    if (!to_number(tok[3], 8, 07777, v))
      return bad("mode \"" + std::string(tok[3]) + "\" is not an octal mode of at most 07777");
    r.mode = static_cast<std::uint16_t>(v);
    for (std::size_t i = 4; i < tok.size(); ++i) {
      constexpr std::string_view kCaps = "capabilities=";
      if (tok[i].substr(0, kCaps.size()) != kCaps) continue;  // selabel=... and others: ignored, as libcutils
      if (!c_number(tok[i].substr(kCaps.size()), r.capabilities))
        return bad("\"" + std::string(tok[i]) + "\": capabilities is not a 64-bit number");
      break;  // the first capabilities= holds, as libcutils
    }
    cfg.rules_[path] = r;
  }
  return cfg;
}

Result<FsConfig> FsConfig::load(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) return make_error(Errc::not_found, "fs_config " + path + ": cannot open it");
  std::ostringstream ss;
  ss << in.rdbuf();
  if (in.bad()) return make_error(Errc::io, "fs_config " + path + ": read error");
  return parse(ss.str(), path);
}

const FsConfigRule* FsConfig::find(std::string_view path) const {
  if (!path.empty() && path[0] == '/') path.remove_prefix(1);
  auto it = rules_.find(std::string(path));
  return it == rules_.end() ? nullptr : &it->second;
}

Result<std::shared_ptr<const FileContexts>> FileContexts::open_list(std::string_view files) {
  std::vector<std::string> list;
  for (std::size_t p = 0; p <= files.size();) {
    std::size_t e = files.find(',', p);
    if (e == std::string_view::npos) e = files.size();
    if (e > p) list.emplace_back(files.substr(p, e - p));
    p = e + 1;
  }
  return open(list);
}

std::array<std::uint8_t, 20> vfs_cap_data(std::uint64_t capabilities) {
  std::array<std::uint8_t, 20> v{};
  store_le32(v.data(), 0, 0x02000000u | 0x000001u);  // VFS_CAP_REVISION_2 | VFS_CAP_FLAGS_EFFECTIVE
  store_le32(v.data(), 4, static_cast<std::uint32_t>(capabilities));
  store_le32(v.data(), 8, 0);
  store_le32(v.data(), 12, static_cast<std::uint32_t>(capabilities >> 32));
  store_le32(v.data(), 16, 0);
  return v;
}

}  // namespace f2fscore
