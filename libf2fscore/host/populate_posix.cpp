// The POSIX leaf of populate() (populate_host.hpp): lstat, readdir,
// readlink, pread, lseek(SEEK_DATA/SEEK_HOLE), and on Linux
// llistxattr/lgetxattr.
//
// 64-bit file offsets on 32-bit hosts (off_t, st_size): must precede every
// include.
#ifndef _FILE_OFFSET_BITS
#define _FILE_OFFSET_BITS 64
#endif

#include <dirent.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <sys/types.h>
#include <unistd.h>
#if defined(__linux__)
#include <sys/sysmacros.h>
#include <sys/xattr.h>
#define F2FSCORE_POPULATE_XATTR 1
#endif

#include <cerrno>
#include <cstring>

#include "populate_host.hpp"

namespace f2fscore::populate_host {

namespace {

Error host_error(const std::string& what, int e) {
  Errc c = e == ENOENT ? Errc::not_found : e == ENOSPC ? Errc::no_space : Errc::io;
  return Error{c, e, Error::kNoOffset, what + ": " + std::strerror(e)};
}

/// new_encode_dev() (include/linux/kdev_t.h): the 32-bit form Linux keeps
/// in i_addr[0] (or [1]) of a device inode.
std::uint32_t encode_dev(dev_t d) {
  const auto ma = static_cast<std::uint32_t>(major(d));
  const auto mi = static_cast<std::uint32_t>(minor(d));
  return (mi & 0xffu) | (ma << 8) | ((mi & ~0xffu) << 12);
}

Timespec ts(time_t s, long ns) {
  return Timespec{static_cast<std::uint64_t>(s < 0 ? 0 : s), static_cast<std::uint32_t>(ns)};
}

Stat from(const struct stat& st) {
  Stat o;
  const mode_t m = st.st_mode;
  o.kind = S_ISDIR(m)                      ? Kind::directory
           : S_ISREG(m)                    ? Kind::regular
           : S_ISLNK(m)                    ? Kind::symlink
           : S_ISCHR(m) || S_ISBLK(m)      ? Kind::device
           : S_ISFIFO(m)                   ? Kind::fifo
           : S_ISSOCK(m)                   ? Kind::socket
                                           : Kind::other;
  o.mode = static_cast<std::uint16_t>(m & 0xFFFF);
  o.uid = static_cast<std::uint32_t>(st.st_uid);
  o.gid = static_cast<std::uint32_t>(st.st_gid);
  o.size = static_cast<std::uint64_t>(st.st_size > 0 ? st.st_size : 0);
  o.dense = static_cast<std::uint64_t>(st.st_blocks) * 512 >= o.size;
  o.nlink = static_cast<std::uint64_t>(st.st_nlink);
  o.id = {static_cast<std::uint64_t>(st.st_dev), static_cast<std::uint64_t>(st.st_ino)};
  if (o.kind == Kind::device) o.rdev = encode_dev(st.st_rdev);
#if defined(__APPLE__)
  o.atime = ts(st.st_atimespec.tv_sec, st.st_atimespec.tv_nsec);
  o.mtime = ts(st.st_mtimespec.tv_sec, st.st_mtimespec.tv_nsec);
  o.ctime = ts(st.st_ctimespec.tv_sec, st.st_ctimespec.tv_nsec);
#else
  o.atime = ts(st.st_atim.tv_sec, st.st_atim.tv_nsec);
  o.mtime = ts(st.st_mtim.tv_sec, st.st_mtim.tv_nsec);
  o.ctime = ts(st.st_ctim.tv_sec, st.st_ctim.tv_nsec);
#endif
  return o;
}

class PosixFile final : public File {
 public:
  explicit PosixFile(int fd) : fd_(fd) {}
  ~PosixFile() override { ::close(fd_); }

  Result<std::size_t> read_at(std::uint64_t off, std::span<std::uint8_t> buf) override {
    for (;;) {
      const ssize_t n = ::pread(fd_, buf.data(), buf.size(), static_cast<off_t>(off));
      if (n < 0 && errno == EINTR) continue;
      if (n < 0) return make_error(host_error("read at byte " + std::to_string(off), errno));
      return static_cast<std::size_t>(n);
    }
  }

  std::optional<std::pair<std::uint64_t, std::uint64_t>> next_data(std::uint64_t off, std::uint64_t size) override {
#if defined(SEEK_DATA) && defined(SEEK_HOLE)
    const off_t d = ::lseek(fd_, static_cast<off_t>(off), SEEK_DATA);
    if (d < 0 && errno == ENXIO) return std::nullopt;  // the rest is a hole
    if (d >= 0) {
      const off_t h = ::lseek(fd_, d, SEEK_HOLE);
      const std::uint64_t hole = h < 0 ? size : std::min<std::uint64_t>(static_cast<std::uint64_t>(h), size);
      return std::pair<std::uint64_t, std::uint64_t>{static_cast<std::uint64_t>(d), hole};
    }  // EINVAL etc.: no SEEK_DATA here; copy everything
#endif
    return std::pair<std::uint64_t, std::uint64_t>{off, size};
  }

