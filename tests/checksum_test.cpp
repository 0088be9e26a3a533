// CRC32, checksums and the dentry hash, checked against values stored by
// mkfs.f2fs 1.15 (tests/data) and by Linux (../shared/images).
#include <gtest/gtest.h>

#include <cstring>

#include "f2fscore/checksum.hpp"
#include "f2fscore/disk/checkpoint.hpp"
#include "f2fscore/disk/superblock.hpp"
#include "support/image_walk.hpp"
#include "support/test_support.hpp"

using namespace f2fscore;
using namespace f2fscore::disk;

TEST(Checksum, Crc32KnownVector) {
  // The standard CRC-32 of "123456789" is 0xCBF43926 = ~crc(~0). f2fs_crc32
  // runs without the final inversion, so from seed ~0 it yields ~0xCBF43926.
  EXPECT_EQ(f2fs_crc32(0xFFFFFFFFu, "123456789", 9), ~0xCBF43926u);
  EXPECT_EQ(f2fs_crc32(0, "", 0), 0u);
  // Chaining: crc(seed, ab) == crc(crc(seed, a), b).
  EXPECT_EQ(f2fs_crc32(kSuperMagic, "abcdef", 6), f2fs_crc32(f2fs_crc32(kSuperMagic, "abc", 3), "def", 3));
}

TEST(Checksum, DotsHashToZero) {
  EXPECT_EQ(dentry_hash("."), 0u);
  EXPECT_EQ(dentry_hash(".."), 0u);
  EXPECT_NE(dentry_hash("..."), 0u);
}

class MkfsFixture : public ::testing::Test {
 protected:
  void SetUp() override {
    auto img = f2fstest::unzstd(f2fstest::data_dir() / "mkfs115-64M-allfeat.img.zst");
    if (!img) GTEST_SKIP() << "zstd is not available to unpack the fixture";
    dev_ = f2fstest::load_image(*img);
    walk_ = f2fstest::walk_image(*dev_);
    ASSERT_TRUE(walk_.error.empty()) << walk_.error;
  }
  std::unique_ptr<BlockDevice> dev_;
  f2fstest::ImageWalk walk_;
};

TEST_F(MkfsFixture, SuperblockChecksumMatchesMkfs) {
  ASSERT_TRUE(walk_.sb.feature.get() & feature::sb_checksum);
  EXPECT_EQ(superblock_checksum(walk_.sb), walk_.sb.crc.get());
  EXPECT_TRUE(validate_superblock(walk_.sb, dev_->info().size_bytes / 4096, 0));
  EXPECT_EQ(volume_label(walk_.sb), "fixture");
}

// An area boundary that disagrees names the wrong field, and "expected"
// is the value mkfs.f2fs 1.15 wrote into that field (the fixture's).
TEST_F(MkfsFixture, SuperblockBoundaryMessageNamesTheWrongField) {
  auto message = [&](auto&& edit) {
    SuperBlock sb = walk_.sb;
    edit(sb);
    sb.crc.set(superblock_checksum(sb));
    auto st = validate_superblock(sb, dev_->info().size_bytes / 4096, 0);
    return st ? std::string("accepted") : st.error().message;
  };
  const auto ssa_segs = walk_.sb.segment_count_ssa.get();
  const auto main_blk = walk_.sb.main_blkaddr.get(), sit_blk = walk_.sb.sit_blkaddr.get();
  const auto nat_segs = walk_.sb.segment_count_nat.get();
  std::string m = message([](SuperBlock& sb) { sb.segment_count_ssa.set(sb.segment_count_ssa.get() + 7000); });
  EXPECT_NE(m.find("segment_count_ssa is " + std::to_string(ssa_segs + 7000) + ", expected " +
                   std::to_string(ssa_segs)), std::string::npos) << m;
  EXPECT_EQ(m.find("main_blkaddr is"), std::string::npos) << m;  // main_blkaddr is right
  m = message([](SuperBlock& sb) { sb.main_blkaddr.set(sb.main_blkaddr.get() - 512); });
  EXPECT_NE(m.find("main_blkaddr is " + std::to_string(main_blk - 512) + ", expected " + std::to_string(main_blk)),
            std::string::npos) << m;
  m = message([](SuperBlock& sb) { sb.sit_blkaddr.set(sb.sit_blkaddr.get() + 512); });
  EXPECT_NE(m.find("sit_blkaddr is " + std::to_string(sit_blk + 512) + ", expected " + std::to_string(sit_blk)),
            std::string::npos) << m;
  m = message([](SuperBlock& sb) { sb.segment_count_nat.set(sb.segment_count_nat.get() + 2); });
  EXPECT_NE(m.find("segment_count_nat is " + std::to_string(nat_segs + 2) + ", expected " + std::to_string(nat_segs)),
            std::string::npos) << m;
}

