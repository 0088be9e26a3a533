// fs-verity in the writer (Writer::enable_verity(), measure_verity()).
//
// Expected values: the Merkle tree, the fsverity_descriptor and the file
// digest are computed by hand from the format of
// Documentation/filesystems/fsverity.rst (Linux 6.1) with the test
// support's own SHA-256 (verity_reference.hpp), not the library's OpenSSL
// path; the interop build also compares the digest with
// fsverity-utils' `fsverity digest` of the same bytes in a host file (the
// reference implementation; F2FSCORE_REQUIRE_FSVERITY=1 makes its absence
// a failure). Where the metadata sits (round_up(i_size, 65536), tree top
// level first, then the descriptor; xattr index 11 "v") is f2fs_verity.c's
// rule, checked on the device through bmap(). The refusals are
// fsverity_ioctl_enable() in fs/verity/enable.c, f2fs_ioc_enable_verity()
// in fs/f2fs/file.c, fsverity_file_open() / fsverity_prepare_setattr() in
// fs/verity/open.c. Both checkers are clean after (fsck.f2fs -f in the
// interop build). tests/writer/verity_linux.sh has Linux verify our trees.
#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <gtest/gtest.h>

#include "writer/verity_reference.hpp"
#include "writer/writer_test_util.hpp"

