// f2fscore-fuse: mount an F2FS volume in user space, as fuse2fs does for
// ext2/3/4. A thin front end over libfuse3's low-level API: each request is
// one call of f2fscore::Writer (whose lock serialises them), the FUSE node
// id is the F2FS inode number (the root, FUSE_ROOT_ID, is the superblock's
// root_ino), and errors carry the errno Linux f2fs returns (docs/fuse.md).
#ifndef _FILE_OFFSET_BITS
#define _FILE_OFFSET_BITS 64
#endif
#define FUSE_USE_VERSION FUSE_MAKE_VERSION(3, 12)
#include <fuse_lowlevel.h>

#include <CLI/CLI.hpp>
#include <atomic>
#include <cerrno>
#include <csignal>
#include <cstdio>
#include <cstring>
#include <ctime>
#include <dirent.h>
#include <execinfo.h>
#include <fcntl.h>
#include <fstream>
#include <linux/fs.h>
#include <linux/fsverity.h>
#include <memory>
#include <mutex>
#include <unordered_map>
#include <string>
#include <sys/file.h>
#include <syslog.h>
#include <sys/stat.h>
#include <sys/statvfs.h>
#include <sys/sysmacros.h>
#include <sys/xattr.h>
#include <sys/types.h>
#include <sys/wait.h>
#include <unistd.h>
#include <vector>

#include "f2fscore/disk/node.hpp"
#include "f2fscore/fscrypt.hpp"
#include "f2fscore/iostat.hpp"
#include "f2fscore/tools/common.hpp"
#include "f2fscore/uring_device.hpp"
#include "f2fscore/writer.hpp"
#include "fuse_options.hpp"
#include "request_loop.hpp"

