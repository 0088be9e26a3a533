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
//   - Backend::overlapped (Backend::automatic's choice): reads and writes
//     are ReadFile/WriteFile on a handle opened with FILE_FLAG_OVERLAPPED,
//     up to queue_depth at once, their completions reaped from the handle's
//     I/O completion port with GetQueuedCompletionStatusEx in poll()
//     (OverlappedDevice below).
//   - Backend::posix ("sync"): reads and writes are ReadFile/WriteFile on a
//     synchronous handle with the offset in the OVERLAPPED structure
//     (positioned I/O, as pread and pwrite), at most 1 GiB per call; they
//     complete at submission and their callbacks run at the next poll().
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
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <new>
#include <string>
#include <type_traits>
#include <vector>

#include "f2fscore/device.hpp"
#include "f2fscore/sparse_image.hpp"
#include "f2fscore/uring_device.hpp"
#include "io/uring/request_queues.hpp"

namespace f2fscore {

std::string_view backend_name(Backend b) noexcept {
  switch (b) {
    case Backend::automatic: return "auto";
    case Backend::uring: return "io_uring";
    case Backend::posix: return "sync";  // synchronous ReadFile/WriteFile
    case Backend::liburing: return "uring";
    case Backend::overlapped: return "overlapped";
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

// An OVERLAPPED for a call that is waited for at once on a handle opened
// with FILE_FLAG_OVERLAPPED: its event carries the low-order bit, so that
// the call's completion is not queued to the handle's completion port
// (GetQueuedCompletionStatus, Microsoft's documentation).
OVERLAPPED waited_overlapped(HANDLE event, std::uint64_t off) noexcept {
  OVERLAPPED ov{};
  ov.Offset = static_cast<DWORD>(off & 0xffffffffu);
  ov.OffsetHigh = static_cast<DWORD>(off >> 32);
  if (event != nullptr) ov.hEvent = reinterpret_cast<HANDLE>(reinterpret_cast<std::uintptr_t>(event) | 1u);
  return ov;
}

// After a call on an overlapped handle returned: waits for it when it is
// pending; false with the error in `err`. `started` is the call's result.
bool finish_waited(HANDLE h, HANDLE event, OVERLAPPED& ov, BOOL started, DWORD& got, DWORD& err) noexcept {
  if (!started) {
    err = ::GetLastError();
    if (err != ERROR_IO_PENDING) return false;
    ::WaitForSingleObject(event, INFINITE);
  }
  if (!::GetOverlappedResult(h, &ov, &got, FALSE)) {
    err = ::GetLastError();
    return false;
  }
  err = 0;
  return true;
}

// DeviceIoControl that returns when the control is done, on a synchronous
// handle (`event` null) or an overlapped one (waited for on `event`).
BOOL device_control(HANDLE h, HANDLE event, DWORD code, void* in, DWORD in_len, void* out, DWORD out_len,
                    DWORD* ret) noexcept {
  if (event == nullptr) return ::DeviceIoControl(h, code, in, in_len, out, out_len, ret, nullptr);
  OVERLAPPED ov = waited_overlapped(event, 0);
  DWORD err = 0;
  const BOOL started = ::DeviceIoControl(h, code, in, in_len, out, out_len, nullptr, &ov);
  if (finish_waited(h, event, ov, started, *ret, err)) return TRUE;
  ::SetLastError(err);
  return FALSE;
}

// What both devices share: the handle, the device's description and the
// operations done synchronously (every one for Win32Device; flush, discard
// and write-zeroes for OverlappedDevice). `event_` is null on a synchronous
// handle; on an overlapped one, the event its synchronous calls wait on.
class Win32Base : public BlockDevice {
 public:
  const DeviceInfo& info() const noexcept override { return info_; }

 protected:
  Win32Base(HANDLE h, HANDLE event, DeviceInfo info, bool refuse_zeroing, bool locked)
      : h_(h), event_(event), info_(std::move(info)), refuse_zeroing_(refuse_zeroing), locked_(locked) {}
  // The derived destructor has drained the device.
  ~Win32Base() override {
    if (locked_) {
      DWORD ret = 0;
      device_control(h_, event_, FSCTL_UNLOCK_VOLUME, nullptr, 0, nullptr, 0, &ret);
    }
    ::CloseHandle(h_);
    if (event_ != nullptr) ::CloseHandle(event_);
  }

  void fail(IoRequest& req, DWORD e) noexcept {
    req.sys_errno = errno_of(e);
    req.status = errc_of_rw(e, info_.direct);
  }

  // A read or write, or flush, discard and write-zeroes, done now.
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
          if (device_control(h_, event_, FSCTL_SET_ZERO_DATA, &z, sizeof z, nullptr, 0, &ret)) return;
        }
        return write_zero_buffers(req);
    }
  }

