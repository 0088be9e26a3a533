// f2fscore-resize's library part (f2fscore/resize.hpp): grow and shrink of
// volumes empty, half and 90% full, with files across the cut; after each,
// our fsck and fsck.f2fs -f clean and the tree read back equal to the tree
// before. Refusals leave the image byte for byte as it was. A power cut at
// every write of a shrink over data and of a grow leaves the old or the new
// volume with the same tree.
//
// Expected layouts come from the rules resize.f2fs and mkfs.f2fs follow
// (segment_count from segment0 in whole zones, segment_count_main =
// segment_count - metadata segments), computed here by hand from the old
// superblock, not from the code under test.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <map>
#include <ostream>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "f2fscore/device.hpp"
#include "f2fscore/fault_device.hpp"
#include "f2fscore/fsck.hpp"
#include "f2fscore/mkfs.hpp"
#include "f2fscore/resize.hpp"
#include "f2fscore/volume.hpp"
#include "f2fscore/writer.hpp"
#include "support/test_support.hpp"

namespace fs = std::filesystem;
using namespace f2fscore;
using f2fstest::TempDir;
namespace test = f2fstest;

namespace {

constexpr std::uint64_t kMiB = 1ull << 20;

struct FileSig {
  std::uint16_t mode = 0;
  std::uint64_t size = 0;
  std::uint64_t hash = 0;
  bool operator==(const FileSig&) const = default;
};
using Tree = std::map<std::string, FileSig>;

std::uint64_t fnv(std::uint64_t h, const std::uint8_t* p, std::size_t n) {
  for (std::size_t i = 0; i < n; ++i) h = (h ^ p[i]) * 0x100000001b3ull;
  return h;
}

// The tree as the reader sees it: every path with its mode, size and a hash
// of its contents.
Tree read_tree(BlockDevice& dev) {
  Tree t;
  auto v = Volume::open(dev);
  EXPECT_TRUE(v) << (v ? "" : v.error().to_string());
  if (!v) return t;
  Volume& vol = **v;
  std::vector<std::pair<std::string, nid_t>> todo{{"", disk::kRootIno}};
  std::vector<std::uint8_t> buf(1 << 20);
  while (!todo.empty()) {
    auto [path, ino] = todo.back();
    todo.pop_back();
    auto in = vol.read_inode(ino);
    EXPECT_TRUE(in) << path;
    if (!in) continue;
    FileSig s{in->mode, in->size, 0xcbf29ce484222325ull};
    if (in->is_dir()) {
      auto ents = vol.read_dir(*in);
      EXPECT_TRUE(ents) << path;
      if (ents)
        for (const auto& e : *ents)
          if (e.name != "." && e.name != "..") todo.push_back({path + "/" + e.name, e.ino});
    } else if (in->is_reg()) {
      for (std::uint64_t off = 0; off < in->size;) {
        auto n = vol.read(*in, off, buf);
        EXPECT_TRUE(n && *n > 0) << path;
        if (!n || *n == 0) break;
        s.hash = fnv(s.hash, buf.data(), *n);
        off += *n;
      }
    }
    t[path.empty() ? "/" : path] = s;
  }
  return t;
}

std::vector<std::string> our_fsck(BlockDevice& dev) {
  fsck::Options o;
  o.force = true;
  auto r = fsck::check(dev, o);
  if (!r) return {"fsck failed: " + r.error().to_string()};
  std::vector<std::string> out;
  for (const auto& p : r->problems) out.push_back(p.to_string());
  return out;
}

std::unique_ptr<BlockDevice> open_file(const fs::path& p) {
  OpenOptions oo;
  auto d = open_posix_device(p.string(), oo);
  EXPECT_TRUE(d) << (d ? "" : d.error().to_string());
  return d ? std::move(*d) : nullptr;
}

void format(BlockDevice& dev, std::uint64_t bytes = 0) {
  MkfsOptions o;
  o.wanted_sectors = bytes / 512;
  o.wanted_sector_size = 512;
  o.discard = false;
  o.timestamp = 1700000000;
  MkfsTarget t{&dev, ""};
  auto r = format_volume(std::span<const MkfsTarget>(&t, 1), o);
  ASSERT_TRUE(r) << r.error().to_string();
}

std::vector<std::uint8_t> pattern(std::uint64_t seed, std::size_t n) {
  std::vector<std::uint8_t> b(n);
  std::uint64_t x = seed * 0x9E3779B97F4A7C15ull + 1;
  for (std::size_t i = 0; i < n; ++i) {
    x ^= x << 13; x ^= x >> 7; x ^= x << 17;
    b[i] = static_cast<std::uint8_t>(x);
  }
  return b;
}

// Fills the volume to about `fraction` of its user blocks, spread over the
// whole main area: files written, every other one deleted, then big files
// written into the holes (so files cross any cut), a directory tree and
// small files with inline data too.
void fill(BlockDevice& dev, double fraction) {
  MountOptions mo;
  mo.checkpoint_interval_s = 0;
  mo.discard = false;
  mo.fixed_time = 1700000000;
  auto w = Writer::mount(dev, mo);
  ASSERT_TRUE(w) << w.error().to_string();
  auto v = Volume::open(dev);
  const std::uint64_t user = (*v)->checkpoint().user_block_count.get() * 4096;
  v->reset();
  ASSERT_TRUE((*w)->mkdir("/d"));
  ASSERT_TRUE((*w)->mkdir("/d/e"));
  for (int i = 0; i < 20; ++i) {
    auto ino = (*w)->create("/d/e/s" + std::to_string(i));
    ASSERT_TRUE(ino);
    auto b = pattern(1000 + i, 10 + i * 7);
    ASSERT_TRUE((*w)->write(*ino, 0, b));
  }
  if (fraction <= 0) {
    ASSERT_TRUE((*w)->unmount());
    return;
  }
  const std::size_t chunk = 4 * kMiB;
  const auto target = static_cast<std::uint64_t>(static_cast<double>(user) * fraction);
  // Spread: files over the whole area, then every other one removed.
  const std::uint64_t spread_files = (static_cast<std::uint64_t>(static_cast<double>(user) * 0.9)) / chunk;
  for (std::uint64_t i = 0; i < spread_files; ++i) {
    auto ino = (*w)->create("/spread" + std::to_string(i));
    ASSERT_TRUE(ino);
    auto b = pattern(i, chunk);
    auto n = (*w)->write(*ino, 0, b);
    ASSERT_TRUE(n) << n.error().to_string();
  }
  ASSERT_TRUE((*w)->sync());
  std::uint64_t used = 0;
  for (std::uint64_t i = 0; i < spread_files; ++i) {
    if (i % 2 == 0 || used + chunk > target) {
      ASSERT_TRUE((*w)->unlink("/spread" + std::to_string(i)));
    } else {
      used += chunk;
    }
  }
  ASSERT_TRUE((*w)->sync());
  // Big files into the holes.
  for (int f = 0; used + chunk <= target; ++f) {
    auto ino = (*w)->create("/d/big" + std::to_string(f));
    ASSERT_TRUE(ino);
    for (int k = 0; k < 8 && used + chunk <= target; ++k) {
      auto b = pattern(5000 + f * 8 + k, chunk);
      auto n = (*w)->write(*ino, static_cast<std::uint64_t>(k) * chunk, b);
      ASSERT_TRUE(n) << n.error().to_string();
      used += chunk;
    }
  }
  ASSERT_TRUE((*w)->unmount());
}

struct Layout {
  std::uint64_t block_count = 0;
  std::uint32_t segment_count = 0, main_segments = 0;
};

Layout layout(BlockDevice& dev) {
  auto v = Volume::open(dev);
  EXPECT_TRUE(v);
  if (!v) return {};
  const auto& sb = (*v)->superblock();
  return {sb.block_count.get(), sb.segment_count.get(), sb.segment_count_main.get()};
}

// The layout a size gives with the metadata areas kept: whole segments from
// segment0 (segs_per_zone 1 here), less the metadata segments.
Layout expected_layout(BlockDevice& dev, std::uint64_t bytes) {
  auto v = Volume::open(dev);
  const auto& sb = (*v)->superblock();
  Layout l;
  l.block_count = bytes / 4096;
  l.segment_count = static_cast<std::uint32_t>((l.block_count - sb.segment0_blkaddr.get()) / 512);
  const std::uint32_t meta = sb.segment_count_ckpt.get() + sb.segment_count_sit.get() + sb.segment_count_nat.get() +
                             sb.segment_count_ssa.get();
  l.main_segments = l.segment_count - meta;
  return l;
}

void expect_clean_file(const fs::path& img) {
  if (test::reference_tool("fsck.f2fs").empty()) {
    if (test::required("F2FS_TOOLS")) ADD_FAILURE() << "fsck.f2fs is required";
    return;
  }
  std::string out;
  auto probs = test::fsck_problems(img, &out);
  EXPECT_TRUE(probs.empty()) << out;
}

Status do_resize(BlockDevice& dev, std::uint64_t bytes, bool shrink) {
  ResizeOptions o;
  o.target_sectors = bytes / 512;
  o.shrink = shrink;
  auto r = resize_volume(dev, o);
  if (!r) return make_error(r.error());
  return {};
}

// One volume of `size` formatted at its full size, filled, shrunk to
// `small` and grown back; every step checked.
void shrink_and_grow(std::uint64_t size, std::uint64_t small, double fraction) {
  TempDir tmp;
  const fs::path img = tmp.path() / "v.img";
  test::make_sparse_file(img, size);
  auto dev = open_file(img);
  ASSERT_TRUE(dev);
  format(*dev);
  fill(*dev, fraction);
  if (testing::Test::HasFatalFailure()) return;
  const Tree before = read_tree(*dev);
  ASSERT_GT(before.size(), 20u);
  const Layout want_small = expected_layout(*dev, small);
  const Layout want_big = layout(*dev);

  auto st = do_resize(*dev, small, true);
  ASSERT_TRUE(st) << st.error().to_string();
  const Layout got = layout(*dev);
  EXPECT_EQ(got.block_count, want_small.block_count);
  EXPECT_EQ(got.segment_count, want_small.segment_count);
  EXPECT_EQ(got.main_segments, want_small.main_segments);
  EXPECT_EQ(read_tree(*dev), before);
  EXPECT_EQ(our_fsck(*dev), std::vector<std::string>{});
  expect_clean_file(img);

  st = do_resize(*dev, size, false);
  ASSERT_TRUE(st) << st.error().to_string();
  const Layout back = layout(*dev);
  EXPECT_EQ(back.block_count, want_big.block_count);
  EXPECT_EQ(back.main_segments, want_big.main_segments);
  EXPECT_EQ(read_tree(*dev), before);
  EXPECT_EQ(our_fsck(*dev), std::vector<std::string>{});
  expect_clean_file(img);
}

}  // namespace

