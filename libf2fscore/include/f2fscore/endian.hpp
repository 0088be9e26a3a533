// Explicit little-endian integers for on-disk records.
//
// F2FS stores every multi-byte integer little-endian. On-disk structs are
// built from these byte arrays (alignment 1, no padding, no `packed`), so the
// same code reads and writes the format on big-endian and 32-bit hosts.
#pragma once

#include <cstddef>
#include <cstdint>
#include <cstring>
#include <type_traits>

namespace f2fscore {

/// An unsigned integer of sizeof(T) bytes stored little-endian.
template <typename T>
struct LeInt {
  static_assert(std::is_unsigned_v<T>);
  std::uint8_t bytes[sizeof(T)];

  constexpr T get() const noexcept {
    T v = 0;
    for (std::size_t i = 0; i < sizeof(T); ++i)
      v = static_cast<T>(v | (static_cast<T>(bytes[i]) << (8 * i)));
    return v;
  }
  constexpr void set(T v) noexcept {
    for (std::size_t i = 0; i < sizeof(T); ++i)
      bytes[i] = static_cast<std::uint8_t>(v >> (8 * i));
  }
  constexpr operator T() const noexcept { return get(); }
  constexpr LeInt& operator=(T v) noexcept {
    set(v);
    return *this;
  }
};

using Le16 = LeInt<std::uint16_t>;
using Le32 = LeInt<std::uint32_t>;
using Le64 = LeInt<std::uint64_t>;

static_assert(sizeof(Le16) == 2 && alignof(Le16) == 1);
static_assert(sizeof(Le32) == 4 && alignof(Le32) == 1);
static_assert(sizeof(Le64) == 8 && alignof(Le64) == 1);
static_assert(std::is_trivially_copyable_v<Le64>);

/// Reads a little-endian value at byte offset `off` of `p`.
inline std::uint32_t load_le32(const void* p, std::size_t off = 0) noexcept {
  Le32 v;
  std::memcpy(&v, static_cast<const std::uint8_t*>(p) + off, 4);
  return v.get();
}
inline std::uint16_t load_le16(const void* p, std::size_t off = 0) noexcept {
  Le16 v;
  std::memcpy(&v, static_cast<const std::uint8_t*>(p) + off, 2);
  return v.get();
}
inline std::uint64_t load_le64(const void* p, std::size_t off = 0) noexcept {
  Le64 v;
  std::memcpy(&v, static_cast<const std::uint8_t*>(p) + off, 8);
  return v.get();
}
inline void store_le32(void* p, std::size_t off, std::uint32_t x) noexcept {
  Le32 v;
  v.set(x);
  std::memcpy(static_cast<std::uint8_t*>(p) + off, &v, 4);
}
inline void store_le64(void* p, std::size_t off, std::uint64_t x) noexcept {
  Le64 v;
  v.set(x);
  std::memcpy(static_cast<std::uint8_t*>(p) + off, &v, 8);
}

/// F2FS uses two bit orders in its bitmaps. MSB-first (bit 0 is 0x80 of byte
/// 0, f2fs_test_bit() in fs/f2fs/f2fs.h): SIT valid maps and the NAT/SIT
/// version bitmaps in the checkpoint.
inline bool test_bit_msb(const std::uint8_t* map, std::size_t nr) noexcept {
  return (map[nr >> 3] & (0x80u >> (nr & 7))) != 0;
}
inline void set_bit_msb(std::uint8_t* map, std::size_t nr) noexcept {
  map[nr >> 3] = static_cast<std::uint8_t>(map[nr >> 3] | (0x80u >> (nr & 7)));
}
inline void clear_bit_msb(std::uint8_t* map, std::size_t nr) noexcept {
  map[nr >> 3] = static_cast<std::uint8_t>(map[nr >> 3] & ~(0x80u >> (nr & 7)));
}
/// LSB-first bit order (Linux test_bit_le on bytes): dentry bitmaps,
/// nat_bits, inline dentry bitmaps.
inline bool test_bit_le(const std::uint8_t* map, std::size_t nr) noexcept {
  return (map[nr >> 3] & (1u << (nr & 7))) != 0;
}
inline void set_bit_le(std::uint8_t* map, std::size_t nr) noexcept {
  map[nr >> 3] = static_cast<std::uint8_t>(map[nr >> 3] | (1u << (nr & 7)));
}
inline void clear_bit_le(std::uint8_t* map, std::size_t nr) noexcept {
  map[nr >> 3] = static_cast<std::uint8_t>(map[nr >> 3] & ~(1u << (nr & 7)));
}

}  // namespace f2fscore
