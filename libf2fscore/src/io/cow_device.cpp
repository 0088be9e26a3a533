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
          cow.own_[(o + k) / kBlockSize] = std::move(blk);
        }
      }
      pos = b;
    }
  } catch (const std::bad_alloc&) {
    return make_error(Errc::no_space, "cow device: out of memory copying " + di.name);
  }
  return made;
}

// Blocks frozen by clone(): read by every device cloned since, never written.
struct CowDevice::Layer {
  std::shared_ptr<const Layer> parent;
  BlockMap blocks;
  std::uint32_t depth = 1;  // layers down to the bottom, this one included
};

namespace {
constexpr std::uint32_t kMaxLayers = 16;
constexpr std::uint64_t kNoBlock = ~std::uint64_t{0};
}  // namespace

std::unique_ptr<CowDevice> CowDevice::clone(std::string name) {
  if (!own_.empty()) {
    auto layer = std::make_shared<Layer>();
    layer->parent = frozen_;
    layer->depth = frozen_ ? frozen_->depth + 1 : 1;
    layer->blocks = std::move(own_);
    own_.clear();
    frozen_ = std::move(layer);
    if (frozen_->depth > kMaxLayers) {
      // Merge the chain into one layer (the top one wins): reads stay a few
      // lookups deep. Devices cloned earlier keep the chain they read.
      try {
        auto flat = std::make_shared<Layer>();
        for (const Layer* l = frozen_.get(); l != nullptr; l = l->parent.get())
          for (const auto& [idx, blk] : l->blocks) flat->blocks.emplace(idx, blk);  // keeps the upper one
        // At the bottom, a zero entry hides only the base.
        if (!base_) std::erase_if(flat->blocks, [](const auto& kv) { return kv.second == nullptr; });
        frozen_ = std::move(flat);
      } catch (const std::bad_alloc&) {
        // Keep the chain: deeper, still correct.
      }
    }
  }
  DeviceInfo di = info_;
  di.name = name.empty() ? info_.name + "+clone" : std::move(name);
  std::unique_ptr<CowDevice> c(new CowDevice(base_, di));
  c->frozen_ = frozen_;
  return c;
}

const std::shared_ptr<CowDevice::Block>* CowDevice::find(std::uint64_t idx) const noexcept {
  auto it = own_.find(idx);
  if (it != own_.end()) return &it->second;
  for (const Layer* l = frozen_.get(); l != nullptr; l = l->parent.get()) {
    auto j = l->blocks.find(idx);
    if (j != l->blocks.end()) return &j->second;
  }
  return nullptr;
}

std::uint64_t CowDevice::next_entry(std::uint64_t idx) const noexcept {
  std::uint64_t best = kNoBlock;
  auto it = own_.lower_bound(idx);
  if (it != own_.end()) best = it->first;
  for (const Layer* l = frozen_.get(); l != nullptr; l = l->parent.get()) {
    auto j = l->blocks.lower_bound(idx);
    if (j != l->blocks.end()) best = std::min(best, j->first);
  }
  return best;
}

std::uint64_t CowDevice::stored_blocks() const {
  std::map<std::uint64_t, bool> seen;  // the upper-most entry of each block decides
  auto add = [&](const BlockMap& m) {
    for (const auto& [idx, blk] : m) seen.emplace(idx, blk != nullptr);
  };
  add(own_);
  for (const Layer* l = frozen_.get(); l != nullptr; l = l->parent.get()) add(l->blocks);
  std::uint64_t n = 0;
  for (const auto& [idx, data] : seen) n += data;
  return n;
}

std::uint64_t CowDevice::private_blocks() const noexcept {
  std::uint64_t n = 0;
  for (const auto& [idx, blk] : own_) n += blk != nullptr;
  return n;
}

std::uint32_t CowDevice::layers() const noexcept { return frozen_ ? frozen_->depth : 0; }

std::uint32_t CowDevice::block_bytes(std::uint64_t idx) const noexcept {
  const std::uint64_t start = idx * kBlockSize;
  return static_cast<std::uint32_t>(std::min<std::uint64_t>(kBlockSize, info_.size_bytes - start));
}

std::uint64_t CowDevice::next_data(std::uint64_t offset, std::uint64_t end) noexcept {
  if (base_) return offset;
  std::uint64_t idx = offset / kBlockSize;
  while (true) {
    idx = next_entry(idx);
    if (idx == kNoBlock || idx * kBlockSize >= end) return end;
    const auto* e = find(idx);
    if (e != nullptr && *e != nullptr) return std::min(std::max(offset, idx * kBlockSize), end);
    ++idx;
  }
}

std::uint64_t CowDevice::next_hole(std::uint64_t offset, std::uint64_t end) noexcept {
  if (base_) return end;
  for (std::uint64_t idx = offset / kBlockSize; idx * kBlockSize < end; ++idx) {
    const auto* e = find(idx);
    if (e == nullptr || *e == nullptr) return std::min(std::max(offset, idx * kBlockSize), end);
  }
  return end;
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
  // Runs of blocks that no layer holds are read from the base at once.
  std::uint64_t run_off = 0, run_len = 0;
  std::uint8_t* run_dst = nullptr;
  auto flush_run = [&]() -> Status {
    if (run_len == 0) return {};
    const std::uint64_t n = run_len;
    run_len = 0;
    return read_base(run_off, run_dst, n);
  };
  while (len > 0) {
    const std::uint64_t idx = off / kBlockSize, in = off % kBlockSize;
    const std::uint64_t n = std::min<std::uint64_t>(len, kBlockSize - in);
    const auto* e = find(idx);
    if (e != nullptr || !base_) {
      F2FSCORE_TRY(flush_run());
      if (e != nullptr && *e != nullptr) std::memcpy(dst, (*e)->bytes + in, static_cast<std::size_t>(n));
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
  auto it = own_.find(idx);
  if (it != own_.end() && it->second != nullptr) return it->second.get();  // own blocks are never shared
  auto blk = std::make_shared<Block>();  // zeroes
  if (!whole && it == own_.end()) {
    const auto* e = find(idx);  // in a layer
    if (e != nullptr) {
      if (*e != nullptr) std::memcpy(blk->bytes, (*e)->bytes, kBlockSize);
    } else if (base_) {
      F2FSCORE_TRY(read_base(idx * kBlockSize, blk->bytes, block_bytes(idx)));
    }
  }
  Block* p = blk.get();
  own_.insert_or_assign(idx, std::move(blk));
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
    const auto* e = find(idx);
    const bool data = e != nullptr ? *e != nullptr : base_ != nullptr;  // may read other than zeroes
    if (in == 0 && n == block_bytes(idx)) {
      // A zero entry hides data below (a layer's or the base's); over
      // nothing, no entry is needed.
      own_.erase(idx);
      const auto* below = find(idx);
      if (below != nullptr ? *below != nullptr : base_ != nullptr) own_.emplace(idx, nullptr);
    } else if (data) {
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
