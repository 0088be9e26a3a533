// The inode-relative namespace calls (lookup_at, mknod_at, symlink_at,
// unlink_at, rmdir_at, rename_at, link_at, list_at, seek_data, statfs):
// the errno each refusal carries is the one Linux f2fs returns for the
// same call (the tests/fuse conformance run checks the same cases through
// the kernel against Linux), the owner and setgid rules of
// inode_init_owner() (fs/inode.c), RENAME_NOREPLACE and RENAME_EXCHANGE as
// f2fs_rename() / f2fs_cross_rename(), and both checkers clean afterwards.
#include <array>
#include <cerrno>
#include <gtest/gtest.h>

#include "writer/writer_test_util.hpp"

namespace {

using namespace writertest;

std::unique_ptr<BlockDevice> fresh() { return our_mkfs(192ull << 20, kRichFeatures); }


constexpr std::uint16_t kReg = 0x8000, kDir = 0x4000, kFifo = 0x1000;

TEST(WriterAt, CreateLookupRemoveWithLinuxErrno) {
  auto dev = fresh();
  ASSERT_TRUE(dev);
  auto w = mount_fixed_time(*dev);
  ASSERT_TRUE(w);
  const nid_t root = *w->lookup("/");
  const std::uint32_t root_links = w->stat(root)->links;  // lost+found on this image
  auto d = w->mknod_at(root, "d", kDir | 0755, 0, {1000, 100});
  ASSERT_TRUE(d);
  auto f = w->mknod_at(*d, "f", kReg | 0640, 0, {1000, 100});
  ASSERT_TRUE(f);
  EXPECT_EQ(*w->lookup_at(root, "d"), *d);
  EXPECT_EQ(*w->lookup_at(*d, "f"), *f);
  EXPECT_EQ(*w->lookup_at(*d, "."), *d);
  EXPECT_EQ(*w->lookup_at(*d, ".."), root);
  EXPECT_EQ(*w->lookup("/d/f"), *f);  // the path calls see the same tree
  auto st = w->stat(*f);
  ASSERT_TRUE(st);
  EXPECT_EQ(st->uid, 1000u);
  EXPECT_EQ(st->gid, 100u);
  EXPECT_EQ(st->mode, kReg | 0640);
  EXPECT_EQ(w->stat(*d)->links, 2u);
  EXPECT_EQ(w->stat(root)->links, root_links + 1);
  // Errors as Linux: EEXIST, ENOENT, ENOTDIR, ENAMETOOLONG, EISDIR,
  // ENOTEMPTY, EPERM (link to a directory).
  EXPECT_EQ(err_no(w->mknod_at(*d, "f", kReg | 0644)), EEXIST);
  EXPECT_EQ(err_no(w->lookup_at(*d, "nope")), ENOENT);
  EXPECT_EQ(err_no(w->lookup_at(*f, "x")), ENOTDIR);
  EXPECT_EQ(err_no(w->mknod_at(*f, "x", kReg | 0644)), ENOTDIR);
  EXPECT_EQ(err_no(w->mknod_at(*d, std::string(256, 'n'), kReg | 0644)), ENAMETOOLONG);
  EXPECT_TRUE(w->mknod_at(*d, std::string(255, 'n'), kReg | 0644));
  EXPECT_EQ(err_no(w->unlink_at(root, "d")), EISDIR);
  EXPECT_EQ(err_no(w->rmdir_at(root, "d")), ENOTEMPTY);
  EXPECT_EQ(err_no(w->rmdir_at(*d, "f")), ENOTDIR);
  EXPECT_EQ(err_no(w->unlink_at(*d, "nope")), ENOENT);
  EXPECT_EQ(err_no(w->link_at(*d, root, "dlink")), EPERM);
  EXPECT_EQ(err_no(w->symlink_at(root, "s", std::string(4096, 't'))), ENAMETOOLONG);
  EXPECT_EQ(err_no(w->symlink_at(root, "s", "")), ENOENT);
  // A FIFO, a symlink, a hard link; list_at gives each entry's type.
  ASSERT_TRUE(w->mknod_at(root, "p", kFifo | 0600));
  auto s = w->symlink_at(root, "s", "d/f");
  ASSERT_TRUE(s);
  EXPECT_EQ(*w->readlink(*s), "d/f");
  ASSERT_TRUE(w->link_at(*f, root, "hard"));
  EXPECT_EQ(w->stat(*f)->links, 2u);
  auto l = w->list_at(root);
  ASSERT_TRUE(l);
  std::map<std::string, std::uint8_t> types;
  for (auto& e : *l) types[e.name] = e.file_type;
  EXPECT_EQ(types["d"], 2);     // F2FS_FT_DIR
  EXPECT_EQ(types["hard"], 1);  // F2FS_FT_REG_FILE
  EXPECT_EQ(types["p"], 5);     // F2FS_FT_FIFO
  EXPECT_EQ(types["s"], 7);     // F2FS_FT_SYMLINK
  ASSERT_TRUE(w->unlink_at(*d, "f"));
  ASSERT_TRUE(w->unlink_at(*d, std::string(255, 'n')));
  EXPECT_EQ(w->stat(*f)->links, 1u);
  ASSERT_TRUE(w->rmdir_at(root, "d"));
  EXPECT_EQ(w->stat(root)->links, root_links);
  EXPECT_EQ(err_no(w->mknod_at(*d, "x", kReg | 0644)), ENOENT);  // a removed directory
  ASSERT_TRUE(w->unmount());
  w.reset();
  our_fsck_clean(*dev, "at calls");
  fsck_f2fs_clean(*dev, "at calls");
}

TEST(WriterAt, SetgidDirectoryGivesItsGroup) {
  auto dev = fresh();
  ASSERT_TRUE(dev);
  auto w = mount_fixed_time(*dev);
  ASSERT_TRUE(w);
  const nid_t root = *w->lookup("/");
  auto d = w->mknod_at(root, "sg", kDir | 0755, 0, {0, 77});
  ASSERT_TRUE(d);
  SetAttr a;
  a.mode = 02775;
  ASSERT_TRUE(w->setattr(*d, a));
  // inode_init_owner(): the directory's gid; S_ISGID on a new directory.
  auto f = w->mknod_at(*d, "f", kReg | 0644, 0, {1000, 1000});
  auto sub = w->mknod_at(*d, "sub", kDir | 0755, 0, {1000, 1000});
  ASSERT_TRUE(f && sub);
  EXPECT_EQ(w->stat(*f)->gid, 77u);
  EXPECT_EQ(w->stat(*f)->uid, 1000u);
  EXPECT_EQ(w->stat(*f)->mode, kReg | 0644);
  EXPECT_EQ(w->stat(*sub)->gid, 77u);
  EXPECT_EQ(w->stat(*sub)->mode, kDir | 02755);
  ASSERT_TRUE(w->unmount());
}

// The xattr format of an ACL (posix_acl_xattr, version 2): entries of
// (tag, perm, id), id -1 for the object, mask and other entries.
std::vector<std::uint8_t> acl_xattr(std::initializer_list<std::array<std::uint32_t, 3>> es) {
  std::vector<std::uint8_t> v = {2, 0, 0, 0};
  for (const auto& e : es)
    for (auto [x, n] : {std::pair{e[0], 2}, std::pair{e[1], 2}, std::pair{e[2], 4}})
      for (int i = 0; i < n; ++i) v.push_back(static_cast<std::uint8_t>(x >> (8 * i)));
  return v;
}
constexpr std::uint32_t kNo = 0xFFFFFFFFu;

// POSIX ACLs with Owner::umask as Linux 6.1 f2fs does them; the expected
// modes and ACLs are what Linux printed for the same calls in the
// tests/fuse conformance run (its "acl" cases; umask 022 and 077).
TEST(WriterAt, PosixAclInheritanceAndChmodAsLinux) {
  auto dev = fresh();
  ASSERT_TRUE(dev);
  auto w = mount_fixed_time(*dev);
  ASSERT_TRUE(w);
  const nid_t root = *w->lookup("/");
  auto d = w->mknod_at(root, "d", kDir | 0755, 0, {0, 0, 022});
  ASSERT_TRUE(d);
  const auto def = acl_xattr({{0x01, 7, kNo}, {0x02, 6, 1000}, {0x04, 5, kNo}, {0x08, 7, 1000}, {0x10, 7, kNo}, {0x20, 1, kNo}});
  ASSERT_TRUE(w->setxattr_at(*d, "system.posix_acl_default", def));
  EXPECT_EQ(err_no(w->getxattr_at(*d, "system.posix_acl_access")), ENODATA);
  for (std::uint16_t umask : {std::uint16_t{022}, std::uint16_t{077}}) {
    const std::string sfx = std::to_string(umask);
    // A file asked 0666: 0660, the ACL's user 6, mask 6, other 0.
    auto f = w->mknod_at(*d, "file" + sfx, kReg | 0666, 0, {0, 0, umask});
    ASSERT_TRUE(f);
    EXPECT_EQ(w->stat(*f)->mode, kReg | 0660) << umask;
    EXPECT_EQ(*w->getxattr_at(*f, "system.posix_acl_access"),
              acl_xattr({{0x01, 6, kNo}, {0x02, 6, 1000}, {0x04, 5, kNo}, {0x08, 7, 1000}, {0x10, 6, kNo}, {0x20, 0, kNo}}));
    EXPECT_EQ(err_no(w->getxattr_at(*f, "system.posix_acl_default")), ENODATA);
    // A directory asked 0777: 0771, the default ACL as its access and default ACLs.
    auto sub = w->mknod_at(*d, "dir" + sfx, kDir | 0777, 0, {0, 0, umask});
    ASSERT_TRUE(sub);
    EXPECT_EQ(w->stat(*sub)->mode, kDir | 0771) << umask;
    EXPECT_EQ(*w->getxattr_at(*sub, "system.posix_acl_access"), def);
    EXPECT_EQ(*w->getxattr_at(*sub, "system.posix_acl_default"), def);
    // A FIFO asked 0640: 0640, mask 4.
    auto p = w->mknod_at(*d, "fifo" + sfx, kFifo | 0640, 0, {0, 0, umask});
    ASSERT_TRUE(p);
    EXPECT_EQ(w->stat(*p)->mode, kFifo | 0640);
    EXPECT_EQ(*w->getxattr_at(*p, "system.posix_acl_access"),
              acl_xattr({{0x01, 6, kNo}, {0x02, 6, 1000}, {0x04, 5, kNo}, {0x08, 7, 1000}, {0x10, 4, kNo}, {0x20, 0, kNo}}));
    // A symlink: 0777, no ACL.
    auto l = w->symlink_at(*d, "lnk" + sfx, "file22", {0, 0, umask});
    ASSERT_TRUE(l);
    EXPECT_EQ(w->stat(*l)->mode, 0xA000 | 0777);
    // Outside: the umask alone (0644, 0600).
    auto o = w->mknod_at(root, "plain" + sfx, kReg | 0666, 0, {0, 0, umask});
    ASSERT_TRUE(o);
    EXPECT_EQ(w->stat(*o)->mode, kReg | (0666 & ~umask));
    EXPECT_EQ(err_no(w->getxattr_at(*o, "system.posix_acl_access")), ENODATA);
  }
  // chmod rewrites the access ACL: user 1000 r and mask r at mode 0640,
  // then chmod 0754 gives user 7, mask 5, other 4, the named entry kept.
  auto f = w->mknod_at(root, "f", kReg | 0600, 0, {0, 0, 022});
  ASSERT_TRUE(f);
  ASSERT_TRUE(w->setxattr_at(*f, "system.posix_acl_access",
                             acl_xattr({{0x01, 6, kNo}, {0x02, 4, 1000}, {0x04, 0, kNo}, {0x10, 4, kNo}, {0x20, 0, kNo}})));
  EXPECT_EQ(w->stat(*f)->mode, kReg | 0640);
  SetAttr a;
  a.mode = 0754;
  ASSERT_TRUE(w->setattr(*f, a));
  EXPECT_EQ(*w->getxattr_at(*f, "system.posix_acl_access"),
            acl_xattr({{0x01, 7, kNo}, {0x02, 4, 1000}, {0x04, 0, kNo}, {0x10, 5, kNo}, {0x20, 4, kNo}}));
  // Without Owner::umask the mode is taken as given and nothing inherited.
  auto raw = w->mknod_at(*d, "raw", kReg | 0666, 0, {0, 0});
  ASSERT_TRUE(raw);
  EXPECT_EQ(w->stat(*raw)->mode, kReg | 0666);
  EXPECT_EQ(err_no(w->getxattr_at(*raw, "system.posix_acl_access")), ENODATA);
  ASSERT_TRUE(w->unmount());
  check_clean(*dev, "ACLs");
}

TEST(WriterAt, RenameFlags) {
  auto dev = fresh();
  ASSERT_TRUE(dev);
  auto w = mount_fixed_time(*dev);
  ASSERT_TRUE(w);
  const nid_t root = *w->lookup("/");
  auto a = w->mknod_at(root, "a", kDir | 0755);
  auto b = w->mknod_at(root, "b", kDir | 0755);
  ASSERT_TRUE(a && b);
  auto sub = w->mknod_at(*a, "sub", kDir | 0755);
  auto f = w->mknod_at(*b, "f", kReg | 0644);
  auto g = w->mknod_at(*b, "g", kReg | 0644);
  ASSERT_TRUE(sub && f && g);
  EXPECT_EQ(err_no(w->rename_at(*b, "f", *b, "g", rename_flag::noreplace)), EEXIST);
  EXPECT_EQ(err_no(w->rename_at(*b, "f", *b, "none", rename_flag::exchange)), ENOENT);
  EXPECT_EQ(err_no(w->rename_at(*b, "f", *b, "g", rename_flag::exchange | rename_flag::noreplace)), EINVAL);
  EXPECT_EQ(err_no(w->rename_at(root, "a", *sub, "x")), EINVAL);  // into itself
  EXPECT_EQ(err_no(w->rename_at(*b, "f", root, "a")), EISDIR);
  EXPECT_EQ(err_no(w->rename_at(*a, "sub", *b, "f")), ENOTDIR);
  EXPECT_EQ(err_no(w->rename_at(*b, "f", root, "b")), EISDIR);
  // Exchange a directory (in a) with a file (in b): the entries swap, the
  // directory's ".." names b, a loses a link and b gains one
  // (f2fs_cross_rename()).
  ASSERT_TRUE(w->rename_at(*a, "sub", *b, "f", rename_flag::exchange));
  EXPECT_EQ(*w->lookup_at(*a, "sub"), *f);
  EXPECT_EQ(*w->lookup_at(*b, "f"), *sub);
  EXPECT_EQ(*w->lookup_at(*sub, ".."), *b);
  EXPECT_EQ(w->stat(*a)->links, 2u);
  EXPECT_EQ(w->stat(*b)->links, 3u);
  // noreplace to a free name is a plain rename.
  ASSERT_TRUE(w->rename_at(*b, "g", *a, "g2", rename_flag::noreplace));
  EXPECT_EQ(*w->lookup_at(*a, "g2"), *g);
  // A file over a file: the target is freed.
  ASSERT_TRUE(w->rename_at(*a, "g2", *a, "sub"));
  EXPECT_EQ(w->stat(*f).error().code, Errc::not_found);
  ASSERT_TRUE(w->unmount());
  w.reset();
  our_fsck_clean(*dev, "rename flags");
  fsck_f2fs_clean(*dev, "rename flags");
}

TEST(WriterAt, OpenUnlinkedFileKeptUntilRelease) {
  auto dev = fresh();
  ASSERT_TRUE(dev);
  auto w = mount_fixed_time(*dev);
  ASSERT_TRUE(w);
  const nid_t root = *w->lookup("/");
  auto f = w->mknod_at(root, "f", kReg | 0644);
  ASSERT_TRUE(f);
  ASSERT_TRUE(w->write(*f, 0, bytes("still here")));
  ASSERT_TRUE(w->open(*f));
  ASSERT_TRUE(w->unlink_at(root, "f"));
  EXPECT_EQ(w->stat(*f)->links, 0u);
  std::vector<std::uint8_t> out(10);
  EXPECT_EQ(*w->read(*f, 0, out), 10u);
  EXPECT_EQ(std::string(out.begin(), out.end()), "still here");
  ASSERT_TRUE(w->release(*f));
  EXPECT_EQ(w->stat(*f).error().code, Errc::not_found);
  ASSERT_TRUE(w->unmount());
  w.reset();
  our_fsck_clean(*dev, "orphan");
}

TEST(WriterAt, SeekDataAndHole) {
  auto dev = fresh();
  ASSERT_TRUE(dev);
  auto w = mount_fixed_time(*dev);
  ASSERT_TRUE(w);
  const nid_t root = *w->lookup("/");
  auto f = w->mknod_at(root, "f", kReg | 0644);
  ASSERT_TRUE(f);
  ASSERT_TRUE(w->write(*f, 0, bytes("hello")));
  ASSERT_TRUE(w->write(*f, 10000, bytes("world")));  // blocks 0 and 2, a hole at 1
  // The values Linux f2fs gives for the same file (tests/fuse conformance).
  EXPECT_EQ(*w->seek_data(*f, 0, false), 0u);
  EXPECT_EQ(*w->seek_data(*f, 0, true), 4096u);
  EXPECT_EQ(*w->seek_data(*f, 5000, false), 8192u);
  EXPECT_EQ(*w->seek_data(*f, 9000, true), 10005u);
  EXPECT_EQ(err_no(w->seek_data(*f, 10005, false)), ENXIO);
  ASSERT_TRUE(w->sync());  // the same once written back
  EXPECT_EQ(*w->seek_data(*f, 0, true), 4096u);
  EXPECT_EQ(*w->seek_data(*f, 5000, false), 8192u);
  const WriterStatfs s = w->statfs();
  EXPECT_GT(s.blocks, s.bfree);
  EXPECT_GT(s.files, s.ffree);
  ASSERT_TRUE(w->unmount());
}

}  // namespace
