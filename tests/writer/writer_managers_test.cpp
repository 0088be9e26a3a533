// The writer's node manager and segment manager on their own
// (libf2fscore/src/writer/node_manager.hpp, segment_manager.hpp), on volumes
// made by our mkfs. Expected values come from mkfs.f2fs's layout (node_ino
// 1, meta_ino 2, root 3; the root inode and its dentry block the only blocks
// in use, each at the start of its log's segment) and from the kernel's
// rules, stated at each test.
#include <gtest/gtest.h>

#include <algorithm>
#include <array>
#include <string>
#include <vector>

#include "f2fscore/disk/checkpoint.hpp"
#include "f2fscore/disk/superblock.hpp"
#include "f2fscore/endian.hpp"
#include "f2fscore/volume.hpp"
#include "f2fscore/writer.hpp"
#include "meta/meta_test_util.hpp"
#include "writer/node_manager.hpp"
#include "writer/segment_manager.hpp"
#include "writer/writer_test_util.hpp"

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
// mkfs marks every NAT block but the first empty (update_nat_bits()): its
// nids are free without a read; the block is read when the entry is set.
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
  EXPECT_TRUE(nm.nat_block_empty(1));
  auto n = nm.alloc(3, 1, 2);
  ASSERT_TRUE(n);
  EXPECT_EQ(*n, kNatEntryPerBlock);
  EXPECT_EQ(nm.blocks_read(), 0u) << "block 0 full, block 1 empty: neither read";
  n = nm.alloc(3, 1, 2);
  ASSERT_TRUE(n);
  EXPECT_EQ(*n, kNatEntryPerBlock + 1);
  EXPECT_EQ(nm.blocks_read(), 0u);
  nm.set(kNatEntryPerBlock) = {kNatEntryPerBlock, static_cast<block_t>(vol->main_blkaddr()), 0};
  EXPECT_EQ(nm.blocks_read(), 1u) << "setting the entry reads its block";
  nm.set_cursor(kNatEntryPerBlock);
  n = nm.alloc(3, 1, 2);
  ASSERT_TRUE(n);
  EXPECT_EQ(*n, kNatEntryPerBlock + 1) << "the cached block: 455 is in use now";
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

// The node page cache (the kernel's NODE_MAPPING) on its own: shrink()
// evicts clean pages, least recently used first, down to 7/8 of the bound
// (bound 8: 8 - 8 / 8 = 7 kept); a dirty page is never dropped, however
// far past the bound the cache is.
TEST(NodeManager, PageCacheBoundKeepsDirtyPagesAndEvictsLeastRecentlyUsed) {
  auto dev = our_mkfs(128ull << 20, 0);
  ASSERT_TRUE(dev);
  auto vol = open(*dev);
  ASSERT_TRUE(vol);
  wr::NodeManager nm;
  ASSERT_TRUE(nm.load(*vol, *dev, 4));
  nm.set_bounds(8, 1024);
  // Ten pages written (clean), used in the order 10..19, then 10 again.
  for (nid_t n = 10; n < 20; ++n) {
    nm.new_page(n)->footer.nid.set(n);
    nm.clear_dirty(n);
  }
  ASSERT_NE(nm.cached_page(10), nullptr);
  nm.shrink();
  // 10 held, 7 kept: the three least recently used, 11, 12 and 13, go.
  EXPECT_EQ(nm.cached_pages(), 7u);
  EXPECT_EQ(nm.pages_evicted(), 3u);
  for (nid_t n : {11u, 12u, 13u}) EXPECT_FALSE(nm.page_cached(n)) << n;
  for (nid_t n : {10u, 14u, 15u, 16u, 17u, 18u, 19u}) EXPECT_TRUE(nm.page_cached(n)) << n;
  EXPECT_EQ(nm.cached_page(11), nullptr);
  // Twelve dirty pages more: 19 held, only the 7 clean ones may go.
  for (nid_t n = 30; n < 42; ++n) nm.new_page(n)->footer.nid.set(n);
  nm.shrink();
  EXPECT_EQ(nm.cached_pages(), 12u);
  EXPECT_EQ(nm.dirty_pages(), 12u);
  for (nid_t n = 30; n < 42; ++n) EXPECT_TRUE(nm.page_cached(n) && nm.page_dirty(n)) << n;
  const std::vector<nid_t> want_dirty = {30, 31, 32, 33, 34, 35, 36, 37, 38, 39, 40, 41};
  EXPECT_EQ(nm.dirty_nids(), want_dirty);
  // Written by a checkpoint: clean, and evicted down to 7.
  nm.pages_written();
  nm.shrink();
  EXPECT_EQ(nm.cached_pages(), 7u);
  EXPECT_EQ(nm.dirty_pages(), 0u);
  // A freed node's page goes at once, dirty or not.
  nm.new_page(50);
  nm.drop_page(50);
  EXPECT_FALSE(nm.page_cached(50));
  EXPECT_EQ(nm.dirty_pages(), 0u);
}

