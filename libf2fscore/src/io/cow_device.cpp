// Copy-on-write devices: 4 KiB blocks shared between clones, over an
// optional base device that is only read. See cow_device.hpp.
#include "f2fscore/cow_device.hpp"

#include <algorithm>
#include <cstring>

#include "util/aligned.hpp"

namespace f2fscore {

namespace {

bool valid_lbs(std::uint32_t lbs) noexcept {
  return lbs == 512 || lbs == 1024 || lbs == 2048 || lbs == 4096;
}

struct AlignedBytes {
  void* p = nullptr;
  AlignedBytes(std::size_t align, std::size_t n) : p(detail::aligned_alloc_bytes(align, n)) {}
  ~AlignedBytes() { detail::aligned_free(p); }
  AlignedBytes(const AlignedBytes&) = delete;
  AlignedBytes& operator=(const AlignedBytes&) = delete;
  std::uint8_t* data() const noexcept { return static_cast<std::uint8_t*>(p); }
};

}  // namespace

CowDevice::CowDevice(std::shared_ptr<BlockDevice> base, const DeviceInfo& info)
    : base_(std::move(base)), info_(info) {}

CowDevice::~CowDevice() { drain(*this); }

Result<std::unique_ptr<CowDevice>> CowDevice::memory(std::uint64_t size_bytes, std::uint32_t logical_block_size,
                                                     std::string name) {
  if (!valid_lbs(logical_block_size))
    return make_error(Errc::invalid_argument, "cow device: logical block size " + std::to_string(logical_block_size) +
                                                  " is not 512, 1024, 2048 or 4096");
  if (size_bytes % logical_block_size != 0)
    return make_error(Errc::invalid_argument, "cow device: size " + std::to_string(size_bytes) +
                                                  " is not a multiple of the logical block size " +
                                                  std::to_string(logical_block_size));
  DeviceInfo di;
  di.size_bytes = size_bytes;
  di.logical_block_size = logical_block_size;
  di.kind = DeviceKind::memory;
  di.cheap_write_zeroes = true;
  di.name = std::move(name);
  return std::unique_ptr<CowDevice>(new CowDevice(nullptr, di));
}

Result<std::unique_ptr<CowDevice>> CowDevice::overlay(std::shared_ptr<BlockDevice> base, std::string name) {
  if (!base) return make_error(Errc::invalid_argument, "cow device: no base device");
  const DeviceInfo& bi = base->info();
  if (!valid_lbs(bi.logical_block_size) || bi.size_bytes % bi.logical_block_size != 0)
    return make_error(Errc::invalid_argument, "cow device: the base's logical block size " +
                                                  std::to_string(bi.logical_block_size) + " does not divide 4096");
  DeviceInfo di;
  di.size_bytes = bi.size_bytes;
  di.logical_block_size = bi.logical_block_size;
  di.buffer_alignment = bi.buffer_alignment;  // reads go to the base with the caller's buffer
  di.kind = DeviceKind::memory;
  di.cheap_write_zeroes = true;
  di.name = name.empty() ? "cow over " + bi.name : std::move(name);
  return std::unique_ptr<CowDevice>(new CowDevice(std::move(base), di));
}

Result<std::unique_ptr<CowDevice>> CowDevice::overlay(BlockDevice& base, std::string name) {
  // A shared_ptr that owns nothing (the aliasing constructor).
  return overlay(std::shared_ptr<BlockDevice>(std::shared_ptr<void>(), &base), std::move(name));
}

Result<std::unique_ptr<CowDevice>> CowDevice::copy_of(BlockDevice& dev, std::string name) {
  const DeviceInfo& di = dev.info();
  auto made = memory(di.size_bytes, di.logical_block_size, name.empty() ? "snapshot of " + di.name : std::move(name));
  if (!made) return made;
  CowDevice& cow = **made;
  constexpr std::uint64_t kRun = 1 << 20;
  const std::size_t align = std::max<std::size_t>(di.buffer_alignment, 64);
  AlignedBytes run(align, kRun);
  if (run.data() == nullptr) return make_error(Errc::no_space, "cow device: out of memory");
  const std::uint64_t size = di.size_bytes;
  std::uint64_t pos = 0;
  try {
    while (pos < size) {
      std::uint64_t a = dev.next_data(pos, size);
      if (a >= size) break;
      std::uint64_t b = dev.next_hole(a, size);
      a = a / kBlockSize * kBlockSize;
      b = std::min(size, (b + kBlockSize - 1) / kBlockSize * kBlockSize);
      if (b <= a) b = std::min(size, a + kBlockSize);
      for (std::uint64_t o = a; o < b; o += kRun) {
        const std::uint64_t n = std::min(kRun, b - o);
        F2FSCORE_TRY(read_at(dev, o, {run.data(), static_cast<std::size_t>(n)}));
        for (std::uint64_t k = 0; k < n; k += kBlockSize) {
          const auto len = static_cast<std::size_t>(std::min<std::uint64_t>(kBlockSize, n - k));
          const std::uint8_t* p = run.data() + k;
          if (std::all_of(p, p + len, [](std::uint8_t x) { return x == 0; })) continue;
          auto blk = std::make_shared<Block>();
          std::memcpy(blk->bytes, p, len);
          cow.blocks_[(o + k) / kBlockSize] = std::move(blk);
        }
      }
      pos = b;
    }
  } catch (const std::bad_alloc&) {
    return make_error(Errc::no_space, "cow device: out of memory copying " + di.name);
  }
  return made;
}

std::unique_ptr<CowDevice> CowDevice::clone(std::string name) const {
  DeviceInfo di = info_;
  di.name = name.empty() ? info_.name + "+clone" : std::move(name);
  std::unique_ptr<CowDevice> c(new CowDevice(base_, di));
  c->blocks_ = blocks_;  // shares every block: each is copied before either device writes it
  return c;
}

std::uint64_t CowDevice::stored_blocks() const noexcept {
  std::uint64_t n = 0;
  for (const auto& [idx, blk] : blocks_) n += blk != nullptr;
  return n;
}

std::uint64_t CowDevice::private_blocks() const noexcept {
  std::uint64_t n = 0;
  for (const auto& [idx, blk] : blocks_) n += blk != nullptr && blk.use_count() == 1;
  return n;
}

std::uint32_t CowDevice::block_bytes(std::uint64_t idx) const noexcept {
  const std::uint64_t start = idx * kBlockSize;
  return static_cast<std::uint32_t>(std::min<std::uint64_t>(kBlockSize, info_.size_bytes - start));
}

std::uint64_t CowDevice::next_data(std::uint64_t offset, std::uint64_t end) noexcept {
  if (base_) return offset;
  for (auto it = blocks_.lower_bound(offset / kBlockSize); it != blocks_.end(); ++it) {
    if (it->second == nullptr) continue;
    return std::min(std::max(offset, it->first * kBlockSize), end);
  }
  return end;
}

std::uint64_t CowDevice::next_hole(std::uint64_t offset, std::uint64_t end) noexcept {
  if (base_) return end;
  std::uint64_t idx = offset / kBlockSize;
  for (auto it = blocks_.lower_bound(idx); it != blocks_.end() && it->first == idx && it->second != nullptr; ++it)
    ++idx;
  return std::min(std::max(offset, idx * kBlockSize), end);
}

void CowDevice::submit(IoRequest& req) noexcept {
  req.transferred = 0;
  req.sys_errno = 0;
  req.status = check_request(info_, req);
  if (req.status == Errc::ok) {
    try {
      execute(req);
    } catch (const std::bad_alloc&) {
      req.status = Errc::no_space;
    }
  }
  done_.push(req);
}

std::size_t CowDevice::poll(bool /*wait*/) noexcept { return done_.run(); }

void CowDevice::execute(IoRequest& req) {
  Status st;
  switch (req.op) {
    case IoOp::read: st = read_range(req.offset, static_cast<std::uint8_t*>(req.buf), req.length); break;
    case IoOp::write: st = write_piece(req.offset, static_cast<const std::uint8_t*>(req.buf), req.length); break;
    case IoOp::flush: break;  // nothing below is ever written
    case IoOp::discard:
    case IoOp::write_zeroes: st = zero_piece(req.offset, req.length); break;
  }
  if (!st) {
    req.status = st.error().code;
    req.sys_errno = st.error().sys_errno;
    return;
  }
  if (req.op == IoOp::read || req.op == IoOp::write) req.transferred = req.length;
}

Status CowDevice::read_base(std::uint64_t off, std::uint8_t* dst, std::uint64_t len) {
  const std::size_t align = info_.buffer_alignment;
  if (align <= 1 || reinterpret_cast<std::uintptr_t>(dst) % align == 0)
    return read_at(*base_, off, {dst, static_cast<std::size_t>(len)});
  AlignedBytes bounce(align, static_cast<std::size_t>(len));
  if (bounce.data() == nullptr) return make_error(Errc::no_space, "cow device: out of memory");
  F2FSCORE_TRY(read_at(*base_, off, {bounce.data(), static_cast<std::size_t>(len)}));
  std::memcpy(dst, bounce.data(), static_cast<std::size_t>(len));
  return {};
}

Status CowDevice::read_range(std::uint64_t off, std::uint8_t* dst, std::uint64_t len) {
  // Runs of blocks the device does not hold are read from the base at once.
  std::uint64_t run_off = 0, run_len = 0;
  std::uint8_t* run_dst = nullptr;
  auto flush_run = [&]() -> Status {
    if (run_len == 0) return {};
    const std::uint64_t n = run_len;
    run_len = 0;
    return read_base(run_off, run_dst, n);
  };
  auto it = blocks_.lower_bound(off / kBlockSize);
  while (len > 0) {
    const std::uint64_t idx = off / kBlockSize, in = off % kBlockSize;
    const std::uint64_t n = std::min<std::uint64_t>(len, kBlockSize - in);
    while (it != blocks_.end() && it->first < idx) ++it;
    const bool held = it != blocks_.end() && it->first == idx;
    if (held || !base_) {
      F2FSCORE_TRY(flush_run());
      if (held && it->second != nullptr) std::memcpy(dst, it->second->bytes + in, static_cast<std::size_t>(n));
      else std::memset(dst, 0, static_cast<std::size_t>(n));
    } else if (run_len != 0 && run_off + run_len == off) {
      run_len += n;
    } else {
      F2FSCORE_TRY(flush_run());
      run_off = off;
      run_dst = dst;
      run_len = n;
    }
    off += n;
    dst += n;
    len -= n;
  }
  return flush_run();
}

Result<CowDevice::Block*> CowDevice::writable_block(std::uint64_t idx, bool whole) {
  auto it = blocks_.find(idx);
  if (it != blocks_.end() && it->second != nullptr && it->second.use_count() == 1) return it->second.get();
  auto blk = std::make_shared<Block>();  // zeroes
  if (!whole) {
    if (it != blocks_.end()) {
      if (it->second != nullptr) std::memcpy(blk->bytes, it->second->bytes, kBlockSize);
    } else if (base_) {
      F2FSCORE_TRY(read_base(idx * kBlockSize, blk->bytes, block_bytes(idx)));
    }
  }
  Block* p = blk.get();
  if (it != blocks_.end()) it->second = std::move(blk);
  else blocks_.emplace(idx, std::move(blk));
  return p;
}

Status CowDevice::write_piece(std::uint64_t off, const std::uint8_t* src, std::uint64_t len) {
  while (len > 0) {
    const std::uint64_t idx = off / kBlockSize, in = off % kBlockSize;
    const std::uint64_t n = std::min<std::uint64_t>(len, kBlockSize - in);
    auto blk = writable_block(idx, in == 0 && n == block_bytes(idx));
    if (!blk) return make_error(blk.error());
    std::memcpy((*blk)->bytes + in, src, static_cast<std::size_t>(n));
    off += n;
    src += n;
    len -= n;
  }
  return {};
}

Status CowDevice::zero_piece(std::uint64_t off, std::uint64_t len) {
  while (len > 0) {
    const std::uint64_t idx = off / kBlockSize, in = off % kBlockSize;
    const std::uint64_t n = std::min<std::uint64_t>(len, kBlockSize - in);
    auto it = blocks_.find(idx);
    if (in == 0 && n == block_bytes(idx)) {
      if (base_) blocks_.insert_or_assign(idx, nullptr);  // zeroes hide the base's block
      else if (it != blocks_.end()) blocks_.erase(it);
    } else if (it != blocks_.end() ? it->second != nullptr : base_ != nullptr) {
      // Part of a block that may hold data: zero that part only.
      auto blk = writable_block(idx, false);
      if (!blk) return make_error(blk.error());
      std::memset((*blk)->bytes + in, 0, static_cast<std::size_t>(n));
    }
    off += n;
    len -= n;
  }
  return {};
}

}  // namespace f2fscore
