// Private state of the checker (fsck_*.cpp): the metadata loaded in bulk,
// one compact record per node block, and the truth the walk builds.
#pragma once

#include <algorithm>
#include <array>
#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <unordered_map>
#include <vector>

#include "f2fscore/disk/dentry.hpp"
#include "f2fscore/disk/geometry.hpp"
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
  bool from_journal = false;  ///< the entry came from the checkpoint's NAT journal
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

/// What few inodes have: problems found by the scan, a non-zero inline
/// xattr area, inline dentries, a project id, the compression counts, an
/// inline symlink's length. Kept apart so that the record of a plain inode
/// holds none of it.
struct InodeExtras {
  std::vector<LocalIssue> issues;
  std::vector<std::uint8_t> inline_xattr;  ///< the inline xattr bytes when any is non-zero
  std::vector<Dent> inline_dents;          ///< inline directories
  std::vector<LocalIssue> inline_dent_issues;
  std::uint64_t compr_blocks = 0;  ///< i_compr_blocks (compressed files)
  std::uint32_t projid = 0;
  std::uint16_t symlink_len = 0;   ///< inline symlinks: strnlen of the target
  std::uint8_t compr_alg = 0;
  /// Compression attributes out of range: the i_log_cluster_size the
  /// repair writes (with compr_alg), else 0.
  std::uint8_t compr_log_fix = 0;
  std::uint64_t blocks = 0;    ///< i_blocks when at least 2^32
  std::uint32_t namelen = 0;   ///< i_namelen when above 255
  nid_t xattr_nid = 0;         ///< i_xattr_nid when not 0
  bool empty() const {
    return issues.empty() && inline_xattr.empty() && inline_dents.empty() && inline_dent_issues.empty() &&
           compr_blocks == 0 && projid == 0 && symlink_len == 0 && compr_alg == 0 && compr_log_fix == 0 &&
           blocks == 0 && namelen == 0 && xattr_nid == 0;
  }
};

/// A 64-bit value kept as two 32-bit halves, so that a record holding it
/// needs only 4-byte alignment.
struct Split64 {
  std::uint32_t lo = 0, hi = 0;
  Split64() = default;
  Split64(std::uint64_t v) : lo(static_cast<std::uint32_t>(v)), hi(static_cast<std::uint32_t>(v >> 32)) {}
  operator std::uint64_t() const { return static_cast<std::uint64_t>(hi) << 32 | lo; }
};

/// An inode as scanned (the fields the walk needs; the block is re-read to
/// repair it). 44 bytes; its block is its NAT entry's (Checker::iblk()); the
/// rare parts are in Checker::extras() (i_xattr_nid, an i_blocks past 2^32
/// or an i_namelen past 255 among them), a non-empty i_ext in
/// Checker::exts_ (Checker::ext_of()), the owner ids in Checker::ids_ (quota
/// only), its i_nid[] among its address slots (AddrSlot::kINid).
struct InodeRec {
  static constexpr std::uint32_t kNoExtras = 0xFFFFFFFFu;
  nid_t ino = 0;
  std::uint32_t links = 0, flags = 0, pino = 0;
  std::uint32_t extras = kNoExtras;  ///< into Checker's extras table
  std::uint32_t blocks_low = 0;      ///< i_blocks, when below 2^32 (else blocks_big)
  Split64 size;
  std::uint16_t mode = 0;
  std::uint16_t inline_xattr_addrs = 0;  ///< 4-byte words
  std::uint8_t extra_isize = 0;          ///< bytes (at most 36: sizeof(InodeExtra))
  std::uint8_t advise = 0, inline_flags = 0, dir_level = 0;
  std::uint8_t namelen_low = 0;          ///< i_namelen, when at most 255 (else namelen_big)
  std::uint8_t cluster_log : 4 = 0;      ///< log2 of the cluster's blocks; 0 unless compressed
  bool sane : 1 = true;  ///< the layout fields could be decoded (false: do not walk its data)
  bool blocks_big : 1 = false;   ///< i_blocks is InodeExtras::blocks
  bool namelen_big : 1 = false;  ///< i_namelen is InodeExtras::namelen
  bool has_xattr_nid : 1 = false;  ///< i_xattr_nid is InodeExtras::xattr_nid
  bool has_ext : 1 = false;        ///< i_ext.len is not 0: the extent is in Checker::exts_
  /// Blocks of a compressed cluster; 0 unless compressed.
  std::uint32_t cluster_blocks() const { return cluster_log ? 1u << cluster_log : 0u; }
  /// Address slots of i_addr (ADDRS_PER_INODE(): DEF_ADDRS_PER_INODE less the
  /// extra attributes and the inline xattr area, whole clusters when
  /// compressed, as addrs_per_inode() in fs/f2fs/f2fs.h).
  std::uint32_t addrs_per_inode() const {
    const std::uint32_t a = disk::addrs_per_inode(extra_isize, inline_xattr_addrs);
    return cluster_log ? a & ~(cluster_blocks() - 1u) : a;
  }
  /// Addresses a direct node holds for this file (whole clusters when compressed).
  std::uint32_t addrs_per_block() const {
    return cluster_log ? disk::kDefAddrsPerBlock & ~(cluster_blocks() - 1u) : disk::kDefAddrsPerBlock;
  }
  bool is_dir() const { return (mode & 0xF000) == 0x4000; }
  bool is_reg() const { return (mode & 0xF000) == 0x8000; }
  bool is_symlink() const { return (mode & 0xF000) == 0xA000; }
};
static_assert(sizeof(InodeRec) <= 44);

