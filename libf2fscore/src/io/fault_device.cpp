// Failure injection over any BlockDevice. See fault_device.hpp.
#include "f2fscore/fault_device.hpp"

#include <algorithm>
#include <cstring>

#include "io/forward.hpp"
#include "util/aligned.hpp"

namespace f2fscore {

// A request forwarded to the inner device on behalf of a caller's request.
struct FaultDevice::Shadow {
  IoRequest inner;
  IoRequest* outer = nullptr;
  FaultDevice* dev = nullptr;
  Shadow* next_free = nullptr;
};

// An unflushed write: its bytes, and which of its logical blocks a later
// durable request (FUA write, write_zeroes, discard) covered.
struct FaultDevice::Pending {
  std::uint64_t request = 0;
  std::uint64_t offset = 0;
  std::uint8_t flags = 0;
  std::uint16_t tag = 0;
  std::vector<std::uint8_t> data;
  std::vector<bool> covered;  // per logical block; empty: none
};

namespace {

// SplitMix64 (Steele, Lea, Flood 2014): a fixed sequence on every platform,
// unlike the distributions of <random>.
std::uint64_t splitmix64(std::uint64_t& state) noexcept {
  std::uint64_t z = (state += 0x9E3779B97F4A7C15ull);
  z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
  z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
  return z ^ (z >> 31);
}

}  // namespace

FaultDevice::FaultDevice(std::unique_ptr<BlockDevice> inner, FaultPlan plan)
    : owned_(std::move(inner)), inner_(owned_.get()), plan_(plan) {}

FaultDevice::FaultDevice(BlockDevice& inner, FaultPlan plan) : inner_(&inner), plan_(plan) {}

FaultDevice::~FaultDevice() { drain(*this); }

void FaultDevice::set_plan(const FaultPlan& plan, bool reset_counter) noexcept {
  plan_ = plan;
  if (reset_counter) counter_ = 0;
  if (!plan_.drop_unflushed) {
    // Leaving write-back mode: what is cached becomes durable now.
    (void)write_back();
  }
}

void FaultDevice::reset_counters() noexcept {
  counter_ = 0;
  failed_ = 0;
  submitted_ = 0;
}

std::uint64_t FaultDevice::unflushed_bytes() const noexcept {
  return static_cast<std::uint64_t>(latest_.size()) * inner_->info().logical_block_size;
}

std::vector<UnflushedWrite> FaultDevice::unflushed_writes() const {
  std::vector<UnflushedWrite> out;
  out.reserve(pending_.size());
  for (const Pending& w : pending_)
    out.push_back({w.request, w.offset, w.data.size(), w.flags, w.tag, {w.data.data(), w.data.size()}});
  return out;
}

std::vector<KeptPart> FaultDevice::crash_units(CrashUnit unit) const {
  std::vector<KeptPart> out;
  const std::uint64_t step = unit == CrashUnit::block ? 4096 : kSectorSize;
  for (std::uint64_t i = 0; i < pending_.size(); ++i) {
    const Pending& w = pending_[static_cast<std::size_t>(i)];
    const std::uint64_t len = w.data.size();
    if (unit == CrashUnit::request) {
      out.push_back({i, 0, len});
      continue;
    }
    // Pieces cut at device offsets that are multiples of `step`.
    std::uint64_t at = 0;
    while (at < len) {
      const std::uint64_t dev_off = w.offset + at;
      const std::uint64_t next = std::min(len, (dev_off / step + 1) * step - w.offset);
      out.push_back({i, at, next - at});
      at = next;
    }
  }
  return out;
}

void FaultDevice::clear_cache() noexcept {
  latest_.clear();
  pending_.clear();
}

void FaultDevice::power_cut() noexcept { clear_cache(); }

Status FaultDevice::power_cut_keep(std::span<const KeptPart> keep) {
  // Check every part first: a refused cut changes nothing.
  std::vector<KeptPart> parts;
  try {
    parts.reserve(keep.size());
    for (KeptPart p : keep) {
      if (p.write >= pending_.size())
        return make_error(Errc::invalid_argument, "power cut: unflushed write " + std::to_string(p.write) +
                                                      " does not exist (" + std::to_string(pending_.size()) +
                                                      " unflushed)");
      const std::uint64_t len = pending_[static_cast<std::size_t>(p.write)].data.size();
      if (p.length == KeptPart::kWhole && p.offset <= len) p.length = len - p.offset;
      if (p.offset % kSectorSize != 0 || p.length % kSectorSize != 0 || p.offset > len || p.length > len - p.offset)
        return make_error(Errc::invalid_argument,
                          "power cut: part [" + std::to_string(p.offset) + ", +" + std::to_string(p.length) +
                              ") of unflushed write " + std::to_string(p.write) + " (" + std::to_string(len) +
                              " bytes) is not whole 512-byte sectors inside it");
      if (p.length != 0) parts.push_back(p);
    }
  } catch (const std::bad_alloc&) {
    return make_error(Errc::no_space, "power cut: out of memory");
  }
  std::sort(parts.begin(), parts.end(), [](const KeptPart& a, const KeptPart& b) {
    return a.write != b.write ? a.write < b.write : a.offset < b.offset;
  });
  Status result;
  for (const KeptPart& p : parts) {
    result = apply_part(pending_[static_cast<std::size_t>(p.write)], p.offset, p.offset + p.length);
    if (!result) break;
  }
  clear_cache();
  return result;
}

Result<std::vector<KeptPart>> FaultDevice::power_cut_random(std::uint64_t seed, CrashUnit unit,
                                                            std::uint32_t keep_percent) {
  if (keep_percent > 100)
    return make_error(Errc::invalid_argument, "power cut: keep_percent " + std::to_string(keep_percent) + " is over 100");
  std::vector<KeptPart> kept;
  try {
    std::uint64_t state = seed;
    for (const KeptPart& u : crash_units(unit))
      if (splitmix64(state) % 100 < keep_percent) kept.push_back(u);
  } catch (const std::bad_alloc&) {
    return make_error(Errc::no_space, "power cut: out of memory");
  }
  F2FSCORE_TRY(power_cut_keep(kept));
  return kept;
}

Status FaultDevice::power_cut_torn(std::uint64_t write, std::uint64_t sectors) {
  if (write >= pending_.size())
    return make_error(Errc::invalid_argument, "power cut: unflushed write " + std::to_string(write) +
                                                  " does not exist (" + std::to_string(pending_.size()) +
                                                  " unflushed)");
  const std::uint64_t len = pending_[static_cast<std::size_t>(write)].data.size();
  if (sectors > len / kSectorSize)
    return make_error(Errc::invalid_argument, "power cut: " + std::to_string(sectors) + " sectors of unflushed write " +
                                                  std::to_string(write) + " of " + std::to_string(len) + " bytes");
  std::vector<KeptPart> parts;
  for (std::uint64_t i = 0; i < write; ++i) parts.push_back({i, 0, KeptPart::kWhole});
  parts.push_back({write, 0, sectors * kSectorSize});
  return power_cut_keep(parts);
}

Status FaultDevice::apply_part(const Pending& w, std::uint64_t from, std::uint64_t to) {
  // One logical block at a time: a part that covers only sectors of a
  // larger logical block is merged into what the device below holds.
  const DeviceInfo& di = inner_->info();
  const std::uint64_t lbs = di.logical_block_size;
  const std::size_t align = di.buffer_alignment > 1 ? di.buffer_alignment : 64;
  void* raw = detail::aligned_alloc_bytes(align, static_cast<std::size_t>(lbs));
  if (raw == nullptr) return make_error(Errc::no_space, "power cut: out of memory");
  std::unique_ptr<void, void (*)(void*)> hold(raw, &detail::aligned_free);
  auto* buf = static_cast<std::uint8_t*>(raw);
  const auto n = static_cast<std::size_t>(lbs);
  std::uint64_t at = from;
  while (at < to) {
    const std::uint64_t blk = (w.offset + at) / lbs * lbs;  // device offset of the logical block
    const std::uint64_t b = std::min(to, blk + lbs - w.offset);
    const std::uint64_t k = (blk - w.offset) / lbs;         // the write starts at a logical block
    if (w.covered.empty() || !w.covered[static_cast<std::size_t>(k)]) {
      if (b - at != lbs) F2FSCORE_TRY(read_at(*inner_, blk, {buf, n}));
      std::memcpy(buf + (w.offset + at - blk), w.data.data() + at, static_cast<std::size_t>(b - at));
      F2FSCORE_TRY(write_at(*inner_, blk, {buf, n}));
    }
    at = b;
  }
  return {};
}

void FaultDevice::finish(IoRequest& req) noexcept { ready_.push(req); }

void FaultDevice::submit(IoRequest& req) noexcept {
  req.status = Errc::ok;
  req.sys_errno = 0;
  req.transferred = 0;
  const std::uint64_t request = submitted_++;
  const bool counted = (plan_.ops & io_op_bit(req.op)) != 0;
  const std::uint64_t n = counted ? counter_++ : FaultPlan::kNever;
  const DeviceInfo& di = inner_->info();
  if (counted && (n == plan_.fail_request || n >= plan_.fail_after)) {
    ++failed_;
    req.status = plan_.error;
    req.sys_errno = plan_.sys_errno;
    return finish(req);
  }
  const Errc check = check_request(di, req);
  if (check != Errc::ok) {
    req.status = check;
    return finish(req);
  }
  if (counted && n == plan_.short_request && (req.op == IoOp::read || req.op == IoOp::write)) {
    // Move the first half of the blocks (at least none), then stop short.
    const std::uint64_t lbs = di.logical_block_size;
    const std::uint64_t part = (req.length / lbs / 2) * lbs;
    const bool cached = req.op == IoOp::write && plan_.drop_unflushed && (req.flags & io_flag::fua) == 0;
    if (part > 0 && cached) {
      // The part written goes to the volatile cache like any write.
      IoRequest view = req;
      view.length = part;
      try {
        forget_discarded(req.offset, part);
        cache_write(view, request);
      } catch (const std::bad_alloc&) {
        req.status = Errc::no_space;
        return finish(req);
      }
    } else if (part > 0) {
      // Synchronously on the device below: its callbacks only queue ours.
      auto* p = static_cast<std::uint8_t*>(req.buf);
      const auto len = static_cast<std::size_t>(part);
      Status st = req.op == IoOp::read ? read_at(*inner_, req.offset, {p, len}, req.tag)
                                       : write_at(*inner_, req.offset, {p, len}, req.tag);
      if (!st) {
        req.status = st.error().code;
        return finish(req);
      }
      if (req.op == IoOp::read) {
        IoRequest view = req;
        view.length = part;
        patch_read(view);
      } else {
        try {
          forget_discarded(req.offset, part);
          drop_cached(req.offset, part);  // the part is durable
        } catch (const std::bad_alloc&) {
          req.status = Errc::no_space;
          return finish(req);
        }
      }
    }
    ++failed_;
    req.transferred = part;
    req.status = Errc::short_io;
    return finish(req);
  }
  try {
    switch (req.op) {
      case IoOp::write:
        forget_discarded(req.offset, req.length);
        if (plan_.drop_unflushed && (req.flags & io_flag::fua) == 0) {
          cache_write(req, request);
          req.transferred = req.length;
          return finish(req);
        }
        drop_cached(req.offset, req.length);  // a FUA write supersedes what is cached
        break;
      case IoOp::flush:
        if (plan_.drop_unflushed) {
          const Errc e = write_back();
          if (e != Errc::ok) {
            req.status = e;
            return finish(req);
          }
        }
        break;
      case IoOp::discard:
        drop_cached(req.offset, req.length);
        if (plan_.garbage_after_discard && req.length > 0) {
          auto& end = discarded_[req.offset];
          end = std::max(end, req.offset + req.length);
        }
        break;
      case IoOp::write_zeroes:
        drop_cached(req.offset, req.length);
        forget_discarded(req.offset, req.length);
        break;
      case IoOp::read:
        break;
    }
  } catch (const std::bad_alloc&) {
    req.status = Errc::no_space;
    return finish(req);
  }
  // Forward through a shadow request so the caller's request (and its
  // scratch space) stays untouched.
  Shadow* s = free_shadows_;
  if (s != nullptr) {
    free_shadows_ = s->next_free;
  } else {
    try {
      shadows_.push_back(std::make_unique<Shadow>());
    } catch (const std::bad_alloc&) {
      req.status = Errc::no_space;
      return finish(req);
    }
    s = shadows_.back().get();
    s->dev = this;
  }
  s->outer = &req;
  s->inner = detail::forwarded_request(req, &FaultDevice::on_inner_done, s);
  ++forwarded_;
  inner_->submit(s->inner);
}

void FaultDevice::on_inner_done(IoRequest& inner) noexcept {
  auto* s = static_cast<Shadow*>(inner.user);
  FaultDevice* d = s->dev;
  IoRequest& req = *s->outer;
  detail::take_outcome(req, inner);
  s->next_free = d->free_shadows_;
  d->free_shadows_ = s;
  --d->forwarded_;
  if (req.op == IoOp::read && req.ok()) d->patch_read(req);
  d->finish(req);
}

void FaultDevice::patch_read(IoRequest& req) noexcept {
  auto* buf = static_cast<std::uint8_t*>(req.buf);
  const std::uint64_t end = req.offset + req.length;
  // Garbage for discarded ranges: a pattern that is neither zeroes nor
  // plausible old data.
  if (!discarded_.empty()) {
    auto it = discarded_.upper_bound(req.offset);
    if (it != discarded_.begin()) --it;
    for (; it != discarded_.end() && it->first < end; ++it) {
      const std::uint64_t a = std::max(it->first, req.offset), b = std::min(it->second, end);
      for (std::uint64_t o = a; o < b; ++o)
        buf[o - req.offset] = static_cast<std::uint8_t>(0xA5 ^ (o * 0x9E3779B1u >> 7));
    }
  }
  // Writes still in the volatile cache are what the caller must see.
  if (!latest_.empty()) {
    const auto lbs = static_cast<std::size_t>(inner_->info().logical_block_size);
    for (auto it = latest_.lower_bound(req.offset); it != latest_.end() && it->first < end; ++it)
      std::memcpy(buf + (it->first - req.offset), it->second, lbs);
  }
}

void FaultDevice::forget_discarded(std::uint64_t off, std::uint64_t len) {
  if (discarded_.empty() || len == 0) return;
  const std::uint64_t end = off + len;
  auto it = discarded_.upper_bound(off);
  if (it != discarded_.begin()) --it;
  while (it != discarded_.end() && it->first < end) {
    const std::uint64_t a = it->first, b = it->second;
    if (b <= off) { ++it; continue; }
    it = discarded_.erase(it);
    if (a < off) discarded_[a] = off;
    if (b > end) discarded_[end] = b;
  }
}

void FaultDevice::cache_write(const IoRequest& req, std::uint64_t request) {
  const std::uint64_t lbs = inner_->info().logical_block_size;
  const auto* src = static_cast<const std::uint8_t*>(req.buf);
  Pending w;
  w.request = request;
  w.offset = req.offset;
  w.flags = req.flags;
  w.tag = req.tag;
  w.data.assign(src, src + req.length);
  // The map's pointers stay valid when pending_ grows: a moved vector keeps
  // its buffer. Reserve first so that a failure leaves both unchanged.
  pending_.reserve(pending_.size() + 1);
  const std::uint8_t* bytes = w.data.data();
  for (std::uint64_t o = 0; o < req.length; o += lbs) latest_[req.offset + o] = bytes + o;
  pending_.push_back(std::move(w));
}

void FaultDevice::drop_cached(std::uint64_t off, std::uint64_t len) {
  if (pending_.empty() || len == 0) return;
  latest_.erase(latest_.lower_bound(off), latest_.lower_bound(off + len));
  // Cached writes under a durable request: a later power cut that keeps
  // them must not write their old bytes over it.
  const std::uint64_t lbs = inner_->info().logical_block_size;
  const std::uint64_t end = off + len;
  for (Pending& w : pending_) {
    const std::uint64_t wend = w.offset + w.data.size();
    if (wend <= off || w.offset >= end) continue;
    if (w.covered.empty()) w.covered.assign(static_cast<std::size_t>(w.data.size() / lbs), false);
    const std::uint64_t a = std::max(off, w.offset), b = std::min(end, wend);
    for (std::uint64_t o = a; o < b; o += lbs) w.covered[static_cast<std::size_t>((o - w.offset) / lbs)] = true;
  }
}

Errc FaultDevice::write_back() noexcept {
  if (latest_.empty()) {
    pending_.clear();
    return Errc::ok;
  }
  const DeviceInfo& di = inner_->info();
  const std::uint64_t lbs = di.logical_block_size;
  const std::size_t align = di.buffer_alignment > 1 ? di.buffer_alignment : 64;
  constexpr std::uint64_t kRun = 1 << 20;
  void* raw = detail::aligned_alloc_bytes(align, kRun);
  if (raw == nullptr) return Errc::no_space;
  std::unique_ptr<void, void (*)(void*)> hold(raw, &detail::aligned_free);
  auto* run = static_cast<std::uint8_t*>(raw);
  Errc result = Errc::ok;
  auto it = latest_.begin();
  while (it != latest_.end() && result == Errc::ok) {
    const std::uint64_t start = it->first;
    std::uint64_t len = 0;
    while (it != latest_.end() && it->first == start + len && len + lbs <= kRun) {
      std::memcpy(run + len, it->second, static_cast<std::size_t>(lbs));
      len += lbs;
      ++it;
    }
    auto st = write_at(*inner_, start, {run, static_cast<std::size_t>(len)});
    if (!st) result = st.error().code;
  }
  if (result == Errc::ok) clear_cache();
  return result;
}

std::size_t FaultDevice::poll(bool wait) noexcept {
  if (!ready_.empty()) wait = false;
  if (inner_->in_flight() > 0) inner_->poll(wait);
  return ready_.run();
}

}  // namespace f2fscore
