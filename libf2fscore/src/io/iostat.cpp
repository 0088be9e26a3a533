// iostat: counters and latency as fs/f2fs/iostat.c keeps them, and the
// layer that feeds them. See iostat.hpp for the contract.
#include "f2fscore/iostat.hpp"

#include <chrono>
#include <cinttypes>
#include <cstdio>

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

std::uint64_t steady_now_ns(void*) noexcept {
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

// scratch[3] of an accounted request: generation (48 bits), latency kind,
// type, compressed.
constexpr std::uint64_t pack(std::uint64_t gen, unsigned lat, IostatType t, bool compressed) noexcept {
  return (gen & 0xffffffffffffull) | (static_cast<std::uint64_t>(lat) << 48) |
         (static_cast<std::uint64_t>(t) << 52) | (compressed ? 1ull << 63 : 0);
}
constexpr unsigned kNoLatency = 0xf;

}  // namespace

std::string_view iostat_type_name(IostatType t) noexcept {
  return idx(t) < kIostatTypes ? kNames[idx(t)].name : "?";
}
std::string_view iostat_type_key(IostatType t) noexcept {
  return idx(t) < kIostatTypes ? kNames[idx(t)].key : "?";
}

Iostat::Iostat(IostatClock clock) noexcept : clock_(clock) {
  if (clock_.now_ns == nullptr) clock_.now_ns = &steady_now_ns;
}

std::uint64_t Iostat::now() const noexcept { return clock_.now_ns(clock_.ctx); }

void Iostat::set_enabled(bool on) noexcept {
  std::lock_guard<std::mutex> lock(mu_);
  if (on == enabled_.load(std::memory_order_relaxed)) return;
  if (!on) reset_locked();  // f2fs_reset_iostat() on "echo 0 > iostat_enable"
  cur_.enabled = on;
  next_period_ns_ = 0;  // the first completion after enabling starts a period
  enabled_.store(on, std::memory_order_relaxed);
  for (IostatDevice* d = taps_; d != nullptr; d = d->next_tap_) d->route(on);
}

void Iostat::reset_locked() noexcept {
  const bool en = cur_.enabled;
  cur_ = IostatSnapshot{};
  cur_.enabled = en;
  prev_bytes_.fill(0);
  prev_count_.fill(0);
  ++generation_;  // completions of requests accounted before now are not recorded
  if ((generation_ & 0xffffffffffffull) == 0) generation_ = 1;
}

Status Iostat::set_period_ms(std::uint32_t ms) {
  if (ms < kMinPeriodMs || ms > kMaxPeriodMs)
    return make_error(Errc::invalid_argument, "iostat_period_ms " + std::to_string(ms) +
                                                  " outside [100, 8640000]");
  std::lock_guard<std::mutex> lock(mu_);
  period_ms_.store(ms, std::memory_order_relaxed);
  next_period_ns_ = 0;
  return {};
}

void Iostat::set_sink(Sink sink, void* ctx) noexcept {
  std::lock_guard<std::mutex> lock(mu_);
  sink_ = sink;
  sink_ctx_ = ctx;
}

IostatSnapshot Iostat::snapshot() const {
  IostatSnapshot s;
  {
    std::lock_guard<std::mutex> lock(mu_);
    s = cur_;
  }
  s.time_ns = now();
  return s;
}

void Iostat::add_locked(IostatType type, std::uint64_t bytes, bool compressed) noexcept {
  const Fan& f = fans_of(type, compressed);
  for (std::size_t i = 0; i < f.n; ++i) {
    cur_.bytes[f.t[i]] += bytes;
    cur_.count[f.t[i]] += 1;
  }
}

bool Iostat::account(IostatType type, std::uint64_t bytes, bool compressed) noexcept {
  if (!enabled()) return false;
  std::lock_guard<std::mutex> lock(mu_);
  if (!cur_.enabled) return false;
  add_locked(type, bytes, compressed);
  return true;
}

std::uint64_t Iostat::submit(IostatType type, std::uint64_t bytes, bool compressed) noexcept {
  std::lock_guard<std::mutex> lock(mu_);
  if (!cur_.enabled) return 0;  // switched off since the caller's check
  add_locked(type, type == IostatType::fs_flush_io ? 0 : bytes, compressed);
  return generation_;
}

