// The portable backend: pread/pwrite on a file or block device. Linux-only
// calls (ioctls, fallocate modes, O_DIRECT) are guarded; elsewhere the
// plain POSIX paths are used.
//
// 64-bit file offsets on 32-bit hosts too (i686: off_t and struct stat's
// st_size are 32-bit without this, so images past 2 GiB would fail to stat
// and offsets past 2 GiB would be truncated). Must precede every include.
#ifndef _FILE_OFFSET_BITS
#define _FILE_OFFSET_BITS 64
#endif
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <memory>
#include <vector>

#include "f2fscore/device.hpp"

#if defined(__linux__)
#include <linux/falloc.h>
#include <linux/fs.h>
#include <sys/ioctl.h>
#endif

static_assert(sizeof(off_t) >= 8, "posix_device.cpp needs a 64-bit off_t (_FILE_OFFSET_BITS=64)");

namespace f2fscore {
namespace {

class PosixDevice final : public BlockDevice {
 public:
  PosixDevice(int fd, DeviceInfo info) : fd_(fd), info_(std::move(info)) {}
  ~PosixDevice() override {
    drain(*this);
    ::close(fd_);
  }

  const DeviceInfo& info() const noexcept override { return info_; }

  void submit(IoRequest& req) noexcept override {
    req.transferred = 0;
    req.sys_errno = 0;
    req.status = check_request(info_, req);
    if (req.status == Errc::ok) execute(req);
    req.link = nullptr;
    if (tail_ != nullptr) tail_->link = &req; else head_ = &req;
    tail_ = &req;
    ++in_flight_;
  }

  std::size_t poll(bool /*wait*/) noexcept override {
    std::size_t n = 0;
    while (head_ != nullptr) {
      IoRequest* r = head_;
      head_ = r->link;
      if (head_ == nullptr) tail_ = nullptr;
      --in_flight_;
      ++n;
      if (r->on_complete != nullptr) r->on_complete(*r);
    }
    return n;
  }

  std::size_t in_flight() const noexcept override { return in_flight_; }

 private:
  void fail(IoRequest& req, int err) noexcept {
    req.sys_errno = err;
    req.status = err == EROFS || err == EBADF ? Errc::read_only
                 : err == ENOSPC ? Errc::no_space
                 : err == EINVAL && info_.direct ? Errc::unaligned
                 : Errc::io;
  }

  void execute(IoRequest& req) noexcept {
    switch (req.op) {
      case IoOp::read: return do_rw(req, false);
      case IoOp::write: return do_rw(req, true);
      case IoOp::flush: return do_flush(req);
      case IoOp::discard: return do_discard(req);
      case IoOp::write_zeroes: return do_write_zeroes(req);
    }
  }

  void do_rw(IoRequest& req, bool write) noexcept {
    auto* p = static_cast<std::uint8_t*>(req.buf);
    std::uint64_t done = 0;
    while (done < req.length) {
      const auto off = static_cast<off_t>(req.offset + done);
      const auto len = static_cast<std::size_t>(req.length - done);
      const ssize_t n = write ? ::pwrite(fd_, p + done, len, off) : ::pread(fd_, p + done, len, off);
      if (n < 0) {
        if (errno == EINTR) continue;
        req.transferred = done;
        return fail(req, errno);
      }
      if (n == 0) {  // end of file: a short read or a device that took nothing
        req.transferred = done;
        req.status = Errc::short_io;
        return;
      }
      done += static_cast<std::uint64_t>(n);
    }
    req.transferred = done;
  }

  void do_flush(IoRequest& req) noexcept {
#if defined(__linux__)
    const int rc = ::fdatasync(fd_);
#else
    const int rc = ::fsync(fd_);
#endif
    if (rc != 0 && !(info_.read_only && (errno == EBADF || errno == EINVAL))) fail(req, errno);
  }

  void do_discard(IoRequest& req) noexcept {
#if defined(__linux__)
    if (info_.kind == DeviceKind::block_device) {
      std::uint64_t range[2] = {req.offset, req.length};
      if (::ioctl(fd_, BLKDISCARD, &range) != 0) req.status = Errc::unsupported, req.sys_errno = errno;
      return;
    }
    if (::fallocate(fd_, FALLOC_FL_PUNCH_HOLE | FALLOC_FL_KEEP_SIZE, static_cast<off_t>(req.offset),
                    static_cast<off_t>(req.length)) != 0) {
      req.status = Errc::unsupported;
      req.sys_errno = errno;
    }
#else
    req.status = Errc::unsupported;
#endif
  }

