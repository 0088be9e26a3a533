// The mkfs tool as a user meets it: refusals (exit status, message, image
// untouched), -f, --json and reproducibility.
#include <gtest/gtest.h>
#include <unistd.h>

#include <fstream>

#include "f2fscore/disk/node.hpp"
#include "f2fscore/volume.hpp"
#include "support/test_support.hpp"

namespace fs = std::filesystem;
using f2fstest::run;
using f2fstest::shell_quote;

namespace {

constexpr std::uint64_t MiB = 1ull << 20;
const std::string kMkfs = F2FSCORE_MKFS_BIN;

std::string mkfs(const std::string& args) { return kMkfs + " " + args; }

// Fills the first `bytes` of an image with a recognisable pattern.
void fill_pattern(const fs::path& p, std::uint64_t size, std::uint64_t bytes) {
  f2fstest::make_sparse_file(p, size);
  std::fstream f(p, std::ios::in | std::ios::out | std::ios::binary);
  std::string chunk(4096, '\0');
  for (std::size_t i = 0; i < chunk.size(); ++i) chunk[i] = static_cast<char>('a' + i % 26);
  for (std::uint64_t off = 0; off < bytes; off += chunk.size()) f.write(chunk.data(), static_cast<std::streamsize>(chunk.size()));
}

std::string digest(const fs::path& p) { return run("sha256sum " + shell_quote(p.string())).output.substr(0, 64); }

}  // namespace

TEST(MkfsCli, BelowTheMinimumSizeIsRefusedAndNothingIsWritten) {
  f2fstest::TempDir t;
  const auto img = t / "small.img";
  fill_pattern(img, 51 * MiB, 8 * MiB);
  const auto before = digest(img);
  auto r = run(mkfs("-f " + shell_quote(img.string())));
  EXPECT_EQ(r.exit_code, 1) << r.output;
  EXPECT_NE(r.output.find("not sufficient"), std::string::npos) << r.output;
  EXPECT_EQ(digest(img), before);
}

TEST(MkfsCli, MissingPath) {
  auto r = run(mkfs("/nonexistent/dir/f2fs.img"));
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_NE(r.output.find("no such file"), std::string::npos) << r.output;
}

TEST(MkfsCli, ReadOnlyPath) {
  f2fstest::TempDir t;
  const auto img = t / "ro.img";
  fill_pattern(img, 64 * MiB, MiB);
  const auto before = digest(img);
  // Root ignores permission bits: make the file immutable instead, or use
  // a read-only loop device; skip if neither is possible here.
  std::string target = img.string();
  std::string cleanup;
  if (::geteuid() != 0) {
    fs::permissions(img, fs::perms::owner_read);
  } else if (run("chattr +i " + shell_quote(img.string())).exit_code == 0) {
    cleanup = "chattr -i " + shell_quote(img.string());
  } else {
    auto l = run("losetup -r -f --show " + shell_quote(img.string()));
    if (l.exit_code != 0) GTEST_SKIP() << "cannot make a read-only target here: " << l.output;
    target = l.output.substr(0, l.output.find('\n'));
    cleanup = "losetup -d " + target;
  }
  auto r = run(mkfs("-f " + shell_quote(target)));
  if (!cleanup.empty()) run(cleanup);
  EXPECT_EQ(r.exit_code, 1) << r.output;
  EXPECT_NE(r.output.find("f2fscore-mkfs: cannot open " + target + " for writing: it is read-only\n"), std::string::npos)
      << r.output;
  EXPECT_EQ(digest(img), before);
}

TEST(MkfsCli, UnknownFeatureIsAUsageError) {
  f2fstest::TempDir t;
  const auto img = t / "a.img";
  fill_pattern(img, 64 * MiB, MiB);
  const auto before = digest(img);
  auto r = run(mkfs("-f -O extra_attr,frobnicate " + shell_quote(img.string())));
  EXPECT_EQ(r.exit_code, 2) << r.output;
  EXPECT_NE(r.output.find("frobnicate"), std::string::npos) << r.output;
  EXPECT_EQ(digest(img), before);
}

