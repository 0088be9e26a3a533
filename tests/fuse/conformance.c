/* conformance.c: one fixed sequence of system calls and error cases in
 * directory DIR, one line per case: its number, name, return value, errno
 * name and, for stat cases, the fields a file system decides (type and
 * permission bits, link count, owner, size of non-directories). Run on an
 * f2fscore-fuse mount and on Linux's f2fs (the oracle); the outputs must be
 * equal. Times, inode numbers, st_blocks and directory sizes are left out
 * (docs/fuse.md says why). Cases under "as uid 1000" run in a child that
 * dropped root (permission checks).
 * usage: conformance DIR */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <sys/types.h>
#include <sys/wait.h>
#include <sys/xattr.h>
#include <unistd.h>
#include <dirent.h>
#include <stdint.h>
#include <linux/fs.h>
#include <sys/syscall.h>
#include <sys/time.h>
#include <grp.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/uio.h>
#include <sys/file.h>
#include <sys/statfs.h>
#include <linux/f2fs.h>

static int n_case;

static const char *ename(int e) {
  switch (e) {
#define E(x) case x: return #x;
    E(EPERM) E(ENOENT) E(EIO) E(EBADF) E(EACCES) E(EEXIST) E(EXDEV) E(ENOTDIR) E(EISDIR) E(EINVAL) E(EFBIG)
    E(ENOSPC) E(EROFS) E(EMLINK) E(ERANGE) E(ENAMETOOLONG) E(ENOTEMPTY) E(ELOOP) E(ENODATA) E(EOPNOTSUPP)
    E(ENXIO) E(EBUSY) E(E2BIG) E(ETXTBSY) E(EFAULT) E(ENOSYS) E(ENOTTY) E(EAGAIN)
#undef E
    case 0: return "0";
    default: return "E?";
  }
}

static void report(const char *name, long r, int e) {
  printf("%03d %s: %ld %s\n", ++n_case, name, r, r < 0 ? ename(e) : "0");
}

#define T(name, expr)                         \
  do {                                        \
    errno = 0;                                \
    long r_ = (long)(expr);                   \
    report(name, r_ < 0 ? -1 : r_, errno);    \
  } while (0)

/* A call whose success value is an fd: 0 on success (closed). */
#define TFD(name, expr)                       \
  do {                                        \
    errno = 0;                                \
    int fd_ = (expr);                         \
    int e_ = errno;                           \
    if (fd_ >= 0) close(fd_);                 \
    report(name, fd_ < 0 ? -1 : 0, e_);       \
  } while (0)

static void ST(const char *name, const char *path) {
  struct stat st;
  errno = 0;
  int r = lstat(path, &st);
  if (r < 0) {
    report(name, -1, errno);
    return;
  }
  char b[256];
  snprintf(b, sizeof b, "%s [mode %o nlink %lu uid %u gid %u size %lld rdev %u:%u]", name, st.st_mode,
           (unsigned long)st.st_nlink, st.st_uid, st.st_gid, S_ISDIR(st.st_mode) ? -1LL : (long long)st.st_size,
           major(st.st_rdev), minor(st.st_rdev));
  report(b, 0, 0);
}

static void put(const char *path, const char *data) {
  int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0644);
  if (fd >= 0) {
    if (write(fd, data, strlen(data)) < 0) perror("write");
    close(fd);
  }
}

static int renameat2_(const char *a, const char *b, unsigned flags) {
  return (int)syscall(SYS_renameat2, AT_FDCWD, a, AT_FDCWD, b, flags);
}

/* The objects each operation is tried on. */
static const char *objs[] = {"f", "d", "l", "p", "missing", "f/x", "dl", "e"};
enum { NOBJ = sizeof objs / sizeof objs[0] };

static void make_objects(void) {
  put("f", "file data");
  mkdir("d", 0755);
  put("d/inner", "x");
  symlink("f", "l");
  mkfifo("p", 0640);
  symlink("d", "dl");
  mkdir("e", 0700);
}

static void clear_objects(void) {
  unlink("f"), unlink("d/inner"), rmdir("d"), unlink("l"), unlink("p"), unlink("dl"), rmdir("e");
}

static void per_object(void) {
  char name[128];
  for (int i = 0; i < NOBJ; ++i) {
    const char *o = objs[i];
#define N(op) (snprintf(name, sizeof name, "%s %s", op, o), name)
    make_objects();
    ST(N("lstat"), o);
    TFD(N("open O_RDONLY"), open(o, O_RDONLY | O_NONBLOCK));
    TFD(N("open O_WRONLY"), open(o, O_WRONLY | O_NONBLOCK));
    TFD(N("open O_RDWR"), open(o, O_RDWR | O_NONBLOCK));
    TFD(N("open O_CREAT|O_EXCL"), open(o, O_WRONLY | O_CREAT | O_EXCL, 0600));
    clear_objects(), make_objects();
    TFD(N("open O_DIRECTORY"), open(o, O_RDONLY | O_DIRECTORY));
    TFD(N("open O_NOFOLLOW"), open(o, O_RDONLY | O_NOFOLLOW | O_NONBLOCK));
    T(N("access F_OK"), access(o, F_OK));
    T(N("access X_OK"), access(o, X_OK));
    T(N("truncate 3"), truncate(o, 3));
    ST(N("lstat after truncate"), o);
    T(N("chmod 0604"), chmod(o, 0604));
    ST(N("lstat after chmod"), o);
    T(N("chown 12:34"), chown(o, 12, 34));
    T(N("lchown 56:78"), lchown(o, 56, 78));
    ST(N("lstat after chown"), o);
    char buf[64];
    T(N("readlink"), readlink(o, buf, sizeof buf));
    T(N("mkdir over"), mkdir(o, 0755));
    T(N("symlink over"), symlink("t", o));
    T(N("mknod fifo over"), mknod(o, S_IFIFO | 0600, 0));
    T(N("link over"), link("f", o));
    T(N("link from"), link(o, "newlink"));
    ST("lstat newlink", "newlink");
    unlink("newlink");
    T(N("setxattr user.a"), setxattr(o, "user.a", "v", 1, 0));
    T(N("getxattr user.a"), getxattr(o, "user.a", buf, sizeof buf));
    T(N("lgetxattr user.a"), lgetxattr(o, "user.a", buf, sizeof buf));
    T(N("opendir"), ({ DIR *d_ = opendir(o); int r_ = d_ ? 0 : -1; if (d_) closedir(d_); r_; }));
    T(N("rmdir"), rmdir(o));
    clear_objects(), make_objects();
    T(N("unlink"), unlink(o));
    ST(N("lstat after unlink"), o);
    clear_objects(), make_objects();
    T(N("rename to n"), rename(o, "n"));
    ST("lstat n", "n");
    unlink("n"), rmdir("n");
    clear_objects();
#undef N
  }
}

/* rename(2) and renameat2(2) between every pair of kinds. */
static void rename_matrix(void) {
  static const char *kinds[] = {"file", "dir", "emptydir", "symlink", "none"};
  static const unsigned flags[] = {0, RENAME_NOREPLACE, RENAME_EXCHANGE};
  static const char *fname[] = {"rename", "noreplace", "exchange"};
  char name[160];
  for (int f = 0; f < 3; ++f)
    for (int s = 0; s < 4; ++s)
      for (int t = 0; t < 5; ++t) {
        const char *mk[2] = {kinds[s], kinds[t]};
        const char *nm[2] = {"src", "dst"};
        for (int k = 0; k < 2; ++k) {
          if (!strcmp(mk[k], "file")) put(nm[k], nm[k]);
          else if (!strcmp(mk[k], "dir")) { mkdir(nm[k], 0755); char p[32]; snprintf(p, sizeof p, "%s/c", nm[k]); put(p, "c"); }
          else if (!strcmp(mk[k], "emptydir")) mkdir(nm[k], 0755);
          else if (!strcmp(mk[k], "symlink")) symlink("target", nm[k]);
        }
        snprintf(name, sizeof name, "%s %s -> %s", fname[f], kinds[s], kinds[t]);
        T(name, renameat2_("src", "dst", flags[f]));
        snprintf(name, sizeof name, "%s %s -> %s: src", fname[f], kinds[s], kinds[t]);
        ST(name, "src");
        snprintf(name, sizeof name, "%s %s -> %s: dst", fname[f], kinds[s], kinds[t]);
        ST(name, "dst");
        unlink("src/c"), unlink("dst/c"), unlink("src"), unlink("dst"), rmdir("src"), rmdir("dst");
      }
  /* Directories: into itself, over a non-empty one, parents' link counts. */
  mkdir("a", 0755), mkdir("a/b", 0755), mkdir("c", 0755);
  T("rename a -> a/b/x (into itself)", rename("a", "a/b/x"));
  T("rename a/b -> c/b (other parent)", rename("a/b", "c/b"));
  ST("lstat a after move", "a");
  ST("lstat c after move", "c");
  T("exchange a <-> c/b", renameat2_("a", "c/b", RENAME_EXCHANGE));
  ST("lstat c after exchange", "c");
  T("rename . -> z", rename(".", "z"));
  T("rename c/b/.. -> z", rename("c/b/..", "z"));
  put("h1", "h"), link("h1", "h2");
  T("rename h1 -> h2 (same inode)", rename("h1", "h2"));
  ST("lstat h1", "h1");
  ST("lstat h2", "h2");
  unlink("h1"), unlink("h2");
  system("rm -rf a c");
}

static void names_and_links(void) {
  char longname[300];
  memset(longname, 'n', 255), longname[255] = 0;
  TFD("create 255-byte name", open(longname, O_WRONLY | O_CREAT, 0644));
  ST("lstat 255-byte name", longname);
  T("unlink 255-byte name", unlink(longname));
  memset(longname, 'n', 256), longname[256] = 0;
  TFD("create 256-byte name", open(longname, O_WRONLY | O_CREAT, 0644));
  T("mkdir 256-byte name", mkdir(longname, 0755));
  T("symlink 256-byte name", symlink("x", longname));
  char target[5000];
  memset(target, 't', 4095), target[4095] = 0;
  T("symlink 4095-byte target", symlink(target, "longt"));
  T("readlink 4095-byte target", readlink("longt", target, sizeof target));
  unlink("longt");
  memset(target, 't', 4096), target[4096] = 0;
  T("symlink 4096-byte target", symlink(target, "longt"));
  T("symlink empty target", symlink("", "emptyt"));
  T("mkdir d1", mkdir("d1", 0750));
  ST("lstat d1", "d1");
  T("mkdir d1/s1", mkdir("d1/s1", 0750));
  T("mkdir d1/s2", mkdir("d1/s2", 0750));
  ST("lstat d1 with two subdirs", "d1");
  T("rmdir d1 (not empty)", rmdir("d1"));
  T("rmdir d1/s1", rmdir("d1/s1"));
  ST("lstat d1 with one subdir", "d1");
  T("rmdir d1/s2/.", rmdir("d1/s2/."));
  T("rmdir d1/s2/..", rmdir("d1/s2/.."));
  T("unlink d1", unlink("d1"));
  T("link d1 d2", link("d1", "d2"));
  put("lf", "x");
  for (int i = 0; i < 5; ++i) {
    char n[32];
    snprintf(n, sizeof n, "lf.%d", i);
    T("link lf", link("lf", n));
  }
  ST("lstat lf with 6 names", "lf");
  T("unlink lf", unlink("lf"));
  ST("lstat lf.0 with 5 names", "lf.0");
  system("rm -rf d1 lf.*");
  T("mknod chr 1:3", mknod("chr", S_IFCHR | 0600, makedev(1, 3)));
  ST("lstat chr", "chr");
  T("mknod blk 300:70000", mknod("blk", S_IFBLK | 0600, makedev(300, 70000)));
  ST("lstat blk", "blk");
  T("mknod sock", mknod("sock", S_IFSOCK | 0600, 0));
  ST("lstat sock", "sock");
  unlink("chr"), unlink("blk"), unlink("sock");
  /* setgid directories. */
  mkdir("sg", 0755);
  chown("sg", 0, 77);
  chmod("sg", 02775);
  put("sg/f", "x");
  mkdir("sg/d", 0755);
  ST("lstat sg/f (setgid parent)", "sg/f");
  ST("lstat sg/d (setgid parent)", "sg/d");
  system("rm -rf sg");
}

