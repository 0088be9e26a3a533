// Private to the library: the io_uring backend's constructor, used by
// open_device() (device_open.cpp). Only uring_device.cpp includes Asio.
#pragma once

#include <memory>

#include "f2fscore/device.hpp"
#include "f2fscore/result.hpp"
#include "f2fscore/uring_device.hpp"

namespace f2fscore::detail {

/// Takes ownership of `fd` on success only. Errc::unsupported (with the
/// errno) when io_uring is refused.
Result<std::unique_ptr<BlockDevice>> make_uring_device(int fd, DeviceInfo info, const BackendOptions& opts);

/// Flush, discard and write-zeroes on a descriptor, as the POSIX backend
/// does them (shared by the io_uring backend).
void sync_op(int fd, const DeviceInfo& info, IoRequest& req) noexcept;

}  // namespace f2fscore::detail
