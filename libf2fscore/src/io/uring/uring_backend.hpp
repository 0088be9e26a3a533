// Private to the library: the backends' constructors on an opened
// descriptor, used by open_device() (io/device_open.cpp), and the synchronous
// ops they share. Only io/uring/uring_device.cpp includes Asio;
// io/uring/liburing_device.cpp drives liburing itself.
#pragma once

#include <memory>

#include "f2fscore/device.hpp"
#include "f2fscore/result.hpp"
#include "f2fscore/uring_device.hpp"

namespace f2fscore::detail {

/// Takes ownership of `fd` on success only. Errc::unsupported (with the
/// errno) when io_uring is refused.
Result<std::unique_ptr<BlockDevice>> make_uring_device(int fd, DeviceInfo info, const BackendOptions& opts);

/// The same on liburing directly (io/uring/liburing_device.cpp).
Result<std::unique_ptr<BlockDevice>> make_liburing_device(int fd, DeviceInfo info, const BackendOptions& opts);

/// The POSIX backend on an opened descriptor (io/posix_device.cpp); takes
/// ownership of `fd`.
std::unique_ptr<BlockDevice> make_posix_device(int fd, DeviceInfo info, bool refuse_zeroing);

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
