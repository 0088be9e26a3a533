// The in-memory backend: sparse 64 KiB chunks, zeroes where never written.
#include <algorithm>
#include <cstring>
#include <memory>
#include <unordered_map>

#include "f2fscore/device.hpp"

namespace f2fscore {
namespace {

class MemoryDevice final : public BlockDevice {
 public:
  MemoryDevice(std::uint64_t size, std::uint32_t lbs, std::string name) {
    info_.size_bytes = size;
    info_.logical_block_size = lbs;
    info_.kind = DeviceKind::memory;
    info_.cheap_write_zeroes = true;
    info_.name = std::move(name);
  }

  const DeviceInfo& info() const noexcept override { return info_; }

  void submit(IoRequest& req) noexcept override {
    req.transferred = 0;
    req.sys_errno = 0;
    req.status = check_request(info_, req);
    if (req.status == Errc::ok) execute(req);
    done_.push(req);
  }

  std::size_t poll(bool /*wait*/) noexcept override { return done_.run(); }

  std::size_t in_flight() const noexcept override { return done_.size(); }

  // Chunks never written (or zeroed whole) are holes.
  std::uint64_t next_data(std::uint64_t offset, std::uint64_t end) noexcept override {
    for (std::uint64_t idx = offset / kChunk; idx * kChunk < end; ++idx)
      if (chunks_.count(idx)) return std::min(std::max(offset, idx * kChunk), end);
    return end;
  }
  std::uint64_t next_hole(std::uint64_t offset, std::uint64_t end) noexcept override {
    for (std::uint64_t idx = offset / kChunk; idx * kChunk < end; ++idx)
      if (!chunks_.count(idx)) return std::min(std::max(offset, idx * kChunk), end);
    return end;
  }

 private:
  static constexpr std::uint64_t kChunk = 64 * 1024;

  void execute(IoRequest& req) noexcept {
    try {
      switch (req.op) {
        case IoOp::read: copy_out(req.offset, static_cast<std::uint8_t*>(req.buf), req.length); break;
        case IoOp::write: copy_in(req.offset, static_cast<const std::uint8_t*>(req.buf), req.length); break;
        case IoOp::flush: break;
        case IoOp::discard:
        case IoOp::write_zeroes: zero(req.offset, req.length); break;
      }
      if (req.op == IoOp::read || req.op == IoOp::write) req.transferred = req.length;
    } catch (const std::bad_alloc&) {
      req.status = Errc::no_space;
    }
  }

  void copy_out(std::uint64_t off, std::uint8_t* dst, std::uint64_t len) const {
    while (len > 0) {
      const std::uint64_t idx = off / kChunk, in = off % kChunk;
      const auto n = static_cast<std::size_t>(std::min(len, kChunk - in));  // <= kChunk
      auto it = chunks_.find(idx);
      if (it == chunks_.end()) std::memset(dst, 0, n);
      else std::memcpy(dst, it->second.get() + in, n);
      off += n; dst += n; len -= n;
    }
  }

  void copy_in(std::uint64_t off, const std::uint8_t* src, std::uint64_t len) {
    while (len > 0) {
      const std::uint64_t idx = off / kChunk, in = off % kChunk;
      const auto n = static_cast<std::size_t>(std::min(len, kChunk - in));  // <= kChunk
      auto& c = chunks_[idx];
      if (!c) c = std::make_unique<std::uint8_t[]>(kChunk);  // value-initialised: zeroes
      std::memcpy(c.get() + in, src, n);
      off += n; src += n; len -= n;
    }
  }

  void zero(std::uint64_t off, std::uint64_t len) {
    while (len > 0) {
      const std::uint64_t idx = off / kChunk, in = off % kChunk;
      const auto n = static_cast<std::size_t>(std::min(len, kChunk - in));  // <= kChunk
      auto it = chunks_.find(idx);
      if (it != chunks_.end()) {
        if (n == kChunk) chunks_.erase(it);
        else std::memset(it->second.get() + in, 0, n);
      }
      off += n; len -= n;
    }
  }

  DeviceInfo info_;
  std::unordered_map<std::uint64_t, std::unique_ptr<std::uint8_t[]>> chunks_;
  CompletionQueue done_;
};

}  // namespace

std::unique_ptr<BlockDevice> make_memory_device(std::uint64_t size_bytes,
                                                std::uint32_t logical_block_size,
                                                std::string name) {
  return std::make_unique<MemoryDevice>(size_bytes, logical_block_size, std::move(name));
}

}  // namespace f2fscore
