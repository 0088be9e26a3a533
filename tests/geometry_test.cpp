// The volume geometry against layouts computed by hand from mkfs.f2fs 1.15's
// output (docs: /work/shared/F2FS-FACTS.md 2.3) and the kernel's rules
// (current_nat_addr() in fs/f2fs/node.h, current_sit_addr() in
// fs/f2fs/segment.h, __bitmap_ptr() in fs/f2fs/f2fs.h).
#include <gtest/gtest.h>

#include <cstring>
#include <vector>

#include "f2fscore/disk/geometry.hpp"

namespace {

using namespace f2fscore;
using namespace f2fscore::disk;

// The superblock mkfs.f2fs 1.15 writes for a 1 GiB image: CP 2 segments at
// 512, SIT 2 at 1536, NAT 4 at 2560, SSA 1 at 4608, main from 5120 with 502
// segments; 511 segments from segment0 (512).
SuperBlock sb_1gib() {
  SuperBlock sb{};
  sb.log_blocks_per_seg.set(9);
  sb.segs_per_sec.set(1);
  sb.secs_per_zone.set(1);
  sb.block_count.set(262144);
  sb.segment_count.set(511);
  sb.segment_count_ckpt.set(2);
  sb.segment_count_sit.set(2);
  sb.segment_count_nat.set(4);
  sb.segment_count_ssa.set(1);
  sb.segment_count_main.set(502);
  sb.section_count.set(502);
  sb.segment0_blkaddr.set(512);
  sb.cp_blkaddr.set(512);
  sb.sit_blkaddr.set(1536);
  sb.nat_blkaddr.set(2560);
  sb.ssa_blkaddr.set(4608);
  sb.main_blkaddr.set(5120);
  return sb;
}

// 64 GiB: SIT 4, NAT 116, SSA 64, main 32581 segments (32767 in all).
SuperBlock sb_64gib() {
  SuperBlock sb{};
  sb.log_blocks_per_seg.set(9);
  sb.segs_per_sec.set(1);
  sb.secs_per_zone.set(1);
  sb.block_count.set(16777216);
  sb.segment_count.set(32767);
  sb.segment_count_ckpt.set(2);
  sb.segment_count_sit.set(4);
  sb.segment_count_nat.set(116);
  sb.segment_count_ssa.set(64);
  sb.segment_count_main.set(32581);
  sb.section_count.set(32581);
  sb.segment0_blkaddr.set(512);
  sb.cp_blkaddr.set(512);
  sb.sit_blkaddr.set(1536);
  sb.nat_blkaddr.set(3584);
  sb.ssa_blkaddr.set(62976);
  sb.main_blkaddr.set(95744);
  return sb;
}

// A CP block (+ payload blocks) with the given flags and bitmap sizes.
std::vector<std::uint8_t> cp_blocks(std::uint32_t payload, std::uint32_t flags, std::uint32_t sit_bytes,
                                    std::uint32_t nat_bytes) {
  std::vector<std::uint8_t> b((1 + payload) * kBlockSize, 0);
  Checkpoint cp{};
  cp.ckpt_flags.set(flags);
  cp.sit_ver_bitmap_bytesize.set(sit_bytes);
  cp.nat_ver_bitmap_bytesize.set(nat_bytes);
  std::memcpy(b.data(), &cp, sizeof cp);
  return b;
}

TEST(Geometry, AreasOf1GiB) {
  const Geometry g(sb_1gib());
  EXPECT_EQ(g.blocks_per_seg(), 512u);
  EXPECT_EQ(g.cp_blkaddr(), 512u);
  EXPECT_EQ(g.sit_blkaddr(), 1536u);
  EXPECT_EQ(g.nat_blkaddr(), 2560u);
  EXPECT_EQ(g.ssa_blkaddr(), 4608u);
  EXPECT_EQ(g.main_blkaddr(), 5120u);
  EXPECT_EQ(g.main_segments(), 502u);
  EXPECT_EQ(g.main_sections(), 502u);
  EXPECT_EQ(g.main_blocks(), 502u * 512);
  EXPECT_EQ(g.main_end(), 262144u);  // the image's last block + 1
  EXPECT_EQ(g.volume_end(), 262144u);
  EXPECT_EQ(g.meta_segments(), 9u);
  EXPECT_TRUE(g.is_main_addr(5120));
  EXPECT_TRUE(g.is_main_addr(262143));
  EXPECT_FALSE(g.is_main_addr(5119));
  EXPECT_FALSE(g.is_main_addr(262144));
  // Segments of the main area.
  EXPECT_EQ(g.segment_start(0), 5120u);
  EXPECT_EQ(g.segment_start(3), 6656u);
  EXPECT_EQ(g.segno_of(6656), 3u);
  EXPECT_EQ(g.segno_of(6656 + 511), 3u);
  EXPECT_EQ(g.segno_of(6656 + 512), 4u);
  EXPECT_EQ(g.blkoff_of(6657), 1u);
  EXPECT_EQ(g.ssa_addr(0), 4608u);
  EXPECT_EQ(g.ssa_addr(501), 5109u);
  // NAT: 2 of 4 segments per copy = 1024 blocks, 455 nids each.
  EXPECT_EQ(g.nat_blocks(), 1024u);
  EXPECT_EQ(g.max_nid(), 465920u);
  EXPECT_EQ(g.nat_bitmap_bytes(), 128u);
  EXPECT_EQ(g.nat_addr(0, 0), 2560u);
  EXPECT_EQ(g.nat_addr(0, 1), 3072u);
  EXPECT_EQ(g.nat_addr(511, 0), 3071u);
  EXPECT_EQ(g.nat_addr(512, 0), 3584u);
  EXPECT_EQ(g.nat_addr(512, 1), 4096u);
  EXPECT_EQ(g.nat_addr(1023, 1), 4607u);  // the block before the SSA
  EXPECT_EQ(Geometry::nat_block_of(454), 0u);
  EXPECT_EQ(Geometry::nat_block_of(455), 1u);
  // SIT: one segment per copy.
  EXPECT_EQ(g.sit_blocks(), 512u);
  EXPECT_EQ(g.sit_bitmap_bytes(), 64u);
  EXPECT_EQ(g.sit_blocks_used(), 10u);  // ceil(502 / 55)
  EXPECT_EQ(g.sit_addr(0, 0), 1536u);
  EXPECT_EQ(g.sit_addr(0, 1), 2048u);
  EXPECT_EQ(g.sit_addr(9, 1), 2057u);
  EXPECT_EQ(Geometry::sit_block_of(54), 0u);
  EXPECT_EQ(Geometry::sit_block_of(55), 1u);
  // CP packs and nat_bits (256 + 8 bytes: one block at each segment's end).
  EXPECT_EQ(g.cp_pack_start(0), 512u);
  EXPECT_EQ(g.cp_pack_start(1), 1024u);
  const NatBitsLayout nb = g.nat_bits_layout();
  EXPECT_EQ(nb.bitmap_bytes, 128u);
  EXPECT_EQ(nb.blocks, 1u);
  EXPECT_EQ(nb.full_offset, 8u);
  EXPECT_EQ(nb.empty_offset, 136u);
  EXPECT_EQ(g.nat_bits_addr(0), 1023u);
  EXPECT_EQ(g.nat_bits_addr(1), 1535u);
}

TEST(Geometry, AreasOf64GiB) {
  const Geometry g(sb_64gib());
  EXPECT_EQ(g.main_end(), 16777216u);
  EXPECT_EQ(g.nat_blocks(), 29696u);
  EXPECT_EQ(g.max_nid(), 13511680u);
  EXPECT_EQ(g.nat_bitmap_bytes(), 3712u);
  EXPECT_EQ(g.sit_blocks(), 1024u);
  EXPECT_EQ(g.sit_bitmap_bytes(), 128u);
  EXPECT_EQ(g.sit_blocks_used(), 593u);  // 55 * 592 = 32560 < 32581
  EXPECT_EQ(g.nat_addr(29695, 1), 62975u);  // the last NAT block before the SSA
  EXPECT_EQ(g.sit_addr(1023, 1), 3583u);    // the last SIT block before the NAT
  EXPECT_EQ(g.ssa_addr(32580), 95556u);     // 62976 + 32580: inside the 64 SSA segments
  const NatBitsLayout nb = g.nat_bits_layout();
  EXPECT_EQ(nb.bitmap_bytes, 3712u);
  EXPECT_EQ(nb.blocks, 2u);  // 2 * 3712 + 8 = 7432 bytes
  EXPECT_EQ(g.nat_bits_addr(0), 1022u);
  // SIT (128) + NAT (3712) bitmaps fit the CP block: SIT at 192, NAT after it.
  const BitmapOffsets o = g.bitmap_offsets(0);
  EXPECT_EQ(o.sit, 192u);
  EXPECT_EQ(o.nat, 320u);
}

TEST(Geometry, InverseOfNatAndSitAddresses) {
  const Geometry g(sb_1gib());
  std::uint32_t idx = 0;
  int copy = -1;
  ASSERT_TRUE(g.nat_index(4097, &idx, &copy));
  EXPECT_EQ(idx, 513u);
  EXPECT_EQ(copy, 1);
  ASSERT_TRUE(g.nat_index(3071, &idx, &copy));
  EXPECT_EQ(idx, 511u);
  EXPECT_EQ(copy, 0);
  EXPECT_FALSE(g.nat_index(2559, &idx, &copy));
  EXPECT_FALSE(g.nat_index(4608, &idx, &copy));
  ASSERT_TRUE(g.sit_index(2057, &idx, &copy));
  EXPECT_EQ(idx, 9u);
  EXPECT_EQ(copy, 1);
  EXPECT_FALSE(g.sit_index(2560, &idx, &copy));
}

TEST(Geometry, VersionBitmapsChooseTheCopy) {
  const Geometry g(sb_1gib());
  // No payload, no large NAT bitmap: SIT bitmap at 192 (64 bytes), NAT at 256.
  auto b = cp_blocks(0, 0, 64, 128);
  b[192] = 0x80;         // SIT block 0: copy 1 (MSB-first)
  b[256 + 64] = 0x40;    // NAT block 513: copy 1
  auto bm = g.version_bitmaps(b);
  ASSERT_TRUE(bm) << bm.error().message;
  EXPECT_EQ(bm->sit.size(), 64u);
  EXPECT_EQ(bm->nat.size(), 128u);
  EXPECT_EQ(g.current_sit_addr(0, *bm), 2048u);
  EXPECT_EQ(g.current_sit_addr(1, *bm), 1537u);
  EXPECT_EQ(g.current_nat_addr(512, *bm), 3584u);
  EXPECT_EQ(g.current_nat_addr(513, *bm), 4097u);
  EXPECT_EQ(g.current_nat_addr(514, *bm), 3586u);
  EXPECT_EQ(bm->nat_copy(1u << 20), 0);  // past the bitmap: copy 0
}

TEST(Geometry, LargeNatBitmapOffsets) {
  const Geometry g(sb_1gib());
  const BitmapOffsets o = g.bitmap_offsets(cp_flag::large_nat_bitmap);
  EXPECT_EQ(o.nat, 196u);        // after the 4-byte field at 192
  EXPECT_EQ(o.sit, 196u + 128);  // after the NAT bitmap
  auto b = cp_blocks(0, cp_flag::large_nat_bitmap, 64, 128);
  b[196] = 0x01;        // NAT block 7
  b[324] = 0x20;        // SIT block 2
  auto bm = g.version_bitmaps(b);
  ASSERT_TRUE(bm) << bm.error().message;
  EXPECT_EQ(g.current_nat_addr(7, *bm), 2560u + 7 + 512);
  EXPECT_EQ(g.current_nat_addr(6, *bm), 2560u + 6);
  EXPECT_EQ(g.current_sit_addr(2, *bm), 1536u + 2 + 512);
}

TEST(Geometry, CpPayloadHoldsTheSitBitmap) {
  SuperBlock sb = sb_64gib();
  sb.cp_payload.set(2);
  const Geometry g(sb);
  const BitmapOffsets o = g.bitmap_offsets(0);
  EXPECT_EQ(o.nat, 192u);
  EXPECT_EQ(o.sit, 4096u);
  auto b = cp_blocks(2, 0, 128, 3712);
  b[4096] = 0x80;  // SIT block 0
  b[192 + 3] = 0x80;  // NAT block 24
  auto bm = g.version_bitmaps(b);
  ASSERT_TRUE(bm) << bm.error().message;
  EXPECT_EQ(g.current_sit_addr(0, *bm), 1536u + 1024);
  EXPECT_EQ(g.current_nat_addr(24, *bm), 3584u + 24 + 512);
  // Without the payload blocks the bitmaps are not all there.
  b.resize(kBlockSize);
  EXPECT_FALSE(g.version_bitmaps(b));
}

TEST(Geometry, BitmapSizesMustMatchTheSuperblock) {
  const Geometry g(sb_1gib());
  auto b = cp_blocks(0, 0, 64, 64);
  auto bm = g.version_bitmaps(b);
  ASSERT_FALSE(bm);
  EXPECT_EQ(bm.error().code, Errc::corrupt);
}

TEST(Geometry, SectionsAndZones) {
  SuperBlock sb = sb_1gib();
  sb.segs_per_sec.set(2);
  sb.secs_per_zone.set(3);
  sb.section_count.set(251);
  const Geometry g(sb);
  EXPECT_EQ(g.segs_per_sec(), 2u);
  EXPECT_EQ(g.secs_per_zone(), 3u);
  EXPECT_EQ(g.blocks_per_sec(), 1024u);
  EXPECT_EQ(g.segs_per_zone(), 6u);
  EXPECT_EQ(g.main_sections(), 251u);
  EXPECT_EQ(g.sec_of_seg(4), 2u);
  EXPECT_EQ(g.sec_of_seg(5), 2u);
  EXPECT_EQ(g.first_seg_of_sec(2), 4u);
  EXPECT_EQ(g.zone_of_sec(5), 1u);
  EXPECT_EQ(g.zone_of_seg(13), 2u);  // section 6
  EXPECT_EQ(g.section_start(1), 6144u);
  EXPECT_EQ(g.sec_of(6144 + 1023), 1u);
  EXPECT_EQ(g.sec_of(6144 + 1024), 2u);
}

TEST(Geometry, VersionBitmapOffsetsAsBitmapPtr) {
  // __bitmap_ptr(): SIT then NAT in the CP block without payload.
  BitmapOffsets o = version_bitmap_offsets(0, 0, 64, 128);
  EXPECT_EQ(o.sit, 192u);
  EXPECT_EQ(o.nat, 256u);
  o = version_bitmap_offsets(0, 1, 4096, 128);
  EXPECT_EQ(o.nat, 192u);
  EXPECT_EQ(o.sit, 4096u);
  // Large NAT bitmap wins over cp_payload.
  o = version_bitmap_offsets(cp_flag::large_nat_bitmap, 1, 4096, 128);
  EXPECT_EQ(o.nat, 196u);
  EXPECT_EQ(o.sit, 324u);
}

}  // namespace
