// The checker on images that must be clean (rich images built in memory,
// the Linux-written fixtures) and on a few aimed edits whose expected
// problem is known by hand; check-only leaves the device byte-identical;
// preen's fast check finds a zeroed inode block.
#include <gtest/gtest.h>

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#if defined(__linux__)
#include <unistd.h>
#endif

#include "f2fscore/checksum.hpp"
#include "f2fscore/fsck.hpp"
#include "f2fscore/uring_device.hpp"
#include "support/rich_image.hpp"
#include "support/sparse_image.hpp"
#include "support/test_support.hpp"

namespace fs = std::filesystem;
using namespace f2fscore;
using namespace f2fscore::disk;
using f2fstest::SparseImage;

namespace {

const std::uint32_t kRich = feature::extra_attr | feature::inode_checksum | feature::flexible_inline_xattr |
                            feature::sb_checksum | feature::lost_found | feature::quota_ino | feature::project_quota |
                            feature::inode_crtime;

std::vector<std::pair<std::string, f2fstest::RichImageOptions>> rich_specs() {
  return {
      {"checksums", {kRich, false, false, 64ull << 20}},
      {"plain", {0, false, false, 64ull << 20}},
      {"large-nat-bitmap-heap",
       {feature::extra_attr | feature::inode_checksum | feature::flexible_inline_xattr, true, true, 128ull << 20}},
      {"compression",
       {feature::extra_attr | feature::compression | feature::inode_checksum | feature::flexible_inline_xattr |
            feature::sb_checksum,
        false, false, 64ull << 20}},
      {"casefold",
       {feature::extra_attr | feature::casefold | feature::inode_checksum | feature::flexible_inline_xattr |
            feature::lost_found,
        false, false, 64ull << 20, 1}},
  };
}

std::string dump(const fsck::Report& r) {
  std::string s;
  for (const auto& p : r.problems) s += p.to_string() + "\n";
  return s;
}

fsck::Report run(BlockDevice& dev, fsck::Mode m = fsck::Mode::check_only, bool force = false) {
  fsck::Options o;
  o.mode = m;
  o.force = force;
  auto r = fsck::check(dev, o);
  EXPECT_TRUE(r.has_value()) << (r ? "" : r.error().message);
  return r ? *r : fsck::Report{};
}

bool has(const fsck::Report& r, fsck::Code c, std::optional<nid_t> ino = std::nullopt) {
  for (const auto& p : r.problems)
    if (p.code == c && (!ino || p.ino == ino)) return true;
  return false;
}

bool load_zst(const fs::path& p, SparseImage& img) {
  auto z = f2fstest::load_zst_image(p);
  if (!z) return false;
  img = std::move(*z);
  return true;
}

}  // namespace

TEST(FsckTable, NamesRoundTripAndRowsAreComplete) {
  const auto t = fsck::problem_table();
  ASSERT_GT(t.size(), 60u);
  for (std::size_t i = 0; i < t.size(); ++i) {
    EXPECT_EQ(static_cast<std::size_t>(t[i].code), i);
    const auto name = fsck::code_name(t[i].code);
    EXPECT_EQ(fsck::code_from_name(name), t[i].code) << name;
    EXPECT_FALSE(t[i].summary.empty()) << name;
    if (t[i].fix != fsck::FixClass::none) EXPECT_FALSE(t[i].repair.empty()) << name;
  }
  EXPECT_EQ(fsck::code_name(fsck::Code::INODE_LINKS), "INODE_LINKS");
  EXPECT_FALSE(fsck::code_from_name("NO_SUCH_CODE").has_value());
  fsck::Problem p;
  p.code = fsck::Code::INODE_LINKS;
  p.ino = 5;
  p.path = "/a/b";
  p.detail = "i_links 0, real links 1";
  p.fixed = true;
  EXPECT_EQ(p.to_string(), "[INODE_LINKS] ino 5 (/a/b): i_links 0, real links 1 (fixed)");
}

TEST(FsckExitCode, FollowsE2fsck) {
  fsck::Report r;
  EXPECT_EQ(r.exit_code(), 0);
  fsck::Problem p;
  p.code = fsck::Code::INODE_LINKS;
  p.fixed = true;
  r.problems.push_back(p);
  EXPECT_EQ(r.exit_code(), 1);
  p.fixed = false;
  r.problems.push_back(p);
  EXPECT_EQ(r.exit_code(), 4);
}

