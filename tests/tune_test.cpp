// The volume label in both superblock copies (f2fscore/tune.hpp) on a
// memory device: volume_name bytes decoded by hand as UTF-16LE (the byte
// order is explicit, so this runs the same on big-endian hosts), the
// superblock crc with sb_checksum, refusals that write nothing.
#include <gtest/gtest.h>

#include <cstring>
#include <vector>

#include "f2fscore/checksum.hpp"
#include "f2fscore/mkfs.hpp"
#include "f2fscore/tune.hpp"

using namespace f2fscore;

namespace {

std::unique_ptr<BlockDevice> volume(std::uint32_t features, const std::string& label) {
  auto mem = make_memory_device(64ull << 20);
  MkfsTarget t{mem.get(), "mem"};
  MkfsOptions mo;
  mo.timestamp = 1700000000;
  mo.features = features;
  mo.label = label;
  if (!format_volume(std::span<const MkfsTarget>(&t, 1), mo)) return nullptr;
  return mem;
}

std::vector<std::uint8_t> block(BlockDevice& dev, std::uint64_t n) {
  std::vector<std::uint8_t> b(4096);
  EXPECT_TRUE(read_at(dev, n * 4096, b));
  return b;
}

// volume_name: 512 little-endian 16-bit units at superblock byte 124.
std::u16string stored_name(BlockDevice& dev, int copy) {
  const auto b = block(dev, static_cast<std::uint64_t>(copy));
  std::u16string s;
  for (std::size_t i = 0; i < 512; ++i) {
    const auto u = static_cast<char16_t>(b[1024 + 124 + 2 * i] | (b[1024 + 124 + 2 * i + 1] << 8));
    if (u == 0) break;
    s.push_back(u);
  }
  return s;
}

}  // namespace

TEST(VolumeLabel, ReadsWhatMkfsWrote) {
  auto dev = volume(0, "mkfs-label");
  ASSERT_TRUE(dev);
  auto l = read_volume_label(*dev);
  ASSERT_TRUE(l) << l.error().to_string();
  EXPECT_EQ(*l, "mkfs-label");
}

TEST(VolumeLabel, WritesBothCopiesAsUtf16le) {
  auto dev = volume(0, "old");
  ASSERT_TRUE(dev);
  // U+00E9, U+2713 and U+1F600 (the surrogate pair D83D DE00).
  ASSERT_TRUE(write_volume_label(*dev, "\xC3\xA9\xE2\x9C\x93\xF0\x9F\x98\x80"));
  const std::u16string want{0x00E9, 0x2713, 0xD83D, 0xDE00};
  EXPECT_EQ(stored_name(*dev, 0), want);
  EXPECT_EQ(stored_name(*dev, 1), want);
  auto l = read_volume_label(*dev);
  ASSERT_TRUE(l);
  EXPECT_EQ(*l, "\xC3\xA9\xE2\x9C\x93\xF0\x9F\x98\x80");
}

TEST(VolumeLabel, SbChecksumRecomputed) {
  auto dev = volume(disk::feature::sb_checksum, "a");
  ASSERT_TRUE(dev);
  ASSERT_TRUE(write_volume_label(*dev, "bb"));
  for (int copy = 0; copy < 2; ++copy) {
    const auto b = block(*dev, static_cast<std::uint64_t>(copy));
    const std::uint32_t stored = static_cast<std::uint32_t>(b[1024 + 3068]) | (b[1024 + 3069] << 8) |
                                 (b[1024 + 3070] << 16) | (static_cast<std::uint32_t>(b[1024 + 3071]) << 24);
    EXPECT_EQ(stored, f2fs_crc32(0xF2F52010u, b.data() + 1024, 3068)) << copy;
  }
  auto l = read_volume_label(*dev);
  ASSERT_TRUE(l) << l.error().to_string();
  EXPECT_EQ(*l, "bb");
}

TEST(VolumeLabel, TooLongOrInvalidWritesNothing) {
  auto dev = volume(0, "keep");
  ASSERT_TRUE(dev);
  const auto b0 = block(*dev, 0), b1 = block(*dev, 1);
  auto r = write_volume_label(*dev, std::string(513, 'x'));
  ASSERT_FALSE(r);
  EXPECT_EQ(r.error().code, Errc::invalid_argument);
  r = write_volume_label(*dev, "\xFF");
  ASSERT_FALSE(r);
  EXPECT_EQ(r.error().code, Errc::invalid_argument);
  // Overlong forms (of NUL and '/'), a surrogate half, past U+10FFFF, a NUL:
  // not UTF-8 (RFC 3629), refused rather than stored as other characters.
  for (const std::string bad : {std::string("\xC0\x80xyz"), std::string("\xE0\x80\xAF"),
                                std::string("\xED\xA0\x80"), std::string("\xF4\x90\x80\x80"),
                                std::string("a\0b", 3)}) {
    r = write_volume_label(*dev, bad);
    ASSERT_FALSE(r) << bad.size();
    EXPECT_EQ(r.error().code, Errc::invalid_argument);
  }
  EXPECT_EQ(block(*dev, 0), b0);
  EXPECT_EQ(block(*dev, 1), b1);
  EXPECT_TRUE(write_volume_label(*dev, std::string(512, 'x')));
  EXPECT_EQ(stored_name(*dev, 1).size(), 512u);
}

