// The portable backend: pread/pwrite on a file or block device. Linux-only
// calls (ioctls, fallocate modes, O_DIRECT) are guarded; elsewhere the
// plain POSIX paths are used. Opening (open_posix_device) and the
// synchronous ops (flush, discard, write-zeroes) live in io/device_open.cpp,
// shared with the io_uring backend.
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
#include <memory>

#include "f2fscore/device.hpp"
#include "io/uring/uring_backend.hpp"

static_assert(sizeof(off_t) >= 8, "io/posix_device.cpp needs a 64-bit off_t (_FILE_OFFSET_BITS=64)");

namespace f2fscore {
namespace {

class PosixDevice final : public BlockDevice {
 public:
  PosixDevice(int fd, DeviceInfo info, bool refuse_zeroing, int direct_fd)
      : fd_(fd), direct_fd_(direct_fd), info_(std::move(info)), refuse_zeroing_(refuse_zeroing) {}
  ~PosixDevice() override {
    drain(*this);
    ::close(fd_);
    if (direct_fd_ >= 0) ::close(direct_fd_);
  }

  const DeviceInfo& info() const noexcept override { return info_; }

  void submit(IoRequest& req) noexcept override {
    req.transferred = 0;
    req.sys_errno = 0;
    req.status = check_request(info_, req);
    if (req.status == Errc::ok) execute(req);
    done_.push(req);
  }

  std::size_t poll(bool /*wait*/) noexcept override { return done_.run(); }

  std::size_t in_flight() const noexcept override { return done_.size(); }
  std::uint64_t next_data(std::uint64_t offset, std::uint64_t end) noexcept override {
    return detail::seek_extent(fd_, info_, offset, end, false);
  }
  std::uint64_t next_hole(std::uint64_t offset, std::uint64_t end) noexcept override {
    return detail::seek_extent(fd_, info_, offset, end, true);
  }
  int host_descriptor() const noexcept override { return fd_; }

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
      case IoOp::flush:
      case IoOp::discard:
      case IoOp::write_zeroes:
        // Shared with the io_uring backend (io/device_open.cpp): fdatasync;
        // BLKDISCARD or a punched hole; BLKZEROOUT, a punched hole or
        // FALLOC_FL_ZERO_RANGE, else zeroes written from an aligned buffer.
        return detail::sync_op(fd_, info_, req, refuse_zeroing_);
    }
  }

  void do_rw(IoRequest& req, bool write) noexcept {
    auto* p = static_cast<std::uint8_t*>(req.buf);
    std::uint64_t done = 0;
    while (done < req.length) {
      const auto off = static_cast<off_t>(req.offset + done);
      const auto len = static_cast<std::size_t>(req.length - done);
      const ssize_t n = write ? ::pwrite(detail::write_fd(fd_, direct_fd_, info_, static_cast<std::uint64_t>(off), len, p + done),
                                         p + done, len, off)
                              : ::pread(fd_, p + done, len, off);
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
    // FUA: durable before it completes. fdatasync after the write (as the
    // io_uring backend): the data and what is needed to read it back, the
    // same guarantee as an O_DSYNC write, and a cache flush on the device.
    if (write && (req.flags & io_flag::fua) != 0) {
#if defined(__linux__)
      const int rc = ::fdatasync(fd_);
#else
      const int rc = ::fsync(fd_);
#endif
      if (rc != 0) {
        req.sys_errno = errno;
        req.status = Errc::io;
      }
    }
  }

  int fd_;
  int direct_fd_;  // OpenOptions::direct_large_writes; -1: none
  DeviceInfo info_;
  bool refuse_zeroing_;  // OpenFaults::refuse_zeroing
  CompletionQueue done_;
};

}  // namespace

namespace detail {

std::unique_ptr<BlockDevice> make_posix_device(int fd, DeviceInfo info, bool refuse_zeroing, int direct_fd) {
  return std::unique_ptr<BlockDevice>(new PosixDevice(fd, std::move(info), refuse_zeroing, direct_fd));
}

}  // namespace detail
}  // namespace f2fscore
