// The current checkpoint's NAT/SIT view for the metadata rebuild.
#include <cstdio>
#include <cstring>

#include "meta/meta_internal.hpp"

namespace f2fscore::meta {

using namespace disk;

BitmapOffsets bitmap_offsets(std::uint32_t flags, std::uint32_t payload, std::uint32_t sit_bytes, std::uint32_t nat_bytes) {
  BitmapOffsets o;
  if (flags & cp_flag::large_nat_bitmap) {
    o.nat = kCpBitmapOffset + 4;
    o.sit = kCpBitmapOffset + 4 + nat_bytes;
  } else if (payload > 0) {
    o.nat = kCpBitmapOffset;
    o.sit = kBlockSize;
  } else {
    o.sit = kCpBitmapOffset;
    o.nat = kCpBitmapOffset + sit_bytes;
  }
  return o;
}

MetaView::MetaView(Volume& v, BlockDevice& d) : vol(v), dev(d) {
  sb = v.superblock();
  cp = v.checkpoint();
  auto blocks = v.checkpoint_blocks();
  cp_blocks.assign(blocks.begin(), blocks.end());
  pack = v.open_report().checkpoint_pack;
  cp_start = sb.cp_blkaddr.get() + static_cast<std::uint64_t>(pack) * kBlocksPerSeg;
  nat_blocks = sb.segment_count_nat.get() / 2 * kBlocksPerSeg;
  sit_blocks = sb.segment_count_sit.get() / 2 * kBlocksPerSeg;
  bm = bitmap_offsets(cp.ckpt_flags.get(), sb.cp_payload.get(), cp.sit_ver_bitmap_bytesize.get(),
                      cp.nat_ver_bitmap_bytesize.get());
}

Status MetaView::read(std::uint64_t blkaddr, void* out, std::uint32_t n) {
  return read_at(dev, blkaddr * kBlockSize,
                 std::span<std::uint8_t>(static_cast<std::uint8_t*>(out), static_cast<std::size_t>(n) * kBlockSize));
}

Status MetaView::load() {
  std::vector<std::uint8_t> b(kBlockSize);
  const std::uint64_t sum = cp_start + cp.cp_pack_start_sum.get();
  if (cp.ckpt_flags.get() & cp_flag::compact_sum) {
    F2FS_TRY(read(sum, b.data()));
    std::memcpy(&nat_journal, b.data(), kSumJournalSize);
    std::memcpy(&sit_journal, b.data() + kSumJournalSize, kSumJournalSize);
  } else {
    SummaryBlock s;
    F2FS_TRY(read(sum, &s));
    nat_journal = s.journal;
    F2FS_TRY(read(sum + 2, &s));
    sit_journal = s.journal;
  }
  // A count past the journal's capacity (38 NAT, 6 SIT entries in the
  // summary block) is trimmed to it, as fsck.f2fs does; the rebuilt
  // journals are written afresh, so nothing reads past the capacity.
  if (nat_journal.n_entries.get() > kNatJournalEntries) nat_journal.n_entries.set(static_cast<std::uint16_t>(kNatJournalEntries));
  if (sit_journal.n_entries.get() > kSitJournalEntries) sit_journal.n_entries.set(static_cast<std::uint16_t>(kSitJournalEntries));
  return {};
}

std::uint64_t MetaView::nat_addr(std::uint32_t idx, int copy) const {
  return sb.nat_blkaddr.get() + (static_cast<std::uint64_t>(idx >> kLogBlocksPerSeg) << (kLogBlocksPerSeg + 1)) +
         (idx & (kBlocksPerSeg - 1)) + (copy ? kBlocksPerSeg : 0);
}

std::uint64_t MetaView::sit_addr(std::uint32_t idx, int copy) const {
  return sb.sit_blkaddr.get() + idx + (copy ? sit_blocks : 0);
}

Result<std::vector<NatEntry>> MetaView::all_nat_entries() {
  std::vector<NatEntry> out(static_cast<std::size_t>(nat_blocks) * kNatEntryPerBlock);
  std::vector<std::uint8_t> b(kBlockSize);
  for (std::uint32_t i = 0; i < nat_blocks; ++i) {
    F2FS_TRY(read(nat_addr(i, nat_copy(i)), b.data()));
    std::memcpy(&out[static_cast<std::size_t>(i) * kNatEntryPerBlock], b.data(), sizeof(NatBlock));
  }
  for (std::uint32_t i = 0; i < nat_journal.n_entries.get() && i < kNatJournalEntries; ++i) {
    const nid_t nid = nat_journal.nat_j.entries[i].nid.get();
    if (nid < out.size()) out[nid] = nat_journal.nat_j.entries[i].ne;
  }
  return out;
}

}  // namespace f2fscore::meta
