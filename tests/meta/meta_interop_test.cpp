// Metadata rebuild against fsck.f2fs (interop tier): after a rebuild from
// plan_from_volume, `fsck.f2fs -f` on a copy is clean (../shared/NOTES.md)
// and our reader sees the same tree; images from our mkfs, mkfs.f2fs, rich
// images and Linux-written fixtures; then damaged metadata repaired.
// Skips without fsck.f2fs unless F2FSCORE_REQUIRE_FSCK=1.
//
// META_REBUILT_IMAGE=PATH: MetaOracle.DISABLED_WriteRepairedImage (run by name) writes a repaired
// image there for the Linux oracle test (meta_linux.sh).
#include <algorithm>
#include <cstdlib>
#include <cstring>

#include "meta/meta_test_util.hpp"

namespace {

using namespace metatest;
using f2fstest::SparseImage;

bool have_fsck() { return !f2fstest::reference_tool("fsck.f2fs").empty(); }

#define REQUIRE_FSCK()                                                                    \
  do {                                                                                    \
    if (!have_fsck()) {                                                                   \
      if (f2fstest::required("FSCK")) FAIL() << "fsck.f2fs is missing and F2FSCORE_REQUIRE_FSCK=1"; \
      GTEST_SKIP() << "fsck.f2fs is not installed";                                       \
    }                                                                                     \
  } while (0)

std::vector<std::string> problems_of(BlockDevice& dev, std::string* log = nullptr) {
  f2fstest::TempDir tmp;
  const auto path = tmp / "img";
  if (!save(dev, path)) return {"cannot save the image"};
  return f2fstest::fsck_problems(path, log);
}

std::string join(const std::vector<std::string>& v) {
  std::string s;
  for (const auto& l : v) s += l + "\n";
  return s;
}

void expect_clean(BlockDevice& dev) {
  std::string log;
  const auto p = problems_of(dev, &log);
  EXPECT_TRUE(p.empty()) << join(p) << "\n--- fsck.f2fs log ---\n" << log.substr(0, 6000);
}

// fsck.f2fs finds nothing new after a rebuild: clean images stay clean,
// and an image with findings fsck.f2fs 1.15 makes on its own (it hashes some
// casefolded names unlike Linux 6.1) keeps exactly those.
void identity_clean(BlockDevice& dev) {
  const auto before = problems_of(dev);
  ASSERT_NO_FATAL_FAILURE(rebuild_and_check(dev));
  if (before.empty()) {
    expect_clean(dev);
  } else {
    const auto after = problems_of(dev);
    EXPECT_EQ(after, before);
    for (const auto& l : before) EXPECT_NE(l.find("hash_code"), std::string::npos) << "unexpected finding before: " << l;
  }
}

// ---- Identity: clean before, clean after ------------------------------------

TEST(MetaInterop, IdentityOurMkfs) {
  REQUIRE_FSCK();
  struct Case {
    const char* name;
    std::uint64_t bytes;
    std::uint32_t features, segs_per_sec;
    bool large_nat;
  } cases[] = {
      {"default (nat_bits, compact summaries)", 64ull << 20, 0, 1, false},
      {"all features", 256ull << 20,
       kRichFeatures | feature::quota_ino | feature::project_quota | feature::compression, 1, false},
      {"large NAT bitmap", 128ull << 20, feature::extra_attr, 1, true},
      {"-s 2", 256ull << 20, 0, 2, false},
      {"casefold", 128ull << 20, feature::casefold, 1, false},
      {"16 GiB (cp_payload)", 16ull << 30, feature::extra_attr | feature::inode_checksum, 1, false},
  };
  for (const auto& c : cases) {
    SCOPED_TRACE(c.name);
    auto dev = our_mkfs(c.bytes, c.features, c.segs_per_sec, c.large_nat);
    ASSERT_TRUE(dev);
    identity_clean(*dev);
  }
}

TEST(MetaInterop, IdentityMkfsF2fs) {
  REQUIRE_FSCK();
  const std::string mkfs = f2fstest::reference_tool("mkfs.f2fs");
  if (mkfs.empty()) {
    if (f2fstest::required("FSCK")) FAIL() << "mkfs.f2fs is missing";
    GTEST_SKIP() << "mkfs.f2fs is not installed";
  }
  struct Case {
    const char* opts;
    std::uint64_t bytes;
  } cases[] = {
      {"", 64ull << 20},
      {"-O extra_attr,inode_checksum,flexible_inline_xattr,inode_crtime,sb_checksum,lost_found,quota,compression",
       128ull << 20},
      {"-s 2", 128ull << 20},
      {"-i -O extra_attr", 256ull << 20},
  };
  for (const auto& c : cases) {
    SCOPED_TRACE(c.opts);
    f2fstest::TempDir tmp;
    const auto img = tmp / "m.img";
    f2fstest::make_sparse_file(img, c.bytes);
    auto r = f2fstest::run(mkfs + " -q -f " + c.opts + " " + f2fstest::shell_quote(img.string()));
    ASSERT_EQ(r.exit_code, 0) << r.output;
    auto dev = f2fstest::load_image(img);
    identity_clean(*dev);
  }
}

TEST(MetaInterop, IdentityLinuxFixtures) {
  REQUIRE_FSCK();
  int done = 0;
  for (const char* name : {"linux61-compress.img.zst", "linux61-casefold.img.zst", "mkfs115-64M-allfeat.img.zst"}) {
    SCOPED_TRACE(name);
    auto dev = fixture(name);
    if (!dev) continue;
    identity_clean(*dev);
    ++done;
  }
  if (done == 0) GTEST_SKIP() << "zstd is not available to unpack the fixtures";
}

TEST(MetaInterop, CompactAndNormalSummaries) {
  REQUIRE_FSCK();
  for (std::uint16_t blkoff : {500, 511}) {
    SCOPED_TRACE(blkoff);
    auto dev = long_data_logs(blkoff);
    ASSERT_TRUE(dev);
    identity_clean(*dev);
    auto v = Volume::open(*dev);
    ASSERT_TRUE(v);
    EXPECT_EQ(static_cast<bool>((*v)->checkpoint().ckpt_flags.get() & cp_flag::compact_sum), blkoff == 500);
  }
}

bool metadata_finding(const std::string& l);

// An SSR data log: its summary carries a whole segment of entries in the
// compact form (write_compacted_summaries()), 2 + 512 entries = 2 blocks.
TEST(MetaInterop, SsrDataLog) {
  REQUIRE_FSCK();
  auto base = our_mkfs(64ull << 20, feature::extra_attr);
  ASSERT_TRUE(base);
  auto img = SparseImage::capture(*base);
  patch_current_cp(img, [](Checkpoint& cp) { cp.alloc_type[1] = 1; });
  auto dev = img.to_device();
  identity_clean(*dev);
  auto v = Volume::open(*dev);
  ASSERT_TRUE(v);
  EXPECT_EQ((*v)->checkpoint().alloc_type[1], 1u);
  EXPECT_EQ((*v)->checkpoint().cp_pack_total_block_count.get(), 7u);
}

// A checkpoint taken without CP_UMOUNT_FLAG keeps the node logs' summaries
// in the SSA area, not in the pack: the rebuild writes them there.
TEST(MetaInterop, CheckpointWithoutUmount) {
  REQUIRE_FSCK();
  auto base = rich(kRichFeatures);
  ASSERT_TRUE(base);
  ASSERT_NO_FATAL_FAILURE(rebuild_and_check(*base));  // the rich image's metadata made right first
  auto img = SparseImage::capture(*base);
  patch_current_cp(img, [](Checkpoint& cp) { cp.ckpt_flags.set(cp.ckpt_flags.get() & ~cp_flag::umount); });
  auto dev = img.to_device();
  IdentityResult r;
  ASSERT_NO_FATAL_FAILURE(rebuild_and_check(*dev, &r));
  auto v = Volume::open(*dev);
  ASSERT_TRUE(v);
  const Checkpoint& cp = (*v)->checkpoint();
  EXPECT_FALSE(cp.ckpt_flags.get() & cp_flag::umount);
  EXPECT_EQ(cp.cp_pack_total_block_count.get(), 3u);  // header, 1 compact summary, closing block
  // The hot node log's summary, read from the SSA area, names its nodes.
  auto sum = (*v)->summary(cp.cur_node_segno[0].get());
  ASSERT_TRUE(sum);
  EXPECT_EQ(sum->footer.entry_type, kSumTypeNode);
  EXPECT_EQ(sum->entries[0].nid.get(), kRootIno);
  const auto after = problems_of(*dev);
  for (const auto& l : after) EXPECT_FALSE(metadata_finding(l)) << l;
}

// Findings about the metadata a rebuild writes (SIT, SSA, NAT, checkpoint
// counts, active logs), as opposed to the tree (links, dentries, inodes).
bool metadata_finding(const std::string& l) {
  for (const char* k : {"summary", "SIT", "sit", "segment", "nat", "NAT", "valid_block_count", "valid_node_count",
                        "valid_inode_count", "curseg", "Next block", "free seg", "bitmap", "Summary"})
    if (l.find(k) != std::string::npos) return true;
  return false;
}

// Rich images are written straight into an image: the data segment's
// summary names only the nodes and the checkpoint counts are mkfs's, so
// fsck.f2fs has metadata findings before; after the rebuild only the rich
// image's own tree findings remain (fsck.f2fs 1.15 asks for more i_links on
// its hard link and inline dots on its inline directory).
TEST(MetaInterop, RichImagesMetadataBecomesClean) {
  REQUIRE_FSCK();
  for (std::uint32_t f : {0u, kRichFeatures, kRichFeatures | feature::compression}) {
    SCOPED_TRACE(f);
    auto dev = rich(f);
    ASSERT_TRUE(dev);
    const auto before = problems_of(*dev);
    EXPECT_TRUE(std::any_of(before.begin(), before.end(), metadata_finding)) << "expected metadata findings before:\n"
                                                                            << join(before);
    ASSERT_NO_FATAL_FAILURE(rebuild_and_check(*dev));
    const auto after = problems_of(*dev);
    const std::set<std::string> old(before.begin(), before.end());
    for (const auto& l : after) {
      EXPECT_TRUE(old.count(l)) << "new finding: " << l;
      EXPECT_FALSE(metadata_finding(l)) << "metadata finding left: " << l;
    }
  }
}

// ---- Repairs ----------------------------------------------------------------

// Where the current checkpoint keeps things (the journals are empty after a
// rebuild, so patching the current NAT/SIT blocks changes what is read).
struct Where {
  std::uint64_t cp_head = 0, cp_tail = 0;
  std::uint64_t sit_addr(Volume& v, std::uint32_t seg) const {
    const auto& sb = v.superblock();
    const auto& cp = v.checkpoint();
    const std::uint8_t* b = v.checkpoint_blocks().data();
    const std::uint8_t* map = (cp.ckpt_flags.get() & cp_flag::large_nat_bitmap) ? b + kCpBitmapOffset + 4 + cp.nat_ver_bitmap_bytesize.get()
                              : sb.cp_payload.get() ? b + kBlockSize
                                                    : b + kCpBitmapOffset;
    const std::uint32_t blk = seg / kSitEntryPerBlock;
    return sb.sit_blkaddr.get() + blk + (test_bit_msb(map, blk) ? sb.segment_count_sit.get() / 2 * kDefaultBlocksPerSeg : 0);
  }
  std::uint64_t nat_addr(Volume& v, nid_t nid) const {
    const auto& sb = v.superblock();
    const auto& cp = v.checkpoint();
    const std::uint8_t* b = v.checkpoint_blocks().data();
    const std::uint8_t* map = (cp.ckpt_flags.get() & cp_flag::large_nat_bitmap) ? b + kCpBitmapOffset + 4
                              : sb.cp_payload.get() ? b + kCpBitmapOffset
                                                    : b + kCpBitmapOffset + cp.sit_ver_bitmap_bytesize.get();
    const std::uint32_t off = nid / kNatEntryPerBlock;
    return sb.nat_blkaddr.get() + (static_cast<std::uint64_t>(off >> kLogBlocksPerSeg) << (kLogBlocksPerSeg + 1)) +
           (off & (kDefaultBlocksPerSeg - 1)) + (test_bit_msb(map, off) ? kDefaultBlocksPerSeg : 0);
  }
};

struct Base {
  SparseImage img;
  std::map<std::string, std::string> tree;
  meta::RebuildPlan plan;
  Checkpoint cp{};
  std::uint64_t cp_head = 0, cp_tail = 0;
  /// A data and a node segment with valid blocks, full (no active log)
  /// when the image has one.
  std::uint32_t full_data_seg = ~0u, full_node_seg = ~0u;
  bool data_full = false, node_full = false;
  std::uint64_t sit_data = 0, sit_node = 0;
  std::vector<std::string> findings;  ///< fsck.f2fs on the base (empty: clean)
};

// A clean base: the image rebuilt once (journals flushed), and where a
// full data segment and a full node segment are.
Base make_base(BlockDevice& dev) {
  Base b;
  rebuild_and_check(dev);
  auto v = Volume::open(dev);
  EXPECT_TRUE(v);
  if (!v) return b;
  b.tree = tree_digest(**v);
  auto p = meta::plan_from_volume(**v);
  EXPECT_TRUE(p);
  if (p) b.plan = *p;
  b.cp = (*v)->checkpoint();
  b.cp_head = (*v)->superblock().cp_blkaddr.get() + static_cast<std::uint64_t>((*v)->open_report().checkpoint_pack) * kDefaultBlocksPerSeg;
  b.cp_tail = b.cp_head + b.cp.cp_pack_total_block_count.get() - 1;
  for (std::uint32_t s = 0; s < (*v)->main_segments(); ++s) {
    bool log = false;
    for (int i = 0; i < 3; ++i) log = log || b.cp.cur_data_segno[i].get() == s || b.cp.cur_node_segno[i].get() == s;
    auto e = (*v)->segment(s);
    if (!e || e->valid_blocks == 0) continue;
    if (e->type >= 3 && (b.full_node_seg == ~0u || (!b.node_full && !log))) {
      b.full_node_seg = s;
      b.node_full = !log;
    }
    if (e->type < 3 && (b.full_data_seg == ~0u || (!b.data_full && !log))) {
      b.full_data_seg = s;
      b.data_full = !log;
    }
  }
  Where w;
  if (b.full_data_seg != ~0u) b.sit_data = w.sit_addr(**v, b.full_data_seg);
  if (b.full_node_seg != ~0u) b.sit_node = w.sit_addr(**v, b.full_node_seg);
  b.img = SparseImage::capture(dev);
  b.findings = problems_of(dev);
  EXPECT_FALSE(std::any_of(b.findings.begin(), b.findings.end(), metadata_finding)) << join(b.findings);
  return b;
}

void patch_cp(SparseImage& img, const Base& b, const std::function<void(Checkpoint&)>& f) {
  for (std::uint64_t blk : {b.cp_head, b.cp_tail}) {
    auto* cp = img.view<Checkpoint>(blk);
    f(*cp);
    seal_checkpoint(img.at(blk));
  }
}

void repair_case(const Base& b, const char* name, const std::function<void(SparseImage&, Volume&)>& damage,
                 bool restore_sb = false, bool fsck_sees_it = true) {
  SCOPED_TRACE(name);
  SparseImage img = b.img;
  {
    auto d0 = img.to_device();
    auto v0 = Volume::open(*d0);
    ASSERT_TRUE(v0);
    damage(img, **v0);
  }
  auto dev = img.to_device();
  const auto before = problems_of(*dev);
  if (fsck_sees_it) EXPECT_NE(before, b.findings) << "the damage did not show under fsck.f2fs";
  ASSERT_NO_FATAL_FAILURE(rebuild_and_check(*dev, nullptr, &b.tree, [&](meta::RebuildPlan& p) {
    p.restore_superblocks = restore_sb;
  }));
  if (b.findings.empty()) expect_clean(*dev);
  else EXPECT_EQ(problems_of(*dev), b.findings);
  if (restore_sb) {
    auto img2 = SparseImage::capture(*dev);
    EXPECT_EQ(std::memcmp(img2.at(0) + kSuperOffset, img2.at(1) + kSuperOffset, sizeof(SuperBlock)), 0);
  }
}

void repairs(BlockDevice& dev) {
  Base b = make_base(dev);
  ASSERT_NE(b.full_data_seg, ~0u);
  ASSERT_NE(b.full_node_seg, ~0u);
  auto sit_entry = [&](SparseImage& img, std::uint64_t addr, std::uint32_t seg) -> SitEntry& {
    return img.view<SitBlock>(addr)->entries[seg % kSitEntryPerBlock];
  };
  repair_case(b, "SIT valid bits", [&](SparseImage& img, Volume&) {
    SitEntry& e = sit_entry(img, b.sit_data, b.full_data_seg);
    for (std::uint32_t i = 0; i < 512; ++i)
      if (test_bit_msb(e.valid_map, i)) {
        clear_bit_msb(e.valid_map, i);
        break;
      }
    for (std::uint32_t i = 511; i > 0; --i)
      if (!test_bit_msb(e.valid_map, i)) {
        set_bit_msb(e.valid_map, i);
        break;
      }
  });
  repair_case(b, "SIT vblocks", [&](SparseImage& img, Volume&) {
    SitEntry& e = sit_entry(img, b.sit_node, b.full_node_seg);
    e.vblocks.set(static_cast<std::uint16_t>(e.vblocks.get() + 3));
  });
  repair_case(b, "SIT type", [&](SparseImage& img, Volume&) {
    SitEntry& e = sit_entry(img, b.sit_node, b.full_node_seg);
    e.vblocks.set(make_sit_vblocks(1, sit_vblocks(e)));
  });
  if (b.data_full && b.node_full)  // summaries of active logs live in the pack
    repair_case(b, "SSA entries", [&](SparseImage& img, Volume& v) {
      auto* s = img.view<SummaryBlock>(v.superblock().ssa_blkaddr.get() + b.full_data_seg);
      for (auto& e : s->entries) {
        e.nid.set(e.nid.get() + 1);
        e.ofs_in_node.set(static_cast<std::uint16_t>(e.ofs_in_node.get() + 1));
      }
      auto* n = img.view<SummaryBlock>(v.superblock().ssa_blkaddr.get() + b.full_node_seg);
      n->footer.entry_type = kSumTypeData;
    });
  repair_case(b, "checkpoint counts", [&](SparseImage& img, Volume&) {
    patch_cp(img, b, [](Checkpoint& cp) {
      cp.valid_block_count.set(cp.valid_block_count.get() + 5);
      cp.valid_node_count.set(cp.valid_node_count.get() - 1);
      cp.valid_inode_count.set(cp.valid_inode_count.get() + 1);
      cp.free_segment_count.set(cp.free_segment_count.get() + 2);
      cp.ckpt_flags.set(cp.ckpt_flags.get() | cp_flag::fsck);
    });
  });
  repair_case(b, "NAT entries of unused nids", [&](SparseImage& img, Volume& v) {
    Where w;
    std::set<nid_t> used;
    for (const auto& n : b.plan.nat) used.insert(n.nid);
    int done = 0;
    for (nid_t nid = 700; done < 3; ++nid) {
      if (used.count(nid)) continue;
      NatEntry& e = img.view<NatBlock>(w.nat_addr(v, nid))->entries[nid % kNatEntryPerBlock];
      e.ino.set(nid);
      e.block_addr.set(b.plan.blocks[static_cast<std::size_t>(done) * 3 % b.plan.blocks.size()].blkaddr);  // someone else's block
      ++done;
    }
  });
  repair_case(b, "NAT entries of node_ino and meta_ino", [&](SparseImage& img, Volume& v) {
    Where w;
    for (nid_t nid : {v.superblock().node_ino.get(), v.superblock().meta_ino.get()}) {
      NatEntry& e = img.view<NatBlock>(w.nat_addr(v, nid))->entries[nid % kNatEntryPerBlock];
      e.block_addr.set(0);
      e.ino.set(0);
    }
  });
  repair_case(b, "SIT copy selection", [&](SparseImage& img, Volume& v) {
    // Point the checkpoint at the other SIT copy of the block holding the
    // full data segment (the stale or empty one).
    const std::uint32_t blk = b.full_data_seg / kSitEntryPerBlock;
    patch_cp(img, b, [&](Checkpoint& cp) {
      auto* raw = reinterpret_cast<std::uint8_t*>(&cp);
      const auto& sb = v.superblock();
      if (cp.ckpt_flags.get() & cp_flag::large_nat_bitmap) {
        auto* map = raw + kCpBitmapOffset + 4 + cp.nat_ver_bitmap_bytesize.get();
        test_bit_msb(map, blk) ? clear_bit_msb(map, blk) : set_bit_msb(map, blk);
      } else if (sb.cp_payload.get() == 0) {
        auto* map = raw + kCpBitmapOffset;
        test_bit_msb(map, blk) ? clear_bit_msb(map, blk) : set_bit_msb(map, blk);
      }
    });
    if (v.superblock().cp_payload.get() != 0) {  // the SIT bitmap is in the payload block
      std::uint8_t* map = img.at(b.cp_head + 1);
      test_bit_msb(map, blk) ? clear_bit_msb(map, blk) : set_bit_msb(map, blk);
    }
  });
  repair_case(b, "NAT copy selection", [&](SparseImage& img, Volume& v) {
    // NAT block 1 (nids 455..909, unused here): its other copy holds stale
    // entries naming blocks that are not their nodes, and the checkpoint
    // selects that copy.
    std::set<nid_t> used;
    for (const auto& n : b.plan.nat) used.insert(n.nid);
    const std::uint32_t blk = 1;
    for (nid_t nid = blk * kNatEntryPerBlock; nid < (blk + 1) * kNatEntryPerBlock; ++nid) ASSERT_FALSE(used.count(nid));
    Where w;
    const std::uint64_t cur = w.nat_addr(v, blk * kNatEntryPerBlock);
    const std::uint64_t nat0 = v.superblock().nat_blkaddr.get();
    const std::uint64_t other = ((cur - nat0) / kDefaultBlocksPerSeg) % 2 ? cur - kDefaultBlocksPerSeg : cur + kDefaultBlocksPerSeg;
    auto* nb = img.view<NatBlock>(other);
    for (std::uint32_t i = 0; i < 4; ++i) {
      nb->entries[i * 7].ino.set(blk * kNatEntryPerBlock + i * 7);
      nb->entries[i * 7].block_addr.set(b.plan.blocks[i % b.plan.blocks.size()].blkaddr);
    }
    patch_cp(img, b, [&](Checkpoint& cp) {
      auto* raw = reinterpret_cast<std::uint8_t*>(&cp);
      std::uint8_t* map = (cp.ckpt_flags.get() & cp_flag::large_nat_bitmap) ? raw + kCpBitmapOffset + 4
                          : v.superblock().cp_payload.get()                  ? raw + kCpBitmapOffset
                                                                             : raw + kCpBitmapOffset + cp.sit_ver_bitmap_bytesize.get();
      test_bit_msb(map, blk) ? clear_bit_msb(map, blk) : set_bit_msb(map, blk);
    });
  });
  repair_case(b, "active log's next block in use", [&](SparseImage& img, Volume&) {
    // The hot node log claims one block fewer than it wrote: its next
    // block is a valid node.
    patch_cp(img, b, [](Checkpoint& cp) { cp.cur_node_blkoff[0].set(static_cast<std::uint16_t>(cp.cur_node_blkoff[0].get() - 1)); });
  });
  // fsck.f2fs falls back to superblock #1 without a finding; the rebuild
  // must still write #0 back (checked in repair_case).
  repair_case(
      b, "superblock #0", [&](SparseImage& img, Volume&) { store_le32(img.at(0), kSuperOffset, 0x12345678); }, true, false);
}

TEST(MetaInterop, RepairsLinuxImage) {
  REQUIRE_FSCK();
  auto dev = fixture("linux61-compress.img.zst");
  if (!dev) GTEST_SKIP() << "zstd is not available to unpack the fixture";
  repairs(*dev);
}

TEST(MetaInterop, RepairsRichImage) {
  REQUIRE_FSCK();
  auto dev = rich(kRichFeatures);
  ASSERT_TRUE(dev);
  repairs(*dev);
}

// Sections of two segments: a moved log takes a wholly free section.
TEST(MetaInterop, RepairsOurMkfsTwoSegmentSections) {
  REQUIRE_FSCK();
  auto dev = our_mkfs(256ull << 20, feature::extra_attr | feature::inode_checksum | feature::lost_found, 2);
  ASSERT_TRUE(dev);
  repairs(*dev);
}

TEST(MetaInterop, RepairsMkfsF2fs) {
  REQUIRE_FSCK();
  const std::string mkfs = f2fstest::reference_tool("mkfs.f2fs");
  if (mkfs.empty()) GTEST_SKIP() << "mkfs.f2fs is not installed";
  f2fstest::TempDir tmp;
  const auto img = tmp / "m.img";
  f2fstest::make_sparse_file(img, 128ull << 20);
  auto r = f2fstest::run(mkfs + " -q -f -O extra_attr,inode_checksum,sb_checksum,lost_found " +
                         f2fstest::shell_quote(img.string()));
  ASSERT_EQ(r.exit_code, 0) << r.output;
  auto dev = f2fstest::load_image(img);
  repairs(*dev);
}

// For the Linux oracle (meta_linux.sh): the Linux-written fixture with its
// SIT, checkpoint counts and an active log damaged, repaired by a rebuild,
// written to $META_REBUILT_IMAGE.
TEST(MetaOracle, DISABLED_WriteRepairedImage) {
  const char* out = std::getenv("META_REBUILT_IMAGE");
  if (out == nullptr) GTEST_SKIP() << "META_REBUILT_IMAGE is not set";
  auto dev = fixture("linux61-compress.img.zst");
  ASSERT_TRUE(dev) << "zstd is needed to unpack the fixture";
  Base b = make_base(*dev);
  SparseImage img = b.img;
  img.view<SitBlock>(b.sit_data)->entries[b.full_data_seg % kSitEntryPerBlock].vblocks.set(7);
  patch_cp(img, b, [](Checkpoint& cp) {
    cp.valid_block_count.set(cp.valid_block_count.get() + 9);
    cp.free_segment_count.set(cp.free_segment_count.get() + 1);
    cp.cur_node_blkoff[0].set(static_cast<std::uint16_t>(cp.cur_node_blkoff[0].get() - 1));
  });
  auto d = img.to_device();
  IdentityResult r;
  ASSERT_NO_FATAL_FAILURE(rebuild_and_check(*d, &r, &b.tree));
  EXPECT_EQ(r.stats.cursegs_moved, 1u);
  EXPECT_GE(r.stats.sit_blocks_written, 1u);
  ASSERT_TRUE(save(*d, out));

  // Second image ($META_REBUILT_IMAGE.s2): our mkfs with sections of two
  // segments and a rich set of features; the hot data log made busy, so it
  // moves to a free section.
  auto s2 = our_mkfs(256ull << 20, kRichFeatures, 2);
  ASSERT_TRUE(s2);
  Base b2 = make_base(*s2);
  SparseImage img2 = b2.img;
  patch_cp(img2, b2, [](Checkpoint& cp) {
    cp.cur_data_blkoff[0].set(static_cast<std::uint16_t>(cp.cur_data_blkoff[0].get() - 1));
  });
  auto d2 = img2.to_device();
  IdentityResult r2;
  ASSERT_NO_FATAL_FAILURE(rebuild_and_check(*d2, &r2, &b2.tree));
  EXPECT_EQ(r2.stats.cursegs_moved, 1u);
  {
    auto v = Volume::open(*d2);
    ASSERT_TRUE(v);
    EXPECT_EQ((*v)->checkpoint().cur_data_segno[0].get() % 2, 0u);  // the first segment of its section
  }
  ASSERT_TRUE(save(*d2, std::string(out) + ".s2"));
}

}  // namespace
