// Offline superblock changes (f2fscore/tune.hpp): label, uuid, features.
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

// Writes `sb` to both copies: block 1, flush, then block 0, flush, as
// f2fs-tools' update_superblock() orders them; a copy already equal is not
// written. Only the superblock's bytes of each block change.
Status write_both_copies(BlockDevice& dev, const Slots& s, const SuperBlock& sb) {
  for (std::uint64_t slot : {1u, 0u}) {
    std::vector<std::uint8_t> b(s.blocks.begin() + static_cast<std::ptrdiff_t>(slot * kBlockSize),
                                s.blocks.begin() + static_cast<std::ptrdiff_t>((slot + 1) * kBlockSize));
    if (std::memcmp(b.data() + kSuperOffset, &sb, sizeof sb) == 0) continue;
    std::memcpy(b.data() + kSuperOffset, &sb, sizeof sb);
    F2FSCORE_TRY(write_at(dev, slot * kBlockSize, b));
    F2FSCORE_TRY(flush(dev));
  }
  return {};
}

TuneState state_of(const SuperBlock& sb) {
  TuneState t;
  t.label = volume_label(sb);
  std::memcpy(t.uuid.data(), sb.uuid, 16);
  t.features = sb.feature.get();
  t.encoding = sb.s_encoding.get();
  t.encoding_flags = sb.s_encoding_flags.get();
  return t;
}

// A feature bit by the name -O takes and, where the superblock's feature
// list names it otherwise (f2fs-tools' "quota" is the bit quota_ino), both.
std::string option_name(std::uint32_t bit) {
  if (bit == feature::quota_ino) return "quota (quota_ino in the feature list)";
  const std::string name = feature_names(bit);
  return name.empty() ? fmt("bit 0x%x", bit) : name;
}

// Why a feature cannot be turned on after format.
const char* needs_mkfs(std::uint32_t bit) {
  switch (bit) {
    case feature::extra_attr:
    case feature::inode_checksum:
    case feature::flexible_inline_xattr:
    case feature::inode_crtime:
    case feature::project_quota:
    case feature::compression:
      return "needs the extra attribute area in every inode, laid down by mkfs";
    case feature::quota_ino: return "needs the quota inodes mkfs makes";
    case feature::lost_found: return "needs the lost+found directory mkfs makes";
    case feature::blkzoned: return "needs a zoned layout";
    case feature::ro: return "needs the read-only layout mkfs makes";
    default: return "is not one tune can turn on";
  }
}

}  // namespace

std::string encoding_name(std::uint16_t enc, std::uint16_t flags) {
  std::string t = enc == kEncodingUtf8_12_1 ? "utf8" : fmt("unknown encoding %u", enc);
  std::string f;
  if (flags & kEncStrictModeFl) f += "strict";
  if (flags & kEncNoCompatFallbackFl) f += std::string(f.empty() ? "" : ",") + "hashonly";
  if (const unsigned other = flags & ~unsigned{kEncStrictModeFl | kEncNoCompatFallbackFl})
    f += (f.empty() ? "" : ",") + fmt("unknown flags 0x%x", other);
  return f.empty() ? t : t + ":" + f;
}

Result<TuneState> read_tune_state(BlockDevice& dev) {
  auto s = load_slots(dev);
  if (!s) return tl::unexpected(s.error());
  return state_of(s->sb);
}

Result<TuneReport> tune_volume(BlockDevice& dev, const TuneChanges& c, bool dry_run) {
  auto s = load_slots(dev);
  if (!s) return tl::unexpected(s.error());
  SuperBlock sb = s->sb;
  TuneReport rep;
  rep.before = state_of(sb);
  const std::uint32_t have = sb.feature.get();

  std::uint32_t add = c.add_features;
  if (c.encoding) add |= feature::casefold;
  for (std::uint32_t bit = 1; bit != 0; bit <<= 1) {
    if (!(add & bit) || (have & bit) || (kTunableFeatures & bit)) continue;
    return make_error(Errc::invalid_argument,
                      "feature " + option_name(bit) + " cannot be turned on after format: it " + needs_mkfs(bit));
  }
  if (add & feature::casefold) {
    const auto enc = c.encoding ? *c.encoding : std::pair<std::uint16_t, std::uint16_t>{kEncodingUtf8_12_1, 0};
    if (enc.first != kEncodingUtf8_12_1)
      return make_error(Errc::invalid_argument,
                        "casefold encoding " + encoding_name(enc.first, enc.second) + " is not utf8 (utf8-12.1)");
    if (have & feature::casefold) {
      if (c.encoding && (sb.s_encoding.get() != enc.first || sb.s_encoding_flags.get() != enc.second))
        return make_error(Errc::invalid_argument,
                          "the volume is casefolded with encoding " +
                              encoding_name(sb.s_encoding.get(), sb.s_encoding_flags.get()) + ", not " +
                              encoding_name(enc.first, enc.second) + ": a volume keeps the encoding it was given");
    } else {
      sb.s_encoding.set(enc.first);
      sb.s_encoding_flags.set(enc.second);
    }
  }
  if (c.uuid && std::memcmp(c.uuid->data(), sb.uuid, 16) != 0) {
    if (have & feature::inode_checksum)
      return make_error(Errc::invalid_argument,
                        "the uuid cannot change on a volume with inode_checksum: every inode's checksum is seeded "
                        "by it");
    if (have & feature::encrypt)
      return make_error(Errc::invalid_argument,
                        "the uuid cannot change on a volume with encrypt: keys of IV_INO_LBLK policies are derived "
                        "with it");
    std::memcpy(sb.uuid, c.uuid->data(), 16);
  }
  if (c.label) F2FSCORE_TRY(set_volume_label(sb, *c.label));
  sb.feature.set(have | add);
  // sb_checksum: checksum_offset names where the crc is, as
  // sanity_check_raw_super() in fs/f2fs/super.c checks it.
  if ((add & feature::sb_checksum) && !(have & feature::sb_checksum)) sb.checksum_offset.set(kSbChecksumOffset);
  if (sb.feature.get() & feature::sb_checksum) sb.crc.set(superblock_checksum(sb));
  rep.after = state_of(sb);
  const bool differs = std::memcmp(&sb, &s->sb, sizeof sb) != 0 ||
                       std::memcmp(s->blocks.data() + kSuperOffset, s->blocks.data() + kBlockSize + kSuperOffset,
                                   sizeof sb) != 0;
  if (dry_run || !differs) return rep;
  F2FSCORE_TRY(write_both_copies(dev, *s, sb));
  rep.written = true;
  return rep;
}

Result<std::string> read_volume_label(BlockDevice& dev) {
  auto s = load_slots(dev);
  if (!s) return tl::unexpected(s.error());
  return volume_label(s->sb);
}

Status write_volume_label(BlockDevice& dev, std::string_view label) {
  TuneChanges c;
  c.label = std::string(label);
  auto r = tune_volume(dev, c);
  if (!r) return tl::unexpected(r.error());
  return {};
}

}  // namespace f2fscore