TEST(Resize, EmptyShrinkAndGrow1GiB) { shrink_and_grow(1024 * kMiB, 600 * kMiB, 0); }

TEST(Resize, HalfFullShrinkAcrossData1GiB) { shrink_and_grow(1024 * kMiB, 760 * kMiB, 0.5); }

// 90% of the smaller size's user blocks: the data fills the shrunk volume.
TEST(Resize, NinetyPercentOfTheNewSize1GiB) { shrink_and_grow(1024 * kMiB, 768 * kMiB, 0.9 * 0.72); }

TEST(Resize, ShrinkBelowTheDataRefusedImageUnchanged) {
  TempDir tmp;
  const fs::path img = tmp.path() / "v.img", copy = tmp.path() / "c.img";
  test::make_sparse_file(img, 512 * kMiB);
  {
    auto dev = open_file(img);
    format(*dev);
    fill(*dev, 0.6);
  }
  fs::copy_file(img, copy);
  auto dev = open_file(img);
  ResizeOptions o;
  o.target_sectors = 256 * kMiB / 512;
  o.shrink = true;
  auto r = resize_volume(*dev, o);
  ASSERT_FALSE(r);
  EXPECT_EQ(r.error().code, Errc::no_space) << r.error().to_string();
  EXPECT_NE(r.error().message.find("does not fit"), std::string::npos) << r.error().message;
  // Without --shrink a smaller size is refused too.
  o.target_sectors = 480 * kMiB / 512;
  o.shrink = false;
  r = resize_volume(*dev, o);
  ASSERT_FALSE(r);
  EXPECT_EQ(r.error().code, Errc::invalid_argument);
  dev.reset();
  EXPECT_EQ(test::differing_blocks(img, copy), std::vector<std::uint64_t>{});
}

