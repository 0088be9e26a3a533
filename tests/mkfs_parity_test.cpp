// For a matrix of sizes and feature
// sets, our mkfs and mkfs.f2fs 1.15 write the same volume (every block
// equal, except the checkpoint version and what depends on it: the CP
// checksums and the nat_bits header), and fsck.f2fs -f calls ours clean.
#include <gtest/gtest.h>

#include <chrono>
#include <cstring>

#include "f2fscore/disk/checkpoint.hpp"
#include "f2fscore/disk/superblock.hpp"
#include "f2fscore/endian.hpp"
#include "support/test_support.hpp"

using namespace f2fscore;
using namespace f2fscore::disk;
namespace fs = std::filesystem;

namespace {

constexpr std::uint64_t MiB = 1ull << 20, GiB = 1ull << 30, TiB = 1ull << 40;

struct Case {
  std::string name;
  std::uint64_t bytes;
  std::string options;        // passed to both tools
  std::uint64_t extra_device = 0;  // bytes of a second device (-c), 0 for none
  std::uint64_t third_device = 0;  // bytes of a third device (-c), 0 for none
};

const char* kSetDefault = "";
const char* kSetRich =
    "-O extra_attr,inode_checksum,flexible_inline_xattr,inode_crtime,sb_checksum,lost_found,compression";
const char* kSetQuota = "-O extra_attr,quota,project_quota";
const char* kSetCrypt = "-O verity,encrypt";
const char* kSetCasefold = "-O casefold -C utf8";

std::vector<Case> cases() {
  std::vector<Case> v;
  const std::pair<const char*, std::uint64_t> sizes[] = {
      {"52MiB", 52 * MiB}, {"100MiB", 100 * MiB}, {"1GiB", GiB}, {"7_3GiB", 7838315315ull}, {"64GiB", 64 * GiB}};
  const std::pair<const char*, const char*> sets[] = {
      {"default", kSetDefault}, {"rich", kSetRich}, {"quota", kSetQuota}, {"crypt", kSetCrypt}, {"casefold", kSetCasefold}};
  for (auto [sn, sz] : sizes)
    for (auto [fn, f] : sets) v.push_back({std::string(sn) + "_" + fn, sz, f});
  for (auto [sn, sz] : {std::pair<const char*, std::uint64_t>{"1TiB", TiB}, {"15TiB", 15 * TiB}}) {
    v.push_back({std::string(sn) + "_default", sz, kSetDefault});
    v.push_back({std::string(sn) + "_rich", sz, kSetRich});
  }
  v.push_back({"1GiB_s2", GiB, "-s 2"});
  v.push_back({"1GiB_o5", GiB, "-o 5"});
  v.push_back({"1GiB_largenat", GiB, "-i"});
  v.push_back({"1GiB_twodevices", GiB, "", GiB});
  // Three devices of sizes that are no whole segments, rich features.
  v.push_back({"100MiB_threedevices_rich", 100 * MiB, kSetRich, 300 * MiB + 12345 * 512, 67 * MiB + 4096});
  // Read-only images (-O ro): segment 0 at block 2, no SSA, two logs.
  for (auto [sn, sz] : {std::pair<const char*, std::uint64_t>{"52MiB", 52 * MiB}, {"1GiB", GiB}, {"64GiB", 64 * GiB}}) {
    v.push_back({std::string(sn) + "_ro", sz, "-O ro"});
    v.push_back({std::string(sn) + "_ro_rich", sz, std::string(kSetRich) + ",ro"});
  }
  v.push_back({"1GiB_ro_quota", GiB, std::string(kSetQuota) + ",ro"});
  // mkfs.f2fs -g android (add_default_options()): its features, and -O ro alone with it.
  v.push_back({"256MiB_android", 256 * MiB, "-g android"});
  v.push_back({"256MiB_android_ro", 256 * MiB, "-g android -O ro"});
  return v;
}

// Blocks that may legitimately differ, with what to mask in them.
struct Mask {
  std::uint64_t blkaddr;
  std::vector<std::pair<std::size_t, std::size_t>> ranges;  // [offset, length)
};

class MkfsParity : public ::testing::TestWithParam<Case> {};

TEST_P(MkfsParity, SameVolumeAsMkfsF2fsAndCleanUnderFsck) {
  const Case& c = GetParam();
  const std::string ref_mkfs = f2fstest::reference_tool("mkfs.f2fs");
  if (ref_mkfs.empty() || f2fstest::reference_tool("fsck.f2fs").empty()) {
    if (f2fstest::required("FSCK")) FAIL() << "f2fs-tools is not installed";
    GTEST_SKIP() << "f2fs-tools is not installed";
  }
  f2fstest::TempDir tmp;
  const fs::path ours = tmp / "ours", theirs = tmp / "theirs";
  fs::create_directories(ours);
  fs::create_directories(theirs);
  for (const auto& d : {ours, theirs}) {
    f2fstest::make_sparse_file(d / "vol.img", c.bytes);
    if (c.extra_device) f2fstest::make_sparse_file(d / "vol1.img", c.extra_device);
    if (c.third_device) f2fstest::make_sparse_file(d / "vol2.img", c.third_device);
  }
  const std::string fixed = " -U 0c1d2e3f-4a5b-6c7d-8e9f-a0b1c2d3e4f5 -T 1700000000 ";
  const std::string extra =
      std::string(c.extra_device ? " -c vol1.img " : " ") + (c.third_device ? "-c vol2.img " : "");
  auto t0 = std::chrono::steady_clock::now();
  auto r1 = f2fstest::run("cd " + f2fstest::shell_quote(theirs.string()) + " && " + ref_mkfs + " -f -q -r" + fixed +
                          c.options + extra + "vol.img");
  ASSERT_EQ(r1.exit_code, 0) << r1.output;
  auto t1 = std::chrono::steady_clock::now();
  auto r2 = f2fstest::run("cd " + f2fstest::shell_quote(ours.string()) + " && " F2FSCORE_MKFS_BIN " -f -q" + fixed +
                          c.options + extra + "vol.img");
  ASSERT_EQ(r2.exit_code, 0) << r2.output;
  auto t2 = std::chrono::steady_clock::now();

  // Compare every allocated block.
  const auto sb_block = f2fstest::read_block(theirs / "vol.img", 0);
  SuperBlock sb;
  std::memcpy(&sb, sb_block.data() + kSuperOffset, sizeof sb);
  ASSERT_EQ(sb.magic.get(), kSuperMagic);
  const std::uint64_t cp0 = sb.cp_blkaddr.get(), cp1 = cp0 + kDefaultBlocksPerSeg;
  const auto cp_block = f2fstest::read_block(theirs / "vol.img", cp0);
  const auto* cp = reinterpret_cast<const Checkpoint*>(cp_block.data());
  const std::uint32_t total = cp->cp_pack_total_block_count.get();
  const std::size_t crc_ofs = cp->checksum_offset.get();
  const std::vector<std::pair<std::size_t, std::size_t>> cp_mask = {{0, 8}, {crc_ofs, 4}};
  std::vector<Mask> masks = {{cp0, cp_mask}, {cp0 + total - 1, cp_mask}, {cp1, cp_mask}, {cp1 + total - 1, cp_mask}};
  if (cp->ckpt_flags.get() & cp_flag::nat_bits) {
    const auto nb = nat_bits_size(sb.segment_count_nat.get());
    masks.push_back({cp0 + kDefaultBlocksPerSeg - nb.blocks, {{0, 8}}});
  }
  auto diff = f2fstest::differing_blocks(ours / "vol.img", theirs / "vol.img");
  for (std::uint64_t blk : diff) {
    auto a = f2fstest::read_block(ours / "vol.img", blk), b = f2fstest::read_block(theirs / "vol.img", blk);
    for (const auto& m : masks)
      if (m.blkaddr == blk)
        for (auto [o, n] : m.ranges) {
          std::memset(a.data() + o, 0, n);
          std::memset(b.data() + o, 0, n);
        }
    if (blk == 0 || blk == 1) {
      // mkfs.f2fs copies 64 bytes from each shorter device path string, so
      // whatever follows its NUL is heap garbage: compare up to the NUL.
      for (std::uint32_t d = 0; d < kMaxDevices; ++d) {
        const std::size_t off = kSuperOffset + offsetof(SuperBlock, devs) + d * sizeof(Device);
        const std::size_t len = strnlen(reinterpret_cast<const char*>(b.data() + off), kMaxPathLen);
        std::memset(a.data() + off + len, 0, kMaxPathLen - len);
        std::memset(b.data() + off + len, 0, kMaxPathLen - len);
      }
      // With sb_checksum that garbage is in mkfs.f2fs's crc too: ours
      // must be the crc of our own bytes instead.
      if (c.extra_device && (sb.feature.get() & feature::sb_checksum)) {
        SuperBlock our_sb;
        std::memcpy(&our_sb, a.data() + kSuperOffset, sizeof our_sb);
        EXPECT_EQ(our_sb.crc.get(), superblock_checksum(our_sb)) << c.name << ": superblock crc, block " << blk;
        std::memset(a.data() + kSuperOffset + offsetof(SuperBlock, crc), 0, 4);
        std::memset(b.data() + kSuperOffset + offsetof(SuperBlock, crc), 0, 4);
      }
    }
    std::size_t first = 0;
    while (first < a.size() && a[first] == b[first]) ++first;
    EXPECT_EQ(first, a.size()) << c.name << ": block " << blk << " differs first at byte " << first << " (ours 0x"
                               << std::hex << int(a[first]) << ", mkfs.f2fs 0x" << int(b[first]) << std::dec << ")";
  }
  for (const char* f : {"vol1.img", "vol2.img"}) {
    if (!fs::exists(theirs / f)) continue;
    auto d1 = f2fstest::differing_blocks(ours / f, theirs / f);
    EXPECT_TRUE(d1.empty()) << f << " differs in " << d1.size() << " blocks";
  }
  auto t3 = std::chrono::steady_clock::now();

  // fsck.f2fs -f on a copy of ours (with its second device beside it).
  f2fstest::TempDir ftmp;
  for (const char* f : {"vol.img", "vol1.img", "vol2.img"})
    if (fs::exists(ours / f))
      f2fstest::run("cp --sparse=always " + f2fstest::shell_quote((ours / f).string()) + " " +
                    f2fstest::shell_quote((ftmp / f).string()));
  auto fr = f2fstest::run("cd " + f2fstest::shell_quote(ftmp.path().string()) + " && " +
                          f2fstest::reference_tool("fsck.f2fs") + " -f vol.img");
  EXPECT_EQ(fr.exit_code, 0) << fr.output;
  for (const char* bad : {"[Fail]", "[ASSERT]", "[FIX]", "Fixing", "Reconnect", "Move curseg"})
    EXPECT_EQ(fr.output.find(bad), std::string::npos) << c.name << ": fsck.f2fs printed " << bad << "\n" << fr.output;
  EXPECT_NE(fr.output.find("[FSCK] other corrupted bugs                           [Ok..]"), std::string::npos)
      << fr.output;
  auto t4 = std::chrono::steady_clock::now();
  auto ms = [](auto d) { return std::chrono::duration_cast<std::chrono::milliseconds>(d).count(); };
  std::printf("%s: mkfs.f2fs %lld ms, ours %lld ms, compare %lld ms, fsck %lld ms\n", c.name.c_str(),
              static_cast<long long>(ms(t1 - t0)), static_cast<long long>(ms(t2 - t1)),
              static_cast<long long>(ms(t3 - t2)), static_cast<long long>(ms(t4 - t3)));
}

INSTANTIATE_TEST_SUITE_P(Matrix, MkfsParity, ::testing::ValuesIn(cases()),
                         [](const auto& info) { return info.param.name; });

}  // namespace
