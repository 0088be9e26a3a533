// The writer's compressed-file operations after writing: reserving released
// blocks (F2FS_IOC_RESERVE_COMPRESS_BLOCKS), compress_mode=user with
// F2FS_IOC_COMPRESS_FILE / F2FS_IOC_DECOMPRESS_FILE, and
// F2FS_IOC_GET/SET_COMPRESS_OPTION, with both checkers clean after each step.
//
// Expected values are hand-computed from Linux 6.1's rules (fs/f2fs/file.c,
// compress.c): a cluster of zeroes compresses to one block by every codec,
// so each whole zero cluster of c blocks saves c - 1 (i_compr_blocks) and,
// released, gives back c - 1 blocks (c less its one compressed block: the
// COMPRESS_ADDR slot and the NEW_ADDR slots); reserved, the same c - 1 come
// back and the saved slots are NEW_ADDR again. A cluster with a hole is never compressed by COMPRESS_FILE (the
// hole's page is not written: f2fs_do_write_data_page() takes NULL_ADDR as
// truncated). Errno values are Linux's (f2fs_reserve_compress_blocks(),
// f2fs_ioc_compress_file(), f2fs_ioc_set_compress_option()).
#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <gtest/gtest.h>
#include <map>
#include <random>
#include <sstream>

#include "f2fscore/mkfs.hpp"
#include "writer/writer_test_util.hpp"

