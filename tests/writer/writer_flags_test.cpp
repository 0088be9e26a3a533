// Inode flags (FS_IOC_GETFLAGS / FS_IOC_SETFLAGS: Writer::get_flags(),
// Writer::set_flags()) and what the VFS refuses on immutable and
// append-only inodes in the writer's calls.
//
// Expected values are Linux 6.1's rules written out by hand, each with the
// function it comes from: vfs_fileattr_set() / fileattr_set_prepare() in
// fs/ioctl.c, f2fs_fileattr_get(), f2fs_fileattr_set() and
// f2fs_setflags_common() in fs/f2fs/file.c, f2fs_mask_flags() and
// F2FS_GETTABLE_FS_FL / F2FS_SETTABLE_FS_FL / F2FS_FL_INHERITED in
// fs/f2fs/f2fs.h; may_open(), may_delete(), may_create(), vfs_link() and
// vfs_rename() in fs/namei.c; may_setattr() in fs/attr.c with
// f2fs_setattr(); vfs_truncate(), do_sys_ftruncate() and vfs_fallocate()
// in fs/open.c; xattr_permission() in fs/xattr.c; f2fs_write_checks() in
// fs/f2fs/file.c. tests/fuse/conformance.c runs the same cases through
// the kernel on our FUSE mount and on Linux f2fs and compares them.
#include <cerrno>
#include <gtest/gtest.h>

#include "writer/writer_test_util.hpp"

