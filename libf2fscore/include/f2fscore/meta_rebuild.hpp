// Rebuilding a volume's metadata from the truth: given every block in use
// (found by a walk of the tree), write the SIT, the SSA, the NAT, nat_bits
// and a new checkpoint pack that agree with it. This is fsck's repair
// backbone (fsck.f2fs: rewrite_sit_area_bitmap, fix_nat_entries,
// fix_checkpoints in fsck/fsck.c, fsck/mount.c) and the checkpoint writer's
// first form.
//
// Crash safety follows the kernel's checkpoint (f2fs_write_checkpoint() in
// fs/f2fs/checkpoint.c): changed NAT and SIT blocks go to the copy the
// current checkpoint does not use and the new pack's version bitmaps point
// at them; the new pack goes to the other checkpoint slot with
// checkpoint_ver + 1, after a flush; a second flush commits it. A power cut
// at any point leaves either the old or the new checkpoint valid.
// SSA blocks of full segments are rewritten in place (as fsck.f2fs does);
// the active logs' summaries go into the new pack.
#pragma once

#include <cstdint>
#include <optional>
#include <vector>

#include "f2fscore/device.hpp"
#include "f2fscore/disk/constants.hpp"
#include "f2fscore/result.hpp"

namespace f2fscore {

class Volume;

namespace meta {

using disk::block_t;
using disk::nid_t;

/// One block in use in the main area.
struct BlockUse {
  block_t blkaddr = 0;      ///< 4 KiB block address (main area)
  nid_t nid = 0;            ///< node blocks: the node's nid; data: the dnode/inode holding the pointer
  std::uint16_t ofs_in_node = 0;  ///< data: slot in that node's address array; nodes: 0
  std::uint8_t version = 0;       ///< NAT version of `nid`
  bool node = false;              ///< node block (SSA/SIT node type) or data
};

/// One nid in use: what its NAT entry must say.
struct NatUse {
  nid_t nid = 0;
  nid_t ino = 0;
  block_t blkaddr = 0;
  std::uint8_t version = 0;
};

/// Everything the rebuild writes, from the truth.
struct RebuildPlan {
  std::vector<BlockUse> blocks;  ///< every valid main-area block, any order, no duplicates
  std::vector<NatUse> nat;       ///< every nid in use (node, meta and root included); others become null
  std::vector<nid_t> orphans;    ///< the orphan inode list of the new checkpoint
  std::uint32_t valid_inode_count = 0;
  /// Blocks counted in the checkpoint's valid_block_count that have no
  /// address: NEW_ADDR slots, and the COMPRESS_ADDR slot heading each
  /// compressed cluster of a file whose saved blocks are not released
  /// (fsck_chk_inode_blk() and fsck_chk_data_blk() in f2fs-tools fsck/fsck.c
  /// count them so). valid_block_count = blocks.size() + reserved_blocks.
  std::uint64_t reserved_blocks = 0;
  /// Segment type to record in the SIT, per main-area segment number
  /// (disk::CursegType values). Empty: keep the SIT's type for segments in
  /// use, and type each active log's segment as its log.
  std::vector<std::uint8_t> segment_types;
  /// Move an active log whose next block is in use to a free segment
  /// (fsck.f2fs's "Move curseg").
  bool move_busy_cursegs = true;
  /// Write the superblock in use to both superblock slots.
  bool restore_superblocks = false;
};

struct RebuildStats {
  std::uint32_t nat_blocks_written = 0, sit_blocks_written = 0, ssa_blocks_written = 0;
  std::uint32_t cursegs_moved = 0;
  std::uint64_t checkpoint_ver = 0;  ///< of the new pack
};

/// Writes metadata agreeing with `plan` on `dev` (the device `vol` reads),
/// then commits a new checkpoint pack. `vol` is stale afterwards: reopen.
/// Errors: invalid_argument for a plan naming blocks outside the main area,
/// a block twice, or a nid past max_nid; no_space when an active log must
/// move and no segment is free; io from the device (then the old
/// checkpoint is still the valid one).
Result<RebuildStats> rebuild(BlockDevice& dev, Volume& vol, const RebuildPlan& plan);

/// The plan a healthy volume implies: every valid NAT entry's node, and every
/// data pointer of every reachable inode and dnode (trusts NAT and nodes;
/// ignores SIT, SSA and the checkpoint counts). For tests and for rebuilding
/// SIT/SSA/counts when only they are wrong.
Result<RebuildPlan> plan_from_volume(Volume& vol);

}  // namespace meta
}  // namespace f2fscore
