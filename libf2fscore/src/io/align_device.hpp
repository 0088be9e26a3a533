// A layer that lets code written for buffered devices read and write on a
// direct-I/O one (private).
#pragma once

#include <cstdint>

#include "f2fscore/device.hpp"

namespace f2fscore::detail {

/// Forwards every request to `inner`. On a device that wants aligned
/// buffers (DeviceInfo::buffer_alignment > 1: O_DIRECT,
/// FILE_FLAG_NO_BUFFERING), a read or write that is not aligned goes
/// through an aligned copy; aligned requests pass through untouched.
///  - read: a buffer, offset or length (bytes) off the alignment reads the
///    covering aligned range into the copy and gives back the part asked
///    for (the range is clipped to the device's size, which is a multiple
///    of its block size).
///  - write: a buffer off the alignment is copied first; an offset or
///    length off it is the device's to refuse (Errc::unaligned): nothing
///    reads, modifies and writes back a partial block.
/// Without memory for the copy the request goes down as it is (the device
/// then refuses it). info() is the device below's.
class AlignDevice final : public BlockDevice {
 public:
  explicit AlignDevice(BlockDevice& inner) noexcept;
  const DeviceInfo& info() const noexcept override { return inner_.info(); }
  void submit(IoRequest& req) noexcept override;
  std::size_t poll(bool wait) noexcept override { return inner_.poll(wait); }
  std::size_t in_flight() const noexcept override { return inner_.in_flight(); }
  std::uint64_t next_data(std::uint64_t offset, std::uint64_t end) noexcept override {
    return inner_.next_data(offset, end);
  }
  std::uint64_t next_hole(std::uint64_t offset, std::uint64_t end) noexcept override {
    return inner_.next_hole(offset, end);
  }
  int host_descriptor() const noexcept override { return inner_.host_descriptor(); }

  /// Requests that went through an aligned copy so far.
  std::uint64_t bounced() const noexcept { return bounced_; }

 private:
  BlockDevice& inner_;
  std::uint32_t align_;  ///< the device's buffer alignment (1: any, nothing is copied)
  std::uint32_t block_;  ///< the device's logical block size (bytes)
  std::uint64_t bounced_ = 0;
};

}  // namespace f2fscore::detail
