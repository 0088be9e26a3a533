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

// ---- Free sections and need_SSR (first cut by helper ipu; the IPU policy's
// SSR and SSR_UTIL bits read need_ssr()) ---------------------------------------
namespace f2fscore {

std::uint32_t Writer::Impl::free_sections() const {
  const std::uint32_t nsecs = main_segs / segs_per_sec;
  std::uint32_t n = 0;
  for (std::uint32_t sec = 0; sec < nsecs; ++sec) {
    bool all = true;
    for (std::uint32_t s = sec * segs_per_sec; s < (sec + 1) * segs_per_sec && all; ++s) {
      all = seg_alloc[s] != 0;
      for (const auto& l : logs)
        if (l.segno == s) all = false;
    }
    n += all;
  }
  return n;
}

// f2fs_need_SSR(): free sections at most the dirty node, dentry (twice) and
// inode-metadata pages in sections, plus min_ssr_sections, plus the reserved
// sections. Dentry blocks and inode metadata reach their node pages at once
// here, so only dirty node pages count.
bool Writer::Impl::need_ssr() const {
  const std::uint64_t per_sec = static_cast<std::uint64_t>(segs_per_sec) * wr::kBlocksPerSeg;
  const std::uint64_t node_secs = (dirty.size() + per_sec - 1) / per_sec;
  const std::uint64_t reserved = cp.rsvd_segment_count.get() / segs_per_sec;
  return free_sections() <= node_secs + ipu.min_ssr_sections + reserved;
}

}  // namespace f2fscore
