#include "io/align_device.hpp"

#include <cstring>
#include <new>

#include "util/aligned.hpp"

namespace f2fscore::detail {

namespace {
// The caller's request and the aligned one sent in its place. For a read,
// the caller's bytes start `skip` bytes into the copy.
struct Bounce {
  IoRequest inner;
  IoRequest* outer = nullptr;
  std::uint64_t skip = 0;
};

void bounce_done(IoRequest& r) noexcept {
  auto* b = static_cast<Bounce*>(r.user);
  IoRequest& o = *b->outer;
  o.status = r.status;
  o.sys_errno = r.sys_errno;
  o.transferred = 0;
  if (o.op == IoOp::read) {
    if (r.ok()) {
      std::memcpy(o.buf, static_cast<const std::uint8_t*>(r.buf) + b->skip, static_cast<std::size_t>(o.length));
      o.transferred = o.length;
    }
  } else {
    o.transferred = r.transferred;
  }
  aligned_free(r.buf);
  delete b;
  if (o.on_complete != nullptr) o.on_complete(o);
}
}  // namespace

AlignDevice::AlignDevice(BlockDevice& inner) noexcept
    : inner_(inner), align_(inner.info().buffer_alignment), block_(inner.info().logical_block_size) {}

void AlignDevice::submit(IoRequest& req) noexcept {
  if (align_ <= 1 || (req.op != IoOp::read && req.op != IoOp::write) || req.buf == nullptr ||
      req.length == 0) [[likely]]
    return inner_.submit(req);
  const bool buf_ok = reinterpret_cast<std::uintptr_t>(req.buf) % align_ == 0;
  const bool range_ok = req.offset % block_ == 0 && req.length % block_ == 0;
  if (buf_ok && range_ok) return inner_.submit(req);
  if (req.op == IoOp::write && !range_ok) return inner_.submit(req);  // the device refuses it
  // The covering range: for a read of a misaligned range, whole blocks
  // around it, clipped to the device (a range past its end is the device's
  // to refuse).
  const std::uint64_t size = inner_.info().size_bytes;
  std::uint64_t start = req.offset;
  std::uint64_t end = req.offset + req.length;
  if (req.op == IoOp::read && !range_ok && end >= req.offset && end <= size) {
    start = req.offset / block_ * block_;
    end = (end + block_ - 1) / block_ * block_;
    if (end > size) end = size;
  }
  auto* b = new (std::nothrow) Bounce;
  void* mem = b != nullptr ? aligned_alloc_bytes(align_, static_cast<std::size_t>(end - start)) : nullptr;
  if (mem == nullptr) {
    delete b;
    return inner_.submit(req);
  }
  b->outer = &req;
  b->skip = req.offset - start;
  b->inner = IoRequest{};
  b->inner.op = req.op;
  b->inner.flags = req.flags;
  b->inner.tag = req.tag;
  b->inner.offset = start;
  b->inner.length = end - start;
  b->inner.buf = mem;
  b->inner.on_complete = bounce_done;
  b->inner.user = b;
  if (req.op == IoOp::write) std::memcpy(mem, req.buf, static_cast<std::size_t>(req.length));
  ++bounced_;
  inner_.submit(b->inner);
}

}  // namespace f2fscore::detail