// Option spellings at the edges take the exit status mkfs.f2fs 1.15 gives:
// a trailing comma in -O and "utf8:" with no flags are accepted, an empty
// name between commas and an unknown encoding flag are not. ("hashonly" is
// f2fs-tools 1.17's flag, which 1.15 refuses: left out of the comparison.)
TEST(MkfsCli, OptionEdgesExitAsMkfsF2fs) {
  const std::string ref = f2fstest::reference_tool("mkfs.f2fs");
  if (ref.empty()) GTEST_SKIP() << "needs mkfs.f2fs";
  f2fstest::TempDir t;
  const auto img = t / "a.img";
  f2fstest::make_sparse_file(img, 256 * MiB);
  const std::string q = shell_quote(img.string());
  for (const char* args : {"-O extra_attr,", "-C utf8:", "-O extra_attr,casefold -C utf8:",
                           "-O extra_attr,casefold -C utf8:strict", "-O casefold -C utf8:bogus"}) {
    const int theirs = run(ref + " -q -f " + args + " " + q).exit_code;
    const int ours = run(mkfs(std::string("-q -f ") + args + " " + q)).exit_code;
    // mkfs.f2fs exits 1 on every refusal; ours says 2 for a usage error.
    EXPECT_EQ(ours == 0, theirs == 0) << args << ": ours " << ours << ", mkfs.f2fs " << theirs;
  }
}

TEST(MkfsCli, FeaturesNeedingExtraAttrAreRefused) {
  f2fstest::TempDir t;
  const auto img = t / "a.img";
  fill_pattern(img, 64 * MiB, MiB);
  const auto before = digest(img);
  for (const char* f : {"inode_checksum", "project_quota", "flexible_inline_xattr", "inode_crtime", "compression"}) {
    auto r = run(mkfs(std::string("-f -O ") + f + " " + shell_quote(img.string())));
    EXPECT_EQ(r.exit_code, 2) << f << ": " << r.output;
    EXPECT_NE(r.output.find("extra_attr"), std::string::npos) << r.output;
  }
  EXPECT_EQ(digest(img), before);
}

TEST(MkfsCli, ExistingFileSystemNeedsForce) {
  f2fstest::TempDir t;
  const auto img = t / "a.img";
  f2fstest::make_sparse_file(img, 64 * MiB);
  ASSERT_EQ(run(mkfs("-q " + shell_quote(img.string()))).exit_code, 0);
  const auto before = digest(img);
  auto r = run(mkfs(shell_quote(img.string())));
  EXPECT_EQ(r.exit_code, 1) << r.output;
  EXPECT_NE(r.output.find("existing file system (f2fs)"), std::string::npos) << r.output;
  EXPECT_NE(r.output.find("-f"), std::string::npos) << r.output;
  EXPECT_EQ(digest(img), before);
  EXPECT_EQ(run(mkfs("-f -q " + shell_quote(img.string()))).exit_code, 0);
}

TEST(MkfsCli, OtherFileSystemAndPartitionTableNeedForce) {
  f2fstest::TempDir t;
  const auto img = t / "a.img";
  f2fstest::make_sparse_file(img, 64 * MiB);
  if (run("mkfs.ext4 -q -F " + shell_quote(img.string())).exit_code == 0) {
    const auto before = digest(img);
    auto r = run(mkfs(shell_quote(img.string())));
    EXPECT_EQ(r.exit_code, 1) << r.output;
    EXPECT_NE(r.output.find("ext4"), std::string::npos) << r.output;
    EXPECT_EQ(digest(img), before);
  }
  // A DOS partition table: one partition entry and the 0x55AA signature.
  const auto pt = t / "pt.img";
  f2fstest::make_sparse_file(pt, 64 * MiB);
  {
    std::fstream f(pt, std::ios::in | std::ios::out | std::ios::binary);
    unsigned char mbr[512] = {};
    unsigned char* e = mbr + 446;
    e[4] = 0x83;                        // Linux
    e[8] = 0x00; e[9] = 0x08;           // start LBA 2048
    e[12] = 0x00; e[13] = 0x00; e[14] = 0x01;  // 65536 sectors
    mbr[510] = 0x55;
    mbr[511] = 0xAA;
    f.write(reinterpret_cast<char*>(mbr), sizeof mbr);
  }
  const auto before = digest(pt);
  auto r = run(mkfs(shell_quote(pt.string())));
  EXPECT_EQ(r.exit_code, 1) << r.output;
  EXPECT_NE(r.output.find("partition table"), std::string::npos) << r.output;
  EXPECT_EQ(digest(pt), before);
  EXPECT_EQ(run(mkfs("-f -q " + shell_quote(pt.string()))).exit_code, 0);
}