 private:
  int fd_;
};

}  // namespace

std::string child(const std::string& dir, const std::string& name) { return dir + "/" + name; }

Result<Stat> lstat(const std::string& path) {
  struct stat st {};
  if (::lstat(path.c_str(), &st) != 0) return make_error(host_error("lstat", errno));
  return from(st);
}

Result<Stat> source_directory(const std::string& path) {
  struct stat st {};
  if (::stat(path.c_str(), &st) != 0) {
    const int e = errno;
    return make_error(e == ENOENT ? Errc::not_found : Errc::invalid_argument,
                      "source " + path + ": " + std::strerror(e), Error::kNoOffset, e);
  }
  if (!S_ISDIR(st.st_mode)) return make_error(Errc::invalid_argument, "source " + path + " is not a directory");
  if (::access(path.c_str(), R_OK | X_OK) != 0) {
    const int e = errno;
    return make_error(Errc::invalid_argument, "source " + path + ": " + std::strerror(e), Error::kNoOffset, e);
  }
  return from(st);
}

Result<std::vector<Name>> list(const std::string& dir, std::optional<Error>& read_error) {
  // O_NOATIME: listing the directory does not change the atime we copy.
  int flags = O_RDONLY | O_DIRECTORY | O_CLOEXEC;
#if defined(O_NOATIME)
  flags |= O_NOATIME;
#endif
  int fd = ::open(dir.c_str(), flags);
#if defined(O_NOATIME)
  if (fd < 0 && errno == EPERM) fd = ::open(dir.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
#endif
  DIR* d = fd < 0 ? nullptr : ::fdopendir(fd);
  if (d == nullptr) {
    const int e = errno;
    if (fd >= 0) ::close(fd);
    return make_error(host_error("cannot open directory", e));
  }
  std::vector<Name> names;
  errno = 0;
  while (const dirent* e = ::readdir(d)) {
    if (std::strcmp(e->d_name, ".") != 0 && std::strcmp(e->d_name, "..") != 0)
      names.push_back(Name{e->d_name, e->d_name});
    errno = 0;
  }
  const int rerr = errno;
  ::closedir(d);
  if (rerr != 0) read_error = host_error("reading the directory", rerr);
  return names;
}

Result<std::string> readlink(const std::string& path, const Stat& st) {
  std::string target(static_cast<std::size_t>(st.size) + 1, '\0');
  const ssize_t n = ::readlink(path.c_str(), target.data(), target.size());
  if (n < 0) return make_error(host_error("readlink", errno));
  if (static_cast<std::size_t>(n) >= target.size())
    return make_error(Errc::io, "readlink: the link changed while read");
  target.resize(static_cast<std::size_t>(n));
  return target;
}

std::vector<std::pair<std::string, std::vector<std::uint8_t>>> xattrs([[maybe_unused]] const std::string& path,
                                                                      [[maybe_unused]] std::vector<Error>& problems) {
  std::vector<std::pair<std::string, std::vector<std::uint8_t>>> out;
#if defined(F2FSCORE_POPULATE_XATTR)
  ssize_t len = ::llistxattr(path.c_str(), nullptr, 0);
  if (len < 0) {
    if (errno != ENOTSUP) problems.push_back(host_error("llistxattr", errno));
    return out;
  }
  if (len == 0) return out;
  std::string names(static_cast<std::size_t>(len), '\0');
  len = ::llistxattr(path.c_str(), names.data(), names.size());
  if (len < 0) {
    problems.push_back(host_error("llistxattr", errno));
    return out;
  }
  names.resize(static_cast<std::size_t>(len));
  for (std::size_t p = 0; p < names.size();) {
    const std::string full = names.c_str() + p;
    p += full.size() + 1;
    if (full.empty()) continue;
    const ssize_t vlen = ::lgetxattr(path.c_str(), full.c_str(), nullptr, 0);
    if (vlen < 0) {
      problems.push_back(host_error("lgetxattr " + full, errno));
      continue;
    }
    std::vector<std::uint8_t> value(static_cast<std::size_t>(vlen));
    const ssize_t got = ::lgetxattr(path.c_str(), full.c_str(), value.data(), value.size());
    if (got < 0) {
      problems.push_back(host_error("lgetxattr " + full, errno));
      continue;
    }
    value.resize(static_cast<std::size_t>(got));
    out.emplace_back(full, std::move(value));
  }
#endif
  return out;
}

Result<std::unique_ptr<File>> open(const std::string& path) {
  int flags = O_RDONLY | O_CLOEXEC;
#if defined(O_NOATIME)
  flags |= O_NOATIME;  // reading does not change the times we copy
#endif
  int fd = ::open(path.c_str(), flags);
#if defined(O_NOATIME)
  if (fd < 0 && errno == EPERM) fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
#endif
  if (fd < 0) return make_error(host_error("open", errno));
  return std::unique_ptr<File>(new PosixFile(fd));
}

const char* links_file_name() { return nullptr; }

std::optional<std::pair<std::string, std::string>> parse_links_line(const std::string&) { return std::nullopt; }

}  // namespace f2fscore::populate_host