/// One node block as scanned (12 bytes).
struct NodeRec {
  static constexpr std::int32_t kNoInodeRec = 0x7FFFFFFF;
  std::uint32_t addr_begin = 0;  ///< into Checker::addrs (slot, blkaddr), non-zero only
  std::uint16_t addr_count = 0;  ///< at most kDefAddrsPerBlock, or an inode's addresses and 5 i_nid[]
  bool read_ok : 1 = false;
  bool reached : 1 = false;  ///< reached by the walk
  /// The walk claimed the node's block (its NAT blkaddr) as a block in use.
  bool use : 1 = false;
  /// The footer's nid is not the record's or its ino not the NAT entry's:
  /// both are in Checker::footer_odd_ (Checker::footer_nid(), footer_ino()).
  bool footer_odd : 1 = false;
  /// Into Checker::inodes (kNoInodeRec: an inode, not kept), or -1: not an
  /// inode. An inode's footer offset is 0, so one word holds either.
  std::int32_t inode() const { return is_inode_ ? static_cast<std::int32_t>(ref_) : -1; }
  void set_inode(std::int32_t index) {
    is_inode_ = index >= 0;
    ref_ = index >= 0 ? static_cast<std::uint32_t>(index) : 0u;
  }
  /// The footer's node offset (flag >> OFFSET_BIT_SHIFT); 0 for an inode.
  std::uint32_t footer_ofs() const { return is_inode_ ? 0u : ref_; }
  void set_footer_ofs(std::uint32_t ofs) {
    is_inode_ = false;
    ref_ = ofs;
  }

 private:
  bool is_inode_ : 1 = false;
  std::uint32_t ref_ = 0;
};
static_assert(sizeof(NodeRec) <= 12);