  // A FUA write's durability: false (and the request failed) when the
  // flush fails.
  bool fua_done(IoRequest& req) noexcept {
    if (req.op != IoOp::write || (req.flags & io_flag::fua) == 0 || ::FlushFileBuffers(h_)) return true;
    fail(req, ::GetLastError());
    return false;
  }

  // At most this many bytes per ReadFile/WriteFile (a DWORD; a multiple of
  // every block size).
  static constexpr std::uint64_t kMaxCall = 1u << 30;

  HANDLE h_;
  HANDLE event_;
  DeviceInfo info_;

 private:
  // One ReadFile/WriteFile at `off`, waited for; false with the error in `err`.
  bool transfer(bool write, std::uint8_t* p, DWORD len, std::uint64_t off, DWORD& got, DWORD& err) noexcept {
    OVERLAPPED ov = waited_overlapped(event_, off);
    got = 0;
    if (event_ != nullptr) {
      const BOOL started = write ? ::WriteFile(h_, p, len, nullptr, &ov) : ::ReadFile(h_, p, len, nullptr, &ov);
      return finish_waited(h_, event_, ov, started, got, err);
    }
    const BOOL ok = write ? ::WriteFile(h_, p, len, &got, &ov) : ::ReadFile(h_, p, len, &got, &ov);
    err = ok ? 0 : ::GetLastError();
    return ok != 0;
  }

  void do_rw(IoRequest& req, bool write) noexcept {
    auto* p = static_cast<std::uint8_t*>(req.buf);
    std::uint64_t done = 0;
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
    (void)fua_done(req);
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

  bool refuse_zeroing_;  // OpenFaults::refuse_zeroing
  bool locked_;          // FSCTL_LOCK_VOLUME held: unlocked at close
};

// The synchronous backend (Backend::posix, "sync"): every request is done
// at submission; its callback runs at the next poll().
class Win32Device final : public Win32Base {
 public:
  Win32Device(HANDLE h, HANDLE event, DeviceInfo info, bool refuse_zeroing, bool locked)
      : Win32Base(h, event, std::move(info), refuse_zeroing, locked) {}
  ~Win32Device() override { drain(*this); }

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
  CompletionQueue done_;
};

// One read or write in the system: its OVERLAPPED (first, so that the
// OVERLAPPED a completion packet names is the slot), the request and the
// free list's link.
struct OverlappedSlot {
  OVERLAPPED ov{};
  IoRequest* req = nullptr;
  std::uint32_t index = 0;      // in the device's slots
  std::uint32_t next_free = 0;  // SlotFreeList's link
  std::uint32_t retries = 0;    // injected interruptions (UringHooks::interrupt_every)
  bool in_port = false;         // started: its completion packet is awaited
};
static_assert(std::is_standard_layout_v<OverlappedSlot>);

// The asynchronous backend (Backend::overlapped): reads and writes are
// ReadFile/WriteFile on a handle opened with FILE_FLAG_OVERLAPPED, the
// offset in each request's OVERLAPPED, up to queue_depth of them started at
// once (more wait in a FIFO inside the device); their completions are
// reaped from the handle's I/O completion port with
// GetQueuedCompletionStatusEx, many per call, by poll(). submit() starts
// the request (the system may complete it before it returns, as a cached
// read is; its completion still goes through the port and its callback
// runs in poll()). A partial transfer is started again for the rest; a
// read that reaches the end of the file completes with Errc::short_io and
// the bytes it moved. Flush, discard and write-zeroes are done at
// submission, waited for on an event that keeps them off the port. The
// slots are allocated at open: a request allocates nothing.
class OverlappedDevice final : public Win32Base {
 public:
  OverlappedDevice(HANDLE h, HANDLE event, HANDLE port, DeviceInfo info, const BackendOptions& bo, bool locked)
      : Win32Base(h, event, std::move(info), bo.faults.refuse_zeroing, locked),
        port_(port),
        hooks_(bo.hooks),
        slots_(bo.queue_depth) {
    for (std::uint32_t i = 0; i < bo.queue_depth; ++i) slots_[i].index = i;
    free_.init(slots_, bo.queue_depth);
  }
  ~OverlappedDevice() override {
    drain(*this);
    ::CloseHandle(port_);
  }

