// Extended attributes: a header then packed entries, kept in the inode's
// inline xattr area and/or in an xattr node (i_xattr_nid). fs/f2fs/xattr.h.
#pragma once

#include <cstddef>
#include <cstdint>

#include "f2fscore/endian.hpp"

namespace f2fscore::disk {

inline constexpr std::uint32_t kXattrMagic = 0xF2F52011;

struct XattrHeader {
  Le32 h_magic;
  Le32 h_refcount;
  Le32 h_reserved[4];
};
static_assert(sizeof(XattrHeader) == 24);

/// One entry: index, name length, value size, then the name and the value,
/// padded together to a multiple of 4 bytes. A zero word ends the list.
struct XattrEntry {
  std::uint8_t e_name_index;
  std::uint8_t e_name_len;
  Le16 e_value_size;
  // char e_name[e_name_len], then the value.
};
static_assert(sizeof(XattrEntry) == 4);

/// Size of an entry with the given name and value lengths (XATTR_ENTRY_SIZE
/// rounded to 4 bytes).
constexpr std::uint32_t xattr_entry_size(std::uint32_t name_len, std::uint32_t value_size) {
  return (static_cast<std::uint32_t>(sizeof(XattrEntry)) + name_len + value_size + 3) & ~3u;
}

/// Name indexes (F2FS_XATTR_INDEX_*).
namespace xattr_index {
inline constexpr std::uint8_t user = 1;
inline constexpr std::uint8_t posix_acl_access = 2;
inline constexpr std::uint8_t posix_acl_default = 3;
inline constexpr std::uint8_t trusted = 4;
inline constexpr std::uint8_t lustre = 5;
inline constexpr std::uint8_t security = 6;
inline constexpr std::uint8_t advise = 7;
inline constexpr std::uint8_t encryption = 9;
inline constexpr std::uint8_t verity = 11;
}  // namespace xattr_index

}  // namespace f2fscore::disk
