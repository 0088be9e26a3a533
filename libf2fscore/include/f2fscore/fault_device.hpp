// Failure injection: a BlockDevice wrapper for crash and error tests (the
// littlefs emubd / RocksDB FaultInjectionTestFS idea).
//
//   - fail request n, or every request after the first n (a dying disk, or
//     the moment power is lost), with a chosen error;
//   - cut a transfer short (request n moves only part of its bytes);
//   - reads of discarded blocks return garbage (a discard promises nothing);
//   - writes are held in a volatile cache until a flush (a FUA write is
//     durable at once); power_cut() drops what was not flushed, as a power
//     failure does.
//
// Requests are counted from 0 in submission order, over the ops selected by
// FaultPlan::ops. Failed requests never reach the device below. This layer
// is for tests: it may allocate (one shadow request per forwarded request,
// reused; the volatile cache), and flush writes the cache out
// synchronously. One thread at a time, like every device.
#pragma once

#include <cstdint>
#include <map>
#include <memory>
#include <vector>

#include "f2fscore/device.hpp"

namespace f2fscore {

/// Bit of an IoOp in FaultPlan::ops.
constexpr std::uint8_t io_op_bit(IoOp op) noexcept { return static_cast<std::uint8_t>(1u << static_cast<unsigned>(op)); }
inline constexpr std::uint8_t kAllIoOps = 0x1f;

struct FaultPlan {
  static constexpr std::uint64_t kNever = ~std::uint64_t{0};

  std::uint64_t fail_request = kNever;  ///< the request with this index fails
  std::uint64_t fail_after = kNever;    ///< every request with index >= this fails
  std::uint64_t short_request = kNever; ///< this request transfers half its blocks, then Errc::short_io
  Errc error = Errc::io;                ///< status of failed requests
  int sys_errno = 5;                    ///< EIO
  std::uint8_t ops = kAllIoOps;         ///< which ops are counted and may fail
  bool garbage_after_discard = false;   ///< reads of discarded, not rewritten blocks return garbage
  bool drop_unflushed = false;          ///< hold writes until flush; power_cut() drops them
};

class FaultDevice final : public BlockDevice {
 public:
  FaultDevice(std::unique_ptr<BlockDevice> inner, FaultPlan plan = {});
  ~FaultDevice() override;

  const DeviceInfo& info() const noexcept override { return inner_->info(); }
  void submit(IoRequest& req) noexcept override;
  std::size_t poll(bool wait) noexcept override;
  std::size_t in_flight() const noexcept override { return forwarded_ + ready_.size(); }

  /// Replaces the plan; the request counter keeps running unless reset.
  void set_plan(const FaultPlan& plan, bool reset_counter = false) noexcept;
  const FaultPlan& plan() const noexcept { return plan_; }
  std::uint64_t counted() const noexcept { return counter_; }   ///< requests counted so far
  std::uint64_t failed() const noexcept { return failed_; }     ///< requests failed by injection
  std::uint64_t unflushed_bytes() const noexcept;               ///< held in the volatile cache

  /// Power failure: every write not yet flushed is lost. The device stays
  /// usable (as after a reboot); requests in flight complete normally.
  void power_cut() noexcept;

  BlockDevice& inner() noexcept { return *inner_; }

 private:
  struct Shadow;
  static void on_inner_done(IoRequest& inner) noexcept;
  void finish(IoRequest& req) noexcept;  // queue for the next poll()
  void patch_read(IoRequest& req) noexcept;
  Errc write_back() noexcept;
  void forget_discarded(std::uint64_t off, std::uint64_t len);
  void cache_write(const IoRequest& req);
  void drop_cached(std::uint64_t off, std::uint64_t len);

  std::unique_ptr<BlockDevice> inner_;
  FaultPlan plan_;
  std::uint64_t counter_ = 0;
  std::uint64_t failed_ = 0;
  std::size_t forwarded_ = 0;  // submitted to inner_, not yet back
  CompletionQueue ready_;     // finished, callbacks not yet run
  std::vector<std::unique_ptr<Shadow>> shadows_;
  Shadow* free_shadows_ = nullptr;
  std::map<std::uint64_t, std::uint64_t> discarded_;               // [start, end) byte ranges
  std::map<std::uint64_t, std::vector<std::uint8_t>> cache_;       // block offset -> block
};

}  // namespace f2fscore