  void submit(IoRequest& req) noexcept override {
    req.transferred = 0;
    req.sys_errno = 0;
    ++in_flight_;
    req.status = check_request(info_, req);
    if (req.status == Errc::ok && (req.op == IoOp::read || req.op == IoOp::write)) {
      if (!free_.empty()) start(&slots_[free_.take(slots_)], req);
      else wait_.push(req);  // every slot busy: FIFO, no allocation
      return;
    }
    if (req.status == Errc::ok) execute(req);
    ready_.push(req);
  }

  std::size_t poll(bool wait) noexcept override {
    const std::uint64_t before = completed_;
    detail::deliver_ready(ready_, in_flight_, completed_);
    while (in_port_ > 0) {
      const bool block = wait && completed_ == before;
      ULONG n = 0;
      if (!::GetQueuedCompletionStatusEx(port_, entries_, kEntries, &n, block ? INFINITE : 0, FALSE)) {
        // WAIT_TIMEOUT: nothing has finished. Any other failure leaves
        // the requests to the next poll().
        break;
      }
      for (ULONG i = 0; i < n; ++i) reaped(entries_[i]);
      detail::deliver_ready(ready_, in_flight_, completed_);
      // A full batch may leave more behind; a wait that only restarted
      // partial transfers waits again.
      if (n < kEntries && (!wait || completed_ != before)) break;
    }
    detail::deliver_ready(ready_, in_flight_, completed_);
    return static_cast<std::size_t>(completed_ - before);
  }

  std::size_t in_flight() const noexcept override { return in_flight_; }

 private:
  static constexpr ULONG kEntries = 64;        // completions reaped per call
  static constexpr std::uint32_t kMaxRetries = 64;

  void start(OverlappedSlot* s, IoRequest& req) noexcept {
    s->req = &req;
    s->retries = 0;
    issue(s);
  }

  // Starts the rest of the slot's request (all of it at first).
  void issue(OverlappedSlot* s) noexcept {
    IoRequest& r = *s->req;
    std::uint64_t len = std::min(r.length - r.transferred, kMaxCall);
    if (hooks_.max_chunk != 0 && len > hooks_.max_chunk) len = hooks_.max_chunk;
    auto* p = static_cast<std::uint8_t*>(r.buf) + r.transferred;
    const std::uint64_t off = r.offset + r.transferred;
    s->ov = OVERLAPPED{};
    s->ov.Offset = static_cast<DWORD>(off & 0xffffffffu);
    s->ov.OffsetHigh = static_cast<DWORD>(off >> 32);
    const auto n = static_cast<DWORD>(len);
    const BOOL ok = r.op == IoOp::read ? ::ReadFile(h_, p, n, nullptr, &s->ov) : ::WriteFile(h_, p, n, nullptr, &s->ov);
    const DWORD err = ok ? 0 : ::GetLastError();
    if (ok || err == ERROR_IO_PENDING) {
      // Done or not, the completion comes through the port.
      s->in_port = true;
      ++in_port_;
      return;
    }
    // Refused at once: nothing is queued to the port. The callback runs
    // at the next poll(), never inside submit().
    if (r.op == IoOp::read && err == ERROR_HANDLE_EOF) r.status = Errc::short_io;
    else fail(r, err);
    release(s);
    ready_.push(r);
  }

