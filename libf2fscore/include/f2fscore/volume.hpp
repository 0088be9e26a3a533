// Opening an F2FS volume and reading it: superblock and checkpoint
// selection, NAT/SIT/SSA, nodes, inodes, file data, directories, links and
// xattrs. Read-only; the writer builds on this.
//
// A Volume borrows its BlockDevice (which must outlive it) and does all I/O
// through it. Methods are not thread-safe: serialise calls per Volume.
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include "f2fscore/device.hpp"
#include "f2fscore/disk/checkpoint.hpp"
#include "f2fscore/disk/geometry.hpp"
#include "f2fscore/disk/dentry.hpp"
#include "f2fscore/disk/nat.hpp"
#include "f2fscore/disk/node.hpp"
#include "f2fscore/disk/sit.hpp"
#include "f2fscore/disk/summary.hpp"
#include "f2fscore/disk/superblock.hpp"
#include "f2fscore/result.hpp"

namespace f2fscore {

using disk::block_t;
using disk::nid_t;

struct VolumeOpenOptions {
  /// Verify inode checksums (when the volume has inode_checksum) on every
  /// inode read; a mismatch is Errc::corrupt.
  bool verify_inode_checksums = true;
  /// For checkers only (default off): accept a checkpoint that the kernel's
  /// sanity_check_ckpt() (fs/f2fs/super.c) and the journal reads refuse for
  /// these counts alone, trimming them as fsck.f2fs does instead of failing:
  ///  - a NAT journal claiming more than 38 entries or a SIT journal more
  ///    than 6 (the capacity of the 4 KiB summary block's journal) is read
  ///    as holding that capacity;
  ///  - next_free_nid at or past the NAT's last nid is set to root_ino + 1.
  /// Each clamp adds a warning ("checkpoint: ... (clamped ...)") and sets
  /// the matching OpenReport field. Everything else is checked as usual.
  bool lenient_checkpoint = false;
  /// For checkers only: the superblock copy (0 or 1) to use when it is
  /// valid; -1 (the default) takes the first valid copy, as the kernel's
  /// read_raw_super_block() does.
  int superblock_copy = -1;
};

/// Which superblock and checkpoint pack were chosen, and what was wrong with
/// the others (as the kernel does, a bad copy is not fatal if the other is good).
struct OpenReport {
  int superblock_copy = 0;          ///< 0 or 1: the copy in use
  std::vector<std::string> warnings;  ///< e.g. "superblock #1: crc ... does not match"
  int checkpoint_pack = 0;          ///< 0 or 1
  std::uint64_t checkpoint_ver = 0;
  bool clean_unmount = false;       ///< CP_UMOUNT_FLAG
  /// Fsynced node chains after the checkpoint (roll-forward recovery not
  /// yet done): found by following the warm node log as the kernel would.
  std::uint32_t pending_fsync_nodes = 0;
  /// Lenient opens only (VolumeOpenOptions::lenient_checkpoint): what was
  /// clamped. The journal counts as found on disk (0: not clamped), and
  /// the next_free_nid found (meaningful when next_free_nid_clamped).
  std::uint32_t nat_journal_claimed = 0;
  std::uint32_t sit_journal_claimed = 0;
  bool next_free_nid_clamped = false;
  std::uint64_t raw_next_free_nid = 0;
};

/// A segment's SIT entry with its type and valid-block map.
struct SegmentInfo {
  std::uint32_t valid_blocks = 0;
  std::uint8_t type = 0;  ///< disk::CursegType value
  std::uint8_t valid_map[disk::kSitVblockMapSize] = {};
  std::uint64_t mtime = 0;
};

/// An inode, decoded. Units: sizes in bytes, blocks in 4 KiB blocks.
struct InodeInfo {
  nid_t ino = 0;
  block_t node_blkaddr = 0;
  disk::Node raw{};  ///< the whole node block as on disk
  std::uint16_t mode = 0;
  std::uint64_t size = 0;
  std::uint64_t blocks = 0;
  std::uint32_t links = 0;
  std::uint32_t uid = 0, gid = 0;
  std::uint32_t flags = 0;     ///< i_flags
  std::uint8_t inline_flags = 0;
  std::uint8_t advise = 0;
  std::uint32_t extra_isize = 0;       ///< bytes
  std::uint32_t inline_xattr_addrs = 0;  ///< 4-byte slots at the end of i_addr
  std::uint32_t addrs_per_inode = 0;   ///< data slots in i_addr (ADDRS_PER_INODE)
  std::uint32_t addrs_per_block = 0;   ///< per direct node (ADDRS_PER_BLOCK)
  std::uint32_t cluster_blocks = 0;    ///< compressed files: blocks per cluster, else 0
  bool is_dir() const { return (mode & 0xF000) == 0x4000; }
  bool is_reg() const { return (mode & 0xF000) == 0x8000; }
  bool is_symlink() const { return (mode & 0xF000) == 0xA000; }
  bool has_inline_data() const { return inline_flags & disk::inline_flag::data; }
  bool has_inline_dentry() const { return inline_flags & disk::inline_flag::dentry; }
  bool is_encrypted() const { return advise & disk::advise::encrypt; }
  bool is_casefolded() const { return flags & disk::iflag::casefold; }
  bool is_compressed() const { return flags & disk::iflag::compr; }
  bool is_verity() const { return advise & disk::advise::verity; }
  /// Bytes available for inline data or dentries (MAX_INLINE_DATA).
  std::uint32_t max_inline_bytes() const;
  /// Byte offset of the inline data/dentry area inside the node block.
  std::uint32_t inline_offset() const;
};

struct DirEntryInfo {
  std::string name;  ///< raw on-disk bytes (ciphertext for encrypted directories)
  nid_t ino = 0;
  disk::FileType type = disk::FileType::unknown;
  std::uint32_t hash = 0;
};

struct XattrInfo {
  std::uint8_t index = 0;  ///< disk::xattr_index
  std::string name;        ///< without the index prefix
  std::string value;       ///< as getxattr(2) returns it (POSIX ACLs in the xattr form, not f2fs's)
  /// The full name as Linux shows it ("user.foo", "system.posix_acl_access").
  std::string full_name() const;
};

class Volume {
 public:
  /// Opens the volume on `dev` read-only. Errors: Errc::corrupt naming the
  /// structure and address when no superblock or checkpoint is usable,
  /// Errc::unsupported for block sizes above 4 KiB, zoned or packed_ssa
  /// volumes, and device 0 of a multi-device volume opened alone (the
  /// message names the other devices; open_volume_devices() in
  /// multi_device.hpp presents them all as one device).
  static Result<std::unique_ptr<Volume>> open(BlockDevice& dev, const VolumeOpenOptions& opts = {});
  ~Volume();

