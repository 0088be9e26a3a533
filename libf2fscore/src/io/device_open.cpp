// open_device(): probe a path, open the descriptor (O_DIRECT if asked),
// and pick the io_uring backend or fall back to the POSIX one.
//
// 64-bit file offsets on 32-bit hosts too; must precede every include.
#ifndef _FILE_OFFSET_BITS
#define _FILE_OFFSET_BITS 64
#endif
#include <fcntl.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstdlib>
#include <cstring>

#include "f2fscore/endian.hpp"
#include "f2fscore/sparse_image.hpp"
#include "f2fscore/uring_device.hpp"
#include "io/uring/uring_backend.hpp"
#include "util/aligned.hpp"

#if defined(__linux__)
#include <linux/falloc.h>
#include <linux/fs.h>
#include <sys/ioctl.h>
#endif

namespace f2fscore {

std::string_view backend_name(Backend b) noexcept {
  switch (b) {
    case Backend::automatic: return "auto";
    case Backend::uring: return "io_uring";
    case Backend::posix: return "posix";
    case Backend::liburing: return "uring";
    case Backend::overlapped: return "overlapped";
  }
  return "?";
}

bool uring_compiled() noexcept {
#if defined(F2FSCORE_HAVE_URING)
  return true;
#else
  return false;
#endif
}

namespace detail {
namespace {

Errc errc_of(int err, bool direct) noexcept {
  switch (err) {
    case EROFS: case EBADF: return Errc::read_only;
    case ENOSPC: return Errc::no_space;
    case EINVAL: return direct ? Errc::unaligned : Errc::io;
    default: return Errc::io;
  }
}

// write-zeroes without a zeroing call: zeroes written from a buffer aligned
// for direct I/O (the descriptor may be O_DIRECT; an unaligned buffer would
// fail with EINVAL), 1 MiB at a time. The length is a multiple of the
// logical block size (check_request), so every chunk is too.
void write_zero_buffers(int fd, const DeviceInfo& info, IoRequest& req) noexcept {
  constexpr std::size_t kBuf = 1 << 20;
  const std::size_t align = info.buffer_alignment > 64 ? info.buffer_alignment : 64;
  void* raw = std::aligned_alloc(align, kBuf);
  if (raw == nullptr) {
    req.status = Errc::no_space;
    return;
  }
  std::memset(raw, 0, kBuf);
  std::uint64_t done = 0;
  while (done < req.length) {
    const std::size_t len = static_cast<std::size_t>(std::min<std::uint64_t>(kBuf, req.length - done));
    const ssize_t n = ::pwrite(fd, raw, len, static_cast<off_t>(req.offset + done));
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) {
      req.sys_errno = n < 0 ? errno : 0;
      req.status = n < 0 ? errc_of(errno, info.direct) : Errc::short_io;
      break;
    }
    done += static_cast<std::uint64_t>(n);
  }
  req.transferred = done;
  std::free(raw);
}

}  // namespace

std::uint64_t seek_extent(int fd, const DeviceInfo& info, std::uint64_t offset, std::uint64_t end, bool hole) noexcept {
  const std::uint64_t fallback = hole ? end : offset;
  if (offset >= end) return end;
#if defined(SEEK_DATA) && defined(SEEK_HOLE)
  if (info.kind != DeviceKind::regular_file) return fallback;
  errno = 0;
  const off_t r = ::lseek(fd, static_cast<off_t>(offset), hole ? SEEK_HOLE : SEEK_DATA);
  // ENXIO: no data at or after `offset` (SEEK_DATA), or `offset` at or
  // past the end of the file.
  if (r < 0) return !hole && errno == ENXIO ? end : fallback;
  const auto u = static_cast<std::uint64_t>(r);
  return u < offset ? fallback : (u > end ? end : u);
#else
  (void)fd;
  (void)info;
  return fallback;
#endif
}

void sync_op(int fd, const DeviceInfo& info, IoRequest& req, bool refuse_zeroing) noexcept {
  switch (req.op) {
    case IoOp::flush: {
#if defined(__linux__)
      const int rc = ::fdatasync(fd);
#else
      const int rc = ::fsync(fd);
#endif
      if (rc != 0 && !(info.read_only && (errno == EBADF || errno == EINVAL))) {
        req.sys_errno = errno;
        req.status = errc_of(errno, false);
      }
      return;
    }
    case IoOp::discard:
#if defined(__linux__)
      if (refuse_zeroing) {
        req.status = Errc::unsupported, req.sys_errno = EOPNOTSUPP;  // injected
        return;
      }
      if (info.kind == DeviceKind::block_device) {
        std::uint64_t range[2] = {req.offset, req.length};
        if (::ioctl(fd, BLKDISCARD, &range) != 0) req.status = Errc::unsupported, req.sys_errno = errno;
        return;
      }
      if (::fallocate(fd, FALLOC_FL_PUNCH_HOLE | FALLOC_FL_KEEP_SIZE, static_cast<off_t>(req.offset),
                      static_cast<off_t>(req.length)) != 0) {
        req.status = Errc::unsupported;
        req.sys_errno = errno;
      }
#else
      (void)refuse_zeroing;
      req.status = Errc::unsupported;
#endif
      return;
    case IoOp::write_zeroes:
#if defined(__linux__)
      if (refuse_zeroing) {
        // injected: every call below fails with EOPNOTSUPP
      } else if (info.kind == DeviceKind::block_device) {
        std::uint64_t range[2] = {req.offset, req.length};
        if (::ioctl(fd, BLKZEROOUT, &range) == 0) return;
      } else {
        // A punched hole reads as zeroes and gives the space back (an
        // image stays sparse); ZERO_RANGE keeps it allocated. Either
        // guarantees zeroes.
        const auto off = static_cast<off_t>(req.offset);
        const auto len = static_cast<off_t>(req.length);
        if (::fallocate(fd, FALLOC_FL_PUNCH_HOLE | FALLOC_FL_KEEP_SIZE, off, len) == 0) return;
        if (::fallocate(fd, FALLOC_FL_ZERO_RANGE | FALLOC_FL_KEEP_SIZE, off, len) == 0) return;
      }
#endif
      write_zero_buffers(fd, info, req);
      return;
    case IoOp::read:
    case IoOp::write:
      return;
  }
}

}  // namespace detail

