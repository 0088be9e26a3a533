// Constants of the F2FS on-disk format (4 KiB blocks), with the kernel's
// names. Source: include/linux/f2fs_fs.h and fs/f2fs/f2fs.h (Linux 6.1).
#pragma once

#include <cstdint>

namespace f2fscore::disk {

using block_t = std::uint32_t;  ///< a block address, in 4 KiB blocks
using nid_t = std::uint32_t;    ///< a node id (inodes use their nid as ino)

inline constexpr std::uint32_t kSuperMagic = 0xF2F52010;  ///< F2FS_SUPER_MAGIC
inline constexpr std::uint32_t kBlockSize = 4096;         ///< F2FS_BLKSIZE
inline constexpr std::uint32_t kLogBlockSize = 12;
inline constexpr std::uint32_t kSuperOffset = 1024;  ///< byte offset of the SB in blocks 0 and 1
inline constexpr std::uint32_t kDefaultBlocksPerSeg = 512;  ///< 2 MiB segments
inline constexpr std::uint32_t kLogBlocksPerSeg = 9;
inline constexpr std::uint32_t kMaxSegments = 16u * 1024 * 1024 / 2;  ///< F2FS_MAX_SEGMENT: 16 TiB
inline constexpr std::uint32_t kMinSegments = 9;  ///< F2FS_MIN_SEGMENTS (f2fs-tools)

inline constexpr std::uint16_t kMajorVersion = 1;
inline constexpr std::uint16_t kMinorVersion = 15;  ///< what mkfs.f2fs 1.15 writes

inline constexpr std::uint32_t kVersionLen = 256;
inline constexpr std::uint32_t kMaxVolumeName = 512;  ///< UTF-16 code units
inline constexpr std::uint32_t kMaxExtension = 64;
inline constexpr std::uint32_t kExtensionLen = 8;
inline constexpr std::uint32_t kMaxDevices = 8;
inline constexpr std::uint32_t kMaxPathLen = 64;
inline constexpr std::uint32_t kMaxQuotas = 3;
inline constexpr std::uint32_t kMaxStopReason = 32;
inline constexpr std::uint32_t kMaxErrors = 16;
inline constexpr std::uint32_t kSbChecksumOffset = 3068;  ///< SB crc field offset

inline constexpr unsigned kMaxActiveLogs = 16;
inline constexpr unsigned kMaxActiveNodeLogs = 8;
inline constexpr unsigned kMaxActiveDataLogs = 8;
inline constexpr unsigned kNrCursegType = 6;  ///< NR_CURSEG_TYPE

/// Active logs (cursegs), in the kernel's numbering (enum in fs/f2fs/segment.h).
enum class CursegType : std::uint8_t {
  hot_data = 0,
  warm_data = 1,
  cold_data = 2,
  hot_node = 3,
  warm_node = 4,
  cold_node = 5,
};

inline constexpr std::uint32_t kCheckpointPacks = 2;
inline constexpr std::uint32_t kCpChecksumOffset = 4092;  ///< CP_CHKSUM_OFFSET
inline constexpr std::uint32_t kCpBitmapOffset = 192;     ///< offsetof(sit_nat_version_bitmap)
inline constexpr std::uint32_t kCpMinChecksumOffset = kCpBitmapOffset;
inline constexpr std::uint32_t kMinNatBitmapSize = 64;
inline constexpr std::uint32_t kMaxSitBitmapSizeInCkpt =
    kCpChecksumOffset - kCpBitmapOffset - kMinNatBitmapSize;
inline constexpr std::uint32_t kMaxBitmapSizeInCkpt = kCpChecksumOffset - kCpBitmapOffset;
inline constexpr std::uint32_t kDefaultNatEntryRatio = 20;  ///< % of NAT kept with -i

/// ckpt_flags bits (include/linux/f2fs_fs.h).
namespace cp_flag {
inline constexpr std::uint32_t umount = 0x1;
inline constexpr std::uint32_t orphan_present = 0x2;
inline constexpr std::uint32_t compact_sum = 0x4;
inline constexpr std::uint32_t error = 0x8;
inline constexpr std::uint32_t fsck = 0x10;
inline constexpr std::uint32_t fastboot = 0x20;
inline constexpr std::uint32_t crc_recovery = 0x40;
inline constexpr std::uint32_t nat_bits = 0x80;
inline constexpr std::uint32_t trimmed = 0x100;
inline constexpr std::uint32_t nocrc_recovery = 0x200;
inline constexpr std::uint32_t large_nat_bitmap = 0x400;
inline constexpr std::uint32_t quota_need_fsck = 0x800;
inline constexpr std::uint32_t disabled = 0x1000;
inline constexpr std::uint32_t disabled_quick = 0x2000;
inline constexpr std::uint32_t resizefs = 0x4000;
}  // namespace cp_flag

/// Superblock feature bits (F2FS_FEATURE_* in fs/f2fs/f2fs.h).
namespace feature {
inline constexpr std::uint32_t encrypt = 0x1;
inline constexpr std::uint32_t blkzoned = 0x2;
inline constexpr std::uint32_t atomic_write = 0x4;
inline constexpr std::uint32_t extra_attr = 0x8;
inline constexpr std::uint32_t project_quota = 0x10;
inline constexpr std::uint32_t inode_checksum = 0x20;
inline constexpr std::uint32_t flexible_inline_xattr = 0x40;
inline constexpr std::uint32_t quota_ino = 0x80;
inline constexpr std::uint32_t inode_crtime = 0x100;
inline constexpr std::uint32_t lost_found = 0x200;
inline constexpr std::uint32_t verity = 0x400;
inline constexpr std::uint32_t sb_checksum = 0x800;
inline constexpr std::uint32_t casefold = 0x1000;
inline constexpr std::uint32_t compression = 0x2000;
inline constexpr std::uint32_t ro = 0x4000;
inline constexpr std::uint32_t device_alias = 0x8000;
inline constexpr std::uint32_t packed_ssa = 0x10000;
}  // namespace feature

/// Reserved inode numbers written by mkfs (node_ino, meta_ino, root_ino).
inline constexpr nid_t kNodeIno = 1;
inline constexpr nid_t kMetaIno = 2;
inline constexpr nid_t kRootIno = 3;

/// Special block addresses (fs/f2fs/f2fs.h).
inline constexpr block_t kNullAddr = 0;
inline constexpr block_t kNewAddr = 0xFFFFFFFFu;       ///< NEW_ADDR: allocated, not written
inline constexpr block_t kCompressAddr = 0xFFFFFFFEu;  ///< COMPRESS_ADDR: cluster header

/// casefold encodings and flags (s_encoding, s_encoding_flags).
inline constexpr std::uint16_t kEncodingUtf8_12_1 = 1;
inline constexpr std::uint16_t kEncStrictModeFl = 0x1;
inline constexpr std::uint16_t kEncNoCompatFallbackFl = 0x2;

/// Quota file magics (quota-v2 `INITQMAGICS`), per type user, group, project.
inline constexpr std::uint32_t kQuotaMagics[kMaxQuotas] = {0xd9c01f11, 0xd9c01927, 0xd9c03f14};

}  // namespace f2fscore::disk