namespace {

using namespace writertest;

constexpr std::uint32_t kComprFl = 0x4;        // F2FS_COMPR_FL
constexpr block_t kCompressAddr = 0xFFFFFFFEu;  // COMPRESS_ADDR
constexpr block_t kNewAddr = 0xFFFFFFFFu;       // NEW_ADDR

std::unique_ptr<BlockDevice> volume(std::uint64_t bytes, bool compression = true) {
  auto dev = make_memory_device(bytes);
  MkfsTarget t{dev.get(), "cops"};
  MkfsOptions o;
  o.features = kRichFeatures | (compression ? feature::compression : 0);
  o.timestamp = 1700000000;
  o.uuid = std::array<std::uint8_t, 16>{1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16};
  auto r = format_volume(std::span<const MkfsTarget>(&t, 1), o);
  if (!r) {
    ADD_FAILURE() << "mkfs: " << r.error().to_string();
    return nullptr;
  }
  return dev;
}

MountOptions opts(bool user = false) {
  MountOptions mo;
  mo.fixed_time = 1700000100;
  mo.compression.algorithm = 1;  // lz4
  mo.compression.log_size = 2;   // clusters of 4 blocks
  if (user) mo.compression.mode = MountOptions::Compression::Mode::user;
  return mo;
}

std::string random_bytes(std::size_t n, unsigned seed) {
  std::mt19937 rng(seed);
  std::string s(n, '\0');
  for (auto& c : s) c = static_cast<char>(rng());
  return s;
}

std::string text_bytes(std::size_t n) {
  std::string s;
  for (std::size_t i = 0; s.size() < n; ++i) s += "line " + std::to_string(i % 97) + " of a compressible file\n";
  s.resize(n);
  return s;
}

std::string read_all(Writer& w, nid_t ino, std::size_t n) {
  std::string got(n, '\0');
  auto r = w.read(ino, 0, std::span<std::uint8_t>(reinterpret_cast<std::uint8_t*>(got.data()), got.size()));
  if (!r) return "READ-ERROR " + r.error().to_string();
  return got;
}

// The block addresses of `path`'s first `count` blocks, through our reader.
std::vector<block_t> slots(BlockDevice& dev, const std::string& path, std::uint64_t count) {
  std::vector<block_t> out;
  auto v = Volume::open(dev);
  if (!v) return out;
  auto in = (*v)->resolve(path);
  if (!in) return out;
  for (std::uint64_t i = 0; i < count; ++i) {
    auto a = (*v)->map_block(*in, i);
    out.push_back(a ? *a : 0xDEADu);
  }
  return out;
}

std::uint64_t valid_block_count(BlockDevice& dev) {
  auto v = Volume::open(dev);
  return v ? (*v)->checkpoint().valid_block_count.get() : 0;
}

// 4 zero clusters and a 2-block tail (plain): released gives back 4 x 3,
// reserved takes the same 12 back; the file is writable again.
TEST(CompressReserve, ReleaseThenReserveRestoresTheCluster) {
  auto dev = volume(192ull << 20);
  ASSERT_TRUE(dev);
  const std::string zero(4 * 4 * 4096 + 2 * 4096, '\0');
  std::string text = text_bytes(6 * 4 * 4096 + 100);
  {
    auto w = Writer::mount(*dev, opts());
    ASSERT_TRUE(w) << w.error().to_string();
    auto d = (*w)->mkdir("/c");
    ASSERT_TRUE(d && (*w)->set_flags(*d, kComprFl, kComprFl));
    for (const auto& [p, data] : {std::pair<std::string, const std::string*>{"/c/zero", &zero}, {"/c/text", &text}}) {
      auto f = (*w)->create(p);
      ASSERT_TRUE(f) << p;
      ASSERT_TRUE((*w)->write(*f, 0, bytes(*data))) << p;
    }
    ASSERT_TRUE((*w)->unmount());
  }
  const std::uint64_t vbc0 = valid_block_count(*dev);
  const std::vector<block_t> before = slots(*dev, "/c/zero", 4);
  ASSERT_EQ(before.size(), 4u);
  EXPECT_EQ(before[0], kCompressAddr);
  EXPECT_EQ(before[2], kNewAddr) << "a saved slot is reserved";
  std::uint64_t text_compr = 0, text_blocks = 0;
  {
    auto w = Writer::mount(*dev, opts());
    ASSERT_TRUE(w);
    auto z = (*w)->stat("/c/zero", true);
    auto t = (*w)->stat("/c/text", true);
    ASSERT_TRUE(z && t);
    EXPECT_EQ(z->compr_blocks, 12u);
    EXPECT_EQ(z->blocks, 4u * 4 + 2 + 1);
    text_compr = t->compr_blocks;
    text_blocks = t->blocks;
    ASSERT_GT(text_compr, 0u);
    // Reserve on a file not released: EINVAL, nothing changes.
    auto nr = (*w)->reserve_compress_blocks(z->ino);
    ASSERT_FALSE(nr);
    EXPECT_EQ(nr.error().sys_errno, EINVAL) << nr.error().to_string();
    auto rel = (*w)->release_compress_blocks(z->ino);
    ASSERT_TRUE(rel) << rel.error().to_string();
    EXPECT_EQ(*rel, 12u);
    auto rt = (*w)->release_compress_blocks(t->ino);
    ASSERT_TRUE(rt);
    EXPECT_EQ(*rt, text_compr);
    ASSERT_TRUE((*w)->unmount());
  }
  EXPECT_EQ(valid_block_count(*dev), vbc0 - 12 - text_compr);
  const std::vector<block_t> released = slots(*dev, "/c/zero", 4);
  ASSERT_EQ(released.size(), 4u);
  EXPECT_EQ(released[2], 0u) << "NEW_ADDR became NULL_ADDR";
  check_clean(*dev, "released");
  {
    auto w = Writer::mount(*dev, opts());
    ASSERT_TRUE(w);
    auto z = (*w)->stat("/c/zero", true);
    auto t = (*w)->stat("/c/text", true);
    ASSERT_TRUE(z && t);
    auto res = (*w)->reserve_compress_blocks(z->ino);
    ASSERT_TRUE(res) << res.error().to_string();
    EXPECT_EQ(*res, 12u);
    auto z2 = (*w)->stat(z->ino);
    ASSERT_TRUE(z2);
    EXPECT_EQ(z2->compr_blocks, 12u);
    EXPECT_EQ(z2->blocks, 4u * 4 + 2 + 1);
    EXPECT_GT(z2->ctime.sec, 0u);
    auto again = (*w)->reserve_compress_blocks(z->ino);
    ASSERT_FALSE(again);
    EXPECT_EQ(again.error().sys_errno, EINVAL) << "not released any more";
    auto rt = (*w)->reserve_compress_blocks(t->ino);
    ASSERT_TRUE(rt);
    EXPECT_EQ(*rt, text_compr);
    EXPECT_EQ((*w)->stat(t->ino)->blocks, text_blocks);
    ASSERT_TRUE((*w)->unmount());
  }
  EXPECT_EQ(valid_block_count(*dev), vbc0);
  const std::vector<block_t> reserved = slots(*dev, "/c/zero", 4);
  EXPECT_EQ(reserved, before) << "the same COMPRESS_ADDR, block and NEW_ADDR slots";
  check_clean(*dev, "reserved");
  // Writable again: a patch in a compressed cluster of each file.
  std::string zero2 = zero;
  {
    auto w = Writer::mount(*dev, opts());
    ASSERT_TRUE(w);
    const std::string patch(5000, 'R');
    for (auto [p, data] : {std::pair<std::string, std::string*>{"/c/zero", &zero2}, {"/c/text", &text}}) {
      auto s = (*w)->stat(p, true);
      ASSERT_TRUE(s);
      ASSERT_TRUE((*w)->write(s->ino, 4096 * 4 + 300, bytes(patch))) << p;
      data->replace(4096 * 4 + 300, patch.size(), patch);
    }
    ASSERT_TRUE((*w)->unmount());
  }
  auto v = Volume::open(*dev);
  ASSERT_TRUE(v);
  for (auto [p, data] : {std::pair<std::string, std::string*>{"/c/zero", &zero2}, {"/c/text", &text}}) {
    auto in = (*v)->resolve(p);
    ASSERT_TRUE(in);
    EXPECT_TRUE(contents::content_of(**v, *in) == *data) << p;
  }
  v->reset();
  check_clean(*dev, "written after the reserve");
}

// Clusters whose compressed data fills all but one slot (10 KiB of random
// bytes and 6 KiB of zeroes in a cluster of 4 blocks: 3 compressed blocks)
// save one block, their COMPRESS_ADDR slot: released, each gives it back;
// reserved, each takes it back. Linux (Debian's 6.1.0-57 under the oracle,
// the same bytes written with lz4 and clusters of 4) gave i_compr_blocks 3,
// released 3, reserved 3, i_blocks back as before, fsck.f2fs clean.
TEST(CompressReserve, ClustersSavingOneBlockTakeItBack) {
  auto dev = volume(192ull << 20);
  ASSERT_TRUE(dev);
  std::string data;
  for (unsigned c = 0; c < 3; ++c) data += random_bytes(10240, 70 + c) + std::string(6144, '\0');
  {
    auto w = Writer::mount(*dev, opts());
    ASSERT_TRUE(w);
    auto d = (*w)->mkdir("/c");
    ASSERT_TRUE(d && (*w)->set_flags(*d, kComprFl, kComprFl));
    auto f = (*w)->create("/c/f");
    ASSERT_TRUE(f);
    ASSERT_TRUE((*w)->write(*f, 0, bytes(data)));
    ASSERT_TRUE((*w)->sync());
    const WriterStat before = *(*w)->stat(*f);
    EXPECT_EQ(before.compr_blocks, 3u);
    auto rel = (*w)->release_compress_blocks(*f);
    ASSERT_OK(rel);
    EXPECT_EQ(*rel, 3u);
    EXPECT_EQ((*w)->stat(*f)->blocks, before.blocks - 3);
    auto res = (*w)->reserve_compress_blocks(*f);
    ASSERT_OK(res);
    EXPECT_EQ(*res, 3u);
    EXPECT_EQ((*w)->stat(*f)->blocks, before.blocks);
    EXPECT_EQ((*w)->stat(*f)->compr_blocks, 3u);
    EXPECT_EQ(read_all(**w, *f, data.size()), data);
    ASSERT_TRUE((*w)->unmount());
  }
  check_clean(*dev, "released and reserved clusters saving one block");
}

TEST(CompressReserve, RefusalsChangeNothing) {
  auto plain_dev = volume(192ull << 20, false);
  ASSERT_TRUE(plain_dev);
  {
    auto w = Writer::mount(*plain_dev);
    ASSERT_TRUE(w);
    auto f = (*w)->create("/f");
    ASSERT_TRUE(f);
    auto r = (*w)->reserve_compress_blocks(*f);
    ASSERT_FALSE(r);
    EXPECT_EQ(r.error().sys_errno, EOPNOTSUPP) << "no compression feature";
    ASSERT_TRUE((*w)->unmount());
  }
  auto dev = volume(192ull << 20);
  ASSERT_TRUE(dev);
  {
    auto w = Writer::mount(*dev, opts());
    ASSERT_TRUE(w);
    auto p = (*w)->create("/plain");
    ASSERT_TRUE(p);
    ASSERT_TRUE((*w)->write(*p, 0, bytes(std::string(20000, 'p'))));
    auto r = (*w)->reserve_compress_blocks(*p);
    ASSERT_FALSE(r);
    EXPECT_EQ(r.error().sys_errno, EINVAL) << "not a compressed file";
    auto d = (*w)->mkdir("/c");
    ASSERT_TRUE(d && (*w)->set_flags(*d, kComprFl, kComprFl));
    auto z = (*w)->create("/c/z");
    ASSERT_TRUE(z);
    ASSERT_TRUE((*w)->write(*z, 0, bytes(std::string(8 * 4096, '\0'))));
    ASSERT_TRUE((*w)->release_compress_blocks(*z));
    ASSERT_TRUE((*w)->unmount());
  }
  // A read-only mount: EROFS, the device unchanged.
  std::string all(static_cast<std::size_t>(dev->info().size_bytes), '\0');
  ASSERT_TRUE(read_at(*dev, 0, std::span<std::uint8_t>(reinterpret_cast<std::uint8_t*>(all.data()), all.size())));
  const std::string d0 = digest(all);
  {
    MountOptions ro = opts();
    ro.read_only = true;
    auto w = Writer::mount(*dev, ro);
    ASSERT_TRUE(w);
    auto z = (*w)->stat("/c/z", true);
    ASSERT_TRUE(z);
    auto r = (*w)->reserve_compress_blocks(z->ino);
    ASSERT_FALSE(r);
    EXPECT_EQ(r.error().sys_errno == 0 ? errno_of(r.error()) : r.error().sys_errno, EROFS);
    ASSERT_TRUE((*w)->unmount());
  }
  ASSERT_TRUE(read_at(*dev, 0, std::span<std::uint8_t>(reinterpret_cast<std::uint8_t*>(all.data()), all.size())));
  EXPECT_EQ(digest(all), d0) << "a read-only mount wrote nothing";
  check_clean(*dev, "after the refusals");
}

// ENOSPC before the first change: a released file on a full volume keeps
// its released state and counts; once space is freed the reserve works.
TEST(CompressReserve, NoSpaceIsCheckedFirst) {
  auto dev = volume(64ull << 20);
  ASSERT_TRUE(dev);
  MountOptions mo = opts();
  auto w = Writer::mount(*dev, mo);
  ASSERT_TRUE(w);
  auto d = (*w)->mkdir("/c");
  ASSERT_TRUE(d && (*w)->set_flags(*d, kComprFl, kComprFl));
  auto z = (*w)->create("/c/z");
  ASSERT_TRUE(z);
  const std::string zero(16 * 4096, '\0');
  ASSERT_TRUE((*w)->write(*z, 0, bytes(zero)));
  auto rel = (*w)->release_compress_blocks(*z);
  ASSERT_TRUE(rel);
  EXPECT_EQ(*rel, 12u);
  auto fill = (*w)->create("/fill");
  ASSERT_TRUE(fill);
  const std::string chunk = random_bytes(1 << 20, 5);
  std::uint64_t off = 0;
  for (;;) {
    auto r = (*w)->write(*fill, off, bytes(chunk));
    if (!r || *r < chunk.size()) break;
    off += chunk.size();
  }
  // Block by block to the last free block.
  for (;;) {
    auto r = (*w)->write(*fill, off, bytes(chunk.substr(0, 4096)));
    if (!r || *r < 4096) break;
    off += 4096;
    if (!(*w)->sync()) break;
  }
  (void)(*w)->sync();
  const auto before = (*w)->stat(*z);
  ASSERT_TRUE(before);
  auto r = (*w)->reserve_compress_blocks(*z);
  ASSERT_FALSE(r) << "reserved " << *r << " blocks on a full volume";
  EXPECT_EQ(r.error().code, Errc::no_space) << r.error().to_string();
  const auto after = (*w)->stat(*z);
  ASSERT_TRUE(after);
  EXPECT_EQ(after->blocks, before->blocks);
  EXPECT_EQ(after->compr_blocks, 0u);
  auto wr = (*w)->write(*z, 0, bytes("x"));
  ASSERT_FALSE(wr);
  EXPECT_EQ(wr.error().sys_errno, EPERM) << "still released";
  ASSERT_TRUE((*w)->truncate(*fill, off / 2));
  ASSERT_TRUE((*w)->sync());
  auto ok = (*w)->reserve_compress_blocks(*z);
  ASSERT_TRUE(ok) << ok.error().to_string();
  EXPECT_EQ(*ok, 12u);
  ASSERT_TRUE((*w)->write(*z, 0, bytes("x")));
  ASSERT_TRUE((*w)->unmount());
  check_clean(*dev, "after ENOSPC and the reserve");
}

// compress_mode=user: writes are plain; COMPRESS_FILE compresses the full
// clusters without holes; DECOMPRESS_FILE makes them plain again.
TEST(CompressUserMode, CompressFileAndDecompressFile) {
  auto dev = volume(192ull << 20);
  ASSERT_TRUE(dev);
  // zero: 5 zero clusters, a hole cluster (2), a 3-block tail.
  std::string zero(9 * 4 * 4096 + 3 * 4096, '\0');
  zero.replace(4 * 4 * 4096 + 10, 3, "abc");  // cluster 4 still compresses
  const std::string text = text_bytes(8 * 4 * 4096);
  const std::string rnd = random_bytes(3 * 4 * 4096, 9);
  nid_t zi = 0, ti = 0, ri = 0;
  {
    auto w = Writer::mount(*dev, opts(true));
    ASSERT_TRUE(w) << w.error().to_string();
    auto d = (*w)->mkdir("/c");
    ASSERT_TRUE(d && (*w)->set_flags(*d, kComprFl, kComprFl));
    auto z = (*w)->create("/c/zero");
    ASSERT_TRUE(z);
    zi = *z;
    // Clusters 0-4, then 6-8 and the tail: cluster 5 is a hole.
    ASSERT_TRUE((*w)->write(zi, 0, bytes(zero.substr(0, 5 * 4 * 4096))));
    ASSERT_TRUE((*w)->write(zi, 6 * 4 * 4096, bytes(zero.substr(6 * 4 * 4096))));
    auto t = (*w)->create("/c/text");
    auto r = (*w)->create("/c/random");
    ASSERT_TRUE(t && r);
    ti = *t;
    ri = *r;
    ASSERT_TRUE((*w)->write(ti, 0, bytes(text)));
    ASSERT_TRUE((*w)->write(ri, 0, bytes(rnd)));
    ASSERT_TRUE((*w)->sync());
    for (nid_t i : {zi, ti, ri}) EXPECT_EQ((*w)->stat(i)->compr_blocks, 0u) << "user mode writes plain";
    EXPECT_EQ((*w)->stat(zi)->blocks, 8u * 4 + 3 + 1);
    ASSERT_TRUE((*w)->unmount());
  }
  EXPECT_NE(slots(*dev, "/c/zero", 1)[0], kCompressAddr);
  check_clean(*dev, "user mode, plain");
  std::uint64_t text_saved = 0;
  {
    auto w = Writer::mount(*dev, opts(true));
    ASSERT_TRUE(w);
    for (nid_t i : {zi, ti, ri}) ASSERT_TRUE((*w)->compress_file(i)) << i;
    // Clusters 0-4 and 6-8 of zero: 8 x 3; the hole and the tail plain.
    EXPECT_EQ((*w)->stat(zi)->compr_blocks, 8u * 3);
    EXPECT_EQ((*w)->stat(zi)->blocks, 8u * 4 + 3 + 1) << "the saved blocks stay reserved";
    EXPECT_EQ((*w)->stat(ri)->compr_blocks, 0u);
    text_saved = (*w)->stat(ti)->compr_blocks;
    EXPECT_GT(text_saved, 0u);
    EXPECT_TRUE(read_all(**w, zi, zero.size()) == zero);
    EXPECT_TRUE(read_all(**w, ti, text.size()) == text);
    ASSERT_TRUE((*w)->unmount());
  }
  {
    const auto s = slots(*dev, "/c/zero", 9 * 4);
    ASSERT_EQ(s.size(), 36u);
    EXPECT_EQ(s[0], kCompressAddr);
    EXPECT_EQ(s[5 * 4], 0u) << "the hole stays a hole";
    EXPECT_EQ(s[6 * 4], kCompressAddr);
  }
  check_clean(*dev, "after COMPRESS_FILE");
  // The same text compressed at writeback in fs mode saves as many blocks.
  {
    auto w = Writer::mount(*dev, opts(false));
    ASSERT_TRUE(w);
    auto f = (*w)->create("/c/text.fs");
    ASSERT_TRUE(f);
    ASSERT_TRUE((*w)->write(*f, 0, bytes(text)));
    ASSERT_TRUE((*w)->sync());
    EXPECT_EQ((*w)->stat(*f)->compr_blocks, text_saved);
    ASSERT_TRUE((*w)->unmount());
  }
  // User mode: a write into a compressed cluster makes it plain.
  std::string text2 = text;
  {
    auto w = Writer::mount(*dev, opts(true));
    ASSERT_TRUE(w);
    const std::string patch(100, 'U');
    ASSERT_TRUE((*w)->write(zi, 10, bytes(patch)));
    zero.replace(10, patch.size(), patch);
    { auto s0 = (*w)->sync(); ASSERT_TRUE(s0) << s0.error().to_string(); }
    EXPECT_EQ((*w)->stat(zi)->compr_blocks, 7u * 3);
    ASSERT_TRUE((*w)->decompress_file(zi));
    ASSERT_TRUE((*w)->decompress_file(ti));
    EXPECT_EQ((*w)->stat(zi)->compr_blocks, 0u);
    EXPECT_EQ((*w)->stat(ti)->compr_blocks, 0u);
    EXPECT_EQ((*w)->stat(zi)->blocks, 8u * 4 + 3 + 1);
    ASSERT_TRUE((*w)->decompress_file(ri)) << "nothing to do";
    ASSERT_TRUE((*w)->unmount());
  }
  EXPECT_NE(slots(*dev, "/c/zero", 1)[0], kCompressAddr);
  auto v = Volume::open(*dev);
  ASSERT_TRUE(v);
  for (auto [p, data] : {std::pair<std::string, const std::string*>{"/c/zero", &zero}, {"/c/text", &text2}, {"/c/random", &rnd}}) {
    auto in = (*v)->resolve(p);
    ASSERT_TRUE(in);
    EXPECT_TRUE(contents::content_of(**v, *in) == *data) << p;
  }
  v->reset();
  check_clean(*dev, "after DECOMPRESS_FILE");
}

// Rewriting a file of 30 % of the volume back and forth: each rewrite
// invalidates what the last wrote, and only a checkpoint makes that space
// free again (f2fs_balance_fs() between pages in the kernel). Every rewrite
// succeeds, the unmount's checkpoint finds its room, and the file reads back.
TEST(CompressUserMode, RewritesMakeRoomAsTheyGo) {
  auto dev = volume(1ull << 30);
  ASSERT_TRUE(dev);
  const std::string zero(300ull << 20, '\0');
  {
    auto w = Writer::mount(*dev, opts(true));
    ASSERT_TRUE(w) << w.error().to_string();
    auto d = (*w)->mkdir("/c");
    ASSERT_TRUE(d && (*w)->set_flags(*d, kComprFl, kComprFl));
    auto f = (*w)->create("/c/big");
    ASSERT_TRUE(f);
    ASSERT_TRUE((*w)->write(*f, 0, bytes(zero)));
    for (int round = 0; round < 2; ++round) {
      auto c = (*w)->compress_file(*f);
      ASSERT_TRUE(c) << "round " << round << ": " << c.error().to_string();
      auto u = (*w)->decompress_file(*f);
      ASSERT_TRUE(u) << "round " << round << ": " << u.error().to_string();
    }
    auto um = (*w)->unmount();
    ASSERT_TRUE(um) << um.error().to_string();
  }
  check_clean(*dev, "rewritten back and forth");
  auto w = Writer::mount(*dev, opts(true));
  ASSERT_TRUE(w);
  auto f = (*w)->lookup("/c/big");
  ASSERT_TRUE(f);
  EXPECT_TRUE(read_all(**w, *f, zero.size()) == zero);
}

TEST(CompressUserMode, Refusals) {
  auto dev = volume(192ull << 20);
  ASSERT_TRUE(dev);
  {
    auto w = Writer::mount(*dev, opts(false));
    ASSERT_TRUE(w);
    auto d = (*w)->mkdir("/c");
    ASSERT_TRUE(d && (*w)->set_flags(*d, kComprFl, kComprFl));
    auto z = (*w)->create("/c/z");
    ASSERT_TRUE(z);
    ASSERT_TRUE((*w)->write(*z, 0, bytes(std::string(8 * 4096, '\0'))));
    ASSERT_TRUE((*w)->sync());
    const WriterStats s0 = (*w)->stats();
    for (bool c : {true, false}) {
      auto r = c ? (*w)->compress_file(*z) : (*w)->decompress_file(*z);
      ASSERT_FALSE(r);
      EXPECT_EQ(r.error().sys_errno, EOPNOTSUPP) << "compress_mode fs: " << r.error().to_string();
    }
    auto nr = (*w)->reserve_compress_blocks(*z);
    ASSERT_FALSE(nr);
    EXPECT_EQ(nr.error().sys_errno, EINVAL) << "reserve of a file not released";
    const WriterStats s1 = (*w)->stats();
    EXPECT_EQ(s1.data_blocks_written, s0.data_blocks_written) << "the refusals wrote nothing";
    EXPECT_EQ(s1.node_pages_dirty, 0u) << "the refusals changed no node";
    auto p = (*w)->create("/plain");
    ASSERT_TRUE(p);
    ASSERT_TRUE((*w)->release_compress_blocks(*z));
    ASSERT_TRUE((*w)->unmount());
  }
  {
    auto w = Writer::mount(*dev, opts(true));
    ASSERT_TRUE(w);
    auto p = (*w)->stat("/plain", true);
    auto z = (*w)->stat("/c/z", true);
    ASSERT_TRUE(p && z);
    auto r = (*w)->compress_file(p->ino);
    ASSERT_FALSE(r);
    EXPECT_EQ(r.error().sys_errno, EINVAL) << "not compressed";
    r = (*w)->compress_file(z->ino);
    ASSERT_FALSE(r);
    EXPECT_EQ(r.error().sys_errno, EINVAL) << "released";
    EXPECT_EQ((*w)->stat(z->ino)->blocks, z->blocks);
    ASSERT_TRUE((*w)->unmount());
  }
  check_clean(*dev, "after the refusals");
  // compress_mode without the feature: refused at mount.
  auto plain = volume(192ull << 20, false);
  ASSERT_TRUE(plain);
  MountOptions mo;
  mo.compression.mode = MountOptions::Compression::Mode::user;
  auto w = Writer::mount(*plain, mo);
  ASSERT_FALSE(w);
  EXPECT_EQ(w.error().code, Errc::invalid_argument);
  EXPECT_NE(w.error().message.find("no compression feature"), std::string::npos) << w.error().message;
}

TEST(CompressOption, GetAndSet) {
  auto dev = volume(192ull << 20);
  ASSERT_TRUE(dev);
  {
    MountOptions mo = opts();
    mo.compression.chksum = true;
    auto w = Writer::mount(*dev, mo);
    ASSERT_TRUE(w);
    auto d = (*w)->mkdir("/c");
    ASSERT_TRUE(d && (*w)->set_flags(*d, kComprFl, kComprFl));
    auto e = (*w)->create("/c/e");
    auto f = (*w)->create("/c/f");
    auto p = (*w)->create("/p");
    ASSERT_TRUE(e && f && p);
    auto g = (*w)->get_compress_option(*e);
    ASSERT_TRUE(g);
    EXPECT_EQ(g->algorithm, 1);
    EXPECT_EQ(g->log_cluster_size, 2);
    auto gp = (*w)->get_compress_option(*p);
    ASSERT_FALSE(gp);
    EXPECT_EQ(gp.error().sys_errno, ENODATA);
    Writer::CompressOption zstd8{2, 3};
    auto bad = (*w)->set_compress_option(*e, Writer::CompressOption{2, 9});
    ASSERT_FALSE(bad);
    EXPECT_EQ(bad.error().sys_errno, EINVAL);
    bad = (*w)->set_compress_option(*e, Writer::CompressOption{4, 3});
    ASSERT_FALSE(bad);
    EXPECT_EQ(bad.error().sys_errno, EINVAL);
    bad = (*w)->set_compress_option(*p, zstd8);
    ASSERT_FALSE(bad);
    EXPECT_EQ(bad.error().sys_errno, EINVAL) << "not compressed";
    ASSERT_TRUE((*w)->write(*f, 0, bytes(std::string(4096, 'f'))));
    bad = (*w)->set_compress_option(*f, zstd8);
    ASSERT_FALSE(bad);
    EXPECT_EQ(bad.error().sys_errno, EBUSY) << "dirty pages";
    ASSERT_TRUE((*w)->sync());
    bad = (*w)->set_compress_option(*f, zstd8);
    ASSERT_FALSE(bad);
    EXPECT_EQ(bad.error().sys_errno, EFBIG) << "has blocks";
    ASSERT_TRUE((*w)->set_compress_option(*e, zstd8));
    g = (*w)->get_compress_option(*e);
    ASSERT_TRUE(g);
    EXPECT_EQ(g->algorithm, 2);
    EXPECT_EQ(g->log_cluster_size, 3);
    // Clusters of 8 now: 2 zero clusters save 2 x 7.
    ASSERT_TRUE((*w)->write(*e, 0, bytes(std::string(16 * 4096, '\0'))));
    ASSERT_TRUE((*w)->sync());
    EXPECT_EQ((*w)->stat(*e)->compr_blocks, 14u);
    ASSERT_TRUE((*w)->unmount());
  }
  auto v = Volume::open(*dev);
  ASSERT_TRUE(v);
  auto e = (*v)->resolve("/c/e");
  ASSERT_TRUE(e);
  EXPECT_EQ(e->raw.i.extra.i_compress_algorithm, 2);
  EXPECT_EQ(e->raw.i.extra.i_log_cluster_size, 3);
  EXPECT_EQ(e->raw.i.extra.i_compress_flag.get(), 0x101u) << "zstd level 1 << 8, COMPRESS_CHKSUM kept";
  v->reset();
  check_clean(*dev, "after SET_COMPRESS_OPTION");
}


// ---- The Linux oracle (writer_compress_linux.sh, the /ops directory) -------
//
// Step 1b, on the image of WriterCompressOracle.DISABLED_WriteImage: /ops
// (lz4, clusters of 4) holds rr, released and reserved by us; mixed, written
// under compress_mode=user and compressed by our COMPRESS_FILE; dec,
// compressed and decompressed by us. WRITER_IMAGE.ops_expect lists
// "path sha256" for the guest.

constexpr std::size_t kCl = 4 * 4096;

std::string rr_data() { return text_bytes(10 * kCl) + std::string(4 * kCl, '\0'); }

// Clusters: zero, random, half random and half zero, a hole, zero, half and
// half, then 2 blocks and 100 bytes of text (plain: not a full cluster).
// COMPRESS_FILE saves 3 in each zero cluster and 1 in each half cluster
// (8 KiB of random bytes take 3 blocks with the header): 8.
std::string mixed_data() {
  const std::string half = random_bytes(kCl / 2, 3) + std::string(kCl / 2, '\0');
  return std::string(kCl, '\0') + random_bytes(kCl, 4) + half + std::string(kCl, '\0') + std::string(kCl, '\0') + half +
         text_bytes(2 * 4096 + 100);
}
constexpr std::uint64_t kMixedSaved = 2 * 3 + 2 * 1;

std::string dec_data() { return text_bytes(5 * kCl + 300); }

TEST(WriterCompressOpsOracle, DISABLED_WriteImage) {
  const char* img = std::getenv("WRITER_IMAGE");
  ASSERT_NE(img, nullptr) << "set WRITER_IMAGE";
  auto dev = f2fstest::load_image(img);
  ASSERT_TRUE(dev);
  const std::string rr = rr_data(), mixed = mixed_data(), dec = dec_data();
  std::uint64_t dec_saved = 0;
  {
    auto w = Writer::mount(*dev, opts(false));
    ASSERT_TRUE(w) << w.error().to_string();
    auto d = (*w)->mkdir("/ops");
    ASSERT_TRUE(d && (*w)->set_flags(*d, kComprFl, kComprFl));
    auto f = (*w)->create("/ops/rr");
    ASSERT_TRUE(f);
    ASSERT_TRUE((*w)->write(*f, 0, bytes(rr)));
    ASSERT_TRUE((*w)->sync());
    const std::uint64_t saved = (*w)->stat(*f)->compr_blocks;
    EXPECT_GE(saved, 4u * 3);
    auto rel = (*w)->release_compress_blocks(*f);
    ASSERT_TRUE(rel);
    EXPECT_EQ(*rel, saved);
    auto res = (*w)->reserve_compress_blocks(*f);
    ASSERT_TRUE(res) << res.error().to_string();
    EXPECT_EQ(*res, saved);
    ASSERT_TRUE((*w)->unmount());
  }
  {
    auto w = Writer::mount(*dev, opts(true));
    ASSERT_TRUE(w) << w.error().to_string();
    auto m = (*w)->create("/ops/mixed");
    ASSERT_TRUE(m);
    ASSERT_TRUE((*w)->write(*m, 0, bytes(mixed.substr(0, 3 * kCl))));
    ASSERT_TRUE((*w)->write(*m, 4 * kCl, bytes(mixed.substr(4 * kCl))));
    ASSERT_TRUE((*w)->sync());
    EXPECT_EQ((*w)->stat(*m)->compr_blocks, 0u);
    ASSERT_TRUE((*w)->compress_file(*m));
    EXPECT_EQ((*w)->stat(*m)->compr_blocks, kMixedSaved);
    auto e = (*w)->create("/ops/dec");
    ASSERT_TRUE(e);
    ASSERT_TRUE((*w)->write(*e, 0, bytes(dec)));
    ASSERT_TRUE((*w)->compress_file(*e));
    dec_saved = (*w)->stat(*e)->compr_blocks;
    EXPECT_GT(dec_saved, 0u);
    ASSERT_TRUE((*w)->decompress_file(*e));
    EXPECT_EQ((*w)->stat(*e)->compr_blocks, 0u);
    ASSERT_TRUE((*w)->unmount());
  }
  check_clean(*dev, "the /ops files");
  ASSERT_TRUE(save(*dev, img));
  std::ofstream(std::string(img) + ".ops_expect")
      << "/ops/rr " << sha256_hex(rr) << "\n/ops/mixed " << sha256_hex(mixed) << "\n/ops/dec " << sha256_hex(dec) << "\n";
  std::ofstream(std::string(img) + ".ops_ours") << "dec_compressed " << dec_saved << "\n";
}

// Step 4b, after Linux (WRITER_IMAGE.ops: "key value" lines the guest
// wrote): rr reads with Linux's 5000 'L' at 20000; Linux released
// linrel (its copy of /lz4/zero: 12 zero clusters of 4 and a 2-block tail,
// so 36 blocks, hand-computed) and we reserve the same 36, then write into
// it; Linux's COMPRESS_FILE of the same bytes as mixed saved kMixedSaved
// blocks, as ours, and of dec's text as many as ours (WRITER_IMAGE.ops_ours);
// Linux's DECOMPRESS_FILE left dec.linux as many blocks
// as ours left dec; Linux's SET_COMPRESS_OPTION (zstd, clusters of 8) on
// opt left the i_compress_flag ours leaves and its zeroes saved 14. Both
// checkers clean; WRITER_IMAGE.ops_final lists
// "path sha256" for Linux to read again.
TEST(WriterCompressOpsOracle, DISABLED_AfterLinux) {
  const char* img = std::getenv("WRITER_IMAGE");
  ASSERT_NE(img, nullptr) << "set WRITER_IMAGE";
  auto dev = f2fstest::load_image(img);
  ASSERT_TRUE(dev);
  std::map<std::string, std::string> said;
  {
    std::ifstream in(std::string(img) + ".ops");
    std::string line;
    while (std::getline(in, line)) {
      const auto sp = line.find(' ');
      if (sp != std::string::npos) said[line.substr(0, sp)] = line.substr(sp + 1);
    }
  }
  for (const char* k : {"linrel_released", "mixed_plain", "mixed_linux", "dec_linux_compressed", "dec_linux", "opt_saved"})
    ASSERT_TRUE(said.count(k)) << "the guest did not report " << k;
  EXPECT_EQ(said["linrel_released"], "36");
  EXPECT_EQ(said["mixed_plain"], "0") << "Linux in compress_mode=user writes plain";
  EXPECT_EQ(said["mixed_linux"], std::to_string(kMixedSaved)) << "Linux's COMPRESS_FILE of the same bytes";
  EXPECT_EQ(said["dec_linux"], "0");
  EXPECT_EQ(said["opt_saved"], "14") << "zstd clusters of 8 after SET_COMPRESS_OPTION: 2 zero clusters save 7 each";
  {
    std::ifstream in(std::string(img) + ".ops_ours");
    std::string key, ours;
    ASSERT_TRUE(in >> key >> ours);
    EXPECT_EQ(said["dec_linux_compressed"], ours) << "COMPRESS_FILE of dec's text: Linux's count, ours";
  }
  std::string rr = rr_data();
  rr.replace(20000, 5000, std::string(5000, 'L'));
  const std::string mixed = mixed_data();
  std::map<std::string, std::string> final_data;
  std::uint16_t linux_opt_flag = 0;
  {
    auto v = Volume::open(*dev);
    ASSERT_TRUE(v);
    auto r = (*v)->resolve("/ops/rr");
    ASSERT_TRUE(r);
    EXPECT_TRUE(contents::content_of(**v, *r) == rr) << "rr as Linux wrote it";
    auto ours = (*v)->resolve("/ops/mixed");
    auto lin = (*v)->resolve("/ops/mixed.linux");
    ASSERT_TRUE(ours && lin);
    EXPECT_TRUE(contents::content_of(**v, *lin) == mixed);
    EXPECT_EQ(lin->raw.i.extra.i_compr_blocks.get(), ours->raw.i.extra.i_compr_blocks.get());
    EXPECT_EQ(lin->blocks, ours->blocks) << "the same clusters compressed, the same hole";
    for (std::uint64_t i = 0; i < 7 * 4; i += 4) {
      auto a = (*v)->map_block(*ours, i);
      auto b = (*v)->map_block(*lin, i);
      ASSERT_TRUE(a && b);
      EXPECT_EQ(*a == kCompressAddr, *b == kCompressAddr) << "cluster " << i / 4;
      EXPECT_EQ(*a == 0, *b == 0) << "cluster " << i / 4;
    }
    auto d = (*v)->resolve("/ops/dec");
    auto dl = (*v)->resolve("/ops/dec.linux");
    ASSERT_TRUE(d && dl);
    EXPECT_TRUE(contents::content_of(**v, *dl) == dec_data());
    EXPECT_EQ(dl->blocks, d->blocks);
    EXPECT_EQ(dl->raw.i.extra.i_compr_blocks.get(), 0u);
    auto opt = (*v)->resolve("/ops/opt");
    ASSERT_TRUE(opt);
    linux_opt_flag = opt->raw.i.extra.i_compress_flag.get();
    EXPECT_EQ(opt->raw.i.extra.i_compress_algorithm, 2);
    EXPECT_EQ(opt->raw.i.extra.i_log_cluster_size, 3);
    auto lr = (*v)->resolve("/ops/linrel");
    ASSERT_TRUE(lr);
    EXPECT_TRUE(lr->raw.i.i_inline & inline_flag::compress_released);
    final_data["/ops/linrel"] = contents::content_of(**v, *lr);
  }
  {
    auto w = Writer::mount(*dev, opts(false));
    ASSERT_TRUE(w) << w.error().to_string();
    auto lr = (*w)->stat("/ops/linrel", true);
    ASSERT_TRUE(lr);
    auto res = (*w)->reserve_compress_blocks(lr->ino);
    ASSERT_TRUE(res) << res.error().to_string();
    EXPECT_EQ(std::to_string(*res), said["linrel_released"]) << "we reserve what Linux released";
    EXPECT_EQ((*w)->stat(lr->ino)->compr_blocks, *res);
    const std::string patch(5000, 'W');
    ASSERT_TRUE((*w)->write(lr->ino, 3000, bytes(patch)));
    final_data["/ops/linrel"].replace(3000, patch.size(), patch);
    // Our SET_COMPRESS_OPTION of the same values as Linux's on opt.
    auto o2 = (*w)->create("/ops/opt2");
    ASSERT_TRUE(o2);
    ASSERT_TRUE((*w)->set_compress_option(*o2, Writer::CompressOption{2, 3}));
    ASSERT_TRUE((*w)->write(*o2, 0, bytes(std::string(65536, '\0'))));
    ASSERT_TRUE((*w)->sync());
    EXPECT_EQ(std::to_string((*w)->stat(*o2)->compr_blocks), said["opt_saved"]);
    ASSERT_TRUE((*w)->unmount());
  }
  {
    auto v = Volume::open(*dev);
    ASSERT_TRUE(v);
    auto o2 = (*v)->resolve("/ops/opt2");
    ASSERT_TRUE(o2);
    EXPECT_EQ(o2->raw.i.extra.i_compress_flag.get(), linux_opt_flag) << "the level bits as Linux sets them";
    std::printf("i_compress_flag after SET_COMPRESS_OPTION zstd: Linux 0x%x, ours 0x%x\n", linux_opt_flag,
                o2->raw.i.extra.i_compress_flag.get());
  }
  final_data["/ops/rr"] = rr;
  final_data["/ops/mixed.linux"] = mixed;
  std::string final_expect;
  {
    auto v = Volume::open(*dev);
    ASSERT_TRUE(v);
    for (const auto& [p, data] : final_data) {
      auto in = (*v)->resolve(p);
      ASSERT_TRUE(in) << p;
      EXPECT_TRUE(contents::content_of(**v, *in) == data) << p;
      final_expect += p + " " + sha256_hex(data) + "\n";
    }
  }
  check_clean(*dev, "after our reserve of Linux's released file");
  ASSERT_TRUE(save(*dev, img));
  std::ofstream(std::string(img) + ".ops_final") << final_expect;
}

}  // namespace