static void data_ops(void) {
  char buf[8192];
  int fd = open("data", O_RDWR | O_CREAT | O_TRUNC, 0644);
  T("pwrite 5 at 0", pwrite(fd, "hello", 5, 0));
  T("pwrite 5 at 10000", pwrite(fd, "world", 5, 10000));
  ST("lstat data sparse", "data");
  T("pread 10 at 9995", pread(fd, buf, 10, 9995));
  T("pread at 20000 (eof)", pread(fd, buf, 10, 20000));
  T("lseek SEEK_DATA 0", lseek(fd, 0, SEEK_DATA));
  T("lseek SEEK_HOLE 0", lseek(fd, 0, SEEK_HOLE));
  T("lseek SEEK_DATA 5000", lseek(fd, 5000, SEEK_DATA));
  T("lseek SEEK_HOLE 9000", lseek(fd, 9000, SEEK_HOLE));
  T("lseek SEEK_DATA 10005 (eof)", lseek(fd, 10005, SEEK_DATA));
  T("lseek SEEK_END", lseek(fd, 0, SEEK_END));
  T("fsync", fsync(fd));
  T("fdatasync", fdatasync(fd));
  T("ftruncate 100", ftruncate(fd, 100));
  ST("lstat data 100", "data");
  T("fallocate 0..8192", fallocate(fd, 0, 0, 8192));
  ST("lstat after fallocate", "data");
  T("fallocate keep_size 8192..16384", fallocate(fd, FALLOC_FL_KEEP_SIZE, 8192, 8192));
  ST("lstat after keep_size", "data");
  T("fallocate punch without keep_size", fallocate(fd, FALLOC_FL_PUNCH_HOLE, 0, 4096));
  T("fallocate punch 0..4096", fallocate(fd, FALLOC_FL_PUNCH_HOLE | FALLOC_FL_KEEP_SIZE, 0, 4096));
  T("pread after punch", pread(fd, buf, 10, 0));
  T("fallocate zero_range", fallocate(fd, FALLOC_FL_ZERO_RANGE, 100, 50000));
  ST("lstat after zero_range", "data");
  T("fallocate len 0", fallocate(fd, 0, 0, 0));
  T("fallocate past max", fallocate(fd, 0, (off_t)1 << 50, 4096));
  T("ftruncate -1", ftruncate(fd, -1));
  close(fd);
  fd = open("data", O_WRONLY | O_APPEND);
  T("append write", write(fd, "abc", 3));
  close(fd);
  ST("lstat after append", "data");
  fd = open("data", O_WRONLY | O_TRUNC);
  close(fd);
  ST("lstat after O_TRUNC", "data");
  put("data", "refill");
  TFD("open O_RDONLY|O_TRUNC", open("data", O_RDONLY | O_TRUNC));
  ST("lstat after O_RDONLY|O_TRUNC", "data");
  put("data", "refill");
  T("read after O_RDWR|O_TRUNC", ({ int d_ = open("data", O_RDWR | O_TRUNC); long r_ = d_ < 0 ? -1 : read(d_, buf, 10); int e_ = errno; if (d_ >= 0) close(d_); errno = e_; r_; }));
  T("read of a directory", ({ int d_ = open(".", O_RDONLY); long r_ = read(d_, buf, 10); int e_ = errno; close(d_); errno = e_; r_; }));
  T("write to O_RDONLY fd", ({ int d_ = open("data", O_RDONLY); long r_ = write(d_, "x", 1); int e_ = errno; close(d_); errno = e_; r_; }));
  /* Unlinked while open: still readable and writable, gone at close. */
  put("orphan", "still here");
  fd = open("orphan", O_RDWR);
  T("unlink open file", unlink("orphan"));
  T("read unlinked open file", pread(fd, buf, 100, 0));
  T("write unlinked open file", pwrite(fd, "more", 4, 10));
  T("fstat unlinked open file nlink", ({ struct stat s_; fstat(fd, &s_); (long)s_.st_nlink; }));
  T("fstat unlinked open file size", ({ struct stat s_; fstat(fd, &s_); (long)s_.st_size; }));
  close(fd);
  ST("lstat orphan after close", "orphan");
  /* xattrs */
  T("setxattr user.x", setxattr("data", "user.x", "1234", 4, 0));
  T("setxattr user.x CREATE", setxattr("data", "user.x", "5", 1, XATTR_CREATE));
  T("setxattr user.y REPLACE", setxattr("data", "user.y", "5", 1, XATTR_REPLACE));
  T("getxattr user.x", getxattr("data", "user.x", buf, sizeof buf));
  T("getxattr user.x size 0", getxattr("data", "user.x", NULL, 0));
  T("getxattr user.x size 2", getxattr("data", "user.x", buf, 2));
  T("getxattr user.nope", getxattr("data", "user.nope", buf, sizeof buf));
  T("listxattr", listxattr("data", buf, sizeof buf));
  T("listxattr size 0", listxattr("data", NULL, 0));
  T("listxattr size 1", listxattr("data", buf, 1));
  T("removexattr user.x", removexattr("data", "user.x"));
  T("removexattr user.x again", removexattr("data", "user.x"));
  T("setxattr bad prefix", setxattr("data", "bogus.x", "1", 1, 0));
  T("setxattr empty value", setxattr("data", "user.e", "", 0, 0));
  T("getxattr empty value", getxattr("data", "user.e", buf, sizeof buf));
  memset(buf, 'v', sizeof buf);
  T("setxattr 3000-byte value", setxattr("data", "user.big", buf, 3000, 0));
  T("setxattr 8000-byte value", setxattr("data", "user.huge", buf, 8000, 0));
  char xn[300];
  memset(xn, 'x', 260), memcpy(xn, "user.", 5), xn[260] = 0;
  T("setxattr 255-byte name", setxattr("data", xn, "1", 1, 0));
  T("setxattr trusted.t", setxattr("data", "trusted.t", "1", 1, 0));
  T("getxattr trusted.t", getxattr("data", "trusted.t", buf, sizeof buf));
  T("setxattr user on symlink", lsetxattr("l2", "user.x", "1", 1, 0));
  symlink("data", "l2");
  T("lsetxattr user on symlink", lsetxattr("l2", "user.x", "1", 1, 0));
  unlink("l2");
  /* times */
  struct timespec tv[2] = {{1000000000, 123456789}, {1100000000, 987654321}};
  T("utimensat", utimensat(AT_FDCWD, "data", tv, 0));
  T("utimensat mtime", ({ struct stat s_; stat("data", &s_); (long)(s_.st_mtim.tv_nsec); }));
  T("utimensat atime", ({ struct stat s_; stat("data", &s_); (long)(s_.st_atim.tv_sec); }));
  struct timespec om[2] = {{0, UTIME_OMIT}, {5, 6}};
  T("utimensat UTIME_OMIT", utimensat(AT_FDCWD, "data", om, 0));
  T("utimensat UTIME_OMIT atime kept", ({ struct stat s_; stat("data", &s_); (long)(s_.st_atim.tv_nsec); }));
  T("utimensat mtime 5.6", ({ struct stat s_; stat("data", &s_); (long)(s_.st_mtim.tv_sec * 10 + s_.st_mtim.tv_nsec); }));
  T("utimensat bad nsec", ({ struct timespec b_[2] = {{0, 1000000000}, {0, 0}}; utimensat(AT_FDCWD, "data", b_, 0); }));
  unlink("data");
}

/* Inode flags: FS_IOC_GETFLAGS / FS_IOC_SETFLAGS (a 4-byte int, as chattr
 * and lsattr pass it) on a descriptor opened O_RDONLY. FS_INLINE_DATA_FL
 * is left out of what GETFLAGS shows: whether a small file or directory
 * is inline is the writer's layout choice (docs/fuse.md). */
#define FL_INLINE 0x10000000
static long fl_ioctl(const char *p, unsigned long cmd, int *v) {
  int fd = open(p, O_RDONLY | O_NONBLOCK);
  if (fd < 0) return -1;
  long r = ioctl(fd, cmd, v);
  int e = errno;
  close(fd);
  errno = e;
  return r;
}
static long getfl(const char *p) {
  int v = 0;
  if (fl_ioctl(p, FS_IOC_GETFLAGS, &v) < 0) return -1;
  return v & ~FL_INLINE;
}
static long setfl(const char *p, int v) { return fl_ioctl(p, FS_IOC_SETFLAGS, &v); }
/* FS_IOC_FSGETXATTR as fsx_xflags * 1000 + fsx_projid; FS_IOC_FSSETXATTR
 * of the xflags and project id (chattr -p, xfs_io chattr). */
static long getfsx(const char *p) {
  struct fsxattr x = {0};
  long r = fl_ioctl(p, FS_IOC_FSGETXATTR, (int *)&x);
  return r < 0 ? r : (long)x.fsx_xflags * 1000 + x.fsx_projid;
}
static long setfsx(const char *p, unsigned xflags, unsigned projid) {
  struct fsxattr x = {0};
  if (fl_ioctl(p, FS_IOC_FSGETXATTR, (int *)&x) < 0) return -1;
  x.fsx_xflags = xflags;
  x.fsx_projid = projid;
  return fl_ioctl(p, FS_IOC_FSSETXATTR, (int *)&x);
}
static long fd_ioctl(const char *p, int oflags, unsigned long cmd, void *arg) {
  int fd = open(p, oflags | O_NONBLOCK);
  if (fd < 0) return -1;
  long r = ioctl(fd, cmd, arg);
  int e = errno;
  close(fd);
  errno = e;
  return r;
}

