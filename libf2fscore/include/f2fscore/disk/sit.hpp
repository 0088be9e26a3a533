// SIT: the segment information table, one 74-byte entry per segment; two
// copies per block, selected by the checkpoint's SIT version bitmap.
#pragma once

#include <cstddef>
#include <cstdint>

#include "f2fscore/disk/constants.hpp"
#include "f2fscore/endian.hpp"

namespace f2fscore::disk {

inline constexpr std::uint32_t kSitVblockMapSize = 64;  ///< bytes: 512 bits, MSB-first
inline constexpr std::uint32_t kSitVblocksShift = 10;   ///< type lives above bit 10
inline constexpr std::uint16_t kSitVblocksMask = (1u << kSitVblocksShift) - 1;

struct SitEntry {
  Le16 vblocks;  ///< valid blocks (low 10 bits) | segment type << 10
  std::uint8_t valid_map[kSitVblockMapSize];
  Le64 mtime;
};
static_assert(sizeof(SitEntry) == 74);

inline constexpr std::uint32_t kSitEntryPerBlock = kBlockSize / sizeof(SitEntry);  // 55
static_assert(kSitEntryPerBlock == 55);

struct SitBlock {
  SitEntry entries[kSitEntryPerBlock];
};
static_assert(sizeof(SitBlock) == 4070);

inline constexpr std::uint16_t sit_vblocks(const SitEntry& e) { return e.vblocks.get() & kSitVblocksMask; }
inline constexpr std::uint8_t sit_type(const SitEntry& e) {
  return static_cast<std::uint8_t>(e.vblocks.get() >> kSitVblocksShift);
}
inline constexpr std::uint16_t make_sit_vblocks(std::uint8_t type, std::uint16_t count) {
  return static_cast<std::uint16_t>((type << kSitVblocksShift) | (count & kSitVblocksMask));
}

}  // namespace f2fscore::disk