// A node page read from the device: the root inode (nid 3) from its NAT
// address, clean; a block whose footer names another nid is refused (as
// f2fs_get_node_page() checks nid_of_node() against the nid asked for).
TEST(NodeManager, ReadPageChecksTheFooterNid) {
  auto dev = our_mkfs(128ull << 20, 0);
  ASSERT_TRUE(dev);
  auto vol = open(*dev);
  ASSERT_TRUE(vol);
  wr::NodeManager nm;
  ASSERT_TRUE(nm.load(*vol, *dev, 4));
  const block_t root = nm.get(3).addr;
  auto p = nm.read_page(*dev, 3, root, 0);
  ASSERT_TRUE(p) << p.error().to_string();
  EXPECT_EQ((*p)->footer.ino.get(), 3u);
  EXPECT_TRUE(nm.page_cached(3));
  EXPECT_FALSE(nm.page_dirty(3));
  auto bad = nm.read_page(*dev, 4, root, 0);
  ASSERT_FALSE(bad);
  EXPECT_EQ(bad.error().code, Errc::corrupt);
  EXPECT_NE(bad.error().to_string().find("not node 4"), std::string::npos) << bad.error().to_string();
  EXPECT_FALSE(nm.page_cached(4));
}

// Clean NAT blocks are evicted past their bound; a block holding an entry
// changed since the checkpoint stays until committed() (the kernel keeps a
// dirty NAT entry in its nat_entry_set until the checkpoint writes it,
// __flush_nat_entry_set() in fs/f2fs/node.c). Bound 2: 2 - 2 / 8 = 2 kept.
// Blocks of nids 4, 455, 910, 1365: NAT blocks 0..3 (455 entries a block).
TEST(NodeManager, NatEntryChangedSinceTheCheckpointSurvivesEviction) {
  auto dev = our_mkfs(128ull << 20, 0);
  ASSERT_TRUE(dev);
  auto vol = open(*dev);
  ASSERT_TRUE(vol);
  wr::NodeManager nm;
  ASSERT_TRUE(nm.load(*vol, *dev, 4));
  ASSERT_GE(nm.max_nid(), 4 * kNatEntryPerBlock);
  nm.set_bounds(8, 2);
  const auto a = static_cast<block_t>(vol->main_blkaddr() + 7);
  nm.set(4) = {4, a, 0};
  for (std::uint32_t b = 1; b <= 3; ++b) EXPECT_EQ(nm.get(b * kNatEntryPerBlock).addr, kNullAddr);
  EXPECT_EQ(nm.blocks_read(), 4u);
  nm.shrink();
  // Four held, two kept: the changed block 0 and the most recent clean one (3).
  EXPECT_EQ(nm.cached_blocks(), 2u);
  EXPECT_EQ(nm.get(4).addr, a);
  EXPECT_EQ(nm.get(3 * kNatEntryPerBlock).addr, kNullAddr);
  EXPECT_EQ(nm.blocks_read(), 4u) << "blocks 0 and 3 are still cached";
  const auto ch = nm.changed_entries();
  ASSERT_EQ(ch.size(), 1u);
  EXPECT_EQ(ch[0].nid, 4u);
  EXPECT_EQ(ch[0].blkaddr, a);
  // The free-nid search sees the changed entry: 4 is in use, 5 is free.
  nm.set_cursor(4);
  auto n = nm.alloc(3, 1, 2);
  ASSERT_TRUE(n);
  EXPECT_EQ(*n, 5u);
  EXPECT_EQ(nm.blocks_read(), 4u);
  // An evicted block is read again on use.
  EXPECT_EQ(nm.get(kNatEntryPerBlock).addr, kNullAddr);
  EXPECT_EQ(nm.blocks_read(), 5u);
  // After the checkpoint block 0 is clean and may go like any other: a
  // bound of 1 keeps only the most recent block (1); block 0 read again
  // shows the entry as the device holds it (this test wrote no NAT: free).
  nm.committed();
  nm.set_bounds(8, 1);
  nm.shrink();
  EXPECT_EQ(nm.cached_blocks(), 1u);
  EXPECT_EQ(nm.get(4).addr, kNullAddr);
  EXPECT_EQ(nm.blocks_read(), 6u);
}

