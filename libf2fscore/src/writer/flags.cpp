// Inode flags (FS_IOC_GETFLAGS / FS_IOC_SETFLAGS): f2fs_fileattr_get(),
// f2fs_fileattr_set() and f2fs_setflags_common() in fs/f2fs/file.c, with
// the VFS's part (vfs_fileattr_set() and fileattr_set_prepare() in
// fs/ioctl.c); and what the VFS refuses on immutable and append-only
// inodes (may_delete(), may_create() in fs/namei.c).
#include <cerrno>

#include "meta/meta_internal.hpp"
#include "writer/writer_internal.hpp"

namespace f2fscore {

using namespace disk;
using meta::fmt;

namespace {

Result<Node*> flag_inode(Writer::Impl& w, nid_t ino) {
  if (ino == 0 || ino >= w.max_nid || w.nm.get(ino).ino != ino || w.nm.get(ino).addr == kNullAddr)
    return errno_error(Errc::not_found, ENOENT, fmt("writer: no inode %llu", ino));
  return w.node(ino);
}

// f2fs_mask_flags() in fs/f2fs/f2fs.h: a directory keeps every flag, a
// regular file all but F2FS_DIRSYNC_FL, F2FS_PROJINHERIT_FL and
// F2FS_CASEFOLD_FL (F2FS_REG_FLMASK), other types only F2FS_NODUMP_FL and
// F2FS_NOATIME_FL (F2FS_OTHER_FLMASK: what they inherit).
std::uint32_t mask_flags(std::uint16_t mode, std::uint32_t flags) {
  switch (mode & 0xF000) {
    case 0x4000: return flags;
    case 0x8000: return flags & ~(iflag::dirsync | iflag::projinherit | iflag::casefold);
    default: return flags & (iflag::nodump | iflag::noatime);
  }
}

}  // namespace

std::uint32_t Writer::Impl::inherited_flags(const Node& dir, std::uint16_t mode) {
  constexpr std::uint32_t kInherited =
      iflag::sync | iflag::nodump | iflag::noatime | iflag::dirsync | iflag::projinherit | iflag::casefold;
  return mask_flags(mode, dir.i.i_flags.get() & kInherited);
}

Status Writer::Impl::refuse_flagged(nid_t ino, bool append_too, const char* what) {
  F2FSCORE_TRY(need_key(ino, "a change"));
  auto in = node(ino);
  if (!in) return make_error(in.error());
  const std::uint32_t f = (*in)->i.i_flags.get();
  if (f & iflag::immutable)
    return errno_error(Errc::read_only, EPERM,
                       fmt("writer: inode %llu is immutable (F2FS_IMMUTABLE_FL): ", ino) + what + " (EPERM)");
  if (append_too && (f & iflag::append))
    return errno_error(Errc::read_only, EPERM,
                       fmt("writer: inode %llu is append-only (F2FS_APPEND_FL): ", ino) + what + " (EPERM)");
  return {};
}

Status Writer::Impl::may_delete(nid_t dir, nid_t victim) {
  F2FSCORE_TRY(refuse_flagged(dir, true, "a name removed from an immutable or append-only directory"));
  return refuse_flagged(victim, true, "an immutable or append-only inode loses a name");
}

Status Writer::Impl::dirsync(nid_t dir) {
  auto d = node(dir);
  if (!d) return make_error(d.error());
  if (!((*d)->i.i_flags.get() & (iflag::dirsync | iflag::sync))) return {};
  auto r = checkpoint(false);
  if (!r) unmounted = true;
  return r;
}

// f2fs_fileattr_get(): i_flags of F2FS_GETTABLE_FS_FL, and the bits other
// state gives: FS_ENCRYPT_FL (FADVISE_ENCRYPT_BIT), FS_VERITY_FL
// (FADVISE_VERITY_BIT), FS_INLINE_DATA_FL (inline data or dentries),
// FS_NOCOW_FL (F2FS_PIN_FILE).
Result<std::uint32_t> Writer::get_flags(nid_t ino) {
  F2FSCORE_WRITER_LOCK(impl_);
  F2FSCORE_TRY(impl_->usable(false));
  auto in = flag_inode(*impl_, ino);
  if (!in) return make_error(in.error());
  const Node& n = **in;
  std::uint32_t f = n.i.i_flags.get();
  if (n.i.i_advise & advise::encrypt) f |= fs_flag::encrypt;
  if (n.i.i_advise & advise::verity) f |= fs_flag::verity;
  if (n.i.i_inline & (inline_flag::data | inline_flag::dentry)) f |= fs_flag::inline_data;
  if (n.i.i_inline & inline_flag::pin_file) f |= fs_flag::nocow;
  return f & fs_flag::gettable;
}

// FS_IOC_SETFLAGS in Linux 6.1, in order: vfs_fileattr_set() (the owner
// check is the caller's) and fileattr_set_prepare() (a change of
// FS_IMMUTABLE_FL or FS_APPEND_FL needs CAP_LINUX_IMMUTABLE: EPERM);
// f2fs_fileattr_set() (a bit outside F2FS_GETTABLE_FS_FL: EOPNOTSUPP;
// only F2FS_SETTABLE_FS_FL is kept; a bit f2fs_mask_flags() drops for the
// inode's type: EOPNOTSUPP); f2fs_setflags_common() (a quota file: EPERM;
// a change of F2FS_CASEFOLD_FL needs the casefold feature, EOPNOTSUPP,
// and an empty directory, ENOTEMPTY; F2FS_COMPR_FL or F2FS_NOCOMP_FL
// need the compression feature, EOPNOTSUPP, and not both, EINVAL;
// clearing F2FS_COMPR_FL needs a file without data blocks
// (f2fs_disable_compressed_file(): EINVAL); setting it first converts
// inline data (f2fs_convert_inline_inode(), kept when the rest fails), then
// needs f2fs_may_compress() and no data blocks (EINVAL); then the flags,
// ctime now).
Status Writer::set_flags(nid_t ino, std::uint32_t flags, std::uint32_t mask, bool cap_linux_immutable) {
  F2FSCORE_WRITER_LOCK(impl_);
  F2FSCORE_TRY(impl_->usable(true));
  Impl& w = *impl_;
  auto in = flag_inode(w, ino);
  if (!in) return make_error(in.error());
  F2FSCORE_TRY(w.need_key(ino, "FS_IOC_SETFLAGS"));
  in = flag_inode(w, ino);
  if (!in) return make_error(in.error());
  const std::uint32_t old = (*in)->i.i_flags.get();
  const std::uint16_t mode = (*in)->i.i_mode.get();
  // Only f2fs_file_inode_operations and f2fs_dir_inode_operations have
  // fileattr_set: on other types vfs_fileattr_set() gives ENOIOCTLCMD,
  // which the ioctl reports as ENOTTY.
  if ((mode & 0xF000) != 0x8000 && (mode & 0xF000) != 0x4000)
    return errno_error(Errc::unsupported, ENOTTY,
                       fmt("writer: inode %llu is not a regular file or directory: no FS_IOC_SETFLAGS (ENOTTY)", ino));
  const std::uint32_t asked = flags & mask;
  if (!cap_linux_immutable && ((asked ^ old) & mask & (iflag::immutable | iflag::append)))
    return errno_error(Errc::read_only, EPERM,
                       fmt("writer: inode %llu: changing F2FS_IMMUTABLE_FL or F2FS_APPEND_FL needs "
                           "CAP_LINUX_IMMUTABLE (EPERM)",
                           ino));
  if (asked & ~fs_flag::gettable)
    return errno_error(Errc::unsupported, EOPNOTSUPP,
                       fmt("writer: inode %llu: flags 0x%llx are not f2fs flags (F2FS_GETTABLE_FS_FL; EOPNOTSUPP)", ino,
                           asked & ~fs_flag::gettable));
  const std::uint32_t iflags = asked & fs_flag::settable;
  const std::uint32_t imask = mask & fs_flag::settable;
  if (mask_flags(mode, iflags) != iflags)
    return errno_error(Errc::unsupported, EOPNOTSUPP,
                       fmt("writer: inode %llu (mode 0%llo) cannot carry flags 0x%llx (f2fs_mask_flags(); EOPNOTSUPP)",
                           ino, mode, iflags & ~mask_flags(mode, iflags)));
  if (w.is_quota_file(ino)) return errno_error(Errc::read_only, EPERM, fmt("writer: inode %llu is a quota file (EPERM)", ino));
  const std::uint32_t masked_old = old & imask;
  if ((iflags ^ masked_old) & iflag::casefold) {
    if (!(w.sb.feature.get() & feature::casefold))
      return errno_error(Errc::unsupported, EOPNOTSUPP,
                         "writer: the volume has no casefold feature (EOPNOTSUPP; f2fscore-mkfs -O casefold -C utf8)");
    auto empty = w.dir_empty(ino);
    if (!empty) return make_error(empty.error());
    if (!*empty)
      return errno_error(Errc::exists, ENOTEMPTY,
                         fmt("writer: directory %llu has entries: the casefold flag changes only on an empty "
                             "directory (ENOTEMPTY)",
                             ino));
  }
  if (iflags & (iflag::compr | iflag::nocomp)) {
    if (!(w.sb.feature.get() & feature::compression))
      return errno_error(Errc::unsupported, EOPNOTSUPP,
                         "writer: the volume has no compression feature (EOPNOTSUPP; f2fscore-mkfs -O "
                         "extra_attr,compression)");
    if ((iflags & iflag::compr) && (iflags & iflag::nocomp))
      return errno_error(Errc::invalid_argument, EINVAL,
                         fmt("writer: inode %llu: F2FS_COMPR_FL with F2FS_NOCOMP_FL (EINVAL)", ino));
  }
  const bool reg = (mode & 0xF000) == 0x8000;
  // Data blocks besides the inode and its xattr node (F2FS_HAS_BLOCKS()).
  auto has_blocks = [&](const Node& n) {
    return n.i.i_blocks.get() > 1 + (n.i.i_xattr_nid.get() != 0 ? 1u : 0u);
  };
  if (((iflags ^ masked_old) & iflag::compr) && (iflags & iflag::compr) && ((*in)->i.i_advise & advise::encrypt))
    return errno_error(Errc::unsupported, EOPNOTSUPP,
                       fmt("writer: inode %llu is encrypted: the writer does not compress encrypted files", ino));
  if ((iflags ^ masked_old) & iflag::compr) {
    if (masked_old & iflag::compr) {
      if (reg && has_blocks(**in))
        return errno_error(Errc::invalid_argument, EINVAL,
                           fmt("writer: inode %llu has data blocks: compression is cleared only on an empty file "
                               "(EINVAL)",
                               ino));
      (*in)->i.i_flags.set(old & ~iflag::compr);
    } else {
      if (reg) F2FSCORE_TRY(w.convert_inline_data(ino));
      auto ip = w.node(ino);
      if (!ip) return make_error(ip.error());
      const Node& n = **ip;
      // f2fs_may_compress(): a regular file or directory, not pinned
      // (nor atomic, swap or verity, which the writer does not make).
      const std::uint16_t type = mode & 0xF000;
      if ((type != 0x8000 && type != 0x4000) || (n.i.i_inline & inline_flag::pin_file) || (n.i.i_advise & advise::verity) ||
          (reg && has_blocks(n)))
        return errno_error(Errc::invalid_argument, EINVAL,
                           fmt("writer: inode %llu cannot become compressed: not a regular file or directory, "
                               "pinned, or holding data blocks (EINVAL)",
                               ino));
      F2FSCORE_TRY(w.set_compress_context(**ip));
    }
  }
  auto in2 = w.node(ino);
  if (!in2) return make_error(in2.error());
  (*in2)->i.i_flags.set(iflags | ((*in2)->i.i_flags.get() & ~imask));
  w.set_ctime(**in2);
  w.mark_dirty(ino);
  return {};
}

}  // namespace f2fscore
