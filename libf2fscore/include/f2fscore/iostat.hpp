// iostat: the kernel's f2fs I/O statistics (CONFIG_F2FS_IOSTAT,
// fs/f2fs/iostat.c) as a layer between the engine and a BlockDevice.
//
// Off by default, and free when off: an IostatDevice whose Iostat is
// disabled passes each request straight to the device below. Nothing is
// stamped, nothing is bound to the request, the completion is not detoured
// and no counter is touched; the cost is one load (the route to the device
// below, which switching iostat on redirects) before the forward.
//
// When on, a request is classified by IoRequest::tag (see io_tag()):
//   - at submission its bytes and count are added to its type, as
//     f2fs_update_iostat() does (and to the hidden APP_WRITE_IO/APP_READ_IO
//     sums, and to the cdata variant for compressed files);
//   - read and write requests are stamped and their completion detoured,
//     so that the latency (submission to completion) is recorded for
//     {read, sync write, async write} x {data, node, meta}, as
//     iostat_update_and_unbind_ctx() does.
// Whether a request is accounted is decided once, at submission, and kept
// in the request: switching iostat on or off while requests are in flight
// never records a completion without its submission or the reverse.
// Switching it off resets every counter, as the kernel's
// f2fs_reset_iostat() does; completions of requests submitted before a
// reset are not recorded.
//
// An Iostat may be shared by the devices of a volume and used from several
// threads (each device still has one submitting/polling thread at a time):
// enable/disable, period changes and snapshots are thread-safe. Each layer
// keeps its own counters, written only by the thread that submits to and
// polls its device (no atomic read-modify-write, no lock per request);
// snapshot() and the period records sum them, each layer's read under its
// sequence lock, so a snapshot taken while I/O runs is consistent per
// device (a completion is never seen without its submission).
#pragma once

#include <array>
#include <atomic>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <mutex>
#include <string>
#include <string_view>

#include "f2fscore/device.hpp"
#include "f2fscore/result.hpp"

