// Node blocks: inodes, direct nodes and indirect nodes, each a 4 KiB block
// ending in a 24-byte footer. Layout as struct f2fs_node in
// include/linux/f2fs_fs.h (Linux 6.1).
#pragma once

#include <cstddef>
#include <cstdint>

#include "f2fscore/disk/constants.hpp"
#include "f2fscore/endian.hpp"

namespace f2fscore::disk {

inline constexpr std::uint32_t kNameLen = 255;          ///< F2FS_NAME_LEN
inline constexpr std::uint32_t kDefAddrsPerInode = 923; ///< i_addr slots without extra attrs
inline constexpr std::uint32_t kDefAddrsPerBlock = 1018;
inline constexpr std::uint32_t kNidsPerBlock = 1018;
inline constexpr std::uint32_t kDefaultInlineXattrAddrs = 50;  ///< 200 bytes
inline constexpr std::uint32_t kDefInlineReservedSize = 1;    ///< i_addr[0] unused by inline data

/// i_inline flags.
namespace inline_flag {
inline constexpr std::uint8_t xattr = 0x01;
inline constexpr std::uint8_t data = 0x02;
inline constexpr std::uint8_t dentry = 0x04;
inline constexpr std::uint8_t data_exist = 0x08;
inline constexpr std::uint8_t dots = 0x10;
inline constexpr std::uint8_t extra_attr = 0x20;
inline constexpr std::uint8_t pin_file = 0x40;
inline constexpr std::uint8_t compress_released = 0x80;
}  // namespace inline_flag

/// i_advise bits (FADVISE_*_BIT).
namespace advise {
inline constexpr std::uint8_t cold = 0x01;
inline constexpr std::uint8_t lost_pino = 0x02;
inline constexpr std::uint8_t encrypt = 0x04;
inline constexpr std::uint8_t enc_name = 0x08;
inline constexpr std::uint8_t keep_size = 0x10;
inline constexpr std::uint8_t hot = 0x20;
inline constexpr std::uint8_t verity = 0x40;
inline constexpr std::uint8_t truncate = 0x80;
}  // namespace advise

/// i_flags bits used by f2fs (F2FS_*_FL, the FS_*_FL values).
namespace iflag {
inline constexpr std::uint32_t compr = 0x00000004;
inline constexpr std::uint32_t sync = 0x00000008;
inline constexpr std::uint32_t immutable = 0x00000010;
inline constexpr std::uint32_t append = 0x00000020;
inline constexpr std::uint32_t nodump = 0x00000040;
inline constexpr std::uint32_t noatime = 0x00000080;
inline constexpr std::uint32_t nocomp = 0x00000400;
inline constexpr std::uint32_t index = 0x00001000;
inline constexpr std::uint32_t dirsync = 0x00010000;
inline constexpr std::uint32_t projinherit = 0x20000000;
inline constexpr std::uint32_t casefold = 0x40000000;
}  // namespace iflag

struct Extent {
  Le32 fofs;      ///< start file offset, in blocks
  Le32 blk_addr;  ///< start block address
  Le32 len;       ///< length, in blocks
};
static_assert(sizeof(Extent) == 12);

/// Footer flag bits (the low 3 bits of `flag` are node flags; the rest is
/// the node's offset in its inode's node tree, shifted by 3).
namespace node_flag {
inline constexpr std::uint32_t cold = 0x1;   ///< COLD_BIT_SHIFT 0
inline constexpr std::uint32_t fsync = 0x2;  ///< FSYNC_BIT_SHIFT 1
inline constexpr std::uint32_t dent = 0x4;   ///< DENT_BIT_SHIFT 2
inline constexpr std::uint32_t offset_shift = 3;
}  // namespace node_flag

struct NodeFooter {
  Le32 nid;
  Le32 ino;
  Le32 flag;
  Le64 cp_ver;
  Le32 next_blkaddr;
};
static_assert(sizeof(NodeFooter) == 24);

inline constexpr std::uint32_t kNodeFooterOffset = kBlockSize - sizeof(NodeFooter);  // 4072

/// The extra attribute area at the start of i_addr (when i_inline has
/// inline_flag::extra_attr). i_extra_isize says how much of it is in use.
struct InodeExtra {
  Le16 i_extra_isize;
  Le16 i_inline_xattr_size;  ///< in 4-byte words (flexible_inline_xattr)
  Le32 i_projid;
  Le32 i_inode_checksum;
  Le64 i_crtime;
  Le32 i_crtime_nsec;
  Le64 i_compr_blocks;
  std::uint8_t i_compress_algorithm;
  std::uint8_t i_log_cluster_size;
  Le16 i_compress_flag;
};
static_assert(sizeof(InodeExtra) == 36);
static_assert(offsetof(InodeExtra, i_projid) == 4);
static_assert(offsetof(InodeExtra, i_inode_checksum) == 8);
static_assert(offsetof(InodeExtra, i_crtime) == 12);
static_assert(offsetof(InodeExtra, i_compr_blocks) == 24);

struct Inode {
  Le16 i_mode;
  std::uint8_t i_advise;
  std::uint8_t i_inline;
  Le32 i_uid;
  Le32 i_gid;
  Le32 i_links;
  Le64 i_size;    ///< bytes
  Le64 i_blocks;  ///< 4 KiB blocks held, the inode block included
  Le64 i_atime;
  Le64 i_ctime;
  Le64 i_mtime;
  Le32 i_atime_nsec;
  Le32 i_ctime_nsec;
  Le32 i_mtime_nsec;
  Le32 i_generation;
  Le32 i_current_depth;  ///< directories; i_gc_failures (Le16) for regular files
  Le32 i_xattr_nid;
  Le32 i_flags;
  Le32 i_pino;
  Le32 i_namelen;
  std::uint8_t i_name[kNameLen];
  std::uint8_t i_dir_level;
  Extent i_ext;
  union {
    InodeExtra extra;
    Le32 i_addr[kDefAddrsPerInode];
  };
  Le32 i_nid[5];  ///< direct(2), indirect(2), double indirect(1)
};
static_assert(sizeof(Inode) == kNodeFooterOffset);
static_assert(offsetof(Inode, i_name) == 92);
static_assert(offsetof(Inode, i_dir_level) == 347);
static_assert(offsetof(Inode, i_ext) == 348);
static_assert(offsetof(Inode, i_addr) == 360);
static_assert(offsetof(Inode, i_nid) == 4052);

inline constexpr std::uint32_t kExtraIsizeOffset = offsetof(Inode, i_addr);

/// i_addr slots left for block addresses: DEF_ADDRS_PER_INODE less the extra
/// attribute area (`extra_isize` bytes) and the inline xattr area
/// (`inline_xattr_addrs` 4-byte words), as addrs_per_inode() in
/// fs/f2fs/f2fs.h before a compressed file's rounding to whole clusters; 0
/// when the two areas leave none.
constexpr std::uint32_t addrs_per_inode(std::uint32_t extra_isize, std::uint32_t inline_xattr_addrs) {
  const std::uint32_t used = extra_isize / 4 + inline_xattr_addrs;
  return used >= kDefAddrsPerInode ? 0 : kDefAddrsPerInode - used;
}
/// Bytes of inline data or inline dentries an inode holds: its address
/// slots less the reserved first one (MAX_INLINE_DATA() in fs/f2fs/f2fs.h);
/// 0 when none are left.
constexpr std::uint32_t max_inline_data(std::uint32_t extra_isize, std::uint32_t inline_xattr_addrs) {
  const std::uint32_t slots = addrs_per_inode(extra_isize, inline_xattr_addrs);
  return slots > kDefInlineReservedSize ? 4 * (slots - kDefInlineReservedSize) : 0;
}
/// Byte offset in the node block of the inline data or inline dentries:
/// i_addr past the extra attribute area and the reserved slot
/// (inline_data_addr() in fs/f2fs/f2fs.h).
constexpr std::uint32_t inline_data_offset(std::uint32_t extra_isize) {
  return static_cast<std::uint32_t>(offsetof(Inode, i_addr)) + 4 * (extra_isize / 4 + kDefInlineReservedSize);
}
/// Byte offset in the node block of the inline xattr area: the last
/// `inline_xattr_addrs` slots of i_addr (inline_xattr_addr() in fs/f2fs/xattr.h);
/// `inline_xattr_addrs` is at most kDefAddrsPerInode.
constexpr std::uint32_t inline_xattr_offset(std::uint32_t inline_xattr_addrs) {
  return static_cast<std::uint32_t>(offsetof(Inode, i_addr)) + 4 * (kDefAddrsPerInode - inline_xattr_addrs);
}

inline constexpr std::uint32_t kInodeChecksumOffset = kExtraIsizeOffset + offsetof(InodeExtra, i_inode_checksum);

struct DirectNode {
  Le32 addr[kDefAddrsPerBlock];
};
static_assert(sizeof(DirectNode) == kNodeFooterOffset);

struct IndirectNode {
  Le32 nid[kNidsPerBlock];
};
static_assert(sizeof(IndirectNode) == kNodeFooterOffset);

/// The first file block index that the direct node at footer offset
/// `node_ofs` maps, for an inode of `addrs_per_inode` i_addr slots and
/// direct nodes of `addrs_per_block` slots; 0 for the inode itself
/// (node_ofs 0). Node offsets as the kernel numbers them: 1, 2 direct; 3
/// and 4 + kNidsPerBlock indirect, each followed by its direct nodes; 5 + 2
/// * kNidsPerBlock double indirect. Rule as start_bidx_of_node() in
/// fs/f2fs/node.c.
constexpr std::uint64_t start_bidx_of_node(std::uint32_t node_ofs, std::uint32_t addrs_per_inode,
                                           std::uint32_t addrs_per_block) noexcept {
  constexpr std::uint32_t indirect_blks = 2 * kNidsPerBlock + 4;
  if (node_ofs == 0) return 0;
  std::uint64_t bidx;
  if (node_ofs <= 2) bidx = node_ofs - 1;
  else if (node_ofs <= indirect_blks) bidx = node_ofs - 2 - (node_ofs - 4) / (kNidsPerBlock + 1);
  else bidx = node_ofs - 5 - (node_ofs - indirect_blks - 3) / (kNidsPerBlock + 1);
  return bidx * addrs_per_block + addrs_per_inode;
}

/// Whether the node at footer offset `node_ofs` is a direct node, as
/// IS_DNODE() in fs/f2fs/node.h: the inode (0), the direct nodes and the
/// xattr node (every offset bit set) are; the indirect nodes at 3,
/// 4 + kNidsPerBlock, 5 + 2 * kNidsPerBlock and every (kNidsPerBlock + 1)-th
/// offset after that are not.
constexpr bool is_dnode_offset(std::uint32_t node_ofs) noexcept {
  constexpr std::uint32_t N = kNidsPerBlock;
  if (node_ofs == 3 || node_ofs == 4 + N || node_ofs == 5 + 2 * N) return false;
  if (node_ofs >= 6 + 2 * N && node_ofs != (0xFFFFFFFFu >> node_flag::offset_shift) &&
      (node_ofs - (6 + 2 * N)) % (N + 1) == 0)
    return false;
  return true;
}

/// The dentry file type (1 regular .. 7 symlink) of an i_mode; 0 for a mode
/// of no known type. As fs_umode_to_ftype() / f2fs_type_by_mode.
constexpr std::uint8_t file_type_of_mode(std::uint16_t mode) noexcept {
  switch (mode & 0xF000) {
    case 0x8000: return 1;
    case 0x4000: return 2;
    case 0x2000: return 3;
    case 0x6000: return 4;
    case 0x1000: return 5;
    case 0xC000: return 6;
    case 0xA000: return 7;
    default: return 0;
  }
}

/// A whole node block: inode, direct or indirect node, then the footer.
struct Node {
  union {
    Inode i;
    DirectNode dn;
    IndirectNode in;
  };
  NodeFooter footer;
};
static_assert(sizeof(Node) == kBlockSize);
static_assert(offsetof(Node, footer) == kNodeFooterOffset);

/// i_extra_isize that mkfs.f2fs writes for a feature set: the extra area up
/// to the last attribute any enabled feature needs (calc_extra_isize() in
/// f2fs-tools lib/libf2fs.c). 4 (i_projid not included) .. 36 bytes.
std::uint16_t extra_isize_for_features(std::uint32_t features) noexcept;

}  // namespace f2fscore::disk