static void inode_flags(void) {
  char name[160], buf[64];
  put("ff", "small");
  int fd = open("big", O_WRONLY | O_CREAT | O_TRUNC, 0644);
  for (int i = 0; i < 3; ++i) if (write(fd, buf, sizeof buf) < 0) perror("write");
  if (pwrite(fd, "x", 1, 9000) < 0) perror("pwrite");
  close(fd);
  put("empty", "");
  mkdir("fd", 0755);
  mkdir("fdbig", 0755);
  for (int i = 0; i < 40; ++i) {
    snprintf(name, sizeof name, "fdbig/entry-with-a-long-name-%03d", i);
    put(name, "x");
  }
  mkfifo("ffifo", 0644);
  symlink("ff", "flnk");
  T("GETFLAGS small file", getfl("ff"));
  T("GETFLAGS 9 KiB file", getfl("big"));
  T("GETFLAGS empty file", getfl("empty"));
  T("GETFLAGS new directory", getfl("fd"));
  T("GETFLAGS directory of 40 entries", getfl("fdbig"));
  T("GETFLAGS fifo", getfl("ffifo"));
  T("GETFLAGS via symlink", getfl("flnk"));
  T("FS_IOC_FSGETXATTR file", ({ struct fsxattr x_ = {0}; long r_ = fl_ioctl("ff", FS_IOC_FSGETXATTR, (int *)&x_); r_ < 0 ? r_ : (long)x_.fsx_xflags * 1000 + x_.fsx_projid; }));
  T("FS_IOC32_GETFLAGS file", ({ int v_ = 0; long r_ = fl_ioctl("ff", FS_IOC32_GETFLAGS, &v_); r_ < 0 ? r_ : (long)(v_ & ~FL_INLINE); }));
  T("unknown ioctl on a file", ({ int v_ = 0; fl_ioctl("ff", _IOR('f', 99, int), &v_); }));
  /* Each flag of F2FS_SETTABLE_FS_FL, some it is not, on a file and a
   * directory: the result, the flags after, then cleared. */
  static const struct { const char *n; int v; } fl[] = {
      {"sync", FS_SYNC_FL},       {"immutable", FS_IMMUTABLE_FL},     {"append", FS_APPEND_FL},
      {"nodump", FS_NODUMP_FL},   {"noatime", FS_NOATIME_FL},         {"nocomp", FS_NOCOMP_FL},
      {"compr", FS_COMPR_FL},     {"dirsync", FS_DIRSYNC_FL},         {"projinherit", FS_PROJINHERIT_FL},
      {"casefold", 0x40000000},   {"index", FS_INDEX_FL},             {"nocow", FS_NOCOW_FL},
      {"extent", FS_EXTENT_FL},   {"topdir", FS_TOPDIR_FL},           {"journal_data", FS_JOURNAL_DATA_FL},
      {"notail", FS_NOTAIL_FL},   {"encrypt", FS_ENCRYPT_FL},         {"verity", 0x00100000},
      {"inline_data", FL_INLINE}, {"dax", 0x02000000},                {"sync|nodump|noatime", FS_SYNC_FL | FS_NODUMP_FL | FS_NOATIME_FL},
      {"compr|nocomp", FS_COMPR_FL | FS_NOCOMP_FL},
  };
  static const char *on[] = {"ff", "fd", "ffifo"};
  for (unsigned o = 0; o < 3; ++o)
    for (unsigned i = 0; i < sizeof fl / sizeof fl[0]; ++i) {
      snprintf(name, sizeof name, "SETFLAGS %s on %s", fl[i].n, on[o]);
      T(name, setfl(on[o], fl[i].v));
      snprintf(name, sizeof name, "GETFLAGS after %s on %s", fl[i].n, on[o]);
      T(name, getfl(on[o]));
      snprintf(name, sizeof name, "SETFLAGS 0 after %s on %s", fl[i].n, on[o]);
      T(name, setfl(on[o], 0));
    }
  T("SETFLAGS nodump keeps ctime moving", ({ struct stat a_, b_; stat("ff", &a_); usleep(20000); setfl("ff", FS_NODUMP_FL); stat("ff", &b_); (long)(b_.st_ctim.tv_sec * 1000000000L + b_.st_ctim.tv_nsec > a_.st_ctim.tv_sec * 1000000000L + a_.st_ctim.tv_nsec); }));
  setfl("ff", 0);
  /* Inheritance: a directory's sync, nodump, noatime, dirsync,
   * projinherit to what is made in it (f2fs_mask_flags() per type). */
  mkdir("inh", 0755);
  T("SETFLAGS inh sync|nodump|noatime|dirsync|projinherit",
    setfl("inh", FS_SYNC_FL | FS_NODUMP_FL | FS_NOATIME_FL | FS_DIRSYNC_FL | FS_PROJINHERIT_FL));
  put("inh/f", "x");
  mkdir("inh/d", 0755);
  mkfifo("inh/p", 0644);
  T("GETFLAGS inherited file", getfl("inh/f"));
  T("GETFLAGS inherited dir", getfl("inh/d"));
  T("GETFLAGS inherited fifo", getfl("inh/p"));
  T("FS_IOC_FSGETXATTR inherited dir", ({ struct fsxattr x_ = {0}; long r_ = fl_ioctl("inh/d", FS_IOC_FSGETXATTR, (int *)&x_); r_ < 0 ? r_ : (long)x_.fsx_xflags * 1000 + x_.fsx_projid; }));
  T("write to a sync file", ({ int f_ = open("inh/f", O_WRONLY | O_APPEND); long r_ = write(f_, "yz", 2); close(f_); r_; }));
  /* FS_IOC_FSSETXATTR: the shared flags through f2fs_setflags_common(),
   * the project id through f2fs_ioc_setproject() (this volume has no
   * project quotas: only 0 is accepted). */
  put("fsx", "x");
  mkdir("fsxd", 0755);
  T("FSSETXATTR nodump|noatime file", setfsx("fsx", FS_XFLAG_NODUMP | FS_XFLAG_NOATIME, 0));
  T("FSGETXATTR after nodump|noatime", getfsx("fsx"));
  T("GETFLAGS after FSSETXATTR", getfl("fsx"));
  T("FSSETXATTR sync|append file", setfsx("fsx", FS_XFLAG_SYNC | FS_XFLAG_APPEND, 0));
  T("FSGETXATTR after sync|append", getfsx("fsx"));
  T("FSSETXATTR 0 file", setfsx("fsx", 0, 0));
  T("FSGETXATTR after 0", getfsx("fsx"));
  T("FSSETXATTR projid 5 file", setfsx("fsx", 0, 5));
  T("FSSETXATTR projinherit file", setfsx("fsx", FS_XFLAG_PROJINHERIT, 0));
  T("FSSETXATTR dax file", setfsx("fsx", FS_XFLAG_DAX, 0));
  T("FSSETXATTR immutable file", setfsx("fsx", FS_XFLAG_IMMUTABLE, 0));
  T("FSGETXATTR after immutable", getfsx("fsx"));
  T("FSSETXATTR 0 immutable file", setfsx("fsx", 0, 0));
  T("FSSETXATTR projinherit|nodump dir", setfsx("fsxd", FS_XFLAG_PROJINHERIT | FS_XFLAG_NODUMP, 0));
  T("FSGETXATTR dir after", getfsx("fsxd"));
  T("GETFLAGS dir after FSSETXATTR", getfl("fsxd"));
  T("FSSETXATTR extsize dir", ({ struct fsxattr x_ = {0}; fl_ioctl("fsxd", FS_IOC_FSGETXATTR, (int *)&x_); x_.fsx_xflags = FS_XFLAG_EXTSIZE; x_.fsx_extsize = 4096; fl_ioctl("fsxd", FS_IOC_FSSETXATTR, (int *)&x_); }));
  T("FSSETXATTR 0 dir", setfsx("fsxd", 0, 0));
  T("FSSETXATTR fifo", setfsx("ffifo", FS_XFLAG_NODUMP, 0));
  ST("lstat sync file after write", "inh/f");
  /* f2fs ioctls. */
  T("F2FS_IOC_SET_PIN_FILE 1 empty", ({ unsigned v_ = 1; fd_ioctl("empty", O_RDWR, F2FS_IOC_SET_PIN_FILE, &v_); }));
  T("F2FS_IOC_GET_PIN_FILE", ({ unsigned v_ = 7; long r_ = fd_ioctl("empty", O_RDONLY, F2FS_IOC_GET_PIN_FILE, &v_); r_ < 0 ? r_ : (long)v_; }));
  T("GETFLAGS pinned", getfl("empty"));
  T("SETFLAGS compr on pinned", setfl("empty", FS_COMPR_FL));
  T("F2FS_IOC_SET_PIN_FILE 0", ({ unsigned v_ = 0; fd_ioctl("empty", O_RDWR, F2FS_IOC_SET_PIN_FILE, &v_); }));
  T("GETFLAGS unpinned", getfl("empty"));
  T("F2FS_IOC_SET_PIN_FILE on a directory", ({ unsigned v_ = 1; fd_ioctl("fd", O_RDONLY, F2FS_IOC_SET_PIN_FILE, &v_); }));
  T("F2FS_IOC_GET_PIN_FILE on a directory", ({ unsigned v_ = 7; long r_ = fd_ioctl("fd", O_RDONLY, F2FS_IOC_GET_PIN_FILE, &v_); r_ < 0 ? r_ : (long)v_; }));
  T("F2FS_IOC_DEFRAGMENT directory", ({ struct f2fs_defragment d_ = {0, 4096}; fd_ioctl("fd", O_RDONLY, F2FS_IOC_DEFRAGMENT, &d_); }));
  T("F2FS_IOC_DEFRAGMENT unaligned", ({ struct f2fs_defragment d_ = {100, 4096}; fd_ioctl("big", O_RDWR, F2FS_IOC_DEFRAGMENT, &d_); }));
  T("F2FS_IOC_DEFRAGMENT past the largest file", ({ struct f2fs_defragment d_ = {0, (__u64)1 << 52}; fd_ioctl("big", O_RDWR, F2FS_IOC_DEFRAGMENT, &d_); }));
  T("F2FS_IOC_WRITE_CHECKPOINT", fd_ioctl("big", O_RDONLY, F2FS_IOC_WRITE_CHECKPOINT, NULL));
  system("rm -rf ff big empty fd fdbig ffifo flnk inh");
}

