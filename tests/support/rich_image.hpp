// A small volume with something of every kind in it, made in memory: our
// mkfs, then files written straight into the image (NAT entries, node and
// data blocks) with the layout Linux uses. It gives the robustness test and
// the fuzz target inline and block data, direct, indirect and
// double-indirect nodes, a two-level hashed directory with a 255-byte name in
// its last slots, an inline-dentry directory, inline and block symlinks,
// inline and node xattrs, device nodes, a fifo, a socket and a hard link.
// Header-only (the fuzz target includes it without GoogleTest).
//
//   /small  /hard (same inode)  /big  /link -> small  /longlink  /xa
//   /fifo  /chr  /sock  /dir/{inl/{x,y}, f00..f19, deep0..deep5, <255 x 'n'>}
//   with the compression feature: /lz4, /zstd, /lzo and /lzo-rle, each a
//   cluster of 4 blocks compressed to one (16 KiB of 'A'), then a plain
//   cluster.
//   with casefold: /cf, a casefolded directory (Hello, WORLD, café).
#pragma once

#include <cstdio>
#include <cstring>
#include <map>
#include <string>
#include <string_view>
#include <vector>

#include "f2fscore/casefold.hpp"
#include "f2fscore/checksum.hpp"
#include "f2fscore/disk/dentry.hpp"
#include "f2fscore/disk/nat.hpp"
#include "f2fscore/disk/sit.hpp"
#include "f2fscore/disk/summary.hpp"
#include "f2fscore/disk/xattr.hpp"
#include "f2fscore/mkfs.hpp"
#include "f2fscore/volume.hpp"
#include "support/sparse_image.hpp"

namespace f2fstest {

struct RichImageOptions {
  std::uint32_t features = 0;  ///< disk::feature bits for mkfs
  bool large_nat_bitmap = false;
  bool heap = false;
  std::uint64_t bytes = 64ull << 20;
  std::uint16_t encoding = 0;  ///< with casefold: 1 (utf8)
  /// Node blocks in a segment of their own (typed warm node, with a node
  /// summary), as Linux keeps them; false puts nodes and data in one segment.
  bool node_segment = false;
  /// The volume as a file system would leave it, clean under our full check
  /// and fsck.f2fs -f (with node_segment): the checkpoint's block, node,
  /// inode and free segment counts, the data blocks' summaries (owner nid
  /// and offset), i_links of every hard-linked inode, '.' and '..' in the
  /// inline directory, the compressed clusters' reserved slots counted in
  /// i_blocks and i_compr_blocks, and the quota files' usage of id 0.
  /// False leaves those as mkfs wrote them, for tests of the checker's
  /// findings on exactly those shortcuts.
  bool consistent = false;
};

/// Byte `i` of the data block tagged `tag` (every data block has a tag).
inline std::uint8_t rich_pattern(std::uint32_t tag, std::size_t i) {
  return static_cast<std::uint8_t>(tag * 131u + i * 7u + (i >> 8));
}

/// The XATTR_NODE_OFFSET of an xattr node's footer (all offset bits set).
inline constexpr std::uint32_t kXattrNodeOffset = 0xFFFFFFFFu >> f2fscore::disk::node_flag::offset_shift;

struct RichImage {
  SparseImage img;
  std::string error;  ///< why building failed; empty on success
  using nid_t = f2fscore::disk::nid_t;
  nid_t small = 0, big = 0, dir = 0, inl = 0, link = 0, longlink = 0, xa = 0, fifo = 0, chr = 0, sock = 0;
  nid_t xattr_nid = 0;
  nid_t lz4 = 0, zstd = 0, lzo = 0, lzo_rle = 0;  ///< compressed files (0 without the feature)
  nid_t cf = 0;             ///< casefolded directory (0 without casefold)
  std::uint64_t cf_blk = 0; ///< its dentry block
  /// big's node tree: the direct node, the indirect node and its two direct
  /// nodes, the double-indirect node, its indirect node and direct node.
  nid_t big_dn = 0, big_in = 0, big_in_dn0 = 0, big_in_dn1017 = 0, big_din = 0, big_din_in = 0, big_din_dn = 0;
  std::map<nid_t, std::uint64_t> node_blk;  ///< every node written: nid -> block
  std::vector<std::uint64_t> dir_blocks;     ///< /dir's dentry blocks by index (0 for holes)
  std::uint64_t root_dentry_blk = 0;
  std::uint64_t big_size = 0;
  std::map<std::uint64_t, std::uint32_t> big_data;  ///< big's file block index -> tag
  std::string long_name;                           ///< 255 bytes, in /dir block 1 at slot 182
  std::vector<std::string> dir_names;              ///< names in /dir, "." and ".." aside
};

namespace detail {

class RichBuilder {
 public:
  using Node = f2fscore::disk::Node;
  using nid_t = f2fscore::disk::nid_t;

