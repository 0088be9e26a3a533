#include "f2fscore/checksum.hpp"

#include <array>

#include "f2fscore/disk/node.hpp"
#include "f2fscore/endian.hpp"

namespace f2fscore {

namespace {
// crc32_le (lib/crc32.c, polynomial 0xEDB88320, no inversion at either end,
// as f2fs_crc32() calls it), eight bytes per step ("slicing by 8": table k
// gives a byte's effect k bytes further on). Bytes are read one by one, so
// the result does not depend on the host's byte order.
using CrcTables = std::array<std::array<std::uint32_t, 256>, 8>;
constexpr CrcTables make_crc_tables() {
  CrcTables t{};
  for (std::uint32_t i = 0; i < 256; ++i) {
    std::uint32_t c = i;
    for (int k = 0; k < 8; ++k) c = (c >> 1) ^ (0xEDB88320u & (0u - (c & 1u)));
    t[0][i] = c;
  }
  for (std::size_t s = 1; s < 8; ++s)
    for (std::uint32_t i = 0; i < 256; ++i) t[s][i] = (t[s - 1][i] >> 8) ^ t[0][t[s - 1][i] & 0xFFu];
  return t;
}
constexpr CrcTables kCrcTables = make_crc_tables();
}  // namespace

std::uint32_t f2fs_crc32(std::uint32_t seed, const void* data, std::size_t len) noexcept {
  const auto& t = kCrcTables;
  const auto* p = static_cast<const std::uint8_t*>(data);
  std::uint32_t crc = seed;
  for (; len >= 8; p += 8, len -= 8) {
    const std::uint32_t a = crc ^ (static_cast<std::uint32_t>(p[0]) | static_cast<std::uint32_t>(p[1]) << 8 |
                                   static_cast<std::uint32_t>(p[2]) << 16 | static_cast<std::uint32_t>(p[3]) << 24);
    crc = t[7][a & 0xFFu] ^ t[6][(a >> 8) & 0xFFu] ^ t[5][(a >> 16) & 0xFFu] ^ t[4][a >> 24] ^ t[3][p[4]] ^
          t[2][p[5]] ^ t[1][p[6]] ^ t[0][p[7]];
  }
  for (; len > 0; ++p, --len) crc = (crc >> 8) ^ t[0][(crc ^ *p) & 0xFFu];
  return crc;
}

std::uint32_t inode_checksum_seed(const std::uint8_t (&uuid)[16]) noexcept {
  return f2fs_crc32(0xFFFFFFFFu, uuid, sizeof uuid);
}

std::uint32_t inode_checksum(std::uint32_t seed, const std::uint8_t* node_block) noexcept {
  const std::size_t ino_off = disk::kNodeFooterOffset + offsetof(disk::NodeFooter, ino);
  const std::size_t gen_off = offsetof(disk::Inode, i_generation);
  std::uint32_t c = f2fs_crc32(seed, node_block + ino_off, 4);
  c = f2fs_crc32(c, node_block + gen_off, 4);
  const std::size_t cs = disk::kInodeChecksumOffset;
  c = f2fs_crc32(c, node_block, cs);
  const std::uint8_t zero[4] = {0, 0, 0, 0};
  c = f2fs_crc32(c, zero, 4);
  return f2fs_crc32(c, node_block + cs + 4, disk::kBlockSize - cs - 4);
}

namespace {
void tea_transform(std::uint32_t buf[4], const std::uint32_t in[4]) {
  constexpr std::uint32_t kDelta = 0x9E3779B9;
  std::uint32_t sum = 0, b0 = buf[0], b1 = buf[1];
  const std::uint32_t a = in[0], b = in[1], c = in[2], d = in[3];
  for (int n = 0; n < 16; ++n) {
    sum += kDelta;
    b0 += ((b1 << 4) + a) ^ (b1 + sum) ^ ((b1 >> 5) + b);
    b1 += ((b0 << 4) + c) ^ (b0 + sum) ^ ((b0 >> 5) + d);
  }
  buf[0] += b0;
  buf[1] += b1;
}

// Packs up to 16 name bytes into four words, padding with a word made of
// the remaining length, as the ext3-derived str2hashbuf() does.
void pack_words(const unsigned char* msg, std::size_t len, std::uint32_t out[4]) {
  std::uint32_t pad = static_cast<std::uint32_t>(len) | (static_cast<std::uint32_t>(len) << 8);
  pad |= pad << 16;
  std::uint32_t val = pad;
  const std::size_t n = len > 16 ? 16 : len;
  int words = 0;
  for (std::size_t i = 0; i < n; ++i) {
    if (i % 4 == 0) val = pad;
    val = msg[i] + (val << 8);
    if (i % 4 == 3) {
      out[words++] = val;
      val = pad;
    }
  }
  if (words < 4) out[words++] = val;
  while (words < 4) out[words++] = pad;
}
}  // namespace

std::uint32_t dentry_hash(std::string_view name) noexcept {
  if (name == "." || name == "..") return 0;
  std::uint32_t buf[4] = {0x67452301, 0xefcdab89, 0x98badcfe, 0x10325476};
  const auto* p = reinterpret_cast<const unsigned char*>(name.data());
  std::size_t len = name.size();
  std::uint32_t in[4];
  for (;;) {
    pack_words(p, len, in);
    tea_transform(buf, in);
    p += 16;
    if (len <= 16) break;
    len -= 16;
  }
  return buf[0];  // F2FS_HASH_COL_BIT is bit 63: nothing to clear in 32 bits
}

}  // namespace f2fscore