/* Immutable and append-only inodes: what the VFS and f2fs refuse. */
static void immutable_append(void) {
  char buf[64];
  put("f", "data");
  put("imm", "immutable data");
  put("app", "append");
  mkdir("idir", 0755), put("idir/in", "x"), mkdir("idir/sub", 0755);
  mkdir("adir", 0755), put("adir/in", "x"), mkdir("adir/sub", 0755);
  int ifd = open("imm", O_RDWR);
  int afd = open("app", O_RDWR);
  T("SETFLAGS imm immutable", setfl("imm", FS_IMMUTABLE_FL));
  T("SETFLAGS app append", setfl("app", FS_APPEND_FL));
  T("SETFLAGS idir immutable", setfl("idir", FS_IMMUTABLE_FL));
  T("SETFLAGS adir append", setfl("adir", FS_APPEND_FL));
  T("SETFLAGS imm immutable|append", setfl("imm", FS_IMMUTABLE_FL | FS_APPEND_FL));
  T("GETFLAGS imm", getfl("imm"));
  T("SETFLAGS imm immutable", setfl("imm", FS_IMMUTABLE_FL));
  /* the immutable file */
  TFD("imm open O_RDONLY", open("imm", O_RDONLY));
  TFD("imm open O_WRONLY", open("imm", O_WRONLY));
  TFD("imm open O_RDWR", open("imm", O_RDWR));
  TFD("imm open O_WRONLY|O_APPEND", open("imm", O_WRONLY | O_APPEND));
  TFD("imm open O_RDONLY|O_TRUNC", open("imm", O_RDONLY | O_TRUNC));
  TFD("imm open O_CREAT existing", open("imm", O_WRONLY | O_CREAT, 0644));
  T("imm pwrite on an fd opened before", pwrite(ifd, "x", 1, 0));
  T("imm pread on an fd opened before", pread(ifd, buf, 4, 0));
  T("imm ftruncate on an fd opened before", ftruncate(ifd, 1));
  T("imm fallocate on an fd opened before", fallocate(ifd, 0, 0, 8192));
  T("imm fallocate keep_size", fallocate(ifd, FALLOC_FL_KEEP_SIZE, 0, 8192));
  T("imm fallocate punch", fallocate(ifd, FALLOC_FL_PUNCH_HOLE | FALLOC_FL_KEEP_SIZE, 0, 4096));
  T("imm fsync", fsync(ifd));
  T("imm truncate", truncate("imm", 0));
  T("imm chmod", chmod("imm", 0600));
  T("imm chown", chown("imm", 1, 1));
  T("imm utimensat NULL", utimensat(AT_FDCWD, "imm", NULL, 0));
  T("imm utimensat explicit", ({ struct timespec t_[2] = {{1, 0}, {2, 0}}; utimensat(AT_FDCWD, "imm", t_, 0); }));
  T("imm setxattr", setxattr("imm", "user.a", "1", 1, 0));
  T("imm removexattr", removexattr("imm", "user.a"));
  T("imm getxattr", getxattr("imm", "user.a", buf, sizeof buf));
  T("imm unlink", unlink("imm"));
  T("imm rename", rename("imm", "imm2"));
  T("imm rename over it", rename("f", "imm"));
  T("imm link", link("imm", "imm.l"));
  T("imm exchange", renameat2_("f", "imm", RENAME_EXCHANGE));
  ST("lstat imm", "imm");
  /* the append-only file */
  TFD("app open O_RDONLY", open("app", O_RDONLY));
  TFD("app open O_WRONLY", open("app", O_WRONLY));
  TFD("app open O_RDWR", open("app", O_RDWR));
  TFD("app open O_RDWR|O_APPEND", open("app", O_RDWR | O_APPEND));
  TFD("app open O_WRONLY|O_APPEND|O_TRUNC", open("app", O_WRONLY | O_APPEND | O_TRUNC));
  TFD("app open O_RDONLY|O_TRUNC", open("app", O_RDONLY | O_TRUNC));
  T("app write O_APPEND", ({ int f_ = open("app", O_WRONLY | O_APPEND); long r_ = write(f_, "+more", 5); int e_ = errno; close(f_); errno = e_; r_; }));
  T("app pwrite on an fd opened before", pwrite(afd, "X", 1, 0));
  T("app ftruncate on an fd opened before", ftruncate(afd, 1));
  T("app ftruncate on an O_APPEND fd", ({ int f_ = open("app", O_WRONLY | O_APPEND); long r_ = ftruncate(f_, 1); int e_ = errno; close(f_); errno = e_; r_; }));
  T("app fallocate 0", fallocate(afd, 0, 0, 8192));
  T("app fallocate keep_size", fallocate(afd, FALLOC_FL_KEEP_SIZE, 8192, 8192));
  T("app fallocate punch", fallocate(afd, FALLOC_FL_PUNCH_HOLE | FALLOC_FL_KEEP_SIZE, 0, 4096));
  T("app fallocate zero_range", fallocate(afd, FALLOC_FL_ZERO_RANGE, 0, 4096));
  T("app truncate", truncate("app", 0));
  T("app chmod", chmod("app", 0600));
  T("app chown", chown("app", 1, 1));
  T("app chown -1 -1", chown("app", (uid_t)-1, (gid_t)-1));
  T("app utimensat NULL", utimensat(AT_FDCWD, "app", NULL, 0));
  T("app utimensat UTIME_NOW", ({ struct timespec t_[2] = {{0, UTIME_NOW}, {0, UTIME_NOW}}; utimensat(AT_FDCWD, "app", t_, 0); }));
  T("app utimensat explicit", ({ struct timespec t_[2] = {{1, 0}, {2, 0}}; utimensat(AT_FDCWD, "app", t_, 0); }));
  T("app utimensat mtime explicit, atime UTIME_NOW", ({ struct timespec t_[2] = {{0, UTIME_NOW}, {2, 0}}; utimensat(AT_FDCWD, "app", t_, 0); }));
  T("app setxattr", setxattr("app", "user.a", "1", 1, 0));
  T("app unlink", unlink("app"));
  T("app rename", rename("app", "app2"));
  T("app rename over it", rename("f", "app"));
  T("app link", link("app", "app.l"));
  ST("lstat app", "app");
  close(ifd), close(afd);
  /* the immutable directory */
  TFD("idir create", open("idir/new", O_WRONLY | O_CREAT, 0644));
  TFD("idir open existing O_WRONLY", open("idir/in", O_WRONLY));
  T("idir mkdir", mkdir("idir/d2", 0755));
  T("idir symlink", symlink("x", "idir/s"));
  T("idir mknod", mknod("idir/p", S_IFIFO | 0644, 0));
  T("idir unlink", unlink("idir/in"));
  T("idir rmdir sub", rmdir("idir/sub"));
  T("idir rename within", rename("idir/in", "idir/in2"));
  T("idir rename out", rename("idir/in", "in.out"));
  T("idir rename in", rename("f", "idir/f"));
  T("idir rename over an entry", rename("f", "idir/in"));
  T("idir link in", link("f", "idir/l"));
  T("idir link out", link("idir/in", "l.out"));
  T("idir rmdir itself", rmdir("idir"));
  T("idir rename itself", rename("idir", "idir2"));
  T("idir chmod", chmod("idir", 0700));
  T("idir setxattr", setxattr("idir", "user.a", "1", 1, 0));
  T("idir utimensat NULL", utimensat(AT_FDCWD, "idir", NULL, 0));
  /* the append-only directory */
  TFD("adir create", open("adir/new", O_WRONLY | O_CREAT, 0644));
  T("adir mkdir", mkdir("adir/d2", 0755));
  T("adir symlink", symlink("x", "adir/s"));
  T("adir unlink", unlink("adir/in"));
  T("adir rmdir sub", rmdir("adir/sub"));
  T("adir rename within", rename("adir/in", "adir/in2"));
  T("adir rename out", rename("adir/in", "in.out"));
  put("g", "g");
  T("adir rename in to a new name", rename("g", "adir/g"));
  put("g", "g");
  T("adir rename in over an entry", rename("g", "adir/in"));
  T("adir link in", link("f", "adir/l"));
  T("adir chmod", chmod("adir", 0700));
  T("adir utimensat NULL", utimensat(AT_FDCWD, "adir", NULL, 0));
  T("adir rmdir itself", rmdir("adir"));
  ST("lstat adir", "adir");
  ST("lstat adir/g", "adir/g");
  T("SETFLAGS 0 imm", setfl("imm", 0));
  T("SETFLAGS 0 app", setfl("app", 0));
  T("SETFLAGS 0 idir", setfl("idir", 0));
  T("SETFLAGS 0 adir", setfl("adir", 0));
  T("unlink imm after", unlink("imm"));
  T("chmod app after", chmod("app", 0600));
  /* As uid 1000: the owner may set flags but immutable and append
   * (CAP_LINUX_IMMUTABLE); immutable and append-only files it owns. */
  put("um", "x"), chown("um", 1000, 1000);
  put("uimm", "x"), chown("uimm", 1000, 1000), setfl("uimm", FS_IMMUTABLE_FL);
  put("uapp", "x"), chown("uapp", 1000, 1000), setfl("uapp", FS_APPEND_FL);
  mkdir("uadir", 0777), chmod("uadir", 0777), put("uadir/in", "x"), chown("uadir/in", 1000, 1000), setfl("uadir", FS_APPEND_FL);
  fflush(stdout);
  pid_t pid = fork();
  if (pid == 0) {
    if (setgroups(0, NULL) || setgid(1000) || setuid(1000)) _exit(3);
    T("uid1000 GETFLAGS own", getfl("um"));
    T("uid1000 GETFLAGS root's", getfl("f"));
    T("uid1000 SETFLAGS nodump own", setfl("um", FS_NODUMP_FL));
    T("uid1000 GETFLAGS own after", getfl("um"));
    T("uid1000 SETFLAGS immutable own", setfl("um", FS_IMMUTABLE_FL));
    T("uid1000 SETFLAGS append own", setfl("um", FS_APPEND_FL));
    T("uid1000 SETFLAGS nodump root's", setfl("f", FS_NODUMP_FL));
    T("uid1000 FSSETXATTR nodump own", setfsx("um", FS_XFLAG_NODUMP, 0));
    T("uid1000 FSSETXATTR immutable own", setfsx("um", FS_XFLAG_IMMUTABLE, 0));
    T("uid1000 FSSETXATTR nodump root's", setfsx("f", FS_XFLAG_NODUMP, 0));
    T("uid1000 FSSETXATTR 0 own", setfsx("um", 0, 0));
    T("uid1000 SETFLAGS 0 uimm (clear immutable)", setfl("uimm", 0));
    T("uid1000 SETFLAGS immutable|nodump uimm (keep immutable)", setfl("uimm", FS_IMMUTABLE_FL | FS_NODUMP_FL));
    T("uid1000 GETFLAGS uimm", getfl("uimm"));
    TFD("uid1000 uimm open O_WRONLY", open("uimm", O_WRONLY));
    TFD("uid1000 uimm open O_RDONLY", open("uimm", O_RDONLY));
    T("uid1000 uimm chmod", chmod("uimm", 0600));
    T("uid1000 uimm utimensat NULL", utimensat(AT_FDCWD, "uimm", NULL, 0));
    T("uid1000 uimm setxattr", setxattr("uimm", "user.a", "1", 1, 0));
    T("uid1000 uimm truncate", truncate("uimm", 0));
    TFD("uid1000 uapp open O_WRONLY", open("uapp", O_WRONLY));
    TFD("uid1000 uapp open O_WRONLY|O_APPEND", open("uapp", O_WRONLY | O_APPEND));
    T("uid1000 uapp chmod", chmod("uapp", 0600));
    T("uid1000 uapp utimensat NULL", utimensat(AT_FDCWD, "uapp", NULL, 0));
    T("uid1000 uapp utimensat explicit", ({ struct timespec t_[2] = {{1, 0}, {2, 0}}; utimensat(AT_FDCWD, "uapp", t_, 0); }));
    T("uid1000 uadir unlink own", unlink("uadir/in"));
    TFD("uid1000 uadir create", open("uadir/mine", O_WRONLY | O_CREAT, 0644));
    T("uid1000 F2FS_IOC_GARBAGE_COLLECT", ({ unsigned v_ = 1; fd_ioctl("um", O_RDONLY, F2FS_IOC_GARBAGE_COLLECT, &v_); }));
    T("uid1000 F2FS_IOC_WRITE_CHECKPOINT", fd_ioctl("um", O_RDONLY, F2FS_IOC_WRITE_CHECKPOINT, NULL));
    T("uid1000 F2FS_IOC_DEFRAGMENT", ({ struct f2fs_defragment d_ = {0, 4096}; fd_ioctl("um", O_RDWR, F2FS_IOC_DEFRAGMENT, &d_); }));
    fflush(stdout);
    _exit(0);
  }
  int status = 0;
  waitpid(pid, &status, 0);
  n_case += 100;
  printf("--- flags child status %d\n", WIFEXITED(status) ? WEXITSTATUS(status) : -1);
  setfl("uimm", 0), setfl("uapp", 0), setfl("uadir", 0);
  system("rm -rf f imm imm2 app app2 idir adir g in.out l.out um uimm uapp uadir");
}

/* As uid 1000 (gid 1000): the permission checks. */
/* Set-user-ID, set-group-ID and security.capability cleared as Linux
 * clears them (notify_change()'s ATTR_KILL_SUID/SGID, file_remove_privs()):
 * by chown and chgrp, also root's, on regular files but not directories;
 * by write and truncate only when the caller lacks CAP_FSETID (root has
 * it: nothing cleared here; uid 1000's cases are in as_user()). */
static void kill_privs(void) {
  static const unsigned modes[] = {06755, 04755, 02755, 02745, 0755};
  char p[32], name[96];
  for (unsigned i = 0; i < sizeof modes / sizeof modes[0]; ++i) {
    snprintf(p, sizeof p, "kp%o", modes[i]);
    put(p, "data");
    chmod(p, modes[i]);
#define N(op) (snprintf(name, sizeof name, "kill_privs %s %s", op, p), name)
    T(N("root write"), ({ int f_ = open(p, O_WRONLY); long r_ = f_ < 0 ? -1 : write(f_, "x", 1); int e_ = errno; if (f_ >= 0) close(f_); errno = e_; r_; }));
    ST(N("lstat after root write"), p);
    T(N("root truncate"), truncate(p, 2));
    ST(N("lstat after root truncate"), p);
    T(N("root chown 1:1"), chown(p, 1, 1));
    ST(N("lstat after root chown"), p);
    chmod(p, modes[i]);
    T(N("root chown -1:2"), chown(p, (uid_t)-1, 2));
    ST(N("lstat after root chgrp"), p);
    chmod(p, modes[i]);
    T(N("root chown to the same owner"), chown(p, 1, 2));
    ST(N("lstat after root chown to the same owner"), p);
    snprintf(p, sizeof p, "kpd%o", modes[i]);
    mkdir(p, 0755);
    chmod(p, modes[i]);
    T(N("root chown dir 1:1"), chown(p, 1, 1));
    ST(N("lstat dir after root chown"), p);
#undef N
  }
  /* A file capability (security.capability, VFS_CAP_REVISION_2 with
   * CAP_NET_RAW permitted): gone after chown, kept after root's write. */
  static const unsigned char cap[20] = {0x01, 0, 0, 0x02, 0x00, 0x20, 0, 0};
  put("kpcap", "data");
  T("kill_privs setxattr security.capability", setxattr("kpcap", "security.capability", cap, sizeof cap, 0));
  T("kill_privs root write to a file with a capability",
    ({ int f_ = open("kpcap", O_WRONLY); long r_ = f_ < 0 ? -1 : write(f_, "x", 1); int e_ = errno; if (f_ >= 0) close(f_); errno = e_; r_; }));
  T("kill_privs getxattr security.capability after root write", getxattr("kpcap", "security.capability", NULL, 0));
  T("kill_privs root chown of a file with a capability", chown("kpcap", 3, 3));
  T("kill_privs getxattr security.capability after chown", getxattr("kpcap", "security.capability", NULL, 0));
}