TEST(VolumeLabel, FirstValidCopyIsUsedAndBothAreWritten) {
  auto dev = volume(0, "orig");
  ASSERT_TRUE(dev);
  // Copy 0 without its magic: copy 1 is the one in use, as the kernel's
  // read_raw_super_block() takes it; writing restores both.
  std::vector<std::uint8_t> b0 = block(*dev, 0);
  std::memset(b0.data() + 1024, 0, 4);
  ASSERT_TRUE(write_at(*dev, 0, b0));
  auto l = read_volume_label(*dev);
  ASSERT_TRUE(l) << l.error().to_string();
  EXPECT_EQ(*l, "orig");
  ASSERT_TRUE(write_volume_label(*dev, "new"));
  const auto n0 = block(*dev, 0), n1 = block(*dev, 1);
  EXPECT_EQ(std::memcmp(n0.data() + 1024, n1.data() + 1024, 3072), 0);
  EXPECT_EQ(stored_name(*dev, 0), u"new");
}

TEST(VolumeLabel, NotF2fs) {
  auto mem = make_memory_device(16ull << 20);
  auto l = read_volume_label(*mem);
  ASSERT_FALSE(l);
  EXPECT_EQ(l.error().code, Errc::corrupt);
  EXPECT_NE(l.error().message.find("not an F2FS file system"), std::string::npos) << l.error().message;
  auto tiny = make_memory_device(4096);
  EXPECT_FALSE(read_volume_label(*tiny));
}

// ------------------------------------------------------------ tune_volume
// Fields decoded by hand at their offsets in struct f2fs_super_block
// (include/linux/f2fs_fs.h): uuid at 108 (16 bytes), feature at 2180 (le32),
// s_encoding at 2758 and s_encoding_flags at 2760 (le16), checksum_offset at
// 32 (le32), crc at 3068.

namespace {

std::uint32_t le32_at(const std::vector<std::uint8_t>& b, std::size_t off) {
  return static_cast<std::uint32_t>(b[off]) | (static_cast<std::uint32_t>(b[off + 1]) << 8) |
         (static_cast<std::uint32_t>(b[off + 2]) << 16) | (static_cast<std::uint32_t>(b[off + 3]) << 24);
}
std::uint16_t le16_at(const std::vector<std::uint8_t>& b, std::size_t off) {
  return static_cast<std::uint16_t>(b[off] | (b[off + 1] << 8));
}
constexpr std::size_t kSb = 1024;

}  // namespace

TEST(Tune, TurnsOnEncryptVerityAndSbChecksumInBothCopies) {
  auto dev = volume(0, "t");
  ASSERT_TRUE(dev);
  const std::uint32_t before = le32_at(block(*dev, 0), kSb + 2180);
  TuneChanges c;
  c.add_features = disk::feature::encrypt | disk::feature::verity | disk::feature::sb_checksum;
  auto r = tune_volume(*dev, c);
  ASSERT_TRUE(r) << r.error().to_string();
  EXPECT_TRUE(r->written);
  EXPECT_EQ(r->before.features, before);
  for (int copy = 0; copy < 2; ++copy) {
    const auto b = block(*dev, static_cast<std::uint64_t>(copy));
    EXPECT_EQ(le32_at(b, kSb + 2180), before | 0x1u | 0x400u | 0x800u) << copy;
    EXPECT_EQ(le32_at(b, kSb + 32), 3068u) << copy;  // checksum_offset
    EXPECT_EQ(le32_at(b, kSb + 3068), f2fs_crc32(0xF2F52010u, b.data() + kSb, 3068)) << copy;
  }
  // Again: nothing differs, nothing is written.
  auto again = tune_volume(*dev, c);
  ASSERT_TRUE(again) << again.error().to_string();
  EXPECT_FALSE(again->written);
}