  RichBuilder(RichImage& out, const f2fscore::Volume& v) : r_(out), img_(out.img) {
    using namespace f2fscore::disk;
    sb_ = v.superblock();
    cp_ = v.checkpoint();
    cp_pack_ = v.open_report().checkpoint_pack;
    const auto cpb = v.checkpoint_blocks();
    cp_blocks_.assign(cpb.begin(), cpb.end());
    feat_ = sb_.feature.get();
    extra_ = (feat_ & feature::extra_attr) ? extra_isize_for_features(feat_) : 0;
    // Files go in the first segment no active log uses, past the middle.
    std::uint32_t seg = v.main_segments() / 2;
    for (bool busy = true; busy; ++seg) {
      busy = false;
      for (int i = 0; i < 3; ++i)
        busy = busy || cp_.cur_node_segno[i].get() == seg || cp_.cur_data_segno[i].get() == seg;
      if (!busy) break;
    }
    seg_ = seg;
    seg_start_ = next_blk_ = v.segment_start(seg);
  }

  /// See RichImageOptions::consistent.
  void make_consistent() { consistent_ = true; }

  /// Nodes go to the next free segment after the data segment.
  void separate_nodes(const f2fscore::Volume& v) {
    std::uint32_t seg = seg_ + 1;
    for (bool busy = true; busy; ++seg) {
      busy = false;
      for (int i = 0; i < 3; ++i)
        busy = busy || cp_.cur_node_segno[i].get() == seg || cp_.cur_data_segno[i].get() == seg;
      if (!busy) break;
    }
    node_seg_ = seg;
    node_start_ = next_node_blk_ = v.segment_start(seg);
    separate_ = true;
  }

  void build() {
    using namespace f2fscore::disk;
    const std::uint64_t root_blk = nat_get(kRootIno);
    Node& root = *img_.view<Node>(root_blk);
    r_.root_dentry_blk = root.i.i_addr[slot0()].get();
    auto& rootd = *img_.view<DentryBlock>(r_.root_dentry_blk);
    View rv{rootd.dentry_bitmap, rootd.dentry, &rootd.filename[0][0], kNrDentryInBlock};

    // /small and its hard link /hard: inline data.
    r_.small = nid();
    {
      Node& n = inode(r_.small, 0100644, 2, 100, kRootIno, "small");
      n.i.i_inline = static_cast<std::uint8_t>(n.i.i_inline | inline_flag::data | inline_flag::data_exist);
      std::uint8_t* d = inline_area(n);
      for (std::size_t i = 0; i < 100; ++i) d[i] = rich_pattern(1, i);
    }
    add(rv, "small", r_.small, FileType::reg_file);
    add(rv, "hard", r_.small, FileType::reg_file);

    build_big();
    add(rv, "big", r_.big, FileType::reg_file);

    // Symlinks: inline and in a block.
    r_.link = nid();
    {
      Node& n = inode(r_.link, 0120777, 1, 5, kRootIno, "link");
      n.i.i_inline = static_cast<std::uint8_t>(n.i.i_inline | inline_flag::data | inline_flag::data_exist);
      std::memcpy(inline_area(n), "small", 5);
    }
    add(rv, "link", r_.link, FileType::symlink);
    r_.longlink = nid();
    {
      Node& n = inode(r_.longlink, 0120777, 1, 300, kRootIno, "longlink");
      const std::uint64_t b = next_blk_++;
      std::uint8_t* d = img_.at(b);
      for (std::size_t i = 0; i < 300; ++i) d[i] = i % 10 == 0 ? '/' : static_cast<std::uint8_t>('a' + i % 26);
      n.i.i_addr[slot0()].set(static_cast<std::uint32_t>(b));
      n.i.i_blocks.set(2);
    }
    add(rv, "longlink", r_.longlink, FileType::symlink);

    build_xattr_file();
    add(rv, "xa", r_.xa, FileType::reg_file);

    r_.fifo = nid();
    inode(r_.fifo, 0010644, 1, 0, kRootIno, "fifo");
    add(rv, "fifo", r_.fifo, FileType::fifo);
    r_.chr = nid();
    inode(r_.chr, 0020644, 1, 0, kRootIno, "chr").i.i_addr[slot0()].set((1u << 8) | 3u);
    add(rv, "chr", r_.chr, FileType::chrdev);
    r_.sock = nid();
    inode(r_.sock, 0140755, 1, 0, kRootIno, "sock");
    add(rv, "sock", r_.sock, FileType::sock);

    build_dir();
    add(rv, "dir", r_.dir, FileType::dir);

    if (feat_ & feature::compression) {
      r_.lz4 = compressed_file("lz4", 1, lz4_stream());
      add(rv, "lz4", r_.lz4, FileType::reg_file);
      r_.zstd = compressed_file("zstd", 2, zstd_stream());
      add(rv, "zstd", r_.zstd, FileType::reg_file);
      r_.lzo = compressed_file("lzo", 0, lzo_stream());
      add(rv, "lzo", r_.lzo, FileType::reg_file);
      r_.lzo_rle = compressed_file("lzo-rle", 3, lzo_stream());
      add(rv, "lzo-rle", r_.lzo_rle, FileType::reg_file);
    }
    if (feat_ & feature::casefold) {
      build_casefolded_dir();
      add(rv, "cf", r_.cf, FileType::dir);
      root.i.i_links.set(root.i.i_links.get() + 1);
    }
    root.i.i_links.set(root.i.i_links.get() + 1);
    if (consistent_) {
      set_file_links();
      find_data_owners();
      update_quota();
      update_checkpoint();
    }
    inodes_.push_back(root_blk);

    for (std::uint64_t b : inodes_) reseal_block(img_, b);
    write_sit_and_ssa();
  }

