// iostat: counters and latency as fs/f2fs/iostat.c keeps them, and the
// layer that feeds them. See iostat.hpp for the contract.
#include "f2fscore/iostat.hpp"

#include <chrono>
#include <cinttypes>
#include <cstddef>
#include <cstdio>
#include <cstring>
#include <ctime>
#include <thread>

#include <nlohmann/json.hpp>

namespace f2fscore {
namespace {

constexpr std::size_t idx(IostatType t) noexcept { return static_cast<std::size_t>(t); }

struct TypeNames {
  std::string_view name;  // iostat_info label
  std::string_view key;   // JSON key
};

constexpr TypeNames kNames[kIostatTypes] = {
    {"app direct data", "app_direct_io"},
    {"app buffered data", "app_buffered_io"},
    {"app write", "app_write_io"},
    {"app mapped data", "app_mapped_io"},
    {"app buffered cdata", "app_buffered_cdata_io"},
    {"app mapped cdata", "app_mapped_cdata_io"},
    {"fs data", "fs_data_io"},
    {"fs cdata", "fs_cdata_io"},
    {"fs node", "fs_node_io"},
    {"fs meta", "fs_meta_io"},
    {"fs gc data", "fs_gc_data_io"},
    {"fs gc node", "fs_gc_node_io"},
    {"fs cp data", "fs_cp_data_io"},
    {"fs cp node", "fs_cp_node_io"},
    {"fs cp meta", "fs_cp_meta_io"},
    {"app direct data", "app_direct_read_io"},
    {"app buffered data", "app_buffered_read_io"},
    {"app read", "app_read_io"},
    {"app mapped data", "app_mapped_read_io"},
    {"app buffered cdata", "app_buffered_cdata_read_io"},
    {"app mapped cdata", "app_mapped_cdata_read_io"},
    {"fs data", "fs_data_read_io"},
    {"fs gc data", "fs_gdata_read_io"},
    {"fs cdata", "fs_cdata_read_io"},
    {"fs node", "fs_node_read_io"},
    {"fs meta", "fs_meta_read_io"},
    {"fs discard", "fs_discard_io"},
    {"fs flush", "fs_flush_io"},
    {"fs zone reset", "fs_zone_reset_io"},
};

[[maybe_unused]] std::uint64_t steady_now_ns(void*) noexcept {
  return static_cast<std::uint64_t>(std::chrono::duration_cast<std::chrono::nanoseconds>(
                                        std::chrono::steady_clock::now().time_since_epoch())
                                        .count());
}

// The types a submission of `type` adds to, as f2fs_update_iostat(): the
// type itself, the hidden app read/write sums, and for compressed inodes
// the cdata variant. Returns how many were written to `out`.
constexpr std::size_t fan_out(IostatType type, bool compressed, IostatType out[3]) noexcept {
  using T = IostatType;
  std::size_t n = 0;
  out[n++] = type;
  if (type == T::app_buffered_io || type == T::app_direct_io) out[n++] = T::app_write_io;
  if (type == T::app_buffered_read_io || type == T::app_direct_read_io) out[n++] = T::app_read_io;
  if (compressed) {
    switch (type) {
      case T::app_buffered_io: out[n++] = T::app_buffered_cdata_io; break;
      case T::app_buffered_read_io: out[n++] = T::app_buffered_cdata_read_io; break;
      case T::app_mapped_read_io: out[n++] = T::app_mapped_cdata_read_io; break;
      case T::app_mapped_io: out[n++] = T::app_mapped_cdata_io; break;
      case T::fs_data_read_io: out[n++] = T::fs_cdata_read_io; break;
      case T::fs_data_io: out[n++] = T::fs_cdata_io; break;
      default: break;
    }
  }
  return n;
}

// fan_out() for every type, with and without `compressed`: a table, so
// that a request's accounting is a lookup.
struct Fan {
  std::uint8_t n = 0;
  std::uint8_t t[3] = {0, 0, 0};
};
constexpr std::array<std::array<Fan, 2>, kIostatTypes> make_fans() noexcept {
  std::array<std::array<Fan, 2>, kIostatTypes> f{};
  for (std::size_t i = 0; i < kIostatTypes; ++i) {
    for (int c = 0; c < 2; ++c) {
      IostatType out[3] = {};
      const std::size_t n = fan_out(static_cast<IostatType>(i), c != 0, out);
      f[i][static_cast<std::size_t>(c)].n = static_cast<std::uint8_t>(n);
      for (std::size_t k = 0; k < n; ++k) f[i][static_cast<std::size_t>(c)].t[k] = static_cast<std::uint8_t>(out[k]);
    }
  }
  return f;
}
constexpr auto kFans = make_fans();
constexpr const Fan& fans_of(IostatType type, bool compressed) noexcept {
  return kFans[static_cast<std::size_t>(type)][compressed ? 1 : 0];
}

// The page type of each IostatType's latency bucket.
constexpr std::array<std::uint8_t, kIostatTypes> make_pages() noexcept {
  std::array<std::uint8_t, kIostatTypes> p{};
  for (std::size_t i = 0; i < kIostatTypes; ++i) {
    using T = IostatType;
    switch (static_cast<T>(i)) {
      case T::fs_node_io: case T::fs_gc_node_io: case T::fs_cp_node_io: case T::fs_node_read_io:
        p[i] = static_cast<std::uint8_t>(IostatPage::node); break;
      case T::fs_meta_io: case T::fs_cp_meta_io: case T::fs_meta_read_io: case T::fs_flush_io:
        p[i] = static_cast<std::uint8_t>(IostatPage::meta); break;
      default: p[i] = static_cast<std::uint8_t>(IostatPage::data); break;
    }
  }
  return p;
}
constexpr auto kPages = make_pages();

// The counter slot of an untagged request, by op (Iostat::classify()).
constexpr unsigned kNoSlot = 0xff;
constexpr std::array<std::uint8_t, 8> make_op_slots() noexcept {
  std::array<std::uint8_t, 8> a{};
  a.fill(kNoSlot);
  auto set = [&a](IoOp op, IostatType t) { a[static_cast<unsigned>(op) & 7u] = static_cast<std::uint8_t>(2 * idx(t)); };
  set(IoOp::read, IostatType::app_direct_read_io);
  set(IoOp::write, IostatType::app_direct_io);
  set(IoOp::discard, IostatType::fs_discard_io);
  set(IoOp::flush, IostatType::fs_flush_io);
  return a;
}
constexpr auto kSlotOfOp = make_op_slots();

// The latency kind's first bucket (lat * 3) by op * 2 + the sync flag;
// a value past the buckets for ops without latency.
constexpr std::array<std::uint8_t, 16> make_lat_of() noexcept {
  std::array<std::uint8_t, 16> a{};
  a.fill(0x40);
  const auto r = static_cast<unsigned>(IoOp::read), w = static_cast<unsigned>(IoOp::write);
  a[r * 2] = a[r * 2 + 1] = static_cast<std::uint8_t>(3 * static_cast<unsigned>(IostatLat::read));
  a[w * 2] = static_cast<std::uint8_t>(3 * static_cast<unsigned>(IostatLat::write_async));
  a[w * 2 + 1] = static_cast<std::uint8_t>(3 * static_cast<unsigned>(IostatLat::write_sync));
  return a;
}
constexpr auto kLatOf = make_lat_of();
static_assert(io_flag::sync == 1);
constexpr unsigned kIostatBuckets = detail::kIostatBuckets;

constexpr auto kRelaxed = std::memory_order_relaxed;

// A counter of the owner's block: one writer, so a load and a store.
inline void bump(std::atomic<std::uint64_t>& a, std::uint64_t v) noexcept {
  a.store(a.load(kRelaxed) + v, kRelaxed);
}

// The owner's write section of its block's sequence lock.
struct WriteSection {
  std::atomic<std::uint32_t>& seq;
  std::uint32_t s;
  explicit WriteSection(std::atomic<std::uint32_t>& q) noexcept : seq(q), s(q.load(kRelaxed)) {
    seq.store(s + 1, kRelaxed);
    std::atomic_thread_fence(std::memory_order_release);
  }
  ~WriteSection() { seq.store(s + 2, std::memory_order_release); }
  WriteSection(const WriteSection&) = delete;
  WriteSection& operator=(const WriteSection&) = delete;
};

// A consistent copy of a block (the sequence lock's read side); false when
// the block belongs to another generation than `gen`. Peaks of another
// period than `epoch` read as 0.
bool read_block(const detail::IostatBlock& b, std::uint32_t gen, std::uint32_t epoch,
                detail::IostatTotals& out) noexcept {
  for (;;) {
    const std::uint32_t s1 = b.seq.load(std::memory_order_acquire);
    if ((s1 & 1u) == 0) {
      const bool same_gen = b.gen.load(kRelaxed) == gen;
      const bool same_epoch = b.epoch.load(kRelaxed) == epoch;
      if (same_gen) {
        for (std::size_t i = 0; i < detail::kIostatSlots; ++i) {
          out.bytes[i] = b.slot[i].bytes.load(kRelaxed);
          out.count[i] = b.slot[i].count.load(kRelaxed);
          out.completed[i] = b.slot[i].completed.load(kRelaxed);
        }
        for (std::size_t i = 0; i < detail::kIostatBuckets; ++i) {
          out.lat_sum[i] = b.lat[i].sum.load(kRelaxed);
          out.lat_count[i] = b.lat[i].count.load(kRelaxed);
          out.lat_peak[i] = same_epoch ? b.lat[i].peak.load(kRelaxed) : 0;
        }
      }
      std::atomic_thread_fence(std::memory_order_acquire);
      if (b.seq.load(kRelaxed) == s1) return same_gen;
    }
    std::this_thread::yield();  // the owner is inside a write: a few instructions
  }
}

// Slot sums fanned out into the kernel's types.
void fan_into(const std::array<std::uint64_t, detail::kIostatSlots>& slots,
              std::array<std::uint64_t, kIostatTypes>& out) noexcept {
  out.fill(0);
  for (std::size_t slot = 0; slot < detail::kIostatSlots; ++slot) {
    if (slots[slot] == 0) continue;
    const Fan& f = fans_of(static_cast<IostatType>(slot / 2), (slot & 1u) != 0);
    for (std::size_t k = 0; k < f.n; ++k) out[f.t[k]] += slots[slot];
  }
}

}  // namespace

void detail::IostatTotals::add(const IostatTotals& o, bool with_peak) noexcept {
  for (std::size_t i = 0; i < kIostatSlots; ++i) {
    bytes[i] += o.bytes[i];
    count[i] += o.count[i];
    completed[i] += o.completed[i];
  }
  for (std::size_t i = 0; i < kIostatBuckets; ++i) {
    lat_sum[i] += o.lat_sum[i];
    lat_count[i] += o.lat_count[i];
    if (with_peak && o.lat_peak[i] > lat_peak[i]) lat_peak[i] = o.lat_peak[i];
  }
}

std::string_view iostat_type_name(IostatType t) noexcept {
  return idx(t) < kIostatTypes ? kNames[idx(t)].name : "?";
}
std::string_view iostat_type_key(IostatType t) noexcept {
  return idx(t) < kIostatTypes ? kNames[idx(t)].key : "?";
}

Iostat::Iostat(IostatClock clock) noexcept : clock_(clock) {}  // null now_ns: the monotonic clock

inline std::uint64_t Iostat::now() const noexcept {
  if (clock_.now_ns == nullptr) [[likely]] {
#if defined(CLOCK_MONOTONIC)
    // steady_clock's own source on POSIX systems, without its wrappers.
    timespec ts;
    ::clock_gettime(CLOCK_MONOTONIC, &ts);
    return static_cast<std::uint64_t>(ts.tv_sec) * 1000000000u + static_cast<std::uint64_t>(ts.tv_nsec);
#else
    return steady_now_ns(nullptr);
#endif
  }
  return clock_.now_ns(clock_.ctx);
}

void Iostat::arm_period_locked() noexcept {
  // The first completion after switching on, setting a sink or changing
  // the period starts the first period.
  started_ = false;
  next_period_ns_.store(on_ && sink_ != nullptr ? 0 : ~std::uint64_t{0}, kRelaxed);
}

void Iostat::set_enabled(bool on) noexcept {
  std::lock_guard<std::mutex> lock(mu_);
  if (on == on_) return;
  // f2fs_reset_iostat() on "echo 0 > iostat_enable"; switching on starts
  // from the same zeroes (a new generation, so that nothing counted by a
  // submission racing with the switch off shows).
  reset_locked();
  on_ = on;
  arm_period_locked();
  enabled_.store(on, kRelaxed);
  for (IostatDevice* d = taps_; d != nullptr; d = d->next_tap_) d->route(on);
}

void Iostat::reset_locked() noexcept {
  shared_ = detail::IostatTotals{};
  prev_ = detail::IostatTotals{};
  // Completions of requests accounted before now are not recorded, and
  // every layer's counters count as zero until its owner clears them.
  std::uint32_t g = generation_.load(kRelaxed) + 1;
  if (g == 0) g = 1;
  generation_.store(g, kRelaxed);
}

Status Iostat::set_period_ms(std::uint32_t ms) {
  if (ms < kMinPeriodMs || ms > kMaxPeriodMs)
    return make_error(Errc::invalid_argument, "iostat_period_ms " + std::to_string(ms) +
                                                  " outside [100, 8640000]");
  std::lock_guard<std::mutex> lock(mu_);
  period_ms_.store(ms, kRelaxed);
  arm_period_locked();
  return {};
}

void Iostat::set_sink(Sink sink, void* ctx) noexcept {
  std::lock_guard<std::mutex> lock(mu_);
  sink_ = sink;
  sink_ctx_ = ctx;
  arm_period_locked();
}

detail::IostatTotals Iostat::gather_locked() const noexcept {
  detail::IostatTotals t = shared_;
  const std::uint32_t gen = generation_.load(kRelaxed), epoch = epoch_.load(kRelaxed);
  for (const IostatDevice* d = taps_; d != nullptr; d = d->next_tap_) {
    detail::IostatTotals b;
    if (read_block(d->block_, gen, epoch, b)) t.add(b, true);
  }
  return t;
}

namespace {
// The latency of a period: the sums since `prev`, the peaks as they are.
void latency_since(const detail::IostatTotals& t, const detail::IostatTotals& prev, IostatSnapshot& s) noexcept {
  for (std::size_t k = 0; k < detail::kIostatBuckets; ++k) {
    IostatLatency& l = s.latency[k / kIostatPages][k % kIostatPages];
    l.sum_ns = t.lat_sum[k] - prev.lat_sum[k];
    l.count = t.lat_count[k] - prev.lat_count[k];
    l.peak_ns = t.lat_peak[k];
  }
}
}  // namespace

IostatSnapshot Iostat::snapshot() const {
  IostatSnapshot s;
  {
    std::lock_guard<std::mutex> lock(mu_);
    s.enabled = on_;
    if (on_) {
      const detail::IostatTotals t = gather_locked();
      fan_into(t.bytes, s.bytes);
      fan_into(t.count, s.count);
      fan_into(t.completed, s.completed);
      latency_since(t, prev_, s);
    }
  }
  s.time_ns = now();
  return s;
}

bool Iostat::account(IostatType type, std::uint64_t bytes, bool compressed) noexcept {
  if (!enabled() || idx(type) >= kIostatTypes) return false;
  std::lock_guard<std::mutex> lock(mu_);
  if (!on_) return false;
  const std::size_t slot = 2 * idx(type) + (compressed ? 1 : 0);
  shared_.bytes[slot] += bytes;
  shared_.count[slot] += 1;
  return true;
}

[[gnu::noinline, gnu::cold]] void Iostat::emit_period(std::uint64_t now_ns) noexcept {
  // Out of the completion path: the record is 1 KiB of stack.
  IostatSnapshot out;
  Sink sink;
  void* ctx;
  {
    std::lock_guard<std::mutex> lock(mu_);
    // f2fs_record_iostat(): at most once per period; the first completion
    // of a period only starts it.
    if (!on_ || sink_ == nullptr || now_ns < next_period_ns_.load(kRelaxed)) return;
    next_period_ns_.store(now_ns + std::uint64_t{period_ms()} * 1000000u, kRelaxed);
    if (!started_) {
      started_ = true;
      return;
    }
    const detail::IostatTotals t = gather_locked();
    out.enabled = true;
    out.time_ns = now_ns;
    std::array<std::uint64_t, kIostatTypes> prev;
    fan_into(t.bytes, out.bytes);  // deltas since the last record
    fan_into(prev_.bytes, prev);
    for (std::size_t i = 0; i < kIostatTypes; ++i) out.bytes[i] -= prev[i];
    fan_into(t.count, out.count);
    fan_into(prev_.count, prev);
    for (std::size_t i = 0; i < kIostatTypes; ++i) out.count[i] -= prev[i];
    fan_into(t.completed, out.completed);
    latency_since(t, prev_, out);  // __record_iostat_latency(): emit, then clear
    prev_ = t;
    shared_.lat_peak.fill(0);
    std::uint32_t e = epoch_.load(kRelaxed) + 1;  // the layers' peaks start again
    if (e == 0) e = 1;
    epoch_.store(e, kRelaxed);
    sink = sink_;
    ctx = sink_ctx_;
  }
  sink(out, ctx);
}

bool Iostat::classify(const IoRequest& req, IostatType& type) noexcept {
  const unsigned t = req.tag & 0xffu;
  if (t != 0) {
    if (t > kIostatTypes) return false;
    type = static_cast<IostatType>(t - 1);
    return true;
  }
  switch (req.op) {
    case IoOp::read: type = IostatType::app_direct_read_io; return true;
    case IoOp::write: type = IostatType::app_direct_io; return true;
    case IoOp::discard: type = IostatType::fs_discard_io; return true;
    case IoOp::flush: type = IostatType::fs_flush_io; return true;
    case IoOp::write_zeroes: return false;
  }
  return false;
}

IostatPage Iostat::page_of(IostatType type) noexcept {
  return idx(type) < kIostatTypes ? static_cast<IostatPage>(kPages[idx(type)]) : IostatPage::data;
}

// ---- The layer ----
//
// Out of line, in a file compiled without speculative devirtualization:
// GCC otherwise guesses that the device below is another IostatDevice and
// inlines a check for that into every forward, which costs more than the
// forward itself.

IostatDevice::IostatDevice(std::unique_ptr<BlockDevice> inner, Iostat& stats) noexcept
    : inner_(std::move(inner)), stats_(stats) {
  accounting_.owner = this;
  std::lock_guard<std::mutex> lock(stats_.mu_);
  next_tap_ = stats_.taps_;
  stats_.taps_ = this;
  route(stats_.on_);
}

IostatDevice::~IostatDevice() {
  drain(*this);  // accounted completions still refer to stats_
  std::lock_guard<std::mutex> lock(stats_.mu_);
  // What this layer counted stays in the volume's sums.
  detail::IostatTotals mine;
  if (read_block(block_, stats_.generation_.load(kRelaxed), stats_.epoch_.load(kRelaxed), mine))
    stats_.shared_.add(mine, true);
  for (IostatDevice** p = &stats_.taps_; *p != nullptr; p = &(*p)->next_tap_) {
    if (*p == this) {
      *p = next_tap_;
      break;
    }
  }
}

void IostatDevice::route(bool on) noexcept {
  route_.store(on ? static_cast<BlockDevice*>(&accounting_) : inner_.get(), kRelaxed);
}

const DeviceInfo& IostatDevice::info() const noexcept { return inner_->info(); }

[[gnu::noinline, gnu::cold]] void IostatDevice::restart_block(std::uint32_t gen) noexcept {
  // Inside the caller's write section.
  for (std::size_t i = 0; i < detail::kIostatSlots; ++i) {
    block_.slot[i].bytes.store(0, kRelaxed);
    block_.slot[i].count.store(0, kRelaxed);
    block_.slot[i].completed.store(0, kRelaxed);
  }
  for (std::size_t i = 0; i < detail::kIostatBuckets; ++i) {
    block_.lat[i].sum.store(0, kRelaxed);
    block_.lat[i].count.store(0, kRelaxed);
    block_.lat[i].peak.store(0, kRelaxed);
  }
  block_.epoch.store(stats_.epoch_.load(kRelaxed), kRelaxed);
  block_.gen.store(gen, kRelaxed);
}

// Both ends of an accounted request avoid calls that return where they
// can (tail calls; the clock and the callback on the completion side, with
// only the request and the layer live across them): the uncommon cases are
// out of line.

namespace {
// scratch[3] of an accounted request, in host order (written and read
// only here): the generation it was counted in, and the byte offsets in
// the layer's block of its counter slot and of its latency bucket (or 0:
// none). Each field is read on its own, so that it is one narrow load.
struct Ctx {
  std::uint32_t gen;
  std::uint16_t slot_off;
  std::uint16_t lat_off;
};
static_assert(sizeof(Ctx) == sizeof(std::uint64_t));
static_assert(sizeof(detail::IostatBlock) <= 0xffff);
inline void put_ctx(IoRequest& req, const Ctx& c) noexcept { std::memcpy(&req.scratch[3], &c, sizeof c); }
template <typename T, std::size_t Off>
inline T ctx_field(const IoRequest& req) noexcept {
  T v;
  std::memcpy(&v, reinterpret_cast<const unsigned char*>(&req.scratch[3]) + Off, sizeof v);
  return v;
}
inline std::uint32_t ctx_gen(const IoRequest& req) noexcept { return ctx_field<std::uint32_t, offsetof(Ctx, gen)>(req); }
inline std::size_t ctx_slot_off(const IoRequest& req) noexcept { return ctx_field<std::uint16_t, offsetof(Ctx, slot_off)>(req); }
inline std::size_t ctx_lat_off(const IoRequest& req) noexcept { return ctx_field<std::uint16_t, offsetof(Ctx, lat_off)>(req); }
template <typename Cell>
inline Cell& cell_at(detail::IostatBlock& b, std::size_t off) noexcept {
  return *reinterpret_cast<Cell*>(reinterpret_cast<unsigned char*>(&b) + off);
}
// What a request's tag and op select, as byte offsets in the layer's
// block (so that accounting adds an offset to the block's address):
// its counter slot (0: not accounted) and its type's page in the latency
// cells of a latency kind.
struct SlotPick {
  std::uint16_t slot_off = 0;
  std::uint16_t page_off = 0;
};
constexpr SlotPick pick_of(unsigned slot) noexcept {
  return {static_cast<std::uint16_t>(offsetof(detail::IostatBlock, slot) + slot * sizeof(detail::IostatBlock::SlotCell)),
          static_cast<std::uint16_t>(kPages[slot / 2] * sizeof(detail::IostatBlock::LatCell))};
}
// By the tag's type byte and compressed bit (tag & 0x1ff); type byte 0 is
// looked up by op instead (kPickOfOp).
constexpr std::array<SlotPick, 0x200> make_pick_of_tag() noexcept {
  std::array<SlotPick, 0x200> a{};
  for (unsigned key = 0; key < 0x200; ++key) {
    const unsigned t = key & 0xffu;
    if (t == 0 || t > kIostatTypes) continue;
    a[key] = pick_of(2 * (t - 1) + ((key & io_tag_compressed) != 0 ? 1u : 0u));
  }
  return a;
}
constexpr auto kPickOfTag = make_pick_of_tag();
constexpr std::array<SlotPick, 8> make_pick_of_op() noexcept {
  std::array<SlotPick, 8> a{};
  for (unsigned op = 0; op < 8; ++op)
    if (kSlotOfOp[op] != kNoSlot) a[op] = pick_of(kSlotOfOp[op]);
  return a;
}
constexpr auto kPickOfOp = make_pick_of_op();
static_assert(io_tag_compressed == 0x100);
// The first latency cell of a request's latency kind, by op * 2 + the
// sync flag (0: no latency for this op).
constexpr std::array<std::uint16_t, 16> make_lat_base() noexcept {
  std::array<std::uint16_t, 16> a{};
  for (unsigned k = 0; k < 16; ++k)
    if (kLatOf[k] < kIostatBuckets)
      a[k] = static_cast<std::uint16_t>(offsetof(detail::IostatBlock, lat) + kLatOf[k] * sizeof(detail::IostatBlock::LatCell));
  return a;
}
constexpr auto kLatBase = make_lat_base();
static_assert(offsetof(detail::IostatBlock, lat) != 0 && offsetof(detail::IostatBlock, slot) != 0);

inline IostatDevice* layer_of(const IoRequest& req) noexcept {
  return reinterpret_cast<IostatDevice*>(static_cast<std::uintptr_t>(req.scratch[1]));
}
// Unbind: the caller's callback back in place, before it runs (it may
// resubmit the request).
inline IoCallback unbind(IoRequest& req) noexcept {
  const auto cb = reinterpret_cast<IoCallback>(static_cast<std::uintptr_t>(req.scratch[0]));
  req.on_complete = cb;
  return cb;
}
}  // namespace

[[gnu::always_inline]] inline void IostatDevice::after_timed(IoRequest& req, std::uint64_t now_ns) noexcept {
  // What the callback submits through this layer takes now_ns as its
  // submission time instead of reading the clock again.
  if (req.on_complete == nullptr) return;
  cb_now_ = now_ns;
  cb_timed_ = true;
  req.on_complete(req);
  cb_timed_ = false;
}

[[gnu::always_inline]] inline void IostatDevice::submit_accounted(IoRequest& req) noexcept {
  // The slot: the tag's type (1 + IostatType in the low byte) and its
  // compressed bit, or the op's default type (classify()'s).
  static_assert(static_cast<unsigned>(IoOp::write_zeroes) < 8);
  const unsigned op = static_cast<unsigned>(req.op) & 7u;
  const SlotPick pick = (req.tag & 0xffu) != 0 ? kPickOfTag[req.tag & 0x1ffu] : kPickOfOp[op];
  if (pick.slot_off == 0) [[unlikely]] return inner_->submit(req);
  const std::uint32_t gen = stats_.generation_.load(kRelaxed);
  if (block_.gen.load(kRelaxed) != gen) [[unlikely]] return restart_and_submit(req);
  {
    WriteSection w(block_.seq);
    auto& cell = cell_at<detail::IostatBlock::SlotCell>(block_, pick.slot_off);
    bump(cell.bytes, req.op == IoOp::flush ? 0 : req.length);  // FS_FLUSH_IO: count only
    bump(cell.count, 1);
  }
  // Bind: the decision travels with the request (bio_iostat_ctx's job).
  req.scratch[0] = reinterpret_cast<std::uintptr_t>(req.on_complete);
  req.scratch[1] = reinterpret_cast<std::uintptr_t>(this);
  // The latency bucket: {read, sync write, async write} of the op and
  // flags, x the type's page; none for other ops.
  const std::uint16_t lat_base = kLatBase[op * 2 + (req.flags & io_flag::sync)];
  if (lat_base == 0) {
    put_ctx(req, Ctx{gen, pick.slot_off, 0});
    req.on_complete = &IostatDevice::on_done_untimed;
    return inner_->submit(req);
  }
  put_ctx(req, Ctx{gen, pick.slot_off, static_cast<std::uint16_t>(lat_base + pick.page_off)});
  req.on_complete = &IostatDevice::on_done;
  // Submitted from the callback of a timed completion of this layer: that
  // completion's time is the submission time.
  if (!cb_timed_) [[unlikely]] return submit_clocked(req);
  req.scratch[2] = cb_now_;
  inner_->submit(req);
}

void IostatDevice::Accounting::submit(IoRequest& req) noexcept { owner->submit_accounted(req); }

[[gnu::noinline]] void IostatDevice::submit_clocked(IoRequest& req) noexcept {
  req.scratch[2] = stats_.now();
  inner_->submit(req);
}

[[gnu::noinline, gnu::cold]] void IostatDevice::restart_and_submit(IoRequest& req) noexcept {
  {
    WriteSection w(block_.seq);
    restart_block(stats_.generation_.load(kRelaxed));
  }
  submit_accounted(req);
}

void IostatDevice::on_done(IoRequest& req) noexcept {
  // The clock first, while nothing but the request is live.
  IostatDevice& dev = *layer_of(req);
  const std::uint64_t now_ns = dev.stats_.now();
  const std::uint64_t submit_ns = req.scratch[2];
  unbind(req);
  Iostat& st = dev.stats_;
  // Not recorded when the counters were reset since its submission.
  if (ctx_gen(req) != st.generation_.load(kRelaxed)) [[unlikely]] return dev.done_unrecorded(req);
  const std::uint64_t d = now_ns >= submit_ns ? now_ns - submit_ns : 0;
  detail::IostatBlock& b = dev.block_;
  if (b.epoch.load(kRelaxed) != st.epoch_.load(kRelaxed)) [[unlikely]] return dev.done_new_peak(req, ctx_slot_off(req), ctx_lat_off(req), now_ns, d);
  {
    WriteSection w(b.seq);
    bump(cell_at<detail::IostatBlock::SlotCell>(b, ctx_slot_off(req)).completed, 1);
    auto& lat = cell_at<detail::IostatBlock::LatCell>(b, ctx_lat_off(req));
    bump(lat.sum, d);
    bump(lat.count, 1);
    if (d > lat.peak.load(kRelaxed)) lat.peak.store(d, kRelaxed);
  }
  if (now_ns >= st.next_period_ns_.load(kRelaxed)) [[unlikely]] return dev.done_period(req, now_ns);
  dev.after_timed(req, now_ns);
}

void IostatDevice::on_done_untimed(IoRequest& req) noexcept {
  IostatDevice& dev = *layer_of(req);
  const IoCallback cb = unbind(req);
  if (ctx_gen(req) == dev.stats_.generation_.load(kRelaxed)) [[likely]] {
    WriteSection w(dev.block_.seq);
    bump(cell_at<detail::IostatBlock::SlotCell>(dev.block_, ctx_slot_off(req)).completed, 1);
  }
  if (cb != nullptr) cb(req);
}

[[gnu::noinline, gnu::cold]] void IostatDevice::done_unrecorded(IoRequest& req) noexcept {
  if (req.on_complete != nullptr) req.on_complete(req);
}

[[gnu::noinline, gnu::cold]] void IostatDevice::done_new_peak(IoRequest& req, std::size_t slot_off, std::size_t lat_off,
                                                              std::uint64_t now_ns, std::uint64_t d) noexcept {
  // The first timed completion of this layer since a period record: its
  // peaks start again.
  detail::IostatBlock& b = block_;
  {
    WriteSection w(b.seq);
    for (auto& l : b.lat) l.peak.store(0, kRelaxed);
    b.epoch.store(stats_.epoch_.load(kRelaxed), kRelaxed);
    bump(cell_at<detail::IostatBlock::SlotCell>(b, slot_off).completed, 1);
    auto& lat = cell_at<detail::IostatBlock::LatCell>(b, lat_off);
    bump(lat.sum, d);
    bump(lat.count, 1);
    lat.peak.store(d, kRelaxed);
  }
  if (now_ns >= stats_.next_period_ns_.load(kRelaxed)) stats_.emit_period(now_ns);
  after_timed(req, now_ns);
}

[[gnu::noinline, gnu::cold]] void IostatDevice::done_period(IoRequest& req, std::uint64_t now_ns) noexcept {
  stats_.emit_period(now_ns);
  after_timed(req, now_ns);
}


// ---- Output ----

namespace {

void show(std::string& out, const IostatSnapshot& s, std::string_view name, IostatType t) {
  const std::uint64_t b = s.bytes[idx(t)], c = s.count[idx(t)];
  char label[40];
  std::snprintf(label, sizeof label, "%.*s:", static_cast<int>(name.size()), name.data());
  char line[128];
  std::snprintf(line, sizeof line, "%-23s %-16" PRIu64 " %-16" PRIu64 " %-16" PRIu64 "\n", label, b, c,
                c ? b / c : 0);
  out += line;
}

struct LatName {
  IostatLat lat;
  IostatPage page;
  const char* name;
};
constexpr LatName kLatNames[9] = {
    {IostatLat::read, IostatPage::data, "rd_data"},
    {IostatLat::read, IostatPage::node, "rd_node"},
    {IostatLat::read, IostatPage::meta, "rd_meta"},
    {IostatLat::write_sync, IostatPage::data, "wr_sync_data"},
    {IostatLat::write_sync, IostatPage::node, "wr_sync_node"},
    {IostatLat::write_sync, IostatPage::meta, "wr_sync_meta"},
    {IostatLat::write_async, IostatPage::data, "wr_async_data"},
    {IostatLat::write_async, IostatPage::node, "wr_async_node"},
    {IostatLat::write_async, IostatPage::meta, "wr_async_meta"},
};

}  // namespace

std::string format_iostat_info(const IostatSnapshot& s, std::int64_t unix_time) {
  using T = IostatType;
  std::string out;
  if (!s.enabled) return out;  // iostat_info_seq_show() prints nothing when disabled
  char line[96];
  std::snprintf(line, sizeof line, "time:\t\t%-16lld\n", static_cast<long long>(unix_time));
  out += line;
  std::snprintf(line, sizeof line, "\t\t\t%-16s %-16s %-16s\n", "io_bytes", "count", "avg_bytes");
  out += line;
  out += "[WRITE]\n";
  for (T t : {T::app_buffered_io, T::app_direct_io, T::app_mapped_io, T::app_buffered_cdata_io,
              T::app_mapped_cdata_io, T::fs_data_io, T::fs_cdata_io, T::fs_node_io, T::fs_meta_io,
              T::fs_gc_data_io, T::fs_gc_node_io, T::fs_cp_data_io, T::fs_cp_node_io, T::fs_cp_meta_io})
    show(out, s, iostat_type_name(t), t);
  out += "[READ]\n";
  for (T t : {T::app_buffered_read_io, T::app_direct_read_io, T::app_mapped_read_io,
              T::app_buffered_cdata_read_io, T::app_mapped_cdata_read_io, T::fs_data_read_io,
              T::fs_gdata_read_io, T::fs_cdata_read_io, T::fs_node_read_io, T::fs_meta_read_io})
    show(out, s, iostat_type_name(t), t);
  out += "[OTHER]\n";
  for (T t : {T::fs_discard_io, T::fs_flush_io, T::fs_zone_reset_io}) show(out, s, iostat_type_name(t), t);
  return out;
}

std::string format_iostat_latency(const IostatSnapshot& s) {
  std::string out = "iotype [peak lat.(us)/avg lat.(us)/count]";
  char buf[96];
  for (const auto& n : kLatNames) {
    const IostatLatency& l = s.lat(n.lat, n.page);
    std::snprintf(buf, sizeof buf, ", %s [%" PRIu64 "/%" PRIu64 "/%" PRIu64 "]", n.name, l.peak_ns / 1000,
                  l.avg_ns() / 1000, l.count);
    out += buf;
  }
  out += "\n";
  return out;
}

std::string iostat_json(const IostatSnapshot& s, std::int64_t unix_time) {
  using Json = nlohmann::ordered_json;
  Json types = Json::object();
  for (std::size_t i = 0; i < kIostatTypes; ++i) {
    const auto t = static_cast<IostatType>(i);
    const std::uint64_t b = s.bytes[i], c = s.count[i];
    types[std::string(iostat_type_key(t))] = {
        {"name", std::string(iostat_type_name(t))}, {"bytes", b}, {"count", c}, {"avg_bytes", c ? b / c : 0}};
  }
  Json latency = Json::object();
  for (const auto& n : kLatNames) {
    const IostatLatency& l = s.lat(n.lat, n.page);
    latency[n.name] = {{"peak_us", static_cast<double>(l.peak_ns) / 1000.0},
                       {"avg_us", static_cast<double>(l.avg_ns()) / 1000.0},
                       {"count", l.count}};
  }
  const Json j = {{"enabled", s.enabled}, {"time", unix_time}, {"types", std::move(types)},
                  {"latency", std::move(latency)}};
  return j.dump();
}

}  // namespace f2fscore
