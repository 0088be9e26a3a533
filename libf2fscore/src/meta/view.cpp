// The current checkpoint's NAT/SIT view for the metadata rebuild.
#include <cstdio>
#include <cstring>

#include "disk/summaries.hpp"
#include "meta/meta_internal.hpp"

namespace f2fscore::meta {

using namespace disk;

MetaView::MetaView(Volume& v, BlockDevice& d) : vol(v), dev(d) {
  sb = v.superblock();
  cp = v.checkpoint();
  auto blocks = v.checkpoint_blocks();
  cp_blocks.assign(blocks.begin(), blocks.end());
  pack = v.open_report().checkpoint_pack;
  geo = v.geometry();
  cp_start = geo.cp_pack_start(pack);
  nat_blocks = geo.nat_blocks();
  sit_blocks = geo.sit_blocks();
  // The volume checked the bitmaps at open; the copy in cp_blocks has the
  // same bytes at the same offsets.
  if (auto bm = geo.version_bitmaps(cp_blocks)) bitmaps = *bm;
}

Status MetaView::read(std::uint64_t blkaddr, void* out, std::uint32_t n) {
  return read_at(dev, blkaddr * kBlockSize,
                 std::span<std::uint8_t>(static_cast<std::uint8_t*>(out), static_cast<std::size_t>(n) * kBlockSize));
}

Status MetaView::load() {
  CursegSummaries sums;
  F2FSCORE_TRY(load_curseg_summaries(dev, geo, cp, cp_start, SummaryScope::journals, sums));
  nat_journal = sums.nat_journal;
  sit_journal = sums.sit_journal;
  // A count past the journal's capacity (38 NAT, 6 SIT entries in the
  // summary block) is trimmed to it, as fsck.f2fs does; the rebuilt
  // journals are written afresh, so nothing reads past the capacity.
  if (nat_journal.n_entries.get() > kNatJournalEntries) nat_journal.n_entries.set(static_cast<std::uint16_t>(kNatJournalEntries));
  if (sit_journal.n_entries.get() > kSitJournalEntries) sit_journal.n_entries.set(static_cast<std::uint16_t>(kSitJournalEntries));
  return {};
}

}  // namespace f2fscore::meta
