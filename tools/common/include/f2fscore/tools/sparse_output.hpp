// The -S output of f2fscore-mkfs and f2fscore-sload: Android sparse images
// (f2fscore/sparse_image.hpp), as make_f2fs -S and sload.f2fs -S write them.
//
// The tool works on a raw staging file beside the target (the same
// directory: the final rename stays on one file system), then commit()
// writes the staging file's content as a sparse image through libsparse
// (Debian: android-libsparse-dev) to a second file beside the target and
// renames it over the target. Blocks of zeroes (holes of the staging file
// and zero blocks inside its data) become don't-care chunks, the rest raw
// chunks. Until commit() the target is untouched: a failure leaves it as
// it was, and the destructor removes the temporaries.
#pragma once

#include <cstdint>
#include <string>

#include "f2fscore/result.hpp"

namespace f2fscore::tools {

class SparseStaging {
 public:
  /// A staging file for a new image of `size` bytes (a multiple of 4096):
  /// a file of holes. Errors: Errc::busy (the target is in use:
  /// check_in_use()), Errc::invalid_argument (size), Errc::unsupported
  /// (target is a block device; a build without libsparse), Errc::io.
  static Result<SparseStaging> create(const std::string& target, std::uint64_t size);
  /// A staging file holding the image the sparse image `target` describes
  /// (its don't-care chunks as holes). Errors: Errc::busy (in use),
  /// Errc::invalid_argument
  /// (`target` is not an Android sparse image), the reader's Errc::corrupt,
  /// Errc::unsupported (a build without libsparse), Errc::io.
  static Result<SparseStaging> expand(const std::string& target);

  SparseStaging(SparseStaging&& o) noexcept;
  SparseStaging& operator=(SparseStaging&&) = delete;
  SparseStaging(const SparseStaging&) = delete;
  ~SparseStaging();

  /// The raw staging file the tool opens and writes.
  const std::string& raw_path() const noexcept { return raw_; }
  /// Writes the sparse image and renames it over the target (fsync of the
  /// file and of its directory first). Call with the staging file closed
  /// by the tool. Errors: Errc::io, Errc::no_space.
  Status commit();

 private:
  SparseStaging(std::string target, std::string raw) : target_(std::move(target)), raw_(std::move(raw)) {}
  // create() without the in-use check (expand() made it first).
  static Result<SparseStaging> make(const std::string& target, std::uint64_t size);
  std::string target_, raw_;
};

/// Whether this build writes sparse images (libsparse found at build time).
bool sparse_output_compiled() noexcept;

}  // namespace f2fscore::tools
