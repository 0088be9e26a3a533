// Extended attributes: the inline area at the end of i_addr and the xattr
// node, read as one buffer (read_all_xattrs() in fs/f2fs/xattr.c).
#include <cstdio>
#include <cstring>
#include <optional>

#include "f2fscore/disk/xattr.hpp"
#include "reader/volume_internal.hpp"
#include "reader/xattr_internal.hpp"

namespace f2fscore {

using namespace disk;

namespace {
// POSIX ACLs are stored in f2fs's compact form (fs/f2fs/acl.c: header
// version 1; 4-byte tag/perm entries for the owner, group, mask and other,
// 8-byte ones with the id for named users and groups). Linux returns them in
// the system.posix_acl_* xattr form: version 2, every entry 8 bytes, id -1
// where there is none (f2fs_acl_from_disk() then posix_acl_to_xattr()).
// A value Linux could not decode either is returned as stored.
std::optional<std::string> acl_to_xattr(const std::string& disk) {
  if (disk.size() < 4 || load_le32(disk.data(), 0) != 1) return std::nullopt;
  std::string out;
  auto put16 = [&](std::uint16_t v) {
    out += static_cast<char>(v & 0xff);
    out += static_cast<char>(v >> 8);
  };
  auto put32 = [&](std::uint32_t v) {
    put16(static_cast<std::uint16_t>(v));
    put16(static_cast<std::uint16_t>(v >> 16));
  };
  put32(2);
  for (std::size_t off = 4; off < disk.size();) {
    if (off + 4 > disk.size()) return std::nullopt;
    const std::uint16_t tag = load_le16(disk.data(), off), perm = load_le16(disk.data(), off + 2);
    std::uint32_t id = 0xffffffff;
    switch (tag) {
      case 0x01: case 0x04: case 0x10: case 0x20:  // USER_OBJ, GROUP_OBJ, MASK, OTHER
        off += 4;
        break;
      case 0x02: case 0x08:  // USER, GROUP
        if (off + 8 > disk.size()) return std::nullopt;
        id = load_le32(disk.data(), off + 4);
        off += 8;
        break;
      default:
        return std::nullopt;
    }
    put16(tag);
    put16(perm);
    put32(id);
  }
  if (out.size() == 4) return std::nullopt;  // no entries: Linux has no ACL to show
  return out;
}
}  // namespace

namespace xattr_area {
std::vector<EntryRef> walk(std::span<const std::uint8_t> buf, std::size_t* end, std::size_t* bad_offset) {
  std::vector<EntryRef> out;
  *bad_offset = SIZE_MAX;
  std::size_t off = sizeof(XattrHeader);
  *end = off;
  while (off + 4 <= buf.size()) {
    *end = off;
    if (load_le32(buf.data(), off) == 0) return out;  // the last entry
    EntryRef e{off, buf[off], buf[off + 1], load_le16(buf.data(), off + 2)};
    if (off + e.size() > buf.size()) {
      *bad_offset = off;
      return out;
    }
    out.push_back(e);
    off += e.size();
  }
  *end = off;
  return out;
}
}  // namespace xattr_area

Result<std::vector<XattrInfo>> Volume::xattrs(const InodeInfo& in) {
  std::vector<std::uint8_t> buf;
  // Only with the inline_xattr flag (inline_xattr_size() in fs/f2fs/xattr.h).
  const std::uint32_t inline_bytes = (in.inline_flags & inline_flag::xattr) ? in.inline_xattr_addrs * 4 : 0;
  if (inline_bytes) {
    const auto* base = reinterpret_cast<const std::uint8_t*>(&in.raw.i.i_addr[kDefAddrsPerInode - in.inline_xattr_addrs]);
    buf.assign(base, base + inline_bytes);
  }
  const nid_t xnid = in.raw.i.i_xattr_nid.get();
  const std::string inode_at = "inode " + std::to_string(in.ino) + at_block(in.node_blkaddr);
  block_t xblk = 0;
  if (xnid != 0) {
    auto n = read_node(xnid, &xblk);
    if (!n) return make_error(n.error().code, inode_at + ": xattr node: " + n.error().message, n.error().offset);
    const std::string node_at = inode_at + ": xattr node " + std::to_string(xnid) + at_block(xblk);
    if (n->footer.ino.get() != in.ino)
      return make_error(Errc::corrupt, node_at + " belongs to inode " + std::to_string(n->footer.ino.get()),
                        static_cast<std::uint64_t>(xblk) * kBlockSize);
    // XATTR_NODE_OFFSET: every offset bit set (sanity_check_node_footer()).
    constexpr std::uint32_t kXattrNodeOffset = 0xFFFFFFFFu >> node_flag::offset_shift;
    if ((n->footer.flag.get() >> node_flag::offset_shift) != kXattrNodeOffset)
      return make_error(Errc::corrupt,
                        node_at + " has footer offset " + std::to_string(n->footer.flag.get() >> node_flag::offset_shift) +
                            ", not an xattr node's",
                        static_cast<std::uint64_t>(xblk) * kBlockSize);
    const auto* p = reinterpret_cast<const std::uint8_t*>(&*n);
    buf.insert(buf.end(), p, p + kNodeFooterOffset);
  }
  std::vector<XattrInfo> out;
  std::size_t end = 0, bad = SIZE_MAX;
  const auto entries = xattr_area::walk(buf, &end, &bad);
  if (bad != SIZE_MAX) {
    const std::uint64_t blk = bad < inline_bytes ? in.node_blkaddr : xblk;
    return make_error(Errc::corrupt, inode_at + ": xattr entry at offset " + std::to_string(bad) +
                                         " of the xattr area runs past its end" + at_block(blk),
                      blk * kBlockSize);
  }
  for (const auto& e : entries) {
    XattrInfo x;
    x.index = e.index;
    x.name.assign(reinterpret_cast<const char*>(buf.data() + e.offset + 4), e.name_len);
    x.value.assign(reinterpret_cast<const char*>(buf.data() + e.offset + 4 + e.name_len), e.value_size);
    if (e.index == xattr_index::posix_acl_access || e.index == xattr_index::posix_acl_default)
      if (auto acl = acl_to_xattr(x.value)) x.value = std::move(*acl);
    out.push_back(std::move(x));
  }
  return out;
}

}  // namespace f2fscore
