#include "disk/cp_pack.hpp"

#include <algorithm>
#include <cstring>

#include "disk/summaries.hpp"
#include "f2fscore/endian.hpp"
#include "util/text.hpp"

namespace f2fscore::disk {

using detail::fmt;

namespace {
constexpr std::uint32_t kFirstCompactEntries = (kBlockSize - 2 * kSumJournalSize - kSumFooterSize) / kSumEntrySize;
constexpr std::uint32_t kNextCompactEntries = (kBlockSize - kSumFooterSize) / kSumEntrySize;
}  // namespace

std::uint32_t compact_summary_blocks(std::uint32_t entries) noexcept {
  if (entries <= kFirstCompactEntries) return 1;
  if (entries - kFirstCompactEntries <= kNextCompactEntries) return 2;
  return 3;
}

Result<CpPack> encode_cp_pack(const Geometry& geo, const CpPackContents& in) {
  auto bad = [](const std::string& m) { return make_error(Errc::invalid_argument, "checkpoint pack: " + m); };
  if (!in.cp) return bad("no checkpoint header");
  const Checkpoint& cp = *in.cp;
  const std::uint32_t flags = cp.ckpt_flags.get();
  const std::uint32_t payload = geo.cp_payload();
  const bool compact = flags & cp_flag::compact_sum;
  const bool umount = flags & cp_flag::umount;
  if (!in.orphans.empty() && !(flags & cp_flag::orphan_present)) return bad("orphans without CP_ORPHAN_PRESENT_FLAG");
  const auto orphan_blocks = static_cast<std::uint32_t>((in.orphans.size() + kOrphansPerBlock - 1) / kOrphansPerBlock);
  std::uint32_t entries[3] = {};
  std::uint32_t all_entries = 0;
  for (unsigned t = 0; t < 3; ++t) {
    entries[t] = std::min(compact_summary_entries(cp, t), kEntriesInSum);
    all_entries += entries[t];
  }
  const std::uint32_t data_sum = compact ? compact_summary_blocks(all_entries) : 3;
  if (compact && data_sum > 2) return bad(fmt("compact summaries of %llu entries need 3 blocks", all_entries));
  const std::uint32_t start_sum = 1 + payload + orphan_blocks;
  const std::uint32_t total = start_sum + data_sum + (umount ? 3 : 0) + 1;
  if (cp.cp_pack_start_sum.get() != start_sum || cp.cp_pack_total_block_count.get() != total)
    return bad(fmt("cp_pack_start_sum %llu / cp_pack_total_block_count %llu, the parts need %llu / %llu",
                   cp.cp_pack_start_sum.get(), cp.cp_pack_total_block_count.get(), start_sum, total));
  const NatBitsLayout nbl = geo.nat_bits_layout();
  const bool nat_bits = flags & cp_flag::nat_bits;
  if (total + (nat_bits ? nbl.blocks : 0) > kBlocksPerSeg)
    return bad(fmt("%llu blocks and %llu nat_bits blocks do not fit a segment", total, nat_bits ? nbl.blocks : 0));

  CpPack out;
  out.blocks.assign(static_cast<std::size_t>(total) * kBlockSize, 0);
  std::uint8_t* p = out.blocks.data();
  // CP block and payload: the template, the header, the version bitmaps.
  const std::size_t head_bytes = static_cast<std::size_t>(1 + payload) * kBlockSize;
  if (!in.head.empty()) std::memcpy(p, in.head.data(), std::min(in.head.size(), head_bytes));
  std::memcpy(p, &cp, sizeof cp);
  const BitmapOffsets bo = geo.bitmap_offsets(flags);
  if (in.nat_bitmap.size() > geo.nat_bitmap_bytes() || in.sit_bitmap.size() > geo.sit_bitmap_bytes() ||
      bo.nat + in.nat_bitmap.size() > head_bytes || bo.sit + in.sit_bitmap.size() > head_bytes)
    return bad("a version bitmap is larger than the volume's");
  if (!in.nat_bitmap.empty()) std::memcpy(p + bo.nat, in.nat_bitmap.data(), in.nat_bitmap.size());
  if (!in.sit_bitmap.empty()) std::memcpy(p + bo.sit, in.sit_bitmap.data(), in.sit_bitmap.size());
  seal_checkpoint(p);
  std::uint8_t* blk = p + head_bytes;
  // Orphan blocks as write_orphan_inodes(): blk_addr counts from 1.
  for (std::uint32_t ob = 0; ob < orphan_blocks; ++ob, blk += kBlockSize) {
    auto* o = reinterpret_cast<OrphanBlock*>(blk);
    std::uint32_t n = 0;
    for (std::size_t k = static_cast<std::size_t>(ob) * kOrphansPerBlock; k < in.orphans.size() && n < kOrphansPerBlock; ++k)
      o->ino[n++].set(in.orphans[k]);
    o->blk_addr.set(static_cast<std::uint16_t>(ob + 1));
    o->blk_count.set(static_cast<std::uint16_t>(orphan_blocks));
    o->entry_count.set(n);
  }
  const Journal empty{};
  const Journal& nj = in.nat_journal ? *in.nat_journal : empty;
  const Journal& sj = in.sit_journal ? *in.sit_journal : empty;
  if (compact) {
    // write_compacted_summaries(): the journals, then the data logs' entries
    // hot to cold, a new block only when an entry is left for it.
    std::memcpy(blk, &nj, kSumJournalSize);
    std::memcpy(blk + kSumJournalSize, &sj, kSumJournalSize);
    std::size_t off = 2 * kSumJournalSize;
    std::uint8_t* cur = blk;
    for (unsigned t = 0; t < 3; ++t)
      for (std::uint32_t j = 0; j < entries[t]; ++j) {
        if (off + kSumEntrySize > kBlockSize - kSumFooterSize) {
          cur += kBlockSize;
          off = 0;
        }
        if (in.data_sums) std::memcpy(cur + off, &in.data_sums[t].entries[j], kSumEntrySize);
        off += kSumEntrySize;
      }
    blk += static_cast<std::size_t>(data_sum) * kBlockSize;
  } else {
    // write_normal_summaries(): one block a data log; the NAT journal goes
    // with CURSEG_HOT_DATA, the SIT journal with CURSEG_COLD_DATA.
    for (unsigned t = 0; t < 3; ++t, blk += kBlockSize) {
      SummaryBlock s{};
      if (in.data_sums) s = in.data_sums[t];
      else s.footer.entry_type = kSumTypeData;
      if (t == 0) s.journal = nj;
      if (t == 2) s.journal = sj;
      std::memcpy(blk, &s, kBlockSize);
    }
  }
  if (umount)
    for (unsigned t = 0; t < 3; ++t, blk += kBlockSize) {
      SummaryBlock s{};
      if (in.node_sums) s = in.node_sums[t];
      else s.footer.entry_type = kSumTypeNode;
      std::memcpy(blk, &s, kBlockSize);
    }
  std::memcpy(blk, p, kBlockSize);  // the closing CP block
  if (nat_bits) {
    out.nat_bits.assign(static_cast<std::size_t>(nbl.blocks) * kBlockSize, 0);
    store_le64(out.nat_bits.data(), 0, nat_bits_header(p));
    if (!in.nat_bits_full.empty())
      std::memcpy(out.nat_bits.data() + nbl.full_offset, in.nat_bits_full.data(),
                  std::min<std::size_t>(in.nat_bits_full.size(), nbl.bitmap_bytes));
    if (!in.nat_bits_empty.empty())
      std::memcpy(out.nat_bits.data() + nbl.empty_offset, in.nat_bits_empty.data(),
                  std::min<std::size_t>(in.nat_bits_empty.size(), nbl.bitmap_bytes));
    out.nat_bits_start = kBlocksPerSeg - nbl.blocks;
  }
  return out;
}

}  // namespace f2fscore::disk
