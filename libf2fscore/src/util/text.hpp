// Small text helpers shared by the library's sources (private).
#pragma once

#include <cstdio>
#include <string>

namespace f2fscore::detail {

/// printf-style message with up to four integer arguments (all passed as
/// unsigned long long: use %llu / %llx / %llo in `f`). Truncates at 319 bytes.
inline std::string fmt(const char* f, unsigned long long a = 0, unsigned long long b = 0,
                       unsigned long long c = 0, unsigned long long d = 0) {
  char buf[320];
  std::snprintf(buf, sizeof buf, f, a, b, c, d);
  return buf;
}

/// Appends the UTF-8 encoding of code point `c` (no validation: callers pass
/// scalar values).
inline void append_utf8(std::string& out, char32_t c) {
  if (c < 0x80) {
    out += static_cast<char>(c);
  } else if (c < 0x800) {
    out += static_cast<char>(0xC0 | (c >> 6));
    out += static_cast<char>(0x80 | (c & 0x3F));
  } else if (c < 0x10000) {
    out += static_cast<char>(0xE0 | (c >> 12));
    out += static_cast<char>(0x80 | ((c >> 6) & 0x3F));
    out += static_cast<char>(0x80 | (c & 0x3F));
  } else {
    out += static_cast<char>(0xF0 | (c >> 18));
    out += static_cast<char>(0x80 | ((c >> 12) & 0x3F));
    out += static_cast<char>(0x80 | ((c >> 6) & 0x3F));
    out += static_cast<char>(0x80 | (c & 0x3F));
  }
}

}  // namespace f2fscore::detail
