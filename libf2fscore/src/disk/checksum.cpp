#include "f2fscore/checksum.hpp"

#if F2FSCORE_HAVE_ZLIB
#include <zlib.h>
#else
#include <boost/crc.hpp>
#endif

#include "f2fscore/disk/node.hpp"
#include "f2fscore/endian.hpp"

namespace f2fscore {

namespace {
#if !F2FSCORE_HAVE_ZLIB
constexpr std::uint32_t reverse_bits(std::uint32_t x) {
  std::uint32_t r = 0;
  for (int i = 0; i < 32; ++i)
    if ((x >> i) & 1u) r |= 1u << (31 - i);
  return r;
}
#endif
}  // namespace

// f2fs_crc32() is crc32_le (lib/crc32.c: polynomial 0xEDB88320, reflected)
// with no inversion at either end. zlib's crc32_z() inverts on entry and
// exit, so crc32_le(seed, p) = ~crc32_z(~seed, p). Without zlib (cross
// builds), Boost.CRC computes the same, a byte at a time.
std::uint32_t f2fs_crc32(std::uint32_t seed, const void* data, std::size_t len) noexcept {
#if F2FSCORE_HAVE_ZLIB
  const auto* p = static_cast<const Bytef*>(data);
  uLong crc = static_cast<uLong>(~seed & 0xFFFFFFFFu);
  crc = crc32_z(crc, p, static_cast<z_size_t>(len));
  return static_cast<std::uint32_t>(~crc & 0xFFFFFFFFu);
#else
  // Boost's reflected crc_optimal keeps its register unreflected: hand it
  // the seed bit-reversed so the register starts where f2fs_crc32 starts.
  boost::crc_optimal<32, 0x04C11DB7, 0, 0, true, true> crc;
  crc.reset(reverse_bits(seed));
  crc.process_bytes(data, len);
  return crc.checksum();
#endif
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