 private:
  struct View {  // a dentry area: regular block or inline
    std::uint8_t* bitmap;
    f2fscore::disk::DirEntry* de;
    std::uint8_t* names;
    std::uint32_t nr;
  };

  std::uint32_t slot0() const { return extra_ / 4u; }
  std::uint32_t inline_xattr_addrs() const { return f2fscore::disk::kDefaultInlineXattrAddrs; }
  std::uint32_t api() const { return f2fscore::disk::kDefAddrsPerInode - slot0() - inline_xattr_addrs(); }
  std::uint8_t* inline_area(Node& n) {
    return reinterpret_cast<std::uint8_t*>(&n) + offsetof(f2fscore::disk::Inode, i_addr) + 4 * (slot0() + 1);
  }
  std::uint32_t max_inline() const {
    return 4 * (f2fscore::disk::kDefAddrsPerInode - slot0() - inline_xattr_addrs() - 1);
  }

  nid_t nid() { return next_nid_++; }

  static bool is_dir(const Node& n) { return (n.i.i_mode.get() & 0170000) == 040000; }

  // i_links of every inode that is not a directory: the entries naming it.
  void set_file_links() {
    for (std::uint64_t b : inodes_) {
      Node& n = *img_.view<Node>(b);
      if (is_dir(n)) continue;
      const auto it = names_.find(n.footer.ino.get());
      if (it != names_.end()) n.i.i_links.set(it->second);
    }
  }

  // The owner (nid, offset in that node's address array) of every data
  // block of the data segment, for its summary entry, as the kernel's
  // f2fs_summary for a block written through dnode `nid` at ofs_in_node.
  void find_data_owners() {
    using namespace f2fscore::disk;
    auto mine = [&](std::uint32_t a) { return a >= seg_start_ && a < next_blk_; };
    for (std::uint64_t b : inodes_) {
      const Node& n = *img_.view<Node>(b);
      if (n.i.i_inline & (inline_flag::data | inline_flag::dentry)) continue;
      if ((n.i.i_mode.get() & 0170000) == 0020000) continue;  // a device number, not an address
      for (std::uint32_t k = 0; k < api(); ++k)
        if (mine(n.i.i_addr[slot0() + k].get())) owners_[n.i.i_addr[slot0() + k].get()] = {n.footer.nid.get(), k};
    }
    for (nid_t d : {r_.big_dn, r_.big_in_dn0, r_.big_in_dn1017, r_.big_din_dn}) {
      const Node& n = *img_.view<Node>(r_.node_blk.at(d));
      for (std::uint32_t k = 0; k < kDefAddrsPerBlock; ++k)
        if (mine(n.dn.addr[k].get())) owners_[n.dn.addr[k].get()] = {d, k};
    }
  }

  // The quota files' record of id 0 (every file here is root's): mkfs
  // counted the root and lost+found; add each inode written here and its
  // blocks other than the inode itself (i_blocks - 1), as the kernel
  // charges dquot_alloc_inode() and dquot_reserve_block() per data and
  // node block. A v2 quota file's leaf blocks hold struct v2r1_disk_dqblk
  // entries (id at 0, dqb_curinodes at 24, dqb_curspace at 48, in bytes)
  // after a 16-byte header; mkfs's record of id 0 is the one with inodes
  // and space counted.
  void update_quota() {
    using namespace f2fscore::disk;
    if (!(feat_ & feature::quota_ino)) return;
    std::uint64_t inodes = 0, space = 0;
    for (std::uint64_t b : inodes_) {
      const Node& n = *img_.view<Node>(b);
      ++inodes;
      space += (n.i.i_blocks.get() - 1) * kBlockSize;
    }
    for (std::uint32_t q = 0; q < kMaxQuotas; ++q) {
      const nid_t qino = sb_.qf_ino[q].get();
      if (qino == 0) continue;
      const Node& qn = *img_.view<Node>(nat_get(qino));
      const std::uint32_t qslot0 = (qn.i.i_inline & inline_flag::extra_attr) ? qn.i.extra.i_extra_isize.get() / 4u : 0u;
      for (std::uint32_t k = 0; k < 16; ++k) {
        const std::uint32_t a = qn.i.i_addr[qslot0 + k].get();
        if (a == 0 || a == kNewAddr || a < sb_.main_blkaddr.get()) continue;
        std::uint8_t* d = img_.at(a);
        for (std::size_t off = 16; off + 72 <= kBlockSize; off += 8) {
          if (f2fscore::load_le64(d, off) != 0) continue;
          const std::uint64_t cur_inodes = f2fscore::load_le64(d, off + 24);
          const std::uint64_t cur_space = f2fscore::load_le64(d, off + 48);
          if (cur_inodes == 0 || cur_inodes > 16 || cur_space == 0 || cur_space % kBlockSize != 0) continue;
          f2fscore::store_le64(d, off + 24, cur_inodes + inodes);
          f2fscore::store_le64(d, off + 48, f2fscore::load_le64(d, off + 48) + space);
        }
      }
    }
  }

