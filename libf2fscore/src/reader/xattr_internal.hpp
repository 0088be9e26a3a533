// The xattr area as one buffer (the inline area, then the xattr node's
// first 4072 bytes: read_all_xattrs() in fs/f2fs/xattr.c), walked entry by
// entry. Shared by the reader (reader/xattr.cpp) and the writer (writer/xattr.cpp).
#pragma once

#include <cstddef>
#include <cstdint>
#include <span>
#include <vector>

#include "f2fscore/disk/xattr.hpp"

namespace f2fscore::xattr_area {

/// One entry of the area: where it starts (bytes from the header) and its
/// fields; its name is at offset + 4, its value right after the name.
struct EntryRef {
  std::size_t offset = 0;
  std::uint8_t index = 0;
  std::uint8_t name_len = 0;
  std::uint16_t value_size = 0;
  std::size_t size() const { return disk::xattr_entry_size(name_len, value_size); }
};

/// The entries after the 24-byte header, up to the zero word that ends the
/// list (IS_XATTR_LAST_ENTRY) or the end of `buf`. *end: the offset of that
/// end word (where a new entry goes: the kernel's `last`). *bad_offset: the
/// offset of an entry running past the buffer (the walk stops there), or
/// SIZE_MAX. The header's magic is not checked: Linux takes a wrong one for
/// "never allocated" and reads the entries all the same.
std::vector<EntryRef> walk(std::span<const std::uint8_t> buf, std::size_t* end, std::size_t* bad_offset);

}  // namespace f2fscore::xattr_area