// mkfs sizes the SSA for its size: a grow past it moves the metadata areas.
// The layout and counts after it are those of a fresh format at the new
// size (mkfs.f2fs's rules, tests/mkfs_parity_test compares the two); the
// files were spread over the whole main area, its first segments included.
struct AreaLayout {
  std::uint32_t sit = 0, nat = 0, ssa = 0, main = 0;
  std::uint64_t nat_blkaddr = 0, ssa_blkaddr = 0, main_blkaddr = 0, block_count = 0;
  std::uint64_t user = 0;
  std::uint32_t rsvd = 0, ovp = 0;
  bool operator==(const AreaLayout&) const = default;
};

std::ostream& operator<<(std::ostream& os, const AreaLayout& a) {
  return os << "sit " << a.sit << " nat " << a.nat << " ssa " << a.ssa << " main " << a.main << " @" << a.main_blkaddr
            << " blocks " << a.block_count << " user " << a.user << " rsvd " << a.rsvd << " ovp " << a.ovp;
}

AreaLayout area_layout(BlockDevice& dev) {
  auto v = Volume::open(dev);
  EXPECT_TRUE(v) << (v ? "" : v.error().to_string());
  if (!v) return {};
  const auto& sb = (*v)->superblock();
  const auto& cp = (*v)->checkpoint();
  return {sb.segment_count_sit.get(), sb.segment_count_nat.get(), sb.segment_count_ssa.get(),
          sb.segment_count_main.get(), sb.nat_blkaddr.get(), sb.ssa_blkaddr.get(), sb.main_blkaddr.get(),
          sb.block_count.get(), cp.user_block_count.get(), cp.rsvd_segment_count.get(),
          cp.overprov_segment_count.get()};
}

// A sparse file of `big` bytes formatted to `small` and filled to
// `fraction`, then grown to `big`: the metadata areas move, and the result
// has the layout of a fresh format of `big` bytes, the same tree, and both
// checkers find it clean. `old` and `want` get the layouts before and
// expected; the report is returned for further checks.
ResizeReport expect_moving_grow(std::uint64_t small, std::uint64_t big, double fraction, AreaLayout& old,
                                AreaLayout& want) {
  TempDir tmp;
  const fs::path img = tmp.path() / "v.img", ref = tmp.path() / "r.img";
  test::make_sparse_file(ref, big);
  {
    auto d = open_file(ref);
    format(*d);
    want = area_layout(*d);
  }
  fs::remove(ref);
  test::make_sparse_file(img, big);
  auto dev = open_file(img);
  format(*dev, small);
  fill(*dev, fraction);
  if (testing::Test::HasFatalFailure()) return {};
  const Tree before = read_tree(*dev);
  old = area_layout(*dev);
  auto r = resize_volume(*dev, ResizeOptions{});
  EXPECT_TRUE(r) << r.error().to_string();
  if (!r) return {};
  EXPECT_TRUE(r->plan.moves_metadata);
  EXPECT_EQ(area_layout(*dev), want);
  EXPECT_EQ(read_tree(*dev), before);
  EXPECT_EQ(our_fsck(*dev), std::vector<std::string>{});
  dev.reset();
  expect_clean_file(img);
  return *r;
}

