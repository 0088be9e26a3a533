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
