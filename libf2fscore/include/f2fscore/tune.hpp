// Offline changes to a volume's superblock: the volume label.
//
// The label is the superblock's volume_name: 512 UTF-16LE units, NUL-padded
// (struct f2fs_super_block in include/linux/f2fs_fs.h), encoded and decoded
// by disk::set_volume_label() and disk::volume_label(), which mkfs -l uses
// too.
#pragma once

#include <string>
#include <string_view>

#include "f2fscore/device.hpp"
#include "f2fscore/result.hpp"

namespace f2fscore {

/// The volume label (UTF-8) of the superblock the kernel uses: the first
/// copy (block 0, then block 1) that passes disk::validate_superblock(), as
/// read_raw_super_block() in fs/f2fs/super.c picks it. Errors: Errc::corrupt
/// when neither copy is valid (the message says why for each, and "no F2FS
/// magic" when neither holds one), Errc::unsupported for a volume the
/// checks cannot take (blocks larger than 4 KiB), the device's read errors.
Result<std::string> read_volume_label(BlockDevice& dev);

/// Stores `label` (UTF-8) in both superblock copies, as f2fs-tools'
/// f2fslabel does through update_superblock(): the copy in use with the new
/// volume_name and, when the volume has sb_checksum, its crc recomputed
/// (seed kSuperMagic over bytes [0, 3068), as the kernel's
/// sanity_check_raw_super() checks it), written to block 1, flushed, then to
/// block 0, flushed; a slot already equal is not written. Only the 3072
/// superblock bytes of each 4 KiB block change. Errors, with nothing
/// written: Errc::invalid_argument for a label longer than 512 UTF-16 units
/// or not valid UTF-8, those of read_volume_label(); then the device's write
/// and flush errors. Does not check whether the device is in use: open it
/// with OpenOptions::refuse_in_use.
Status write_volume_label(BlockDevice& dev, std::string_view label);

}  // namespace f2fscore
