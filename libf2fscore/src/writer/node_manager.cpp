// The writer's node manager: NAT entries as the data needs them (see
// node_manager.hpp).
#include "writer/node_manager.hpp"

#include <algorithm>
#include <cstring>

#include "f2fscore/disk/checkpoint.hpp"
#include "f2fscore/endian.hpp"
#include "f2fscore/volume.hpp"
#include "meta/meta_internal.hpp"

namespace f2fscore::wr {

using namespace disk;
using meta::fmt;

NodeManager::NodeManager() = default;
NodeManager::~NodeManager() = default;

Status NodeManager::load(Volume& vol, BlockDevice& dev, nid_t first_nid) {
  vol_ = &vol;
  dev_ = &dev;
  meta::MetaView mv(vol, dev);
  F2FSCORE_TRY(mv.load());
  const Geometry& g = vol.geometry();
  nat_blocks_ = g.nat_blocks();
  max_nid_ = g.max_nid();
  cursor_ = first_nid;
  journal_.clear();
  for (std::uint32_t i = 0; i < mv.nat_journal.n_entries.get(); ++i)
    journal_[mv.nat_journal.nat_j.entries[i].nid.get()] = mv.nat_journal.nat_j.entries[i].ne;
  committed();  // the cached entries are the checkpoint's now
  error_.clear();
  // nat_bits (f2fs_init_nat_bits()): the full and empty bitmaps after the
  // 8-byte header at the end of the CP pack's segment, only when the header
  // carries this checkpoint's version and CRC.
  bits_ok_ = false;
  full_bits_.clear();
  empty_bits_.clear();
  if (vol.nat_bits_valid()) {
    const NatBitsLayout nb = g.nat_bits_layout();
    std::vector<std::uint8_t> bits(static_cast<std::size_t>(nb.blocks) * kBlockSize);
    F2FSCORE_TRY(mv.read(g.nat_bits_addr(vol.open_report().checkpoint_pack), bits.data(), nb.blocks));
    if (load_le64(bits.data(), 0) == nat_bits_header(mv.cp_blocks.data()) && nb.full_offset + nb.bitmap_bytes <= bits.size() &&
        nb.empty_offset + nb.bitmap_bytes <= bits.size()) {
      const auto full = bits.begin() + static_cast<std::ptrdiff_t>(nb.full_offset);
      const auto empty = bits.begin() + static_cast<std::ptrdiff_t>(nb.empty_offset);
      full_bits_.assign(full, full + nb.bitmap_bytes);
      empty_bits_.assign(empty, empty + nb.bitmap_bytes);
      bits_ok_ = true;
    }
  }
  return {};
}

Status NodeManager::error() const {
  if (error_.empty()) return {};
  return make_error(Errc::io, error_);
}

bool NodeManager::nat_block_full(std::uint32_t b) const {
  return bits_ok_ && b / 8 < full_bits_.size() && test_bit_le(full_bits_.data(), b);
}
bool NodeManager::nat_block_empty(std::uint32_t b) const {
  return bits_ok_ && b / 8 < empty_bits_.size() && test_bit_le(empty_bits_.data(), b);
}

Result<NodeManager::NatBlock*> NodeManager::block(std::uint32_t b) {
  if (auto it = cache_.find(b); it != cache_.end()) {
    it->second->used = ++clock_;
    return it->second.get();
  }
  if (b >= nat_blocks_) return make_error(Errc::out_of_range, fmt("writer: NAT block %llu past the NAT", b));
  std::vector<std::uint8_t> raw(kBlockSize);
  F2FSCORE_TRY(read_at(*dev_, vol_->geometry().current_nat_addr(b, vol_->version_bitmaps()) * kBlockSize,
                   std::span<std::uint8_t>(raw.data(), raw.size())));
  ++blocks_read_;
  auto p = std::make_unique<NatBlock>();
  const auto* entries = reinterpret_cast<const NatEntry*>(raw.data());
  for (std::uint32_t i = 0; i < kNatEntryPerBlock; ++i) {
    const nid_t n = b * kNatEntryPerBlock + i;
    NatEntry e = entries[i];
    if (auto it = journal_.find(n); it != journal_.end()) e = it->second;
    p->e[i] = {e.ino.get(), e.block_addr.get(), e.version};
  }
  p->used = ++clock_;
  NatBlock* r = p.get();
  cache_.emplace(b, std::move(p));
  return r;
}

const NatMem& NodeManager::get(nid_t n) {
  static const NatMem kFree{};
  if (n >= max_nid_) return kFree;
  auto b = block(Geometry::nat_block_of(n));
  if (!b) {
    if (error_.empty()) error_ = b.error().to_string();
    return kFree;
  }
  return (*b)->e[n % kNatEntryPerBlock];
}

NatMem& NodeManager::set(nid_t n) {
  static NatMem scratch{};
  if (n >= max_nid_) {
    if (error_.empty()) error_ = fmt("writer: nid %llu changed past the NAT", n);
    scratch = {};
    return scratch;
  }
  auto b = block(Geometry::nat_block_of(n));
  if (!b) {
    if (error_.empty()) error_ = b.error().to_string();
    scratch = {};
    return scratch;
  }
  NatBlock& blk = **b;
  const std::uint32_t i = n % kNatEntryPerBlock;
  if (!blk.changed.test(i)) {
    blk.changed.set(i);
    ++changed_count_;
  }
  if (!blk.dirty) ++dirty_blocks_;
  blk.dirty = true;
  return blk.e[i];
}

Result<nid_t> NodeManager::alloc(nid_t reserved, nid_t node_ino, nid_t meta_ino) {
  if (nat_blocks_ == 0) return make_error(Errc::no_space, "writer: no free nid");
  if (cursor_ >= max_nid_) cursor_ = 0;
  const std::uint32_t b0 = cursor_ / kNatEntryPerBlock, o0 = cursor_ % kNatEntryPerBlock;
  for (std::uint32_t i = 0; i <= nat_blocks_; ++i) {
    const std::uint32_t b = (b0 + i) % nat_blocks_;
    const bool cached = cache_.count(b) != 0;
    if (!cached && nat_block_full(b)) continue;
    const std::uint32_t from = i == 0 ? o0 : 0, to = i == nat_blocks_ ? o0 : kNatEntryPerBlock;
    if (!cached && nat_block_empty(b)) {
      // Every entry of the block is free on disk (a nid freed since the
      // checkpoint has its block cached); the NAT journal may still name
      // one of them in use.
      for (std::uint32_t off = from; off < to; ++off) {
        const nid_t n = b * kNatEntryPerBlock + off;
        if (n == 0 || n >= max_nid_ || n == node_ino || n == meta_ino || n <= reserved) continue;
        if (auto it = journal_.find(n); it != journal_.end() && (it->second.block_addr.get() || it->second.ino.get()))
          continue;
        cursor_ = n + 1;
        return n;
      }
      continue;
    }
    auto blk = block(b);
    if (!blk) return make_error(blk.error());
    for (std::uint32_t off = from; off < to; ++off) {
      const nid_t n = b * kNatEntryPerBlock + off;
      if (n == 0 || n >= max_nid_ || n == node_ino || n == meta_ino || n <= reserved) continue;
      const NatMem& e = (*blk)->e[off];
      if (e.addr == kNullAddr && e.ino == 0 && !freed_.count(n)) {
        cursor_ = n + 1;
        return n;
      }
    }
  }
  return make_error(Errc::no_space, "writer: no free nid");
}

// The changed entries are in the NAT blocks marked dirty, which shrink()
// never evicts.
std::vector<meta::NatUse> NodeManager::changed_entries() const {
  std::vector<meta::NatUse> out;
  out.reserve(changed_count_);
  for (const auto& [b, blk] : cache_) {
    if (!blk->dirty) continue;
    for (std::uint32_t i = 0; i < kNatEntryPerBlock; ++i) {
      if (!blk->changed.test(i)) continue;
      const NatMem& e = blk->e[i];
      out.push_back({b * kNatEntryPerBlock + i, e.ino, e.addr, e.version});
    }
  }
  std::sort(out.begin(), out.end(), [](const meta::NatUse& a, const meta::NatUse& b) { return a.nid < b.nid; });
  return out;
}

std::vector<std::pair<std::uint32_t, std::uint32_t>> NodeManager::changed_block_usage() const {
  std::vector<std::pair<std::uint32_t, std::uint32_t>> out;
  for (const auto& [b, blk] : cache_) {
    if (!blk->dirty || blk->changed.none()) continue;
    std::uint32_t used = 0;
    for (std::uint32_t i = 0; i < kNatEntryPerBlock; ++i)
      if (blk->e[i].addr != kNullAddr || (b == 0 && i == 0)) ++used;
    out.push_back({b, used});
  }
  std::sort(out.begin(), out.end());
  return out;
}

void NodeManager::committed() {
  freed_.clear();
  for (auto& [b, blk] : cache_) {
    blk->dirty = false;
    blk->changed.reset();
  }
  dirty_blocks_ = 0;
  changed_count_ = 0;
}

// ---- Node page cache ---------------------------------------------------------

Result<Node*> NodeManager::read_page(BlockDevice& dev, nid_t n, block_t addr, std::uint16_t tag) {
  auto p = std::make_unique<NodePage>();
  F2FSCORE_TRY(read_at(dev, static_cast<std::uint64_t>(addr) * kBlockSize,
                   std::span<std::uint8_t>(reinterpret_cast<std::uint8_t*>(&p->n), kBlockSize), tag));
  if (p->n.footer.nid.get() != n)
    return make_error(Errc::corrupt, fmt("writer: block %llu is not node %llu (footer says %llu)", addr, n, p->n.footer.nid.get()));
  p->used = ++clock_;
  Node* r = &p->n;
  pages_[n] = std::move(p);
  return r;
}

Node* NodeManager::new_page(nid_t n) {
  auto p = std::make_unique<NodePage>();
  p->used = ++clock_;
  p->charge.known = true;
  Node* r = &p->n;
  pages_[n] = std::move(p);
  dirty_.insert(n);
  return r;
}

void NodeManager::drop_page(nid_t n) {
  pages_.erase(n);
  dirty_.erase(n);
}

std::vector<nid_t> NodeManager::dirty_nids() const {
  std::vector<nid_t> out(dirty_.begin(), dirty_.end());
  std::sort(out.begin(), out.end());
  return out;
}

namespace {
// Keys of the `count` least recently used of `cand` ((used, key) pairs).
template <class K>
void oldest_first(std::vector<std::pair<std::uint64_t, K>>& cand, std::size_t count) {
  if (count < cand.size())
    std::nth_element(cand.begin(), cand.begin() + static_cast<std::ptrdiff_t>(count), cand.end());
  cand.resize(std::min(count, cand.size()));
}
}  // namespace

void NodeManager::shrink() {
  if (pages_.size() > page_bound_) {
    const std::size_t target = page_bound_ - page_bound_ / 8;
    std::vector<std::pair<std::uint64_t, nid_t>> cand;
    cand.reserve(pages_.size());
    for (const auto& [n, p] : pages_)
      if (!dirty_.count(n)) cand.push_back({p->used, n});
    oldest_first(cand, pages_.size() - target);
    for (const auto& c : cand) pages_.erase(c.second);
    pages_evicted_ += cand.size();
  }
  if (cache_.size() > nat_block_bound_) {
    const std::size_t target = nat_block_bound_ - nat_block_bound_ / 8;
    std::vector<std::pair<std::uint64_t, std::uint32_t>> cand;
    cand.reserve(cache_.size());
    for (const auto& [b, blk] : cache_)
      if (!blk->dirty) cand.push_back({blk->used, b});
    oldest_first(cand, cache_.size() - target);
    for (const auto& c : cand) cache_.erase(c.second);
    blocks_evicted_ += cand.size();
  }
}

}  // namespace f2fscore::wr