TEST(Resize, GrowPastTheSsaAreaMovesTheMetadata) {
  AreaLayout old, want;
  const ResizeReport r = expect_moving_grow(1024 * kMiB, 3072 * kMiB, 0.3, old, want);
  EXPECT_LT(old.ssa, want.ssa);
  EXPECT_EQ(r.plan.front_segments, (want.main_blkaddr - old.main_blkaddr) / 512);
  EXPECT_GT(r.blocks_moved, 0u);
}

// mkfs's rule gives 64 GiB a NAT of 2 x 58 segments and 128 GiB one of
// 2 x 57: the NAT version bitmap shares the CP block's 3,901 bitmap bytes
// with the SIT's (2 x 64 -> 3 x 64 bytes a SIT copy's segment), and
// (3901 - 128) x 8 / 512 = 58, (3901 - 192) x 8 / 512 = 57. A grow from 64
// to 128 GiB moves the metadata and cuts the NAT's last 512 blocks, whose
// nids are free.
TEST(Resize, MovingGrowToASmallerNatCutsFreeNids) {
  constexpr std::uint64_t kGiB = 1024 * kMiB;
  AreaLayout old, want;
  expect_moving_grow(64 * kGiB, 128 * kGiB, 0, old, want);
  EXPECT_EQ(old.nat, 116u);
  EXPECT_EQ(want.nat, 114u);
}

// The same grow with a nid past the new NAT in use (a NAT entry written in
// the block the grow would cut): refused naming the nid, nothing written.
TEST(Resize, MovingGrowRefusedWhenANidPastTheNewNatIsInUse) {
  constexpr std::uint64_t kGiB = 1024 * kMiB;
  TempDir tmp;
  const fs::path img = tmp.path() / "v.img";
  test::make_sparse_file(img, 128 * kGiB);
  constexpr std::uint32_t kFirstCutBlock = 57 * 512;  // the 128 GiB NAT's blocks a copy
  const std::uint64_t nid = static_cast<std::uint64_t>(kFirstCutBlock) * 455 + 7;
  {
    auto dev = open_file(img);
    format(*dev, 64 * kGiB);
    auto v = Volume::open(*dev);
    ASSERT_TRUE(v) << v.error().to_string();
    const std::uint64_t addr = (*v)->geometry().current_nat_addr(kFirstCutBlock, (*v)->version_bitmaps());
    const std::uint64_t main0 = (*v)->main_blkaddr();
    v->reset();
    std::vector<std::uint8_t> b(4096);
    ASSERT_TRUE(read_at(*dev, addr * 4096, b));
    auto* e = &reinterpret_cast<disk::NatBlock*>(b.data())->entries[7];
    e->ino.set(static_cast<std::uint32_t>(nid));
    e->block_addr.set(static_cast<std::uint32_t>(main0 + 100));
    ASSERT_TRUE(write_at(*dev, addr * 4096, b));
  }
  FaultPlan count;
  count.ops = io_op_bit(IoOp::write);
  FaultDevice probe(open_file(img), count);
  auto r = resize_volume(probe, ResizeOptions{});
  ASSERT_FALSE(r);
  EXPECT_EQ(r.error().code, Errc::unsupported) << r.error().to_string();
  EXPECT_NE(r.error().message.find("nid " + std::to_string(nid) + " is in use"), std::string::npos)
      << r.error().message;
  EXPECT_EQ(probe.counted(), 0u) << "writes before the refusal";
}

namespace {

// The 64 KiB chunks of a sparse memory device that hold data.
using Chunks = std::vector<std::pair<std::uint64_t, std::vector<std::uint8_t>>>;
Chunks snapshot(BlockDevice& d) {
  constexpr std::size_t kChunk = 64 * 1024;
  static const std::vector<std::uint8_t> zero(kChunk);
  Chunks c;
  std::vector<std::uint8_t> b(kChunk);
  for (std::uint64_t off = 0; off < d.info().size_bytes; off += kChunk) {
    EXPECT_TRUE(read_at(d, off, b));
    if (std::memcmp(b.data(), zero.data(), kChunk) != 0) c.push_back({off, b});
  }
  return c;
}

std::unique_ptr<BlockDevice> restore(const Chunks& c, std::uint64_t size) {
  auto d = make_memory_device(size);
  for (const auto& [off, b] : c) EXPECT_TRUE(write_at(*d, off, b));
  return d;
}

// A memory device of `big` bytes holding a volume of `small` bytes with a
// few files: its tree, its chunks and its layout.
struct GrowBase {
  Tree before;
  Chunks image;
  AreaLayout old;
};
GrowBase moving_grow_base(std::uint64_t small, std::uint64_t big) {
  auto base = make_memory_device(big);
  format(*base, small);
  fill(*base, 0);
  if (testing::Test::HasFatalFailure()) return {};
  return {read_tree(*base), snapshot(*base), area_layout(*base)};
}

}  // namespace

