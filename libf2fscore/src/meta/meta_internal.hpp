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

/// Offsets of the NAT and SIT version bitmaps inside a buffer holding the CP
/// block followed by its cp_payload blocks (__bitmap_ptr() in fs/f2fs/f2fs.h):
/// large NAT bitmap: both in the CP block after a 4-byte field, NAT first;
/// with cp_payload: NAT in the CP block, SIT in the payload blocks; else SIT
/// then NAT in the CP block.
struct BitmapOffsets {
  std::size_t nat = 0, sit = 0;
};
BitmapOffsets bitmap_offsets(std::uint32_t ckpt_flags, std::uint32_t cp_payload, std::uint32_t sit_bytes,
                             std::uint32_t nat_bytes);

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
  std::uint32_t nat_blocks = 0;  ///< NAT blocks per copy
  std::uint32_t sit_blocks = 0;  ///< SIT blocks per copy
  BitmapOffsets bm;

  /// `d`: the device to read (the one `v` reads, or a layer over it).
  MetaView(Volume& v, BlockDevice& d);
  /// Reads the journals; errors from the device or a bad count.
  Status load();

  const std::uint8_t* nat_bitmap() const { return cp_blocks.data() + bm.nat; }
  const std::uint8_t* sit_bitmap() const { return cp_blocks.data() + bm.sit; }
  /// Address of NAT block `idx` in copy 0 or 1 (the pair lives in
  /// alternate segments: current_nat_addr() in fs/f2fs/node.h).
  std::uint64_t nat_addr(std::uint32_t idx, int copy) const;
  std::uint64_t sit_addr(std::uint32_t idx, int copy) const;
  int nat_copy(std::uint32_t idx) const { return test_bit_msb(nat_bitmap(), idx) ? 1 : 0; }
  int sit_copy(std::uint32_t idx) const { return test_bit_msb(sit_bitmap(), idx) ? 1 : 0; }

  /// Reads `n` consecutive 4 KiB blocks at `blkaddr`.
  Status read(std::uint64_t blkaddr, void* out, std::uint32_t n = 1);
  /// Every NAT entry as the current checkpoint sees it (current copy of
  /// each block, then the journal on top), indexed by nid.
  Result<std::vector<disk::NatEntry>> all_nat_entries();
};

using ::f2fscore::detail::fmt;

}  // namespace f2fscore::meta