  const disk::SuperBlock& superblock() const;
  const disk::Checkpoint& checkpoint() const;
  /// The CP block and its payload blocks (the SIT/NAT version bitmaps live here).
  std::span<const std::uint8_t> checkpoint_blocks() const;
  const OpenReport& open_report() const;
  BlockDevice& device();

  // --- Geometry (4 KiB blocks) ---
  /// The layout rules of this volume (from the superblock in use).
  const disk::Geometry& geometry() const;
  /// The checkpoint's NAT and SIT version bitmaps (views into
  /// checkpoint_blocks()).
  const disk::VersionBitmaps& version_bitmaps() const;
  std::uint64_t main_blkaddr() const;
  std::uint32_t main_segments() const;
  std::uint64_t segment_start(std::uint32_t segno) const;  ///< block address of a main-area segment
  bool is_valid_main_addr(block_t blkaddr) const;
  /// The segment number of a main-area block address.
  std::uint32_t segno_of(block_t blkaddr) const;

  // --- Metadata areas ---
  /// The NAT entry of `nid` (journal first, then the current NAT copy).
  /// Errors: Errc::out_of_range for nids past the NAT, Errc::io.
  Result<disk::NatEntry> nat_entry(nid_t nid);
  /// Largest nid the NAT can hold + 1.
  nid_t max_nid() const;
  /// The SIT entry of a main-area segment (journal first).
  Result<SegmentInfo> segment(std::uint32_t segno);
  /// The SIT entries of segments [first, first + count) (journal first),
  /// `out` resized to `count`: the SIT blocks holding them (current copy
  /// through the version bitmap) are read in one request per run of
  /// consecutive addresses, at most 64 blocks (256 KiB) each. Errors as
  /// segment() (Errc::out_of_range past the main area, Errc::corrupt for a
  /// valid count above the segment's blocks, the device's errors).
  Status segments(std::uint32_t first, std::uint32_t count, std::vector<SegmentInfo>& out);
  /// The summary block of a segment (from the CP pack for active logs).
  /// Errc::out_of_range past the main area; Errc::unsupported for a
  /// segment other than the two active logs of a read-only image (the ro
  /// feature: no SSA area, as mkfs.f2fs lays it out).
  Result<disk::SummaryBlock> summary(std::uint32_t segno);
  /// Orphan inode numbers recorded in the checkpoint.
  Result<std::vector<nid_t>> orphans();
  /// Whether the nat_bits in the CP segment match this checkpoint.
  bool nat_bits_valid() const;

  // --- Nodes and inodes ---
  /// Reads a block. Errors: Errc::io, Errc::out_of_range.
  Status read_block(block_t blkaddr, std::span<std::uint8_t> out);
  /// The node block of `nid`, checked: valid address, footer nid matches.
  Result<disk::Node> read_node(nid_t nid, block_t* blkaddr = nullptr);
  /// Reads and decodes an inode. Errors: Errc::not_found (free nid),
  /// Errc::corrupt (not an inode, bad checksum, bad sizes).
  Result<InodeInfo> read_inode(nid_t ino);

  // --- Files ---
  /// Block address of file block `index` (NULL_ADDR for a hole, NEW_ADDR,
  /// COMPRESS_ADDR as stored). Errors: Errc::corrupt for a bad node tree.
  Result<block_t> map_block(const InodeInfo& inode, std::uint64_t index);
  /// Reads up to out.size() bytes at `offset`; returns bytes read (short at
  /// EOF). Holes read as zeroes; compressed clusters are decompressed.
  Result<std::size_t> read(const InodeInfo& inode, std::uint64_t offset, std::span<std::uint8_t> out);
  /// A symlink's target (the raw bytes; ciphertext if encrypted).
  Result<std::string> read_link(const InodeInfo& inode);

  // --- Directories ---
  /// Every entry of a directory, "." and ".." included, in on-disk order.
  Result<std::vector<DirEntryInfo>> read_dir(const InodeInfo& dir);
  /// Looks `name` up in `dir` as the kernel does (hash buckets level by
  /// level; casefolded directories compare casefolded names).
  Result<DirEntryInfo> lookup(const InodeInfo& dir, std::string_view name);
  /// Resolves an absolute path ("/a/b"), following no symlinks.
  Result<InodeInfo> resolve(std::string_view path);

  // --- Extended attributes ---
  Result<std::vector<XattrInfo>> xattrs(const InodeInfo& inode);

 private:
  Volume();
  void count_pending_fsync_nodes();
 public:
  struct Impl;

 private:
  std::unique_ptr<Impl> impl_;
};

}  // namespace f2fscore