// In the writer: a node page cache of 32 pages. At the start of every call
// the clean pages past 32 are evicted and, once 16 (half) are dirty, node
// writeback writes them to the node logs (MountOptions::node_cache_pages);
// one create or write of a small file touches at most its inode and its
// directory's inode. 300 files, each a new dirty inode: at least
// 300 / (16 + 2) writebacks and no checkpoint (302 changed NAT entries, in
// one NAT block: under excess_dirty_nats()'s tenth of the NAT and the NAT
// block bound); every file reads back after a remount with an 8-page cache.
TEST(NodeManager, WriterKeepsTheNodePageCacheBound) {
  auto dev = our_mkfs(256ull << 20, 0);
  ASSERT_TRUE(dev);
  MountOptions o;
  o.fixed_time = 1700000100;
  o.checkpoint_interval_s = 0;
  o.node_cache_pages = 32;
  auto w = Writer::mount(*dev, o);
  ASSERT_TRUE(w) << w.error().to_string();
  ASSERT_TRUE((*w)->mkdir("/d"));
  constexpr int kFiles = 300;
  std::uint64_t max_cached = 0, max_dirty = 0;
  for (int i = 0; i < kFiles; ++i) {
    const std::string path = "/d/f" + std::to_string(i), data = "file " + std::to_string(i);
    auto f = (*w)->create(path);
    ASSERT_TRUE(f) << path << ": " << f.error().to_string();
    ASSERT_TRUE((*w)->write(*f, 0, writertest::bytes(data)));
    const WriterStats st = (*w)->stats();
    max_cached = std::max(max_cached, st.node_pages_cached);
    max_dirty = std::max(max_dirty, st.node_pages_dirty);
  }
  const WriterStats st = (*w)->stats();
  EXPECT_LE(max_cached, 32u + 2u);
  EXPECT_LE(max_dirty, 16u + 2u);
  EXPECT_GE(st.node_writebacks, static_cast<std::uint64_t>(kFiles / 18));
  EXPECT_EQ(st.checkpoints, 0u);
  EXPECT_GE(st.node_writeback_blocks, static_cast<std::uint64_t>(kFiles));
  EXPECT_GT(st.node_pages_evicted, 0u);
  ASSERT_TRUE((*w)->unmount());
  w->reset();
  writertest::our_fsck_clean(*dev, "300 files through a 32-page node cache");
  o.node_cache_pages = 8;
  auto r = Writer::mount(*dev, o);
  ASSERT_TRUE(r) << r.error().to_string();
  for (int i = 0; i < kFiles; ++i) {
    const std::string path = "/d/f" + std::to_string(i), data = "file " + std::to_string(i);
    auto f = (*r)->lookup(path);
    ASSERT_TRUE(f) << path;
    std::string back(data.size(), '\0');
    auto got = (*r)->read(*f, 0, std::span<std::uint8_t>(reinterpret_cast<std::uint8_t*>(back.data()), back.size()));
    ASSERT_TRUE(got) << path;
    EXPECT_EQ(back, data) << path;
    EXPECT_LE((*r)->stats().node_pages_cached, 8u + 2u);
  }
  ASSERT_TRUE((*r)->unmount());
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
  f.sm.committed();  // the checkpoint: blocks 0..4 valid in it
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
  f.sm.committed();
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
  f.sm.committed();
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
  f.sm.committed();
  EXPECT_EQ(f.sm.find_dirty_summary(30), nullptr);
}

// ---- Holes and sections ---------------------------------------------------------

// Forwards to a device and counts the read bytes that fall in [lo, hi);
// with `holes` false it hides the device's holes (the BlockDevice default:
// everything may hold data).
class SitCountingDevice final : public BlockDevice {
 public:
  SitCountingDevice(BlockDevice& d, std::uint64_t lo, std::uint64_t hi, bool holes)
      : d_(d), lo_(lo), hi_(hi), holes_(holes) {}
  const DeviceInfo& info() const noexcept override { return d_.info(); }
  void submit(IoRequest& r) noexcept override {
    if (r.op == IoOp::read) {
      const std::uint64_t a = std::max(r.offset, lo_), b = std::min(r.offset + r.length, hi_);
      if (a < b) read_ += b - a;
    }
    d_.submit(r);
  }
  std::size_t poll(bool wait) noexcept override { return d_.poll(wait); }
  std::size_t in_flight() const noexcept override { return d_.in_flight(); }
  std::uint64_t next_data(std::uint64_t o, std::uint64_t e) noexcept override {
    return holes_ ? d_.next_data(o, e) : o;
  }
  std::uint64_t next_hole(std::uint64_t o, std::uint64_t e) noexcept override {
    return holes_ ? d_.next_hole(o, e) : e;
  }
  std::uint64_t read_bytes() const { return read_; }

 private:
  BlockDevice& d_;
  std::uint64_t lo_, hi_;
  bool holes_;
  std::uint64_t read_ = 0;
};