namespace f2fscore {

class IostatDevice;

/// The kernel's enum iostat_type (fs/f2fs/f2fs.h), in the same order.
enum class IostatType : std::uint8_t {
  // [WRITE]
  app_direct_io,           ///< APP_DIRECT_IO: app direct writes
  app_buffered_io,         ///< APP_BUFFERED_IO: app buffered writes
  app_write_io,            ///< APP_WRITE_IO: buffered + direct (a hidden sum, not printed)
  app_mapped_io,           ///< APP_MAPPED_IO: app mapped writes
  app_buffered_cdata_io,   ///< APP_BUFFERED_CDATA_IO: buffered writes to compressed files
  app_mapped_cdata_io,     ///< APP_MAPPED_CDATA_IO: mapped writes to compressed files
  fs_data_io,              ///< FS_DATA_IO: data from kworker, fsync or reclaim
  fs_cdata_io,             ///< FS_CDATA_IO: the same for compressed files
  fs_node_io,              ///< FS_NODE_IO
  fs_meta_io,              ///< FS_META_IO
  fs_gc_data_io,           ///< FS_GC_DATA_IO: data moved by foreground GC
  fs_gc_node_io,           ///< FS_GC_NODE_IO
  fs_cp_data_io,           ///< FS_CP_DATA_IO: data written by a checkpoint
  fs_cp_node_io,           ///< FS_CP_NODE_IO
  fs_cp_meta_io,           ///< FS_CP_META_IO
  // [READ]
  app_direct_read_io,          ///< APP_DIRECT_READ_IO
  app_buffered_read_io,        ///< APP_BUFFERED_READ_IO
  app_read_io,                 ///< APP_READ_IO: buffered + direct (hidden sum)
  app_mapped_read_io,          ///< APP_MAPPED_READ_IO
  app_buffered_cdata_read_io,  ///< APP_BUFFERED_CDATA_READ_IO
  app_mapped_cdata_read_io,    ///< APP_MAPPED_CDATA_READ_IO
  fs_data_read_io,             ///< FS_DATA_READ_IO
  fs_gdata_read_io,            ///< FS_GDATA_READ_IO: data read by background GC
  fs_cdata_read_io,            ///< FS_CDATA_READ_IO
  fs_node_read_io,             ///< FS_NODE_READ_IO
  fs_meta_read_io,             ///< FS_META_READ_IO
  // [OTHER]
  fs_discard_io,     ///< FS_DISCARD_IO
  fs_flush_io,       ///< FS_FLUSH_IO: bytes stay 0, count per flush
  fs_zone_reset_io,  ///< FS_ZONE_RESET_IO
};
inline constexpr std::size_t kIostatTypes = 29;  ///< NR_IO_TYPE

/// The kernel's name of a type in iostat_info ("app direct data", "fs cp
/// meta", "fs flush"); the hidden sums are "app write" and "app read".
std::string_view iostat_type_name(IostatType t) noexcept;
/// A stable identifier for JSON ("app_direct_io", "fs_flush_io", ...).
std::string_view iostat_type_key(IostatType t) noexcept;

/// page_type of the latency table (DATA, NODE, META; META_FLUSH folds into META).
enum class IostatPage : std::uint8_t { data, node, meta };
/// enum iostat_lat_type: READ_IO, WRITE_SYNC_IO (REQ_SYNC), WRITE_ASYNC_IO.
enum class IostatLat : std::uint8_t { read, write_sync, write_async };
inline constexpr std::size_t kIostatPages = 3, kIostatLats = 3;

// ---- Classifying requests: IoRequest::tag ----
//
// tag 0 means "not classified": the type is derived from the op (read ->
// app direct read, write -> app direct write, discard -> fs discard, flush
// -> fs flush; write_zeroes is not accounted). Otherwise the low byte is
// 1 + the IostatType and io_tag_compressed marks I/O for a compressed
// inode (the kernel then also counts the cdata variant).
inline constexpr std::uint16_t io_tag_compressed = 0x100;
constexpr std::uint16_t io_tag(IostatType t, bool compressed = false) noexcept {
  return static_cast<std::uint16_t>((static_cast<unsigned>(t) + 1u) |
                                    (compressed ? io_tag_compressed : 0u));
}

/// A clock for iostat: nanoseconds from any fixed origin. Injectable so
/// tests can count reads and script latencies.
struct IostatClock {
  std::uint64_t (*now_ns)(void* ctx) noexcept = nullptr;  ///< null: CLOCK_MONOTONIC (steady_clock's source)
  void* ctx = nullptr;
};

/// Latency of one {op, page} bucket.
struct IostatLatency {
  std::uint64_t peak_ns = 0;
  std::uint64_t sum_ns = 0;
  std::uint64_t count = 0;
  std::uint64_t avg_ns() const noexcept { return count ? sum_ns / count : 0; }
};

/// Counters at one moment (Iostat::snapshot) or for one period
/// (the sink's record: byte deltas, and the period's latency).
struct IostatSnapshot {
  bool enabled = false;
  std::uint64_t time_ns = 0;  ///< the iostat clock when taken
  std::array<std::uint64_t, kIostatTypes> bytes{};
  std::array<std::uint64_t, kIostatTypes> count{};
  /// latency[IostatLat][IostatPage]: since the last period record (the
  /// kernel clears it whenever it emits f2fs_iostat_latency).
  std::array<std::array<IostatLatency, kIostatPages>, kIostatLats> latency{};
  /// Completions recorded per type (read/write requests only). Equals
  /// count[] for those types once nothing accounted is in flight.
  std::array<std::uint64_t, kIostatTypes> completed{};

