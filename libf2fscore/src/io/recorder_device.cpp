// The request recorder and its replay. See recorder_device.hpp.
#include "f2fscore/recorder_device.hpp"

#include <cstring>

#include "io/forward.hpp"
#include "util/aligned.hpp"

namespace f2fscore {

// A request forwarded to the inner device on behalf of a caller's request.
struct RecorderDevice::Shadow {
  IoRequest inner;
  IoRequest* outer = nullptr;
  RecorderDevice* dev = nullptr;
  Shadow* next_free = nullptr;
  std::uint64_t entry = 0;  // index into log_, or kUnlogged
  std::uint64_t generation = 0;
};

namespace {
constexpr std::uint64_t kUnlogged = ~std::uint64_t{0};
}

RecorderDevice::RecorderDevice(std::unique_ptr<BlockDevice> inner, bool record_reads)
    : owned_(std::move(inner)), inner_(owned_.get()), record_reads_(record_reads) {}

RecorderDevice::RecorderDevice(BlockDevice& inner, bool record_reads)
    : inner_(&inner), record_reads_(record_reads) {}

RecorderDevice::~RecorderDevice() { drain(*this); }

void RecorderDevice::clear() noexcept {
  log_.clear();
  logged_bytes_ = 0;
  missed_ = 0;
  ++generation_;
}

void RecorderDevice::submit(IoRequest& req) noexcept {
  Shadow* s = free_shadows_;
  if (s != nullptr) {
    free_shadows_ = s->next_free;
  } else {
    try {
      shadows_.push_back(std::make_unique<Shadow>());
    } catch (const std::bad_alloc&) {
      req.status = Errc::no_space;
      req.sys_errno = 0;
      req.transferred = 0;
      ready_.push(req);
      return;
    }
    s = shadows_.back().get();
    s->dev = this;
  }
  s->entry = kUnlogged;
  s->generation = generation_;
  if (req.op != IoOp::read || record_reads_) {
    try {
      RecordedRequest r;
      r.index = log_.size();
      r.op = req.op;
      r.flags = req.flags;
      r.tag = req.tag;
      if (req.op != IoOp::flush) {
        r.offset = req.offset;
        r.length = req.length;
      }
      if (req.op == IoOp::write && req.buf != nullptr) {
        const auto* p = static_cast<const std::uint8_t*>(req.buf);
        r.data.assign(p, p + req.length);
      }
      log_.push_back(std::move(r));
      s->entry = log_.back().index;
      logged_bytes_ += log_.back().data.size();
    } catch (const std::bad_alloc&) {
      ++missed_;
    }
  }
  s->outer = &req;
  s->inner = detail::forwarded_request(req, &RecorderDevice::on_inner_done, s);
  ++forwarded_;
  inner_->submit(s->inner);
}

void RecorderDevice::on_inner_done(IoRequest& inner) noexcept {
  auto* s = static_cast<Shadow*>(inner.user);
  RecorderDevice* d = s->dev;
  IoRequest& req = *s->outer;
  detail::take_outcome(req, inner);
  if (s->entry != kUnlogged && s->generation == d->generation_ && s->entry < d->log_.size()) {
    RecordedRequest& r = d->log_[static_cast<std::size_t>(s->entry)];
    r.completed = true;
    r.status = inner.status;
    r.transferred = inner.transferred;
  }
  s->next_free = d->free_shadows_;
  d->free_shadows_ = s;
  --d->forwarded_;
  d->ready_.push(req);
}

std::size_t RecorderDevice::poll(bool wait) noexcept {
  if (!ready_.empty()) wait = false;
  if (inner_->in_flight() > 0) inner_->poll(wait);
  return ready_.run();
}

Status replay(BlockDevice& dev, std::span<const RecordedRequest> log) {
  const DeviceInfo& di = dev.info();
  const std::size_t align = di.buffer_alignment > 1 ? di.buffer_alignment : 64;
  void* raw = nullptr;
  std::size_t raw_size = 0;
  std::unique_ptr<void, void (*)(void*)> hold(nullptr, &detail::aligned_free);
  for (const RecordedRequest& r : log) {
    if (!r.completed || r.status != Errc::ok) continue;
    switch (r.op) {
      case IoOp::read: break;
      case IoOp::write: {
        if (r.data.size() != r.length)
          return make_error(Errc::invalid_argument, "replay: request " + std::to_string(r.index) + " holds " +
                                                        std::to_string(r.data.size()) + " bytes for a write of " +
                                                        std::to_string(r.length));
        const std::uint8_t* p = r.data.data();
        if (di.buffer_alignment > 1) {
          // A copy aligned for a direct-I/O device.
          if (raw_size < r.data.size()) {
            hold.reset();
            raw = detail::aligned_alloc_bytes(align, r.data.size());
            if (raw == nullptr) return make_error(Errc::no_space, "replay: out of memory");
            hold.reset(raw);
            raw_size = r.data.size();
          }
          std::memcpy(raw, r.data.data(), r.data.size());
          p = static_cast<const std::uint8_t*>(raw);
        }
        IoRequest q;  // as recorded, FUA flag included
        q.op = IoOp::write;
        q.flags = r.flags;
        q.tag = r.tag;
        q.offset = r.offset;
        q.length = r.length;
        q.buf = const_cast<std::uint8_t*>(p);
        bool done = false;
        q.user = &done;
        q.on_complete = [](IoRequest& x) noexcept { *static_cast<bool*>(x.user) = true; };
        dev.submit(q);
        while (!done) dev.poll(true);
        if (!q.ok()) return make_error(q.error());
        if (q.transferred != q.length) {
          q.status = Errc::short_io;
          return make_error(q.error());
        }
        break;
      }
      case IoOp::flush: F2FSCORE_TRY(flush(dev)); break;
      case IoOp::discard: F2FSCORE_TRY(discard(dev, r.offset, r.length)); break;
      case IoOp::write_zeroes: F2FSCORE_TRY(write_zeroes(dev, r.offset, r.length)); break;
    }
  }
  return {};
}

}  // namespace f2fscore
