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
// checkpoint_ver + 1 after a flush, its closing block after another flush,
// and a third flush commits it. A power cut
// at any point leaves either the old or the new checkpoint valid.
// SSA blocks of full segments are rewritten in place (as fsck.f2fs does);
// the active logs' summaries go into the new pack. docs/checkpoint.md says
// what is written in which order and what a power cut leaves at each step.
//
// Choices (all consistent with fs/f2fs and fsck.f2fs):
//   - the NAT and SIT journals of the new pack are empty: every entry is in
//     the NAT/SIT blocks (the kernel reads the journals first, then the
//     blocks; an empty journal is always valid); an incremental plan
//     (changed_nids/changed_segments) uses them as the kernel does;
//   - a NAT or SIT block is written (to the other copy, version bit flipped)
//     only when its new contents differ from the current copy's on disk;
//     an SSA block only when it differs;
//   - node summaries carry version 0 and ofs_in_node 0, as the kernel's
//     f2fs_do_write_node_page() writes them; data summaries the dnode's nid,
//     its NAT version and the slot;
//   - free_segment_count counts segments (not sections) with no valid block
//     that are not an active log: build_sit_area_bitmap() in f2fs-tools
//     fsck/mount.c and free_i->free_segments in fs/f2fs/segment.c both count
//     segments, also when segs_per_sec > 1;
//   - compact summaries when the data logs' entries fit 2 blocks
//     (f2fs_npages_for_summary_flush() in fs/f2fs/checkpoint.c), else 3
//     normal blocks; node summaries in the pack only with CP_UMOUNT_FLAG,
//     and always in place in the SSA area too (where a pack without
//     CP_UMOUNT_FLAG makes readers look);
//   - ckpt_flags: CP_FSCK_FLAG and CP_ERROR_FLAG cleared,
//     CP_ORPHAN_PRESENT_FLAG and CP_COMPACT_SUM_FLAG as the pack holds,
//     CP_NAT_BITS_FLAG kept when nat_bits fit after the pack (else cleared,
//     as the kernel does), every other flag kept; user_block_count kept;
//     elapsed_time and SIT mtimes kept unless the plan gives them;
//     next_free_nid kept unless past the NAT or clamped by a lenient open
//     (then the lowest free nid above the root).
//   - journal counts past their capacity (38 NAT, 6 SIT entries) are read
//     as that capacity, as fsck.f2fs trims them.
//   - roll-forward: nodes fsynced after the current checkpoint carry its
//     version; the new pack's version (+1) no longer matches them, so a
//     rebuild drops pending fsync data (OpenReport::pending_fsync_nodes
//     says whether there is any: callers that care recover first).
#pragma once

#include <array>
#include <cstdint>
#include <optional>
#include <vector>

#include "f2fscore/device.hpp"
#include "f2fscore/disk/constants.hpp"
#include "f2fscore/result.hpp"

