// Extended attributes: the inline xattr area and the xattr node, changed as
// fs/f2fs/xattr.c (Linux 6.1) does (docs/writer.md).
//
// The area is one buffer: the inode's inline xattr area (the last
// i_inline_xattr_size words of i_addr with flexible_inline_xattr, else 50
// words, none without FI_INLINE_XATTR), then the first 4072 bytes of the
// xattr node (VALID_XATTR_BLOCK_SIZE), then 4 bytes of padding
// (read_all_xattrs()). A 24-byte header (magic F2F52011, refcount 1) starts
// it; entries follow, each padded to 4 bytes; a zero word ends them.
#include <algorithm>
#include <cerrno>
#include <cstring>

#include "meta/meta_internal.hpp"
#include "writer/writer_internal.hpp"
#include "reader/xattr_internal.hpp"

namespace f2fscore {

using namespace disk;
using meta::fmt;

namespace {

/// XATTR_NODE_OFFSET: every offset bit of the footer set.
constexpr std::uint32_t kXattrNodeOffset = 0xFFFFFFFFu >> node_flag::offset_shift;
constexpr std::uint32_t kValidXattrBlockSize = kNodeFooterOffset;  ///< 4072
constexpr std::uint32_t kXattrPadding = 4;                         ///< XATTR_PADDING_SIZE

struct Area {
  std::vector<std::uint8_t> buf;
  std::uint32_t inline_size = 0;  ///< bytes
  nid_t xnid = 0;
};

Result<Node*> xattr_inode(Writer::Impl& w, nid_t ino) {
  if (ino == 0 || ino >= w.max_nid || w.nm.get(ino).ino != ino || w.nm.get(ino).addr == kNullAddr)
    return make_error(Errc::not_found, fmt("writer: no inode %llu", ino));
  return w.node(ino);
}

std::uint32_t inline_xattr_bytes(Writer::Impl& w, const Node& in) {
  if (!(in.i.i_inline & inline_flag::xattr)) return 0;
  const std::uint32_t used = w.extra_words(in) + w.addrs_per_inode(in);
  return used >= kDefAddrsPerInode ? 0 : 4 * (kDefAddrsPerInode - used);
}

// read_all_xattrs(): the inline area, then the xattr node; a header without
// the magic ("never allocated") gets it and refcount 1.
Result<Area> read_area(Writer::Impl& w, nid_t ino) {
  auto ip = xattr_inode(w, ino);
  if (!ip) return make_error(ip.error());
  Area a;
  a.inline_size = inline_xattr_bytes(w, **ip);
  a.xnid = (*ip)->i.i_xattr_nid.get();
  a.buf.assign(a.inline_size + kValidXattrBlockSize + kXattrPadding, 0);
  if (a.inline_size) {
    const auto* base = reinterpret_cast<const std::uint8_t*>(&(*ip)->i.i_addr[kDefAddrsPerInode - a.inline_size / 4]);
    std::memcpy(a.buf.data(), base, a.inline_size);
  }
  if (a.xnid) {
    if (a.xnid >= w.max_nid || w.nm.get(a.xnid).ino != ino)
      return make_error(Errc::corrupt, fmt("writer: inode %llu names xattr node %llu, which is not its node", ino, a.xnid));
    auto xp = w.node(a.xnid);
    if (!xp) return make_error(xp.error());
    if (((*xp)->footer.flag.get() >> node_flag::offset_shift) != kXattrNodeOffset)
      return make_error(Errc::corrupt, fmt("writer: xattr node %llu of inode %llu has not the xattr node offset", a.xnid, ino));
    std::memcpy(a.buf.data() + a.inline_size, *xp, kValidXattrBlockSize);
  }
  auto* h = reinterpret_cast<XattrHeader*>(a.buf.data());
  if (h->h_magic.get() != kXattrMagic) {
    h->h_magic.set(kXattrMagic);
    h->h_refcount.set(1);
  }
  return a;
}

// write_all_xattrs(): the first inline_size bytes to the inode; when the
// entries (hsize bytes with the header) fit there the xattr node goes
// (f2fs_truncate_xattr_node()), else the rest to the xattr node, made on
// first need (f2fs_new_node_page() at XATTR_NODE_OFFSET, i_blocks + 1).
Status write_area(Writer::Impl& w, nid_t ino, Area& a, std::size_t hsize) {
  auto ip = w.node(ino);
  if (!ip) return make_error(ip.error());
  const bool dir = ((*ip)->i.i_mode.get() & 0xF000) == 0x4000;
  if (a.inline_size) {
    auto* base = reinterpret_cast<std::uint8_t*>(&(*ip)->i.i_addr[kDefAddrsPerInode - a.inline_size / 4]);
    std::memcpy(base, a.buf.data(), a.inline_size);
    w.mark_dirty(ino);
  }
  if (hsize <= a.inline_size) {
    if (a.xnid) {
      w.free_node(a.xnid);
      auto ip2 = w.node(ino);
      if (!ip2) return make_error(ip2.error());
      (*ip2)->i.i_xattr_nid.set(0);
      (*ip2)->i.i_blocks.set((*ip2)->i.i_blocks.get() - 1);
      w.mark_dirty(ino);
    }
    return {};
  }
  if (!a.xnid) {
    F2FSCORE_TRY(w.quota_alloc_block(ino));  // writer/quota.cpp: EDQUOT
    auto n = w.alloc_nid();
    if (!n) return make_error(n.error());
    w.new_node(*n, ino, kXattrNodeOffset, dir);
    a.xnid = *n;
    auto ip2 = w.node(ino);
    if (!ip2) return make_error(ip2.error());
    (*ip2)->i.i_xattr_nid.set(*n);
    (*ip2)->i.i_blocks.set((*ip2)->i.i_blocks.get() + 1);
    w.mark_dirty(ino);
  }
  auto xp = w.node(a.xnid);
  if (!xp) return make_error(xp.error());
  std::memcpy(*xp, a.buf.data() + a.inline_size, kValidXattrBlockSize);
  w.mark_dirty(a.xnid);
  return {};
}

Status check_xattr_name(std::uint8_t index, std::string_view name) {
  if (index == 0 || index > xattr_index::verity)
    return make_error(Errc::invalid_argument, fmt("writer: xattr name index %llu is not one of F2FS_XATTR_INDEX_*", index));
  if (name.size() > kNameLen)
    return errno_error(Errc::invalid_argument, ERANGE,
                       fmt("writer: an xattr name of %llu bytes is longer than 255 (F2FS_NAME_LEN, ERANGE)", name.size()));
  if (name.empty() && index == xattr_index::user)
    return errno_error(Errc::invalid_argument, EINVAL, "writer: an empty user xattr name (EINVAL)");
  // Linux names xattrs with their prefix and takes at most XATTR_NAME_MAX
  // (255) bytes in all (getxattr(2)/setxattr(2): ERANGE): a longer full name
  // could be stored but never read or removed there.
  const std::size_t prefix = index == xattr_index::user ? 5 : index == xattr_index::trusted ? 8 : index == xattr_index::security ? 9 : 0;
  if (prefix + name.size() > 255)
    return errno_error(Errc::invalid_argument, ERANGE,
                       fmt("writer: the xattr name with its prefix is %llu bytes, over 255 (XATTR_NAME_MAX, ERANGE)", prefix + name.size()));
  return {};
}

const xattr_area::EntryRef* find(const Area& a, const std::vector<xattr_area::EntryRef>& es, std::uint8_t index,
                                 std::string_view name) {
  for (const auto& e : es)
    if (e.index == index && e.name_len == name.size() && std::memcmp(a.buf.data() + e.offset + 4, name.data(), name.size()) == 0)
      return &e;
  return nullptr;
}

// __f2fs_setxattr(): value == nullptr removes. The room is MIN_OFFSET (the
// area less the node footer and the 4-byte end word, aligned to 4) past the
// last entry, plus the old entry's size when replacing; too little: E2BIG in
// Linux 6.1, Errc::no_space here.
Status set_impl(Writer::Impl& w, nid_t ino, std::uint8_t index, std::string_view name,
                const std::span<const std::uint8_t>* value, XattrSet how) {
  F2FSCORE_TRY(check_xattr_name(index, name));
  auto a = read_area(w, ino);
  if (!a) return make_error(a.error());
  std::size_t last = 0, bad = SIZE_MAX;
  const auto es = xattr_area::walk(std::span<const std::uint8_t>(a->buf.data(), a->buf.size() - kXattrPadding), &last, &bad);
  if (bad != SIZE_MAX)
    return make_error(Errc::corrupt, fmt("writer: inode %llu: xattr entry at offset %llu runs past the area", ino, bad));
  const xattr_area::EntryRef* here = find(*a, es, index, name);
  if (how == XattrSet::replace && !here)
    return errno_error(Errc::not_found, ENODATA, "writer: no xattr \"" + std::string(name) + "\" (ENODATA)");
  if (how == XattrSet::create && here)
    return errno_error(Errc::exists, EEXIST, "writer: xattr \"" + std::string(name) + "\" exists (EEXIST)");
  const std::size_t min_offset = (a->inline_size + kBlockSize - sizeof(NodeFooter) - kXattrPadding + 3) & ~std::size_t{3};
  const std::size_t vsize = value ? value->size() : 0;
  const std::size_t max_value = min_offset - sizeof(XattrHeader) - sizeof(XattrEntry);
  if (value && vsize > max_value)
    return errno_error(Errc::no_space, E2BIG, fmt("writer: an xattr value of %llu bytes is over the most the area holds (%llu, E2BIG)",
                                          vsize, max_value));
  const std::size_t newsize = xattr_entry_size(static_cast<std::uint32_t>(name.size()), static_cast<std::uint32_t>(vsize));
  if (value) {
    std::size_t room = min_offset > last ? min_offset - last : 0;
    if (here) room += here->size();
    if (room < newsize)
      return errno_error(Errc::no_space, E2BIG, fmt("writer: inode %llu: no room for an xattr entry of %llu bytes (%llu left, E2BIG)",
                                            ino, newsize, room));
  }
  std::uint8_t* base = a->buf.data();
  if (here) {  // the old entry goes; the later ones move down
    const std::size_t off = here->offset, old = here->size();
    std::memmove(base + off, base + off + old, last - off - old);
    last -= old;
    std::memset(base + last, 0, old);
  }
  if (value) {
    base[last] = index;
    base[last + 1] = static_cast<std::uint8_t>(name.size());
    base[last + 2] = static_cast<std::uint8_t>(vsize & 0xff);
    base[last + 3] = static_cast<std::uint8_t>(vsize >> 8);
    std::memcpy(base + last + 4, name.data(), name.size());
    if (vsize) std::memcpy(base + last + 4 + name.size(), value->data(), vsize);
    last += newsize;
    std::memset(base + last, 0, 4);  // the end word
  }
  F2FSCORE_TRY(write_area(w, ino, *a, last));
  auto ip = w.node(ino);
  if (!ip) return make_error(ip.error());
  w.set_ctime(**ip);
  w.mark_dirty(ino);
  return {};
}

// xattr_permission() in fs/xattr.c: no xattr of an immutable or
// append-only inode is set or removed (EPERM).
Status xattr_writable(Writer::Impl& w, nid_t ino) {
  if (ino == 0 || ino >= w.max_nid || w.nm.get(ino).ino != ino || w.nm.get(ino).addr == kNullAddr)
    return errno_error(Errc::not_found, ENOENT, fmt("writer: no inode %llu", ino));
  return w.refuse_flagged(ino, true, "its xattrs do not change");
}

}  // namespace

Status Writer::setxattr(nid_t ino, std::uint8_t index, std::string_view name, std::span<const std::uint8_t> value,
                        XattrSet how) {
  F2FSCORE_WRITER_LOCK(impl_);
  F2FSCORE_TRY(impl_->usable(true));
  F2FSCORE_TRY(xattr_writable(*impl_, ino));
  return set_impl(*impl_, ino, index, name, &value, how);
}

Status Writer::removexattr(nid_t ino, std::uint8_t index, std::string_view name) {
  F2FSCORE_WRITER_LOCK(impl_);
  F2FSCORE_TRY(impl_->usable(true));
  F2FSCORE_TRY(xattr_writable(*impl_, ino));
  // removexattr(2) is a set of no value with XATTR_REPLACE (ENODATA when absent).
  return set_impl(*impl_, ino, index, name, nullptr, XattrSet::replace);
}

Result<std::vector<std::uint8_t>> Writer::getxattr(nid_t ino, std::uint8_t index, std::string_view name) {
  F2FSCORE_WRITER_LOCK(impl_);
  F2FSCORE_TRY(impl_->usable(false));
  return wr::xattr_get(*impl_, ino, index, name);
}

Status wr::xattr_set(Writer::Impl& w, nid_t ino, std::uint8_t index, std::string_view name,
                     const std::span<const std::uint8_t>* value, XattrSet how) {
  return set_impl(w, ino, index, name, value, how);
}

Result<std::vector<std::uint8_t>> wr::xattr_get(Writer::Impl& w, nid_t ino, std::uint8_t index, std::string_view name) {
  F2FSCORE_TRY(check_xattr_name(index, name));
  auto a = read_area(w, ino);
  if (!a) return make_error(a.error());
  std::size_t last = 0, bad = SIZE_MAX;
  const auto es = xattr_area::walk(std::span<const std::uint8_t>(a->buf.data(), a->buf.size() - kXattrPadding), &last, &bad);
  const xattr_area::EntryRef* e = find(*a, es, index, name);
  if (!e) return errno_error(Errc::not_found, ENODATA, "writer: no xattr \"" + std::string(name) + "\" (ENODATA)");
  const std::uint8_t* v = a->buf.data() + e->offset + 4 + e->name_len;
  return std::vector<std::uint8_t>(v, v + e->value_size);
}

Result<std::vector<XattrItem>> Writer::listxattr(nid_t ino) {
  F2FSCORE_WRITER_LOCK(impl_);
  F2FSCORE_TRY(impl_->usable(false));
  auto a = read_area(*impl_, ino);
  if (!a) return make_error(a.error());
  std::size_t last = 0, bad = SIZE_MAX;
  const auto es = xattr_area::walk(std::span<const std::uint8_t>(a->buf.data(), a->buf.size() - kXattrPadding), &last, &bad);
  if (bad != SIZE_MAX)
    return make_error(Errc::corrupt, fmt("writer: inode %llu: xattr entry at offset %llu runs past the area", ino, bad));
  std::vector<XattrItem> out;
  for (const auto& e : es) {
    XattrItem x;
    x.index = e.index;
    x.name.assign(reinterpret_cast<const char*>(a->buf.data() + e.offset + 4), e.name_len);
    const std::uint8_t* v = a->buf.data() + e.offset + 4 + e.name_len;
    x.value.assign(v, v + e.value_size);
    out.push_back(std::move(x));
  }
  return out;
}

}  // namespace f2fscore
