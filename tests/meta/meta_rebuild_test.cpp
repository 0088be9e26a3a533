// Metadata rebuild, unit tier (no external tools but zstd for fixtures):
// identity on our mkfs images, rich images and Linux-written fixtures, the
// counts against what mkfs/Linux wrote, bad plans, and power cuts at every
// write of a rebuild.
#include "meta/meta_test_util.hpp"

#include "f2fscore/fault_device.hpp"

namespace {

using namespace metatest;

// The counts a rebuild writes must be what the writer of the image (our mkfs,
// which matches mkfs.f2fs; or Linux) wrote, for an image it left consistent.
void expect_same_counts(const Checkpoint& a, const Checkpoint& b) {
  EXPECT_EQ(a.valid_block_count.get(), b.valid_block_count.get());
  EXPECT_EQ(a.valid_node_count.get(), b.valid_node_count.get());
  EXPECT_EQ(a.valid_inode_count.get(), b.valid_inode_count.get());
  EXPECT_EQ(a.free_segment_count.get(), b.free_segment_count.get());
  for (int i = 0; i < 3; ++i) {
    EXPECT_EQ(a.cur_data_segno[i].get(), b.cur_data_segno[i].get());
    EXPECT_EQ(a.cur_data_blkoff[i].get(), b.cur_data_blkoff[i].get());
    EXPECT_EQ(a.cur_node_segno[i].get(), b.cur_node_segno[i].get());
    EXPECT_EQ(a.cur_node_blkoff[i].get(), b.cur_node_blkoff[i].get());
  }
  EXPECT_EQ(a.user_block_count.get(), b.user_block_count.get());
}

// nat_bits after the header (full bitmap, empty bitmap) of the current pack.
std::vector<std::uint8_t> nat_bits_of(BlockDevice& dev, Volume& v) {
  const auto nb = nat_bits_size(v.superblock().segment_count_nat.get());
  const std::uint64_t seg = v.superblock().cp_blkaddr.get() +
                            static_cast<std::uint64_t>(v.open_report().checkpoint_pack) * kDefaultBlocksPerSeg;
  std::vector<std::uint8_t> b(static_cast<std::size_t>(nb.blocks) * kBlockSize);
  EXPECT_TRUE(read_at(dev, (seg + kDefaultBlocksPerSeg - nb.blocks) * kBlockSize, b));
  return std::vector<std::uint8_t>(b.begin() + 8, b.begin() + 8 + 2 * nb.bitmap_bytes);
}

void identity_with_counts(BlockDevice& dev) {
  Checkpoint before{};
  std::vector<std::uint8_t> bits_before;
  {
    auto v = Volume::open(dev);
    ASSERT_OK(v);
    before = (*v)->checkpoint();
    if ((*v)->nat_bits_valid()) bits_before = nat_bits_of(dev, **v);
  }
  IdentityResult r;
  ASSERT_NO_FATAL_FAILURE(rebuild_and_check(dev, &r));
  auto v = Volume::open(dev);
  ASSERT_TRUE(v);
  expect_same_counts((*v)->checkpoint(), before);
  const std::uint32_t keep = cp_flag::umount | cp_flag::nat_bits | cp_flag::large_nat_bitmap | cp_flag::trimmed |
                             cp_flag::crc_recovery | cp_flag::nocrc_recovery;
  EXPECT_EQ((*v)->checkpoint().ckpt_flags.get() & keep, before.ckpt_flags.get() & keep);
  // nat_bits as the image's writer (mkfs or Linux) computed them.
  if (!bits_before.empty()) {
    EXPECT_TRUE((*v)->nat_bits_valid());
    EXPECT_TRUE(nat_bits_of(dev, **v) == bits_before);
  }
  // Rebuilding again changes no NAT, SIT or SSA block: the first rebuild
  // left them as the plan says.
  auto plan = meta::plan_from_volume(**v);
  ASSERT_TRUE(plan);
  auto again = meta::rebuild(dev, **v, *plan);
  ASSERT_OK(again);
  EXPECT_EQ(again->nat_blocks_written, 0u);
  EXPECT_EQ(again->sit_blocks_written, 0u);
  EXPECT_EQ(again->ssa_blocks_written, 0u);
  EXPECT_EQ(again->cursegs_moved, 0u);
}

TEST(MetaRebuild, IdentityOurMkfsDefault) {
  auto dev = our_mkfs(64ull << 20, 0);
  ASSERT_TRUE(dev);
  identity_with_counts(*dev);
}

TEST(MetaRebuild, IdentityOurMkfsAllFeatures) {
  auto dev = our_mkfs(256ull << 20, kRichFeatures | feature::quota_ino | feature::project_quota | feature::compression);
  ASSERT_TRUE(dev);
  identity_with_counts(*dev);
}

TEST(MetaRebuild, IdentityOurMkfsLargeNatBitmap) {
  auto dev = our_mkfs(128ull << 20, feature::extra_attr, 1, true);
  ASSERT_TRUE(dev);
  identity_with_counts(*dev);
}

TEST(MetaRebuild, IdentityOurMkfsTwoSegmentSections) {
  auto dev = our_mkfs(256ull << 20, 0, 2);
  ASSERT_TRUE(dev);
  identity_with_counts(*dev);
}

TEST(MetaRebuild, IdentityOurMkfs64GiB) {
  auto dev = our_mkfs(64ull << 30, 0);
  ASSERT_TRUE(dev);
  identity_with_counts(*dev);
}

TEST(MetaRebuild, IdentityLinuxFixtures) {
  int done = 0;
  for (const char* name : {"linux61-compress.img.zst", "linux61-casefold.img.zst", "mkfs115-64M-allfeat.img.zst"}) {
    SCOPED_TRACE(name);
    auto dev = fixture(name);
    if (!dev) continue;
    identity_with_counts(*dev);
    ++done;
  }
  if (done == 0) GTEST_SKIP() << "zstd is not available to unpack the fixtures";
}

// A rich image was written straight into an image without updating the
// checkpoint's counts: the rebuild makes them agree, and the tree stays.
TEST(MetaRebuild, RichImages) {
  for (std::uint32_t f : {0u, kRichFeatures, kRichFeatures | feature::compression}) {
    SCOPED_TRACE(f);
    auto dev = rich(f);
    ASSERT_TRUE(dev);
    IdentityResult r;
    ASSERT_NO_FATAL_FAILURE(rebuild_and_check(*dev, &r));
    auto v = Volume::open(*dev);
    ASSERT_TRUE(v);
    auto plan = meta::plan_from_volume(**v);
    ASSERT_TRUE(plan);
    const Checkpoint& cp = (*v)->checkpoint();
    EXPECT_EQ(cp.valid_block_count.get(), plan->blocks.size() + plan->reserved_blocks);
    std::uint32_t nodes = 0;
    for (const auto& b : plan->blocks) nodes += b.node;
    EXPECT_EQ(cp.valid_node_count.get(), nodes);
    EXPECT_EQ(cp.valid_inode_count.get(), plan->valid_inode_count);
  }
}

// What the plan says is what the SIT, SSA and NAT say afterwards.
TEST(MetaRebuild, SitSsaNatFollowThePlan) {
  auto dev = rich(kRichFeatures);
  ASSERT_TRUE(dev);
  meta::RebuildPlan plan;
  {
    auto v = Volume::open(*dev);
    ASSERT_TRUE(v);
    auto p = meta::plan_from_volume(**v);
    ASSERT_TRUE(p);
    plan = *p;
    ASSERT_TRUE(meta::rebuild(*dev, **v, plan));
  }
  auto v = Volume::open(*dev);
  ASSERT_TRUE(v);
  std::map<std::uint32_t, std::uint32_t> per_seg;
  for (const auto& b : plan.blocks) {
    const std::uint32_t seg = (*v)->segno_of(b.blkaddr);
    ++per_seg[seg];
    auto s = (*v)->segment(seg);
    ASSERT_TRUE(s);
    const std::uint32_t off = static_cast<std::uint32_t>(b.blkaddr - (*v)->segment_start(seg));
    EXPECT_TRUE(test_bit_msb(s->valid_map, off)) << b.blkaddr;
    EXPECT_EQ(s->type >= 3, b.node) << "segment " << seg;
    auto sum = (*v)->summary(seg);
    ASSERT_TRUE(sum);
    EXPECT_EQ(sum->entries[off].nid.get(), b.nid) << b.blkaddr;
    if (!b.node) {
      EXPECT_EQ(sum->entries[off].ofs_in_node.get(), b.ofs_in_node);
      EXPECT_EQ(sum->entries[off].version, b.version);
    }
  }
  for (std::uint32_t s = 0; s < (*v)->main_segments(); ++s) {
    auto e = (*v)->segment(s);
    ASSERT_TRUE(e);
    EXPECT_EQ(e->valid_blocks, per_seg.count(s) ? per_seg[s] : 0u) << "segment " << s;
  }
  std::set<nid_t> used;
  for (const auto& n : plan.nat) {
    used.insert(n.nid);
    auto e = (*v)->nat_entry(n.nid);
    ASSERT_TRUE(e);
    EXPECT_EQ(e->block_addr.get(), n.blkaddr);
    EXPECT_EQ(e->ino.get(), n.ino);
  }
  for (nid_t nid = 0; nid < 2000; ++nid)
    if (!used.count(nid)) {
      auto e = (*v)->nat_entry(nid);
      ASSERT_TRUE(e);
      EXPECT_EQ(e->block_addr.get(), 0u) << "nid " << nid;
    }
}

TEST(MetaRebuild, OrphansGoToThePack) {
  auto dev = our_mkfs(64ull << 20, 0);
  ASSERT_TRUE(dev);
  std::vector<nid_t> orphans;
  for (nid_t i = 0; i < 1500; ++i) orphans.push_back(5000 + i);  // two orphan blocks
  ASSERT_NO_FATAL_FAILURE(rebuild_and_check(*dev, nullptr, nullptr, [&](meta::RebuildPlan& p) { p.orphans = orphans; }));
  auto v = Volume::open(*dev);
  ASSERT_TRUE(v);
  EXPECT_TRUE((*v)->checkpoint().ckpt_flags.get() & cp_flag::orphan_present);
  auto o = (*v)->orphans();
  ASSERT_TRUE(o);
  EXPECT_EQ(*o, orphans);
  // And away again.
  ASSERT_NO_FATAL_FAILURE(rebuild_and_check(*dev, nullptr, nullptr, [&](meta::RebuildPlan& p) { p.orphans.clear(); }));
  auto v2 = Volume::open(*dev);
  ASSERT_TRUE(v2);
  EXPECT_FALSE((*v2)->checkpoint().ckpt_flags.get() & cp_flag::orphan_present);
}

// An active log whose next block is in use moves to a free segment.
TEST(MetaRebuild, BusyCursegMoves) {
  auto dev = our_mkfs(64ull << 20, 0);
  ASSERT_TRUE(dev);
  auto v = Volume::open(*dev);
  ASSERT_TRUE(v);
  const Checkpoint cp = (*v)->checkpoint();
  auto plan = meta::plan_from_volume(**v);
  ASSERT_TRUE(plan);
  // Claim the hot data log's next block for the root directory (slot 1).
  const block_t next = static_cast<block_t>((*v)->segment_start(cp.cur_data_segno[0].get()) + cp.cur_data_blkoff[0].get());
  auto nat = (*v)->nat_entry(kRootIno);
  ASSERT_TRUE(nat);
  plan->blocks.push_back({next, kRootIno, 1, nat->version, false});
  meta::RebuildPlan no_move = *plan;
  no_move.move_busy_cursegs = false;
  auto refused = meta::rebuild(*dev, **v, no_move);
  ASSERT_FALSE(refused);
  EXPECT_EQ(refused.error().code, Errc::invalid_argument);
  auto r = meta::rebuild(*dev, **v, *plan);
  ASSERT_OK(r);
  EXPECT_EQ(r->cursegs_moved, 1u);
  auto v2 = Volume::open(*dev);
  ASSERT_TRUE(v2);
  const Checkpoint& n = (*v2)->checkpoint();
  EXPECT_NE(n.cur_data_segno[0].get(), cp.cur_data_segno[0].get());
  EXPECT_EQ(n.cur_data_blkoff[0].get(), 0u);
  auto s = (*v2)->segment(n.cur_data_segno[0].get());
  ASSERT_TRUE(s);
  EXPECT_EQ(s->type, 0u);
  EXPECT_EQ(s->valid_blocks, 0u);
  // The old segment is now a full one with its summary in the SSA area.
  auto old = (*v2)->summary(cp.cur_data_segno[0].get());
  ASSERT_TRUE(old);
  EXPECT_EQ(old->entries[cp.cur_data_blkoff[0].get()].nid.get(), kRootIno);
  EXPECT_EQ(n.valid_block_count.get(), cp.valid_block_count.get() + 1);
  EXPECT_EQ(n.free_segment_count.get(), cp.free_segment_count.get() - 1);
}

TEST(MetaRebuild, BadPlansAreRefused) {
  auto dev = our_mkfs(64ull << 20, 0);
  ASSERT_TRUE(dev);
  auto v = Volume::open(*dev);
  ASSERT_TRUE(v);
  auto good = meta::plan_from_volume(**v);
  ASSERT_TRUE(good);
  const auto image = f2fstest::SparseImage::capture(*dev);
  const block_t main = static_cast<block_t>((*v)->main_blkaddr());
  std::vector<std::pair<const char*, std::function<void(meta::RebuildPlan&)>>> cases = {
      {"block before main", [&](meta::RebuildPlan& p) { p.blocks.push_back({main - 1, 3, 0, 0, false}); }},
      {"block past the end", [&](meta::RebuildPlan& p) { p.blocks.push_back({0xFFFFFFF0u, 3, 0, 0, false}); }},
      {"block twice", [&](meta::RebuildPlan& p) { p.blocks.push_back(p.blocks.front()); }},
      {"nid past max", [&](meta::RebuildPlan& p) { p.nat.push_back({(*v)->max_nid(), 3, 0, 0}); }},
      {"nid twice", [&](meta::RebuildPlan& p) { p.nat.push_back(p.nat.back()); }},
      {"NAT entry to no node", [&](meta::RebuildPlan& p) { p.nat.push_back({77, 77, main + 4000, 0}); }},
      {"node without NAT", [&](meta::RebuildPlan& p) { p.blocks.push_back({main + 4000, 77, 0, 0, true}); }},
      {"ofs_in_node too big", [&](meta::RebuildPlan& p) { p.blocks.push_back({main + 4000, 3, 5000, 0, false}); }},
      {"segment types size", [&](meta::RebuildPlan& p) { p.segment_types.assign(3, 0); }},
      {"orphan nid 0", [&](meta::RebuildPlan& p) { p.orphans.push_back(0); }},
      {"too many orphans", [&](meta::RebuildPlan& p) { p.orphans.assign(600000, 5); }},
  };
  for (auto& [name, edit] : cases) {
    SCOPED_TRACE(name);
    meta::RebuildPlan p = *good;
    edit(p);
    auto r = meta::rebuild(*dev, **v, p);
    ASSERT_FALSE(r);
    EXPECT_EQ(r.error().code, Errc::invalid_argument) << r.error().to_string();
  }
  // Nothing was written.
  EXPECT_TRUE(f2fstest::SparseImage::capture(*dev).blocks == image.blocks);
}

// Random edits of a good plan: the rebuild returns a value (never crashes
// or reads out of bounds); when it accepts the plan the volume still opens
// with the new checkpoint.
TEST(MetaRebuild, RandomPlansNeverCrash) {
  auto base = rich(kRichFeatures);
  ASSERT_TRUE(base);
  const auto image = f2fstest::SparseImage::capture(*base);
  meta::RebuildPlan good;
  std::uint64_t ver = 0;
  block_t main = 0;
  std::uint32_t segs = 0;
  nid_t max_nid = 0;
  {
    auto v = Volume::open(*base);
    ASSERT_TRUE(v);
    auto p = meta::plan_from_volume(**v);
    ASSERT_TRUE(p);
    good = *p;
    ver = (*v)->open_report().checkpoint_ver;
    main = static_cast<block_t>((*v)->main_blkaddr());
    segs = (*v)->main_segments();
    max_nid = (*v)->max_nid();
  }
  std::uint64_t seed = 0x9E3779B97F4A7C15ull;
  auto rnd = [&](std::uint64_t n) {
    seed ^= seed << 13;
    seed ^= seed >> 7;
    seed ^= seed << 17;
    return n ? seed % n : 0;
  };
  int accepted = 0;
  for (int iter = 0; iter < 300; ++iter) {
    meta::RebuildPlan p = good;
    const int edits = 1 + static_cast<int>(rnd(3));
    for (int e = 0; e < edits; ++e) {
      switch (rnd(9)) {
        case 0: p.blocks[rnd(p.blocks.size())].blkaddr = static_cast<block_t>(rnd(1ull << 32)); break;
        case 1: p.blocks[rnd(p.blocks.size())].blkaddr = main + static_cast<block_t>(rnd(segs * 512ull)); break;
        case 2: p.blocks[rnd(p.blocks.size())].nid = static_cast<nid_t>(rnd(max_nid + 10ull)); break;
        case 3: p.blocks[rnd(p.blocks.size())].node ^= true; break;
        case 4: p.nat[rnd(p.nat.size())].blkaddr = main + static_cast<block_t>(rnd(segs * 512ull)); break;
        case 5: p.nat.erase(p.nat.begin() + static_cast<std::ptrdiff_t>(rnd(p.nat.size()))); break;
        case 6: p.segment_types.assign(rnd(2) ? segs : rnd(segs + 2), static_cast<std::uint8_t>(rnd(8))); break;
        case 7: p.orphans.push_back(static_cast<nid_t>(rnd(max_nid + 5ull))); break;
        case 8: p.blocks.erase(p.blocks.begin() + static_cast<std::ptrdiff_t>(rnd(p.blocks.size()))); break;
      }
    }
    auto dev = image.to_device();
    auto v = Volume::open(*dev);
    ASSERT_TRUE(v);
    auto r = meta::rebuild(*dev, **v, p);
    if (!r) {
      EXPECT_FALSE(r.error().message.empty());
      continue;
    }
    ++accepted;
    auto v2 = Volume::open(*dev);
    ASSERT_TRUE(v2) << "iteration " << iter << ": " << v2.error().to_string();
    EXPECT_EQ((*v2)->open_report().checkpoint_ver, ver + 1);
  }
  EXPECT_GT(accepted, 0);
}

// Damaged volumes: plan_from_volume and rebuild return values, never crash
// (run under ASan/UBSan in the sanitizer build).
TEST(MetaRebuild, DamagedVolumesNeverCrash) {
  auto r = f2fstest::build_rich_image({kRichFeatures | feature::compression, false, false, 64ull << 20, 0, true});
  ASSERT_TRUE(r.error.empty()) << r.error;
  std::vector<std::uint64_t> targets;
  for (const auto& [nid, blk] : r.node_blk) targets.push_back(blk);
  {
    auto dev = r.img.to_device();
    auto v = Volume::open(*dev);
    ASSERT_TRUE(v);
    const auto& sb = (*v)->superblock();
    for (std::uint64_t b = sb.nat_blkaddr.get(); b < sb.nat_blkaddr.get() + 2; ++b) targets.push_back(b);
    targets.push_back(sb.ssa_blkaddr.get() + (*v)->segno_of(static_cast<block_t>(targets.front())));
  }
  std::uint64_t seed = 12345;
  auto rnd = [&](std::uint64_t n) {
    seed = seed * 6364136223846793005ull + 1442695040888963407ull;
    return (seed >> 33) % n;
  };
  int planned = 0, rebuilt = 0;
  for (int iter = 0; iter < 200; ++iter) {
    f2fstest::SparseImage img = r.img;
    const std::uint64_t blk = targets[rnd(targets.size())];
    std::uint8_t* p = img.at(blk);
    for (int k = 0; k < 1 + static_cast<int>(rnd(8)); ++k) {
      // Byte flips, or an aimed 32-bit value (an address, a nid, a flag).
      const std::size_t off = rnd(kBlockSize - 4);
      if (rnd(2)) p[off] = static_cast<std::uint8_t>(rnd(256));
      else store_le32(p, off & ~std::size_t{3}, static_cast<std::uint32_t>(rnd(1ull << 32)));
    }
    f2fstest::reseal_block(img, blk);
    if (!f2fstest::sampled(static_cast<std::uint64_t>(iter))) continue;  // (the damage drawn all the same)
    auto dev = img.to_device();
    auto v = Volume::open(*dev);
    if (!v) continue;
    auto plan = meta::plan_from_volume(**v);
    if (!plan) {
      EXPECT_FALSE(plan.error().message.empty());
      continue;
    }
    ++planned;
    auto st = meta::rebuild(*dev, **v, *plan);
    if (!st) continue;
    ++rebuilt;
    EXPECT_TRUE(Volume::open(*dev)) << "iteration " << iter;
  }
  EXPECT_GT(planned, 0);
  EXPECT_GT(rebuilt, 0);
}

TEST(MetaRebuild, NoSpaceWhenNoSegmentIsFree) {
  auto dev = our_mkfs(64ull << 20, 0);
  ASSERT_TRUE(dev);
  auto v = Volume::open(*dev);
  ASSERT_TRUE(v);
  const Checkpoint cp = (*v)->checkpoint();
  auto plan = meta::plan_from_volume(**v);
  ASSERT_TRUE(plan);
  // One data block owned by the root inode in every segment but the logs'
  // (a fake but well-formed plan), and the hot data log's next block.
  for (std::uint32_t s = 0; s < (*v)->main_segments(); ++s) {
    bool log = false;
    for (int i = 0; i < 3; ++i) log = log || cp.cur_data_segno[i].get() == s || cp.cur_node_segno[i].get() == s;
    if (!log) plan->blocks.push_back({static_cast<block_t>((*v)->segment_start(s)), kRootIno, 1, 0, false});
  }
  plan->blocks.push_back(
      {static_cast<block_t>((*v)->segment_start(cp.cur_data_segno[0].get()) + cp.cur_data_blkoff[0].get()), kRootIno, 2, 0, false});
  auto r = meta::rebuild(*dev, **v, *plan);
  ASSERT_FALSE(r);
  EXPECT_EQ(r.error().code, Errc::no_space);
}

TEST(MetaRebuild, DeviceErrorLeavesTheOldCheckpoint) {
  auto base = rich(kRichFeatures);
  ASSERT_TRUE(base);
  FaultPlan fp;
  fp.ops = io_op_bit(IoOp::write);
  fp.fail_request = 3;
  FaultDevice dev(clone(*base), fp);
  auto v = Volume::open(dev);
  ASSERT_TRUE(v);
  const auto tree = tree_digest(**v);
  const auto ver = (*v)->open_report().checkpoint_ver;
  auto plan = meta::plan_from_volume(**v);
  ASSERT_TRUE(plan);
  auto r = meta::rebuild(dev, **v, *plan);
  ASSERT_FALSE(r);
  EXPECT_EQ(r.error().code, Errc::io);
  dev.set_plan({});
  auto v2 = Volume::open(dev);
  ASSERT_TRUE(v2);
  EXPECT_EQ((*v2)->open_report().checkpoint_ver, ver);
  EXPECT_EQ(tree_digest(**v2), tree);
}

// Power cut at every write and flush of a rebuild: what was not flushed is
// lost; the volume opens (old or new checkpoint) and reads the same tree.
void crash_at_every_write(BlockDevice& base) {
  const auto image = f2fstest::SparseImage::capture(base);
  std::map<std::string, std::string> tree;
  std::uint64_t ver = 0;
  meta::RebuildPlan plan;
  std::uint64_t total = 0;
  {
    FaultPlan fp;
    fp.ops = io_op_bit(IoOp::write) | io_op_bit(IoOp::flush);
    fp.drop_unflushed = true;
    FaultDevice dev(image.to_device(), fp);
    auto v = Volume::open(dev);
    ASSERT_TRUE(v);
    tree = tree_digest(**v);
    ver = (*v)->open_report().checkpoint_ver;
    auto p = meta::plan_from_volume(**v);
    ASSERT_TRUE(p);
    plan = *p;
    ASSERT_TRUE(meta::rebuild(dev, **v, plan));
    total = dev.counted();
  }
  ASSERT_GT(total, 5u);
  int saw_old = 0, saw_new = 0;
  for (std::uint64_t n = 0; n <= total; ++n) {
    SCOPED_TRACE("cut at request " + std::to_string(n) + " of " + std::to_string(total));
    FaultPlan fp;
    fp.ops = io_op_bit(IoOp::write) | io_op_bit(IoOp::flush);
    fp.drop_unflushed = true;
    fp.fail_after = n;
    FaultDevice dev(image.to_device(), fp);
    {
      auto v = Volume::open(dev);
      ASSERT_TRUE(v);
      auto r = meta::rebuild(dev, **v, plan);
      EXPECT_EQ(static_cast<bool>(r), n >= total);
    }
    dev.power_cut();
    dev.set_plan({});
    auto v = Volume::open(dev);
    ASSERT_OK(v);
    const auto got = (*v)->open_report().checkpoint_ver;
    EXPECT_TRUE(got == ver || got == ver + 1) << got;
    (got == ver ? saw_old : saw_new)++;
    EXPECT_EQ(tree_digest(**v), tree);
  }
  EXPECT_GT(saw_old, 0);
  EXPECT_GT(saw_new, 0);
}

TEST(MetaRebuild, PowerCutAtEveryWriteRich) {
  auto dev = rich(kRichFeatures);
  ASSERT_TRUE(dev);
  crash_at_every_write(*dev);
}

TEST(MetaRebuild, PowerCutAtEveryWriteLinux) {
  auto dev = fixture("linux61-compress.img.zst");
  if (!dev) GTEST_SKIP() << "zstd is not available to unpack the fixture";
  crash_at_every_write(*dev);
}

// More data log entries than 2 compact blocks hold: 3 normal summary blocks
// (f2fs_npages_for_summary_flush()), and back to compact when they fit.
TEST(MetaRebuild, TwoCompactSummaryBlocks) {
  auto dev = long_data_logs(500);
  ASSERT_TRUE(dev);
  ASSERT_NO_FATAL_FAILURE(rebuild_and_check(*dev));
  auto v = Volume::open(*dev);
  ASSERT_TRUE(v);
  const Checkpoint& cp = (*v)->checkpoint();
  EXPECT_TRUE(cp.ckpt_flags.get() & cp_flag::compact_sum);
  // header, 2 compact data summaries, 3 node summaries (CP_UMOUNT), closing block
  EXPECT_EQ(cp.cp_pack_total_block_count.get(), 7u);
  auto sum = (*v)->summary(cp.cur_data_segno[0].get());
  ASSERT_TRUE(sum);
  EXPECT_EQ(sum->entries[0].nid.get(), kRootIno);
}

TEST(MetaRebuild, NormalSummariesWhenCompactDoesNotFit) {
  auto dev = long_data_logs(511);
  ASSERT_TRUE(dev);
  {
    auto v = Volume::open(*dev);
    ASSERT_TRUE(v);
    EXPECT_TRUE((*v)->checkpoint().ckpt_flags.get() & cp_flag::compact_sum);  // as mkfs wrote it
  }
  ASSERT_NO_FATAL_FAILURE(rebuild_and_check(*dev));
  auto v = Volume::open(*dev);
  ASSERT_TRUE(v);
  const Checkpoint& cp = (*v)->checkpoint();
  EXPECT_FALSE(cp.ckpt_flags.get() & cp_flag::compact_sum);
  EXPECT_EQ(cp.cur_data_blkoff[1].get(), 511u);
  // header, 3 data summaries, 3 node summaries (CP_UMOUNT), closing block
  EXPECT_EQ(cp.cp_pack_total_block_count.get(), 8u);
  auto sum = (*v)->summary(cp.cur_data_segno[0].get());
  ASSERT_TRUE(sum);
  EXPECT_EQ(sum->footer.entry_type, kSumTypeData);
  EXPECT_EQ(sum->entries[0].nid.get(), kRootIno);  // the root dentry block
  // Again: the reader read the normal summaries back and the rebuild is stable.
  auto plan = meta::plan_from_volume(**v);
  ASSERT_TRUE(plan);
  auto again = meta::rebuild(*dev, **v, *plan);
  ASSERT_TRUE(again);
  EXPECT_EQ(again->sit_blocks_written + again->nat_blocks_written + again->ssa_blocks_written, 0u);
}

TEST(MetaRebuild, PlanFromVolumeCountsMkfs) {
  // Hand-counted for our mkfs (= mkfs.f2fs 1.15) with quota and lost+found:
  // root, 2 quota inodes, lost+found (4 nodes); root dentry, 2x2 quota data
  // blocks, lost+found dentry (6 data blocks).
  auto dev = our_mkfs(64ull << 20, feature::extra_attr | feature::quota_ino | feature::lost_found);
  ASSERT_TRUE(dev);
  auto v = Volume::open(*dev);
  ASSERT_TRUE(v);
  auto plan = meta::plan_from_volume(**v);
  ASSERT_TRUE(plan);
  std::uint32_t nodes = 0;
  for (const auto& b : plan->blocks) nodes += b.node;
  EXPECT_EQ(nodes, 4u);
  EXPECT_EQ(plan->blocks.size(), 10u);
  EXPECT_EQ(plan->valid_inode_count, 4u);
  EXPECT_TRUE(plan->orphans.empty());
  std::set<nid_t> nids;
  for (const auto& n : plan->nat) nids.insert(n.nid);
  EXPECT_EQ(nids, (std::set<nid_t>{1, 2, 3, 4, 5, 6}));
}

// A pack whose NAT journal claims 200 entries (capacity 38) and whose
// next_free_nid is past the NAT, opened leniently (as the checker does):
// the rebuild reads the journal as trimmed and writes a pack every strict
// reader accepts, with next_free_nid the lowest free nid above the root.
// Hand-counted: root 3, quota inodes 4 and 5, lost+found 6, so 7 (what
// mkfs.f2fs 1.15 writes for this layout too).
TEST(MetaRebuild, LenientVolumeJournalCountAndNextFreeNid) {
  auto dev = our_mkfs(64ull << 20, feature::extra_attr | feature::quota_ino | feature::lost_found);
  ASSERT_TRUE(dev);
  std::uint64_t head = 0, closing = 0, sum = 0;
  {
    auto v = Volume::open(*dev);
    ASSERT_TRUE(v);
    EXPECT_EQ((*v)->checkpoint().next_free_nid.get(), 7u);
    ASSERT_TRUE((*v)->checkpoint().ckpt_flags.get() & cp_flag::compact_sum);
    head = (*v)->superblock().cp_blkaddr.get() +
           static_cast<std::uint64_t>((*v)->open_report().checkpoint_pack) * kDefaultBlocksPerSeg;
    closing = head + (*v)->checkpoint().cp_pack_total_block_count.get() - 1;
    sum = head + (*v)->checkpoint().cp_pack_start_sum.get();
  }
  std::vector<std::uint8_t> b(kBlockSize);
  ASSERT_TRUE(read_at(*dev, sum * kBlockSize, b));
  b[0] = 200;  // n_nats
  b[1] = 0;
  ASSERT_TRUE(write_at(*dev, sum * kBlockSize, b));
  ASSERT_TRUE(read_at(*dev, head * kBlockSize, b));
  store_le32(b.data(), offsetof(Checkpoint, next_free_nid), 0xfffffff0u);
  seal_checkpoint(b.data());
  ASSERT_TRUE(write_at(*dev, head * kBlockSize, b));
  ASSERT_TRUE(write_at(*dev, closing * kBlockSize, b));
  ASSERT_FALSE(Volume::open(*dev));
  {
    VolumeOpenOptions o;
    o.lenient_checkpoint = true;
    auto v = Volume::open(*dev, o);
    ASSERT_OK(v);
    auto plan = meta::plan_from_volume(**v);
    ASSERT_OK(plan);
    auto r = meta::rebuild(*dev, **v, *plan);
    ASSERT_OK(r);
  }
  auto v = Volume::open(*dev);
  ASSERT_OK(v);
  EXPECT_EQ((*v)->checkpoint().next_free_nid.get(), 7u);
  EXPECT_TRUE((*v)->open_report().warnings.empty());
  for (nid_t n : {3u, 4u, 5u, 6u}) EXPECT_TRUE((*v)->read_inode(n)) << "ino " << n;
}

}  // namespace
