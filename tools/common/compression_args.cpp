// sload.f2fs's compression options for f2fscore-sload and
// f2fscore-mkfs --populate: compression_args.hpp.
#include "f2fscore/tools/compression_args.hpp"

namespace f2fscore::tools {

void CompressionArgs::add_to(CLI::App& app, const Names& n) {
  names_ = n;
  app.add_flag(n.enable, enable_,
               "Compress regular files (the volume needs the compression feature), as sload.f2fs -c; with no " +
                   n.include + " / " + n.exclude + ", every file larger than 3488 bytes (smaller ones are inline)");
  app.add_option(n.algorithm, algorithm_, "Compression algorithm: lz4 (default), lzo, zstd or lzo-rle")
      ->check(CLI::IsMember({"lz4", "lzo", "zstd", "lzo-rle"}));
  app.add_option(n.log_size, log_size_, "Clusters of 2^N blocks, N from 2 (default) to 8")->check(CLI::Range(2u, 8u));
  app.add_option(n.include, include_,
                 "Compress only files with this extension, what follows the path's last '.' (repeatable; not with " + n.exclude + ")")
      ->allow_extra_args(false);
  app.add_option(n.exclude, exclude_,
                 "Compress every file but those with this extension (repeatable; not with " + n.include + ")")
      ->allow_extra_args(false);
  app.add_option(n.min_blocks, min_blocks_,
                 "A cluster is stored compressed only when it saves at least N blocks (default 1, at most the "
                 "cluster size less 1)");
  app.add_flag(n.release, release_,
               "Release the blocks compressed files save: their data becomes read-only "
               "(F2FS_IOC_RELEASE_COMPRESS_BLOCKS)");
}

std::optional<std::string> CompressionArgs::apply(MountOptions::Compression& c) const {
  const bool sub = !algorithm_.empty() || log_size_ || !include_.empty() || !exclude_.empty() || min_blocks_ || release_;
  if (sub && !enable_)
    return "compression sub-options (" + names_.algorithm + ", " + names_.log_size + ", " + names_.include + ", " +
           names_.exclude + ", " + names_.min_blocks + ", " + names_.release + ") need " + names_.enable;
  if (!enable_) return std::nullopt;
  if (!include_.empty() && !exclude_.empty()) return names_.include + " and " + names_.exclude + " cannot be mixed";
  const std::uint32_t log = log_size_.value_or(2);
  if (min_blocks_ && (*min_blocks_ < 1 || *min_blocks_ >= (1u << log)))
    return names_.min_blocks + ": " + std::to_string(*min_blocks_) + " is outside 1 to " + std::to_string((1u << log) - 1) +
           " (clusters of " + std::to_string(1u << log) + " blocks)";
  // i_compress_algorithm values: COMPRESS_LZO 0, LZ4 1, ZSTD 2, LZORLE 3.
  if (algorithm_ == "lzo") c.algorithm = 0;
  else if (algorithm_ == "zstd") c.algorithm = 2;
  else if (algorithm_ == "lzo-rle") c.algorithm = 3;
  else c.algorithm = 1;
  c.log_size = static_cast<std::uint8_t>(log);
  if (min_blocks_) c.min_saved_blocks = *min_blocks_;
  return std::nullopt;
}

bool CompressionArgs::wants(const std::string& path, std::uint64_t size) const {
  if (!enable_ || size <= 3488) return false;
  const std::size_t dot = path.rfind('.');
  const std::string ext = dot == std::string::npos ? std::string() : path.substr(dot + 1);
  bool listed = false;
  for (const auto* l : {&include_, &exclude_})
    for (const auto& e : *l) listed = listed || e == ext;
  return include_.empty() ? !listed : listed;
}

}  // namespace f2fscore::tools