// A cut during a checkpoint leaves the pack being written torn: its header
// (a newer version, valid CRC) written, its closing block not. Linux and
// fsck.f2fs use the other pack without a word (validate_checkpoint() in
// fs/f2fs/checkpoint.c): reported, informational, check-only exits 0.
TEST(FsckExitCode, TornCheckpointPackIsInformational) {
  // A freshly formatted volume, checked clean, then torn by hand.
  auto fresh = make_memory_device(64ull << 20);
  MkfsTarget t{fresh.get(), "torn"};
  MkfsOptions mo;
  mo.features = kRich;
  mo.timestamp = 1700000000;
  ASSERT_TRUE(format_volume(std::span<const MkfsTarget>(&t, 1), mo));
  {
    auto clean = run(*fresh, fsck::Mode::check_only, true);
    ASSERT_TRUE(clean.problems.empty()) << dump(clean);
  }
  auto img = SparseImage::capture(*fresh);
  const auto* sb = reinterpret_cast<const SuperBlock*>(img.at(0) + kSuperOffset);
  const std::uint64_t pack[2] = {sb->cp_blkaddr.get(), sb->cp_blkaddr.get() + kDefaultBlocksPerSeg};
  auto ver = [&](int i) { return img.view<Checkpoint>(pack[i])->checkpoint_ver.get(); };
  const int cur = ver(1) > ver(0) ? 1 : 0, other = 1 - cur;
  const f2fstest::Block head = img.blocks.at(pack[cur]);
  auto* h = img.view<Checkpoint>(pack[other]);
  std::memcpy(h, head.data(), kBlockSize);
  h->checkpoint_ver.set(ver(cur) + 1);
  seal_checkpoint(reinterpret_cast<std::uint8_t*>(h));
  auto dev = img.to_device();
  auto r = run(*dev, fsck::Mode::check_only, true);
  EXPECT_TRUE(has(r, fsck::Code::CP_PACK_BAD)) << dump(r);
  EXPECT_EQ(r.problems.size(), 1u) << dump(r);
  EXPECT_EQ(fsck::definition(fsck::Code::CP_PACK_BAD).severity, fsck::Severity::info);
  EXPECT_EQ(r.exit_code(), 0) << dump(r);
  EXPECT_FALSE(r.wrote);
  // Preen and -y report it and leave the pack as it is: nothing written.
  for (auto mode : {fsck::Mode::preen, fsck::Mode::repair_all}) {
    auto d = img.to_device();
    auto rr = run(*d, mode, true);
    EXPECT_TRUE(has(rr, fsck::Code::CP_PACK_BAD)) << dump(rr);
    EXPECT_EQ(rr.problems.size(), 1u) << dump(rr);
    EXPECT_EQ(rr.exit_code(), 0) << dump(rr);
    EXPECT_FALSE(rr.wrote) << dump(rr);
  }
  // CP_FLAGS (the volume asks for a check) left unrepaired is still 4.
  fsck::Report flags;
  fsck::Problem p;
  p.code = fsck::Code::CP_FLAGS;
  flags.problems.push_back(p);
  EXPECT_EQ(flags.exit_code(), 4);
}

