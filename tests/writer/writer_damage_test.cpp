// The writer on damaged volumes (libf2fscore/src/writer/premount.cpp): the
// pre-mount check refuses a volume whose structures the writer relies on are
// damaged, naming the problem, and a refusal writes nothing (the image is
// byte-identical); MountOptions::on_damage mounts read-only or read-write
// anyway, and the allocation guards then never hand out a nid something
// still names. Damage comes from the typed corruption library
// (tests/fsck/corrupt.hpp); the expected problem codes are the checker's
// names for the rules the edits break (fsck.hpp's table).
#include <gtest/gtest.h>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include "f2fscore/fsck.hpp"

#include "f2fscore/writer.hpp"
#include "fsck/corrupt.hpp"
#include "meta/meta_test_util.hpp"
#include "support/volume_walk.hpp"
#include "writer/writer_test_util.hpp"

namespace {

using namespace metatest;
using f2fstest::SparseImage;

std::span<const std::uint8_t> bytes(const std::string& s) {
  return {reinterpret_cast<const std::uint8_t*>(s.data()), s.size()};
}

// A volume with /d/f1 (3 blocks), /d/f2 (inline), /d/sub, written by our
// writer and unmounted: clean for our checker.
SparseImage base_image() {
  auto dev = our_mkfs(64ull << 20, kRichFeatures);
  EXPECT_TRUE(dev);
  if (!dev) return {};
  {
    auto w = Writer::mount(*dev, {1700000100});
    EXPECT_TRUE(w);
    if (!w) return {};
    EXPECT_TRUE((*w)->mkdir("/d"));
    auto f1 = (*w)->create("/d/f1");
    EXPECT_TRUE(f1);
    EXPECT_TRUE((*w)->write(*f1, 0, bytes(std::string(3 * 4096, 'a'))));
    auto f2 = (*w)->create("/d/f2");
    EXPECT_TRUE(f2);
    EXPECT_TRUE((*w)->write(*f2, 0, bytes("inline")));
    EXPECT_TRUE((*w)->mkdir("/d/sub"));
    EXPECT_TRUE((*w)->unmount());
  }
  writertest::our_fsck_clean(*dev, "the base image");
  return SparseImage::capture(*dev);
}

const SparseImage& base() {
  static const SparseImage img = base_image();
  return img;
}

struct Damaged {
  std::unique_ptr<BlockDevice> dev;
  SparseImage before;
};

// The base image with `edits` applied (each "%INO%" replaced first by
// `ino_path`'s ino, "%NODE%" by its node block).
Damaged damage(const std::vector<std::string>& edits, const std::string& ino_path = "/d/f1") {
  Damaged d;
  d.dev = base().to_device();
  auto c = f2fstest::corrupt::Corruptor::open(*d.dev);
  EXPECT_TRUE(c);
  if (!c) return d;
  auto ino = (*c)->ino(ino_path);
  EXPECT_TRUE(ino);
  auto node = (*c)->node_blk(*ino);
  EXPECT_TRUE(node);
  for (std::string e : edits) {
    for (auto [k, v] : {std::pair<std::string, std::uint64_t>{"%INO%", *ino}, {"%NODE%", *node}})
      for (auto p = e.find(k); p != std::string::npos; p = e.find(k)) e.replace(p, k.size(), std::to_string(v));
    auto r = (*c)->apply(e);
    EXPECT_TRUE(r) << e << ": " << r.error().to_string();
  }
  d.before = SparseImage::capture(*d.dev);
  return d;
}

bool same(const SparseImage& a, const SparseImage& b) { return a.blocks == b.blocks; }

// An edit moving the first active log with blocks written back to offset
// 0 (over its valid blocks); `code` gets the log's name as the message
// gives it.
std::string log_back_edit(std::string* code) {
  static const char* const kNames[6] = {"hot data", "warm data", "cold data", "hot node", "warm node", "cold node"};
  auto dev = base().to_device();
  auto v = Volume::open(*dev);
  EXPECT_TRUE(v);
  if (!v) return "";
  const auto& cp = (*v)->checkpoint();
  for (int t = 0; t < 6; ++t) {
    const std::uint32_t off = t < 3 ? cp.cur_data_blkoff[t].get() : cp.cur_node_blkoff[t - 3].get();
    if (off == 0) continue;
    *code = std::string("[CURSEG] ") + kNames[t] + " log";
    return t < 3 ? "cp.cur_data_blkoff[" + std::to_string(t) + "]=0" : "cp.cur_node_blkoff[" + std::to_string(t - 3) + "]=0";
  }
  ADD_FAILURE() << "no active log has blocks written";
  return "";
}

struct Refusal {
  const char* name;
  std::vector<std::string> edits;
  const char* code;  ///< the checker's problem code the message names
};

// Refusals of several kinds: Errc::corrupt, the problem named, a pointer to
// f2fscore-fsck, no write request and the image byte-identical.
TEST(WriterDamage, RefusedBeforeAnyWrite) {
  ASSERT_FALSE(base().blocks.empty());
  const Refusal cases[] = {
      {"an inode's node block zeroed", {"block[%NODE%].zero=1"}, "NODE_FOOTER_NID"},
      {"a node footer naming another nid", {"node[%INO%].footer.nid=2000"}, "NODE_FOOTER_NID"},
      {"an inode checksum that does not match", {"raw:inode[%INO%].i_size=5"}, "INODE_CHECKSUM"},
      {"an unknown file type", {"inode[%INO%].i_mode=0"}, "INODE_MODE"},
      {"a NAT entry outside the main area", {"nat[%INO%].block_addr=5"}, "NAT_BLKADDR_INVALID"},
      {"a node block the SIT says is free", {"sit[/d/f1].valid_map[%BIT%]=0"}, ""},
      {"a SIT count that disagrees with its bitmap", {"sit[/d/f1@0].vblocks+=1"}, "SIT_VBLOCKS_MISMATCH"},
      {"an active log moved back over its blocks", {"%LOG%"}, "[CURSEG]"},
      {"the root without '.'", {"dentry_del[/.]=1"}, "[DENTRY_DOT]"},
      {"the root's '..' naming a file", {"dentry[/..].ino=%INO%"}, "[DENTRY_DOTDOT]"},
      {"the root's '.' twice", {"dentry_add[/.]=3"}, "[DENTRY_DOT]"},
  };
  for (const auto& rc : cases) {
    SCOPED_TRACE(rc.name);
    std::vector<std::string> edits = rc.edits;
    std::string code = rc.code;
    if (edits[0].find("%BIT%") != std::string::npos) {
      // The SIT bit of /d/f1's node block.
      auto dev = base().to_device();
      auto c = f2fstest::corrupt::Corruptor::open(*dev);
      ASSERT_TRUE(c);
      auto ino = (*c)->ino("/d/f1");
      ASSERT_TRUE(ino);
      auto nb = (*c)->node_blk(*ino);
      ASSERT_TRUE(nb);
      const std::uint64_t off = (*nb - (*c)->vol().main_blkaddr()) % kDefaultBlocksPerSeg;
      edits = {"sit[" + std::to_string((*nb - (*c)->vol().main_blkaddr()) / kDefaultBlocksPerSeg) + "].valid_map[" +
                   std::to_string(off) + "]=0",
               "sit[" + std::to_string((*nb - (*c)->vol().main_blkaddr()) / kDefaultBlocksPerSeg) + "].vblocks-=1"};
      code = "NAT_BLKADDR_NOT_IN_SIT";
    }
    if (edits[0] == "%LOG%") edits = {log_back_edit(&code)};
    Damaged d = damage(edits);
    // The fast check names the rule's own code; the full check (the
    // default) refuses too, naming the first problem the checker reports.
    for (auto pc : {MountOptions::PremountCheck::fast, MountOptions::PremountCheck::full}) {
      MountOptions mo;
      mo.premount_check = pc;
      f2fstest::BudgetDevice g(*d.dev, 1'000'000);
      auto w = Writer::mount(g, mo);
      ASSERT_FALSE(w);
      EXPECT_EQ(w.error().code, Errc::corrupt) << w.error().to_string();
      if (pc == MountOptions::PremountCheck::fast)
        EXPECT_NE(w.error().message.find(code), std::string::npos) << w.error().message;
      EXPECT_NE(w.error().message.find("run f2fscore-fsck"), std::string::npos) << w.error().message;
      EXPECT_EQ(g.writes(), 0u);
      EXPECT_TRUE(same(d.before, SparseImage::capture(*d.dev))) << "the refusal changed the image";
    }
  }
}

// What only the full check (the default) sees: a dentry naming a nid whose
// NAT entry is free (the writer would give a new inode that nid, and the
// old entry would name it: DENTRY_DIR_HARDLINK after a mkdir), and a data
// pointer onto a block another file holds, on volumes whose checkpoint
// counts agree. Refused before any write.
TEST(WriterDamage, FullCheckRefusesDanglingDentryAndSharedBlock) {
  std::uint64_t f2_blk = 0;
  {
    auto dev = base().to_device();
    auto c = f2fstest::corrupt::Corruptor::open(*dev);
    ASSERT_TRUE(c);
    auto f1 = (*c)->ino("/d/f1");
    ASSERT_TRUE(f1);
    auto b = (*c)->data_blk(*f1, 0);
    ASSERT_TRUE(b);
    f2_blk = *b;
  }
  const std::pair<std::vector<std::string>, const char*> cases[] = {
      {{"dentry_add[/m]=40"}, "DENTRY_INO_INVALID"},
      {{"inode[/d].addr[1]=" + std::to_string(f2_blk)}, "["},
  };
  for (const auto& [edits, code] : cases) {
    SCOPED_TRACE(edits[0]);
    Damaged d = damage(edits);
    f2fstest::BudgetDevice g(*d.dev, 1'000'000);
    auto w = Writer::mount(g);
    ASSERT_FALSE(w);
    EXPECT_EQ(w.error().code, Errc::corrupt) << w.error().to_string();
    EXPECT_NE(w.error().message.find(code), std::string::npos) << w.error().message;
    EXPECT_EQ(g.writes(), 0u);
    EXPECT_TRUE(same(d.before, SparseImage::capture(*d.dev))) << "the refusal changed the image";
  }
}

// Checkpoint counts alone are no refusal: the writer takes them from a walk
// of the tree, and its checkpoint writes the right ones.
TEST(WriterDamage, CountsAloneAreNoRefusal) {
  Damaged d = damage({"cp.valid_inode_count+=3", "cp.free_segment_count-=1"});
  auto w = Writer::mount(*d.dev, {1700000200});
  ASSERT_OK(w);
  auto f = (*w)->create("/d/new");
  ASSERT_OK(f);
  ASSERT_OK((*w)->unmount());
  writertest::our_fsck_clean(*d.dev, "after the writer recounted");
}

// on_damage = read_only: the mount reads, refuses every change, writes
// nothing; the problem is in the stats.
TEST(WriterDamage, MountDamagedReadOnly) {
  Damaged d = damage({"raw:inode[%INO%].i_size=5"});
  MountOptions mo;
  mo.on_damage = MountOptions::OnDamage::read_only;
  f2fstest::BudgetDevice g(*d.dev, 1'000'000);
  auto w = Writer::mount(g, mo);
  ASSERT_OK(w);
  EXPECT_EQ((*w)->stats().premount_problems, 1u);
  EXPECT_NE((*w)->stats().premount_first_problem.find("INODE_CHECKSUM"), std::string::npos);
  auto ino = (*w)->lookup("/d/f1");
  ASSERT_OK(ino);
  auto c = (*w)->create("/d/new");
  ASSERT_FALSE(c);
  EXPECT_EQ(c.error().code, Errc::read_only);
  EXPECT_TRUE((*w)->unmount());
  EXPECT_EQ(g.writes(), 0u);
  EXPECT_TRUE(same(d.before, SparseImage::capture(*d.dev)));
}

// The failure the guard prevents: /d/f1's node block zeroed while /d still
// names its ino, and the checkpoint's counts off so that the writer takes
// the truth from a walk of the tree (which cannot reach /d/f1). Mounted
// read-write anyway, the writer must not give a new file that ino (a second
// inode under an entry that names the first): the allocation fails with
// Errc::corrupt naming the nid, later changes and the unmount fail too,
// and the image is as before the mount.
TEST(WriterDamage, GuardNeverReusesANamedIno) {
  Damaged d = damage({"block[%NODE%].zero=1", "cp.valid_node_count+=1"});
  nid_t lost = 0;
  {
    auto c = f2fstest::corrupt::Corruptor::open(*d.dev);
    ASSERT_TRUE(c);
    auto de = (*c)->dentry("/d", "f1");
    ASSERT_TRUE(de);
    lost = de->de.ino.get();
  }
  MountOptions mo;
  mo.on_damage = MountOptions::OnDamage::read_write;
  auto w = Writer::mount(*d.dev, mo);
  ASSERT_OK(w);
  EXPECT_GT((*w)->stats().premount_problems, 0u);
  bool tripped = false;
  for (int i = 0; i < 20 && !tripped; ++i) {
    auto f = (*w)->create("/d/n" + std::to_string(i));
    if (f) {
      EXPECT_NE(*f, lost) << "a new file took the ino /d/f1's entry still names";
      continue;
    }
    EXPECT_EQ(f.error().code, Errc::corrupt) << f.error().to_string();
    EXPECT_NE(f.error().message.find("nid " + std::to_string(lost)), std::string::npos) << f.error().message;
    tripped = true;
  }
  ASSERT_TRUE(tripped) << "the walk's unreached nid was never offered";
  auto again = (*w)->create("/d/after");
  ASSERT_FALSE(again);
  EXPECT_EQ(again.error().code, Errc::corrupt);
  EXPECT_FALSE((*w)->unmount());
  EXPECT_TRUE(same(d.before, SparseImage::capture(*d.dev))) << "the volume is not as at its last checkpoint";
}

// Mounted read-write anyway with an active log's offset moved back over
// live blocks: new blocks go elsewhere, the old files keep their contents.
TEST(WriterDamage, LogOverLiveBlocksDoesNotOverwrite) {
  std::string code;
  Damaged d = damage({log_back_edit(&code)});
  MountOptions mo;
  mo.on_damage = MountOptions::OnDamage::read_write;
  mo.fixed_time = 1700000300;
  {
    auto w = Writer::mount(*d.dev, mo);
    ASSERT_OK(w);
    EXPECT_GT((*w)->stats().premount_problems, 0u);
    auto f = (*w)->create("/d/big");
    ASSERT_OK(f);
    ASSERT_OK((*w)->write(*f, 0, bytes(std::string(40 * 4096, 'b'))));
    ASSERT_OK((*w)->unmount());
  }
  auto v = Volume::open(*d.dev);
  ASSERT_OK(v);
  auto in = (*v)->resolve("/d/f1");
  ASSERT_OK(in);
  EXPECT_EQ(writertest::contents::content_of(**v, *in), std::string(3 * 4096, 'a'));
  auto in2 = (*v)->resolve("/d/big");
  ASSERT_OK(in2);
  EXPECT_EQ(writertest::contents::content_of(**v, *in2), std::string(40 * 4096, 'b'));
  auto in3 = (*v)->resolve("/d/f2");
  ASSERT_OK(in3);
  EXPECT_EQ(writertest::contents::content_of(**v, *in3), "inline");
  EXPECT_TRUE((*v)->resolve("/d/sub"));
}

// A data pointer that names a node block in use (the mutation run's
// `inode[/big].addr[1]+=2`, which landed on /big's direct node), with
// checkpoint counts that send the mount to a walk of the tree: the walk
// finds the block with two owners (a block has one owner:
// fsck.f2fs's fsck_chk_data_blk()) and the mount is refused before any
// write, naming the block; the writer never takes either owner as the
// truth (once it dropped the node's NAT entry, NODE_NAT_MISSING). Both
// orders of the walk: the data pointer's inode before the node's nid
// (/d/f1 onto /d/f2's inode) and after it (/d/f1 onto /d's inode).
TEST(WriterDamage, BlockWithTwoOwnersRefused) {
  for (const char* victim : {"/d/f2", "/d"}) {
    SCOPED_TRACE(victim);
    Damaged d = damage({"inode[/d/f1].addr[1]=%NODE%", "cp.valid_node_count+=1"}, victim);
    std::uint64_t node_blk = 0;
    {
      auto c = f2fstest::corrupt::Corruptor::open(*d.dev);
      ASSERT_TRUE(c);
      auto ino = (*c)->ino(victim);
      ASSERT_TRUE(ino);
      auto nb = (*c)->node_blk(*ino);
      ASSERT_TRUE(nb);
      node_blk = *nb;
    }
    for (auto on_damage : {MountOptions::OnDamage::refuse, MountOptions::OnDamage::read_write}) {
      MountOptions mo;
      mo.on_damage = on_damage;
      mo.premount_check = MountOptions::PremountCheck::fast;  // the walk's own refusal
      f2fstest::BudgetDevice g(*d.dev, 1'000'000);
      auto w = Writer::mount(g, mo);
      ASSERT_FALSE(w);
      EXPECT_EQ(w.error().code, Errc::corrupt) << w.error().to_string();
      // Refused by the full check the disagreeing counts start (naming what
      // it finds first), or mounted anyway and refused by the walk.
      if (on_damage == MountOptions::OnDamage::read_write)
        EXPECT_NE(w.error().message.find("block " + std::to_string(node_blk) + " is claimed twice"), std::string::npos)
            << w.error().message;
      EXPECT_NE(w.error().message.find("run f2fscore-fsck"), std::string::npos) << w.error().message;
      EXPECT_EQ(g.writes(), 0u);
      EXPECT_TRUE(same(d.before, SparseImage::capture(*d.dev))) << "the refusal changed the image";
    }
  }
}

// The pre-mount check's cost (F2FSCORE_MOUNT_IMAGES: image files, comma
// separated; F2FSCORE_MOUNT_RUNS runs, default 5): per image the medians of
// the fast check alone (fsck::Options::fast_only), a read-only mount (no
// check), and a read-write mount (the check included; dropped without
// unmount, nothing written). An image named *files*.img that does not
// exist is made: 4 GiB, 30,000 files of 1-8 KiB in 300 directories written
// by our writer.
TEST(WriterDamageBench, DISABLED_MountTime) {
  const char* e = std::getenv("F2FSCORE_MOUNT_IMAGES");
  ASSERT_NE(e, nullptr) << "set F2FSCORE_MOUNT_IMAGES";
  const int runs = std::getenv("F2FSCORE_MOUNT_RUNS") ? std::atoi(std::getenv("F2FSCORE_MOUNT_RUNS")) : 5;
  std::string list = e;
  for (std::size_t a = 0, b; a < list.size(); a = b + 1) {
    b = list.find(',', a);
    if (b == std::string::npos) b = list.size();
    const std::string path = list.substr(a, b - a);
    if (!std::filesystem::exists(path) && path.find("files") != std::string::npos) {
      auto dev = our_mkfs(4ull << 30, kRichFeatures);
      ASSERT_TRUE(dev);
      {
        MountOptions mo;
        mo.fixed_time = 1700000000;
        mo.checkpoint_interval_s = 0;
        auto w = Writer::mount(*dev, mo);
        ASSERT_OK(w);
        for (int d = 0; d < 300; ++d) {
          const std::string dir = "/d" + std::to_string(d);
          ASSERT_OK((*w)->mkdir(dir));
          for (int f = 0; f < 100; ++f) {
            auto ino = (*w)->create(dir + "/f" + std::to_string(f));
            ASSERT_OK(ino);
            ASSERT_OK((*w)->write(*ino, 0, bytes(std::string(1024 * (1 + (d * 7 + f) % 8), 'x'))));
          }
        }
        ASSERT_OK((*w)->unmount());
      }
      ASSERT_TRUE(save(*dev, path));
    }
    OpenOptions oo;
    auto dev = open_posix_device(path, oo);
    ASSERT_OK(dev);
    auto median = [&](auto fn) {
      std::vector<double> t;
      for (int i = 0; i < runs; ++i) {
        const auto t0 = std::chrono::steady_clock::now();
        fn();
        t.push_back(std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count());
      }
      std::sort(t.begin(), t.end());
      return t[t.size() / 2];
    };
    const double fast = median([&] {
      fsck::Options fo;
      fo.fast_only = true;
      auto r = fsck::check(**dev, fo);
      ASSERT_OK(r);
      EXPECT_EQ(r->exit_code(), 0);
    });
    const double ro = median([&] {
      MountOptions mo;
      mo.read_only = true;
      auto w = Writer::mount(**dev, mo);
      ASSERT_OK(w);
    });
    const double rw = median([&] {
      MountOptions mo;
      mo.refuse_in_use = false;
      auto w = Writer::mount(**dev, mo);
      ASSERT_OK(w);
    });
    std::printf("%s: fast check %.1f ms, read-only mount (unchecked) %.1f ms, read-write mount (checked) %.1f ms "
                "(medians of %d)\n",
                path.c_str(), fast, ro, rw, runs);
  }
}

}  // namespace