TEST(MkfsCli, MountedDeviceIsRefused) {
  if (::geteuid() != 0) GTEST_SKIP() << "needs root to mount";
  f2fstest::TempDir t;
  const auto img = t / "m.img";
  f2fstest::make_sparse_file(img, 64 * MiB);
  if (run("mkfs.ext4 -q -F " + shell_quote(img.string())).exit_code != 0) GTEST_SKIP() << "no mkfs.ext4";
  fs::create_directory(t / "mnt");
  auto m = run("mount -o loop,ro " + shell_quote(img.string()) + " " + shell_quote((t / "mnt").string()));
  if (m.exit_code != 0) GTEST_SKIP() << "cannot loop-mount here: " << m.output;
  const auto before = digest(img);
  auto r = run(mkfs("-f " + shell_quote(img.string())));
  run("umount " + shell_quote((t / "mnt").string()));
  EXPECT_EQ(r.exit_code, 1) << r.output;
  EXPECT_NE(r.output.find("mounted"), std::string::npos) << r.output;
  EXPECT_EQ(digest(img), before);
}

TEST(MkfsCli, UsageErrors) {
  EXPECT_EQ(run(kMkfs).exit_code, 2);
  EXPECT_EQ(run(mkfs("-s 0 x.img")).exit_code, 2);
  EXPECT_EQ(run(mkfs("-o abc x.img")).exit_code, 2);
  EXPECT_EQ(run(mkfs("-U not-a-uuid x.img")).exit_code, 2);
  // A zone of 2^32 segments (-s x -z) and a negative sector count: usage
  // errors naming them (mkfs.f2fs 1.15 dies of SIGFPE on the first).
  f2fstest::TempDir t;
  const auto img = t / "z.img";
  fill_pattern(img, 64 * MiB, MiB);
  const auto before = digest(img);
  auto z = run(mkfs("-f -s 65536 -z 65536 " + shell_quote(img.string())));
  EXPECT_EQ(z.exit_code, 2) << z.output;
  EXPECT_NE(z.output.find("65536 sections per zone"), std::string::npos) << z.output;
  // One device named twice: a usage error saying so.
  auto twice = run(mkfs("-f -c " + shell_quote(img.string()) + " " + shell_quote(img.string())));
  EXPECT_EQ(twice.exit_code, 2) << twice.output;
  EXPECT_NE(twice.output.find("is given twice"), std::string::npos) << twice.output;
  EXPECT_EQ(digest(img), before);
  auto neg = run(mkfs("-f x.img -5"));
  EXPECT_EQ(neg.exit_code, 2) << neg.output;
  EXPECT_NE(neg.output.find("\"-5\" is not a sector count"), std::string::npos) << neg.output;
  // An unknown option is named, even with the device missing too.
  auto u = run(mkfs("--bogus"));
  EXPECT_EQ(u.exit_code, 2);
  EXPECT_NE(u.output.find("unknown option --bogus"), std::string::npos) << u.output;
  auto v = run(mkfs("-V"));
  EXPECT_EQ(v.exit_code, 0) << v.output;
  EXPECT_EQ(v.output.rfind("f2fscore-mkfs ", 0), 0u) << v.output;
  auto h = run(mkfs("--help"));
  EXPECT_EQ(h.exit_code, 0);
  EXPECT_NE(h.output.find("Exit status"), std::string::npos);
}