  std::uint64_t bytes_of(IostatType t) const noexcept { return bytes[static_cast<std::size_t>(t)]; }
  std::uint64_t count_of(IostatType t) const noexcept { return count[static_cast<std::size_t>(t)]; }
  const IostatLatency& lat(IostatLat l, IostatPage p) const noexcept {
    return latency[static_cast<std::size_t>(l)][static_cast<std::size_t>(p)];
  }
};

namespace detail {
/// Counter slots: (type, compressed) pairs, slot = 2 * type + compressed.
/// The hidden sums and the cdata variants are derived from them when read.
inline constexpr std::size_t kIostatSlots = 2 * kIostatTypes;
/// Latency buckets: lat * 3 + page.
inline constexpr std::size_t kIostatBuckets = 9;

/// Plain sums of counter slots (a snapshot's raw material).
struct IostatTotals {
  std::array<std::uint64_t, kIostatSlots> bytes{}, count{}, completed{};
  std::array<std::uint64_t, kIostatBuckets> lat_sum{}, lat_count{}, lat_peak{};
  void add(const IostatTotals& o, bool with_peak) noexcept;
};

/// One layer's counters. Written by the thread that owns the device (a
/// store of load + n, relaxed, inside a sequence-lock write: odd `seq`
/// while writing); read by snapshots with the sequence lock's retry.
/// `gen` is the Iostat generation they belong to (older: they count as
/// zero and are cleared by the owner at its next submission); `epoch` the
/// period of lat_peak.
struct IostatBlock {
  std::atomic<std::uint32_t> seq{0};
  std::atomic<std::uint32_t> gen{0};
  std::atomic<std::uint32_t> epoch{0};
  /// A slot's counters side by side (one address per request).
  struct SlotCell {
    std::atomic<std::uint64_t> bytes{0}, count{0}, completed{0};
  };
  /// A latency bucket's sums side by side.
  struct LatCell {
    std::atomic<std::uint64_t> sum{0}, count{0}, peak{0};
  };
  std::array<SlotCell, kIostatSlots> slot{};
  std::array<LatCell, kIostatBuckets> lat{};
};
}  // namespace detail

/// Statistics of one volume (the kernel keeps them in f2fs_sb_info).
class Iostat {
 public:
  static constexpr std::uint32_t kDefaultPeriodMs = 3000;   ///< DEFAULT_IOSTAT_PERIOD_MS
  static constexpr std::uint32_t kMinPeriodMs = 100;        ///< MIN_IOSTAT_PERIOD_MS
  static constexpr std::uint32_t kMaxPeriodMs = 8640000;    ///< MAX_IOSTAT_PERIOD_MS: one day

  /// A period record, called at most once per period from a completion
  /// (like the f2fs_iostat and f2fs_iostat_latency tracepoints), on the
  /// thread polling that device, outside any lock. bytes/count are deltas
  /// since the previous record.
  using Sink = void (*)(const IostatSnapshot& period, void* ctx);

  explicit Iostat(IostatClock clock = {}) noexcept;
  Iostat(const Iostat&) = delete;
  Iostat& operator=(const Iostat&) = delete;

  bool enabled() const noexcept { return enabled_.load(std::memory_order_relaxed); }
  /// iostat_enable: on, or off (which resets every counter).
  void set_enabled(bool on) noexcept;

  std::uint32_t period_ms() const noexcept { return period_ms_.load(std::memory_order_relaxed); }
  /// iostat_period_ms. Errc::invalid_argument outside [100, 8640000].
  Status set_period_ms(std::uint32_t ms);

  /// Where period records go (null: nowhere).
  void set_sink(Sink sink, void* ctx) noexcept;

  /// The cumulative counters and the current period's latency.
  IostatSnapshot snapshot() const;

  // ---- Accounting, used by IostatDevice (and by engines that account
  // app-level I/O themselves, as f2fs_update_iostat() does) ----

  /// Adds `bytes` to `type` (and the hidden sums and cdata variants),
  /// when enabled. Returns false when disabled.
  bool account(IostatType type, std::uint64_t bytes, bool compressed = false) noexcept;

