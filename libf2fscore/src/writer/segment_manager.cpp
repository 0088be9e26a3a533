// The writer's segment manager: SIT state in memory that follows the data
// (see segment_manager.hpp).
#include "writer/segment_manager.hpp"

#include <algorithm>
#include <bit>
#include <cstring>

#include "f2fscore/disk/sit.hpp"
#include "f2fscore/endian.hpp"
#include "f2fscore/volume.hpp"
#include "meta/meta_internal.hpp"

namespace f2fscore::wr {

using namespace disk;
using meta::fmt;

namespace {
bool node_kind(std::uint8_t t) { return t >= 3 && t < 6; }
std::uint32_t popcount(const SegBitmap& m) {
  std::uint32_t n = 0;
  for (std::uint8_t b : m) n += static_cast<std::uint32_t>(std::popcount(b));
  return n;
}
}  // namespace

Status SegmentManager::load(Volume& vol, BlockDevice& dev, std::uint64_t main_blk, std::uint32_t main_segs,
                            std::uint32_t segs_per_sec) {
  main_blk_ = main_blk;
  main_segs_ = main_segs;
  segs_per_sec_ = std::max<std::uint32_t>(1, segs_per_sec);
  valid_.assign(main_segs, 0);
  type_.assign(main_segs, 1);
  mtime_.assign(main_segs, 0);
  free_.assign(main_segs, true);
  partial_.clear();
  changed_.clear();
  dirty_sum_.clear();
  total_valid_ = total_node_ = 0;
  free_count_ = empty_count_ = main_segs;
  held_.clear();
  meta::MetaView mv(vol, dev);
  F2FSCORE_TRY(mv.load());
  std::unordered_map<std::uint32_t, const SitEntry*> journal;
  for (std::uint32_t i = 0; i < mv.sit_journal.n_entries.get(); ++i)
    journal[mv.sit_journal.sit_j.entries[i].segno.get()] = &mv.sit_journal.sit_j.entries[i].se;
  const Geometry& g = vol.geometry();
  const VersionBitmaps& bm = vol.version_bitmaps();
  const std::uint32_t nblk = g.sit_blocks_used();
  if (nblk > g.sit_blocks()) return make_error(Errc::corrupt, "writer: the SIT is smaller than the main area");
  // Runs of SIT blocks whose current copy is the same are read together.
  constexpr std::uint32_t kBatch = 256;
  std::vector<std::uint8_t> buf(static_cast<std::size_t>(kBatch) * kBlockSize);
  for (std::uint32_t b = 0; b < nblk;) {
    const int copy = bm.sit_copy(b);
    std::uint32_t n = 1;
    while (n < kBatch && b + n < nblk && bm.sit_copy(b + n) == copy) ++n;
    F2FSCORE_TRY(mv.read(g.sit_addr(b, copy), buf.data(), n));
    for (std::uint32_t k = 0; k < n; ++k) {
      const auto* entries = reinterpret_cast<const SitEntry*>(buf.data() + static_cast<std::size_t>(k) * kBlockSize);
      for (std::uint32_t i = 0; i < kSitEntryPerBlock; ++i) {
        const std::uint32_t s = (b + k) * kSitEntryPerBlock + i;
        if (s >= main_segs) break;
        const SitEntry* e = &entries[i];
        if (auto it = journal.find(s); it != journal.end()) e = it->second;
        const std::uint16_t v = sit_vblocks(*e);
        const std::uint8_t t = sit_type(*e);
        type_[s] = t < 6 ? t : 1;
        mtime_[s] = e->mtime.get();
        if (v > kSeg)
          return make_error(Errc::corrupt, fmt("writer: SIT entry of segment %llu claims %llu valid blocks; run fsck", s, v));
        if (v == 0 && e->vblocks.get() == 0 && e->mtime.get() == 0) continue;
        SegBitmap m;
        std::memcpy(m.data(), e->valid_map, m.size());
        if (popcount(m) != v)
          return make_error(Errc::corrupt, fmt("writer: SIT entry of segment %llu counts %llu valid blocks, its map %llu "
                                               "(check_block_count() in fs/f2fs/segment.h); run fsck",
                                               s, v, popcount(m)));
        valid_[s] = v;
        if (v) {
          free_[s] = false;
          --free_count_;
          --empty_count_;
        }
        total_valid_ += v;
        if (node_kind(type_[s])) total_node_ += v;
        if (v > 0 && v < kSeg) partial_.emplace(s, m);
      }
    }
    b += n;
  }
  // Journal entries of segments past the SIT blocks read are ignored by the
  // kernel as corrupt; here they cannot occur (nblk covers main_segs).
  return {};
}

void SegmentManager::set_type(std::uint32_t seg, std::uint8_t t) {
  if (node_kind(type_[seg]) != node_kind(t)) {
    if (node_kind(t)) total_node_ += valid_[seg];
    else total_node_ -= valid_[seg];
  }
  type_[seg] = t;
  mark_changed(seg);
}

void SegmentManager::set_free(std::uint32_t seg, bool f) {
  if (free_[seg] == f) return;
  free_[seg] = f;
  if (f) ++free_count_;
  else --free_count_;
}

void SegmentManager::take(std::uint32_t seg) {
  set_free(seg, false);
  mark_changed(seg);
}

void SegmentManager::hold(std::uint32_t seg) {
  // A segment not free already has valid blocks (a change that empties it
  // marks it changed) or is changed or held: nothing to remember.
  if (!free_[seg]) return;
  set_free(seg, false);
  held_.push_back(seg);
}

std::vector<std::uint32_t> SegmentManager::prefree(const std::array<meta::LogPosition, 6>& logs) const {
  std::vector<std::uint32_t> out;
  auto consider = [&](std::uint32_t s) {
    if (s >= main_segs_ || valid_[s] || free_[s]) return;
    for (const auto& l : logs)
      if (l.segno == s) return;
    out.push_back(s);
  };
  for (const auto& [s, c] : changed_) consider(s);
  for (std::uint32_t s : held_) consider(s);
  std::sort(out.begin(), out.end());
  out.erase(std::unique(out.begin(), out.end()), out.end());
  return out;
}

bool SegmentManager::is_valid(std::uint32_t seg, std::uint32_t off) const {
  const std::uint16_t v = valid_[seg];
  if (v == 0) return false;
  if (v == kSeg) return true;
  auto it = partial_.find(seg);
  return it != partial_.end() && test_bit_msb(it->second.data(), off);
}

SegBitmap SegmentManager::bitmap(std::uint32_t seg) const {
  SegBitmap m{};
  const std::uint16_t v = valid_[seg];
  if (v == kSeg) m.fill(0xFF);
  else if (v) {
    auto it = partial_.find(seg);
    if (it != partial_.end()) m = it->second;
  }
  return m;
}

void SegmentManager::ensure_ckpt_entry(std::uint32_t seg) {
  if (changed_.count(seg)) return;
  CkptSeg c;
  c.map = bitmap(seg);
  c.count = valid_[seg];
  changed_.emplace(seg, c);
}

void SegmentManager::mark_changed(std::uint32_t seg) { ensure_ckpt_entry(seg); }

bool SegmentManager::ckpt_valid(std::uint32_t seg, std::uint32_t off) const {
  auto it = changed_.find(seg);
  if (it == changed_.end()) return is_valid(seg, off);
  return test_bit_msb(it->second.map.data(), off);
}

std::uint16_t SegmentManager::ckpt_valid_count(std::uint32_t seg) const {
  auto it = changed_.find(seg);
  return it == changed_.end() ? valid_[seg] : it->second.count;
}

void SegmentManager::mark_ckpt_valid(std::uint32_t seg, std::uint32_t off) {
  ensure_ckpt_entry(seg);
  auto& c = changed_[seg];
  if (!test_bit_msb(c.map.data(), off)) {
    set_bit_msb(c.map.data(), off);
    ++c.count;
  }
}

bool SegmentManager::set_valid(std::uint32_t seg, std::uint32_t off) {
  if (is_valid(seg, off)) return false;
  ensure_ckpt_entry(seg);
  SegBitmap m = bitmap(seg);
  set_bit_msb(m.data(), off);
  if (valid_[seg]++ == 0) --empty_count_;
  ++total_valid_;
  if (node_kind(type_[seg])) ++total_node_;
  if (valid_[seg] == kSeg) partial_.erase(seg);
  else partial_[seg] = m;
  return true;
}

bool SegmentManager::clear_valid(std::uint32_t seg, std::uint32_t off) {
  if (!is_valid(seg, off)) return false;
  ensure_ckpt_entry(seg);
  SegBitmap m = bitmap(seg);
  clear_bit_msb(m.data(), off);
  if (--valid_[seg] == 0) ++empty_count_;
  --total_valid_;
  if (node_kind(type_[seg])) --total_node_;
  if (valid_[seg] == 0) partial_.erase(seg);
  else partial_[seg] = m;
  return true;
}

std::uint32_t SegmentManager::next_free_blkoff(std::uint32_t seg, std::uint32_t from) const {
  while (from < kSeg && (ckpt_valid(seg, from) || is_valid(seg, from))) ++from;
  return from;
}

std::vector<std::uint32_t> SegmentManager::changed_segments() const {
  std::vector<std::uint32_t> out;
  out.reserve(changed_.size());
  for (const auto& [s, c] : changed_) out.push_back(s);
  std::sort(out.begin(), out.end());
  return out;
}

Result<SummaryBlock*> SegmentManager::dirty_summary(Volume& vol, std::uint32_t seg, bool fresh) {
  if (auto it = dirty_sum_.find(seg); it != dirty_sum_.end()) return it->second.get();
  auto p = std::make_unique<SummaryBlock>();
  if (fresh) {
    std::memset(p.get(), 0, sizeof *p);
  } else {
    auto s = vol.summary(seg);
    if (!s) return make_error(s.error());
    *p = *s;
  }
  p->footer.entry_type = node_kind(type_[seg]) ? kSumTypeNode : kSumTypeData;
  SummaryBlock* r = p.get();
  dirty_sum_.emplace(seg, std::move(p));
  mark_changed(seg);
  return r;
}

const SummaryBlock* SegmentManager::find_dirty_summary(std::uint32_t seg) const {
  auto it = dirty_sum_.find(seg);
  return it == dirty_sum_.end() ? nullptr : it->second.get();
}

Result<SummaryBlock> SegmentManager::summary(Volume& vol, std::uint32_t seg) const {
  if (const SummaryBlock* d = find_dirty_summary(seg)) return *d;
  return vol.summary(seg);
}

void SegmentManager::reset_to(const std::vector<meta::BlockUse>& blocks) {
  struct Seg {
    SegBitmap map{};
    bool node = false, data = false;
  };
  std::unordered_map<std::uint32_t, Seg> segs;
  for (std::uint32_t s = 0; s < main_segs_; ++s)
    if (valid_[s]) segs[s];
  for (const auto& u : blocks) {
    if (u.blkaddr < main_blk_ || u.blkaddr >= main_blk_ + main_blocks()) continue;
    const std::uint64_t i = u.blkaddr - main_blk_;
    Seg& g = segs[static_cast<std::uint32_t>(i / kSeg)];
    set_bit_msb(g.map.data(), static_cast<std::size_t>(i % kSeg));
    (u.node ? g.node : g.data) = true;
  }
  partial_.clear();
  changed_.clear();
  dirty_sum_.clear();
  total_valid_ = total_node_ = 0;
  for (auto& [s, g] : segs) {
    const auto v = static_cast<std::uint16_t>(popcount(g.map));
    valid_[s] = v;
    if (g.node && !node_kind(type_[s])) type_[s] = 4;
    if (g.data && node_kind(type_[s])) type_[s] = 1;
    if (v > 0 && v < kSeg) partial_[s] = g.map;
    changed_[s] = {g.map, v};
    auto p = std::make_unique<SummaryBlock>();
    std::memset(p.get(), 0, sizeof *p);
    p->footer.entry_type = node_kind(type_[s]) ? kSumTypeNode : kSumTypeData;
    dirty_sum_.emplace(s, std::move(p));
  }
  for (const auto& u : blocks) {
    if (u.blkaddr < main_blk_ || u.blkaddr >= main_blk_ + main_blocks()) continue;
    const std::uint64_t i = u.blkaddr - main_blk_;
    Summary& e = dirty_sum_[static_cast<std::uint32_t>(i / kSeg)]->entries[i % kSeg];
    e.nid.set(u.nid);
    e.version = u.node ? 0 : u.version;
    e.ofs_in_node.set(u.node ? 0 : u.ofs_in_node);
  }
  free_count_ = empty_count_ = 0;
  held_.clear();
  for (std::uint32_t s = 0; s < main_segs_; ++s) {
    free_[s] = valid_[s] == 0;
    free_count_ += free_[s];
    empty_count_ += valid_[s] == 0;
    total_valid_ += valid_[s];
    if (node_kind(type_[s])) total_node_ += valid_[s];
  }
}

void SegmentManager::committed(const std::array<meta::LogPosition, 6>& logs) {
  for (const auto& [s, c] : changed_) set_free(s, valid_[s] == 0);
  for (std::uint32_t s : held_) set_free(s, valid_[s] == 0);
  held_.clear();
  for (const auto& l : logs)
    if (l.segno < main_segs_) hold(l.segno);
  changed_.clear();
  dirty_sum_.clear();
}

std::size_t SegmentManager::memory_bytes() const {
  return valid_.capacity() * 2 + type_.capacity() + mtime_.capacity() * 8 + free_.capacity() / 8 +
         partial_.size() * (sizeof(SegBitmap) + 32) + changed_.size() * (sizeof(CkptSeg) + 32) +
         dirty_sum_.size() * (sizeof(SummaryBlock) + 32);
}

}  // namespace f2fscore::wr