namespace {

namespace ftools = f2fscore::tools;
using f2fscore::Errc;
using f2fscore::Error;
using f2fscore::nid_t;
using f2fscore::Writer;

constexpr int kExitOk = ftools::exit_code::ok, kExitFailure = ftools::exit_code::failure,
              kExitUsage = ftools::exit_code::usage;

const char* kExitHelp =
    "Mount options (-o, comma-separated): ro, rw, ipu_policy=N, min_ipu_util=N, min_fsync_blocks=N,\n"
    "fdatasync_in_place, cache_mib=N, checkpoint_interval=S, discard, nodiscard, background_gc=on|off,\n"
    "compress_algorithm=lzo|lz4|zstd|lzo-rle, compress_log_size=N, compress_chksum, compress_extension=EXT,\n"
    "nocompress_extension=EXT, compress_mode=fs|user (volumes with the compression feature),\n"
    "acl, noacl, iostat, writeback_cache, nodirect_large_writes, attr_timeout=S, entry_timeout=S, max_write=BYTES, and FUSE's allow_other,\n"
    "allow_root, auto_unmount, fsname=, subtype=, dev, nodev, suid, nosuid, exec, noexec, atime, noatime.\n"
    "The daemon goes to the background once mounted (-f keeps it in the foreground); fusermount3 -u,\n"
    "umount, SIGTERM and SIGINT unmount it, writing a checkpoint.\n"
    "Exit status: 0 mounted (in the background) or, in the foreground, unmounted cleanly; 1 failure (no\n"
    "such device, not F2FS, a volume the writer refuses, a device in use, the mount refused, the final\n"
    "checkpoint failed: each is named); 2 usage error.";

// ---- The mounted volume ----------------------------------------------------------------

struct Fs {
  Writer* w = nullptr;
  nid_t root = 3;
  bool read_only = false;
  double attr_timeout = 1.0, entry_timeout = 1.0;
  bool writeback_cache = false;
  std::uint32_t max_write = 1u << 20;
  bool acl = true;         // the acl mount option
  bool posix_acl = false;  // the kernel evaluates ACLs (FUSE_CAP_POSIX_ACL granted)
  std::uint32_t dio_align = 512;  ///< the device's logical block size: O_DIRECT's alignment
  fuse_session* se = nullptr;  ///< for notifications (set before the loop runs)
  bool compress_user = false;  ///< compress_mode=user
  /// Open handles with write access per inode (the kernel's i_writecount,
  /// which F2FS_IOC_RELEASE_COMPRESS_BLOCKS checks).
  std::mutex writers_mu;
  std::unordered_map<nid_t, int> writers;
  void add_writer(nid_t n, int flags, int delta) {
    if ((flags & O_ACCMODE) == O_RDONLY) return;
    std::lock_guard<std::mutex> lock(writers_mu);
    if ((writers[n] += delta) <= 0) writers.erase(n);
  }
  int writer_count(nid_t n) {
    std::lock_guard<std::mutex> lock(writers_mu);
    auto it = writers.find(n);
    return it == writers.end() ? 0 : it->second;
  }
};

Fs g_fs;

nid_t to_nid(fuse_ino_t ino) { return ino == FUSE_ROOT_ID ? g_fs.root : static_cast<nid_t>(ino); }
fuse_ino_t to_fuse(nid_t n) { return n == g_fs.root ? FUSE_ROOT_ID : static_cast<fuse_ino_t>(n); }

// The errno of a writer error: errno_of() (result.hpp): the one the
// namespace calls name, else by class.
template <typename R>
int err(const R& r) {
  return errno_of(r.error());
}

struct timespec ts(const f2fscore::Timespec& t) {
  struct timespec o {};
  o.tv_sec = static_cast<time_t>(t.sec);
  o.tv_nsec = static_cast<long>(t.nsec);
  return o;
}

// struct stat as Linux f2fs fills it (f2fs_getattr(), generic_fillattr()):
// st_blocks in 512-byte units without the inode block (f2fs_iget():
// SECTOR_FROM_BLOCK(i_blocks - 1)), st_blksize 4096.
void fill_stat(const f2fscore::WriterStat& s, struct stat* st) {
  std::memset(st, 0, sizeof *st);
  st->st_ino = s.ino;
  st->st_mode = s.mode;
  st->st_nlink = s.links;
  st->st_uid = s.uid;
  st->st_gid = s.gid;
  st->st_size = static_cast<off_t>(s.size);
  st->st_blocks = static_cast<blkcnt_t>(s.blocks > 0 ? (s.blocks - 1) * 8 : 0);
  st->st_blksize = 4096;
  st->st_atim = ts(s.atime);
  st->st_mtim = ts(s.mtime);
  st->st_ctim = ts(s.ctime);
  if (S_ISCHR(s.mode) || S_ISBLK(s.mode)) {
    // new_decode_dev(): major in bits 8-19, minor in bits 0-7 and 20-31.
    const unsigned maj = (s.rdev & 0xfff00u) >> 8;
    const unsigned mnr = (s.rdev & 0xffu) | ((s.rdev >> 12) & 0xfff00u);
    st->st_rdev = makedev(maj, mnr);
  }
}

// new_encode_dev() of a host dev_t.
std::uint32_t encode_dev(dev_t d) {
  const unsigned maj = major(d), mnr = minor(d);
  return (mnr & 0xffu) | (maj << 8) | ((mnr & ~0xffu) << 12);
}

bool reply_entry(fuse_req_t req, nid_t ino) {
  auto st = g_fs.w->stat(ino);
  if (!st) {
    fuse_reply_err(req, err(st));
    return false;
  }
  fuse_entry_param e{};
  e.ino = to_fuse(ino);
  e.generation = 0;
  fill_stat(*st, &e.attr);
  e.attr_timeout = g_fs.attr_timeout;
  e.entry_timeout = g_fs.entry_timeout;
  fuse_reply_entry(req, &e);
  return true;
}

f2fscore::Owner owner_of(fuse_req_t req) {
  const fuse_ctx* c = fuse_req_ctx(req);
  f2fscore::Owner o{static_cast<std::uint32_t>(c->uid), static_cast<std::uint32_t>(c->gid)};
  // With ACLs the kernel leaves the umask to us (FUSE_CAP_DONT_MASK): the
  // writer applies it unless the parent has a default ACL.
  if (g_fs.posix_acl) o.umask = static_cast<std::uint16_t>(c->umask & 0777);
  return o;
}

// ---- Operations ------------------------------------------------------------------------------

void op_init(void*, fuse_conn_info* conn) {
  if (conn->capable & FUSE_CAP_READDIRPLUS) conn->want |= FUSE_CAP_READDIRPLUS;
  conn->want &= ~static_cast<unsigned>(FUSE_CAP_READDIRPLUS_AUTO);
  if (conn->capable & FUSE_CAP_ATOMIC_O_TRUNC) conn->want |= FUSE_CAP_ATOMIC_O_TRUNC;
  if (g_fs.writeback_cache && (conn->capable & FUSE_CAP_WRITEBACK_CACHE)) conn->want |= FUSE_CAP_WRITEBACK_CACHE;
  // The kernel clears set-user-ID and set-group-ID bits itself (a write,
  // truncation or chown: notify_change() sends the new mode), but for an
  // open with O_TRUNC (op_open()).
  conn->want &= ~static_cast<unsigned>(FUSE_CAP_HANDLE_KILLPRIV);
  if (conn->capable & FUSE_CAP_PARALLEL_DIROPS) conn->want |= FUSE_CAP_PARALLEL_DIROPS;
  // Every change to a file's data comes through this kernel (the daemon
  // holds the image exclusively, and fallocate, copy_file_range, truncation
  // and O_DIRECT writes drop the pages they change themselves): the kernel's
  // page cache is never stale. With FUSE_CAP_AUTO_INVAL_DATA (libfuse's
  // default) the kernel would drop a file's whole page cache whenever an
  // attribute reply shows an mtime other than its own, i.e. at the first
  // stat after every write.
  conn->want &= ~static_cast<unsigned>(FUSE_CAP_AUTO_INVAL_DATA);
  // POSIX ACLs as Linux f2fs with its default acl option: the kernel
  // evaluates them (default_permissions) from system.posix_acl_*, which
  // the writer keeps in f2fs's format and updates on chmod; a new inode
  // inherits its directory's default ACL (posix_acl_create()), so the
  // umask comes with each request instead of being applied by the kernel.
  if (g_fs.acl && (conn->capable & FUSE_CAP_POSIX_ACL) && (conn->capable & FUSE_CAP_DONT_MASK)) {
    conn->want |= FUSE_CAP_POSIX_ACL | FUSE_CAP_DONT_MASK;
    g_fs.posix_acl = true;
  }
  // ioctls on directories too (lsattr and chattr of a directory).
  if (conn->capable & FUSE_CAP_IOCTL_DIR) conn->want |= FUSE_CAP_IOCTL_DIR;
  conn->max_write = g_fs.max_write;
  conn->max_readahead = std::max<unsigned>(conn->max_readahead, 1u << 20);
  conn->time_gran = 1;
}

void op_lookup(fuse_req_t req, fuse_ino_t parent, const char* name) {
  auto ino = g_fs.w->lookup_at(to_nid(parent), name);
  if (!ino) {
    if (ino.error().code == Errc::not_found && errno_of(ino.error()) == ENOENT) {
      // A negative entry: every change of this volume goes through this
      // kernel, which drops the entry when the name is made.
      fuse_entry_param e{};
      e.ino = 0;
      e.entry_timeout = g_fs.entry_timeout;
      fuse_reply_entry(req, &e);
      return;
    }
    fuse_reply_err(req, err(ino));
    return;
  }
  reply_entry(req, *ino);
}

void op_getattr(fuse_req_t req, fuse_ino_t ino, fuse_file_info*) {
  auto st = g_fs.w->stat(to_nid(ino));
  if (!st) return (void)fuse_reply_err(req, err(st));
  struct stat s;
  fill_stat(*st, &s);
  fuse_reply_attr(req, &s, g_fs.attr_timeout);
}

f2fscore::Timespec now_ts() {
  struct timespec t {};
  clock_gettime(CLOCK_REALTIME, &t);
  return {static_cast<std::uint64_t>(t.tv_sec), static_cast<std::uint32_t>(t.tv_nsec)};
}

// Whether the caller of `req` has CAP_FSETID (capable(CAP_FSETID), which
// should_remove_suid() in fs/inode.c asks before a write or truncation
// clears the bits): bit 4 of CapEff in /proc/PID/status; where that cannot
// be read (no pid, /proc of another pid namespace), whether it is uid 0.
bool caller_has_fsetid(fuse_req_t req) {
  const fuse_ctx* c = fuse_req_ctx(req);
  if (c->pid > 0) {
    char path[64];
    std::snprintf(path, sizeof path, "/proc/%d/status", static_cast<int>(c->pid));
    if (FILE* f = std::fopen(path, "re")) {
      char line[256];
      unsigned long long eff = 0;
      bool found = false;
      while (!found && std::fgets(line, sizeof line, f)) found = std::sscanf(line, "CapEff: %llx", &eff) == 1;
      std::fclose(f);
      if (found) return (eff >> 4) & 1u;  // CAP_FSETID is capability 4
    }
  }
  return c->uid == 0;
}

// The mode without the bits Linux clears: S_ISUID, and S_ISGID where the
// group may execute (notify_change() with ATTR_KILL_SUID and ATTR_KILL_SGID,
// fs/attr.c); `mode` when there is nothing to clear.
std::uint16_t killed_mode(std::uint16_t mode) {
  std::uint16_t m = mode & ~static_cast<std::uint16_t>(S_ISUID);
  if ((mode & (S_ISGID | S_IXGRP)) == (S_ISGID | S_IXGRP)) m &= ~static_cast<std::uint16_t>(S_ISGID);
  return m;
}

// An open with O_TRUNC by a caller without CAP_FSETID clears the bits on
// a regular file, empty or not (handle_truncate() and do_truncate() in
// fs/namei.c and fs/open.c). The kernel computes the new mode but sends
// nothing for ATTR_OPEN when the daemon truncates at the open
// (fuse_do_setattr() with atomic O_TRUNC), so the daemon clears them here.
// `mode`: the inode's (type and permission bits).
int kill_privs_at_open(fuse_req_t req, nid_t ino, std::uint32_t mode) {
  const auto bits = static_cast<std::uint16_t>(mode & 07777);
  if (!S_ISREG(mode) || killed_mode(bits) == bits || caller_has_fsetid(req)) return 0;
  f2fscore::SetAttr a;
  a.mode = killed_mode(bits);
  a.ctime = now_ts();
  auto r = g_fs.w->setattr(ino, a);
  return r ? 0 : err(r);
}

void op_setattr(fuse_req_t req, fuse_ino_t fino, struct stat* attr, int to_set, fuse_file_info*) {
  const nid_t ino = to_nid(fino);
  if (to_set & FUSE_SET_ATTR_SIZE) {
    auto st = g_fs.w->stat(ino);
    if (!st) return (void)fuse_reply_err(req, err(st));
    if (S_ISDIR(st->mode)) return (void)fuse_reply_err(req, EISDIR);
    if (!S_ISREG(st->mode)) return (void)fuse_reply_err(req, EINVAL);
    if (auto r = g_fs.w->truncate(ino, static_cast<std::uint64_t>(attr->st_size)); !r)
      return (void)fuse_reply_err(req, err(r));
  }
  f2fscore::SetAttr a;
  if (to_set & FUSE_SET_ATTR_MODE) a.mode = static_cast<std::uint16_t>(attr->st_mode & 07777);
  if (to_set & FUSE_SET_ATTR_UID) a.uid = static_cast<std::uint32_t>(attr->st_uid);
  if (to_set & FUSE_SET_ATTR_GID) a.gid = static_cast<std::uint32_t>(attr->st_gid);
  const f2fscore::Timespec now = now_ts();
  auto from = [](const struct timespec& t) {
    return f2fscore::Timespec{static_cast<std::uint64_t>(t.tv_sec), static_cast<std::uint32_t>(t.tv_nsec)};
  };
  if (to_set & FUSE_SET_ATTR_ATIME_NOW) a.atime = now;
  else if (to_set & FUSE_SET_ATTR_ATIME) a.atime = from(attr->st_atim);
  if (to_set & FUSE_SET_ATTR_MTIME_NOW) a.mtime = now;
  else if (to_set & FUSE_SET_ATTR_MTIME) a.mtime = from(attr->st_mtim);
  if (to_set & FUSE_SET_ATTR_CTIME) a.ctime = from(attr->st_ctim);
  else a.ctime = now;
  // Times the caller gave (not UTIME_NOW): ATTR_ATIME_SET / ATTR_MTIME_SET,
  // which an append-only inode refuses.
  a.times_now = !((to_set & FUSE_SET_ATTR_ATIME) && !(to_set & FUSE_SET_ATTR_ATIME_NOW)) &&
                !((to_set & FUSE_SET_ATTR_MTIME) && !(to_set & FUSE_SET_ATTR_MTIME_NOW));
  if (to_set & FUSE_SET_ATTR_SIZE) {
    // truncate(2) and ftruncate(2) change mtime and ctime (do_truncate()
    // passes ATTR_MTIME | ATTR_CTIME; f2fs_setattr() also when the size
    // does not change).
    if (!a.mtime) a.mtime = now;
  }
  if (auto r = g_fs.w->setattr(ino, a); !r) return (void)fuse_reply_err(req, err(r));
  auto st = g_fs.w->stat(ino);
  if (!st) return (void)fuse_reply_err(req, err(st));
  struct stat s;
  fill_stat(*st, &s);
  fuse_reply_attr(req, &s, g_fs.attr_timeout);
}

void op_readlink(fuse_req_t req, fuse_ino_t ino) {
  auto t = g_fs.w->readlink(to_nid(ino));
  if (!t) return (void)fuse_reply_err(req, err(t));
  fuse_reply_readlink(req, t->c_str());
}

void make_reply(fuse_req_t req, const f2fscore::Result<nid_t>& r) {
  if (!r) return (void)fuse_reply_err(req, err(r));
  reply_entry(req, *r);
}

void op_mknod(fuse_req_t req, fuse_ino_t parent, const char* name, mode_t mode, dev_t rdev) {
  make_reply(req, g_fs.w->mknod_at(to_nid(parent), name, static_cast<std::uint16_t>(mode), encode_dev(rdev), owner_of(req)));
}

void op_mkdir(fuse_req_t req, fuse_ino_t parent, const char* name, mode_t mode) {
  make_reply(req, g_fs.w->mknod_at(to_nid(parent), name, static_cast<std::uint16_t>(S_IFDIR | (mode & 07777)), 0,
                                   owner_of(req)));
}

void op_symlink(fuse_req_t req, const char* target, fuse_ino_t parent, const char* name) {
  make_reply(req, g_fs.w->symlink_at(to_nid(parent), name, target, owner_of(req)));
}

void op_unlink(fuse_req_t req, fuse_ino_t parent, const char* name) {
  auto r = g_fs.w->unlink_at(to_nid(parent), name);
  fuse_reply_err(req, r ? 0 : err(r));
}

void op_rmdir(fuse_req_t req, fuse_ino_t parent, const char* name) {
  auto r = g_fs.w->rmdir_at(to_nid(parent), name);
  fuse_reply_err(req, r ? 0 : err(r));
}

void op_rename(fuse_req_t req, fuse_ino_t parent, const char* name, fuse_ino_t newparent, const char* newname,
               unsigned int flags) {
  if (flags & ~static_cast<unsigned>(RENAME_NOREPLACE | RENAME_EXCHANGE)) return (void)fuse_reply_err(req, EINVAL);
  std::uint32_t f = 0;
  if (flags & RENAME_NOREPLACE) f |= f2fscore::rename_flag::noreplace;
  if (flags & RENAME_EXCHANGE) f |= f2fscore::rename_flag::exchange;
  auto r = g_fs.w->rename_at(to_nid(parent), name, to_nid(newparent), newname, f);
  fuse_reply_err(req, r ? 0 : err(r));
}

void op_link(fuse_req_t req, fuse_ino_t ino, fuse_ino_t newparent, const char* newname) {
  const nid_t n = to_nid(ino);
  auto r = g_fs.w->link_at(n, to_nid(newparent), newname);
  if (!r) return (void)fuse_reply_err(req, err(r));
  reply_entry(req, n);
}

// Open files: the flags of open(2) kept in fh.
void op_open(fuse_req_t req, fuse_ino_t fino, fuse_file_info* fi) {
  const nid_t ino = to_nid(fino);
  auto st = g_fs.w->stat(ino);
  if (!st) return (void)fuse_reply_err(req, err(st));
  if (S_ISDIR(st->mode)) return (void)fuse_reply_err(req, EISDIR);
  const int acc = fi->flags & O_ACCMODE;
  if (g_fs.read_only && (acc != O_RDONLY || (fi->flags & O_TRUNC))) return (void)fuse_reply_err(req, EROFS);
  // may_open()'s checks of immutable and append-only inodes (the writer's
  // open()), then O_TRUNC.
  std::uint32_t of = static_cast<std::uint32_t>(acc);
  if (fi->flags & O_TRUNC) of |= f2fscore::open_flag::trunc;
  if (fi->flags & O_APPEND) of |= f2fscore::open_flag::append;
  if (auto r = g_fs.w->open(ino, of); !r) return (void)fuse_reply_err(req, err(r));
  // O_TRUNC truncates whatever the access mode, O_RDONLY too (do_open() in
  // fs/namei.c: the kernel checked write permission for it).
  if (fi->flags & O_TRUNC) {
    int e = kill_privs_at_open(req, ino, st->mode);
    if (e == 0 && S_ISREG(st->mode) && st->size != 0) {
      f2fscore::SetAttr a;
      a.mtime = now_ts();
      a.ctime = a.mtime;
      a.times_now = true;
      auto r = g_fs.w->truncate(ino, 0);
      if (r) r = g_fs.w->setattr(ino, a);
      if (!r) e = err(r);
    }
    if (e != 0) {
      (void)g_fs.w->release(ino);
      return (void)fuse_reply_err(req, e);
    }
  }
  fi->fh = static_cast<std::uint64_t>(fi->flags);
  fi->keep_cache = 1;  // every change of the data goes through this kernel's cache
  fi->noflush = 1;     // close has nothing to tell the daemon (the kernel ignores it with writeback_cache)
  g_fs.add_writer(ino, fi->flags, 1);
  if (fuse_reply_open(req, fi) == -ENOENT) {  // the opener was interrupted
    g_fs.add_writer(ino, fi->flags, -1);
    (void)g_fs.w->release(ino);
  }
}

void op_create(fuse_req_t req, fuse_ino_t parent, const char* name, mode_t mode, fuse_file_info* fi) {
  auto ino = g_fs.w->mknod_at(to_nid(parent), name, static_cast<std::uint16_t>(S_IFREG | (mode & 07777)), 0,
                              owner_of(req));
  if (!ino) return (void)fuse_reply_err(req, err(ino));
  auto st = g_fs.w->stat(*ino);
  if (!st) return (void)fuse_reply_err(req, err(st));
  if (auto r = g_fs.w->open(*ino); !r) return (void)fuse_reply_err(req, err(r));
  fuse_entry_param e{};
  e.ino = to_fuse(*ino);
  fill_stat(*st, &e.attr);
  e.attr_timeout = g_fs.attr_timeout;
  e.entry_timeout = g_fs.entry_timeout;
  fi->fh = static_cast<std::uint64_t>(fi->flags);
  fi->keep_cache = 1;
  fi->noflush = 1;
  g_fs.add_writer(*ino, fi->flags, 1);
  if (fuse_reply_create(req, &e, fi) == -ENOENT) {
    g_fs.add_writer(*ino, fi->flags, -1);
    (void)g_fs.w->release(*ino);
  }
}

// O_DIRECT as f2fs_should_use_dio() in fs/f2fs/file.c takes it: a file
// f2fs reads and writes through the page cache anyway (compressed or
// encrypted: f2fs_force_buffered_io()) takes any alignment; otherwise an
// offset or length off the device's logical block size is EINVAL (the
// kernel's direct I/O refuses it), and one on it but off 4 KiB goes through
// the page cache. The buffer's address, which Linux checks too, does not
// reach the daemon. Returns 0 or EINVAL.
int direct_io_misaligned(nid_t ino, std::uint64_t off, std::size_t size) {
  if ((off | size) % g_fs.dio_align == 0) return 0;
  auto fl = g_fs.w->get_flags(ino);  // FS_COMPR_FL has F2FS_COMPR_FL's value
  if (fl && (*fl & (f2fscore::disk::iflag::compr | f2fscore::fs_flag::encrypt))) return 0;
  return EINVAL;
}

void op_read(fuse_req_t req, fuse_ino_t ino, size_t size, off_t off, fuse_file_info* fi) {
  if ((static_cast<int>(fi->fh) & O_DIRECT) && size != 0)
    if (int e = direct_io_misaligned(to_nid(ino), static_cast<std::uint64_t>(off), size); e != 0)
      return (void)fuse_reply_err(req, e);
  // One buffer per worker thread, kept: a read of 128 KiB (the kernel's
  // read-ahead window) is at malloc's mmap threshold, and a fresh mapping
  // per request costs more than the copy.
  thread_local std::vector<std::uint8_t> buf;
  if (buf.size() < size) buf.resize(size);
  auto n = g_fs.w->read(to_nid(ino), static_cast<std::uint64_t>(off), {buf.data(), size});
  if (!n) return (void)fuse_reply_err(req, err(n));
  fuse_reply_buf(req, reinterpret_cast<const char*>(buf.data()), *n);
}

void op_write(fuse_req_t req, fuse_ino_t fino, const char* data, size_t size, off_t off, fuse_file_info* fi) {
  const nid_t ino = to_nid(fino);
  const int flags = static_cast<int>(fi->fh);
  std::uint64_t at = static_cast<std::uint64_t>(off);
  if ((flags & O_APPEND) && !g_fs.writeback_cache) {
    auto st = g_fs.w->stat(ino);
    if (!st) return (void)fuse_reply_err(req, err(st));
    at = st->size;
  }
  if ((flags & O_DIRECT) && size != 0)
    if (int e = direct_io_misaligned(ino, at, size); e != 0) return (void)fuse_reply_err(req, e);
  f2fscore::WriteFlags wf;
  // O_DIRECT goes straight to the device where the writer can (whole 4 KiB
  // blocks); sector-aligned ones go through the page cache, as f2fs falls
  // back to buffered I/O for them (direct_io_misaligned() refused the rest).
  wf.direct = (flags & O_DIRECT) && at % 4096 == 0 && size % 4096 == 0;
  // The request's buffer, its WRITE data on a page boundary: the writer's
  // cache keeps whole blocks of it as its pages rather than copying them.
  if (!wf.direct && at % 4096 == 0) wf.lend = f2fscore::fuse::lendable_buffer(data, size);
  auto n = g_fs.w->write(ino, at, {reinterpret_cast<const std::uint8_t*>(data), size}, wf);
  if (!n) return (void)fuse_reply_err(req, err(n));
  fuse_reply_write(req, *n);
}

void op_flush(fuse_req_t req, fuse_ino_t, fuse_file_info*) { fuse_reply_err(req, 0); }

void op_release(fuse_req_t req, fuse_ino_t ino, fuse_file_info* fi) {
  g_fs.add_writer(to_nid(ino), static_cast<int>(fi->fh), -1);
  auto r = g_fs.w->release(to_nid(ino));
  fuse_reply_err(req, r ? 0 : err(r));
}

void op_fsync(fuse_req_t req, fuse_ino_t ino, int datasync, fuse_file_info*) {
  if (g_fs.read_only) return (void)fuse_reply_err(req, 0);
  auto r = datasync ? g_fs.w->fdatasync(to_nid(ino)) : g_fs.w->fsync(to_nid(ino));
  fuse_reply_err(req, r ? 0 : err(r));
}

// Directories: the entries as they are at opendir (with "." and ".."),
// served by index; a name made or removed afterwards shows at the next
// opendir or rewinddir (POSIX leaves that open).
struct DirHandle {
  std::vector<f2fscore::WriterDirEntry> entries;
  bool loaded = false;  // the entries are read at the first readdir, not at opendir
  std::mutex mu;
};

unsigned dtype(std::uint8_t ft) {
  switch (ft) {
    case 1: return DT_REG;
    case 2: return DT_DIR;
    case 3: return DT_CHR;
    case 4: return DT_BLK;
    case 5: return DT_FIFO;
    case 6: return DT_SOCK;
    case 7: return DT_LNK;
    default: return DT_UNKNOWN;
  }
}

f2fscore::Status load_dir(nid_t dir, DirHandle& h) {
  auto list = g_fs.w->list_at(dir);
  if (!list) return f2fscore::make_error(list.error());
  auto up = g_fs.w->lookup_at(dir, "..");
  h.entries.clear();
  h.entries.push_back({".", dir, 2});
  h.entries.push_back({"..", up ? *up : dir, 2});
  for (auto& e : *list) h.entries.push_back(std::move(e));
  h.loaded = true;
  return {};
}

// A directory opened only to be fsynced (as SQLite and rename-based
// atomic writes do) costs no listing: the entries come at the first
// readdir.
void op_opendir(fuse_req_t req, fuse_ino_t ino, fuse_file_info* fi) {
  if (auto st = g_fs.w->stat(to_nid(ino)); !st) return (void)fuse_reply_err(req, err(st));
  auto h = std::make_unique<DirHandle>();
  fi->fh = reinterpret_cast<std::uint64_t>(h.release());
  fi->cache_readdir = 0;
  if (fuse_reply_open(req, fi) == -ENOENT) delete reinterpret_cast<DirHandle*>(fi->fh);
}

// The reply goes out after the handle's lock is released: once the kernel
// has it, the program may close the directory, and RELEASEDIR, on another
// worker thread, frees the handle.
void do_readdir(fuse_req_t req, fuse_ino_t ino, size_t size, off_t off, fuse_file_info* fi, bool plus) {
  auto* h = reinterpret_cast<DirHandle*>(fi->fh);
  std::vector<char> buf(size);
  size_t used = 0;
  std::unique_lock<std::mutex> lock(h->mu);
  if (off == 0 || !h->loaded) {
    // rewinddir(): the entries as they are now.
    if (auto r = load_dir(to_nid(ino), *h); !r) {
      lock.unlock();
      return (void)fuse_reply_err(req, err(r));
    }
  }
  for (std::size_t i = static_cast<std::size_t>(off); i < h->entries.size(); ++i) {
    const auto& e = h->entries[i];
    size_t n = 0;
    if (plus) {
      fuse_entry_param p{};
      const bool dot = e.name == "." || e.name == "..";
      if (!dot) {
        auto st = g_fs.w->stat(e.ino);
        if (!st) continue;  // removed since opendir
        fill_stat(*st, &p.attr);
        p.ino = to_fuse(e.ino);
        p.attr_timeout = g_fs.attr_timeout;
        p.entry_timeout = g_fs.entry_timeout;
      } else {
        p.attr.st_ino = e.ino;
        p.attr.st_mode = S_IFDIR;
      }
      n = fuse_add_direntry_plus(req, buf.data() + used, size - used, e.name.c_str(), &p, static_cast<off_t>(i + 1));
    } else {
      struct stat s {};
      s.st_ino = e.ino;
      s.st_mode = dtype(e.file_type) << 12;
      n = fuse_add_direntry(req, buf.data() + used, size - used, e.name.c_str(), &s, static_cast<off_t>(i + 1));
    }
    if (n > size - used) break;
    used += n;
  }
  lock.unlock();
  fuse_reply_buf(req, buf.data(), used);
}

void op_readdir(fuse_req_t req, fuse_ino_t ino, size_t size, off_t off, fuse_file_info* fi) {
  do_readdir(req, ino, size, off, fi, false);
}
void op_readdirplus(fuse_req_t req, fuse_ino_t ino, size_t size, off_t off, fuse_file_info* fi) {
  do_readdir(req, ino, size, off, fi, true);
}

void op_releasedir(fuse_req_t req, fuse_ino_t, fuse_file_info* fi) {
  delete reinterpret_cast<DirHandle*>(fi->fh);
  fuse_reply_err(req, 0);
}

void op_fsyncdir(fuse_req_t req, fuse_ino_t ino, int datasync, fuse_file_info*) {
  if (g_fs.read_only) return (void)fuse_reply_err(req, 0);
  auto r = datasync ? g_fs.w->fdatasync(to_nid(ino)) : g_fs.w->fsync(to_nid(ino));
  fuse_reply_err(req, r ? 0 : err(r));
}

void op_statfs(fuse_req_t req, fuse_ino_t) {
  const f2fscore::WriterStatfs s = g_fs.w->statfs();
  struct statvfs v {};
  v.f_bsize = 4096;
  v.f_frsize = 4096;
  v.f_blocks = s.blocks;
  v.f_bfree = s.bfree;
  v.f_bavail = s.bavail;
  v.f_files = s.files;
  v.f_ffree = s.ffree;
  v.f_favail = s.ffree;
  v.f_namemax = 255;
  fuse_reply_statfs(req, &v);
}

// ---- Extended attributes: the prefixes of fs/f2fs/xattr.c's handlers ----

struct XName {
  std::uint8_t index = 0;
  std::string name;
};

// The index and name of an xattr name; EOPNOTSUPP for a prefix f2fs has
// no handler for.
int split_xattr(const char* full, XName* out) {
  static const struct {
    const char* prefix;
    std::uint8_t index;
  } kPrefixes[] = {{"user.", 1}, {"trusted.", 4}, {"security.", 6}};
  const std::string_view n(full);
  for (const auto& p : kPrefixes) {
    const std::string_view pre(p.prefix);
    if (n.substr(0, pre.size()) == pre) {
      out->index = p.index;
      out->name = std::string(n.substr(pre.size()));
      if (out->name.empty()) return EINVAL;
      return 0;
    }
  }
  return EOPNOTSUPP;
}

const char* xattr_prefix(std::uint8_t index) {
  switch (index) {
    case 1: return "user.";
    case 4: return "trusted.";
    case 6: return "security.";
    default: return nullptr;
  }
}

// system.posix_acl_access and system.posix_acl_default while ACLs are on:
// the writer's full-name calls, which convert between the xattr format the
// kernel sends (posix_acl_xattr, version 2) and f2fs's on-disk one, and
// set the mode an access ACL gives (posix_acl_update_mode()).
bool acl_name(const char* name) {
  return g_fs.posix_acl && (std::strcmp(name, "system.posix_acl_access") == 0 ||
                            std::strcmp(name, "system.posix_acl_default") == 0);
}

void op_setxattr(fuse_req_t req, fuse_ino_t ino, const char* name, const char* value, size_t size, int flags) {
  if (acl_name(name)) {
    f2fscore::XattrSet how = f2fscore::XattrSet::any;
    if (flags & XATTR_CREATE) how = f2fscore::XattrSet::create;
    else if (flags & XATTR_REPLACE) how = f2fscore::XattrSet::replace;
    auto r = g_fs.w->setxattr_at(to_nid(ino), name, {reinterpret_cast<const std::uint8_t*>(value), size}, how);
    return (void)fuse_reply_err(req, r ? 0 : err(r));
  }
  XName x;
  if (int e = split_xattr(name, &x)) return (void)fuse_reply_err(req, e);
  if (std::strlen(name) > 255) return (void)fuse_reply_err(req, ERANGE);
  if (size > 65536) return (void)fuse_reply_err(req, E2BIG);
  f2fscore::XattrSet how = f2fscore::XattrSet::any;
  if (flags & XATTR_CREATE) how = f2fscore::XattrSet::create;
  else if (flags & XATTR_REPLACE) how = f2fscore::XattrSet::replace;
  auto r = g_fs.w->setxattr(to_nid(ino), x.index, x.name, {reinterpret_cast<const std::uint8_t*>(value), size}, how);
  if (!r) {
    const Error& e = r.error();
    // XATTR_REPLACE of a missing name: ENODATA; no room: E2BIG (6.1's
    // __f2fs_setxattr()); a name over 255 bytes: ERANGE.
    int code = errno_of(e);
    if (e.code == Errc::not_found) code = ENODATA;
    else if (e.code == Errc::no_space) code = E2BIG;
    else if (e.code == Errc::invalid_argument) code = ERANGE;
    return (void)fuse_reply_err(req, code);
  }
  fuse_reply_err(req, 0);
}

void op_getxattr(fuse_req_t req, fuse_ino_t ino, const char* name, size_t size) {
  XName x;
  f2fscore::Result<std::vector<std::uint8_t>> v;
  if (acl_name(name)) {
    v = g_fs.w->getxattr_at(to_nid(ino), name);
    if (!v) return (void)fuse_reply_err(req, err(v));
  } else {
    if (int e = split_xattr(name, &x)) return (void)fuse_reply_err(req, e == EINVAL ? ENODATA : e);
    v = g_fs.w->getxattr(to_nid(ino), x.index, x.name);
  }
  if (!v) {
    if (v.error().code == Errc::not_found) return (void)fuse_reply_err(req, ENODATA);
    if (v.error().code == Errc::invalid_argument) return (void)fuse_reply_err(req, ERANGE);
    return (void)fuse_reply_err(req, err(v));
  }
  if (size == 0) return (void)fuse_reply_xattr(req, v->size());
  if (size < v->size()) return (void)fuse_reply_err(req, ERANGE);
  fuse_reply_buf(req, reinterpret_cast<const char*>(v->data()), v->size());
}

void op_listxattr(fuse_req_t req, fuse_ino_t ino, size_t size) {
  auto l = g_fs.w->listxattr(to_nid(ino));
  if (!l) return (void)fuse_reply_err(req, err(l));
  // f2fs_listxattr(): trusted.* only for CAP_SYS_ADMIN (here: uid 0).
  const bool admin = fuse_req_ctx(req)->uid == 0;
  std::string out;
  for (const auto& it : *l) {
    if (g_fs.posix_acl && (it.index == 2 || it.index == 3) && it.name.empty()) {
      // posix_acl_xattr_list(): the ACLs by their full names.
      out += it.index == 2 ? "system.posix_acl_access" : "system.posix_acl_default";
      out.push_back('\0');
      continue;
    }
    const char* p = xattr_prefix(it.index);
    if (!p || (it.index == 4 && !admin)) continue;
    out += p;
    out += it.name;
    out.push_back('\0');
  }
  if (size == 0) return (void)fuse_reply_xattr(req, out.size());
  if (size < out.size()) return (void)fuse_reply_err(req, ERANGE);
  fuse_reply_buf(req, out.data(), out.size());
}

void op_removexattr(fuse_req_t req, fuse_ino_t ino, const char* name) {
  if (acl_name(name)) {
    auto r = g_fs.w->removexattr_at(to_nid(ino), name);
    return (void)fuse_reply_err(req, r ? 0 : err(r));
  }
  XName x;
  if (int e = split_xattr(name, &x)) return (void)fuse_reply_err(req, e == EINVAL ? ENODATA : e);
  auto r = g_fs.w->removexattr(to_nid(ino), x.index, x.name);
  if (!r) return (void)fuse_reply_err(req, r.error().code == Errc::not_found ? ENODATA : err(r));
  fuse_reply_err(req, 0);
}

void op_fallocate(fuse_req_t req, fuse_ino_t ino, int mode, off_t off, off_t len, fuse_file_info*) {
  if (off < 0 || len <= 0) return (void)fuse_reply_err(req, EINVAL);
  auto r = g_fs.w->fallocate(to_nid(ino), static_cast<std::uint32_t>(mode), static_cast<std::uint64_t>(off),
                             static_cast<std::uint64_t>(len));
  fuse_reply_err(req, r ? 0 : err(r));
}

// copy_file_range(2) through the writer: a read and a write per MiB.
void op_copy_file_range(fuse_req_t req, fuse_ino_t ino_in, off_t off_in, fuse_file_info*, fuse_ino_t ino_out,
                        off_t off_out, fuse_file_info*, size_t len, int flags) {
  if (flags != 0) return (void)fuse_reply_err(req, EINVAL);
  std::vector<std::uint8_t> buf(std::min<size_t>(len, 1u << 20));
  size_t done = 0;
  while (done < len) {
    const size_t want = std::min(buf.size(), len - done);
    auto n = g_fs.w->read(to_nid(ino_in), static_cast<std::uint64_t>(off_in) + done, {buf.data(), want});
    if (!n) return (void)fuse_reply_err(req, err(n));
    if (*n == 0) break;
    auto m = g_fs.w->write(to_nid(ino_out), static_cast<std::uint64_t>(off_out) + done, {buf.data(), *n});
    if (!m) return (void)(done ? fuse_reply_write(req, done) : fuse_reply_err(req, err(m)));
    done += *m;
    if (*n < want) break;
  }
  fuse_reply_write(req, done);
}

// SEEK_DATA / SEEK_HOLE as f2fs_seek_block() (fs/f2fs/file.c).
void op_lseek(fuse_req_t req, fuse_ino_t ino, off_t off, int whence, fuse_file_info*) {
  if (whence != SEEK_DATA && whence != SEEK_HOLE) return (void)fuse_reply_err(req, EINVAL);
  auto r = g_fs.w->seek_data(to_nid(ino), static_cast<std::uint64_t>(off), whence == SEEK_HOLE);
  if (!r) return (void)fuse_reply_err(req, err(r));
  fuse_reply_lseek(req, static_cast<off_t>(*r));
}

// ioctl(2): FS_IOC_GETFLAGS / FS_IOC_SETFLAGS and FS_IOC_FSGETXATTR /
// FS_IOC_FSSETXATTR (what
// chattr and lsattr use; the kernel's fuse_fileattr_get() and fuse_fileattr_set() send them
// with a 4-byte int on regular files and directories, and answer ENOTTY
// for other types themselves) and the f2fs ioctls the writer has
// (include/uapi/linux/f2fs.h); others ENOTTY, as __f2fs_ioctl()'s
// default. FS_IOC32_GETFLAGS / FS_IOC32_SETFLAGS reach a daemon only from
// a 64-bit caller (the kernel turns a 32-bit caller's into the fileattr
// calls), where Linux f2fs answers ENOTTY too. Privilege
// (CAP_LINUX_IMMUTABLE, CAP_SYS_ADMIN) is uid 0 of the request.
namespace ioc {
constexpr unsigned kGetFlags = 0x80086601u;    // FS_IOC_GETFLAGS, _IOR('f', 1, long)
constexpr unsigned kSetFlags = 0x40086602u;    // FS_IOC_SETFLAGS, _IOW('f', 2, long)
constexpr unsigned kFsGetXattr = 0x801c581fu;  // FS_IOC_FSGETXATTR, _IOR('X', 31, struct fsxattr)
constexpr unsigned kFsSetXattr = 0x401c5820u;  // FS_IOC_FSSETXATTR, _IOW('X', 32, struct fsxattr)
constexpr unsigned kGc = 0x4004f506u;          // F2FS_IOC_GARBAGE_COLLECT, _IOW(0xf5, 6, __u32)
constexpr unsigned kCheckpoint = 0x0000f507u;  // F2FS_IOC_WRITE_CHECKPOINT, _IO(0xf5, 7)
constexpr unsigned kDefragment = 0xc010f508u;  // F2FS_IOC_DEFRAGMENT, _IOWR(0xf5, 8, struct f2fs_defragment)
constexpr unsigned kSetPin = 0x4004f50du;      // F2FS_IOC_SET_PIN_FILE, _IOW(0xf5, 13, __u32)
constexpr unsigned kGetPin = 0x8004f50eu;      // F2FS_IOC_GET_PIN_FILE, _IOR(0xf5, 14, __u32)
constexpr unsigned kGetComprBlocks = 0x8008f511u;  // F2FS_IOC_GET_COMPRESS_BLOCKS, _IOR(0xf5, 17, __u64)
constexpr unsigned kReleaseComprBlocks = 0x8008f512u;  // F2FS_IOC_RELEASE_COMPRESS_BLOCKS, _IOR(0xf5, 18, __u64)
constexpr unsigned kReserveComprBlocks = 0x8008f513u;  // F2FS_IOC_RESERVE_COMPRESS_BLOCKS, _IOR(0xf5, 19, __u64)
constexpr unsigned kGetComprOption = 0x8002f515u;  // F2FS_IOC_GET_COMPRESS_OPTION, _IOR(0xf5, 21, struct f2fs_comp_option)
constexpr unsigned kSetComprOption = 0x4002f516u;  // F2FS_IOC_SET_COMPRESS_OPTION, _IOW(0xf5, 22, struct f2fs_comp_option)
constexpr unsigned kDecompressFile = 0x0000f517u;  // F2FS_IOC_DECOMPRESS_FILE, _IO(0xf5, 23)
constexpr unsigned kCompressFile = 0x0000f518u;    // F2FS_IOC_COMPRESS_FILE, _IO(0xf5, 24)
// fs-verity (include/uapi/linux/fsverity.h). FUSE passes them to a daemon
// since Linux 6.9 (fuse_setup_enable_verity() / fuse_setup_measure_verity()
// in fs/fuse/ioctl.c): ENABLE with the salt and then the signature after
// struct fsverity_enable_arg in the input; MEASURE with room for the
// caller's digest_size after struct fsverity_digest. Older kernels give the
// daemon the fixed-size structs only (no salt, no room for the digest).
constexpr unsigned kEnableVerity = FS_IOC_ENABLE_VERITY;
constexpr unsigned kMeasureVerity = FS_IOC_MEASURE_VERITY;
// The flags every file system shares as FS_XFLAG_* bits
// (fileattr_fill_flags() and fileattr_fill_xflags() in fs/ioctl.c).
constexpr std::pair<std::uint32_t, std::uint32_t> kXflags[] = {
    {FS_SYNC_FL, FS_XFLAG_SYNC},     {FS_IMMUTABLE_FL, FS_XFLAG_IMMUTABLE}, {FS_APPEND_FL, FS_XFLAG_APPEND},
    {FS_NODUMP_FL, FS_XFLAG_NODUMP}, {FS_NOATIME_FL, FS_XFLAG_NOATIME},     {FS_DAX_FL, FS_XFLAG_DAX},
    {FS_PROJINHERIT_FL, FS_XFLAG_PROJINHERIT}};
}  // namespace ioc

void op_ioctl(fuse_req_t req, fuse_ino_t fino, unsigned int cmd, void*, fuse_file_info* fi, unsigned flags,
              const void* in_buf, size_t in_bufsz, size_t out_bufsz) {
  const nid_t ino = to_nid(fino);
  if (flags & FUSE_IOCTL_COMPAT) return (void)fuse_reply_err(req, ENOTTY);
  const bool root = fuse_req_ctx(req)->uid == 0;
  auto in_u32 = [&](std::uint32_t* v) {
    if (in_bufsz < sizeof *v) return false;
    std::memcpy(v, in_buf, sizeof *v);
    return true;
  };
  // An int (or long) result in the caller's buffer, zero-extended.
  auto reply_u32 = [&](std::uint32_t v) {
    unsigned char out[8] = {};
    std::memcpy(out, &v, sizeof v);
    fuse_reply_ioctl(req, 0, out, std::min<size_t>(out_bufsz, sizeof out));
  };
  switch (cmd) {
    case ioc::kGetFlags: {
      if (out_bufsz < 4) return (void)fuse_reply_err(req, EINVAL);
      auto f = g_fs.w->get_flags(ino);
      if (!f) return (void)fuse_reply_err(req, err(f));
      return reply_u32(*f);
    }
    case ioc::kSetFlags: {
      std::uint32_t v = 0;
      if (!in_u32(&v)) return (void)fuse_reply_err(req, EINVAL);
      if (g_fs.read_only) return (void)fuse_reply_err(req, EROFS);  // mnt_want_write_file()
      auto r = g_fs.w->set_flags(ino, v, ~0u, root);
      if (!r) return (void)fuse_reply_err(req, err(r));
      // The new ctime: the kernel keeps the attributes it has cached
      // (fuse_fileattr_set() does not drop them).
      if (g_fs.se) (void)fuse_lowlevel_notify_inval_inode(g_fs.se, fino, -1, 0);
      return (void)fuse_reply_ioctl(req, 0, nullptr, 0);
    }
    case ioc::kFsGetXattr: {
      // f2fs_fileattr_get() through fileattr_fill_flags(): the flags all
      // file systems share as FS_XFLAG_* bits, and the project id. The
      // kernel's vfs_fileattr_set() asks this of a FUSE file before every
      // FS_IOC_SETFLAGS (fuse_fileattr_get() of an empty fileattr).
      struct fsxattr x {};
      if (out_bufsz < sizeof x) return (void)fuse_reply_err(req, EINVAL);
      auto f = g_fs.w->get_flags(ino);
      if (!f) return (void)fuse_reply_err(req, err(f));
      auto st = g_fs.w->stat(ino);
      if (!st) return (void)fuse_reply_err(req, err(st));
      for (const auto& [fl, xf] : ioc::kXflags)
        if (*f & fl) x.fsx_xflags |= xf;
      x.fsx_projid = st->projid;
      return (void)fuse_reply_ioctl(req, 0, &x, sizeof x);
    }
    case ioc::kFsSetXattr: {
      // vfs_fileattr_set() (fs/ioctl.c) has checked the owner,
      // CAP_LINUX_IMMUTABLE and the extent-size hints against the
      // FS_IOC_FSGETXATTR answer; f2fs_fileattr_set() then takes the shared
      // flags only (EOPNOTSUPP for DAX, which f2fs does not have), through
      // f2fs_setflags_common(), and the project id through
      // f2fs_ioc_setproject() (EOPNOTSUPP without project quotas unless
      // it is 0, EOVERFLOW without room for i_projid).
      struct fsxattr x {};
      if (in_bufsz < sizeof x) return (void)fuse_reply_err(req, EINVAL);
      std::memcpy(&x, in_buf, sizeof x);
      if (g_fs.read_only) return (void)fuse_reply_err(req, EROFS);
      std::uint32_t fl = 0, mask = 0;
      for (const auto& [f, xf] : ioc::kXflags) {
        mask |= f;
        if (x.fsx_xflags & xf) fl |= f;
      }
      if (fl & FS_DAX_FL) return (void)fuse_reply_err(req, EOPNOTSUPP);
      auto r = g_fs.w->set_flags(ino, fl, mask & ~static_cast<std::uint32_t>(FS_DAX_FL), root);
      if (!r) return (void)fuse_reply_err(req, err(r));
      auto st = g_fs.w->stat(ino);
      if (!st) return (void)fuse_reply_err(req, err(st));
      if (x.fsx_projid != st->projid) {
        f2fscore::SetAttr a;
        a.projid = x.fsx_projid;
        auto p = g_fs.w->setattr(ino, a);
        if (!p) return (void)fuse_reply_err(req, err(p));
      }
      if (g_fs.se) (void)fuse_lowlevel_notify_inval_inode(g_fs.se, fino, -1, 0);
      return (void)fuse_reply_ioctl(req, 0, nullptr, 0);
    }
    case ioc::kGetPin: {
      // f2fs_ioc_get_pin_file(): i_gc_failures of a pinned file, else 0;
      // the writer keeps no GC failure count, so 0.
      if (out_bufsz < 4) return (void)fuse_reply_err(req, EINVAL);
      auto st = g_fs.w->stat(ino);
      if (!st) return (void)fuse_reply_err(req, err(st));
      return reply_u32(0);
    }
    case ioc::kSetPin: {
      // f2fs_ioc_set_pin_file(): EINVAL but on a regular file, EROFS.
      std::uint32_t pin = 0;
      if (!in_u32(&pin)) return (void)fuse_reply_err(req, EINVAL);
      auto st = g_fs.w->stat(ino);
      if (!st) return (void)fuse_reply_err(req, err(st));
      if (!S_ISREG(st->mode)) return (void)fuse_reply_err(req, EINVAL);
      if (g_fs.read_only) return (void)fuse_reply_err(req, EROFS);
      auto r = g_fs.w->set_pinned(ino, pin != 0);
      if (!r) return (void)fuse_reply_err(req, err(r));
      return (void)fuse_reply_ioctl(req, 0, nullptr, 0);
    }
    case ioc::kDefragment: {
      // f2fs_ioc_defragment(): CAP_SYS_ADMIN (EPERM), a regular file
      // (EINVAL), EROFS, a 4 KiB-aligned range (EINVAL); the moved bytes
      // come back in len.
      std::uint64_t range[2] = {};
      if (in_bufsz < sizeof range || out_bufsz < sizeof range) return (void)fuse_reply_err(req, EINVAL);
      std::memcpy(range, in_buf, sizeof range);
      if (!root) return (void)fuse_reply_err(req, EPERM);
      auto st = g_fs.w->stat(ino);
      if (!st) return (void)fuse_reply_err(req, err(st));
      if (!S_ISREG(st->mode)) return (void)fuse_reply_err(req, EINVAL);
      if (g_fs.read_only) return (void)fuse_reply_err(req, EROFS);
      if ((range[0] | range[1]) & 4095u) return (void)fuse_reply_err(req, EINVAL);
      auto r = g_fs.w->defragment(ino, range[0], range[1]);
      if (!r) return (void)fuse_reply_err(req, err(r));
      range[1] = *r;
      return (void)fuse_reply_ioctl(req, 0, range, sizeof range);
    }
    case ioc::kGc: {
      // f2fs_ioc_gc(): CAP_SYS_ADMIN (EPERM), EROFS; foreground GC of one
      // section; ENODATA when there is no victim (f2fs_gc()).
      std::uint32_t sync = 0;
      if (!in_u32(&sync)) return (void)fuse_reply_err(req, EINVAL);
      if (!root) return (void)fuse_reply_err(req, EPERM);
      if (g_fs.read_only) return (void)fuse_reply_err(req, EROFS);
      auto r = g_fs.w->gc(1);
      if (!r) return (void)fuse_reply_err(req, err(r));
      if (*r == 0) return (void)fuse_reply_err(req, ENODATA);
      return (void)fuse_reply_ioctl(req, 0, nullptr, 0);
    }
    case ioc::kCheckpoint: {
      // f2fs_ioc_write_checkpoint(): CAP_SYS_ADMIN (EPERM), EROFS.
      if (!root) return (void)fuse_reply_err(req, EPERM);
      if (g_fs.read_only) return (void)fuse_reply_err(req, EROFS);
      auto r = g_fs.w->sync();
      if (!r) return (void)fuse_reply_err(req, err(r));
      return (void)fuse_reply_ioctl(req, 0, nullptr, 0);
    }
    case ioc::kEnableVerity: {
      // fsverity_ioctl_enable() in fs/verity/enable.c (Linux 6.1): version
      // 1, reserved fields zero, 4 KiB blocks (EINVAL), a salt of at most 32
      // bytes and a signature of at most 16,128 (EMSGSIZE); then EROFS and
      // the writer's checks (Writer::enable_verity()). SHA-512 (2) and
      // built-in signatures are Linux's but not the writer's: EOPNOTSUPP.
      struct fsverity_enable_arg a {};
      if (in_bufsz < sizeof a) return (void)fuse_reply_err(req, EINVAL);
      std::memcpy(&a, in_buf, sizeof a);
      if (a.version != 1) return (void)fuse_reply_err(req, EINVAL);
      if (a.__reserved1) return (void)fuse_reply_err(req, EINVAL);
      for (auto r : a.__reserved2)
        if (r) return (void)fuse_reply_err(req, EINVAL);
      if (a.block_size != 4096) return (void)fuse_reply_err(req, EINVAL);
      if (a.salt_size > 32 || a.sig_size > 16128) return (void)fuse_reply_err(req, EMSGSIZE);
      if (a.hash_algorithm != FS_VERITY_HASH_ALG_SHA256)
        return (void)fuse_reply_err(req, a.hash_algorithm == 2 ? EOPNOTSUPP : EINVAL);
      if (a.sig_size != 0) return (void)fuse_reply_err(req, EOPNOTSUPP);
      if (in_bufsz < sizeof a + a.salt_size) return (void)fuse_reply_err(req, EOPNOTSUPP);  // a kernel before 6.9
      if (g_fs.read_only) return (void)fuse_reply_err(req, EROFS);
      f2fscore::Writer::VerityOptions vo;
      const auto* salt = static_cast<const std::uint8_t*>(in_buf) + sizeof a;
      vo.salt.assign(salt, salt + a.salt_size);
      auto r = g_fs.w->enable_verity(ino, vo);
      if (!r) return (void)fuse_reply_err(req, err(r));
      if (g_fs.se) (void)fuse_lowlevel_notify_inval_inode(g_fs.se, fino, -1, 0);  // i_blocks changed
      return (void)fuse_reply_ioctl(req, 0, nullptr, 0);
    }
    case ioc::kMeasureVerity: {
      // fsverity_ioctl_measure() in fs/verity/measure.c: ENODATA for a file
      // that is not verity, EOVERFLOW when digest_size is short.
      struct fsverity_digest h {};
      if (in_bufsz < sizeof h) return (void)fuse_reply_err(req, EINVAL);
      std::memcpy(&h, in_buf, sizeof h);
      auto d = g_fs.w->measure_verity(ino);
      if (!d) return (void)fuse_reply_err(req, err(d));
      if (h.digest_size < d->digest.size()) return (void)fuse_reply_err(req, EOVERFLOW);
      if (out_bufsz < sizeof h + d->digest.size()) return (void)fuse_reply_err(req, EOPNOTSUPP);  // a kernel before 6.9
      std::vector<unsigned char> out(sizeof h + d->digest.size());
      h.digest_algorithm = d->algorithm;
      h.digest_size = static_cast<__u16>(d->digest.size());
      std::memcpy(out.data(), &h, sizeof h);
      std::memcpy(out.data() + sizeof h, d->digest.data(), d->digest.size());
      return (void)fuse_reply_ioctl(req, 0, out.data(), out.size());
    }
    case ioc::kGetComprBlocks: {
      // f2fs_get_compress_blocks(): EOPNOTSUPP without the feature, EINVAL
      // for a file that is not compressed.
      if (out_bufsz < 8) return (void)fuse_reply_err(req, EINVAL);
      auto st = g_fs.w->stat(ino);
      if (!st) return (void)fuse_reply_err(req, err(st));
      auto o = g_fs.w->get_compress_option(ino);  // EOPNOTSUPP, ENODATA
      if (!o) return (void)fuse_reply_err(req, o.error().sys_errno == ENODATA ? EINVAL : err(o));
      const std::uint64_t n = st->compr_blocks;
      return (void)fuse_reply_ioctl(req, 0, &n, sizeof n);
    }
    case ioc::kReleaseComprBlocks:
    case ioc::kReserveComprBlocks: {
      // f2fs_release_compress_blocks() / f2fs_reserve_compress_blocks():
      // EROFS; release also EBUSY while another descriptor has the file
      // open for writing (i_writecount: 1 with this one if it writes, else
      // 0). The count of blocks comes back as a __u64.
      if (out_bufsz < 8) return (void)fuse_reply_err(req, EINVAL);
      const bool release = cmd == ioc::kReleaseComprBlocks;
      if (g_fs.read_only) {
        auto o = g_fs.w->get_compress_option(ino);  // EOPNOTSUPP and EINVAL come first
        if (!o) return (void)fuse_reply_err(req, o.error().sys_errno == ENODATA ? EINVAL : err(o));
        return (void)fuse_reply_err(req, EROFS);
      }
      if (release) {
        const bool writes = (static_cast<int>(fi->fh) & O_ACCMODE) != O_RDONLY;
        if (g_fs.writer_count(ino) != (writes ? 1 : 0)) return (void)fuse_reply_err(req, EBUSY);
      }
      auto r = release ? g_fs.w->release_compress_blocks(ino) : g_fs.w->reserve_compress_blocks(ino);
      if (!r) return (void)fuse_reply_err(req, err(r));
      if (g_fs.se) (void)fuse_lowlevel_notify_inval_inode(g_fs.se, fino, -1, 0);  // i_blocks, ctime
      const std::uint64_t n = *r;
      return (void)fuse_reply_ioctl(req, 0, &n, sizeof n);
    }
    case ioc::kGetComprOption: {
      // f2fs_ioc_get_compress_option(): EOPNOTSUPP, ENODATA.
      if (out_bufsz < 2) return (void)fuse_reply_err(req, EINVAL);
      auto o = g_fs.w->get_compress_option(ino);
      if (!o) return (void)fuse_reply_err(req, err(o));
      const std::uint8_t out[2] = {o->algorithm, o->log_cluster_size};
      return (void)fuse_reply_ioctl(req, 0, out, sizeof out);
    }
    case ioc::kSetComprOption: {
      // f2fs_ioc_set_compress_option(): EOPNOTSUPP, EBADF for a descriptor
      // not open for writing, then the writer's checks.
      if (in_bufsz < 2) return (void)fuse_reply_err(req, EINVAL);
      const auto* b = static_cast<const std::uint8_t*>(in_buf);
      if (auto o = g_fs.w->get_compress_option(ino); !o && o.error().sys_errno == EOPNOTSUPP)
        return (void)fuse_reply_err(req, EOPNOTSUPP);
      if ((static_cast<int>(fi->fh) & O_ACCMODE) == O_RDONLY) return (void)fuse_reply_err(req, EBADF);
      if (g_fs.read_only) return (void)fuse_reply_err(req, EROFS);
      auto r = g_fs.w->set_compress_option(ino, f2fscore::Writer::CompressOption{b[0], b[1]});
      if (!r) return (void)fuse_reply_err(req, err(r));
      return (void)fuse_reply_ioctl(req, 0, nullptr, 0);
    }
    case ioc::kCompressFile:
    case ioc::kDecompressFile: {
      // f2fs_ioc_compress_file() / f2fs_ioc_decompress_file(): EOPNOTSUPP
      // without the feature or outside compress_mode=user, EBADF for a
      // descriptor not open for writing, then the writer's checks. Data the
      // kernel holds dirty (writeback_cache) reaches the daemon at its own
      // pace: fsync the file first.
      if (!g_fs.compress_user) return (void)fuse_reply_err(req, EOPNOTSUPP);
      if (auto o = g_fs.w->get_compress_option(ino); !o && o.error().sys_errno == EOPNOTSUPP)
        return (void)fuse_reply_err(req, EOPNOTSUPP);
      if ((static_cast<int>(fi->fh) & O_ACCMODE) == O_RDONLY) return (void)fuse_reply_err(req, EBADF);
      auto r = cmd == ioc::kCompressFile ? g_fs.w->compress_file(ino) : g_fs.w->decompress_file(ino);
      if (!r) return (void)fuse_reply_err(req, err(r));
      if (g_fs.se) (void)fuse_lowlevel_notify_inval_inode(g_fs.se, fino, -1, 0);  // i_blocks
      return (void)fuse_reply_ioctl(req, 0, nullptr, 0);
    }
    default: return (void)fuse_reply_err(req, ENOTTY);
  }
}

const fuse_lowlevel_ops kOps = [] {
  fuse_lowlevel_ops o{};
  o.init = op_init;
  o.lookup = op_lookup;
  o.getattr = op_getattr;
  o.setattr = op_setattr;
  o.readlink = op_readlink;
  o.mknod = op_mknod;
  o.mkdir = op_mkdir;
  o.unlink = op_unlink;
  o.rmdir = op_rmdir;
  o.symlink = op_symlink;
  o.rename = op_rename;
  o.link = op_link;
  o.open = op_open;
  o.read = op_read;
  o.write = op_write;
  o.flush = op_flush;
  o.release = op_release;
  o.fsync = op_fsync;
  o.opendir = op_opendir;
  o.readdir = op_readdir;
  o.readdirplus = op_readdirplus;
  o.releasedir = op_releasedir;
  o.fsyncdir = op_fsyncdir;
  o.statfs = op_statfs;
  o.setxattr = op_setxattr;
  o.getxattr = op_getxattr;
  o.listxattr = op_listxattr;
  o.removexattr = op_removexattr;
  o.create = op_create;
  o.fallocate = op_fallocate;
  o.copy_file_range = op_copy_file_range;
  o.lseek = op_lseek;
  o.ioctl = op_ioctl;
  return o;
}();

// ---- Start-up ----------------------------------------------------------------------------

// The parent of the daemon waits on this pipe for one byte: the exit
// status of the mount (0: mounted).
int g_ready_fd = -1;

void tell_parent(int code) {
  if (g_ready_fd < 0) return;
  const char c = static_cast<char>(code);
  ssize_t n;
  do n = ::write(g_ready_fd, &c, 1);
  while (n < 0 && errno == EINTR);
  ::close(g_ready_fd);
  g_ready_fd = -1;
}

// A fault in the daemon (SIGSEGV, SIGBUS, SIGILL, SIGFPE, SIGABRT): its
// name and a backtrace on stderr, which is the log in the foreground, then
// the default action (the process ends by that signal, with a core where
// cores are enabled). Only async-signal-safe calls: write(2), backtrace()
// (loaded before the handler is installed) and backtrace_symbols_fd().
extern "C" void on_fatal_signal(int sig) {
  const char* name = sig == SIGSEGV ? "SIGSEGV"
                     : sig == SIGBUS ? "SIGBUS"
                     : sig == SIGILL ? "SIGILL"
                     : sig == SIGFPE ? "SIGFPE"
                                     : "SIGABRT";
  const char head[] = "f2fscore-fuse: fatal signal ";
  (void)!::write(2, head, sizeof head - 1);
  (void)!::write(2, name, std::strlen(name));
  (void)!::write(2, "; backtrace:\n", 13);
  void* frames[64];
  const int n = ::backtrace(frames, 64);
  ::backtrace_symbols_fd(frames, n, 2);
  ::signal(sig, SIG_DFL);
  ::raise(sig);
}

void install_fatal_signal_handlers() {
  void* warm[1];
  (void)::backtrace(warm, 1);
  struct sigaction sa {};
  sa.sa_handler = on_fatal_signal;
  sigemptyset(&sa.sa_mask);
  sa.sa_flags = SA_RESETHAND | SA_NODEFER;
  for (int sig : {SIGSEGV, SIGBUS, SIGILL, SIGFPE, SIGABRT}) ::sigaction(sig, &sa, nullptr);
}

}  // namespace

