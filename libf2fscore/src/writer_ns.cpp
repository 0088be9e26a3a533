// Namespace operations: rename, link, symlink, mknod, setattr, open files
// and fallocate (docs/writer.md). Not yet.
#include "writer_internal.hpp"

namespace f2fscore {

static tl::unexpected<Error> not_yet(const char* what) {
  return make_error(Errc::unsupported, std::string("writer: ") + what + " is not implemented yet");
}

Status Writer::rename(std::string_view, std::string_view) { return not_yet("rename"); }
Status Writer::link(std::string_view, std::string_view) { return not_yet("link"); }
Result<nid_t> Writer::symlink(std::string_view, std::string_view) { return not_yet("symlink"); }
Result<std::string> Writer::readlink(nid_t) { return not_yet("readlink"); }
Result<nid_t> Writer::mknod(std::string_view, std::uint16_t, std::uint32_t) { return not_yet("mknod"); }
Status Writer::setattr(nid_t, const SetAttr&) { return not_yet("setattr"); }
Status Writer::open(nid_t) { return not_yet("open"); }
Status Writer::release(nid_t) { return not_yet("release"); }
Status Writer::fallocate(nid_t, std::uint32_t, std::uint64_t, std::uint64_t) { return not_yet("fallocate"); }

}  // namespace f2fscore
