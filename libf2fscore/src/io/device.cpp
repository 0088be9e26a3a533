// Request validation and the synchronous helpers over BlockDevice.
#include "f2fscore/device.hpp"

#include <cstdio>

namespace f2fscore {

std::string_view io_op_name(IoOp op) noexcept {
  switch (op) {
    case IoOp::read: return "read";
    case IoOp::write: return "write";
    case IoOp::flush: return "flush";
    case IoOp::discard: return "discard";
    case IoOp::write_zeroes: return "write-zeroes";
  }
  return "?";
}

Error IoRequest::error() const {
  char text[160];
  std::snprintf(text, sizeof text, "%s of %llu bytes failed", std::string(io_op_name(op)).c_str(),
                static_cast<unsigned long long>(length));
  std::string msg = text;
  if (status == Errc::short_io) {
    std::snprintf(text, sizeof text, " after %llu bytes", static_cast<unsigned long long>(transferred));
    msg += text;
  } else if (status == Errc::out_of_range) {
    msg += ": past the end of the device";
  } else if (status == Errc::unaligned) {
    msg += ": offset, length or buffer not aligned to the device";
  } else if (status == Errc::read_only) {
    msg += ": device is read-only";
  }
  return Error{status, sys_errno, op == IoOp::flush ? Error::kNoOffset : offset, std::move(msg)};
}

Errc check_request(const DeviceInfo& info, const IoRequest& req) noexcept {
  if (req.op == IoOp::flush) return Errc::ok;
  if (req.op != IoOp::read && info.read_only) return Errc::read_only;
  const std::uint64_t lbs = info.logical_block_size;
  if (req.offset % lbs != 0 || req.length % lbs != 0) return Errc::unaligned;
  if (req.offset > info.size_bytes || req.length > info.size_bytes - req.offset)
    return Errc::out_of_range;
  if ((req.op == IoOp::read || req.op == IoOp::write)) {
    if (req.buf == nullptr && req.length != 0) return Errc::invalid_argument;
    if (info.buffer_alignment > 1 &&
        reinterpret_cast<std::uintptr_t>(req.buf) % info.buffer_alignment != 0)
      return Errc::unaligned;
  }
  return Errc::ok;
}

namespace {
void mark_done(IoRequest& req) noexcept { *static_cast<bool*>(req.user) = true; }

Status run_sync(BlockDevice& dev, IoRequest& req) {
  bool done = false;
  req.on_complete = &mark_done;
  req.user = &done;
  dev.submit(req);
  while (!done) dev.poll(true);
  if (!req.ok()) return make_error(req.error());
  if ((req.op == IoOp::read || req.op == IoOp::write) && req.transferred != req.length) {
    req.status = Errc::short_io;
    return make_error(req.error());
  }
  return {};
}
}  // namespace

Status read_at(BlockDevice& dev, std::uint64_t offset, std::span<std::uint8_t> buf,
               std::uint16_t tag) {
  IoRequest req;
  req.op = IoOp::read;
  req.flags = io_flag::sync;
  req.tag = tag;
  req.offset = offset;
  req.length = buf.size();
  req.buf = buf.data();
  return run_sync(dev, req);
}

Status write_at(BlockDevice& dev, std::uint64_t offset, std::span<const std::uint8_t> buf,
                std::uint16_t tag) {
  IoRequest req;
  req.op = IoOp::write;
  req.flags = io_flag::sync;
  req.tag = tag;
  req.offset = offset;
  req.length = buf.size();
  req.buf = const_cast<std::uint8_t*>(buf.data());
  return run_sync(dev, req);
}

Status flush(BlockDevice& dev) {
  IoRequest req;
  req.op = IoOp::flush;
  req.flags = io_flag::sync;
  return run_sync(dev, req);
}

Status discard(BlockDevice& dev, std::uint64_t offset, std::uint64_t length) {
  IoRequest req;
  req.op = IoOp::discard;
  req.offset = offset;
  req.length = length;
  return run_sync(dev, req);
}

Status write_zeroes(BlockDevice& dev, std::uint64_t offset, std::uint64_t length) {
  IoRequest req;
  req.op = IoOp::write_zeroes;
  req.offset = offset;
  req.length = length;
  return run_sync(dev, req);
}

void drain(BlockDevice& dev) noexcept {
  while (dev.in_flight() > 0) dev.poll(true);
}

}  // namespace f2fscore
