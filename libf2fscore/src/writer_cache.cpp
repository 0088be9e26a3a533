// The writer's page cache, periodic checkpoints and discard (docs/writer.md).
// First cut: no cache; a staged block goes to the device at once.
#include "writer_internal.hpp"

namespace f2fscore {

namespace wr {
struct PageCache {};
void PageCacheDeleter::operator()(PageCache* p) const noexcept { delete p; }
}  // namespace wr

Status Writer::Impl::cache_write(nid_t ino, std::uint64_t index, const std::uint8_t* block, std::uint8_t type) {
  return write_file_block(ino, index, block, type, {});
}

bool Writer::Impl::cache_read(nid_t, std::uint64_t, std::uint8_t*) { return false; }

Status Writer::Impl::writeback(nid_t, const wr::WriteContext&) { return {}; }

void Writer::Impl::cache_drop(nid_t, std::uint64_t, std::uint64_t) {}

std::uint64_t Writer::Impl::dirty_pages(nid_t) const { return 0; }

Status Writer::Impl::maybe_periodic_checkpoint() { return {}; }

}  // namespace f2fscore
