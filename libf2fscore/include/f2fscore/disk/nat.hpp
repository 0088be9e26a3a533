// NAT: the node address table. Two copies of each NAT block, alternate
// segments; the checkpoint's NAT version bitmap says which copy is current.
#pragma once

#include <cstddef>
#include <cstdint>

#include "f2fscore/disk/constants.hpp"
#include "f2fscore/endian.hpp"

namespace f2fscore::disk {

struct NatEntry {
  std::uint8_t version;
  Le32 ino;
  Le32 block_addr;
};
static_assert(sizeof(NatEntry) == 9);

inline constexpr std::uint32_t kNatEntryPerBlock = kBlockSize / sizeof(NatEntry);  // 455
static_assert(kNatEntryPerBlock == 455);

struct NatBlock {
  NatEntry entries[kNatEntryPerBlock];
};
static_assert(sizeof(NatBlock) == 4095);

}  // namespace f2fscore::disk