// SIT blocks in a hole hold zero entries and are not read; the state loaded
// is the one a full read gives. A 16 GiB volume: 8,100-odd main segments,
// 148 SIT blocks per copy. mkfs keeps the active logs' SIT entries in the
// SIT journal (the hot data summary of the CP pack) and leaves every SIT
// block zero, unwritten: holes of the memory device (64 KiB chunks, 16 SIT
// blocks). One entry written to SIT block 1 (segment 100: 3 valid blocks,
// warm data, mtime 1234) makes that chunk the only part read.
TEST(SegmentManager, SitBlocksInAHoleAreNotRead) {
  auto dev = our_mkfs(16ull << 30, 0);
  ASSERT_TRUE(dev);
  auto vol = open(*dev);
  ASSERT_TRUE(vol);
  const SuperBlock& sb = vol->superblock();
  const std::uint64_t sit_lo = static_cast<std::uint64_t>(sb.sit_blkaddr.get()) * kBlockSize;
  const std::uint64_t sit_hi = sit_lo + static_cast<std::uint64_t>(sb.segment_count_sit.get()) * 512 * kBlockSize;
  const std::uint32_t sit_blocks = (vol->main_segments() + kSitEntryPerBlock - 1) / kSitEntryPerBlock;
  ASSERT_GT(sit_blocks, 100u);
  {
    SitBlock blk{};
    SitEntry& e = blk.entries[100 - kSitEntryPerBlock];
    e.vblocks.set(make_sit_vblocks(1, 3));
    e.valid_map[0] = 0xE0;  // blocks 0, 1, 2 (MSB first)
    e.mtime.set(1234);
    const std::uint64_t at = vol->geometry().current_sit_addr(1, vol->version_bitmaps()) * kBlockSize;
    ASSERT_TRUE(write_at(*dev, at, std::span<const std::uint8_t>(reinterpret_cast<const std::uint8_t*>(&blk), kBlockSize)));
  }
  SitCountingDevice holes(*dev, sit_lo, sit_hi, true), whole(*dev, sit_lo, sit_hi, false);
  wr::SegmentManager a, b;
  auto ra = a.load(*vol, holes, vol->main_blkaddr(), vol->main_segments(), 1);
  ASSERT_TRUE(ra) << ra.error().to_string();
  auto rb = b.load(*vol, whole, vol->main_blkaddr(), vol->main_segments(), 1);
  ASSERT_TRUE(rb) << rb.error().to_string();
  EXPECT_EQ(whole.read_bytes(), static_cast<std::uint64_t>(sit_blocks) * kBlockSize) << "every SIT block of the main area";
  EXPECT_EQ(holes.read_bytes(), 16u * kBlockSize) << "the 64 KiB chunk holding SIT block 1";
  EXPECT_EQ(a.valid(100), 3u);
  EXPECT_EQ(a.type(100), 1u);
  EXPECT_EQ(a.mtime(100), 1234u);
  EXPECT_TRUE(a.is_valid(100, 2));
  EXPECT_FALSE(a.is_valid(100, 3));
  EXPECT_EQ(a.valid_blocks(), 2u + 3u) << "mkfs's root inode and dentry block, and segment 100's";
  EXPECT_EQ(a.valid_blocks(), b.valid_blocks());
  EXPECT_EQ(a.valid_node_blocks(), b.valid_node_blocks());
  EXPECT_EQ(a.free_segments(), b.free_segments());
  for (std::uint32_t s = 0; s < vol->main_segments(); ++s) {
    ASSERT_EQ(a.valid(s), b.valid(s)) << s;
    ASSERT_EQ(a.type(s), b.type(s)) << s;
    ASSERT_EQ(a.mtime(s), b.mtime(s)) << s;
  }
  // Memory follows the SIT blocks with an entry in use (the six logs' and
  // segment 100's, at most 7 of 149), not the volume: a pointer per SIT
  // block and two bits per segment beside them, under 2 bytes a segment
  // where a count, type and mtime for each would take 11.
  EXPECT_LT(a.memory_bytes(), 2u * vol->main_segments());
}

