// Compressed clusters (placeholder until the codecs land): the cluster
// header is struct compress_data { le32 clen; le32 chksum; le32 reserved[4]; }.
#include "volume_internal.hpp"

namespace f2fscore {

Status decompress_cluster(std::uint8_t algorithm, std::span<const std::uint8_t>, std::span<std::uint8_t>, std::size_t*) {
  return make_error(Errc::unsupported, "compression algorithm " + std::to_string(algorithm) + " is not supported yet");
}

}  // namespace f2fscore
