// The file-handle API (file_handle.hpp, writer/handle.cpp): open flags,
// access modes, positions, the open count, fsync's report, readdir's
// types, xattr names, errc names and errno_of(); and the case script
// handle_cases.txt against Linux 6.1's output for it
// (handle_cases.linux.out, made by handle_linux.sh in the oracle).
// Expected values come from Linux (its headers and that output) or the
// kernel's rules as the comments cite them.
#include <gtest/gtest.h>

#include <cerrno>
#include <fstream>
#include <sstream>

#if defined(__linux__) && (defined(__x86_64__) || defined(__i386__))
#include <fcntl.h>
#define HANDLE_TEST_LINUX_FCNTL 1
#endif

#include "support/assert_ok.hpp"
#include "writer/handle_cases.hpp"
#include "writer/writer_test_util.hpp"

namespace {

using namespace writertest;

std::unique_ptr<BlockDevice> fresh() {
  return our_mkfs(256ull << 20, feature::extra_attr | feature::inode_checksum | feature::flexible_inline_xattr |
                                    feature::sb_checksum | feature::inode_crtime);
}

std::unique_ptr<Writer> mount(BlockDevice& dev) {
  MountOptions mo;
  mo.fixed_time = 1700000100;
  mo.checkpoint_interval_s = 0;
  auto w = Writer::mount(dev, mo);
  EXPECT_TRUE(w) << (w ? "" : w.error().to_string());
  return w ? std::move(*w) : nullptr;
}

std::string read_text(const fs::path& p) {
  std::ifstream in(p, std::ios::binary);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

int err(const Status& s) { return s ? 0 : s.error().sys_errno; }
template <typename T>
int err(const Result<T>& r) {
  return r ? 0 : r.error().sys_errno;
}

#ifdef HANDLE_TEST_LINUX_FCNTL
// The flags are Linux's values (asm-generic/fcntl.h, x86's).
static_assert(open_flag::wronly == O_WRONLY && open_flag::rdwr == O_RDWR && open_flag::accmode == O_ACCMODE);
static_assert(open_flag::creat == O_CREAT && open_flag::excl == O_EXCL && open_flag::trunc == O_TRUNC);
static_assert(open_flag::append == O_APPEND && open_flag::nonblock == O_NONBLOCK && open_flag::dsync == O_DSYNC);
static_assert(open_flag::direct == O_DIRECT && open_flag::directory == O_DIRECTORY && open_flag::nofollow == O_NOFOLLOW);
static_assert(open_flag::noatime == O_NOATIME && open_flag::cloexec == O_CLOEXEC && open_flag::sync == O_SYNC);
static_assert(open_flag::path == O_PATH && open_flag::tmpfile == O_TMPFILE && open_flag::noctty == O_NOCTTY);
#endif

TEST(HandleApi, ReadWritePositionsAndModes) {
  auto dev = fresh();
  ASSERT_TRUE(dev);
  auto w = mount(*dev);
  ASSERT_TRUE(w);
  ASSERT_OK_AND_ASSIGN(auto h, w->open("/f", open_flag::rdwr | open_flag::creat | open_flag::excl, 0640));
  EXPECT_TRUE(h.is_open());
  ASSERT_OK(h.write(bytes("hello world")));
  EXPECT_EQ(h.position(), 11u);
  EXPECT_EQ(*h.seek(-5, Whence::end), 6u);
  std::vector<std::uint8_t> b(16);
  EXPECT_EQ(*h.read(b), 5u);
  EXPECT_EQ(std::string(b.begin(), b.begin() + 5), "world");
  EXPECT_EQ(*h.read(b), 0u);  // at the end
  EXPECT_EQ(*h.pwrite(bytes("W"), 6), 1u);
  EXPECT_EQ(h.position(), 11u);  // pwrite leaves the position
  EXPECT_EQ(*h.pread(b, 0), 11u);
  EXPECT_EQ(std::string(b.begin(), b.begin() + 11), "hello World");
  EXPECT_EQ(h.stat()->mode, 0100640);
  EXPECT_EQ(w->stat("/f")->size, 11u);
  EXPECT_EQ(err(h.seek(-1, Whence::set)), EINVAL);
  EXPECT_EQ(err(w->open("/f", open_flag::wronly | open_flag::creat | open_flag::excl)), EEXIST);
  ASSERT_OK(h.close());
  EXPECT_EQ(err(h.close()), EBADF);
  EXPECT_EQ(err(h.read(b)), EBADF);

  // A read-only handle: EBADF to write (vfs_write()), EINVAL to ftruncate
  // (do_sys_ftruncate()); fsync works in any mode.
  ASSERT_OK_AND_ASSIGN(auto r, w->open("/f", open_flag::rdonly));
  EXPECT_EQ(err(r.write(bytes("x"))), EBADF);
  EXPECT_EQ(err(r.pwrite(bytes("x"), 0)), EBADF);
  EXPECT_EQ(err(r.fallocate(0, 0, 4096)), EBADF);
  EXPECT_EQ(err(r.truncate(0)), EINVAL);
  EXPECT_OK(r.fsync());
  // A write-only one: EBADF to read (vfs_read()).
  ASSERT_OK_AND_ASSIGN(auto wo, w->open("/f", open_flag::wronly | open_flag::append));
  EXPECT_EQ(err(wo.read(b)), EBADF);
  EXPECT_EQ(*wo.pwrite(bytes("!"), 0), 1u);  // O_APPEND: at the end, as Linux
  EXPECT_EQ(*r.pread(b, 11), 1u);
  EXPECT_EQ(b[0], '!');
  // Moving a handle moves the open file; the moved-from one is closed.
  FileHandle moved = std::move(wo);
  EXPECT_FALSE(wo.is_open());  // NOLINT(bugprone-use-after-move): the moved-from state is the contract
  EXPECT_TRUE(moved.is_open());
  // O_TRUNC empties an existing file, also opened read-only (Linux does).
  ASSERT_OK(w->open("/f", open_flag::rdonly | open_flag::trunc));
  EXPECT_EQ(w->stat("/f")->size, 0u);
  // Directories: EISDIR to open for writing (may_open()), to read
  // (generic_read_dir()); ENOTDIR for O_DIRECTORY on a file.
  ASSERT_TRUE(w->mkdir("/d"));
  EXPECT_EQ(err(w->open("/d", open_flag::wronly)), EISDIR);
  EXPECT_EQ(err(w->open("/d", open_flag::rdonly | open_flag::trunc)), EISDIR);
  EXPECT_EQ(err(w->open("/f", open_flag::rdonly | open_flag::directory)), ENOTDIR);
  ASSERT_OK_AND_ASSIGN(auto d, w->open("/d", open_flag::rdonly | open_flag::directory));
  EXPECT_EQ(err(d.read(b)), EISDIR);
  EXPECT_EQ(err(w->open("/d/none", open_flag::rdonly)), ENOENT);
  EXPECT_EQ(err(w->open("/f/x", open_flag::rdonly)), ENOTDIR);
  EXPECT_EQ(err(w->open("/" + std::string(256, 'n'), open_flag::rdonly)), ENAMETOOLONG);
  EXPECT_EQ(err(w->open("/d", open_flag::rdonly | open_flag::creat | open_flag::directory)), EINVAL);
  EXPECT_EQ(err(w->open("/d", open_flag::path)), EOPNOTSUPP);
  // O_DIRECT: whole 4 KiB blocks (EINVAL otherwise, as f2fs's direct I/O).
  ASSERT_OK_AND_ASSIGN(auto dio, w->open("/dio", open_flag::rdwr | open_flag::creat | open_flag::direct));
  std::vector<std::uint8_t> blk(4096, 0x5a);
  EXPECT_EQ(*dio.pwrite(blk, 4096), 4096u);
  EXPECT_EQ(err(dio.pwrite(std::span<const std::uint8_t>(blk.data(), 100), 0)), EINVAL);
  EXPECT_EQ(err(dio.pwrite(blk, 100)), EINVAL);
  EXPECT_EQ(w->stat("/dio")->size, 8192u);
  // setattr by path and by handle (chmod, chown).
  SetAttr sa;
  sa.mode = 0600;
  sa.uid = 1000;
  ASSERT_OK(w->setattr("/dio", sa));
  EXPECT_EQ(dio.stat()->mode, 0100600);
  EXPECT_EQ(dio.stat()->uid, 1000u);
  EXPECT_EQ(err(w->setattr("/none", sa)), ENOENT);
  ASSERT_OK(w->unmount());
  // After unmount every call fails, and closing does nothing.
  EXPECT_EQ(err(r.read(b)), EINVAL);
  EXPECT_OK(r.close());
}

TEST(HandleApi, SymlinksFollowedAsLinux) {
  auto dev = fresh();
  ASSERT_TRUE(dev);
  auto w = mount(*dev);
  ASSERT_TRUE(w);
  ASSERT_TRUE(w->mkdir("/d"));
  ASSERT_OK(w->open("/d/f", open_flag::wronly | open_flag::creat));
  ASSERT_TRUE(w->symlink("d", "/ld"));       // relative, from "/"
  ASSERT_TRUE(w->symlink("/d/f", "/abs"));   // absolute: from the volume's root
  ASSERT_TRUE(w->symlink("../ld/f", "/d/up"));
  ASSERT_TRUE(w->symlink("b", "/a"));
  ASSERT_TRUE(w->symlink("a", "/b"));
  const nid_t f = *w->lookup("/d/f");
  EXPECT_EQ(w->stat("/ld/f")->ino, f);
  EXPECT_EQ(w->stat("/abs")->ino, f);
  EXPECT_EQ(w->stat("/d/up")->ino, f);
  EXPECT_EQ(w->stat("/abs", false)->mode & 0xF000, 0xA000);
  EXPECT_EQ(err(w->stat("/a")), ELOOP);  // a -> b -> a: 40 links, then ELOOP
  EXPECT_EQ(err(w->open("/abs", open_flag::rdonly | open_flag::nofollow)), ELOOP);
  ASSERT_OK(w->open("/ld/", open_flag::rdonly | open_flag::nofollow));  // a trailing '/' follows
  // O_CREAT through a dangling symlink creates its target (Linux does).
  ASSERT_TRUE(w->symlink("d/new", "/dangling"));
  ASSERT_OK(w->open("/dangling", open_flag::wronly | open_flag::creat, 0600));
  EXPECT_EQ(w->stat("/d/new")->mode, 0100600);
  EXPECT_EQ(err(w->open("/dangling", open_flag::wronly | open_flag::creat | open_flag::excl)), EEXIST);
  ASSERT_OK(w->unmount());
  check_clean(*dev, "symlinks");
}

TEST(HandleApi, CloseReleasesTheOpenCount) {
  auto dev = fresh();
  ASSERT_TRUE(dev);
  {
    auto w = mount(*dev);
    ASSERT_TRUE(w);
    ASSERT_OK_AND_ASSIGN(auto h, w->open("/o", open_flag::rdwr | open_flag::creat));
    ASSERT_OK(h.write(bytes("still here")));
    const nid_t ino = h.ino();
    ASSERT_OK(w->unlink("/o"));
    // Unlinked but open: readable, writable, link count 0 (f2fs_drop_nlink()).
    std::vector<std::uint8_t> b(10);
    EXPECT_EQ(*h.pread(b, 0), 10u);
    EXPECT_EQ(h.stat()->links, 0u);
    nid_t ino2 = 0;
    {
      ASSERT_OK_AND_ASSIGN(auto h2, w->open("/p", open_flag::wronly | open_flag::creat));
      ASSERT_OK(w->unlink("/p"));
      ino2 = h2.ino();
      ASSERT_TRUE(w->stat(ino2));
    }
    // h2's destructor closed it: the inode went (f2fs_evict_inode()).
    EXPECT_EQ(w->stat(ino2).error().code, Errc::not_found);
    ASSERT_OK(h.close());
    EXPECT_EQ(w->stat(ino).error().code, Errc::not_found);  // freed at the last close
    ASSERT_OK(w->unmount());
  }
  check_clean(*dev, "closed");
}

TEST(HandleApi, OrphanFreedAtMountAfterPowerCut) {
  auto dev = fresh();
  ASSERT_TRUE(dev);
  nid_t ino = 0;
  {
    auto w = mount(*dev);
    ASSERT_TRUE(w);
    ASSERT_OK_AND_ASSIGN(auto h, w->open("/q", open_flag::rdwr | open_flag::creat));
    ASSERT_OK(h.write(bytes("q")));
    ino = h.ino();
    ASSERT_OK(w->unlink("/q"));
    ASSERT_OK(w->sync());  // the checkpoint lists the orphan
    // Leaving the scope closes the handle (in memory: nothing is written
    // without a checkpoint), then drops the writer without unmount: a
    // power cut with the unlinked file open.
  }
  auto w = mount(*dev);
  ASSERT_TRUE(w);
  EXPECT_EQ(w->stat(ino).error().code, Errc::not_found);
  ASSERT_OK(w->unmount());
  check_clean(*dev, "orphan after a cut");
}

TEST(HandleApi, FsyncReportsItsCheckpoint) {
  auto dev = fresh();
  ASSERT_TRUE(dev);
  auto w = mount(*dev);
  ASSERT_TRUE(w);
  ASSERT_OK(w->sync());
  ASSERT_OK_AND_ASSIGN(auto h, w->open("/one", open_flag::rdwr | open_flag::creat));
  ASSERT_OK(h.write(bytes("data")));
  // One link, a checkpointed parent: roll-forward recovers a node chain
  // (need_do_checkpoint() finds no reason).
  std::uint64_t cps = w->stats().checkpoints;
  ASSERT_OK_AND_ASSIGN(auto r1, h.fsync());
  EXPECT_FALSE(r1.checkpoint);
  EXPECT_EQ(w->stats().checkpoints, cps);
  // Two links: CP_HARDLINK (need_do_checkpoint(): i_nlink != 1).
  ASSERT_OK(w->link("/one", "/two"));
  ASSERT_OK(h.write(bytes("more")));
  cps = w->stats().checkpoints;
  ASSERT_OK_AND_ASSIGN(auto r2, h.fdatasync());
  EXPECT_TRUE(r2.checkpoint);
  EXPECT_EQ(w->stats().checkpoints, cps + 1);
  ASSERT_OK(w->unmount());
}

TEST(HandleApi, ReaddirNamesInodesTypes) {
  auto dev = fresh();
  ASSERT_TRUE(dev);
  auto w = mount(*dev);
  ASSERT_TRUE(w);
  ASSERT_TRUE(w->mkdir("/d"));
  ASSERT_TRUE(w->mkdir("/d/sub"));
  ASSERT_TRUE(w->create("/d/reg"));
  ASSERT_TRUE(w->symlink("reg", "/d/lnk"));
  ASSERT_TRUE(w->mknod("/d/fifo", 0x1000 | 0644));
  ASSERT_TRUE(w->mknod("/d/chr", 0x2000 | 0600, 0x103));
  ASSERT_TRUE(w->mknod("/d/blk", 0x6000 | 0600, 0x803));
  ASSERT_TRUE(w->mknod("/d/sock", 0xC000 | 0600));
  ASSERT_OK_AND_ASSIGN(auto es, w->readdir("/d"));
  ASSERT_GE(es.size(), 2u);
  EXPECT_EQ(es[0], (Dirent{".", *w->lookup("/d"), dirent_type::dir}));
  EXPECT_EQ(es[1], (Dirent{"..", *w->lookup("/"), dirent_type::dir}));
  // DT_* values of include/linux/fs_types.h (DT_REG 8, DT_LNK 10, ...).
  std::map<std::string, std::uint8_t> want = {{"sub", 4}, {"reg", 8}, {"lnk", 10}, {"fifo", 1}, {"chr", 2}, {"blk", 6}, {"sock", 12}};
  std::map<std::string, std::uint8_t> got;
  for (std::size_t i = 2; i < es.size(); ++i) {
    got[es[i].name] = es[i].type;
    EXPECT_EQ(es[i].ino, *w->lookup("/d/" + es[i].name)) << es[i].name;
  }
  EXPECT_EQ(got, want);
  auto root = w->readdir("/");
  ASSERT_OK(root);
  EXPECT_EQ((*root)[1].ino, (*root)[0].ino);  // ".." of the root is the root
  ASSERT_OK_AND_ASSIGN(auto dh, w->open("/d", open_flag::rdonly));
  EXPECT_EQ(*dh.readdir(), es);
  EXPECT_EQ(err(w->readdir("/d/reg")), ENOTDIR);
  ASSERT_OK(w->unmount());
}

TEST(HandleApi, XattrNamesMapToF2fsIndexes) {
  // F2FS_XATTR_INDEX_* in fs/f2fs/xattr.h; handlers as f2fs_xattr_handlers[].
  EXPECT_EQ(parse_xattr_name("user.k")->index, 1);
  EXPECT_EQ(parse_xattr_name("user.k")->name, "k");
  EXPECT_EQ(parse_xattr_name("system.posix_acl_access")->index, 2);
  EXPECT_EQ(parse_xattr_name("system.posix_acl_access")->name, "");
  EXPECT_EQ(parse_xattr_name("system.posix_acl_default")->index, 3);
  EXPECT_EQ(parse_xattr_name("trusted.k")->index, 4);
  EXPECT_EQ(parse_xattr_name("security.selinux")->index, 6);
  EXPECT_EQ(parse_xattr_name("security.selinux")->name, "selinux");
  // xattr_resolve_name(): no handler EOPNOTSUPP, a bare prefix EINVAL;
  // setxattr(2)'s copy of the name: ERANGE.
  EXPECT_EQ(err(parse_xattr_name("foo.k")), EOPNOTSUPP);
  EXPECT_EQ(parse_xattr_name("system.advise")->index, 7);  // f2fs_xattr_advise_handler: i_advise
  EXPECT_EQ(err(parse_xattr_name("system.advisex")), EOPNOTSUPP);
  EXPECT_EQ(err(parse_xattr_name("system.posix_acl_accessX")), EOPNOTSUPP);
  EXPECT_EQ(err(parse_xattr_name("user.")), EINVAL);
  EXPECT_EQ(err(parse_xattr_name("")), ERANGE);
  EXPECT_EQ(err(parse_xattr_name("user." + std::string(251, 'x'))), ERANGE);
  EXPECT_OK(parse_xattr_name("user." + std::string(250, 'x')));
  EXPECT_EQ(xattr_full_name(1, "k"), "user.k");
  EXPECT_EQ(xattr_full_name(3, ""), "system.posix_acl_default");
  EXPECT_EQ(xattr_full_name(9, "c"), "");  // the encryption context is no xattr to Linux

  auto dev = fresh();
  ASSERT_TRUE(dev);
  auto w = mount(*dev);
  ASSERT_TRUE(w);
  ASSERT_TRUE(w->create("/f"));
  ASSERT_OK(w->setxattr("/f", "user.k", bytes("v")));
  // Stored under index 1, name "k", as f2fs_setxattr() keeps it.
  const nid_t f = *w->lookup("/f");
  EXPECT_EQ(*w->getxattr(f, 1, "k"), (std::vector<std::uint8_t>{'v'}));
  EXPECT_EQ(err(w->setxattr("/f", "user.k", bytes("w"), XattrSet::create)), EEXIST);
  EXPECT_EQ(err(w->setxattr("/f", "user.n", bytes("w"), XattrSet::replace)), ENODATA);
  EXPECT_EQ(err(w->getxattr("/f", "user.n")), ENODATA);
  EXPECT_EQ(err(w->removexattr("/f", "user.n")), ENODATA);
  ASSERT_OK(w->setxattr("/f", "trusted.t", bytes("t")));
  EXPECT_EQ(*w->listxattr("/f"), (std::vector<std::string>{"user.k", "trusted.t"}));
  ASSERT_OK(w->unmount());
  check_clean(*dev, "xattrs");
}

TEST(HandleApi, ErrcNamesAreIdentifiersAndMapToErrno) {
  for (int c = 0; c <= static_cast<int>(Errc::cancelled); ++c) {
    const std::string_view n = errc_name(static_cast<Errc>(c));
    EXPECT_FALSE(n.empty());
    for (char ch : n) EXPECT_TRUE((ch >= 'a' && ch <= 'z') || ch == '_') << n;
  }
  EXPECT_EQ(errc_name(Errc::not_found), "not_found");
  EXPECT_EQ(errc_text(Errc::not_found), "not found");
  EXPECT_EQ(Error({Errc::not_found, 0, Error::kNoOffset, "x"}).to_string(), "not found: x");
  EXPECT_EQ(errno_of(Error{Errc::not_found, 0, Error::kNoOffset, ""}), ENOENT);
  EXPECT_EQ(errno_of(Error{Errc::exists, ENOTEMPTY, Error::kNoOffset, ""}), ENOTEMPTY);  // sys_errno wins
  EXPECT_EQ(errno_of(Error{Errc::read_only, 0, Error::kNoOffset, ""}), EROFS);
  EXPECT_EQ(errno_of(Error{Errc::ok, 0, Error::kNoOffset, ""}), 0);
}

// The case script through our API equals Linux 6.1's output for it (made in
// the oracle by handle_linux.sh and kept in the tree).
TEST(HandleCases, SameResultsAsLinux) {
  const fs::path dir = fs::path(F2FSCORE_SOURCE_DIR) / "tests" / "writer";
  const std::string script = read_text(dir / "handle_cases.txt");
  const std::string linux_out = read_text(dir / "handle_cases.linux.out");
  ASSERT_FALSE(script.empty());
  ASSERT_FALSE(linux_out.empty()) << "handle_cases.linux.out missing: run handle_linux.sh with HANDLE_UPDATE_GOLDEN=1";
  auto dev = fresh();
  ASSERT_TRUE(dev);
  auto w = mount(*dev);
  ASSERT_TRUE(w);
  const std::string ours = handlecases::run(*w, script);
  ASSERT_OK(w->unmount());
  std::istringstream a(linux_out), b(ours);
  std::string la, lb;
  int diffs = 0, lines = 0;
  while (std::getline(a, la)) {
    if (!std::getline(b, lb)) lb = "(missing)";
    ++lines;
    if (la != lb && ++diffs <= 40) ADD_FAILURE() << "Linux: " << la << "\nours:  " << lb;
  }
  EXPECT_EQ(diffs, 0) << "of " << lines << " lines";
  EXPECT_GE(lines, 300);
  check_clean(*dev, "the case script");
}

// Run by handle_linux.sh: the script on a fresh image, which is saved first
// (HANDLE_FRESH) for Linux to run the same script on; our output to
// HANDLE_OUT, the image after unmount to HANDLE_FINAL.
TEST(HandleOracle, DISABLED_Run) {
  const char* fresh_path = std::getenv("HANDLE_FRESH");
  const char* out_path = std::getenv("HANDLE_OUT");
  const char* final_path = std::getenv("HANDLE_FINAL");
  ASSERT_TRUE(fresh_path && out_path && final_path) << "set HANDLE_FRESH, HANDLE_OUT, HANDLE_FINAL";
  auto dev = fresh();
  ASSERT_TRUE(dev);
  ASSERT_TRUE(save(*dev, fresh_path));
  auto w = mount(*dev);
  ASSERT_TRUE(w);
  std::string cps;
  const std::string ours =
      handlecases::run(*w, read_text(fs::path(F2FSCORE_SOURCE_DIR) / "tests" / "writer" / "handle_cases.txt"), &cps);
  ASSERT_OK(w->unmount());
  std::ofstream(out_path, std::ios::binary) << ours;
  std::ofstream(std::string(out_path) + ".checkpoints", std::ios::binary) << cps;
  ASSERT_TRUE(save(*dev, final_path));
}

}  // namespace