TEST(FsckClean, RichImages) {
  for (const auto& [name, o] : rich_specs()) {
    auto ri = f2fstest::build_rich_image(o);
    ASSERT_TRUE(ri.error.empty()) << name << ": " << ri.error;
    auto dev = ri.img.to_device();
    auto r = run(*dev, fsck::Mode::check_only);
    // The rich image is built for the reader: files are written straight
    // into the NAT and the main area without updating the checkpoint
    // counts, the SSA, the SIT types or the quota files, its hard links share one inode
    // with i_links left as written, and its inline directory has no "."
    // and ".." entries. Those shortcuts are what the checker must find;
    // anything else is a false positive.
    std::string unexpected;
    for (const auto& p : r.problems) {
      switch (p.code) {
        case fsck::Code::CP_VALID_BLOCK_COUNT: case fsck::Code::CP_VALID_NODE_COUNT:
        case fsck::Code::CP_VALID_INODE_COUNT: case fsck::Code::CP_FREE_SEGMENT_COUNT:
        case fsck::Code::SSA_NODE_MISMATCH: case fsck::Code::SSA_DATA_MISMATCH:
        case fsck::Code::SIT_TYPE_MISMATCH: case fsck::Code::INODE_LINKS:
        case fsck::Code::QUOTA_USAGE:  // the quota files still hold mkfs's usage (root, lost+found)
          break;
        case fsck::Code::DENTRY_DOT: case fsck::Code::DENTRY_DOTDOT:
          if (p.ino == ri.inl) break;
          [[fallthrough]];
        // Its compressed clusters leave the unused slots NULL_ADDR and count
        // neither the header slot in i_blocks nor in i_compr_blocks; Linux
        // 6.1 reserves them (NEW_ADDR) and counts both, as the Linux-written
        // fixture shows (LinuxFixtures below is clean under these rules).
        case fsck::Code::INODE_BLOCKS: case fsck::Code::INODE_COMPR_BLOCKS:
          if (p.ino && (*p.ino == ri.lz4 || *p.ino == ri.zstd || *p.ino == ri.lzo || *p.ino == ri.lzo_rle)) break;
          [[fallthrough]];
        default: unexpected += p.to_string() + "\n";
      }
    }
    EXPECT_TRUE(unexpected.empty()) << name << ":\n" << unexpected;
    EXPECT_TRUE(r.full_check);
    EXPECT_GE(r.stats.inodes, 11u) << name;
  }
}

TEST(FsckClean, LinuxFixtures) {
  for (const char* f : {"linux61-casefold.img.zst", "linux61-compress.img.zst", "mkfs115-64M-allfeat.img.zst"}) {
    SparseImage img;
    ASSERT_TRUE(load_zst(fs::path(F2FSCORE_TESTDATA_DIR) / f, img)) << f;
    auto dev = img.to_device();
    auto r = run(*dev, fsck::Mode::check_only);
    EXPECT_TRUE(r.problems.empty()) << f << ":\n" << dump(r);
  }
}

TEST(FsckPreen, CleanVolumeTakesTheFastPath) {
  SparseImage img;
  ASSERT_TRUE(load_zst(fs::path(F2FSCORE_TESTDATA_DIR) / "linux61-compress.img.zst", img));
  auto dev = img.to_device();
  auto r = run(*dev, fsck::Mode::preen);
  EXPECT_FALSE(r.full_check);
  EXPECT_TRUE(r.problems.empty()) << dump(r);
  auto f = run(*dev, fsck::Mode::preen, true);
  EXPECT_TRUE(f.full_check);
  EXPECT_TRUE(f.problems.empty()) << dump(f);
}

// A zeroed inode block: fsck.f2fs -a says nothing (F2FS-FACTS 3.6); the fast
// check reads every node the NAT names and finds the footer gone.
TEST(FsckPreen, FastCheckFindsAZeroedInodeBlock) {
  auto ri = f2fstest::build_rich_image(rich_specs()[0].second);
  ASSERT_TRUE(ri.error.empty());
  const std::uint64_t blk = ri.node_blk.at(ri.small);
  ri.img.blocks.erase(blk);  // reads as zeroes
  auto dev = ri.img.to_device();
  fsck::Options o;
  o.mode = fsck::Mode::preen;
  auto r = fsck::check(*dev, o);
  ASSERT_TRUE(r.has_value());
  EXPECT_TRUE(r->full_check) << "the fast check must escalate";
  bool found = false;
  for (const auto& p : r->problems)
    found |= p.code == fsck::Code::NODE_FOOTER_NID && p.nid == ri.small && p.blkaddr == blk;
  EXPECT_TRUE(found) << dump(*r);
}

