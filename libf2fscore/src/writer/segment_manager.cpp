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

SegmentManager::SegChunk& SegmentManager::chunk(std::uint32_t seg) {
  auto& p = chunks_[seg / kChunkSegs];
  if (!p) p = std::make_unique<SegChunk>();
  return *p;
}

namespace {
bool all_zero(const std::uint8_t* p, std::size_t n) {
  for (std::size_t i = 0; i < n; ++i)
    if (p[i]) return false;
  return true;
}
}  // namespace

Status SegmentManager::load(Volume& vol, BlockDevice& dev, std::uint64_t main_blk, std::uint32_t main_segs,
                            std::uint32_t segs_per_sec, std::uint32_t secs_per_zone) {
  main_blk_ = main_blk;
  main_segs_ = main_segs;
  segs_per_sec_ = std::max<std::uint32_t>(1, segs_per_sec);
  secs_per_zone_ = std::max<std::uint32_t>(1, secs_per_zone);
  cursegs_ = {};
  victim_sec_ = kNoSeg;
  counts_ = {};
  chunks_.clear();
  chunks_.resize((static_cast<std::size_t>(main_segs) + kChunkSegs - 1) / kChunkSegs);
  reset_free();
  partial_.clear();
  changed_.clear();
  dirty_sum_.clear();
  total_valid_ = total_node_ = 0;
  held_.clear();
  meta::MetaView mv(vol, dev);
  F2FSCORE_TRY(mv.load());
  // The SIT journal (at most SIT_JOURNAL_ENTRIES entries) overrides the
  // entries of its segments.
  std::vector<std::pair<std::uint32_t, const SitEntry*>> journal;
  for (std::uint32_t i = 0; i < mv.sit_journal.n_entries.get() && i < kSitJournalEntries; ++i)
    journal.emplace_back(mv.sit_journal.sit_j.entries[i].segno.get(), &mv.sit_journal.sit_j.entries[i].se);
  const Geometry& g = vol.geometry();
  const VersionBitmaps& bm = vol.version_bitmaps();
  const std::uint32_t nblk = g.sit_blocks_used();
  if (nblk > g.sit_blocks()) return make_error(Errc::corrupt, "writer: the SIT is smaller than the main area");

  auto apply_entry = [&](std::uint32_t s, const SitEntry& e) -> Status {
    const std::uint16_t v = sit_vblocks(e);
    if (v > kSeg)
      return make_error(Errc::corrupt, fmt("writer: SIT entry of segment %llu claims %llu valid blocks; run f2fscore-fsck", s, v));
    if (v == 0 && e.vblocks.get() == 0 && e.mtime.get() == 0) return {};
    SegBitmap m;
    std::memcpy(m.data(), e.valid_map, m.size());
    if (popcount(m) != v)
      return make_error(Errc::corrupt, fmt("writer: SIT entry of segment %llu counts %llu valid blocks, its map %llu "
                                           "(check_block_count() in fs/f2fs/segment.h); run f2fscore-fsck",
                                           s, v, popcount(m)));
    const std::uint8_t t = sit_type(e);
    SegChunk& c = chunk(s);
    const std::uint32_t i = s % kChunkSegs;
    c.type[i] = t < 6 ? t : 1;
    c.mtime[i] = e.mtime.get();
    c.valid[i] = v;
    if (v) {
      set_free(s, false);
      --empty_count_;
    }
    total_valid_ += v;
    if (node_kind(c.type[i])) total_node_ += v;
    if (v > 0 && v < kSeg) partial_.emplace(s, m);
    return {};
  };
  // One SIT block's entries (`data` null: a block in a hole, all zero).
  // A block of zero entries with no journal entry changes nothing.
  static const SitEntry kZeroEntry{};
  auto apply_block = [&](std::uint32_t b, const std::uint8_t* data) -> Status {
    bool journaled = false;
    for (const auto& j : journal) journaled = journaled || j.first / kSitEntryPerBlock == b;
    if (!journaled && (data == nullptr || all_zero(data, kBlockSize))) return {};
    const auto* entries = reinterpret_cast<const SitEntry*>(data);
    for (std::uint32_t i = 0; i < kSitEntryPerBlock; ++i) {
      const std::uint32_t s = b * kSitEntryPerBlock + i;
      if (s >= main_segs) break;
      const SitEntry* e = data ? &entries[i] : &kZeroEntry;
      for (const auto& j : journal)
        if (j.first == s) e = j.second;
      F2FSCORE_TRY(apply_entry(s, *e));
    }
    return {};
  };

  // Runs of SIT blocks whose current copy is the same are read together;
  // the parts of a run the device reports in a hole are not read.
  constexpr std::uint32_t kBatch = 256;
  std::vector<std::uint8_t> buf(static_cast<std::size_t>(kBatch) * kBlockSize);
  for (std::uint32_t b = 0; b < nblk;) {
    const int copy = bm.sit_copy(b);
    std::uint32_t n = 1;
    while (n < kBatch && b + n < nblk && bm.sit_copy(b + n) == copy) ++n;
    const std::uint64_t addr = g.sit_addr(b, copy);
    const std::uint64_t lo = addr * kBlockSize, hi = (addr + n) * kBlockSize;
    for (std::uint32_t k = 0; k < n;) {
      const std::uint64_t pos = lo + static_cast<std::uint64_t>(k) * kBlockSize;
      const std::uint64_t d = std::min(std::max(dev.next_data(pos, hi), pos), hi);
      const auto dk = static_cast<std::uint32_t>((d - lo) / kBlockSize);
      for (; k < dk; ++k) F2FSCORE_TRY(apply_block(b + k, nullptr));
      if (k >= n) break;
      const std::uint64_t from = lo + static_cast<std::uint64_t>(k) * kBlockSize;
      const std::uint64_t h = std::min(dev.next_hole(from, hi), hi);
      auto hk = static_cast<std::uint32_t>((h - lo + kBlockSize - 1) / kBlockSize);
      hk = std::clamp<std::uint32_t>(hk, k + 1, n);
      F2FSCORE_TRY(mv.read(addr + k, buf.data(), hk - k));
      for (std::uint32_t j = k; j < hk; ++j)
        F2FSCORE_TRY(apply_block(b + j, buf.data() + static_cast<std::size_t>(j - k) * kBlockSize));
      k = hk;
    }
    b += n;
  }
  // Journal entries of segments past the SIT blocks read are ignored by the
  // kernel as corrupt; here they cannot occur (nblk covers main_segs).
  return {};
}

