// Parsing of mkfs option values shared by the tool and embedders.
#include <cstdio>

#include "f2fscore/disk/constants.hpp"
#include "f2fscore/mkfs.hpp"

namespace f2fscore {

Result<std::uint32_t> parse_features(std::string_view list) {
  static const struct {
    const char* name;
    std::uint32_t bit;
  } kTable[] = {
      {"encrypt", disk::feature::encrypt},
      {"extra_attr", disk::feature::extra_attr},
      {"project_quota", disk::feature::project_quota},
      {"inode_checksum", disk::feature::inode_checksum},
      {"flexible_inline_xattr", disk::feature::flexible_inline_xattr},
      {"quota", disk::feature::quota_ino},
      {"inode_crtime", disk::feature::inode_crtime},
      {"lost_found", disk::feature::lost_found},
      {"verity", disk::feature::verity},
      {"sb_checksum", disk::feature::sb_checksum},
      {"casefold", disk::feature::casefold},
      {"compression", disk::feature::compression},
      {"ro", disk::feature::ro},
  };
  std::uint32_t bits = 0;
  const std::string whole(list);
  while (!list.empty()) {
    const std::size_t comma = list.find(',');
    std::string_view name = list.substr(0, comma);
    list = comma == std::string_view::npos ? std::string_view{} : list.substr(comma + 1);
    while (!name.empty() && name.front() == ' ') name.remove_prefix(1);
    while (!name.empty() && name.back() == ' ') name.remove_suffix(1);
    if (name.empty())
      return make_error(Errc::invalid_argument, "empty feature name in \"" + whole + "\" (names are comma-separated)");
    bool found = false;
    for (const auto& f : kTable)
      if (name == f.name) {
        bits |= f.bit;
        found = true;
      }
    if (!found) {
      std::string known;
      for (const auto& f : kTable) known += std::string(known.empty() ? "" : ", ") + f.name;
      return make_error(Errc::invalid_argument,
                        "unknown feature \"" + std::string(name) + "\" (known: " + known + ")");
    }
  }
  return bits;
}

Result<std::pair<std::uint16_t, std::uint16_t>> parse_encoding(std::string_view spec) {
  const std::size_t colon = spec.find(':');
  const std::string_view enc = spec.substr(0, colon);
  if (enc != "utf8")
    return make_error(Errc::invalid_argument, "unknown encoding \"" + std::string(enc) + "\" (known: utf8)");
  std::uint16_t flags = 0;
  std::string_view rest = colon == std::string_view::npos ? std::string_view{} : spec.substr(colon + 1);
  while (!rest.empty()) {
    const std::size_t comma = rest.find(',');
    const std::string_view f = rest.substr(0, comma);
    rest = comma == std::string_view::npos ? std::string_view{} : rest.substr(comma + 1);
    if (f == "strict") flags |= disk::kEncStrictModeFl;
    else if (f == "hashonly") flags |= disk::kEncNoCompatFallbackFl;
    else if (!f.empty())
      return make_error(Errc::invalid_argument, "unknown encoding flag \"" + std::string(f) + "\" (known: strict, hashonly)");
  }
  return std::pair<std::uint16_t, std::uint16_t>{disk::kEncodingUtf8_12_1, flags};
}

Result<std::array<std::uint8_t, 16>> parse_uuid(std::string_view t) {
  std::array<std::uint8_t, 16> out{};
  std::size_t n = 0;
  int hi = -1;
  // 32 hex digits, or 36 characters with the dashes at 8, 13, 18 and 23
  // (the form uuid_parse() of libuuid takes).
  const bool dashed = t.size() == 36;
  for (std::size_t i = 0; i < t.size(); ++i) {
    const char c = t[i];
    const bool dash_here = dashed && (i == 8 || i == 13 || i == 18 || i == 23);
    if (dash_here != (c == '-'))
      return make_error(Errc::invalid_argument, "\"" + std::string(t) + "\" is not a valid UUID");
    if (c == '-') continue;
    int v;
    if (c >= '0' && c <= '9') v = c - '0';
    else if (c >= 'a' && c <= 'f') v = c - 'a' + 10;
    else if (c >= 'A' && c <= 'F') v = c - 'A' + 10;
    else return make_error(Errc::invalid_argument, "\"" + std::string(t) + "\" is not a valid UUID");
    if (hi < 0) hi = v;
    else {
      if (n >= 16) return make_error(Errc::invalid_argument, "\"" + std::string(t) + "\" is not a valid UUID");
      out[n++] = static_cast<std::uint8_t>(hi << 4 | v);
      hi = -1;
    }
  }
  if (n != 16 || hi >= 0 || (t.size() != 32 && t.size() != 36))
    return make_error(Errc::invalid_argument, "\"" + std::string(t) + "\" is not a valid UUID");
  return out;
}

std::string format_uuid(const std::uint8_t (&u)[16]) {
  char buf[40];
  std::snprintf(buf, sizeof buf, "%02x%02x%02x%02x-%02x%02x-%02x%02x-%02x%02x-%02x%02x%02x%02x%02x%02x", u[0], u[1],
                u[2], u[3], u[4], u[5], u[6], u[7], u[8], u[9], u[10], u[11], u[12], u[13], u[14], u[15]);
  return buf;
}

}  // namespace f2fscore