TEST(FsckCheckOnly, LeavesTheDeviceByteIdentical) {
  auto ri = f2fstest::build_rich_image(rich_specs()[0].second);
  ASSERT_TRUE(ri.error.empty());
  auto* n = ri.img.view<Node>(ri.node_blk.at(ri.small));
  n->i.i_links = 7u;
  f2fstest::reseal_block(ri.img, ri.node_blk.at(ri.small));
  auto dev = ri.img.to_device();
  auto before = SparseImage::capture(*dev);
  auto r = run(*dev, fsck::Mode::check_only);
  EXPECT_TRUE(has(r, fsck::Code::INODE_LINKS, ri.small)) << dump(r);
  EXPECT_FALSE(r.wrote);
  EXPECT_EQ(r.exit_code(), 4);
  auto after = SparseImage::capture(*dev);
  EXPECT_TRUE(before.blocks == after.blocks) << "check-only wrote to the device";
}

// Check-only through a direct-I/O open (O_DIRECT: 4 KiB blocks and aligned
// buffers) of an image file finds the same problems, with the same
// statistics, as through a buffered open of the same file; the problem is
// an aimed edit (i_links of /small set to 7). The file is on /var/tmp
// (tmpfs refuses O_DIRECT); skips where O_DIRECT is refused.
TEST(FsckCheckOnly, DirectIoReportsWhatBufferedDoes) {
#if !defined(__linux__)
  GTEST_SKIP() << "O_DIRECT image files are tested on Linux";
#else
  auto ri = f2fstest::build_rich_image(rich_specs()[0].second);
  ASSERT_TRUE(ri.error.empty());
  auto* n = ri.img.view<Node>(ri.node_blk.at(ri.small));
  n->i.i_links = 7u;
  f2fstest::reseal_block(ri.img, ri.node_blk.at(ri.small));
  const fs::path dir = fs::exists("/var/tmp") ? fs::path("/var/tmp") : fs::temp_directory_path();
  const fs::path img = dir / ("f2fscore-fsck-direct-" + std::to_string(::getpid()) + ".img");
  f2fstest::make_sparse_file(img, ri.img.size_bytes);
  {
    auto w = open_device(img.string(), OpenOptions{});
    ASSERT_TRUE(w.has_value()) << w.error().message;
    for (const auto& [blk, data] : ri.img.blocks)
      ASSERT_TRUE(write_at(*w->device, blk * kBlockSize, std::span<const std::uint8_t>(data.data(), data.size())));
    ASSERT_TRUE(flush(*w->device));
  }
  struct Removed {
    fs::path p;
    ~Removed() {
      std::error_code e;
      fs::remove(p, e);
    }
  } removed{img};
  OpenOptions oo;
  oo.read_only = true;
  oo.random_access = true;
  auto buffered = open_device(img.string(), oo);
  ASSERT_TRUE(buffered.has_value()) << buffered.error().message;
  const fsck::Report want = run(*buffered->device);
  ASSERT_TRUE(has(want, fsck::Code::INODE_LINKS, ri.small)) << dump(want);
  oo.direct = true;
  for (Backend b : {Backend::automatic, Backend::posix}) {
    BackendOptions bo;
    bo.backend = b;
    auto direct = open_device(img.string(), oo, bo);
    if (!direct && direct.error().code == Errc::unsupported) GTEST_SKIP() << direct.error().message;
    ASSERT_TRUE(direct.has_value()) << direct.error().message;
    ASSERT_TRUE(direct->device->info().direct);
    ASSERT_EQ(direct->device->info().buffer_alignment, 4096u);
    const fsck::Report got = run(*direct->device);
    EXPECT_EQ(dump(got), dump(want)) << backend_name(direct->backend);
    EXPECT_EQ(got.exit_code(), want.exit_code());
    EXPECT_EQ(got.stats.inodes, want.stats.inodes);
    EXPECT_EQ(got.stats.nodes, want.stats.nodes);
    EXPECT_EQ(got.stats.data_blocks, want.stats.data_blocks);
    EXPECT_TRUE(got.full_check);
  }
#endif
}

