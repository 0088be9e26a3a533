// Failure injection: a BlockDevice wrapper for crash and error tests (the
// littlefs emubd / RocksDB FaultInjectionTestFS / CrashMonkey idea).
//
//   - fail request n, or every request after the first n (a dying disk, or
//     the moment power is lost), with a chosen error;
//   - cut a transfer short (request n moves only part of its bytes);
//   - reads of discarded blocks return garbage (a discard promises nothing);
//   - writes are held in a volatile cache until a flush (a FUA write is
//     durable at once); a power cut drops what was not flushed, as a power
//     failure does, or keeps a part of it:
//       power_cut()                 nothing survives,
//       power_cut_keep(parts)       the parts chosen (whole writes, 4 KiB
//                                   blocks or 512-byte sectors of them;
//                                   unflushed_writes() and crash_units()
//                                   enumerate what there is to choose),
//       power_cut_random(seed, ..)  a seeded random subset (CrashMonkey's
//                                   reorder model: a device may persist its
//                                   cached writes in any order),
//       power_cut_torn(w, sectors)  the writes before write w and the first
//                                   sectors of w (a device that writes in
//                                   order, torn at a sector boundary).
//
// Flush and FUA as the block layer defines them (REQ_PREFLUSH, REQ_FUA in
// Documentation/block/writeback_cache_control.rst): a completed flush makes
// every write completed before it durable; a FUA write is durable when it
// completes; a write_zeroes or discard is passed down at once (durable) and
// hides the cached writes it covers, as a FUA write does.
//
// Requests are counted from 0 in submission order, over the ops selected by
// FaultPlan::ops (counted()); submitted() counts every request. Failed
// requests never reach the device below. This layer is for tests: it may
// allocate (one shadow request per forwarded request, reused; the volatile
// cache holds a copy of every unflushed write), and flush writes the cache
// out synchronously. One thread at a time, like every device.
#pragma once

#include <cstdint>
#include <map>
#include <memory>
#include <span>
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

/// A write held in the volatile cache (FaultPlan::drop_unflushed): completed
/// for the caller, not yet durable.
struct UnflushedWrite {
  /// Its index among every request submitted since construction or the
  /// last reset_counters() (FaultDevice::submitted(); the same numbering as
  /// RecordedRequest::index of a recorder right above this device).
  std::uint64_t request = 0;
  std::uint64_t offset = 0;  ///< bytes from the start of the device
  std::uint64_t length = 0;  ///< bytes
  std::uint8_t flags = 0;    ///< io_flag bits as submitted
  std::uint16_t tag = 0;     ///< IoRequest::tag as submitted (io_tag() in iostat.hpp: node, data, meta)
  /// The bytes written (`length` of them); valid until the next request,
  /// flush, power cut or set_plan() on the device.
  std::span<const std::uint8_t> data;
};

/// A part of an unflushed write that survives a power cut: bytes
/// [offset, offset + length) of unflushed write number `write` (an index
/// into unflushed_writes(), 0 the oldest). `offset` and `length` are
/// multiples of 512 (FaultDevice::kSectorSize); kWhole: to the end.
struct KeptPart {
  static constexpr std::uint64_t kWhole = ~std::uint64_t{0};
  std::uint64_t write = 0;
  std::uint64_t offset = 0;  ///< bytes from the start of the write
  std::uint64_t length = kWhole;  ///< bytes
  friend bool operator==(const KeptPart&, const KeptPart&) = default;
};

/// What one choice of a crash model covers (FaultDevice::crash_units()).
enum class CrashUnit : std::uint8_t {
  request,  ///< a whole write request
  block,    ///< the part of a write inside one 4 KiB block of the device (4 KiB-aligned device offsets)
  sector,   ///< the part of a write inside one 512-byte sector (a torn write)
};

class FaultDevice final : public BlockDevice {
 public:
  /// Bytes of a sector: the unit of a torn write (KeptPart offsets).
  static constexpr std::uint64_t kSectorSize = 512;

  /// Over `inner`, which the fault device owns.
  explicit FaultDevice(std::unique_ptr<BlockDevice> inner, FaultPlan plan = {});
  /// Over `inner`, which the caller keeps alive longer than the fault device
  /// (a CowDevice clone per crash state, say).
  explicit FaultDevice(BlockDevice& inner, FaultPlan plan = {});
  ~FaultDevice() override;

  const DeviceInfo& info() const noexcept override { return inner_->info(); }
  void submit(IoRequest& req) noexcept override;
  std::size_t poll(bool wait) noexcept override;
  std::size_t in_flight() const noexcept override { return forwarded_ + ready_.size(); }