// -O takes one list each time: the operands after it stay DEVICE and
// SECTORS (mkfs.f2fs's syntax). Expected: 262144 sectors of 512 bytes are
// 32768 blocks, and both features set.
TEST(MkfsCli, RepeatableOptionLeavesTheOperands) {
  f2fstest::TempDir t;
  const auto img = t / "a.img";
  f2fstest::make_sparse_file(img, 256 * MiB);
  auto r = run(mkfs("-q -O extra_attr -O inode_checksum " + shell_quote(img.string()) + " 262144"));
  ASSERT_EQ(r.exit_code, 0) << r.output;
  auto dev = f2fstest::load_image(img);
  ASSERT_TRUE(dev);
  auto v = f2fscore::Volume::open(*dev);
  ASSERT_TRUE(v) << v.error().to_string();
  EXPECT_EQ((*v)->superblock().block_count.get(), 32768u);
  const std::uint32_t want = f2fscore::disk::feature::extra_attr | f2fscore::disk::feature::inode_checksum;
  EXPECT_EQ((*v)->superblock().feature.get() & want, want);
}

TEST(MkfsCli, TwoRunsWithFixedUuidAndTimeAreByteIdentical) {
  f2fstest::TempDir t;
  for (const char* n : {"a.img", "b.img"}) {
    f2fstest::make_sparse_file(t / n, 256 * MiB);
    auto r = run(mkfs("-q -U 0c1d2e3f-4a5b-6c7d-8e9f-a0b1c2d3e4f5 -T 1700000000 -O extra_attr,inode_checksum,"
                      "sb_checksum,lost_found,quota " + shell_quote((t / n).string())));
    ASSERT_EQ(r.exit_code, 0) << r.output;
  }
  EXPECT_EQ(digest(t / "a.img"), digest(t / "b.img"));
}

TEST(MkfsCli, JsonSummary) {
  f2fstest::TempDir t;
  f2fstest::make_sparse_file(t / "j.img", 1ull << 30);
  auto r = run(mkfs("--json -l mylabel " + shell_quote((t / "j.img").string())));
  ASSERT_EQ(r.exit_code, 0) << r.output;
  EXPECT_NE(r.output.find("\"main_blkaddr\":5120"), std::string::npos) << r.output;
  EXPECT_NE(r.output.find("\"label\":\"mylabel\""), std::string::npos) << r.output;
  EXPECT_NE(r.output.find("\"user_block_count\":222208"), std::string::npos) << r.output;
}

TEST(MkfsCli, FormatsALoopBlockDevice) {
  if (::geteuid() != 0) GTEST_SKIP() << "needs root for losetup";
  if (f2fstest::reference_tool("fsck.f2fs").empty()) GTEST_SKIP() << "needs fsck.f2fs";
  f2fstest::TempDir t;
  const auto img = t / "loop.img";
  fill_pattern(img, 256 * MiB, 64 * MiB);  // stale data that must not survive as metadata
  auto l = run("losetup -f --show " + shell_quote(img.string()));
  if (l.exit_code != 0) GTEST_SKIP() << "no loop device here: " << l.output;
  const std::string loopdev = l.output.substr(0, l.output.find('\n'));
  auto r = run(mkfs("-f --json " + loopdev));
  run("losetup -d " + loopdev);
  ASSERT_EQ(r.exit_code, 0) << r.output;
  EXPECT_NE(r.output.find("\"sector_size\":512"), std::string::npos) << r.output;
  EXPECT_NE(r.output.find("\"main_blkaddr\":4096"), std::string::npos) << r.output;
  auto problems = f2fstest::fsck_problems(img);
  EXPECT_TRUE(problems.empty()) << problems.front();
}