std::uint64_t SegmentManager::min_section_mtime() const {
  const std::uint32_t nsecs = main_segs_ / segs_per_sec_;
  if (nsecs == 0) return 0;
  // A section wholly inside a SIT block of zero entries has mean mtime 0,
  // the least possible.
  for (std::size_t i = 0; i < chunks_.size(); ++i) {
    if (chunks_[i]) continue;
    const auto first = static_cast<std::uint32_t>(i * kChunkSegs);
    const std::uint32_t sec = (first + segs_per_sec_ - 1) / segs_per_sec_;
    const std::uint64_t sec_end = static_cast<std::uint64_t>(sec + 1) * segs_per_sec_;
    if (sec < nsecs && sec_end <= first + kChunkSegs) return 0;
  }
  std::uint64_t best = ~std::uint64_t{0};
  for (std::uint32_t sec = 0; sec < nsecs && best; ++sec) {
    std::uint64_t m = 0;
    for (std::uint32_t s = sec * segs_per_sec_; s < (sec + 1) * segs_per_sec_; ++s) m += mtime(s);
    best = std::min(best, m / segs_per_sec_);
  }
  return best;
}

void SegmentManager::set_type(std::uint32_t seg, std::uint8_t t) {
  SegChunk& c = chunk(seg);
  const std::uint32_t i = seg % kChunkSegs;
  if (node_kind(c.type[i]) != node_kind(t)) {
    if (node_kind(t)) total_node_ += c.valid[i];
    else total_node_ -= c.valid[i];
  }
  c.type[i] = t;
  ++edits_;
  mark_changed(seg);
}

