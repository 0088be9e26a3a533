// POSIX ACLs of the writer: the xattr format user space and the kernel
// exchange (fs/posix_acl.c), f2fs's on-disk format (fs/f2fs/acl.c), and the
// two places the kernel changes an ACL by itself: chmod (posix_acl_chmod())
// and the creation of an inode in a directory with a default ACL
// (posix_acl_create() for f2fs_init_acl()). ACLs are kept as xattrs of
// index F2FS_XATTR_INDEX_POSIX_ACL_ACCESS / _DEFAULT with an empty name.
#include <cerrno>

#include "f2fscore/disk/xattr.hpp"
#include "meta/meta_internal.hpp"
#include "writer/writer_internal.hpp"

namespace f2fscore::wr::acl {

using meta::fmt;
namespace xattr_index = disk::xattr_index;

namespace {

std::uint16_t get16(const std::uint8_t* p) { return static_cast<std::uint16_t>(p[0] | p[1] << 8); }
std::uint32_t get32(const std::uint8_t* p) {
  return static_cast<std::uint32_t>(p[0]) | static_cast<std::uint32_t>(p[1]) << 8 | static_cast<std::uint32_t>(p[2]) << 16 |
         static_cast<std::uint32_t>(p[3]) << 24;
}
void put16(std::vector<std::uint8_t>& v, std::uint16_t x) {
  v.push_back(static_cast<std::uint8_t>(x)), v.push_back(static_cast<std::uint8_t>(x >> 8));
}
void put32(std::vector<std::uint8_t>& v, std::uint32_t x) {
  for (int i = 0; i < 4; ++i) v.push_back(static_cast<std::uint8_t>(x >> (8 * i)));
}
bool short_tag(std::uint16_t t) { return t == kUserObj || t == kGroupObj || t == kMask || t == kOther; }

constexpr std::uint16_t kTypeMask = 0xF000, kDir = 0x4000, kLnk = 0xA000;

// The stored ACL of `type` (an xattr index), or none.
Result<std::optional<std::vector<Entry>>> stored(Writer::Impl& w, nid_t ino, std::uint8_t type) {
  auto v = xattr_get(w, ino, type, "");
  if (!v) {
    if (v.error().code == Errc::not_found) return std::optional<std::vector<Entry>>{};
    return make_error(v.error());
  }
  auto a = from_disk(*v);
  if (!a) return make_error(a.error());
  return std::optional<std::vector<Entry>>(std::move(*a));
}

}  // namespace

Result<std::vector<Entry>> from_xattr(std::span<const std::uint8_t> v) {
  if (v.size() < 4) return errno_error(Errc::invalid_argument, EINVAL, "writer: an ACL shorter than its header");
  if (get32(v.data()) != 2) return errno_error(Errc::unsupported, EOPNOTSUPP, "writer: an ACL of a version other than 2");
  if ((v.size() - 4) % 8) return errno_error(Errc::invalid_argument, EINVAL, "writer: an ACL size not 4 + 8 x entries");
  std::vector<Entry> acl;
  for (std::size_t o = 4; o < v.size(); o += 8) {
    Entry e{get16(&v[o]), get16(&v[o + 2]), get32(&v[o + 4])};
    if (!short_tag(e.tag) && e.tag != kUser && e.tag != kGroup)
      return errno_error(Errc::invalid_argument, EINVAL, fmt("writer: ACL tag 0x%llx", e.tag));
    if ((e.tag == kUser || e.tag == kGroup) && e.id == 0xFFFFFFFFu)
      return errno_error(Errc::invalid_argument, EINVAL, "writer: an ACL entry with id -1");
    if (short_tag(e.tag)) e.id = 0;
    acl.push_back(e);
  }
  return acl;
}

Status valid(const std::vector<Entry>& acl) {
  enum { kStUserObj, kStUser, kStGroup, kStOther, kStDone } state = kStUserObj;
  bool needs_mask = false;
  for (const Entry& e : acl) {
    if (e.perm & ~7u) return errno_error(Errc::invalid_argument, EINVAL, "writer: ACL permission bits past rwx");
    bool ok = false;
    switch (e.tag) {
      case kUserObj: ok = state == kStUserObj, state = kStUser; break;
      case kUser: ok = state == kStUser, needs_mask = true; break;
      case kGroupObj: ok = state == kStUser, state = kStGroup; break;
      case kGroup: ok = state == kStGroup, needs_mask = true; break;
      case kMask: ok = state == kStGroup, state = kStOther; break;
      case kOther: ok = state == kStOther || (state == kStGroup && !needs_mask), state = kStDone; break;
      default: break;
    }
    if (!ok) return errno_error(Errc::invalid_argument, EINVAL, "writer: ACL entries out of order or repeated");
  }
  if (!acl.empty() && state != kStDone) return errno_error(Errc::invalid_argument, EINVAL, "writer: an ACL without its required entries");
  return {};
}

std::vector<std::uint8_t> to_xattr(const std::vector<Entry>& acl) {
  std::vector<std::uint8_t> v;
  put32(v, 2);
  for (const Entry& e : acl) put16(v, e.tag), put16(v, e.perm), put32(v, short_tag(e.tag) ? 0xFFFFFFFFu : e.id);
  return v;
}

std::vector<std::uint8_t> to_disk(const std::vector<Entry>& acl) {
  std::vector<std::uint8_t> v;
  put32(v, 1);
  for (const Entry& e : acl) {
    put16(v, e.tag), put16(v, e.perm);
    if (!short_tag(e.tag)) put32(v, e.id);
  }
  return v;
}

Result<std::vector<Entry>> from_disk(std::span<const std::uint8_t> v) {
  if (v.size() < 4 || get32(v.data()) != 1) return errno_error(Errc::corrupt, EINVAL, "writer: a stored ACL without its header");
  std::vector<Entry> acl;
  for (std::size_t o = 4; o < v.size();) {
    if (o + 4 > v.size()) return errno_error(Errc::corrupt, EINVAL, "writer: a stored ACL entry runs past the value");
    Entry e{get16(&v[o]), get16(&v[o + 2]), 0};
    o += 4;
    if (!short_tag(e.tag)) {
      if ((e.tag != kUser && e.tag != kGroup) || o + 4 > v.size())
        return errno_error(Errc::corrupt, EINVAL, "writer: a stored ACL entry with a bad tag or size");
      e.id = get32(&v[o]);
      o += 4;
    }
    acl.push_back(e);
  }
  return acl;
}

bool equiv_mode(const std::vector<Entry>& acl, std::uint16_t& perm) {
  std::uint16_t m = 0;
  bool equiv = true;
  for (const Entry& e : acl) {
    switch (e.tag) {
      case kUserObj: m = static_cast<std::uint16_t>(m | e.perm << 6); break;
      case kGroupObj: m = static_cast<std::uint16_t>(m | e.perm << 3); break;
      case kOther: m = static_cast<std::uint16_t>(m | e.perm); break;
      case kMask: m = static_cast<std::uint16_t>((m & ~0070u) | e.perm << 3), equiv = false; break;
      default: equiv = false; break;
    }
  }
  perm = m;
  return equiv;
}

// posix_acl_chmod_masq(): the owner, other and (the mask, else the owning
// group) entries take the mode's bits; named entries stay.
Status chmod(Writer::Impl& w, nid_t ino, std::uint16_t mode) {
  if ((mode & kTypeMask) == kLnk) return {};
  auto a = stored(w, ino, xattr_index::posix_acl_access);
  if (!a) return make_error(a.error());
  if (!*a) return {};
  std::vector<Entry>& acl = **a;
  Entry* group_obj = nullptr;
  Entry* mask = nullptr;
  for (Entry& e : acl) {
    if (e.tag == kUserObj) e.perm = static_cast<std::uint16_t>((mode >> 6) & 7);
    else if (e.tag == kOther) e.perm = static_cast<std::uint16_t>(mode & 7);
    else if (e.tag == kGroupObj) group_obj = &e;
    else if (e.tag == kMask) mask = &e;
  }
  if (mask) mask->perm = static_cast<std::uint16_t>((mode >> 3) & 7);
  else if (group_obj) group_obj->perm = static_cast<std::uint16_t>((mode >> 3) & 7);
  else return errno_error(Errc::corrupt, EIO, fmt("writer: inode %llu: a stored access ACL without a group entry", ino));
  const std::vector<std::uint8_t> disk_acl = to_disk(acl);
  const std::span<const std::uint8_t> value(disk_acl);
  return xattr_set(w, ino, xattr_index::posix_acl_access, "", &value, XattrSet::any);
}

// posix_acl_create() and posix_acl_create_masq(): each of the owner, other
// and (the mask, else the owning group) entries and the matching bits of
// the mode keep what both allow.
Result<Inherited> create(Writer::Impl& w, nid_t dir, std::uint16_t& mode, std::uint16_t umask) {
  Inherited out;
  if ((mode & kTypeMask) == kLnk) return out;
  auto d = stored(w, dir, xattr_index::posix_acl_default);
  if (!d) return make_error(d.error());
  if (!*d || (*d)->empty()) {
    mode = static_cast<std::uint16_t>(mode & ~(umask & 0777));
    return out;
  }
  std::vector<Entry> acl = **d;
  std::uint16_t m = mode;
  Entry* group_obj = nullptr;
  Entry* mask = nullptr;
  bool not_equiv = false;
  for (Entry& e : acl) {
    switch (e.tag) {
      case kUserObj:
        e.perm = static_cast<std::uint16_t>(e.perm & ((m >> 6) & 7));
        m = static_cast<std::uint16_t>(m & ((e.perm << 6) | ~0700u));
        break;
      case kUser:
      case kGroup: not_equiv = true; break;
      case kGroupObj: group_obj = &e; break;
      case kOther:
        e.perm = static_cast<std::uint16_t>(e.perm & (m & 7));
        m = static_cast<std::uint16_t>(m & (e.perm | ~0007u));
        break;
      case kMask:
        mask = &e;
        not_equiv = true;
        break;
      default: break;
    }
  }
  Entry* g = mask ? mask : group_obj;
  if (!g) return errno_error(Errc::corrupt, EIO, fmt("writer: directory %llu: a default ACL without a group entry", dir));
  g->perm = static_cast<std::uint16_t>(g->perm & ((m >> 3) & 7));
  m = static_cast<std::uint16_t>(m & ((g->perm << 3) | ~0070u));
  mode = static_cast<std::uint16_t>((mode & ~0777u) | (m & 0777u));
  if (not_equiv) out.access = to_disk(acl);
  if ((mode & kTypeMask) == kDir) out.def = to_disk(**d);
  return out;
}

}  // namespace f2fscore::wr::acl