namespace {
// Whether the file's first bytes are an Android sparse image's magic
// (sparse_format.h: le32 0xed26ff3a), read as `bytes` bytes from offset 0
// into a buffer aligned to `bytes` (the descriptor's O_DIRECT alignment,
// or 4 for a buffered one).
bool starts_with_sparse_magic(int fd, std::size_t bytes) {
  auto* m = static_cast<std::uint8_t*>(detail::aligned_alloc_bytes(bytes, bytes));
  const bool sparse = m != nullptr && ::pread(fd, m, bytes, 0) == static_cast<ssize_t>(bytes) &&
                      load_le32(m) == kSparseMagic;
  detail::aligned_free(m);
  return sparse;
}


Errc errc_from_open(int err) {
  switch (err) {
    case ENOENT: case ENOTDIR: return Errc::not_found;
    case EROFS: case EACCES: case EPERM: return Errc::read_only;
    case EBUSY: return Errc::busy;
    case EINVAL: return Errc::unsupported;
    default: return Errc::io;
  }
}

struct Opened {
  int fd = -1;
  int direct_fd = -1;  // OpenOptions::direct_large_writes; -1: none
  DeviceInfo info;
  void close_all() noexcept {
    if (fd >= 0) ::close(fd);
    if (direct_fd >= 0) ::close(direct_fd);
    fd = direct_fd = -1;
  }
};

// OpenOptions::direct_large_writes: the same file opened again with
// O_DIRECT, for the large aligned writes. Nothing when O_DIRECT is refused,
// the second open is not the same inode (the path was replaced between the
// opens) or an aligned 4 KiB read through it fails; `note` says why.
void open_direct_writes(const std::string& path, Opened& o, int flags, bool refuse, std::string& note) {
#if defined(O_DIRECT)
  if (o.info.logical_block_size > 4096) return;  // 4 KiB writes would not be aligned for it
  auto stay_buffered = [&](int dfd, const std::string& why) {
    if (dfd >= 0) ::close(dfd);
    if (!note.empty()) note += "; ";
    note += "large writes stay buffered: " + why;
  };
  // OpenFaults::refuse_direct: refused as tmpfs refuses O_DIRECT.
  const int dfd = refuse ? -1 : ::open(path.c_str(), (flags & ~O_EXCL) | O_DIRECT);
  if (dfd < 0)
    return stay_buffered(dfd, std::string("the second open with O_DIRECT failed (") +
                                  std::strerror(refuse ? EINVAL : errno) + ")");
  struct stat a {}, b {};
  if (::fstat(o.fd, &a) != 0 || ::fstat(dfd, &b) != 0 || a.st_dev != b.st_dev || a.st_ino != b.st_ino ||
      a.st_rdev != b.st_rdev)
    return stay_buffered(dfd, path + " changed between its two opens");
  // A file system may take O_DIRECT at open and still refuse 4 KiB
  // transfers (a larger alignment): one aligned read of the first block
  // shows it before any write depends on it.
  if (o.info.size_bytes >= 4096) {
    auto* probe = static_cast<std::uint8_t*>(detail::aligned_alloc_bytes(4096, 4096));
    const ssize_t n = probe != nullptr ? ::pread(dfd, probe, 4096, 0) : -1;
    const int e = probe != nullptr ? errno : ENOMEM;
    detail::aligned_free(probe);
    if (n != 4096)
      return stay_buffered(dfd, std::string("a 4 KiB read with O_DIRECT failed (") +
                                    (n < 0 ? std::strerror(e) : "short read") + ")");
  }
  o.direct_fd = dfd;
  o.info.direct_write_min = kDirectWriteMin;
#else
  (void)path, (void)o, (void)flags, (void)refuse, (void)note;
#endif
}

// Opens the descriptor and fills DeviceInfo, for every backend.
Result<Opened> open_fd(const std::string& path, const OpenOptions& opts, const BackendOptions& bo,
                       std::string& note) {
  struct stat st {};
  if (::stat(path.c_str(), &st) != 0) {
    const int e = errno;
    return make_error(errc_from_open(e), "cannot stat " + path, Error::kNoOffset, e);
  }
  if (opts.refuse_in_use && !opts.read_only) {
    InUseCheck what;
    what.other_file_system = what.f2fs_too = opts.refuse_other_file_system;
    if (InUse u = check_in_use(path, what))
      return make_error(Errc::busy, "cannot open " + path + " for writing: " + u.detail, Error::kNoOffset,
                        u.kind == InUseKind::other_file_system ? 0 : EBUSY);
  }
  Opened o;
  o.info.name = path;
  o.info.read_only = opts.read_only;
  int flags = opts.read_only ? O_RDONLY : O_RDWR;
#if defined(O_CLOEXEC)
  flags |= O_CLOEXEC;
#endif
  if (S_ISREG(st.st_mode)) {
    o.info.kind = DeviceKind::regular_file;
  } else if (S_ISBLK(st.st_mode)) {
    o.info.kind = DeviceKind::block_device;
    if (opts.exclusive || (opts.refuse_in_use && !opts.read_only)) flags |= O_EXCL;
    o.info.exclusive = (flags & O_EXCL) != 0;
  } else {
    return make_error(Errc::unsupported, path + " is neither a regular file nor a block device");
  }
  bool direct = opts.direct;
#if !defined(O_DIRECT)
  if (direct) {
    if (!bo.buffered_if_direct_refused)
      return make_error(Errc::unsupported, "direct I/O is not available on this platform: " + path);
    note = "direct I/O is not available on this platform: buffered I/O";
    direct = false;
  }
#endif
  for (;;) {
    int f = flags;
#if defined(O_DIRECT)
    if (direct) f |= O_DIRECT;
#endif
    int fd;
    int e = 0;
    if (direct && bo.faults.refuse_direct) {
      fd = -1;  // injected: the file system refuses O_DIRECT at open, as some do with EINVAL
      e = EINVAL;
    } else {
      fd = ::open(path.c_str(), f);
      e = fd < 0 ? errno : 0;
    }
    if (fd >= 0) {
      o.fd = fd;
      break;
    }
    if (e == EINVAL && direct) {
      if (!bo.buffered_if_direct_refused)
        return make_error(Errc::unsupported,
                          "the file system of " + path + " refuses O_DIRECT (open: EINVAL); "
                          "open it without direct I/O, or allow the buffered fallback",
                          Error::kNoOffset, e);
      note = "the file system refuses O_DIRECT: buffered I/O";
      direct = false;
      continue;
    }
    std::string what = e == EBUSY ? " (in use: mounted, or held open exclusively by another program)"
                       : (!opts.read_only && (e == EROFS || e == EACCES || e == EPERM))
                           ? " for writing: it is read-only"
                           : "";
    return make_error(errc_from_open(e), "cannot open " + path + what, Error::kNoOffset, e);
  }
  o.info.direct = direct;
#if defined(POSIX_FADV_RANDOM)
  // A hint: where it is refused the default read-ahead stays (more read, the same data).
  if (opts.random_access && !direct) (void)::posix_fadvise(o.fd, 0, 0, POSIX_FADV_RANDOM);
#endif
  if (o.info.kind == DeviceKind::regular_file) {
    // An image file has no O_EXCL: an exclusive advisory lock stands in for
    // it, so that two of our writing tools never work on one image at once
    // (the kernel's loop driver takes no such lock; check_in_use() covers it).
    if (opts.refuse_in_use && !opts.read_only) {
      if (::flock(o.fd, LOCK_EX | LOCK_NB) != 0) {
        const int e = errno;
        ::close(o.fd);
        if (e == EWOULDBLOCK)
          return make_error(Errc::busy,
                            "cannot open " + path + " for writing: it is in use (another program holds its lock: "
                            "an f2fscore tool at work on it)",
                            Error::kNoOffset, EBUSY);
        return make_error(Errc::io, "cannot lock " + path, Error::kNoOffset, e);
      }
    }
    o.info.size_bytes = static_cast<std::uint64_t>(st.st_size);
    o.info.logical_block_size = 512;
    o.info.cheap_write_zeroes = !bo.faults.refuse_zeroing;
  } else {
#if defined(__linux__)
    std::uint64_t bytes = 0;
    int lbs = 512;
    if (::ioctl(o.fd, BLKGETSIZE64, &bytes) != 0) {
      const int e = errno;
      ::close(o.fd);
      return make_error(Errc::io, "cannot get the size of " + path, Error::kNoOffset, e);
    }
    if (::ioctl(o.fd, BLKSSZGET, &lbs) != 0) lbs = 512;
    // Linux lets a read-only block device (losetup -r, blockdev --setro, a
    // write-protected card) open O_RDWR and fails the writes later with
    // EPERM: refuse at open instead, with the reason.
    int ro = 0;
    if (!opts.read_only && ::ioctl(o.fd, BLKROGET, &ro) == 0 && ro != 0) {
      ::close(o.fd);
      return make_error(Errc::read_only, "cannot open " + path + " for writing: it is a read-only block device",
                        Error::kNoOffset, EROFS);
    }
    o.info.size_bytes = bytes;
    o.info.logical_block_size = static_cast<std::uint32_t>(lbs);
    o.info.cheap_write_zeroes = !bo.faults.refuse_zeroing;
#else
    const off_t end = ::lseek(o.fd, 0, SEEK_END);
    o.info.size_bytes = end > 0 ? static_cast<std::uint64_t>(end) : 0;
#endif
  }
  if (direct) {
    o.info.buffer_alignment = o.info.logical_block_size < 4096 ? 4096 : o.info.logical_block_size;
    o.info.logical_block_size = o.info.buffer_alignment;
  } else if (opts.direct_large_writes && !opts.read_only) {
    open_direct_writes(path, o, flags, bo.faults.refuse_direct, note);
  }
  return o;
}

}  // namespace