// The free-section map (free_i->free_secmap; __set_inuse() and
// __set_free() in fs/f2fs/segment.h): a section is free while all its
// segments are; taking one segment takes the section; it is free again once
// a checkpoint commits every segment of it empty. Sections of 4 segments
// over the fresh volume's SIT: the two segments with valid blocks (the
// root's inode and dentry block) make their sections not free.
TEST(SegmentManager, FreeAndDirtySectionMaps) {
  auto dev = our_mkfs(256ull << 20, 0);
  ASSERT_TRUE(dev);
  auto vol = open(*dev);
  ASSERT_TRUE(vol);
  wr::SegmentManager sm;
  ASSERT_TRUE(sm.load(*vol, *dev, vol->main_blkaddr(), vol->main_segments(), 4));
  const Checkpoint& cp = vol->checkpoint();
  const std::uint32_t ds = cp.cur_data_segno[0].get(), ns = cp.cur_node_segno[0].get();
  const std::uint32_t nsecs = vol->main_segments() / 4;
  ASSERT_EQ(sm.main_sections(), nsecs);
  const std::uint32_t used = ds / 4 == ns / 4 ? 1u : 2u;
  EXPECT_EQ(sm.free_sections(), nsecs - used);
  EXPECT_FALSE(sm.section_free(ds / 4));
  EXPECT_FALSE(sm.section_free(ns / 4));
  // A section free of both: take its second segment.
  std::uint32_t sec = 0;
  while (sec == ds / 4 || sec == ns / 4) ++sec;
  ASSERT_TRUE(sm.section_free(sec));
  sm.take(sec * 4 + 1);
  EXPECT_FALSE(sm.section_free(sec));
  EXPECT_EQ(sm.free_sections(), nsecs - used - 1);
  sm.take(sec * 4 + 2);
  EXPECT_EQ(sm.free_sections(), nsecs - used - 1) << "the same section";
  // Partly valid: a dirty section (GC's candidate); its valid count.
  EXPECT_TRUE(sm.set_valid(sec * 4 + 1, 7));
  EXPECT_TRUE(sm.set_valid(sec * 4 + 2, 8));
  const auto dirty = sm.dirty_sections();
  EXPECT_NE(std::find(dirty.begin(), dirty.end(), sec), dirty.end());
  EXPECT_EQ(sm.section_valid(sec), 2u);
  // Emptied before the checkpoint: prefree, not free, until committed().
  EXPECT_TRUE(sm.clear_valid(sec * 4 + 1, 7));
  EXPECT_TRUE(sm.clear_valid(sec * 4 + 2, 8));
  EXPECT_FALSE(sm.section_free(sec));
  sm.committed();
  EXPECT_TRUE(sm.section_free(sec));
  EXPECT_EQ(sm.free_sections(), nsecs - used);
  // ALLOC_RIGHT: the next free section after one, wrapping round.
  std::uint32_t expect = (ds / 4 + 1) % nsecs;
  while (expect == ds / 4 || expect == ns / 4) expect = (expect + 1) % nsecs;
  EXPECT_EQ(sm.next_free_section(ds / 4), expect);
  std::uint32_t wrap = 0;
  while (wrap == ds / 4 || wrap == ns / 4) ++wrap;
  EXPECT_EQ(sm.next_free_section(nsecs - 1), wrap) << "wraps round to the first free section";
  // A full section: all four segments' 512 blocks valid.
  const std::uint32_t fsec = nsecs - 1;
  for (std::uint32_t k = 0; k < 4; ++k) {
    sm.take(fsec * 4 + k);  // as a log opening it
    for (std::uint32_t i = 0; i < 512; ++i) sm.set_valid(fsec * 4 + k, i);
  }
  EXPECT_EQ(sm.full_sections([](std::uint32_t) { return false; }), 1u);
  EXPECT_EQ(sm.full_sections([&](std::uint32_t s) { return s == fsec; }), 0u);
  EXPECT_FALSE(sm.section_free(fsec));
}

// ---- Active logs and allocation ----------------------------------------------

// The six logs placed by hand: a copy of the volume's checkpoint with the
// logs at `segs` (hot, warm, cold data, then hot, warm, cold node), each at
// offset 0, LFS.
void place_logs(wr::SegmentManager& sm, const Volume& vol, const std::array<std::uint32_t, 6>& segs) {
  Checkpoint cp = vol.checkpoint();
  for (int t = 0; t < 3; ++t) {
    cp.cur_data_segno[t].set(segs[t]);
    cp.cur_data_blkoff[t].set(0);
    cp.cur_node_segno[t].set(segs[t + 3]);
    cp.cur_node_blkoff[t].set(0);
  }
  for (auto& a : cp.alloc_type) a = 0;
  sm.load_cursegs(cp);
}

struct AllocFixture {
  std::unique_ptr<BlockDevice> dev;
  std::unique_ptr<Volume> vol;
  wr::SegmentManager sm;
  std::uint32_t ds = 0, ns = 0;  ///< mkfs's root dentry and inode segments
  bool load(std::uint32_t secs_per_zone) {
    dev = our_mkfs(256ull << 20, 0);
    if (!dev) return false;
    vol = open(*dev);
    if (!vol) return false;
    auto r = sm.load(*vol, *dev, vol->main_blkaddr(), vol->main_segments(), 1, secs_per_zone);
    EXPECT_TRUE(r) << r.error().to_string();
    ds = vol->checkpoint().cur_data_segno[0].get();
    ns = vol->checkpoint().cur_node_segno[0].get();
    // The segments the tests place logs in hold nothing of mkfs's.
    EXPECT_GT(vol->main_segments(), 100u);
    EXPECT_TRUE(ds < 30 || ds > 99) << ds;
    EXPECT_TRUE(ns < 30 || ns > 99) << ns;
    return r && vol->main_segments() > 100 && (ds < 30 || ds > 99) && (ns < 30 || ns > 99);
  }
  block_t addr(std::uint32_t seg, std::uint32_t off) const { return vol->main_blkaddr() + seg * 512ull + off; }
};

