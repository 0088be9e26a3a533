// check_in_use(): whether a block device or image file is in use, with the
// facts of e2fsprogs' ext2fs_check_mount_point() (lib/ext2fs/ismounted.c):
// a mount whose source is the device (by device number, or by the source
// path naming the same block device), an active swap area (/proc/swaps), a
// block device another open holds with O_EXCL (EBUSY); an image file counts
// through every loop device it backs (/sys/block/loopN/loop/backing_file,
// matched by device and inode number). On request, a file system of another
// kind on it (libblkid where the build has it, else a few magic numbers).
// Mounts, swap, O_EXCL and loop devices are Linux's; elsewhere only the
// file-system probe is made, its bytes read through the storage seam
// (open_posix_device(): the Win32 backend on Windows).
//
// 64-bit file offsets on 32-bit hosts too; must precede every include.
#ifndef _FILE_OFFSET_BITS
#define _FILE_OFFSET_BITS 64
#endif
#if defined(__linux__)
#include <fcntl.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>
#endif

#include <algorithm>
#include <cerrno>
#include <cstdint>
#include <cstring>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#if defined(__linux__)
#include <dirent.h>
#include <sys/sysmacros.h>
#endif
#if defined(__linux__) && defined(F2FSCORE_HAVE_BLKID)
#include <blkid/blkid.h>
#endif

#include "f2fscore/device.hpp"
#include "f2fscore/disk/constants.hpp"
#include "f2fscore/endian.hpp"

