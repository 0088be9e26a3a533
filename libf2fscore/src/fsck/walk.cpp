// The checker's walk: from the root, every inode and its node tree, data
// pointers, xattrs and directories (read level by level, a level's
// dentry blocks in batches), then orphans, quota files and what nothing
// reached. Rules as fsck_chk_node_blk(), fsck_chk_inode_blk(),
// fsck_chk_dnode_blk(), fsck_chk_data_blk(), __chk_dentries(),
// f2fs_check_hash_code(), f2fs_check_dirent_position() and
// chk_extended_attributes() in fsck/fsck.c (f2fs-tools).
#include <algorithm>
#include <cstdio>
#include <cstring>
#include <unordered_set>

#include "f2fscore/casefold.hpp"
#include "f2fscore/checksum.hpp"
#include "f2fscore/disk/superblock.hpp"
#include "f2fscore/disk/xattr.hpp"
#include "fsck/fsck_internal.hpp"
#include "util/text.hpp"

namespace f2fscore::fsck {

using namespace disk;

void parse_dentries(const std::uint8_t* bitmap, const DirEntry* de, const std::uint8_t* names, std::uint32_t slots,
                    std::uint32_t bidx, block_t blkaddr, std::vector<Dent>& out, std::vector<LocalIssue>& issues);

namespace {
using detail::fmt;

constexpr std::uint32_t kN = kNidsPerBlock;
constexpr std::uint32_t kXattrNodeOfs = 0xFFFFFFFFu >> node_flag::offset_shift;

std::uint64_t start_bidx(std::uint32_t ofs, std::uint32_t apb, std::uint32_t api) {
  return start_bidx_of_node(ofs, api, apb);
}

std::uint8_t ftype_of_mode(std::uint16_t mode) { return file_type_of_mode(mode); }

std::string printable(const std::string& s) {
  std::string o;
  for (unsigned char c : s) o += (c >= 0x20 && c < 0x7f) || c >= 0x80 ? static_cast<char>(c) : '?';
  return o;
}

struct WalkCtx {
  std::uint64_t end_index = 0;  ///< 1 + the highest file block index holding a block
  std::uint64_t compr_counted = 0;
  std::uint64_t ext_matched = 0;
  bool ext_bad = false;
};
}  // namespace

std::string Checker::path_of(const InodeState& st) const {
  if (st.has_dir()) return dirs_[st.link].path;
  if (st.parent == 0 || st.name_len == 0) return {};
  const InodeState* ps = find_state(st.parent);
  if (!ps || !ps->has_dir()) return {};
  const std::string& pp = dirs_[ps->link].path;
  // The first name, read back from its dentry (the walk keeps no names).
  const InodeRec& pin = inodes_[static_cast<std::size_t>(node(st.parent).inode())];
  const DentryArea a = dentry_area(pin, st.link, st.flags & InodeState::kNameInline);
  const std::size_t at = a.names_off + static_cast<std::size_t>(st.name_slot) * kSlotLen;
  std::vector<std::uint8_t> b(kBlockSize);
  std::string name = "?";
  if (at + st.name_len <= kBlockSize && read_at(dev_, static_cast<std::uint64_t>(st.link) * kBlockSize, b))
    name.assign(reinterpret_cast<const char*>(b.data() + at), st.name_len);
  return (pp == "/" ? std::string() : pp) + "/" + printable(name);
}

std::string Checker::inode_path(nid_t ino) const {
  const InodeState* st = find_state(ino);
  return st ? path_of(*st) : std::string();
}

// Checks the node `nid` that `in`'s tree points at with footer offset `ofs`
// (level 0 direct, 1 indirect, 2 double indirect) and descends.
void Checker::walk_node(const InodeRec& in, InodeState& st, nid_t nid, std::uint32_t ofs, int level, void* vctx,
                        block_t parent_blk, std::uint32_t parent_off) {
  auto mk = [&](Code c, std::string d) {
    Problem p = prob(c);
    p.ino = in.ino;
    p.nid = nid;
    p.path = path_of(st);
    p.detail = std::move(d);
    return p;
  };
  if (nid < sb_.root_ino.get() || nid >= max_nid_) {
    fix_zero_word(add(mk(Code::NODE_NID_INVALID, fmt("node pointer (offset %llu) names nid %llu, outside [%llu, %llu)", ofs, nid,
                                       sb_.root_ino.get(), max_nid_))), parent_blk, parent_off);
    return;
  }
  const NatRec& ne = nat(nid);
  if (ne.blkaddr == kNullAddr) {
    fix_zero_word(add(mk(Code::NODE_NAT_MISSING, fmt("node pointer (offset %llu) names nid %llu whose NAT entry is null", ofs, nid))),
                  parent_blk, parent_off);
    return;
  }
  if (!valid_main(ne.blkaddr)) {  // NAT_BLKADDR_INVALID, reported by the scan: drop the pointer with it
    fix_zero_word(static_cast<std::size_t>(-1), parent_blk, parent_off);
    return;
  }
  const NodeRec& r = node(nid);
  if (reached(nid)) {
    Problem p = mk(Code::NODE_DUPLICATE, fmt("nid %llu is reached a second time (offset %llu)", nid, ofs));
    p.blkaddr = ne.blkaddr;
    fix_zero_word(add(p), parent_blk, parent_off);
    return;
  }
  if (!r.read_ok) {
    Problem p = mk(Code::NODE_UNREADABLE, fmt("node block 0x%llx of nid %llu cannot be read", ne.blkaddr, nid));
    p.blkaddr = ne.blkaddr;
    fix_zero_word(add(p), parent_blk, parent_off);
    return;
  }
  if (footer_nid(nid) != nid) {
    Problem p = mk(Code::NODE_FOOTER_NID, fmt("node block 0x%llx has footer nid %llu, not %llu", ne.blkaddr, footer_nid(nid), nid));
    p.blkaddr = ne.blkaddr;
    fix_zero_word(add(p), parent_blk, parent_off);
    return;
  }
  if (footer_ino(nid) != in.ino) {
    Problem p = mk(Code::NODE_FOOTER_INO, fmt("node block 0x%llx has footer ino %llu, not %llu", ne.blkaddr, footer_ino(nid), in.ino));
    p.blkaddr = ne.blkaddr;
    fix_zero_word(add(p), parent_blk, parent_off);
    return;
  }
  if (r.footer_ofs() != ofs) {
    Problem p = mk(Code::NODE_FOOTER_OFS, fmt("node block 0x%llx has footer offset %llu, expected %llu", ne.blkaddr, r.footer_ofs(), ofs));
    p.blkaddr = ne.blkaddr;
    fix_zero_word(add(p), parent_blk, parent_off);
    return;
  }
  if (ne.ino != in.ino) {
    Problem p = mk(Code::NAT_INO_MISMATCH, fmt("NAT entry of nid %llu says ino %llu, the node belongs to %llu", nid, ne.ino, in.ino));
    p.blkaddr = ne.blkaddr;
    fix_global(add(p));
  }
  set_reached(nid);
  ++node_count_;
  ++st.blocks_counted;
  ++valid_blocks_;
  ++report_.stats.nodes;
  if (!used(ne.blkaddr)) {
    claim_node(nid, ne.blkaddr);
  } else {
    Problem p = mk(Code::NODE_DUPLICATE, fmt("node block 0x%llx of nid %llu is also used by another block", ne.blkaddr, nid));
    p.blkaddr = ne.blkaddr;
    add(p);
  }
  const std::uint32_t n = r.addr_count;
  if (level == 0) {
    walk_data(in, st, nid, start_bidx(ofs, in.addrs_per_block(), in.addrs_per_inode()), r.addr_begin, n,
              in.addrs_per_block(), vctx);
    return;
  }
  const AddrSlot* a = addrs_.run(r.addr_begin, n);
  // The run stays where it is while the walk descends (addrs_ grows by
  // whole chunks, never moving one).
  for (std::uint32_t j = 0; j < n; ++j) {
    const AddrSlot k = a[j];
    if (k.slot >= kN) continue;
    std::uint32_t child;
    if (level == 2) child = 6 + 2 * kN + k.slot * (kN + 1);
    else if (ofs == 3) child = 4 + k.slot;
    else if (ofs == 4 + kN) child = 5 + kN + k.slot;
    else child = ofs + 1 + k.slot;
    walk_node(in, st, k.blkaddr, child, level - 1, vctx, ne.blkaddr, 4u * k.slot);
  }
}

void Checker::walk_data(const InodeRec& in, InodeState& st, nid_t holder, std::uint64_t first_index,
                        std::uint32_t a_begin, std::uint32_t n, std::uint32_t nslots, void* vctx) {
  auto* ctx = static_cast<WalkCtx*>(vctx);
  const AddrSlot* a = addrs_.run(a_begin, n);
  const block_t hblk = nat(holder).blkaddr;
  auto slot_off = [&](std::uint32_t slot) {
    return holder == in.ino ? static_cast<std::uint32_t>(offsetof(Inode, i_addr)) + 4 * (in.extra_isize / 4 + slot) : 4 * slot;
  };
  const bool released = in.inline_flags & inline_flag::compress_released;
  const std::uint32_t cb = in.cluster_blocks();
  const disk::Extent ext = ext_of(in);
  const std::uint64_t ext_f = ext.fofs.get(), ext_b = ext.blk_addr.get(), ext_l = ext.len.get();
  // Compressed clusters: a COMPRESS_ADDR only at a cluster's first slot;
  // i_compr_blocks sums cluster_size - blocks written over the clusters
  // (f2fs_i_compr_blocks_update() in fs/f2fs/compress.c).
  std::int64_t cur_cluster = -1;
  bool cur_compressed = false;
  std::uint32_t cur_valid = 0, cur_reserved = 0;
  auto close_cluster = [&] {
    if (cur_cluster >= 0 && cur_compressed) {
      if (cur_valid == 0) {
        Problem p = prob(Code::COMPR_CLUSTER_BAD);
        p.ino = in.ino;
        p.nid = holder;
        p.path = path_of(st);
        p.detail = fmt("compressed cluster at file block %llu has no compressed blocks", first_index + cur_cluster * cb);
        add(p);
      }
      // Per compressed cluster, the blocks compression saved: the header
      // and the reserved (NEW_ADDR) slots; a NULL slot saved nothing
      // (f2fs_compr_blk_cnt in fsck.f2fs). Released clusters
      // (F2FS_IOC_RELEASE_COMPRESS_BLOCKS) hold NULLs where NEW_ADDRs were
      // and count nothing: release_compress_blocks() in fs/f2fs/file.c takes
      // what each saved off i_compr_blocks, and fsck.f2fs counts no slot of
      // a released file.
      if (!released) ctx->compr_counted += 1 + cur_reserved;
    }
  };
  for (std::uint32_t k = 0; k < n; ++k) {
    const std::uint32_t slot = a[k].slot;
    if (slot >= nslots) continue;
    const block_t addr = a[k].blkaddr;
    const std::uint64_t f = first_index + slot;
    if (cb) {
      const std::int64_t cl = slot / cb;
      if (cl != cur_cluster) {
        close_cluster();
        cur_cluster = cl;
        cur_compressed = false;
        cur_valid = 0;
        cur_reserved = 0;
        if (addr == kCompressAddr && slot % cb == 0) cur_compressed = true;
      }
    }
    if (addr == kCompressAddr) {
      if (!cb || slot % cb != 0) {
        Problem p = prob(Code::COMPR_CLUSTER_BAD);
        p.ino = in.ino;
        p.nid = holder;
        p.path = path_of(st);
        p.detail = cb ? fmt("COMPRESS_ADDR at file block %llu, not a cluster's first block (cluster of %llu)", f, cb)
                      : fmt("COMPRESS_ADDR at file block %llu of a file that is not compressed", f);
        fix_zero_word(add(p), hblk, slot_off(slot));
        continue;
      }
      // A cluster's header slot holds a reserved block, as NEW_ADDR does,
      // until the cluster's blocks are released
      // (F2FS_IOC_RELEASE_COMPRESS_BLOCKS; f2fs_compr_blk_cnt in fsck.f2fs).
      if (!released) {
        ++st.blocks_counted;
        ++valid_blocks_;
      }
      continue;
    }
    if (addr == kNewAddr) {
      if (cur_compressed) ++cur_reserved;
      if (!released) {
        ++st.blocks_counted;
        ++valid_blocks_;
      }
      if (ext_l && f >= ext_f && f < ext_f + ext_l) ctx->ext_bad = true;
      continue;
    }
    if (!valid_main(addr)) {
      Problem p = prob(Code::DATA_BLKADDR_INVALID);
      p.ino = in.ino;
      p.nid = holder;
      p.blkaddr = addr;
      p.path = path_of(st);
      p.detail = fmt("file block %llu points at 0x%llx, outside the main area (slot %llu of nid %llu)", f, addr, slot, holder);
      fix_zero_word(add(p), hblk, slot_off(slot));
      continue;
    }
    if (used(addr)) {
      Problem p = prob(Code::DATA_DUPLICATE);
      p.ino = in.ino;
      p.nid = holder;
      p.blkaddr = addr;
      p.segno = segno_of(addr);
      p.path = path_of(st);
      p.detail = fmt("file block %llu points at block 0x%llx, already in use (slot %llu of nid %llu)", f, addr, slot, holder);
      fix_zero_word(add(p), hblk, slot_off(slot));
      continue;
    }
    claim(addr, false);
    const std::uint32_t ai = a_begin + k;
    addr_use_[ai >> 6] |= 1ull << (ai & 63);
    ctx->end_index = std::max<std::uint64_t>(ctx->end_index, f + 1);
    ++st.blocks_counted;
    ++valid_blocks_;
    ++report_.stats.data_blocks;
    if (cur_compressed) ++cur_valid;
    if (ext_l && f >= ext_f && f < ext_f + ext_l) {
      if (addr != ext_b + (f - ext_f)) ctx->ext_bad = true;
      else ++ctx->ext_matched;
    }
    if (in.is_dir() && st.has_dir() && f < 0xFFFFFFFFull)
      dirs_[st.link].dir_blocks.emplace_back(static_cast<std::uint32_t>(f), addr);
  }
  close_cluster();
}

void Checker::walk_xattr(const InodeRec& in, InodeState& st) {
  // The xattr node.
  std::vector<std::uint8_t> area = extras(in).inline_xattr;
  // The inline part only with the inline_xattr flag (inline_xattr_size()
  // in fs/f2fs/xattr.h; an inline-dentry directory may reserve it without).
  const std::uint32_t inline_len = (in.inline_flags & inline_flag::xattr) ? in.inline_xattr_addrs * 4u : 0u;
  if (area.empty() && inline_len) area.assign(inline_len, 0);
  const nid_t x = i_xattr_nid(in);
  bool have_node = false;
  if (x != 0 && x >= sb_.root_ino.get() && x < max_nid_) {
    auto bad = [&](std::string d) {
      Problem p = prob(Code::XATTR_NID_BAD);
      p.ino = in.ino;
      p.nid = x;
      p.path = path_of(st);
      p.detail = std::move(d);
      fix_inode_field(add(p), in, [](Node& n) { n.i.i_xattr_nid = 0u; });
    };
    const NatRec& ne = nat(x);
    const NodeRec& r = node(x);
    if (ne.blkaddr == kNullAddr) bad(fmt("i_xattr_nid %llu has a null NAT entry", x));
    else if (!valid_main(ne.blkaddr)) {
      fix_inode_field(static_cast<std::size_t>(-1), in, [](Node& n) { n.i.i_xattr_nid = 0u; });
    } else if (reached(x)) bad(fmt("xattr nid %llu is reached a second time", x));
    else if (!r.read_ok) bad(fmt("xattr node %llu cannot be read", x));
    else if (footer_nid(x) != x || footer_ino(x) != in.ino || r.footer_ofs() != kXattrNodeOfs)
      bad(fmt("xattr node %llu has footer nid %llu ino %llu offset 0x%llx", x, footer_nid(x), footer_ino(x), r.footer_ofs()));
    else {
      set_reached(x);
      ++node_count_;
      ++st.blocks_counted;
      ++valid_blocks_;
      ++report_.stats.nodes;
      if (!used(ne.blkaddr)) claim_node(x, ne.blkaddr);
      if (ne.ino != in.ino) {
        Problem p = prob(Code::NAT_INO_MISMATCH);
        p.ino = in.ino;
        p.nid = x;
        p.detail = fmt("NAT entry of xattr nid %llu says ino %llu", x, ne.ino);
        fix_global(add(p));
      }
      auto it = xattr_blocks_.find(x);
      if (it != xattr_blocks_.end()) {
        area.insert(area.end(), it->second.begin(), it->second.end());
        have_node = true;
      }
    }
  }
  if (extras(in).inline_xattr.empty() && !have_node) return;
  // Entries (chk_extended_attributes()): header, then entries to a zero word.
  if (area.size() < sizeof(XattrHeader) + 4) return;
  // Only an area the kernel initialised (header magic) holds entries; sload
  // leaves file addresses in an inline area it did not use.
  if (load_le32(area.data(), 0) != kXattrMagic) return;
  std::uint32_t off = sizeof(XattrHeader);
  const std::uint32_t end = static_cast<std::uint32_t>(area.size());
  // Truncation: zero the area from byte `from` on (inline part in the
  // inode, the rest in the xattr node), keeping the entries before it.
  auto truncate_from = [&](std::size_t idx, std::uint32_t from) {
    if (from < inline_len) {
      const std::uint32_t base = inline_xattr_offset(in.inline_xattr_addrs);
      fix(idx, iblk(in), [base, from, inline_len](std::uint8_t* b) { std::memset(b + base + from, 0, inline_len - from); });
    }
    if (have_node) {
      const std::uint32_t nf = from > inline_len ? from - inline_len : 0;
      fix(idx, nat(x).blkaddr, [nf](std::uint8_t* b) { std::memset(b + nf, 0, kNodeFooterOffset - nf); });
    }
  };
  while (off + 4 <= end) {
    if (load_le32(area.data(), off) == 0) break;
    const std::uint32_t nl = area[off + 1];
    const std::uint32_t vs = load_le16(area.data(), off + 2);
    const std::uint32_t sz = xattr_entry_size(nl, vs);
    if (off + sz > end) {
      Problem p = prob(Code::XATTR_ENTRY_BOUNDS);
      p.ino = in.ino;
      p.path = path_of(st);
      p.detail = fmt("xattr entry at byte %llu (name %llu, value %llu bytes) runs past the %llu-byte area", off, nl, vs, end);
      truncate_from(add(p), off);
      return;
    }
    off += sz;
  }
  for (std::uint32_t k = off + 4; k < end; ++k)
    if (area[k] != 0) {
      // The kernel leaves stale bytes in the unused part of the inline area
      // only past a zero word; check the word-aligned tail for a new entry.
      Problem p = prob(Code::XATTR_TRAILING_BYTES);
      p.ino = in.ino;
      p.path = path_of(st);
      p.detail = fmt("non-zero byte at offset %llu after the last xattr entry (ends at %llu)", k, off);
      truncate_from(add(p), off);
      return;
    }
}

// Reaches inode `ino` (first time), checks it and its node tree.
bool Checker::walk_inode(nid_t ino, const std::string& path, bool named) {
  const NodeRec& r = node(ino);
  const InodeRec& in = inodes_[static_cast<std::size_t>(r.inode())];
  set_reached(ino);
  ++reached_inodes_;
  progress(3, reached_inodes_, inodes_.size());
  InodeState& st = walk_state(ino);
  st.flags |= InodeState::kSeen;
  if (!named || in.is_dir()) own_dir(st, path);
  ++node_count_;
  ++inode_count_;
  ++valid_blocks_;
  ++report_.stats.inodes;
  ++report_.stats.nodes;
  if (in.is_dir()) ++report_.stats.dirs;
  else ++report_.stats.files;
  st.blocks_counted = 1;
  const NatRec& ne = nat(ino);
  if (!used(ne.blkaddr)) claim_node(ino, ne.blkaddr);
  if (ne.ino != ino) {
    Problem p = prob(Code::NAT_INO_MISMATCH);
    p.ino = ino;
    p.nid = ino;
    p.path = path;
    p.detail = fmt("NAT entry of inode %llu says ino %llu", ino, ne.ino);
    fix_global(add(p));
  }
  std::size_t size_idx = static_cast<std::size_t>(-1);
  for (const auto& is : extras(in).issues) {
    Problem p = prob(is.code);
    p.ino = ino;
    p.blkaddr = iblk(in);
    p.path = path;
    p.detail = is.detail;
    const std::size_t idx = add(p);
    if (is.code == Code::INODE_SIZE) size_idx = idx;
    else local_issue_fix(idx, in, is.code);
  }
  walk_xattr(in, st);
  if (!in.sane) return true;
  // Device, fifo and socket inodes keep the device number in i_addr
  // (f2fs_update_inode() in fs/f2fs/inode.c): no data pointers.
  if (!in.is_reg() && !in.is_dir() && !in.is_symlink()) {
    if (st.blocks_counted != i_blocks(in)) {
      Problem p = prob(Code::INODE_BLOCKS);
      p.ino = ino;
      p.path = path;
      p.detail = fmt("i_blocks %llu, counted %llu", i_blocks(in), st.blocks_counted);
      fix_inode_field(add(p), in, [v = st.blocks_counted](Node& n) { n.i.i_blocks = v; });
    }
    return true;
  }
  WalkCtx ctx;
  walk_data(in, st, ino, 0, r.addr_begin, r.addr_count, in.addrs_per_inode(), &ctx);
  if (!(in.inline_flags & (inline_flag::data | inline_flag::dentry))) {
    const std::uint32_t ofs[5] = {1, 2, 3, 4 + kN, 5 + 2 * kN};
    const int lvl[5] = {0, 0, 1, 1, 2};
    const AddrSlot* a = addrs_.run(r.addr_begin, r.addr_count);
    for (std::uint32_t j = 0; j < r.addr_count; ++j) {
      if (a[j].slot < AddrSlot::kINid) continue;
      const std::uint32_t k = a[j].slot - AddrSlot::kINid;
      walk_node(in, st, a[j].blkaddr, ofs[k], lvl[k], &ctx, iblk(in),
                static_cast<std::uint32_t>(offsetof(Inode, i_nid)) + 4u * k);
    }
  }
  // Per-inode results that need the whole tree.
  if (size_idx != static_cast<std::size_t>(-1))
    fix_inode_field(size_idx, in, [v = ctx.end_index * kBlockSize](Node& n) { n.i.i_size = v; });
  const disk::Extent ext = ext_of(in);
  const std::uint64_t el = ext.len.get();
  if (el && (ctx.ext_bad || ctx.ext_matched != el)) {
    Problem p = prob(Code::INODE_EXTENT);
    p.ino = ino;
    p.path = path;
    p.detail = fmt("extent (fofs %llu, blkaddr 0x%llx, len %llu) is not backed by the file's blocks", ext.fofs.get(),
                   ext.blk_addr.get(), el);
    fix_inode_field(add(p), in, [](Node& n) { std::memset(&n.i.i_ext, 0, sizeof n.i.i_ext); });
  }
  if (in.cluster_log && ctx.compr_counted != extras(in).compr_blocks) {
    Problem p = prob(Code::INODE_COMPR_BLOCKS);
    p.ino = ino;
    p.path = path;
    p.detail = fmt("i_compr_blocks %llu, counted %llu", extras(in).compr_blocks, ctx.compr_counted);
    const std::uint64_t v = ctx.compr_counted;
    fix_inode_field(add(p), in, [v](Node& n) { n.i.extra.i_compr_blocks = v; });
  }
  if (st.blocks_counted != i_blocks(in)) {
    Problem p = prob(Code::INODE_BLOCKS);
    p.ino = ino;
    p.path = path;
    p.detail = fmt("i_blocks %llu, counted %llu", i_blocks(in), st.blocks_counted);
    const std::uint64_t v = st.blocks_counted;
    fix_inode_field(add(p), in, [v](Node& n) { n.i.i_blocks = v; });
  }
  if (in.is_symlink() && in.size == 0 && st.blocks_counted > 1) {
    Problem p = prob(Code::SYMLINK_SIZE);
    p.ino = ino;
    p.path = path;
    p.detail = "symlink with blocks but i_size 0";
    add(p);
  } else if (in.is_symlink() && (in.inline_flags & inline_flag::data) && !(in.advise & advise::encrypt) &&
             extras(in).symlink_len != in.size) {
    Problem p = prob(Code::SYMLINK_SIZE);
    p.ino = ino;
    p.path = path;
    p.detail = fmt("symlink i_size %llu, target length %llu", in.size, extras(in).symlink_len);
    const std::uint64_t v = extras(in).symlink_len;
    fix_inode_field(add(p), in, [v](Node& n) { n.i.i_size = v; });
  }
  return true;
}

namespace {
// The level and bucket of directory block `bidx` (dir_buckets(),
// bucket_blocks() in fs/f2fs/dir.c); false when past the last level.
bool level_bucket(std::uint64_t bidx, std::uint32_t dir_level, std::uint32_t* level, std::uint32_t* bucket,
                  std::uint32_t* nbuckets) {
  std::uint64_t start = 0;
  for (std::uint32_t l = 0; l < 64; ++l) {
    const std::uint64_t nb = dir_buckets(l, dir_level);
    const std::uint64_t n = nb * bucket_blocks(l);
    if (bidx < start + n) {
      *level = l;
      *bucket = static_cast<std::uint32_t>((bidx - start) / bucket_blocks(l));
      *nbuckets = static_cast<std::uint32_t>(nb);
      return true;
    }
    start += n;
  }
  return false;
}
}  // namespace

void Checker::check_dentries(const InodeRec& dir, InodeState& st, std::vector<Dent>& dents, std::vector<nid_t>& next) {
  const bool casefolded = dir.flags & iflag::casefold;
  const bool encrypted = dir.advise & advise::encrypt;
  const std::uint16_t enc_flags = sb_.s_encoding_flags.get();
  std::uint32_t dots = 0, dotdots = 0;
  std::unordered_set<std::string> names;
  // A copy: walking the children adds to dirs_.
  const std::string dir_path = own_path(st);
  auto mk = [&](Code c, const Dent& d, std::string detail) {
    Problem p = prob(c);
    p.ino = dir.ino;
    p.blkaddr = d.blkaddr;
    p.path = dir_path.empty() ? "/" : dir_path;
    p.detail = (d.bidx == Dent::kInline ? fmt("inline slot %llu", d.slot) : fmt("block %llu slot %llu", d.bidx, d.slot)) +
               " \"" + printable(d.name) + "\": " + detail;
    return p;
  };
  const nid_t root = sb_.root_ino.get();
  auto area = [&](const Dent& d) { return dentry_area(dir, d.blkaddr, d.bidx == Dent::kInline); };
  auto entry_off = [&](const Dent& d) { return area(d).dentry_off + d.slot * static_cast<std::uint32_t>(sizeof(DirEntry)); };
  auto clear = [&](std::size_t idx, const Dent& d) {
    fix_clear_dentry(idx, area(d), d.slot, static_cast<std::uint32_t>(d.name.size()));
  };
  for (Dent& d : dents) {
    if (d.name == "." || d.name == "..") {
      const bool dot = d.name == ".";
      if ((dot ? dots : dotdots) > 0) {
        clear(add(mk(dot ? Code::DENTRY_DOT : Code::DENTRY_DOTDOT, d, dot ? "a second '.'" : "a second '..'")), d);
        continue;
      }
      (dot ? dots : dotdots)++;
      const nid_t want = dot ? dir.ino : (dir.ino == root ? root : st.parent);
      if (d.ino != want && want != 0)
        fix(add(mk(dot ? Code::DENTRY_DOT : Code::DENTRY_DOTDOT, d, fmt("names ino %llu, expected %llu", d.ino, want))),
            d.blkaddr, [o = entry_off(d), want](std::uint8_t* b) { store_le32(b, o + offsetof(DirEntry, ino), want); });
      // Both name directories (F2FS_FT_DIR; __chk_dentries() checks every
      // entry's type, these too).
      if (d.type != 2)
        fix(add(mk(Code::DENTRY_FTYPE, d, fmt("file type %llu, a directory has type 2", d.type))), d.blkaddr,
            [o = entry_off(d)](std::uint8_t* b) { b[o + offsetof(DirEntry, file_type)] = 2; });
      // "." and ".." hash to 0 (f2fs_dentry_hash() in fs/f2fs/hash.c).
      if (d.hash != 0)
        fix(add(mk(Code::DENTRY_HASH, d, fmt("stored hash 0x%llx, ", d.hash) + (dot ? "'.'" : "'..'") + " hashes to 0")), d.blkaddr,
            [o = entry_off(d)](std::uint8_t* b) { store_le32(b, o + offsetof(DirEntry, hash_code), 0); });
      continue;
    }
    // Hash (f2fs_check_hash_code()); skipped where the hash cannot be
    // computed without the key (encrypted + casefolded) or in a build
    // without casefolding (neither ICU nor the generated Unicode table).
    if (!(encrypted && casefolded) && !(casefolded && !casefold_supported())) {
      const std::uint32_t h = casefolded && !encrypted ? dentry_hash_casefold(d.name, enc_flags) : dentry_hash(d.name);
      if (h != d.hash) {
        fix(add(mk(Code::DENTRY_HASH, d, fmt("stored hash 0x%llx, name hashes to 0x%llx", d.hash, h))), d.blkaddr,
            [o = entry_off(d), h](std::uint8_t* b) { store_le32(b, o + offsetof(DirEntry, hash_code), h); });
        d.hash = h;
      }
    }
    if (d.bidx != Dent::kInline) {
      std::uint32_t level = 0, bucket = 0, nb = 1;
      if (!level_bucket(d.bidx, dir.dir_level, &level, &bucket, &nb) || d.hash % nb != bucket) {
        // Lookups never find it: the entry goes and its inode, if nothing
        // else links it, is reconnected to /lost+found.
        clear(add(mk(Code::DENTRY_POSITION, d,
                     fmt("hash 0x%llx belongs in bucket %llu of level %llu, found in bucket %llu", d.hash, d.hash % nb,
                         level, bucket))),
              d);
        continue;
      }
    }
    if (!names.insert(d.name).second) {
      clear(add(mk(Code::DENTRY_DUPLICATE_NAME, d, "the name appears twice in the directory")), d);
      continue;
    }
    // The inode it names.
    const nid_t c = d.ino;
    if (c < root || c >= max_nid_ || c == dir.ino) {
      clear(add(mk(Code::DENTRY_INO_INVALID, d, fmt("names ino %llu, outside [%llu, %llu)", c, root, max_nid_))), d);
      continue;
    }
    // The quota files are hidden system inodes, reached from the
    // superblock's qf_ino[] alone (f2fs_enable_quotas() in fs/f2fs/super.c
    // loads them by number): an entry naming one goes.
    bool quota_file = false;
    for (std::uint32_t k = 0; k < kMaxQuotas; ++k) quota_file |= (features_ & feature::quota_ino) && sb_.qf_ino[k].get() == c;
    if (quota_file) {
      clear(add(mk(Code::DENTRY_INO_INVALID, d, fmt("names ino %llu, a quota file (a hidden system inode)", c))), d);
      continue;
    }
    const NatRec& ne = nat(c);
    if (ne.blkaddr == kNullAddr) {
      clear(add(mk(Code::DENTRY_INO_INVALID, d, fmt("names ino %llu, whose NAT entry is null", c))), d);
      continue;
    }
    if (!valid_main(ne.blkaddr)) {
      clear(add(mk(Code::DENTRY_INO_INVALID, d, fmt("names ino %llu, whose NAT block address 0x%llx is invalid", c, ne.blkaddr))), d);
      continue;
    }
    const NodeRec& r = node(c);
    if (!r.read_ok) {
      Problem p = mk(Code::NODE_UNREADABLE, d, fmt("inode %llu cannot be read", c));
      p.nid = c;
      add(p);
      continue;
    }
    if (footer_nid(c) != c) {
      Problem p = mk(Code::NODE_FOOTER_NID, d, fmt("inode block 0x%llx of ino %llu has footer nid %llu", ne.blkaddr, c, footer_nid(c)));
      p.nid = c;
      p.blkaddr = ne.blkaddr;
      clear(add(p), d);
      continue;
    }
    if (r.inode() < 0) {
      Problem p = mk(Code::NODE_NOT_INODE, d,
                     fmt("ino %llu is not an inode (footer ino %llu, offset %llu)", c, footer_ino(c), r.footer_ofs()));
      p.nid = c;
      p.blkaddr = ne.blkaddr;
      clear(add(p), d);
      continue;
    }
    InodeRec& child = inodes_[static_cast<std::size_t>(r.inode())];
    if (!reached(c)) mode_from_dentry(child, d.type);
    const std::uint8_t ft = ftype_of_mode(child.mode);
    if (ft == 0) {
      // An inode of no known type cannot be used: its dentry goes, and with
      // it the inode (its NAT entries become unreachable).
      Problem p = mk(Code::INODE_MODE, d, fmt("ino %llu has i_mode 0%llo, no valid file type", c, child.mode));
      p.ino = c;
      p.nid = c;
      p.blkaddr = ne.blkaddr;
      clear(add(p), d);
      continue;
    }
    if (ft != 0 && ft != d.type)
      fix(add(mk(Code::DENTRY_FTYPE, d, fmt("file type %llu, inode %llu has type %llu", d.type, c, ft))), d.blkaddr,
          [o = entry_off(d), ft](std::uint8_t* b) { b[o + offsetof(DirEntry, file_type)] = ft; });
    const std::string cpath = (dir_path == "/" ? std::string() : dir_path) + "/" + printable(d.name);
    if (reached(c)) {
      if (child.is_dir()) {
        // Names the directory linked twice (the entry's directory is in the detail).
        Problem p = mk(Code::DENTRY_DIR_HARDLINK, d,
                       "directory " + std::to_string(c) + " is already linked as " + inode_path(c) + "; this entry is in directory " +
                           std::to_string(dir.ino));
        p.ino = c;
        p.path = inode_path(c);
        clear(add(p), d);
        continue;
      }
      InodeState& cs = walk_state(c);
      if (cs.seen()) {
        // The first dentry of a file walked as unreachable (reconnect() names it after that link).
        if (cs.links_found == 0) late_links_.emplace(c, std::make_pair(dir.ino, d.name));
        ++cs.links_found;
      }
      continue;
    }
    {
      InodeState& cs = walk_state(c);
      cs.parent = dir.ino;
      cs.links_found = 1;
      if (!cs.has_dir()) cs.link = d.blkaddr;
      cs.name_slot = static_cast<std::uint8_t>(d.slot);
      cs.name_len = static_cast<std::uint8_t>(d.name.size());
      if (d.bidx == Dent::kInline) cs.flags |= InodeState::kNameInline;
    }
    walk_inode(c, cpath, true);
    // i_pino and i_namelen name the first link (skipped once the kernel
    // marked the parent lost: FADVISE_LOST_PINO_BIT).
    if (!(child.advise & advise::lost_pino) && (child.is_dir() || child.links == 1)) {
      if (child.pino != dir.ino) {
        Problem p = prob(Code::INODE_PINO);
        p.ino = c;
        p.path = cpath;
        p.detail = fmt("i_pino %llu, linked from directory %llu", child.pino, dir.ino);
        fix_inode_field(add(p), child, [v = dir.ino](Node& n) { n.i.i_pino = v; });
      }
      if (i_namelen(child) != d.name.size()) {
        Problem p = prob(Code::INODE_NAMELEN);
        p.ino = c;
        p.path = cpath;
        p.detail = fmt("i_namelen %llu, dentry name length %llu", i_namelen(child), d.name.size());
        fix_inode_field(add(p), child, [name = d.name](Node& n) {
          n.i.i_namelen = static_cast<std::uint32_t>(name.size());
          std::memset(n.i.i_name, 0, sizeof n.i.i_name);
          std::memcpy(n.i.i_name, name.data(), std::min<std::size_t>(name.size(), sizeof n.i.i_name));
        });
      }
    }
    else if (i_namelen(child) > kNameLen) {
      // Any link's name will do where i_namelen cannot be a name's length
      // (fsck_chk_inode_blk(): i_namelen above F2FS_NAME_LEN takes the
      // dentry's length, hard links and lost parents included).
      Problem p = prob(Code::INODE_NAMELEN);
      p.ino = c;
      p.path = cpath;
      p.detail = fmt("i_namelen %llu exceeds %llu, dentry name length %llu", i_namelen(child), kNameLen, d.name.size());
      fix_inode_field(add(p), child, [name = d.name](Node& n) {
        n.i.i_namelen = static_cast<std::uint32_t>(name.size());
        std::memset(n.i.i_name, 0, sizeof n.i.i_name);
        std::memcpy(n.i.i_name, name.data(), std::min<std::size_t>(name.size(), sizeof n.i.i_name));
      });
    }
    if (child.is_dir()) {
      if (st.has_dir()) ++dirs_[st.link].subdirs;
      next.push_back(c);
    }
  }
  // A missing "." or ".." is added back where any entry hashing to 0
  // belongs: level 0, bucket 0 (the inline area, or directory block 0 or 1).
  // fsck.f2fs sets F2FS_INLINE_DOTS instead, which asks the kernel to add
  // them at the next lookup (__recover_dot_dentries() in fs/f2fs/namei.c).
  const nid_t parent = dir.ino == root ? root : st.parent;
  for (int k = 0; k < 2; ++k) {
    if ((k == 0 ? dots : dotdots) != 0) continue;
    Problem p = prob(k == 0 ? Code::DENTRY_DOT : Code::DENTRY_DOTDOT);
    p.ino = dir.ino;
    p.path = dir_path.empty() ? "/" : dir_path;
    p.detail = k == 0 ? "no '.' entry" : "no '..' entry";
    const std::size_t idx = add(p);
    const nid_t target = k == 0 ? dir.ino : parent;
    if (target == 0 || !allowed(p.code) || opts_.mode == Mode::check_only) continue;
    if (!add_dentry(dir, k == 0 ? "." : "..", target, 2, idx))
      report_.problems[idx].detail += "; not added: no free slot in level 0";
  }
}

// Expands one level of directories: reads the dentry blocks of a run of
// them in one batch (up to kDirChunkBlocks blocks, so that the parsed
// entries held at once stay bounded), then checks each directory's entries
// in order.
void Checker::expand_dirs(std::vector<nid_t>& level) {
  constexpr std::size_t kDirChunkBlocks = 16;
  while (!level.empty()) {
    std::vector<nid_t> next;
    for (std::size_t from = 0; from < level.size();) {
      std::size_t to = from;
      std::vector<block_t> addrs;
      while (to < level.size() && (to == from || addrs.size() < kDirChunkBlocks)) {
        for (auto& [idx, a] : dir_blocks_of(level[to])) addrs.push_back(a);
        ++to;
      }
      std::sort(addrs.begin(), addrs.end());
      addrs.erase(std::unique(addrs.begin(), addrs.end()), addrs.end());
      std::unordered_map<block_t, std::pair<std::vector<Dent>, std::vector<LocalIssue>>> parsed;
      auto st = read_blocks_batched(
          dev_, addrs, opts_.batch_blocks, opts_.queue_depth, 8,
          [&](block_t a, const std::uint8_t* data) {
            const auto* db = reinterpret_cast<const DentryBlock*>(data);
            auto& slot = parsed[a];
            parse_dentries(db->dentry_bitmap, db->dentry, &db->filename[0][0], kNrDentryInBlock, 0, a, slot.first, slot.second);
          },
          &report_.stats.bytes_read);
      (void)st;  // blocks that failed to read stay unparsed: reported below
      for (std::size_t li = from; li < to; ++li) {
        const nid_t d = level[li];
        const InodeRec& dir = inodes_[static_cast<std::size_t>(node(d).inode())];
        InodeState& ds = walk_state(d);
        const std::string ds_path = own_path(ds);
        std::vector<Dent> dents;
        if (dir.inline_flags & inline_flag::dentry) {
          dents = extras(dir).inline_dents;
          for (const auto& is : extras(dir).inline_dent_issues) {
            Problem p = prob(is.code);
            p.ino = d;
            p.blkaddr = iblk(dir);
            p.path = ds_path.empty() ? "/" : ds_path;
            p.detail = is.detail;
            fix_clear_dentry(add(p), dentry_area(dir, iblk(dir), true), is.slot, 1);
          }
        } else {
          for (auto& [idx, a] : dir_blocks_of(d)) {
            auto it = parsed.find(a);
            if (it == parsed.end()) {
              Problem p = prob(Code::NODE_UNREADABLE);
              p.ino = d;
              p.blkaddr = a;
              p.detail = fmt("dentry block %llu at 0x%llx cannot be read", idx, a);
              add(p);
              continue;
            }
            for (auto e : it->second.first) {
              e.bidx = idx;
              dents.push_back(std::move(e));
            }
            for (const auto& is : it->second.second) {
              Problem p = prob(is.code);
              p.ino = d;
              p.blkaddr = a;
              p.path = ds_path.empty() ? "/" : ds_path;
              p.detail = fmt("block %llu: ", idx) + is.detail.substr(is.detail.find("slot"));
              fix_clear_dentry(add(p), dentry_area(dir, a, false), is.slot, 1);
            }
          }
        }
        check_dentries(dir, ds, dents, next);
      }
      from = to;
    }
    level.swap(next);
  }
}

void Checker::walk_namespace() {
  const nid_t root = sb_.root_ino.get();
  nids_.clear_reached();
  walk_.assign(inodes_.size(), InodeState{});
  dirs_.clear();
  use_count_ = 0;
  addr_use_.assign((addrs_.size() + 63) / 64, 0);
  reached_inodes_ = 0;
  progress(3, 0, inodes_.size());
  // An unusable root is rebuilt by -y (rebuild_root()): what was under it
  // is then unreachable and reconnected (repair()).
  auto enter_root = [&] {
    walk_inode(root, "/");
    walk_state(root).parent = root;
    walk_state(root).links_found = 1;
  };
  auto root_bad = [&](std::string d) {
    Problem p = prob(Code::ROOT_BAD);
    p.ino = root;
    p.path = "/";
    p.detail = std::move(d);
    if (!rebuild_root(add(p))) return false;
    enter_root();
    return true;
  };
  auto walk_root = [&] {
    enter_root();
    std::vector<nid_t> level{root};
    expand_dirs(level);
  };
  if (root >= max_nid_ || nat(root).blkaddr == kNullAddr || !valid_main(nat(root).blkaddr))
    root_bad("the root inode has no valid NAT entry");
  else if (!node(root).read_ok || node(root).inode() < 0)
    root_bad("the root's node block is not an inode");
  else if (!inodes_[static_cast<std::size_t>(node(root).inode())].is_dir() && !root_mode_repairable(root))
    root_bad("the root inode is not a directory");
  else if (root_first_block_lost(root)) {
    // Without its first dentry block the root has no slot for "." and ".."
    // and the repair allocates no data block: -y rebuilds it (its
    // children come back under their i_name); in the other modes, or when
    // no node block is free for a new root, the walk goes on and reports
    // what is missing.
    if (!root_bad("the root directory's first dentry block is lost (file block 0 is not a main-area address): "
                  "no slot for '.' and '..'"))
      walk_root();
  } else {
    walk_root();
  }
  check_orphans();
  check_quota();
  check_unreachable();
  finish_inode_counts();
  check_quota_usage();
  progress(3, inodes_.size(), inodes_.size());
}

// A root whose mode alone is wrong: its first data block is a dentry block
// opening with "." and ".." naming the root (as mkfs writes it,
// f2fs_add_default_dentry_root() in mkfs/f2fs_format.c, and as the kernel's
// f2fs_make_empty() keeps it). Then ROOT_BAD is reported, S_IFDIR restored
// (the permission bits kept) and the walk goes on with the root as a
// directory. Anything else (inline or missing blocks, other content) is
// left: true leaves the root as it is for the caller to report.
bool Checker::root_mode_repairable(nid_t root) {
  InodeRec& in = inodes_[static_cast<std::size_t>(node(root).inode())];
  if (!in.sane || (in.inline_flags & (inline_flag::data | inline_flag::dentry))) return false;
  std::vector<std::uint8_t> b(kBlockSize);
  const auto first = first_block_addr(in);
  if (!first || !valid_main(*first) || !read_at(dev_, static_cast<std::uint64_t>(*first) * kBlockSize, b)) return false;
  DentryBlock d;
  std::memcpy(&d, b.data(), sizeof d);
  const bool dots = test_bit_le(d.dentry_bitmap, 0) && test_bit_le(d.dentry_bitmap, 1) &&
                    d.dentry[0].ino.get() == root && d.dentry[0].name_len.get() == 1 && d.filename[0][0] == '.' &&
                    d.dentry[1].ino.get() == root && d.dentry[1].name_len.get() == 2 && d.filename[1][0] == '.' &&
                    d.filename[1][1] == '.';
  if (!dots) return false;
  Problem p = prob(Code::ROOT_BAD);
  p.ino = root;
  p.path = "/";
  p.detail = fmt("the root inode is not a directory (i_mode 0%llo) but its first block (%llu) is a dentry block "
                 "with . and ..: S_IFDIR restored", in.mode, *first);
  const std::size_t idx = add(p);
  const std::uint16_t mode = static_cast<std::uint16_t>(0x4000 | (in.mode & 07777));
  fix_inode_field(idx, in, [mode](Node& nn) { nn.i.i_mode = mode; });
  in.mode = mode;
  return true;
}

// A root directory with regular (not inline) dentries whose file block 0,
// the first block of level 0 where "." and ".." live (f2fs_make_empty() in
// fs/f2fs/dir.c), is not an address in the main area.
bool Checker::root_first_block_lost(nid_t root) {
  const InodeRec& in = inodes_[static_cast<std::size_t>(node(root).inode())];
  if (!in.sane || !in.is_dir() || (in.inline_flags & (inline_flag::data | inline_flag::dentry))) return false;
  const auto first = first_block_addr(in);
  return first && !valid_main(*first);
}

// i_addr of file block 0 of `in`, read from its node block; nullopt when
// the block cannot be read.
std::optional<block_t> Checker::first_block_addr(const InodeRec& in) {
  std::vector<std::uint8_t> b(kBlockSize);
  if (!read_at(dev_, static_cast<std::uint64_t>(iblk(in)) * kBlockSize, b)) return std::nullopt;
  Node n;
  std::memcpy(&n, b.data(), sizeof n);
  return static_cast<block_t>(n.i.i_addr[in.extra_isize / 4].get());
}

void Checker::check_orphans() {
  auto o = vol_->orphans();
  if (!o) {
    Problem p = prob(Code::ORPHAN_ENTRY_INVALID);
    p.detail = o.error().message;
    add(p);
    return;
  }
  for (nid_t ino : *o) {
    Problem p = prob(Code::ORPHAN_ENTRY_INVALID);
    p.ino = ino;
    if (ino < sb_.root_ino.get() || ino >= max_nid_) {
      p.detail = fmt("orphan entry %llu is out of range", ino);
      fix_global(add(p));
      continue;
    }
    const NatRec& ne = nat(ino);
    if (ne.blkaddr == kNullAddr || !valid_main(ne.blkaddr) || !node(ino).read_ok || footer_nid(ino) != ino ||
        node(ino).inode() < 0) {
      p.detail = fmt("orphan entry %llu names no inode", ino);
      fix_global(add(p));
      continue;
    }
    // A quota file is never an orphan (the superblock names it): the entry
    // goes, the inode stays as it is.
    bool quota_file = false;
    for (std::uint32_t k = 0; k < kMaxQuotas; ++k) quota_file |= (features_ & feature::quota_ino) && sb_.qf_ino[k].get() == ino;
    if (quota_file) {
      p.detail = fmt("orphan entry %llu names a quota file", ino);
      fix_global(add(p));
      continue;
    }
    const InodeRec& in = inodes_[static_cast<std::size_t>(node(ino).inode())];
    // Linked from the namespace: leaves the orphan list. Otherwise it stays
    // an orphan and its i_links becomes 0 (fsck_chk_orphan_node()).
    if (!reached(ino)) orphans_.push_back(ino);
    if (in.links != 0) {
      Problem q = prob(Code::ORPHAN_HAS_LINKS);
      q.ino = ino;
      q.detail = fmt("orphan inode has i_links %llu", in.links);
      const std::size_t idx = add(q);
      if (reached(ino)) fix_global(idx);
      else fix_inode_field(idx, in, [](Node& n) { n.i.i_links = 0u; });
    }
    if (!reached(ino)) {
      walk_inode(ino, "");
      walk_state(ino).flags |= InodeState::kOrphan;
      if (in.is_dir()) {
        std::vector<nid_t> level{ino};
        expand_dirs(level);
      }
    }
  }
}

// A quota inode number of the superblock in use that names no inode, where
// the other copy names a different one that is an inode (the copies differ
// in qf_ino[]): the other copy's number is taken, for the walk (the inode is
// checked as the quota file, not found unreachable) and by the repair for
// both copies. Neither copy is trusted more in general; this takes the
// only one of the two values that can be a quota file.
void Checker::adopt_quota_inodes() {
  if (!(features_ & feature::quota_ino)) return;
  const int other = 1 - vol_->open_report().superblock_copy;
  std::vector<std::uint8_t> b(kBlockSize);
  if (!read_at(dev_, static_cast<std::uint64_t>(other) * kBlockSize, b)) return;
  SuperBlock alt;
  std::memcpy(&alt, b.data() + kSuperOffset, sizeof alt);
  if (alt.magic.get() != kSuperMagic) return;
  auto is_inode = [&](nid_t n) {
    return n >= sb_.root_ino.get() && n < max_nid_ && nat(n).blkaddr != kNullAddr && valid_main(nat(n).blkaddr) &&
           node(n).read_ok && footer_nid(n) == n && node(n).inode() >= 0;
  };
  static const char* kNames[3] = {"user", "group", "project"};
  for (int t = 0; t < 3; ++t) {
    const nid_t q = sb_.qf_ino[t].get(), a = alt.qf_ino[t].get();
    if (q == a || a == 0 || is_inode(q) || !is_inode(a)) continue;
    bool taken = false;
    for (int k = 0; k < 3; ++k) taken |= k != t && sb_.qf_ino[k].get() == a;
    if (taken) continue;
    Problem p = prob(Code::QUOTA_INODE_BAD);
    p.ino = q;
    p.detail = kNames[t] + fmt(" quota inode %llu (superblock #%llu) is not a valid inode; superblock #%llu names "
                               "inode %llu, taken for both",
                               q, static_cast<unsigned long long>(vol_->open_report().superblock_copy),
                               static_cast<unsigned long long>(other), a);
    sb_.qf_ino[t].set(a);
    qf_ino_adopted_.push_back(add(p));
  }
}

void Checker::check_quota() {
  if (!(features_ & feature::quota_ino)) return;
  static const char* kNames[3] = {"user", "group", "project"};
  for (int t = 0; t < 3; ++t) {
    const nid_t q = sb_.qf_ino[t].get();
    if (q == 0) continue;
    Problem p = prob(Code::QUOTA_INODE_BAD);
    p.ino = q;
    if (q < sb_.root_ino.get() || q >= max_nid_ || nat(q).blkaddr == kNullAddr || !valid_main(nat(q).blkaddr) ||
        !node(q).read_ok || footer_nid(q) != q || node(q).inode() < 0) {
      p.detail = std::string(kNames[t]) + fmt(" quota inode %llu is not a valid inode", q);
      const std::size_t idx = add(p);
      // A new quota file at that number (repair(), rebuild_quota_file()),
      // as fsck.f2fs's fsck_chk_quota_node() rebuilds a bad quota inode
      // (f2fs_rebuild_qf_inode() in fsck/node.c) and then writes the file
      // from its counts; not when another inode's tree reaches the nid.
      if (q > sb_.root_ino.get() && q < max_nid_ && !reached(q)) quota_rebuilds_.emplace_back(t, idx);
      continue;
    }
    InodeRec& in = inodes_[static_cast<std::size_t>(node(q).inode())];
    if (!in.is_reg()) {
      p.detail = std::string(kNames[t]) + fmt(" quota inode %llu is not a regular file (i_mode 0%llo)", q, in.mode);
      // Only the mode is wrong if the inode's blocks still read as this
      // type's quota file (the v2 header magic of quotaio_v2.h, at least
      // the header and root tree blocks). Then the mode goes back to what
      // mkfs writes (S_IFREG | 0600, as f2fs_init_qf_inode() in
      // lib/libf2fs.c) and the walk treats the inode as the regular file
      // it is; otherwise the problem is left.
      bool readable = false;
      if (!(in.inline_flags & (inline_flag::data | inline_flag::dentry))) {
        if (auto info = vol_->read_inode(q); info && info->size >= 2048 && info->size <= (64u << 20)) {
          std::uint8_t head[4096];
          auto n = vol_->read(*info, 0, std::span<std::uint8_t>(head, sizeof head));
          readable = n && *n >= 2048 && load_le32(head, 0) == kQuotaMagics[t];
        }
      }
      if (!readable) p.detail += "; its blocks do not read as a quota file: left";
      const std::size_t idx = add(p);
      if (readable) {
        fix_inode_field(idx, in, [](Node& n) { n.i.i_mode = static_cast<std::uint16_t>(0x8180); });
        in.mode = 0x8180;
      }
    }
    if (!reached(q)) walk_inode(q, std::string("<quota:") + kNames[t] + ">");
  }
}

void Checker::check_unreachable() {
  nids_.for_each(sb_.root_ino.get(), [&](nid_t n, const NidTable::Rec& rec) {
    if (n >= max_nid_ || rec.node.reached || rec.node.inode() < 0 || footer_nid(n) != n) return;
    if (rec.nat.blkaddr == kNullAddr || !valid_main(rec.nat.blkaddr)) return;
    const InodeRec& in = inodes_[static_cast<std::size_t>(rec.node.inode())];
    if (ftype_of_mode(in.mode) == 0) return;  // not usable: its NAT entry is unreachable
    Problem p = prob(Code::INODE_UNREACHABLE);
    p.ino = n;
    p.blkaddr = nat(n).blkaddr;
    p.detail = fmt("inode %llu (i_mode 0%llo, i_links %llu) is linked from no directory", n, in.mode, in.links);
    lost_found_fixes_.push_back(add(p));
    const std::string path = fmt("/lost+found/#%llu", n);
    walk_inode(n, "");
    walk_state(n).links_found = 0;
    if (in.is_dir()) {
      std::vector<nid_t> level{n};
      expand_dirs(level);
    }
  });
}

void Checker::finish_inode_counts() {
  bool quota_ino[1] = {false};
  (void)quota_ino;
  for_each_reached_inode([&](nid_t ino) {
    const InodeRec& in = inodes_[static_cast<std::size_t>(node(ino).inode())];
    const InodeState& st = walk_state(ino);
    bool is_quota = false;
    if (features_ & feature::quota_ino)
      for (int t = 0; t < 3; ++t) is_quota |= sb_.qf_ino[t].get() == ino;
    if (is_quota) return;
    Problem p;
    p.ino = ino;
    if (in.is_dir()) {
      // Unreachable directories too: their reconnection leaves i_links as it is.
      if (st.orphan()) return;
      const std::uint64_t want = 2ull + (st.has_dir() ? dirs_[st.link].subdirs : 0);
      if (in.links != want) {
        p.code = Code::DIR_LINKS;
        p.path = path_of(st);
        p.detail = fmt("i_links %llu, subdirectories + 2 = %llu", in.links, want);
        fix_inode_field(add(p), in, [want](Node& n) { n.i.i_links = static_cast<std::uint32_t>(want); });
      }
    } else {
      if (st.orphan() && in.links == 0) return;
      if (st.links_found == 0) return;  // unreachable: reported, its link comes from lost+found
      if (in.links != st.links_found) {
        p.code = Code::INODE_LINKS;
        p.path = path_of(st);
        p.detail = fmt("i_links %llu, real links %llu", in.links, st.links_found);
        fix_inode_field(add(p), in, [v = st.links_found](Node& n) { n.i.i_links = v; });
      }
    }
  });
}

}  // namespace f2fscore::fsck
