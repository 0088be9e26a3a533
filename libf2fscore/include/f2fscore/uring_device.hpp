// Opening a file or block device with the fastest backend available:
// asynchronous I/O on io_uring (through Boost.Asio) where the kernel and the
// build allow it, the portable POSIX backend (pread/pwrite) otherwise.
//
// The io_uring backend keeps up to BackendOptions::queue_depth reads and
// writes in the kernel at once; more wait in a FIFO inside the device.
// submit() only prepares a request: the requests submitted between two
// polls reach the kernel together, at the next poll(), in the same
// io_uring_enter as its wait, and so do the requests submitted from
// completion callbacks. One exception keeps sequential streams at their
// depth: a request that starts where the one submitted before it ends
// sends what is prepared first (one io_uring_enter without a wait), since
// the kernel merges contiguous requests that arrive in one submission of
// more than two (its block plug), which made 8 reads of 128 KiB in flight
// one read of 1 MiB.
// Each in-flight request borrows one of queue_depth slots preallocated at
// open, which holds Asio's operation, so submitting and completing a
// request allocate nothing. Partial transfers are resubmitted for the rest;
// EINTR and EAGAIN completions are retried; a read that reaches the end of
// the file completes with Errc::short_io and the bytes it did move in
// IoRequest::transferred. Flush (fdatasync), discard and write-zeroes run
// synchronously at submission, like the POSIX backend; their callbacks
// still run at the next poll(). A FUA write is followed by fdatasync before
// it completes.
//
// Backend::liburing is the same contract on a ring of its own, driven
// through liburing without Asio; a FUA write is a write with RWF_DSYNC. It costs
// less per request in user space (docs/benchmarks.md, "The I/O pipeline
// against fio");
// Backend::automatic still chooses the Asio backend.
//
// Fallbacks, in order (each is reported in OpenedDevice::note):
//   - O_DIRECT refused by the file system (open fails with EINVAL):
//     Errc::unsupported, unless buffered_if_direct_refused, which reopens
//     without O_DIRECT (DeviceInfo::direct is then false);
//   - io_uring refused (not built in, ENOSYS, EPERM under seccomp or
//     kernel.io_uring_disabled, out of memory for the ring): the POSIX
//     backend, unless Backend::uring was asked for (then Errc::unsupported).
//
// On Windows (io/win32/win32_device.cpp) the asynchronous backend is
// Backend::overlapped, which Backend::automatic chooses: the handle is
// opened with FILE_FLAG_OVERLAPPED (and FILE_FLAG_NO_BUFFERING with
// `direct`), up to queue_depth ReadFile/WriteFile calls are started at
// once with their offsets in OVERLAPPED structures, more wait in a FIFO,
// and poll() reaps their completions from the handle's I/O completion port
// with GetQueuedCompletionStatusEx. Partial transfers, end-of-file reads,
// FUA writes and the synchronous flush (FlushFileBuffers), discard and
// write-zeroes are as above. Backend::posix is the synchronous Win32
// backend ("sync"); Backend::uring and Backend::liburing are
// Errc::unsupported there, and Backend::overlapped is on Linux.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <string_view>

#include "f2fscore/device.hpp"
#include "f2fscore/result.hpp"

namespace f2fscore {

enum class Backend : std::uint8_t {
  automatic,   ///< io_uring if available, else POSIX; on Windows overlapped I/O
  uring,       ///< io_uring or an error (Linux)
  posix,       ///< synchronous: pread/pwrite; on Windows synchronous ReadFile/WriteFile
  liburing,    ///< io_uring through liburing directly (no Asio), or an error (Linux)
  overlapped,  ///< Windows: overlapped ReadFile/WriteFile and an I/O completion port, or an error
};
/// "auto", "io_uring", "posix", "uring" (liburing), "overlapped"; on
/// Windows Backend::posix is "sync".
std::string_view backend_name(Backend b) noexcept;

/// Failure injection at open time, for tests: simulate a file system that
/// refuses O_DIRECT (open returns EINVAL), a kernel that refuses io_uring
/// (io_uring_setup returns EPERM), or a file system or device without any
/// way to zero or punch a range (fallocate's PUNCH_HOLE and ZERO_RANGE,
/// BLKZEROOUT and BLKDISCARD fail with EOPNOTSUPP, as on vfat): then
/// write-zeroes writes zeroes and discard completes Errc::unsupported.
struct OpenFaults {
  bool refuse_direct = false;
  bool refuse_uring = false;
  bool refuse_zeroing = false;
};

/// Failure injection inside the io_uring backend's completion path, for
/// tests of the code that handles short and interrupted transfers.
/// The overlapped backend (Windows) honours them too.
struct UringHooks {
  std::uint32_t max_chunk = 0;        ///< >0: submit at most this many bytes at a time (partial transfers)
  std::uint32_t interrupt_every = 0;  ///< >0: every n-th completion is turned into -EINTR and retried
};

struct BackendOptions {
  Backend backend = Backend::automatic;
  std::uint32_t queue_depth = 128;  ///< io_uring, liburing, overlapped: requests in the kernel at once (1..4096)
  /// When the file system refuses O_DIRECT: reopen buffered instead of failing.
  bool buffered_if_direct_refused = false;
  OpenFaults faults;
  UringHooks hooks;
};

struct OpenedDevice {
  std::unique_ptr<BlockDevice> device;
  Backend backend = Backend::posix;  ///< what was used (never automatic)
  std::string note;                  ///< why a fallback was taken; empty if none
};

/// Opens `path` (regular file or block device). Size from stat or
/// BLKGETSIZE64, logical block size from BLKSSZGET (512 for files); with
/// `opts.direct` the logical block size and buffer alignment are
/// max(4096, BLKSSZGET), as for open_posix_device().
/// Errors: Errc::not_found, Errc::read_only (EROFS/EACCES/EPERM when opened
/// for writing: "read-only"), Errc::busy (exclusive), Errc::unsupported
/// (not a file or block device; O_DIRECT or io_uring refused, see above),
/// Errc::invalid_argument (queue_depth), Errc::io.
Result<OpenedDevice> open_device(const std::string& path, const OpenOptions& opts,
                                 const BackendOptions& backend = {});

/// Whether this build has the io_uring backend (F2FSCORE_WITH_URING).
bool uring_compiled() noexcept;

}  // namespace f2fscore