// A power cut at every write of a grow that moves the metadata areas: the
// volume is the old one (our fsck clean but for a superblock copy written
// invalid), the new one (clean but for superblock copy 0), or a staged
// state no checker can open, which interrupted_resize() names; a rerun of
// resize_volume() then gives the new volume with the same tree, clean.
TEST(Resize, PowerCutAtEveryWriteOfAMovingGrow) {
  const std::uint64_t small = 1024 * kMiB, big = 1152 * kMiB;
  const GrowBase g = moving_grow_base(small, big);
  ASSERT_FALSE(testing::Test::HasFatalFailure());
  const Tree& before = g.before;
  const Chunks& image = g.image;
  const AreaLayout& old = g.old;
  FaultPlan count;
  count.ops = io_op_bit(IoOp::write);
  FaultDevice probe(restore(image, big), count);
  auto full = resize_volume(probe, ResizeOptions{});
  ASSERT_TRUE(full) << full.error().to_string();
  ASSERT_TRUE(full->plan.moves_metadata);
  const AreaLayout grown = area_layout(probe);
  ASSERT_NE(grown.main_blkaddr, old.main_blkaddr);
  const std::uint64_t writes = probe.counted();
  std::printf("moving grow: %llu writes\n", static_cast<unsigned long long>(writes));
  std::fflush(stdout);
  std::uint64_t old_seen = 0, new_seen = 0, staged_seen = 0;
  for (std::uint64_t n = 0; n < writes; ++n) {
    FaultPlan p;
    p.ops = io_op_bit(IoOp::write);
    p.fail_after = n;
    p.drop_unflushed = true;
    FaultDevice fd(restore(image, big), p);
    EXPECT_FALSE(resize_volume(fd, ResizeOptions{})) << "cut at write " << n;
    fd.power_cut();
    BlockDevice& d = fd.inner();
    auto staged = interrupted_resize(d);
    ASSERT_TRUE(staged);
    if (!staged->empty()) {
      ++staged_seen;
      EXPECT_FALSE(Volume::open(d)) << "cut at write " << n << ": a staged state opens";
      EXPECT_NE(staged->find("f2fscore-resize"), std::string::npos) << *staged;
    } else {
      const AreaLayout at = area_layout(d);
      ASSERT_TRUE(at.main_blkaddr == old.main_blkaddr || at == grown) << "cut at write " << n << ": " << at;
      (at.main_blkaddr == old.main_blkaddr ? old_seen : new_seen)++;
      EXPECT_EQ(read_tree(d), before) << "cut at write " << n;
      for (const auto& s : our_fsck(d))
        EXPECT_TRUE(s.rfind("[CP_PACK_BAD]", 0) == 0 || s.rfind("[SB_BACKUP_BAD]", 0) == 0 ||
                    s.rfind("[SB_PRIMARY_BAD]", 0) == 0)
            << "cut at write " << n << ": " << s;
    }
    // The rerun completes (or redoes) the grow. A cut inside the GC moves
    // leaves the writer's last checkpoint, not an unmount one: mounted and
    // unmounted first, as the refusal asks.
    auto again = resize_volume(d, ResizeOptions{});
    if (!again && again.error().message.find("not cleanly unmounted") != std::string::npos) {
      MountOptions mo;
      mo.checkpoint_interval_s = 0;
      mo.discard = false;
      auto w = Writer::mount(d, mo);
      ASSERT_TRUE(w) << w.error().to_string();
      ASSERT_TRUE((*w)->unmount());
      again = resize_volume(d, ResizeOptions{});
    }
    ASSERT_TRUE(again) << "rerun after the cut at write " << n << ": " << again.error().to_string();
    EXPECT_EQ(area_layout(d), grown) << "rerun after the cut at write " << n;
    EXPECT_EQ(read_tree(d), before) << "rerun after the cut at write " << n;
    EXPECT_EQ(our_fsck(d), std::vector<std::string>{}) << "rerun after the cut at write " << n;
  }
  std::printf("cuts: %llu old, %llu staged, %llu new\n", static_cast<unsigned long long>(old_seen),
              static_cast<unsigned long long>(staged_seen), static_cast<unsigned long long>(new_seen));
  EXPECT_GT(old_seen, 0u);
  EXPECT_GT(staged_seen, 0u);
}

