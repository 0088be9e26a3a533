// The checksums of the F2FS format.
#pragma once

#include <cstddef>
#include <cstdint>
#include <span>
#include <string_view>

namespace f2fscore {

/// F2FS's CRC32 (f2fs_crc32() in fs/f2fs/f2fs.h): the reflected CRC-32
/// polynomial 0xEDB88320 run from `seed`, with no final inversion. The
/// superblock and checkpoint use seed 0xF2F52010 (F2FS_SUPER_MAGIC).
std::uint32_t f2fs_crc32(std::uint32_t seed, const void* data, std::size_t len) noexcept;

/// The seed of inode checksums: f2fs_crc32(~0, uuid) (s_chksum_seed in
/// fs/f2fs/super.c).
std::uint32_t inode_checksum_seed(const std::uint8_t (&uuid)[16]) noexcept;

/// Inode checksum as f2fs_inode_chksum() in fs/f2fs/inode.c: over ino and
/// i_generation from `seed`, then the whole 4 KiB node block with the
/// i_inode_checksum field taken as zero. `node_block` is 4096 bytes.
std::uint32_t inode_checksum(std::uint32_t seed, const std::uint8_t* node_block) noexcept;

/// The dentry name hash (f2fs_dentry_hash() in fs/f2fs/hash.c, TEA-based);
/// "." and ".." hash to 0. `name` is the on-disk name bytes (for casefolded
/// directories, the casefolded name: see the casefold module).
std::uint32_t dentry_hash(std::string_view name) noexcept;

}  // namespace f2fscore
