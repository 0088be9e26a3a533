// Requests a wrapping device (fault, recorder) passes on to the device it
// wraps: a shadow IoRequest, so the caller's request and its scratch space
// stay untouched until the wrapper completes it.
#pragma once

#include "f2fscore/device.hpp"

namespace f2fscore::detail {

/// The shadow of `req` for the inner device: the same op, flags, tag,
/// offset, length (bytes) and buffer; completion calls `done` with `user`.
inline IoRequest forwarded_request(const IoRequest& req, IoCallback done, void* user) noexcept {
  IoRequest inner;
  inner.op = req.op;
  inner.flags = req.flags;
  inner.tag = req.tag;
  inner.offset = req.offset;
  inner.length = req.length;
  inner.buf = req.buf;
  inner.on_complete = done;
  inner.user = user;
  return inner;
}

/// Copies the inner request's outcome (status, errno, bytes moved) onto
/// the caller's request.
inline void take_outcome(IoRequest& req, const IoRequest& inner) noexcept {
  req.status = inner.status;
  req.sys_errno = inner.sys_errno;
  req.transferred = inner.transferred;
}

}  // namespace f2fscore::detail
