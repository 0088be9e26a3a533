// The writer's namespace operations, xattrs, fallocate and orphans, one by
// one, with what the kernel leaves on disk (expected values from the rules
// in fs/f2fs as the comments cite them, hand-computed), and wrong use:
// each refused with a clear error and no damage.
#include <gtest/gtest.h>

#include "writer/writer_test_util.hpp"

namespace {

using namespace writertest;

constexpr std::uint64_t kT = 1700000100;

std::unique_ptr<BlockDevice> fresh() { return our_mkfs(192ull << 20, kRichFeatures); }

std::unique_ptr<Writer> mount(BlockDevice& dev, std::uint64_t t = kT, bool ro = false) {
  MountOptions mo;
  mo.fixed_time = t;
  mo.read_only = ro;
  auto w = Writer::mount(dev, mo);
  EXPECT_TRUE(w) << (w ? "" : w.error().to_string());
  return w ? std::move(*w) : nullptr;
}

void clean(BlockDevice& dev, const std::string& what) {
  our_fsck_clean(dev, what);
  fsck_f2fs_clean(dev, what);
}

TEST(WriterNs, RenameAndLinkOnDisk) {
  auto dev = fresh();
  ASSERT_TRUE(dev);
  auto w = mount(*dev);
  ASSERT_TRUE(w);
  auto a = w->mkdir("/a");
  auto b = w->mkdir("/b");
  ASSERT_TRUE(a && b);
  ASSERT_TRUE(w->mkdir("/a/sub"));
  auto f = w->create("/a/f");
  ASSERT_TRUE(f);
  ASSERT_TRUE(w->write(*f, 0, bytes("hello")));
  // link: i_links 2, i_name/i_pino of the new name, LOST_PINO (f2fs_link()).
  ASSERT_TRUE(w->link("/a/f", "/b/g"));
  EXPECT_EQ(w->stat(*f)->links, 2u);
  // rename of a directory to another parent: ".." and i_pino follow, the
  // parents' link counts move (f2fs_rename()).
  ASSERT_TRUE(w->rename("/a/sub", "/b/moved"));
  EXPECT_EQ(w->stat(*a)->links, 2u);
  EXPECT_EQ(w->stat(*b)->links, 3u);
  // A file over a file: the target goes (one fewer inode).
  auto victim = w->create("/b/victim");
  ASSERT_TRUE(victim);
  ASSERT_TRUE(w->rename("/a/f", "/b/victim"));
  EXPECT_EQ(w->stat(*victim).error().code, Errc::not_found);
  EXPECT_EQ(*w->lookup("/b/victim"), *f);
  // An empty directory over an empty directory.
  auto e1 = w->mkdir("/a/e1");
  auto e2 = w->mkdir("/b/e2");
  ASSERT_TRUE(e1 && e2);
  ASSERT_TRUE(w->rename("/a/e1", "/b/e2"));
  EXPECT_EQ(w->stat(*e2).error().code, Errc::not_found);
  EXPECT_EQ(w->stat(*b)->links, 4u);  // moved, e2 (now e1)
  EXPECT_EQ(w->stat(*a)->links, 2u);
  ASSERT_TRUE(w->unmount());
  w.reset();
  auto v = Volume::open(*dev);
  ASSERT_TRUE(v);
  auto fi = (*v)->read_inode(*f);
  ASSERT_TRUE(fi);
  EXPECT_EQ(fi->links, 2u);
  EXPECT_TRUE(fi->advise & advise::lost_pino);
  auto moved = (*v)->resolve("/b/moved");
  ASSERT_TRUE(moved);
  EXPECT_EQ(moved->raw.i.i_pino.get(), *b);
  EXPECT_EQ(std::string(reinterpret_cast<const char*>(moved->raw.i.i_name), moved->raw.i.i_namelen.get()), "moved");
  auto dots = (*v)->lookup(*moved, "..");
  ASSERT_TRUE(dots);
  EXPECT_EQ(dots->ino, *b);
  auto e = (*v)->resolve("/b/e2");
  ASSERT_TRUE(e);
  EXPECT_EQ(e->ino, *e1);
  EXPECT_EQ(e->raw.i.i_pino.get(), *b);
  EXPECT_EQ((*v)->lookup(*e, "..")->ino, *b);
  v->reset();
  clean(*dev, "rename and link");
}

TEST(WriterNs, SymlinkInlineAndBlock) {
  auto dev = fresh();
  ASSERT_TRUE(dev);
  auto w = mount(*dev);
  ASSERT_TRUE(w);
  const std::string small = "../some/where", big(3500, 'z');  // over the 3,464 inline bytes here (923 - 6 - 50 - 1 words)
  auto s1 = w->symlink(small, "/s1");
  auto s2 = w->symlink(big, "/s2");
  const std::string max(4095, 'm');
  auto s3 = w->symlink(max, "/s3");
  ASSERT_TRUE(s1 && s2 && s3);
  EXPECT_EQ(*w->readlink(*s1), small);
  EXPECT_EQ(*w->readlink(*s2), big);
  EXPECT_EQ(w->stat(*s1)->mode, 0120777);
  ASSERT_TRUE(w->unmount());
  w.reset();
  auto v = Volume::open(*dev);
  ASSERT_TRUE(v);
  auto i1 = (*v)->read_inode(*s1);
  auto i2 = (*v)->read_inode(*s2);
  ASSERT_TRUE(i1 && i2);
  EXPECT_TRUE(i1->has_inline_data());
  EXPECT_EQ(i1->size, small.size());
  EXPECT_EQ(i1->blocks, 1u);
  EXPECT_FALSE(i2->has_inline_data());
  EXPECT_EQ(i2->size, big.size());
  EXPECT_EQ(i2->blocks, 2u);
  EXPECT_EQ(*(*v)->read_link(*i1), small);
  EXPECT_EQ(*(*v)->read_link(*i2), big);
  EXPECT_EQ(*(*v)->read_link(*(*v)->read_inode(*s3)), max);
  v->reset();
  clean(*dev, "symlinks");
}

TEST(WriterNs, MknodDeviceNumbers) {
  auto dev = fresh();
  ASSERT_TRUE(dev);
  auto w = mount(*dev);
  ASSERT_TRUE(w);
  // (8, 1): old_valid_dev -> old_encode_dev 0x801 in i_addr[extra];
  // (259, 0x12345): new_encode_dev = 0x45 | 259 << 8 | 0x12300 << 12.
  const std::uint32_t newdev = 0x45u | (259u << 8) | (0x12300u << 12);
  auto c = w->mknod("/sda1", 0x6000 | 0660, (8u << 8) | 1u);
  auto n = w->mknod("/nvme", 0x2000 | 0600, newdev);
  auto p = w->mknod("/fifo", 0x1000 | 0644);
  auto s = w->mknod("/sock", 0xC000 | 0755);
  ASSERT_TRUE(c && n && p && s);
  EXPECT_EQ(w->mknod("/bad", 0x8000 | 0644).error().code, Errc::invalid_argument);
  EXPECT_EQ(w->stat(*n)->rdev, newdev);
  ASSERT_TRUE(w->unlink("/fifo"));
  ASSERT_TRUE(w->unmount());
  w.reset();
  auto v = Volume::open(*dev);
  ASSERT_TRUE(v);
  auto ci = (*v)->read_inode(*c);
  auto ni = (*v)->read_inode(*n);
  ASSERT_TRUE(ci && ni);
  const std::uint32_t x = ci->extra_isize / 4;
  EXPECT_EQ(ci->raw.i.i_addr[x].get(), 0x801u);
  EXPECT_EQ(ci->raw.i.i_addr[x + 1].get(), 0u);
  EXPECT_EQ(ni->raw.i.i_addr[x].get(), 0u);
  EXPECT_EQ(ni->raw.i.i_addr[x + 1].get(), newdev);
  EXPECT_EQ(ni->mode, 0x2000 | 0600);
  v->reset();
  clean(*dev, "device nodes");
}

TEST(WriterNs, SetattrModesOwnersTimes) {
  auto dev = fresh();
  ASSERT_TRUE(dev);
  auto w = mount(*dev);
  ASSERT_TRUE(w);
  auto f = w->create("/f");
  ASSERT_TRUE(f);
  SetAttr a;
  a.mode = 04751;
  a.uid = 1000;
  a.gid = 70000;
  a.atime = Timespec{1600000000, 123456789};
  a.mtime = Timespec{1600000001, 999999999};
  ASSERT_TRUE(w->setattr(*f, a));
  EXPECT_EQ(w->setattr(*f, {.atime = Timespec{1, 1000000000}}).error().code, Errc::invalid_argument);
  ASSERT_TRUE(w->unmount());
  w.reset();
  auto v = Volume::open(*dev);
  auto in = (*v)->read_inode(*f);
  ASSERT_TRUE(in);
  EXPECT_EQ(in->mode, 0x8000 | 04751);
  EXPECT_EQ(in->uid, 1000u);
  EXPECT_EQ(in->gid, 70000u);
  EXPECT_EQ(in->raw.i.i_atime.get(), 1600000000u);
  EXPECT_EQ(in->raw.i.i_atime_nsec.get(), 123456789u);
  EXPECT_EQ(in->raw.i.i_mtime_nsec.get(), 999999999u);
  EXPECT_EQ(in->raw.i.i_ctime.get(), kT);  // now, as setattr_copy() after notify_change()
  v->reset();
  clean(*dev, "setattr");
}

TEST(WriterNs, XattrsInlineThenNode) {
  auto dev = fresh();
  ASSERT_TRUE(dev);
  auto w = mount(*dev);
  ASSERT_TRUE(w);
  auto f = w->create("/f");
  ASSERT_TRUE(f);
  ASSERT_TRUE(w->setxattr(*f, 1, "small", bytes("v1")));
  EXPECT_EQ(w->setxattr(*f, 1, "small", bytes("v2"), XattrSet::create).error().code, Errc::exists);
  EXPECT_EQ(w->setxattr(*f, 1, "none", bytes("v2"), XattrSet::replace).error().code, Errc::not_found);
  EXPECT_EQ(w->setxattr(*f, 1, std::string(256, 'n'), bytes("v")).error().code, Errc::invalid_argument);
  EXPECT_EQ(w->removexattr(*f, 1, "none").error().code, Errc::not_found);
  const std::uint64_t b0 = w->stat(*f)->blocks;
  // 24 header + 12 ("small") fit the 200-byte inline area; 1,500 more bytes
  // need the xattr node (i_blocks + 1, write_all_xattrs()).
  const std::string big(1500, 'B');
  ASSERT_TRUE(w->setxattr(*f, 4, "big", bytes(big)));
  EXPECT_EQ(w->stat(*f)->blocks, b0 + 1);
  auto g = w->getxattr(*f, 4, "big");
  ASSERT_TRUE(g);
  EXPECT_EQ(std::string(g->begin(), g->end()), big);
  // Fill: the area holds MIN_OFFSET = 200 + 4068 bytes: 24 + 12 + 1508 used,
  // a 2,700-byte value (2,708 with name "x") does not fit; 2,600 does.
  EXPECT_EQ(w->setxattr(*f, 6, "x", bytes(std::string(2720, 'x'))).error().code, Errc::no_space);
  ASSERT_TRUE(w->setxattr(*f, 6, "x", bytes(std::string(2600, 'x'))));
  auto list = w->listxattr(*f);
  ASSERT_TRUE(list);
  EXPECT_EQ(list->size(), 3u);
  ASSERT_TRUE(w->sync());
  {
    auto v = Volume::open(*dev);
    auto in = (*v)->read_inode(*f);
    ASSERT_TRUE(in);
    EXPECT_NE(in->raw.i.i_xattr_nid.get(), 0u);
    auto xs = (*v)->xattrs(*in);
    ASSERT_TRUE(xs);
    ASSERT_EQ(xs->size(), 3u);
    EXPECT_EQ((*xs)[1].value, big);
  }
  // Removing the big ones brings the entries back inline: the node goes.
  ASSERT_TRUE(w->removexattr(*f, 4, "big"));
  ASSERT_TRUE(w->removexattr(*f, 6, "x"));
  EXPECT_EQ(w->stat(*f)->blocks, b0);
  ASSERT_TRUE(w->unmount());
  w.reset();
  auto v = Volume::open(*dev);
  auto in = (*v)->read_inode(*f);
  ASSERT_TRUE(in);
  EXPECT_EQ(in->raw.i.i_xattr_nid.get(), 0u);
  auto xs = (*v)->xattrs(*in);
  ASSERT_TRUE(xs);
  ASSERT_EQ(xs->size(), 1u);
  EXPECT_EQ((*xs)[0].full_name(), "user.small");
  EXPECT_EQ((*xs)[0].value, "v1");
  v->reset();
  clean(*dev, "xattrs");
}

TEST(WriterNs, FallocatePunchZeroRange) {
  auto dev = fresh();
  ASSERT_TRUE(dev);
  auto w = mount(*dev);
  ASSERT_TRUE(w);
  auto f = w->create("/f");
  ASSERT_TRUE(f);
  // Mode 0, 10 blocks: i_size 40960, i_blocks 1 + 10 (NEW_ADDR reserved).
  ASSERT_TRUE(w->fallocate(*f, 0, 0, 40960));
  EXPECT_EQ(w->stat(*f)->size, 40960u);
  EXPECT_EQ(w->stat(*f)->blocks, 11u);
  std::string d(40960, 'd');
  ASSERT_TRUE(w->write(*f, 0, bytes(d)));
  EXPECT_EQ(w->stat(*f)->blocks, 11u);
  // keep_size past the end: 2 more blocks, size unchanged.
  ASSERT_TRUE(w->fallocate(*f, falloc::keep_size, 40960, 8192));
  EXPECT_EQ(w->stat(*f)->size, 40960u);
  EXPECT_EQ(w->stat(*f)->blocks, 13u);
  // Punch [1000, 13288): block 0 zeroed from 1000, blocks 1 and 2 freed,
  // block 3 zeroed up to 13288 - 12288 = 1000.
  ASSERT_TRUE(w->fallocate(*f, falloc::punch_hole | falloc::keep_size, 1000, 12288));
  std::fill(d.begin() + 1000, d.begin() + 13288, '\0');
  EXPECT_EQ(w->stat(*f)->blocks, 11u);
  EXPECT_EQ(w->fallocate(*f, falloc::punch_hole, 0, 4096).error().code, Errc::unsupported);
  // zero_range [20480, 28672): two whole blocks become NEW_ADDR (i_blocks same).
  ASSERT_TRUE(w->fallocate(*f, falloc::zero_range, 20480, 8192));
  std::fill(d.begin() + 20480, d.begin() + 28672, '\0');
  EXPECT_EQ(w->stat(*f)->blocks, 11u);
  // zero_range past the end grows the file.
  ASSERT_TRUE(w->fallocate(*f, falloc::zero_range, 40000, 5000));
  std::fill(d.begin() + 40000, d.end(), '\0');
  d.resize(45000, '\0');
  EXPECT_EQ(w->stat(*f)->size, 45000u);
  std::string back(d.size(), '\0');
  ASSERT_TRUE(w->read(*f, 0, std::span<std::uint8_t>(reinterpret_cast<std::uint8_t*>(back.data()), back.size())));
  EXPECT_TRUE(back == d);
  ASSERT_TRUE(w->unmount());
  w.reset();
  auto v = Volume::open(*dev);
  auto in = (*v)->read_inode(*f);
  ASSERT_TRUE(in);
  EXPECT_TRUE(in->advise & advise::keep_size);
  std::string got(in->size, '\0');
  ASSERT_TRUE((*v)->read(*in, 0, std::span<std::uint8_t>(reinterpret_cast<std::uint8_t*>(got.data()), got.size())));
  EXPECT_TRUE(got == d);
  v->reset();
  clean(*dev, "fallocate");
}

TEST(WriterNs, OpenUnlinkedOrphans) {
  auto dev = fresh();
  ASSERT_TRUE(dev);
  nid_t kept = 0;
  {
    auto w = mount(*dev);
    ASSERT_TRUE(w);
    auto f = w->create("/gone");
    auto g = w->create("/kept");
    ASSERT_TRUE(f && g);
    kept = *g;
    ASSERT_TRUE(w->write(*f, 0, bytes(std::string(50000, 'o'))));
    ASSERT_TRUE(w->write(*g, 0, bytes(std::string(50000, 'k'))));
    ASSERT_TRUE(w->open(*f));
    ASSERT_TRUE(w->open(*g));
    ASSERT_TRUE(w->unlink("/gone"));
    ASSERT_TRUE(w->unlink("/kept"));
    // Still readable and writable while open.
    EXPECT_EQ(w->stat(*f)->links, 0u);
    ASSERT_TRUE(w->write(*f, 50000, bytes("more")));
    // The last release frees it.
    ASSERT_TRUE(w->release(*f));
    EXPECT_EQ(w->stat(*f).error().code, Errc::not_found);
    EXPECT_EQ(w->release(*f).error().code, Errc::invalid_argument);
    // /kept stays open over a checkpoint: it is on the orphan list.
    ASSERT_TRUE(w->sync());
    auto v = Volume::open(*dev);
    ASSERT_TRUE(v);
    auto orph = (*v)->orphans();
    ASSERT_TRUE(orph);
    ASSERT_EQ(orph->size(), 1u);
    EXPECT_EQ((*orph)[0], *g);
    EXPECT_EQ((*v)->read_inode(*g)->links, 0u);
    v->reset();
    clean(*dev, "an open-unlinked file on the orphan list");
    // The session ends without unmount (a crash).
  }
  {
    auto v = Volume::open(*dev);
    const std::uint32_t inodes = (*v)->checkpoint().valid_inode_count.get();
    v->reset();
    // A read-only mount leaves the orphan alone.
    auto ro = mount(*dev, kT + 1, true);
    ASSERT_TRUE(ro);
    EXPECT_TRUE(ro->stat(kept));
    ASSERT_TRUE(ro->unmount());
    ro.reset();
    // A read-write mount frees it (f2fs_recover_orphan_inodes()).
    auto w = mount(*dev, kT + 2);
    ASSERT_TRUE(w);
    EXPECT_EQ(w->stat(kept).error().code, Errc::not_found);
    ASSERT_TRUE(w->unmount());
    w.reset();
    auto v2 = Volume::open(*dev);
    EXPECT_TRUE((*v2)->orphans()->empty());
    EXPECT_EQ((*v2)->checkpoint().valid_inode_count.get(), inodes - 1);
    v2->reset();
    clean(*dev, "orphans freed at mount");
  }
}

// ---- Wrong use: clear errors, nothing damaged ------------------------------------

TEST(WriterNs, WrongUse) {
  auto dev = fresh();
  ASSERT_TRUE(dev);
  auto w = mount(*dev);
  ASSERT_TRUE(w);
  ASSERT_TRUE(w->mkdir("/d"));
  ASSERT_TRUE(w->mkdir("/d/sub"));
  auto f = w->create("/d/file");
  ASSERT_TRUE(f);
  ASSERT_TRUE(w->write(*f, 0, bytes("data")));
  const std::string n256(256, 'n'), n255(255, 'n');
  auto expect = [&](const Status& s, Errc c, const char* what) {
    ASSERT_FALSE(s) << what;
    EXPECT_EQ(s.error().code, c) << what << ": " << s.error().to_string();
    EXPECT_FALSE(s.error().message.empty()) << what;
  };
  auto expect_r = [&](const auto& r, Errc c, const char* what) {
    ASSERT_FALSE(r) << what;
    EXPECT_EQ(r.error().code, c) << what << ": " << r.error().to_string();
  };
  // Names over 255 bytes (F2FS_NAME_LEN); 255 is fine.
  expect_r(w->create("/" + n256), Errc::invalid_argument, "create 256");
  expect_r(w->mkdir("/" + n256), Errc::invalid_argument, "mkdir 256");
  expect_r(w->symlink("t", "/" + n256), Errc::invalid_argument, "symlink 256");
  expect_r(w->mknod("/" + n256, 0x1000 | 0644), Errc::invalid_argument, "mknod 256");
  expect(w->rename("/d/file", "/" + n256), Errc::invalid_argument, "rename to 256");
  expect(w->link("/d/file", "/" + n256), Errc::invalid_argument, "link 256");
  ASSERT_TRUE(w->create("/" + n255));
  // A path through a regular file.
  expect_r(w->create("/d/file/x"), Errc::invalid_argument, "create under a file");
  expect(w->rename("/d/sub", "/d/file/x"), Errc::invalid_argument, "rename under a file");
  expect(w->link("/d/file", "/d/file/x"), Errc::invalid_argument, "link under a file");
  expect_r(w->symlink("t", "/d/file/x"), Errc::invalid_argument, "symlink under a file");
  // Removing a non-empty directory; renaming over one.
  expect(w->rmdir("/d"), Errc::invalid_argument, "rmdir non-empty");
  ASSERT_TRUE(w->mkdir("/e"));
  ASSERT_TRUE(w->mkdir("/e/full"));
  ASSERT_TRUE(w->create("/e/full/x"));
  expect(w->rename("/d/sub", "/e/full"), Errc::exists, "rename over a non-empty directory");
  // A directory into itself or below itself.
  expect(w->rename("/d", "/d/sub/inside"), Errc::invalid_argument, "rename into a subdirectory");
  expect(w->rename("/d", "/d/inside"), Errc::invalid_argument, "rename into itself");
  // Types: a directory over a file and the reverse; links to directories.
  expect(w->rename("/d/sub", "/d/file"), Errc::invalid_argument, "directory over a file");
  expect(w->rename("/d/file", "/d/sub"), Errc::invalid_argument, "file over a directory");
  expect(w->link("/d", "/dlink"), Errc::invalid_argument, "link to a directory");
  expect(w->rename("/", "/x"), Errc::invalid_argument, "rename of the root");
  expect(w->rename("/missing", "/x"), Errc::not_found, "rename of a missing name");
  // Symlink targets: 4095 bytes (with the NUL one page) is the most.
  expect_r(w->symlink(std::string(4096, 't'), "/long"), Errc::invalid_argument, "symlink of 4096 bytes");
  expect_r(w->symlink("", "/empty"), Errc::invalid_argument, "empty symlink");
  // Past the largest file: ADDRS_PER_INODE (923 less the extra attribute
  // and inline xattr words, as our reader computes it) + 2 * 1018 +
  // 2 * 1018^2 + 1018^3 blocks of 4 KiB (max_file_blocks()).
  ASSERT_TRUE(w->sync());
  std::uint64_t api = 0;
  {
    auto v = Volume::open(*dev);
    ASSERT_TRUE(v);
    auto in = (*v)->read_inode(*f);
    ASSERT_TRUE(in);
    api = in->addrs_per_inode;
    EXPECT_EQ(api, 923u - in->extra_isize / 4 - 50u);  // a 200-byte inline xattr area
  }
  const std::uint64_t max_bytes = (api + 2 * 1018 + 2ull * 1018 * 1018 + 1018ull * 1018 * 1018) * 4096;
  expect_r(w->write(*f, max_bytes, bytes("x")), Errc::invalid_argument, "write past the largest file");
  expect_r(w->write(*f, max_bytes - 1, bytes("xy")), Errc::invalid_argument, "write across the largest file");
  ASSERT_TRUE(w->write(*f, max_bytes - 1, bytes("z")));  // the last byte is fine
  expect(w->truncate(*f, max_bytes + 1), Errc::invalid_argument, "truncate past the largest file");
  expect(w->fallocate(*f, 0, max_bytes, 4096), Errc::invalid_argument, "fallocate past the largest file");
  ASSERT_TRUE(w->truncate(*f, 4));
  // xattr names over 255 bytes, bad indexes; fallocate on a directory.
  expect(w->setxattr(*f, 1, n256, bytes("v")), Errc::invalid_argument, "setxattr name 256");
  expect(w->setxattr(*f, 0, "a", bytes("v")), Errc::invalid_argument, "setxattr index 0");
  // "trusted." + 248 bytes is 256 bytes: over XATTR_NAME_MAX; + 247 fits.
  expect(w->setxattr(*f, 4, std::string(248, 't'), bytes("v")), Errc::invalid_argument, "setxattr full name 256");
  ASSERT_TRUE(w->setxattr(*f, 4, std::string(247, 't'), bytes("v")));
  expect(w->fallocate(*w->lookup("/d"), 0, 0, 4096), Errc::invalid_argument, "fallocate on a directory");
  expect(w->fallocate(*f, 0, 0, 0), Errc::invalid_argument, "fallocate of 0 bytes");
  expect(w->release(*f), Errc::invalid_argument, "release of a file not open");
  ASSERT_TRUE(w->unmount());
  expect(w->rename("/d", "/z"), Errc::invalid_argument, "rename after unmount");
  w.reset();
  // Nothing damaged: the tree as it should be, both checkers clean.
  auto v = Volume::open(*dev);
  ASSERT_TRUE(v);
  EXPECT_TRUE((*v)->resolve("/d/sub"));
  EXPECT_TRUE((*v)->resolve("/e/full/x"));
  EXPECT_TRUE((*v)->resolve("/" + n255));
  auto fi = (*v)->resolve("/d/file");
  ASSERT_TRUE(fi);
  EXPECT_EQ(fi->size, 4u);
  v->reset();
  clean(*dev, "after wrong use");
}

// A read-only mount: every changing call fails with Errc::read_only and
// the image stays byte-identical.
TEST(WriterNs, ReadOnlyMountChangesNothing) {
  auto dev = fresh();
  ASSERT_TRUE(dev);
  nid_t f = 0;
  {
    auto w = mount(*dev);
    ASSERT_TRUE(w);
    auto r = w->create("/f");
    ASSERT_TRUE(r);
    f = *r;
    ASSERT_TRUE(w->write(f, 0, bytes("abc")));
    ASSERT_TRUE(w->setxattr(f, 1, "k", bytes("v")));
    ASSERT_TRUE(w->unmount());
  }
  const auto before = f2fstest::SparseImage::capture(*dev);
  auto w = mount(*dev, kT + 5, true);
  ASSERT_TRUE(w);
  const Errc ro = Errc::read_only;
  EXPECT_EQ(w->create("/g").error().code, ro);
  EXPECT_EQ(w->mkdir("/g").error().code, ro);
  EXPECT_EQ(w->write(f, 0, bytes("x")).error().code, ro);
  EXPECT_EQ(w->truncate(f, 0).error().code, ro);
  EXPECT_EQ(w->unlink("/f").error().code, ro);
  EXPECT_EQ(w->rename("/f", "/g").error().code, ro);
  EXPECT_EQ(w->link("/f", "/g").error().code, ro);
  EXPECT_EQ(w->symlink("t", "/g").error().code, ro);
  EXPECT_EQ(w->mknod("/g", 0x1000 | 0644).error().code, ro);
  EXPECT_EQ(w->setattr(f, {.uid = 5}).error().code, ro);
  EXPECT_EQ(w->setxattr(f, 1, "k2", bytes("v")).error().code, ro);
  EXPECT_EQ(w->removexattr(f, 1, "k").error().code, ro);
  EXPECT_EQ(w->fallocate(f, 0, 0, 4096).error().code, ro);
  EXPECT_EQ(w->fsync(f).error().code, ro);
  EXPECT_EQ(w->fdatasync(f).error().code, ro);
  EXPECT_EQ(w->sync().error().code, ro);
  EXPECT_EQ(w->rmdir("/").error().code, ro);
  // Reads work.
  EXPECT_EQ(*w->getxattr(f, 1, "k"), std::vector<std::uint8_t>{'v'});
  EXPECT_EQ(w->stat(f)->size, 3u);
  ASSERT_TRUE(w->open(f));
  ASSERT_TRUE(w->release(f));
  ASSERT_TRUE(w->unmount());
  w.reset();
  const auto after = f2fstest::SparseImage::capture(*dev);
  EXPECT_TRUE(before.blocks == after.blocks) << "a read-only mount changed the image";
}

}  // namespace
