// Private to the library: the backends' constructors on an opened
// descriptor, used by open_device() (io/device_open.cpp), and the synchronous
// ops they share. Only io/uring/uring_device.cpp includes Asio;
// io/uring/liburing_device.cpp drives liburing itself.
#pragma once

#include <cstdint>
#include <memory>

#include "f2fscore/device.hpp"
#include "f2fscore/result.hpp"
#include "f2fscore/uring_device.hpp"

namespace f2fscore::detail {

/// Takes ownership of `fd` and `direct_fd` (OpenOptions::direct_large_writes:
/// the same file opened with O_DIRECT, or -1) on success only.
/// Errc::unsupported (with the errno) when io_uring is refused.
Result<std::unique_ptr<BlockDevice>> make_uring_device(int fd, int direct_fd, DeviceInfo info,
                                                       const BackendOptions& opts);

/// The same on liburing directly (io/uring/liburing_device.cpp).
Result<std::unique_ptr<BlockDevice>> make_liburing_device(int fd, int direct_fd, DeviceInfo info,
                                                          const BackendOptions& opts);

/// The POSIX backend on an opened descriptor (io/posix_device.cpp); takes
/// ownership of `fd` and `direct_fd` (as above).
std::unique_ptr<BlockDevice> make_posix_device(int fd, DeviceInfo info, bool refuse_zeroing, int direct_fd = -1);

/// The descriptor a write of `len` bytes at `off` from `buf` goes to: the
/// O_DIRECT one for a write of at least DeviceInfo::direct_write_min bytes
/// with offset, length and buffer multiples of 4096, else `fd`.
inline int write_fd(int fd, int direct_fd, const DeviceInfo& info, std::uint64_t off, std::uint64_t len,
                    const void* buf) noexcept {
  return direct_fd >= 0 && len >= info.direct_write_min &&
                 ((off | len | reinterpret_cast<std::uintptr_t>(buf)) & 4095u) == 0
             ? direct_fd
             : fd;
}

/// Flush, discard and write-zeroes on a descriptor, for both backends
/// (io/device_open.cpp). `refuse_zeroing` simulates a file system or device
/// that has none of the zeroing and hole-punching calls
/// (OpenFaults::refuse_zeroing).
void sync_op(int fd, const DeviceInfo& info, IoRequest& req, bool refuse_zeroing) noexcept;

/// next_data() / next_hole() of both backends: SEEK_DATA / SEEK_HOLE on a
/// regular file where the platform has them; on a block device, or when
/// the call fails, the defaults (offset / end: everything may hold data).
std::uint64_t seek_extent(int fd, const DeviceInfo& info, std::uint64_t offset, std::uint64_t end, bool hole) noexcept;

}  // namespace f2fscore::detail
