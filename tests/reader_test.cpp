// The read path: images written by Linux (../shared/images, with what Linux
// 6.1 read from them) and by our mkfs, and damaged images.
#include <gtest/gtest.h>

#include <algorithm>
#include <fstream>
#include <sstream>

#include "f2fscore/mkfs.hpp"
#include "f2fscore/volume.hpp"
#include "support/test_support.hpp"

using namespace f2fscore;
using namespace f2fscore::disk;
namespace fs = std::filesystem;

namespace {

std::string octal(std::uint32_t v) {
  std::ostringstream o;
  o << std::oct << v;
  return o.str();
}

// Builds manifest lines in the format of ../shared/images/README.md.
void walk(Volume& v, const InodeInfo& dir, const std::string& prefix, std::vector<std::string>& out, int depth = 0) {
  ASSERT_LT(depth, 64);
  auto entries = v.read_dir(dir);
  ASSERT_OK(entries);
  for (const auto& e : *entries) {
    if (e.name == "." || e.name == "..") continue;
    const std::string path = prefix.empty() ? e.name : prefix + "/" + e.name;
    auto in = v.read_inode(e.ino);
    ASSERT_TRUE(in) << path << ": " << in.error().to_string();
    const std::string perm = octal(in->mode & 07777);
    if (in->is_dir()) {
      out.push_back("D|" + path + "|" + perm);
      walk(v, *in, path, out, depth + 1);
    } else if (in->is_reg()) {
      std::string data(in->size, '\0');
      auto n = v.read(*in, 0, std::span<std::uint8_t>(reinterpret_cast<std::uint8_t*>(data.data()), data.size()));
      ASSERT_TRUE(n) << path << ": " << n.error().to_string();
      out.push_back("F|" + path + "|" + perm + "|" + std::to_string(in->size) + "|" + std::to_string(in->links) + "|" +
                    f2fstest::sha256_hex(data));
    } else if (in->is_symlink()) {
      auto t = v.read_link(*in);
      ASSERT_TRUE(t) << path << ": " << t.error().to_string();
      out.push_back("L|" + path + "|" + *t);
    }
    auto xs = v.xattrs(*in);
    ASSERT_TRUE(xs) << path << ": " << xs.error().to_string();
    std::vector<std::string> names;
    for (const auto& x : *xs) names.push_back(x.full_name());
    std::sort(names.begin(), names.end());
    if (!names.empty()) {
      std::string l = "X|" + path + "|";
      for (const auto& n : names) l += n + ",";
      out.push_back(l);
    }
  }
}

}  // namespace

// The test support's SHA-256 (the manifests' file hashes) on the examples of
// FIPS 180-2 appendix B (one block, two blocks) and the empty message.
TEST(TestSupport, Sha256OfTheStandardsExamples) {
  EXPECT_EQ(f2fstest::sha256_hex("abc"), "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad");
  EXPECT_EQ(f2fstest::sha256_hex("abcdbcdecdefdefgefghfghighijhijkijkljklmklmnlmnomnopnopq"),
            "248d6a61d20638b8e5c026930c3e6039a33ce45964ff2167f6ecedd419db06c1");
  EXPECT_EQ(f2fstest::sha256_hex(""), "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855");
  EXPECT_EQ(f2fstest::sha256_hex(std::string(1000000, 'a')),
            "cdc76e5c9914fb9281a1c7e284d73e67f1809a48a497200e046d39ccc7112cd0");
}

// The test support's image comparison: a block written past a hole in one
// of two sparse files, and a longer file whose tail is zeroes.
TEST(TestSupport, DifferingBlocksAndReadBlock) {
  f2fstest::TempDir t;
  const auto a = t / "a.img", b = t / "b.img";
  f2fstest::make_sparse_file(a, 8u << 20);
  f2fstest::make_sparse_file(b, 8u << 20);
  EXPECT_EQ(fs::file_size(a), 8u << 20);
  EXPECT_TRUE(f2fstest::differing_blocks(a, b).empty());
  {
    std::fstream f(b, std::ios::binary | std::ios::in | std::ios::out);
    f.seekp(1281 * 4096 + 17);
    f.put('x');
  }
  EXPECT_EQ(f2fstest::differing_blocks(a, b), std::vector<std::uint64_t>{1281});
  const auto blk = f2fstest::read_block(b, 1281);
  ASSERT_EQ(blk.size(), 4096u);
  EXPECT_EQ(blk[17], 'x');
  EXPECT_EQ(std::count(blk.begin(), blk.end(), 0), 4095);
  fs::resize_file(a, 16u << 20);  // zeroes past b's end read as zeroes
  EXPECT_EQ(f2fstest::differing_blocks(a, b), std::vector<std::uint64_t>{1281});
}

