// plan_from_volume(): the rebuild plan a volume's NAT and nodes imply.
//
// Every NAT entry with a block address (node_ino and meta_ino aside) whose
// block is a node carrying that nid in its footer is a node in use; its data
// pointers (inode i_addr slots, direct node addr[]) name the data blocks in
// use, as fsck.f2fs's fsck_chk_data_blk() counts them. SIT, SSA and the
// checkpoint's counts are not consulted: they are what the rebuild rewrites.
#include <cstring>
#include <unordered_map>
#include <unordered_set>

#include "f2fscore/meta_rebuild.hpp"
#include "meta/meta_internal.hpp"

namespace f2fscore::meta {

using namespace disk;

namespace {

constexpr std::uint32_t kXattrNodeOffset = 0xFFFFFFFFu >> node_flag::offset_shift;

// Whether a non-inode node at tree offset `ofs` is a direct node (IS_DNODE()
// in fs/f2fs/node.h): the indirect nodes sit at offsets 3, 4 + NIDS_PER_BLOCK,
// 5 + 2 * NIDS_PER_BLOCK and every (NIDS_PER_BLOCK + 1)-th offset after
// that; the xattr node holds no addresses.
bool is_direct_node(std::uint32_t ofs) {
  return ofs != 0 && ofs != kXattrNodeOffset && is_dnode_offset(ofs);
}


// How an inode's address slots count: only regular files, directories and
// symlinks have data blocks (device, fifo and socket inodes keep rdev in
// i_addr: fsck_chk_inode_blk() skips them); compressed files whose saved
// blocks are not released count each cluster's COMPRESS_ADDR.
struct Owner {
  bool has_data = false;
  bool count_compress_addr = false;
};
Owner owner_of(const InodeInfo& in) {
  Owner o;
  o.has_data = (in.is_reg() || in.is_dir() || in.is_symlink()) && !in.has_inline_data() && !in.has_inline_dentry();
  o.count_compress_addr = in.is_compressed() && !(in.inline_flags & inline_flag::compress_released);
  return o;
}

}  // namespace

Result<RebuildPlan> plan_from_volume(Volume& vol) {
  MetaView mv(vol, vol.device());
  F2FSCORE_TRY(mv.load());
  RebuildPlan plan;
  const nid_t node_ino = mv.sb.node_ino.get(), meta_ino = mv.sb.meta_ino.get();
  std::unordered_set<block_t> used;
  std::unordered_map<nid_t, Owner> owners;
  auto owner = [&](nid_t ino) -> Result<Owner> {
    if (auto it = owners.find(ino); it != owners.end()) return it->second;
    auto in = vol.read_inode(ino);
    if (!in) return make_error(in.error());
    return owners[ino] = owner_of(*in);
  };
  std::vector<std::uint8_t> b(kBlockSize);
  auto add_block = [&](const BlockUse& u) -> Status {
    if (!vol.is_valid_main_addr(u.blkaddr))
      return make_error(Errc::corrupt, fmt("nid %llu points at block %llu, outside the main area", u.nid, u.blkaddr));
    if (!used.insert(u.blkaddr).second)
      return make_error(Errc::corrupt, fmt("block %llu is claimed twice (second owner nid %llu)", u.blkaddr, u.nid));
    plan.blocks.push_back(u);
    return {};
  };
  auto count = [&](block_t a, nid_t nid, std::uint32_t i, std::uint8_t version, const Owner& o) -> Status {
    if (a == kNewAddr) ++plan.reserved_blocks;
    else if (a == kCompressAddr) {
      if (o.count_compress_addr) ++plan.reserved_blocks;
    } else if (a != kNullAddr) {
      return add_block({a, nid, static_cast<std::uint16_t>(i), version, false});
    }
    return {};
  };
  auto visit = [&](nid_t nid, const NatEntry& e) -> Status {
    if (nid == 0) return {};
    if (nid == node_ino || nid == meta_ino) {
      plan.nat.push_back({nid, e.ino.get(), e.block_addr.get(), e.version});
      return {};
    }
    const block_t addr = e.block_addr.get();
    if (addr == kNullAddr) return {};
    // A NAT entry is in use when its block is a node that says it is this nid.
    if (!vol.is_valid_main_addr(addr)) return {};
    F2FSCORE_TRY(mv.read(addr, b.data()));
    const auto* n = reinterpret_cast<const Node*>(b.data());
    if (n->footer.nid.get() != nid || n->footer.ino.get() != e.ino.get()) return {};
    // The node block of an entry in use that a data pointer read before
    // also names: two owners (fsck.f2fs's fsck_chk_data_blk() finds the
    // block already set in its main-area bitmap).
    if (used.count(addr))
      return make_error(Errc::corrupt, fmt("block %llu is claimed twice (the node block of nid %llu, and a data pointer)",
                                           addr, nid));
    plan.nat.push_back({nid, e.ino.get(), addr, e.version});
    F2FSCORE_TRY(add_block({addr, nid, 0, e.version, true}));
    const std::uint32_t ofs = n->footer.flag.get() >> node_flag::offset_shift;
    if (ofs == 0 && n->footer.ino.get() == nid) {
      ++plan.valid_inode_count;
      auto in = vol.read_inode(nid);
      if (!in) return make_error(in.error());
      const Owner o = owners[nid] = owner_of(*in);
      if (!o.has_data) return {};
      const std::uint32_t base = in->extra_isize / 4;
      for (std::uint32_t i = 0; i < in->addrs_per_inode; ++i) F2FSCORE_TRY(count(n->i.i_addr[base + i].get(), nid, i, e.version, o));
    } else if (is_direct_node(ofs)) {
      const Node dn = *n;  // owner() reads blocks into other buffers, but keep this one stable
      auto o = owner(dn.footer.ino.get());
      if (!o) return make_error(o.error());
      if (!o->has_data) return {};
      for (std::uint32_t i = 0; i < kDefAddrsPerBlock; ++i) F2FSCORE_TRY(count(dn.dn.addr[i].get(), nid, i, e.version, *o));
    }
    return {};
  };
  F2FSCORE_TRY(mv.for_each_nat_entry(visit));
  auto orphans = vol.orphans();
  if (!orphans) return make_error(orphans.error());
  plan.orphans = std::move(*orphans);
  return plan;
}

}  // namespace f2fscore::meta