bool Iostat::claim_period_locked(std::uint64_t now_ns) noexcept {
  // f2fs_record_iostat(): at most once per period. The first completion
  // after switching on (or changing the period) starts the first period.
  if (now_ns < next_period_ns_) return false;
  const bool first = next_period_ns_ == 0;
  next_period_ns_ = now_ns + std::uint64_t{period_ms()} * 1000000u;
  return !first;
}

[[gnu::noinline, gnu::cold]] void Iostat::emit_period(std::uint64_t now_ns) noexcept {
  // Out of the completion path: the record is 1 KiB of stack.
  IostatSnapshot out;
  Sink sink;
  void* ctx;
  {
    std::lock_guard<std::mutex> lock(mu_);
    if (!cur_.enabled || sink_ == nullptr) return;
    out.enabled = true;
    out.time_ns = now_ns;
    for (std::size_t i = 0; i < kIostatTypes; ++i) {  // deltas since the last record
      out.bytes[i] = cur_.bytes[i] - prev_bytes_[i];
      out.count[i] = cur_.count[i] - prev_count_[i];
      out.completed[i] = cur_.completed[i];
      prev_bytes_[i] = cur_.bytes[i];
      prev_count_[i] = cur_.count[i];
    }
    out.latency = cur_.latency;  // __record_iostat_latency(): emit, then clear
    for (auto& row : cur_.latency) row.fill(IostatLatency{});
    sink = sink_;
    ctx = sink_ctx_;
  }
  sink(out, ctx);
}

void Iostat::complete(IostatType type, bool compressed, IostatLat lat, std::uint64_t generation,
                      std::uint64_t submit_ns, std::uint64_t now_ns) noexcept {
  // The caller read the clock, outside the lock, for latency-bearing requests only.
  const bool timed = static_cast<unsigned>(lat) != kNoLatency;
  bool due = false;
  {
    std::lock_guard<std::mutex> lock(mu_);
    if (!cur_.enabled || generation != (generation_ & 0xffffffffffffull)) return;
    const Fan& f = fans_of(type, compressed);
    for (std::size_t i = 0; i < f.n; ++i) cur_.completed[f.t[i]] += 1;
    if (!timed) return;
    const std::uint64_t d = now_ns >= submit_ns ? now_ns - submit_ns : 0;
    IostatLatency& b = cur_.latency[static_cast<std::size_t>(lat)][static_cast<std::size_t>(page_of(type))];
    b.sum_ns += d;
    b.count += 1;
    if (d > b.peak_ns) b.peak_ns = d;
    due = sink_ != nullptr && claim_period_locked(now_ns);
  }
  if (due) [[unlikely]] emit_period(now_ns);
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
  using T = IostatType;
  switch (type) {
    case T::fs_node_io: case T::fs_gc_node_io: case T::fs_cp_node_io: case T::fs_node_read_io:
      return IostatPage::node;
    case T::fs_meta_io: case T::fs_cp_meta_io: case T::fs_meta_read_io: case T::fs_flush_io:
      return IostatPage::meta;
    default:
      return IostatPage::data;
  }
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
  route(stats_.cur_.enabled);
}

IostatDevice::~IostatDevice() {
  drain(*this);  // accounted completions still refer to stats_
  std::lock_guard<std::mutex> lock(stats_.mu_);
  for (IostatDevice** p = &stats_.taps_; *p != nullptr; p = &(*p)->next_tap_) {
    if (*p == this) {
      *p = next_tap_;
      break;
    }
  }
}

void IostatDevice::route(bool on) noexcept {
  route_.store(on ? static_cast<BlockDevice*>(&accounting_) : inner_.get(), std::memory_order_relaxed);
}

const DeviceInfo& IostatDevice::info() const noexcept { return inner_->info(); }

void IostatDevice::submit(IoRequest& req) noexcept {
  route_.load(std::memory_order_relaxed)->submit(req);  // off: straight to the device below
}

std::size_t IostatDevice::poll(bool wait) noexcept { return inner_->poll(wait); }

std::size_t IostatDevice::in_flight() const noexcept { return inner_->in_flight(); }

