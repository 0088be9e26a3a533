// The corruption library against the reader: each edit must land where the
// layout says (Volume, the read-only reader, sees the new value through its
// own lookups), re-sealed edits must keep the checksums valid (the reader
// verifies inode checksums and opens only a checkpoint pack whose CRC
// holds), and raw edits must break them. On the rich image
// (support/rich_image.hpp) in memory.
#include <gtest/gtest.h>

#include "support/assert_ok.hpp"

#include "f2fscore/checksum.hpp"
#include "f2fscore/disk/checkpoint.hpp"
#include "f2fscore/volume.hpp"
#include "fsck/corrupt.hpp"
#include "support/rich_image.hpp"

namespace {

using namespace f2fscore;
using f2fstest::corrupt::Corruptor;

class CorruptTest : public ::testing::Test {
 protected:
  void SetUp() override {
    using namespace f2fscore::disk;
    static f2fstest::RichImage* rich = [] {
      auto* r = new f2fstest::RichImage(f2fstest::build_rich_image(
          {feature::extra_attr | feature::inode_checksum | feature::flexible_inline_xattr | feature::sb_checksum,
           false, false, 64ull << 20}));
      return r;
    }();
    ASSERT_TRUE(rich->error.empty()) << rich->error;
    r_ = rich;
    dev_ = rich->img.to_device();
    auto c = Corruptor::open(*dev_);
    ASSERT_OK(c);
    c_ = std::move(*c);
  }
  void apply(const std::string& e) {
    auto r = c_->apply(e);
    ASSERT_TRUE(r) << e << ": " << r.error().to_string();
  }
  std::unique_ptr<Volume> open_verified() {
    auto v = Volume::open(*dev_);  // inode checksums verified
    EXPECT_OK(v);
    return v ? std::move(*v) : nullptr;
  }
  const f2fstest::RichImage* r_ = nullptr;
  std::unique_ptr<BlockDevice> dev_;
  std::unique_ptr<Corruptor> c_;
};

TEST_F(CorruptTest, NatEntryWhereTheReaderFindsIt) {
  apply("nat[/big].block_addr=0x1234");
  apply("nat[" + std::to_string(r_->dir) + "].ino=77");
  auto v = open_verified();
  ASSERT_TRUE(v);
  EXPECT_EQ(v->nat_entry(r_->big)->block_addr.get(), 0x1234u);
  EXPECT_EQ(v->nat_entry(r_->dir)->ino.get(), 77u);
  EXPECT_EQ(v->nat_entry(r_->small)->block_addr.get(), r_->node_blk.at(r_->small));
}

TEST_F(CorruptTest, InodeEditsResealTheChecksumRawOnesBreakIt) {
  apply("inode[/big].i_links=5");
  apply("inode[/small].i_size+=3");
  {
    auto v = open_verified();
    ASSERT_TRUE(v);
    auto big = v->read_inode(r_->big);
    ASSERT_OK(big);
    EXPECT_EQ(big->links, 5u);
    EXPECT_EQ(v->read_inode(r_->small)->size, 103u);
  }
  apply("raw:inode[/big].i_uid=9");
  auto v = open_verified();
  ASSERT_TRUE(v);
  auto big = v->read_inode(r_->big);
  ASSERT_FALSE(big);
  EXPECT_EQ(big.error().code, Errc::corrupt);
}

TEST_F(CorruptTest, DataSlotsAndNodeFooters) {
  const auto blk0 = c_->data_blk(r_->big, 0);
  ASSERT_TRUE(blk0);
  apply("inode[/big].addr[0]=" + std::to_string(*blk0 + 1));
  apply("node[" + std::to_string(r_->big_dn) + "].footer.ino=3");
  apply("node[" + std::to_string(r_->big_dn) + "].footer.offset+=2");
  auto v = open_verified();
  ASSERT_TRUE(v);
  auto in = v->read_inode(r_->big);
  ASSERT_TRUE(in);
  EXPECT_EQ(*v->map_block(*in, 0), *blk0 + 1);
  auto n = c_->node(r_->big_dn);
  ASSERT_TRUE(n);
  EXPECT_EQ(n->footer.ino.get(), 3u);
  EXPECT_EQ(n->footer.flag.get() >> disk::node_flag::offset_shift, 3u);  // was 1
}

TEST_F(CorruptTest, CheckpointEditsKeepThePackValid) {
  const auto before = c_->cp().valid_block_count.get();
  apply("cp.valid_block_count-=1");
  apply("cp.ckpt_flags|=0x10");
  auto v = open_verified();
  ASSERT_TRUE(v);
  EXPECT_EQ(v->checkpoint().valid_block_count.get(), before - 1);
  EXPECT_TRUE(v->checkpoint().ckpt_flags.get() & disk::cp_flag::fsck);
  EXPECT_EQ(v->open_report().checkpoint_pack, c_->vol().open_report().checkpoint_pack);
  // A raw CRC edit of the pack in use makes the reader fall back or fail.
  apply("raw:cp.crc^=1");
  auto v2 = Volume::open(*dev_);
  EXPECT_TRUE(!v2 || (*v2)->open_report().checkpoint_pack != v->open_report().checkpoint_pack);
}

TEST_F(CorruptTest, SuperblockCopyOneResealed) {
  apply("sb[1].segment_count_main+=1");
  std::vector<std::uint8_t> b(disk::kBlockSize);
  ASSERT_TRUE(c_->read(1, b.data()));
  const auto* sb = reinterpret_cast<const disk::SuperBlock*>(b.data() + disk::kSuperOffset);
  EXPECT_EQ(sb->crc.get(), disk::superblock_checksum(*sb));
  EXPECT_EQ(sb->segment_count_main.get(), c_->sb().segment_count_main.get() + 1);
  auto v = open_verified();
  ASSERT_TRUE(v);
  EXPECT_EQ(v->open_report().superblock_copy, 0);
}

TEST_F(CorruptTest, SitAndSsaWhereTheReaderFindsThem) {
  const auto b = *c_->data_blk(r_->big, 1);
  const auto seg = c_->vol().segno_of(b);
  const auto ofs = b - c_->vol().segment_start(seg);
  const auto vb = c_->vol().segment(seg)->valid_blocks;
  apply("sit[/big@1].vblocks+=3");
  apply("sit[" + std::to_string(seg) + "].valid_map[" + std::to_string(ofs) + "]=0");
  apply("ssa[/big@1].ofs_in_node=999");
  auto v = open_verified();
  ASSERT_TRUE(v);
  auto si = v->segment(seg);
  ASSERT_TRUE(si);
  EXPECT_EQ(si->valid_blocks, vb + 3);
  EXPECT_FALSE(test_bit_msb(si->valid_map, ofs));
  EXPECT_EQ(v->summary(seg)->entries[ofs].ofs_in_node.get(), 999u);
}

TEST_F(CorruptTest, DentriesInBlocksAndInline) {
  apply("dentry[/dir/f05].ino=" + std::to_string(r_->big));
  apply("dentry[/dir/inl/x].hash_code^=1");
  apply("dentry_add[/dir/inl/z]=/big");
  apply("dentry_del[/dir/f06]=1");
  auto v = open_verified();
  ASSERT_TRUE(v);
  auto dir = v->resolve("/dir");
  ASSERT_TRUE(dir);
  auto f05 = v->lookup(*dir, "f05");
  ASSERT_TRUE(f05);
  EXPECT_EQ(f05->ino, r_->big);
  EXPECT_FALSE(v->lookup(*dir, "f06"));
  auto inl = v->resolve("/dir/inl");
  ASSERT_OK(inl);  // the inline edit kept its inode checksum
  auto ents = v->read_dir(*inl);
  ASSERT_TRUE(ents);
  bool z = false, x_bad = false;
  for (const auto& e : *ents) {
    z = z || (e.name == "z" && e.ino == r_->big);
    x_bad = x_bad || (e.name == "x" && e.hash != dentry_hash("x"));
  }
  EXPECT_TRUE(z);
  EXPECT_TRUE(x_bad);
}

TEST_F(CorruptTest, OrphanListAndFsyncChain) {
  apply("orphan_add=/big");
  apply("orphan_add=" + std::to_string(r_->dir));
  apply("fsync_chain[/small]=loop");
  auto v = open_verified();
  ASSERT_TRUE(v);
  auto o = v->orphans();
  ASSERT_OK(o);
  EXPECT_EQ(*o, (std::vector<disk::nid_t>{r_->big, r_->dir}));
  EXPECT_EQ(v->open_report().pending_fsync_nodes, 1u);
  bool loop = false;
  for (const auto& w : v->open_report().warnings) loop = loop || w.find("loops") != std::string::npos;
  EXPECT_TRUE(loop);
}

TEST_F(CorruptTest, XattrEntryStraddlingInlineAndNode) {
  // /xa: six entries, the third straddles the inline area and the node.
  // Entry 1 ("a", 140 bytes) keeps its padded size with 141.
  apply("xattr[/xa].entry[1].e_value_size=141");
  auto v = open_verified();
  ASSERT_TRUE(v);
  auto in = v->read_inode(r_->xa);
  ASSERT_OK(in);
  auto x = v->xattrs(*in);
  ASSERT_OK(x);
  ASSERT_GE(x->size(), 2u);
  EXPECT_EQ((*x)[1].value.size(), 141u);
  EXPECT_EQ((*x)[2].name, "node");
}

TEST_F(CorruptTest, BadEditsAreErrorsNotCrashes) {
  for (const char* e : {"nat[99999999].ino=1", "inode[/nope].i_links=1", "cp.no_such_field=1", "sb[2].magic=1",
                        "dentry[/dir/nope].ino=1", "xattr[/small].entry[9].e_name_len=1", "block[1].u32[4094]=1",
                        "sit[999999].vblocks=1", "garbage", "=5", "inode[/big].i_addr[923]=1"}) {
    auto r = c_->apply(e);
    EXPECT_FALSE(r) << e;
    if (!r) EXPECT_FALSE(r.error().message.empty()) << e;
  }
}

}  // namespace