namespace {

using namespace writertest;

// FS_*_FL (include/uapi/linux/fs.h), written out here.
constexpr std::uint32_t kCompr = 0x4, kSync = 0x8, kImmutable = 0x10, kAppend = 0x20, kNodump = 0x40,
                        kNoatime = 0x80, kNocomp = 0x400, kIndex = 0x1000, kDirsync = 0x10000,
                        kExtent = 0x80000, kNocow = 0x800000, kInlineData = 0x10000000,
                        kProjinherit = 0x20000000, kCasefold = 0x40000000;
constexpr std::uint16_t kReg = 0x8000, kDir = 0x4000, kFifo = 0x1000;


std::string read_all(Writer& w, nid_t ino) {
  auto st = w.stat(ino);
  if (!st) return "<stat failed>";
  std::string s(static_cast<std::size_t>(st->size), '\0');
  auto n = w.read(ino, 0, {reinterpret_cast<std::uint8_t*>(s.data()), s.size()});
  if (!n) return "<read failed>";
  s.resize(*n);
  return s;
}

TEST(WriterFlags, SetflagsAcceptsTheSettableFlagsByType) {
  auto dev = our_mkfs(192ull << 20, kRichFeatures);
  ASSERT_TRUE(dev);
  auto w = mount_fixed_time(*dev);
  ASSERT_TRUE(w);
  const nid_t root = *w->lookup("/");
  auto f = w->mknod_at(root, "f", kReg | 0644);
  auto d = w->mknod_at(root, "d", kDir | 0755);
  auto p = w->mknod_at(root, "p", kFifo | 0644);
  ASSERT_TRUE(f && d && p);
  EXPECT_EQ(*w->get_flags(*f), 0u);
  // Every bit of F2FS_SETTABLE_FS_FL that f2fs_mask_flags() keeps on a
  // regular file: set alone, read back, cleared.
  for (std::uint32_t fl : {kSync, kImmutable, kAppend, kNodump, kNoatime}) {
    ASSERT_TRUE(w->set_flags(*f, fl, ~0u)) << std::hex << fl;
    EXPECT_EQ(*w->get_flags(*f), fl) << std::hex << fl;
    EXPECT_EQ(w->stat(*f)->flags, fl) << "i_flags on disk";
    ASSERT_TRUE(w->set_flags(*f, 0, ~0u));
    EXPECT_EQ(*w->get_flags(*f), 0u);
  }
  // F2FS_REG_FLMASK drops dirsync, projinherit, casefold: EOPNOTSUPP from
  // f2fs_fileattr_set(); compr and nocomp need the compression feature
  // (f2fs_setflags_common(): EOPNOTSUPP).
  for (std::uint32_t fl : {kDirsync, kProjinherit, kCasefold, kCompr, kNocomp})
    EXPECT_EQ(err_no(w->set_flags(*f, fl, ~0u)), EOPNOTSUPP) << std::hex << fl;
  // Outside F2FS_GETTABLE_FS_FL: EOPNOTSUPP; gettable but not settable
  // (index, nocow, inline_data): ignored.
  EXPECT_EQ(err_no(w->set_flags(*f, kExtent, ~0u)), EOPNOTSUPP);
  EXPECT_EQ(err_no(w->set_flags(*f, kExtent | kNodump, ~0u)), EOPNOTSUPP);
  EXPECT_EQ(*w->get_flags(*f), 0u) << "nothing changed by a refused call";
  EXPECT_TRUE(w->set_flags(*f, kIndex | kNocow | kInlineData | kNodump, ~0u));
  EXPECT_EQ(*w->get_flags(*f), kNodump);
  // The mask: only its bits change.
  EXPECT_TRUE(w->set_flags(*f, kNoatime, kNoatime));
  EXPECT_EQ(*w->get_flags(*f), kNodump | kNoatime);
  EXPECT_TRUE(w->set_flags(*f, 0, kNodump));
  EXPECT_EQ(*w->get_flags(*f), kNoatime);
  // A directory keeps every flag but casefold, which needs the feature.
  // A new directory has F2FS_INDEX_FL (f2fs_new_inode()), which
  // FS_IOC_SETFLAGS does not change.
  EXPECT_EQ(*w->get_flags(*d), kIndex);
  EXPECT_TRUE(w->set_flags(*d, kDirsync | kProjinherit | kSync | kNodump, ~0u));
  EXPECT_EQ(*w->get_flags(*d), kIndex | kDirsync | kProjinherit | kSync | kNodump);
  EXPECT_EQ(err_no(w->set_flags(*d, kCasefold, ~0u)), EOPNOTSUPP);
  ASSERT_TRUE(w->set_flags(*d, 0, ~0u));
  EXPECT_EQ(*w->get_flags(*d), kIndex);
  // Other types: no fileattr_set in f2fs_special_inode_operations (the
  // ioctl's ENOTTY, vfs_fileattr_set()).
  for (std::uint32_t fl : {kNodump, kSync, 0u})
    EXPECT_EQ(err_no(w->set_flags(*p, fl, ~0u)), ENOTTY) << std::hex << fl;
  EXPECT_EQ(err_no(w->set_flags(12345, kNodump, ~0u)), ENOENT);
  EXPECT_EQ(err_no(w->get_flags(12345)), ENOENT);
  ASSERT_TRUE(w->unmount());
  check_clean(*dev, "set_flags by type");
  auto w2 = mount_fixed_time(*dev);
  ASSERT_TRUE(w2);
  EXPECT_EQ(*w2->get_flags(*f), kNoatime) << "kept on disk";
  EXPECT_EQ(*w2->get_flags(*d), kIndex);
}

TEST(WriterFlags, ImmutableAndAppendNeedCapLinuxImmutable) {
  auto dev = our_mkfs(192ull << 20, kRichFeatures);
  ASSERT_TRUE(dev);
  auto w = mount_fixed_time(*dev);
  ASSERT_TRUE(w);
  auto f = w->create("/f");
  ASSERT_TRUE(f);
  // fileattr_set_prepare(): a change of FS_IMMUTABLE_FL or FS_APPEND_FL
  // without CAP_LINUX_IMMUTABLE is EPERM; other bits are the owner's.
  EXPECT_EQ(err_no(w->set_flags(*f, kImmutable, ~0u, false)), EPERM);
  EXPECT_EQ(err_no(w->set_flags(*f, kAppend | kNodump, ~0u, false)), EPERM);
  EXPECT_EQ(*w->get_flags(*f), 0u);
  EXPECT_TRUE(w->set_flags(*f, kNodump, ~0u, false));
  ASSERT_TRUE(w->set_flags(*f, kImmutable | kNodump, ~0u, true));
  EXPECT_EQ(err_no(w->set_flags(*f, kNodump, ~0u, false)), EPERM) << "clearing immutable";
  EXPECT_TRUE(w->set_flags(*f, kImmutable, ~0u, false)) << "immutable kept, nodump cleared";
  EXPECT_EQ(*w->get_flags(*f), kImmutable);
  // The EPERM comes before f2fs_fileattr_set()'s EOPNOTSUPP.
  EXPECT_EQ(err_no(w->set_flags(*f, kExtent, ~0u, false)), EPERM);
  EXPECT_TRUE(w->set_flags(*f, 0, ~0u, true));
  ASSERT_TRUE(w->unmount());
  check_clean(*dev, "cap_linux_immutable");
}

TEST(WriterFlags, GetflagsReportsDerivedBits) {
  auto dev = our_mkfs(192ull << 20, kRichFeatures);
  ASSERT_TRUE(dev);
  auto w = mount_fixed_time(*dev);
  ASSERT_TRUE(w);
  auto f = w->create("/f");
  ASSERT_TRUE(f);
  // f2fs_fileattr_get(): FS_NOCOW_FL for a pinned file (FI_PIN_FILE).
  ASSERT_TRUE(w->set_pinned(*f, true));
  EXPECT_EQ(*w->get_flags(*f), kNocow);
  EXPECT_EQ(w->stat(*f)->flags, 0u) << "not an i_flags bit";
  EXPECT_TRUE(w->set_flags(*f, kNodump, ~0u));
  EXPECT_EQ(*w->get_flags(*f), kNocow | kNodump) << "pinning kept";
  ASSERT_TRUE(w->set_pinned(*f, false));
  EXPECT_EQ(*w->get_flags(*f), kNodump);
  // FS_INLINE_DATA_FL for inline data: a short symlink is inline
  // (f2fs_symlink() with FI_INLINE_DATA).
  auto l = w->symlink("/f", "/l");
  ASSERT_TRUE(l);
  EXPECT_EQ(*w->get_flags(*l), kInlineData);
  ASSERT_TRUE(w->unmount());
  check_clean(*dev, "derived flags");
}

TEST(WriterFlags, CompressionFlagRules) {
  auto dev = our_mkfs(192ull << 20, kRichFeatures | feature::compression);
  ASSERT_TRUE(dev);
  auto w = mount_fixed_time(*dev);
  ASSERT_TRUE(w);
  auto f = w->create("/f");
  auto d = w->mkdir("/d");
  ASSERT_TRUE(f && d);
  // f2fs_setflags_common(): F2FS_COMPR_FL with F2FS_NOCOMP_FL is EINVAL.
  EXPECT_EQ(err_no(w->set_flags(*f, kCompr | kNocomp, ~0u)), EINVAL);
  EXPECT_TRUE(w->set_flags(*f, kNocomp, ~0u));
  EXPECT_EQ(*w->get_flags(*f), kNocomp);
  // nocomp to compr in one call: compression set on the empty file.
  EXPECT_TRUE(w->set_flags(*f, kCompr, ~0u));
  EXPECT_EQ(*w->get_flags(*f), kCompr);
  EXPECT_TRUE(w->set_flags(*f, 0, ~0u));
  // A pinned file cannot become compressed (f2fs_may_compress(): EINVAL).
  ASSERT_TRUE(w->set_pinned(*f, true));
  EXPECT_EQ(err_no(w->set_flags(*f, kCompr, ~0u)), EINVAL);
  ASSERT_TRUE(w->set_pinned(*f, false));
  // A directory's nocomp goes to what is made in it (set_compress_new_inode()).
  EXPECT_TRUE(w->set_flags(*d, kNocomp, ~0u));
  auto g = w->create("/d/g");
  ASSERT_TRUE(g);
  EXPECT_EQ(*w->get_flags(*g), kNocomp);
  EXPECT_EQ(*w->get_flags(*d), kIndex | kNocomp);
  // A symlink has no FS_IOC_SETFLAGS (ENOTTY).
  auto l = w->symlink("/f", "/l");
  ASSERT_TRUE(l);
  EXPECT_EQ(err_no(w->set_flags(*l, kNocomp, ~0u)), ENOTTY);
  ASSERT_TRUE(w->unmount());
  check_clean(*dev, "compression flags");
}

TEST(WriterFlags, NewInodesInheritAsF2fsNewInode) {
  auto dev = our_mkfs(192ull << 20, kRichFeatures);
  ASSERT_TRUE(dev);
  auto w = mount_fixed_time(*dev);
  ASSERT_TRUE(w);
  auto d = w->mkdir("/d");
  ASSERT_TRUE(d);
  const std::uint32_t all = kSync | kNodump | kNoatime | kDirsync | kProjinherit;
  ASSERT_TRUE(w->set_flags(*d, all | kAppend, ~0u));
  const nid_t dn = *d;
  auto f = w->mknod_at(dn, "f", kReg | 0644);
  auto sub = w->mknod_at(dn, "sub", kDir | 0755);
  auto p = w->mknod_at(dn, "p", kFifo | 0644);
  auto l = w->symlink_at(dn, "l", "f");
  ASSERT_TRUE(f && sub && p && l);
  // F2FS_FL_INHERITED through f2fs_mask_flags(): a regular file loses
  // dirsync and projinherit, a FIFO or symlink keeps nodump and noatime;
  // append-only is not inherited.
  EXPECT_EQ(*w->get_flags(*f), kSync | kNodump | kNoatime);
  EXPECT_EQ(*w->get_flags(*sub), all | kIndex);
  EXPECT_EQ(*w->get_flags(*p), kNodump | kNoatime);
  EXPECT_EQ(*w->get_flags(*l) & ~kInlineData, kNodump | kNoatime);
  ASSERT_TRUE(w->set_flags(dn, 0, ~0u));
  ASSERT_TRUE(w->unmount());
  check_clean(*dev, "inherited flags");
}

TEST(WriterFlags, ImmutableFileRefusesChanges) {
  auto dev = our_mkfs(192ull << 20, kRichFeatures);
  ASSERT_TRUE(dev);
  auto w = mount_fixed_time(*dev);
  ASSERT_TRUE(w);
  const nid_t root = *w->lookup("/");
  auto f = w->create("/imm");
  auto other = w->create("/other");
  ASSERT_TRUE(f && other);
  ASSERT_TRUE(w->write(*f, 0, bytes("immutable data")));
  ASSERT_TRUE(w->setxattr(*f, 1, "a", bytes("1")));
  ASSERT_TRUE(w->set_flags(*f, kImmutable, ~0u));
  // f2fs_write_checks(): EPERM.
  EXPECT_EQ(err_no(w->write(*f, 0, bytes("x"))), EPERM);
  EXPECT_EQ(err_no(w->write(*f, 100, bytes("x"))), EPERM);
  // f2fs_setattr(): nothing changes on an immutable inode.
  EXPECT_EQ(err_no(w->truncate(*f, 0)), EPERM);
  EXPECT_EQ(err_no(w->truncate(*f, 100)), EPERM);
  SetAttr mode;
  mode.mode = 0600;
  EXPECT_EQ(err_no(w->setattr(*f, mode)), EPERM);
  SetAttr owner;
  owner.uid = 5;
  EXPECT_EQ(err_no(w->setattr(*f, owner)), EPERM);
  SetAttr touch;
  touch.atime = touch.mtime = Timespec{1700000200, 0};
  touch.times_now = true;
  EXPECT_EQ(err_no(w->setattr(*f, touch)), EPERM) << "may_setattr(): ATTR_TOUCH on an immutable inode";
  EXPECT_EQ(err_no(w->setattr(*f, SetAttr{})), EPERM) << "chown(-1, -1): ATTR_CTIME alone";
  // xattr_permission(): EPERM before ENODATA.
  EXPECT_EQ(err_no(w->setxattr(*f, 1, "b", bytes("2"))), EPERM);
  EXPECT_EQ(err_no(w->removexattr(*f, 1, "a")), EPERM);
  EXPECT_EQ(err_no(w->removexattr(*f, 1, "missing")), EPERM);
  EXPECT_TRUE(w->getxattr(*f, 1, "a")) << "reading is allowed";
  // vfs_fallocate(): EPERM whatever the mode.
  EXPECT_EQ(err_no(w->fallocate(*f, 0, 0, 8192)), EPERM);
  EXPECT_EQ(err_no(w->fallocate(*f, falloc::keep_size, 0, 8192)), EPERM);
  // may_open(): write access (an access mode but O_RDONLY, or O_TRUNC).
  EXPECT_EQ(err_no(w->open(*f, open_flag::wronly)), EPERM);
  EXPECT_EQ(err_no(w->open(*f, open_flag::rdwr | open_flag::append)), EPERM);
  EXPECT_EQ(err_no(w->open(*f, open_flag::rdonly | open_flag::trunc)), EPERM);
  ASSERT_TRUE(w->open(*f, open_flag::rdonly));
  ASSERT_TRUE(w->release(*f));
  // may_delete(): the victim of unlink and rename, a replaced target;
  // vfs_link(): no new link.
  EXPECT_EQ(err_no(w->unlink_at(root, "imm")), EPERM);
  EXPECT_EQ(err_no(w->rename_at(root, "imm", root, "imm2")), EPERM);
  EXPECT_EQ(err_no(w->rename_at(root, "other", root, "imm")), EPERM);
  EXPECT_EQ(err_no(w->rename_at(root, "other", root, "imm", rename_flag::exchange)), EPERM);
  EXPECT_EQ(err_no(w->link_at(*f, root, "imm.l")), EPERM);
  // The path calls: the same refusals.
  EXPECT_EQ(err_no(w->open("/imm", open_flag::wronly)), EPERM);
  EXPECT_EQ(err_no(w->open("/imm", open_flag::rdonly | open_flag::trunc)), EPERM);
  EXPECT_TRUE(w->open("/imm", open_flag::rdonly));
  EXPECT_EQ(err_no(w->truncate("/imm", 0)), EPERM);
  EXPECT_EQ(err_no(w->setxattr("/imm", "user.c", bytes("3"))), EPERM);
  EXPECT_EQ(err_no(w->unlink("/imm")), EPERM);
  EXPECT_EQ(err_no(w->rename("/imm", "/x")), EPERM);
  EXPECT_EQ(err_no(w->link("/imm", "/x")), EPERM);
  EXPECT_EQ(read_all(*w, *f), "immutable data");
  EXPECT_EQ(w->stat(*f)->links, 1u);
  // Flags still change (fileattr_set_prepare() has no immutable check).
  EXPECT_TRUE(w->set_flags(*f, kImmutable | kNodump, ~0u));
  ASSERT_TRUE(w->set_flags(*f, 0, ~0u));
  EXPECT_TRUE(w->write(*f, 0, bytes("I")));
  EXPECT_TRUE(w->unlink_at(root, "imm"));
  ASSERT_TRUE(w->unmount());
  check_clean(*dev, "immutable file");
}

TEST(WriterFlags, AppendOnlyFileTakesAppendsOnly) {
  auto dev = our_mkfs(192ull << 20, kRichFeatures);
  ASSERT_TRUE(dev);
  auto w = mount_fixed_time(*dev);
  ASSERT_TRUE(w);
  const nid_t root = *w->lookup("/");
  auto f = w->create("/app");
  auto other = w->create("/other");
  ASSERT_TRUE(f && other);
  ASSERT_TRUE(w->write(*f, 0, bytes("log")));
  ASSERT_TRUE(w->set_flags(*f, kAppend, ~0u));
  // may_open(): write access needs O_APPEND, never O_TRUNC.
  EXPECT_EQ(err_no(w->open(*f, open_flag::wronly)), EPERM);
  EXPECT_EQ(err_no(w->open(*f, open_flag::rdwr)), EPERM);
  EXPECT_EQ(err_no(w->open(*f, open_flag::wronly | open_flag::append | open_flag::trunc)), EPERM);
  EXPECT_EQ(err_no(w->open(*f, open_flag::rdonly | open_flag::trunc)), EPERM);
  ASSERT_TRUE(w->open(*f, open_flag::wronly | open_flag::append));
  ASSERT_TRUE(w->release(*f));
  {
    auto h = w->open("/app", open_flag::wronly | open_flag::append);
    ASSERT_TRUE(h);
    EXPECT_TRUE(h->write(bytes("+1")));
    EXPECT_TRUE(h->pwrite(bytes("+2"), 0)) << "O_APPEND: at the end";
    // do_sys_ftruncate(): EPERM on an append-only inode.
    EXPECT_EQ(err_no(h->truncate(1)), EPERM);
    // vfs_fallocate(): preallocation only.
    EXPECT_TRUE(h->fallocate(falloc::keep_size, 0, 8192));
    EXPECT_EQ(err_no(h->fallocate(falloc::punch_hole | falloc::keep_size, 0, 4096)), EPERM);
    EXPECT_EQ(err_no(h->fallocate(falloc::zero_range, 0, 4096)), EPERM);
  }
  EXPECT_EQ(read_all(*w, *f), "log+1+2");
  EXPECT_TRUE(w->write(*f, 7, bytes("+3"))) << "the writer writes where told: O_APPEND is the opener's";
  EXPECT_EQ(err_no(w->truncate(*f, 0)), EPERM);
  EXPECT_EQ(err_no(w->truncate("/app", 100)), EPERM);
  EXPECT_TRUE(w->fallocate(*f, 0, 0, 4096));
  EXPECT_EQ(err_no(w->fallocate(*f, falloc::punch_hole | falloc::keep_size, 0, 4096)), EPERM);
  // may_setattr(): mode, owner and explicit times EPERM; the current time
  // (ATTR_TOUCH) and ctime alone allowed.
  SetAttr mode;
  mode.mode = 0600;
  EXPECT_EQ(err_no(w->setattr(*f, mode)), EPERM);
  SetAttr gid;
  gid.gid = 7;
  EXPECT_EQ(err_no(w->setattr(*f, gid)), EPERM);
  SetAttr times;
  times.mtime = Timespec{1000, 0};
  EXPECT_EQ(err_no(w->setattr(*f, times)), EPERM);
  times.times_now = true;
  EXPECT_TRUE(w->setattr(*f, times));
  EXPECT_TRUE(w->setattr(*f, SetAttr{}));
  EXPECT_EQ(w->stat(*f)->mode, kReg | 0644);
  // xattr_permission(): EPERM.
  EXPECT_EQ(err_no(w->setxattr(*f, 1, "a", bytes("1"))), EPERM);
  EXPECT_EQ(err_no(w->removexattr(*f, 1, "a")), EPERM);
  // may_delete() and vfs_link().
  EXPECT_EQ(err_no(w->unlink_at(root, "app")), EPERM);
  EXPECT_EQ(err_no(w->rename_at(root, "app", root, "app2")), EPERM);
  EXPECT_EQ(err_no(w->rename_at(root, "other", root, "app")), EPERM);
  EXPECT_EQ(err_no(w->link_at(*f, root, "app.l")), EPERM);
  ASSERT_TRUE(w->set_flags(*f, 0, ~0u));
  EXPECT_TRUE(w->truncate(*f, 0));
  ASSERT_TRUE(w->unmount());
  check_clean(*dev, "append-only file");
}

TEST(WriterFlags, ImmutableAndAppendOnlyDirectories) {
  auto dev = our_mkfs(192ull << 20, kRichFeatures);
  ASSERT_TRUE(dev);
  auto w = mount_fixed_time(*dev);
  ASSERT_TRUE(w);
  const nid_t root = *w->lookup("/");
  auto idir = w->mkdir("/idir");
  auto adir = w->mkdir("/adir");
  ASSERT_TRUE(idir && adir);
  for (nid_t d : {*idir, *adir}) {
    ASSERT_TRUE(w->mknod_at(d, "in", kReg | 0644));
    ASSERT_TRUE(w->mknod_at(d, "sub", kDir | 0755));
  }
  auto f = w->create("/f");
  auto g = w->create("/g");
  ASSERT_TRUE(f && g);
  ASSERT_TRUE(w->set_flags(*idir, kImmutable, ~0u));
  ASSERT_TRUE(w->set_flags(*adir, kAppend, ~0u));
  // Immutable: nothing made (may_create(): inode_permission() EPERM, after
  // EEXIST), nothing removed or renamed (may_delete()).
  EXPECT_EQ(err_no(w->mknod_at(*idir, "new", kReg | 0644)), EPERM);
  EXPECT_EQ(err_no(w->mknod_at(*idir, "in", kReg | 0644)), EEXIST);
  EXPECT_EQ(err_no(w->mknod_at(*idir, "d2", kDir | 0755)), EPERM);
  EXPECT_EQ(err_no(w->symlink_at(*idir, "s", "x")), EPERM);
  EXPECT_EQ(err_no(w->unlink_at(*idir, "in")), EPERM);
  EXPECT_EQ(err_no(w->unlink_at(*idir, "missing")), ENOENT);
  EXPECT_EQ(err_no(w->rmdir_at(*idir, "sub")), EPERM);
  EXPECT_EQ(err_no(w->rename_at(*idir, "in", *idir, "in2")), EPERM);
  EXPECT_EQ(err_no(w->rename_at(*idir, "in", root, "out")), EPERM);
  EXPECT_EQ(err_no(w->rename_at(root, "f", *idir, "f")), EPERM);
  EXPECT_EQ(err_no(w->rename_at(root, "f", *idir, "in")), EPERM);
  EXPECT_EQ(err_no(w->link_at(*f, *idir, "l")), EPERM);
  EXPECT_EQ(err_no(w->rmdir_at(root, "idir")), EPERM) << "the directory itself (may_delete() of the victim)";
  EXPECT_EQ(err_no(w->create("/idir/new")), EPERM);
  EXPECT_EQ(err_no(w->open("/idir/new", open_flag::wronly | open_flag::creat)), EPERM);
  // What is in it is not immutable.
  auto in = w->lookup("/idir/in");
  ASSERT_TRUE(in);
  EXPECT_TRUE(w->write(*in, 0, bytes("x")));
  // Append-only: names are made, never removed (may_delete(): EPERM).
  EXPECT_TRUE(w->mknod_at(*adir, "new", kReg | 0644));
  EXPECT_TRUE(w->mknod_at(*adir, "d2", kDir | 0755));
  EXPECT_EQ(err_no(w->unlink_at(*adir, "in")), EPERM);
  EXPECT_EQ(err_no(w->rmdir_at(*adir, "sub")), EPERM);
  EXPECT_EQ(err_no(w->rename_at(*adir, "in", *adir, "in2")), EPERM);
  EXPECT_EQ(err_no(w->rename_at(*adir, "in", root, "out")), EPERM);
  EXPECT_TRUE(w->rename_at(root, "f", *adir, "f")) << "onto a free name: may_create()";
  EXPECT_EQ(err_no(w->rename_at(root, "g", *adir, "in")), EPERM) << "over an entry: may_delete()";
  EXPECT_TRUE(w->link_at(*g, *adir, "gl"));
  EXPECT_EQ(err_no(w->unlink("/adir/gl")), EPERM);
  EXPECT_EQ(err_no(w->rmdir_at(root, "adir")), EPERM);
  ASSERT_TRUE(w->set_flags(*idir, 0, ~0u));
  ASSERT_TRUE(w->set_flags(*adir, 0, ~0u));
  EXPECT_TRUE(w->unlink_at(*idir, "in"));
  EXPECT_TRUE(w->unlink_at(*adir, "in"));
  ASSERT_TRUE(w->unmount());
  check_clean(*dev, "immutable and append-only directories");
}

TEST(WriterFlags, SyncFlagWritesSynchronously) {
  auto dev = our_mkfs(192ull << 20, kRichFeatures);
  ASSERT_TRUE(dev);
  auto w = mount_fixed_time(*dev);
  ASSERT_TRUE(w);
  auto plain = w->create("/plain");
  auto s = w->create("/s");
  ASSERT_TRUE(plain && s);
  ASSERT_TRUE(w->sync());
  ASSERT_TRUE(w->set_flags(*s, kSync, ~0u));
  ASSERT_TRUE(w->sync());
  // A buffered write stays in the page cache; on a F2FS_SYNC_FL file
  // generic_write_sync() writes it and its node (fdatasync()).
  const std::uint64_t data0 = w->stats().data_blocks_written;
  ASSERT_TRUE(w->write(*plain, 0, bytes(std::string(4096, 'p'))));
  EXPECT_EQ(w->stats().data_blocks_written, data0);
  ASSERT_TRUE(w->write(*s, 0, bytes(std::string(4096, 's'))));
  EXPECT_GT(w->stats().data_blocks_written, data0);
  ASSERT_TRUE(w->unmount());
  check_clean(*dev, "sync flag");
}

TEST(WriterFlags, DirsyncCheckpointsNamespaceChanges) {
  auto dev = our_mkfs(192ull << 20, kRichFeatures);
  ASSERT_TRUE(dev);
  auto w = mount_fixed_time(*dev);
  ASSERT_TRUE(w);
  const nid_t root = *w->lookup("/");
  auto plain = w->mkdir("/plain");
  auto ds = w->mkdir("/ds");
  auto ss = w->mkdir("/ss");
  ASSERT_TRUE(plain && ds && ss);
  ASSERT_TRUE(w->set_flags(*ds, kDirsync, ~0u));
  ASSERT_TRUE(w->set_flags(*ss, kSync, ~0u));
  auto cps = [&] { return w->stats().checkpoints; };
  std::uint64_t c = cps();
  // Not IS_DIRSYNC(): no checkpoint.
  ASSERT_TRUE(w->mknod_at(*plain, "f", kReg | 0644));
  ASSERT_TRUE(w->unlink_at(*plain, "f"));
  EXPECT_EQ(cps(), c);
  // f2fs_create(), f2fs_mkdir(), f2fs_symlink(), f2fs_link(),
  // f2fs_unlink(), f2fs_rename() end with f2fs_sync_fs() in such a
  // directory: one checkpoint each.
  ASSERT_TRUE(w->mknod_at(*ds, "f", kReg | 0644));
  EXPECT_EQ(cps(), ++c);
  ASSERT_TRUE(w->mknod_at(*ds, "d", kDir | 0755));
  EXPECT_EQ(cps(), ++c);
  ASSERT_TRUE(w->symlink_at(*ds, "l", "f"));
  EXPECT_EQ(cps(), ++c);
  ASSERT_TRUE(w->link_at(*w->lookup("/ds/f"), *ds, "f2"));
  EXPECT_EQ(cps(), ++c);
  ASSERT_TRUE(w->rename_at(*ds, "f2", *ds, "f3"));
  EXPECT_EQ(cps(), ++c);
  ASSERT_TRUE(w->unlink_at(*ds, "f3"));
  EXPECT_EQ(cps(), ++c);
  ASSERT_TRUE(w->rmdir_at(*ds, "d"));
  EXPECT_EQ(cps(), ++c);
  ASSERT_TRUE(w->rename_at(*ds, "f", root, "moved"));  // the old directory is IS_DIRSYNC()
  EXPECT_EQ(cps(), ++c);
  ASSERT_TRUE(w->create("/ss/g"));  // F2FS_SYNC_FL counts too
  EXPECT_EQ(cps(), ++c);
  auto d = w->lookup("/ds/d");
  EXPECT_FALSE(d);
  // A refused call takes none.
  EXPECT_EQ(err_no(w->mknod_at(*ds, "l", kReg | 0644)), EEXIST);
  EXPECT_EQ(cps(), c);
  ASSERT_TRUE(w->unmount());
  check_clean(*dev, "dirsync");
}

}  // namespace
