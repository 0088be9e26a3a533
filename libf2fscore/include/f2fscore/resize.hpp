// Resizing an unmounted volume: grow it to a larger device or shrink it,
// keeping the metadata areas (CP, SIT, NAT, SSA) where they are, as
// resize.f2fs -s (f2fs-tools fsck/resize.c, "safe resize") does, or, for a
// grow past what the SIT and SSA areas describe, laying them out as
// mkfs.f2fs does for the new size (resize.f2fs without -s).
//
// The main area ends where the new size puts it: segment_count and
// segment_count_main are recomputed for the new size from segment0_blkaddr
// as mkfs.f2fs lays segments (whole zones); the reserved and overprovision
// segments and user_block_count as mkfs.f2fs 1.15 writes them for a device
// of the new size (f2fs_format.c: usable segments, the average segments a
// section, get_best_overprovision()); free_segment_count counts the free
// main segments. A truncated image (the device ends inside the main area)
// is fitted to the device by a shrink when nothing past its end is in use.
//
// A grow is done in place while the SIT (55 entries a block) and the SSA
// (one block a segment) areas cover the new main area. A larger grow moves
// them: the main area's first segments are emptied by the writer's GC
// (Writer::evacuate_front()), the new SIT, NAT, SSA, pack and superblocks
// are staged past the old end, a record in block 0 (bytes before the
// superblock) names them, both superblocks are made invalid, the staged
// blocks are copied into place and the new superblocks written. A power
// cut in the copy leaves a state no checker opens: interrupted_resize()
// names it and a rerun of resize_volume() completes it (docs/resize.md).
//
// Order of the writes: a metadata rebuild of the old layout first (a
// checkpoint of its own, crash-safe as meta::rebuild() is: journals
// emptied into the SIT/NAT blocks, active logs out of the area a shrink
// cuts), SIT entries of the segments a grow adds zeroed where the current
// SIT copy holds stale ones (entries the old volume does not read), then
// the commit: for a grow both superblocks (copy 1, flush, copy 0, flush)
// and then a checkpoint pack for the new size in the other CP slot; for a
// shrink the pack first, then the superblocks. docs/resize.md says what a
// power cut leaves after each write.
#pragma once

#include <cstdint>
#include <string>

#include "f2fscore/device.hpp"
#include "f2fscore/result.hpp"

namespace f2fscore {

struct ResizeOptions {
  /// New size in 512-byte sectors; 0: the device's size.
  std::uint64_t target_sectors = 0;
  /// Allow a size smaller than the volume's (resize.f2fs's -s -t).
  bool shrink = false;
};

/// The old and the new layout. Blocks are 4 KiB, segments 512 blocks.
struct ResizePlan {
  std::uint64_t old_block_count = 0, new_block_count = 0;        ///< SB block_count
  std::uint32_t old_segment_count = 0, new_segment_count = 0;    ///< SB segment_count (from segment0)
  std::uint32_t old_main_segments = 0, new_main_segments = 0;    ///< SB segment_count_main
  /// Main segments the existing SIT and SSA areas can describe.
  std::uint32_t sit_capacity_segments = 0, ssa_capacity_segments = 0;
  std::uint32_t reserved_segments = 0;   ///< new CP rsvd_segment_count
  std::uint32_t overprov_segments = 0;   ///< new CP overprov_segment_count (reserved included)
  double overprovision = 0;              ///< percent
  std::uint64_t old_user_block_count = 0, new_user_block_count = 0;
  std::uint64_t valid_block_count = 0;   ///< CP valid_block_count
  /// Segments at or past new_main_segments holding valid blocks (a shrink
  /// must empty them first).
  std::uint32_t segments_to_empty = 0;
  std::uint64_t blocks_to_move = 0;      ///< valid blocks in those segments or in front_segments
  /// Not cleanly unmounted: resize_volume() mounts and unmounts it first.
  bool unclean = false;
  /// A grow past what the SIT and SSA areas describe: SIT, NAT and SSA are
  /// laid out as mkfs.f2fs lays them for the new size, and the main area
  /// starts `front_segments` segments later (its first segments become
  /// part of the SSA area: emptied first).
  bool moves_metadata = false;
  std::uint32_t front_segments = 0;
  std::uint64_t new_main_blkaddr = 0;    ///< SB main_blkaddr after the resize
  bool unchanged() const { return old_block_count == new_block_count && old_main_segments == new_main_segments; }
};

struct ResizeReport {
  ResizePlan plan;
  std::uint32_t sit_blocks_zeroed = 0;   ///< SIT blocks rewritten for a grow's new segments
  std::uint32_t cursegs_moved = 0;       ///< active logs moved out of a shrink's cut
  std::uint64_t blocks_moved = 0;        ///< valid blocks a shrink (or a moving grow) moved
  std::uint64_t blocks_staged = 0;       ///< moving grow: metadata blocks staged past the old end
  bool finished_interrupted = false;     ///< an interrupted moving grow was completed
  /// The size was already the target's but the checkpoint's free segment
  /// count and user blocks were another size's (a grow cut between its
  /// superblocks and its pack): a pack with this size's counts was written.
  bool checkpoint_counts_fixed = false;
  /// The volume was not cleanly unmounted: the writer mounted (rolling fsynced
  /// nodes forward) and unmounted it before the resize.
  bool settled_unclean = false;
  std::uint64_t checkpoint_ver = 0;      ///< of the new pack
  bool resized = false;                  ///< false: nothing to do
};

/// Plans a resize of the volume on `dev` without writing. Errors, naming
/// the reason: Errc::invalid_argument (a size larger than the device, a
/// smaller size without `shrink`, a size below mkfs.f2fs's minimum: not
/// enough main segments for the reserved ones), Errc::unsupported (a grow
/// moving the metadata areas whose new layout needs another cp_payload, of
/// a volume with a large NAT bitmap, or adding fewer blocks than its
/// staging needs, multi-device, zoned or read-only
/// volumes, a truncated image with blocks in use past the new end; a
/// volume not cleanly unmounted is planned as it is),
/// Errc::no_space (a shrink below the valid blocks), Errc::corrupt (a
/// truncated image with blocks in use past the device's end), the reader's
/// errors (Errc::corrupt...) and the device's.
Result<ResizePlan> plan_resize(BlockDevice& dev, const ResizeOptions& opts);

/// Plans, then carries out the resize (see the file comment for the order
/// of the writes). Nothing is written when planning fails. A volume not
/// cleanly unmounted (no unmount checkpoint, or fsynced nodes to roll
/// forward) whose plan succeeds is first mounted and unmounted by the writer,
/// as a kernel mount and umount would settle it (its pre-mount check refuses a
/// damaged volume with nothing written), then planned again
/// (ResizeReport::settled_unclean). When block 0
/// holds the record of an interrupted moving grow, completes that grow
/// first, whatever `opts` (ResizeReport::finished_interrupted), or, when
/// the copy had not begun, removes the record and resizes as asked. A shrink whose
/// cut area holds valid blocks first moves them below the new end through
/// the writer's GC (Writer::evacuate(), its checkpoints crash-safe; an
/// error there leaves the old size with the same tree). Does not check whether the
/// device is in use: open it with OpenOptions::refuse_in_use.
Result<ResizeReport> resize_volume(BlockDevice& dev, const ResizeOptions& opts);

/// Whether `dev` holds a moving grow interrupted in its copy (no valid
/// superblock, the staged metadata and the record of block 0 in place):
/// a description naming the state and the rerun of f2fscore-resize that
/// completes it; empty when there is none. Errors: the device's.
Result<std::string> interrupted_resize(BlockDevice& dev);

}  // namespace f2fscore
