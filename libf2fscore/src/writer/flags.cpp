// Inode flags (FS_IOC_GETFLAGS / FS_IOC_SETFLAGS): f2fs_fileattr_get(),
// f2fs_fileattr_set() and f2fs_setflags_common() in fs/f2fs/file.c.
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

}  // namespace

Result<std::uint32_t> Writer::get_flags(nid_t ino) {
  F2FSCORE_WRITER_LOCK(impl_);
  F2FSCORE_TRY(impl_->usable(false));
  auto in = flag_inode(*impl_, ino);
  if (!in) return make_error(in.error());
  return (*in)->i.i_flags.get();
}

// f2fs_setflags_common(): a quota file is EPERM; F2FS_COMPR_FL as below; a change of
// F2FS_CASEFOLD_FL needs the casefold feature (EOPNOTSUPP) and an empty
// directory (f2fs_empty_dir(): ENOTEMPTY); f2fs_fileattr_set() refuses a
// flag the inode's type cannot carry (f2fs_mask_flags(): EOPNOTSUPP).
Status Writer::set_flags(nid_t ino, std::uint32_t flags, std::uint32_t mask) {
  F2FSCORE_WRITER_LOCK(impl_);
  F2FSCORE_TRY(impl_->usable(true));
  Impl& w = *impl_;
  auto in = flag_inode(w, ino);
  if (!in) return make_error(in.error());
  const std::uint32_t old = (*in)->i.i_flags.get();
  const std::uint32_t want = (old & ~mask) | (flags & mask);
  const std::uint32_t changed = old ^ want;
  if (changed & ~(iflag::casefold | iflag::compr))
    return errno_error(Errc::unsupported, EOPNOTSUPP,
                       fmt("writer: inode %llu: changing i_flags bits 0x%llx is not supported (only "
                           "F2FS_CASEFOLD_FL 0x40000000 and F2FS_COMPR_FL 0x4)",
                           ino, changed & ~(iflag::casefold | iflag::compr)));
  const bool dir = ((*in)->i.i_mode.get() & 0xF000) == 0x4000;
  if (want & iflag::casefold && !dir)
    return errno_error(Errc::unsupported, EOPNOTSUPP,
                       fmt("writer: inode %llu is not a directory: only directories are casefolded (EOPNOTSUPP)", ino));
  if (w.is_quota_file(ino))
    return errno_error(Errc::invalid_argument, EPERM, fmt("writer: inode %llu is a quota file (EPERM)", ino));
  if (changed & iflag::casefold) {
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
  if (changed & iflag::compr) {
    // f2fs_setflags_common(): the feature (EOPNOTSUPP); a regular file or
    // directory, not pinned (f2fs_may_compress(): EINVAL); a regular file
    // without data blocks (F2FS_HAS_BLOCKS(): EINVAL), its empty inline
    // data converted first.
    if (!(w.sb.feature.get() & feature::compression))
      return errno_error(Errc::unsupported, EOPNOTSUPP,
                         "writer: the volume has no compression feature (EOPNOTSUPP; f2fscore-mkfs -O "
                         "extra_attr,compression)");
    auto ip = w.node(ino);
    if (!ip) return make_error(ip.error());
    const Node& n = **ip;
    const std::uint16_t type = n.i.i_mode.get() & 0xF000;
    if ((type != 0x8000 && type != 0x4000) || (n.i.i_inline & inline_flag::pin_file))
      return errno_error(Errc::invalid_argument, EINVAL,
                         fmt("writer: inode %llu is not a regular file or directory, or is pinned: it cannot be "
                             "compressed (EINVAL)",
                             ino));
    if (type == 0x8000) {
      const std::uint64_t meta_blocks = 1 + (n.i.i_xattr_nid.get() != 0 ? 1 : 0);
      const bool inline_data = (n.i.i_inline & inline_flag::data) && n.i.i_size.get() > 0;
      if (n.i.i_blocks.get() > meta_blocks || inline_data)
        return errno_error(Errc::invalid_argument, EINVAL,
                           fmt("writer: inode %llu has data: the compression flag changes only on an empty file "
                               "(EINVAL)",
                               ino));
      if (want & iflag::compr) F2FSCORE_TRY(w.convert_inline_data(ino));
    }
    auto ip2 = w.node(ino);
    if (!ip2) return make_error(ip2.error());
    if (want & iflag::compr) {
      F2FSCORE_TRY(w.set_compress_context(**ip2));
    } else {
      (*ip2)->i.i_flags.set((*ip2)->i.i_flags.get() & ~iflag::compr);
    }
  }
  auto in2 = w.node(ino);
  if (!in2) return make_error(in2.error());
  (*in2)->i.i_flags.set(want);
  w.set_ctime(**in2);
  w.mark_dirty(ino);
  return {};
}

}  // namespace f2fscore
