#include "f2fscore/result.hpp"

#include <cerrno>
#include <cstdio>
#include <cstring>

namespace f2fscore {

std::string_view errc_name(Errc c) noexcept {
  switch (c) {
    case Errc::ok: return "ok";
    case Errc::invalid_argument: return "invalid_argument";
    case Errc::io: return "io";
    case Errc::short_io: return "short_io";
    case Errc::out_of_range: return "out_of_range";
    case Errc::corrupt: return "corrupt";
    case Errc::unsupported: return "unsupported";
    case Errc::no_space: return "no_space";
    case Errc::not_found: return "not_found";
    case Errc::exists: return "exists";
    case Errc::busy: return "busy";
    case Errc::read_only: return "read_only";
    case Errc::unaligned: return "unaligned";
    case Errc::cancelled: return "cancelled";
  }
  return "unknown";
}

std::string_view errc_text(Errc c) noexcept {
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

int errno_of(const Error& e) noexcept {
  if (e.sys_errno != 0) return e.sys_errno;
  switch (e.code) {
    case Errc::ok: return 0;
    case Errc::invalid_argument: return EINVAL;
    case Errc::io: return EIO;
    case Errc::short_io: return EIO;
    case Errc::out_of_range: return EFBIG;
    case Errc::corrupt: return 117;  // EUCLEAN (EFSCORRUPTED in fs/f2fs/f2fs.h), not in every <cerrno>
    case Errc::unsupported: return EOPNOTSUPP;
    case Errc::no_space: return ENOSPC;
    case Errc::not_found: return ENOENT;
    case Errc::exists: return EEXIST;
    case Errc::busy: return EBUSY;
    case Errc::read_only: return EROFS;
    case Errc::unaligned: return EINVAL;
    case Errc::cancelled: return EIO;
  }
  return EIO;
}

std::string Error::to_string() const {
  std::string s(errc_text(code));
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