TEST(Tune, CasefoldDefaultsToUtf8AndTakesStrict) {
  auto dev = volume(0, "cf");
  ASSERT_TRUE(dev);
  TuneChanges c;
  c.add_features = disk::feature::casefold;
  ASSERT_TRUE(tune_volume(*dev, c));
  auto b = block(*dev, 1);
  EXPECT_NE(le32_at(b, kSb + 2180) & 0x1000u, 0u);
  EXPECT_EQ(le16_at(b, kSb + 2758), 1);  // utf8-12.1
  EXPECT_EQ(le16_at(b, kSb + 2760), 0);

  auto strict = volume(0, "cf2");
  ASSERT_TRUE(strict);
  TuneChanges s;
  s.encoding = std::pair<std::uint16_t, std::uint16_t>{1, 1};  // -C utf8:strict, casefold implied
  ASSERT_TRUE(tune_volume(*strict, s));
  b = block(*strict, 0);
  EXPECT_NE(le32_at(b, kSb + 2180) & 0x1000u, 0u);
  EXPECT_EQ(le16_at(b, kSb + 2760), 1);
  // A casefolded volume keeps its encoding: another one is refused.
  const auto b0 = block(*strict, 0), b1 = block(*strict, 1);
  TuneChanges other;
  other.encoding = std::pair<std::uint16_t, std::uint16_t>{1, 0};
  auto r = tune_volume(*strict, other);
  ASSERT_FALSE(r);
  EXPECT_EQ(r.error().code, Errc::invalid_argument);
  EXPECT_EQ(block(*strict, 0), b0);
  EXPECT_EQ(block(*strict, 1), b1);
}

TEST(Tune, FeaturesOnlyMkfsLaysDownAreRefusedWithNothingWritten) {
  for (std::uint32_t bit : {disk::feature::extra_attr, disk::feature::inode_checksum, disk::feature::quota_ino,
                            disk::feature::lost_found, disk::feature::compression, disk::feature::project_quota,
                            disk::feature::flexible_inline_xattr, disk::feature::inode_crtime}) {
    auto dev = volume(0, "x");
    ASSERT_TRUE(dev);
    const auto b0 = block(*dev, 0), b1 = block(*dev, 1);
    TuneChanges c;
    c.add_features = disk::feature::encrypt | bit;  // the tunable one is not written either
    c.label = "changed";
    auto r = tune_volume(*dev, c);
    ASSERT_FALSE(r) << bit;
    EXPECT_EQ(r.error().code, Errc::invalid_argument);
    EXPECT_NE(r.error().message.find("cannot be turned on after format"), std::string::npos) << r.error().message;
    EXPECT_EQ(block(*dev, 0), b0) << bit;
    EXPECT_EQ(block(*dev, 1), b1) << bit;
  }
}

TEST(Tune, UuidStoredInBothCopiesRefusedWhereItSeedsChecksumsOrKeys) {
  auto dev = volume(disk::feature::sb_checksum, "u");
  ASSERT_TRUE(dev);
  TuneChanges c;
  c.uuid = std::array<std::uint8_t, 16>{0x0c, 0x1d, 0x2e, 0x3f, 0x4a, 0x5b, 0x6c, 0x7d,
                                        0x8e, 0x9f, 0xa0, 0xb1, 0xc2, 0xd3, 0xe4, 0xf5};
  ASSERT_TRUE(tune_volume(*dev, c));
  for (int copy = 0; copy < 2; ++copy) {
    const auto b = block(*dev, static_cast<std::uint64_t>(copy));
    EXPECT_EQ(std::memcmp(b.data() + kSb + 108, c.uuid->data(), 16), 0) << copy;
    EXPECT_EQ(le32_at(b, kSb + 3068), f2fs_crc32(0xF2F52010u, b.data() + kSb, 3068)) << copy;
  }
  for (std::uint32_t f : {disk::feature::extra_attr | disk::feature::inode_checksum, disk::feature::encrypt}) {
    auto d = volume(f, "v");
    ASSERT_TRUE(d);
    const auto b0 = block(*d, 0), b1 = block(*d, 1);
    auto r = tune_volume(*d, c);
    ASSERT_FALSE(r) << f;
    EXPECT_EQ(r.error().code, Errc::invalid_argument);
    EXPECT_NE(r.error().message.find("uuid cannot change"), std::string::npos) << r.error().message;
    EXPECT_EQ(block(*d, 0), b0);
    EXPECT_EQ(block(*d, 1), b1);
  }
}

TEST(Tune, DryRunReportsAndWritesNothing) {
  auto dev = volume(0, "dry");
  ASSERT_TRUE(dev);
  const auto b0 = block(*dev, 0), b1 = block(*dev, 1);
  TuneChanges c;
  c.label = "wet";
  c.add_features = disk::feature::verity;
  auto r = tune_volume(*dev, c, /*dry_run=*/true);
  ASSERT_TRUE(r) << r.error().to_string();
  EXPECT_FALSE(r->written);
  EXPECT_EQ(r->before.label, "dry");
  EXPECT_EQ(r->after.label, "wet");
  EXPECT_NE(r->after.features & 0x400u, 0u);
  EXPECT_EQ(block(*dev, 0), b0);
  EXPECT_EQ(block(*dev, 1), b1);
  auto s = read_tune_state(*dev);
  ASSERT_TRUE(s);
  EXPECT_EQ(s->label, "dry");
}
