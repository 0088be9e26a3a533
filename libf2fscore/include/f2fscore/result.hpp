// Errors as values for every f2fscore API.
//
// A Result<T> holds either a T or an Error. Nothing in the library throws for
// a bad disk, a bad argument or a failing device: it returns an Error whose
// code says the class of the failure, whose message names what was wrong,
// and, for I/O and on-disk problems, the byte offset concerned.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <utility>

#include <tl/expected.hpp>

namespace f2fscore {

/// The classes of failure. Small and errno-like on purpose: callers branch on
/// the code, people read the message.
enum class Errc : std::uint8_t {
  ok = 0,
  invalid_argument,  ///< a caller's argument is out of range or malformed
  io,                ///< the device reported an error (see Error::sys_errno)
  short_io,          ///< the device transferred fewer bytes than asked
  out_of_range,      ///< a request past the end of the device or area
  corrupt,           ///< on-disk data violates a rule of the format
  unsupported,       ///< a valid feature or request this build does not handle
  no_space,          ///< the volume or device is full
  not_found,         ///< a path, inode or object does not exist
  exists,            ///< the object already exists
  busy,              ///< the device is mounted or opened exclusively elsewhere
  read_only,         ///< a write to something opened read-only
  unaligned,         ///< a buffer, offset or length breaks the device alignment
  cancelled,         ///< the request was dropped (device closed, injected loss)
};

/// Stable identifier of an Errc, the enumerator's own name ("not_found",
/// "invalid_argument", "io", ...): no spaces, for JSON fields ("code") and
/// programs that compare it.
std::string_view errc_name(Errc c) noexcept;
/// The Errc in words for people ("not found", "I/O error", ...): how
/// Error::to_string() begins.
std::string_view errc_text(Errc c) noexcept;

/// An error: what class, what exactly, and where.
struct Error {
  Errc code = Errc::ok;
  int sys_errno = 0;            ///< errno from the OS, 0 when not applicable
  std::uint64_t offset = kNoOffset;  ///< byte offset on the device, if any
  std::string message;          ///< names what is wrong, for people

  static constexpr std::uint64_t kNoOffset = ~std::uint64_t{0};

  /// "corrupt: superblock #0 magic 0x0 is not 0xf2f52010 (at byte 1024)"
  /// (errc_text(), the message, the offset, the OS's text of sys_errno).
  std::string to_string() const;
};

/// The errno an Error stands for: sys_errno when set, else the nearest
/// POSIX code of its Errc: not_found ENOENT, exists EEXIST, no_space
/// ENOSPC, read_only EROFS, invalid_argument and unaligned EINVAL,
/// unsupported EOPNOTSUPP, busy EBUSY, corrupt EUCLEAN (117, Linux's
/// EFSCORRUPTED), out_of_range EFBIG, io, short_io and cancelled EIO; 0 for
/// Errc::ok. Values of the build's <cerrno> (EUCLEAN: Linux's number).
int errno_of(const Error& e) noexcept;

/// A T or an Error; [[nodiscard]], so an ignored failure is a compile
/// warning (an error in the library's build). Everything of
/// tl::expected<T, Error> works on it; a tl::expected<T, Error> (the result
/// of and_then(), map(), ...) converts to it.
template <typename T>
class [[nodiscard]] Result : public tl::expected<T, Error> {
 public:
  using Base = tl::expected<T, Error>;
  using Base::Base;
  Result() = default;
  Result(const Base& b) : Base(b) {}
  Result(Base&& b) : Base(std::move(b)) {}
};

/// Result of an operation that returns nothing on success.
using Status = Result<void>;

/// Builds the unexpected value for a Result.
inline tl::unexpected<Error> make_error(Errc code, std::string message,
                                        std::uint64_t offset = Error::kNoOffset,
                                        int sys_errno = 0) {
  return tl::unexpected<Error>(Error{code, sys_errno, offset, std::move(message)});
}

inline tl::unexpected<Error> make_error(Error e) {
  return tl::unexpected<Error>(std::move(e));
}

}  // namespace f2fscore

/// Propagates the error of an expression yielding a Status or Result.
#define F2FSCORE_TRY(expr)                                        \
  do {                                                        \
    auto f2fscore_try_result_ = (expr);                           \
    if (!f2fscore_try_result_) return ::tl::unexpected(std::move( \
        f2fscore_try_result_.error()));                           \
  } while (0)