/// The per-nid state (NAT entry, scanned node, reached by the walk) of the
/// NAT blocks holding an entry in use; a NAT block whose entries are all
/// null has no record. Shape: one chunk of kNatEntryPerBlock records per
/// such NAT block, found by binary search on the NAT block index.
class NidTable {
 public:
  struct Rec {
    NatRec nat;
    NodeRec node;
  };
  void clear() {
    keys_.clear();
    chunks_.clear();
  }
  const Rec* find(nid_t nid) const {
    const std::uint32_t b = disk::Geometry::nat_block_of(nid);
    auto it = std::lower_bound(keys_.begin(), keys_.end(), b);
    if (it == keys_.end() || *it != b) return nullptr;
    return &(*chunks_[static_cast<std::size_t>(it - keys_.begin())])[nid % disk::kNatEntryPerBlock];
  }
  Rec* find(nid_t nid) { return const_cast<Rec*>(static_cast<const NidTable*>(this)->find(nid)); }
  /// The record of `nid`, its NAT block's chunk made if absent.
  Rec& get(nid_t nid) {
    const std::uint32_t b = disk::Geometry::nat_block_of(nid);
    auto it = std::lower_bound(keys_.begin(), keys_.end(), b);
    const auto i = static_cast<std::size_t>(it - keys_.begin());
    if (it == keys_.end() || *it != b) {
      keys_.insert(it, b);
      chunks_.insert(chunks_.begin() + static_cast<std::ptrdiff_t>(i), std::make_unique<Chunk>());
    }
    return (*chunks_[i])[nid % disk::kNatEntryPerBlock];
  }
  bool has_block(std::uint32_t nat_block) const { return std::binary_search(keys_.begin(), keys_.end(), nat_block); }
  /// Calls f(nid, rec) for every nid of the chunks, ascending; f makes no chunk.
  template <class F>
  void visit(F&& f) const {
    for (std::size_t i = 0; i < keys_.size(); ++i)
      for (std::uint32_t k = 0; k < disk::kNatEntryPerBlock; ++k) f(keys_[i] * disk::kNatEntryPerBlock + k, (*chunks_[i])[k]);
  }
  /// Calls f(nid, rec) for every nid of the chunks, ascending, from `from`.
  /// Chunks made by f are visited when above the current one.
  template <class F>
  void for_each(nid_t from, F&& f) {
    std::size_t i = static_cast<std::size_t>(
        std::lower_bound(keys_.begin(), keys_.end(), disk::Geometry::nat_block_of(from)) - keys_.begin());
    while (i < keys_.size()) {
      const std::uint32_t key = keys_[i];
      const std::size_t n0 = keys_.size();
      for (std::uint32_t k = 0; k < disk::kNatEntryPerBlock; ++k) {
        const nid_t nid = key * disk::kNatEntryPerBlock + k;
        if (nid < from) continue;
        f(nid, (*chunks_[i])[k]);
        if (keys_.size() != n0) i = static_cast<std::size_t>(std::lower_bound(keys_.begin(), keys_.end(), key) - keys_.begin());
      }
      ++i;
    }
  }
  /// Forgets what a walk marked: reached nodes and claimed node blocks.
  void clear_reached() {
    for (auto& c : chunks_)
      for (auto& r : *c) {
        r.node.reached = false;
        r.node.use = false;
      }
  }
  std::size_t blocks() const { return keys_.size(); }

 private:
  using Chunk = std::array<Rec, disk::kNatEntryPerBlock>;
  std::vector<std::uint32_t> keys_;              ///< NAT block indexes, ascending
  std::vector<std::unique_ptr<Chunk>> chunks_;   ///< parallel to keys_
};

/// What the checker keeps of one main-area segment: the SIT's valid count
/// and type, whether its valid map is empty, full or partial (partial maps
/// are kept apart), what the walk found in it, and the index of its bitmap
/// of blocks in use (none until the walk reaches a block of it).
struct SegState {
  static constexpr std::uint32_t kNone = 0xFFFFFFFFu;
  static constexpr std::uint8_t kMapEmpty = 0, kMapFull = 1, kMapPartial = 2;
  static constexpr std::uint8_t kHasNode = 4, kHasData = 8;
  std::uint16_t vblocks = 0;
  std::uint8_t type = 0;
  std::uint8_t flags = 0;  ///< map kind (low 2 bits), kHasNode, kHasData
  std::uint32_t used = kNone;
  std::uint8_t map() const { return flags & 3; }
};

/// A non-zero address of a node block: its slot and the value. An
/// inode's i_nid[k] is slot kINid + k, past every address slot.
struct AddrSlot {
  static constexpr std::uint16_t kINid = 1024;
  std::uint16_t slot;
  block_t blkaddr;
};

