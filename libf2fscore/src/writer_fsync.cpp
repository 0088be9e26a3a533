// fsync and fdatasync, and roll-forward at mount (docs/writer.md).
// First cut: fsync takes a checkpoint; fsynced chains refuse the mount.
#include "meta_internal.hpp"
#include "writer_internal.hpp"

namespace f2fscore {

Status Writer::Impl::fsync_file(nid_t, bool) { return checkpoint(false); }

Status Writer::Impl::recover_fsync() {
  return make_error(Errc::unsupported, meta::fmt("writer: cannot mount read-write: %llu fsynced node blocks follow the "
                                                 "checkpoint and roll-forward is not implemented yet",
                                                 vol->open_report().pending_fsync_nodes));
}

Status Writer::fsync(nid_t ino) {
  F2FS_WRITER_LOCK(impl_);
  F2FS_TRY(impl_->usable(true));
  return impl_->fsync_file(ino, false);
}

Status Writer::fdatasync(nid_t ino) {
  F2FS_WRITER_LOCK(impl_);
  F2FS_TRY(impl_->usable(true));
  return impl_->fsync_file(ino, true);
}

}  // namespace f2fscore