  // The current pack's checkpoint block and its copy at the pack's end:
  // counts of what was written here (write_sit_and_ssa() marks the
  // segments in use), the CRC re-sealed. valid_block_count counts what
  // i_blocks charges: node and data blocks and the compressed clusters'
  // reserved slots (as fsck.f2fs counts them against the checkpoint).
  void update_checkpoint() {
    using namespace f2fscore::disk;
    std::uint64_t blocks = 0;
    for (std::uint64_t b : inodes_) blocks += img_.view<Node>(b)->i.i_blocks.get();
    const std::uint32_t nodes = static_cast<std::uint32_t>(r_.node_blk.size());
    const std::uint32_t inodes = static_cast<std::uint32_t>(inodes_.size());
    const std::uint32_t segs = separate_ ? 2u : 1u;
    const std::uint64_t pack = sb_.cp_blkaddr.get() + static_cast<std::uint64_t>(cp_pack_) * kDefaultBlocksPerSeg;
    for (std::uint64_t b : {pack, pack + cp_.cp_pack_total_block_count.get() - 1}) {
      auto& c = *img_.view<Checkpoint>(b);
      c.valid_block_count.set(c.valid_block_count.get() + blocks);
      c.valid_node_count.set(c.valid_node_count.get() + nodes);
      c.valid_inode_count.set(c.valid_inode_count.get() + inodes);
      c.free_segment_count.set(c.free_segment_count.get() - segs);
      f2fscore::disk::seal_checkpoint(img_.at(b));
    }
  }

  // The segment's SIT entry (current copy) and SSA block: every block used,
  // node blocks owned by their nid.
  void write_sit_and_ssa() {
    if (!separate_) {
      write_sit_and_ssa(seg_, seg_start_, next_blk_, 1, false);
      return;
    }
    write_sit_and_ssa(seg_, seg_start_, next_blk_, 1, false);
    write_sit_and_ssa(node_seg_, node_start_, next_node_blk_, 4, true);
  }
  void write_sit_and_ssa(std::uint32_t seg, std::uint64_t start, std::uint64_t end, std::uint8_t type,
                         bool node_sum) {
    using namespace f2fscore::disk;
    const std::uint32_t used = static_cast<std::uint32_t>(end - start);
    const std::uint8_t* base = cp_blocks_.data() + kCpBitmapOffset;
    const std::uint8_t* sit_bitmap = (cp_.ckpt_flags.get() & cp_flag::large_nat_bitmap)
                                         ? base + 4 + cp_.nat_ver_bitmap_bytesize.get()
                                         : sb_.cp_payload.get() > 0 ? cp_blocks_.data() + kBlockSize : base;
    const std::uint32_t sit_blk = seg / kSitEntryPerBlock;
    std::uint64_t a = sb_.sit_blkaddr.get() + sit_blk;
    if (f2fscore::test_bit_msb(sit_bitmap, sit_blk)) a += sb_.segment_count_sit.get() / 2 * kDefaultBlocksPerSeg;
    SitEntry& e = img_.view<SitBlock>(a)->entries[seg % kSitEntryPerBlock];
    e.vblocks.set(make_sit_vblocks(type, static_cast<std::uint16_t>(used)));
    for (std::uint32_t i = 0; i < used; ++i) f2fscore::set_bit_msb(e.valid_map, i);
    e.mtime.set(1);
    auto& sum = *img_.view<SummaryBlock>(sb_.ssa_blkaddr.get() + seg);
    sum.footer.entry_type = node_sum ? kSumTypeNode : kSumTypeData;
    for (const auto& [n, b] : r_.node_blk)
      if (b >= start && b < end) sum.entries[b - start].nid.set(n);
    if (!node_sum)
      for (const auto& [b, o] : owners_)
        if (b >= start && b < end) {
          sum.entries[b - start].nid.set(o.first);
          sum.entries[b - start].ofs_in_node.set(static_cast<std::uint16_t>(o.second));
        }
  }

  const std::uint8_t* nat_bitmap() const {
    using namespace f2fscore::disk;
    const std::uint8_t* base = cp_blocks_.data() + kCpBitmapOffset;
    if (cp_.ckpt_flags.get() & cp_flag::large_nat_bitmap) return base + 4;
    if (sb_.cp_payload.get() > 0) return base;
    return base + cp_.sit_ver_bitmap_bytesize.get();
  }
  std::uint64_t nat_blk(nid_t n) const {
    using namespace f2fscore::disk;
    const std::uint32_t off = n / kNatEntryPerBlock;
    std::uint64_t a = sb_.nat_blkaddr.get() + (static_cast<std::uint64_t>(off >> kLogBlocksPerSeg) << (kLogBlocksPerSeg + 1)) +
                      (off & (kDefaultBlocksPerSeg - 1));
    if (f2fscore::test_bit_msb(nat_bitmap(), off)) a += kDefaultBlocksPerSeg;
    return a;
  }
  std::uint64_t nat_get(nid_t n) {
    return img_.view<f2fscore::disk::NatBlock>(nat_blk(n))->entries[n % f2fscore::disk::kNatEntryPerBlock].block_addr.get();
  }
  void nat_set(nid_t n, nid_t ino, std::uint64_t blk) {
    auto& e = img_.view<f2fscore::disk::NatBlock>(nat_blk(n))->entries[n % f2fscore::disk::kNatEntryPerBlock];
    e.ino.set(ino);
    e.block_addr.set(static_cast<std::uint32_t>(blk));
  }