/* Calls the other sections leave out: shared mmap writes,
 * copy_file_range, flock and POSIX locks, calls on symlinks themselves,
 * fchown, truncation far past the end, mknod of a regular file, mkdir with
 * every mode bit. */
static void more_calls(void) {
  char buf[64];
  /* (O_TMPFILE is left out: libfuse before 3.17 has no tmpfile operation,
   * EOPNOTSUPP on our mount; docs/fuse.md.) */
  put("mm", "0123456789");
  {
    int fd = open("mm", O_RDWR);
    char *p = mmap(NULL, 4096, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
    T("mmap shared writable", p == MAP_FAILED ? -1 : 0);
    if (p != MAP_FAILED) {
      memcpy(p, "ABC", 3);
      T("msync", msync(p, 4096, MS_SYNC));
      munmap(p, 4096);
    }
    close(fd);
  }
  T("read back what mmap wrote", ({ int f_ = open("mm", O_RDONLY); long r_ = read(f_, buf, 10); close(f_); r_ == 10 && memcmp(buf, "ABC3456789", 10) == 0 ? 0 : -1; }));
  ST("lstat after mmap write", "mm");
  put("cf1", "hello world");
  put("cf2", "");
  T("copy_file_range 5 bytes", ({ int a_ = open("cf1", O_RDONLY), b_ = open("cf2", O_WRONLY); loff_t oa_ = 6, ob_ = 0; long r_ = copy_file_range(a_, &oa_, b_, &ob_, 5, 0); int e_ = errno; close(a_); close(b_); errno = e_; r_; }));
  ST("lstat after copy_file_range", "cf2");
  T("copy_file_range content", ({ int f_ = open("cf2", O_RDONLY); long r_ = read(f_, buf, 10); close(f_); r_ == 5 && memcmp(buf, "world", 5) == 0 ? 0 : -1; }));
  T("copy_file_range overlapping in one file", ({ int a_ = open("cf1", O_RDWR); loff_t oa_ = 0, ob_ = 2; long r_ = copy_file_range(a_, &oa_, a_, &ob_, 5, 0); int e_ = errno; close(a_); errno = e_; r_; }));
  T("copy_file_range from an O_WRONLY fd", ({ int a_ = open("cf1", O_WRONLY), b_ = open("cf2", O_WRONLY); loff_t oa_ = 0, ob_ = 0; long r_ = copy_file_range(a_, &oa_, b_, &ob_, 5, 0); int e_ = errno; close(a_); close(b_); errno = e_; r_; }));
  T("flock LOCK_EX", ({ int f_ = open("cf1", O_RDONLY); long r_ = flock(f_, LOCK_EX | LOCK_NB); int e_ = errno; close(f_); errno = e_; r_; }));
  T("fcntl F_SETLK write lock on O_RDONLY fd", ({ int f_ = open("cf1", O_RDONLY); struct flock l_ = {.l_type = F_WRLCK, .l_whence = SEEK_SET}; long r_ = fcntl(f_, F_SETLK, &l_); int e_ = errno; close(f_); errno = e_; r_; }));
  T("fcntl F_SETLK read lock", ({ int f_ = open("cf1", O_RDONLY); struct flock l_ = {.l_type = F_RDLCK, .l_whence = SEEK_SET}; long r_ = fcntl(f_, F_SETLK, &l_); int e_ = errno; close(f_); errno = e_; r_; }));
  symlink("cf1", "sl");
  T("utimensat AT_SYMLINK_NOFOLLOW", utimensat(AT_FDCWD, "sl", NULL, AT_SYMLINK_NOFOLLOW));
  T("lsetxattr user. on a symlink", lsetxattr("sl", "user.x", "1", 1, 0));
  T("lsetxattr trusted. on a symlink", lsetxattr("sl", "trusted.x", "1", 1, 0));
  T("lgetxattr trusted. on a symlink", lgetxattr("sl", "trusted.x", buf, sizeof buf));
  T("fchown", ({ int f_ = open("cf1", O_RDONLY); long r_ = fchown(f_, 5, 6); int e_ = errno; close(f_); errno = e_; r_; }));
  ST("lstat after fchown", "cf1");
  T("fchmod", ({ int f_ = open("cf1", O_RDONLY); long r_ = fchmod(f_, 0604); int e_ = errno; close(f_); errno = e_; r_; }));
  ST("lstat after fchmod", "cf1");
  T("truncate to 1 GiB", truncate("cf2", 1L << 30));
  ST("lstat after truncate to 1 GiB", "cf2");
  T("pread in the hole", ({ int f_ = open("cf2", O_RDONLY); long r_ = pread(f_, buf, 8, 1L << 29); close(f_); r_ == 8 && memcmp(buf, "\0\0\0\0\0\0\0\0", 8) == 0 ? 0 : -1; }));
  T("truncate back to 3", truncate("cf2", 3));
  ST("lstat after truncate back", "cf2");
  T("mknod S_IFREG", mknod("nreg", S_IFREG | 0640, 0));
  ST("lstat nreg", "nreg");
  T("mknod mode 0 (regular)", mknod("nreg0", 0644, 0));
  ST("lstat nreg0", "nreg0");
  T("mkdir 07777", mkdir("m7", 07777));
  ST("lstat m7", "m7");
  T("creat 07777", ({ int f_ = open("c7", O_WRONLY | O_CREAT | O_EXCL, 07777); if (f_ >= 0) close(f_); f_ < 0 ? -1 : 0; }));
  ST("lstat c7", "c7");
  T("statfs f_namelen", ({ struct statfs s_; long r_ = statfs(".", &s_); r_ < 0 ? -1 : (long)s_.f_namelen; }));
  T("statfs f_bsize", ({ struct statfs s_; long r_ = statfs(".", &s_); r_ < 0 ? -1 : (long)s_.f_bsize; }));
  T("rename a file over itself", rename("cf1", "cf1"));
  T("link to a symlink", link("sl", "sl2"));
  ST("lstat sl2", "sl2");
  T("rmdir .", rmdir("m7/."));
  T("mkdir trailing slash", mkdir("m8/", 0755));
  T("open trailing slash on a file", open("cf1/", O_RDONLY));
  put("big", "");
  T("pwrite at 5 GiB", ({ int f_ = open("big", O_WRONLY); long r_ = pwrite(f_, "x", 1, 5L << 30); int e_ = errno; close(f_); errno = e_; r_; }));
  ST("lstat after pwrite at 5 GiB", "big");
  T("truncate to 4 TiB", truncate("big", 1L << 42));
  T("truncate to 3.9 TiB", truncate("big", 3900L << 30));
  ST("lstat after truncate to 3.9 TiB", "big");
  T("pwrite at 4 TiB", ({ int f_ = open("big", O_WRONLY); long r_ = pwrite(f_, "x", 1, 1L << 42); int e_ = errno; close(f_); errno = e_; r_; }));
  T("fallocate past 4 TiB", ({ int f_ = open("big", O_WRONLY); long r_ = fallocate(f_, 0, 1L << 42, 4096); int e_ = errno; close(f_); errno = e_; r_; }));
  T("truncate to -1", truncate("big", -1));
  unlink("big");
  put("x1", "a");
  T("listxattr of none", listxattr("x1", buf, sizeof buf));
  setxattr("x1", "user.b", "2", 1, 0);
  setxattr("x1", "user.a", "1", 1, 0);
  setxattr("x1", "trusted.c", "3", 1, 0);
  T("listxattr size", listxattr("x1", NULL, 0));
  T("listxattr order", ({ long r_ = listxattr("x1", buf, sizeof buf); r_ == 24 && memcmp(buf, "user.b\0user.a\0trusted.c\0", 24) == 0 ? 0 : r_; }));
  T("listxattr too small", listxattr("x1", buf, 5));
  T("removexattr", removexattr("x1", "user.b"));
  T("listxattr after remove", ({ long r_ = listxattr("x1", buf, sizeof buf); r_ == 17 && memcmp(buf, "user.a\0trusted.c\0", 17) == 0 ? 0 : r_; }));
  T("setxattr empty value", setxattr("x1", "user.e", "", 0, 0));
  T("getxattr empty value", getxattr("x1", "user.e", buf, sizeof buf));
  T("setxattr name 255", ({ char n_[300]; memcpy(n_, "user.", 5); memset(n_ + 5, 'n', 250); n_[255] = 0; setxattr("x1", n_, "v", 1, 0); }));
  T("setxattr name 256", ({ char n_[300]; memcpy(n_, "user.", 5); memset(n_ + 5, 'n', 251); n_[256] = 0; setxattr("x1", n_, "v", 1, 0); }));
  T("setxattr on a directory", setxattr(".", "user.dir", "v", 1, 0));
  T("removexattr on a directory", removexattr(".", "user.dir"));
  unlink("x1");
  /* (fallocate's COLLAPSE_RANGE and INSERT_RANGE are left out: the
   * writer has no range shifts, EOPNOTSUPP on our mount; docs/fuse.md.) */
  /* A file unlinked while open. */
  {
    put("uo", "abc");
    int fd = open("uo", O_RDWR);
    unlink("uo");
    T("fstat nlink of an unlinked open file", ({ struct stat s_; fstat(fd, &s_); (long)s_.st_nlink; }));
    T("fchmod of an unlinked open file", fchmod(fd, 0600));
    T("ftruncate of an unlinked open file", ftruncate(fd, 1));
    T("fstat size after ftruncate", ({ struct stat s_; fstat(fd, &s_); (long)s_.st_size; }));
    char pth[64];
    snprintf(pth, sizeof pth, "/proc/self/fd/%d", fd);
    T("linkat of an unlinked open file", linkat(AT_FDCWD, pth, AT_FDCWD, "uo2", AT_SYMLINK_FOLLOW));
    T("fsync of an unlinked open file", fsync(fd));
    close(fd);
  }
  /* Directory link counts through renames. */
  mkdir("nd", 0755), mkdir("nd/a", 0755), mkdir("nd/b", 0755), mkdir("ne", 0755);
  ST("lstat nd with 2 subdirectories", "nd");
  T("rename nd/a to ne/a", rename("nd/a", "ne/a"));
  ST("lstat nd after a subdirectory left", "nd");
  ST("lstat ne after a subdirectory came", "ne");
  T("rename ne/a over the empty nd/b", rename("ne/a", "nd/b"));
  ST("lstat nd after a rename over its subdirectory", "nd");
  ST("lstat ne after", "ne");
  T("rename nd into nd/b", rename("nd", "nd/b/x"));
  T("rename ne over the non-empty nd", rename("ne", "nd"));
  T("readdir count", ({ DIR *d_ = opendir("nd"); long n_ = 0; while (d_ && readdir(d_)) ++n_; if (d_) closedir(d_); n_; }));
  system("rm -rf nd ne");
  /* Odd opens and I/O sizes. */
  mkfifo("ff", 0644);
  TFD("open FIFO O_RDWR|O_TRUNC", open("ff", O_RDWR | O_TRUNC));
  unlink("ff");
  TFD("open directory O_RDONLY|O_TRUNC", open(".", O_RDONLY | O_TRUNC));
  symlink("dangling-target", "dang");
  TFD("open O_CREAT through a dangling symlink", open("dang", O_WRONLY | O_CREAT, 0644));
  ST("lstat the symlink's new target", "dangling-target");
  TFD("open O_CREAT|O_EXCL of a symlink", open("dang", O_WRONLY | O_CREAT | O_EXCL, 0644));
  unlink("dang"), unlink("dangling-target");
  put("io", "0123456789");
  T("write of 0 bytes", ({ int f_ = open("io", O_WRONLY); long r_ = write(f_, "", 0); close(f_); r_; }));
  T("pwrite at a negative offset", ({ int f_ = open("io", O_WRONLY); long r_ = pwrite(f_, "x", 1, -1); int e_ = errno; close(f_); errno = e_; r_; }));
  T("lseek SEEK_END -20", ({ int f_ = open("io", O_RDONLY); long r_ = lseek(f_, -20, SEEK_END); int e_ = errno; close(f_); errno = e_; r_; }));
  T("lseek SEEK_END +5", ({ int f_ = open("io", O_RDONLY); long r_ = lseek(f_, 5, SEEK_END); close(f_); r_; }));
  T("fsync of an O_RDONLY descriptor", ({ int f_ = open("io", O_RDONLY); long r_ = fsync(f_); close(f_); r_; }));
  T("fdatasync of a directory", ({ int f_ = open(".", O_RDONLY | O_DIRECTORY); long r_ = fdatasync(f_); close(f_); r_; }));
  T("sync_file_range", ({ int f_ = open("io", O_WRONLY); long r_ = sync_file_range(f_, 0, 0, SYNC_FILE_RANGE_WRITE); close(f_); r_; }));
  /* O_DIRECT alignment (f2fs_should_use_dio()): off the device's 512-byte
   * sectors EINVAL, on them but off 4 KiB through the page cache. (A
   * misaligned buffer address is left out: it does not reach the daemon.) */
  {
    static char b_[8192] __attribute__((aligned(4096)));
#define DIO(name, fl, call)                                                                  \
    T(name, ({ int f_ = open("io", (fl) | O_DIRECT); long r_ = f_ < 0 ? -1 : (call); int e_ = errno; \
               if (f_ >= 0) close(f_); errno = e_; r_; }))
    DIO("O_DIRECT write of 100 bytes", O_WRONLY, pwrite(f_, b_, 100, 0));
    DIO("O_DIRECT write of 4096 at 100", O_WRONLY, pwrite(f_, b_, 4096, 100));
    DIO("O_DIRECT write of 512 at 512", O_WRONLY, pwrite(f_, b_, 512, 512));
    DIO("O_DIRECT write of 4096 at 4096", O_WRONLY, pwrite(f_, b_, 4096, 4096));
    ST("lstat after O_DIRECT writes", "io");
    DIO("O_DIRECT read of 100 bytes", O_RDONLY, pread(f_, b_, 100, 0));
    DIO("O_DIRECT read of 512 at 512", O_RDONLY, pread(f_, b_, 512, 512));
    DIO("O_DIRECT read of 4096 at 4096", O_RDONLY, pread(f_, b_, 4096, 4096));
    DIO("O_DIRECT read of 4096 past the end", O_RDONLY, pread(f_, b_, 4096, 65536));
#undef DIO
  }
  /* Calls on descriptors of the wrong kind or access. */
#define FDCALL(name, fl, call)                                                                  \
  T(name, ({ int f_ = open("io", (fl)); long r_ = f_ < 0 ? -1 : (call); int e_ = errno; \
             if (f_ >= 0) close(f_); errno = e_; r_; }))
  FDCALL("ftruncate of an O_RDONLY descriptor", O_RDONLY, ftruncate(f_, 1));
  FDCALL("read of an O_WRONLY descriptor", O_WRONLY, read(f_, buf, 1));
  FDCALL("fallocate of an O_RDONLY descriptor", O_RDONLY, fallocate(f_, 0, 0, 4096));
  FDCALL("fallocate of 0 bytes", O_WRONLY, fallocate(f_, 0, 0, 0));
  FDCALL("fallocate at a negative offset", O_WRONLY, fallocate(f_, 0, -4096, 4096));
  FDCALL("futimens of an O_RDONLY descriptor", O_RDONLY, futimens(f_, NULL));
  FDCALL("copy_file_range into an O_APPEND descriptor", O_WRONLY | O_APPEND,
         ({ int a_ = open("io", O_RDONLY); loff_t o_ = 0; long c_ = copy_file_range(a_, &o_, f_, NULL, 4, 0); int ce_ = errno; close(a_); errno = ce_; c_; }));
#undef FDCALL
  mkfifo("ff2", 0644);
  T("fsync of a FIFO", ({ int f_ = open("ff2", O_RDWR); long r_ = fsync(f_); int e_ = errno; close(f_); errno = e_; r_; }));
  unlink("ff2");
  T("symlink with an empty target", symlink("", "emptyl"));
  symlink("0123456789", "longl");
  T("readlink into 4 bytes", readlink("longl", buf, 4));
  unlink("longl");
  mkdir("ld", 0755);
  T("link to a directory", link("ld", "ld2"));
  T("rename . ", rename(".", "dotx"));
  T("rename into ..", rename("ld", "ld/.."));
  T("rmdir ..", rmdir("ld/.."));
  rmdir("ld");
  mkdir("many", 0755);
  for (int i = 0; i < 600; ++i) {
    char n_[64];
    snprintf(n_, sizeof n_, "many/entry-with-a-longer-name-%04d", i);
    put(n_, "");
  }
  for (int i = 0; i < 600; i += 2) {
    char n_[64];
    snprintf(n_, sizeof n_, "many/entry-with-a-longer-name-%04d", i);
    unlink(n_);
  }
  T("readdir count after 600 made, 300 removed", ({ DIR *d_ = opendir("many"); long n_ = 0; while (d_ && readdir(d_)) ++n_; if (d_) closedir(d_); n_; }));
  T("lookup of a removed name", access("many/entry-with-a-longer-name-0100", F_OK));
  T("lookup of a kept name", access("many/entry-with-a-longer-name-0101", F_OK));
  system("rm -rf many");
  /* Two names of one inode. */
  put("h1", "hard");
  link("h1", "h2");
  T("rename onto another name of the same inode", rename("h1", "h2"));
  ST("lstat h1 after the rename", "h1");
  ST("lstat h2 after the rename", "h2");
  T("renameat2 RENAME_EXCHANGE of two names of one inode", renameat2_("h1", "h2", RENAME_EXCHANGE));
  T("renameat2 RENAME_NOREPLACE onto another name of the same inode", renameat2_("h1", "h2", RENAME_NOREPLACE));
  T("chmod through one name", chmod("h1", 0600));
  ST("lstat the other name", "h2");
  T("setxattr through one name", setxattr("h1", "user.h", "1", 1, 0));
  T("getxattr through the other", getxattr("h2", "user.h", buf, sizeof buf));
  T("truncate through one name", truncate("h2", 2));
  ST("lstat the first name after", "h1");
  mkdir("hd", 0755);
  T("link into another directory", link("h1", "hd/h3"));
  T("rename a name into a directory holding another name of it", rename("h2", "hd/h3"));
  ST("lstat h1 with 3 names", "h1");
  T("unlink h1", unlink("h1"));
  ST("lstat hd/h3 after", "hd/h3");
  system("rm -rf hd h1 h2");
  /* An inode's xattr space: values of 500 bytes until it is full (inline
   * area and xattr node, f2fs's limits), then the errors at the edge. */
  put("xs", "x");
  {
    static char v_[4096];
    memset(v_, 'v', sizeof v_);
    int n_ = 0, e_ = 0;
    for (; n_ < 64; ++n_) {
      char nm_[32];
      snprintf(nm_, sizeof nm_, "user.fill%02d", n_);
      if (setxattr("xs", nm_, v_, 500, 0) != 0) { e_ = errno; break; }
    }
    report("xattrs of 500 bytes that fit", n_, 0);
    report("the error after them", e_ ? -1 : 0, e_);
    T("a value of 100 bytes then", setxattr("xs", "user.small", v_, 100, 0));
    T("removexattr one, then 500 bytes fit again", ({ removexattr("xs", "user.fill00"); setxattr("xs", "user.again", v_, 500, 0); }));
    T("a value of 4000 bytes on a fresh file", ({ put("xs2", "y"); setxattr("xs2", "user.big", v_, 4000, 0); }));
    T("a value of 3500 bytes on a fresh file", ({ put("xs3", "y"); setxattr("xs3", "user.big", v_, 3500, 0); }));
    T("listxattr size when full", listxattr("xs", NULL, 0));
  }
  unlink("xs"), unlink("xs2"), unlink("xs3");
  /* SEEK_DATA / SEEK_HOLE over preallocated blocks (NEW_ADDR: data only
   * once written, f2fs_seek_block()), before and after a sync. */
  {
    int fd = open("sk", O_RDWR | O_CREAT | O_TRUNC, 0644);
    T("fallocate 0..64 KiB", fallocate(fd, 0, 0, 65536));
    T("SEEK_DATA over preallocated blocks", lseek(fd, 0, SEEK_DATA));
    T("SEEK_HOLE over preallocated blocks", lseek(fd, 0, SEEK_HOLE));
    T("pwrite at 32 KiB", pwrite(fd, "d", 1, 32768));
    T("SEEK_DATA after the write", lseek(fd, 0, SEEK_DATA));
    T("SEEK_HOLE after the data", lseek(fd, 32768, SEEK_HOLE));
    T("fsync", fsync(fd));
    T("SEEK_DATA after fsync", lseek(fd, 0, SEEK_DATA));
    T("SEEK_HOLE after fsync", lseek(fd, 32768, SEEK_HOLE));
    T("fallocate keep_size past the end", fallocate(fd, FALLOC_FL_KEEP_SIZE, 65536, 65536));
    T("size after keep_size", ({ struct stat s_; fstat(fd, &s_); (long)s_.st_size; }));
    T("SEEK_DATA at the end", lseek(fd, 65536, SEEK_DATA));
    T("punch the written block", fallocate(fd, FALLOC_FL_PUNCH_HOLE | FALLOC_FL_KEEP_SIZE, 32768, 4096));
    T("SEEK_DATA after the punch", lseek(fd, 0, SEEK_DATA));
    close(fd);
    unlink("sk");
  }
  /* pwrite on O_APPEND appends (Linux, pwrite(2) BUGS); writev and readv;
   * O_SYNC; a write leaving a hole. */
  put("ap", "0123");
  T("pwrite at 0 on O_APPEND", ({ int f_ = open("ap", O_WRONLY | O_APPEND); long r_ = pwrite(f_, "ab", 2, 0); close(f_); r_; }));
  T("content after the pwrite", ({ int f_ = open("ap", O_RDONLY); long r_ = read(f_, buf, 16); close(f_); r_ == 6 && memcmp(buf, "0123ab", 6) == 0 ? 0 : r_; }));
  T("writev of three pieces", ({ int f_ = open("ap", O_WRONLY | O_TRUNC); struct iovec v_[3] = {{"x", 1}, {"yy", 2}, {"zzz", 3}}; long r_ = writev(f_, v_, 3); close(f_); r_; }));
  T("readv into two pieces", ({ int f_ = open("ap", O_RDONLY); char a_[2], b_[8]; struct iovec v_[2] = {{a_, 2}, {b_, 8}}; long r_ = readv(f_, v_, 2); close(f_); r_ == 6 && a_[0] == 'x' && b_[0] == 'y' && b_[3] == 'z' ? 0 : r_; }));
  T("O_SYNC write", ({ int f_ = open("ap", O_WRONLY | O_SYNC); long r_ = pwrite(f_, "S", 1, 100000); close(f_); r_; }));
  ST("lstat after a write leaving a hole", "ap");
  T("read across the hole", ({ int f_ = open("ap", O_RDONLY); static char b_[100001]; long r_ = pread(f_, b_, sizeof b_, 0); close(f_); r_ == 100001 && b_[50000] == 0 && b_[100000] == 'S' ? 0 : r_; }));
  unlink("ap");
  unlink("io");
  system("rm -rf mm cf1 cf2 sl sl2 nreg nreg0 m7 m8 c7");
}

static void as_user(void) {
  static const int modes[] = {0, 0400, 0200, 0600, 0444, 0755, 0700, 0070, 0007};
  char name[128];
  for (unsigned i = 0; i < sizeof modes / sizeof modes[0]; ++i) {
    char p[32];
    snprintf(p, sizeof p, "u/f%o", modes[i]);
    put(p, "data");
    chmod(p, (mode_t)modes[i]);
    snprintf(p, sizeof p, "u/d%o", modes[i]);
    mkdir(p, 0755);
    put((snprintf(name, sizeof name, "%s/in", p), name), "x");
    chmod(p, (mode_t)modes[i]);
  }
  put("u/mine", "x");
  chown("u/mine", 1000, 1000);
  put("u/mine0", "x");
  chown("u/mine0", 1000, 0);
  mkdir("u/sgd", 0777);
  chown("u/sgd", 0, 0);
  chmod("u/sgd", 02777);
  mkdir("u/sticky", 01777);
  put("u/sticky/roots", "x");
  chmod("u", 0777);
  fflush(stdout);
  pid_t pid = fork();
  if (pid == 0) {
    if (setgroups(0, NULL) || setgid(1000) || setuid(1000)) _exit(3);
    for (unsigned i = 0; i < sizeof modes / sizeof modes[0]; ++i) {
      char p[32], q[64];
      snprintf(p, sizeof p, "u/f%o", modes[i]);
#define N(op) (snprintf(name, sizeof name, "uid1000 %s %s", op, p), name)
      TFD(N("open O_RDONLY"), open(p, O_RDONLY));
      TFD(N("open O_WRONLY"), open(p, O_WRONLY));
      T(N("access R_OK"), access(p, R_OK));
      T(N("access W_OK"), access(p, W_OK));
      T(N("chmod"), chmod(p, 0777));
      T(N("setxattr"), setxattr(p, "user.u", "1", 1, 0));
      T(N("truncate"), truncate(p, 0));
      snprintf(p, sizeof p, "u/d%o", modes[i]);
      TFD(N("opendir"), open(p, O_RDONLY | O_DIRECTORY));
      snprintf(q, sizeof q, "%s/in", p);
      ST(N("lstat in"), q);
      snprintf(q, sizeof q, "%s/new", p);
      TFD(N("create in"), open(q, O_WRONLY | O_CREAT, 0644));
      snprintf(q, sizeof q, "%s/in", p);
      T(N("unlink in"), unlink(q));
      snprintf(q, sizeof q, "%s/sub", p);
      T(N("mkdir in"), mkdir(q, 0755));
#undef N
    }
    /* Set-group-ID for a caller outside the group: chmod drops it
     * (setattr_prepare()), a new file in a set-group-ID directory of
     * another group takes that group and loses S_ISGID, a new directory
     * keeps it (inode_init_owner()). */
    T("uid1000 chmod 02755 own file of group 0", chmod("u/mine0", 02755));
    ST("uid1000 lstat own file of group 0", "u/mine0");
    T("uid1000 create 02755 in a setgid dir of group 0", ({ int f_ = open("u/sgd/f", O_WRONLY | O_CREAT, 02755); if (f_ >= 0) close(f_); f_ < 0 ? -1 : 0; }));
    ST("uid1000 lstat created in setgid dir", "u/sgd/f");
    T("uid1000 mkdir 02755 in a setgid dir of group 0", mkdir("u/sgd/d", 02755));
    ST("uid1000 lstat dir made in setgid dir", "u/sgd/d");
    T("uid1000 mknod fifo in a setgid dir", mknod("u/sgd/p", S_IFIFO | 02750, 0));
    ST("uid1000 lstat fifo in setgid dir", "u/sgd/p");
    T("uid1000 chown own file to group 0", chown("u/mine0", (uid_t)-1, 0));
    T("uid1000 chmod own file", chmod("u/mine", 04755));
    ST("uid1000 lstat own file", "u/mine");
    T("uid1000 chown own file to 0", chown("u/mine", 0, 0));
    T("uid1000 chgrp own file to 1000", chown("u/mine", (uid_t)-1, 1000));
    ST("uid1000 lstat own file after chgrp", "u/mine");
    /* Writes and truncation by a caller without CAP_FSETID clear
     * set-user-ID, and set-group-ID where the group may execute. */
    {
      static const unsigned kmodes[] = {06775, 04755, 02775, 02745, 06700};
      for (unsigned i = 0; i < sizeof kmodes / sizeof kmodes[0]; ++i) {
        char k[32];
        snprintf(k, sizeof k, "u/k%o", kmodes[i]);
        put(k, "data");
        T((snprintf(name, sizeof name, "uid1000 chmod %s", k), name), chmod(k, kmodes[i]));
        T((snprintf(name, sizeof name, "uid1000 write %s", k), name),
          ({ int f_ = open(k, O_WRONLY); long r_ = f_ < 0 ? -1 : write(f_, "x", 1); int e_ = errno; if (f_ >= 0) close(f_); errno = e_; r_; }));
        ST((snprintf(name, sizeof name, "uid1000 lstat after write %s", k), name), k);
        chmod(k, kmodes[i]);
        T((snprintf(name, sizeof name, "uid1000 truncate %s", k), name), truncate(k, 1));
        ST((snprintf(name, sizeof name, "uid1000 lstat after truncate %s", k), name), k);
        chmod(k, kmodes[i]);
        T((snprintf(name, sizeof name, "uid1000 open O_TRUNC %s", k), name), ({ int f_ = open(k, O_WRONLY | O_TRUNC); int e_ = errno; if (f_ >= 0) close(f_); errno = e_; f_ < 0 ? -1 : 0; }));
        ST((snprintf(name, sizeof name, "uid1000 lstat after O_TRUNC %s", k), name), k);
        put(k, "data");
        chmod(k, kmodes[i]);
        T((snprintf(name, sizeof name, "uid1000 open O_RDONLY|O_TRUNC %s", k), name), ({ int f_ = open(k, O_RDONLY | O_TRUNC); int e_ = errno; if (f_ >= 0) close(f_); errno = e_; f_ < 0 ? -1 : 0; }));
        ST((snprintf(name, sizeof name, "uid1000 lstat after O_RDONLY|O_TRUNC %s", k), name), k);
        chmod(k, kmodes[i]);
        T((snprintf(name, sizeof name, "uid1000 ftruncate %s", k), name), ({ int f_ = open(k, O_WRONLY); long r_ = f_ < 0 ? -1 : ftruncate(f_, 3); int e_ = errno; if (f_ >= 0) close(f_); errno = e_; r_; }));
        ST((snprintf(name, sizeof name, "uid1000 lstat after ftruncate %s", k), name), k);
        chmod(k, kmodes[i]);
        T((snprintf(name, sizeof name, "uid1000 chgrp %s", k), name), chown(k, (uid_t)-1, 1000));
        ST((snprintf(name, sizeof name, "uid1000 lstat after chgrp %s", k), name), k);
      }
    }
    T("uid1000 utimensat own file", utimensat(AT_FDCWD, "u/mine", NULL, 0));
    T("uid1000 utimensat other's file", utimensat(AT_FDCWD, "u/f644", NULL, 0));
    T("uid1000 utimensat other's file, explicit", ({ struct timespec t_[2] = {{1, 0}, {1, 0}}; utimensat(AT_FDCWD, "u/f600", t_, 0); }));
    T("uid1000 unlink in sticky dir (root's)", unlink("u/sticky/roots"));
    T("uid1000 create in sticky dir", ({ int f_ = open("u/sticky/mine", O_WRONLY | O_CREAT, 0600); if (f_ >= 0) close(f_); f_ < 0 ? -1 : 0; }));
    T("uid1000 rename in sticky dir", rename("u/sticky/roots", "u/sticky/x"));
    T("uid1000 unlink own in sticky dir", unlink("u/sticky/mine"));
    T("uid1000 mknod chr", mknod("u/chr", S_IFCHR | 0600, makedev(1, 3)));
    T("uid1000 setxattr trusted", setxattr("u/mine", "trusted.x", "1", 1, 0));
    put("u/umine", "x");
    ST("uid1000 lstat new file", "u/umine");
    fflush(stdout);
    _exit(0);
  }
  int status = 0;
  waitpid(pid, &status, 0);
  n_case += 200; /* the child's cases are numbered in its own copy */
  printf("--- child status %d\n", WIFEXITED(status) ? WEXITSTATUS(status) : -1);
  system("rm -rf u");
}

/* POSIX ACLs through system.posix_acl_access/_default in the xattr format
 * (version 2; the entries of each ACL in canonical order). */
#define A_USER_OBJ 0x01
#define A_USER 0x02
#define A_GROUP_OBJ 0x04
#define A_GROUP 0x08
#define A_MASK 0x10
#define A_OTHER 0x20
static size_t acl_make(unsigned char *b, const unsigned (*e)[3], int n) {
  uint32_t v = 2;
  memcpy(b, &v, 4);
  for (int i = 0; i < n; ++i) {
    uint16_t tag = (uint16_t)e[i][0], perm = (uint16_t)e[i][1];
    uint32_t id = e[i][2];
    memcpy(b + 4 + 8 * i, &tag, 2);
    memcpy(b + 6 + 8 * i, &perm, 2);
    memcpy(b + 8 + 8 * i, &id, 4);
  }
  return 4 + 8 * (size_t)n;
}
#define ACL_SET(name, path, which, ...)                                                   \
  do {                                                                                    \
    static const unsigned e_[][3] = {__VA_ARGS__};                                        \
    unsigned char b_[4 + 8 * 16];                                                         \
    size_t n_ = acl_make(b_, e_, (int)(sizeof e_ / sizeof e_[0]));                        \
    T(name, setxattr(path, which, b_, n_, 0));                                            \
  } while (0)
/* getxattr of an ACL: its entries as text in the case's name. */
static void acl_show(const char *name, const char *path, const char *which) {
  unsigned char b[4 + 8 * 32];
  errno = 0;
  ssize_t n = getxattr(path, which, b, sizeof b);
  if (n < 0) {
    report(name, -1, errno);
    return;
  }
  char t[512];
  int o = snprintf(t, sizeof t, "%s [v%u", name, (unsigned)b[0]);
  for (ssize_t i = 4; i + 8 <= n && o < (int)sizeof t - 32; i += 8) {
    uint16_t tag, perm;
    uint32_t id;
    memcpy(&tag, b + i, 2);
    memcpy(&perm, b + i + 2, 2);
    memcpy(&id, b + i + 4, 4);
    o += snprintf(t + o, sizeof t - (size_t)o, " %x:%o:%d", tag, perm, (int)id);
  }
  snprintf(t + o, sizeof t - (size_t)o, "]");
  report(t, n, 0);
}
#define U_ (unsigned)-1

static void acls(void) {
  mkdir("a", 0777);
  chmod("a", 0777);
  /* An access ACL with a named user and a mask; the mode follows it. */
  put("a/f", "data");
  chmod("a/f", 0600);
  ACL_SET("acl set access (user 1000 r, mask r)", "a/f", "system.posix_acl_access",
          {A_USER_OBJ, 6, U_}, {A_USER, 4, 1000}, {A_GROUP_OBJ, 0, U_}, {A_MASK, 4, U_}, {A_OTHER, 0, U_});
  ST("acl mode after set", "a/f");
  acl_show("acl get access", "a/f", "system.posix_acl_access");
  T("acl getxattr size only", getxattr("a/f", "system.posix_acl_access", NULL, 0));
  T("acl getxattr default of a file", getxattr("a/f", "system.posix_acl_default", NULL, 0));
  T("acl chmod 0754", chmod("a/f", 0754));
  ST("acl mode after chmod", "a/f");
  acl_show("acl get access after chmod", "a/f", "system.posix_acl_access");
  /* An ACL the mode expresses: not stored, the mode takes its bits. */
  put("a/e", "x");
  ACL_SET("acl set equivalent", "a/e", "system.posix_acl_access", {A_USER_OBJ, 7, U_}, {A_GROUP_OBJ, 5, U_}, {A_OTHER, 1, U_});
  ST("acl mode after equivalent", "a/e");
  T("acl equivalent not stored", getxattr("a/e", "system.posix_acl_access", NULL, 0));
  /* Malformed ones. */
  ACL_SET("acl set out of order", "a/e", "system.posix_acl_access", {A_GROUP_OBJ, 5, U_}, {A_USER_OBJ, 7, U_}, {A_OTHER, 1, U_});
  ACL_SET("acl set named without mask", "a/e", "system.posix_acl_access", {A_USER_OBJ, 7, U_}, {A_USER, 7, 5}, {A_GROUP_OBJ, 5, U_}, {A_OTHER, 1, U_});
  ACL_SET("acl set perm past rwx", "a/e", "system.posix_acl_access", {A_USER_OBJ, 8, U_}, {A_GROUP_OBJ, 5, U_}, {A_OTHER, 1, U_});
  ACL_SET("acl set default on a file", "a/e", "system.posix_acl_default", {A_USER_OBJ, 7, U_}, {A_GROUP_OBJ, 5, U_}, {A_OTHER, 1, U_});
  T("acl set bad version", setxattr("a/e", "system.posix_acl_access", "\1\0\0\0", 4, 0));
  T("acl set short", setxattr("a/e", "system.posix_acl_access", "\2\0", 2, 0));
  symlink("f", "a/l");
  T("acl lsetxattr on a symlink", ({ unsigned char b_[28]; static const unsigned e_[][3] = {{A_USER_OBJ, 7, U_}, {A_GROUP_OBJ, 5, U_}, {A_OTHER, 1, U_}}; size_t n_ = acl_make(b_, e_, 3); lsetxattr("a/l", "system.posix_acl_access", b_, n_, 0); }));
  T("acl lgetxattr on a symlink", lgetxattr("a/l", "system.posix_acl_access", NULL, 0));
  /* Default ACLs: what files, directories, FIFOs and symlinks made in the
   * directory get, under two umasks. */
  mkdir("a/d", 0755);
  ACL_SET("acl set default on a dir", "a/d", "system.posix_acl_default",
          {A_USER_OBJ, 7, U_}, {A_USER, 6, 1000}, {A_GROUP_OBJ, 5, U_}, {A_GROUP, 7, 1000}, {A_MASK, 7, U_}, {A_OTHER, 1, U_});
  acl_show("acl get default of the dir", "a/d", "system.posix_acl_default");
  T("acl dir has no access ACL", getxattr("a/d", "system.posix_acl_access", NULL, 0));
  static const mode_t masks[] = {022, 077};
  for (int m = 0; m < 2; ++m) {
    char p[64], nm[128];
    umask(masks[m]);
    snprintf(p, sizeof p, "a/d/file%o", masks[m]);
    TFD((snprintf(nm, sizeof nm, "acl create 0666 umask %o", masks[m]), nm), open(p, O_WRONLY | O_CREAT, 0666));
    ST((snprintf(nm, sizeof nm, "acl new file, umask %o", masks[m]), nm), p);
    acl_show((snprintf(nm, sizeof nm, "acl new file's access ACL, umask %o", masks[m]), nm), p, "system.posix_acl_access");
    T((snprintf(nm, sizeof nm, "acl new file has no default, umask %o", masks[m]), nm), getxattr(p, "system.posix_acl_default", NULL, 0));
    snprintf(p, sizeof p, "a/d/dir%o", masks[m]);
    T((snprintf(nm, sizeof nm, "acl mkdir 0777 umask %o", masks[m]), nm), mkdir(p, 0777));
    ST((snprintf(nm, sizeof nm, "acl new dir, umask %o", masks[m]), nm), p);
    acl_show((snprintf(nm, sizeof nm, "acl new dir's access ACL, umask %o", masks[m]), nm), p, "system.posix_acl_access");
    acl_show((snprintf(nm, sizeof nm, "acl new dir's default ACL, umask %o", masks[m]), nm), p, "system.posix_acl_default");
    snprintf(p, sizeof p, "a/d/fifo%o", masks[m]);
    T((snprintf(nm, sizeof nm, "acl mkfifo 0640 umask %o", masks[m]), nm), mknod(p, S_IFIFO | 0640, 0));
    ST((snprintf(nm, sizeof nm, "acl new fifo, umask %o", masks[m]), nm), p);
    acl_show((snprintf(nm, sizeof nm, "acl new fifo's access ACL, umask %o", masks[m]), nm), p, "system.posix_acl_access");
    snprintf(p, sizeof p, "a/d/lnk%o", masks[m]);
    T((snprintf(nm, sizeof nm, "acl symlink umask %o", masks[m]), nm), symlink("file22", p));
    ST((snprintf(nm, sizeof nm, "acl new symlink, umask %o", masks[m]), nm), p);
    /* Without a default ACL: only the umask. */
    snprintf(p, sizeof p, "a/plain%o", masks[m]);
    TFD((snprintf(nm, sizeof nm, "acl create outside umask %o", masks[m]), nm), open(p, O_WRONLY | O_CREAT, 0666));
    ST((snprintf(nm, sizeof nm, "acl file outside, umask %o", masks[m]), nm), p);
  }
  umask(022);
  /* A minimal default ACL: files get no access ACL, only masked modes. */
  mkdir("a/m", 0755);
  ACL_SET("acl set minimal default", "a/m", "system.posix_acl_default", {A_USER_OBJ, 7, U_}, {A_GROUP_OBJ, 0, U_}, {A_OTHER, 0, U_});
  TFD("acl create in minimal-default dir", open("a/m/f", O_WRONLY | O_CREAT, 0666));
  ST("acl file in minimal-default dir", "a/m/f");
  T("acl file in minimal-default dir has no ACL", getxattr("a/m/f", "system.posix_acl_access", NULL, 0));
  T("acl remove default", removexattr("a/m", "system.posix_acl_default"));
  T("acl remove absent default", removexattr("a/m", "system.posix_acl_default"));
  T("acl remove access", removexattr("a/f", "system.posix_acl_access"));
  ST("acl mode after removing the access ACL", "a/f");
  ACL_SET("acl set access again", "a/f", "system.posix_acl_access",
          {A_USER_OBJ, 6, U_}, {A_USER, 6, 1000}, {A_GROUP_OBJ, 0, U_}, {A_GROUP, 4, 1000}, {A_MASK, 6, U_}, {A_OTHER, 0, U_});
  put("a/g", "data");
  chmod("a/g", 0600);
  ACL_SET("acl set group 1000 r", "a/g", "system.posix_acl_access",
          {A_USER_OBJ, 6, U_}, {A_GROUP_OBJ, 0, U_}, {A_GROUP, 4, 1000}, {A_MASK, 4, U_}, {A_OTHER, 0, U_});
  put("a/masked", "data");
  chmod("a/masked", 0600);
  ACL_SET("acl set user 1000 rw masked to r", "a/masked", "system.posix_acl_access",
          {A_USER_OBJ, 6, U_}, {A_USER, 6, 1000}, {A_GROUP_OBJ, 0, U_}, {A_MASK, 4, U_}, {A_OTHER, 0, U_});
  mkdir("a/ud", 0700);
  ACL_SET("acl set dir user 1000 rwx", "a/ud", "system.posix_acl_access",
          {A_USER_OBJ, 7, U_}, {A_USER, 7, 1000}, {A_GROUP_OBJ, 0, U_}, {A_MASK, 7, U_}, {A_OTHER, 0, U_});
  ACL_SET("acl set dir default for the user", "a/ud", "system.posix_acl_default",
          {A_USER_OBJ, 7, U_}, {A_USER, 7, 1000}, {A_GROUP_OBJ, 0, U_}, {A_MASK, 7, U_}, {A_OTHER, 0, U_});
  fflush(stdout);
  pid_t pid = fork();
  if (pid == 0) {
    if (setgroups(0, NULL) || setgid(1000) || setuid(1000)) _exit(3);
    TFD("acl uid1000 read (named user rw)", open("a/f", O_RDONLY));
    TFD("acl uid1000 write (named user rw)", open("a/f", O_WRONLY));
    T("acl uid1000 access X_OK", access("a/f", X_OK));
    TFD("acl uid1000 read (named group r)", open("a/g", O_RDONLY));
    TFD("acl uid1000 write (named group r)", open("a/g", O_WRONLY));
    TFD("acl uid1000 read (masked)", open("a/masked", O_RDONLY));
    TFD("acl uid1000 write (masked to r)", open("a/masked", O_WRONLY));
    TFD("acl uid1000 create in dir with user rwx", open("a/ud/mine", O_WRONLY | O_CREAT, 0644));
    ST("acl uid1000 own file in dir with default", "a/ud/mine");
    acl_show("acl uid1000 own file's access ACL", "a/ud/mine", "system.posix_acl_access");
    T("acl uid1000 set ACL on own file", ({ unsigned char b_[28]; static const unsigned e_[][3] = {{A_USER_OBJ, 6, U_}, {A_GROUP_OBJ, 4, U_}, {A_OTHER, 4, U_}}; size_t n_ = acl_make(b_, e_, 3); setxattr("a/ud/mine", "system.posix_acl_access", b_, n_, 0); }));
    ST("acl uid1000 own file after", "a/ud/mine");
    T("acl uid1000 set ACL on root's file", ({ unsigned char b_[28]; static const unsigned e_[][3] = {{A_USER_OBJ, 6, U_}, {A_GROUP_OBJ, 4, U_}, {A_OTHER, 4, U_}}; size_t n_ = acl_make(b_, e_, 3); setxattr("a/f", "system.posix_acl_access", b_, n_, 0); }));
    T("acl uid1000 unlink in dir with user rwx", unlink("a/ud/mine"));
    TFD("acl uid1000 opendir 0700 dir with user rwx", open("a/ud", O_RDONLY | O_DIRECTORY));
    fflush(stdout);
    _exit(0);
  }
  int status = 0;
  waitpid(pid, &status, 0);
  n_case += 100;
  printf("--- acl child status %d\n", WIFEXITED(status) ? WEXITSTATUS(status) : -1);
  system("rm -rf a");
}

int main(int argc, char **argv) {
  if (argc != 2 || chdir(argv[1]) != 0) {
    fprintf(stderr, "usage: conformance DIR\n");
    return 2;
  }
  setvbuf(stdout, NULL, _IOLBF, 0);
  umask(022);
  per_object();
  rename_matrix();
  names_and_links();
  data_ops();
  inode_flags();
  immutable_append();
  kill_privs();
  more_calls();
  mkdir("u", 0755);
  as_user();
  acls();
  printf("=== %d cases before the uid 1000 parts\n", n_case - 400);
  return 0;
}