// A power cut at every write of a shrink over data and of the grow back:
// the volume is the old or the new one, with the same tree, and our fsck
// finds it clean except, between the checkpoint and the superblocks, the
// free segment count of the other size, which a rerun of the resize with
// the same size fixes.
TEST(Resize, PowerCutAtEveryWrite) {
  const std::uint64_t big = 96 * kMiB, small = 72 * kMiB;
  auto base = make_memory_device(big);
  format(*base);
  fill(*base, 0.35);
  ASSERT_FALSE(testing::Test::HasFatalFailure());
  const Tree before = read_tree(*base);
  // Copies of the base image.
  std::vector<std::uint8_t> image(big);
  ASSERT_TRUE(read_at(*base, 0, image));
  // Only the chunks holding data are copied (the memory device is sparse).
  auto fresh = [&](const std::vector<std::uint8_t>& from) {
    auto d = make_memory_device(big);
    constexpr std::size_t kChunk = 64 * 1024;
    static const std::vector<std::uint8_t> zero(kChunk);
    for (std::size_t off = 0; off < from.size(); off += kChunk) {
      std::span<const std::uint8_t> c(from.data() + off, kChunk);
      if (std::memcmp(c.data(), zero.data(), kChunk) != 0) EXPECT_TRUE(write_at(*d, off, c));
    }
    return d;
  };
  for (int phase = 0; phase < 2; ++phase) {
    const bool shrink = phase == 0;
    const std::uint64_t to = shrink ? small : big;
    // Count the writes of an uninterrupted run, and keep its result.
    FaultPlan count;
    count.ops = io_op_bit(IoOp::write);
    FaultDevice probe(fresh(image), count);
    ASSERT_TRUE(do_resize(probe, to, shrink));
    const std::uint64_t writes = probe.counted();
    const std::uint32_t new_main = layout(probe).main_segments;
    ASSERT_NE(new_main, layout(*fresh(image)).main_segments);
    ASSERT_GT(writes, 3u);
    std::printf("%s: %llu writes\n", shrink ? "shrink" : "grow", static_cast<unsigned long long>(writes));
    std::fflush(stdout);
    std::uint64_t old_seen = 0, new_seen = 0, window = 0;
    // Every write of the resize's own part (the rebuild's checkpoint, the
    // superblocks, the new pack: the last writes); in the GC moves before
    // them (the writer's checkpoints, whose cuts tests/writer covers), every
    // step-th.
    const std::uint64_t tail = std::min<std::uint64_t>(writes, 96);
    const std::uint64_t step = std::max<std::uint64_t>(1, (writes - tail) / 24);
    std::vector<std::uint64_t> cuts;
    for (std::uint64_t n = 0; n < writes - tail; n += step) cuts.push_back(n);
    for (std::uint64_t n = writes - tail; n < writes; ++n) cuts.push_back(n);
    const std::uint32_t old_main_segs = layout(*fresh(image)).main_segments;
    for (std::uint64_t n : cuts) {
      FaultPlan p;
      p.ops = io_op_bit(IoOp::write);
      p.fail_after = n;
      p.drop_unflushed = true;
      FaultDevice fd(fresh(image), p);
      EXPECT_FALSE(do_resize(fd, to, shrink)) << "cut at write " << n;
      fd.power_cut();
      BlockDevice& d = fd.inner();
      const std::uint32_t m = layout(d).main_segments;
      ASSERT_TRUE(m == new_main || m == old_main_segs) << "cut at write " << n << ": " << m;
      EXPECT_EQ(read_tree(d), before) << "cut at write " << n;
      // What a cut may leave besides the old or new volume: a torn pack
      // (the other pack is the valid one), superblock copy 1 ahead of copy 0
      // (a cut between the two), and in the window between the superblocks
      // and the pack the other size's free segment count (docs/resize.md).
      auto probs = our_fsck(d);
      bool in_window = false;
      for (const auto& s : probs) {
        const bool allowed = s.rfind("[CP_PACK_BAD]", 0) == 0 || s.rfind("[SB_BACKUP_BAD]", 0) == 0 ||
                             s.rfind("[CP_FREE_SEGMENT_COUNT]", 0) == 0;
        EXPECT_TRUE(allowed) << "cut at write " << n << ": " << s;
        in_window = in_window || s.rfind("[CP_FREE_SEGMENT_COUNT]", 0) == 0;
      }
      window += in_window;
      (m == new_main ? new_seen : old_seen)++;
      if (in_window) {
        // A rerun with the same size closes the window: a pack with this
        // size's counts.
        auto st = do_resize(d, to, shrink);
        ASSERT_TRUE(st) << "rerun after the cut at write " << n << ": " << st.error().to_string();
        EXPECT_EQ(layout(d).main_segments, new_main) << "rerun after the cut at write " << n;
        EXPECT_EQ(our_fsck(d), std::vector<std::string>{}) << "rerun after the cut at write " << n;
        EXPECT_EQ(read_tree(d), before) << "rerun after the cut at write " << n;
      }
    }
    EXPECT_GT(old_seen, 0u);
    EXPECT_LE(window, 4u) << "cuts leaving the other size's free segment count";
    std::printf("%s: %llu cuts in the window, each completed by a rerun\n", shrink ? "shrink" : "grow",
                static_cast<unsigned long long>(window));
    // The next phase starts from the completed result.
    ASSERT_TRUE(read_at(probe.inner(), 0, image));
    EXPECT_EQ(read_tree(probe.inner()), before);
  }
}