namespace f2fscore {

class Volume;
namespace disk {
struct SummaryBlock;
}

namespace meta {

using disk::block_t;
using disk::nid_t;

/// One block in use in the main area.
struct BlockUse {
  block_t blkaddr = 0;      ///< 4 KiB block address (main area)
  nid_t nid = 0;            ///< node blocks: the node's nid; data: the dnode/inode holding the pointer
  /// data: slot in that node's address array, for an inode counted from the
  /// first slot after the extra attribute area (the kernel's ofs_in_node:
  /// i_addr[extra_isize / 4 + ofs_in_node]); below 1018. Nodes: ignored.
  std::uint16_t ofs_in_node = 0;
  std::uint8_t version = 0;       ///< data: NAT version of `nid` (written to the summary); nodes: ignored
  bool node = false;              ///< node block (SSA/SIT node type) or data
};

/// One nid in use: what its NAT entry must say.
struct NatUse {
  nid_t nid = 0;
  nid_t ino = 0;
  block_t blkaddr = 0;
  std::uint8_t version = 0;
};

/// Where an active log stands: its segment, the next block to write in it
/// (4 KiB blocks) and its allocation mode (0 LFS, 1 SSR), as the
/// checkpoint's cur_*_segno / cur_*_blkoff / alloc_type record it.
struct LogPosition {
  std::uint32_t segno = 0;
  std::uint16_t blkoff = 0;
  std::uint8_t alloc_type = 0;
};

/// One segment's new SIT entry for an incremental checkpoint
/// (CheckpointDelta), and its summary when blocks were written to it.
struct SegmentUpdate {
  std::uint32_t segno = 0;
  std::uint8_t type = 0;            ///< disk::CursegType; an active log's segment is typed as its log
  std::uint16_t valid_blocks = 0;   ///< set bits of valid_map
  std::uint64_t mtime = 0;          ///< SIT mtime (seconds of get_mtime())
  std::array<std::uint8_t, 64> valid_map{};  ///< MSB first, as the SIT's
  /// The segment's summary block: to the SSA (the CP pack for an active data
  /// log, node logs' in the pack too on unmount); null: the SSA block stays.
  const disk::SummaryBlock* summary = nullptr;
};

/// What changed since the current checkpoint, as the kernel's checkpoint
/// sees it (f2fs_flush_nat_entries(), f2fs_flush_sit_entries(), the dirty
/// summary blocks): every other NAT and SIT entry and SSA block stays as
/// the current checkpoint has it and is neither read nor written.
struct CheckpointDelta {
  /// Segments whose SIT entry changed, one entry each; must include every
  /// active log's segment (RebuildPlan::cursegs) with its summary, and the
  /// current checkpoint's active logs' segments with theirs when those
  /// summaries lived in the pack.
  std::vector<SegmentUpdate> segments;
  /// NAT entries changed (block_addr 0 and ino 0 for a freed nid).
  std::vector<NatUse> nat;
  /// For each NAT block holding a changed entry: its entries with an
  /// address (nid 0 counted as used), for nat_bits (update_nat_bits()).
  std::vector<std::pair<std::uint32_t, std::uint32_t>> nat_block_used;
  std::uint64_t valid_block_count = 0;  ///< the new pack's (valid blocks and NEW_ADDR reservations)
  std::uint32_t valid_node_count = 0;
  std::uint32_t free_segment_count = 0;  ///< segments with no valid block that are no active log
};

/// Everything the rebuild writes, from the truth.
struct RebuildPlan {
  std::vector<BlockUse> blocks;  ///< every valid main-area block, any order, no duplicates
  /// Every nid in use, one entry each; each entry but node_ino's and
  /// meta_ino's must point at a `node` block of `blocks` with the same nid,
  /// and every node block must have its entry. node_ino and meta_ino may be
  /// left out: they are always written as mkfs.f2fs does (ino = nid,
  /// block_addr 1; only their version is taken from the plan).
  /// Every other nid becomes null: an entry already null stays as it is,
  /// another gets block_addr 0 and ino 0 and keeps its version; nid 0 is
  /// all zeroes.
  std::vector<NatUse> nat;
  std::vector<nid_t> orphans;    ///< the orphan inode list of the new checkpoint
  std::uint32_t valid_inode_count = 0;
  /// Blocks counted in the checkpoint's valid_block_count that have no
  /// address: NEW_ADDR slots, and the COMPRESS_ADDR slot heading each
  /// compressed cluster of a file whose saved blocks are not released
  /// (fsck_chk_inode_blk() and fsck_chk_data_blk() in f2fs-tools fsck/fsck.c
  /// count them so). valid_block_count = blocks.size() + reserved_blocks.
  std::uint64_t reserved_blocks = 0;
  /// Segment type to record in the SIT, per main-area segment number
  /// (disk::CursegType values), node types only for segments holding node
  /// blocks and data types only for data. Empty: keep the SIT's type where
  /// it is of the right kind (node or data: all fsck.f2fs checks,
  /// f2fs_set_main_bitmap()), else warm node / warm data. Either way an
  /// active log's segment is typed as its log (fsck_chk_curseg_info()).
  std::vector<std::uint8_t> segment_types;
  /// SIT mtime per main-area segment (seconds of the kernel's get_mtime(),
  /// which cost-benefit GC ages segments by: get_cb_cost() in fs/f2fs/gc.c).
  /// Empty: keep each entry's current mtime.
  std::vector<std::uint64_t> segment_mtimes;
  /// The new pack's elapsed_time (seconds the volume has been mounted, the
  /// base of SIT mtimes; do_checkpoint() writes get_mtime(sbi, true)).
  /// Absent: keep the current pack's.
  std::optional<std::uint64_t> elapsed_time;
  /// Move an active log whose next block is in use to a free segment
  /// (fsck.f2fs's "Move curseg").
  bool move_busy_cursegs = true;
  /// Write the superblock in use to both superblock slots.
  bool restore_superblocks = false;
  /// With restore_superblocks: the quota inode numbers (qf_ino[]) the
  /// superblocks get instead of those of the copy in use.
  std::optional<std::array<std::uint32_t, 3>> qf_ino;
  /// The active logs of the new checkpoint, in CursegType order (the
  /// writer's logs, which have moved since the current checkpoint). Absent:
  /// the current checkpoint's. A log given here whose next block is in use
  /// moves like any other busy log (see move_busy_cursegs).
  std::optional<std::array<LogPosition, 6>> cursegs;
  /// Set (true) or clear (false) CP_UMOUNT_FLAG in the new pack; absent:
  /// keep the current pack's. The kernel sets it only for the checkpoint of
  /// an unmount (f2fs_write_checkpoint() with CP_UMOUNT in
  /// fs/f2fs/checkpoint.c); without it node summaries are not in the pack.
  std::optional<bool> umount;
  /// Clear CP_QUOTA_NEED_FSCK_FLAG in the new pack (a checker that has
  /// nothing left for it: no quota files to repair); false keeps it.
  bool clear_quota_need_fsck = false;
  /// Incremental checkpoint (the writer's; both set or neither): the nids
  /// whose NAT entry and the segments whose SIT entry or blocks may have
  /// changed since the current checkpoint. Every other NAT and SIT entry is
  /// taken as the current checkpoint has it (blocks and journals), and its
  /// NAT/SIT block is neither read nor written; SSA blocks are written for
  /// these segments and the active logs' only. The changed entries, with
  /// those the current journals hold, go to the new pack's journals when
  /// they fit (38 NAT, 6 SIT entries), as f2fs_flush_nat_entries() and
  /// f2fs_flush_sit_entries() in fs/f2fs/ do with __has_cursum_space();
  /// else the NAT/SIT blocks holding them are written and the journals are
  /// empty. NAT entries never go to the journal of an unmount checkpoint
  /// (the kernel does not when nat_bits are on: enabled_nat_bits()).
  /// Without them: every NAT, SIT and SSA block is compared and the
  /// journals are written empty (fsck's repair).
  std::optional<std::vector<nid_t>> changed_nids;
  std::optional<std::vector<std::uint32_t>> changed_segments;
  /// The kernel-shaped incremental checkpoint (the writer's): only what
  /// changed, given as it must be written; `blocks`, `nat`, `reserved_blocks`,
  /// `segment_types`, `segment_mtimes`, `changed_nids` and
  /// `changed_segments` are ignored, `cursegs` must be given and no active
  /// log may be busy (nothing moves). The journals are used as with
  /// changed_nids; nat_bits are the current ones with the changed blocks'
  /// bits updated, and dropped (CP_NAT_BITS_FLAG cleared) when the current
  /// pack has none valid.
  std::optional<CheckpointDelta> delta;
};

struct RebuildStats {
  std::uint32_t nat_blocks_written = 0, sit_blocks_written = 0, ssa_blocks_written = 0;
  /// Blocks of the checkpoint pack (its two copies of the head block, the
  /// payload, orphan and summary blocks) and nat_bits blocks written.
  std::uint32_t cp_blocks_written = 0;
  std::uint32_t nat_journal_entries = 0, sit_journal_entries = 0;  ///< in the new pack
  std::uint32_t cursegs_moved = 0;
  std::uint64_t checkpoint_ver = 0;  ///< of the new pack
};

/// Writes metadata agreeing with `plan` on `dev` (the device `vol` reads,
/// or a layer over it), then commits a new checkpoint pack in the other
/// slot with checkpoint_ver + 1. `vol` is stale afterwards: reopen.
/// Nothing is written unless the plan is valid and every block is computed.
/// Errors: invalid_argument for a plan naming blocks outside the main area,
/// a block twice, a nid 0 or past max_nid, node and data blocks in one
/// segment, NAT entries and node blocks that do not match, a segment type
/// of the wrong kind, more blocks than user_block_count, an orphan list a
/// pack cannot hold, or a busy active log with move_busy_cursegs off;
/// unsupported for ro-feature volumes; no_space when an active log must
/// move and no section is wholly free; corrupt for a journal count out of
/// range; io (and the other device codes) from the device: then the old
/// checkpoint is still the valid one unless the error came from the last
/// flush (see docs/checkpoint.md).
Result<RebuildStats> rebuild(BlockDevice& dev, Volume& vol, const RebuildPlan& plan);

/// The plan a healthy volume implies (trusts the NAT and the nodes; ignores
/// SIT, SSA and the checkpoint counts). A NAT entry (current copy and the
/// journal) is in use when its block is in the main area and holds a node
/// whose footer carries the entry's nid and ino;
/// data blocks are the pointers of those inodes (regular files, directories
/// and symlinks without inline data) and direct nodes (by their footer
/// offset, IS_DNODE() in fs/f2fs/node.h). NEW_ADDR and the COMPRESS_ADDR of
/// unreleased compressed files count in reserved_blocks. Orphans come from
/// the checkpoint; valid_inode_count is the number of inodes found.
/// For tests and for rebuilding SIT/SSA/counts when only they are wrong.
/// Errors: corrupt when a data pointer leaves the main area or a block has
/// two owners (two data pointers, or a data pointer and a node in use), an
/// inode read fails (bad checksum...); io.
Result<RebuildPlan> plan_from_volume(Volume& vol);

}  // namespace meta
}  // namespace f2fscore
