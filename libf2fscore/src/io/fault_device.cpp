// Failure injection over any BlockDevice. See fault_device.hpp.
#include "f2fscore/fault_device.hpp"

#include <algorithm>
#include <cstring>

#include "util/aligned.hpp"

namespace f2fscore {

// A request forwarded to the inner device on behalf of a caller's request.
struct FaultDevice::Shadow {
  IoRequest inner;
  IoRequest* outer = nullptr;
  FaultDevice* dev = nullptr;
  Shadow* next_free = nullptr;
};

FaultDevice::FaultDevice(std::unique_ptr<BlockDevice> inner, FaultPlan plan)
    : inner_(std::move(inner)), plan_(plan) {}

FaultDevice::~FaultDevice() { drain(*this); }

void FaultDevice::set_plan(const FaultPlan& plan, bool reset_counter) noexcept {
  plan_ = plan;
  if (reset_counter) counter_ = 0;
  if (!plan_.drop_unflushed) {
    // Leaving write-back mode: what is cached becomes durable now.
    (void)write_back();
  }
}

std::uint64_t FaultDevice::unflushed_bytes() const noexcept {
  return static_cast<std::uint64_t>(cache_.size()) * inner_->info().logical_block_size;
}

void FaultDevice::power_cut() noexcept { cache_.clear(); }

void FaultDevice::finish(IoRequest& req) noexcept { ready_.push(req); }

void FaultDevice::submit(IoRequest& req) noexcept {
  req.status = Errc::ok;
  req.sys_errno = 0;
  req.transferred = 0;
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
    if (part > 0) {
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
          cache_write(req);
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
  s->inner = IoRequest{};
  s->inner.op = req.op;
  s->inner.flags = req.flags;
  s->inner.tag = req.tag;
  s->inner.offset = req.offset;
  s->inner.length = req.length;
  s->inner.buf = req.buf;
  s->inner.on_complete = &FaultDevice::on_inner_done;
  s->inner.user = s;
  ++forwarded_;
  inner_->submit(s->inner);
}

void FaultDevice::on_inner_done(IoRequest& inner) noexcept {
  auto* s = static_cast<Shadow*>(inner.user);
  FaultDevice* d = s->dev;
  IoRequest& req = *s->outer;
  req.status = inner.status;
  req.sys_errno = inner.sys_errno;
  req.transferred = inner.transferred;
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
  if (!cache_.empty()) {
    for (auto it = cache_.lower_bound(req.offset); it != cache_.end() && it->first < end; ++it)
      std::memcpy(buf + (it->first - req.offset), it->second.data(), it->second.size());
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

void FaultDevice::cache_write(const IoRequest& req) {
  const std::uint64_t lbs = inner_->info().logical_block_size;
  const auto* src = static_cast<const std::uint8_t*>(req.buf);
  for (std::uint64_t o = 0; o < req.length; o += lbs) {
    auto& blk = cache_[req.offset + o];
    blk.assign(src + o, src + o + lbs);
  }
}

void FaultDevice::drop_cached(std::uint64_t off, std::uint64_t len) {
  if (cache_.empty()) return;
  cache_.erase(cache_.lower_bound(off), cache_.lower_bound(off + len));
}

Errc FaultDevice::write_back() noexcept {
  if (cache_.empty()) return Errc::ok;
  const DeviceInfo& di = inner_->info();
  const std::uint64_t lbs = di.logical_block_size;
  const std::size_t align = di.buffer_alignment > 1 ? di.buffer_alignment : 64;
  constexpr std::uint64_t kRun = 1 << 20;
  void* raw = detail::aligned_alloc_bytes(align, kRun);
  if (raw == nullptr) return Errc::no_space;
  std::unique_ptr<void, void (*)(void*)> hold(raw, &detail::aligned_free);
  auto* run = static_cast<std::uint8_t*>(raw);
  Errc result = Errc::ok;
  auto it = cache_.begin();
  while (it != cache_.end() && result == Errc::ok) {
    const std::uint64_t start = it->first;
    std::uint64_t len = 0;
    while (it != cache_.end() && it->first == start + len && len + lbs <= kRun) {
      std::memcpy(run + len, it->second.data(), it->second.size());
      len += lbs;
      ++it;
    }
    auto st = write_at(*inner_, start, {run, static_cast<std::size_t>(len)});
    if (!st) result = st.error().code;
  }
  if (result == Errc::ok) cache_.clear();
  return result;
}

std::size_t FaultDevice::poll(bool wait) noexcept {
  if (!ready_.empty()) wait = false;
  if (inner_->in_flight() > 0) inner_->poll(wait);
  return ready_.run();
}

}  // namespace f2fscore
