// Extended attributes: the inline area at the end of i_addr and the xattr
// node, read as one buffer (read_all_xattrs() in fs/f2fs/xattr.c).
#include <cstdio>
#include <cstring>

#include "f2fscore/disk/xattr.hpp"
#include "volume_internal.hpp"

namespace f2fscore {

using namespace disk;

Result<std::vector<XattrInfo>> Volume::xattrs(const InodeInfo& in) {
  std::vector<std::uint8_t> buf;
  const std::uint32_t inline_bytes = in.inline_xattr_addrs * 4;
  if (inline_bytes) {
    const auto* base = reinterpret_cast<const std::uint8_t*>(&in.raw.i.i_addr[kDefAddrsPerInode - in.inline_xattr_addrs]);
    buf.assign(base, base + inline_bytes);
  }
  const nid_t xnid = in.raw.i.i_xattr_nid.get();
  if (xnid != 0) {
    auto n = read_node(xnid);
    if (!n) return make_error(n.error().code, "inode " + std::to_string(in.ino) + " xattr node: " + n.error().message);
    if (n->footer.ino.get() != in.ino)
      return make_error(Errc::corrupt, "inode " + std::to_string(in.ino) + ": xattr node " + std::to_string(xnid) +
                                           " belongs to inode " + std::to_string(n->footer.ino.get()));
    const auto* p = reinterpret_cast<const std::uint8_t*>(&*n);
    buf.insert(buf.end(), p, p + kNodeFooterOffset);
  }
  std::vector<XattrInfo> out;
  if (buf.size() < sizeof(XattrHeader)) return out;
  const std::uint32_t magic = load_le32(buf.data(), 0);
  if (magic == 0) return out;  // never initialised: no xattrs
  if (magic != kXattrMagic)
    return make_error(Errc::corrupt, "inode " + std::to_string(in.ino) + ": xattr header magic is not 0xf2f52011");
  std::size_t off = sizeof(XattrHeader);
  while (off + 4 <= buf.size()) {
    if (load_le32(buf.data(), off) == 0) break;  // last entry
    const std::uint8_t index = buf[off];
    const std::uint8_t name_len = buf[off + 1];
    const std::uint16_t value_size = load_le16(buf.data(), off + 2);
    const std::size_t size = xattr_entry_size(name_len, value_size);
    if (off + size > buf.size())
      return make_error(Errc::corrupt, "inode " + std::to_string(in.ino) + ": xattr entry at byte " + std::to_string(off) +
                                           " runs past the xattr area");
    XattrInfo x;
    x.index = index;
    x.name.assign(reinterpret_cast<const char*>(buf.data() + off + 4), name_len);
    x.value.assign(reinterpret_cast<const char*>(buf.data() + off + 4 + name_len), value_size);
    out.push_back(std::move(x));
    off += size;
  }
  return out;
}

}  // namespace f2fscore
