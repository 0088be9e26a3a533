// Files and directories by path and by handle (file_handle.hpp): the
// checks the VFS makes before a file system sees a call (fs/namei.c,
// fs/open.c, fs/read_write.c, fs/xattr.c, fs/posix_acl.c in Linux 6.1),
// in their order, over the writer's inode calls. Every error leaving this
// file carries an errno (posix()).
#include <algorithm>
#include <cerrno>
#include <climits>
#include <cstring>
#include <optional>

#include "f2fscore/file_handle.hpp"
#include "f2fscore/disk/xattr.hpp"
#include "meta/meta_internal.hpp"
#include "writer/writer_internal.hpp"

namespace f2fscore {

using namespace disk;
using meta::fmt;

namespace {

constexpr std::uint16_t kTypeMask = 0xF000, kReg = 0x8000, kDir = 0x4000, kLnk = 0xA000,
                        kFifo = 0x1000, kSock = 0xC000;
constexpr int kMaxSymlinks = 40;             ///< MAXSYMLINKS in include/linux/namei.h
constexpr std::size_t kPathMax = 4096;       ///< PATH_MAX, with the NUL
constexpr std::size_t kXattrNameMax = 255;   ///< XATTR_NAME_MAX
constexpr std::size_t kXattrSizeMax = 65536;  ///< XATTR_SIZE_MAX
constexpr std::uint64_t kMaxOff = static_cast<std::uint64_t>(INT64_MAX);
constexpr std::uint32_t kOPath = 010000000, kOTmpfile = 020000000;  ///< O_PATH, __O_TMPFILE

/// The error with its errno filled in (errno_of()) when it had none.
Error posix_error(Error e) {
  if (e.sys_errno == 0) e.sys_errno = errno_of(e);
  return e;
}
template <typename T>
Result<T> posix(Result<T> r) {
  if (!r) return make_error(posix_error(std::move(r.error())));
  return r;
}

#define F2FSCORE_PTRY(expr)                                              \
  do {                                                                   \
    auto f2fscore_ptry_ = (expr);                                        \
    if (!f2fscore_ptry_) return make_error(posix_error(std::move(f2fscore_ptry_.error()))); \
  } while (0)

bool is_type(std::uint16_t mode, std::uint16_t t) { return (mode & kTypeMask) == t; }

Result<std::uint16_t> mode_of(Writer::Impl& w, nid_t ino) {
  auto n = w.node(ino);
  if (!n) return make_error(n.error());
  return (*n)->i.i_mode.get();
}

/// Where a path ends: the directory holding its last name and that name
/// ("" for "/"), the inode it names (0: missing) and its mode.
struct Found {
  nid_t parent = 0;
  std::string leaf;
  nid_t ino = 0;
  std::uint16_t mode = 0;
  bool slash = false;  ///< the path ends in '/'
};

// link_path_walk() and walk_component(): every component but the last must
// be a directory (ENOTDIR) that exists (ENOENT); a symlink met on the way,
// or at the end with `follow_last` or a trailing '/', is followed (its
// target from the directory holding it, an absolute one from the root),
// at most kMaxSymlinks in all (ELOOP). A name over 255 bytes is
// ENAMETOOLONG (f2fs_lookup()). A missing last name is no error: ino 0.
Result<Found> walk(Writer& pub, Writer::Impl& w, nid_t start, std::string_view path, bool follow_last, int& links) {
  const nid_t root = w.sb.root_ino.get();
  if (path.empty()) return errno_error(Errc::not_found, ENOENT, "writer: an empty path");
  if (path.size() >= kPathMax)
    return errno_error(Errc::invalid_argument, ENAMETOOLONG, fmt("writer: a path of %llu bytes (PATH_MAX 4096)", path.size()));
  std::vector<std::string_view> comps;
  for (std::size_t i = 0; i < path.size();) {
    std::size_t j = path.find('/', i);
    if (j == std::string_view::npos) j = path.size();
    if (j > i) comps.push_back(path.substr(i, j - i));
    i = j + 1;
  }
  Found f;
  f.slash = path.back() == '/';
  nid_t cur = path[0] == '/' ? root : start;
  if (comps.empty()) {
    auto m = mode_of(w, cur);
    if (!m) return make_error(m.error());
    f.parent = cur, f.ino = cur, f.mode = *m, f.leaf = ".";
    return f;
  }
  for (std::size_t k = 0; k < comps.size(); ++k) {
    const bool last = k + 1 == comps.size();
    const std::string_view c = comps[k];
    auto cm = mode_of(w, cur);
    if (!cm) return make_error(cm.error());
    if (!is_type(*cm, kDir))
      return errno_error(Errc::invalid_argument, ENOTDIR, "writer: \"" + std::string(path) + "\" goes through a non-directory");
    if (c.size() > kNameLen)
      return errno_error(Errc::invalid_argument, ENAMETOOLONG, fmt("writer: a name of %llu bytes is longer than 255", c.size()));
    nid_t next = cur;
    if (c != ".") {
      auto dn = w.disk_name(cur, c);  // writer/fscrypt.cpp: ciphertext in an encrypted directory
      if (!dn) return make_error(dn.error());
      auto e = w.find_entry(cur, *dn);
      if (!e) {
        if (e.error().code != Errc::not_found) return make_error(e.error());
        if (!last) return errno_error(Errc::not_found, ENOENT, "writer: \"" + std::string(path) + "\": \"" + std::string(c) + "\" does not exist");
        f.parent = cur, f.leaf = std::string(c);
        return f;
      }
      next = *e;
    }
    auto nm = mode_of(w, next);
    if (!nm) return make_error(nm.error());
    if (is_type(*nm, kLnk) && (!last || follow_last || f.slash)) {
      if (++links > kMaxSymlinks)
        return errno_error(Errc::invalid_argument, ELOOP, "writer: more than 40 symlinks followed in \"" + std::string(path) + "\"");
      auto target = pub.readlink(next);
      if (!target) return make_error(target.error());
      auto t = walk(pub, w, cur, *target, true, links);
      if (!t) return make_error(t.error());
      if (last) {
        t->slash = t->slash || f.slash;
        return t;
      }
      if (t->ino == 0) return errno_error(Errc::not_found, ENOENT, "writer: the symlink target \"" + *target + "\" does not exist");
      cur = t->ino;
      continue;
    }
    if (last) {
      f.parent = cur, f.leaf = std::string(c), f.ino = next, f.mode = *nm;
      return f;
    }
    cur = next;
  }
  return f;  // not reached
}

/// An existing inode a path names (ENOENT when missing, ENOTDIR for a
/// trailing '/' on a non-directory).
Result<Found> existing(Writer& pub, Writer::Impl& w, std::string_view path, bool follow) {
  if (path.empty() || path[0] != '/')
    return errno_error(Errc::invalid_argument, path.empty() ? ENOENT : EINVAL, "writer: paths are absolute: \"" + std::string(path) + "\"");
  int links = 0;
  auto f = walk(pub, w, w.sb.root_ino.get(), path, follow, links);
  if (!f) return make_error(f.error());
  if (f->ino == 0) return errno_error(Errc::not_found, ENOENT, "writer: \"" + std::string(path) + "\" does not exist");
  if (f->slash && !is_type(f->mode, kDir))
    return errno_error(Errc::invalid_argument, ENOTDIR, "writer: \"" + std::string(path) + "\" is not a directory");
  return f;
}

std::uint8_t dtype(std::uint8_t ft) {
  switch (static_cast<FileType>(ft)) {
    case FileType::reg_file: return dirent_type::reg;
    case FileType::dir: return dirent_type::dir;
    case FileType::chrdev: return dirent_type::chr;
    case FileType::blkdev: return dirent_type::blk;
    case FileType::fifo: return dirent_type::fifo;
    case FileType::sock: return dirent_type::sock;
    case FileType::symlink: return dirent_type::lnk;
    case FileType::unknown: break;
  }
  return dirent_type::unknown;
}

// f2fs_readdir(): "." and ".." lead (slots 0 and 1 of the first dentry
// block or the inline dentries), then the other names in on-disk order.
Result<std::vector<Dirent>> readdir_ino(Writer& pub, Writer::Impl& w, nid_t dir) {
  auto m = mode_of(w, dir);
  if (!m) return make_error(m.error());
  if (!is_type(*m, kDir)) return errno_error(Errc::invalid_argument, ENOTDIR, fmt("writer: inode %llu is not a directory", dir));
  auto parent = w.find_entry(dir, "..");
  if (!parent) return make_error(parent.error());
  auto es = pub.list_at(dir);
  if (!es) return make_error(es.error());
  std::vector<Dirent> out;
  out.reserve(es->size() + 2);
  out.push_back(Dirent{".", dir, dirent_type::dir});
  out.push_back(Dirent{"..", *parent, dirent_type::dir});
  for (auto& e : *es) out.push_back(Dirent{std::move(e.name), e.ino, dtype(e.file_type)});
  return out;
}

// ---- Extended attributes ----------------------------------------------------------

bool has_prefix(std::string_view s, std::string_view p) { return s.size() >= p.size() && s.substr(0, p.size()) == p; }

// setxattr(2)/getxattr(2) copy the name into XATTR_NAME_MAX + 1 bytes:
// ERANGE for an empty name or one that does not fit.
Status check_name_size(std::string_view full) {
  if (full.empty() || full.size() > kXattrNameMax)
    return errno_error(Errc::invalid_argument, ERANGE,
                       fmt("writer: an xattr name of %llu bytes (1 to 255, XATTR_NAME_MAX)", full.size()));
  return {};
}

// xattr_permission() in fs/xattr.c: "user." only on regular files and
// directories (EPERM to change, ENODATA to read on other types).
Status user_xattr_allowed(std::string_view full, std::uint16_t mode, bool write) {
  if (has_prefix(full, "user.") && !is_type(mode, kReg) && !is_type(mode, kDir))
    return errno_error(write ? Errc::invalid_argument : Errc::not_found, write ? EPERM : ENODATA,
                       "writer: user xattrs only on regular files and directories");
  return {};
}

Result<std::vector<std::uint8_t>> getxattr_ino(Writer& pub, Writer::Impl& w, nid_t ino, std::string_view full) {
  F2FSCORE_TRY(check_name_size(full));
  auto m = mode_of(w, ino);
  if (!m) return make_error(m.error());
  F2FSCORE_TRY(user_xattr_allowed(full, *m, false));
  auto x = parse_xattr_name(full);
  if (!x) return make_error(x.error());
  if (x->index == xattr_index::advise) {  // f2fs_xattr_advise_get(): i_advise, one byte
    auto n = w.node(ino);
    if (!n) return make_error(n.error());
    return std::vector<std::uint8_t>{(*n)->i.i_advise};
  }
  const bool acl = x->index == xattr_index::posix_acl_access || x->index == xattr_index::posix_acl_default;
  // posix_acl_xattr_get(): no ACLs on symlinks (EOPNOTSUPP).
  if (acl && is_type(*m, kLnk)) return errno_error(Errc::unsupported, EOPNOTSUPP, "writer: no ACLs on a symlink");
  auto v = pub.getxattr(ino, x->index, x->name);
  if (!v) return make_error(v.error());
  if (!acl) return v;
  auto a = wr::acl::from_disk(*v);
  if (!a) return make_error(a.error());
  return wr::acl::to_xattr(*a);
}

// setxattr(2) with value, removexattr(2) without (`value` null): the
// checks of setxattr() and vfs_setxattr() in fs/xattr.c, then
// __f2fs_setxattr() or, for ACLs, posix_acl_xattr_set() and
// __f2fs_set_acl().
Status setxattr_ino(Writer& pub, Writer::Impl& w, nid_t ino, std::string_view full,
                    const std::span<const std::uint8_t>* value, XattrSet how) {
  F2FSCORE_TRY(w.usable(true));
  F2FSCORE_TRY(check_name_size(full));
  if (value && value->size() > kXattrSizeMax)
    return errno_error(Errc::invalid_argument, E2BIG, fmt("writer: an xattr value of %llu bytes (XATTR_SIZE_MAX 65536)", value->size()));
  auto m = mode_of(w, ino);
  if (!m) return make_error(m.error());
  // xattr_permission(): immutable and append-only inodes first (EPERM).
  F2FSCORE_TRY(w.refuse_flagged(ino, true, "its xattrs do not change"));
  F2FSCORE_TRY(user_xattr_allowed(full, *m, true));
  auto x = parse_xattr_name(full);
  if (!x) return make_error(x.error());
  if (x->index == xattr_index::advise) {
    // f2fs_xattr_advise_set(): the first byte, only FADVISE_COLD_BIT and
    // FADVISE_HOT_BIT (FADVISE_MODIFIABLE_BITS); no value is EINVAL.
    constexpr std::uint8_t kModifiable = advise::cold | advise::hot;
    if (!value) return errno_error(Errc::invalid_argument, EINVAL, "writer: system.advise cannot be removed");
    const std::uint8_t v = value->empty() ? 0 : (*value)[0];  // an empty value is "" (__vfs_setxattr())
    if (v & ~kModifiable) return errno_error(Errc::invalid_argument, EINVAL, "writer: system.advise takes only the cold and hot bits");
    auto n = w.node(ino);
    if (!n) return make_error(n.error());
    (*n)->i.i_advise = static_cast<std::uint8_t>(v | ((*n)->i.i_advise & ~kModifiable));
    w.mark_dirty(ino);
    return {};
  }
  if (x->index != xattr_index::posix_acl_access && x->index != xattr_index::posix_acl_default) {
    if (!value) return pub.removexattr(ino, x->index, x->name);
    return pub.setxattr(ino, x->index, x->name, *value, how);
  }
  // setxattr(2) hands an empty value over as "" (__vfs_setxattr()): only
  // removexattr(2) comes without one, and removes the ACL. The value is
  // parsed (posix_acl_xattr_set()), then set_posix_acl() checks the inode
  // and the entries.
  std::vector<wr::acl::Entry> acl;
  if (value) {
    auto a = wr::acl::from_xattr(*value);
    if (!a) return make_error(a.error());
    acl = std::move(*a);
  }
  if (is_type(*m, kLnk)) return errno_error(Errc::unsupported, EOPNOTSUPP, "writer: no ACLs on a symlink");
  if (x->index == xattr_index::posix_acl_default && !is_type(*m, kDir)) {
    if (!acl.empty()) return errno_error(Errc::invalid_argument, EACCES, "writer: a default ACL on a non-directory");
    return {};
  }
  F2FSCORE_TRY(wr::acl::valid(acl));
  std::optional<std::uint16_t> new_mode;
  if (x->index == xattr_index::posix_acl_access && !acl.empty()) {
    std::uint16_t perm = 0;
    if (wr::acl::equiv_mode(acl, perm)) acl.clear();  // the mode says it all: no xattr
    new_mode = static_cast<std::uint16_t>((*m & 07000) | perm);
  }
  if (acl.empty()) {
    auto r = pub.removexattr(ino, x->index, "");
    if (!r && r.error().code != Errc::not_found) return r;
  } else {
    const std::vector<std::uint8_t> disk_acl = wr::acl::to_disk(acl);
    F2FSCORE_TRY(pub.setxattr(ino, x->index, "", disk_acl, XattrSet::any));
  }
  SetAttr sa;
  sa.mode = new_mode;
  return pub.setattr(ino, sa);  // ctime now, the mode an access ACL gives
}

Result<std::vector<std::string>> listxattr_ino(Writer& pub, nid_t ino) {
  auto l = pub.listxattr(ino);
  if (!l) return make_error(l.error());
  std::vector<std::string> out;
  for (const XattrItem& x : *l) {
    std::string n = xattr_full_name(x.index, x.name);
    if (!n.empty()) out.push_back(std::move(n));
  }
  return out;
}

Status check_handle(const Writer* w) {
  if (w == nullptr) return errno_error(Errc::invalid_argument, EBADF, "writer: the file handle is closed");
  return {};
}

}  // namespace

// ---- Names of xattrs -------------------------------------------------------------------

Result<XattrName> parse_xattr_name(std::string_view full) {
  if (full.empty() || full.size() > kXattrNameMax)
    return errno_error(Errc::invalid_argument, ERANGE, fmt("writer: an xattr name of %llu bytes (1 to 255, XATTR_NAME_MAX)", full.size()));
  // xattr_resolve_name() in fs/xattr.c over f2fs_xattr_handlers[].
  static constexpr struct {
    std::string_view prefix;
    std::uint8_t index;
    bool whole;  ///< the handler names one attribute (no suffix)
  } kMap[] = {{"user.", xattr_index::user, false},
              {"system.posix_acl_access", xattr_index::posix_acl_access, true},
              {"system.posix_acl_default", xattr_index::posix_acl_default, true},
              {"trusted.", xattr_index::trusted, false},
              {"system.advise", xattr_index::advise, true},
              {"security.", xattr_index::security, false}};
  for (const auto& m : kMap) {
    if (m.whole ? full != m.prefix : !has_prefix(full, m.prefix)) continue;
    if (!m.whole && full.size() == m.prefix.size())
      return errno_error(Errc::invalid_argument, EINVAL, "writer: the xattr name \"" + std::string(full) + "\" is a bare prefix");
    return XattrName{m.index, std::string(full.substr(m.whole ? full.size() : m.prefix.size()))};
  }
  return errno_error(Errc::unsupported, EOPNOTSUPP,
                     "writer: the xattr name \"" + std::string(full) + "\" has no prefix f2fs handles (EOPNOTSUPP)");
}

std::string xattr_full_name(std::uint8_t index, std::string_view name) {
  switch (index) {
    case xattr_index::user: return "user." + std::string(name);
    case xattr_index::posix_acl_access: return "system.posix_acl_access";
    case xattr_index::posix_acl_default: return "system.posix_acl_default";
    case xattr_index::trusted: return "trusted." + std::string(name);
    case xattr_index::security: return "security." + std::string(name);
    default: return {};
  }
}

// ---- Writer: by path ---------------------------------------------------------------------

// path_openat(): open_last_lookups(), do_open(), may_open() in fs/namei.c.
Result<FileHandle> Writer::open(std::string_view path, std::uint32_t flags, std::uint16_t mode) {
  F2FSCORE_WRITER_LOCK(impl_);
  Impl& w = *impl_;
  F2FSCORE_PTRY(w.usable(false));
  if (flags & (kOPath | kOTmpfile)) return make_error(posix_error(Error{Errc::unsupported, EOPNOTSUPP, Error::kNoOffset, "writer: O_PATH and O_TMPFILE are not supported"}));
  const std::uint32_t acc = flags & open_flag::accmode;
  const bool creat = flags & open_flag::creat, excl = creat && (flags & open_flag::excl);
  const bool trunc = flags & open_flag::trunc;
  if (creat && (flags & open_flag::directory))
    return make_error(Error{Errc::invalid_argument, EINVAL, Error::kNoOffset, "writer: O_CREAT with O_DIRECTORY"});
  if (path.empty() || path[0] != '/')
    return make_error(Error{Errc::invalid_argument, path.empty() ? ENOENT : EINVAL, Error::kNoOffset,
                            "writer: paths are absolute: \"" + std::string(path) + "\""});
  int links = 0;
  // O_EXCL with O_CREAT follows no symlink at the end (build_open_flags()).
  auto f = walk(*this, w, w.sb.root_ino.get(), path, !(flags & open_flag::nofollow) && !excl, links);
  if (!f) return make_error(posix_error(std::move(f.error())));
  if (creat && f->slash) return make_error(Error{Errc::invalid_argument, EISDIR, Error::kNoOffset, "writer: O_CREAT of a path ending in '/'"});
  if (f->ino == 0) {
    if (!creat) return make_error(Error{Errc::not_found, ENOENT, Error::kNoOffset, "writer: \"" + std::string(path) + "\" does not exist"});
    if (w.opts.read_only) return make_error(Error{Errc::read_only, EROFS, Error::kNoOffset, "writer: the volume is mounted read-only"});
    auto ino = mknod_at(f->parent, f->leaf, static_cast<std::uint16_t>(kReg | (mode & 07777)));
    if (!ino) return make_error(posix_error(std::move(ino.error())));
    F2FSCORE_PTRY(open(*ino));
    return FileHandle(this, *ino, flags);
  }
  const std::uint16_t type = f->mode & kTypeMask;
  if (excl) return make_error(Error{Errc::exists, EEXIST, Error::kNoOffset, "writer: \"" + std::string(path) + "\" exists"});
  if (creat && type == kDir) return make_error(Error{Errc::invalid_argument, EISDIR, Error::kNoOffset, "writer: \"" + std::string(path) + "\" is a directory"});
  if (((flags & open_flag::directory) || f->slash) && type != kDir)
    return make_error(Error{Errc::invalid_argument, ENOTDIR, Error::kNoOffset, "writer: \"" + std::string(path) + "\" is not a directory"});
  if (type == kLnk) return make_error(Error{Errc::invalid_argument, ELOOP, Error::kNoOffset, "writer: \"" + std::string(path) + "\" is a symlink (O_NOFOLLOW)"});
  // A socket has no open (ENXIO); a FIFO opened for writing only finds no
  // reader (fifo_open() with O_NONBLOCK: ENXIO; the writer never blocks).
  if (type == kSock || (type == kFifo && acc == open_flag::wronly))
    return make_error(Error{Errc::unsupported, ENXIO, Error::kNoOffset, "writer: \"" + std::string(path) + "\" is a socket or a FIFO without a reader"});
  const bool wants_write = acc != open_flag::rdonly || trunc;
  if (type == kDir && wants_write)
    return make_error(Error{Errc::invalid_argument, EISDIR, Error::kNoOffset, "writer: a directory opened for writing"});
  if (w.opts.read_only && wants_write && (type == kReg || type == kDir))
    return make_error(Error{Errc::read_only, EROFS, Error::kNoOffset, "writer: the volume is mounted read-only"});
  // may_open() (immutable and append-only inodes: open(nid_t, flags)),
  // then handle_truncate().
  F2FSCORE_PTRY(open(f->ino, flags));
  if (type == kReg && trunc) {
    if (auto t = truncate(f->ino, 0); !t) {
      (void)release(f->ino);
      return make_error(posix_error(std::move(t.error())));
    }
  }
  return FileHandle(this, f->ino, flags);
}

Result<WriterStat> Writer::stat(std::string_view path, bool follow) {
  F2FSCORE_WRITER_LOCK(impl_);
  F2FSCORE_PTRY(impl_->usable(false));
  auto f = existing(*this, *impl_, path, follow);
  if (!f) return make_error(posix_error(std::move(f.error())));
  return posix(stat(f->ino));
}

Status Writer::setattr(std::string_view path, const SetAttr& attr, bool follow) {
  F2FSCORE_WRITER_LOCK(impl_);
  F2FSCORE_PTRY(impl_->usable(false));
  auto f = existing(*this, *impl_, path, follow);
  if (!f) return make_error(posix_error(std::move(f.error())));
  return posix(setattr(f->ino, attr));
}

// vfs_truncate() in fs/open.c.
Status Writer::truncate(std::string_view path, std::uint64_t size) {
  F2FSCORE_WRITER_LOCK(impl_);
  F2FSCORE_PTRY(impl_->usable(false));
  if (size > kMaxOff) return make_error(Error{Errc::invalid_argument, EINVAL, Error::kNoOffset, "writer: a negative size"});
  auto f = existing(*this, *impl_, path, true);
  if (!f) return make_error(posix_error(std::move(f.error())));
  if (is_type(f->mode, kDir)) return make_error(Error{Errc::invalid_argument, EISDIR, Error::kNoOffset, "writer: truncate of a directory"});
  if (!is_type(f->mode, kReg)) return make_error(Error{Errc::invalid_argument, EINVAL, Error::kNoOffset, "writer: truncate of a non-regular file"});
  return posix(truncate(f->ino, size));
}

Result<std::vector<Dirent>> Writer::readdir(std::string_view path) {
  F2FSCORE_WRITER_LOCK(impl_);
  F2FSCORE_PTRY(impl_->usable(false));
  auto f = existing(*this, *impl_, path, true);
  if (!f) return make_error(posix_error(std::move(f.error())));
  return posix(readdir_ino(*this, *impl_, f->ino));
}

Result<std::vector<std::uint8_t>> Writer::getxattr(std::string_view path, std::string_view name, bool follow) {
  F2FSCORE_WRITER_LOCK(impl_);
  F2FSCORE_PTRY(impl_->usable(false));
  auto f = existing(*this, *impl_, path, follow);
  if (!f) return make_error(posix_error(std::move(f.error())));
  return posix(getxattr_ino(*this, *impl_, f->ino, name));
}

Status Writer::setxattr(std::string_view path, std::string_view name, std::span<const std::uint8_t> value, XattrSet how,
                        bool follow) {
  F2FSCORE_WRITER_LOCK(impl_);
  F2FSCORE_PTRY(impl_->usable(false));
  auto f = existing(*this, *impl_, path, follow);
  if (!f) return make_error(posix_error(std::move(f.error())));
  return posix(setxattr_ino(*this, *impl_, f->ino, name, &value, how));
}

Result<std::vector<std::string>> Writer::listxattr(std::string_view path, bool follow) {
  F2FSCORE_WRITER_LOCK(impl_);
  F2FSCORE_PTRY(impl_->usable(false));
  auto f = existing(*this, *impl_, path, follow);
  if (!f) return make_error(posix_error(std::move(f.error())));
  return posix(listxattr_ino(*this, f->ino));
}

Status Writer::removexattr(std::string_view path, std::string_view name, bool follow) {
  F2FSCORE_WRITER_LOCK(impl_);
  F2FSCORE_PTRY(impl_->usable(false));
  auto f = existing(*this, *impl_, path, follow);
  if (!f) return make_error(posix_error(std::move(f.error())));
  return posix(setxattr_ino(*this, *impl_, f->ino, name, nullptr, XattrSet::replace));
}

Result<std::vector<std::uint8_t>> Writer::getxattr_at(nid_t ino, std::string_view name) {
  F2FSCORE_WRITER_LOCK(impl_);
  F2FSCORE_PTRY(impl_->usable(false));
  return posix(getxattr_ino(*this, *impl_, ino, name));
}

Status Writer::setxattr_at(nid_t ino, std::string_view name, std::span<const std::uint8_t> value, XattrSet how) {
  F2FSCORE_WRITER_LOCK(impl_);
  F2FSCORE_PTRY(impl_->usable(false));
  return posix(setxattr_ino(*this, *impl_, ino, name, &value, how));
}

Status Writer::removexattr_at(nid_t ino, std::string_view name) {
  F2FSCORE_WRITER_LOCK(impl_);
  F2FSCORE_PTRY(impl_->usable(false));
  return posix(setxattr_ino(*this, *impl_, ino, name, nullptr, XattrSet::replace));
}

// ---- FileHandle ---------------------------------------------------------------------------

FileHandle::~FileHandle() {
  if (w_ != nullptr) (void)close();
}

FileHandle::FileHandle(FileHandle&& o) noexcept : w_(o.w_), ino_(o.ino_), flags_(o.flags_), pos_(o.pos_) { o.w_ = nullptr; }

FileHandle& FileHandle::operator=(FileHandle&& o) noexcept {
  if (this != &o) {
    if (w_ != nullptr) (void)close();
    w_ = o.w_, ino_ = o.ino_, flags_ = o.flags_, pos_ = o.pos_;
    o.w_ = nullptr;
  }
  return *this;
}

Status FileHandle::close() {
  F2FSCORE_PTRY(check_handle(w_));
  Writer* w = w_;
  w_ = nullptr;
  std::lock_guard<std::recursive_mutex> lock(w->impl_->mu);
  if (!w->impl_->ok()) return {};  // unmount() released every open file
  return posix(w->release(ino_));
}

// vfs_read(): EBADF without FMODE_READ, EINVAL for a negative position,
// then the file type (generic_read_dir(): EISDIR).
Result<std::size_t> FileHandle::do_read(std::span<std::uint8_t> out, std::uint64_t offset, bool advance) {
  F2FSCORE_PTRY(check_handle(w_));
  std::lock_guard<std::recursive_mutex> lock(w_->impl_->mu);
  const std::uint32_t acc = flags_ & open_flag::accmode;
  if (acc != open_flag::rdonly && acc != open_flag::rdwr)
    return make_error(Error{Errc::invalid_argument, EBADF, Error::kNoOffset, "writer: the handle is not open for reading"});
  if (offset > kMaxOff) return make_error(Error{Errc::invalid_argument, EINVAL, Error::kNoOffset, "writer: a negative offset"});
  auto st = w_->stat(ino_);
  if (!st) return make_error(posix_error(std::move(st.error())));
  if (st->is_dir()) return make_error(Error{Errc::invalid_argument, EISDIR, Error::kNoOffset, "writer: read of a directory"});
  // A FIFO reads as a pipe no one writes to (pipe_read(): 0).
  if (is_type(st->mode, kFifo)) return std::size_t{0};
  if (!st->is_reg()) return make_error(Error{Errc::invalid_argument, EINVAL, Error::kNoOffset, "writer: read of a device node"});
  auto n = w_->read(ino_, offset, out);
  if (!n) return make_error(posix_error(std::move(n.error())));
  if (advance) pos_ = offset + *n;
  return n;
}

// vfs_write() and generic_write_checks(): EBADF without FMODE_WRITE, EINVAL
// for a negative position; O_APPEND writes at i_size (pwrite too).
Result<std::size_t> FileHandle::do_write(std::span<const std::uint8_t> data, std::uint64_t offset, bool advance) {
  F2FSCORE_PTRY(check_handle(w_));
  std::lock_guard<std::recursive_mutex> lock(w_->impl_->mu);
  const std::uint32_t acc = flags_ & open_flag::accmode;
  if (acc != open_flag::wronly && acc != open_flag::rdwr)
    return make_error(Error{Errc::invalid_argument, EBADF, Error::kNoOffset, "writer: the handle is not open for writing"});
  if (offset > kMaxOff) return make_error(Error{Errc::invalid_argument, EINVAL, Error::kNoOffset, "writer: a negative offset"});
  auto st = w_->stat(ino_);
  if (!st) return make_error(posix_error(std::move(st.error())));
  if (!st->is_reg()) return make_error(Error{Errc::invalid_argument, EINVAL, Error::kNoOffset, "writer: write to a special file"});
  if (flags_ & open_flag::append) offset = st->size;
  // f2fs_write_checks() runs for an empty write too (EPERM when immutable).
  F2FSCORE_PTRY(w_->impl_->refuse_flagged(ino_, false, "no writes"));
  F2FSCORE_PTRY(w_->impl_->refuse_verity(ino_, "no writes"));
  WriteFlags wf;
  wf.direct = flags_ & open_flag::direct;
  wf.dsync = (flags_ & open_flag::dsync) != 0;
  if (data.empty()) return std::size_t{0};
  auto n = w_->write(ino_, offset, data, wf);
  if (!n) return make_error(posix_error(std::move(n.error())));
  if (advance) pos_ = offset + *n;
  return n;
}

Result<std::size_t> FileHandle::read(std::span<std::uint8_t> out) { return do_read(out, pos_, true); }
Result<std::size_t> FileHandle::write(std::span<const std::uint8_t> data) { return do_write(data, pos_, true); }
Result<std::size_t> FileHandle::pread(std::span<std::uint8_t> out, std::uint64_t offset) { return do_read(out, offset, false); }
Result<std::size_t> FileHandle::pwrite(std::span<const std::uint8_t> data, std::uint64_t offset) {
  return do_write(data, offset, false);
}

// generic_file_llseek_size() for set/cur/end; f2fs_llseek() ->
// f2fs_seek_block() for data/hole of a regular file.
Result<std::uint64_t> FileHandle::seek(std::int64_t offset, Whence whence) {
  F2FSCORE_PTRY(check_handle(w_));
  std::lock_guard<std::recursive_mutex> lock(w_->impl_->mu);
  auto st = w_->stat(ino_);
  if (!st) return make_error(posix_error(std::move(st.error())));
  const auto size = static_cast<std::int64_t>(std::min<std::uint64_t>(st->size, kMaxOff));
  std::int64_t pos = 0;
  switch (whence) {
    case Whence::set: pos = offset; break;
    case Whence::cur:
      if ((offset > 0 && static_cast<std::int64_t>(pos_) > INT64_MAX - offset)) pos = -1;
      else pos = static_cast<std::int64_t>(pos_) + offset;
      break;
    case Whence::end: pos = offset > 0 && size > INT64_MAX - offset ? -1 : size + offset; break;
    case Whence::data:
    case Whence::hole: {
      const bool hole = whence == Whence::hole;
      if (offset < 0 || offset >= size)
        return make_error(Error{Errc::invalid_argument, ENXIO, Error::kNoOffset, "writer: seek at or past the end of the file"});
      if (st->is_reg()) {
        auto r = w_->seek_data(ino_, static_cast<std::uint64_t>(offset), hole);
        if (!r) return make_error(posix_error(std::move(r.error())));
        pos_ = *r;
        return *r;
      }
      pos = hole ? size : offset;
      break;
    }
    default: return make_error(Error{Errc::invalid_argument, EINVAL, Error::kNoOffset, "writer: an unknown whence"});
  }
  if (pos < 0) return make_error(Error{Errc::invalid_argument, EINVAL, Error::kNoOffset, "writer: a negative position"});
  pos_ = static_cast<std::uint64_t>(pos);
  return pos_;
}

// f2fs_sync_file(): nothing on a read-only mount; a checkpoint or an
// fsync-marked node chain otherwise (Writer::fsync()).
Result<SyncReport> FileHandle::do_sync(bool datasync) {
  F2FSCORE_PTRY(check_handle(w_));
  Writer::Impl& w = *w_->impl_;
  F2FSCORE_WRITER_LOCK(&w);
  if (w.ok() && w.opts.read_only) return SyncReport{};
  F2FSCORE_PTRY(w.usable(true));
  const std::uint64_t before = w.stats.checkpoints;
  F2FSCORE_PTRY(w.fsync_file(ino_, datasync));
  return SyncReport{w.stats.checkpoints != before};
}

Result<SyncReport> FileHandle::fsync() { return do_sync(false); }
Result<SyncReport> FileHandle::fdatasync() { return do_sync(true); }

// do_sys_ftruncate() in fs/open.c.
Status FileHandle::truncate(std::uint64_t size) {
  F2FSCORE_PTRY(check_handle(w_));
  std::lock_guard<std::recursive_mutex> lock(w_->impl_->mu);
  if (size > kMaxOff) return make_error(Error{Errc::invalid_argument, EINVAL, Error::kNoOffset, "writer: a negative size"});
  auto st = w_->stat(ino_);
  if (!st) return make_error(posix_error(std::move(st.error())));
  const std::uint32_t acc = flags_ & open_flag::accmode;
  if (!st->is_reg() || (acc != open_flag::wronly && acc != open_flag::rdwr))
    return make_error(Error{Errc::invalid_argument, EINVAL, Error::kNoOffset, "writer: ftruncate needs a regular file open for writing"});
  return posix(w_->truncate(ino_, size));
}

// vfs_fallocate() in fs/open.c, then f2fs_fallocate() in fs/f2fs/file.c.
Status FileHandle::fallocate(std::uint32_t mode, std::uint64_t offset, std::uint64_t length) {
  F2FSCORE_PTRY(check_handle(w_));
  std::lock_guard<std::recursive_mutex> lock(w_->impl_->mu);
  constexpr std::uint32_t kCollapse = 0x08, kInsert = 0x20, kUnshare = 0x40, kNoHideStale = 0x04;
  constexpr std::uint32_t kSupported = falloc::keep_size | falloc::punch_hole | kNoHideStale | kCollapse | falloc::zero_range |
                                       kInsert | kUnshare;
  auto err = [](int e, const char* what) { return make_error(Error{e == EOPNOTSUPP ? Errc::unsupported : Errc::invalid_argument, e, Error::kNoOffset, what}); };
  if (offset > kMaxOff || length == 0 || length > kMaxOff) return err(EINVAL, "writer: fallocate: a negative offset or a length of 0 or less");
  if (mode & ~kSupported) return err(EOPNOTSUPP, "writer: fallocate: unknown mode bits");
  if ((mode & falloc::punch_hole) && (mode & falloc::zero_range)) return err(EOPNOTSUPP, "writer: fallocate: punch_hole with zero_range");
  if ((mode & falloc::punch_hole) && !(mode & falloc::keep_size)) return err(EOPNOTSUPP, "writer: fallocate: punch_hole without keep_size");
  if ((mode & kCollapse) && (mode & ~kCollapse)) return err(EINVAL, "writer: fallocate: collapse_range with other modes");
  if ((mode & kInsert) && (mode & ~kInsert)) return err(EINVAL, "writer: fallocate: insert_range with other modes");
  if ((mode & kUnshare) && (mode & ~(kUnshare | falloc::keep_size))) return err(EINVAL, "writer: fallocate: unshare_range with other modes");
  const std::uint32_t acc = flags_ & open_flag::accmode;
  if (acc != open_flag::wronly && acc != open_flag::rdwr) return err(EBADF, "writer: the handle is not open for writing");
  if (mode & ~falloc::keep_size) F2FSCORE_PTRY(w_->impl_->refuse_flagged(ino_, true, "fallocate other than preallocation"));
  F2FSCORE_PTRY(w_->impl_->refuse_flagged(ino_, false, "fallocate"));
  F2FSCORE_PTRY(w_->impl_->refuse_verity(ino_, "no fallocate"));
  auto st = w_->stat(ino_);
  if (!st) return make_error(posix_error(std::move(st.error())));
  if (is_type(st->mode, kFifo)) return err(ESPIPE, "writer: fallocate on a FIFO");
  if (st->is_dir()) return err(EISDIR, "writer: fallocate on a directory");
  if (!st->is_reg()) return err(ENODEV, "writer: fallocate on a special file");
  if (mode & (kNoHideStale | kUnshare | kCollapse | kInsert))
    return err(EOPNOTSUPP, "writer: fallocate: collapse_range, insert_range, unshare_range and no_hide_stale are not supported");
  return posix(w_->fallocate(ino_, mode, offset, length));
}

Result<WriterStat> FileHandle::stat() {
  F2FSCORE_PTRY(check_handle(w_));
  return posix(w_->stat(ino_));
}

Status FileHandle::setattr(const SetAttr& attr) {
  F2FSCORE_PTRY(check_handle(w_));
  return posix(w_->setattr(ino_, attr));
}

Result<std::vector<Dirent>> FileHandle::readdir() {
  F2FSCORE_PTRY(check_handle(w_));
  F2FSCORE_WRITER_LOCK(w_->impl_);
  F2FSCORE_PTRY(w_->impl_->usable(false));
  return posix(readdir_ino(*w_, *w_->impl_, ino_));
}

Result<std::vector<std::uint8_t>> FileHandle::getxattr(std::string_view name) {
  F2FSCORE_PTRY(check_handle(w_));
  F2FSCORE_WRITER_LOCK(w_->impl_);
  F2FSCORE_PTRY(w_->impl_->usable(false));
  return posix(getxattr_ino(*w_, *w_->impl_, ino_, name));
}

Status FileHandle::setxattr(std::string_view name, std::span<const std::uint8_t> value, XattrSet how) {
  F2FSCORE_PTRY(check_handle(w_));
  F2FSCORE_WRITER_LOCK(w_->impl_);
  return posix(setxattr_ino(*w_, *w_->impl_, ino_, name, &value, how));
}

Result<std::vector<std::string>> FileHandle::listxattr() {
  F2FSCORE_PTRY(check_handle(w_));
  F2FSCORE_WRITER_LOCK(w_->impl_);
  F2FSCORE_PTRY(w_->impl_->usable(false));
  return posix(listxattr_ino(*w_, ino_));
}

Status FileHandle::removexattr(std::string_view name) {
  F2FSCORE_PTRY(check_handle(w_));
  F2FSCORE_WRITER_LOCK(w_->impl_);
  return posix(setxattr_ino(*w_, *w_->impl_, ino_, name, nullptr, XattrSet::replace));
}

}  // namespace f2fscore