int main(int argc, char** argv) {
  CLI::App app{"Mount an F2FS volume in user space (f2fscore " F2FSCORE_VERSION_STRING ")", "f2fscore-fuse"};
  app.footer(kExitHelp);
  std::string device, mountpoint, backend = "auto";
  std::vector<std::string> opt_lists;
  bool foreground = false, debug = false, single = false, version = false;
  app.add_option("device", device, "Image file or block device holding an F2FS volume");
  std::vector<std::string> other_devices;
  ftools::add_device_option(app, other_devices);
  app.add_option("mountpoint", mountpoint, "Directory to mount it on");
  app.add_option("-o", opt_lists, "Mount options, comma-separated (see below)")->allow_extra_args(false);
  app.add_flag("-f,--foreground", foreground, "Stay in the foreground");
  app.add_flag("-d,--debug", debug, "Print each FUSE request (implies -f)");
  app.add_flag("-s,--single-thread", single, "Serve requests on one thread");
  app.add_option("--backend", backend, "I/O backend: auto (default: io_uring, else posix), posix, io_uring or uring")
      ->check(CLI::IsMember({"auto", "posix", "io_uring", "uring"}));
  app.add_flag("-V,--version", version, "Print the version and exit");
  auto usage = [&](const std::string& m) { return ftools::print_error("f2fscore-fuse", m, kExitUsage, true); };
  if (auto done = ftools::parse_or(app, argc, argv, [&](const CLI::ParseError&, const std::string& m) { return usage(m); }))
    return *done;
  if (version) return ftools::print_version("f2fscore-fuse", false);
  if (device.empty()) return usage("a device is required");
  if (mountpoint.empty()) return usage("a mount point is required");
  if (debug) foreground = true;

  f2fscore::tools::FuseOptions fo;
  for (const auto& l : opt_lists)
    if (auto e = f2fscore::tools::parse_fuse_options(l, fo); !e.empty()) return usage("-o: " + e);

  char* abs_dev = ::realpath(device.c_str(), nullptr);
  if (!abs_dev) {
    std::fprintf(stderr, "f2fscore-fuse: %s: %s\n", device.c_str(), std::strerror(errno));
    return kExitFailure;
  }
  const std::string dev_path = abs_dev;
  std::free(abs_dev);
  struct stat mst {};
  if (::stat(mountpoint.c_str(), &mst) != 0 || !S_ISDIR(mst.st_mode)) {
    std::fprintf(stderr, "f2fscore-fuse: %s: not a directory\n", mountpoint.c_str());
    return kExitFailure;
  }

  // In the background: the child does everything (no io_uring or thread
  // crosses a fork) and tells the parent how the mount went.
  if (!foreground) {
    int p[2];
    if (::pipe(p) != 0) {
      std::perror("f2fscore-fuse: pipe");
      return kExitFailure;
    }
    const pid_t pid = ::fork();
    if (pid < 0) {
      std::perror("f2fscore-fuse: fork");
      return kExitFailure;
    }
    if (pid > 0) {
      ::close(p[1]);
      char c = static_cast<char>(kExitFailure);
      ssize_t n;
      do n = ::read(p[0], &c, 1);
      while (n < 0 && errno == EINTR);
      if (n != 1) {
        int status = 0;
        ::waitpid(pid, &status, 0);
        return WIFEXITED(status) && WEXITSTATUS(status) != 0 ? WEXITSTATUS(status) : kExitFailure;
      }
      return static_cast<unsigned char>(c);
    }
    ::close(p[0]);
    g_ready_fd = p[1];
    ::setsid();
  }
  auto fail = [&](const std::string& m) {
    std::fprintf(stderr, "f2fscore-fuse: %s\n", m.c_str());
    tell_parent(kExitFailure);
    return kExitFailure;
  };

  // A read-only mount of an image another f2fscore tool is writing shows
  // its last checkpoint, or one it is writing: said, not refused (as
  // fsck -n checks a device in use with a warning).
  if (fo.read_only) {
    f2fscore::InUseCheck what;
    what.writer_lock = true;
    if (f2fscore::InUse u = f2fscore::check_in_use(dev_path, what))
      std::fprintf(stderr, "f2fscore-fuse: warning: %s; mounted read-only, it shows what was last committed (`flock %s true` waits for the writer)\n",
                   u.detail.c_str(), dev_path.c_str());
  }
  // One writer per image: open_device() holds the library's lock on it
  // until the device is closed, after the final checkpoint (a new mount
  // during that checkpoint is refused; `flock DEVICE true` waits for it).
  f2fscore::OpenOptions oo;
  oo.read_only = fo.read_only;
  oo.refuse_in_use = !fo.read_only;
  oo.direct_large_writes = fo.direct_large_writes;
  f2fscore::BackendOptions bo;
  bo.backend = backend == "posix"      ? f2fscore::Backend::posix
               : backend == "io_uring" ? f2fscore::Backend::uring
               : backend == "uring"    ? f2fscore::Backend::liburing
                                       : f2fscore::Backend::automatic;
  auto opened = f2fscore::open_device(dev_path, oo, bo);
  if (!opened)
    return fail(opened.error().code == Errc::busy ? opened.error().message + "; refusing to mount it"
                                                  : ftools::open_failure_text(device, opened.error()));
  // A multi-device volume: its other devices, opened alike.
  {
    auto whole = ftools::open_whole_volume(std::move(opened->device), other_devices, [&](const std::string& p) -> f2fscore::Result<std::unique_ptr<f2fscore::BlockDevice>> {
        auto o = f2fscore::open_device(p, oo, bo);
        if (!o) return f2fscore::make_error(o.error());
        return std::move(o->device);
      });
    if (!whole) return fail(whole.error().message + (whole.error().code == Errc::busy ? "; refusing to mount it" : ""));
    opened->device = std::move(*whole);
  }
  f2fscore::Iostat iostat;
  f2fscore::IostatDevice dev(std::move(opened->device), iostat);
  f2fscore::MountOptions mo = fo.mount;
  mo.read_only = fo.read_only;
  for (const auto& kf : fo.key_files) {  // -o key=FILE: fscrypt v2 master keys
    auto bytes = f2fscore::tools::read_master_key_file(kf);
    if (!bytes) return fail(bytes.error().message);
    auto k = f2fscore::fscrypt::parse_master_key(*bytes);
    if (!k) return fail(kf + ": " + k.error().message);
    mo.fscrypt_keys.push_back(*k);
  }
  auto w = Writer::mount(dev, mo);
  if (!w) return fail(device + ": cannot mount" + (fo.read_only ? "" : " read-write") + ": " + w.error().message);
  if (fo.iostat) iostat.set_enabled(true);
  g_fs.w = w->get();
  g_fs.read_only = fo.read_only;
  if (dev.info().logical_block_size != 0) g_fs.dio_align = dev.info().logical_block_size;
  g_fs.compress_user = fo.mount.compression.mode == f2fscore::MountOptions::Compression::Mode::user;
  g_fs.attr_timeout = fo.attr_timeout;
  g_fs.entry_timeout = fo.entry_timeout;
  g_fs.writeback_cache = fo.writeback_cache;
  g_fs.max_write = fo.max_write;
  g_fs.acl = fo.acl;
  {
    auto root = (*w)->lookup("/");
    if (!root) return fail("no root directory: " + root.error().message);
    g_fs.root = *root;
  }

  // FUSE's own arguments: the program name, the mount options it knows.
  std::vector<std::string> fargs = {"f2fscore-fuse"};
  std::string fuse_opts = "default_permissions,fsname=" + (fo.fsname.empty() ? dev_path : fo.fsname) +
                          ",subtype=" + (fo.subtype.empty() ? "f2fscore" : fo.subtype);
  if (fo.read_only) fuse_opts += ",ro";
  for (const auto& p : fo.passthrough) fuse_opts += "," + p;
  fargs.push_back("-o");
  fargs.push_back(fuse_opts);
  if (debug) fargs.push_back("-d");
  std::vector<char*> fargv;
  for (auto& a : fargs) fargv.push_back(a.data());
  fuse_args args = FUSE_ARGS_INIT(static_cast<int>(fargv.size()), fargv.data());
  fuse_session* se = fuse_session_new(&args, &kOps, sizeof kOps, nullptr);
  g_fs.se = se;
  fuse_opt_free_args(&args);
  if (!se) {
    (void)(*w)->unmount();
    return fail("cannot start a FUSE session (options " + fuse_opts + ")");
  }
  if (fuse_set_signal_handlers(se) != 0) {
    fuse_session_destroy(se);
    (void)(*w)->unmount();
    return fail("cannot install the signal handlers");
  }
  if (fuse_session_mount(se, mountpoint.c_str()) != 0) {
    fuse_remove_signal_handlers(se);
    fuse_session_destroy(se);
    (void)(*w)->unmount();
    return fail("cannot mount on " + mountpoint);
  }
  if (!foreground) {
    // Standard streams to /dev/null, as fuse_daemonize().
    const int nul = ::open("/dev/null", O_RDWR);
    if (nul >= 0) {
      ::dup2(nul, 0);
      ::dup2(nul, 1);
      ::dup2(nul, 2);
      if (nul > 2) ::close(nul);
    }
    if (::chdir("/") != 0) { /* stays where it was */ }
  }
  install_fatal_signal_handlers();
  tell_parent(kExitOk);

  int rc;
  if (single) {
    rc = fuse_session_loop(se);
  } else {
    // One receiver and up to 7 workers for large reads and writes
    // (request_loop.hpp); workers are kept once started.
    rc = f2fscore::fuse::serve(se, 7);
  }
  // ECONNABORTED from the device: the kernel ended the connection as
  // aborted rather than unmounted (the control file's abort; also seen
  // at fusermount3 -u). No request can arrive any more either way, so
  // the volume is closed as at an unmount, with a message saying so.
  if (rc == -ECONNABORTED) {
    const std::string msg = "f2fscore-fuse: " + mountpoint + ": the kernel aborted the FUSE connection; closing the volume";
    std::fprintf(stderr, "%s\n", msg.c_str());
    if (!foreground) ::syslog(LOG_NOTICE, "%s", msg.c_str());
    rc = 0;
  }
  fuse_session_unmount(se);
  fuse_remove_signal_handlers(se);
  fuse_session_destroy(se);

  // The final checkpoint, and the iostat report when it was on.
  auto um = (*w)->unmount();
  if (fo.iostat) {
    const std::string rep = f2fscore::format_iostat_info(iostat.snapshot(), static_cast<std::int64_t>(std::time(nullptr)));
    if (!fo.iostat_file.empty()) {
      if (FILE* f = std::fopen(fo.iostat_file.c_str(), "w")) {
        std::fputs(rep.c_str(), f);
        std::fclose(f);
      }
    } else {
      std::fputs(rep.c_str(), stderr);
    }
  }
  if (!um) {
    const std::string msg = "f2fscore-fuse: " + device + ": unmount (checkpoint) failed: " + um.error().to_string();
    std::fprintf(stderr, "%s\n", msg.c_str());
    // In the background stderr is /dev/null: the system log keeps it.
    if (!foreground) ::syslog(LOG_ERR, "%s", msg.c_str());
    return kExitFailure;
  }
  return rc == 0 || rc == -EINTR || rc > 0 ? kExitOk : kExitFailure;
}