  // A completion packet from the port.
  void reaped(const OVERLAPPED_ENTRY& e) noexcept {
    if (e.lpOverlapped == nullptr) return;  // not one of ours
    auto* s = reinterpret_cast<OverlappedSlot*>(e.lpOverlapped);
    if (s < slots_.data() || s >= slots_.data() + slots_.size() || !s->in_port) return;
    DWORD got = 0, err = 0;
    if (!::GetOverlappedResult(h_, &s->ov, &got, FALSE)) {
      err = ::GetLastError();
      if (err == ERROR_IO_INCOMPLETE) return;  // not this call's packet: its own is still to come
    }
    s->in_port = false;
    --in_port_;
    IoRequest& r = *s->req;
    if (err != 0) {
      if (r.op == IoOp::read && err == ERROR_HANDLE_EOF) r.status = Errc::short_io;  // at or past the end
      else fail(r, err);
      return finish(s);
    }
    if (hooks_.interrupt_every != 0 && ++hook_count_ % hooks_.interrupt_every == 0 && ++s->retries < kMaxRetries)
      return issue(s);  // injected interruption: the transfer is done again
    r.transferred += got;
    if (r.transferred < r.length) {
      // A partial transfer: go on with the rest, unless nothing moved or
      // the rest would break the unbuffered-I/O alignment.
      if (got == 0 || (info_.direct && r.transferred % info_.logical_block_size != 0)) {
        r.status = Errc::short_io;
        return finish(s);
      }
      return issue(s);
    }
    (void)fua_done(r);
    finish(s);
  }

  void release(OverlappedSlot* s) noexcept {
    if (IoRequest* next = wait_.pop()) {  // the slot goes to the oldest waiting request
      start(s, *next);
      return;
    }
    s->req = nullptr;
    free_.put(slots_, s->index);
  }

  void finish(OverlappedSlot* s) noexcept {
    IoRequest& r = *s->req;
    release(s);
    --in_flight_;
    ++completed_;
    if (r.on_complete != nullptr) r.on_complete(r);
  }

