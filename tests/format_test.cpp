// The on-disk records: sizes and offsets against the kernel's layout, and
// the explicit byte order (these also run on big-endian s390x and i686).
#include <gtest/gtest.h>

#include <cstring>

#include "f2fscore/disk/checkpoint.hpp"
#include "f2fscore/disk/dentry.hpp"
#include "f2fscore/disk/nat.hpp"
#include "f2fscore/disk/node.hpp"
#include "f2fscore/disk/sit.hpp"
#include "f2fscore/disk/summary.hpp"
#include "f2fscore/disk/superblock.hpp"
#include "f2fscore/disk/xattr.hpp"
#include "f2fscore/endian.hpp"

using namespace f2fscore;
using namespace f2fscore::disk;

TEST(Format, RecordSizesMatchTheKernel) {
  // Sizes of struct f2fs_* in include/linux/f2fs_fs.h (Linux 6.1).
  EXPECT_EQ(sizeof(SuperBlock), 3072u);
  EXPECT_EQ(sizeof(Checkpoint), 192u);
  EXPECT_EQ(sizeof(NatEntry), 9u);
  EXPECT_EQ(sizeof(SitEntry), 74u);
  EXPECT_EQ(sizeof(Summary), 7u);
  EXPECT_EQ(sizeof(DirEntry), 11u);
  EXPECT_EQ(sizeof(NodeFooter), 24u);
  EXPECT_EQ(sizeof(Extent), 12u);
  EXPECT_EQ(sizeof(Node), 4096u);
  EXPECT_EQ(sizeof(DentryBlock), 4096u);
  EXPECT_EQ(sizeof(SummaryBlock), 4096u);
  EXPECT_EQ(sizeof(XattrHeader), 24u);
  EXPECT_EQ(kNatEntryPerBlock, 455u);
  EXPECT_EQ(kSitEntryPerBlock, 55u);
  EXPECT_EQ(kNatJournalEntries, 38u);
  EXPECT_EQ(kSitJournalEntries, 6u);
}

TEST(Format, KeyOffsets) {
  EXPECT_EQ(offsetof(SuperBlock, uuid), 108u);
  EXPECT_EQ(offsetof(SuperBlock, feature), 2180u);
  EXPECT_EQ(offsetof(SuperBlock, crc), 3068u);
  EXPECT_EQ(offsetof(Checkpoint, ckpt_flags), 132u);
  EXPECT_EQ(offsetof(Inode, i_addr), 360u);
  EXPECT_EQ(offsetof(Inode, i_nid), 4052u);
  EXPECT_EQ(offsetof(Node, footer), 4072u);
  EXPECT_EQ(kInodeChecksumOffset, 368u);
  EXPECT_EQ(offsetof(DentryBlock, filename), 2384u);
}

TEST(Format, LittleEndianOnEveryHost) {
  Le32 v;
  v.set(0x11223344);
  EXPECT_EQ(v.bytes[0], 0x44);
  EXPECT_EQ(v.bytes[3], 0x11);
  EXPECT_EQ(v.get(), 0x11223344u);
  Le64 w;
  w.set(0x0102030405060708ull);
  EXPECT_EQ(w.bytes[0], 0x08);
  EXPECT_EQ(w.bytes[7], 0x01);
  std::uint8_t raw[8] = {0x10, 0x20, 0xf5, 0xf2, 0, 0, 0, 0};
  EXPECT_EQ(load_le32(raw, 0), 0xf2f52010u);
}

TEST(Format, BitOrders) {
  std::uint8_t m[2] = {0, 0};
  set_bit_msb(m, 0);
  EXPECT_EQ(m[0], 0x80);  // SIT valid maps: MSB first
  set_bit_le(m, 9);
  EXPECT_EQ(m[1], 0x02);  // dentry bitmaps: LSB first
  EXPECT_TRUE(test_bit_le(m, 9));
  clear_bit_msb(m, 0);
  EXPECT_EQ(m[0], 0);
}

TEST(Format, SitVblocksCarryTheType) {
  SitEntry e{};
  e.vblocks.set(make_sit_vblocks(3, 5));
  EXPECT_EQ(e.vblocks.get(), (3u << 10) | 5u);
  EXPECT_EQ(sit_type(e), 3);
  EXPECT_EQ(sit_vblocks(e), 5);
}

TEST(Format, ExtraIsizeFollowsFeatures) {
  // calc_extra_isize() of f2fs-tools 1.15, hand-computed from the field offsets.
  EXPECT_EQ(extra_isize_for_features(feature::extra_attr), 4);
  EXPECT_EQ(extra_isize_for_features(feature::extra_attr | feature::project_quota), 8);
  EXPECT_EQ(extra_isize_for_features(feature::extra_attr | feature::inode_checksum), 12);
  EXPECT_EQ(extra_isize_for_features(feature::extra_attr | feature::inode_crtime), 24);
  EXPECT_EQ(extra_isize_for_features(feature::extra_attr | feature::compression), 36);
}

TEST(Format, InlineDentryGeometry) {
  // NR_INLINE_DENTRY for the default 3488-byte inline area: 182 slots,
  // 23 bitmap bytes, and the rest reserved (fs/f2fs/f2fs.h).
  const auto l = inline_dentry_layout(3488);
  EXPECT_EQ(l.nr_slots, 182u);
  EXPECT_EQ(l.bitmap_bytes, 23u);
  EXPECT_EQ(l.reserved_bytes, 3488u - (182u * 19u + 23u));
}

TEST(Format, HashLevels) {
  EXPECT_EQ(dir_buckets(0, 0), 1u);
  EXPECT_EQ(dir_buckets(3, 0), 8u);
  EXPECT_EQ(dir_buckets(40, 0), 1u << 30);
  EXPECT_EQ(bucket_blocks(0), 2u);
  EXPECT_EQ(bucket_blocks(31), 4u);
}

TEST(Format, VolumeLabelRoundTrip) {
  SuperBlock sb{};
  ASSERT_TRUE(set_volume_label(sb, "données-\xF0\x9F\x98\x80"));
  EXPECT_EQ(volume_label(sb), "données-\xF0\x9F\x98\x80");
  EXPECT_EQ(sb.volume_name[0].get(), 'd');
  EXPECT_EQ(sb.volume_name[8].get(), 0xD83D);  // surrogate pair for U+1F600
  EXPECT_FALSE(set_volume_label(sb, std::string(513, 'x')));
  EXPECT_FALSE(set_volume_label(sb, "\xC3"));
}

TEST(Format, NatBitsSize) {
  // 1 GiB volume: 4 NAT segments -> 128 bytes per bitmap, one block.
  auto s = nat_bits_size(4);
  EXPECT_EQ(s.bitmap_bytes, 128u);
  EXPECT_EQ(s.blocks, 1u);
  // 64 GiB: 116 segments -> 3712 bytes each, (7424 + 8) bytes -> 2 blocks.
  s = nat_bits_size(116);
  EXPECT_EQ(s.bitmap_bytes, 3712u);
  EXPECT_EQ(s.blocks, 2u);
}
