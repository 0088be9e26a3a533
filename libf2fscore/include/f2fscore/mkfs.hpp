// Formatting a volume: plan the layout (pure), then write it.
//
// The layout and every superblock and checkpoint field follow mkfs.f2fs
// 1.15 (f2fs-tools mkfs/f2fs_format.c) for the same size and options, so
// the two tools produce the same geometry; see docs/format.md.
#pragma once

#include <array>
#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include "f2fscore/device.hpp"
#include "f2fscore/disk/checkpoint.hpp"
#include "f2fscore/disk/superblock.hpp"
#include "f2fscore/result.hpp"

namespace f2fscore {

struct MkfsOptions {
  std::string label;                 ///< UTF-8, at most 512 UTF-16 units (-l)
  std::uint32_t features = 0;        ///< disk::feature bits (-O)
  std::uint16_t encoding = 0;        ///< s_encoding with casefold (-C utf8 = 1)
  std::uint16_t encoding_flags = 0;  ///< s_encoding_flags (-C utf8:strict)
  double overprovision = 0;          ///< percent; 0 picks the best as mkfs.f2fs 1.15 (-o)
  std::uint32_t segs_per_sec = 1;    ///< -s
  std::uint32_t secs_per_zone = 1;   ///< -z
  bool heap = false;                 ///< -a 1: heap-based log placement (1.15)
  std::vector<std::string> cold_extensions;  ///< added to the default list (-e)
  std::vector<std::string> hot_extensions;   ///< added to the default list (-E)
  std::optional<std::array<std::uint8_t, 16>> uuid;  ///< -U; random if absent
  std::optional<std::uint64_t> timestamp;   ///< inode times, seconds (-T); now if absent
  std::uint32_t root_uid = 0, root_gid = 0;  ///< -R
  bool discard = true;               ///< -t: discard the devices first (sets CP_TRIMMED_FLAG)
  bool large_nat_bitmap = false;     ///< -i
  /// Sectors of the volume on device 0, in units of `wanted_sector_size`
  /// bytes (0: the whole device). Must not exceed the device.
  std::uint64_t wanted_sectors = 0;
  std::uint32_t wanted_sector_size = 0;  ///< -w; 0: the device's logical block size
  std::uint64_t start_sector = 0;    ///< partition start, 512-byte sectors (zone alignment)
  std::string version;               ///< SB version/init_version text (the kernel's, by default)
  /// Entropy for the random uuid and checkpoint_ver; fixed uuid and
  /// timestamp make the output byte-reproducible without it.
  std::uint64_t random_seed = 0;
};

/// One device of the volume: device 0 holds the metadata; up to 7 more
/// extend the main area (-c). `path` is recorded in the superblock's device
/// list for multi-device volumes (at most 63 bytes).
struct MkfsTarget {
  BlockDevice* device = nullptr;
  std::string path;
};

/// The computed layout: the superblock, the checkpoint header and where
/// things go. All addresses in 4 KiB blocks.
struct MkfsPlan {
  disk::SuperBlock sb{};
  disk::Checkpoint cp{};          ///< pack 1 header (checkpoint_ver set)
  std::uint32_t cur_seg[6] = {};  ///< active logs' segments, CursegType order
  std::uint32_t reserved_segments = 0;
  double overprovision = 0;       ///< percent
  std::uint32_t quota_inodes = 0, quota_blocks = 0;
  std::uint32_t lpf_ino = 0;      ///< lost+found inode, 0 if none
  std::uint32_t chksum_seed = 0;
  std::uint64_t timestamp = 0;
  std::uint32_t nat_bits_blocks = 0;
  struct DeviceExtent {
    std::uint64_t start_blkaddr, end_blkaddr;  ///< inclusive, volume block addresses
    std::uint64_t total_segments;
    std::uint64_t sectors;                     ///< used sectors of that device
  };
  std::vector<DeviceExtent> devices;
  std::uint32_t sector_size = 512;
};

/// Computes the layout for `targets` without touching them. Errors:
/// Errc::invalid_argument (bad options: unknown combination, features
/// needing extra_attr without it, sizes), Errc::no_space ("device size is
/// not sufficient": below the minimum), Errc::unsupported (over 16 TiB).
Result<MkfsPlan> plan_mkfs(std::span<const MkfsTarget> targets, const MkfsOptions& opts);

/// What format_volume() did, for reports and benchmarks.
struct MkfsReport {
  MkfsPlan plan;
  std::uint64_t bytes_written = 0;  ///< through write requests
  std::uint64_t bytes_zeroed = 0;   ///< through write_zeroes requests
  std::uint64_t bytes_discarded = 0;
  bool discarded = false;           ///< whether the discard pass succeeded
};

/// Plans and writes a new file system. Order: discard (if asked), clear the
/// old superblocks, zero SIT and NAT (write_zeroes: a hole, ZERO_RANGE or
/// BLKZEROOUT, never a bare discard), main-area inodes and dentries, NAT,
/// the CP packs, flush, then both superblocks, flush. Nothing is written if
/// planning fails. Errors: as plan_mkfs(), plus the device's I/O errors.
Result<MkfsReport> format_volume(std::span<const MkfsTarget> targets, const MkfsOptions& opts);

/// The smallest volume for a given content (f2fscore-mkfs --size-to-fit).
struct FitPlan {
  std::uint64_t bytes = 0;        ///< device size: a multiple of one section (2 MiB x segs_per_sec)
  MkfsPlan plan;                  ///< plan_mkfs() of a device of that size
  std::uint64_t free_blocks = 0;  ///< user_block_count - valid_block_count after the format
  std::uint64_t free_nids = 0;    ///< max_nid - 3 (the reserved nids) - valid_node_count after the format
};

/// The smallest device size, in whole sections, for which plan_mkfs()
/// with `opts` (wanted_sectors ignored) leaves at least `blocks` user
/// blocks and `nids` node ids free after the format: the layout, the
/// reserved and overprovision segments are those mkfs derives for that
/// size. Sizes are searched upward from `blocks` (doubling, then bisecting
/// between the last size that does not fit and the first that does, then
/// 64 sections below that one checked in turn, as the overprovision ratio
/// and the metadata areas do not grow evenly with the size). `sector_size`:
/// the device's logical block size (512 or 4096). Errors: as plan_mkfs()
/// for the options; Errc::no_space when no size up to 16 TiB fits.
Result<FitPlan> smallest_fitting_size(std::uint64_t blocks, std::uint64_t nids, const MkfsOptions& opts,
                                      std::uint32_t sector_size = 512);

/// Parses a feature list as mkfs.f2fs -O does ("extra_attr,quota").
/// Errors: Errc::invalid_argument naming the unknown feature, or an empty
/// name between two commas ("encrypt,,casefold").
Result<std::uint32_t> parse_features(std::string_view list);

/// Parses a casefold encoding spec ("utf8", "utf8:strict").
Result<std::pair<std::uint16_t, std::uint16_t>> parse_encoding(std::string_view spec);

/// Parses a uuid "xxxxxxxx-xxxx-xxxx-xxxx-xxxxxxxxxxxx".
Result<std::array<std::uint8_t, 16>> parse_uuid(std::string_view text);
std::string format_uuid(const std::uint8_t (&uuid)[16]);

}  // namespace f2fscore
