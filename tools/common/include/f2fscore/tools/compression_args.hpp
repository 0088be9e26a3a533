// sload.f2fs's compression options (-c, -a, -L, -i, -x, -m, -r: fsck/main.c
// and fsck/compress.c of f2fs-tools 1.15), shared by f2fscore-sload and
// f2fscore-mkfs --populate, which give them their own names. They become the
// writer's compression mount options (MountOptions::compression) and
// populate()'s release of compressed blocks.
#pragma once

#include <CLI/CLI.hpp>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "f2fscore/writer.hpp"

namespace f2fscore::tools {

class CompressionArgs {
 public:
  /// The option names, e.g. {"-c", "-a", "-L", "-i", "-x", "-m", "-r"}.
  struct Names {
    std::string enable, algorithm, log_size, include, exclude, min_blocks, release;
  };
  /// Registers the seven options on `app`.
  void add_to(CLI::App& app, const Names& names);
  /// The options as sload.f2fs checks them: a sub-option needs the enable
  /// option; include and exclude lists are not mixed; min blocks from 1 to
  /// the cluster size less 1. Fills `c` (nothing when compression is off).
  /// Returns the usage error's text, or nothing.
  std::optional<std::string> apply(MountOptions::Compression& c) const;
  bool enabled() const { return enable_; }
  /// Whether sload.f2fs -c compresses the host file `path` of `size`
  /// bytes (f2fs_build_file() in fsck/segment.c, ext_filter in
  /// fsck/compress.c): a file larger than DEF_MAX_INLINE_DATA (3488 bytes,
  /// smaller ones are inline) whose extension (what follows the last '.'
  /// of the path, compared exactly) is in the include list, or not in the
  /// exclude list; with neither, every such file.
  bool wants(const std::string& path, std::uint64_t size) const;
  /// Release each compressed file's blocks once written (sload.f2fs -r).
  bool release() const { return release_; }

 private:
  Names names_;
  bool enable_ = false, release_ = false;
  std::string algorithm_;
  std::optional<std::uint32_t> log_size_, min_blocks_;
  std::vector<std::string> include_, exclude_;
};

}  // namespace f2fscore::tools