// A read-only image with sections of several segments: mkfs.f2fs 1.15
// writes a user_block_count past the main area (its own fsck and the kernel
// refuse the volume); refused here as a usage error, nothing written.
TEST(MkfsCli, ReadOnlyImageWithLargeSectionsIsRefused) {
  f2fstest::TempDir t;
  const auto img = t / "a.img";
  fill_pattern(img, 256 * MiB, MiB);
  const auto before = digest(img);
  auto r = run(mkfs("-f -O ro -s 2 " + shell_quote(img.string())));
  EXPECT_EQ(r.exit_code, 2) << r.output;
  EXPECT_NE(r.output.find("one segment per section"), std::string::npos) << r.output;
  EXPECT_EQ(digest(img), before);
}

// --populate with options the feature set cannot take (--compress on an ro
// volume without the compression feature) is refused before the format:
// the old contents stay.
TEST(MkfsCli, PopulateWithOptionsTheVolumeCannotTakeWritesNothing) {
  f2fstest::TempDir t;
  const auto img = t / "a.img";
  fs::create_directories(t / "src");
  std::ofstream(t / "src" / "f") << "x";
  fill_pattern(img, 256 * MiB, MiB);
  const auto before = digest(img);
  // ro with --compress: no compression feature.
  for (const char* f : {"ro --compress"}) {
    auto r = run(mkfs(std::string("-f -O ") + f + " --populate " + shell_quote((t / "src").string()) + " " +
                      shell_quote(img.string())));
    EXPECT_EQ(r.exit_code, 1) << f << ": " << r.output;
    EXPECT_NE(r.output.find("nothing written"), std::string::npos) << r.output;
    EXPECT_EQ(digest(img), before) << f;
  }
  // Compression sub-options need --compress (sload.f2fs: a usage error).
  auto u = run(mkfs("-f -O ro,extra_attr,compression --compress-release --populate " +
                    shell_quote((t / "src").string()) + " " + shell_quote(img.string())));
  EXPECT_EQ(u.exit_code, 2) << u.output;
  EXPECT_EQ(digest(img), before);
}

// A read-only image (-O ro) is filled at build time, compressed files
// released (sload.f2fs -c -r): the file reads back, and its inode is
// compressed and released (F2FS_COMPRESS_RELEASED, i_compr_blocks 0 as
// release_compress_blocks() in fs/f2fs/file.c leaves it).
TEST(MkfsCli, PopulateFillsAReadOnlyImageWithReleasedFiles) {
  f2fstest::TempDir t;
  const auto img = t / "ro.img";
  fs::create_directories(t / "src" / "lib");
  std::string text;
  for (int i = 0; text.size() < 200000; ++i) text += "line " + std::to_string(i % 100) + " of a library\n";
  std::ofstream(t / "src" / "lib" / "libx.so") << text;
  std::ofstream(t / "src" / "small") << "tiny";
  f2fstest::make_sparse_file(img, 64 * MiB);
  auto r = run(mkfs("-q -O ro,extra_attr,compression -T 0 --compress --compress-algorithm zstd --compress-release "
                    "--populate " + shell_quote((t / "src").string()) + " " + shell_quote(img.string())));
  ASSERT_EQ(r.exit_code, 0) << r.output;
  auto dev = f2fstest::load_image(img);
  ASSERT_TRUE(dev);
  auto v = f2fscore::Volume::open(*dev);
  ASSERT_TRUE(v) << v.error().to_string();
  auto in = (*v)->resolve("/lib/libx.so");
  ASSERT_TRUE(in);
  EXPECT_TRUE(in->is_compressed());
  EXPECT_EQ(in->raw.i.extra.i_compress_algorithm, 2) << "zstd";
  EXPECT_TRUE(in->raw.i.i_inline & f2fscore::disk::inline_flag::compress_released);
  EXPECT_EQ(in->raw.i.extra.i_compr_blocks.get(), 0u);
  EXPECT_LT(in->blocks, 200000u / 4096) << "the saved blocks are not counted";
  auto small = (*v)->resolve("/small");
  ASSERT_TRUE(small);
  EXPECT_FALSE(small->is_compressed()) << "files of at most 3488 bytes stay inline, as sload.f2fs -c";
}