// A file's path in a report is its parent's and the name of its first
// dentry, read back from that dentry (here the root's dentry block; the
// image's other names of /small and /fifo are hard links walked later).
// Expected paths are the names the image was built with.
TEST(FsckReport, FilePathsComeFromTheirDentries) {
  auto ri = f2fstest::build_rich_image(rich_specs()[0].second);
  ASSERT_TRUE(ri.error.empty());
  const std::vector<std::string> paths = {"/small", "/fifo", "/chr", "/sock"};
  std::vector<nid_t> inos;
  {
    auto dev = ri.img.to_device();
    auto vol = Volume::open(*dev);
    ASSERT_TRUE(vol.has_value());
    for (const auto& path : paths) {
      auto in = (*vol)->resolve(path);
      ASSERT_TRUE(in.has_value()) << path;
      inos.push_back(in->ino);
    }
  }
  for (nid_t ino : inos) {
    auto* n = ri.img.view<Node>(ri.node_blk.at(ino));
    n->i.i_links = 9u;
    f2fstest::reseal_block(ri.img, ri.node_blk.at(ino));
  }
  auto dev = ri.img.to_device();
  auto r = run(*dev, fsck::Mode::check_only);
  for (std::size_t k = 0; k < inos.size(); ++k) {
    bool found = false;
    for (const auto& p : r.problems)
      if (p.code == fsck::Code::INODE_LINKS && p.ino == inos[k]) {
        found = true;
        EXPECT_EQ(p.path, paths[k]);
      }
    EXPECT_TRUE(found) << paths[k] << "\n" << dump(r);
  }
}

// Aimed edits; each expectation (code and object) is from the edit itself.
TEST(FsckDetect, AimedEdits) {
  const auto o = rich_specs()[0].second;
  struct Case {
    const char* name;
    fsck::Code code;
    std::function<nid_t(f2fstest::RichImage&)> edit;  // returns the ino the problem must name (0: any)
  };
  std::vector<Case> cases = {
      {"i_blocks + 1", fsck::Code::INODE_BLOCKS,
       [](f2fstest::RichImage& r) {
         auto* n = r.img.view<Node>(r.node_blk.at(r.big));
         n->i.i_blocks = n->i.i_blocks.get() + 1;
         f2fstest::reseal_block(r.img, r.node_blk.at(r.big));
         return r.big;
       }},
      {"checksum", fsck::Code::INODE_CHECKSUM,
       [](f2fstest::RichImage& r) {
         auto* n = r.img.view<Node>(r.node_blk.at(r.small));
         n->i.i_gid = n->i.i_gid.get() + 1;  // not resealed
         return r.small;
       }},
      {"dentry hash", fsck::Code::DENTRY_HASH,
       [](f2fstest::RichImage& r) {
         auto* d = r.img.view<DentryBlock>(r.root_dentry_blk);
         for (std::uint32_t i = 2; i < kNrDentryInBlock; ++i)
           if (test_bit_le(d->dentry_bitmap, i) && d->dentry[i].name_len.get()) {
             d->dentry[i].hash_code = d->dentry[i].hash_code.get() ^ 1;
             break;
           }
         return r.img.view<SuperBlock>(0) ? nid_t{3} : nid_t{3};
       }},
      {"dir i_links", fsck::Code::DIR_LINKS,
       [](f2fstest::RichImage& r) {
         auto* n = r.img.view<Node>(r.node_blk.at(r.dir));
         n->i.i_links = n->i.i_links.get() + 3;
         f2fstest::reseal_block(r.img, r.node_blk.at(r.dir));
         return r.dir;
       }},
  };
  for (auto& c : cases) {
    auto ri = f2fstest::build_rich_image(o);
    ASSERT_TRUE(ri.error.empty());
    const nid_t ino = c.edit(ri);
    auto dev = ri.img.to_device();
    auto r = run(*dev);
    EXPECT_TRUE(has(r, c.code, ino)) << c.name << ":\n" << dump(r);
    EXPECT_EQ(r.exit_code(), 4) << c.name;
  }
}