// LFS (new_curseg() and get_new_segment() with ALLOC_RIGHT in
// fs/f2fs/segment.c, one segment a section): a log hands out its segment's
// blocks in order, each checkpoint-valid from then on (valid only once the
// caller writes it), and when full takes the first free section at or after
// its own: with the logs in segments 40..45, the hot data log in 40 goes
// to 46, then the cold data log in 42 to 47 (43..46 taken). The warm data
// log moved to the last segment wraps round to the first free section.
TEST(SegmentManager, LfsTakesTheNextFreeSectionAfterTheLog) {
  AllocFixture f;
  ASSERT_TRUE(f.load(1));
  place_logs(f.sm, *f.vol, {40, 41, 42, 43, 44, 45});
  for (std::uint32_t s = 40; s <= 45; ++s) {
    EXPECT_FALSE(f.sm.free_at_cp(s)) << "a log's segment is held";
    EXPECT_TRUE(f.sm.is_cur_seg(s));
  }
  EXPECT_TRUE(f.sm.curseg(0).usable);
  const wr::AllocRules lfs;
  for (std::uint32_t i = 0; i < 512; ++i) {
    auto a = f.sm.allocate_block(*f.vol, 0, lfs, 100);
    ASSERT_TRUE(a) << a.error().to_string();
    ASSERT_EQ(*a, f.addr(40, i));
    ASSERT_TRUE(f.sm.ckpt_valid(40, i));
    ASSERT_FALSE(f.sm.is_valid(40, i));
    ASSERT_TRUE(f.sm.set_valid(40, i));  // the caller writes it
  }
  EXPECT_EQ(f.sm.alloc_counts().lfs_blocks, 512u);
  EXPECT_EQ(f.sm.alloc_counts().ssr_blocks, 0u);
  // Full: the log opened its next segment at once.
  EXPECT_EQ(f.sm.curseg(0).segno, 46u);
  EXPECT_EQ(f.sm.curseg(0).next_blkoff, 0u);
  EXPECT_EQ(f.sm.curseg(0).alloc_type, 0u);
  EXPECT_EQ(f.sm.alloc_counts().segments, 1u);
  EXPECT_FALSE(f.sm.section_free(46));
  EXPECT_EQ(f.sm.type(46), 0u);
  auto nb = f.sm.next_block(*f.vol, 0, lfs);
  ASSERT_TRUE(nb);
  EXPECT_EQ(*nb, f.addr(46, 0)) << "NEXT_FREE_BLKADDR";
  ASSERT_TRUE(f.sm.new_segment(*f.vol, 2, lfs));
  EXPECT_EQ(f.sm.curseg(2).segno, 47u);
  // Wrapping round: from the last segment to the lowest free one.
  f.sm.curseg(1).segno = f.vol->main_segments() - 1;
  ASSERT_TRUE(f.sm.new_segment(*f.vol, 1, lfs));
  std::uint32_t low = 0;
  while (low == f.ds || low == f.ns) ++low;
  EXPECT_EQ(f.sm.curseg(1).segno, low);
  // Free and dirty: segment 40, full, then emptied, is prefree (not free)
  // until the checkpoint commits it; then free again.
  for (std::uint32_t i = 0; i < 512; ++i) ASSERT_TRUE(f.sm.clear_valid(40, i));
  auto pf = f.sm.prefree();
  EXPECT_NE(std::find(pf.begin(), pf.end(), 40u), pf.end());
  EXPECT_EQ(std::find(pf.begin(), pf.end(), 46u), pf.end()) << "an active log is never prefree";
  EXPECT_FALSE(f.sm.section_free(40));
  f.sm.committed();
  EXPECT_TRUE(f.sm.section_free(40));
  EXPECT_FALSE(f.sm.section_free(46)) << "the log in it keeps it";
}

