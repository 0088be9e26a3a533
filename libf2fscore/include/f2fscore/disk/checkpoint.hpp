// The checkpoint (CP) pack header: struct f2fs_checkpoint in
// include/linux/f2fs_fs.h, followed in its block by the SIT and NAT version
// bitmaps. A CP pack is: this block, cp_payload blocks, orphan blocks, data
// summaries (compact: 1 to 3 blocks; normal: 3), node summaries (3, only in a
// checkpoint taken with CP_UMOUNT_FLAG), and a closing copy of this block.
#pragma once

#include <cstddef>
#include <cstdint>

#include "f2fscore/disk/constants.hpp"
#include "f2fscore/endian.hpp"
#include "f2fscore/result.hpp"

namespace f2fscore::disk {

struct Checkpoint {
  Le64 checkpoint_ver;
  Le64 user_block_count;
  Le64 valid_block_count;
  Le32 rsvd_segment_count;
  Le32 overprov_segment_count;
  Le32 free_segment_count;
  Le32 cur_node_segno[kMaxActiveNodeLogs];
  Le16 cur_node_blkoff[kMaxActiveNodeLogs];
  Le32 cur_data_segno[kMaxActiveDataLogs];
  Le16 cur_data_blkoff[kMaxActiveDataLogs];
  Le32 ckpt_flags;
  Le32 cp_pack_total_block_count;
  Le32 cp_pack_start_sum;
  Le32 valid_node_count;
  Le32 valid_inode_count;
  Le32 next_free_nid;
  Le32 sit_ver_bitmap_bytesize;
  Le32 nat_ver_bitmap_bytesize;
  Le32 checksum_offset;
  Le64 elapsed_time;
  std::uint8_t alloc_type[kMaxActiveLogs];
  // sit_nat_version_bitmap[] follows (kCpBitmapOffset).
};
static_assert(sizeof(Checkpoint) == 192);
static_assert(offsetof(Checkpoint, cur_node_segno) == 36);
static_assert(offsetof(Checkpoint, cur_data_segno) == 84);
static_assert(offsetof(Checkpoint, ckpt_flags) == 132);
static_assert(offsetof(Checkpoint, next_free_nid) == 152);
static_assert(offsetof(Checkpoint, checksum_offset) == 164);
static_assert(offsetof(Checkpoint, alloc_type) == 176);

/// An orphan block in a CP pack: inode numbers of open-unlinked files
/// (struct f2fs_orphan_block).
inline constexpr std::uint32_t kOrphansPerBlock = 1020;
struct OrphanBlock {
  Le32 ino[kOrphansPerBlock];
  Le32 reserved;
  Le16 blk_addr;    ///< index of this block among the orphan blocks
  Le16 blk_count;   ///< orphan blocks in the pack
  Le32 entry_count; ///< inos used in this block
  Le32 check_sum;
};
static_assert(sizeof(OrphanBlock) == kBlockSize);

/// CRC of a CP block as f2fs_checkpoint_chksum() in fs/f2fs/checkpoint.c:
/// crc32(kSuperMagic) over [0, checksum_offset), and, when the offset is
/// below 4092 (large NAT bitmap), continued over the bytes after the field.
/// `block` is one 4096-byte CP block; checksum_offset must be <= 4092.
std::uint32_t checkpoint_checksum(const std::uint8_t* block) noexcept;

/// Stores checkpoint_checksum() at checksum_offset of `block`.
void seal_checkpoint(std::uint8_t* block) noexcept;

/// The 8-byte nat_bits header: checkpoint_ver | crc << 32 (get_cp_crc()).
std::uint64_t nat_bits_header(const std::uint8_t* cp_block) noexcept;

/// Size of nat_bits in a CP segment for a volume with `segment_count_nat`
/// (both copies) NAT segments: bytes of each bitmap, and 4 KiB blocks in all.
struct NatBitsSize {
  std::uint32_t bitmap_bytes;
  std::uint32_t blocks;
};
NatBitsSize nat_bits_size(std::uint32_t segment_count_nat) noexcept;

}  // namespace f2fscore::disk