Result<OpenedDevice> open_device(const std::string& path, const OpenOptions& opts,
                                 const BackendOptions& bo) {
  if (bo.queue_depth < 1 || bo.queue_depth > 4096)
    return make_error(Errc::invalid_argument,
                      "queue depth " + std::to_string(bo.queue_depth) + " outside [1, 4096]");
  if (bo.backend == Backend::overlapped)
    return make_error(Errc::unsupported, "cannot use overlapped I/O for " + path +
                                             ": it is Windows's (this build has the io_uring and POSIX backends)");
  OpenedDevice out;
  std::string note;
  // Probe and open here for every backend, so that the checks (O_DIRECT
  // refused, read-only block device) and their messages are the same.
  auto opened = open_fd(path, opts, bo, note);
  if (!opened) return make_error(opened.error());
  // An Android sparse image opened for direct I/O: its chunks start at any
  // byte, so it is read (or refused) as below, through a buffered open.
  if (opened->info.kind == DeviceKind::regular_file && opened->info.direct && !opts.sparse_as_raw &&
      opened->info.size_bytes >= opened->info.buffer_alignment) {
    if (starts_with_sparse_magic(opened->fd, opened->info.buffer_alignment)) {
      opened->close_all();
      OpenOptions buffered = opts;
      buffered.direct = false;
      opened = open_fd(path, buffered, bo, note);
      if (!opened) return make_error(opened.error());
    }
  }
  // An Android sparse image: read through its chunk index, on a POSIX
  // device of byte granularity (chunk data starts at any byte).
  if (opened->info.kind == DeviceKind::regular_file && !opened->info.direct && !opts.sparse_as_raw) {
    if (starts_with_sparse_magic(opened->fd, 4)) {
      if (!opts.read_only) {
        opened->close_all();
        return make_error(Errc::unsupported, detail::sparse_write_refusal(path));
      }
      opened->info.logical_block_size = 1;
      auto sparse = open_sparse_image(detail::make_posix_device(opened->fd, std::move(opened->info), false));
      if (!sparse) return make_error(sparse.error());
      out.device = std::move(*sparse);
      out.backend = Backend::posix;
      out.note = "an Android sparse image: read through its chunk headers";
      return out;
    }
  }
  if (bo.backend != Backend::posix) {
#if defined(F2FSCORE_HAVE_URING)
    Result<std::unique_ptr<BlockDevice>> dev =
        bo.faults.refuse_uring
            ? Result<std::unique_ptr<BlockDevice>>(make_error(
                  Errc::unsupported, "io_uring refused (injected): io_uring_setup: EPERM", Error::kNoOffset, EPERM))
            : bo.backend == Backend::liburing ? detail::make_liburing_device(opened->fd, opened->direct_fd, opened->info, bo)
                                              : detail::make_uring_device(opened->fd, opened->direct_fd, opened->info, bo);
#else
    Result<std::unique_ptr<BlockDevice>> dev =
        make_error(Errc::unsupported, "this build has no io_uring backend (F2FSCORE_WITH_URING=OFF)");
#endif
    if (dev) {
      out.device = std::move(*dev);
      out.backend = bo.backend == Backend::liburing ? Backend::liburing : Backend::uring;
      out.note = note;
      return out;
    }
    if (bo.backend == Backend::uring || bo.backend == Backend::liburing) {
      opened->close_all();
      Error e = dev.error();
      e.message = "cannot use io_uring for " + path + ": " + e.message;
      return make_error(std::move(e));
    }
    if (!note.empty()) note += "; ";
    note += dev.error().message + ": using the POSIX backend";
  }
  out.device = detail::make_posix_device(opened->fd, std::move(opened->info), bo.faults.refuse_zeroing, opened->direct_fd);
  out.backend = Backend::posix;
  out.note = note;
  return out;
}

Result<std::unique_ptr<BlockDevice>> open_posix_device(const std::string& path, const OpenOptions& opts) {
  BackendOptions bo;
  bo.backend = Backend::posix;
  auto r = open_device(path, opts, bo);
  if (!r) return make_error(r.error());
  return std::move(r->device);
}

}  // namespace f2fscore