// The zone rule of get_new_segment(): with 4 sections a zone, a free
// section in a zone another log is in is passed over for the next zone;
// one in the log's own zone is not. Hot data log in 39 (zone 9), warm
// data log in 41 (zone 10): the hot data log's next section is 44 (zone
// 11), not 40; then the warm data log's is 42 (its own zone).
TEST(SegmentManager, LfsPassesOverZonesOfOtherLogs) {
  AllocFixture f;
  ASSERT_TRUE(f.load(4));
  place_logs(f.sm, *f.vol, {39, 41, 80, 84, 88, 92});
  const wr::AllocRules lfs;
  ASSERT_TRUE(f.sm.new_segment(*f.vol, 0, lfs));
  EXPECT_EQ(f.sm.curseg(0).segno, 44u);
  ASSERT_TRUE(f.sm.new_segment(*f.vol, 1, lfs));
  EXPECT_EQ(f.sm.curseg(1).segno, 42u);
}

// SSR (get_ssr_segment() and __next_free_blkoff() in fs/f2fs/segment.c):
// under need_SSR a full log takes the dirty segment of its type with the
// fewest checkpoint-valid blocks and hands out its blocks free in both the
// current and the checkpoint-valid map, in order. Segment b (50): blocks
// 0..4 valid at the checkpoint; a (51): 0..9 valid at the checkpoint, 1..9
// freed since. The warm data log takes b at block 5. Block 2 freed since
// the checkpoint and block 6 allocated and freed since are not handed out
// again: the log runs 5, 6, 7, ..., 511 (507 blocks, 6 once). Then a, at
// block 10.
// After the next checkpoint b's blocks 2 and 6 are free again: SSR gives 2.
TEST(SegmentManager, SsrReusesOnlyBlocksFreeAtTheCheckpoint) {
  AllocFixture f;
  ASSERT_TRUE(f.load(1));
  const std::uint32_t b = 50, a = 51;
  f.sm.set_type(a, 1);
  f.sm.set_type(b, 1);
  for (std::uint32_t i = 0; i < 10; ++i) f.sm.set_valid(a, i);
  for (std::uint32_t i = 0; i < 5; ++i) f.sm.set_valid(b, i);
  f.sm.committed();
  place_logs(f.sm, *f.vol, {40, 41, 42, 43, 44, 45});
  for (std::uint32_t i = 1; i < 10; ++i) f.sm.clear_valid(a, i);
  wr::AllocRules ssr;
  ssr.need_ssr = [] { return true; };
  // The warm node log with lfs_only: never SSR, the next free section.
  wr::AllocRules node = ssr;
  node.lfs_only = true;
  ASSERT_TRUE(f.sm.new_segment(*f.vol, 4, node));
  EXPECT_EQ(f.sm.curseg(4).segno, 46u);
  EXPECT_EQ(f.sm.curseg(4).alloc_type, 0u);
  ASSERT_TRUE(f.sm.new_segment(*f.vol, 1, ssr));
  EXPECT_EQ(f.sm.curseg(1).segno, b);
  EXPECT_EQ(f.sm.curseg(1).alloc_type, 1u) << "SSR";
  EXPECT_EQ(f.sm.curseg(1).next_blkoff, 5u);
  ASSERT_TRUE(f.sm.clear_valid(b, 2));
  std::vector<std::uint32_t> got;
  for (int i = 0; i < 507; ++i) {
    auto x = f.sm.allocate_block(*f.vol, 1, ssr, 7);
    ASSERT_TRUE(x) << x.error().to_string();
    ASSERT_EQ((*x - f.vol->main_blkaddr()) / 512, b);
    const auto off = static_cast<std::uint32_t>((*x - f.vol->main_blkaddr()) % 512);
    got.push_back(off);
    ASSERT_TRUE(f.sm.set_valid(b, off));
    if (off == 6) ASSERT_TRUE(f.sm.clear_valid(b, 6));  // freed again at once
  }
  EXPECT_EQ(got[0], 5u);
  EXPECT_EQ(got[1], 6u);
  EXPECT_EQ(got[2], 7u);
  EXPECT_EQ(got.back(), 511u);
  EXPECT_EQ(std::count(got.begin(), got.end(), 2u), 0);
  EXPECT_EQ(std::count(got.begin(), got.end(), 6u), 1);
  EXPECT_EQ(f.sm.alloc_counts().ssr_blocks, 507u);
  // b full by the checkpoint-valid rule: the log moved on to a at once.
  EXPECT_EQ(f.sm.curseg(1).segno, a);
  EXPECT_EQ(f.sm.curseg(1).next_blkoff, 10u);
  EXPECT_EQ(f.sm.valid(b), 510u);
  f.sm.committed();
  EXPECT_EQ(f.sm.ckpt_valid_count(b), 510u);
  ASSERT_TRUE(f.sm.new_segment(*f.vol, 1, ssr));
  EXPECT_EQ(f.sm.curseg(1).segno, b) << "the only dirty warm data segment not a log's";
  EXPECT_EQ(f.sm.curseg(1).next_blkoff, 2u) << "freed before the checkpoint: reusable after it";
  auto x = f.sm.allocate_block(*f.vol, 1, ssr, 7);
  ASSERT_TRUE(x);
  EXPECT_EQ(*x, f.addr(b, 2));
  EXPECT_EQ(f.sm.curseg(1).next_blkoff, 6u);
}

