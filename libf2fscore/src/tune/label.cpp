// The volume label in both superblock copies (f2fscore/tune.hpp).
#include <cstring>
#include <vector>

#include "f2fscore/disk/constants.hpp"
#include "f2fscore/disk/superblock.hpp"
#include "f2fscore/endian.hpp"
#include "f2fscore/tune.hpp"
#include "util/text.hpp"

namespace f2fscore {

using namespace disk;
using detail::fmt;

namespace {

struct Slots {
  std::vector<std::uint8_t> blocks;  // blocks 0 and 1 as stored
  SuperBlock sb{};                   // the copy in use
  int copy = -1;
};

// Both superblock blocks, and the first valid copy.
Result<Slots> load_slots(BlockDevice& dev) {
  Slots s;
  if (dev.info().size_bytes < 2ull * kBlockSize)
    return make_error(Errc::corrupt,
                      fmt("device has %llu bytes: too small to hold an F2FS superblock", dev.info().size_bytes));
  s.blocks.resize(2 * kBlockSize);
  F2FSCORE_TRY(read_at(dev, 0, s.blocks));
  const std::uint64_t dev_blocks = dev.info().size_bytes / kBlockSize;
  std::string why;
  Errc code = Errc::corrupt;
  bool magic = false;
  for (int copy = 0; copy < 2; ++copy) {
    SuperBlock sb;
    std::memcpy(&sb, s.blocks.data() + static_cast<std::size_t>(copy) * kBlockSize + kSuperOffset, sizeof sb);
    magic = magic || sb.magic.get() == kSuperMagic;
    auto st = validate_superblock(sb, dev_blocks, copy);
    if (st) {
      s.sb = sb;
      s.copy = copy;
      return s;
    }
    if (st.error().code == Errc::unsupported) code = Errc::unsupported;
    why += (why.empty() ? "" : "; ") + st.error().message;
  }
  if (!magic) return make_error(Errc::corrupt, "no F2FS magic in either superblock copy: not an F2FS file system");
  return make_error(code, "no valid superblock: " + why, kSuperOffset);
}

}  // namespace

Result<std::string> read_volume_label(BlockDevice& dev) {
  auto s = load_slots(dev);
  if (!s) return tl::unexpected(s.error());
  return volume_label(s->sb);
}

Status write_volume_label(BlockDevice& dev, std::string_view label) {
  auto s = load_slots(dev);
  if (!s) return tl::unexpected(s.error());
  SuperBlock sb = s->sb;
  F2FSCORE_TRY(set_volume_label(sb, label));
  if (sb.feature.get() & feature::sb_checksum) sb.crc.set(superblock_checksum(sb));
  for (std::uint64_t slot : {1u, 0u}) {
    std::vector<std::uint8_t> b(s->blocks.begin() + static_cast<std::ptrdiff_t>(slot * kBlockSize),
                                s->blocks.begin() + static_cast<std::ptrdiff_t>((slot + 1) * kBlockSize));
    if (std::memcmp(b.data() + kSuperOffset, &sb, sizeof sb) == 0) continue;
    std::memcpy(b.data() + kSuperOffset, &sb, sizeof sb);
    F2FSCORE_TRY(write_at(dev, slot * kBlockSize, b));
    F2FSCORE_TRY(flush(dev));
  }
  return {};
}

}  // namespace f2fscore
