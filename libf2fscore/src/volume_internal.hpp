// Private state of a Volume, shared by the reader's source files.
#pragma once

#include <vector>

#include "f2fscore/volume.hpp"

namespace f2fscore {

struct Volume::Impl {
  BlockDevice* dev = nullptr;
  VolumeOpenOptions opts;
  OpenReport report;
  disk::SuperBlock sb{};
  disk::Checkpoint cp{};
  std::vector<std::uint8_t> cp_blocks;  ///< CP block + cp_payload blocks
  std::uint64_t cp_start = 0;           ///< first block of the chosen pack
  std::uint32_t chksum_seed = 0;
  disk::Journal nat_journal{};          ///< from the hot data curseg
  disk::Journal sit_journal{};          ///< from the cold data curseg
  disk::SummaryBlock curseg_sum[6] = {};  ///< active logs' summaries, CursegType order
  bool curseg_sum_loaded[6] = {};
  bool nat_bits_ok = false;
  std::vector<std::uint8_t> nat_bits;  ///< header + full + empty bitmaps

  const std::uint8_t* nat_version_bitmap() const;
  const std::uint8_t* sit_version_bitmap() const;
  std::uint32_t nat_blocks() const { return sb.segment_count_nat.get() / 2 * disk::kDefaultBlocksPerSeg; }
  std::uint32_t sit_blocks() const { return sb.segment_count_sit.get() / 2 * disk::kDefaultBlocksPerSeg; }
  Status read(std::uint64_t blkaddr, void* out, std::uint32_t nblocks = 1);
};

/// "<what> at block <addr>" style context for messages.
std::string at_block(std::uint64_t blkaddr);

/// Decompresses one cluster (compress.cpp). `algorithm` as i_compress_algorithm.
Status decompress_cluster(std::uint8_t algorithm, std::span<const std::uint8_t> in, std::span<std::uint8_t> out,
                          std::size_t* produced);

}  // namespace f2fscore
