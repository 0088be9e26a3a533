#include "f2fscore/disk/checkpoint.hpp"

#include "f2fscore/checksum.hpp"

namespace f2fscore::disk {

std::uint32_t checkpoint_checksum(const std::uint8_t* block) noexcept {
  std::uint32_t ofs = load_le32(block, offsetof(Checkpoint, checksum_offset));
  if (ofs > kCpChecksumOffset) ofs = kCpChecksumOffset;
  std::uint32_t crc = f2fs_crc32(kSuperMagic, block, ofs);
  if (ofs < kCpChecksumOffset) crc = f2fs_crc32(crc, block + ofs + 4, kBlockSize - ofs - 4);
  return crc;
}

void seal_checkpoint(std::uint8_t* block) noexcept {
  std::uint32_t ofs = load_le32(block, offsetof(Checkpoint, checksum_offset));
  if (ofs > kCpChecksumOffset) ofs = kCpChecksumOffset;
  store_le32(block, ofs, checkpoint_checksum(block));
}

std::uint64_t nat_bits_header(const std::uint8_t* cp_block) noexcept {
  std::uint32_t ofs = load_le32(cp_block, offsetof(Checkpoint, checksum_offset));
  if (ofs > kCpChecksumOffset) ofs = kCpChecksumOffset;
  const std::uint64_t crc = load_le32(cp_block, ofs);
  return load_le64(cp_block, 0) | (crc << 32);
}

NatBitsSize nat_bits_size(std::uint32_t segment_count_nat) noexcept {
  const std::uint32_t bytes = segment_count_nat << 5;
  return {bytes, (bytes * 2 + 8 + kBlockSize - 1) / kBlockSize};
}

}  // namespace f2fscore::disk
