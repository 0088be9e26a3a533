// Space reclaim: SSR and garbage collection (docs/gc.md). Not yet.
#include "writer_internal.hpp"

namespace f2fscore {

Result<std::uint32_t> Writer::Impl::gc_foreground(std::uint32_t) {
  return make_error(Errc::unsupported, "writer: garbage collection is not implemented yet");
}

Result<std::uint32_t> Writer::gc(std::uint32_t sections) {
  F2FS_WRITER_LOCK(impl_);
  F2FS_TRY(impl_->usable(true));
  return impl_->gc_foreground(sections);
}

}  // namespace f2fscore
