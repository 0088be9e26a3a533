// The devices of a multi-device volume (mkfs.f2fs -c) as one BlockDevice:
// the volume's block address space, laid over its devices as the kernel
// lays it (f2fs_scan_devices() in fs/f2fs/super.c), so that the reader,
// the checker and the writer address a multi-device volume as they address
// one device.
//
// The superblock's device list (devs[], at most 8 entries of {path[64],
// total_segments}) names the devices in order. Device 0 holds the
// superblock, the checkpoint and the other metadata areas; it covers
// blkaddrs [0, segment0_blkaddr + total_segments[0] x 512), and device i > 0
// covers the total_segments[i] x 512 blocks that follow device i-1's; a
// blkaddr of device i is read at byte (blkaddr - start_blkaddr(i)) x 4096
// of that device (f2fs_target_device() in fs/f2fs/data.c). Bytes of a
// device past its range are not part of the volume. The devices other than
// the first carry no identity on disk (no superblock of their own): only
// their size can be checked.
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <span>
#include <string>
#include <vector>

#include "f2fscore/device.hpp"
#include "f2fscore/disk/superblock.hpp"

namespace f2fscore {

/// One device of a multi-device volume: its blkaddrs in the volume.
struct DeviceRange {
  std::string path;               ///< as the superblock names it (devs[i].path)
  std::uint64_t start_blkaddr = 0;  ///< the volume's first blkaddr on this device
  std::uint64_t blocks = 0;         ///< 4 KiB blocks of the volume on this device (from offset 0)
};

/// The device list of `sb` as block ranges, as f2fs_scan_devices(): device
/// 0 from blkaddr 0 for segment0_blkaddr + total_segments[0] x 2^log_blocks_per_seg
/// blocks, each next device right after. Empty for a single-device volume
/// (devs[0].path empty, or only devs[0] named: the volume is that one device).
std::vector<DeviceRange> device_ranges(const disk::SuperBlock& sb);

/// Whether `sb` describes a volume over more than one device.
bool is_multi_device(const disk::SuperBlock& sb) noexcept;

/// Several devices presented as one address space (the volume's). Requests
/// are split where they cross from one device to the next; flush goes to
/// every device. Its DeviceInfo: the sum of the ranges' bytes, the largest
/// logical block size and buffer alignment of the devices, read-only or
/// direct when any device is, kind DeviceKind::other, name "first+N".
/// Holes are the devices'; host_descriptor() is -1 (no single file).
class MultiDevice final : public BlockDevice {
 public:
  /// `members[i]` holds `ranges[i]`; ranges must be contiguous from blkaddr
  /// 0 and each member at least ranges[i].blocks x 4096 bytes.
  /// Errors: Errc::invalid_argument (counts differ, none, a gap, a null
  /// member), Errc::corrupt (a member smaller than its range: "device 1
  /// (path) has N bytes; the volume's device list needs M"),
  /// Errc::unsupported (members of different logical block sizes).
  static Result<std::unique_ptr<MultiDevice>> make(std::vector<std::unique_ptr<BlockDevice>> members,
                                                   std::vector<DeviceRange> ranges);
  ~MultiDevice() override;

  std::size_t members() const noexcept { return members_.size(); }
  BlockDevice& member(std::size_t i) noexcept { return *members_[i]; }
  const BlockDevice& member(std::size_t i) const noexcept { return *members_[i]; }
  const DeviceRange& range(std::size_t i) const noexcept { return ranges_[i]; }
  /// The member holding `blkaddr`, as f2fs_target_device_index(); members()
  /// when past the last range.
  std::size_t member_of(std::uint64_t blkaddr) const noexcept;

  const DeviceInfo& info() const noexcept override { return info_; }
  void submit(IoRequest& req) noexcept override;
  std::size_t poll(bool wait) noexcept override;
  std::size_t in_flight() const noexcept override { return outstanding_; }
  std::uint64_t next_data(std::uint64_t offset, std::uint64_t end) noexcept override;
  std::uint64_t next_hole(std::uint64_t offset, std::uint64_t end) noexcept override;

  struct Piece;

 private:
  MultiDevice() = default;
  static void on_piece_done(IoRequest& inner) noexcept;
  Piece* take_piece() noexcept;

  std::vector<std::unique_ptr<BlockDevice>> members_;
  std::vector<DeviceRange> ranges_;
  DeviceInfo info_;
  CompletionQueue ready_;
  std::vector<std::unique_ptr<Piece>> pieces_;
  Piece* free_pieces_ = nullptr;
  std::size_t outstanding_ = 0;
};

/// Opens the device at `path` that holds device `index` of a volume (index
/// >= 1), with the caller's open policy (read-only or not, direct I/O,
/// refusal of a device in use).
using DeviceOpener = std::function<Result<std::unique_ptr<BlockDevice>>(const std::string& path, std::size_t index)>;

/// The whole volume whose first device is `first`: reads its superblock
/// (the first of the two copies validate_superblock() accepts) and, when it
/// names more than one device, opens devices 1.. with `open` by the paths
/// in the superblock, as fsck.f2fs does, or by `paths[i-1]` where given
/// (devices moved, or named otherwise on this host; an empty string keeps
/// the superblock's). Returns `first` itself for a single-device volume and
/// when no copy of the superblock is valid (Volume::open reports that).
/// Errors, with nothing written: Errc::invalid_argument (more paths than
/// the volume has other devices, or paths for a single-device volume;
/// one device named twice), the opener's error prefixed "device i of N
/// (path): " (a missing device: Errc::not_found), Errc::corrupt (a device
/// smaller than its range, MultiDevice::make()).
Result<std::unique_ptr<BlockDevice>> open_volume_devices(std::unique_ptr<BlockDevice> first, const DeviceOpener& open,
                                                         std::span<const std::string> paths = {});

}  // namespace f2fscore