void IostatDevice::submit_accounted(IoRequest& req) noexcept {
  IostatType type;
  if (!Iostat::classify(req, type)) return inner_->submit(req);
  const bool compressed = (req.tag & io_tag_compressed) != 0;
  const bool rw = req.op == IoOp::read || req.op == IoOp::write;
  const std::uint64_t gen = stats_.submit(type, req.length, compressed);
  if (gen == 0) return inner_->submit(req);  // switched off meanwhile: not accounted
  unsigned lat = kNoLatency;
  if (rw) {
    lat = static_cast<unsigned>(req.op == IoOp::read ? IostatLat::read
                                : (req.flags & io_flag::sync) != 0 ? IostatLat::write_sync
                                                                   : IostatLat::write_async);
    // Submitted from inside a completion callback of this layer: that
    // completion's clock reading is the submission time.
    req.scratch[2] = cb_timed_ ? cb_now_ : stats_.now();
  }
  // Bind: the decision travels with the request (bio_iostat_ctx's job).
  req.scratch[0] = reinterpret_cast<std::uintptr_t>(req.on_complete);
  req.scratch[1] = reinterpret_cast<std::uintptr_t>(req.user);
  req.scratch[3] = pack(gen, lat, type, compressed);
  req.on_complete = &IostatDevice::on_done;
  req.user = this;
  inner_->submit(req);
}

void IostatDevice::on_done(IoRequest& req) noexcept {
  auto& dev = *static_cast<IostatDevice*>(req.user);
  const std::uint64_t packed = req.scratch[3];
  const std::uint64_t submit_ns = req.scratch[2];
  // Unbind before the caller's callback, which may resubmit the request.
  req.on_complete = reinterpret_cast<IoCallback>(static_cast<std::uintptr_t>(req.scratch[0]));
  req.user = reinterpret_cast<void*>(static_cast<std::uintptr_t>(req.scratch[1]));
  const auto lat = static_cast<unsigned>((packed >> 48) & 0xf);
  const bool timed = lat != kNoLatency;
  const std::uint64_t now_ns = timed ? dev.stats_.now() : 0;  // one clock read per completion
  dev.stats_.complete(static_cast<IostatType>((packed >> 52) & 0x7f), (packed >> 63) != 0,
                      static_cast<IostatLat>(lat), packed & 0xffffffffffffull, submit_ns, now_ns);
  if (req.on_complete == nullptr) return;
  if (!timed) return req.on_complete(req);
  // What the callback submits through this layer takes now_ns as its
  // submission time instead of reading the clock again.
  const std::uint64_t outer_now = dev.cb_now_;
  const bool outer_timed = dev.cb_timed_;
  dev.cb_now_ = now_ns;
  dev.cb_timed_ = true;
  req.on_complete(req);
  dev.cb_now_ = outer_now;
  dev.cb_timed_ = outer_timed;
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
  std::string out = "{\"enabled\": ";
  out += s.enabled ? "true" : "false";
  char buf[256];
  std::snprintf(buf, sizeof buf, ", \"time\": %lld, \"types\": {", static_cast<long long>(unix_time));
  out += buf;
  for (std::size_t i = 0; i < kIostatTypes; ++i) {
    const auto t = static_cast<IostatType>(i);
    const std::uint64_t b = s.bytes[i], c = s.count[i];
    std::snprintf(buf, sizeof buf,
                  "%s\"%s\": {\"name\": \"%s\", \"bytes\": %" PRIu64 ", \"count\": %" PRIu64
                  ", \"avg_bytes\": %" PRIu64 "}",
                  i ? ", " : "", std::string(iostat_type_key(t)).c_str(),
                  std::string(iostat_type_name(t)).c_str(), b, c, c ? b / c : 0);
    out += buf;
  }
  out += "}, \"latency\": {";
  bool first = true;
  for (const auto& n : kLatNames) {
    const IostatLatency& l = s.lat(n.lat, n.page);
    std::snprintf(buf, sizeof buf,
                  "%s\"%s\": {\"peak_us\": %.3f, \"avg_us\": %.3f, \"count\": %" PRIu64 "}",
                  first ? "" : ", ", n.name, static_cast<double>(l.peak_ns) / 1000.0,
                  static_cast<double>(l.avg_ns()) / 1000.0, l.count);
    out += buf;
    first = false;
  }
  out += "}}";
  return out;
}

}  // namespace f2fscore