namespace {

using namespace writertest;

constexpr std::uint16_t kReg = 0x8000, kDir = 0x4000, kFifo = 0x1000;
constexpr std::uint32_t kVerityFl = 0x00100000, kImmutable = 0x10, kInlineData = 0x10000000;

using verityref::Bytes;
using verityref::Expected;
using verityref::expected;
using verityref::hex;

std::string pattern(std::size_t n, unsigned seed) {
  std::string s(n, '\0');
  std::uint32_t x = seed * 2654435761u + 1;
  for (auto& c : s) {
    x = x * 1664525u + 1013904223u;
    c = static_cast<char>(x >> 24);
  }
  return s;
}

// A build whose CMake found OpenSSL (VERITY_EXPECT_OPENSSL), or
// F2FSCORE_REQUIRE_OPENSSL=1: a library without it fails the tests.
bool openssl_expected() {
#ifdef VERITY_EXPECT_OPENSSL
  return true;
#else
  return f2fstest::required("OPENSSL");
#endif
}

// True when the library has no OpenSSL: the test is skipped (a failure
// where openssl_expected()).
bool no_openssl(const Status& s) {
  return !s && s.error().code == Errc::unsupported && s.error().message.find("OpenSSL") != std::string::npos;
}

// Bytes [pos, pos + n) of file `ino`, past EOF too, from the device through bmap().
Bytes read_past_eof(Writer& w, BlockDevice& dev, nid_t ino, std::uint64_t pos, std::size_t n) {
  Bytes out;
  for (std::uint64_t b = pos / 4096; out.size() < n; ++b) {
    auto a = w.bmap(ino, b);
    Bytes blk(4096, 0);
    if (a && *a != 0) EXPECT_TRUE(read_at(dev, static_cast<std::uint64_t>(*a) * 4096, blk, 0));
    else ADD_FAILURE() << "block " << b << " of inode " << ino << " has no address";
    out.insert(out.end(), blk.begin(), blk.end());
  }
  return Bytes(out.begin() + static_cast<std::ptrdiff_t>(pos % 4096), out.begin() + static_cast<std::ptrdiff_t>(pos % 4096 + n));
}

#ifdef WRITER_WITH_FSCK
// fsverity-utils' digest of the same bytes in a host file (hex; --compact).
std::string fsverity_tool_digest(const std::string& data, const Bytes& salt) {
  f2fstest::TempDir tmp;
  const fs::path f = tmp / "data";
  std::ofstream(f, std::ios::binary).write(data.data(), static_cast<std::streamsize>(data.size()));
  std::string cmd = "fsverity digest --compact --hash-alg=sha256 --block-size=4096 ";
  if (!salt.empty()) cmd += "--salt=" + hex(salt) + " ";
  cmd += "'" + f.string() + "' 2>&1";
  std::string out;
  if (FILE* p = popen(cmd.c_str(), "r")) {
    char buf[256];
    while (std::fgets(buf, sizeof buf, p)) out += buf;
    pclose(p);
  }
  while (!out.empty() && (out.back() == '\n' || out.back() == ' ')) out.pop_back();
  return out;
}
#endif

TEST(WriterVerity, TreeDescriptorAndDigestAsTheFormatSays) {
  auto dev = our_mkfs(192ull << 20, kRichFeatures | feature::verity);
  ASSERT_TRUE(dev);
  struct Case {
    std::size_t size;
    Bytes salt;
  };
  // Empty, 100 bytes, one block, a partial block, two
  // level-0 tree blocks (129 data blocks: a tree of three blocks), exactly
  // 64 KiB, a salt.
  const std::vector<Case> cases = {{0, {}},          {100, {}},        {4096, {}},
                                   {5000, {}},       {129 * 4096 + 7, {}}, {65536, {}},
                                   {70000, {1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16}}};
  std::vector<std::pair<nid_t, Expected>> made;
  {
    auto w = mount_fixed_time(*dev);
    ASSERT_TRUE(w);
    const nid_t root = *w->lookup("/");
    for (std::size_t i = 0; i < cases.size(); ++i) {
      const auto& c = cases[i];
      const std::string name = "f" + std::to_string(i);
      auto f = w->mknod_at(root, name, kReg | 0644);
      ASSERT_TRUE(f);
      const std::string data = pattern(c.size, static_cast<unsigned>(i));
      if (!data.empty()) ASSERT_TRUE(w->write(*f, 0, bytes(data)));
      const std::uint64_t blocks_before = w->stat(*f)->blocks;
      Writer::VerityOptions o;
      o.salt = c.salt;
      auto r = w->enable_verity(*f, o);
      if (no_openssl(r)) {
        if (openssl_expected()) FAIL() << "no OpenSSL in a build that found it, or F2FSCORE_REQUIRE_OPENSSL=1";
        GTEST_SKIP() << r.error().to_string();
      }
      ASSERT_TRUE(r) << name << ": " << r.error().to_string();
      const Expected e = expected(data, c.salt);
      auto d = w->measure_verity(*f);
      ASSERT_TRUE(d) << d.error().to_string();
      EXPECT_EQ(d->algorithm, 1);
      EXPECT_EQ(hex(d->digest), hex(e.digest)) << name << " (" << c.size << " bytes)";
#ifdef WRITER_WITH_FSCK
      if (std::system("command -v fsverity >/dev/null 2>&1") == 0)
        EXPECT_EQ(fsverity_tool_digest(data, c.salt), hex(d->digest)) << name << " against fsverity-utils";
      else if (f2fstest::required("FSVERITY"))
        ADD_FAILURE() << "fsverity (fsverity-utils) missing and F2FSCORE_REQUIRE_FSVERITY=1";
#endif
      // On the device: the tree at round_up(i_size, 64 KiB), the descriptor after it.
      const std::uint64_t meta = (c.size + 65535) / 65536 * 65536;
      if (!e.tree.empty()) EXPECT_EQ(hex(read_past_eof(*w, *dev, *f, meta, e.tree.size())), hex(e.tree)) << name;
      EXPECT_EQ(hex(read_past_eof(*w, *dev, *f, meta + e.tree.size(), 256)), hex(e.descriptor)) << name;
      EXPECT_EQ(*w->get_flags(*f) & (kVerityFl | kInlineData), kVerityFl) << name;
      auto st = w->stat(*f);
      ASSERT_TRUE(st);
      EXPECT_EQ(st->size, c.size) << "i_size unchanged";
      // i_blocks gains the tree and descriptor blocks.
      EXPECT_EQ(st->blocks, blocks_before + e.tree.size() / 4096 + 1) << name;
      made.emplace_back(*f, e);
    }
    ASSERT_TRUE(w->unmount());
  }
  // Our reader: the contents (i_size bytes), the xattr, the advise bit.
  auto v = Volume::open(*dev);
  ASSERT_TRUE(v);
  for (std::size_t i = 0; i < made.size(); ++i) {
    auto in = (*v)->read_inode(made[i].first);
    ASSERT_TRUE(in);
    EXPECT_TRUE(in->is_verity());
    std::string s(in->size, '\0');
    auto n = (*v)->read(*in, 0, std::span<std::uint8_t>(reinterpret_cast<std::uint8_t*>(s.data()), s.size()));
    ASSERT_TRUE(n);
    EXPECT_EQ(s, pattern(cases[i].size, static_cast<unsigned>(i)));
    auto xs = (*v)->xattrs(*in);
    ASSERT_TRUE(xs);
    Bytes loc;
    for (const auto& x : *xs)
      if (x.index == 11 && x.name == "v") loc.assign(x.value.begin(), x.value.end());
    EXPECT_EQ(hex(loc), hex(verityref::location(cases[i].size, made[i].second))) << "f" << i;
  }
  v->reset();
  check_clean(*dev, "after enabling fs-verity");
  // A remount measures the same.
  auto w = mount_fixed_time(*dev);
  ASSERT_TRUE(w);
  for (const auto& [ino, e] : made) {
    auto d = w->measure_verity(ino);
    ASSERT_TRUE(d);
    EXPECT_EQ(hex(d->digest), hex(e.digest));
  }
}

// f2fs_begin_enable_verity() converts inline data first
// (f2fs_convert_inline_inode()). The writer makes no inline regular file,
// so an empty file it made is given 100 bytes of inline data on the device
// (a volume without inode checksums), as Linux leaves a small file.
TEST(WriterVerity, InlineDataMovesToABlockFirst) {
  auto dev = our_mkfs(192ull << 20, (kRichFeatures & ~feature::inode_checksum) | feature::verity);
  ASSERT_TRUE(dev);
  nid_t ino = 0;
  {
    auto w = mount_fixed_time(*dev);
    ASSERT_TRUE(w);
    auto f = w->mknod_at(*w->lookup("/"), "small", kReg | 0644);
    ASSERT_TRUE(f);
    ino = *f;
    ASSERT_TRUE(w->unmount());
  }
  const std::string data = pattern(100, 3);
  {
    auto v = Volume::open(*dev);
    ASSERT_TRUE(v);
    auto in = (*v)->read_inode(ino);
    ASSERT_TRUE(in);
    Bytes blk(4096);
    ASSERT_TRUE(read_at(*dev, static_cast<std::uint64_t>(in->node_blkaddr) * 4096, blk, 0));
    auto* n = reinterpret_cast<disk::Node*>(blk.data());
    n->i.i_inline = static_cast<std::uint8_t>(n->i.i_inline | disk::inline_flag::data | disk::inline_flag::data_exist);
    n->i.i_size.set(data.size());
    std::copy(data.begin(), data.end(), blk.begin() + in->inline_offset());
    ASSERT_TRUE(write_at(*dev, static_cast<std::uint64_t>(in->node_blkaddr) * 4096, blk, 0));
  }
  auto w = mount_fixed_time(*dev);
  ASSERT_TRUE(w);
  ASSERT_EQ(*w->get_flags(ino) & kInlineData, kInlineData) << "inline to start with";
  const std::uint64_t blocks_before = w->stat(ino)->blocks;
  auto r = w->enable_verity(ino);
  if (no_openssl(r)) {
    if (openssl_expected()) FAIL() << "no OpenSSL in a build that found it, or F2FSCORE_REQUIRE_OPENSSL=1";
    GTEST_SKIP() << r.error().to_string();
  }
  ASSERT_TRUE(r) << r.error().to_string();
  EXPECT_EQ(*w->get_flags(ino) & (kVerityFl | kInlineData), kVerityFl);
  EXPECT_EQ(w->stat(ino)->blocks, blocks_before + 2) << "the data block and the descriptor";
  auto d = w->measure_verity(ino);
  ASSERT_TRUE(d);
  const Expected e = expected(data, {});
  EXPECT_EQ(hex(d->digest), hex(e.digest));
  EXPECT_EQ(hex(read_past_eof(*w, *dev, ino, 0, 100)), hex(Bytes(data.begin(), data.end()))) << "block 0";
  EXPECT_EQ(hex(read_past_eof(*w, *dev, ino, 65536, 256)), hex(e.descriptor));
  ASSERT_TRUE(w->unmount());
  check_clean(*dev, "inline file made verity");
}

TEST(WriterVerity, RefusalsAndAReadOnlyFileAfter) {
  auto dev = our_mkfs(192ull << 20, kRichFeatures | feature::verity);
  ASSERT_TRUE(dev);
  auto w = mount_fixed_time(*dev);
  ASSERT_TRUE(w);
  const nid_t root = *w->lookup("/");
  auto f = w->mknod_at(root, "f", kReg | 0644);
  auto d = w->mknod_at(root, "d", kDir | 0755);
  auto p = w->mknod_at(root, "p", kFifo | 0644);
  auto im = w->mknod_at(root, "im", kReg | 0644);
  ASSERT_TRUE(f && d && p && im);
  const std::string data = pattern(10000, 7);
  ASSERT_TRUE(w->write(*f, 0, bytes(data)));
  EXPECT_EQ(err_no(w->measure_verity(*f)), ENODATA) << "not verity yet";
  EXPECT_EQ(err_no(w->enable_verity(*d)), EISDIR);
  EXPECT_EQ(err_no(w->enable_verity(*p)), EINVAL);
  ASSERT_TRUE(w->set_flags(*im, kImmutable, ~0u));
  EXPECT_EQ(err_no(w->enable_verity(*im)), EPERM);
  Writer::VerityOptions big;
  big.salt.assign(33, 1);
  EXPECT_EQ(err_no(w->enable_verity(*f, big)), EMSGSIZE);
  auto r = w->enable_verity("/f");
  if (no_openssl(r)) {
    if (openssl_expected()) FAIL() << "no OpenSSL in a build that found it, or F2FSCORE_REQUIRE_OPENSSL=1";
    GTEST_SKIP() << r.error().to_string();
  }
  ASSERT_TRUE(r) << r.error().to_string();
  EXPECT_EQ(err_no(w->enable_verity(*f)), EEXIST);
  // Read-only data: writes, truncate, fallocate, opens for writing (EPERM).
  EXPECT_EQ(err_no(w->write(*f, 0, bytes("x"))), EPERM);
  EXPECT_EQ(err_no(w->write(*f, 10000, bytes("x"))), EPERM);
  EXPECT_EQ(err_no(w->truncate(*f, 0)), EPERM);
  EXPECT_EQ(err_no(w->truncate("/f", 20000)), EPERM);
  EXPECT_EQ(err_no(w->fallocate(*f, 0, 0, 4096)), EPERM);
  EXPECT_EQ(err_no(w->open("/f", open_flag::wronly)), EPERM);
  EXPECT_EQ(err_no(w->open("/f", open_flag::rdwr)), EPERM);
  EXPECT_EQ(err_no(w->open("/f", open_flag::rdonly | open_flag::trunc)), EPERM);
  {
    auto h = w->open("/f", open_flag::rdonly);
    ASSERT_TRUE(h) << "opens for reading";
  }
  // Reads give i_size bytes, not the metadata past EOF.
  std::string back(20000, '\0');
  auto n = w->read(*f, 0, {reinterpret_cast<std::uint8_t*>(back.data()), back.size()});
  ASSERT_TRUE(n);
  back.resize(*n);
  EXPECT_EQ(back, data);
  // Names, modes and the file's removal still work.
  EXPECT_TRUE(w->setattr(*f, SetAttr{.mode = 0600}));
  EXPECT_TRUE(w->rename("/f", "/g"));
  ASSERT_TRUE(w->unmount());
  check_clean(*dev, "verity file renamed");
  w = mount_fixed_time(*dev);
  ASSERT_TRUE(w);
  EXPECT_EQ(err_no(w->write(*f, 0, bytes("x"))), EPERM) << "kept across a remount";
  EXPECT_TRUE(w->unlink("/g"));
  ASSERT_TRUE(w->unmount());
  check_clean(*dev, "verity file removed");
}

// GC moves the metadata past EOF with the file's other blocks (they are
// valid in the SIT and summarised under the file's dnode): after every
// block of the first segments has moved, the tree and descriptor read the
// same, the digest is unchanged, and both checkers are clean.
TEST(WriterVerity, GcMovesTheMetadataPastEof) {
  auto dev = our_mkfs(192ull << 20, kRichFeatures | feature::verity);
  ASSERT_TRUE(dev);
  std::uint64_t main_blk = 0;
  {
    auto v = Volume::open(*dev);
    ASSERT_TRUE(v);
    main_blk = (*v)->main_blkaddr();
  }
  auto w = mount_fixed_time(*dev);
  ASSERT_TRUE(w);
  const nid_t root = *w->lookup("/");
  std::vector<std::pair<nid_t, std::string>> files;
  for (unsigned i = 0; i < 6; ++i) {
    auto f = w->mknod_at(root, "f" + std::to_string(i), kReg | 0644);
    ASSERT_TRUE(f);
    const std::string data = pattern(200000 + 70000 * i, i);
    ASSERT_TRUE(w->write(*f, 0, bytes(data)));
    files.emplace_back(*f, data);
  }
  for (unsigned i = 0; i < 6; i += 2) {
    auto r = w->enable_verity(files[i].first);
    if (no_openssl(r)) {
      if (openssl_expected()) FAIL() << "no OpenSSL in a build that found it, or F2FSCORE_REQUIRE_OPENSSL=1";
      GTEST_SKIP() << r.error().to_string();
    }
    ASSERT_TRUE(r) << r.error().to_string();
  }
  for (unsigned i = 1; i < 6; i += 2) ASSERT_TRUE(w->unlink("/f" + std::to_string(i)));
  ASSERT_TRUE(w->sync());
  std::vector<disk::block_t> before;
  for (unsigned i = 0; i < 6; i += 2) before.push_back(*w->bmap(files[i].first, (files[i].second.size() + 65535) / 65536 * 16));
  // Every segment up to the last tree's first block is emptied.
  const std::uint64_t last = *std::max_element(before.begin(), before.end());
  auto g = w->evacuate_front(static_cast<std::uint32_t>((last - main_blk) / 512 + 1));
  ASSERT_TRUE(g) << g.error().to_string();
  EXPECT_GT(w->stats().gc.data_blocks_moved, 0u);
  for (unsigned i = 0, k = 0; i < 6; i += 2, ++k) {
    const auto& [ino, data] = files[i];
    const Expected e = expected(data, {});
    const std::uint64_t meta = (data.size() + 65535) / 65536 * 65536;
    EXPECT_NE(*w->bmap(ino, meta / 4096), before[k]) << "the tree's first block moved";
    EXPECT_EQ(hex(read_past_eof(*w, *dev, ino, meta, e.tree.size() + 256)),
              hex(e.tree) + hex(e.descriptor)) << "f" << i;
    auto d = w->measure_verity(ino);
    ASSERT_TRUE(d);
    EXPECT_EQ(hex(d->digest), hex(e.digest));
  }
  ASSERT_TRUE(w->unmount());
  check_clean(*dev, "verity files after GC");
}

// Linux hashes and verifies the last page with its bytes past i_size zero
// (the page cache zeroes them): a device block whose tail is not zero (here
// made so on the device) is rewritten with it zeroed before hashing.
TEST(WriterVerity, NonZeroTailPastEofIsZeroedFirst) {
  auto dev = our_mkfs(192ull << 20, kRichFeatures | feature::verity);
  ASSERT_TRUE(dev);
  const std::string data = pattern(5000, 11);
  nid_t ino = 0;
  disk::block_t addr = 0;
  {
    auto w = mount_fixed_time(*dev);
    ASSERT_TRUE(w);
    auto f = w->mknod_at(*w->lookup("/"), "f", kReg | 0644);
    ASSERT_TRUE(f);
    ino = *f;
    ASSERT_TRUE(w->write(ino, 0, bytes(data)));
    ASSERT_TRUE(w->unmount());
    auto w2 = mount_fixed_time(*dev);
    ASSERT_TRUE(w2);
    addr = *w2->bmap(ino, 1);
    ASSERT_NE(addr, 0u);
    ASSERT_TRUE(w2->unmount());
  }
  Bytes blk(4096);
  ASSERT_TRUE(read_at(*dev, static_cast<std::uint64_t>(addr) * 4096, blk, 0));
  std::fill(blk.begin() + (5000 - 4096), blk.end(), std::uint8_t{0xAB});
  ASSERT_TRUE(write_at(*dev, static_cast<std::uint64_t>(addr) * 4096, blk, 0));
  auto w = mount_fixed_time(*dev);
  ASSERT_TRUE(w);
  auto r = w->enable_verity(ino);
  if (no_openssl(r)) {
    if (openssl_expected()) FAIL() << "no OpenSSL in a build that found it, or F2FSCORE_REQUIRE_OPENSSL=1";
    GTEST_SKIP() << r.error().to_string();
  }
  ASSERT_TRUE(r) << r.error().to_string();
  auto d = w->measure_verity(ino);
  ASSERT_TRUE(d);
  EXPECT_EQ(hex(d->digest), hex(expected(data, {}).digest));
  Bytes want(data.begin() + 4096, data.end());
  want.resize(4096, 0);
  EXPECT_EQ(hex(read_past_eof(*w, *dev, ino, 4096, 4096)), hex(want)) << "block 1 on the device, tail zeroed";
  ASSERT_TRUE(w->unmount());
  check_clean(*dev, "tail zeroed");
}

TEST(WriterVerity, NeedsTheVolumeFeature) {
  auto dev = our_mkfs(192ull << 20, kRichFeatures);
  ASSERT_TRUE(dev);
  auto w = mount_fixed_time(*dev);
  ASSERT_TRUE(w);
  auto f = w->mknod_at(*w->lookup("/"), "f", kReg | 0644);
  ASSERT_TRUE(f);
  ASSERT_TRUE(w->write(*f, 0, bytes(pattern(5000, 1))));
  const std::uint64_t blocks_before = w->stat(*f)->blocks;
  EXPECT_EQ(err_no(w->enable_verity(*f)), EOPNOTSUPP);
  EXPECT_EQ(*w->get_flags(*f) & kVerityFl, 0u);
  auto st = w->stat(*f);
  ASSERT_TRUE(st);
  EXPECT_EQ(st->blocks, blocks_before) << "nothing written";
}

// An image for tests/writer/verity_linux.sh: WRITER_IMAGE names the file;
// WRITER_IMAGE.expect gets "path size content-sha256 sha256:digest-hex" per
// verity file, and
// WRITER_IMAGE.corrupt "path device-byte-offset" of a data block of /bad to
// damage for the EIO check. GC has moved every file's blocks before.
TEST(WriterVerityOracle, DISABLED_WriteImage) {
  const char* out = std::getenv("WRITER_IMAGE");
  ASSERT_NE(out, nullptr) << "WRITER_IMAGE is not set";
  auto dev = our_mkfs(192ull << 20, kRichFeatures | feature::verity);
  ASSERT_TRUE(dev);
  std::string expect, corrupt;
  std::uint64_t main_blk = 0;
  {
    auto v = Volume::open(*dev);
    ASSERT_TRUE(v);
    main_blk = (*v)->main_blkaddr();
  }
  {
    nid_t bad = 0;
    auto w = mount_fixed_time(*dev);
    ASSERT_TRUE(w);
    const nid_t root = *w->lookup("/");
    struct F {
      const char* name;
      std::size_t size;
      Bytes salt;
    };
    const std::vector<F> files = {{"empty", 0, {}},       {"small", 100, {}},         {"block", 4096, {}},
                                  {"odd", 5000, {}},       {"big", 129 * 4096 + 7, {}}, {"salted", 300000, {9, 8, 7}},
                                  {"bad", 3 * 4096, {}}};
    for (const auto& f : files) {
      auto ino = w->mknod_at(root, f.name, kReg | 0644);
      ASSERT_TRUE(ino);
      const std::string data = pattern(f.size, static_cast<unsigned>(f.size));
      if (!data.empty()) ASSERT_TRUE(w->write(*ino, 0, bytes(data)));
      Writer::VerityOptions o;
      o.salt = f.salt;
      auto r = w->enable_verity(*ino, o);
      ASSERT_TRUE(r) << r.error().to_string();
      auto d = w->measure_verity(*ino);
      ASSERT_TRUE(d);
      ASSERT_EQ(hex(d->digest), hex(expected(data, f.salt).digest));
      expect += std::string("/") + f.name + " " + std::to_string(f.size) + " " + sha256_hex(data) + " sha256:" +
                hex(d->digest) + "\n";
      if (std::string(f.name) == "bad") bad = *ino;
    }
    // GC then moves every block of the segments the files are in (the
    // trees and descriptors past EOF with the data): Linux verifies the
    // moved copies.
    auto last = w->bmap(bad, 16);
    ASSERT_TRUE(last && *last != 0);
    auto g = w->evacuate_front(static_cast<std::uint32_t>((*last - main_blk) / 512 + 1));
    ASSERT_TRUE(g) << g.error().to_string();
    ASSERT_GT(w->stats().gc.data_blocks_moved, 0u);
    auto a = w->bmap(bad, 1);
    ASSERT_TRUE(a && *a != 0);
    corrupt = std::string("/bad ") + std::to_string(static_cast<std::uint64_t>(*a) * 4096) + "\n";
    ASSERT_TRUE(w->unmount());
  }
  check_clean(*dev, "verity oracle image");
  ASSERT_TRUE(save(*dev, out));
  std::ofstream(std::string(out) + ".expect") << expect;
  std::ofstream(std::string(out) + ".corrupt") << corrupt;
}

// After Linux (verity_linux.sh): Linux's own verity copy of /big reads as
// /big and measures as the reference computes from those bytes; it refuses
// writes; our writer then keeps writing on the volume Linux changed (a new
// file made verity, measured as the reference) and both checkers stay clean.
TEST(WriterVerityOracle, DISABLED_AfterLinux) {
  const char* img = std::getenv("WRITER_IMAGE");
  ASSERT_NE(img, nullptr) << "WRITER_IMAGE is not set";
  auto dev = f2fstest::load_image(img);
  ASSERT_TRUE(dev);
  const std::string big = pattern(129 * 4096 + 7, 129 * 4096 + 7);
  {
    auto v = Volume::open(*dev);
    ASSERT_TRUE(v);
    auto in = (*v)->resolve("/big.linux");
    ASSERT_TRUE(in) << "Linux's /big.linux";
    EXPECT_TRUE(in->is_verity());
    EXPECT_EQ(sha256_hex(contents::content_of(**v, *in)), sha256_hex(big));
  }
  const std::string after = pattern(70000, 70000);
  {
    auto wm = Writer::mount(*dev, MountOptions{});
    ASSERT_TRUE(wm) << wm.error().to_string();
    Writer* w = wm->get();
    auto lin = w->lookup("/big.linux");
    ASSERT_TRUE(lin);
    auto d = w->measure_verity(*lin);
    ASSERT_TRUE(d) << d.error().to_string();
    EXPECT_EQ(hex(d->digest), hex(expected(big, {}).digest)) << "Linux's tree of /big";
    EXPECT_EQ(err_no(w->write(*lin, 0, bytes("x"))), EPERM);
    EXPECT_EQ(err_no(w->truncate(*lin, 0)), EPERM);
    auto ino = w->mknod_at(*w->lookup("/"), "after", kReg | 0644);
    ASSERT_TRUE(ino);
    ASSERT_TRUE(w->write(*ino, 0, bytes(after)));
    auto r = w->enable_verity(*ino, Writer::VerityOptions{});
    ASSERT_TRUE(r) << r.error().to_string();
    auto m = w->measure_verity(*ino);
    ASSERT_TRUE(m);
    EXPECT_EQ(hex(m->digest), hex(expected(after, {}).digest));
    ASSERT_TRUE(w->unmount());
  }
  check_clean(*dev, "our writer after Linux");
  auto v = Volume::open(*dev);
  ASSERT_TRUE(v);
  auto in = (*v)->resolve("/after");
  ASSERT_TRUE(in);
  EXPECT_TRUE(in->is_verity());
  EXPECT_EQ(sha256_hex(contents::content_of(**v, *in)), sha256_hex(after));
}

}  // namespace