  Node& node(nid_t n, nid_t ino, std::uint32_t ofs) {
    const std::uint64_t b = separate_ ? next_node_blk_++ : next_blk_++;
    nat_set(n, ino, b);
    r_.node_blk[n] = b;
    Node& nd = *img_.view<Node>(b);
    nd.footer.nid.set(n);
    nd.footer.ino.set(ino);
    nd.footer.flag.set(ofs << f2fscore::disk::node_flag::offset_shift);
    nd.footer.cp_ver.set(cp_.checkpoint_ver.get());
    return nd;
  }

  Node& inode(nid_t ino, std::uint16_t mode, std::uint32_t links, std::uint64_t size, nid_t parent, std::string_view name) {
    using namespace f2fscore::disk;
    Node& n = node(ino, ino, 0);
    inodes_.push_back(r_.node_blk[ino]);
    n.i.i_mode.set(mode);
    n.i.i_links.set(links);
    n.i.i_size.set(size);
    n.i.i_blocks.set(1);
    n.i.i_atime.set(1700000000);
    n.i.i_ctime.set(1700000000);
    n.i.i_mtime.set(1700000000);
    n.i.i_generation.set(ino * 7919u);
    n.i.i_pino.set(parent);
    n.i.i_namelen.set(static_cast<std::uint32_t>(name.size()));
    std::memcpy(n.i.i_name, name.data(), std::min<std::size_t>(name.size(), kNameLen));
    n.i.i_inline = inline_flag::xattr;
    if (extra_) {
      n.i.i_inline = static_cast<std::uint8_t>(n.i.i_inline | inline_flag::extra_attr);
      n.i.extra.i_extra_isize.set(extra_);
      if (feat_ & feature::flexible_inline_xattr)
        n.i.extra.i_inline_xattr_size.set(static_cast<std::uint16_t>(inline_xattr_addrs()));
    }
    return n;
  }

  std::uint64_t data_block(std::uint32_t tag) {
    const std::uint64_t b = next_blk_++;
    std::uint8_t* d = img_.at(b);
    for (std::size_t i = 0; i < f2fscore::disk::kBlockSize; ++i) d[i] = rich_pattern(tag, i);
    return b;
  }

  void put(View v, std::uint32_t slot, std::string_view name, nid_t ino, f2fscore::disk::FileType t) {
    using namespace f2fscore::disk;
    if (name != "." && name != "..") ++names_[ino];
    DirEntry& e = v.de[slot];
    e.hash_code.set(name == "." || name == ".." ? 0u : f2fscore::dentry_hash(name));
    e.ino.set(ino);
    e.name_len.set(static_cast<std::uint16_t>(name.size()));
    e.file_type = static_cast<std::uint8_t>(t);
    std::memcpy(v.names + static_cast<std::size_t>(slot) * kSlotLen, name.data(), name.size());
    const std::uint32_t slots = static_cast<std::uint32_t>((name.size() + kSlotLen - 1) / kSlotLen);
    for (std::uint32_t i = 0; i < slots; ++i) f2fscore::set_bit_le(v.bitmap, slot + i);
  }
  // Adds at the first run of free slots; false when the area is full.
  bool add(View v, std::string_view name, nid_t ino, f2fscore::disk::FileType t) {
    const std::uint32_t need = static_cast<std::uint32_t>((name.size() + 7) / 8);
    for (std::uint32_t s = 0; s + need <= v.nr; ++s) {
      bool free = true;
      for (std::uint32_t k = 0; k < need && free; ++k) free = !f2fscore::test_bit_le(v.bitmap, s + k);
      if (!free) continue;
      put(v, s, name, ino, t);
      return true;
    }
    return false;
  }

