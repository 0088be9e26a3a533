// The superblock: 3072 bytes at byte 1024 of blocks 0 and 1 (two copies).
// Field names and offsets as struct f2fs_super_block in
// include/linux/f2fs_fs.h (Linux 6.1). See docs/format.md.
#pragma once

#include <cstddef>
#include <cstdint>
#include <span>
#include <string>

#include "f2fscore/disk/constants.hpp"
#include "f2fscore/endian.hpp"
#include "f2fscore/result.hpp"

namespace f2fscore::disk {

/// One entry of the device list of a multi-device volume (68 bytes).
struct Device {
  std::uint8_t path[kMaxPathLen];
  Le32 total_segments;
};
static_assert(sizeof(Device) == 68);

struct SuperBlock {
  Le32 magic;
  Le16 major_ver;
  Le16 minor_ver;
  Le32 log_sectorsize;
  Le32 log_sectors_per_block;
  Le32 log_blocksize;
  Le32 log_blocks_per_seg;
  Le32 segs_per_sec;
  Le32 secs_per_zone;
  Le32 checksum_offset;
  Le64 block_count;  ///< blocks in the volume, 4 KiB each
  Le32 section_count;
  Le32 segment_count;
  Le32 segment_count_ckpt;
  Le32 segment_count_sit;
  Le32 segment_count_nat;
  Le32 segment_count_ssa;
  Le32 segment_count_main;
  Le32 segment0_blkaddr;
  Le32 cp_blkaddr;
  Le32 sit_blkaddr;
  Le32 nat_blkaddr;
  Le32 ssa_blkaddr;
  Le32 main_blkaddr;
  Le32 root_ino;
  Le32 node_ino;
  Le32 meta_ino;
  std::uint8_t uuid[16];
  Le16 volume_name[kMaxVolumeName];  ///< UTF-16LE, NUL-padded
  Le32 extension_count;              ///< cold extensions, first in the list
  std::uint8_t extension_list[kMaxExtension][kExtensionLen];
  Le32 cp_payload;  ///< extra CP blocks holding the SIT bitmap
  std::uint8_t version[kVersionLen];
  std::uint8_t init_version[kVersionLen];
  Le32 feature;
  std::uint8_t encryption_level;
  std::uint8_t encrypt_pw_salt[16];
  Device devs[kMaxDevices];
  Le32 qf_ino[kMaxQuotas];
  std::uint8_t hot_ext_count;  ///< hot extensions, after the cold ones
  Le16 s_encoding;
  Le16 s_encoding_flags;
  std::uint8_t s_stop_reason[kMaxStopReason];
  std::uint8_t s_errors[kMaxErrors];
  std::uint8_t reserved[258];
  Le32 crc;  ///< crc32(kSuperMagic, bytes[0, checksum_offset)) with sb_checksum
};
static_assert(sizeof(SuperBlock) == 3072);
static_assert(offsetof(SuperBlock, block_count) == 36);
static_assert(offsetof(SuperBlock, uuid) == 108);
static_assert(offsetof(SuperBlock, volume_name) == 124);
static_assert(offsetof(SuperBlock, extension_count) == 1148);
static_assert(offsetof(SuperBlock, cp_payload) == 1664);
static_assert(offsetof(SuperBlock, feature) == 2180);
static_assert(offsetof(SuperBlock, devs) == 2201);
static_assert(offsetof(SuperBlock, qf_ino) == 2745);
static_assert(offsetof(SuperBlock, hot_ext_count) == 2757);
static_assert(offsetof(SuperBlock, s_encoding) == 2758);
static_assert(offsetof(SuperBlock, s_stop_reason) == 2762);
static_assert(offsetof(SuperBlock, crc) == kSbChecksumOffset);

/// crc32 over the superblock as the kernel's f2fs_sb_has_sb_checksum path
/// computes it: seed kSuperMagic, bytes [0, 3068).
std::uint32_t superblock_checksum(const SuperBlock& sb) noexcept;

/// Checks a superblock as sanity_check_raw_super() in fs/f2fs/super.c does
/// (magic, block/sector sizes, checksum, segment and section counts, area
/// boundaries), against a device of `device_blocks` 4 KiB blocks (0: skip
/// the size check). `which` (0 or 1) only names the copy in messages.
/// Errors: Errc::corrupt naming the field, or Errc::unsupported for a valid
/// volume with blocks larger than 4 KiB or unknown incompatible features.
Status validate_superblock(const SuperBlock& sb, std::uint64_t device_blocks, int which);

/// The volume label as UTF-8 (volume_name is UTF-16LE).
std::string volume_label(const SuperBlock& sb);

/// Stores `label` (UTF-8) into volume_name as UTF-16LE. Errors:
/// Errc::invalid_argument if it is not valid UTF-8 or longer than 512 units.
Status set_volume_label(SuperBlock& sb, std::string_view label);

/// Names of the feature bits set in `features`, space-separated, in the
/// order of fsck.f2fs ("extra_attr inode_checksum ...").
std::string feature_names(std::uint32_t features);

}  // namespace f2fscore::disk
