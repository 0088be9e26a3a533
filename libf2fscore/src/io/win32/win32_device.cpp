// The Windows backend of the storage seam: image files and raw volumes
// through the Win32 API, written from Microsoft's documentation of
// CreateFileW, ReadFile/WriteFile, DeviceIoControl and the disk and file
// system control codes. It stands in for io/posix_device.cpp and
// io/device_open.cpp in the Windows build (the POSIX backend's calls,
// ioctls, O_DIRECT, flock and the io_uring backends are Linux's).
//
//   - Paths are UTF-8 and reach CreateFileW as UTF-16 (MultiByteToWideChar,
//     invalid UTF-8 refused).
//   - A path of the form \\.\PhysicalDriveN, \\.\X: or \\?\Volume{GUID} is a
//     raw device (DeviceKind::block_device): its size from
//     IOCTL_DISK_GET_LENGTH_INFO, its sector size from
//     IOCTL_DISK_GET_DRIVE_GEOMETRY, refused for writing when
//     IOCTL_DISK_IS_WRITABLE reports write protection. Anything else is an
//     image file (GetFileSizeEx).
//   - Reads and writes are ReadFile/WriteFile on a synchronous handle with
//     the offset in the OVERLAPPED structure (positioned I/O, as pread and
//     pwrite), at most 1 GiB per call; they complete at submission and
//     their callbacks run at the next poll().
//   - Direct I/O is FILE_FLAG_NO_BUFFERING | FILE_FLAG_WRITE_THROUGH, with
//     the block size and buffer alignment max(4096, sector size) as the
//     POSIX backend's O_DIRECT.
//   - flush and a FUA write's durability are FlushFileBuffers; discard is
//     unsupported; write-zeroes is FSCTL_SET_ZERO_DATA on an image file,
//     else zeroes written from an aligned buffer.
//   - A writable open with refuse_in_use and refuse_other_file_system is
//     refused (Errc::busy) when check_in_use() finds a file system on it,
//     F2FS included (its magic-number probe, read through this backend).
//   - In use: a writable open of an image file with refuse_in_use shares
//     nothing (no other handle may read or write it while it is open: the
//     stand-in for the POSIX build's flock); a writable volume (\\.\X:,
//     \\?\Volume{...}) with refuse_in_use or exclusive is locked with
//     FSCTL_LOCK_VOLUME and refused (Errc::busy) when the lock fails (a
//     volume in use by a mounted file system or an open file). Windows
//     itself refuses writes through \\.\PhysicalDriveN to the sectors of a
//     mounted volume.
#include <windows.h>
#include <winioctl.h>

#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <string>

#include "f2fscore/device.hpp"
#include "f2fscore/uring_device.hpp"