  void build_big() {
    using namespace f2fscore::disk;
    r_.big = nid();
    const std::uint64_t api = this->api(), apb = kDefAddrsPerBlock, npb = kNidsPerBlock;
    const std::uint64_t din_base = api + 2 * apb + 2 * apb * npb;
    r_.big_size = (din_base + 2) * kBlockSize;
    Node& in = inode(r_.big, 0100600, 1, r_.big_size, kRootIno, "big");
    std::uint64_t blocks = 1;
    auto data = [&](std::uint64_t index) {
      const std::uint32_t tag = static_cast<std::uint32_t>(10 + r_.big_data.size());
      r_.big_data[index] = tag;
      ++blocks;
      return static_cast<std::uint32_t>(data_block(tag));
    };
    for (std::uint64_t idx : {std::uint64_t{0}, std::uint64_t{1}, api - 1})
      in.i.i_addr[slot0() + idx].set(data(idx));
    // i_nid[0]: a direct node (offset 1), its first and last slots.
    r_.big_dn = nid();
    in.i.i_nid[0].set(r_.big_dn);
    {
      Node& dn = node(r_.big_dn, r_.big, 1);
      dn.dn.addr[0].set(data(api));
      dn.dn.addr[apb - 1].set(data(api + apb - 1));
      ++blocks;
    }
    // i_nid[1] is a hole. i_nid[2]: an indirect node (offset 3) with direct
    // nodes in its first and last slots (offsets 4 and 4 + 1017).
    r_.big_in = nid();
    in.i.i_nid[2].set(r_.big_in);
    {
      Node& ind = node(r_.big_in, r_.big, 3);
      ++blocks;
      r_.big_in_dn0 = nid();
      ind.in.nid[0].set(r_.big_in_dn0);
      Node& d0 = node(r_.big_in_dn0, r_.big, 4);
      d0.dn.addr[0].set(data(api + 2 * apb));
      ++blocks;
      r_.big_in_dn1017 = nid();
      ind.in.nid[npb - 1].set(r_.big_in_dn1017);
      Node& d1 = node(r_.big_in_dn1017, r_.big, static_cast<std::uint32_t>(4 + npb - 1));
      d1.dn.addr[0].set(data(api + 2 * apb + apb * (npb - 1)));
      ++blocks;
    }
    // i_nid[3] is a hole. i_nid[4]: double indirect (offset 5 + 2 * 1018),
    // its first indirect node (6 + 2 * 1018) and that one's first direct
    // node (7 + 2 * 1018).
    r_.big_din = nid();
    in.i.i_nid[4].set(r_.big_din);
    {
      Node& din = node(r_.big_din, r_.big, static_cast<std::uint32_t>(5 + 2 * npb));
      r_.big_din_in = nid();
      din.in.nid[0].set(r_.big_din_in);
      Node& ind = node(r_.big_din_in, r_.big, static_cast<std::uint32_t>(6 + 2 * npb));
      r_.big_din_dn = nid();
      ind.in.nid[0].set(r_.big_din_dn);
      Node& dn = node(r_.big_din_dn, r_.big, static_cast<std::uint32_t>(7 + 2 * npb));
      dn.dn.addr[0].set(data(din_base));
      dn.dn.addr[1].set(data(din_base + 1));
      blocks += 3;
    }
    in.i.i_blocks.set(blocks);
  }

  // 16 KiB of 'A' as one LZ4 block: a literal and a match of the rest,
  // then the five literals LZ4 ends with.
  static std::vector<std::uint8_t> lz4_stream() {
    std::vector<std::uint8_t> s = {0x1F, 'A', 0x01, 0x00};
    std::uint32_t rest = 16384 - 1 - 5 - 4 - 15;
    for (; rest >= 255; rest -= 255) s.push_back(255);
    s.push_back(static_cast<std::uint8_t>(rest));
    for (std::uint8_t c : {std::uint8_t{0x50}, std::uint8_t{'A'}, std::uint8_t{'A'}, std::uint8_t{'A'}, std::uint8_t{'A'}, std::uint8_t{'A'}})
      s.push_back(c);
    return s;
  }
  // The same as LZO1X (which lzo-rle decoders read too: it does not start
  // with the 17 of a versioned lzo-rle stream): a literal, an M3 match of
  // 16383 bytes at distance 1 (length 31 + 64 x 255 + 30 + 2), the end
  // marker.
  static std::vector<std::uint8_t> lzo_stream() {
    std::vector<std::uint8_t> s = {0x12, 'A', 0x20};
    s.resize(s.size() + 64, 0);
    for (std::uint8_t c : {std::uint8_t{30}, std::uint8_t{0}, std::uint8_t{0}, std::uint8_t{0x11}, std::uint8_t{0},
                           std::uint8_t{0}})
      s.push_back(c);
    return s;
  }
  // The same as a Zstandard frame: single segment, content size 16384, one
  // RLE block.
  static std::vector<std::uint8_t> zstd_stream() {
    return {0x28, 0xB5, 0x2F, 0xFD, 0x60, 0x00, 0x3F, 0x03, 0x00, 0x02, 'A'};
  }