TEST_F(MkfsFixture, CheckpointChecksumMatchesMkfs) {
  const std::uint32_t ofs = load_le32(walk_.cp.data(), offsetof(Checkpoint, checksum_offset));
  EXPECT_EQ(ofs, kCpChecksumOffset);
  EXPECT_EQ(checkpoint_checksum(walk_.cp.data()), load_le32(walk_.cp.data(), ofs));
}

TEST_F(MkfsFixture, InodeChecksumsMatchMkfs) {
  const std::uint32_t seed = inode_checksum_seed(walk_.sb.uuid);
  // root, three quota inodes, lost+found
  ASSERT_EQ(walk_.inodes.size(), 5u);
  for (const auto& [ino, blk] : walk_.inodes) {
    const auto* n = reinterpret_cast<const Node*>(blk.data());
    EXPECT_EQ(n->i.extra.i_extra_isize.get(), 36);
    EXPECT_EQ(inode_checksum(seed, blk.data()), n->i.extra.i_inode_checksum.get()) << "ino " << ino;
  }
}

TEST_F(MkfsFixture, DentryHashMatchesMkfs) {
  bool saw_lpf = false;
  for (const auto& d : walk_.dentries) {
    EXPECT_EQ(dentry_hash(d.name), d.hash_code) << d.name;
    saw_lpf |= d.name == "lost+found";
  }
  EXPECT_TRUE(saw_lpf);
}

// Images populated by Linux (syzkaller seeds): every inode checksum and
// every plain dentry hash that Linux stored must be what we compute.
TEST(LinuxImages, ChecksumsAndHashesMatchLinux) {
  auto dir = f2fstest::shared_images_dir();
  if (!dir) {
    if (f2fstest::required("SHARED")) FAIL() << "../shared/images is missing";
    GTEST_SKIP() << "../shared/images is not present";
  }
  int images = 0, inodes_checked = 0, names_checked = 0;
  for (int i = 0; i < 16; ++i) {
    const auto zst = *dir / "syzkaller" / ("seed_" + std::to_string(i) + ".img.zst");
    if (!std::filesystem::exists(zst)) continue;
    auto img = f2fstest::unzstd(zst);
    ASSERT_TRUE(img) << "cannot unpack " << zst;
    auto dev = f2fstest::load_image(*img);
    auto w = f2fstest::walk_image(*dev);
    ASSERT_TRUE(w.error.empty()) << zst << ": " << w.error;
    ++images;
    EXPECT_TRUE(validate_superblock(w.sb, dev->info().size_bytes / 4096, 0)) << zst;
    if (w.sb.feature.get() & feature::inode_checksum) {
      const std::uint32_t seed = inode_checksum_seed(w.sb.uuid);
      for (const auto& [ino, blk] : w.inodes) {
        const auto* n = reinterpret_cast<const Node*>(blk.data());
        if (!(n->i.i_inline & inline_flag::extra_attr) || n->i.extra.i_extra_isize.get() < 12) continue;
        EXPECT_EQ(inode_checksum(seed, blk.data()), n->i.extra.i_inode_checksum.get()) << zst << " ino " << ino;
        ++inodes_checked;
      }
    }
    for (const auto& d : w.dentries) {
      if (!d.hashed_plain) continue;
      EXPECT_EQ(dentry_hash(d.name), d.hash_code) << zst << " name " << d.name;
      ++names_checked;
    }
  }
  ASSERT_GT(images, 0);
  EXPECT_GT(inodes_checked, 10);
  EXPECT_GT(names_checked, 50);
  std::printf("checked %d images, %d inode checksums, %d dentry hashes\n", images, inodes_checked, names_checked);
}