namespace f2fscore {

std::string_view backend_name(Backend b) noexcept {
  switch (b) {
    case Backend::automatic: return "auto";
    case Backend::uring: return "io_uring";
    case Backend::posix: return "posix";
    case Backend::liburing: return "uring";
  }
  return "?";
}

bool uring_compiled() noexcept { return false; }

namespace {

// The errno closest to a Win32 error code, for Error::sys_errno (whose
// message is strerror()'s).
int errno_of(DWORD e) noexcept {
  switch (e) {
    case ERROR_FILE_NOT_FOUND: case ERROR_PATH_NOT_FOUND: case ERROR_INVALID_NAME:
    case ERROR_BAD_NETPATH: case ERROR_INVALID_DRIVE: return ENOENT;
    case ERROR_ACCESS_DENIED: return EACCES;
    case ERROR_WRITE_PROTECT: return EROFS;
    case ERROR_SHARING_VIOLATION: case ERROR_LOCK_VIOLATION: case ERROR_BUSY: return EBUSY;
    case ERROR_DISK_FULL: case ERROR_HANDLE_DISK_FULL: return ENOSPC;
    case ERROR_INVALID_PARAMETER: case ERROR_INVALID_FUNCTION: case ERROR_NOT_SUPPORTED: return EINVAL;
    default: return EIO;
  }
}

Errc errc_of_rw(DWORD e, bool direct) noexcept {
  switch (e) {
    case ERROR_WRITE_PROTECT: case ERROR_ACCESS_DENIED: return Errc::read_only;
    case ERROR_DISK_FULL: case ERROR_HANDLE_DISK_FULL: return Errc::no_space;
    case ERROR_INVALID_PARAMETER: return direct ? Errc::unaligned : Errc::io;
    default: return Errc::io;
  }
}

Errc errc_of_open(DWORD e) noexcept {
  switch (e) {
    case ERROR_FILE_NOT_FOUND: case ERROR_PATH_NOT_FOUND: case ERROR_INVALID_DRIVE:
    case ERROR_BAD_NETPATH: return Errc::not_found;
    case ERROR_ACCESS_DENIED: case ERROR_WRITE_PROTECT: return Errc::read_only;
    case ERROR_SHARING_VIOLATION: case ERROR_LOCK_VIOLATION: case ERROR_BUSY: return Errc::busy;
    case ERROR_INVALID_NAME: return Errc::invalid_argument;
    default: return Errc::io;
  }
}

std::string win_error(DWORD e) { return " (Windows error " + std::to_string(e) + ")"; }

// UTF-8 to UTF-16; false for bytes that are not UTF-8.
bool widen(const std::string& s, std::wstring& out) {
  out.clear();
  if (s.empty()) return true;
  if (s.size() > 0x7fffffff) return false;
  const int n = ::MultiByteToWideChar(CP_UTF8, MB_ERR_INVALID_CHARS, s.data(), static_cast<int>(s.size()), nullptr, 0);
  if (n <= 0) return false;
  out.resize(static_cast<std::size_t>(n));
  return ::MultiByteToWideChar(CP_UTF8, MB_ERR_INVALID_CHARS, s.data(), static_cast<int>(s.size()), out.data(), n) ==
         n;
}

bool starts_with_ci(const std::string& s, std::string_view p) {
  if (s.size() < p.size()) return false;
  for (std::size_t i = 0; i < p.size(); ++i) {
    char a = s[i], b = p[i];
    if (a >= 'A' && a <= 'Z') a = static_cast<char>(a - 'A' + 'a');
    if (b >= 'A' && b <= 'Z') b = static_cast<char>(b - 'A' + 'a');
    if (a != b) return false;
  }
  return true;
}

// \\.\X:, \\?\Volume{...} (a volume, lockable), \\.\PhysicalDriveN (a disk).
bool is_device_path(const std::string& p) { return starts_with_ci(p, "\\\\.\\") || starts_with_ci(p, "\\\\?\\volume{"); }
bool is_volume_path(const std::string& p) {
  if (starts_with_ci(p, "\\\\?\\volume{")) return true;
  return p.size() == 6 && starts_with_ci(p, "\\\\.\\") && p[5] == ':' &&
         ((p[4] >= 'A' && p[4] <= 'Z') || (p[4] >= 'a' && p[4] <= 'z'));
}

class Win32Device final : public BlockDevice {
 public:
  Win32Device(HANDLE h, DeviceInfo info, bool refuse_zeroing, bool locked)
      : h_(h), info_(std::move(info)), refuse_zeroing_(refuse_zeroing), locked_(locked) {}
  ~Win32Device() override {
    drain(*this);
    if (locked_) {
      DWORD ret = 0;
      ::DeviceIoControl(h_, FSCTL_UNLOCK_VOLUME, nullptr, 0, nullptr, 0, &ret, nullptr);
    }
    ::CloseHandle(h_);
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

 private:
  void fail(IoRequest& req, DWORD e) noexcept {
    req.sys_errno = errno_of(e);
    req.status = errc_of_rw(e, info_.direct);
  }

  void execute(IoRequest& req) noexcept {
    switch (req.op) {
      case IoOp::read: return do_rw(req, false);
      case IoOp::write: return do_rw(req, true);
      case IoOp::flush:
        if (!info_.read_only && !::FlushFileBuffers(h_)) fail(req, ::GetLastError());
        return;
      case IoOp::discard:
        req.status = Errc::unsupported;
        req.sys_errno = EOPNOTSUPP;
        return;
      case IoOp::write_zeroes:
        if (!refuse_zeroing_ && info_.kind == DeviceKind::regular_file) {
          FILE_ZERO_DATA_INFORMATION z{};
          z.FileOffset.QuadPart = static_cast<LONGLONG>(req.offset);
          z.BeyondFinalZero.QuadPart = static_cast<LONGLONG>(req.offset + req.length);
          DWORD ret = 0;
          if (::DeviceIoControl(h_, FSCTL_SET_ZERO_DATA, &z, sizeof z, nullptr, 0, &ret, nullptr)) return;
        }
        return write_zero_buffers(req);
    }
  }

  // One ReadFile/WriteFile at `off`; false with the error in `err`.
  bool transfer(bool write, std::uint8_t* p, DWORD len, std::uint64_t off, DWORD& got, DWORD& err) noexcept {
    OVERLAPPED ov{};
    ov.Offset = static_cast<DWORD>(off & 0xffffffffu);
    ov.OffsetHigh = static_cast<DWORD>(off >> 32);
    got = 0;
    const BOOL ok = write ? ::WriteFile(h_, p, len, &got, &ov) : ::ReadFile(h_, p, len, &got, &ov);
    err = ok ? 0 : ::GetLastError();
    return ok != 0;
  }

  void do_rw(IoRequest& req, bool write) noexcept {
    auto* p = static_cast<std::uint8_t*>(req.buf);
    std::uint64_t done = 0;
    constexpr std::uint64_t kMaxCall = 1u << 30;  // a multiple of every block size
    while (done < req.length) {
      const auto len = static_cast<DWORD>(std::min<std::uint64_t>(kMaxCall, req.length - done));
      DWORD got = 0, err = 0;
      if (!transfer(write, p + done, len, req.offset + done, got, err)) {
        req.transferred = done;
        if (!write && err == ERROR_HANDLE_EOF) {
          req.status = Errc::short_io;
          return;
        }
        return fail(req, err);
      }
      if (got == 0) {  // end of file
        req.transferred = done;
        req.status = Errc::short_io;
        return;
      }
      done += got;
    }
    req.transferred = done;
    if (write && (req.flags & io_flag::fua) != 0 && !::FlushFileBuffers(h_)) fail(req, ::GetLastError());
  }

  void write_zero_buffers(IoRequest& req) noexcept {
    constexpr std::size_t kBuf = 1 << 20;
    const std::size_t align = info_.buffer_alignment > 64 ? info_.buffer_alignment : 64;
    void* raw = ::_aligned_malloc(kBuf, align);
    if (raw == nullptr) {
      req.status = Errc::no_space;
      return;
    }
    std::memset(raw, 0, kBuf);
    std::uint64_t done = 0;
    while (done < req.length) {
      const auto len = static_cast<DWORD>(std::min<std::uint64_t>(kBuf, req.length - done));
      DWORD got = 0, err = 0;
      if (!transfer(true, static_cast<std::uint8_t*>(raw), len, req.offset + done, got, err)) {
        fail(req, err);
        break;
      }
      if (got == 0) {
        req.status = Errc::short_io;
        break;
      }
      done += got;
    }
    req.transferred = done;
    ::_aligned_free(raw);
  }

  HANDLE h_;
  DeviceInfo info_;
  bool refuse_zeroing_;  // OpenFaults::refuse_zeroing
  bool locked_;          // FSCTL_LOCK_VOLUME held: unlocked at close
  CompletionQueue done_;
};

Result<std::unique_ptr<BlockDevice>> open_win32(const std::string& path, const OpenOptions& opts,
                                                const BackendOptions& bo, std::string& note) {
  std::wstring wpath;
  if (!widen(path, wpath))
    return make_error(Errc::invalid_argument, "cannot open " + path + ": the path is not valid UTF-8");
  const bool device = is_device_path(path);
  const bool writable = !opts.read_only;
  DeviceInfo info;
  info.name = path;
  info.read_only = opts.read_only;
  info.kind = device ? DeviceKind::block_device : DeviceKind::regular_file;
  if (!device) {
    WIN32_FILE_ATTRIBUTE_DATA fa{};
    if (!::GetFileAttributesExW(wpath.c_str(), GetFileExInfoStandard, &fa)) {
      const DWORD e = ::GetLastError();
      return make_error(errc_of_open(e), "cannot stat " + path + win_error(e), Error::kNoOffset, errno_of(e));
    }
    if ((fa.dwFileAttributes & FILE_ATTRIBUTE_DIRECTORY) != 0)
      return make_error(Errc::unsupported, path + " is neither a regular file nor a block device");
  }
  // A file system on it (F2FS too) refused for raw writes, as the POSIX
  // backend does (check_in_use(): its file-system probe on this platform).
  if (writable && opts.refuse_in_use && opts.refuse_other_file_system) {
    InUseCheck what;
    what.other_file_system = what.f2fs_too = true;
    if (InUse u = check_in_use(path, what))
      return make_error(Errc::busy, "cannot open " + path + " for writing: " + u.detail, Error::kNoOffset, 0);
  }
  const bool lock_volume = device && writable && is_volume_path(path) && (opts.refuse_in_use || opts.exclusive);
  // Volumes must be shared for reading and writing to be opened at all;
  // an image opened for writing with refuse_in_use shares nothing.
  DWORD share = FILE_SHARE_READ | FILE_SHARE_WRITE;
  if (!device && writable && (opts.refuse_in_use || opts.exclusive)) share = 0;
  bool direct = opts.direct;
  for (;;) {
    DWORD flags = FILE_ATTRIBUTE_NORMAL;
    if (direct) flags |= FILE_FLAG_NO_BUFFERING | FILE_FLAG_WRITE_THROUGH;
    HANDLE h = INVALID_HANDLE_VALUE;
    DWORD e = 0;
    if (direct && bo.faults.refuse_direct) {
      e = ERROR_INVALID_PARAMETER;  // injected: unbuffered I/O refused at open
    } else {
      h = ::CreateFileW(wpath.c_str(), GENERIC_READ | (writable ? GENERIC_WRITE : 0), share, nullptr, OPEN_EXISTING,
                        flags, nullptr);
      if (h == INVALID_HANDLE_VALUE) e = ::GetLastError();
    }
    if (h == INVALID_HANDLE_VALUE) {
      if (direct && e == ERROR_INVALID_PARAMETER) {
        if (!bo.buffered_if_direct_refused)
          return make_error(Errc::unsupported,
                            "the file system of " + path + " refuses unbuffered I/O (FILE_FLAG_NO_BUFFERING); "
                            "open it without direct I/O, or allow the buffered fallback",
                            Error::kNoOffset, EINVAL);
        note = "the file system refuses unbuffered I/O: buffered I/O";
        direct = false;
        continue;
      }
      std::string what = (e == ERROR_SHARING_VIOLATION || e == ERROR_LOCK_VIOLATION)
                             ? " for writing: it is in use (another program has it open)"
                         : (writable && (e == ERROR_ACCESS_DENIED || e == ERROR_WRITE_PROTECT))
                             ? " for writing: it is read-only"
                             : "";
      if (!writable && (e == ERROR_SHARING_VIOLATION || e == ERROR_LOCK_VIOLATION))
        what = ": it is in use (another program holds it exclusively)";
      return make_error(errc_of_open(e), "cannot open " + path + what + win_error(e), Error::kNoOffset,
                        errno_of(e));
    }
    info.direct = direct;
    DWORD ret = 0;
    if (device) {
      GET_LENGTH_INFORMATION len{};
      if (!::DeviceIoControl(h, IOCTL_DISK_GET_LENGTH_INFO, nullptr, 0, &len, sizeof len, &ret, nullptr)) {
        e = ::GetLastError();
        ::CloseHandle(h);
        return make_error(Errc::io, "cannot get the size of " + path + " (IOCTL_DISK_GET_LENGTH_INFO)" + win_error(e),
                          Error::kNoOffset, errno_of(e));
      }
      info.size_bytes = static_cast<std::uint64_t>(len.Length.QuadPart);
      DISK_GEOMETRY geo{};
      info.logical_block_size = 512;
      if (::DeviceIoControl(h, IOCTL_DISK_GET_DRIVE_GEOMETRY, nullptr, 0, &geo, sizeof geo, &ret, nullptr) &&
          geo.BytesPerSector >= 512 && (geo.BytesPerSector & (geo.BytesPerSector - 1)) == 0)
        info.logical_block_size = geo.BytesPerSector;
      if (writable && !::DeviceIoControl(h, IOCTL_DISK_IS_WRITABLE, nullptr, 0, nullptr, 0, &ret, nullptr) &&
          ::GetLastError() == ERROR_WRITE_PROTECT) {
        ::CloseHandle(h);
        return make_error(Errc::read_only, "cannot open " + path + " for writing: it is write-protected",
                          Error::kNoOffset, EROFS);
      }
      if (lock_volume) {
        if (!::DeviceIoControl(h, FSCTL_LOCK_VOLUME, nullptr, 0, nullptr, 0, &ret, nullptr)) {
          e = ::GetLastError();
          ::CloseHandle(h);
          return make_error(Errc::busy,
                            "cannot open " + path + " for writing: it is in use (FSCTL_LOCK_VOLUME refused: a "
                            "mounted file system or an open file on it)" + win_error(e),
                            Error::kNoOffset, EBUSY);
        }
        info.exclusive = true;
      }
    } else {
      LARGE_INTEGER sz{};
      if (!::GetFileSizeEx(h, &sz)) {
        e = ::GetLastError();
        ::CloseHandle(h);
        return make_error(Errc::io, "cannot get the size of " + path + win_error(e), Error::kNoOffset, errno_of(e));
      }
      info.size_bytes = static_cast<std::uint64_t>(sz.QuadPart);
      info.logical_block_size = 512;
    }
    if (direct) {
      info.buffer_alignment = info.logical_block_size < 4096 ? 4096 : info.logical_block_size;
      info.logical_block_size = info.buffer_alignment;
    }
    return std::unique_ptr<BlockDevice>(new Win32Device(h, std::move(info), bo.faults.refuse_zeroing, info.exclusive));
  }
}

}  // namespace

Result<OpenedDevice> open_device(const std::string& path, const OpenOptions& opts, const BackendOptions& bo) {
  if (bo.queue_depth < 1 || bo.queue_depth > 4096)
    return make_error(Errc::invalid_argument,
                      "queue depth " + std::to_string(bo.queue_depth) + " outside [1, 4096]");
  if (bo.backend == Backend::uring || bo.backend == Backend::liburing)
    return make_error(Errc::unsupported, "cannot use io_uring for " + path + ": this build has no io_uring backend "
                                         "(io_uring is Linux's; the Windows build has the Win32 backend)");
  OpenedDevice out;
  std::string note;
  auto dev = open_win32(path, opts, bo, note);
  if (!dev) return make_error(dev.error());
  out.device = std::move(*dev);
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
