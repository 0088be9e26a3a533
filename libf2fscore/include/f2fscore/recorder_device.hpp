// A recorder: a BlockDevice wrapper that logs every request in submission
// order (op, offset, length, flags, tag, the bytes of each write, and how
// it completed), so that a test can rebuild the device as it was after any
// prefix of the log: start from a copy of the image the recorder started
// on (CowDevice::copy_of() or a clone), replay() the first k requests, then
// mount or check it (dm-log-writes' idea, in memory).
//
// The log holds a copy of every write's bytes: it is for tests. Requests
// pass to the device below unchanged (through a shadow request, so the
// caller's request and its scratch space stay untouched). One thread at a
// time, like every device.
#pragma once

#include <cstdint>
#include <memory>
#include <span>
#include <vector>

#include "f2fscore/device.hpp"
#include "f2fscore/result.hpp"

namespace f2fscore {

/// One logged request.
struct RecordedRequest {
  std::uint64_t index = 0;   ///< submission order from 0 (since construction or RecorderDevice::clear())
  IoOp op = IoOp::read;
  std::uint8_t flags = 0;    ///< io_flag bits (io_flag::fua: durable at once)
  std::uint16_t tag = 0;     ///< IoRequest::tag (io_tag() in iostat.hpp)
  std::uint64_t offset = 0;  ///< bytes (0 for a flush)
  std::uint64_t length = 0;  ///< bytes (0 for a flush)
  /// A write's `length` bytes as they were at submission; empty for other ops.
  std::vector<std::uint8_t> data;
  bool completed = false;    ///< its callback has run
  Errc status = Errc::ok;    ///< as completed (Errc::ok while not completed)
  std::uint64_t transferred = 0;  ///< bytes moved, as completed (read, write)
};

class RecorderDevice final : public BlockDevice {
 public:
  /// Over `inner`, which the recorder owns. `record_reads` false leaves
  /// reads out of the log (they change nothing; indexes then count only the
  /// requests logged).
  explicit RecorderDevice(std::unique_ptr<BlockDevice> inner, bool record_reads = true);
  /// Over `inner`, which the caller keeps alive longer than the recorder.
  explicit RecorderDevice(BlockDevice& inner, bool record_reads = true);
  ~RecorderDevice() override;

  const DeviceInfo& info() const noexcept override { return inner_->info(); }
  void submit(IoRequest& req) noexcept override;
  std::size_t poll(bool wait) noexcept override;
  std::size_t in_flight() const noexcept override { return forwarded_ + ready_.size(); }
  std::uint64_t next_data(std::uint64_t offset, std::uint64_t end) noexcept override {
    return inner_->next_data(offset, end);
  }
  std::uint64_t next_hole(std::uint64_t offset, std::uint64_t end) noexcept override {
    return inner_->next_hole(offset, end);
  }

  /// The requests logged so far, in submission order.
  const std::vector<RecordedRequest>& log() const noexcept { return log_; }
  /// Forgets the log (indexes start again from 0). Call it with no request
  /// in flight; a request in flight is then no longer recorded as completed.
  void clear() noexcept;
  /// Bytes of write data the log holds.
  std::uint64_t logged_bytes() const noexcept { return logged_bytes_; }
  /// Requests the log could not take (out of memory): they passed to the
  /// device below unlogged, so the log no longer replays to the device's
  /// state. 0 in a usable recording.
  std::uint64_t missed() const noexcept { return missed_; }

  BlockDevice& inner() noexcept { return *inner_; }

 private:
  struct Shadow;
  static void on_inner_done(IoRequest& inner) noexcept;

  std::unique_ptr<BlockDevice> owned_;
  BlockDevice* inner_;
  bool record_reads_;
  std::vector<RecordedRequest> log_;
  std::uint64_t logged_bytes_ = 0;
  std::uint64_t missed_ = 0;
  std::uint64_t generation_ = 0;  // bumped by clear(): completions of older requests are not logged
  std::size_t forwarded_ = 0;
  CompletionQueue ready_;
  std::vector<std::unique_ptr<Shadow>> shadows_;
  Shadow* free_shadows_ = nullptr;
};

/// Applies `log` to `dev` in order, synchronously: writes (the logged
/// bytes), write_zeroes, discards and flushes. Reads, requests that did not
/// complete with Errc::ok and requests not yet completed are skipped. To
/// rebuild the device as it was after the first k requests, replay
/// `std::span(recorder.log()).first(k)` onto a copy of the image the
/// recorder started on. A discard replays as a discard of `dev` (what its
/// blocks read afterwards is `dev`'s rule). Errors: the first failing
/// request's (Errc::io, Errc::out_of_range, ...); what came before it is
/// applied.
Status replay(BlockDevice& dev, std::span<const RecordedRequest> log);

}  // namespace f2fscore