namespace {

struct CpCounts {
  std::uint64_t user_block_count = 0;
  std::uint32_t reserved = 0, overprov = 0, main_blkaddr = 0;
  bool operator==(const CpCounts&) const = default;
};

std::ostream& operator<<(std::ostream& os, const CpCounts& c) {
  return os << "user " << c.user_block_count << " rsvd " << c.reserved << " ovp " << c.overprov << " main@"
            << c.main_blkaddr;
}

CpCounts cp_counts(const fs::path& img) {
  auto dev = open_file(img);
  if (!dev) return {};
  auto v = Volume::open(*dev);
  EXPECT_TRUE(v) << (v ? "" : v.error().to_string());
  if (!v) return {};
  const auto& cp = (*v)->checkpoint();
  return {cp.user_block_count.get(), cp.rsvd_segment_count.get(), cp.overprov_segment_count.get(),
          (*v)->superblock().main_blkaddr.get()};
}

// mkfs.f2fs -s 3 -z 3 on a file of `mib` MiB.
bool reference_mkfs(const fs::path& img, std::uint64_t mib) {
  test::make_sparse_file(img, mib * kMiB);
  auto r = test::run(test::reference_tool("mkfs.f2fs") + " -q -f -s 3 -z 3 " + test::shell_quote(img.string()));
  EXPECT_EQ(r.exit_code, 0) << r.output;
  return r.exit_code == 0;
}

}  // namespace

// The reserved, overprovision and user blocks after a resize are what
// mkfs.f2fs writes for a device of that size (sections of 3 segments, zones
// of 3 sections: the average segments a section enters the rule): a
// mkfs.f2fs image of 1 GiB shrunk to 512, 300 and 760 MiB and grown back,
// each result compared with mkfs.f2fs run at that size.
TEST(Resize, CountsMatchMkfsF2fsOfTheSameSize) {
  if (test::reference_tool("mkfs.f2fs").empty()) {
    if (test::required("F2FS_TOOLS")) ADD_FAILURE() << "mkfs.f2fs is required";
    GTEST_SKIP() << "mkfs.f2fs not installed";
  }
  TempDir tmp;
  const fs::path img = tmp.path() / "v.img", ref = tmp.path() / "r.img";
  ASSERT_TRUE(reference_mkfs(img, 1024));
  const CpCounts full = cp_counts(img);
  for (std::uint64_t mib : {512u, 300u, 760u}) {
    ASSERT_TRUE(reference_mkfs(ref, mib));
    const CpCounts want = cp_counts(ref);
    // Same metadata zones at both sizes, so a fresh mkfs is the reference.
    ASSERT_EQ(want.main_blkaddr, full.main_blkaddr) << mib << " MiB";
    {
      auto dev = open_file(img);
      auto st = do_resize(*dev, mib * kMiB, true);
      ASSERT_TRUE(st) << st.error().to_string();
    }
    EXPECT_EQ(cp_counts(img), want) << "shrunk to " << mib << " MiB";
    expect_clean_file(img);
    {
      auto dev = open_file(img);
      auto st = do_resize(*dev, 1024 * kMiB, false);
      ASSERT_TRUE(st) << st.error().to_string();
    }
    EXPECT_EQ(cp_counts(img), full) << "grown back from " << mib << " MiB";
    expect_clean_file(img);
  }
}

// A truncated image: fitted to the device (a shrink) when the lost tail held
// nothing; refused, the image unchanged, when blocks in use were past the
// device's end; a shrink without --shrink refused naming the truncation.
TEST(Resize, TruncatedImageFittedWhenTheLostTailIsFree) {
  TempDir tmp;
  const fs::path img = tmp.path() / "v.img", copy = tmp.path() / "c.img";
  test::make_sparse_file(img, 256 * kMiB);
  {
    auto dev = open_file(img);
    format(*dev);
    fill(*dev, 0);
  }
  if (testing::Test::HasFatalFailure()) return;
  Tree before;
  {
    auto dev = open_file(img);
    before = read_tree(*dev);
  }
  fs::resize_file(img, 200 * kMiB + 4096 * 3);
  auto dev = open_file(img);
  ResizeOptions o;
  auto r = resize_volume(*dev, o);
  ASSERT_FALSE(r);
  EXPECT_EQ(r.error().code, Errc::invalid_argument);
  EXPECT_NE(r.error().message.find("truncated image"), std::string::npos) << r.error().message;
  o.shrink = true;
  r = resize_volume(*dev, o);
  ASSERT_TRUE(r) << r.error().to_string();
  // Whole segments from segment0 (one segment a zone), less the metadata.
  const Layout want = expected_layout(*dev, 200 * kMiB + 4096 * 3);
  const Layout got = layout(*dev);
  EXPECT_EQ(got.block_count, want.block_count);
  EXPECT_EQ(got.main_segments, want.main_segments);
  EXPECT_EQ(read_tree(*dev), before);
  EXPECT_EQ(our_fsck(*dev), std::vector<std::string>{});
  dev.reset();
  expect_clean_file(img);

  // Blocks in use past the end: refused, nothing written.
  test::make_sparse_file(img, 256 * kMiB);
  {
    auto d = open_file(img);
    format(*d);
    fill(*d, 0.8);
  }
  if (testing::Test::HasFatalFailure()) return;
  fs::resize_file(img, 128 * kMiB);
  fs::copy_file(img, copy, fs::copy_options::overwrite_existing);
  dev = open_file(img);
  r = resize_volume(*dev, o);
  ASSERT_FALSE(r);
  EXPECT_EQ(r.error().code, Errc::corrupt) << r.error().to_string();
  EXPECT_NE(r.error().message.find("past its end"), std::string::npos) << r.error().message;
  dev.reset();
  EXPECT_EQ(test::differing_blocks(img, copy), std::vector<std::uint64_t>{});
}

