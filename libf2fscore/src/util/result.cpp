#include "f2fscore/result.hpp"

#include <cstdio>
#include <cstring>

namespace f2fscore {

std::string_view errc_name(Errc c) noexcept {
  switch (c) {
    case Errc::ok: return "ok";
    case Errc::invalid_argument: return "invalid argument";
    case Errc::io: return "I/O error";
    case Errc::short_io: return "short I/O";
    case Errc::out_of_range: return "out of range";
    case Errc::corrupt: return "corrupt";
    case Errc::unsupported: return "unsupported";
    case Errc::no_space: return "no space";
    case Errc::not_found: return "not found";
    case Errc::exists: return "exists";
    case Errc::busy: return "busy";
    case Errc::read_only: return "read-only";
    case Errc::unaligned: return "unaligned";
    case Errc::cancelled: return "cancelled";
  }
  return "unknown";
}

std::string Error::to_string() const {
  std::string s(errc_name(code));
  s += ": ";
  s += message;
  if (offset != kNoOffset) {
    char buf[48];
    std::snprintf(buf, sizeof buf, " (at byte %llu)", static_cast<unsigned long long>(offset));
    s += buf;
  }
  // The OS's text, unless the message already says it.
  if (sys_errno != 0) {
    const std::string os = std::strerror(sys_errno);
    if (message.find(os) == std::string::npos) s += " [" + os + "]";
  }
  return s;
}

}  // namespace f2fscore