  /// The classification of a request (tag, or derived from the op);
  /// false when the request is not accounted at all.
  static bool classify(const IoRequest& req, IostatType& type) noexcept;

  /// The latency bucket of a read/write request of `type`.
  static IostatPage page_of(IostatType type) noexcept;

 private:
  friend class IostatDevice;
  std::uint64_t now() const noexcept;
  void reset_locked() noexcept;
  // The sums of the shared counters and every layer's (generation_'s
  // only; peaks of epoch_ only). Under mu_.
  detail::IostatTotals gather_locked() const noexcept;
  // A completion saw now_ns >= next_period_ns_: claims the period under
  // the lock and emits the record when one is due. Cold, out of line.
  void emit_period(std::uint64_t now_ns) noexcept;
  void arm_period_locked() noexcept;  // next_period_ns_ after a change

  IostatClock clock_;
  std::atomic<bool> enabled_{false};
  std::atomic<std::uint32_t> period_ms_{kDefaultPeriodMs};
  // Bumped by every switch on or off (a reset); never 0. A request
  // carries the generation it was accounted in.
  std::atomic<std::uint32_t> generation_{1};
  // Bumped by every period record: the period of the layers' peaks.
  std::atomic<std::uint32_t> epoch_{1};
  // The first completion at or after this time claims a period record;
  // the maximum while there is no sink or iostat is off, 0 to start the
  // first period at the next completion.
  std::atomic<std::uint64_t> next_period_ns_{~std::uint64_t{0}};
  bool started_ = false;  // the first period has begun (under mu_)
  mutable std::mutex mu_;
  bool on_ = false;  // enabled, under mu_
  Sink sink_ = nullptr;
  void* sink_ctx_ = nullptr;
  IostatDevice* taps_ = nullptr;  // attached layers: their route follows enabled_, their counters are summed
  detail::IostatTotals shared_;   // account() and the layers already destroyed
  detail::IostatTotals prev_;     // the sums at the last period record
};

/// The iostat layer: a BlockDevice that accounts what passes through it
/// into `stats` and forwards everything to `inner`, which it owns.
///
/// Accounted requests use IoRequest::scratch[0..3] until just before their
/// callback runs (the original callback, this layer, the submit timestamp,
/// the generation, counter slot and latency bucket); the callback is
/// restored before it runs (IoRequest::user is never changed), so the
/// caller sees its own request and may resubmit it from the callback.
/// The clock is read once per accounted read/write completion and once per
/// such submission made outside a completion callback; a request
/// submitted from the callback of a timed completion of this layer takes
/// that completion's clock reading as its submission time.
///
/// The gate: submit() and poll() are inline, so a caller that holds the
/// IostatDevice itself (not a BlockDevice&) pays one load per call when
/// iostat is off (the route), and calls the device below directly; a call
/// through BlockDevice& adds the virtual forward. run_io_job() and the
/// writer's own layer (which receive a BlockDevice&) find an IostatDevice
/// there and call it through its type.
class IostatDevice final : public BlockDevice {
 public:
  friend class Iostat;
  IostatDevice(std::unique_ptr<BlockDevice> inner, Iostat& stats) noexcept;
  ~IostatDevice() override;
  IostatDevice(const IostatDevice&) = delete;
  IostatDevice& operator=(const IostatDevice&) = delete;

  const DeviceInfo& info() const noexcept override;
  /// The gate: when iostat is off this only forwards the request.
  void submit(IoRequest& req) noexcept override { route_.load(std::memory_order_relaxed)->submit(req); }
  /// Completions are detoured through the requests themselves: the device
  /// below is polled directly, on or off.
  std::size_t poll(bool wait) noexcept override { return inner_->poll(wait); }
  std::size_t in_flight() const noexcept override { return inner_->in_flight(); }
  /// The device below's holes (reads are only counted, not changed).
  std::uint64_t next_data(std::uint64_t offset, std::uint64_t end) noexcept override {
    return inner_->next_data(offset, end);
  }
  std::uint64_t next_hole(std::uint64_t offset, std::uint64_t end) noexcept override {
    return inner_->next_hole(offset, end);
  }
  /// The device below's (reads through it are not counted).
  int host_descriptor() const noexcept override { return inner_->host_descriptor(); }

