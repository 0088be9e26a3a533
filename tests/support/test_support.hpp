// Helpers shared by the tests: fixtures, temporary files, external tools.
#pragma once

#include <cstdint>
#include <filesystem>
#include <functional>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "f2fscore/device.hpp"
#include "support/assert_ok.hpp"
#include "support/sparse_image.hpp"

namespace f2fstest {

namespace fs = std::filesystem;

/// Directory holding decompressed fixtures (the build's testdata/).
fs::path data_dir();
/// ../shared/images beside the repository, if present.
std::optional<fs::path> shared_images_dir();
/// True when the environment asks interop tests to fail instead of skip
/// (F2FSCORE_REQUIRE_<what>=1).
bool required(const char* what);

/// One case in N of the long seeded suites runs: N from F2FSCORE_TEST_SAMPLE
/// (an integer >= 1; 1, every case, when unset or invalid). Under qemu-user a
/// case costs ten times or more its native time, so scripts/cross-test.sh
/// sets 4 there; the native, sanitizer and wine runs take every case.
unsigned sample_stride();

/// Whether case number `index` (0, 1, 2, ... in the suite's fixed order) runs
/// under sample_stride(): every N-th from the first.
inline bool sampled(std::uint64_t index) { return index % sample_stride() == 0; }

/// Loads an image file into a sparse memory device (zero blocks are not stored).
std::unique_ptr<f2fscore::BlockDevice> load_image(const fs::path& path);

/// Decompresses a .zst fixture into a fresh temporary file the caller owns
/// (it may change or remove it); nullopt when it cannot. POSIX hosts run the
/// zstd tool; Windows has none: there the build decompressed every fixture
/// ahead (tests/unzstd_fixtures.cmake, the host's zstd) into
/// F2FSCORE_UNZSTD_DIR/<folder of the .zst>/<name without .zst>, and the
/// copy keeps only the non-zero 4 KiB blocks (holes elsewhere).
std::optional<fs::path> unzstd(const fs::path& src);

/// The decompressed bytes of a .zst fixture, in order, handed to `sink` a
/// chunk at a time (the last may be short), without a temporary file on
/// POSIX (the zstd tool's stdout). False when it cannot be decompressed.
bool read_zst(const fs::path& src, const std::function<void(std::span<const std::uint8_t>)>& sink);

/// A .zst image decompressed (read_zst) into its non-zero 4 KiB blocks;
/// nullopt when it cannot be decompressed or is empty.
std::optional<SparseImage> load_zst_image(const fs::path& src);

/// SHA-256 (FIPS 180-4) of the bytes given to update(), in pieces of any
/// size, as 64 lowercase hex digits (as sha256sum prints it) from hex(),
/// which ends the message: one hex() per object.
class Sha256 {
 public:
  void update(const void* data, std::size_t len);
  std::string hex();

 private:
  void block(const std::uint8_t* p);
  std::uint32_t h_[8] = {0x6a09e667, 0xbb67ae85, 0x3c6ef372, 0xa54ff53a,
                         0x510e527f, 0x9b05688c, 0x1f83d9ab, 0x5be0cd19};  // FIPS 180-4, 5.3.3
  std::uint64_t len_ = 0;
  std::uint8_t buf_[64] = {};
  std::size_t n_ = 0;
};

/// SHA-256 of `data` (Sha256) as 64 lowercase hex digits.
std::string sha256_hex(std::string_view data);

/// A temporary directory (under fs::temp_directory_path(): TMPDIR or /tmp on
/// POSIX, GetTempPath on Windows) removed at destruction by the process that
/// made it.
class TempDir {
 public:
  TempDir();
  ~TempDir();
  const fs::path& path() const { return path_; }
  fs::path operator/(const std::string& name) const { return path_ / name; }

 private:
  fs::path path_;
  long owner_;
};

/// This process's scratch directory: one TempDir made at the first call and
/// removed, with what tests left in it, when the process exits normally.
const fs::path& scratch_dir();

/// Creates (or truncates) a sparse file of `bytes` (throws std::runtime_error
/// when it cannot).
void make_sparse_file(const fs::path& path, std::uint64_t bytes);

/// Quotes `s` for a POSIX shell ('...').
std::string shell_quote(const std::string& s);

/// Absolute paths of the reference tools (f2fs-tools, Linux programs), empty
/// if not installed; always empty on Windows.
std::string reference_tool(const char* name);  // "mkfs.f2fs", "fsck.f2fs", ...

#if !defined(_WIN32)
// Shell commands: POSIX hosts only (the interop tests; the unit tests run
// none, so that they build and run on Windows too).
struct CommandResult {
  int exit_code = -1;  ///< -1 if it did not exit normally
  std::string output;  ///< stdout and stderr together
};
/// Runs a shell command with stdin from /dev/null.
CommandResult run(const std::string& command);

/// Runs `fsck.f2fs -f` on a copy of `image` and decides "clean" as
/// ../shared/NOTES.md defines it. Returns the problem lines (empty: clean).
/// Requires fsck.f2fs (check reference_tool first). `in_place`: on `image`
/// itself (a copy already; fsck.f2fs wants device 0 of a multi-device
/// volume at the path its superblock names).
std::vector<std::string> fsck_problems(const fs::path& image, std::string* full_output = nullptr,
                                       bool in_place = false);
#endif

/// Byte-compares two images over their allocated extents (holes read as
/// zeroes; SEEK_DATA/SEEK_HOLE where the host has them, else every block).
/// Returns the 4 KiB block numbers that differ.
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