// Random damage to a rich image: every mode returns (a report or an
// Error), never crashes or hangs; after -y, a second -y run finds nothing
// new to write twice in a row (bounded: the repair converges or stops).
TEST(FsckRobust, RandomByteFlipsInAllModes) {
  auto ri = f2fstest::build_rich_image(rich_specs()[0].second);
  ASSERT_TRUE(ri.error.empty());
  std::vector<std::uint64_t> blocks;
  for (const auto& [b, d] : ri.img.blocks) blocks.push_back(b);
  std::uint64_t seed = 12345;
  auto rnd = [&] {
    seed = seed * 6364136223846793005ull + 1442695040888963407ull;
    return static_cast<std::uint32_t>(seed >> 33);
  };
  int opened = 0, ran = 0;
  // F2FSCORE_FSCK_FLIPS=N runs N rounds (default 150).
  const char* env = std::getenv("F2FSCORE_FSCK_FLIPS");
  const int rounds = env ? std::max(1, std::atoi(env)) : 150;
  for (int it = 0; it < rounds; ++it) {
    SparseImage img = ri.img;
    for (int k = 0; k < 6; ++k) {
      const std::uint64_t b = blocks[rnd() % blocks.size()];
      img.at(b)[rnd() % kBlockSize] ^= static_cast<std::uint8_t>(1u << (rnd() % 8));
    }
    if (it % 2) f2fstest::reseal_block(img, blocks[rnd() % blocks.size()]);
    if (!f2fstest::sampled(static_cast<std::uint64_t>(it))) continue;  // (the damage drawn all the same)
    ++ran;
    for (auto m : {fsck::Mode::check_only, fsck::Mode::preen, fsck::Mode::repair_all}) {
      auto dev = img.to_device();
      fsck::Options o;
      o.mode = m;
      auto r = fsck::check(*dev, o);
      if (r) ++opened;
      if (r && m == fsck::Mode::repair_all) {
        auto r2 = fsck::check(*dev, o);
        (void)r2;
      }
    }
  }
  EXPECT_GT(opened, ran * 2 / 3);
}

namespace {
std::unique_ptr<BlockDevice> fixture_device(const char* name) {
  SparseImage img;
  if (!load_zst(fs::path(F2FSCORE_TESTDATA_DIR) / name, img)) return nullptr;
  return img.to_device();
}
block_t inode_block(BlockDevice& dev, const char* path, nid_t* ino) {
  auto vol = Volume::open(dev);
  if (!vol) return 0;
  auto in = (*vol)->resolve(path);
  if (!in) return 0;
  *ino = in->ino;
  return in->node_blkaddr;
}
}  // namespace

// Linux-written compressed files hold reserved blocks (cluster headers,
// NEW_ADDR) that the checkpoint counts: a repair (which rewrites the
// checkpoint) keeps valid_block_count right, and the second run is clean.
TEST(FsckRepair, LinuxCompressedVolumeRoundTrip) {
  auto dev = fixture_device("linux61-compress.img.zst");
  ASSERT_TRUE(dev);
  nid_t ino = 0;
  const block_t blk = inode_block(*dev, "/lzo/mixed", &ino);
  ASSERT_NE(blk, 0u);
  std::vector<std::uint8_t> b(kBlockSize);
  ASSERT_TRUE(read_at(*dev, static_cast<std::uint64_t>(blk) * kBlockSize, b));
  reinterpret_cast<Node*>(b.data())->i.i_links = 3u;  // this volume has no inode checksums
  ASSERT_TRUE(write_at(*dev, static_cast<std::uint64_t>(blk) * kBlockSize, b));
  auto r1 = run(*dev, fsck::Mode::repair_all);
  EXPECT_TRUE(has(r1, fsck::Code::INODE_LINKS, ino)) << dump(r1);
  EXPECT_EQ(r1.exit_code(), 1) << dump(r1);
  EXPECT_TRUE(r1.wrote);
  auto r2 = run(*dev, fsck::Mode::check_only);
  EXPECT_TRUE(r2.problems.empty()) << dump(r2);
}

// Preen on a clean-marked volume with inode checksums: a directory's
// i_links changed without resealing is caught by the fast check (checksum),
// escalates to the full check, and both problems are safe to repair.
TEST(FsckRepair, PreenRepairsSafeProblems) {
  auto dev = fixture_device("mkfs115-64M-allfeat.img.zst");
  ASSERT_TRUE(dev);
  nid_t ino = 0;
  const block_t blk = inode_block(*dev, "/lost+found", &ino);
  ASSERT_NE(blk, 0u);
  std::vector<std::uint8_t> b(kBlockSize);
  ASSERT_TRUE(read_at(*dev, static_cast<std::uint64_t>(blk) * kBlockSize, b));
  auto* n = reinterpret_cast<Node*>(b.data());
  n->i.i_links = n->i.i_links.get() + 5;
  ASSERT_TRUE(write_at(*dev, static_cast<std::uint64_t>(blk) * kBlockSize, b));
  auto r1 = run(*dev, fsck::Mode::preen);
  EXPECT_TRUE(r1.full_check);
  EXPECT_TRUE(has(r1, fsck::Code::INODE_CHECKSUM, ino)) << dump(r1);
  EXPECT_TRUE(has(r1, fsck::Code::DIR_LINKS, ino)) << dump(r1);
  EXPECT_EQ(r1.exit_code(), 1) << dump(r1);
  auto r2 = run(*dev, fsck::Mode::check_only);
  EXPECT_TRUE(r2.problems.empty()) << dump(r2);
}