/// The non-zero address slots of every node scanned, in chunks of kChunk
/// slots (512 KiB). A node's slots are one run, contiguous within a chunk,
/// named by the index of its first (NodeRec::addr_begin; a chunk's unused
/// tail leaves a gap in the indexes). The table grows a chunk at a time,
/// so that it never holds a copy of itself, as a vector does while it
/// doubles.
class AddrTable {
 public:
  static constexpr std::uint32_t kChunk = 1u << 16;
  /// Starts a run of at most `max` slots (at most kChunk); the index of its
  /// first slot. push_back() then appends to it.
  std::uint32_t begin_run(std::uint32_t max) {
    if (chunks_.empty() || fill_ + max > kChunk) {
      chunks_.push_back(std::unique_ptr<AddrSlot[]>(new AddrSlot[kChunk]));
      fill_ = 0;
    }
    return size();
  }
  void push_back(const AddrSlot& a) { chunks_.back()[fill_++] = a; }
  /// One past the last index used (0 when empty).
  std::uint32_t size() const {
    return chunks_.empty() ? 0u : static_cast<std::uint32_t>((chunks_.size() - 1) * kChunk + fill_);
  }
  /// The `count` slots of the run from index `begin`; nullptr when count is 0.
  const AddrSlot* run(std::uint32_t begin, std::uint32_t count) const {
    return count == 0 ? nullptr : chunks_[begin / kChunk].get() + begin % kChunk;
  }
  const AddrSlot& operator[](std::uint32_t i) const { return chunks_[i / kChunk][i % kChunk]; }
  void clear() {
    chunks_.clear();
    fill_ = 0;
  }

 private:
  std::vector<std::unique_ptr<AddrSlot[]>> chunks_;
  std::uint32_t fill_ = 0;  ///< slots used in the last chunk
};

/// The walk's view of one inode, parallel to Checker::inodes_ (20 bytes).
/// A file reached through a dentry keeps where that first dentry is (its
/// name is read back from there when a problem needs the path); a
/// directory, or an inode reached by no dentry, has a DirState of its own
/// (kOwnDir), whose path replaces that name.
struct InodeState {
  static constexpr std::uint8_t kSeen = 1, kOrphan = 2, kNameInline = 4, kOwnDir = 8;
  nid_t parent = 0;
  std::uint32_t links_found = 0;   ///< dentries naming it (not "." / "..")
  /// Blocks found (a file's slots and node blocks: below 2^32, at most
  /// 923 + 2 * 1018 + 2 * 1018^2 + 1018^3 data slots).
  std::uint32_t blocks_counted = 0;
  /// kOwnDir: into Checker::dirs_; else the block of the first dentry naming
  /// it (the parent's inode block: inline).
  std::uint32_t link = 0;
  std::uint8_t name_slot = 0;      ///< the first dentry's slot (below NR_DENTRY_IN_BLOCK, 214)
  std::uint8_t name_len = 0;       ///< its name_len (at most F2FS_NAME_LEN)
  std::uint8_t flags = 0;          ///< kSeen (reached by the walk), kOrphan, kNameInline, kOwnDir
  bool seen() const { return flags & kSeen; }
  bool orphan() const { return flags & kOrphan; }
  bool has_dir() const { return flags & kOwnDir; }
};
static_assert(sizeof(InodeState) <= 20);

