// The checker's repairs (docs/fsck.md). Order, for crash safety:
//  1. In-place node and dentry block edits registered by the walk (inode
//     fields with the checksum recomputed, pointers zeroed, dentries
//     cleared or corrected). They only remove references or correct
//     fields, so the old checkpoint stays usable: blocks they release are
//     merely leaked until step 3 commits.
//  2. Reconnecting unreachable inodes to /lost+found (a dentry in a free
//     slot of lost+found's inline area or of one of its level-0 blocks).
//  3. The metadata rebuild (meta::rebuild()): SIT, SSA, NAT, orphans,
//     nat_bits and a new checkpoint pack written as the kernel's checkpoint
//     does (the other copies, then the pack), restoring the superblocks
//     when one is bad.
#include <algorithm>
#include <cstdio>
#include <cstring>

#include "f2fscore/checksum.hpp"
#include "f2fscore/disk/checkpoint.hpp"
#include "f2fscore/disk/superblock.hpp"
#include "fsck/fsck_internal.hpp"
#include "util/text.hpp"

namespace f2fscore::fsck {

using namespace disk;
using detail::fmt;

namespace {
constexpr std::size_t kNoProblem = static_cast<std::size_t>(-1);

bool is_global(Code c) {
  switch (c) {
    case Code::SB_PRIMARY_BAD: case Code::SB_BACKUP_BAD: case Code::CP_PACK_BAD:
    case Code::CP_VALID_BLOCK_COUNT: case Code::CP_VALID_NODE_COUNT: case Code::CP_VALID_INODE_COUNT:
    case Code::CP_FREE_SEGMENT_COUNT: case Code::CP_NEXT_FREE_NID: case Code::CP_FIELD_BAD:
    case Code::NAT_BLKADDR_INVALID: case Code::NAT_BLKADDR_NOT_IN_SIT: case Code::NAT_ENTRY_UNREACHABLE:
    case Code::NAT_BITS_MISMATCH: case Code::NAT_JOURNAL_BAD:
    case Code::SIT_BITMAP_MISMATCH: case Code::SIT_VBLOCKS_MISMATCH: case Code::SIT_TYPE_MISMATCH:
    case Code::SIT_JOURNAL_BAD: case Code::SSA_NODE_MISMATCH: case Code::SSA_DATA_MISMATCH:
    case Code::CURSEG_NEXT_BLOCK_NOT_FREE: case Code::CURSEG_TYPE_MISMATCH:
    case Code::FSYNC_CHAIN_LOOP: case Code::FSYNC_CHAIN_BAD:
      return true;
    default:
      return false;
  }
}
}  // namespace

bool Checker::allowed(Code c) const {
  const FixClass f = definition(c).fix;
  if (f == FixClass::none) return false;
  if (opts_.mode == Mode::repair_all) return true;
  if (opts_.mode == Mode::preen) return f == FixClass::safe;
  return false;
}

void Checker::fix(std::size_t idx, block_t blk, std::function<void(std::uint8_t*)> fn) {
  if (opts_.mode == Mode::check_only) return;
  if (idx != kNoProblem && !allowed(report_.problems[idx].code)) return;
  if (idx == kNoProblem && opts_.mode != Mode::repair_all) return;
  if (!valid_main(blk)) return;
  edits_[blk].push_back({std::move(fn), idx});
}

void Checker::fix_global(std::size_t idx) {
  if (idx != kNoProblem && allowed(report_.problems[idx].code)) global_fixes_.push_back(idx);
}

void Checker::fix_zero_word(std::size_t idx, block_t blk, std::uint32_t off) {
  if (off + 4 > kNodeFooterOffset) return;
  fix(idx, blk, [off](std::uint8_t* b) { store_le32(b, off, 0); });
}

void Checker::fix_inode_field(std::size_t idx, const InodeRec& in, std::function<void(Node&)> fn) {
  fix(idx, iblk(in), [fn = std::move(fn)](std::uint8_t* b) {
    Node n;
    std::memcpy(&n, b, sizeof n);
    fn(n);
    std::memcpy(b, &n, sizeof n);
  });
}

void Checker::local_issue_fix(std::size_t idx, const InodeRec& in, Code c) {
  const std::uint32_t feats = features_;
  switch (c) {
    case Code::INODE_CHECKSUM:
      fix(idx, iblk(in), [](std::uint8_t*) {});  // recomputed when written
      break;
    case Code::INODE_EXTRA_ISIZE:
      // Without the feature the flag goes; with it the flag is set (an
      // inode of a flexible_inline_xattr volume needs it) and an invalid
      // i_extra_isize becomes the feature set's.
      fix_inode_field(idx, in, [feats](Node& n) {
        if (!(feats & feature::extra_attr)) {
          n.i.i_inline = n.i.i_inline & ~inline_flag::extra_attr;
          return;
        }
        n.i.i_inline = static_cast<std::uint8_t>(n.i.i_inline | inline_flag::extra_attr);
        const std::uint32_t cur = n.i.extra.i_extra_isize.get();
        if (cur % 4 != 0 || cur < 4 || cur > sizeof(InodeExtra)) n.i.extra.i_extra_isize = extra_isize_for_features(feats);
      });
      break;
    case Code::INODE_INLINE_XATTR_SIZE:
      // Without the inline_xattr flag the size f2fs_new_inode() writes, 0
      // (the walk used that layout); with it the default area.
      fix_inode_field(idx, in, [](Node& n) {
        n.i.extra.i_inline_xattr_size =
            static_cast<std::uint16_t>((n.i.i_inline & inline_flag::xattr) ? kDefaultInlineXattrAddrs : 0u);
      });
      break;
    case Code::INLINE_DATA_RESERVED:
      fix_inode_field(idx, in, [k = in.extra_isize / 4](Node& n) { n.i.i_addr[k] = 0u; });
      break;
    case Code::INLINE_DATA_SIZE: {
      const std::uint64_t max = max_inline_data(in.extra_isize, in.inline_xattr_addrs);
      fix_inode_field(idx, in, [max](Node& n) { n.i.i_size = max; });
      break;
    }
    case Code::INODE_FLAGS: {
      const std::uint32_t type = in.mode & 0xF000u;
      std::uint32_t clear = 0;
      if ((in.flags & iflag::casefold) && (!(feats & feature::casefold) || type != 0x4000)) clear |= iflag::casefold;
      if ((in.flags & iflag::compr) && (!(feats & feature::compression) || (type != 0x8000 && type != 0x4000)))
        clear |= iflag::compr;
      if (clear) fix_inode_field(idx, in, [clear](Node& n) { n.i.i_flags = n.i.i_flags.get() & ~clear; });
      if (extras(in).compr_log_fix != 0)
        fix_inode_field(idx, in, [log = extras(in).compr_log_fix, alg = extras(in).compr_alg](Node& n) {
          n.i.extra.i_log_cluster_size = static_cast<std::uint8_t>(log);
          n.i.extra.i_compress_algorithm = alg;
        });
      break;
    }
    case Code::INLINE_DENTRY_BAD:
      if (!in.is_dir())
        fix_inode_field(idx, in, [](Node& n) { n.i.i_inline = static_cast<std::uint8_t>(n.i.i_inline & ~inline_flag::dentry); });
      break;
    case Code::XATTR_NID_BAD:
      fix_inode_field(idx, in, [](Node& n) { n.i.i_xattr_nid = 0u; });
      break;
    case Code::INODE_GC_FAILURES:
      // The low 16 bits (i_gc_failures, little-endian) zeroed as fsck.f2fs
      // does; the high 16 bits, which no reader of a regular file uses, kept.
      fix_inode_field(idx, in, [](Node& n) { n.i.i_current_depth = n.i.i_current_depth.get() & 0xFFFF0000u; });
      break;
    case Code::INODE_MODE: {
      // Inline data under a device, fifo or socket mode (the scan's issue):
      // a type taken from the dentry (mode_from_dentry()) is written; else
      // the inode keeps its type and loses what the type cannot hold: the
      // inline data flag, the inline area and i_size (such an inode keeps
      // no data, f2fs_update_inode() in fs/f2fs/inode.c).
      if (!(in.inline_flags & inline_flag::data) || file_type_of_mode(in.mode) == 0 || in.is_dir()) break;
      if (in.is_reg() || in.is_symlink()) {
        fix_inode_field(idx, in, [m = in.mode](Node& n) { n.i.i_mode = m; });
        break;
      }
      const std::uint32_t base = in.extra_isize / 4u;
      const std::uint32_t end = in.inline_xattr_addrs < kDefAddrsPerInode ? kDefAddrsPerInode - in.inline_xattr_addrs : 0u;
      fix_inode_field(idx, in, [base, end](Node& n) {
        n.i.i_inline = static_cast<std::uint8_t>(n.i.i_inline & ~inline_flag::data);
        for (std::uint32_t k = base; k < end; ++k) n.i.i_addr[k] = 0u;
        n.i.i_size = static_cast<std::uint64_t>(0);
      });
      break;
    }
    default:
      break;
  }
}

// An inode holding inline data under a device, fifo or socket mode, named
// by a dentry whose file type can hold it (F2FS_FT_REG_FILE or
// F2FS_FT_SYMLINK, include/linux/f2fs_fs.h): the mode's type is taken from
// that dentry, the first that reaches the inode (the permission bits
// kept), so that the walk and the dentry type check see the repaired
// mode; the INODE_MODE issue the scan raised writes it
// (local_issue_fix()). Other dentry types leave the mode as it is.
void Checker::mode_from_dentry(InodeRec& in, std::uint8_t dentry_type) {
  if (!(in.inline_flags & inline_flag::data) || in.is_reg() || in.is_symlink() || in.is_dir() ||
      file_type_of_mode(in.mode) == 0)
    return;
  std::uint16_t type = 0;
  if (dentry_type == static_cast<std::uint8_t>(FileType::reg_file)) type = 0x8000;
  else if (dentry_type == static_cast<std::uint8_t>(FileType::symlink)) type = 0xA000;
  else return;
  in.mode = static_cast<std::uint16_t>(type | (in.mode & 07777));
}

DentryArea Checker::dentry_area(const InodeRec& dir, block_t blk, bool inline_area) const {
  DentryArea a;
  a.blkaddr = blk;
  if (!inline_area) {
    a.bitmap_off = offsetof(DentryBlock, dentry_bitmap);
    a.dentry_off = offsetof(DentryBlock, dentry);
    a.names_off = offsetof(DentryBlock, filename);
    a.nslots = kNrDentryInBlock;
    return a;
  }
  const std::uint32_t max_inline = max_inline_data(dir.extra_isize, dir.inline_xattr_addrs);
  const std::uint32_t base = inline_data_offset(dir.extra_isize);
  const auto lay = inline_dentry_layout(max_inline);
  a.bitmap_off = base;
  a.dentry_off = base + lay.dentry_offset();
  a.names_off = base + lay.filename_offset();
  a.nslots = lay.nr_slots;
  return a;
}

void Checker::fix_clear_dentry(std::size_t idx, const DentryArea& a, std::uint32_t slot, std::uint32_t name_len) {
  if (slot == 0xFFFFFFFFu) return;
  const std::uint32_t n = std::max<std::uint32_t>(1, (name_len + kSlotLen - 1) / kSlotLen);
  fix(idx, a.blkaddr, [a, slot, n](std::uint8_t* b) {
    for (std::uint32_t k = slot; k < slot + n && k < a.nslots; ++k) {
      b[a.bitmap_off + k / 8] &= static_cast<std::uint8_t>(~(1u << (k % 8)));
      std::memset(b + a.dentry_off + k * sizeof(DirEntry), 0, sizeof(DirEntry));
      std::memset(b + a.names_off + k * kSlotLen, 0, kSlotLen);
    }
  });
}

// Adds a dentry `name` -> `ino` to directory `dir` in a free run of slots
// of its inline area or of a level-0 block (any hash belongs in level 0's
// single bucket), as an edit (for problem `problem`, or none). False when
// there is no room in place.
bool Checker::add_dentry(const InodeRec& dir, const std::string& name, nid_t ino, std::uint8_t ft, std::size_t problem) {
  const std::uint32_t need = static_cast<std::uint32_t>((name.size() + kSlotLen - 1) / kSlotLen);
  std::vector<std::pair<block_t, DentryArea>> cands;
  if (dir.inline_flags & inline_flag::dentry) cands.emplace_back(iblk(dir), dentry_area(dir, iblk(dir), true));
  else
    for (auto& [idx, a] : dir_blocks_of(dir.ino))
      if (idx < 2) cands.emplace_back(a, dentry_area(dir, a, false));
  std::vector<std::uint8_t> b(kBlockSize);
  for (auto& [blk, area] : cands) {
    if (!read_at(dev_, static_cast<std::uint64_t>(blk) * kBlockSize, b)) continue;
    // Edits already pending for this block count as applied.
    if (auto it = edits_.find(blk); it != edits_.end())
      for (auto& e : it->second) e.fn(b.data());
    for (std::uint32_t s = 0; s + need <= area.nslots; ++s) {
      bool free = true;
      for (std::uint32_t k = s; k < s + need && free; ++k) free = !test_bit_le(b.data() + area.bitmap_off, k);
      if (!free) continue;
      const std::uint32_t hash = dentry_hash(name);
      fix(problem, blk, [area = area, s, need, name, hash, ino, ft](std::uint8_t* p) {  // clang-14: no capture of a structured binding
        for (std::uint32_t k = s; k < s + need; ++k) p[area.bitmap_off + k / 8] |= static_cast<std::uint8_t>(1u << (k % 8));
        std::uint8_t* de = p + area.dentry_off + s * sizeof(DirEntry);
        store_le32(de, offsetof(DirEntry, hash_code), hash);
        store_le32(de, offsetof(DirEntry, ino), ino);
        de[offsetof(DirEntry, name_len)] = static_cast<std::uint8_t>(name.size());
        de[offsetof(DirEntry, name_len) + 1] = 0;
        de[offsetof(DirEntry, file_type)] = ft;
        std::memset(p + area.names_off + s * kSlotLen, 0, need * kSlotLen);
        std::memcpy(p + area.names_off + s * kSlotLen, name.data(), name.size());
      });
      return true;
    }
  }
  return false;
}

// Creates /lost+found (fsck.f2fs does so when it must reconnect files): a
// new inode with inline dentries ("." and ".."), modelled on the root's
// attributes, in the next free block of the warm (else hot, cold) node log,
// a free nid, and its dentry in the root. Not on volumes with quota files
// (the new inode would have to be charged) or a casefolded/encrypted root.
bool Checker::create_lost_found() {
  const nid_t root = sb_.root_ino.get();
  if ((features_ & feature::quota_ino) || !reached(root) || node(root).inode() < 0) return false;
  const InodeRec rootrec = inodes_[static_cast<std::size_t>(node(root).inode())];
  if (!rootrec.is_dir() || (rootrec.flags & iflag::casefold) || (rootrec.advise & advise::encrypt)) return false;
  nid_t nid = 0;
  for (nid_t n = root + 1; n < max_nid_ && nid == 0; ++n)
    if (nat(n).blkaddr == kNullAddr && !reached(n)) nid = n;
  if (nid == 0) return false;
  block_t blk = 0;
  for (int t : {1, 0, 2}) {
    const std::uint32_t seg = cp_.cur_node_segno[t].get(), off = cp_.cur_node_blkoff[t].get();
    if (seg >= main_segs_ || off >= kDefaultBlocksPerSeg) continue;
    const auto a = static_cast<block_t>(vol_->segment_start(seg) + off);
    if (!used(a) && !sit_valid(a) && edits_.find(a) == edits_.end()) {
      blk = a;
      break;
    }
  }
  if (blk == 0) return false;
  std::vector<std::uint8_t> rb(kBlockSize);
  if (!read_at(dev_, static_cast<std::uint64_t>(iblk(rootrec)) * kBlockSize, rb)) return false;
  const auto* r = reinterpret_cast<const Node*>(rb.data());
  Node n;
  std::memset(&n, 0, sizeof n);
  n.i.i_mode = static_cast<std::uint16_t>(040700);
  // With an inline xattr area, as Linux creates every inode (the
  // inline_xattr mount option is the default; fsck.f2fs assumes the default
  // area for inline dentries either way).
  n.i.i_inline = static_cast<std::uint8_t>(inline_flag::dentry | inline_flag::xattr |
                                           (rootrec.inline_flags & inline_flag::extra_attr));
  n.i.i_links = 2u;
  n.i.i_blocks = static_cast<std::uint64_t>(1);
  n.i.i_atime = r->i.i_atime.get();
  n.i.i_ctime = r->i.i_ctime.get();
  n.i.i_mtime = r->i.i_mtime.get();
  n.i.i_current_depth = 1u;
  n.i.i_pino = root;
  n.i.i_namelen = 10u;
  std::memcpy(n.i.i_name, "lost+found", 10);
  InodeRec rec;
  rec.ino = nid;
  rec.mode = 040700;
  rec.inline_flags = n.i.i_inline;
  rec.links = 2;
  rec.pino = root;
  rec.namelen_low = 10;
  rec.blocks_low = 1;
  if (rootrec.inline_flags & inline_flag::extra_attr) {
    rec.extra_isize = rootrec.extra_isize;
    n.i.extra.i_extra_isize = static_cast<std::uint16_t>(rec.extra_isize);

    if (rec.extra_isize >= offsetof(InodeExtra, i_crtime_nsec) + 4) {
      n.i.extra.i_crtime = r->i.extra.i_crtime.get();
      n.i.extra.i_crtime_nsec = r->i.extra.i_crtime_nsec.get();
    }
  }
  rec.inline_xattr_addrs = kDefaultInlineXattrAddrs;
  if (features_ & feature::flexible_inline_xattr) {
    if (rec.extra_isize < 4) return false;
    n.i.extra.i_inline_xattr_size = static_cast<std::uint16_t>(kDefaultInlineXattrAddrs);
  }
  const std::uint32_t max_inline = max_inline_data(rec.extra_isize, rec.inline_xattr_addrs);
  if (max_inline == 0) return false;
  n.i.i_size = static_cast<std::uint64_t>(max_inline);
  rec.size = max_inline;
  // "." and ".." in the inline area (f2fs_make_empty_inline_dir()).
  const DentryArea area = dentry_area(rec, blk, true);
  auto* raw = reinterpret_cast<std::uint8_t*>(&n);
  const std::pair<const char*, nid_t> dots[2] = {{".", nid}, {"..", root}};
  for (std::uint32_t k = 0; k < 2; ++k) {
    raw[area.bitmap_off] |= static_cast<std::uint8_t>(1u << k);
    std::uint8_t* de = raw + area.dentry_off + k * sizeof(DirEntry);
    store_le32(de, offsetof(DirEntry, ino), dots[k].second);
    de[offsetof(DirEntry, name_len)] = static_cast<std::uint8_t>(k + 1);
    de[offsetof(DirEntry, file_type)] = 2;
    std::memcpy(raw + area.names_off + k * kSlotLen, dots[k].first, k + 1);
  }
  n.footer.nid = nid;
  n.footer.ino = nid;
  n.footer.cp_ver = cp_.checkpoint_ver.get();
  if (!add_dentry(rootrec, "lost+found", nid, 2)) return false;
  fix(kNoProblem, iblk(rootrec), [](std::uint8_t* p) {
    Node rn;
    std::memcpy(&rn, p, sizeof rn);
    rn.i.i_links = rn.i.i_links.get() + 1;
    std::memcpy(p, &rn, sizeof rn);
  });
  // The new block's contents come first among its edits.
  edits_[blk].insert(edits_[blk].begin(), Edit{[n](std::uint8_t* p) { std::memcpy(p, &n, sizeof n); }, kNoProblem});
  // The walk's truth gains the inode.
  NidTable::Rec& lf_rec = nids_.get(nid);
  lf_rec.nat = {blk, nid, 0};
  NodeRec& nr = lf_rec.node;
  nr.read_ok = true;
  nr.footer_odd = false;
  nr.set_footer_ofs(0);
  InodeState& st = add_reached_inode(rec, "/lost+found");
  st.parent = root;
  st.links_found = 1;
  st.blocks_counted = 1;
  claim_node(nid, blk);
  ++node_count_;
  ++inode_count_;
  ++valid_blocks_;
  return true;
}

// Replaces an unusable root (ROOT_BAD, -y only) with a new one, as e2fsck
// recreates a missing root: an empty directory inode at the root's nid
// (sb.root_ino) with inline dentries "." and ".." naming itself
// (f2fs_make_empty_inline_dir() in fs/f2fs/inline.c), mode 040755,
// i_links 2, in the next free block of the warm (else hot, cold) node log.
// The walk's truth gains it before the namespace walk, so the counts,
// the NAT entry and quota usage include it; what was under the old root is
// unreachable and reconnect() links it back (into the new root under its
// i_name when its i_pino names the root, else into /lost+found). False
// when the mode does not repair or no block is free.
bool Checker::rebuild_root(std::size_t problem) {
  const nid_t root = sb_.root_ino.get();
  if (!allowed(Code::ROOT_BAD) || opts_.mode != Mode::repair_all || root == 0 || root >= max_nid_) return false;
  if ((features_ & feature::flexible_inline_xattr) && !(features_ & feature::extra_attr)) return false;
  // A block no NAT entry names either (the walk has not marked blocks in use yet).
  auto named_by_nat = [&](block_t a) {
    bool hit = false;
    nids_.for_each(1, [&](nid_t, const NidTable::Rec& r) { hit |= r.nat.blkaddr == a; });
    return hit;
  };
  block_t blk = 0;
  for (int t : {1, 0, 2}) {
    const std::uint32_t seg = cp_.cur_node_segno[t].get();
    if (seg >= main_segs_) continue;
    for (std::uint32_t off = cp_.cur_node_blkoff[t].get(); off < kDefaultBlocksPerSeg && blk == 0; ++off) {
      const auto a = static_cast<block_t>(vol_->segment_start(seg) + off);
      if (!valid_main(a) || used(a) || sit_valid(a) || edits_.find(a) != edits_.end() || named_by_nat(a)) continue;
      blk = a;
    }
    if (blk != 0) break;
  }
  if (blk == 0) {
    report_.problems[problem].detail += "; no free node block for a new root: left";
    return false;
  }
  Node n;
  std::memset(&n, 0, sizeof n);
  n.i.i_mode = static_cast<std::uint16_t>(040755);
  InodeRec rec;
  rec.ino = root;
  rec.mode = 040755;
  rec.inline_flags = static_cast<std::uint8_t>(inline_flag::dentry | inline_flag::xattr);
  if (features_ & feature::extra_attr) {
    rec.inline_flags = static_cast<std::uint8_t>(rec.inline_flags | inline_flag::extra_attr);
    rec.extra_isize = static_cast<std::uint8_t>(extra_isize_for_features(features_));
    n.i.extra.i_extra_isize = rec.extra_isize;
    if (features_ & feature::flexible_inline_xattr)
      n.i.extra.i_inline_xattr_size = static_cast<std::uint16_t>(kDefaultInlineXattrAddrs);
  }
  rec.inline_xattr_addrs = kDefaultInlineXattrAddrs;
  const std::uint32_t max_inline = max_inline_data(rec.extra_isize, rec.inline_xattr_addrs);
  if (max_inline == 0) return false;
  rec.links = 2;
  rec.pino = root;
  rec.blocks_low = 1;
  rec.size = max_inline;
  n.i.i_inline = rec.inline_flags;
  n.i.i_links = 2u;
  n.i.i_blocks = static_cast<std::uint64_t>(1);
  n.i.i_size = static_cast<std::uint64_t>(max_inline);
  n.i.i_current_depth = 1u;
  n.i.i_pino = root;
  const DentryArea area = dentry_area(rec, blk, true);
  auto* raw = reinterpret_cast<std::uint8_t*>(&n);
  for (std::uint32_t k = 0; k < 2; ++k) {
    raw[area.bitmap_off] |= static_cast<std::uint8_t>(1u << k);
    std::uint8_t* de = raw + area.dentry_off + k * sizeof(DirEntry);
    store_le32(de, offsetof(DirEntry, ino), root);
    de[offsetof(DirEntry, name_len)] = static_cast<std::uint8_t>(k + 1);
    de[offsetof(DirEntry, file_type)] = static_cast<std::uint8_t>(FileType::dir);
    std::memcpy(raw + area.names_off + k * kSlotLen, "..", k + 1);
  }
  n.footer.nid = root;
  n.footer.ino = root;
  n.footer.cp_ver = cp_.checkpoint_ver.get();
  edits_[blk].insert(edits_[blk].begin(), Edit{[n](std::uint8_t* p) { std::memcpy(p, &n, sizeof n); }, problem});
  NidTable::Rec& r = nids_.get(root);
  r.nat = {blk, root, r.nat.version, r.nat.from_journal};
  r.node = NodeRec{};
  r.node.read_ok = true;
  footer_odd_.erase(root);
  r.node.set_inode(static_cast<std::int32_t>(inodes_.size()));
  inodes_.push_back(rec);
  walk_.emplace_back();
  root_rebuilt_ = true;
  report_.problems[problem].detail += fmt("; a new empty root at block %llu, what was under it reconnected", blk);
  return true;
}

InodeState& Checker::add_reached_inode(const InodeRec& rec, const std::string& path) {
  nids_.get(rec.ino).node.set_inode(static_cast<std::int32_t>(inodes_.size()));
  inodes_.push_back(rec);
  walk_.emplace_back();
  set_reached(rec.ino);
  ++reached_inodes_;
  InodeState& st = walk_state(rec.ino);
  st.flags |= InodeState::kSeen;
  own_dir(st, path);
  return st;
}

// Links unreachable inode `ino` into /lost+found as "#<ino>" (the name
// fsck.f2fs's fsck_reconnect_file() uses), in a free run of slots of the
// inline area or of a level-0 block (any hash belongs in level 0's single
// bucket). False when lost+found is missing or has no room in place.
bool Checker::reconnect(nid_t ino) {
  const nid_t lf_dent = reached_with_path("/lost+found");
  const InodeRec& child = inodes_[static_cast<std::size_t>(node(ino).inode())];
  // Links of a file found by directories walked after it (hard links).
  const std::uint32_t found = child.is_dir() ? 0u : walk_state(ino).links_found;
  std::string name = "#" + std::to_string(ino);
  nid_t lf = 0;
  const nid_t root = sb_.root_ino.get();
  std::string own;  // a rebuilt root's child: its i_name, when usable as a name there
  if (root_rebuilt_ && child.pino == root) {
    std::vector<std::uint8_t> ib(kBlockSize);
    if (read_at(dev_, static_cast<std::uint64_t>(iblk(child)) * kBlockSize, ib)) {
      const auto* n = reinterpret_cast<const Node*>(ib.data());
      const std::uint32_t len = n->i.i_namelen.get();
      if (len >= 1 && len <= kNameLen && len <= sizeof n->i.i_name) {
        own.assign(reinterpret_cast<const char*>(n->i.i_name), len);
        if (own == "." || own == ".." || own.find('/') != std::string::npos || own.find('\0') != std::string::npos)
          own.clear();
      }
    }
    // A name already given in the new root (two children claiming one name) goes to lost+found.
    for (const auto& [b, es] : edits_)
      if (b == iblk(inodes_[static_cast<std::size_t>(node(root).inode())]) && !own.empty()) {
        std::vector<std::uint8_t> rb(kBlockSize, 0);
        for (auto& e : es) e.fn(rb.data());
        const DentryArea ra = dentry_area(inodes_[static_cast<std::size_t>(node(root).inode())], b, true);
        for (std::uint32_t k = 0; k < ra.nslots; ++k) {
          if (!test_bit_le(rb.data() + ra.bitmap_off, k)) continue;
          const std::uint8_t* de = rb.data() + ra.dentry_off + k * sizeof(DirEntry);
          const std::uint16_t nl = static_cast<std::uint16_t>(de[offsetof(DirEntry, name_len)] | de[offsetof(DirEntry, name_len) + 1] << 8);
          if (nl == own.size() && k * kSlotLen + nl <= ra.nslots * kSlotLen &&
              std::memcmp(rb.data() + ra.names_off + k * kSlotLen, own.data(), nl) == 0)
            own.clear();
        }
      }
  }
  if (!own.empty()) {
    lf = root;
    name = own;
  } else if (found > 0) {
    // Not unlinked after all: no new name (INODE_LINKS sets i_links to the
    // links found); with one link, i_pino and i_name follow it.
    const auto it = late_links_.find(ino);
    if (found == 1 && it != late_links_.end() && !(child.advise & advise::lost_pino) && !it->second.second.empty() &&
        it->second.second.size() <= kNameLen)
      fix(kNoProblem, iblk(child), [pino = it->second.first, nm = it->second.second](std::uint8_t* p) {
        Node n;
        std::memcpy(&n, p, sizeof n);
        n.i.i_pino = pino;
        n.i.i_namelen = static_cast<std::uint32_t>(nm.size());
        std::memset(n.i.i_name, 0, sizeof n.i.i_name);
        std::memcpy(n.i.i_name, nm.data(), std::min(nm.size(), sizeof n.i.i_name));
        std::memcpy(p, &n, sizeof n);
      });
    return true;
  } else if (lf_relinked_ != 0) {
    lf = lf_relinked_;
  } else if (lf_dent != 0) {
    lf = lf_dent;
  } else if (child.is_dir() && child.pino == sb_.root_ino.get() && reached(sb_.root_ino.get())) {
    // lost+found itself lost its dentry: back into the root under its own name.
    std::vector<std::uint8_t> ib(kBlockSize);
    if (!read_at(dev_, static_cast<std::uint64_t>(iblk(child)) * kBlockSize, ib)) return false;
    const auto* n = reinterpret_cast<const Node*>(ib.data());
    if (n->i.i_namelen.get() != 10 || std::memcmp(n->i.i_name, "lost+found", 10) != 0) return false;
    lf = sb_.root_ino.get();
    name = "lost+found";
  } else {
    return false;
  }
  const InodeRec& dir = inodes_[static_cast<std::size_t>(node(lf).inode())];
  if (!dir.is_dir() || (dir.flags & iflag::casefold) || (dir.advise & advise::encrypt)) return false;
  // The entry's file type from i_mode, as the walk checks it (fifo,
  // socket and device types too).
  const std::uint8_t ft = file_type_of_mode(static_cast<std::uint16_t>(child.mode));
  if (!add_dentry(dir, name, ino, ft)) return false;
  if (lf == root && name == "lost+found" && child.is_dir()) lf_relinked_ = ino;
  {
    {
      // The inode: parent, name, one link (directories: ".." too, and
      // lost+found gains a subdirectory).
      fix(kNoProblem, iblk(child), [lf, name, isdir = child.is_dir(), found](std::uint8_t* p) {
        Node n;
        std::memcpy(&n, p, sizeof n);
        n.i.i_pino = lf;
        n.i.i_namelen = static_cast<std::uint32_t>(name.size());
        std::memset(n.i.i_name, 0, sizeof n.i.i_name);
        std::memcpy(n.i.i_name, name.data(), name.size());
        if (!isdir) n.i.i_links = found + 1;  // the new name and the links found
        std::memcpy(p, &n, sizeof n);
      });
      if (child.is_dir()) {
        fix(kNoProblem, iblk(dir), [](std::uint8_t* p) {
          Node n;
          std::memcpy(&n, p, sizeof n);
          n.i.i_links = n.i.i_links.get() + 1;
          std::memcpy(p, &n, sizeof n);
        });
        // ".." of the reconnected directory.
        const auto& cblocks = dir_blocks_of(ino);
        if (child.inline_flags & inline_flag::dentry) {
          for (const auto& d : extras(child).inline_dents)
            if (d.name == "..") {
              const auto ca = dentry_area(child, iblk(child), true);
              fix(kNoProblem, iblk(child), [o = ca.dentry_off + d.slot * static_cast<std::uint32_t>(sizeof(DirEntry)), lf](std::uint8_t* p) {
                store_le32(p, o + offsetof(DirEntry, ino), lf);
              });
            }
        } else if (!cblocks.empty() && cblocks[0].first == 0) {
          const block_t b0 = cblocks[0].second;
          std::vector<std::uint8_t> cb(kBlockSize);
          if (read_at(dev_, static_cast<std::uint64_t>(b0) * kBlockSize, cb)) {
            const auto* db = reinterpret_cast<const DentryBlock*>(cb.data());
            for (std::uint32_t k = 0; k < kNrDentryInBlock; ++k)
              if (test_bit_le(db->dentry_bitmap, k) && db->dentry[k].name_len.get() == 2 &&
                  std::memcmp(db->filename[k], "..", 2) == 0) {
                const std::uint32_t o = static_cast<std::uint32_t>(offsetof(DentryBlock, dentry) + k * sizeof(DirEntry));
                fix(kNoProblem, b0, [o, lf](std::uint8_t* p) { store_le32(p, o + offsetof(DirEntry, ino), lf); });
              }
          }
        }
      }
      return true;
    }
  }
}


// The invariant every repair keeps: no block or node that a reachable
// inode still maps after the block edits is left out of the truth the
// metadata rebuild writes (the rebuild frees everything else). The walk
// puts every pointer it follows in that truth or zeroes it; an inode whose
// layout fields could not be decoded is not walked, so its pointers (its
// block re-read, the pending edits applied) are checked here. Returns ""
// or what would be freed.
std::string Checker::mapped_but_dropped() {
  std::vector<std::uint8_t> b(kBlockSize);
  for (std::size_t ri = 0; ri < walk_.size() && ri < inodes_.size(); ++ri) {
    if (!walk_[ri].seen()) continue;
    const nid_t ino = inodes_[ri].ino;
    const NodeRec& nr = node(ino);
    if (nr.inode() < 0) continue;
    const InodeRec& in = inodes_[static_cast<std::size_t>(nr.inode())];
    if (in.sane || (in.inline_flags & (inline_flag::data | inline_flag::dentry))) continue;
    if (!in.is_reg() && !in.is_dir() && !in.is_symlink()) continue;
    if (!read_at(dev_, static_cast<std::uint64_t>(iblk(in)) * kBlockSize, b))
      return fmt("inode %llu: its block %llu cannot be read to check what it maps", ino, iblk(in));
    if (auto it = edits_.find(iblk(in)); it != edits_.end())
      for (auto& e : it->second) e.fn(b.data());
    Node n;
    std::memcpy(&n, b.data(), sizeof n);
    const std::uint32_t base = in.extra_isize / 4;
    const std::uint32_t end = kDefAddrsPerInode - in.inline_xattr_addrs;
    for (std::uint32_t k = base; k < end; ++k) {
      const block_t a = n.i.i_addr[k].get();
      if (valid_main(a) && !used(a))
        return fmt("inode %llu (fields it cannot be walked by) maps block %llu in i_addr[%llu], which the rebuild would free",
                   ino, a, k);
    }
    for (int k = 0; k < 5; ++k) {
      const nid_t c = n.i.i_nid[k].get();
      if (c == 0 || c >= max_nid_ || reached(c)) continue;
      if (valid_main(nat(c).blkaddr))
        return fmt("inode %llu (fields it cannot be walked by) maps node %llu in i_nid[%llu], whose NAT entry the rebuild "
                   "would drop", ino, c, k);
    }
  }
  return {};
}

// A truncated device: what the lost tail (every block from the device's
// end to the volume's) held, by the SIT and by the walk.
void Checker::check_truncated_tail() {
  if (truncated_problem_ == static_cast<std::size_t>(-1)) return;
  const std::uint64_t dev_blocks = dev_.info().size_bytes / kBlockSize;
  std::uint64_t lost = 0, first = 0;
  for (std::uint32_t s = 0; s < main_segs_; ++s) {
    const std::uint64_t start = vol_->segment_start(s), end = start + kDefaultBlocksPerSeg;
    if (end <= dev_blocks) continue;
    for (std::uint64_t a = std::max(start, dev_blocks); a < end; ++a)
      if (sit_valid(static_cast<block_t>(a)) || used(static_cast<block_t>(a))) {
        if (lost++ == 0) first = a;
      }
  }
  Problem& p = report_.problems[truncated_problem_];
  if (lost == 0) {
    truncated_tail_empty_ = true;
    p.detail += fmt("; the lost tail (blocks %llu to %llu) holds no block in use", dev_blocks,
                    std::max<std::uint64_t>(vol_->geometry().volume_end(), sb_.block_count.get()) - 1);
  } else {
    p.detail += fmt("; lost: %llu blocks in use in the missing tail, the first at block %llu", lost, first);
  }
}

void Checker::repair() {
  if (opts_.mode == Mode::check_only) return;
  auto& probs = report_.problems;
  // A device cut short where the lost tail held blocks in use: what the
  // walk could not reach there still owns its blocks and nids, so a
  // rebuild from the rest would free them. Nothing is written; the loss is
  // reported (VOLUME_TRUNCATED names what is lost).
  if (truncated_problem_ != kNoProblem && !truncated_tail_empty_) {
    Problem p = prob(Code::REPAIR_FAILED);
    p.detail = "repair refused, nothing written: the missing end of the device held blocks in use (restore the "
               "image's end, then repair)";
    add(p);
    return;
  }
  // In preen, a repair-class problem left unfixed means the walk's truth
  // (which assumes its pointers dropped) must not be written as metadata.
  bool unsafe_left = false;
  for (const auto& p : probs)
    if (!allowed(p.code) && definition(p.code).fix == FixClass::repair) unsafe_left = true;

  // New quota files for quota inodes with no usable node block (planned
  // first: their blocks and edits join step 1's, the walk's truth gains them).
  for (const auto& [t, idx] : quota_rebuilds_) rebuild_quota_file(t, idx);

  // 2 (planned first, so its edits join step 1's): lost+found.
  std::vector<std::size_t> reconnected;
  bool want_lf = false;
  for (std::size_t idx : lost_found_fixes_) want_lf |= allowed(probs[idx].code);
  if (want_lf && reached_with_path("/lost+found") == 0) {
    // Not when the only unreachable inode may be lost+found itself.
    // Nor when the root was rebuilt and lost+found, a child of the old
    // root, is among them (linked back first, under its name).
    bool others = false, old_lf = false;
    for (std::size_t idx : lost_found_fixes_) {
      const InodeRec& c = inodes_[static_cast<std::size_t>(node(*probs[idx].ino).inode())];
      const bool is_lf = c.is_dir() && c.pino == sb_.root_ino.get() && i_namelen(c) == 10;
      old_lf |= is_lf;
      others |= !is_lf && !(root_rebuilt_ && c.pino == sb_.root_ino.get());
    }
    if (others && !(root_rebuilt_ && old_lf)) create_lost_found();
  }
  // The old root's children first (a rebuilt root), lost+found among them.
  if (root_rebuilt_)
    std::stable_sort(lost_found_fixes_.begin(), lost_found_fixes_.end(), [&](std::size_t a, std::size_t b) {
      auto rank = [&](std::size_t idx) {
        const InodeRec& c = inodes_[static_cast<std::size_t>(node(*probs[idx].ino).inode())];
        return c.pino == sb_.root_ino.get() ? (c.is_dir() && i_namelen(c) == 10 ? 0 : 1) : 2;
      };
      return rank(a) < rank(b);
    });
  for (std::size_t idx : lost_found_fixes_) {
    if (!allowed(probs[idx].code)) continue;
    const nid_t ino = *probs[idx].ino;
    if (reconnect(ino)) reconnected.push_back(idx);
    else probs[idx].detail += "; not reconnected: /lost+found is missing or has no free slot in place";
  }

  // A truncated image whose lost tail held nothing is grown back first
  // (counted as written when repair() returns: it needs no rebuild).
  struct WroteOnExit {
    Checker* c;
    bool on = false;
    ~WroteOnExit() {
      if (on) c->report_.wrote = true;
    }
  } grew{this};
  if (truncated_problem_ != static_cast<std::size_t>(-1) && allowed(Code::VOLUME_TRUNCATED)) {
    Problem& t = probs[truncated_problem_];
    if (!truncated_tail_empty_) {
      t.detail += "; left: growing the image would not bring those blocks back";
    } else if (!opts_.grow) {
      t.detail += "; left: the device cannot be grown here";
    } else if (auto g = opts_.grow(std::max<std::uint64_t>(vol_->geometry().volume_end(), sb_.block_count.get()) * kBlockSize);
               !g) {
      t.detail += "; growing the image failed: " + g.error().message;
    } else {
      t.fixed = true;
      grew.on = true;
    }
  }
  // Before any write: nothing the rebuild would free may still be mapped.
  if (const std::string held = mapped_but_dropped(); !held.empty()) {
    Problem p = prob(Code::REPAIR_FAILED);
    p.detail = "repair refused, nothing written: " + held;
    add(p);
    return;
  }

  // 1: block edits, in block order.
  std::vector<std::uint8_t> b(kBlockSize);
  bool io_failed = false;
  std::uint64_t written = 0;
  const std::uint64_t to_write = edits_.size() + 1;  // the block edits, then the metadata rebuild
  struct PassEnd {
    Checker* c;
    std::uint64_t max;
    bool on = false;
    ~PassEnd() {
      if (on) c->progress(5, max, max);
    }
  } pass_end{this, to_write};
  if (!edits_.empty()) {
    progress(5, 0, to_write);
    pass_end.on = true;
  }
  for (auto& [blk, edits] : edits_) {
    progress(5, written++, to_write);
    if (!read_at(dev_, static_cast<std::uint64_t>(blk) * kBlockSize, b)) {
      io_failed = true;
      continue;
    }
    for (auto& e : edits) e.fn(b.data());
    // An inode block gets its checksum recomputed.
    auto* n = reinterpret_cast<Node*>(b.data());
    const nid_t nid = n->footer.nid.get();
    // Only blocks known to be inodes (a dentry block's last bytes can look
    // like an inode footer).
    const bool known_inode = nid != 0 && nid < max_nid_ && nat(nid).blkaddr == blk && node(nid).inode() >= 0;
    if (known_inode && (features_ & feature::inode_checksum) && n->footer.ino.get() == nid &&
        (n->footer.flag.get() >> node_flag::offset_shift) == 0 && (n->i.i_inline & inline_flag::extra_attr) &&
        n->i.extra.i_extra_isize.get() >= offsetof(InodeExtra, i_inode_checksum) + 4)
      n->i.extra.i_inode_checksum = inode_checksum(chksum_seed_, b.data());
    if (!write_at(dev_, static_cast<std::uint64_t>(blk) * kBlockSize, b)) {
      io_failed = true;
      continue;
    }
    report_.wrote = true;
    for (auto& e : edits)
      if (e.problem != kNoProblem) probs[e.problem].fixed = true;
  }
  // Superblock quota inode numbers on a volume without quota: zeroed in
  // both copies (the CRC resealed with sb_checksum); after the metadata
  // rebuild when that restores a superblock copy from the one in memory.
  bool sb_restore = false;
  for (const auto& p : probs)
    sb_restore |= (p.code == Code::SB_PRIMARY_BAD || p.code == Code::SB_BACKUP_BAD) && allowed(p.code);
  // Quota inode numbers taken from the other copy: both copies rewritten
  // with them by the metadata rebuild.
  const bool qf_adopt = !qf_ino_adopted_.empty() && allowed(Code::QUOTA_INODE_BAD);
  if (qf_adopt) {
    sb_restore = true;
    for (std::size_t idx : qf_ino_adopted_) global_fixes_.push_back(idx);
  }
  auto zero_qf_ino = [&] {
  if (sb_quota_problem_ != kNoProblem && allowed(Code::QUOTA_INODE_BAD) && !io_failed) {
    bool ok = true;
    for (std::uint64_t slot = 0; slot < 2 && ok; ++slot) {
      std::vector<std::uint8_t> sbb(kBlockSize);
      ok = static_cast<bool>(read_at(dev_, slot * kBlockSize, sbb));
      if (!ok) break;
      SuperBlock sb;
      std::memcpy(&sb, sbb.data() + kSuperOffset, sizeof sb);
      if (sb.magic.get() != kSuperMagic) continue;  // a bad copy: SB_*_BAD restores it
      for (std::uint32_t t = 0; t < kMaxQuotas; ++t) sb.qf_ino[t] = 0u;
      if (sb.feature.get() & feature::sb_checksum) sb.crc.set(superblock_checksum(sb));
      std::memcpy(sbb.data() + kSuperOffset, &sb, sizeof sb);
      ok = static_cast<bool>(write_at(dev_, slot * kBlockSize, sbb));
      if (ok) report_.wrote = true;
    }
    if (ok) probs[sb_quota_problem_].fixed = true;
    else io_failed = true;
  }
  };
  if (!sb_restore) zero_qf_ino();
  if (report_.wrote) (void)flush(dev_);
  for (std::size_t idx : reconnected) probs[idx].fixed = !io_failed;

  // 3: the metadata rebuild, when anything global is wrong or a fix
  // changed what is in use.
  bool need = !global_fixes_.empty() || report_.wrote;
  // A torn pack alone (CP_PACK_BAD, the state a power cut during a
  // checkpoint leaves, which the kernel and fsck.f2fs accept) is not
  // rewritten; a rebuild run for anything else writes over it.
  for (const auto& p : probs)
    need |= (is_global(p.code) || p.code == Code::CP_FLAGS) && p.code != Code::CP_PACK_BAD && allowed(p.code);
  if (!need || unsafe_left || io_failed) return;
  if (!pass_end.on) progress(5, 0, to_write);
  pass_end.on = true;
  progress(5, to_write - 1, to_write);
  meta::RebuildPlan plan;
  plan.blocks.reserve(static_cast<std::size_t>(use_count_));
  for_each_use([&](const meta::BlockUse& u) { plan.blocks.push_back(u); });
  nids_.for_each(1, [&](nid_t n, const NidTable::Rec& rec) {
    if (n >= max_nid_) return;
    const NatRec& ne = rec.nat;
    if (n < sb_.root_ino.get()) {
      if (ne.blkaddr != kNullAddr) plan.nat.push_back({n, ne.ino, ne.blkaddr, ne.version});
      return;
    }
    if (!rec.node.reached) return;
    // Every reached node is owned by the inode whose tree reached it; the
    // NAT's ino is corrected from the footer (checked equal to the owner).
    plan.nat.push_back({n, footer_ino(n), ne.blkaddr, ne.version});
  });
  plan.orphans = orphans_;
  plan.valid_inode_count = static_cast<std::uint32_t>(inode_count_);
  // valid_block_count also holds reserved blocks (NEW_ADDR, compressed
  // cluster headers), as Linux writes it and fsck.f2fs counts it.
  plan.reserved_blocks = valid_blocks_ > use_count_ ? valid_blocks_ - use_count_ : 0;
  plan.restore_superblocks = sb_restore;
  // CP_QUOTA_NEED_FSCK_FLAG asks for the quota files' repair: a volume
  // without the quota_ino feature has none for the checker (or fsck.f2fs,
  // whose quota check needs the feature) to repair, so the flag goes.
  plan.clear_quota_need_fsck = !(features_ & feature::quota_ino);
  if (qf_adopt) plan.qf_ino = std::array<std::uint32_t, 3>{sb_.qf_ino[0].get(), sb_.qf_ino[1].get(), sb_.qf_ino[2].get()};
  auto st = meta::rebuild(dev_, *vol_, plan);
  if (!st) {
    Problem p = prob(Code::REPAIR_FAILED);
    p.detail = "metadata rebuild failed, the old checkpoint stays in use: " + st.error().message;
    add(p);
    return;
  }
  report_.wrote = true;
  if (sb_restore) {
    zero_qf_ino();
    if (sb_quota_problem_ != kNoProblem && probs[sb_quota_problem_].fixed) (void)flush(dev_);
  }
  for (std::size_t idx : global_fixes_) probs[idx].fixed = true;
  for (auto& p : probs)
    if (is_global(p.code) && allowed(p.code)) p.fixed = true;
    else if (p.code == Code::CP_FLAGS &&
             (!(cp_.ckpt_flags.get() & cp_flag::quota_need_fsck) || plan.clear_quota_need_fsck))
      p.fixed = true;
}

}  // namespace f2fscore::fsck