// Options::progress: a preen whose fast check finds an inode with a bad
// checksum reports passes 1 and 2 (fast check), 1 to 4 again (full check)
// and 5 (the repair writes); each pass runs from 0 to its max.
TEST(FsckProgress, CallbackReportsEveryPassInOrder) {
  auto dev = fixture_device("mkfs115-64M-allfeat.img.zst");
  ASSERT_TRUE(dev);
  nid_t ino = 0;
  const block_t blk = inode_block(*dev, "/lost+found", &ino);
  ASSERT_NE(blk, 0u);
  std::vector<std::uint8_t> b(kBlockSize);
  ASSERT_TRUE(read_at(*dev, static_cast<std::uint64_t>(blk) * kBlockSize, b));
  auto* n = reinterpret_cast<Node*>(b.data());
  n->i.i_links = n->i.i_links.get() + 5;
  ASSERT_TRUE(write_at(*dev, static_cast<std::uint64_t>(blk) * kBlockSize, b));
  struct Call {
    int pass;
    std::uint64_t cur, max;
  };
  std::vector<Call> calls;
  fsck::Options o;
  o.mode = fsck::Mode::preen;
  o.progress = [&](int pass, std::uint64_t cur, std::uint64_t max) { calls.push_back({pass, cur, max}); };
  auto r = fsck::check(*dev, o);
  ASSERT_TRUE(r.has_value());
  EXPECT_EQ(r->exit_code(), 1) << dump(*r);
  std::vector<int> passes;
  for (std::size_t i = 0; i < calls.size(); ++i) {
    const bool first = i == 0 || calls[i - 1].pass != calls[i].pass;
    const bool last = i + 1 == calls.size() || calls[i + 1].pass != calls[i].pass;
    EXPECT_LE(calls[i].cur, calls[i].max);
    if (first) {
      passes.push_back(calls[i].pass);
      EXPECT_EQ(calls[i].cur, 0u) << "pass " << calls[i].pass;
    } else {
      EXPECT_GE(calls[i].cur, calls[i - 1].cur);
    }
    if (last) EXPECT_EQ(calls[i].cur, calls[i].max) << "pass " << calls[i].pass;
  }
  EXPECT_EQ(passes, (std::vector<int>{1, 2, 1, 2, 3, 4, 5}));
}

// The user quota file of the mkfs.f2fs fixture says what root and
// lost+found use (2 inodes); one more inode in its id-0 entry must be
// reported against the user quota inode (sb.qf_ino[0]).
TEST(FsckQuota, UsageMismatchIsReported) {
  auto dev = fixture_device("mkfs115-64M-allfeat.img.zst");
  ASSERT_TRUE(dev);
  nid_t qino = 0;
  block_t patched = 0;
  {
    auto vol = Volume::open(*dev);
    ASSERT_TRUE(vol.has_value());
    qino = (*vol)->superblock().qf_ino[0].get();
    ASSERT_NE(qino, 0u);
    auto in = (*vol)->read_inode(qino);
    ASSERT_TRUE(in.has_value());
    for (std::uint64_t fb = 0; fb * kBlockSize < in->size && !patched; ++fb) {
      auto a = (*vol)->map_block(*in, fb);
      if (!a || !(*vol)->is_valid_main_addr(*a)) continue;
      std::vector<std::uint8_t> b(kBlockSize);
      ASSERT_TRUE(read_at(*dev, static_cast<std::uint64_t>(*a) * kBlockSize, b));
      // 1 KiB quota blocks; leaf blocks hold 72-byte v2r1 entries after a 16-byte header.
      for (std::uint32_t qb = (fb == 0 ? 2 : 0); qb < 4 && !patched; ++qb)
        for (std::uint32_t o = qb * 1024 + 16; o + 72 <= (qb + 1) * 1024; o += 72)
          if (load_le32(b.data(), o) == 0 && load_le64(b.data(), o + 24) == 2) {
            store_le64(b.data(), o + 24, 3);
            ASSERT_TRUE(write_at(*dev, static_cast<std::uint64_t>(*a) * kBlockSize, b));
            patched = *a;
            break;
          }
    }
  }
  ASSERT_NE(patched, 0u) << "no id-0 entry with 2 inodes in the user quota file";
  auto r = run(*dev, fsck::Mode::check_only);
  EXPECT_TRUE(has(r, fsck::Code::QUOTA_USAGE, qino)) << dump(r);
  EXPECT_EQ(r.problems.size(), 1u) << dump(r);
}

