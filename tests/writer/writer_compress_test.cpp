// The writer on compression volumes (f2fscore-mkfs -O extra_attr,compression):
// files written in clusters as Linux 6.1 writes them, for each algorithm and
// clusters of 4 and 16 blocks, read back through our reader after a
// remount, with both checkers clean.
//
// Expected values are hand-computed: a cluster of zeroes compresses to one
// block by every codec, so a file of N whole zero clusters has
// i_compr_blocks N x (cluster - 1) (f2fs_i_compr_blocks_update()) and keeps
// cluster blocks each in i_blocks (the saved blocks stay reserved); random
// bytes save no block and are stored plain (i_compr_blocks 0); a tail
// cluster with fewer pages than the cluster is never compressed
// (cluster_may_compress(): f2fs_cluster_is_full()). Errno values are
// Linux's (f2fs_setflags_common()).
#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <gtest/gtest.h>
#include <random>

#include "f2fscore/mkfs.hpp"
#include "writer/writer_test_util.hpp"

namespace {

using namespace writertest;

constexpr std::uint32_t kComprFl = 0x4;  // F2FS_COMPR_FL

std::unique_ptr<BlockDevice> compr_volume(bool with_feature = true) {
  auto dev = make_memory_device(192ull << 20);
  MkfsTarget t{dev.get(), "compr"};
  MkfsOptions o;
  o.features = kRichFeatures | (with_feature ? feature::compression : 0);
  o.timestamp = 1700000000;
  o.uuid = std::array<std::uint8_t, 16>{1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16};
  auto r = format_volume(std::span<const MkfsTarget>(&t, 1), o);
  if (!r) {
    ADD_FAILURE() << "mkfs: " << r.error().to_string();
    return nullptr;
  }
  return dev;
}

MountOptions opts(std::uint8_t alg, std::uint8_t log) {
  MountOptions mo;
  mo.fixed_time = 1700000100;
  mo.compression.algorithm = alg;
  mo.compression.log_size = log;
  mo.compression.chksum = true;
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

std::string read_back(Volume& v, const std::string& path) {
  auto in = v.resolve(path);
  if (!in) return "RESOLVE-ERROR " + in.error().to_string();
  return contents::content_of(v, *in);
}

struct Case {
  std::uint8_t alg;
  std::uint8_t log;
};

class CompressWrite : public ::testing::TestWithParam<Case> {};

TEST_P(CompressWrite, ClustersReadBackAndCheckersClean) {
  const auto [alg, log] = GetParam();
  const std::size_t cs = std::size_t{1} << log;
  const std::size_t cluster_bytes = cs * 4096;
  auto dev = compr_volume();
  ASSERT_TRUE(dev);
  std::map<std::string, std::string> want;
  {
    auto w = Writer::mount(*dev, opts(alg, log));
    ASSERT_TRUE(w) << w.error().to_string();
    auto d = (*w)->mkdir("/c");
    ASSERT_TRUE(d);
    ASSERT_TRUE((*w)->set_flags(*d, kComprFl, kComprFl));
    // Zeroes: 3 whole clusters and a tail of 2 blocks (plain).
    want["/c/zero"] = std::string(3 * cluster_bytes + 2 * 4096, '\0');
    want["/c/text"] = text_bytes(5 * cluster_bytes + 1234);
    want["/c/random"] = random_bytes(2 * cluster_bytes + 100, 7);
    for (const auto& [p, data] : want) {
      auto f = (*w)->create(p);
      ASSERT_TRUE(f) << p;
      auto st = (*w)->stat(*f);
      ASSERT_TRUE(st);
      EXPECT_TRUE(st->flags & kComprFl) << p << " inherits F2FS_COMPR_FL";
      ASSERT_TRUE((*w)->write(*f, 0, bytes(data))) << p;
    }
    ASSERT_TRUE((*w)->sync());
    auto sub = (*w)->mkdir("/c/sub");
    ASSERT_TRUE(sub);
    EXPECT_TRUE((*w)->stat(*sub)->flags & kComprFl) << "a directory inherits the flag";
    ASSERT_TRUE((*w)->unmount());
  }
  auto v = Volume::open(*dev);
  ASSERT_TRUE(v);
  for (const auto& [p, data] : want) EXPECT_TRUE(read_back(**v, p) == data) << p << " reads back";
  auto zero = (*v)->resolve("/c/zero");
  ASSERT_TRUE(zero);
  EXPECT_TRUE(zero->is_compressed());
  EXPECT_EQ(zero->raw.i.extra.i_compress_algorithm, alg);
  EXPECT_EQ(zero->raw.i.extra.i_log_cluster_size, log);
  EXPECT_EQ(zero->raw.i.extra.i_compress_flag.get(), 1u) << "COMPRESS_CHKSUM";
  EXPECT_EQ(zero->raw.i.extra.i_compr_blocks.get(), 3 * (cs - 1));
  // 3 clusters of cs reserved-or-written slots, 2 plain blocks, the inode.
  EXPECT_EQ(zero->blocks, 3 * cs + 2 + 1);
  auto rnd = (*v)->resolve("/c/random");
  ASSERT_TRUE(rnd);
  EXPECT_EQ(rnd->raw.i.extra.i_compr_blocks.get(), 0u) << "random clusters save nothing";
  auto text = (*v)->resolve("/c/text");
  ASSERT_TRUE(text);
  EXPECT_GT(text->raw.i.extra.i_compr_blocks.get(), 0u);
  v->reset();
  check_clean(*dev, "after the first session");

  // Second session: overwrite inside a compressed cluster, truncate inside
  // one, append; then remount and read.
  {
    auto w = Writer::mount(*dev, opts(alg, log));
    ASSERT_TRUE(w) << w.error().to_string();
    const std::string patch = "PATCHED-IN-THE-MIDDLE";
    auto ino = (*w)->stat("/c/text", true);
    ASSERT_TRUE(ino);
    ASSERT_TRUE((*w)->write(ino->ino, cluster_bytes + 4096 + 10, bytes(patch)));
    want["/c/text"].replace(cluster_bytes + 4096 + 10, patch.size(), patch);
    // Truncate the zero file into its second cluster.
    auto z = (*w)->stat("/c/zero", true);
    ASSERT_TRUE(z);
    const std::uint64_t cut = cluster_bytes + 4096 + 5;
    ASSERT_TRUE((*w)->truncate(z->ino, cut));
    want["/c/zero"].resize(static_cast<std::size_t>(cut));
    const std::string more = text_bytes(cluster_bytes);
    ASSERT_TRUE((*w)->write(ino->ino, want["/c/text"].size(), bytes(more)));
    want["/c/text"] += more;
    ASSERT_TRUE((*w)->unmount());
  }
  v = Volume::open(*dev);
  ASSERT_TRUE(v);
  for (const auto& [p, data] : want) EXPECT_TRUE(read_back(**v, p) == data) << p << " reads back after session 2";
  zero = (*v)->resolve("/c/zero");
  ASSERT_TRUE(zero);
  // Cluster 0 compressed; cluster 1 rewritten compressed (zeroes).
  EXPECT_EQ(zero->raw.i.extra.i_compr_blocks.get(), 2 * (cs - 1));
  v->reset();
  check_clean(*dev, "after the second session");
}

const Case kCases[] = {{0, 2}, {0, 4}, {1, 2}, {1, 4}, {2, 2}, {2, 4}, {3, 2}, {3, 4}};
std::string case_name(const ::testing::TestParamInfo<Case>& i) {
  const char* n[] = {"lzo", "lz4", "zstd", "lzorle"};
  return std::string(n[i.param.alg]) + "_log" + std::to_string(i.param.log);
}
INSTANTIATE_TEST_SUITE_P(Algorithms, CompressWrite, ::testing::ValuesIn(kCases), case_name);

TEST(CompressFlags, RulesOfSetflags) {
  auto dev = compr_volume();
  ASSERT_TRUE(dev);
  auto w = Writer::mount(*dev, opts(1, 2));
  ASSERT_TRUE(w);
  auto f = (*w)->create("/f");
  ASSERT_TRUE(f);
  ASSERT_TRUE((*w)->write(*f, 0, bytes(std::string(8192, 'x'))));
  ASSERT_TRUE((*w)->sync());
  auto r = (*w)->set_flags(*f, kComprFl, kComprFl);
  ASSERT_FALSE(r);
  EXPECT_EQ(r.error().sys_errno, EINVAL) << "a file with data";
  auto e = (*w)->create("/e");
  ASSERT_TRUE(e);
  EXPECT_TRUE((*w)->set_flags(*e, kComprFl, kComprFl));
  EXPECT_TRUE((*w)->set_flags(*e, 0, kComprFl)) << "cleared again while empty";
  auto l = (*w)->symlink("/f", "/l");
  ASSERT_TRUE(l);
  // A symlink: no fileattr_set in its inode operations (the ioctl's
  // ENOTTY, vfs_fileattr_set()).
  auto s = (*w)->set_flags(*l, kComprFl, kComprFl);
  ASSERT_FALSE(s);
  EXPECT_EQ(s.error().sys_errno, ENOTTY);
  ASSERT_TRUE((*w)->unmount());
}

TEST(CompressFlags, ExtensionOption) {
  auto dev = compr_volume();
  ASSERT_TRUE(dev);
  MountOptions mo = opts(2, 2);
  mo.compression.extension = {"txt"};
  mo.compression.nocompress_extension = {"jpg"};
  auto w = Writer::mount(*dev, mo);
  ASSERT_TRUE(w) << w.error().to_string();
  auto a = (*w)->create("/a.TXT");
  auto b = (*w)->create("/b.jpg");
  auto c = (*w)->create("/c");
  ASSERT_TRUE(a && b && c);
  EXPECT_TRUE((*w)->stat(*a)->flags & kComprFl);
  EXPECT_FALSE((*w)->stat(*b)->flags & kComprFl);
  EXPECT_FALSE((*w)->stat(*c)->flags & kComprFl);
  ASSERT_TRUE((*w)->unmount());
}

TEST(CompressFlags, OptionsWithoutTheFeatureAreRefused) {
  auto dev = compr_volume(false);
  ASSERT_TRUE(dev);
  auto w = Writer::mount(*dev, opts(1, 2));
  ASSERT_FALSE(w);
  EXPECT_EQ(w.error().code, Errc::invalid_argument) << w.error().to_string();
  MountOptions bad = opts(1, 9);
  auto dev2 = compr_volume();
  auto w2 = Writer::mount(*dev2, bad);
  ASSERT_FALSE(w2);
  EXPECT_EQ(w2.error().code, Errc::invalid_argument);
}

// Without a page cache (cache_bytes 0) every block goes out at once: a
// cluster is never whole at writeback, so new clusters are written plain,
// and the file reads back.
TEST(CompressWriteNoCache, BlockByBlock) {
  auto dev = compr_volume();
  ASSERT_TRUE(dev);
  MountOptions mo = opts(1, 2);
  mo.cache_bytes = 0;
  std::string data = text_bytes(4 * 4096 * 3);
  {
    auto w = Writer::mount(*dev, mo);
    ASSERT_TRUE(w);
    auto d = (*w)->mkdir("/c");
    ASSERT_TRUE(d && (*w)->set_flags(*d, kComprFl, kComprFl));
    auto f = (*w)->create("/c/f");
    ASSERT_TRUE(f);
    ASSERT_TRUE((*w)->write(*f, 0, bytes(data)));
    const std::string patch(100, 'Z');
    ASSERT_TRUE((*w)->write(*f, 5000, bytes(patch)));
    data.replace(5000, patch.size(), patch);
    ASSERT_TRUE((*w)->unmount());
  }
  auto v = Volume::open(*dev);
  ASSERT_TRUE(v);
  EXPECT_TRUE(read_back(**v, "/c/f") == data);
  v->reset();
  check_clean(*dev, "no cache");
}

// A file appended in writes that do not line up with its clusters, through
// a page cache of 32 pages that fills many times meanwhile: the writeback of
// the full cache leaves the cluster being filled dirty, so every whole
// cluster is stored compressed, as Linux stores a file written at once (its
// page cache writes the clusters after they filled). Zeroes compress to one
// block: 40 whole clusters of 16 blocks save 40 x 15 blocks; the 5-block
// tail is plain.
TEST(CompressWriteSmallCache, AppendedClustersStayWhole) {
  auto dev = compr_volume();
  ASSERT_TRUE(dev);
  MountOptions mo = opts(1, 4);
  mo.cache_bytes = 32 * 4096;
  const std::string data(40 * 16 * 4096 + 5 * 4096, '\0');
  {
    auto w = Writer::mount(*dev, mo);
    ASSERT_TRUE(w);
    auto f = (*w)->create("/f");
    ASSERT_TRUE(f);
    ASSERT_TRUE((*w)->set_flags(*f, kComprFl, kComprFl));
    for (std::size_t off = 0; off < data.size(); off += 5000) {
      const std::size_t n = std::min<std::size_t>(5000, data.size() - off);
      ASSERT_TRUE((*w)->write(*f, off, bytes(data.substr(off, n))));
    }
    ASSERT_TRUE((*w)->unmount());
  }
  auto v = Volume::open(*dev);
  ASSERT_TRUE(v);
  EXPECT_TRUE(read_back(**v, "/f") == data);
  auto in = (*v)->resolve("/f");
  ASSERT_TRUE(in);
  EXPECT_EQ(in->raw.i.extra.i_compr_blocks.get(), 40u * 15u);
  v->reset();
  check_clean(*dev, "appended through a small cache");
}

// A compressed cluster rewritten whole with bytes that do not compress is
// stored plain (f2fs_write_raw_pages()): its header slot (COMPRESS_ADDR)
// takes a data block as a reserved slot does, and the cluster saves nothing
// (i_compr_blocks back to 0, hand-computed: one cluster, now plain), by
// fsync and by sync.
TEST(CompressWrite, CompressedClusterRewrittenPlain) {
  for (const bool use_fsync : {true, false}) {
    auto dev = compr_volume();
    ASSERT_TRUE(dev);
    const std::size_t cluster_bytes = 4 * 4096;
    const std::string plain = random_bytes(cluster_bytes, 9);
    {
      auto w = Writer::mount(*dev, opts(1, 2));
      ASSERT_TRUE(w);
      auto d = (*w)->mkdir("/c");
      ASSERT_TRUE(d && (*w)->set_flags(*d, kComprFl, kComprFl));
      auto f = (*w)->create("/c/f");
      ASSERT_TRUE(f);
      ASSERT_TRUE((*w)->write(*f, 0, bytes(std::string(cluster_bytes, 'a'))));
      ASSERT_TRUE((*w)->sync());
      EXPECT_EQ((*w)->stat(*f)->compr_blocks, 3u) << "a cluster of one byte value compresses to one block";
      ASSERT_TRUE((*w)->write(*f, 0, bytes(plain)));
      auto s = use_fsync ? (*w)->fsync(*f) : (*w)->sync();
      ASSERT_TRUE(s) << s.error().to_string();
      EXPECT_EQ((*w)->stat(*f)->compr_blocks, 0u);
      ASSERT_TRUE((*w)->unmount());
    }
    auto v = Volume::open(*dev);
    ASSERT_TRUE(v);
    EXPECT_TRUE(read_back(**v, "/c/f") == plain);
    v->reset();
    check_clean(*dev, use_fsync ? "cluster rewritten plain, fsync" : "cluster rewritten plain, sync");
  }
}

// GC moves a compressed file's blocks as they are (move_data_block()): after
// half the files go, GC moves every block out of the segments they were in;
// the rest read the same and both checkers are clean.
TEST(CompressGc, MovesCompressedBlocks) {
  auto dev = compr_volume();
  ASSERT_TRUE(dev);
  std::map<std::string, std::string> keep;
  {
    auto w = Writer::mount(*dev, opts(2, 2));
    ASSERT_TRUE(w);
    auto d = (*w)->mkdir("/c");
    ASSERT_TRUE(d && (*w)->set_flags(*d, kComprFl, kComprFl));
    for (int i = 0; i < 40; ++i) {
      const std::string p = "/c/f" + std::to_string(i);
      const std::string data = text_bytes(200000 + 4096 * static_cast<std::size_t>(i)) + random_bytes(9000, static_cast<unsigned>(i));
      auto f = (*w)->create(p);
      ASSERT_TRUE(f);
      ASSERT_TRUE((*w)->write(*f, 0, bytes(data)));
      ASSERT_TRUE((*w)->sync());  // interleave the files' segments
      if (i % 2) keep[p] = data;
    }
    for (int i = 0; i < 40; i += 2) ASSERT_TRUE((*w)->unlink("/c/f" + std::to_string(i)));
    ASSERT_TRUE((*w)->sync());
    // Every block of the first 12 segments (where the files are) moves.
    auto g = (*w)->evacuate_front(12);
    ASSERT_TRUE(g) << g.error().to_string();
    auto st = (*w)->stats();
    EXPECT_GT(st.gc.data_blocks_moved, 0u) << "GC moved compressed files' blocks";
    for (const auto& [p, data] : keep) {
      auto s = (*w)->stat(p, true);
      ASSERT_TRUE(s);
      std::string got(data.size(), '\0');
      ASSERT_TRUE((*w)->read(s->ino, 0, std::span<std::uint8_t>(reinterpret_cast<std::uint8_t*>(got.data()), got.size())));
      EXPECT_TRUE(got == data) << p << " through the writer after GC";
    }
    ASSERT_TRUE((*w)->unmount());
  }
  auto v = Volume::open(*dev);
  ASSERT_TRUE(v);
  for (const auto& [p, data] : keep) EXPECT_TRUE(read_back(**v, p) == data) << p << " after GC";
  v->reset();
  check_clean(*dev, "after GC");
}

// ---- The Linux oracle (writer_compress_linux.sh) ----------------------------

// One directory per algorithm: name, i_compress_algorithm, log cluster size.
struct OracleDir {
  const char* name;
  std::uint8_t alg, log;
};
const OracleDir kOracleDirs[] = {{"lzo", 0, 2}, {"lz4", 1, 4}, {"zstd", 2, 2}, {"lzo-rle", 3, 4}};

// Step 1: per algorithm a compressed directory with a zero file, a text
// file and a random file; WRITER_IMAGE.expect lists "path sha256 size
// i_compr_blocks" for the guest and for step 4.
// ---- Read-only images (the ro feature) filled at build time ----------------
//
// Expected values come from the kernel and f2fs-tools: an ro volume mounts
// read-only only (parse_options() in fs/f2fs/super.c), writes two logs, hot
// data and hot node (NR_CURSEG_RO_TYPE, __get_segment_type_2()), and leaves
// the other four where mkfs.f2fs put them (mkfs_parity_test compares our
// mkfs -O ro with mkfs.f2fs's); a released compressed file keeps only its
// compressed blocks in i_blocks, NULL_ADDR where NEW_ADDR was and
// i_compr_blocks 0 (release_compress_blocks() in fs/f2fs/file.c; what
// fsck.f2fs counts for F2FS_COMPRESS_RELEASED). fsck.f2fs -f is run in the
// interop build.

std::unique_ptr<BlockDevice> ro_volume(std::uint64_t bytes, std::uint32_t features) {
  auto dev = make_memory_device(bytes);
  MkfsTarget t{dev.get(), "ro"};
  MkfsOptions o;
  o.features = feature::ro | features;
  o.timestamp = 1700000000;
  o.uuid = std::array<std::uint8_t, 16>{1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16};
  auto r = format_volume(std::span<const MkfsTarget>(&t, 1), o);
  if (!r) {
    ADD_FAILURE() << "mkfs: " << r.error().to_string();
    return nullptr;
  }
  return dev;
}

std::string device_digest(BlockDevice& dev) {
  std::string all(static_cast<std::size_t>(dev.info().size_bytes), '\0');
  if (!read_at(dev, 0, std::span<std::uint8_t>(reinterpret_cast<std::uint8_t*>(all.data()), all.size()))) return "READ-ERROR";
  return digest(all);
}

TEST(RoImage, BuildModeWritesTwoLogsReleasesAndCheckersClean) {
  auto dev = ro_volume(96ull << 20, feature::extra_attr | feature::compression);
  ASSERT_TRUE(dev);
  const std::string fresh = device_digest(*dev);
  Checkpoint cp0;
  {
    auto v = Volume::open(*dev);
    ASSERT_TRUE(v);
    cp0 = (*v)->checkpoint();
  }
  // A read-write mount is refused, nothing written; a read-only one reads.
  {
    auto w = Writer::mount(*dev);
    ASSERT_FALSE(w);
    EXPECT_EQ(w.error().code, Errc::unsupported);
    EXPECT_NE(w.error().message.find("ro feature"), std::string::npos) << w.error().message;
    MountOptions ro;
    ro.read_only = true;
    auto r = Writer::mount(*dev, ro);
    ASSERT_TRUE(r) << r.error().to_string();
    EXPECT_TRUE((*r)->unmount());
    MountOptions both;
    both.build_ro_image = true;
    both.read_only = true;
    auto b = Writer::mount(*dev, both);
    ASSERT_FALSE(b);
    EXPECT_EQ(b.error().code, Errc::invalid_argument);
  }
  EXPECT_EQ(device_digest(*dev), fresh) << "refused and read-only mounts wrote nothing";

  std::map<std::string, std::string> want;
  want["/sys/big.bin"] = random_bytes(5u << 20, 3);  // several segments
  want["/sys/etc/hosts"] = "127.0.0.1 localhost\n";
  want["/sys/lib/a.txt"] = text_bytes(200 * 1024 + 77);
  want["/sys/lib/z.txt"] = std::string(64 * 4096, '\0');
  {
    MountOptions mo;
    mo.fixed_time = 1700000100;
    mo.build_ro_image = true;
    mo.compression.algorithm = 2;  // zstd
    mo.compression.extension = {"txt"};
    auto w = Writer::mount(*dev, mo);
    ASSERT_TRUE(w) << w.error().to_string();
    for (const char* d : {"/sys", "/sys/etc", "/sys/lib"}) ASSERT_TRUE((*w)->mkdir(d)) << d;
    for (const auto& [p, data] : want) {
      auto f = (*w)->create(p);
      ASSERT_TRUE(f) << p;
      ASSERT_TRUE((*w)->write(*f, 0, bytes(data))) << p;
    }
    ASSERT_TRUE((*w)->symlink("/sys/etc/hosts", "/hosts"));
    ASSERT_TRUE((*w)->fsync((*w)->stat("/sys/etc/hosts", true)->ino));
    // Released: 64 zero blocks in clusters of 4, each one compressed block.
    auto z = (*w)->stat("/sys/lib/z.txt", true);
    ASSERT_TRUE(z);
    EXPECT_EQ(z->compr_blocks, 16u * 3);
    auto rel = (*w)->release_compress_blocks(z->ino);
    ASSERT_TRUE(rel) << rel.error().to_string();
    EXPECT_EQ(*rel, 16u * 3);
    auto again = (*w)->release_compress_blocks(z->ino);
    ASSERT_FALSE(again);
    EXPECT_EQ(again.error().code, Errc::invalid_argument);
    auto a = (*w)->stat("/sys/lib/a.txt", true);
    ASSERT_TRUE(a);
    ASSERT_TRUE((*w)->release_compress_blocks(a->ino));
    auto plain = (*w)->stat("/sys/big.bin", true);
    ASSERT_TRUE(plain);
    auto np = (*w)->release_compress_blocks(plain->ino);
    ASSERT_FALSE(np);
    EXPECT_EQ(np.error().code, Errc::invalid_argument);
    // A released file's data is read-only (EPERM).
    auto wr = (*w)->write(z->ino, 0, bytes("x"));
    EXPECT_FALSE(wr);
    ASSERT_TRUE((*w)->unmount());
  }
  auto v = Volume::open(*dev);
  ASSERT_TRUE(v);
  for (const auto& [p, data] : want) EXPECT_TRUE(read_back(**v, p) == data) << p << " reads back";
  const Checkpoint& cp = (*v)->checkpoint();
  for (int t = 1; t < 3; ++t) {
    EXPECT_EQ(cp.cur_data_segno[t].get(), cp0.cur_data_segno[t].get()) << "data log " << t << " unused";
    EXPECT_EQ(cp.cur_data_blkoff[t].get(), cp0.cur_data_blkoff[t].get());
    EXPECT_EQ(cp.cur_node_segno[t].get(), cp0.cur_node_segno[t].get()) << "node log " << t << " unused";
    EXPECT_EQ(cp.cur_node_blkoff[t].get(), cp0.cur_node_blkoff[t].get());
  }
  EXPECT_TRUE(cp.ckpt_flags.get() & cp_flag::umount);
  std::vector<SegmentInfo> segs;
  ASSERT_TRUE((*v)->segments(0, (*v)->main_segments(), segs));
  std::uint32_t used = 0;
  for (std::uint32_t s = 0; s < segs.size(); ++s) {
    if (segs[s].valid_blocks == 0) continue;
    ++used;
    EXPECT_TRUE(segs[s].type == 0 || segs[s].type == 3) << "segment " << s << " has log type " << int(segs[s].type);
  }
  EXPECT_GE(used, 4u);
  auto zi = (*v)->resolve("/sys/lib/z.txt");
  ASSERT_TRUE(zi);
  EXPECT_TRUE(zi->raw.i.i_inline & inline_flag::compress_released);
  EXPECT_EQ(zi->raw.i.extra.i_compr_blocks.get(), 0u);
  EXPECT_EQ(zi->blocks, 16u + 1) << "one compressed block per cluster and the inode";
  v->reset();
  check_clean(*dev, "the ro image");

  // Not for a volume without the ro feature.
  auto rw = compr_volume();
  ASSERT_TRUE(rw);
  MountOptions mo;
  mo.build_ro_image = true;
  auto w = Writer::mount(*rw, mo);
  ASSERT_FALSE(w);
  EXPECT_EQ(w.error().code, Errc::invalid_argument);
}

// No overprovision, no GC: writing until no segment is free ends with
// no_space, and the unmount still leaves a volume both checkers call clean.
TEST(RoImage, FullImageStaysConsistent) {
  auto dev = ro_volume(64ull << 20, 0);
  ASSERT_TRUE(dev);
  MountOptions mo;
  mo.fixed_time = 1700000100;
  mo.build_ro_image = true;
  auto w = Writer::mount(*dev, mo);
  ASSERT_TRUE(w) << w.error().to_string();
  auto f = (*w)->create("/fill");
  ASSERT_TRUE(f);
  const std::string chunk = random_bytes(1u << 20, 9);
  std::uint64_t off = 0;
  Errc last = Errc::io;
  bool full = false;
  for (int i = 0; i < 80 && !full; ++i) {
    auto r = (*w)->write(*f, off, bytes(chunk));
    if (r) off += chunk.size();
    else {
      full = true;
      last = r.error().code;
    }
  }
  ASSERT_TRUE(full) << "a 64 MiB image cannot take 80 MiB";
  EXPECT_EQ(last, Errc::no_space);
  EXPECT_GE(off, 36u << 20) << "most of the 50 MiB main area is used";
  auto t = (*w)->truncate(*f, off);
  ASSERT_TRUE(t) << t.error().to_string();
  auto um = (*w)->unmount();
  ASSERT_TRUE(um) << um.error().to_string() << " (after " << off << " bytes)";
  auto v = Volume::open(*dev);
  ASSERT_TRUE(v);
  auto in = (*v)->resolve("/fill");
  ASSERT_TRUE(in);
  EXPECT_EQ(in->size, off);
  v->reset();
  check_clean(*dev, "the full ro image");
}

TEST(WriterCompressOracle, DISABLED_WriteImage) {
  const char* out = std::getenv("WRITER_IMAGE");
  ASSERT_NE(out, nullptr) << "set WRITER_IMAGE";
  auto dev = compr_volume();
  ASSERT_TRUE(dev);
  std::vector<std::pair<std::string, std::string>> files;
  for (const auto& d : kOracleDirs) {
    const std::size_t cluster_bytes = (std::size_t{1} << d.log) * 4096;
    auto w = Writer::mount(*dev, opts(d.alg, d.log));
    ASSERT_TRUE(w) << w.error().to_string();
    const std::string dir = std::string("/") + d.name;
    auto di = (*w)->mkdir(dir);
    ASSERT_TRUE(di && (*w)->set_flags(*di, kComprFl, kComprFl));
    const std::pair<std::string, std::string> mine[] = {
        {dir + "/zero", std::string(3 * cluster_bytes + 2 * 4096, '\0')},
        {dir + "/text", text_bytes(7 * cluster_bytes + 999)},
        {dir + "/random", random_bytes(2 * cluster_bytes, d.alg)}};
    for (const auto& [p, data] : mine) {
      auto f = (*w)->create(p);
      ASSERT_TRUE(f) << p;
      ASSERT_TRUE((*w)->write(*f, 0, bytes(data)));
      files.emplace_back(p, data);
    }
    ASSERT_TRUE((*w)->unmount());
  }
  auto v = Volume::open(*dev);
  ASSERT_TRUE(v);
  std::string expect;
  for (const auto& [p, data] : files) {
    auto in = (*v)->resolve(p);
    ASSERT_TRUE(in) << p;
    expect += p + " " + sha256_hex(data) + " " + std::to_string(data.size()) + " " +
              std::to_string(in->raw.i.extra.i_compr_blocks.get()) + "\n";
  }
  v->reset();
  check_clean(*dev, "the oracle image");
  ASSERT_TRUE(save(*dev, out));
  std::ofstream(std::string(out) + ".expect") << expect;
}

// Step 4: after Linux read every file and copied each to PATH.linux under
// the same algorithm and cluster size: our reader reads Linux's copies;
// their i_compr_blocks equal ours for the zero and random files (the codecs
// agree on those), and are reported for the text files; then our writer
// overwrites a cluster of each Linux copy and truncates one inside a
// cluster; both checkers clean, the image saved for Linux to read again.
TEST(WriterCompressOracle, DISABLED_AfterLinux) {
  const char* img = std::getenv("WRITER_IMAGE");
  ASSERT_NE(img, nullptr) << "set WRITER_IMAGE";
  auto dev = f2fstest::load_image(img);
  ASSERT_TRUE(dev);
  std::ifstream ex(std::string(img) + ".expect");
  std::string path, sha, final_expect;
  std::uint64_t size = 0, ours = 0;
  std::map<std::string, std::string> after;
  {
    auto v = Volume::open(*dev);
    ASSERT_TRUE(v);
    while (ex >> path >> sha >> size >> ours) {
      for (const std::string& p : {path, path + ".linux"}) {
        auto in = (*v)->resolve(p);
        ASSERT_TRUE(in) << p;
        const std::string got = contents::content_of(**v, *in);
        EXPECT_EQ(sha256_hex(got), sha) << p << " reads as written";
        EXPECT_TRUE(in->is_compressed()) << p;
        after[p] = got;
      }
      auto lin = (*v)->resolve(path + ".linux");
      const std::uint64_t theirs = lin->raw.i.extra.i_compr_blocks.get();
      std::printf("i_compr_blocks %s: ours %llu, Linux's copy %llu\n", path.c_str(), static_cast<unsigned long long>(ours),
                  static_cast<unsigned long long>(theirs));
      if (path.find("/text") == std::string::npos) EXPECT_EQ(theirs, ours) << path;
    }
  }
  {
    auto w = Writer::mount(*dev, MountOptions{});
    ASSERT_TRUE(w) << w.error().to_string();
    for (auto& [p, data] : after) {
      if (p.size() < 6 || p.substr(p.size() - 6) != ".linux") continue;
      auto st = (*w)->stat(p, true);
      ASSERT_TRUE(st) << p;
      const std::string patch(5000, 'Q');
      if (data.size() < 9000) continue;
      ASSERT_TRUE((*w)->write(st->ino, 3000, bytes(patch))) << p;
      data.replace(3000, patch.size(), patch);
      if (p.find("/zero") != std::string::npos) {
        ASSERT_TRUE((*w)->truncate(st->ino, 4096 * 5 + 77)) << p;
        data.resize(4096 * 5 + 77);
      }
    }
    ASSERT_TRUE((*w)->unmount());
  }
  auto v = Volume::open(*dev);
  ASSERT_TRUE(v);
  for (const auto& [p, data] : after) {
    auto in = (*v)->resolve(p);
    ASSERT_TRUE(in) << p;
    EXPECT_TRUE(contents::content_of(**v, *in) == data) << p << " after our changes";
    final_expect += p + " " + sha256_hex(data) + "\n";
  }
  v->reset();
  check_clean(*dev, "after our changes to Linux's files");
  ASSERT_TRUE(save(*dev, img));
  std::ofstream(std::string(img) + ".final") << final_expect;
}

}  // namespace