  HANDLE port_;
  UringHooks hooks_;
  std::uint64_t hook_count_ = 0;
  std::vector<OverlappedSlot> slots_;
  detail::SlotFreeList<OverlappedSlot> free_;
  detail::RequestFifo wait_;   // valid requests waiting for a slot
  detail::RequestFifo ready_;  // completed without the port (errors, synchronous ops)
  OVERLAPPED_ENTRY entries_[kEntries]{};
  std::size_t in_flight_ = 0;  // submitted, callback not yet run
  std::size_t in_port_ = 0;    // started, completion packet not yet reaped
  std::uint64_t completed_ = 0;
};

// Opens `path` for the asynchronous backend (`overlapped`) or the
// synchronous one; `used` tells which it got (the synchronous one when the
// completion port cannot be made and Backend::automatic was asked).
// `byte_granular`: a file's logical block size is 1 (a sparse image's
// chunks start at any byte); 512 otherwise.
Result<std::unique_ptr<BlockDevice>> open_win32(const std::string& path, const OpenOptions& opts,
                                                const BackendOptions& bo, bool overlapped, Backend& used,
                                                std::string& note, bool byte_granular) {
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
  // On an overlapped handle the calls waited for at once (the probes
  // below, flush, write-zeroes) wait on this event; closed with the device.
  struct OwnedEvent {
    HANDLE h = nullptr;
    ~OwnedEvent() {
      if (h != nullptr) ::CloseHandle(h);
    }
  } event;
  if (overlapped) {
    event.h = ::CreateEventW(nullptr, TRUE, FALSE, nullptr);
    if (event.h == nullptr) {
      const DWORD e = ::GetLastError();
      return make_error(Errc::no_space, "cannot open " + path + ": CreateEvent failed" + win_error(e),
                        Error::kNoOffset, errno_of(e));
    }
  }
  bool direct = opts.direct;
  for (;;) {
    DWORD flags = FILE_ATTRIBUTE_NORMAL;
    if (direct) flags |= FILE_FLAG_NO_BUFFERING | FILE_FLAG_WRITE_THROUGH;
    if (overlapped) flags |= FILE_FLAG_OVERLAPPED;
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
      if (!device_control(h, event.h, IOCTL_DISK_GET_LENGTH_INFO, nullptr, 0, &len, sizeof len, &ret)) {
        e = ::GetLastError();
        ::CloseHandle(h);
        return make_error(Errc::io, "cannot get the size of " + path + " (IOCTL_DISK_GET_LENGTH_INFO)" + win_error(e),
                          Error::kNoOffset, errno_of(e));
      }
      info.size_bytes = static_cast<std::uint64_t>(len.Length.QuadPart);
      DISK_GEOMETRY geo{};
      info.logical_block_size = 512;
      if (device_control(h, event.h, IOCTL_DISK_GET_DRIVE_GEOMETRY, nullptr, 0, &geo, sizeof geo, &ret) &&
          geo.BytesPerSector >= 512 && (geo.BytesPerSector & (geo.BytesPerSector - 1)) == 0)
        info.logical_block_size = geo.BytesPerSector;
      if (writable && !device_control(h, event.h, IOCTL_DISK_IS_WRITABLE, nullptr, 0, nullptr, 0, &ret) &&
          ::GetLastError() == ERROR_WRITE_PROTECT) {
        ::CloseHandle(h);
        return make_error(Errc::read_only, "cannot open " + path + " for writing: it is write-protected",
                          Error::kNoOffset, EROFS);
      }
      if (lock_volume) {
        if (!device_control(h, event.h, FSCTL_LOCK_VOLUME, nullptr, 0, nullptr, 0, &ret)) {
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
      info.logical_block_size = byte_granular && !direct ? 1 : 512;
    }
    if (direct) {
      info.buffer_alignment = info.logical_block_size < 4096 ? 4096 : info.logical_block_size;
      info.logical_block_size = info.buffer_alignment;
    }
    const bool locked = info.exclusive;
    if (overlapped) {
      // The handle's completion port, for this handle alone.
      HANDLE port = ::CreateIoCompletionPort(h, nullptr, 0, 1);
      if (port != nullptr) {
        used = Backend::overlapped;
        auto* dev = new (std::nothrow) OverlappedDevice(h, event.h, port, std::move(info), bo, locked);
        if (dev == nullptr) {
          ::CloseHandle(port);
          ::CloseHandle(h);
          return make_error(Errc::no_space, "out of memory for the overlapped backend of " + path);
        }
        event.h = nullptr;  // the device's now
        return std::unique_ptr<BlockDevice>(dev);
      }
      e = ::GetLastError();
      if (bo.backend == Backend::overlapped) {
        ::CloseHandle(h);
        return make_error(Errc::unsupported,
                          "cannot use overlapped I/O for " + path + ": CreateIoCompletionPort failed" + win_error(e),
                          Error::kNoOffset, errno_of(e));
      }
      // The synchronous backend on the same handle (its calls wait on the event).
      if (!note.empty()) note += "; ";
      note += "CreateIoCompletionPort failed" + win_error(e) + ": using the synchronous backend";
    }
    used = Backend::posix;
    HANDLE ev = event.h;
    event.h = nullptr;
    return std::unique_ptr<BlockDevice>(new Win32Device(h, ev, std::move(info), bo.faults.refuse_zeroing, locked));
  }
}

}  // namespace

Result<OpenedDevice> open_device(const std::string& path, const OpenOptions& opts, const BackendOptions& bo) {
  if (bo.queue_depth < 1 || bo.queue_depth > 4096)
    return make_error(Errc::invalid_argument,
                      "queue depth " + std::to_string(bo.queue_depth) + " outside [1, 4096]");
  if (bo.backend == Backend::uring || bo.backend == Backend::liburing)
    return make_error(Errc::unsupported, "cannot use io_uring for " + path + ": this build has no io_uring backend "
                                         "(io_uring is Linux's; the Windows build has the overlapped and the "
                                         "synchronous Win32 backends)");
  OpenedDevice out;
  std::string note;
  Backend used = Backend::posix;
  auto dev = open_win32(path, opts, bo, bo.backend != Backend::posix, used, note, false);
  if (!dev) return make_error(dev.error());
  // An Android sparse image: read through its chunk index, on a
  // synchronous handle of byte granularity (chunk data starts at any byte).
  if ((*dev)->info().kind == DeviceKind::regular_file && !(*dev)->info().direct && !opts.sparse_as_raw) {
    auto is = is_sparse_image(**dev);
    if (is && *is) {
      dev->reset();
      if (!opts.read_only) return make_error(Errc::unsupported, detail::sparse_write_refusal(path));
      auto file = open_win32(path, opts, bo, false, used, note, true);
      if (!file) return make_error(file.error());
      auto sparse = open_sparse_image(std::move(*file));
      if (!sparse) return make_error(sparse.error());
      out.device = std::move(*sparse);
      out.backend = Backend::posix;
      out.note = "an Android sparse image: read through its chunk headers";
      return out;
    }
  }
  out.device = std::move(*dev);
  out.backend = used;
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
