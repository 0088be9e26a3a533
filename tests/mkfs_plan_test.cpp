// The mkfs planner and writer on memory devices. Expected layouts are the
// ones mkfs.f2fs 1.15 writes (measured, ../shared/F2FS-FACTS.md 2.3-2.4).
#include <gtest/gtest.h>

#include "support/assert_ok.hpp"

#include <cstring>

#include "f2fscore/checksum.hpp"
#include "f2fscore/disk/node.hpp"
#include "f2fscore/mkfs.hpp"

using namespace f2fscore;
using namespace f2fscore::disk;

namespace {
constexpr std::uint64_t MiB = 1 << 20, GiB = 1ull << 30;

Result<MkfsPlan> plan(std::uint64_t bytes, MkfsOptions o = {}) {
  auto dev = make_memory_device(bytes);
  MkfsTarget t{dev.get(), "mem"};
  return plan_mkfs(std::span<const MkfsTarget>(&t, 1), o);
}
}  // namespace

TEST(MkfsPlan, OneGibMatchesMkfsF2fs) {
  auto p = plan(GiB);
  ASSERT_OK(p);
  const auto& sb = p->sb;
  EXPECT_EQ(sb.segment0_blkaddr.get(), 512u);
  EXPECT_EQ(sb.sit_blkaddr.get(), 1536u);
  EXPECT_EQ(sb.segment_count_sit.get(), 2u);
  EXPECT_EQ(sb.nat_blkaddr.get(), 2560u);
  EXPECT_EQ(sb.segment_count_nat.get(), 4u);
  EXPECT_EQ(sb.ssa_blkaddr.get(), 4608u);
  EXPECT_EQ(sb.segment_count_ssa.get(), 1u);
  EXPECT_EQ(sb.main_blkaddr.get(), 5120u);
  EXPECT_EQ(sb.segment_count_main.get(), 502u);
  EXPECT_EQ(sb.block_count.get(), 262144u);
  EXPECT_EQ(p->reserved_segments, 39u);
  EXPECT_EQ(p->cp.rsvd_segment_count.get(), 39u);
  EXPECT_EQ(p->cp.overprov_segment_count.get(), 68u);
  EXPECT_EQ(p->cp.user_block_count.get(), 222208u);
  EXPECT_NEAR(p->overprovision, 6.36, 0.001);
  EXPECT_EQ(p->cp.ckpt_flags.get(), 0x185u);  // umount, compact summary, nat_bits, trimmed
  // Active logs: node logs at 0, 1, 2, hot data at 3, cold data at 124, warm data at 250.
  EXPECT_EQ(p->cp.cur_node_segno[0].get(), 0u);
  EXPECT_EQ(p->cp.cur_node_segno[1].get(), 1u);
  EXPECT_EQ(p->cp.cur_node_segno[2].get(), 2u);
  EXPECT_EQ(p->cp.cur_data_segno[0].get(), 3u);
  EXPECT_EQ(p->cp.cur_data_segno[1].get(), 250u);
  EXPECT_EQ(p->cp.cur_data_segno[2].get(), 124u);
  EXPECT_EQ(p->cp.next_free_nid.get(), 4u);
  EXPECT_EQ(p->cp.valid_block_count.get(), 2u);
}

TEST(MkfsPlan, SixtyFourGibMatchesMkfsF2fs) {
  MkfsOptions o;
  o.features = feature::extra_attr | feature::quota_ino | feature::project_quota | feature::lost_found;
  auto p = plan(64 * GiB, o);
  ASSERT_OK(p);
  EXPECT_EQ(p->sb.segment_count_sit.get(), 4u);
  EXPECT_EQ(p->sb.segment_count_nat.get(), 116u);
  EXPECT_EQ(p->sb.segment_count_ssa.get(), 64u);
  EXPECT_EQ(p->sb.segment_count_main.get(), 32581u);
  EXPECT_EQ(p->reserved_segments, 264u);
  EXPECT_EQ(p->cp.overprov_segment_count.get(), 516u);
  EXPECT_NEAR(p->overprovision, 0.78, 0.001);
  EXPECT_EQ(p->cp.next_free_nid.get(), 8u);  // quota 4, 5, 6 and lost+found 7
  EXPECT_EQ(p->sb.qf_ino[2].get(), 6u);
  EXPECT_EQ(p->lpf_ino, 7u);
}

TEST(MkfsPlan, SmallestVolume) {
  EXPECT_TRUE(plan(52 * MiB));
  auto p = plan(51 * MiB);
  ASSERT_FALSE(p);
  EXPECT_EQ(p.error().code, Errc::no_space);
  EXPECT_NE(p.error().message.find("not sufficient"), std::string::npos);
  MkfsOptions two;
  two.segs_per_sec = 2;
  EXPECT_TRUE(plan(84 * MiB, two));
  EXPECT_FALSE(plan(83 * MiB, two));
}

