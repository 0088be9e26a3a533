// The checker's problem table: one row per Code (fsck.hpp), with its
// severity, how it is repaired and the fsck.f2fs counterpart (the ASSERT or
// FIX message, or the function, in fsck/fsck.c and fsck/mount.c of
// f2fs-tools 1.15/1.16).
#include <array>
#include <cstdio>

#include "f2fscore/fsck.hpp"

namespace f2fscore::fsck {

namespace {

using S = Severity;
using F = FixClass;

constexpr ProblemDef kTable[] = {
    // superblocks and checkpoint
    {Code::SB_PRIMARY_BAD, S::error, F::safe, "superblock #0 is invalid; #1 is good",
     "write superblock #1 over #0", "sanity_check_raw_super (falls back to SB #2; repaired only by writing the SB)"},
    {Code::SB_BACKUP_BAD, S::warning, F::safe, "superblock #1 is invalid or differs from #0",
     "write superblock #0 over #1", "sanity_check_raw_super on SB #2 (\"Can't find a valid F2FS superblock at 0x1\")"},
    {Code::CP_PACK_BAD, S::info, F::safe, "one checkpoint pack is invalid (torn by a power cut or damaged); the other is in use",
     "write a new checkpoint pack over the bad one", "validate_checkpoint / verify_checksum_chksum (fsck duplicates the valid CP)"},
    {Code::CP_FLAGS, S::info, F::safe, "the checkpoint asks for a check (CP_FSCK_FLAG, CP_ERROR_FLAG or CP_QUOTA_NEED_FSCK)",
     "write a checkpoint without the flags", "is_set_ckpt_flags(cp, CP_FSCK_FLAG) in fsck_verify / check_sector_size"},
    {Code::CP_VALID_BLOCK_COUNT, S::warning, F::safe, "checkpoint valid_block_count differs from the blocks reached",
     "write a checkpoint with the counted value", "[FSCK] valid_block_count matching with CP"},
    {Code::CP_VALID_NODE_COUNT, S::warning, F::safe, "checkpoint valid_node_count differs from the nodes reached",
     "write a checkpoint with the counted value", "[FSCK] valid_node_count matching with CP (de lookup / nat lookup)"},
    {Code::CP_VALID_INODE_COUNT, S::warning, F::safe, "checkpoint valid_inode_count differs from the inodes reached",
     "write a checkpoint with the counted value", "[FSCK] valid_inode_count matched with CP"},
    {Code::CP_FREE_SEGMENT_COUNT, S::warning, F::safe, "checkpoint free_segment_count differs from the free segments in the SIT",
     "write a checkpoint with the counted value", "[FSCK] free segment_count matched with CP"},
    {Code::CP_NEXT_FREE_NID, S::warning, F::safe, "checkpoint next_free_nid is out of range",
     "write a checkpoint whose next_free_nid is the lowest free nid above the root", "sanity_check_ckpt (next_free_nid)"},
    {Code::CP_FIELD_BAD, S::error, F::safe,
     "a checkpoint field is outside the bounds the superblock sets (sanity_check_ckpt() in fs/f2fs/super.c): "
     "recomputed from the superblock, or else the other valid pack is in use",
     "write a new checkpoint pack with the recomputed fields (or from the pack in use)",
     "sanity_check_ckpt (\"Checkpoint is polluted\": fsck.f2fs refuses)"},
    // NAT
    {Code::NAT_BLKADDR_INVALID, S::error, F::repair, "a NAT entry's block address is outside the main area",
     "drop the node (null NAT entry, unlink it)", "sanity_check_nid: \"blkaddres is not valid. [0x%x]\" / fsck_chk_meta"},
    {Code::NAT_BLKADDR_NOT_IN_SIT, S::error, F::safe, "a node's block is not marked valid in the SIT",
     "mark the block valid in the SIT", "sanity_check_nid: \"SIT bitmap is 0x0. blk_addr[0x%x]\" / fsck_chk_meta"},
    {Code::NAT_INO_MISMATCH, S::error, F::repair, "a NAT entry's ino differs from the node's owner",
     "rewrite the NAT entry with the owner's ino", "sanity_check_nid: \"nid[0x%x] ino is 0\" / footer ino check"},
    {Code::NAT_ENTRY_UNREACHABLE, S::warning, F::safe, "a valid NAT entry's node is reached by nothing",
     "null the NAT entry and free its block", "[FSCK] Unreachable nat entries (\"NID[0x%x] is unreachable\"), fix_nat_entries"},
    {Code::NAT_BITS_MISMATCH, S::warning, F::safe, "nat_bits (full/empty NAT block bitmaps) disagree with the NAT",
     "rewrite nat_bits with the checkpoint", "check_nat_bits (\"nat_bits is corrupted\"), write_nat_bits"},
    {Code::NAT_JOURNAL_BAD, S::error, F::safe, "the NAT journal claims more than 38 entries or names a nid out of range",
     "trim the count to 38 and drop bad entries (the rebuild folds the journal into the NAT)", "sanity_check_nid on journal nids / restore_node_summary"},
    // SIT and SSA
    {Code::SIT_BITMAP_MISMATCH, S::warning, F::safe, "a SIT valid-map bit differs from whether the block is in use",
     "rewrite the SIT from the blocks reached", "[FSCK] SIT valid block bitmap checking, rewrite_sit_area_bitmap"},
    {Code::SIT_VBLOCKS_MISMATCH, S::warning, F::safe, "a SIT entry's valid-block count differs from its valid map (also a SIT block's entry the journal supersedes)",
     "rewrite the SIT entry", "check_block_count: \"Wrong SIT valid blocks: segno=0x%x, %u vs. %u\""},
    {Code::SIT_TYPE_MISMATCH, S::warning, F::safe, "a segment's SIT type differs from the type of the blocks in it",
     "rewrite the SIT type", "check_sit_types / fsck_chk_curseg_info (\"[FSCK] fixing SIT types\")"},
    {Code::SIT_JOURNAL_BAD, S::error, F::safe, "the SIT journal claims more than 6 entries or names a segment out of range",
     "trim the count to 6 and drop bad entries (the rebuild folds the journal into the SIT)", "check_block_count via build_sit_entries (\"Wrong journal entry\")"},
    {Code::SSA_NODE_MISMATCH, S::warning, F::safe, "a node block's summary names another nid or says data",
     "rewrite the summary entry", "is_valid_ssa_node_blk: \"Set node summary 0x%x -> [0x%x] [0x%x]\""},
    {Code::SSA_DATA_MISMATCH, S::warning, F::safe, "a data block's summary names another owner, offset or node version",
     "rewrite the summary entry", "is_valid_ssa_data_blk: \"Set data summary 0x%x -> [0x%x] [0x%x] [0x%x]\""},
    {Code::CURSEG_NEXT_BLOCK_NOT_FREE, S::error, F::safe, "an active log's next block is already in use",
     "move the active log to a free segment", "check_curseg_offsets (\"Next block offset:%u is not free\"), Move curseg"},
    {Code::CURSEG_TYPE_MISMATCH, S::warning, F::safe, "an active log's segment has another type in the SIT than the log's",
     "rewrite the SIT type", "check_curseg_offsets / fsck_chk_curseg_info (\"Incorrect curseg [%d]: segno [0x%x] type\")"},
    // nodes
    {Code::NODE_NID_INVALID, S::error, F::repair, "a pointer names nid 0, a reserved nid or a nid past the NAT",
     "zero the pointer (or clear the dentry)", "sanity_check_nid: \"nid is not valid. [0x%x]\""},
    {Code::NODE_NAT_MISSING, S::error, F::repair, "a pointer names a nid whose NAT entry is null",
     "zero the pointer (or clear the dentry)", "sanity_check_nid: \"blkaddress is not valid\" (NULL_ADDR)"},
    {Code::NODE_FOOTER_NID, S::error, F::repair, "a node block's footer nid is not the nid that led to it",
     "zero the pointer (or clear the dentry)", "sanity_check_nid: \"nid[0x%x] nid is mismatched\""},
    {Code::NODE_FOOTER_INO, S::error, F::repair, "a node block's footer ino is not its inode",
     "zero the pointer", "sanity_check_nid: \"nid[0x%x] nat_entry->ino[0x%x] footer.ino[0x%x]\""},
    {Code::NODE_FOOTER_OFS, S::error, F::repair, "a node block's footer offset is not its place in the tree",
     "zero the pointer", "sanity_check_nid: ofs_of_node / \"Invalid node offset\""},
    {Code::NODE_NOT_INODE, S::error, F::repair, "an inode pointer leads to a node that is not an inode",
     "clear the dentry", "sanity_check_nid: \"nid[0x%x] footer.ino[0x%x] ... not inode\""},
    {Code::NODE_DUPLICATE, S::error, F::repair, "a node is reached twice",
     "zero the second pointer", "sanity_check_nid: \"Duplicated node blk. nid[0x%x][0x%x]\""},
    {Code::NODE_UNREADABLE, S::error, F::none, "a node block cannot be read", "",
     "dev_read_block fails (ASSERT)"},
    // inodes
    {Code::INODE_CHECKSUM, S::error, F::safe, "an inode's checksum does not match its contents",
     "recompute the checksum", "fsck_chk_inode_blk: \"ino: 0x%x has wrong inode checksum\" (f2fs_inode_chksum_verify)"},
    {Code::INODE_MODE, S::error, F::repair,
     "an inode's i_mode has no valid file type, or a device, fifo or socket type with inline data",
     "no valid type: clear the dentries naming it; inline data: the type from the dentry naming it (regular file or "
     "symlink), else clear the inline data flag, area and i_size", "fsck_chk_inode_blk / __chk_dentries: \"Unknown file type\""},
    {Code::INODE_EXTRA_ISIZE, S::error, F::safe, "i_extra_isize is invalid, extra attributes without the feature, or no extra_attr flag with flexible_inline_xattr",
     "clear the flag without the feature; else set it, and an invalid i_extra_isize to the feature set's size", "fsck_chk_inode_blk: \"ino[0x%x] recover i_extra_isize\""},
    {Code::INODE_INLINE_XATTR_SIZE, S::error, F::safe, "i_inline_xattr_size is invalid",
     "set the default size", "fsck_chk_inode_blk: \"ino[0x%x] recover inline xattr size\""},
    {Code::INODE_FLAGS, S::error, F::safe, "an inode flag is set where it is not allowed (casefold, compression)",
     "clear the flag", "fsck_chk_inode_blk: \"ino: 0x%x has casefold flag\" / chk_compress_flags"},
    {Code::INODE_SIZE, S::error, F::safe, "i_size is invalid for the inode's kind",
     "set i_size from the blocks", "fsck_chk_inode_blk: i_size checks (dirs, symlinks, inline)"},
    {Code::INODE_BLOCKS, S::warning, F::safe, "i_blocks differs from the blocks counted",
     "set i_blocks to the count", "fsck_chk_inode_blk: \"ino: 0x%x has i_blocks: %08x, but has %u blocks\""},
    {Code::INODE_LINKS, S::warning, F::safe, "a file's i_links differs from the links found",
     "set i_links to the links found", "fsck_chk_hard_link / \"ino: 0x%x i_links= 0x%x -> 0x%x\""},
    {Code::DIR_LINKS, S::warning, F::safe, "a directory's i_links differs from its subdirectories + 2",
     "set i_links", "fsck_chk_inode_blk: \"Dir: 0x%x i_links= 0x%x -> 0x%x\""},
    {Code::INODE_NAMELEN, S::warning, F::safe, "i_namelen differs from the length of the name linking it",
     "set i_namelen", "fsck_chk_inode_blk: \"ino: 0x%x i_namelen= 0x%x -> 0x%x\""},
    {Code::INODE_PINO, S::warning, F::safe, "i_pino is not the directory linking the inode",
     "set i_pino", "fsck_chk_inode_blk / __chk_dentries: \"ino: 0x%x i_pino= 0x%x -> 0x%x\""},
    {Code::INODE_EXTENT, S::warning, F::safe, "the inode's extent is not backed by its blocks",
     "drop the extent", "check_extent_info: \"ino: 0x%x has wrong ext\""},
    {Code::INODE_COMPR_BLOCKS, S::warning, F::safe, "i_compr_blocks differs from the count over the clusters",
     "set i_compr_blocks", "fsck_chk_inode_blk: \"ino: 0x%x has i_compr_blocks: %lu, but has %u blocks\""},
    {Code::INODE_UNREACHABLE, S::error, F::repair, "an inode is linked from no directory",
     "link it into /lost+found as #<ino>", "fsck_verify: \"[FSCK] Reconnect %u files to lost+found\""},
    {Code::SYMLINK_SIZE, S::warning, F::safe, "a symlink's i_size differs from its target's length",
     "set i_size", "fsck_chk_inode_blk: \"ino: 0x%x i_blocks: %lu with zero i_size\""},
    {Code::ROOT_BAD, S::error, F::repair, "the root inode is missing or not a directory",
     "restore S_IFDIR when only the mode is wrong (its first block is a dentry block with . and .. naming the root); else "
     "a new empty root, the old root's children linked back under their i_name (others to /lost+found)",
     "fsck_chk_root_inode (1.16) / do_mount: \"root inode is not valid\""},
    // data
    {Code::DATA_BLKADDR_INVALID, S::error, F::repair, "a data pointer is outside the main area",
     "zero the pointer", "fsck_chk_data_blk: \"blkaddress is not valid. [0x%x]\""},
    {Code::DATA_DUPLICATE, S::error, F::repair, "a data block is referenced twice",
     "zero the second pointer", "fsck_chk_data_blk: \"Duplicated data [0x%x]. pnid[0x%x] idx[0x%x]\""},
    {Code::INLINE_DATA_RESERVED, S::warning, F::safe, "an inline inode's reserved i_addr[0] is not 0",
     "zero it", "fsck_chk_inode_blk: \"[0x%x] inline_data has wrong reserved block\""},
    {Code::INLINE_DATA_SIZE, S::error, F::repair, "an inline file's i_size exceeds the inline area",
     "set i_size to the inline area", "fsck_chk_inode_blk: i_size > MAX_INLINE_DATA"},
    {Code::INLINE_DENTRY_BAD, S::error, F::repair, "an inline dentry flag on a non-directory, or a bad inline layout",
     "clear the flag", "fsck_chk_inode_blk: \"[0x%x] inline_dentry has wrong reserved\""},
    {Code::COMPR_CLUSTER_BAD, S::error, F::repair, "a compressed cluster's COMPRESS_ADDR placement or header is bad",
     "zero the misplaced address", "fsck_chk_data_blk / chk_compressed_cluster: \"Invalid compressed cluster\""},
    // directories
    {Code::DENTRY_INO_INVALID, S::error, F::repair, "a dentry names ino 0, a reserved ino or no inode",
     "clear the dentry", "__chk_dentries: \"Bad dentry 0x%x with invalid NID/ino 0x%x\""},
    {Code::DENTRY_NAMELEN, S::error, F::repair, "a dentry's name length is 0, over 255 or past the block",
     "clear the dentry", "__chk_dentries: \"Bad dentry 0x%x with zero name_len\" / \"Bad dentry 0x%x with invalid name_len\""},
    {Code::DENTRY_FTYPE, S::warning, F::safe, "a dentry's file type differs from the inode's mode",
     "set the file type", "__chk_dentries: \"Bad dentry 0x%x with unexpected ftype 0x%x\""},
    {Code::DENTRY_HASH, S::warning, F::safe, "a dentry's stored hash is not the hash of its name",
     "set the hash", "f2fs_check_hash_code: \"Mismatch hash_code for \\\"%s\\\" [%x:%x]\""},
    {Code::DENTRY_POSITION, S::warning, F::repair, "a dentry is in the wrong level or bucket for its hash",
     "clear the dentry (the inode goes to /lost+found)", "f2fs_check_dirent_position: \"Wrong position of dirent\""},
    {Code::DENTRY_DOT, S::error, F::safe, "'.' is missing, duplicated or names another inode",
     "fix or add '.'", "__chk_dots_dentries: \"Bad inode number[0x%x] for '.'\" / \"More than one '.'\""},
    {Code::DENTRY_DOTDOT, S::error, F::safe, "'..' is missing, duplicated or names another inode",
     "fix or add '..'", "__chk_dots_dentries: \"Bad inode number[0x%x] for '..'\" / \"More than one '..'\""},
    {Code::DENTRY_BITMAP, S::warning, F::safe, "a dentry bitmap bit is set for a slot holding no entry",
     "clear the bit", "__chk_dentries: \"Bad dentry 0x%x with zero name_len\" (bitmap cleared)"},
    {Code::DENTRY_DUPLICATE_NAME, S::error, F::repair, "the same name appears twice in a directory",
     "clear the second dentry", ""},
    {Code::DENTRY_DIR_HARDLINK, S::error, F::repair, "a directory is linked from two places",
     "clear the second dentry", "fsck_chk_node_blk: \"Duplicated node blk\" on the directory's inode"},
    // xattrs
    {Code::XATTR_NID_BAD, S::error, F::repair, "i_xattr_nid is invalid or its node's footer is wrong",
     "zero i_xattr_nid", "fsck_chk_xattr_blk: \"xattr_nid duplicated / xnid [0x%x] has wrong ofs\""},
    {Code::XATTR_ENTRY_BOUNDS, S::error, F::repair, "an xattr entry runs past the xattr area",
     "truncate the xattrs before it", "chk_extended_attributes: \"ino[0x%x] has last xattr entry beyond the boundary\""},
    {Code::XATTR_TRAILING_BYTES, S::warning, F::safe, "non-zero bytes follow the last xattr entry",
     "zero them", "chk_extended_attributes: \"Some data remain after the last xattr entry\""},
    // orphans, quota, roll-forward
    {Code::ORPHAN_ENTRY_INVALID, S::warning, F::safe, "an orphan entry names no inode",
     "drop the orphan entry", "fsck_chk_orphan_node: \"[0x%x] is not a valid orphan\""},
    {Code::ORPHAN_HAS_LINKS, S::warning, F::safe, "an orphan inode has i_links != 0",
     "drop it from the orphan list (it stays linked)", "fsck_chk_orphan_node / fsck_chk_inode_blk: orphan with i_links"},
    {Code::QUOTA_INODE_BAD, S::error, F::repair, "a quota inode is missing or invalid",
     "restore i_mode to S_IFREG|0600 (as mkfs) when only the mode is wrong and the blocks read as the quota file; "
     "zero superblock qf_ino[] on a volume without the quota_ino feature; a tree pointing outside the file or looping, "
     "or holding two entries for one id, rebuilt in the file's blocks from the counted usage; a quota inode with no "
     "usable node block replaced by a new quota file (inode and data in free blocks of the active logs) written from "
     "the counted usage; else left",
     "fsck_chk_quota_node: \"Wrong quota inode\" (f2fs_rebuild_qf_inode), fsck_chk_quota_files"},
    {Code::QUOTA_USAGE, S::warning, F::safe, "a quota file's usage differs from the usage counted",
     "rewrite the id's usage (dqb_curinodes, dqb_curspace) in place",
     "fsck_chk_quota_files: \"[QUOTA WARNING] Usage inconsistent\" (\"Fixing Quota file\")"},
    {Code::FSYNC_CHAIN_LOOP, S::warning, F::safe, "the fsynced node chain after the checkpoint loops",
     "cut the chain (drop the roll-forward data)", "find_fsync_inode: \"Detect looped node chain\""},
    {Code::FSYNC_CHAIN_BAD, S::warning, F::safe, "the fsynced node chain names bad nids or inodes",
     "cut the chain (drop the roll-forward data)", "do_record_fsync_data / find_fsync_inode sanity checks"},
    // the repair itself
    {Code::REPAIR_FAILED, S::error, F::none,
     "a repair was refused (it would free a block or node a reachable inode still maps, or the device's missing end "
     "held blocks in use) or its metadata rebuild failed",
     "", ""},
    {Code::VOLUME_TRUNCATED, S::error, F::safe,
     "the device ends before the volume (a truncated image); checked as far as it goes",
     "grow the image file back to the volume's size when the lost tail holds no block in use; else left, with what is lost",
     "f2fs_do_mount (fsck.f2fs checks what it can read)"},
    // inodes (appended: codes are never renumbered)
    {Code::INODE_GC_FAILURES, S::info, F::safe,
     "a regular file's i_gc_failures (the low 16 bits of i_current_depth) is not 0: the kernel counts failed "
     "garbage collections of a pinned file there; fsck.f2fs 1.15 resets it in every repair run",
     "reset i_gc_failures to 0 (the high 16 bits kept), as fsck.f2fs does",
     "fsck_chk_inode_blk: \"Regular: 0x%x reset i_gc_failures from 0x%x to 0x00\" ([FIX] in 1.15, INFO later)"},
};

constexpr std::size_t kCodeCount = 0
#define F2FSCORE_FSCK_COUNT(name) +1
    F2FSCORE_FSCK_PROBLEMS(F2FSCORE_FSCK_COUNT)
#undef F2FSCORE_FSCK_COUNT
    ;
static_assert(std::size(kTable) == kCodeCount, "one table row per Code");

constexpr std::string_view kNames[] = {
#define F2FSCORE_FSCK_NAME(name) #name,
    F2FSCORE_FSCK_PROBLEMS(F2FSCORE_FSCK_NAME)
#undef F2FSCORE_FSCK_NAME
};

constexpr bool table_in_order() {
  for (std::size_t i = 0; i < kCodeCount; ++i)
    if (static_cast<std::size_t>(kTable[i].code) != i) return false;
  return true;
}
static_assert(table_in_order(), "problem table rows in Code order");

}  // namespace

std::string_view code_name(Code c) noexcept {
  const auto i = static_cast<std::size_t>(c);
  return i < kCodeCount ? kNames[i] : std::string_view("UNKNOWN");
}

std::optional<Code> code_from_name(std::string_view name) noexcept {
  for (std::size_t i = 0; i < kCodeCount; ++i)
    if (kNames[i] == name) return static_cast<Code>(i);
  return std::nullopt;
}

std::span<const ProblemDef> problem_table() noexcept { return kTable; }

const ProblemDef& definition(Code c) noexcept {
  const auto i = static_cast<std::size_t>(c);
  return kTable[i < kCodeCount ? i : 0];
}

std::string Problem::to_string() const {
  std::string s = "[";
  s += code_name(code);
  s += "]";
  auto add = [&](const char* what, unsigned long long v) {
    char b[64];
    std::snprintf(b, sizeof b, " %s %llu", what, v);
    s += b;
  };
  if (ino) add("ino", *ino);
  if (nid && (!ino || *nid != *ino)) add("nid", *nid);
  if (blkaddr) add("blkaddr", *blkaddr);
  if (segno) add("segno", *segno);
  if (!path.empty()) s += " (" + path + ")";
  s += ": ";
  s += detail.empty() ? std::string(definition(code).summary) : detail;
  if (fixed) s += " (fixed)";
  return s;
}

int Report::exit_code() const {
  bool any = false, left = false;
  for (const auto& p : problems) {
    if (definition(p.code).severity == Severity::info) {
      // Informational: counts only when the repair wrote. CP_FLAGS stays
      // set on the volume until a repair clears it, as e2fsck -n exits 4
      // while the error state stays; a pack the other valid pack
      // supersedes (torn by a power cut) is what Linux and fsck.f2fs
      // accept without a word.
      if (p.fixed) any = true;
      else if (p.code == Code::CP_FLAGS) any = left = true;
      continue;
    }
    any = true;
    if (!p.fixed) left = true;
  }
  if (left) return 4;
  return any ? 1 : 0;
}

}  // namespace f2fscore::fsck
