// The IPU policy (writer/ipu.cpp, docs/ipu.md): every ipu_policy bit and
// outer rule, first as the pure decision (the kernel's order of
// f2fs_should_update_outplace(), f2fs_should_update_inplace() and
// check_inplace_update_policy() in fs/f2fs/data.c, Linux 6.1), then as
// scripted scenarios through the Writer: a block's device address before and
// after a rewrite (bmap(), FIBMAP) and the counters by reason. Expected
// values come from those rules, not from the code under test. Every image
// left is clean under our checker (and fsck.f2fs -f in the interop build).
#include <gtest/gtest.h>

#include <cstdlib>
#include <cstring>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include "f2fscore/fsck.hpp"
#include "f2fscore/writer.hpp"
#include "meta/meta_test_util.hpp"
#include "writer/writer_test_util.hpp"

namespace {

using namespace metatest;
using f2fscore::IpuReason;
namespace ipu_bit = f2fscore::ipu_bit;

// ---- The decision, rule by rule -------------------------------------------

IpuOptions opts(std::uint32_t policy) {
  IpuOptions o;
  o.ipu_policy = policy;
  o.min_ssr_sections = 0;
  return o;
}

// The inputs of one write, flattened (IpuWrite, need_SSR(), utilization()).
struct Inputs {
  bool old_valid = false, direct = false, pinned = false, dir = false, quota = false, opu_write = false, gc = false,
       cold = false, sync = false, fsync = false, fdatasync = false;
  std::uint64_t dirty_pages = 0;
  bool need_ssr = false;
  std::uint32_t utilization = 0;  ///< percent
};
IpuWrite to_write(const Inputs& in) {
  IpuWrite w;
  w.has_old_block = in.old_valid;
  w.direct = in.direct;
  w.pinned = in.pinned;
  w.dir = in.dir;
  w.quota = in.quota;
  w.opu_write = in.opu_write;
  w.gc = in.gc;
  w.cold = in.cold;
  w.sync_io = in.sync;
  w.fsync = in.fsync;
  w.fdatasync = in.fdatasync;
  w.file_dirty_pages = in.dirty_pages;
  return w;
}
SpaceState space(const Inputs& in) {
  SpaceState s;
  s.user_blocks = 1000;
  s.valid_blocks = in.utilization * 10ull;
  return s;
}
IpuReason decide(const IpuOptions& o, const Inputs& in) { return decide_ipu(o, space(in), in.need_ssr, to_write(in)); }
bool inplace_without_io(const IpuOptions& o, const Inputs& in) {
  return ipu_inplace_without_io(o, space(in), in.need_ssr, to_write(in));
}

Inputs rewrite() {  // a file block that has an address, written back synchronously
  Inputs in;
  in.old_valid = true;
  in.sync = true;
  return in;
}

TEST(IpuDecide, NewBlocksAreNeverInPlace) {
  Inputs in = rewrite();
  in.old_valid = false;
  for (std::uint32_t p : {0x00u, 0x01u, 0x81u, 0xFFu}) EXPECT_EQ(decide(opts(p), in), IpuReason::opu_new_block);
  in.pinned = true;
  in.direct = true;
  EXPECT_EQ(decide(opts(0x01), in), IpuReason::opu_new_block);
}

TEST(IpuDecide, EachPolicyBitAlone) {
  Inputs in = rewrite();
  EXPECT_EQ(decide(opts(0x00), in), IpuReason::opu_policy);
  EXPECT_EQ(decide(opts(ipu_bit::force), in), IpuReason::ipu_force);
  // SSR: only when need_SSR().
  EXPECT_EQ(decide(opts(ipu_bit::ssr), in), IpuReason::opu_policy);
  in.need_ssr = true;
  EXPECT_EQ(decide(opts(ipu_bit::ssr), in), IpuReason::ipu_ssr);
  in.need_ssr = false;
  // UTIL: utilization strictly above min_ipu_util.
  IpuOptions u = opts(ipu_bit::util);
  u.min_ipu_util = 70;
  in.utilization = 70;
  EXPECT_EQ(decide(u, in), IpuReason::opu_policy);
  in.utilization = 71;
  EXPECT_EQ(decide(u, in), IpuReason::ipu_util);
  u.min_ipu_util = 100;
  in.utilization = 100;
  EXPECT_EQ(decide(u, in), IpuReason::opu_policy);
  // SSR_UTIL: both.
  IpuOptions su = opts(ipu_bit::ssr_util);
  su.min_ipu_util = 50;
  in.utilization = 60;
  EXPECT_EQ(decide(su, in), IpuReason::opu_policy);
  in.need_ssr = true;
  EXPECT_EQ(decide(su, in), IpuReason::ipu_ssr_util);
  in.utilization = 50;
  EXPECT_EQ(decide(su, in), IpuReason::opu_policy);
  in = rewrite();
  // ASYNC: a write without REQ_SYNC.
  EXPECT_EQ(decide(opts(ipu_bit::async), in), IpuReason::opu_policy);
  in.sync = false;
  EXPECT_EQ(decide(opts(ipu_bit::async), in), IpuReason::ipu_async);
  // NOCACHE triggers nothing; HONOR_OPU_WRITE alone neither.
  EXPECT_EQ(decide(opts(ipu_bit::nocache), in), IpuReason::opu_policy);
  EXPECT_EQ(decide(opts(ipu_bit::honor_opu_write), in), IpuReason::opu_policy);
}

TEST(IpuDecide, FsyncBitFollowsFiNeedIpu) {
  IpuOptions o = opts(ipu_bit::fsync);
  o.min_fsync_blocks = 8;
  Inputs in = rewrite();
  EXPECT_EQ(decide(o, in), IpuReason::opu_policy);  // sync() writeback: no FI_NEED_IPU
  in.fsync = true;
  in.dirty_pages = 8;
  EXPECT_EQ(decide(o, in), IpuReason::ipu_fsync);
  in.dirty_pages = 9;
  EXPECT_EQ(decide(o, in), IpuReason::opu_policy);
  in.fdatasync = true;  // fdatasync: FI_NEED_IPU whatever the dirty pages
  in.dirty_pages = 1000;
  EXPECT_EQ(decide(o, in), IpuReason::ipu_fsync);
  // Without the FSYNC bit, the stock kernel writes fdatasync out of place.
  EXPECT_EQ(decide(opts(ipu_bit::ssr_util), in), IpuReason::opu_policy);
  EXPECT_EQ(decide(opts(0), in), IpuReason::opu_policy);
}

TEST(IpuDecide, FdatasyncOptionAsTheProposedPatch) {
  IpuOptions o = opts(ipu_bit::ssr_util);
  o.fdatasync_in_place = true;
  Inputs in = rewrite();
  in.fsync = true;
  in.fdatasync = true;
  in.dirty_pages = 1000;
  EXPECT_EQ(decide(o, in), IpuReason::ipu_fdatasync_option);
  IpuOptions none = opts(0);
  none.fdatasync_in_place = true;
  EXPECT_EQ(decide(none, in), IpuReason::ipu_fdatasync_option);
  // A small fsync still needs the FSYNC bit (the patch keeps that test).
  in.fdatasync = false;
  in.dirty_pages = 1;
  EXPECT_EQ(decide(none, in), IpuReason::opu_policy);
  IpuOptions fs = opts(ipu_bit::fsync);
  fs.fdatasync_in_place = true;
  EXPECT_EQ(decide(fs, in), IpuReason::ipu_fsync);
  // It comes before FORCE (the patch tests FI_NEED_IPU first)...
  IpuOptions ff = opts(ipu_bit::force | ipu_bit::fsync);
  ff.fdatasync_in_place = true;
  EXPECT_EQ(decide(ff, in), IpuReason::ipu_fsync);
  ff.fdatasync_in_place = false;
  EXPECT_EQ(decide(ff, in), IpuReason::ipu_force);
  // ...and after the outer rules: directories stay out of place.
  in.fdatasync = true;
  in.dir = true;
  EXPECT_EQ(decide(none, in), IpuReason::opu_dir);
}

TEST(IpuDecide, PrecedenceOfThePolicyBits) {
  Inputs in = rewrite();
  in.need_ssr = true;
  in.utilization = 99;
  in.sync = false;
  in.fsync = true;
  in.dirty_pages = 1;
  EXPECT_EQ(decide(opts(0x3F), in), IpuReason::ipu_force);
  EXPECT_EQ(decide(opts(0x3E), in), IpuReason::ipu_ssr);
  EXPECT_EQ(decide(opts(0x3C), in), IpuReason::ipu_util);
  EXPECT_EQ(decide(opts(0x38), in), IpuReason::ipu_ssr_util);
  EXPECT_EQ(decide(opts(0x30), in), IpuReason::ipu_async);
  EXPECT_EQ(decide(opts(0x10), in), IpuReason::ipu_fsync);
}

TEST(IpuDecide, OuterRules) {
  Inputs in = rewrite();
  in.dir = true;
  EXPECT_EQ(decide(opts(0xFF), in), IpuReason::opu_dir);
  in.dir = false;
  in.quota = true;
  EXPECT_EQ(decide(opts(0xFF), in), IpuReason::opu_quota);
  in.quota = false;
  in.gc = true;  // GC moves are out of place whatever the policy
  EXPECT_EQ(decide(opts(0x01), in), IpuReason::opu_gc);
  in.gc = false;
  in.opu_write = true;  // FI_OPU_WRITE forces out of place, HONOR bit or not
  EXPECT_EQ(decide(opts(0x01), in), IpuReason::opu_defrag);
  EXPECT_EQ(decide(opts(0x81), in), IpuReason::opu_defrag);
  in.opu_write = false;
  // Pinned files: in place, before every out-of-place rule but new blocks.
  in.pinned = true;
  EXPECT_EQ(decide(opts(0), in), IpuReason::ipu_pinned);
  in.quota = true;
  in.opu_write = true;
  EXPECT_EQ(decide(opts(0), in), IpuReason::ipu_pinned);
  in = rewrite();
  // Cold files: in place unless being defragmented.
  in.cold = true;
  EXPECT_EQ(decide(opts(0), in), IpuReason::ipu_cold);
  in.opu_write = true;
  EXPECT_EQ(decide(opts(0), in), IpuReason::opu_defrag);
  // Direct I/O over a written block: in place whatever the policy.
  in = rewrite();
  in.direct = true;
  EXPECT_EQ(decide(opts(0), in), IpuReason::ipu_direct);
}

TEST(IpuDecide, DefragmentRefusalFollowsHonorOpuWrite) {
  Inputs in;
  in.opu_write = true;  // f2fs_defragment_range() sets FI_OPU_WRITE, then asks
  EXPECT_TRUE(inplace_without_io(opts(0x01), in));
  EXPECT_FALSE(inplace_without_io(opts(0x81), in));
  EXPECT_FALSE(inplace_without_io(opts(0x10), in));
  EXPECT_FALSE(inplace_without_io(opts(0x20), in));  // no fio: ASYNC cannot apply
  in.cold = true;
  EXPECT_FALSE(inplace_without_io(opts(0x10), in));
  in.pinned = true;
  EXPECT_TRUE(inplace_without_io(opts(0x81), in));
}

// ---- Scenarios through the Writer -----------------------------------------

constexpr std::uint64_t kTime = 1700000000;

std::vector<std::uint8_t> pattern(std::size_t n, std::uint8_t seed) {
  std::vector<std::uint8_t> v(n);
  for (std::size_t i = 0; i < n; ++i) v[i] = static_cast<std::uint8_t>(seed * 31 + i * 7 + (i >> 12));
  return v;
}

void check_clean(BlockDevice& dev, const std::string& what) {
  auto v = Volume::open(dev);
  ASSERT_TRUE(v) << what << ": " << v.error().to_string();
  v->reset();
  writertest::check_clean(dev, what);
}

struct Scenario {
  std::unique_ptr<BlockDevice> dev;
  std::unique_ptr<Writer> w;
  nid_t ino = 0;

