// Private helpers of the metadata rebuild (meta/rebuild.cpp, meta/plan.cpp):
// where the current checkpoint's NAT/SIT copies, journals and version
// bitmaps are, read in bulk through the volume's device.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "f2fscore/disk/checkpoint.hpp"
#include "f2fscore/disk/geometry.hpp"
#include "f2fscore/disk/nat.hpp"
#include "f2fscore/disk/sit.hpp"
#include "f2fscore/disk/summary.hpp"
#include "f2fscore/disk/superblock.hpp"
#include "f2fscore/volume.hpp"
#include "util/text.hpp"

namespace f2fscore::meta {

using disk::kBlocksPerSeg;

/// The current checkpoint's view of the NAT and SIT: which copy of each
/// block is current, and the journals of the active logs' summaries.
struct MetaView {
  Volume& vol;
  BlockDevice& dev;
  disk::SuperBlock sb{};
  disk::Checkpoint cp{};
  std::vector<std::uint8_t> cp_blocks;  ///< CP block + payload, as read
  std::uint64_t cp_start = 0;           ///< first block of the current pack
  int pack = 0;                         ///< 0 or 1
  disk::Journal nat_journal{}, sit_journal{};
  disk::Geometry geo;            ///< from sb
  disk::VersionBitmaps bitmaps;  ///< views into cp_blocks
  std::uint32_t nat_blocks = 0;  ///< NAT blocks per copy
  std::uint32_t sit_blocks = 0;  ///< SIT blocks per copy

  /// `d`: the device to read (the one `v` reads, or a layer over it).
  MetaView(Volume& v, BlockDevice& d);
  MetaView(const MetaView&) = delete;  // bitmaps point into cp_blocks
  MetaView& operator=(const MetaView&) = delete;
  /// Reads the journals (load_curseg_summaries()); errors from the device
  /// or a pack too short for its summaries.
  Status load();

  const std::uint8_t* nat_bitmap() const { return bitmaps.nat.data(); }
  const std::uint8_t* sit_bitmap() const { return bitmaps.sit.data(); }
  /// Address of NAT / SIT block `idx` in copy 0 or 1 (Geometry::nat_addr()).
  std::uint64_t nat_addr(std::uint32_t idx, int copy) const { return geo.nat_addr(idx, copy); }
  std::uint64_t sit_addr(std::uint32_t idx, int copy) const { return geo.sit_addr(idx, copy); }
  int nat_copy(std::uint32_t idx) const { return bitmaps.nat_copy(idx); }
  int sit_copy(std::uint32_t idx) const { return bitmaps.sit_copy(idx); }

  /// Reads `n` consecutive 4 KiB blocks at `blkaddr`.
  Status read(std::uint64_t blkaddr, void* out, std::uint32_t n = 1);
  /// Calls fn(nid, entry) for every nid of the NAT, in nid order, with the
  /// entry as the current checkpoint sees it (the current copy of its
  /// block, then the journal on top): one NAT block in memory at a time.
  /// fn returns a Status; an error stops the walk and is returned, as are
  /// the device's.
  template <class Fn>
  Status for_each_nat_entry(Fn&& fn) {
    disk::NatBlock blk;
    std::vector<std::uint8_t> b(disk::kBlockSize);
    const std::uint32_t nj = std::min<std::uint32_t>(nat_journal.n_entries.get(), disk::kNatJournalEntries);
    for (std::uint32_t i = 0; i < nat_blocks; ++i) {
      F2FSCORE_TRY(read(nat_addr(i, nat_copy(i)), b.data()));
      std::memcpy(&blk, b.data(), sizeof blk);
      const std::uint64_t first = static_cast<std::uint64_t>(i) * disk::kNatEntryPerBlock;
      for (std::uint32_t k = 0; k < nj; ++k) {
        const std::uint64_t nid = nat_journal.nat_j.entries[k].nid.get();
        if (nid >= first && nid < first + disk::kNatEntryPerBlock) blk.entries[nid - first] = nat_journal.nat_j.entries[k].ne;
      }
      for (std::uint32_t e = 0; e < disk::kNatEntryPerBlock; ++e)
        F2FSCORE_TRY(fn(static_cast<nid_t>(first + e), static_cast<const disk::NatEntry&>(blk.entries[e])));
    }
    return {};
  }
};

using ::f2fscore::detail::fmt;

}  // namespace f2fscore::meta
