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
#include "fsck_internal.hpp"

namespace f2fscore::fsck {

using namespace disk;

namespace {
constexpr std::size_t kNoProblem = static_cast<std::size_t>(-1);

bool is_global(Code c) {
  switch (c) {
    case Code::SB_PRIMARY_BAD: case Code::SB_BACKUP_BAD: case Code::CP_PACK_BAD:
    case Code::CP_VALID_BLOCK_COUNT: case Code::CP_VALID_NODE_COUNT: case Code::CP_VALID_INODE_COUNT:
    case Code::CP_FREE_SEGMENT_COUNT: case Code::CP_NEXT_FREE_NID:
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
  fix(idx, in.blkaddr, [fn = std::move(fn)](std::uint8_t* b) {
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
      fix(idx, in.blkaddr, [](std::uint8_t*) {});  // recomputed when written
      break;
    case Code::INODE_EXTRA_ISIZE:
      fix_inode_field(idx, in, [feats](Node& n) {
        if (!(feats & feature::extra_attr)) n.i.i_inline = n.i.i_inline & ~inline_flag::extra_attr;
        else n.i.extra.i_extra_isize = extra_isize_for_features(feats);
      });
      break;
    case Code::INODE_INLINE_XATTR_SIZE:
      fix_inode_field(idx, in, [](Node& n) { n.i.extra.i_inline_xattr_size = static_cast<std::uint16_t>(kDefaultInlineXattrAddrs); });
      break;
    case Code::INLINE_DATA_RESERVED:
      fix_inode_field(idx, in, [k = in.extra_isize / 4](Node& n) { n.i.i_addr[k] = 0u; });
      break;
    case Code::INLINE_DATA_SIZE: {
      const std::uint32_t used = in.extra_isize / 4 + in.inline_xattr_addrs + kDefInlineReservedSize;
      const std::uint64_t max = used >= kDefAddrsPerInode ? 0 : 4ull * (kDefAddrsPerInode - used);
      fix_inode_field(idx, in, [max](Node& n) { n.i.i_size = max; });
      break;
    }
    case Code::INODE_FLAGS:
      if ((in.flags & iflag::casefold) && !(in.flags & iflag::compr))
        fix_inode_field(idx, in, [](Node& n) { n.i.i_flags = n.i.i_flags.get() & ~iflag::casefold; });
      break;
    case Code::XATTR_NID_BAD:
      fix_inode_field(idx, in, [](Node& n) { n.i.i_xattr_nid = 0u; });
      break;
    default:
      break;
  }
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
  const std::uint32_t used = dir.extra_isize / 4 + dir.inline_xattr_addrs + kDefInlineReservedSize;
  const std::uint32_t max_inline = used >= kDefAddrsPerInode ? 0 : 4 * (kDefAddrsPerInode - used);
  const std::uint32_t base = static_cast<std::uint32_t>(offsetof(Inode, i_addr)) + 4 * (dir.extra_isize / 4 + 1);
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

// Links unreachable inode `ino` into /lost+found as "#<ino>" (the name
// fsck.f2fs's fsck_reconnect_file() uses), in a free run of slots of the
// inline area or of a level-0 block (any hash belongs in level 0's single
// bucket). False when lost+found is missing or has no room in place.
bool Checker::reconnect(nid_t ino) {
  auto lf_dent = std::find_if(reached_inodes_.begin(), reached_inodes_.end(), [&](nid_t n) {
    auto it = state_.find(n);
    return it != state_.end() && it->second.path == "/lost+found";
  });
  if (lf_dent == reached_inodes_.end()) return false;
  const nid_t lf = *lf_dent;
  const InodeRec& dir = inodes_[static_cast<std::size_t>(nodes_[lf].inode)];
  if (!dir.is_dir() || (dir.flags & iflag::casefold) || (dir.advise & advise::encrypt)) return false;
  const InodeRec& child = inodes_[static_cast<std::size_t>(nodes_[ino].inode)];
  const std::string name = "#" + std::to_string(ino);
  const std::uint32_t need = static_cast<std::uint32_t>((name.size() + kSlotLen - 1) / kSlotLen);
  std::vector<std::pair<block_t, DentryArea>> cands;
  if (dir.inline_flags & inline_flag::dentry) cands.emplace_back(dir.blkaddr, dentry_area(dir, dir.blkaddr, true));
  else
    for (auto& [idx, a] : state_[lf].dir_blocks)
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
      const std::uint8_t ft = child.is_dir() ? 2 : child.is_reg() ? 1 : child.is_symlink() ? 7 : 0;
      fix(kNoProblem, blk, [area, s, need, name, hash, ino, ft](std::uint8_t* p) {
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
      // The inode: parent, name, one link (directories: ".." too, and
      // lost+found gains a subdirectory).
      fix(kNoProblem, child.blkaddr, [lf, name, isdir = child.is_dir(), links = child.links](std::uint8_t* p) {
        Node n;
        std::memcpy(&n, p, sizeof n);
        n.i.i_pino = lf;
        n.i.i_namelen = static_cast<std::uint32_t>(name.size());
        std::memset(n.i.i_name, 0, sizeof n.i.i_name);
        std::memcpy(n.i.i_name, name.data(), name.size());
        if (!isdir && links == 0) n.i.i_links = 1u;
        std::memcpy(p, &n, sizeof n);
      });
      if (child.is_dir()) {
        fix(kNoProblem, dir.blkaddr, [](std::uint8_t* p) {
          Node n;
          std::memcpy(&n, p, sizeof n);
          n.i.i_links = n.i.i_links.get() + 1;
          std::memcpy(p, &n, sizeof n);
        });
        // ".." of the reconnected directory.
        auto& cst = state_[ino];
        if (child.inline_flags & inline_flag::dentry) {
          for (const auto& d : child.inline_dents)
            if (d.name == "..") {
              const auto ca = dentry_area(child, child.blkaddr, true);
              fix(kNoProblem, child.blkaddr, [o = ca.dentry_off + d.slot * static_cast<std::uint32_t>(sizeof(DirEntry)), lf](std::uint8_t* p) {
                store_le32(p, o + offsetof(DirEntry, ino), lf);
              });
            }
        } else if (!cst.dir_blocks.empty() && cst.dir_blocks[0].first == 0) {
          const block_t b0 = cst.dir_blocks[0].second;
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
  return false;
}

Status Checker::patch_valid_block_count(std::uint64_t count) {
  VolumeOpenOptions vo;
  vo.verify_inode_checksums = false;
  auto v = Volume::open(dev_, vo);
  if (!v) return make_error(v.error());
  const SuperBlock& sb = (*v)->superblock();
  const std::uint64_t start =
      sb.cp_blkaddr.get() + static_cast<std::uint64_t>((*v)->open_report().checkpoint_pack) * kDefaultBlocksPerSeg;
  std::vector<std::uint8_t> head(kBlockSize);
  F2FS_TRY(read_at(dev_, start * kBlockSize, head));
  auto* cp = reinterpret_cast<Checkpoint*>(head.data());
  const std::uint32_t total = cp->cp_pack_total_block_count.get();
  cp->valid_block_count = count;
  seal_checkpoint(head.data());
  F2FS_TRY(write_at(dev_, (start + total - 1) * kBlockSize, head));
  F2FS_TRY(write_at(dev_, start * kBlockSize, head));
  if (cp->ckpt_flags.get() & cp_flag::nat_bits) {
    const auto nb = nat_bits_size(sb.segment_count_nat.get());
    const std::uint64_t nbblk = start + kDefaultBlocksPerSeg - nb.blocks;
    std::vector<std::uint8_t> b(kBlockSize);
    F2FS_TRY(read_at(dev_, nbblk * kBlockSize, b));
    store_le64(b.data(), 0, nat_bits_header(head.data()));
    F2FS_TRY(write_at(dev_, nbblk * kBlockSize, b));
  }
  return flush(dev_);
}

void Checker::repair() {
  if (opts_.mode == Mode::check_only) return;
  auto& probs = report_.problems;
  // In preen, a repair-class problem left unfixed means the walk's truth
  // (which assumes its pointers dropped) must not be written as metadata.
  bool unsafe_left = false;
  for (const auto& p : probs)
    if (!allowed(p.code) && definition(p.code).fix == FixClass::repair) unsafe_left = true;

  // 2 (planned first, so its edits join step 1's): lost+found.
  std::vector<std::size_t> reconnected;
  for (std::size_t idx : lost_found_fixes_) {
    if (!allowed(probs[idx].code)) continue;
    const nid_t ino = *probs[idx].ino;
    if (reconnect(ino)) reconnected.push_back(idx);
    else probs[idx].detail += "; not reconnected: /lost+found is missing or has no free slot in place";
  }

  // 1: block edits, in block order.
  std::vector<std::uint8_t> b(kBlockSize);
  bool io_failed = false;
  for (auto& [blk, edits] : edits_) {
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
    const bool known_inode = nid != 0 && nid < max_nid_ && nat_[nid].blkaddr == blk && nodes_[nid].inode >= 0;
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
  if (report_.wrote) (void)flush(dev_);
  for (std::size_t idx : reconnected) probs[idx].fixed = !io_failed;

  // 3: the metadata rebuild, when anything global is wrong or a fix
  // changed what is in use.
  bool need = !global_fixes_.empty() || report_.wrote;
  for (const auto& p : probs) need |= (is_global(p.code) || p.code == Code::CP_FLAGS) && allowed(p.code);
  if (!need || unsafe_left || io_failed) return;
  meta::RebuildPlan plan;
  plan.blocks = uses_;
  for (nid_t n = 1; n < max_nid_; ++n) {
    const NatRec& ne = nat_[n];
    if (n < sb_.root_ino.get()) {
      if (ne.blkaddr != kNullAddr) plan.nat.push_back({n, ne.ino, ne.blkaddr, ne.version});
      continue;
    }
    if (!nid_reached_[n]) continue;
    // Every reached node is owned by the inode whose tree reached it; the
    // NAT's ino is corrected from the footer (checked equal to the owner).
    plan.nat.push_back({n, nodes_[n].footer_ino, ne.blkaddr, ne.version});
  }
  plan.orphans = orphans_;
  plan.valid_inode_count = static_cast<std::uint32_t>(inode_count_);
  for (const auto& p : probs)
    if ((p.code == Code::SB_PRIMARY_BAD || p.code == Code::SB_BACKUP_BAD) && allowed(p.code)) plan.restore_superblocks = true;
  auto st = meta::rebuild(dev_, *vol_, plan);
  if (!st) {
    Problem p = prob(Code::CP_PACK_BAD);
    p.detail = "metadata rebuild failed, the old checkpoint stays in use: " + st.error().message;
    add(p);
    return;
  }
  report_.wrote = true;
  // RebuildPlan counts only blocks in use; the checkpoint's
  // valid_block_count also holds reserved blocks (NEW_ADDR, compressed
  // cluster headers), as Linux writes it and fsck.f2fs counts it. Until the
  // plan carries them, patch the new pack's count (head and tail block,
  // resealed) and the nat_bits header that hashes the pack. A power cut in
  // between leaves a torn pack, which is refused: the previous one is used.
  if (valid_blocks_ != uses_.size()) {
    if (auto s2 = patch_valid_block_count(valid_blocks_); !s2) {
      Problem p = prob(Code::CP_VALID_BLOCK_COUNT);
      p.detail = "could not set valid_block_count in the new checkpoint: " + s2.error().message;
      add(p);
    }
  }
  for (std::size_t idx : global_fixes_) probs[idx].fixed = true;
  for (auto& p : probs)
    if (is_global(p.code) && allowed(p.code)) p.fixed = true;
    else if (p.code == Code::CP_FLAGS && !(cp_.ckpt_flags.get() & cp_flag::quota_need_fsck)) p.fixed = true;
}

}  // namespace f2fscore::fsck