  // A 256 MiB volume with `path` of `blocks` 4 KiB blocks, checkpointed.
  void setup(const IpuOptions& ipu, std::uint64_t blocks = 16, const std::string& path = "/f",
             std::uint64_t bytes = 256ull << 20) {
    dev = our_mkfs(bytes, kRichFeatures);
    ASSERT_TRUE(dev);
    MountOptions mo;
    mo.fixed_time = kTime;
    mo.ipu = ipu;
    auto m = Writer::mount(*dev, mo);
    ASSERT_OK(m);
    w = std::move(*m);
    auto i = w->create(path);
    ASSERT_OK(i);
    ino = *i;
    if (blocks) {
      auto d = pattern(blocks * 4096, 1);
      ASSERT_TRUE(w->write(ino, 0, d));
    }
    ASSERT_TRUE(w->sync());
  }
  block_t at(std::uint64_t index) {
    auto a = w->bmap(ino, index);
    EXPECT_OK(a);
    return a ? *a : 0;
  }
  std::uint64_t count(IpuReason r) const { return w->stats().ipu.count(r); }
  void overwrite(std::uint64_t index, std::uint8_t seed, std::uint64_t nblocks = 1) {
    auto d = pattern(nblocks * 4096, seed);
    auto r = w->write(ino, index * 4096, d);
    ASSERT_OK(r);
  }
  // Unmount, then the volume must be clean and hold `seed`'s data at `index`.
  void finish(std::uint64_t index, std::uint8_t seed, std::uint64_t nblocks = 1) {
    ASSERT_TRUE(w->unmount());
    w.reset();
    auto v = Volume::open(*dev);
    ASSERT_TRUE(v);
    auto in = (*v)->read_inode(ino);
    ASSERT_TRUE(in);
    std::vector<std::uint8_t> got(nblocks * 4096);
    auto n = (*v)->read(*in, index * 4096, got);
    ASSERT_TRUE(n);
    EXPECT_EQ(got, pattern(nblocks * 4096, seed));
    v->reset();
    check_clean(*dev, "after the scenario");
  }
};

// Whether buffered writes wait in a page cache (helper cache's module);
// without it every write reaches the device at once as async writeback, and
// the scenarios that need a sync or fsync writeback cannot be staged.
bool has_page_cache(Scenario& s) {
  const auto before = s.w->stats().data_blocks_written;
  s.overwrite(0, 77);
  return s.w->stats().data_blocks_written == before;
}
// Whether fsync writes back through FI_NEED_IPU (helper fsync's module)
// rather than the first cut's checkpoint.
bool has_fsync_path(Scenario& s) {
  const auto cps = s.w->stats().checkpoints;
  if (!s.w->fsync(s.ino)) return false;
  return s.w->stats().checkpoints == cps && s.w->stats().ipu.fsyncs > 0;
}

TEST(WriterIpu, DefaultsOfASmallVolume) {
  auto dev = our_mkfs(256ull << 20, kRichFeatures);
  ASSERT_TRUE(dev);
  std::uint32_t rsvd = 0;
  {
    auto v = Volume::open(*dev);
    ASSERT_TRUE(v);
    rsvd = (*v)->checkpoint().rsvd_segment_count.get();
  }
  auto w = Writer::mount(*dev);
  ASSERT_TRUE(w);
  const IpuOptions o = (*w)->ipu_options();
  EXPECT_EQ(o.ipu_policy, 0x81u);  // f2fs_tuning_parameters(): main_segments <= 16 x 512
  EXPECT_EQ(o.min_ipu_util, 70u);
  EXPECT_EQ(o.min_fsync_blocks, 8u);
  EXPECT_EQ(o.min_hot_blocks, 16u);
  EXPECT_EQ(o.min_ssr_sections, rsvd);  // reserved_sections(), one segment per section
  EXPECT_FALSE(o.fdatasync_in_place);
  ASSERT_TRUE((*w)->unmount());
}

TEST(WriterIpu, DefaultOfAVolumeOver16GiB) {
  // 17 GiB: more than 16 x 512 main segments, so F2FS_IPU_FSYNC alone.
  auto dev = our_mkfs(17ull << 30, feature::extra_attr);
  ASSERT_TRUE(dev);
  {
    auto v = Volume::open(*dev);
    ASSERT_TRUE(v);
    ASSERT_GT((*v)->main_segments(), 16u * 512u);
  }
  MountOptions mo;
  mo.discard = false;
  auto w = Writer::mount(*dev, mo);
  ASSERT_OK(w);
  EXPECT_EQ((*w)->ipu_options().ipu_policy, 0x10u);
}

TEST(WriterIpu, TunablesAsSysfsStoresThem) {
  Scenario s;
  IpuOptions o;
  o.ipu_policy = 0x04;
  o.min_ipu_util = 5;
  s.setup(o, 0);
  EXPECT_EQ(s.w->ipu_options().ipu_policy, 0x04u);  // the mount option
  EXPECT_EQ(s.w->ipu_options().min_ipu_util, 5u);
  IpuOptions bad;
  bad.ipu_policy = 0x100;  // >= BIT(F2FS_IPU_MAX): EINVAL since Linux 6.3
  auto r = s.w->set_ipu_options(bad);
  ASSERT_FALSE(r);
  EXPECT_EQ(r.error().code, Errc::invalid_argument);
  EXPECT_EQ(s.w->ipu_options().ipu_policy, 0x04u);  // unchanged
  IpuOptions any;
  any.ipu_policy = 0xFF;
  any.min_ipu_util = 101;  // stored as the kernel stores it
  any.min_fsync_blocks = 0;
  any.min_ssr_sections = 100000;
  ASSERT_TRUE(s.w->set_ipu_options(any));
  EXPECT_EQ(s.w->ipu_options().ipu_policy, 0xFFu);
  EXPECT_EQ(s.w->ipu_options().min_ipu_util, 101u);
  EXPECT_EQ(s.w->ipu_options().min_ssr_sections, 100000u);
  ASSERT_TRUE(s.w->set_ipu_options(IpuOptions{}));  // kernel defaults again
  EXPECT_EQ(s.w->ipu_options().ipu_policy, 0x81u);
  ASSERT_TRUE(s.w->unmount());
}

TEST(WriterIpu, FirstWritesAreOutOfPlace) {
  Scenario s;
  s.setup(opts(ipu_bit::force), 0);
  EXPECT_EQ(s.at(0), 0u);
  s.overwrite(0, 2);
  ASSERT_TRUE(s.w->sync());
  EXPECT_NE(s.at(0), 0u);
  EXPECT_EQ(s.count(IpuReason::opu_new_block), 1u);
  EXPECT_EQ(s.count(IpuReason::ipu_force), 0u);
  s.finish(0, 2);
}

TEST(WriterIpu, ForceRewritesInPlace) {
  Scenario s;
  s.setup(opts(ipu_bit::force));
  const block_t a = s.at(3);
  ASSERT_NE(a, 0u);
  const auto new_blocks = s.count(IpuReason::opu_new_block);
  s.overwrite(3, 9);
  ASSERT_TRUE(s.w->sync());
  EXPECT_EQ(s.at(3), a);
  EXPECT_EQ(s.count(IpuReason::ipu_force), 1u);
  EXPECT_EQ(s.count(IpuReason::opu_new_block), new_blocks);
  s.finish(3, 9);
}

TEST(WriterIpu, SmallVolumeDefaultRewritesInPlace) {
  Scenario s;
  s.setup(IpuOptions{});  // 0x81 on 256 MiB
  const block_t a = s.at(0);
  s.overwrite(0, 4);
  ASSERT_TRUE(s.w->sync());
  EXPECT_EQ(s.at(0), a);
  EXPECT_EQ(s.count(IpuReason::ipu_force), 1u);
  s.finish(0, 4);
}

TEST(WriterIpu, NoBitMeansOutOfPlace) {
  for (std::uint32_t p : {0x00u, ipu_bit::nocache, ipu_bit::honor_opu_write}) {
    SCOPED_TRACE(p);
    Scenario s;
    s.setup(opts(p));
    const block_t a = s.at(5);
    s.overwrite(5, 3);
    ASSERT_TRUE(s.w->sync());
    EXPECT_NE(s.at(5), a);
    EXPECT_EQ(s.count(IpuReason::opu_policy), 1u);
    EXPECT_EQ(s.w->stats().ipu.in_place(), 0u);
    s.finish(5, 3);
  }
}

TEST(WriterIpu, NocacheDoesNotChangePlacement) {
  Scenario s;
  s.setup(opts(ipu_bit::nocache | ipu_bit::force));
  const block_t a = s.at(1);
  s.overwrite(1, 6);
  ASSERT_TRUE(s.w->sync());
  EXPECT_EQ(s.at(1), a);
  EXPECT_EQ(s.count(IpuReason::ipu_force), 1u);
  s.finish(1, 6);
}

// UTIL: utilization() is whole percent of user_block_count; a 12 MiB file
// on 256 MiB makes it about 6.
TEST(WriterIpu, UtilWithMinIpuUtil0And100) {
  for (std::uint32_t min : {0u, 100u}) {
    SCOPED_TRACE(min);
    Scenario s;
    IpuOptions o = opts(ipu_bit::util);
    o.min_ipu_util = min;
    s.setup(o, 3072);
    const block_t a = s.at(100);
    s.overwrite(100, 5);
    ASSERT_TRUE(s.w->sync());
    if (min == 0) {
      EXPECT_EQ(s.at(100), a);
      EXPECT_EQ(s.count(IpuReason::ipu_util), 1u);
    } else {
      EXPECT_NE(s.at(100), a);
      EXPECT_EQ(s.count(IpuReason::opu_policy), 1u);
    }
    s.finish(100, 5);
  }
}

// SSR: need_SSR() holds when free sections <= dirty nodes' sections +
// min_ssr_sections + reserved sections; a huge min_ssr_sections makes it
// hold on an empty volume, 0 does not.
TEST(WriterIpu, SsrFollowsNeedSsr) {
  for (std::uint32_t min_ssr : {100000u, 0u}) {
    SCOPED_TRACE(min_ssr);
    Scenario s;
    IpuOptions o = opts(ipu_bit::ssr);
    o.min_ssr_sections = min_ssr;
    s.setup(o);
    const block_t a = s.at(2);
    s.overwrite(2, 8);
    ASSERT_TRUE(s.w->sync());
    if (min_ssr) {
      EXPECT_EQ(s.at(2), a);
      EXPECT_EQ(s.count(IpuReason::ipu_ssr), 1u);
    } else {
      EXPECT_NE(s.at(2), a);
      EXPECT_EQ(s.count(IpuReason::opu_policy), 1u);
    }
    s.finish(2, 8);
  }
}

TEST(WriterIpu, SsrUtilNeedsBoth) {
  struct Case {
    std::uint32_t min_ssr, min_util;
    bool in_place;
  };
  for (const Case c : {Case{100000, 0, true}, Case{100000, 100, false}, Case{0, 0, false}}) {
    SCOPED_TRACE(std::to_string(c.min_ssr) + "/" + std::to_string(c.min_util));
    Scenario s;
    IpuOptions o = opts(ipu_bit::ssr_util);
    o.min_ssr_sections = c.min_ssr;
    o.min_ipu_util = c.min_util;
    s.setup(o, 3072);
    const block_t a = s.at(7);
    s.overwrite(7, 11);
    ASSERT_TRUE(s.w->sync());
    EXPECT_EQ(s.at(7) == a, c.in_place);
    EXPECT_EQ(s.count(IpuReason::ipu_ssr_util), c.in_place ? 1u : 0u);
    s.finish(7, 11);
  }
}

TEST(WriterIpu, PinnedFilesAreRewrittenInPlaceAndStayPinned) {
  Scenario s;
  s.setup(opts(0));
  ASSERT_TRUE(s.w->set_pinned(s.ino, true));
  const block_t a = s.at(4);
  s.overwrite(4, 12);
  ASSERT_TRUE(s.w->sync());
  EXPECT_EQ(s.at(4), a);
  EXPECT_EQ(s.count(IpuReason::ipu_pinned), 1u);
  // The flag is on disk (F2FS_PIN_FILE in i_inline): still pinned after a remount.
  ASSERT_TRUE(s.w->unmount());
  MountOptions mo;
  mo.fixed_time = kTime;
  mo.ipu = opts(0);
  auto m = Writer::mount(*s.dev, mo);
  ASSERT_TRUE(m);
  s.w = std::move(*m);
  s.overwrite(4, 13);
  ASSERT_TRUE(s.w->sync());
  EXPECT_EQ(s.at(4), a);
  EXPECT_EQ(s.count(IpuReason::ipu_pinned), 1u);
  // Unpinned: the policy (none) decides again.
  ASSERT_TRUE(s.w->set_pinned(s.ino, false));
  s.overwrite(4, 14);
  ASSERT_TRUE(s.w->sync());
  EXPECT_NE(s.at(4), a);
  EXPECT_EQ(s.count(IpuReason::opu_policy), 1u);
  // Directories cannot be pinned (EINVAL).
  auto d = s.w->mkdir("/d");
  ASSERT_TRUE(d);
  auto r = s.w->set_pinned(*d, true);
  ASSERT_FALSE(r);
  EXPECT_EQ(r.error().code, Errc::invalid_argument);
  s.finish(4, 14);
}

TEST(WriterIpu, ColdFilesAreRewrittenInPlace) {
  Scenario s;
  s.setup(opts(0), 16, "/movie.mkv");  // mkfs's cold extension list has "mkv"
  const block_t a = s.at(0);
  s.overwrite(0, 21);
  ASSERT_TRUE(s.w->sync());
  EXPECT_EQ(s.at(0), a);
  EXPECT_EQ(s.count(IpuReason::ipu_cold), 1u);
  s.finish(0, 21);
}

TEST(WriterIpu, DentryBlocksAreNeverRewrittenInPlace) {
  Scenario s;
  s.setup(opts(0xFF & ~ipu_bit::honor_opu_write), 0);
  auto d = s.w->mkdir("/d");
  ASSERT_TRUE(d);
  ASSERT_TRUE(s.w->sync());
  const block_t a = s.w->bmap(*d, 0).value_or(0);
  ASSERT_NE(a, 0u);
  ASSERT_TRUE(s.w->create("/d/new"));  // rewrites the dentry block
  ASSERT_TRUE(s.w->sync());
  EXPECT_NE(s.w->bmap(*d, 0).value_or(0), a);
  EXPECT_GE(s.count(IpuReason::opu_dir), 1u);
  EXPECT_EQ(s.w->stats().ipu.in_place(), 0u);
  ASSERT_TRUE(s.w->unmount());
  check_clean(*s.dev, "directories");
}

// HONOR_OPU_WRITE: defragment() sets FI_OPU_WRITE; with FORCE alone the
// file would still be written in place, so the ioctl refuses (EINVAL); with
// FORCE|HONOR_OPU_WRITE the blocks move, out of place and contiguous.
TEST(WriterIpu, HonorOpuWriteLetsDefragmentMoveBlocks) {
  for (std::uint32_t p : {ipu_bit::force, ipu_bit::force | ipu_bit::honor_opu_write}) {
    SCOPED_TRACE(p);
    Scenario s;
    s.setup(opts(p), 0);
    auto g = s.w->create("/g");
    ASSERT_TRUE(g);
    // f0, g0, f1: f is fragmented.
    s.overwrite(0, 31);
    ASSERT_TRUE(s.w->sync());
    ASSERT_TRUE(s.w->write(*g, 0, pattern(4096, 32)));
    ASSERT_TRUE(s.w->sync());
    s.overwrite(1, 33);
    ASSERT_TRUE(s.w->sync());
    const block_t a0 = s.at(0), a1 = s.at(1);
    ASSERT_NE(a1, a0 + 1);
    auto r = s.w->defragment(s.ino, 0, 2 * 4096);
    if (p == ipu_bit::force) {
      ASSERT_FALSE(r);
      EXPECT_EQ(r.error().code, Errc::invalid_argument);
      EXPECT_EQ(s.at(0), a0);
      ASSERT_TRUE(s.w->unmount());
      check_clean(*s.dev, "defragment refused");
      continue;
    }
    ASSERT_OK(r);
    EXPECT_EQ(*r, 2u * 4096);
    ASSERT_TRUE(s.w->sync());
    EXPECT_NE(s.at(0), a0);
    EXPECT_EQ(s.at(1), s.at(0) + 1);
    EXPECT_EQ(s.count(IpuReason::opu_defrag), 2u);
    // Contiguous now: nothing to do. And FORCE applies again afterwards.
    auto again = s.w->defragment(s.ino, 0, 2 * 4096);
    ASSERT_TRUE(again);
    EXPECT_EQ(*again, 0u);
    const block_t b0 = s.at(0);
    std::vector<std::uint8_t> d = pattern(4096, 31);
    ASSERT_TRUE(s.w->write(s.ino, 0, d));
    ASSERT_TRUE(s.w->sync());
    EXPECT_EQ(s.at(0), b0);
    EXPECT_EQ(s.count(IpuReason::ipu_force), 1u);
    s.finish(0, 31);
  }
}

TEST(WriterIpu, DefragmentRefusesPinnedFilesAndBadRanges) {
  Scenario s;
  s.setup(opts(ipu_bit::fsync), 4);
  auto r = s.w->defragment(s.ino, 1, 4096);
  ASSERT_FALSE(r);
  EXPECT_EQ(r.error().code, Errc::invalid_argument);
  ASSERT_TRUE(s.w->set_pinned(s.ino, true));
  r = s.w->defragment(s.ino, 0, 4 * 4096);
  ASSERT_FALSE(r);
  EXPECT_EQ(r.error().code, Errc::invalid_argument);
  ASSERT_TRUE(s.w->unmount());
  check_clean(*s.dev, "pinned");
}

// ASYNC: a writeback without REQ_SYNC (cache pressure, periodic flush)
// rewrites in place. Without a page cache every buffered write is such a
// writeback; with one, a one-page cache forces it.
TEST(WriterIpu, AsyncWritebackRewritesInPlace) {
  Scenario s;
  s.dev = our_mkfs(256ull << 20, kRichFeatures);
  ASSERT_TRUE(s.dev);
  MountOptions mo;
  mo.fixed_time = kTime;
  mo.ipu = opts(ipu_bit::async);
  mo.cache_bytes = 4096;
  auto m = Writer::mount(*s.dev, mo);
  ASSERT_TRUE(m);
  s.w = std::move(*m);
  auto i = s.w->create("/f");
  ASSERT_TRUE(i);
  s.ino = *i;
  ASSERT_TRUE(s.w->write(s.ino, 0, pattern(16 * 4096, 1)));
  ASSERT_TRUE(s.w->sync());
  std::vector<block_t> before;
  for (std::uint64_t k = 0; k < 8; ++k) before.push_back(s.at(k));
  for (std::uint64_t k = 0; k < 8; ++k) s.overwrite(k, static_cast<std::uint8_t>(40 + k));
  ASSERT_TRUE(s.w->sync());
  // The pages pushed out by later writes went in place; at most the last
  // one can have waited for sync()'s (synchronous) writeback.
  std::uint64_t same = 0;
  for (std::uint64_t k = 0; k < 8; ++k) same += s.at(k) == before[k];
  EXPECT_GE(same, 7u);
  EXPECT_GE(s.count(IpuReason::ipu_async), 7u);
  EXPECT_EQ(s.count(IpuReason::ipu_async), same);
  s.finish(7, 47);
}

TEST(WriterIpu, SyncWritebackIsNotAsync) {
  Scenario s;
  s.setup(opts(ipu_bit::async));
  if (!has_page_cache(s)) GTEST_SKIP() << "needs the page cache (writer/cache.cpp): writes are write-through";
  ASSERT_TRUE(s.w->sync());
  const block_t a = s.at(0);
  s.overwrite(0, 50);
  ASSERT_TRUE(s.w->sync());  // REQ_SYNC writeback
  EXPECT_NE(s.at(0), a);
  s.finish(0, 50);
}

// FSYNC (0x10): fsync's writeback of a file with at most min_fsync_blocks
// dirty pages, and any fdatasync, in place; sync() and big fsyncs out of
// place.
TEST(WriterIpu, FsyncBitScenarios) {
  Scenario s;
  s.setup(opts(ipu_bit::fsync), 32);
  if (!has_page_cache(s)) GTEST_SKIP() << "needs the page cache (writer/cache.cpp): writes are write-through";
  if (!has_fsync_path(s)) GTEST_SKIP() << "needs the fsync writeback (writer/fsync.cpp): fsync takes a checkpoint";
  // fsync of one dirty page: in place.
  block_t a = s.at(2);
  s.overwrite(2, 60);
  ASSERT_TRUE(s.w->fsync(s.ino));
  EXPECT_EQ(s.at(2), a);
  EXPECT_GE(s.count(IpuReason::ipu_fsync), 1u);
  // sync() of one dirty page: out of place.
  a = s.at(3);
  s.overwrite(3, 61);
  ASSERT_TRUE(s.w->sync());
  EXPECT_NE(s.at(3), a);
  // fsync of 9 > min_fsync_blocks dirty pages: out of place.
  a = s.at(10);
  s.overwrite(10, 62, 9);
  ASSERT_TRUE(s.w->fsync(s.ino));
  EXPECT_NE(s.at(10), a);
  // fdatasync of 9 dirty pages: in place.
  a = s.at(20);
  s.overwrite(20, 63, 9);
  ASSERT_TRUE(s.w->fdatasync(s.ino));
  EXPECT_EQ(s.at(20), a);
  s.finish(20, 63, 9);
}

// The fdatasync option under SSR_UTIL (need_SSR false): fdatasync out of
// place as the kernel does, in place with the option.
TEST(WriterIpu, FdatasyncOptionUnderSsrUtil) {
  for (bool option : {false, true}) {
    SCOPED_TRACE(option);
    Scenario s;
    IpuOptions o = opts(ipu_bit::ssr_util);
    o.fdatasync_in_place = option;
    s.setup(o, 16);
    if (!has_page_cache(s)) GTEST_SKIP() << "needs the page cache (writer/cache.cpp)";
    if (!has_fsync_path(s)) GTEST_SKIP() << "needs the fsync writeback (writer/fsync.cpp)";
    const block_t a = s.at(5);
    s.overwrite(5, 70);
    ASSERT_TRUE(s.w->fdatasync(s.ino));
    EXPECT_EQ(s.at(5) == a, option);
    EXPECT_EQ(s.count(IpuReason::ipu_fdatasync_option), option ? 1u : 0u);
    s.finish(5, 70);
  }
}

TEST(WriterIpu, DirectWritesOverWrittenBlocksAreInPlace) {
  Scenario s;
  s.setup(opts(0), 8);
  const block_t a = s.at(6);
  ASSERT_TRUE(s.w->write(s.ino, 6 * 4096, pattern(4096, 80), WriteFlags{true, false}));
  if (s.count(IpuReason::ipu_direct) == 0 && s.count(IpuReason::opu_policy) == 1)
    GTEST_SKIP() << "needs direct writes (writer/cache.cpp): WriteFlags::direct is buffered so far";
  EXPECT_EQ(s.at(6), a);
  EXPECT_EQ(s.count(IpuReason::ipu_direct), 1u);
  s.finish(6, 80);
}

// In-place writes are not covered by the checkpoint: the volume as the
// checkpoint left it (no unmount, no sync) is consistent and already holds
// the new data of a block rewritten in place.
TEST(WriterIpu, InPlaceDataOutsideTheCheckpointLeavesAConsistentVolume) {
  Scenario s;
  s.setup(opts(ipu_bit::force), 8);
  const block_t a = s.at(1);
  s.overwrite(1, 90);
  ASSERT_TRUE(s.w->fdatasync(s.ino));  // the data reaches the device
  EXPECT_EQ(s.at(1), a);
  auto copy = clone(*s.dev);  // a power cut now
  {
    auto v = Volume::open(*copy);
    ASSERT_OK(v);
    auto in = (*v)->read_inode(s.ino);
    ASSERT_TRUE(in);
    std::vector<std::uint8_t> got(4096);
    ASSERT_TRUE((*v)->read(*in, 4096, got));
    EXPECT_EQ(got, pattern(4096, 90));
  }
  check_clean(*copy, "power cut after an in-place write");
  s.finish(1, 90);
}

// ---- Oracle drivers (tests/writer/ipu_linux.sh) ----------------------------
// DISABLED_: run only by the script, on images it passes through the
// environment.

// IPU_IMAGE, IPU_FILE (a path), IPU_INDICES ("100 110 ..."): writes
// "index address" lines to IPU_OUT, read through a read-only mount.
TEST(WriterIpuOracle, DISABLED_Bmap) {
  const char* img = std::getenv("IPU_IMAGE");
  const char* file = std::getenv("IPU_FILE");
  const char* idx = std::getenv("IPU_INDICES");
  const char* out = std::getenv("IPU_OUT");
  ASSERT_TRUE(img && file && idx && out);
  auto dev = f2fstest::load_image(img);
  ASSERT_TRUE(dev);
  MountOptions mo;
  mo.read_only = true;
  auto w = Writer::mount(*dev, mo);
  ASSERT_OK(w);
  auto ino = (*w)->lookup(file);
  ASSERT_OK(ino);
  std::ofstream o(out);
  std::istringstream is(idx);
  for (std::uint64_t i; is >> i;) {
    auto a = (*w)->bmap(*ino, i);
    ASSERT_OK(a);
    o << i << " " << *a << "\n";
  }
}

// IPU_IMAGE, IPU_FILE, IPU_PLAN: the plan's steps, one a line: "name policy
// min_ipu_util min_ssr_sections step index nblocks expect" (step: sync,
// fsync or fdatasync; policy and numbers as strtoul reads them). Each step
// sets the tunables, overwrites nblocks blocks from index and runs the step;
// IPU_OUT gets "name before after" for the first block, or "name skip" when
// the step needs the page cache or the fsync path this build lacks.
TEST(WriterIpuOracle, DISABLED_Run) {
  const char* img = std::getenv("IPU_IMAGE");
  const char* file = std::getenv("IPU_FILE");
  const char* plan = std::getenv("IPU_PLAN");
  const char* out = std::getenv("IPU_OUT");
  ASSERT_TRUE(img && file && plan && out);
  auto dev = f2fstest::load_image(img);
  ASSERT_TRUE(dev);
  auto w = Writer::mount(*dev);
  ASSERT_OK(w);
  auto ino = (*w)->lookup(file);
  ASSERT_OK(ino);
  std::ifstream pl(plan);
  std::ofstream o(out);
  std::string line;
  while (std::getline(pl, line)) {
    std::istringstream ls(line);
    std::string name, policy, util, ssr, step, expect;
    std::uint64_t index = 0, n = 0;
    if (!(ls >> name >> policy >> util >> ssr >> step >> index >> n >> expect)) continue;
    IpuOptions io;
    io.ipu_policy = static_cast<std::uint32_t>(std::strtoul(policy.c_str(), nullptr, 0));
    io.min_ipu_util = static_cast<std::uint32_t>(std::strtoul(util.c_str(), nullptr, 0));
    io.min_ssr_sections = static_cast<std::uint32_t>(std::strtoul(ssr.c_str(), nullptr, 0));
    ASSERT_TRUE((*w)->set_ipu_options(io));
    auto before = (*w)->bmap(*ino, index);
    ASSERT_TRUE(before);
    const auto written = (*w)->stats().data_blocks_written;
    const auto cps = (*w)->stats().checkpoints;
    ASSERT_TRUE((*w)->write(*ino, index * 4096, pattern(n * 4096, 99)));
    const bool cached = (*w)->stats().data_blocks_written == written;
    if (step == "sync") {
      ASSERT_TRUE((*w)->sync());
    } else {
      ASSERT_TRUE(step == "fsync" ? (*w)->fsync(*ino) : (*w)->fdatasync(*ino));
      if (!cached || (*w)->stats().checkpoints != cps) {
        o << name << " skip\n";
        continue;
      }
    }
    auto after = (*w)->bmap(*ino, index);
    ASSERT_TRUE(after);
    o << name << " " << *before << " " << *after << "\n";
  }
  ASSERT_TRUE((*w)->unmount());
  check_clean(*dev, "our writer after the oracle plan");
}

}  // namespace