/// What the walk keeps of a directory (or of an inode reached by no dentry).
struct DirState {
  std::string path;
  std::uint32_t subdirs = 0;
  std::vector<std::pair<std::uint32_t, block_t>> dir_blocks;  ///< directories: (index, blkaddr)
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
  Status scan_nodes();
  void scan_node(nid_t nid, block_t addr, const std::uint8_t* blk);
  void scan_inode(nid_t nid, block_t addr, const disk::Node& n, NodeRec& rec);
  std::string mapped_but_dropped();
  void check_truncated_tail();
  std::optional<std::pair<std::uint32_t, std::uint8_t>> infer_compression(const disk::Node& n, std::uint32_t base,
                                                                          std::uint32_t addrs, std::uint32_t log,
                                                                          std::uint8_t alg);
  void check_superblocks();
  // fsck/walk.cpp
  void walk_namespace();
  /// Reaches inode `ino` by `path`. `named`: the caller set its parent and
  /// first name (a dentry), so a non-directory keeps no path of its own.
  bool walk_inode(nid_t ino, const std::string& path, bool named = false);
  void walk_node(const InodeRec& in, InodeState& st, nid_t nid, std::uint32_t ofs, int level, void* ctx,
                 block_t parent_blk, std::uint32_t parent_off);
  /// Checks the `n` address slots of addrs_ from index `a_begin`, those of node `holder`.
  void walk_data(const InodeRec& in, InodeState& st, nid_t holder, std::uint64_t first_index, std::uint32_t a_begin,
                 std::uint32_t n, std::uint32_t nslots, void* ctx);
  void walk_xattr(const InodeRec& in, InodeState& st);
  void expand_dirs(std::vector<nid_t>& level);
  void check_dentries(const InodeRec& dir, InodeState& st, std::vector<Dent>& dents, std::vector<nid_t>& next);
  void finish_inode_counts();
  void check_orphans();
  void check_quota();
  void adopt_quota_inodes();
  void check_quota_usage();  // fsck/quota.cpp
  /// Usage of quota type `t` (0 user, 1 group, 2 project) as the walk
  /// counted it: per id, (inodes, bytes) (quota files excluded).
  std::map<std::uint32_t, std::pair<std::uint64_t, std::uint64_t>> counted_quota(int t) const;  // fsck/quota.cpp
  bool rebuild_quota_file(int t, std::size_t problem);  // fsck/quota.cpp
  void check_unreachable();
  // fsck_global.cpp
  void check_global();
  void check_fsync_chain();
  void check_nat_bits();
  void check_ssa();
  bool fast_check();
  // fsck/repair.cpp
  void repair();

