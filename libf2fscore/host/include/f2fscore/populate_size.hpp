// How much of a volume populate() will use for a host tree: the count of
// blocks an image must have free for the copy (f2fscore-mkfs --populate
// --size-to-fit). Reads the tree (readdir, lstat, llistxattr; SEEK_DATA
// of sparse files), writes nothing.
#pragma once

#include <cstdint>
#include <string>

#include "f2fscore/populate.hpp"
#include "f2fscore/result.hpp"

namespace f2fscore {

/// What populate() of a tree writes, in 4 KiB blocks of the main area
/// (each counted in the checkpoint's valid_block_count), and its inodes.
struct PopulateEstimate {
  std::uint64_t inodes = 0;         ///< inode blocks: one per entry, a hard-linked file once
  std::uint64_t data_blocks = 0;    ///< file data (holes excluded) and symlink targets not inline
  std::uint64_t dnode_blocks = 0;   ///< direct, indirect and double-indirect nodes of files and directories
  std::uint64_t xattr_blocks = 0;   ///< xattr node blocks (xattrs past the inline area)
  std::uint64_t dentry_blocks = 0;  ///< directory blocks added (the target's own block 0 not counted)
  std::uint64_t quota_blocks = 0;   ///< user and group quota file blocks of the owners' ids (-O quota)
  std::uint64_t entries = 0;        ///< names copied (hard links included)
  std::uint64_t source_bytes = 0;   ///< i_size of the regular files, each inode once
  /// Blocks populate() adds to valid_block_count.
  std::uint64_t blocks() const { return inodes + data_blocks + dnode_blocks + xattr_blocks + dentry_blocks + quota_blocks; }
  /// Node blocks (nids) it adds to valid_node_count.
  std::uint64_t nodes() const { return inodes + dnode_blocks + xattr_blocks; }
};

/// Counts what populate(w, source_dir, opts) writes into an empty target
/// directory of a volume with superblock features `features`
/// (disk::feature bits), following the writer's rules:
/// - each inode one node block; i_addr holds addrs_per_inode() slots
///   (923 less the extra attribute area, extra_isize_for_features(), and
///   the 50-slot inline xattr area), then 2 direct nodes of 1018, 2
///   indirect and 1 double-indirect node (get_node_path() in
///   fs/f2fs/node.c); only the nodes over data ranges count (SEEK_DATA of
///   sparse files);
/// - regular files keep their data in blocks (the writer makes no inline
///   data for them); a symlink target up to max_inline_data() bytes is
///   inline, longer ones take a block;
/// - directories: each name takes ceil(len / 8) slots, placed by the
///   dentry hash bucket by bucket and level by level as
///   f2fs_add_regular_entry() in fs/f2fs/dir.c places it (the entries
///   sorted by name, as populate() adds them; "." and ".." in block 0),
///   so the count is that of the dentry blocks the directory ends with;
/// - xattrs (host xattrs unless !opts.xattrs; 64 bytes of
///   security.selinux with opts.file_contexts, 20 of security.capability
///   with opts.fs_config) past the 200-byte inline area (24-byte header,
///   4-byte end mark, entries of 4 + name + value rounded up to 4) take an
///   xattr node.
/// - quota files (feature quota_ino): a 1 KiB quota block per 14 ids of
///   the owners the copy gives, with their tree blocks.
/// Casefolded directories are counted with the plain hash; the fs_config
/// rules' owners are taken as 64 ids; the project quota file is not
/// counted (the copy gives project 0). The caller verifies by populating. Errors: as populate() for `source_dir`.
Result<PopulateEstimate> estimate_populate(const std::string& source_dir, std::uint32_t features,
                                           const PopulateOptions& opts = {});

}  // namespace f2fscore
