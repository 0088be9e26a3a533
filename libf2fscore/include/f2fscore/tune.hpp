// Offline changes to a volume's superblock: the volume label, the uuid and
// the features that may be turned on after format.
//
// The label is the superblock's volume_name: 512 UTF-16LE units, NUL-padded
// (struct f2fs_super_block in include/linux/f2fs_fs.h), encoded and decoded
// by disk::set_volume_label() and disk::volume_label(), which mkfs -l uses
// too. Every change rewrites both superblock copies and nothing else.
#pragma once

#include <array>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <utility>

#include "f2fscore/disk/constants.hpp"

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

/// The features tune_volume() turns on: those whose on-disk side is the
/// superblock alone. encrypt and casefold are the two fsck.f2fs -O/-C turn
/// on (tune_sb_features() in f2fs-tools' fsck/main.c); verity gates
/// FS_IOC_ENABLE_VERITY only (its metadata lives past each file's end,
/// fs/f2fs/verity.c); sb_checksum adds the superblock's crc. The others need
/// what only mkfs lays down: the extra attribute area in every inode
/// (extra_attr, inode_checksum, flexible_inline_xattr, inode_crtime,
/// project_quota, compression), quota inodes (quota), the lost+found
/// directory (lost_found), a zoned layout (blkzoned), a read-only layout (ro).
inline constexpr std::uint32_t kTunableFeatures =
    disk::feature::encrypt | disk::feature::verity | disk::feature::sb_checksum | disk::feature::casefold;

/// What tune_volume() changes; an absent member is left as it is.
struct TuneChanges {
  std::optional<std::string> label;                  ///< UTF-8, at most 512 UTF-16 units; "" clears it
  std::optional<std::array<std::uint8_t, 16>> uuid;  ///< the superblock's uuid
  std::uint32_t add_features = 0;                    ///< disk::feature bits to turn on (kTunableFeatures)
  /// casefold's encoding and flags (s_encoding, s_encoding_flags, as
  /// parse_encoding() gives them); implies casefold. Without it casefold is
  /// turned on with utf8-12.1 and no flags, as mkfs.f2fs -O casefold.
  std::optional<std::pair<std::uint16_t, std::uint16_t>> encoding;
};

/// The superblock fields tune_volume() may change, before and after.
struct TuneState {
  std::string label;
  std::array<std::uint8_t, 16> uuid{};
  std::uint32_t features = 0;
  std::uint16_t encoding = 0, encoding_flags = 0;
};

/// s_encoding and s_encoding_flags in the form -C and parse_encoding()
/// take: "utf8" (utf8-12.1, the one encoding of sanity_check_raw_super() in
/// fs/f2fs/super.c), then ":" and the flags by name, "strict"
/// (SB_ENC_STRICT_MODE_FL) and "hashonly" (SB_ENC_NO_COMPAT_FALLBACK_FL),
/// comma-separated: "utf8:strict,hashonly". Unknown values by number
/// ("unknown encoding 7", "unknown flags 0x4").
std::string encoding_name(std::uint16_t encoding, std::uint16_t flags);

struct TuneReport {
  TuneState before, after;
  bool written = false;  ///< false when nothing differed (or dry_run)
};

/// Applies `changes` to both superblock copies, as write_volume_label()
/// writes them (block 1, flush, block 0, flush; crc recomputed with
/// sb_checksum). Every change is checked before the first write; on any
/// refusal nothing is written. With `dry_run` nothing is written and the
/// report says what would change. Errors, nothing written:
/// Errc::invalid_argument for a feature outside kTunableFeatures (naming it
/// and what it needs), a label too long or not UTF-8, an encoding on a
/// volume already casefolded with another one (the kernel keeps one per
/// volume, f2fs_setup_casefold() in fs/f2fs/super.c), a new uuid on a
/// volume with inode_checksum (every inode's checksum is seeded by the
/// uuid: s_chksum_seed in fs/f2fs/super.c) or with encrypt (keys of
/// IV_INO_LBLK policies are derived with the uuid, fs/crypto/keysetup.c);
/// those of read_volume_label(); then the device's write and flush errors.
/// Does not check whether the device is in use: open it with
/// OpenOptions::refuse_in_use.
Result<TuneReport> tune_volume(BlockDevice& dev, const TuneChanges& changes, bool dry_run = false);

/// The current values, as tune_volume() would report them as `before`.
Result<TuneState> read_tune_state(BlockDevice& dev);

}  // namespace f2fscore