  /// Reports `cur` of `max` steps of `pass` through Options::progress,
  /// about once per 0.1 % and always at 0 and `max`.
  void progress(int pass, std::uint64_t cur, std::uint64_t max) {
    if (!opts_.progress) return;
    if (pass != progress_pass_) {
      progress_pass_ = pass;
      progress_next_ = 0;
    }
    if (cur < progress_next_ && cur != max) return;
    opts_.progress(pass, cur, max);
    progress_next_ = cur + std::max<std::uint64_t>(1, max / 1000);
  }
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
  bool root_first_block_lost(nid_t root);
  std::optional<block_t> first_block_addr(const InodeRec& in);
  void fix_zero_word(std::size_t idx, block_t blk, std::uint32_t byte_off);
  void local_issue_fix(std::size_t idx, const InodeRec& in, Code c);
  void mode_from_dentry(InodeRec& in, std::uint8_t dentry_type);
  bool rebuild_root(std::size_t problem);
  bool reconnect(nid_t ino);
  bool add_dentry(const InodeRec& dir, const std::string& name, nid_t ino, std::uint8_t ft, std::size_t problem = static_cast<std::size_t>(-1));
  bool create_lost_found();
  /// Adds `rec`, an inode the repair writes (its NodeRec at rec.ino set
  /// up by the caller), to the walk's truth: reached, with `path` as its
  /// own. Returns its walk state.
  InodeState& add_reached_inode(const InodeRec& rec, const std::string& path);
  Problem prob(Code c) const { Problem p; p.code = c; return p; }
  bool valid_main(block_t a) const { return a >= main_blk_ && a < main_end_; }
  bool used(block_t a) const {
    const SegState& s = segs_[segno_of(a)];
    if (s.used == SegState::kNone) return false;
    const std::uint32_t off = geo_->blkoff_of(a);
    return used_maps_[s.used][off >> 6] >> (off & 63) & 1;
  }
  /// Claims block `a` for the walk: in use, and its segment holds a node
  /// or a data block. The use itself is marked by the caller (NodeRec::use,
  /// addr_use_).
  void claim(block_t a, bool node_block) {
    set_used(a);
    segs_[segno_of(a)].flags |= node_block ? SegState::kHasNode : SegState::kHasData;
    ++use_count_;
  }
  void claim_node(nid_t n, block_t a) {
    claim(a, true);
    nids_.get(n).node.use = true;
  }
  /// Calls f(ino) for every inode the walk reached, in record order.
  template <class F>
  void for_each_reached_inode(F&& f) const {
    for (std::size_t i = 0; i < walk_.size() && i < inodes_.size(); ++i)
      if (walk_[i].seen()) f(inodes_[i].ino);
  }
  /// The first inode reached (record order) whose own path is `path`, or 0.
  nid_t reached_with_path(const std::string& path) const {
    for (std::size_t i = 0; i < walk_.size() && i < inodes_.size(); ++i)
      if (walk_[i].seen() && walk_[i].has_dir() && dirs_[walk_[i].link].path == path) return inodes_[i].ino;
    return 0;
  }
  /// Calls f(const meta::BlockUse&) for every block the walk claimed, in nid
  /// order: a node's own block, then the data blocks its address slots hold.
  template <class F>
  void for_each_use(F&& f) const {
    nids_.visit([&](nid_t n, const NidTable::Rec& rec) {
      if (rec.node.use) f(meta::BlockUse{rec.nat.blkaddr, n, 0, rec.nat.version, true});
      const std::size_t end = static_cast<std::size_t>(rec.node.addr_begin) + rec.node.addr_count;
      for (std::uint32_t k = rec.node.addr_begin; k < end && k < addrs_.size(); ++k)
        if (addr_use_[k >> 6] >> (k & 63) & 1)
          f(meta::BlockUse{addrs_[k].blkaddr, n, addrs_[k].slot, rec.nat.version, false});
    });
  }
  void set_used(block_t a) {
    SegState& s = segs_[segno_of(a)];
    if (s.used == SegState::kNone) {
      s.used = static_cast<std::uint32_t>(used_maps_.size());
      used_maps_.emplace_back();
    }
    const std::uint32_t off = geo_->blkoff_of(a);
    used_maps_[s.used][off >> 6] |= 1ull << (off & 63);
  }
  /// The SIT valid map bit of block `off` of segment `segno`.
  bool sit_bit(std::uint32_t segno, std::uint32_t off) const;
  bool sit_valid(block_t a) const;
  /// The rare parts of inode `in` (empty for most inodes).
  const InodeExtras& extras(const InodeRec& in) const {
    static const InodeExtras kEmpty;
    return in.extras == InodeRec::kNoExtras ? kEmpty : inode_extras_[in.extras];
  }
  /// The block of inode record `in`: its NAT entry's.
  block_t iblk(const InodeRec& in) const { return nat(in.ino).blkaddr; }
  /// i_ext of inode record `in` (all zero when its len is 0).
  disk::Extent ext_of(const InodeRec& in) const {
    if (!in.has_ext) return disk::Extent{};
    const auto index = static_cast<std::uint32_t>(node(in.ino).inode());
    auto it = std::lower_bound(exts_.begin(), exts_.end(), index,
                               [](const std::pair<std::uint32_t, disk::Extent>& e, std::uint32_t k) { return e.first < k; });
    return it != exts_.end() && it->first == index ? it->second : disk::Extent{};
  }
  /// i_blocks, i_namelen and i_xattr_nid of `in` as on disk.
  std::uint64_t i_blocks(const InodeRec& in) const { return in.blocks_big ? extras(in).blocks : in.blocks_low; }
  std::uint32_t i_namelen(const InodeRec& in) const { return in.namelen_big ? extras(in).namelen : in.namelen_low; }
  nid_t i_xattr_nid(const InodeRec& in) const { return in.has_xattr_nid ? extras(in).xattr_nid : 0; }
  /// i_uid and i_gid of the inode record at `index` (kept with quota only: 0 otherwise).
  std::pair<std::uint32_t, std::uint32_t> owner_ids(std::size_t index) const {
    return index < ids_.size() ? ids_[index] : std::pair<std::uint32_t, std::uint32_t>{0, 0};
  }
  const NatRec& nat(nid_t n) const {
    const auto* r = nids_.find(n);
    return r ? r->nat : kNoRec.nat;
  }
  const NodeRec& node(nid_t n) const {
    const auto* r = nids_.find(n);
    return r ? r->node : kNoRec.node;
  }
  /// The footer nid and ino of nid `n`'s node block as scanned (0 when not read).
  nid_t footer_nid(nid_t n) const {
    const auto* r = nids_.find(n);
    if (!r || !r->node.read_ok) return 0;
    return r->node.footer_odd ? footer_odd_.at(n).first : n;
  }
  nid_t footer_ino(nid_t n) const {
    const auto* r = nids_.find(n);
    if (!r || !r->node.read_ok) return 0;
    return r->node.footer_odd ? footer_odd_.at(n).second : r->nat.ino;
  }
  bool reached(nid_t n) const {
    const auto* r = nids_.find(n);
    return r && r->node.reached;
  }
  void set_reached(nid_t n) { nids_.get(n).node.reached = true; }
  Status read_nat_blocks(const std::vector<std::uint32_t>& blocks);
  Status read_sit(const std::map<std::uint32_t, disk::SitEntry>& journal);
  std::uint32_t segno_of(block_t a) const { return geo_->segno_of(a); }
  std::string inode_path(nid_t ino) const;
  /// The path of an inode reached: its own, or its parent's and its first
  /// name (read back from its dentry).
  std::string path_of(const InodeState& st) const;
  /// The walk state of inode `ino` (an inode record; see InodeState).
  InodeState& walk_state(nid_t ino) { return walk_[static_cast<std::size_t>(node(ino).inode())]; }
  const InodeState* find_state(nid_t ino) const {
    const NodeRec& r = node(ino);
    if (r.inode() < 0 || static_cast<std::size_t>(r.inode()) >= walk_.size()) return nullptr;
    const InodeState& st = walk_[static_cast<std::size_t>(r.inode())];
    return st.seen() ? &st : nullptr;
  }
  /// Gives `st` a path of its own (a DirState).
  DirState& own_dir(InodeState& st, const std::string& path) {
    if (!st.has_dir()) {
      st.link = static_cast<std::uint32_t>(dirs_.size());
      st.flags |= InodeState::kOwnDir;
      dirs_.emplace_back();
    }
    dirs_[st.link].path = path;
    return dirs_[st.link];
  }
  const std::string& own_path(const InodeState& st) const {
    static const std::string kEmpty;
    return st.has_dir() ? dirs_[st.link].path : kEmpty;
  }
  /// Whether inode `ino` was reached with path `path` of its own.
  bool path_is(nid_t ino, const std::string& path) const {
    const InodeState* st = find_state(ino);
    return st && own_path(*st) == path;
  }
  const std::vector<std::pair<std::uint32_t, block_t>>& dir_blocks_of(nid_t ino) const {
    static const std::vector<std::pair<std::uint32_t, block_t>> kNone;
    const InodeState* st = find_state(ino);
    return st && st->has_dir() ? dirs_[st->link].dir_blocks : kNone;
  }

