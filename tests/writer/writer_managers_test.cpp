// The writer's node manager and segment manager on their own
// (libf2fscore/src/writer/node_manager.hpp, segment_manager.hpp), on volumes
// made by our mkfs. Expected values come from mkfs.f2fs's layout (node_ino
// 1, meta_ino 2, root 3; the root inode and its dentry block the only blocks
// in use, each at the start of its log's segment) and from the kernel's
// rules, stated at each test.
#include <gtest/gtest.h>

#include "f2fscore/disk/checkpoint.hpp"
#include "f2fscore/endian.hpp"
#include "f2fscore/volume.hpp"
#include "meta/meta_test_util.hpp"
#include "writer/node_manager.hpp"
#include "writer/segment_manager.hpp"

namespace {

using namespace f2fscore;
using namespace f2fscore::disk;
using metatest::our_mkfs;

constexpr std::uint32_t kNone = 0xFFFFFFFFu;

std::unique_ptr<Volume> open(BlockDevice& dev) {
  auto v = Volume::open(dev);
  EXPECT_TRUE(v) << v.error().to_string();
  return v ? std::move(*v) : nullptr;
}

// ---- Node manager ------------------------------------------------------------

// The NAT is read a block at a time as nids are used, never at load
// (f2fs_build_node_manager() reads no NAT block either).
TEST(NodeManager, ReadsNoNatBlockUntilANidIsUsed) {
  auto dev = our_mkfs(128ull << 20, 0);
  ASSERT_TRUE(dev);
  auto vol = open(*dev);
  ASSERT_TRUE(vol);
  wr::NodeManager nm;
  ASSERT_TRUE(nm.load(*vol, *dev, 4));
  EXPECT_EQ(nm.blocks_read(), 0u);
  EXPECT_TRUE(nm.nat_bits_valid()) << "mkfs writes nat_bits matching its checkpoint";
  // The root inode (nid 3) as mkfs made it: its own ino, an address in the main area.
  const wr::NatMem& root = nm.get(3);
  EXPECT_EQ(root.ino, 3u);
  EXPECT_TRUE(vol->is_valid_main_addr(root.addr));
  EXPECT_EQ(nm.blocks_read(), 1u);
  EXPECT_EQ(nm.cached_blocks(), 1u);
  // Another nid of the same NAT block: no read.
  EXPECT_EQ(nm.get(400).addr, kNullAddr);
  EXPECT_EQ(nm.blocks_read(), 1u);
  EXPECT_TRUE(nm.error());
}

// The first free nid after the root: nids 0 (never used), 1 (node_ino),
// 2 (meta_ino) and 3 (root) are taken on a volume without quota or
// lost+found, so the search from root + 1 gives 4.
TEST(NodeManager, FreeNidFromTheLoadedBlock) {
  auto dev = our_mkfs(128ull << 20, 0);
  ASSERT_TRUE(dev);
  auto vol = open(*dev);
  ASSERT_TRUE(vol);
  wr::NodeManager nm;
  ASSERT_TRUE(nm.load(*vol, *dev, 4));
  auto n = nm.alloc(3, 1, 2);
  ASSERT_TRUE(n);
  EXPECT_EQ(*n, 4u);
  // An entry given an address is no longer free: the next search passes it.
  nm.set(4) = {4, static_cast<block_t>(vol->main_blkaddr()), 0};
  nm.set_cursor(4);
  n = nm.alloc(3, 1, 2);
  ASSERT_TRUE(n);
  EXPECT_EQ(*n, 5u);
}

// nat_bits (f2fs_init_nat_bits(), scan_nat_bits() in fs/f2fs/node.c): a NAT
// block the full bitmap marks holds no free nid and is not read; the search
// goes on in the next block, whose first nid is 1 x NAT_ENTRY_PER_BLOCK = 455.
TEST(NodeManager, FreeNidSearchSkipsNatBlocksNatBitsMarkFull) {
  auto dev = our_mkfs(128ull << 20, 0);
  ASSERT_TRUE(dev);
  {
    auto vol = open(*dev);
    ASSERT_TRUE(vol);
    ASSERT_TRUE(vol->nat_bits_valid());
    const SuperBlock& sb = vol->superblock();
    const NatBitsSize nb = nat_bits_size(sb.segment_count_nat.get());
    const std::uint64_t pack = sb.cp_blkaddr.get() + static_cast<std::uint64_t>(vol->open_report().checkpoint_pack) * 512;
    const std::uint64_t at = (pack + 512 - nb.blocks) * kBlockSize;
    std::vector<std::uint8_t> b(kBlockSize);
    ASSERT_TRUE(read_at(*dev, at, b));
    set_bit_le(b.data() + 8, 0);  // the full bitmap follows the 8-byte header
    ASSERT_TRUE(write_at(*dev, at, b));
  }
  auto vol = open(*dev);
  ASSERT_TRUE(vol);
  ASSERT_TRUE(vol->nat_bits_valid()) << "the header (cp_ver, crc) is unchanged";
  wr::NodeManager nm;
  ASSERT_TRUE(nm.load(*vol, *dev, 4));
  EXPECT_TRUE(nm.nat_block_full(0));
  auto n = nm.alloc(3, 1, 2);
  ASSERT_TRUE(n);
  EXPECT_EQ(*n, kNatEntryPerBlock);
  EXPECT_EQ(nm.blocks_read(), 1u) << "only NAT block 1 was read";
}

// A nid freed since the checkpoint is not handed out again before the next
// checkpoint (the kernel adds it to the free nid list only when the
// checkpoint has written its NAT entry: __flush_nat_entry_set()).
TEST(NodeManager, NidFreedSinceTheCheckpointIsNotReused) {
  auto dev = our_mkfs(128ull << 20, 0);
  ASSERT_TRUE(dev);
  auto vol = open(*dev);
  ASSERT_TRUE(vol);
  wr::NodeManager nm;
  ASSERT_TRUE(nm.load(*vol, *dev, 4));
  nm.set(4) = {4, static_cast<block_t>(vol->main_blkaddr()), 0};
  wr::NatMem& e = nm.set(4);
  e.addr = kNullAddr;
  e.ino = 0;
  nm.mark_freed(4);
  nm.set_cursor(4);
  auto n = nm.alloc(3, 1, 2);
  ASSERT_TRUE(n);
  EXPECT_EQ(*n, 5u);
  nm.committed();
  nm.set_cursor(4);
  n = nm.alloc(3, 1, 2);
  ASSERT_TRUE(n);
  EXPECT_EQ(*n, 4u);
}

// The dirty NAT set: what the checkpoint writes, and the block counts for
// nat_bits (update_nat_bits(): entries with an address, nid 0 as used).
// Block 0 after mkfs: nids 0..3 used; two more given addresses -> 6.
TEST(NodeManager, ChangedEntriesAndNatBlockUsage) {
  auto dev = our_mkfs(128ull << 20, 0);
  ASSERT_TRUE(dev);
  auto vol = open(*dev);
  ASSERT_TRUE(vol);
  wr::NodeManager nm;
  ASSERT_TRUE(nm.load(*vol, *dev, 4));
  const auto a = static_cast<block_t>(vol->main_blkaddr());
  nm.set(7) = {7, a + 1, 0};
  nm.set(5) = {5, a + 2, 0};
  const auto ch = nm.changed_entries();
  ASSERT_EQ(ch.size(), 2u);
  EXPECT_EQ(ch[0].nid, 5u);
  EXPECT_EQ(ch[0].blkaddr, a + 2);
  EXPECT_EQ(ch[1].nid, 7u);
  const auto use = nm.changed_block_usage();
  ASSERT_EQ(use.size(), 1u);
  EXPECT_EQ(use[0].first, 0u);
  EXPECT_EQ(use[0].second, 6u);
  nm.committed();
  EXPECT_TRUE(nm.changed_entries().empty());
}

// ---- Segment manager -------------------------------------------------------

struct SmFixture {
  std::unique_ptr<BlockDevice> dev;
  std::unique_ptr<Volume> vol;
  wr::SegmentManager sm;
  bool load() {
    dev = our_mkfs(256ull << 20, 0);
    if (!dev) return false;
    vol = open(*dev);
    if (!vol) return false;
    auto r = sm.load(*vol, *dev, vol->main_blkaddr(), vol->main_segments(), 1);
    EXPECT_TRUE(r) << r.error().to_string();
    return static_cast<bool>(r);
  }
};

// The SIT of a fresh volume: the root inode and its dentry block, each the
// first block of its log's segment (mkfs.f2fs); the counts agree with the
// checkpoint's valid_block_count / valid_node_count, and only those two
// segments keep a valid map.
TEST(SegmentManager, LoadsTheSitOfAFreshVolume) {
  SmFixture f;
  ASSERT_TRUE(f.load());
  const Checkpoint& cp = f.vol->checkpoint();
  EXPECT_EQ(f.sm.valid_blocks(), 2u);
  EXPECT_EQ(f.sm.valid_blocks(), cp.valid_block_count.get());
  EXPECT_EQ(f.sm.valid_node_blocks(), cp.valid_node_count.get());
  const std::uint32_t ds = cp.cur_data_segno[0].get(), ns = cp.cur_node_segno[0].get();
  EXPECT_EQ(f.sm.valid(ds), 1u);
  EXPECT_EQ(f.sm.valid(ns), 1u);
  EXPECT_TRUE(f.sm.is_valid(ds, 0));
  EXPECT_FALSE(f.sm.is_valid(ds, 1));
  EXPECT_EQ(f.sm.type(ds), 0u) << "hot data";
  EXPECT_EQ(f.sm.type(ns), 3u) << "hot node";
  EXPECT_EQ(f.sm.partial_segments(), 2u);
  EXPECT_FALSE(f.sm.free_at_cp(ds));
  EXPECT_TRUE(f.sm.free_at_cp(f.vol->main_segments() - 1));
}

// Checkpoint-valid rules (ckpt_valid_map, __next_free_blkoff() in
// fs/f2fs/segment.c): a block valid at the last checkpoint is not handed
// out by SSR before the next checkpoint even once invalidated; a block
// allocated since the checkpoint neither; after the checkpoint both are.
TEST(SegmentManager, CheckpointValidBlocksAreNotReusedBeforeTheNextCheckpoint) {
  SmFixture f;
  ASSERT_TRUE(f.load());
  const std::uint32_t s = 20;
  for (std::uint32_t i = 0; i < 5; ++i) ASSERT_TRUE(f.sm.set_valid(s, i));
  f.sm.committed({});  // the checkpoint: blocks 0..4 valid in it
  EXPECT_EQ(f.sm.ckpt_valid_count(s), 5u);
  ASSERT_TRUE(f.sm.clear_valid(s, 1));
  EXPECT_FALSE(f.sm.is_valid(s, 1));
  EXPECT_TRUE(f.sm.ckpt_valid(s, 1));
  EXPECT_EQ(f.sm.ckpt_valid_count(s), 5u);
  EXPECT_EQ(f.sm.next_free_blkoff(s, 0), 5u);
  // Allocated since the checkpoint, then invalidated: still not free.
  f.sm.mark_ckpt_valid(s, 5);
  ASSERT_TRUE(f.sm.set_valid(s, 5));
  ASSERT_TRUE(f.sm.clear_valid(s, 5));
  EXPECT_EQ(f.sm.next_free_blkoff(s, 0), 6u);
  EXPECT_TRUE(f.sm.changed(s));
  f.sm.committed({});
  EXPECT_FALSE(f.sm.changed(s));
  EXPECT_EQ(f.sm.next_free_blkoff(s, 0), 1u);
  EXPECT_EQ(f.sm.ckpt_valid_count(s), 4u);
}

// SSR's choice (get_ssr_segment() and get_gc_cost() with SSR in Linux 6.1):
// the log's own type first, then the other types of its kind (cold and warm
// logs towards hot, the hot log towards cold), fewest checkpoint-valid
// blocks, never an empty or full segment nor a skipped section.
TEST(SegmentManager, SsrChoosesByTypeThenCheckpointValidBlocks) {
  SmFixture f;
  ASSERT_TRUE(f.load());
  const std::uint32_t a = 20, b = 21, c = 22, full = 23;
  f.sm.set_type(a, 1);
  f.sm.set_type(b, 1);
  f.sm.set_type(c, 0);
  f.sm.set_type(full, 0);
  for (std::uint32_t i = 0; i < 10; ++i) f.sm.set_valid(a, i);
  for (std::uint32_t i = 0; i < 5; ++i) f.sm.set_valid(b, i);
  f.sm.set_valid(c, 0);
  for (std::uint32_t i = 0; i < 512; ++i) f.sm.set_valid(full, i);
  f.sm.committed({});
  // a: 1 valid now but 10 at the checkpoint; b: 5 and 5.
  for (std::uint32_t i = 1; i < 10; ++i) f.sm.clear_valid(a, i);
  // The active logs' sections are never SSR targets (the writer skips
  // them, as get_ssr_segment() skips sec_usage_check() sections); mkfs's
  // root inode and dentry block lie in two of them.
  const Checkpoint& cp = f.vol->checkpoint();
  auto logs = [&](std::uint32_t sec) {
    for (int t = 0; t < 3; ++t)
      if (cp.cur_data_segno[t].get() == sec || cp.cur_node_segno[t].get() == sec) return true;
    return false;
  };
  auto none = [&](std::uint32_t sec) { return logs(sec); };
  EXPECT_EQ(f.sm.ssr_segment(1, none), b) << "warm data: its own type, fewest checkpoint-valid blocks";
  EXPECT_EQ(f.sm.ssr_segment(2, none), b) << "cold data: no cold segment, warm before hot";
  EXPECT_EQ(f.sm.ssr_segment(0, none), c) << "hot data: its own type (the full one never)";
  EXPECT_EQ(f.sm.ssr_segment(0, [&](std::uint32_t sec) { return sec == c || logs(sec); }), b) << "hot data, c's section skipped: warm";
  EXPECT_EQ(f.sm.ssr_segment(4, none), kNone) << "warm node: no node segment with a free block";
}

// Summaries: a segment taken free starts blank; one with valid blocks keeps
// what the SSA says (the root's dentry block names the root inode).
TEST(SegmentManager, SummariesOfChangedSegments) {
  SmFixture f;
  ASSERT_TRUE(f.load());
  const std::uint32_t ds = f.vol->checkpoint().cur_data_segno[0].get();
  auto s = f.sm.dirty_summary(*f.vol, ds, false);
  ASSERT_TRUE(s);
  EXPECT_EQ((*s)->entries[0].nid.get(), 3u);
  EXPECT_TRUE(f.sm.changed(ds));
  auto fresh = f.sm.dirty_summary(*f.vol, 30, true);
  ASSERT_TRUE(fresh);
  EXPECT_EQ((*fresh)->entries[0].nid.get(), 0u);
  EXPECT_NE(f.sm.find_dirty_summary(30), nullptr);
  f.sm.committed({});
  EXPECT_EQ(f.sm.find_dirty_summary(30), nullptr);
}

}  // namespace
