// Helpers shared by the tests: fixtures, temporary files, external tools.
#pragma once

#include <cstdint>
#include <filesystem>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "f2fscore/device.hpp"
#include "support/assert_ok.hpp"

namespace f2fstest {

namespace fs = std::filesystem;

/// Directory holding decompressed fixtures (the build's testdata/).
fs::path data_dir();
/// ../shared/images beside the repository, if present.
std::optional<fs::path> shared_images_dir();
/// True when the environment asks interop tests to fail instead of skip
/// (F2FSCORE_REQUIRE_<what>=1).
bool required(const char* what);

/// Loads an image file into a sparse memory device (zero blocks are not stored).
std::unique_ptr<f2fscore::BlockDevice> load_image(const fs::path& path);

/// Decompresses a .zst fixture with the zstd tool into a fresh temp file.
std::optional<fs::path> unzstd(const fs::path& src);

/// A temporary directory removed at destruction.
class TempDir {
 public:
  TempDir();
  ~TempDir();
  const fs::path& path() const { return path_; }
  fs::path operator/(const std::string& name) const { return path_ / name; }

 private:
  fs::path path_;
};

/// Creates (or truncates) a sparse file of `bytes`.
void make_sparse_file(const fs::path& path, std::uint64_t bytes);

struct CommandResult {
  int exit_code = -1;  ///< -1 if it did not exit normally
  std::string output;  ///< stdout and stderr together
};
/// Runs a shell command with stdin from /dev/null.
CommandResult run(const std::string& command);
std::string shell_quote(const std::string& s);

/// Absolute paths of the reference tools, empty if not installed.
std::string reference_tool(const char* name);  // "mkfs.f2fs", "fsck.f2fs", ...

/// Runs `fsck.f2fs -f` on a copy of `image` and decides "clean" as
/// ../shared/NOTES.md defines it. Returns the problem lines (empty: clean).
/// Requires fsck.f2fs (check reference_tool first).
std::vector<std::string> fsck_problems(const fs::path& image, std::string* full_output = nullptr);

/// Byte-compares two images over their allocated extents (holes read as
/// zeroes). Returns the 4 KiB block numbers that differ.
std::vector<std::uint64_t> differing_blocks(const fs::path& a, const fs::path& b);

/// Reads one 4 KiB block of a file.
std::vector<std::uint8_t> read_block(const fs::path& path, std::uint64_t blkaddr);

/// The syzkaller images of ../shared/images (stem, compressed image, and the
/// sorted lines of the manifest of what Linux reads from it), in name order.
struct SharedImage {
  std::string stem;
  fs::path image_zst;
  std::vector<std::string> manifest;
};
std::vector<SharedImage> shared_syzkaller_images(const fs::path& images_dir);

}  // namespace f2fstest