// Preen's summary counts each inode once: the fast path counts the inodes
// the NAT holds and walks no directory (dirs, files and data blocks stay
// 0 and are left out of the JSON); a preen that escalates to the full
// check counts what the walk finds, not the NAT's count on top of it. The
// reference: valid_inode_count of the checkpoint Linux wrote.
TEST(FsckPreen, SummaryCountsEachInodeOnce) {
  SparseImage img;
  ASSERT_TRUE(load_zst(fs::path(F2FSCORE_TESTDATA_DIR) / "linux61-compress.img.zst", img));
  auto dev = img.to_device();
  std::uint64_t linux_inodes = 0;
  {
    auto v = Volume::open(*dev);
    ASSERT_TRUE(v);
    linux_inodes = (*v)->checkpoint().valid_inode_count.get();
  }
  ASSERT_GT(linux_inodes, 2u);
  auto fast = run(*dev, fsck::Mode::preen);
  ASSERT_FALSE(fast.full_check);
  EXPECT_EQ(fast.stats.inodes, linux_inodes);
  EXPECT_EQ(fast.stats.dirs + fast.stats.files + fast.stats.data_blocks, 0u);
  fsck::ReportContext c;
  c.device = "img";
  c.mode = fsck::Mode::preen;
  const std::string j = fsck::render_report_json(fast, c);
  EXPECT_EQ(j.find("\"dirs\""), std::string::npos) << j;
  EXPECT_EQ(j.find("\"data_blocks\""), std::string::npos) << j;
  const std::string t = fsck::render_report_text(fast, c, false);
  EXPECT_NE(t.find("fast check (preen): 0 problems, 0 fixed; " + std::to_string(linux_inodes) + " inodes,"),
            std::string::npos)
      << t;
  EXPECT_EQ(t.find("0 dirs"), std::string::npos) << t;
  auto full = run(*dev, fsck::Mode::preen, true);
  ASSERT_TRUE(full.full_check);
  EXPECT_EQ(full.stats.inodes, linux_inodes);
  EXPECT_EQ(full.stats.dirs + full.stats.files, linux_inodes);
  EXPECT_NE(fsck::render_report_json(full, c).find("\"dirs\":"), std::string::npos);
}

// An escalating preen (the fast check finds a zeroed inode block) reports
// the inodes of its full check once, as a check-only full check does.
TEST(FsckPreen, EscalatedPreenCountsAsTheFullCheck) {
  auto ri = f2fstest::build_rich_image(rich_specs()[0].second);
  ASSERT_TRUE(ri.error.empty());
  ri.img.blocks.erase(ri.node_blk.at(ri.small));
  auto dev = ri.img.to_device();
  auto n = run(*dev, fsck::Mode::check_only, true);
  ASSERT_TRUE(n.full_check);
  ASSERT_GT(n.stats.inodes, 2u);
  fsck::Options o;
  o.mode = fsck::Mode::preen;
  auto p = fsck::check(*dev, o);
  ASSERT_TRUE(p.has_value());
  ASSERT_TRUE(p->full_check);
  EXPECT_EQ(p->stats.inodes, n.stats.inodes);
  EXPECT_EQ(p->stats.nodes, n.stats.nodes);
}