// No free section and no segment with a free block: Errc::no_space naming
// it, the log not usable, next_block() failing the same way; without SSR
// (roll-forward) a dirty segment is no way out either. Every section taken;
// one cold data segment (60) with block 0 valid, mkfs's hot data segment
// (the root's dentry block) made full.
TEST(SegmentManager, FullVolumeIsRefused) {
  AllocFixture f;
  ASSERT_TRUE(f.load(1));
  place_logs(f.sm, *f.vol, {40, 41, 42, 43, 44, 45});
  for (std::uint32_t s = 0; s < f.vol->main_segments(); ++s)
    if (s != 60) f.sm.take(s);
  for (std::uint32_t i = 1; i < 512; ++i) ASSERT_TRUE(f.sm.set_valid(f.ds, i));
  f.sm.set_type(60, 2);
  f.sm.take(60);
  ASSERT_TRUE(f.sm.set_valid(60, 0));
  EXPECT_EQ(f.sm.free_sections(), 0u);
  wr::AllocRules no_ssr;
  no_ssr.no_ssr = true;
  auto r = f.sm.new_segment(*f.vol, 2, no_ssr);
  ASSERT_FALSE(r);
  EXPECT_EQ(r.error().code, Errc::no_space);
  EXPECT_NE(r.error().message.find("no free section"), std::string::npos) << r.error().message;
  EXPECT_FALSE(f.sm.curseg(2).usable);
  auto nb = f.sm.next_block(*f.vol, 2, no_ssr);
  ASSERT_FALSE(nb);
  EXPECT_EQ(nb.error().code, Errc::no_space);
  // With SSR allowed the dirty segment's first free block is taken.
  auto s = f.sm.next_block(*f.vol, 2, wr::AllocRules{});
  ASSERT_TRUE(s) << s.error().to_string();
  EXPECT_EQ(*s, f.addr(60, 1));
  EXPECT_EQ(f.sm.curseg(2).alloc_type, 1u);
  // Every block of it taken: nothing is left.
  for (std::uint32_t i = 1; i < 512; ++i) ASSERT_TRUE(f.sm.set_valid(60, i));
  f.sm.curseg(2).next_blkoff = 512;
  auto full = f.sm.next_block(*f.vol, 2, wr::AllocRules{});
  ASSERT_FALSE(full);
  EXPECT_EQ(full.error().code, Errc::no_space);
}

// SIT mtimes (get_mtime() in fs/f2fs/segment.h, update_segment_mtime() in
// fs/f2fs/segment.c): the clock runs from the checkpoint's elapsed_time; a
// segment's mtime is the mean of its blocks' times, a GC move bringing its
// old segment's time; max_mtime follows the clock. Blocks at 100 and 400:
// (100 + 400) / 2 = 250; a move from a segment of time 10: (250 * 2 + 10)
// / 3 = 170.
TEST(SegmentManager, SegmentMtimeIsTheMeanOfItsBlocks) {
  AllocFixture f;
  ASSERT_TRUE(f.load(1));
  place_logs(f.sm, *f.vol, {40, 41, 42, 43, 44, 45});
  f.sm.start_mtime(50, 1000);
  EXPECT_EQ(f.sm.sit_mtime(1030), 80u);
  EXPECT_EQ(f.sm.max_mtime(), 50u);
  const wr::AllocRules lfs;
  auto alloc = [&](std::uint64_t ctime, std::uint64_t old) {
    auto a = f.sm.allocate_block(*f.vol, 0, lfs, ctime, old);
    ASSERT_TRUE(a);
    ASSERT_TRUE(f.sm.set_valid(40, static_cast<std::uint32_t>((*a - f.vol->main_blkaddr()) % 512)));
  };
  alloc(100, 0);
  EXPECT_EQ(f.sm.mtime(40), 100u);
  alloc(400, 0);
  EXPECT_EQ(f.sm.mtime(40), 250u);
  alloc(500, 10);
  EXPECT_EQ(f.sm.mtime(40), 170u);
  EXPECT_EQ(f.sm.max_mtime(), 500u);
  f.sm.note_mtime(3);
  EXPECT_EQ(f.sm.min_mtime(), 0u) << "no section older than 0 (mkfs's mtimes are 0)";
  f.sm.note_mtime(900);
  EXPECT_EQ(f.sm.max_mtime(), 900u);
}

}  // namespace
