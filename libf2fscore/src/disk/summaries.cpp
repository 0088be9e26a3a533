#include "disk/summaries.hpp"

#include <cstring>
#include <string>
#include <vector>

#include "util/text.hpp"

namespace f2fscore::disk {

using detail::fmt;

std::uint32_t compact_summary_entries(const Checkpoint& cp, unsigned type) noexcept {
  if (cp.alloc_type[type] == 1) return kBlocksPerSeg;
  return cp.cur_data_blkoff[type].get();
}

Status load_curseg_summaries(BlockDevice& dev, const Geometry& geo, const Checkpoint& cp, std::uint64_t cp_start,
                             SummaryScope scope, CursegSummaries& out) {
  auto read = [&](std::uint64_t blkaddr, void* buf) {
    return read_at(dev, blkaddr * kBlockSize, std::span<std::uint8_t>(static_cast<std::uint8_t*>(buf), kBlockSize));
  };
  auto past = [](const char* what, std::uint64_t blk) {
    return make_error(Errc::corrupt, std::string("checkpoint: ") + what + " run past the pack" + fmt(" (block %llu)", blk));
  };
  const std::uint32_t flags = cp.ckpt_flags.get();
  std::uint64_t sum_blk = cp_start + cp.cp_pack_start_sum.get();
  const std::uint64_t pack_end = cp_start + cp.cp_pack_total_block_count.get() - 1;
  std::vector<std::uint8_t> b(kBlockSize);
  if (flags & cp_flag::compact_sum) {
    out.nat_journal_blk = out.sit_journal_blk = sum_blk;
    F2FSCORE_TRY(read(sum_blk, b.data()));
    std::memcpy(&out.nat_journal, b.data(), kSumJournalSize);
    std::memcpy(&out.sit_journal, b.data() + kSumJournalSize, kSumJournalSize);
    if (scope == SummaryScope::journals) return {};
    std::size_t off = 2 * kSumJournalSize;
    for (unsigned t = 0; t < 3; ++t) {
      const std::uint32_t n = compact_summary_entries(cp, t);
      SummaryBlock& s = out.sum[t];
      s.footer.entry_type = kSumTypeData;
      for (std::uint32_t j = 0; j < n && j < kEntriesInSum; ++j) {
        // The next block only when an entry is left for it: a block filled
        // by the last entry ends the area (write_compacted_summaries() takes
        // blocks as it needs them).
        if (off + sizeof(Summary) > kBlockSize - kSumFooterSize) {
          if (++sum_blk >= pack_end) return past("compact summaries", sum_blk);
          F2FSCORE_TRY(read(sum_blk, b.data()));
          off = 0;
        }
        std::memcpy(&s.entries[j], b.data() + off, sizeof(Summary));
        off += sizeof(Summary);
      }
      out.loaded[t] = true;
    }
    ++sum_blk;
  } else {
    out.nat_journal_blk = sum_blk;
    out.sit_journal_blk = sum_blk + 2;
    for (unsigned t = 0; t < 3; ++t) {
      if (sum_blk >= pack_end) return past("summaries", sum_blk);
      if (scope == SummaryScope::journals && t == 1) {
        ++sum_blk;
        continue;
      }
      F2FSCORE_TRY(read(sum_blk++, &out.sum[t]));
      out.loaded[t] = scope != SummaryScope::journals;
    }
    out.nat_journal = out.sum[0].journal;
    out.sit_journal = out.sum[2].journal;
    if (scope == SummaryScope::journals) {
      out.sum[0] = SummaryBlock{};
      out.sum[2] = SummaryBlock{};
      return {};
    }
  }
  if (scope != SummaryScope::all) return {};
  for (unsigned t = 3; t < kNrCursegType; ++t) {
    const std::uint32_t segno = cp.cur_node_segno[t - 3].get();
    if ((flags & cp_flag::umount) && sum_blk < pack_end) {
      F2FSCORE_TRY(read(sum_blk++, &out.sum[t]));
    } else {
      F2FSCORE_TRY(read(geo.ssa_addr(segno), &out.sum[t]));
    }
    out.loaded[t] = true;
  }
  return {};
}

}  // namespace f2fscore::disk
