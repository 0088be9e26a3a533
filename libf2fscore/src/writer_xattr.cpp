// Extended attributes: the inline xattr area and the xattr node
// (docs/writer.md). Not yet.
#include "writer_internal.hpp"

namespace f2fscore {

static tl::unexpected<Error> not_yet(const char* what) {
  return make_error(Errc::unsupported, std::string("writer: ") + what + " is not implemented yet");
}

Status Writer::setxattr(nid_t, std::uint8_t, std::string_view, std::span<const std::uint8_t>, XattrSet) {
  return not_yet("setxattr");
}
Result<std::vector<std::uint8_t>> Writer::getxattr(nid_t, std::uint8_t, std::string_view) { return not_yet("getxattr"); }
Result<std::vector<XattrItem>> Writer::listxattr(nid_t) { return not_yet("listxattr"); }
Status Writer::removexattr(nid_t, std::uint8_t, std::string_view) { return not_yet("removexattr"); }

}  // namespace f2fscore