TEST(Reader, SharedImagesReadAsLinuxReadsThem) {
  auto dir = f2fstest::shared_images_dir();
  if (!dir) {
    if (f2fstest::required("SHARED")) FAIL() << "../shared/images is missing";
    GTEST_SKIP() << "../shared/images is not present";
  }
  int images = 0;
  for (const auto& si : f2fstest::shared_syzkaller_images(*dir)) {
    SCOPED_TRACE(si.stem);
    auto img = f2fstest::unzstd(si.image_zst);
    ASSERT_TRUE(img);
    auto dev = f2fstest::load_image(*img);
    auto vol = Volume::open(*dev);
    ASSERT_OK(vol);
    auto root = (*vol)->read_inode((*vol)->superblock().root_ino.get());
    ASSERT_OK(root);
    std::vector<std::string> got;
    walk(**vol, *root, "", got);
    std::sort(got.begin(), got.end());
    EXPECT_EQ(got, si.manifest);
    ++images;
  }
  EXPECT_EQ(images, 16);
}

namespace {
std::unique_ptr<BlockDevice> fresh_volume(std::uint64_t bytes, std::uint32_t features) {
  auto dev = make_memory_device(bytes);
  MkfsTarget t{dev.get(), "mem"};
  MkfsOptions o;
  o.features = features;
  o.timestamp = 1700000000;
  auto r = format_volume(std::span<const MkfsTarget>(&t, 1), o);
  EXPECT_TRUE(r);
  return dev;
}
}  // namespace

TEST(Reader, OpensOurMkfsVolume) {
  auto dev = fresh_volume(256ull << 20, feature::extra_attr | feature::inode_checksum | feature::lost_found |
                                             feature::quota_ino | feature::sb_checksum);
  auto vol = Volume::open(*dev);
  ASSERT_OK(vol);
  EXPECT_TRUE((*vol)->open_report().clean_unmount);
  EXPECT_EQ((*vol)->open_report().pending_fsync_nodes, 0u);
  EXPECT_TRUE((*vol)->nat_bits_valid());
  auto root = (*vol)->resolve("/");
  ASSERT_TRUE(root);
  EXPECT_TRUE(root->is_dir());
  EXPECT_EQ(root->links, 3u);
  auto lpf = (*vol)->resolve("/lost+found");
  ASSERT_OK(lpf);
  EXPECT_EQ(lpf->ino, 6u);  // after quota inodes 4 and 5
  EXPECT_EQ(lpf->mode & 0777, 0700);
  auto missing = (*vol)->resolve("/nope");
  ASSERT_FALSE(missing);
  EXPECT_EQ(missing.error().code, Errc::not_found);
  // SIT: the hot node log holds root, two quota inodes and lost+found.
  auto seg = (*vol)->segment((*vol)->checkpoint().cur_node_segno[0].get());
  ASSERT_TRUE(seg);
  EXPECT_EQ(seg->valid_blocks, 4u);
  EXPECT_EQ(seg->type, static_cast<std::uint8_t>(CursegType::hot_node));
}

TEST(Reader, FallsBackToTheSecondSuperblock) {
  auto dev = fresh_volume(256ull << 20, feature::extra_attr | feature::sb_checksum);
  std::vector<std::uint8_t> junk(4096, 0x5A);
  ASSERT_TRUE(write_at(*dev, 0, junk));
  auto vol = Volume::open(*dev);
  ASSERT_OK(vol);
  EXPECT_EQ((*vol)->open_report().superblock_copy, 1);
  ASSERT_FALSE((*vol)->open_report().warnings.empty());
  EXPECT_NE((*vol)->open_report().warnings[0].find("superblock #0"), std::string::npos);
}

TEST(Reader, BothSuperblocksBadIsAClearError) {
  auto dev = fresh_volume(256ull << 20, 0);
  std::vector<std::uint8_t> zero(8192, 0);
  ASSERT_TRUE(write_at(*dev, 0, zero));
  auto vol = Volume::open(*dev);
  ASSERT_FALSE(vol);
  EXPECT_EQ(vol.error().code, Errc::corrupt);
  EXPECT_NE(vol.error().message.find("no valid superblock"), std::string::npos);
  EXPECT_NE(vol.error().message.find("magic"), std::string::npos);
}

TEST(Reader, TruncatedImageIsAClearError) {
  auto full = fresh_volume(256ull << 20, 0);
  auto cut = make_memory_device(100ull << 20);
  std::vector<std::uint8_t> b(1 << 20);
  for (std::uint64_t off = 0; off < (100ull << 20); off += b.size()) {
    ASSERT_TRUE(read_at(*full, off, b));
    ASSERT_TRUE(write_at(*cut, off, b));
  }
  auto vol = Volume::open(*cut);
  ASSERT_FALSE(vol);
  EXPECT_NE(vol.error().message.find("truncated"), std::string::npos) << vol.error().message;
}