  BlockDevice& dev_;
  Options opts_;
  Report report_;
  std::unique_ptr<Volume> vol_;
  const disk::Geometry* geo_ = nullptr;  ///< vol_'s
  disk::SuperBlock sb_{};
  disk::Checkpoint cp_{};
  std::uint32_t features_ = 0;
  std::uint32_t chksum_seed_ = 0;
  block_t main_blk_ = 0, main_end_ = 0;
  std::uint32_t main_segs_ = 0;
  nid_t max_nid_ = 0;
  inline static const NidTable::Rec kNoRec{};
  NidTable nids_;
  std::vector<SegState> segs_;                  ///< by segment number
  std::vector<std::uint32_t> partial_segnos_;   ///< segments with a partial SIT valid map, ascending
  std::vector<std::array<std::uint8_t, disk::kSitVblockMapSize>> partial_maps_;  ///< their maps
  std::vector<std::array<std::uint64_t, disk::Geometry::blocks_per_seg() / 64>> used_maps_;  ///< blocks in use
  AddrTable addrs_;
  std::vector<InodeRec> inodes_;
  std::vector<InodeExtras> inode_extras_;  ///< InodeRec::extras indexes it
  /// (inodes_ index, i_ext) of the inodes whose extent is not empty, by index.
  std::vector<std::pair<std::uint32_t, disk::Extent>> exts_;
  /// (i_uid, i_gid) parallel to inodes_, with the quota_ino feature only.
  std::vector<std::pair<std::uint32_t, std::uint32_t>> ids_;
  std::unordered_map<nid_t, std::vector<std::uint8_t>> xattr_blocks_;  ///< xattr node payloads
  /// (footer nid, footer ino) of the node blocks whose footer differs from
  /// their nid or NAT ino (NodeRec::footer_odd).
  std::unordered_map<nid_t, std::pair<nid_t, nid_t>> footer_odd_;
  // Walk truth.
  /// Blocks claimed by the walk (nodes and data). The uses themselves are
  /// NodeRec::use and addr_use_; for_each_use() lists them.
  std::uint64_t use_count_ = 0;
  std::vector<std::uint64_t> addr_use_;  ///< a bit per addrs_ slot: its data block was claimed
  std::vector<InodeState> walk_;  ///< parallel to inodes_
  std::vector<DirState> dirs_;    ///< InodeState::dir indexes it
  std::uint64_t reached_inodes_ = 0;   ///< inodes the walk reached
  std::uint64_t valid_blocks_ = 0;     ///< blocks in use + NEW_ADDR reservations
  std::uint64_t node_count_ = 0, inode_count_ = 0;
  std::vector<nid_t> orphans_;
  bool walked_ = false;
  /// Preen's first pass on a clean volume: the scan keeps only what
  /// fast_check() reads (footers, the problems of inodes), no inode record,
  /// address or xattr block; a full check scans again.
  bool light_scan_ = false;
  /// VOLUME_TRUNCATED: its index in the report, and whether the lost tail
  /// holds nothing in use (set by check_truncated_tail()).
  std::size_t truncated_problem_ = static_cast<std::size_t>(-1);
  /// Superblock #0 passed over for #1 (open_volume()): why, else empty.
  std::string sb_feature_disagrees_;
  bool truncated_tail_empty_ = false;
  /// QUOTA_INODE_BAD for superblock qf_ino[] without the quota_ino feature.
  std::size_t sb_quota_problem_ = static_cast<std::size_t>(-1);
  /// QUOTA_INODE_BAD fixed by the other superblock copy's qf_ino[]
  /// (adopt_quota_inodes()): the repair writes sb_.qf_ino[] to both.
  std::vector<std::size_t> qf_ino_adopted_;
  /// QUOTA_INODE_BAD of a quota inode with no usable node block, nothing
  /// else reaching its nid: (quota type, problem index), a new quota file
  /// for each made by repair() (rebuild_quota_file()).
  std::vector<std::pair<int, std::size_t>> quota_rebuilds_;
  Status ssa_status_;  ///< the SSA reads of check_ssa()
  int progress_pass_ = 0;
  std::uint64_t progress_next_ = 0;
  std::uint64_t pass1_done_ = 0, pass1_max_ = 0;
  std::map<block_t, std::vector<Edit>> edits_;
  std::vector<std::size_t> global_fixes_;
  std::vector<std::size_t> lost_found_fixes_;
  /// ROOT_BAD repaired by a new root inode (rebuild_root()); lost+found when
  /// reconnect() linked it back into that root in this pass.
  bool root_rebuilt_ = false;
  nid_t lf_relinked_ = 0;
  /// Files walked as unreachable that a later directory names: the first
  /// such directory and name.
  std::unordered_map<nid_t, std::pair<nid_t, std::string>> late_links_;
};

}  // namespace f2fscore::fsck