namespace f2fscore {

std::string_view in_use_kind_name(InUseKind k) noexcept {
  switch (k) {
    case InUseKind::none: return "none";
    case InUseKind::mounted: return "mounted";
    case InUseKind::swap: return "swap";
    case InUseKind::held_exclusively: return "held_exclusively";
    case InUseKind::other_file_system: return "other_file_system";
    case InUseKind::being_written: return "being_written";
  }
  return "?";
}

namespace {

// The bytes at the start of a device probed for file systems: the superblock
// copies of F2FS, ext2/3/4, XFS, btrfs (64 KiB) and swap.
[[maybe_unused]] constexpr std::size_t kProbeBytes = 68 * 1024;

// Whether either superblock copy in the first `got` bytes of `b` carries the
// F2FS magic (F2FS_SUPER_MAGIC at byte 1024 of block 0 or 1).
[[maybe_unused]] bool f2fs_magic(const std::uint8_t* b, std::size_t got) {
  for (std::size_t off : {std::size_t{1024}, std::size_t{4096 + 1024}})
    if (off + 4 <= got && load_le32(b, off) == disk::kSuperMagic) return true;
  return false;
}

// The kind of file system whose magic number is in the first `got` bytes of
// `b` (ext2/3/4, XFS, btrfs, swap); empty when none is.
[[maybe_unused]] std::string kind_from_magic(const std::uint8_t* b, std::size_t got) {
  auto at = [&](std::size_t off, const char* magic, std::size_t len) {
    return off + len <= got && std::memcmp(b + off, magic, len) == 0;
  };
  if (got >= 1082 && b[1080] == 0x53 && b[1081] == 0xEF) return "ext2/ext3/ext4";  // s_magic 0xEF53
  if (at(0, "XFSB", 4)) return "xfs";
  if (at(65536 + 64, "_BHRfS_M", 8)) return "btrfs";
  if (at(4096 - 10, "SWAPSPACE2", 10) || at(4096 - 10, "SWAP-SPACE", 10)) return "swap";
  return {};
}

}  // namespace

#if defined(__linux__)
namespace {

// The octal escapes the kernel writes in /proc/self/mountinfo and
// /proc/swaps for space, tab, newline and backslash (mangle() in
// fs/proc_namespace.c, seq_escape()).
std::string unescape(const std::string& s) {
  std::string o;
  for (std::size_t i = 0; i < s.size(); ++i) {
    if (s[i] == '\\' && i + 3 < s.size() && s[i + 1] >= '0' && s[i + 1] <= '3' &&
        s[i + 2] >= '0' && s[i + 2] <= '7' && s[i + 3] >= '0' && s[i + 3] <= '7') {
      o += static_cast<char>((s[i + 1] - '0') * 64 + (s[i + 2] - '0') * 8 + (s[i + 3] - '0'));
      i += 3;
    } else {
      o += s[i];
    }
  }
  return o;
}

struct Mount {
  dev_t dev = 0;
  std::string source, target, fstype;
};

// /proc/self/mountinfo: "id parent major:minor root target options
// [optional fields] - fstype source super-options" (proc(5)).
std::vector<Mount> read_mounts() {
  std::vector<Mount> out;
  std::ifstream f("/proc/self/mountinfo");
  std::string line;
  while (std::getline(f, line)) {
    std::istringstream is(line);
    std::vector<std::string> w;
    std::string x;
    while (is >> x) w.push_back(x);
    if (w.size() < 7) continue;
    std::size_t dash = 6;
    while (dash < w.size() && w[dash] != "-") ++dash;
    if (dash + 2 >= w.size()) continue;
    unsigned maj = 0, mnr = 0;
    if (std::sscanf(w[2].c_str(), "%u:%u", &maj, &mnr) != 2) continue;
    Mount m;
    m.dev = makedev(maj, mnr);
    m.target = unescape(w[4]);
    m.fstype = w[dash + 1];
    m.source = unescape(w[dash + 2]);
    out.push_back(std::move(m));
  }
  return out;
}

// The mount of block device `rdev`, if any.
const Mount* mount_of(const std::vector<Mount>& ms, dev_t rdev) {
  for (const auto& m : ms)
    if (m.dev == rdev) return &m;
  // Sources by path (a btrfs or other mount whose st_dev is anonymous).
  for (const auto& m : ms) {
    if (m.source.empty() || m.source[0] != '/') continue;
    struct stat st {};
    if (::stat(m.source.c_str(), &st) == 0 && S_ISBLK(st.st_mode) && st.st_rdev == rdev) return &m;
  }
  return nullptr;
}

// The active swap area on block device `rdev` or file (dev, ino).
std::string swap_of(bool block, dev_t rdev, dev_t dev, ino_t ino) {
  std::ifstream f("/proc/swaps");
  std::string line;
  std::getline(f, line);  // header
  while (std::getline(f, line)) {
    std::istringstream is(line);
    std::string name;
    if (!(is >> name)) continue;
    name = unescape(name);
    struct stat st {};
    if (::stat(name.c_str(), &st) != 0) continue;
    if (block ? (S_ISBLK(st.st_mode) && st.st_rdev == rdev) : (st.st_dev == dev && st.st_ino == ino)) return name;
  }
  return {};
}

// Another open holds the block device exclusively (a mount, an md/dm
// member, a program's O_EXCL): an O_EXCL open fails with EBUSY.
bool held_exclusively(const std::string& path) {
  const int fd = ::open(path.c_str(), O_RDONLY | O_EXCL | O_CLOEXEC);
  if (fd < 0) return errno == EBUSY;
  ::close(fd);
  return false;
}

std::string first_line(const std::string& path) {
  std::ifstream f(path);
  std::string s;
  std::getline(f, s);
  return s;
}

struct Loop {
  std::string dev;  ///< /dev/loopN
  dev_t rdev = 0;
};

// The loop devices whose backing file is the file (dev, ino).
std::vector<Loop> loops_backed_by(dev_t dev, ino_t ino) {
  std::vector<Loop> out;
  DIR* d = ::opendir("/sys/block");
  if (d == nullptr) return out;
  while (const dirent* e = ::readdir(d)) {
    const std::string name = e->d_name;
    if (name.rfind("loop", 0) != 0) continue;
    std::string backing = first_line("/sys/block/" + name + "/loop/backing_file");
    if (backing.empty()) continue;
    struct stat st {};
    if (::stat(backing.c_str(), &st) != 0) {
      // A deleted backing file reads "path (deleted)": it is not this one.
      continue;
    }
    if (st.st_dev != dev || st.st_ino != ino) continue;
    unsigned maj = 0, mnr = 0;
    if (std::sscanf(first_line("/sys/block/" + name + "/dev").c_str(), "%u:%u", &maj, &mnr) != 2) continue;
    out.push_back({"/dev/" + name, makedev(maj, mnr)});
  }
  ::closedir(d);
  return out;
}

std::string describe(const Mount& m) { return "mounted on " + m.target + " (" + m.fstype + ")"; }

// What a block device is used for, by mounts, swap and exclusive opens.
InUse block_in_use(const std::string& path, const std::string& shown, dev_t rdev, const std::vector<Mount>& ms,
                   bool probe_exclusive) {
  if (const Mount* m = mount_of(ms, rdev)) return {InUseKind::mounted, shown + " is " + describe(*m)};
  if (auto s = swap_of(true, rdev, 0, 0); !s.empty()) return {InUseKind::swap, shown + " is an active swap area"};
  if (probe_exclusive && held_exclusively(path))
    return {InUseKind::held_exclusively, shown + " is held open exclusively (O_EXCL) by another program"};
  return {};
}

// Whether either superblock copy of `path` carries the F2FS magic
// (F2FS_SUPER_MAGIC at byte 1024 of block 0 or 1).
bool holds_f2fs(const std::string& path) {
  const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) return false;
  std::uint8_t b[4096 + 1024 + 4];
  std::size_t got = 0;
  while (got < sizeof b) {
    const ssize_t n = ::pread(fd, b + got, sizeof b - got, static_cast<off_t>(got));
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) break;
    got += static_cast<std::size_t>(n);
  }
  ::close(fd);
  return f2fs_magic(b, got);
}