void SegmentManager::reset_free() {
  free_.assign(main_segs_, true);
  free_count_ = empty_count_ = main_segs_;
  free_sec_.assign(main_sections(), true);
  free_sec_count_ = main_sections();
}

// __set_inuse() / __set_free() of fs/f2fs/segment.h: a section is free
// when all its segments are.
void SegmentManager::set_free(std::uint32_t seg, bool f) {
  if (free_[seg] == f) return;
  free_[seg] = f;
  if (f) ++free_count_;
  else --free_count_;
  const std::uint32_t sec = seg / segs_per_sec_;
  if (sec >= free_sec_.size()) return;
  if (!f) {
    if (free_sec_[sec]) {
      free_sec_[sec] = false;
      --free_sec_count_;
    }
    return;
  }
  for (std::uint32_t s = sec * segs_per_sec_; s < (sec + 1) * segs_per_sec_; ++s)
    if (!free_[s]) return;
  free_sec_[sec] = true;
  ++free_sec_count_;
}

std::uint32_t SegmentManager::next_free_section(std::uint32_t sec) const {
  const std::uint32_t n = main_sections();
  if (n == 0) return 0xFFFFFFFFu;
  const std::uint32_t start = sec < n ? sec : n - 1;
  for (std::uint32_t k = 1; k <= n; ++k) {
    const std::uint32_t c = (start + k) % n;
    if (free_sec_[c]) return c;
  }
  return 0xFFFFFFFFu;
}

std::uint32_t SegmentManager::section_valid(std::uint32_t sec) const {
  std::uint32_t v = 0;
  for (std::uint32_t s = sec * segs_per_sec_; s < (sec + 1) * segs_per_sec_ && s < main_segs_; ++s) v += valid(s);
  return v;
}

std::vector<std::uint32_t> SegmentManager::dirty_sections() const {
  std::vector<std::uint32_t> out;
  out.reserve(partial_.size());
  for (const auto& [s, m] : partial_)
    if (s / segs_per_sec_ < main_sections()) out.push_back(s / segs_per_sec_);
  std::sort(out.begin(), out.end());
  out.erase(std::unique(out.begin(), out.end()), out.end());
  return out;
}

void SegmentManager::take(std::uint32_t seg) {
  ++edits_;
  set_free(seg, false);
  mark_changed(seg);
}

void SegmentManager::hold(std::uint32_t seg) {
  // A segment not free already has valid blocks (a change that empties it
  // marks it changed) or is changed or held: nothing to remember.
  if (!free_[seg]) return;
  ++edits_;
  set_free(seg, false);
  held_.push_back(seg);
}

std::vector<std::uint32_t> SegmentManager::prefree() const {
  std::vector<std::uint32_t> out;
  auto consider = [&](std::uint32_t s) {
    if (s >= main_segs_ || valid(s) || free_[s] || is_cur_seg(s)) return;
    out.push_back(s);
  };
  for (const auto& [s, c] : changed_) consider(s);
  for (std::uint32_t s : held_) consider(s);
  std::sort(out.begin(), out.end());
  out.erase(std::unique(out.begin(), out.end()), out.end());
  return out;
}

bool SegmentManager::is_valid(std::uint32_t seg, std::uint32_t off) const {
  const std::uint16_t v = valid(seg);
  if (v == 0) return false;
  if (v == kSeg) return true;
  auto it = partial_.find(seg);
  return it != partial_.end() && test_bit_msb(it->second.data(), off);
}

SegBitmap SegmentManager::bitmap(std::uint32_t seg) const {
  SegBitmap m{};
  const std::uint16_t v = valid(seg);
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
  c.count = valid(seg);
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
  return it == changed_.end() ? valid(seg) : it->second.count;
}

void SegmentManager::mark_ckpt_valid(std::uint32_t seg, std::uint32_t off) {
  ++edits_;
  ensure_ckpt_entry(seg);
  auto& c = changed_[seg];
  if (!test_bit_msb(c.map.data(), off)) {
    set_bit_msb(c.map.data(), off);
    ++c.count;
  }
}

