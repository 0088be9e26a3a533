// FileContexts in a build without libselinux (android_rules.hpp): every
// open() is refused.
#include "f2fscore/android_rules.hpp"

namespace f2fscore {

struct FileContexts::Handle {};

bool FileContexts::supported() { return false; }

FileContexts::FileContexts(std::unique_ptr<Handle> h) : h_(std::move(h)) {}
FileContexts::~FileContexts() = default;

Result<std::shared_ptr<const FileContexts>> FileContexts::open(const std::vector<std::string>&) {
  return make_error(Errc::unsupported,
                    "file_contexts: this build has no libselinux (Debian: libselinux1-dev); SELinux labels cannot be "
                    "looked up");
}

Result<std::string> FileContexts::lookup(const std::string& path, std::uint32_t) const {
  return make_error(Errc::unsupported, "no SELinux context for " + path + ": this build has no libselinux");
}

}  // namespace f2fscore