TEST(Reader, BadCheckpointPackFallsBackToTheOther) {
  auto dev = fresh_volume(256ull << 20, 0);
  // Damage pack 0's first block (block 512); pack 1 (version 0) remains.
  std::vector<std::uint8_t> junk(4096, 0x33);
  ASSERT_TRUE(write_at(*dev, 512ull * 4096, junk));
  auto vol = Volume::open(*dev);
  ASSERT_OK(vol);
  EXPECT_EQ((*vol)->open_report().checkpoint_pack, 1);
  // And both damaged: a clear error naming the checkpoint.
  ASSERT_TRUE(write_at(*dev, 1024ull * 4096, junk));
  auto bad = Volume::open(*dev);
  ASSERT_FALSE(bad);
  EXPECT_NE(bad.error().message.find("no valid checkpoint"), std::string::npos);
}

namespace {
// The pack in use: its first block, and the block of its NAT journal
// (our mkfs writes compact summaries: the NAT journal opens the first one).
struct PackAt {
  std::uint64_t head = 0, closing = 0, nat_journal = 0;
};
PackAt pack_in_use(BlockDevice& dev) {
  auto vol = Volume::open(dev);
  EXPECT_TRUE(vol);
  PackAt p;
  if (!vol) return p;
  const auto& sb = (*vol)->superblock();
  const auto& cp = (*vol)->checkpoint();
  EXPECT_TRUE(cp.ckpt_flags.get() & cp_flag::compact_sum);
  p.head = sb.cp_blkaddr.get() + static_cast<std::uint64_t>((*vol)->open_report().checkpoint_pack) * 512;
  p.closing = p.head + cp.cp_pack_total_block_count.get() - 1;
  p.nat_journal = p.head + cp.cp_pack_start_sum.get();
  return p;
}
}  // namespace

// A NAT journal claiming 200 entries (capacity 38, NAT_JOURNAL_ENTRIES in
// include/linux/f2fs_fs.h) is refused by default, as the kernel's
// journal reads refuse it; the lenient open trims it and says so.
TEST(Reader, LenientOpenTrimsJournalCounts) {
  auto dev = fresh_volume(256ull << 20, 0);
  const PackAt p = pack_in_use(*dev);
  std::vector<std::uint8_t> b(4096);
  ASSERT_TRUE(read_at(*dev, p.nat_journal * 4096, b));
  b[0] = 200;  // n_nats, little-endian 16 bits
  b[1] = 0;
  ASSERT_TRUE(write_at(*dev, p.nat_journal * 4096, b));
  auto strict = Volume::open(*dev);
  ASSERT_FALSE(strict);
  EXPECT_NE(strict.error().message.find("NAT journal holds 200 entries"), std::string::npos) << strict.error().message;
  VolumeOpenOptions o;
  o.lenient_checkpoint = true;
  auto vol = Volume::open(*dev, o);
  ASSERT_OK(vol);
  EXPECT_EQ((*vol)->open_report().nat_journal_claimed, 200u);
  EXPECT_EQ((*vol)->open_report().sit_journal_claimed, 0u);
  EXPECT_FALSE((*vol)->open_report().next_free_nid_clamped);
  const auto& w = (*vol)->open_report().warnings;
  EXPECT_TRUE(std::any_of(w.begin(), w.end(), [](const std::string& s) {
    return s.rfind("checkpoint: NAT journal holds 200 entries, at most 38 (clamped)", 0) == 0;
  }));
  // The volume still reads: the root and its NAT entry.
  auto root = (*vol)->resolve("/");
  ASSERT_OK(root);
  EXPECT_TRUE(root->is_dir());
}

// next_free_nid past the NAT (sanity_check_ckpt() in fs/f2fs/super.c) is
// refused by default; the lenient open sets it to root_ino + 1.
TEST(Reader, LenientOpenClampsNextFreeNid) {
  auto dev = fresh_volume(256ull << 20, 0);
  const PackAt p = pack_in_use(*dev);
  std::vector<std::uint8_t> b(4096);
  ASSERT_TRUE(read_at(*dev, p.head * 4096, b));
  store_le32(b.data(), offsetof(Checkpoint, next_free_nid), 0xfffffff0u);
  seal_checkpoint(b.data());
  ASSERT_TRUE(write_at(*dev, p.head * 4096, b));
  ASSERT_TRUE(write_at(*dev, p.closing * 4096, b));
  auto strict = Volume::open(*dev);
  ASSERT_FALSE(strict);
  EXPECT_NE(strict.error().message.find("next_free_nid"), std::string::npos) << strict.error().message;
  VolumeOpenOptions o;
  o.lenient_checkpoint = true;
  auto vol = Volume::open(*dev, o);
  ASSERT_OK(vol);
  EXPECT_TRUE((*vol)->open_report().next_free_nid_clamped);
  EXPECT_EQ((*vol)->open_report().raw_next_free_nid, 0xfffffff0u);
  EXPECT_EQ((*vol)->checkpoint().next_free_nid.get(), 4u);  // root_ino 3 + 1
  EXPECT_LT((*vol)->checkpoint().next_free_nid.get(), (*vol)->max_nid());
}
