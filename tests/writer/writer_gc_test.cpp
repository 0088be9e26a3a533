// Space reclaim (docs/gc.md): SSR, foreground and background GC, victim
// selection, "no space" only when user_block_count is used up, fill and
// churn. The unit build (label unit: no threads, no host tools) runs small
// volumes; the interop build (WRITER_WITH_FSCK) adds fsck.f2fs -f after every
// unmount and the 256 MiB / 1 GiB churns; WriterGcOracle.DISABLED_* write
// images for writer_gc_linux.sh.
#include <gtest/gtest.h>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <functional>
#include <map>
#include <random>
#include <thread>

#include "f2fscore/fault_device.hpp"
#include "f2fscore/fsck.hpp"
#include "f2fscore/writer.hpp"
#include "meta/meta_test_util.hpp"
#include "writer/writer_test_util.hpp"
#include "support/sparse_image.hpp"

namespace {

using namespace metatest;

constexpr std::uint32_t kFeatures = kRichFeatures;

using Model = std::map<std::string, std::string>;  // file path -> contents (directories: the root only)

std::span<const std::uint8_t> bytes(const std::string& s) {
  return {reinterpret_cast<const std::uint8_t*>(s.data()), s.size()};
}

// Every regular file our reader finds, with its contents.
Model read_files(Volume& v) {
  Model m;
  std::function<void(nid_t, const std::string&)> walk = [&](nid_t ino, const std::string& path) {
    auto in = v.read_inode(ino);
    if (!in) {
      m[path] = "INODE-ERROR";
      return;
    }
    if (in->is_dir()) {
      auto es = v.read_dir(*in);
      if (!es) {
        m[path + "/"] = "DIR-ERROR";
        return;
      }
      for (const auto& e : *es)
        if (e.name != "." && e.name != ".." && !(path.empty() && e.name == "lost+found")) walk(e.ino, path + "/" + e.name);
      return;
    }
    std::string s(in->size, '\0');
    auto n = v.read(*in, 0, std::span<std::uint8_t>(reinterpret_cast<std::uint8_t*>(s.data()), s.size()));
    m[path] = (!n || *n != s.size()) ? "READ-ERROR" : s;
  };
  walk(v.superblock().root_ino.get(), "");
  return m;
}

std::string diff(const Model& want, const Model& got) {
  std::string out;
  for (const auto& [p, d] : want) {
    auto it = got.find(p);
    if (it == got.end()) out += "missing " + p + "\n";
    else if (it->second != d) out += "differs " + p + "\n";
  }
  for (const auto& [p, d] : got)
    if (!want.count(p)) out += "extra " + p + "\n";
  return out.substr(0, 2000);
}

// Our reader sees `model`; our checker (check-only) and, in the interop
// build, fsck.f2fs -f on a copy find nothing.
void check_image(BlockDevice& dev, const Model& model, const std::string& what, bool unmounted = true,
                 bool allow_torn_pack = false) {
  auto v = Volume::open(dev);
  ASSERT_TRUE(v) << what << ": " << v.error().to_string();
  if (unmounted) EXPECT_TRUE((*v)->open_report().clean_unmount) << what;
  EXPECT_EQ(diff(model, read_files(**v)), "") << what;
  v->reset();
  writertest::check_clean(dev, what, allow_torn_pack);
}

// Linux picks ipu_policy FORCE|HONOR_OPU_WRITE (0x81) on volumes of 16 GiB
// or less: every overwrite would stay in place and never need a new block.
// These tests want out-of-place overwrites (the default above 16 GiB,
// F2FS_IPU_FSYNC), so that overwrites consume space as on large volumes.
MountOptions opts(std::uint64_t fixed_time = 0) {
  MountOptions mo;
  mo.fixed_time = fixed_time;
  mo.ipu.ipu_policy = ipu_bit::fsync;
  return mo;
}

std::string pattern(std::uint32_t tag, std::size_t len) {
  std::string s(len, '\0');
  std::uint32_t x = tag * 2654435761u + 1;
  for (std::size_t i = 0; i < len; ++i) {
    x = x * 1103515245u + 12345u;
    s[i] = static_cast<char>(x >> 24);
  }
  return s;
}

struct Geometry {
  std::uint64_t user_block_count = 0, valid_block_count = 0;
  std::uint32_t main_segs = 0, ovp_segs = 0, rsvd_segs = 0;
};
Geometry geometry(BlockDevice& dev) {
  Geometry g;
  auto v = Volume::open(dev);
  if (!v) {
    ADD_FAILURE() << v.error().to_string();
    return g;
  }
  const auto& cp = (*v)->checkpoint();
  g.user_block_count = cp.user_block_count.get();
  g.valid_block_count = cp.valid_block_count.get();
  g.main_segs = (*v)->superblock().segment_count_main.get();
  g.ovp_segs = cp.overprov_segment_count.get();
  g.rsvd_segs = cp.rsvd_segment_count.get();
  return g;
}

// Fills the volume with files of `file_bytes` until `target` 4 KiB blocks
// are in use (valid_block_count as the checkpoint counts: data + nodes).
void fill(Writer& w, Model& m, std::uint64_t target_blocks, std::size_t file_bytes, std::uint32_t seed) {
  std::mt19937 rng(seed);
  for (int f = 0;; ++f) {
    // Each file: its inode, its data blocks, a dnode past 923 addresses.
    const std::uint64_t blocks_now = m.size() + 2;
    std::uint64_t data_blocks = 0;
    for (const auto& [p, d] : m) data_blocks += (d.size() + 4095) / 4096;
    if (blocks_now + data_blocks + file_bytes / 4096 + 2 > target_blocks) break;
    const std::string p = "/d" + std::to_string(f % 8) + "/f" + std::to_string(f);
    if (f < 8) ASSERT_TRUE(w.mkdir("/d" + std::to_string(f)));
    auto ino = w.create(p);
    ASSERT_TRUE(ino) << p << ": " << ino.error().to_string();
    const std::string d = pattern(seed * 100000 + static_cast<std::uint32_t>(f), file_bytes);
    auto r = w.write(*ino, 0, bytes(d));
    ASSERT_TRUE(r) << p << ": " << r.error().to_string();
    m[p] = d;
    (void)rng;
  }
  // Out of the page cache and committed: later overwrites and truncations
  // leave holes in written segments.
  ASSERT_TRUE(w.sync());
}

// Random overwrites inside existing files (no new blocks): `blocks` 4 KiB
// blocks in runs of 1..16 blocks.
void churn(Writer& w, Model& m, std::uint64_t blocks, std::uint32_t seed) {
  std::mt19937 rng(seed);
  std::vector<std::string> paths;
  for (const auto& [p, d] : m)
    if (d.size() >= 4096) paths.push_back(p);
  ASSERT_FALSE(paths.empty());
  std::map<std::string, nid_t> inos;
  for (std::uint64_t done = 0; done < blocks;) {
    const std::string& p = paths[rng() % paths.size()];
    std::string& d = m[p];
    const std::uint64_t nblk = d.size() / 4096;
    const std::uint64_t run = std::min<std::uint64_t>(nblk, 1 + rng() % 16);
    const std::uint64_t first = rng() % (nblk - run + 1);
    const std::string data = pattern(static_cast<std::uint32_t>(rng()), run * 4096);
    auto it = inos.find(p);
    if (it == inos.end()) {
      auto ino = w.lookup(p);
      ASSERT_TRUE(ino) << p;
      it = inos.emplace(p, *ino).first;
    }
    auto r = w.write(it->second, first * 4096, bytes(data));
    ASSERT_TRUE(r) << "churn after " << done << " blocks, " << p << ": " << r.error().to_string();
    d.replace(first * 4096, run * 4096, data);
    done += run;
  }
}

// ---- "No space" only when user_block_count is used up -------------------------------

// The kernel refuses a new block when valid_block_count (data, nodes and
// NEW_ADDR reservations) would pass user_block_count
// (inc_valid_block_count() / inc_valid_node_count() in fs/f2fs/f2fs.h; no
// root reservation by default). user_block_count already leaves out the
// overprovision segments (which hold the GC reserve): mkfs computes it as
// (segment_count_main - overprov_segment_count) * 512. So a volume filled
// until no_space holds exactly user_block_count blocks.
void fill_until_no_space(std::uint64_t volume_bytes, std::uint32_t segs_per_sec) {
  auto dev = our_mkfs(volume_bytes, kFeatures, segs_per_sec);
  ASSERT_TRUE(dev);
  const Geometry g0 = geometry(*dev);
  ASSERT_EQ(g0.user_block_count, (static_cast<std::uint64_t>(g0.main_segs) - g0.ovp_segs) * 512u)
      << "user_block_count as mkfs computes it";
  Model m;
  {
    auto w = Writer::mount(*dev, opts(1700000100));
    ASSERT_TRUE(w);
    Error last{};
    bool full = false;
    for (int f = 0; !full && f < 10000; ++f) {
      const std::string p = "/fill" + std::to_string(f);
      auto ino = (*w)->create(p);
      if (!ino) {
        last = ino.error();
        break;
      }
      m[p] = "";
      for (int k = 0; k < 4; ++k) {
        const std::string chunk = pattern(static_cast<std::uint32_t>(f * 4 + k), 1u << 20);
        auto r = (*w)->write(*ino, static_cast<std::uint64_t>(k) << 20, bytes(chunk));
        if (!r) {
          last = r.error();
          full = true;
          break;
        }
        m[p] += chunk;
      }
    }
    ASSERT_EQ(last.code, Errc::no_space) << last.to_string();
    // Overwriting a written block needs no new block: it still works, GC
    // making the room (the overprovision space).
    auto ino = (*w)->lookup("/fill0");
    ASSERT_TRUE(ino);
    const std::string again = pattern(777, 256u << 10);
    auto r = (*w)->write(*ino, 4096, bytes(again));
    ASSERT_TRUE(r) << "overwrite on a full volume: " << r.error().to_string();
    m["/fill0"].replace(4096, again.size(), again);
    auto u = (*w)->unmount();
    ASSERT_OK(u);
    EXPECT_GT((*w)->stats().gc.foreground_runs, 0u);
  }
  const Geometry g = geometry(*dev);
  EXPECT_EQ(g.valid_block_count, g.user_block_count) << "a full volume holds exactly user_block_count blocks";
  // A failed write leaves i_size as it was: the files read as the model.
  check_image(*dev, m, "full volume");
  if (::testing::Test::HasFailure()) return;
  auto w = Writer::mount(*dev, opts(1700000200));
  ASSERT_OK(w);
  int removed = 0;
  for (auto it = m.begin(); it != m.end() && removed < 6;) {
    ASSERT_TRUE((*w)->unlink(it->first));
    it = m.erase(it);
    ++removed;
  }
  auto ino = (*w)->create("/again");
  ASSERT_OK(ino);
  const std::string d = pattern(4242, 4u << 20);
  auto r = (*w)->write(*ino, 0, bytes(d));
  ASSERT_TRUE(r) << "after deleting: " << r.error().to_string();
  m["/again"] = d;
  ASSERT_TRUE((*w)->unmount());
  check_image(*dev, m, "after freeing space");
}

TEST(WriterGc, NoSpaceOnlyWhenFull) { fill_until_no_space(64ull << 20, 1); }

TEST(WriterGc, NoSpaceOnlyWhenFullTwoSegmentSections) { fill_until_no_space(96ull << 20, 2); }

// ---- SSR keeps the last checkpoint intact -------------------------------------------

// Volume nearly full, checkpoint, then overwrites without a checkpoint: the
// logs go SSR (free blocks of dirty segments), never onto a block the last
// checkpoint still uses (ckpt_valid_map). A power cut then (the handle
// dropped without unmount) leaves exactly the last checkpoint's tree.
TEST(WriterGc, SsrLeavesTheLastCheckpointIntact) {
  auto dev = our_mkfs(128ull << 20, kFeatures);
  ASSERT_TRUE(dev);
  const Geometry g = geometry(*dev);
  Model m;
  MountOptions mo = opts(1700000300);
  mo.cache_bytes = 0;  // every write allocates at once
  auto w = Writer::mount(*dev, mo);
  ASSERT_TRUE(w);
  // 85% of 15872 user blocks fill about 27 of 56 main segments: about 23 free
  // sections (6 logs), over the 18 reserved (no GC) and under need_SSR()'s
  // 18 + 18 (SSR).
  fill(**w, m, g.user_block_count * 85 / 100, 64u << 10, 1);
  ASSERT_FALSE(::testing::Test::HasFailure());
  // Holes in every data segment: every other file truncated to half.
  int k = 0;
  for (auto& [p, d] : m)
    if (k++ % 2 == 0) {
      auto ino = (*w)->lookup(p);
      ASSERT_TRUE(ino);
      d.resize(d.size() / 2);
      ASSERT_TRUE((*w)->truncate(*ino, d.size()));
    }
  ASSERT_TRUE((*w)->sync());
  const Model committed = m;
  const WriterStats before = (*w)->stats();
  // Small overwrites until SSR serves some, with no checkpoint between.
  std::mt19937 rng(5);
  std::vector<std::string> paths;
  for (const auto& [p, d] : m) paths.push_back(p);
  for (int i = 0; i < 4000 && (*w)->stats().gc.ssr_blocks == before.gc.ssr_blocks; ++i) {
    const std::string& p = paths[rng() % paths.size()];
    auto ino = (*w)->lookup(p);
    ASSERT_TRUE(ino);
    const std::string d = pattern(static_cast<std::uint32_t>(rng()), 4096);
    ASSERT_TRUE((*w)->write(*ino, (rng() % (m[p].size() / 4096)) * 4096, bytes(d)));
  }
  ASSERT_GT((*w)->stats().gc.ssr_blocks, before.gc.ssr_blocks) << "SSR never served a block";
  ASSERT_EQ((*w)->stats().checkpoints, before.checkpoints) << "a checkpoint came first: the test needs a smaller window";
  w->reset();  // power cut: no unmount
  check_image(*dev, committed, "power cut after SSR writes", false);
}

// ---- Fill and churn -----------------------------------------------------------------

struct ChurnResult {
  WriterStats stats;
};

// Fill to 95% of user_block_count, overwrite `churn_factor` times the user
// blocks at random, unmount and check; then a model phase of creates,
// writes, truncates and unlinks on the churned volume, checked again.
void fill_and_churn(std::uint64_t volume_bytes, double churn_factor, std::uint32_t seed, GcPolicy fg = GcPolicy::greedy,
                    const char* save_to = nullptr, std::uint64_t cache_bytes = 0) {
  auto dev = our_mkfs(volume_bytes, kFeatures);
  ASSERT_TRUE(dev);
  const Geometry g = geometry(*dev);
  Model m;
  // Cost-benefit needs segments of different ages: the real clock.
  MountOptions mo = opts(fg == GcPolicy::greedy ? 1700001000 : 0);
  mo.gc.foreground_policy = fg;
  if (cache_bytes) mo.cache_bytes = cache_bytes;
  WriterStats st;
  {
    auto w = Writer::mount(*dev, mo);
    ASSERT_TRUE(w);
    fill(**w, m, g.user_block_count * 95 / 100, 256u << 10, seed);
    ASSERT_FALSE(::testing::Test::HasFailure());
    churn(**w, m, static_cast<std::uint64_t>(static_cast<double>(g.user_block_count) * churn_factor), seed + 1);
    ASSERT_FALSE(::testing::Test::HasFailure());
    st = (*w)->stats();
    ASSERT_TRUE((*w)->unmount());
  }
  std::printf("[ gc stats ] %llu MiB: fg runs %llu, victims %llu, data moved %llu, node moved %llu, sections freed %llu, "
              "ssr blocks %llu, lfs blocks %llu, checkpoints %llu\n",
              static_cast<unsigned long long>(volume_bytes >> 20), static_cast<unsigned long long>(st.gc.foreground_runs),
              static_cast<unsigned long long>(st.gc.victims), static_cast<unsigned long long>(st.gc.data_blocks_moved),
              static_cast<unsigned long long>(st.gc.node_blocks_moved), static_cast<unsigned long long>(st.gc.sections_freed),
              static_cast<unsigned long long>(st.gc.ssr_blocks), static_cast<unsigned long long>(st.gc.lfs_blocks),
              static_cast<unsigned long long>(st.checkpoints));
  EXPECT_GT(st.gc.foreground_runs, 0u);
  EXPECT_GT(st.gc.victims, 0u);
  EXPECT_GT(st.gc.data_blocks_moved, 0u);
  EXPECT_GT(st.gc.sections_freed, 0u);
  EXPECT_GT(st.gc.ssr_blocks, 0u);
  EXPECT_GT(st.gc.lfs_blocks, 0u);
  const std::string what = std::to_string(volume_bytes >> 20) + " MiB seed " + std::to_string(seed);
  check_image(*dev, m, what + " after churn");
  if (::testing::Test::HasFailure()) return;
  // The model phase: the volume stays 95% full, so writes may meet no_space
  // (then nothing of the call is in the model: i_size is unchanged, and a
  // file that did not grow reads as before).
  {
    if (mo.fixed_time) mo.fixed_time += 100;
    auto w = Writer::mount(*dev, mo);
    ASSERT_OK(w);
    std::mt19937 rng(seed + 2);
    for (int op = 0; op < 300; ++op) {
      std::vector<std::string> files;
      for (const auto& [p, d] : m) files.push_back(p);
      const int kind = static_cast<int>(rng() % 100);
      const std::string ctx = what + " op " + std::to_string(op);
      if (kind < 25) {
        const std::string p = "/d" + std::to_string(rng() % 8) + "/n" + std::to_string(rng() % 100000);
        if (m.count(p)) continue;
        auto ino = (*w)->create(p);
        if (!ino && ino.error().code == Errc::no_space) continue;
        ASSERT_TRUE(ino) << ctx << " create: " << ino.error().to_string();
        m[p] = "";
        const std::string d = pattern(static_cast<std::uint32_t>(rng()), rng() % 300000);
        auto r = (*w)->write(*ino, 0, bytes(d));
        if (!r && r.error().code == Errc::no_space) continue;
        ASSERT_TRUE(r) << ctx << " write: " << r.error().to_string();
        m[p] = d;
      } else if (kind < 60) {
        const std::string& p = files[rng() % files.size()];
        std::string& d = m[p];
        if (d.empty()) continue;
        const std::uint64_t off = rng() % d.size();
        const std::string data = pattern(static_cast<std::uint32_t>(rng()), std::min<std::uint64_t>(d.size() - off, 1 + rng() % 100000));
        auto ino = (*w)->lookup(p);
        ASSERT_TRUE(ino);
        auto r = (*w)->write(*ino, off, bytes(data));
        ASSERT_TRUE(r) << ctx << " overwrite: " << r.error().to_string();
        d.replace(off, data.size(), data);
      } else if (kind < 80) {
        const std::string& p = files[rng() % files.size()];
        auto ino = (*w)->lookup(p);
        ASSERT_TRUE(ino);
        std::string& d = m[p];
        const std::uint64_t size = rng() % (d.size() + 1);
        ASSERT_TRUE((*w)->truncate(*ino, size)) << ctx;
        d.resize(size);
      } else {
        const std::string p = files[rng() % files.size()];
        ASSERT_TRUE((*w)->unlink(p)) << ctx;
        m.erase(p);
      }
    }
    ASSERT_TRUE((*w)->unmount());
  }
  check_image(*dev, m, what + " after the model phase");
  if (save_to) {
    ASSERT_TRUE(save(*dev, save_to));
    const fs::path tree = std::string(save_to) + ".expect";
    fs::remove_all(tree);
    for (const auto& [p, d] : m) {
      fs::create_directories((tree / p.substr(1)).parent_path());
      std::ofstream f(tree / p.substr(1), std::ios::binary);
      f.write(d.data(), static_cast<std::streamsize>(d.size()));
    }
  }
}

// 128 MiB, 95% full, overwritten twice over.
TEST(WriterGc, FillAndChurnSmall) { fill_and_churn(128ull << 20, 2.0, 1); }

// The same with a page cache of 64 pages: overwrites of blocks not cached
// make room by writing back, whose placement runs GC, whose moves cache the
// blocks they move (at times the very block being overwritten).
TEST(WriterGc, FillAndChurnSmallCache) { fill_and_churn(128ull << 20, 2.0, 3, GcPolicy::greedy, nullptr, 64 * 4096); }

// ---- Victim selection, explicit and background GC --------------------------------

// Writer::gc(): invalidated blocks make dirty sections; an explicit run
// moves one and frees it with its checkpoint.
TEST(WriterGc, ExplicitGcFreesSections) {
  auto dev = our_mkfs(128ull << 20, kFeatures);
  ASSERT_TRUE(dev);
  Model m;
  auto w = Writer::mount(*dev, opts(1700000400));
  ASSERT_TRUE(w);
  fill(**w, m, 3000, 64u << 10, 3);
  // Truncate every third file to half: holes all over the data segments.
  int k = 0;
  for (auto& [p, d] : m)
    if (k++ % 3 == 0) {
      auto ino = (*w)->lookup(p);
      ASSERT_TRUE(ino);
      ASSERT_TRUE((*w)->truncate(*ino, d.size() / 2));
      d.resize(d.size() / 2);
    }
  ASSERT_TRUE((*w)->sync());
  const WriterStats before = (*w)->stats();
  auto r = (*w)->gc(2);
  ASSERT_OK(r);
  EXPECT_EQ(*r, 2u);
  const WriterStats st = (*w)->stats();
  EXPECT_EQ(st.gc.victims - before.gc.victims, 2u);
  EXPECT_GT(st.gc.data_blocks_moved, before.gc.data_blocks_moved);
  EXPECT_EQ(st.gc.sections_freed - before.gc.sections_freed, 2u);
  EXPECT_EQ(st.checkpoints - before.checkpoints, 1u);
  ASSERT_TRUE((*w)->unmount());
  check_image(*dev, m, "explicit gc");
}

// Cost-benefit prefers the older of two sections at equal use; greedy the
// one with fewer valid blocks. Two files written a few seconds apart (the
// SIT mtime clock is seconds mounted), the newer one's segment made
// slightly emptier.
TEST(WriterGc, CostBenefitPrefersOlderSegments) {
  for (GcPolicy policy : {GcPolicy::greedy, GcPolicy::cost_benefit}) {
    auto dev = our_mkfs(64ull << 20, kFeatures);
    ASSERT_TRUE(dev);
    MountOptions mo = opts();  // the real clock: segments must age
    mo.gc.foreground_policy = policy;
    auto w = Writer::mount(*dev, mo);
    ASSERT_TRUE(w);
    // Each file fills one warm data segment (512 blocks: 2 MiB) exactly:
    // the log starts at a fresh segment after the first file's tail.
    const std::string a = pattern(1, 2u << 20), b = pattern(2, 2u << 20);
    auto pad = (*w)->create("/pad");
    ASSERT_TRUE(pad);
    auto fa = (*w)->create("/old");
    ASSERT_TRUE(fa);
    ASSERT_TRUE((*w)->write(*fa, 0, bytes(a)));
    ASSERT_TRUE((*w)->sync());
    std::this_thread::sleep_for(std::chrono::seconds(3));
    auto fb = (*w)->create("/new");
    ASSERT_TRUE(fb);
    ASSERT_TRUE((*w)->write(*fb, 0, bytes(b)));
    ASSERT_TRUE((*w)->sync());  // out of the page cache: the overwrites below invalidate these blocks
    // Overwrite (out of place, elsewhere) 100 blocks of /old and 120 of
    // /new: their segments keep ~412 and ~392 valid blocks.
    const std::string z = pattern(3, 4096);
    Model m{{"/pad", ""}, {"/old", a}, {"/new", b}};
    for (int i = 0; i < 120; ++i) {
      if (i < 100) {
        ASSERT_TRUE((*w)->write(*fa, static_cast<std::uint64_t>(i) * 4096, bytes(z)));
        m["/old"].replace(static_cast<std::size_t>(i) * 4096, 4096, z);
      }
      ASSERT_TRUE((*w)->write(*fb, static_cast<std::uint64_t>(i) * 4096, bytes(z)));
      m["/new"].replace(static_cast<std::size_t>(i) * 4096, 4096, z);
    }
    ASSERT_TRUE((*w)->sync());
    auto v0 = Volume::open(*dev);
    ASSERT_TRUE(v0);
    auto ia = (*v0)->resolve("/old"), ib = (*v0)->resolve("/new");
    ASSERT_TRUE(ia && ib);
    auto a_last = (*v0)->map_block(*ia, 511), b_last = (*v0)->map_block(*ib, 511);
    ASSERT_TRUE(a_last && b_last);
    v0->reset();
    auto r = (*w)->gc(1);
    ASSERT_OK(r);
    ASSERT_TRUE((*w)->unmount());
    auto v = Volume::open(*dev);
    ASSERT_TRUE(v);
    auto ja = (*v)->resolve("/old"), jb = (*v)->resolve("/new");
    ASSERT_TRUE(ja && jb);
    auto a_now = (*v)->map_block(*ja, 511), b_now = (*v)->map_block(*jb, 511);
    ASSERT_TRUE(a_now && b_now);
    if (policy == GcPolicy::greedy) {
      EXPECT_NE(*b_now, *b_last) << "greedy moves the emptier (newer) segment";
      EXPECT_EQ(*a_now, *a_last);
    } else {
      EXPECT_NE(*a_now, *a_last) << "cost-benefit moves the older segment";
      EXPECT_EQ(*b_now, *b_last);
    }
    v->reset();
    check_image(*dev, m, policy == GcPolicy::greedy ? "greedy" : "cost-benefit");
  }
}

// Background GC (GcOptions::background, idle interval 0: at every changing
// call) moves one victim per call; the next checkpoint frees it.
TEST(WriterGc, BackgroundGcWhenIdle) {
  auto dev = our_mkfs(128ull << 20, kFeatures);
  ASSERT_TRUE(dev);
  Model m;
  {
    auto w = Writer::mount(*dev, opts(1700000500));
    ASSERT_TRUE(w);
    fill(**w, m, 3000, 64u << 10, 4);
    int k = 0;
    for (auto it = m.begin(); it != m.end();)
      if (k++ % 2 == 0) {
        ASSERT_TRUE((*w)->unlink(it->first));
        it = m.erase(it);
      } else {
        ++it;
      }
    ASSERT_TRUE((*w)->unmount());
  }
  MountOptions mo = opts(1700000600);
  mo.gc.background = true;
  mo.gc.idle_interval_s = 0;
  // The clock is fixed: every segment has the same age and cost-benefit
  // finds no victim (get_cb_cost() gives UINT_MAX to all), as in the kernel.
  mo.gc.background_policy = GcPolicy::greedy;
  auto w = Writer::mount(*dev, mo);
  ASSERT_TRUE(w);
  for (int i = 0; i < 3; ++i) ASSERT_TRUE((*w)->mkdir("/bg" + std::to_string(i)));
  const WriterStats st = (*w)->stats();
  EXPECT_EQ(st.gc.background_runs, 3u);
  EXPECT_EQ(st.gc.foreground_runs, 0u);
  EXPECT_GT(st.gc.data_blocks_moved, 0u);
  ASSERT_TRUE((*w)->unmount());
  check_image(*dev, m, "background gc");
}

// A power cut anywhere in a GC run: moved data went to blocks the last
// checkpoint does not use, the victims stay intact until the checkpoint
// that commits the moves, so the volume opens at the old or the new
// checkpoint with the same tree (GC changes no contents), clean, and the
// writer mounts it again.
TEST(WriterGc, PowerCutDuringGc) {
  auto base = our_mkfs(128ull << 20, kFeatures);
  ASSERT_TRUE(base);
  Model m;
  {
    auto w = Writer::mount(*base, opts(1700000700));
    ASSERT_TRUE(w);
    fill(**w, m, 2000, 64u << 10, 7);
    int k = 0;
    for (auto& [p, d] : m)
      if (k++ % 3 == 0) {
        auto ino = (*w)->lookup(p);
        ASSERT_TRUE(ino);
        d.resize(d.size() / 3);
        ASSERT_TRUE((*w)->truncate(*ino, d.size()));
      }
    ASSERT_TRUE((*w)->unmount());
  }
  const auto image = f2fstest::SparseImage::capture(*base);
  auto workload = [](BlockDevice& dev) -> Status {
    auto w = Writer::mount(dev, opts(1700000800));
    if (!w) return make_error(w.error());
    auto r = (*w)->gc(3);
    if (!r) return make_error(r.error());
    if (*r != 3) return make_error(Errc::invalid_argument, "gc freed " + std::to_string(*r) + " sections, want 3");
    return (*w)->unmount();
  };
  std::uint64_t total = 0, ver = 0;
  {
    FaultPlan fp;
    fp.ops = io_op_bit(IoOp::write) | io_op_bit(IoOp::flush);
    fp.drop_unflushed = true;
    FaultDevice dev(image.to_device(), fp);
    ver = (*Volume::open(dev))->open_report().checkpoint_ver;
    auto r = workload(dev);
    ASSERT_OK(r);
    total = dev.counted();
  }
  ASSERT_GT(total, 100u);
  int seen[3] = {0, 0, 0};
  // About 60 cuts spread over the run (60 / f2fstest::sample_stride()), and
  // the last 12 requests one by one (the checkpoint packs and flushes).
  std::vector<std::uint64_t> cuts;
  for (std::uint64_t n = 0; n + 12 < total; n += (total / 60 + 1) * f2fstest::sample_stride()) cuts.push_back(n);
  for (std::uint64_t n = total > 12 ? total - 12 : 0; n <= total; ++n) cuts.push_back(n);
  for (std::uint64_t n : cuts) {
    SCOPED_TRACE("cut at request " + std::to_string(n) + " of " + std::to_string(total));
    FaultPlan fp;
    fp.ops = io_op_bit(IoOp::write) | io_op_bit(IoOp::flush);
    fp.drop_unflushed = true;
    fp.fail_after = n;
    FaultDevice dev(image.to_device(), fp);
    auto r = workload(dev);
    EXPECT_EQ(static_cast<bool>(r), n >= total);
    dev.power_cut();
    dev.set_plan({});
    auto v = Volume::open(dev);
    ASSERT_OK(v);
    const std::uint64_t got = (*v)->open_report().checkpoint_ver;
    ASSERT_TRUE(got >= ver && got <= ver + 2) << got;
    ++seen[got - ver];
    EXPECT_EQ(diff(m, read_files(**v)), "");
    v->reset();
    // A cut inside a pack leaves that slot torn (the other one is valid):
    // the writer mounts and unmounts, and every checker finds the volume
    // clean. The unmount writes a whole pack over the torn slot when the
    // valid pack lacks CP_UMOUNT_FLAG (a cut inside the unmount's pack);
    // when the valid pack is the unmount pack before the GC, nothing has
    // changed since it and nothing is written (as f2fs_put_super()), so
    // the torn slot may stay: the one warning a cut may leave.
    auto w = Writer::mount(dev, opts());
    ASSERT_OK(w);
    ASSERT_TRUE((*w)->unmount());
    w->reset();
    if (n % 4 == 0 || n + 12 >= total) check_image(dev, m, "after a cut and a mount", true, /*allow_torn_pack=*/got == ver);
    if (::testing::Test::HasFailure()) return;
  }
  EXPECT_GT(seen[0], 0);  // cut before the GC's checkpoint
  EXPECT_GT(seen[2], 0);  // after the unmount's
}

#ifdef WRITER_WITH_FSCK
// The churn at full size (interop: fsck.f2fs -f after each unmount).
TEST(WriterGcChurn, Volume256MiB) { fill_and_churn(256ull << 20, 3.0, 11); }
// Churn of 1x the user blocks in CI (about 25 s); WRITER_GC_CHURN=4 runs
// "many times its size" (measured once per change, docs/gc.md).
TEST(WriterGcChurn, Volume1GiB) {
  const char* f = std::getenv("WRITER_GC_CHURN");
  fill_and_churn(1ull << 30, f ? std::strtod(f, nullptr) : 1.0, 12);
}
TEST(WriterGcChurn, CostBenefitForeground256MiB) { fill_and_churn(256ull << 20, 2.0, 13, GcPolicy::cost_benefit); }
#endif

// For writer_gc_linux.sh: a churned 256 MiB image and its expected tree
// (WRITER_IMAGE, seed WRITER_GC_SEED).
TEST(WriterGcOracle, DISABLED_ChurnImage) {
  const char* out = std::getenv("WRITER_IMAGE");
  ASSERT_NE(out, nullptr) << "set WRITER_IMAGE";
  const char* s = std::getenv("WRITER_GC_SEED");
  fill_and_churn(256ull << 20, 2.0, s ? static_cast<std::uint32_t>(std::atoi(s)) : 21, GcPolicy::greedy, out);
}

}  // namespace