  /// Replaces the plan; the request counter keeps running unless reset.
  /// Leaving drop_unflushed makes what is cached durable (as a flush).
  void set_plan(const FaultPlan& plan, bool reset_counter = false) noexcept;
  const FaultPlan& plan() const noexcept { return plan_; }
  /// counted(), failed() and submitted() start again from 0; the plan and
  /// the volatile cache stay (UnflushedWrite::request keeps its value).
  void reset_counters() noexcept;
  std::uint64_t counted() const noexcept { return counter_; }      ///< requests counted so far (FaultPlan::ops)
  std::uint64_t failed() const noexcept { return failed_; }        ///< requests failed by injection
  std::uint64_t submitted() const noexcept { return submitted_; }  ///< every request submitted so far
  /// Bytes held in the volatile cache: logical blocks whose newest write is
  /// not durable, times the logical block size.
  std::uint64_t unflushed_bytes() const noexcept;

  /// The writes in the volatile cache, oldest first (empty unless
  /// FaultPlan::drop_unflushed). A write that a later durable request
  /// (FUA write, write_zeroes, discard) covered is still listed; a power cut
  /// that keeps it keeps only its blocks not covered.
  std::vector<UnflushedWrite> unflushed_writes() const;
  /// Every unit of the unflushed writes, in order (write, then offset):
  /// one KeptPart per write for CrashUnit::request, one per 4 KiB device
  /// block or 512-byte sector a write touches for the others. A subset of
  /// it, given to power_cut_keep(), is one crash state of that model.
  std::vector<KeptPart> crash_units(CrashUnit unit) const;

  /// Power failure: every write not yet flushed is lost. The device stays
  /// usable (as after a reboot); requests in flight complete normally.
  void power_cut() noexcept;
  /// Power failure keeping `keep` of the unflushed writes: they are written
  /// to the device below in the order of the writes (a later write's part
  /// wins where two kept parts overlap), then the cache is dropped. Parts
  /// need not be sorted; a part named twice is kept once. Errors (nothing
  /// written, the cache kept): Errc::invalid_argument for a write index past
  /// unflushed_writes(), or an offset or length not a multiple of 512 or
  /// past the write's end. Errors of the device below (Errc::io, ...): what
  /// was written stays, the cache is dropped.
  Status power_cut_keep(std::span<const KeptPart> keep);
  /// The reorder model: each unit of crash_units(unit) survives with
  /// probability keep_percent / 100, drawn from a SplitMix64 sequence
  /// seeded with `seed` (the same seed and cache give the same result on
  /// every platform). Returns the parts kept. Errors: Errc::invalid_argument
  /// for keep_percent over 100; then as power_cut_keep().
  Result<std::vector<KeptPart>> power_cut_random(std::uint64_t seed, CrashUnit unit, std::uint32_t keep_percent = 50);
  /// The torn-write model: unflushed writes 0 .. write-1 survive whole,
  /// write `write` keeps its first `sectors` 512-byte sectors, later ones
  /// are lost. Errors: Errc::invalid_argument when `write` is past
  /// unflushed_writes() or `sectors` past its length; then as
  /// power_cut_keep().
  Status power_cut_torn(std::uint64_t write, std::uint64_t sectors);

  /// The device below: with drop_unflushed, exactly what is durable.
  BlockDevice& inner() noexcept { return *inner_; }
  const BlockDevice& inner() const noexcept { return *inner_; }
  /// The device below as a `D` (a CowDevice to clone, say); nullptr when it
  /// is not one.
  template <class D>
  D* inner_as() noexcept {
    return dynamic_cast<D*>(inner_);
  }

 private:
  struct Shadow;
  static void on_inner_done(IoRequest& inner) noexcept;
  void finish(IoRequest& req) noexcept;  // queue for the next poll()
  void patch_read(IoRequest& req) noexcept;
  struct Pending;
  Errc write_back() noexcept;
  void forget_discarded(std::uint64_t off, std::uint64_t len);
  void cache_write(const IoRequest& req, std::uint64_t request);
  void drop_cached(std::uint64_t off, std::uint64_t len);
  void clear_cache() noexcept;
  Status apply_part(const Pending& w, std::uint64_t from, std::uint64_t to);

  std::unique_ptr<BlockDevice> owned_;
  BlockDevice* inner_;
  FaultPlan plan_;
  std::uint64_t counter_ = 0;
  std::uint64_t failed_ = 0;
  std::uint64_t submitted_ = 0;
  std::size_t forwarded_ = 0;  // submitted to inner_, not yet back
  CompletionQueue ready_;     // finished, callbacks not yet run
  std::vector<std::unique_ptr<Shadow>> shadows_;
  Shadow* free_shadows_ = nullptr;
  std::map<std::uint64_t, std::uint64_t> discarded_;               // [start, end) byte ranges
  std::vector<Pending> pending_;                                   // the volatile cache, oldest first
  std::map<std::uint64_t, const std::uint8_t*> latest_;            // logical block offset -> its newest cached bytes
};

}  // namespace f2fscore