  void do_write_zeroes(IoRequest& req) noexcept {
#if defined(__linux__)
    if (info_.kind == DeviceKind::block_device) {
      std::uint64_t range[2] = {req.offset, req.length};
      if (::ioctl(fd_, BLKZEROOUT, &range) == 0) return;
    } else {
      const auto off = static_cast<off_t>(req.offset);
      const auto len = static_cast<off_t>(req.length);
      // A punched hole reads as zeroes and frees the space; ZERO_RANGE
      // keeps it allocated. Either guarantees zeroes.
      if (::fallocate(fd_, FALLOC_FL_PUNCH_HOLE | FALLOC_FL_KEEP_SIZE, off, len) == 0) return;
      if (::fallocate(fd_, FALLOC_FL_ZERO_RANGE | FALLOC_FL_KEEP_SIZE, off, len) == 0) return;
    }
#endif
    write_zero_buffers(req);
  }

  void write_zero_buffers(IoRequest& req) noexcept {
    constexpr std::size_t kBuf = 1 << 20;
    std::vector<std::uint8_t> zeroes;
    try {
      zeroes.assign(kBuf, 0);
    } catch (...) {
      req.status = Errc::no_space;
      return;
    }
    std::uint64_t done = 0;
    while (done < req.length) {
      IoRequest sub;
      sub.op = IoOp::write;
      sub.offset = req.offset + done;
      sub.length = std::min<std::uint64_t>(kBuf, req.length - done);
      sub.buf = zeroes.data();
      do_rw(sub, true);
      if (!sub.ok()) {
        req.status = sub.status;
        req.sys_errno = sub.sys_errno;
        return;
      }
      done += sub.length;
    }
  }

  int fd_;
  DeviceInfo info_;
  IoRequest* head_ = nullptr;
  IoRequest* tail_ = nullptr;
  std::size_t in_flight_ = 0;
};

Errc errc_from_open(int err) {
  switch (err) {
    case ENOENT: case ENOTDIR: return Errc::not_found;
    case EROFS: case EACCES: case EPERM: return Errc::read_only;
    case EBUSY: return Errc::busy;
    case EINVAL: return Errc::unsupported;
    default: return Errc::io;
  }
}

}  // namespace

Result<std::unique_ptr<BlockDevice>> open_posix_device(const std::string& path,
                                                       const OpenOptions& opts) {
  int flags = opts.read_only ? O_RDONLY : O_RDWR;
#if defined(O_CLOEXEC)
  flags |= O_CLOEXEC;
#endif
#if defined(O_DIRECT)
  if (opts.direct) flags |= O_DIRECT;
#else
  if (opts.direct) return make_error(Errc::unsupported, "direct I/O is not available on this platform: " + path);
#endif
  struct stat st {};
  if (::stat(path.c_str(), &st) != 0) {
    const int e = errno;
    return make_error(errc_from_open(e), "cannot stat " + path, Error::kNoOffset, e);
  }
  DeviceInfo info;
  info.name = path;
  info.read_only = opts.read_only;
  info.direct = opts.direct;
  if (S_ISREG(st.st_mode)) {
    info.kind = DeviceKind::regular_file;
  } else if (S_ISBLK(st.st_mode)) {
    info.kind = DeviceKind::block_device;
    if (opts.exclusive) flags |= O_EXCL;
  } else {
    return make_error(Errc::unsupported, path + " is neither a regular file nor a block device");
  }
  const int fd = ::open(path.c_str(), flags);
  if (fd < 0) {
    const int e = errno;
    std::string what = e == EBUSY ? " (in use: mounted or opened exclusively)" : "";
    return make_error(errc_from_open(e), "cannot open " + path + what, Error::kNoOffset, e);
  }
  if (info.kind == DeviceKind::regular_file) {
    info.size_bytes = static_cast<std::uint64_t>(st.st_size);
    info.logical_block_size = 512;
    info.cheap_write_zeroes = true;  // punched holes, where the file system has them
  } else {
#if defined(__linux__)
    std::uint64_t bytes = 0;
    int lbs = 512;
    if (::ioctl(fd, BLKGETSIZE64, &bytes) != 0) {
      const int e = errno;
      ::close(fd);
      return make_error(Errc::io, "cannot get the size of " + path, Error::kNoOffset, e);
    }
    if (::ioctl(fd, BLKSSZGET, &lbs) != 0) lbs = 512;
    info.size_bytes = bytes;
    info.logical_block_size = static_cast<std::uint32_t>(lbs);
    info.cheap_write_zeroes = true;  // BLKZEROOUT; the kernel falls back itself
#else
    const off_t end = ::lseek(fd, 0, SEEK_END);
    info.size_bytes = end > 0 ? static_cast<std::uint64_t>(end) : 0;
#endif
  }
  if (opts.direct) {
    info.buffer_alignment = info.logical_block_size < 4096 ? 4096 : info.logical_block_size;
    info.logical_block_size = info.buffer_alignment;
  }
  return std::unique_ptr<BlockDevice>(new PosixDevice(fd, std::move(info)));
}

}  // namespace f2fscore