TEST(MkfsPlan, FeaturesNeedingExtraAttrAreRefused) {
  for (std::uint32_t f : {feature::project_quota, feature::inode_checksum, feature::flexible_inline_xattr,
                          feature::inode_crtime, feature::compression}) {
    MkfsOptions o;
    o.features = f;
    auto p = plan(GiB, o);
    ASSERT_FALSE(p) << f;
    EXPECT_EQ(p.error().code, Errc::invalid_argument);
    EXPECT_NE(p.error().message.find("extra_attr"), std::string::npos);
  }
}

TEST(MkfsPlan, ParseFeatures) {
  auto f = parse_features("extra_attr, quota,lost_found");
  ASSERT_TRUE(f);
  EXPECT_EQ(*f, feature::extra_attr | feature::quota_ino | feature::lost_found);
  auto bad = parse_features("extra_attr,frobnicate");
  ASSERT_FALSE(bad);
  EXPECT_NE(bad.error().message.find("frobnicate"), std::string::npos);
  EXPECT_TRUE(parse_uuid("0c1d2e3f-4a5b-6c7d-8e9f-a0b1c2d3e4f5"));
  EXPECT_FALSE(parse_uuid("0c1d2e3f-4a5b-6c7d-8e9f"));
  // libuuid's forms only: 32 hex digits, or dashes exactly at 8, 13, 18, 23.
  EXPECT_TRUE(parse_uuid("0c1d2e3f4a5b6c7d8e9fa0b1c2d3e4f5"));
  EXPECT_FALSE(parse_uuid("0123456789abcdef0123456789abcdef----"));
  EXPECT_FALSE(parse_uuid("0c1d2e3f4-a5b-6c7d-8e9f-a0b1c2d3e4f5"));
  EXPECT_FALSE(parse_uuid("0c1d2e3f-4a5b-6c7d-8e9f-a0b1c2d3e4f"));
  auto e = parse_encoding("utf8:strict");
  ASSERT_TRUE(e);
  EXPECT_EQ(e->second, kEncStrictModeFl);
  EXPECT_FALSE(parse_encoding("latin1"));
}

TEST(MkfsFormat, ReproducibleWithFixedUuidAndTime) {
  MkfsOptions o;
  o.features = feature::extra_attr | feature::inode_checksum | feature::sb_checksum | feature::lost_found |
               feature::quota_ino;
  o.uuid = *parse_uuid("0c1d2e3f-4a5b-6c7d-8e9f-a0b1c2d3e4f5");
  o.timestamp = 1700000000;
  std::vector<std::uint8_t> images[2];
  for (auto& img : images) {
    auto dev = make_memory_device(100 * MiB);
    MkfsTarget t{dev.get(), "mem"};
    o.random_seed = reinterpret_cast<std::uintptr_t>(dev.get());  // differs per run: must not matter
    auto r = format_volume(std::span<const MkfsTarget>(&t, 1), o);
    ASSERT_OK(r);
    img.resize(100 * MiB);
    ASSERT_TRUE(read_at(*dev, 0, img));
  }
  EXPECT_TRUE(images[0] == images[1]);
}

TEST(MkfsFormat, WritesRootInodeWhereTheCheckpointSays) {
  auto dev = make_memory_device(GiB);
  MkfsTarget t{dev.get(), "mem"};
  MkfsOptions o;
  o.features = feature::extra_attr | feature::inode_checksum;
  o.timestamp = 1234;
  auto r = format_volume(std::span<const MkfsTarget>(&t, 1), o);
  ASSERT_TRUE(r);
  EXPECT_LT(r->bytes_written, 1 * MiB);  // a handful of metadata blocks
  std::vector<std::uint8_t> blk(4096);
  ASSERT_TRUE(read_at(*dev, 5120ull * 4096, blk));  // main area, hot node segment 0
  const auto* n = reinterpret_cast<const Node*>(blk.data());
  EXPECT_EQ(n->footer.ino.get(), kRootIno);
  EXPECT_EQ(n->i.i_mode.get(), 0x41ed);
  EXPECT_EQ(n->i.i_mtime.get(), 1234u);
  EXPECT_EQ(inode_checksum(inode_checksum_seed(r->plan.sb.uuid), blk.data()), n->i.extra.i_inode_checksum.get());
}

TEST(MkfsFormat, TwoDeviceVolume) {
  auto d0 = make_memory_device(GiB), d1 = make_memory_device(GiB);
  MkfsTarget t[2] = {{d0.get(), "/dev/first"}, {d1.get(), "/dev/second"}};
  MkfsOptions o;
  o.timestamp = 1;
  auto r = format_volume(t, o);
  ASSERT_OK(r);
  const auto& sb = r->plan.sb;
  EXPECT_EQ(std::string(reinterpret_cast<const char*>(sb.devs[1].path)), "/dev/second");
  EXPECT_EQ(sb.devs[0].total_segments.get(), 511u);
  EXPECT_EQ(sb.devs[1].total_segments.get(), 512u);
  EXPECT_EQ(sb.segment_count.get(), 1023u);
}