bool SegmentManager::set_valid(std::uint32_t seg, std::uint32_t off) {
  if (is_valid(seg, off)) return false;
  ++edits_;
  ensure_ckpt_entry(seg);
  SegBitmap m = bitmap(seg);
  set_bit_msb(m.data(), off);
  SegChunk& c = chunk(seg);
  const std::uint32_t i = seg % kChunkSegs;
  if (c.valid[i]++ == 0) --empty_count_;
  ++total_valid_;
  if (node_kind(c.type[i])) ++total_node_;
  if (c.valid[i] == kSeg) partial_.erase(seg);
  else partial_[seg] = m;
  return true;
}

bool SegmentManager::clear_valid(std::uint32_t seg, std::uint32_t off) {
  if (!is_valid(seg, off)) return false;
  ++edits_;
  ensure_ckpt_entry(seg);
  SegBitmap m = bitmap(seg);
  clear_bit_msb(m.data(), off);
  SegChunk& c = chunk(seg);
  const std::uint32_t i = seg % kChunkSegs;
  if (--c.valid[i] == 0) ++empty_count_;
  --total_valid_;
  if (node_kind(c.type[i])) --total_node_;
  if (c.valid[i] == 0) partial_.erase(seg);
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
  p->footer.entry_type = node_kind(type(seg)) ? kSumTypeNode : kSumTypeData;
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
  ++edits_;
  struct Seg {
    SegBitmap map{};
    bool node = false, data = false;
  };
  std::unordered_map<std::uint32_t, Seg> segs;
  for_each_loaded([&](std::uint32_t s) {
    if (valid(s)) segs[s];
  });
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
  for (auto& [s, g] : segs) {
    const auto v = static_cast<std::uint16_t>(popcount(g.map));
    SegChunk& c = chunk(s);
    const std::uint32_t i = s % kChunkSegs;
    c.valid[i] = v;
    if (g.node && !node_kind(c.type[i])) c.type[i] = 4;
    if (g.data && node_kind(c.type[i])) c.type[i] = 1;
    if (v > 0 && v < kSeg) partial_[s] = g.map;
    changed_[s] = {g.map, v};
    auto p = std::make_unique<SummaryBlock>();
    std::memset(p.get(), 0, sizeof *p);
    p->footer.entry_type = node_kind(c.type[i]) ? kSumTypeNode : kSumTypeData;
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
  held_.clear();
  reset_free();
  total_valid_ = total_node_ = 0;
  for_each_loaded([&](std::uint32_t s) {
    const std::uint16_t v = valid(s);
    if (v == 0) return;
    set_free(s, false);
    --empty_count_;
    total_valid_ += v;
    if (node_kind(type(s))) total_node_ += v;
  });
}

void SegmentManager::committed() {
  for (const auto& [s, c] : changed_) set_free(s, valid(s) == 0);
  for (std::uint32_t s : held_) set_free(s, valid(s) == 0);
  held_.clear();
  for (const auto& l : cursegs_)
    if (l.segno < main_segs_) hold(l.segno);
  changed_.clear();
  dirty_sum_.clear();
}

void SegmentManager::start_mtime(std::uint64_t elapsed_time, std::uint64_t now) {
  mtime_base_ = elapsed_time;
  clock_base_ = now;
  min_mtime_ = min_section_mtime();
  max_mtime_ = sit_mtime(now);
}

// ---- Active logs and allocation ----

void SegmentManager::load_cursegs(const Checkpoint& cp) {
  for (std::uint8_t t = 0; t < 3; ++t) {
    cursegs_[t] = {cp.cur_data_segno[t].get(), cp.cur_data_blkoff[t].get(), cp.alloc_type[t], false};
    cursegs_[t + 3] = {cp.cur_node_segno[t].get(), cp.cur_node_blkoff[t].get(), cp.alloc_type[t + 3], false};
  }
  for (std::uint8_t t = 0; t < 6; ++t) {
    cursegs_[t].usable = curseg_writable(t);
    if (cursegs_[t].segno < main_segs_) hold(cursegs_[t].segno);
  }
}

bool SegmentManager::curseg_writable(std::uint8_t type) const {
  const Curseg& l = cursegs_[type];
  if (l.alloc_type > 1 || l.segno >= main_segs_ || l.next_blkoff >= kSeg) return false;
  const std::uint32_t end = l.alloc_type ? l.next_blkoff + 1u : kSeg;
  for (std::uint32_t j = l.next_blkoff; j < end; ++j)
    if (is_valid(l.segno, j)) return false;
  return true;
}

std::array<meta::LogPosition, 6> SegmentManager::curseg_positions() const {
  std::array<meta::LogPosition, 6> out{};
  for (std::size_t t = 0; t < 6; ++t) out[t] = {cursegs_[t].segno, cursegs_[t].next_blkoff, cursegs_[t].alloc_type};
  return out;
}

void SegmentManager::close_cursegs() {
  ++edits_;
  for (auto& l : cursegs_) l.usable = false;
}

bool SegmentManager::is_cur_seg(std::uint32_t seg) const {
  for (const auto& l : cursegs_)
    if (l.segno == seg) return true;
  return false;
}

bool SegmentManager::is_cur_sec(std::uint32_t sec) const {
  for (const auto& l : cursegs_)
    if (l.segno < main_segs_ && l.segno / segs_per_sec_ == sec) return true;
  return false;
}

std::uint32_t SegmentManager::new_section(std::uint8_t type, std::uint32_t start, std::uint32_t limit_segno,
                                          std::uint32_t floor_segno) const {
  // get_new_segment(): the next free section; with several sections a zone,
  // one in a zone another log is in is passed over for the next zone (the
  // log's own zone is fine). When every free section is in such a zone, the
  // first free one.
  const std::uint32_t nsecs = main_sections();
  const Curseg& l = cursegs_[type];
  const std::uint32_t old_zone = l.segno < main_segs_ ? l.segno / segs_per_sec_ / secs_per_zone_ : kNoSeg;
  auto zone_of_other_log = [&](std::uint32_t zone) {
    for (std::size_t t = 0; t < cursegs_.size(); ++t)
      if (t != type && cursegs_[t].segno < main_segs_ && cursegs_[t].segno / segs_per_sec_ / secs_per_zone_ == zone)
        return true;
    return false;
  };
  std::uint32_t first = kNoSeg;
  std::uint32_t k = 0;
  for (std::uint32_t sec = next_free_section(start); sec != kNoSeg && k < nsecs; sec = next_free_section(sec), ++k) {
    if (is_cur_sec(sec) || !section_free(sec)) continue;
    if (limit_segno != 0 && (sec + 1) * segs_per_sec_ > limit_segno) continue;
    if (sec * segs_per_sec_ < floor_segno) continue;
    if (first == kNoSeg) first = sec;
    const std::uint32_t zone = sec / secs_per_zone_;
    if (secs_per_zone_ == 1 || zone == old_zone || !zone_of_other_log(zone)) return sec;
  }
  return first;
}

Status SegmentManager::new_segment(Volume& vol, std::uint8_t type, const AllocRules& rules) {
  Curseg& l = cursegs_[type];
  auto take_free = [&](std::uint32_t seg) -> Status {
    take(seg);
    set_type(seg, type);
    auto sp = dirty_summary(vol, seg, true);
    if (!sp) return make_error(sp.error());
    l = {seg, 0, 0, true};
    ++counts_.segments;
    return {};
  };
  auto take_ssr = [&](std::uint32_t seg) -> Status {
    set_type(seg, type);
    auto sp = dirty_summary(vol, seg, false);
    if (!sp) return make_error(sp.error());
    l = {seg, static_cast<std::uint16_t>(next_free_blkoff(seg, 0)), 1, true};
    ++counts_.segments;
    return {};
  };
  // A section new blocks may go to (AllocRules::limit_segno, floor_segno).
  auto allowed = [&](std::uint32_t sec) {
    return (rules.limit_segno == 0 || (sec + 1) * segs_per_sec_ <= rules.limit_segno) &&
           sec * segs_per_sec_ >= rules.floor_segno;
  };
  auto ssr = [&] {
    return ssr_segment(type, [&](std::uint32_t sec) { return is_cur_sec(sec) || sec == victim_sec_ || !allowed(sec); });
  };
  auto next_in_sec = [&] {
    return l.usable && l.alloc_type == 0 && l.segno + 1 < main_segs_ && (l.segno + 1) / segs_per_sec_ == l.segno / segs_per_sec_ &&
           free_at_cp(l.segno + 1) && !is_cur_seg(l.segno + 1) && allowed((l.segno + 1) / segs_per_sec_);
  };
  if (!rules.lfs_only && next_in_sec()) return take_free(l.segno + 1);
  if (!rules.lfs_only && !rules.no_ssr && rules.need_ssr && rules.need_ssr()) {
    const std::uint32_t s = ssr();
    if (s != kNoSeg) return take_ssr(s);
  }
  if (next_in_sec()) return take_free(l.segno + 1);
  const std::uint32_t start = l.segno < main_segs_ ? l.segno / segs_per_sec_ : 0;
  const std::uint32_t sec = new_section(type, start, rules.limit_segno, rules.floor_segno);
  if (sec != kNoSeg) return take_free(sec * segs_per_sec_);
  // No free section: the kernel never gets here (GC keeps the reserve);
  // rather than fail, a dirty segment's free blocks if any.
  const std::uint32_t s = rules.no_ssr ? kNoSeg : ssr();
  if (s != kNoSeg) return take_ssr(s);
  l.usable = false;
  return make_error(Errc::no_space, fmt("writer: no free section and no segment with a free block for log %llu "
                                        "(%llu free sections of %llu)",
                                        type, free_sections(), main_sections()));
}

Status SegmentManager::park_on_prefree(Volume& vol, std::uint8_t type) {
  const std::vector<std::uint32_t> p = prefree();
  if (p.empty())
    return make_error(Errc::no_space, fmt("writer: no free or emptied segment left for log %llu", type));
  take(p.front());
  set_type(p.front(), type);
  auto sp = dirty_summary(vol, p.front(), true);
  if (!sp) return make_error(sp.error());
  cursegs_[type] = {p.front(), 0, 0, true};
  return {};
}

Result<block_t> SegmentManager::next_block(Volume& vol, std::uint8_t type, const AllocRules& rules) {
  const Curseg& l = cursegs_[type];
  if (!l.usable || l.next_blkoff >= kSeg) F2FSCORE_TRY(new_segment(vol, type, rules));
  return static_cast<block_t>(main_blk_ + static_cast<std::uint64_t>(l.segno) * kSeg + l.next_blkoff);
}

Result<block_t> SegmentManager::allocate_block(Volume& vol, std::uint8_t type, const AllocRules& rules,
                                               std::uint64_t ctime, std::uint64_t old_mtime) {
  ++edits_;
  auto a = next_block(vol, type, rules);
  if (!a) return a;
  Curseg& l = cursegs_[type];
  const std::uint32_t seg = l.segno;
  mark_ckpt_valid(seg, l.next_blkoff);
  const std::uint64_t m = old_mtime ? old_mtime : ctime;
  const std::uint64_t mt = mtime(seg);
  set_mtime(seg, mt ? (mt * valid(seg) + m) / (valid(seg) + 1u) : m);
  max_mtime_ = std::max(max_mtime_, ctime);
  if (l.alloc_type) {
    ++counts_.ssr_blocks;
    l.next_blkoff = static_cast<std::uint16_t>(next_free_blkoff(seg, l.next_blkoff + 1u));
  } else {
    ++counts_.lfs_blocks;
    ++l.next_blkoff;
  }
  if (l.next_blkoff >= kSeg) (void)new_segment(vol, type, rules);  // on failure the next call tries again
  return a;
}

std::size_t SegmentManager::memory_bytes() const {
  std::size_t chunks = 0;
  for (const auto& c : chunks_) chunks += c ? sizeof(SegChunk) : 0;
  return chunks_.capacity() * sizeof(chunks_[0]) + chunks + free_.capacity() / 8 + free_sec_.capacity() / 8 +
         partial_.size() * (sizeof(SegBitmap) + 32) + changed_.size() * (sizeof(CkptSeg) + 32) +
         dirty_sum_.size() * (sizeof(SummaryBlock) + 32);
}

}  // namespace f2fscore::wr