  BlockDevice& inner() noexcept { return *inner_; }
  Iostat& stats() noexcept { return stats_; }

 private:
  // Where submit() sends a request: the device below while iostat is off,
  // the accounting entry below while it is on. Iostat::set_enabled() flips
  // it, so the gate costs one load (and, through BlockDevice&, the
  // forward's indirect call). Only a
  // route: a submission that races with a switch counts into a generation
  // that the switch has already ended, which no snapshot shows.
  struct Accounting final : BlockDevice {
    IostatDevice* owner = nullptr;
    const DeviceInfo& info() const noexcept override { return owner->inner_->info(); }
    void submit(IoRequest& req) noexcept override;
    std::size_t poll(bool wait) noexcept override { return owner->inner_->poll(wait); }
    std::size_t in_flight() const noexcept override { return owner->inner_->in_flight(); }
  };

  void route(bool on) noexcept;
  void submit_accounted(IoRequest& req) noexcept;
  void submit_clocked(IoRequest& req) noexcept;
  void restart_and_submit(IoRequest& req) noexcept;
  static void on_done(IoRequest& req) noexcept;          // read/write: the latency too
  static void on_done_untimed(IoRequest& req) noexcept;  // flush, discard: the completion only
  void done_unrecorded(IoRequest& req) noexcept;
  void done_new_peak(IoRequest& req, std::size_t slot_off, std::size_t lat_off, std::uint64_t now_ns,
                     std::uint64_t d) noexcept;
  void done_period(IoRequest& req, std::uint64_t now_ns) noexcept;
  void after_timed(IoRequest& req, std::uint64_t now_ns) noexcept;
  void restart_block(std::uint32_t gen) noexcept;  // the owner clears counters of an older generation

  std::atomic<BlockDevice*> route_{nullptr};
  std::unique_ptr<BlockDevice> inner_;
  Iostat& stats_;
  Accounting accounting_;
  IostatDevice* next_tap_ = nullptr;  // Iostat's list of attached layers
  // While the callback of a timed completion runs: that completion's clock
  // reading, the submission time of what the callback submits.
  std::uint64_t cb_now_ = 0;
  bool cb_timed_ = false;
  detail::IostatBlock block_;  // this layer's counters (see detail::IostatBlock)
};

// ---- Output ----

/// /proc/fs/f2fs/<dev>/iostat_info as Linux 6.3 and later print it:
/// "time:", the io_bytes/count/avg_bytes header, then [WRITE], [READ] and
/// [OTHER] lines ("%-23s %-16llu %-16llu %-16llu"), including "fs flush"
/// and "fs zone reset". Empty when `s.enabled` is false, as in the kernel.
/// `unix_time` is the "time:" value (seconds).
std::string format_iostat_info(const IostatSnapshot& s, std::int64_t unix_time);

/// The latency table in the layout of the f2fs_iostat_latency tracepoint,
/// one line, in microseconds instead of milliseconds:
/// "iotype [peak lat.(us)/avg lat.(us)/count], rd_data [p/a/c], ...".
std::string format_iostat_latency(const IostatSnapshot& s);

/// Everything as one JSON object: {"enabled", "time", "types": {key:
/// {"name","bytes","count","avg_bytes"}}, "latency": {"rd_data": {"peak_us",
/// "avg_us","count"}, ...}}.
std::string iostat_json(const IostatSnapshot& s, std::int64_t unix_time);

}  // namespace f2fscore
