// Nodes and inodes: NAT lookup to a checked node block, and the decoded
// inode with the kernel's size rules (do_read_inode(), sanity_check_inode()
// in fs/f2fs/inode.c; f2fs_inode_chksum_verify()).
#include <cstdio>
#include <cstring>

#include "f2fscore/checksum.hpp"
#include "f2fscore/disk/xattr.hpp"
#include "reader/volume_internal.hpp"
#include "util/text.hpp"

namespace f2fscore {

using namespace disk;

namespace {
using detail::fmt;
}  // namespace

std::uint32_t InodeInfo::max_inline_bytes() const {
  return max_inline_data(extra_isize, inline_xattr_addrs);
}

std::uint32_t InodeInfo::inline_offset() const {
  return inline_data_offset(extra_isize);
}

Result<Node> Volume::read_node(nid_t nid, block_t* blkaddr) {
  // As f2fs_check_nid_range(): nids below the root's are the node and meta
  // inodes, which have no node blocks.
  if (nid < impl_->sb.root_ino.get())
    return make_error(Errc::out_of_range, fmt("nid %llu is reserved (below the root inode %llu)", nid, impl_->sb.root_ino.get()));
  std::uint64_t nat_blk = 0;
  auto ne = impl_->nat_lookup(nid, &nat_blk);
  if (!ne) return make_error(ne.error());
  const block_t addr = ne->block_addr.get();
  if (addr == kNullAddr)
    return make_error(Errc::not_found, fmt("nid %llu is free: its NAT entry", nid) + at_block(nat_blk) + " has block_addr 0");
  if (addr == kNewAddr || !is_valid_main_addr(addr))
    return make_error(Errc::corrupt,
                      fmt("nid %llu: NAT block_addr 0x%llx is outside the main area", nid, addr) + at_block(nat_blk),
                      nat_blk * kBlockSize);
  Node n;
  F2FSCORE_TRY(impl_->read(addr, &n));
  if (n.footer.nid.get() != nid)
    return make_error(Errc::corrupt,
                      fmt("nid %llu: node block %llu has footer nid %llu", nid, addr, n.footer.nid.get()),
                      static_cast<std::uint64_t>(addr) * kBlockSize);
  if (blkaddr) *blkaddr = addr;
  return n;
}

Result<InodeInfo> Volume::read_inode(nid_t ino) {
  InodeInfo in;
  auto n = read_node(ino, &in.node_blkaddr);
  if (!n) return make_error(n.error());
  in.raw = *n;
  in.ino = ino;
  const Inode& i = in.raw.i;
  const std::uint64_t where = static_cast<std::uint64_t>(in.node_blkaddr) * kBlockSize;
  auto bad = [&](const std::string& m) {
    return make_error(Errc::corrupt, fmt("inode %llu", ino) + at_block(in.node_blkaddr) + ": " + m, where);
  };
  if (in.raw.footer.ino.get() != ino) return bad(fmt("footer ino %llu is not the inode's nid (not an inode block)", in.raw.footer.ino.get()));
  if (in.raw.footer.flag.get() >> node_flag::offset_shift)
    return bad(fmt("footer offset %llu is not 0 (not an inode block)", in.raw.footer.flag.get() >> node_flag::offset_shift));
  const std::uint32_t feat = impl_->sb.feature.get();
  in.mode = i.i_mode.get();
  in.size = i.i_size.get();
  in.blocks = i.i_blocks.get();
  in.links = i.i_links.get();
  in.uid = i.i_uid.get();
  in.gid = i.i_gid.get();
  in.flags = i.i_flags.get();
  in.inline_flags = i.i_inline;
  in.advise = i.i_advise;
  if (in.inline_flags & inline_flag::extra_attr) {
    if (!(feat & feature::extra_attr)) return bad("has extra attributes but the volume lacks extra_attr");
    in.extra_isize = i.extra.i_extra_isize.get();
    if (in.extra_isize % 4 != 0 || in.extra_isize < 4 || in.extra_isize > sizeof(InodeExtra))
      return bad(fmt("i_extra_isize %llu is not a multiple of 4 in [4, 36]", in.extra_isize));
  }
  if (in.inline_flags & inline_flag::xattr) {
    if (feat & feature::flexible_inline_xattr) {
      if (in.extra_isize < offsetof(InodeExtra, i_projid)) return bad("flexible inline xattr size needs extra attributes");
      in.inline_xattr_addrs = i.extra.i_inline_xattr_size.get();
      if (in.inline_xattr_addrs == 0 ||
          in.inline_xattr_addrs > kDefAddrsPerInode - in.extra_isize / 4 - kDefInlineReservedSize - 1)
        return bad(fmt("i_inline_xattr_size %llu is 0 or too large", in.inline_xattr_addrs));
    } else {
      in.inline_xattr_addrs = kDefaultInlineXattrAddrs;
    }
  } else if ((feat & feature::flexible_inline_xattr) && in.extra_isize >= 4) {
    // With flexible_inline_xattr the layout takes i_inline_xattr_size
    // whatever the flag (do_read_inode() in fs/f2fs/inode.c); only the flag
    // makes the area hold xattrs.
    in.inline_xattr_addrs = i.extra.i_inline_xattr_size.get();
    if (in.inline_xattr_addrs > kDefAddrsPerInode - in.extra_isize / 4 - kDefInlineReservedSize - 1)
      return bad(fmt("i_inline_xattr_size %llu is too large", in.inline_xattr_addrs));
  } else if (!(feat & feature::flexible_inline_xattr) && (in.inline_flags & inline_flag::dentry)) {
    // Without flexible_inline_xattr an inline-dentry directory keeps the
    // default inline xattr area out of its layout even without the
    // inline_xattr flag (do_read_inode() in fs/f2fs/inode.c).
    in.inline_xattr_addrs = kDefaultInlineXattrAddrs;
  }
  if (feat & feature::inode_checksum && impl_->opts.verify_inode_checksums && in.extra_isize >= 12) {
    const std::uint32_t want = inode_checksum(impl_->chksum_seed, reinterpret_cast<const std::uint8_t*>(&in.raw));
    if (want != i.extra.i_inode_checksum.get())
      return bad(fmt("inode checksum 0x%llx does not match its contents (0x%llx)", i.extra.i_inode_checksum.get(), want));
  }
  in.addrs_per_inode = disk::addrs_per_inode(in.extra_isize, in.inline_xattr_addrs);
  in.addrs_per_block = kDefAddrsPerBlock;
  if (in.is_compressed()) {
    if (!(feat & feature::compression)) return bad("is compressed but the volume lacks the compression feature");
    if (in.extra_isize < sizeof(InodeExtra)) return bad("is compressed but its extra attributes lack the compression fields");
    const std::uint32_t log = i.extra.i_log_cluster_size;
    if (log < 2 || log > 8) return bad(fmt("i_log_cluster_size %llu outside [2, 8]", log));
    // As sanity_check_compress_inode(): lzo, lz4, zstd, lzo-rle.
    if (i.extra.i_compress_algorithm > 3)
      return bad(fmt("i_compress_algorithm %llu is unknown", i.extra.i_compress_algorithm));
    if (i.extra.i_compr_blocks.get() > in.blocks)
      return bad(fmt("i_compr_blocks %llu exceeds i_blocks %llu", i.extra.i_compr_blocks.get(), in.blocks));
    in.cluster_blocks = 1u << log;
    in.addrs_per_inode &= ~(in.cluster_blocks - 1);
    in.addrs_per_block &= ~(in.cluster_blocks - 1);
  }
  const std::uint32_t type = in.mode & 0xF000;
  if (type != 0x8000 && type != 0x4000 && type != 0xA000 && type != 0x2000 && type != 0x6000 && type != 0x1000 &&
      type != 0xC000)
    return bad(fmt("i_mode 0%llo has no valid file type", in.mode));
  // The rest of sanity_check_inode() in fs/f2fs/inode.c.
  if (in.blocks == 0) return bad("i_blocks is 0");
  if (in.has_inline_data() && !in.is_reg() && !in.is_symlink())
    return bad(fmt("i_mode 0%llo cannot have inline data", in.mode));
  if (in.has_inline_dentry() && !in.is_dir()) return bad(fmt("i_mode 0%llo cannot have inline dentries", in.mode));
  if (in.is_casefolded() && !(feat & feature::casefold)) return bad("is casefolded but the volume lacks casefold");
  const nid_t xnid = i.i_xattr_nid.get();
  if (xnid != 0 && (xnid < impl_->sb.root_ino.get() || xnid >= max_nid()))
    return bad(fmt("i_xattr_nid %llu is out of range", xnid));
  if ((in.has_inline_data() || in.has_inline_dentry()) && in.max_inline_bytes() == 0)
    return bad("inline data with no room for it");
  if (in.has_inline_data() && in.size > in.max_inline_bytes())
    return bad(fmt("inline file of %llu bytes exceeds the inline limit %llu", in.size, in.max_inline_bytes()));
  if (in.size > kMaxFileBytes) return bad(fmt("i_size %llu exceeds the largest file (%llu bytes)", in.size, kMaxFileBytes));
  return in;
}

std::string XattrInfo::full_name() const {
  switch (index) {
    case xattr_index::user: return "user." + name;
    case xattr_index::posix_acl_access: return "system.posix_acl_access";
    case xattr_index::posix_acl_default: return "system.posix_acl_default";
    case xattr_index::trusted: return "trusted." + name;
    case xattr_index::lustre: return "lustre." + name;
    case xattr_index::security: return "security." + name;
    case xattr_index::advise: return "system.advise";
    case xattr_index::encryption: return "encryption." + name;
    case xattr_index::verity: return "verity." + name;
    default: return fmt("index%llu.", index) + name;
  }
}

}  // namespace f2fscore
