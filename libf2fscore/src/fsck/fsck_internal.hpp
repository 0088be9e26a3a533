// Private state of the checker (fsck_*.cpp): the metadata loaded in bulk,
// one compact record per node block, and the truth the walk builds.
#pragma once

#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <string>
#include <unordered_map>
#include <vector>

#include "f2fscore/disk/dentry.hpp"
#include "f2fscore/disk/nat.hpp"
#include "f2fscore/disk/node.hpp"
#include "f2fscore/disk/sit.hpp"
#include "f2fscore/disk/summary.hpp"
#include "f2fscore/fsck.hpp"
#include "f2fscore/meta_rebuild.hpp"
#include "f2fscore/volume.hpp"

namespace f2fscore::fsck {

/// Reads `addrs` (4 KiB block addresses, sorted ascending, unique) with
/// large coalesced requests, `queue_depth` of them in flight through the
/// device's async API, and calls `on_block(addr, data)` for each block in
/// ascending order. Blocks closer than `gap` apart are read in one request
/// (the blocks between are read and skipped). Errors: the first failed
/// request (Errc::io ...); `bytes_read` accumulates what was read.
Status read_blocks_batched(BlockDevice& dev, const std::vector<block_t>& addrs, std::uint32_t batch_blocks,
                           std::uint32_t queue_depth, std::uint32_t gap,
                           const std::function<void(block_t, const std::uint8_t*)>& on_block,
                           std::uint64_t* bytes_read);

/// What was found in a NAT entry (journal applied).
struct NatRec {
  block_t blkaddr = 0;
  nid_t ino = 0;
  std::uint8_t version = 0;
};

/// An inode problem found when its block was scanned, reported when the
/// walk reaches it (so that it carries the path).
struct LocalIssue {
  Code code;
  std::string detail;
  std::uint32_t slot = 0xFFFFFFFFu;  ///< dentry issues: the slot
};

/// One directory entry as found on disk.
struct Dent {
  std::string name;
  nid_t ino = 0;
  std::uint8_t type = 0;
  std::uint32_t hash = 0;
  std::uint32_t bidx = 0;     ///< directory block index; kInline for inline dentries
  std::uint32_t slot = 0;
  block_t blkaddr = 0;        ///< the dentry block (the inode block for inline)
  static constexpr std::uint32_t kInline = 0xFFFFFFFFu;
};

/// An inode as scanned (the fields the walk needs; the block is re-read to repair it).
struct InodeRec {
  nid_t ino = 0;
  block_t blkaddr = 0;
  std::uint16_t mode = 0;
  std::uint8_t advise = 0, inline_flags = 0, dir_level = 0, compr_alg = 0;
  std::uint32_t links = 0, flags = 0, pino = 0, namelen = 0, xattr_nid = 0, depth = 0;
  std::uint32_t uid = 0, gid = 0, projid = 0;
  std::uint64_t size = 0, blocks = 0, compr_blocks = 0;
  disk::Extent ext{};
  std::uint32_t extra_isize = 0, inline_xattr_addrs = 0, addrs_per_inode = 0, addrs_per_block = 0;
  std::uint32_t cluster_blocks = 0;  ///< 0 unless compressed
  nid_t i_nid[5] = {};
  bool sane = true;  ///< the layout fields could be decoded (false: do not walk its data)
  std::vector<LocalIssue> issues;
  std::vector<std::uint8_t> inline_xattr;  ///< the inline xattr bytes when any is non-zero
  std::vector<Dent> inline_dents;          ///< inline directories
  std::vector<LocalIssue> inline_dent_issues;
  std::uint32_t symlink_len = 0;           ///< inline symlinks: strnlen of the target
  bool is_dir() const { return (mode & 0xF000) == 0x4000; }
  bool is_reg() const { return (mode & 0xF000) == 0x8000; }
  bool is_symlink() const { return (mode & 0xF000) == 0xA000; }
};

/// One node block as scanned.
struct NodeRec {
  nid_t footer_nid = 0, footer_ino = 0;
  std::uint32_t footer_ofs = 0;
  bool read_ok = false;
  std::uint32_t addr_begin = 0, addr_count = 0;  ///< into Checker::addrs (slot, blkaddr), non-zero only
  std::int32_t inode = -1;                       ///< into Checker::inodes
};

struct AddrSlot {
  std::uint16_t slot;
  block_t blkaddr;
};

/// The walk's view of one reached inode.
struct InodeState {
  nid_t parent = 0;
  std::uint32_t links_found = 0;   ///< dentries naming it (not "." / "..")
  std::uint32_t subdirs = 0;
  std::uint32_t name_len = 0;      ///< of the first dentry naming it
  std::uint64_t blocks_counted = 0;
  std::string path;
  bool orphan = false;
  std::vector<std::pair<std::uint32_t, block_t>> dir_blocks;  ///< directories: (index, blkaddr)
  std::string first_name;          ///< the name of the first dentry naming it
};

/// Where a dentry lives: its block and the layout of the area holding it.
struct DentryArea {
  block_t blkaddr = 0;
  std::uint32_t bitmap_off = 0, dentry_off = 0, names_off = 0, nslots = 0;
};

/// A change to one block, applied by repair().
struct Edit {
  std::function<void(std::uint8_t*)> fn;
  std::size_t problem;  ///< index in Report::problems, marked fixed when written
};

class Checker {
 public:
  Checker(BlockDevice& dev, const Options& opts) : dev_(dev), opts_(opts) {}
  Result<Report> run();