// The type of a file system of another kind than F2FS at the start of
// `path`; empty when none is recognised.
std::string other_file_system(const std::string& path) {
#if defined(F2FSCORE_HAVE_BLKID)
  std::string found;
  if (blkid_probe pr = blkid_new_probe_from_filename(path.c_str())) {
    blkid_probe_enable_superblocks(pr, 1);
    blkid_probe_set_superblocks_flags(pr, BLKID_SUBLKS_TYPE);
    const int rc = blkid_do_safeprobe(pr);
    const char* type = nullptr;
    if (rc == 0 && blkid_probe_lookup_value(pr, "TYPE", &type, nullptr) == 0 && type != nullptr)
      found = type;
    else if (rc == -2)
      found = "ambiguous signatures";
    blkid_free_probe(pr);
  }
  return found == "f2fs" ? std::string() : found;
#else
  // Without libblkid: the magic numbers of the common kinds.
  const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) return {};
  std::vector<std::uint8_t> b(kProbeBytes, 0);
  std::size_t got = 0;
  while (got < b.size()) {
    const ssize_t n = ::pread(fd, b.data() + got, b.size() - got, static_cast<off_t>(got));
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) break;
    got += static_cast<std::size_t>(n);
  }
  ::close(fd);
  return kind_from_magic(b.data(), got);
#endif
}

}  // namespace
#endif

InUse check_in_use(const std::string& path, const InUseCheck& what) {
#if defined(__linux__)
  struct stat st {};
  if (::stat(path.c_str(), &st) != 0) return {};  // nothing there: opening it reports why
  if (S_ISBLK(st.st_mode)) {
    const auto ms = read_mounts();
    if (InUse u = block_in_use(path, path, st.st_rdev, ms, what.exclusive)) return u;
  } else if (S_ISREG(st.st_mode)) {
    if (auto s = swap_of(false, 0, st.st_dev, st.st_ino); !s.empty())
      return {InUseKind::swap, path + " is an active swap file"};
    // A mount whose source names the file itself (a FUSE mount of the
    // image: f2fscore-fuse, fuse2fs), as ext2fs_check_mount_point() compares
    // a regular file's device and inode number with each source's.
    const auto all = read_mounts();
    for (const auto& m : all) {
      if (m.source.empty() || m.source[0] != '/') continue;
      struct stat ms {};
      if (::stat(m.source.c_str(), &ms) == 0 && S_ISREG(ms.st_mode) && ms.st_dev == st.st_dev && ms.st_ino == st.st_ino)
        return {InUseKind::mounted, path + " is " + describe(m)};
    }
    const auto loops = loops_backed_by(st.st_dev, st.st_ino);
    if (!loops.empty()) {
      const auto& ms = all;
      for (const auto& l : loops)
        if (InUse u = block_in_use(l.dev, path + " backs " + l.dev + ", which", l.rdev, ms, true)) return u;
    }
    if (what.writer_lock) {
      // open_device()'s lock for writing: a shared lock is refused while it
      // is held, and dropped at once when granted.
      const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
      if (fd >= 0) {
        const bool held = ::flock(fd, LOCK_SH | LOCK_NB) != 0 && errno == EWOULDBLOCK;
        ::close(fd);
        if (held)
          return {InUseKind::being_written,
                  path + " is being written by an f2fscore tool (it holds the image's lock; an f2fscore-fuse "
                         "writes its last checkpoint after its unmount returns)"};
      }
    }
  } else {
    return {};
  }
  if (what.other_file_system && what.f2fs_too && holds_f2fs(path))
    return {InUseKind::other_file_system, path + " holds an F2FS volume (a superblock magic 0xf2f52010)"};
  if (what.other_file_system) {
    if (auto t = other_file_system(path); !t.empty())
      return {InUseKind::other_file_system, path + " holds a file system of another kind (" + t + ")"};
  }
#else
  // The file-system probe alone, on the first bytes read through the
  // storage seam (whole logical blocks; a device shorter than that is read
  // to its end). A path that cannot be opened is not in use: opening it
  // for writing reports why.
  if (!what.other_file_system) return {};
  OpenOptions ro;
  ro.read_only = true;
  auto dev = open_posix_device(path, ro);
  if (!dev) return {};
  const DeviceInfo& di = (*dev)->info();
  const std::uint64_t lbs = std::max<std::uint64_t>(di.logical_block_size, 1);
  const auto got = static_cast<std::size_t>(std::min<std::uint64_t>(kProbeBytes, di.size_bytes) / lbs * lbs);
  std::vector<std::uint8_t> b(got);
  if (got == 0 || !read_at(**dev, 0, b)) return {};
  if (what.f2fs_too && f2fs_magic(b.data(), got))
    return {InUseKind::other_file_system, path + " holds an F2FS volume (a superblock magic 0xf2f52010)"};
  if (auto t = kind_from_magic(b.data(), got); !t.empty())
    return {InUseKind::other_file_system, path + " holds a file system of another kind (" + t + ")"};
#endif
  return {};
}

}  // namespace f2fscore