#ifdef F2FSCORE_RESIZE_TOOL
// f2fscore-resize on a moving grow cut in its copy (no valid superblock):
// a dry run names the state and writes nothing; -t with another size and
// --json completes the recorded grow, says so in the JSON object
// (finished_interrupted, the recorded sizes), and leaves the grown volume
// with the same tree, clean under both checkers; a rerun with that -t then
// resizes as asked.
TEST(Resize, ToolCompletesAnInterruptedMovingGrow) {
  const std::uint64_t small = 1024 * kMiB, big = 1152 * kMiB;
  const GrowBase g = moving_grow_base(small, big);
  ASSERT_FALSE(testing::Test::HasFatalFailure());
  const Tree& before = g.before;
  const Chunks& image = g.image;
  FaultPlan count;
  count.ops = io_op_bit(IoOp::write);
  FaultDevice probe(restore(image, big), count);
  ASSERT_TRUE(resize_volume(probe, ResizeOptions{}));
  const AreaLayout grown = area_layout(probe);
  const std::uint64_t writes = probe.counted();
  // The first cut that leaves the staged state.
  Chunks staged;
  for (std::uint64_t n = 0; n < writes && staged.empty(); ++n) {
    FaultPlan p;
    p.ops = io_op_bit(IoOp::write);
    p.fail_after = n;
    p.drop_unflushed = true;
    FaultDevice fd(restore(image, big), p);
    ASSERT_FALSE(resize_volume(fd, ResizeOptions{}));
    fd.power_cut();
    auto s = interrupted_resize(fd.inner());
    ASSERT_TRUE(s);
    if (!s->empty()) staged = snapshot(fd.inner());
  }
  ASSERT_FALSE(staged.empty()) << "no cut of " << writes << " writes left the staged state";
  TempDir tmp;
  const fs::path img = tmp.path() / "v.img", copy = tmp.path() / "copy.img";
  test::make_sparse_file(img, big);
  {
    auto d = open_file(img);
    for (const auto& [off, b] : staged) ASSERT_TRUE(write_at(*d, off, b));
  }
  ASSERT_TRUE(fs::copy_file(img, copy));
  const std::string tool = F2FSCORE_RESIZE_TOOL;
  const std::string q = test::shell_quote(img.string());

  auto dry = test::run(tool + " -n " + q);
  EXPECT_EQ(dry.exit_code, 1) << dry.output;
  EXPECT_NE(dry.output.find("interrupted"), std::string::npos) << dry.output;
  // f2fscore-dump names the state too.
  auto info = test::run(std::string(F2FSCORE_DUMP_TOOL) + " " + q + " info");
  EXPECT_EQ(info.exit_code, 1) << info.output;
  EXPECT_NE(info.output.find("interrupted"), std::string::npos) << info.output;
  EXPECT_EQ(test::differing_blocks(img, copy), std::vector<std::uint64_t>{});

  const std::uint64_t other = (small + 64 * kMiB) / 512;
  // In text, the completing run says that -t was not applied.
  const fs::path text_img = tmp.path() / "text.img";
  ASSERT_TRUE(fs::copy_file(copy, text_img));
  auto t = test::run(tool + " -t " + std::to_string(other) + " " + test::shell_quote(text_img.string()));
  EXPECT_EQ(t.exit_code, 0) << t.output;
  EXPECT_NE(t.output.find("completed an interrupted resize"), std::string::npos) << t.output;
  EXPECT_NE(t.output.find("-t " + std::to_string(other) + " was not applied"), std::string::npos) << t.output;

  auto r = test::run(tool + " --json -t " + std::to_string(other) + " " + q);
  ASSERT_EQ(r.exit_code, 0) << r.output;
  const auto j = nlohmann::json::parse(r.output, nullptr, false);
  ASSERT_FALSE(j.is_discarded()) << r.output;
  EXPECT_EQ(j.value("finished_interrupted", false), true) << r.output;
  EXPECT_EQ(j.value("resized", false), true) << r.output;
  ASSERT_TRUE(j.contains("old") && j.contains("new")) << r.output;
  EXPECT_EQ(j["old"].value("block_count", 0ull), small / 4096) << r.output;
  EXPECT_EQ(j["new"].value("block_count", 0ull), big / 4096) << r.output;
  {
    auto d = open_file(img);
    EXPECT_EQ(area_layout(*d), grown);
    EXPECT_EQ(read_tree(*d), before);
    EXPECT_EQ(our_fsck(*d), std::vector<std::string>{});
  }
  expect_clean_file(img);

  auto again = test::run(tool + " -s -t " + std::to_string(other) + " " + q);
  EXPECT_EQ(again.exit_code, 0) << again.output;
  EXPECT_NE(again.output.find("resized"), std::string::npos) << again.output;
  auto d = open_file(img);
  EXPECT_EQ(layout(*d).block_count, other * 512 / 4096);
  EXPECT_EQ(read_tree(*d), before);
  EXPECT_EQ(our_fsck(*d), std::vector<std::string>{});
}
#endif