 private:
  // fsck/load.cpp
  Status open_volume();
  Status load_nat();
  Status load_sit();
  Status load_ssa();
  Status scan_nodes();
  void scan_node(nid_t nid, block_t addr, const std::uint8_t* blk);
  void scan_inode(nid_t nid, block_t addr, const disk::Node& n, NodeRec& rec);
  void check_superblocks();
  // fsck/walk.cpp
  void walk_namespace();
  bool walk_inode(nid_t ino, const std::string& path);
  void walk_node(const InodeRec& in, InodeState& st, nid_t nid, std::uint32_t ofs, int level, void* ctx,
                 block_t parent_blk, std::uint32_t parent_off);
  void walk_data(const InodeRec& in, InodeState& st, nid_t holder, std::uint64_t first_index, const AddrSlot* a,
                 std::uint32_t n, std::uint32_t nslots, void* ctx);
  void walk_xattr(const InodeRec& in, InodeState& st);
  void expand_dirs(std::vector<nid_t>& level);
  void check_dentries(const InodeRec& dir, InodeState& st, std::vector<Dent>& dents, std::vector<nid_t>& next);
  void finish_inode_counts();
  void check_orphans();
  void check_quota();
  void check_quota_usage();  // fsck/quota.cpp
  void check_unreachable();
  // fsck_global.cpp
  void check_global();
  void check_fsync_chain();
  void check_nat_bits();
  bool fast_check();
  // fsck/repair.cpp
  void repair();

  std::size_t add(Problem p);
  bool allowed(Code c) const;
  /// Registers an edit of block `blk` fixing problem `idx` (if the mode allows it).
  void fix(std::size_t idx, block_t blk, std::function<void(std::uint8_t*)> fn);
  /// Marks problem `idx` as fixed by the metadata rebuild (if allowed).
  void fix_global(std::size_t idx);
  DentryArea dentry_area(const InodeRec& dir, block_t blk, bool inline_area) const;
  void fix_clear_dentry(std::size_t idx, const DentryArea& a, std::uint32_t slot, std::uint32_t name_len);
  void fix_inode_field(std::size_t idx, const InodeRec& in, std::function<void(disk::Node&)> fn);
  bool root_mode_repairable(nid_t root);
  void fix_zero_word(std::size_t idx, block_t blk, std::uint32_t byte_off);
  void local_issue_fix(std::size_t idx, const InodeRec& in, Code c);
  bool reconnect(nid_t ino);
  bool add_dentry(const InodeRec& dir, const std::string& name, nid_t ino, std::uint8_t ft);
  bool create_lost_found();
  Problem prob(Code c) const { Problem p; p.code = c; return p; }
  bool valid_main(block_t a) const { return a >= main_blk_ && a < main_end_; }
  bool used(block_t a) const { return used_[(a - main_blk_) >> 6] >> ((a - main_blk_) & 63) & 1; }
  void set_used(block_t a) { used_[(a - main_blk_) >> 6] |= 1ull << ((a - main_blk_) & 63); }
  bool sit_valid(block_t a) const;
  std::uint32_t segno_of(block_t a) const { return vol_->geometry().segno_of(a); }
  std::string inode_path(nid_t ino) const;

  BlockDevice& dev_;
  Options opts_;
  Report report_;
  std::unique_ptr<Volume> vol_;
  disk::SuperBlock sb_{};
  disk::Checkpoint cp_{};
  std::uint32_t features_ = 0;
  std::uint32_t chksum_seed_ = 0;
  block_t main_blk_ = 0, main_end_ = 0;
  std::uint32_t main_segs_ = 0;
  nid_t max_nid_ = 0;
  std::vector<NatRec> nat_;
  std::vector<std::uint8_t> nat_from_journal_;
  std::vector<disk::SitEntry> sit_;
  std::vector<disk::SummaryBlock> ssa_;
  std::vector<std::uint8_t> ssa_trusted_;  ///< per segment: the summary is authoritative
  std::vector<NodeRec> nodes_;             ///< by nid
  std::vector<AddrSlot> addrs_;
  std::vector<InodeRec> inodes_;
  std::unordered_map<nid_t, std::vector<std::uint8_t>> xattr_blocks_;  ///< xattr node payloads
  // Walk truth.
  std::vector<std::uint8_t> nid_reached_;
  std::vector<std::uint64_t> used_;  ///< main-area blocks in use (bitmap)
  std::vector<meta::BlockUse> uses_;
  std::unordered_map<nid_t, InodeState> state_;
  std::vector<nid_t> reached_inodes_;  ///< in walk order
  std::uint64_t valid_blocks_ = 0;     ///< blocks in use + NEW_ADDR reservations
  std::uint64_t node_count_ = 0, inode_count_ = 0;
  std::vector<nid_t> orphans_;
  bool walked_ = false;
  std::map<block_t, std::vector<Edit>> edits_;
  std::vector<std::size_t> global_fixes_;
  std::vector<std::size_t> lost_found_fixes_;
};

}  // namespace f2fscore::fsck