  // A file of two 4-block clusters: the first compressed (COMPRESS_ADDR,
  // one block of struct compress_data, two NEW_ADDR), the second plain.
  nid_t compressed_file(std::string_view name, std::uint8_t algorithm, const std::vector<std::uint8_t>& cdata) {
    using namespace f2fscore::disk;
    const nid_t ino = nid();
    Node& in = inode(ino, 0100644, 1, 8 * kBlockSize, kRootIno, name);
    in.i.i_flags.set(iflag::compr);
    in.i.extra.i_compress_algorithm = algorithm;
    in.i.extra.i_log_cluster_size = 2;
    in.i.extra.i_compr_blocks.set(2);
    const std::uint64_t cblk = next_blk_++;
    std::uint8_t* c = img_.at(cblk);
    f2fscore::store_le32(c, 0, static_cast<std::uint32_t>(cdata.size()));
    std::memcpy(c + 24, cdata.data(), cdata.size());
    in.i.i_addr[slot0() + 0].set(kCompressAddr);
    in.i.i_addr[slot0() + 1].set(static_cast<std::uint32_t>(cblk));
    in.i.i_addr[slot0() + 2].set(kNewAddr);
    in.i.i_addr[slot0() + 3].set(kNewAddr);
    for (std::uint32_t k = 4; k < 8; ++k) in.i.i_addr[slot0() + k].set(static_cast<std::uint32_t>(data_block(100 + k)));
    // Linux reserves the cluster's slots after the compressed block
    // (NEW_ADDR) and counts the COMPRESS_ADDR slot and those in i_blocks;
    // i_compr_blocks counts the blocks compression saved (4 - 1).
    in.i.i_blocks.set(consistent_ ? 1 + 1 + 1 + 2 + 4 : 1 + 1 + 2 + 4);
    if (consistent_) in.i.extra.i_compr_blocks.set(3);
    return ino;
  }

  // /cf: one dentry block, names hashed after casefolding.
  void build_casefolded_dir() {
    using namespace f2fscore::disk;
    r_.cf = nid();
    Node& d = inode(r_.cf, 040755, 2, kBlockSize, kRootIno, "cf");
    d.i.i_flags.set(iflag::casefold);
    d.i.i_current_depth.set(1);
    r_.cf_blk = next_blk_++;
    d.i.i_addr[slot0()].set(static_cast<std::uint32_t>(r_.cf_blk));
    d.i.i_blocks.set(2);
    auto& db = *img_.view<DentryBlock>(r_.cf_blk);
    View v{db.dentry_bitmap, db.dentry, &db.filename[0][0], kNrDentryInBlock};
    put(v, 0, ".", r_.cf, FileType::dir);
    put(v, 1, "..", kRootIno, FileType::dir);
    std::uint32_t slot = 2;
    for (std::string_view name : {std::string_view("Hello"), std::string_view("WORLD"), std::string_view("caf\xc3\xa9")}) {
      put(v, slot, name, r_.small, FileType::reg_file);
      v.de[slot].hash_code.set(f2fscore::dentry_hash_casefold(name, sb_.s_encoding_flags.get()));
      slot += static_cast<std::uint32_t>((name.size() + 7) / 8);
    }
  }

  void build_xattr_file() {
    using namespace f2fscore::disk;
    r_.xa = nid();
    Node& in = inode(r_.xa, 0100644, 1, 0, kRootIno, "xa");
    r_.xattr_nid = nid();
    in.i.i_xattr_nid.set(r_.xattr_nid);
    in.i.i_blocks.set(2);
    Node& xn = node(r_.xattr_nid, r_.xa, kXattrNodeOffset);
    // One buffer: the inline area, then the node (read_all_xattrs()); the
    // third entry straddles the two.
    const std::size_t inline_bytes = 4 * inline_xattr_addrs();
    std::vector<std::uint8_t> buf(inline_bytes + kNodeFooterOffset, 0);
    f2fscore::store_le32(buf.data(), 0, kXattrMagic);
    f2fscore::store_le32(buf.data(), 4, 1);
    std::size_t off = sizeof(XattrHeader);
    auto entry = [&](std::uint8_t index, std::string_view name, std::string value) {
      buf[off] = index;
      buf[off + 1] = static_cast<std::uint8_t>(name.size());
      buf[off + 2] = static_cast<std::uint8_t>(value.size() & 0xFF);
      buf[off + 3] = static_cast<std::uint8_t>(value.size() >> 8);
      std::memcpy(buf.data() + off + 4, name.data(), name.size());
      std::memcpy(buf.data() + off + 4 + name.size(), value.data(), value.size());
      off += xattr_entry_size(static_cast<std::uint32_t>(name.size()), static_cast<std::uint32_t>(value.size()));
    };
    entry(xattr_index::user, "inl", "v1");
    entry(xattr_index::user, "a", std::string(140, 'A'));
    entry(xattr_index::user, "node", std::string(40, 'N'));
    entry(xattr_index::trusted, "t", std::string(100, 'T'));
    entry(xattr_index::security, "selinux", std::string("system_u:object_r:f_t:s0\0", 25));
    entry(xattr_index::posix_acl_access, "", std::string("\x02\0\0\0\x01\0\x06\0\0\0\0\0", 12));
    std::memcpy(&in.i.i_addr[kDefAddrsPerInode - inline_xattr_addrs()], buf.data(), inline_bytes);
    std::memcpy(&xn, buf.data() + inline_bytes, kNodeFooterOffset);
  }

