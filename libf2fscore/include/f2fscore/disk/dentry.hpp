// Directory entries: 4 KiB dentry blocks of 214 slots, and the same layout
// scaled into an inode's inline area (inline dentries).
#pragma once

#include <cstddef>
#include <cstdint>
#include <cstring>
#include <string_view>

#include "f2fscore/disk/constants.hpp"
#include "f2fscore/disk/node.hpp"
#include "f2fscore/endian.hpp"

namespace f2fscore::disk {

inline constexpr std::uint32_t kSlotLen = 8;             ///< F2FS_SLOT_LEN: name bytes per slot
inline constexpr std::uint32_t kNrDentryInBlock = 214;
inline constexpr std::uint32_t kDentryBitmapSize = (kNrDentryInBlock + 7) / 8;  // 27

/// File types in dentries (F2FS_FT_*).
enum class FileType : std::uint8_t {
  unknown = 0,
  reg_file = 1,
  dir = 2,
  chrdev = 3,
  blkdev = 4,
  fifo = 5,
  sock = 6,
  symlink = 7,
};

struct DirEntry {
  Le32 hash_code;
  Le32 ino;
  Le16 name_len;  ///< bytes; a name spans ceil(name_len / 8) slots
  std::uint8_t file_type;
};
static_assert(sizeof(DirEntry) == 11);

inline constexpr std::uint32_t kDentryReservedSize =
    kBlockSize - ((sizeof(DirEntry) + kSlotLen) * kNrDentryInBlock + kDentryBitmapSize);  // 3
static_assert(kDentryReservedSize == 3);

struct DentryBlock {
  std::uint8_t dentry_bitmap[kDentryBitmapSize];  ///< LSB-first (test_bit_le)
  std::uint8_t reserved[kDentryReservedSize];
  DirEntry dentry[kNrDentryInBlock];
  std::uint8_t filename[kNrDentryInBlock][kSlotLen];
};
static_assert(sizeof(DentryBlock) == kBlockSize);
static_assert(offsetof(DentryBlock, dentry) == 30);
static_assert(offsetof(DentryBlock, filename) == 2384);

/// Geometry of an inline dentry area of `inline_bytes` bytes (MAX_INLINE_DATA):
/// slots, bitmap bytes and reserved bytes, as NR_INLINE_DENTRY,
/// INLINE_DENTRY_BITMAP_SIZE and INLINE_RESERVED_SIZE in fs/f2fs/f2fs.h.
struct InlineDentryLayout {
  std::uint32_t nr_slots;
  std::uint32_t bitmap_bytes;
  std::uint32_t reserved_bytes;
  std::uint32_t dentry_offset() const { return bitmap_bytes + reserved_bytes; }
  std::uint32_t filename_offset() const {
    return dentry_offset() + nr_slots * static_cast<std::uint32_t>(sizeof(DirEntry));
  }
};
constexpr InlineDentryLayout inline_dentry_layout(std::uint32_t inline_bytes) {
  // Each slot costs one bit, one DirEntry and kSlotLen name bytes.
  const std::uint32_t nr = inline_bytes * 8 / ((static_cast<std::uint32_t>(sizeof(DirEntry)) + kSlotLen) * 8 + 1);
  const std::uint32_t bitmap = (nr + 7) / 8;
  const std::uint32_t reserved =
      inline_bytes - ((static_cast<std::uint32_t>(sizeof(DirEntry)) + kSlotLen) * nr + bitmap);
  return {nr, bitmap, reserved};
}
// The default inline area (923 - 50 - 1 addresses = 3488 bytes) holds 182 slots.
static_assert(inline_dentry_layout(3488).nr_slots == 182);

/// MAX_DIR_HASH_DEPTH (fs/f2fs/f2fs.h): a directory has at most 63 hash
/// levels; lookups (__f2fs_find_entry() in fs/f2fs/dir.c) stop there.
inline constexpr std::uint32_t kMaxDirHashDepth = 63;

/// Hash levels: buckets in level `level` of a directory with dir_level `dl`,
/// and blocks per bucket (dir_buckets()/bucket_blocks() in fs/f2fs/dir.c).
constexpr std::uint32_t dir_buckets(std::uint32_t level, std::uint32_t dir_level) {
  if (level + dir_level < kMaxDirHashDepth / 2) return 1u << (level + dir_level);
  return 1u << ((kMaxDirHashDepth / 2) - 1);
}
constexpr std::uint32_t bucket_blocks(std::uint32_t level) {
  return level < kMaxDirHashDepth / 2 ? 2 : 4;
}

/// What dentry slot walking finds at a slot whose bitmap bit is set.
enum class DentryFault : std::uint8_t {
  none,           ///< an entry: `name` holds its name_len bytes
  empty_slot,     ///< name_len 0, ino 0 and hash 0: the bit alone is set
  zero_name_len,  ///< name_len 0 in a slot holding an ino or a hash
  name_past_end,  ///< name_len above F2FS_NAME_LEN or its slots past the area
};

/// One slot of a dentry area as for_each_dentry() reports it.
struct DentrySlot {
  std::uint32_t slot = 0;  ///< index of the entry's first slot
  DirEntry entry{};        ///< the slot's DirEntry, copied
  std::string_view name;   ///< the name's bytes (DentryFault::none only)
  DentryFault fault = DentryFault::none;
};

/// Walks the `slots` dentries of an area laid out as bitmap / DirEntry[] /
/// names[][kSlotLen] (a DentryBlock, or an inline area through
/// InlineDentryLayout) and calls `f(const DentrySlot&)` for each slot whose
/// bitmap bit is set; `f` returns false to stop. An entry covers
/// ceil(name_len / kSlotLen) slots; a faulty slot covers one, so the walk
/// goes on at the next slot (as the kernel's f2fs_fill_dentries() in
/// fs/f2fs/dir.c skips a zero-length slot, and fsck.f2fs's __chk_dentries()
/// moves one slot on past a bad name_len).
template <class F>
void for_each_dentry(const std::uint8_t* bitmap, const DirEntry* de, const std::uint8_t* names, std::uint32_t slots,
                     F&& f) {
  for (std::uint32_t i = 0; i < slots;) {
    if (!test_bit_le(bitmap, i)) {
      ++i;
      continue;
    }
    DentrySlot s;
    s.slot = i;
    std::memcpy(&s.entry, &de[i], sizeof s.entry);
    const std::uint32_t len = s.entry.name_len.get();
    const std::uint32_t need = (len + kSlotLen - 1) / kSlotLen;
    std::uint32_t step = 1;
    if (len == 0)
      s.fault = s.entry.ino.get() == 0 && s.entry.hash_code.get() == 0 ? DentryFault::empty_slot : DentryFault::zero_name_len;
    else if (len > kNameLen || i + need > slots)
      s.fault = DentryFault::name_past_end;
    else {
      s.name = std::string_view(reinterpret_cast<const char*>(names + static_cast<std::size_t>(i) * kSlotLen), len);
      step = need;
    }
    if (!f(static_cast<const DentrySlot&>(s))) return;
    i += step;
  }
}

}  // namespace f2fscore::disk