  void build_dir() {
    using namespace f2fscore::disk;
    r_.dir = nid();
    r_.inl = nid();
    // /dir/inl: an inline-dentry directory holding x (-> /small) and y (-> /fifo).
    {
      Node& n = inode(r_.inl, 040755, 2, max_inline(), r_.dir, "inl");
      n.i.i_inline = static_cast<std::uint8_t>(n.i.i_inline | inline_flag::dentry);
      n.i.i_current_depth.set(1);
      const auto lay = inline_dentry_layout(max_inline());
      std::uint8_t* base = inline_area(n);
      View v{base, reinterpret_cast<DirEntry*>(base + lay.dentry_offset()), base + lay.filename_offset(), lay.nr_slots};
      if (consistent_) {
        put(v, 0, ".", r_.inl, FileType::dir);
        put(v, 1, "..", r_.dir, FileType::dir);
      }
      add(v, "x", r_.small, FileType::reg_file);
      add(v, "y", r_.fifo, FileType::fifo);
    }
    // /dir: i_current_depth 2 (level 0: blocks 0-1, level 1: buckets at
    // blocks 2-3 and 4-5); blocks 3 and 5 are holes.
    Node& d = inode(r_.dir, 040755, 3, 6 * kBlockSize, kRootIno, "dir");
    d.i.i_current_depth.set(2);
    r_.dir_blocks.assign(6, 0);
    for (std::uint32_t bidx : {0u, 1u, 2u, 4u}) {
      r_.dir_blocks[bidx] = next_blk_++;
      img_.at(r_.dir_blocks[bidx]);
      d.i.i_addr[slot0() + bidx].set(static_cast<std::uint32_t>(r_.dir_blocks[bidx]));
    }
    d.i.i_blocks.set(5);
    auto view = [&](std::uint32_t bidx) {
      auto& db = *img_.view<DentryBlock>(r_.dir_blocks[bidx]);
      return View{db.dentry_bitmap, db.dentry, &db.filename[0][0], kNrDentryInBlock};
    };
    put(view(0), 0, ".", r_.dir, FileType::dir);
    put(view(0), 1, "..", kRootIno, FileType::dir);
    add(view(0), "inl", r_.inl, FileType::dir);
    r_.dir_names.push_back("inl");
    for (int i = 0; i < 20; ++i) {
      char name[8];
      std::snprintf(name, sizeof name, "f%02d", i);
      add(view(i < 10 ? 0 : 1), name, r_.small, FileType::reg_file);
      r_.dir_names.push_back(name);
    }
    // A 255-byte name in the last 32 slots of block 1.
    r_.long_name.assign(kNameLen, 'n');
    put(view(1), kNrDentryInBlock - 32, r_.long_name, r_.small, FileType::reg_file);
    r_.dir_names.push_back(r_.long_name);
    // Level 1: each name in the first block of its bucket (hash % 2).
    for (int i = 0; i < 6; ++i) {
      const std::string name = "deep" + std::to_string(i);
      add(view(2 + 2 * (f2fscore::dentry_hash(name) % 2)), name, r_.longlink, FileType::symlink);
      r_.dir_names.push_back(name);
    }
  }

  RichImage& r_;
  SparseImage& img_;
  f2fscore::disk::SuperBlock sb_{};
  f2fscore::disk::Checkpoint cp_{};
  std::vector<std::uint8_t> cp_blocks_;
  std::uint32_t feat_ = 0;
  std::uint32_t extra_ = 0;
  nid_t next_nid_ = 100;
  std::uint32_t seg_ = 0;
  std::uint64_t seg_start_ = 0;
  std::uint64_t next_blk_ = 0;
  bool separate_ = false;
  std::uint32_t node_seg_ = 0;
  std::uint64_t node_start_ = 0, next_node_blk_ = 0;
  std::vector<std::uint64_t> inodes_;  ///< blocks to re-seal at the end
  int cp_pack_ = 0;
  bool consistent_ = false;
  std::map<nid_t, std::uint32_t> names_;  ///< ino -> entries naming it ('.' and '..' aside)
  std::map<std::uint64_t, std::pair<nid_t, std::uint32_t>> owners_;  ///< data block -> (nid, ofs_in_node)
};

}  // namespace detail

/// Formats a volume in memory with our mkfs and writes the files above into it.
inline RichImage build_rich_image(const RichImageOptions& o) {
  RichImage r;
  auto dev = f2fscore::make_memory_device(o.bytes);
  f2fscore::MkfsTarget t{dev.get(), "rich"};
  f2fscore::MkfsOptions mo;
  mo.features = o.features;
  mo.large_nat_bitmap = o.large_nat_bitmap;
  mo.heap = o.heap;
  mo.encoding = o.encoding;
  mo.timestamp = 1700000000;
  mo.uuid = std::array<std::uint8_t, 16>{1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16};
  auto fr = f2fscore::format_volume(std::span<const f2fscore::MkfsTarget>(&t, 1), mo);
  if (!fr) {
    r.error = "mkfs: " + fr.error().to_string();
    return r;
  }
  auto vol = f2fscore::Volume::open(*dev);
  if (!vol) {
    r.error = "open after mkfs: " + vol.error().to_string();
    return r;
  }
  r.img = SparseImage::capture(*dev);
  detail::RichBuilder b(r, **vol);
  if (o.node_segment) b.separate_nodes(**vol);
  if (o.consistent) b.make_consistent();
  b.build();
  return r;
}

}  // namespace f2fstest
