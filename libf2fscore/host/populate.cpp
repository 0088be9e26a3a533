// Populating a mounted volume from a host directory (populate.hpp): the one
// module of the library that reads the host file system. POSIX only; other
// hosts get Errc::unsupported.
//
// 64-bit file offsets on 32-bit hosts (off_t, st_size): must precede every
// include.
#ifndef _FILE_OFFSET_BITS
#define _FILE_OFFSET_BITS 64
#endif

#include "f2fscore/populate.hpp"

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <map>
#include <optional>
#include <set>
#include <utility>

#include "f2fscore/disk/xattr.hpp"
#include "f2fscore/endian.hpp"

#if defined(__unix__) || defined(__APPLE__)
#define F2FSCORE_POPULATE_POSIX 1
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
#endif

namespace f2fscore {

std::string PopulateProblem::to_string() const {
  return source + " -> " + path + ": " + error.to_string();
}

#if !defined(F2FSCORE_POPULATE_POSIX)

Result<PopulateReport> populate(Writer&, const std::string&, const PopulateOptions&) {
  return make_error(Errc::unsupported, "populate: reading a host directory needs POSIX calls, not available on this host");
}

#else

namespace {

std::string join(const std::string& dir, const std::string& name) {
  return dir == "/" ? "/" + name : dir + "/" + name;
}

std::string sys_text(int e) { return std::strerror(e); }

Error host_error(const std::string& what, int e) {
  Errc c = e == ENOENT ? Errc::not_found : e == ENOSPC ? Errc::no_space : Errc::io;
  return Error{c, e, Error::kNoOffset, what + ": " + sys_text(e)};
}

/// new_encode_dev() (include/linux/kdev_t.h): the 32-bit form Linux keeps
/// in i_addr[0] (or [1]) of a device inode.
std::uint32_t encode_dev(dev_t d) {
  const auto ma = static_cast<std::uint32_t>(major(d));
  const auto mi = static_cast<std::uint32_t>(minor(d));
  return (mi & 0xffu) | (ma << 8) | ((mi & ~0xffu) << 12);
}

/// POSIX ACL from the xattr form getxattr(2) returns (posix_acl_xattr_header
/// version 2, 8-byte entries {tag, perm, id}) to f2fs's compact disk form
/// (f2fs_acl_to_disk() in fs/f2fs/acl.c: version 1; 4-byte {tag, perm} for
/// ACL_USER_OBJ, ACL_GROUP_OBJ, ACL_MASK, ACL_OTHER; 8 bytes with the id for
/// ACL_USER and ACL_GROUP).
Result<std::vector<std::uint8_t>> acl_to_disk(const std::vector<std::uint8_t>& x) {
  if (x.size() < 4 || (x.size() - 4) % 8 != 0 || load_le32(x.data(), 0) != 2)
    return make_error(Errc::invalid_argument, "POSIX ACL value is not in the version 2 xattr form");
  std::vector<std::uint8_t> out(4);
  store_le32(out.data(), 0, 1);
  for (std::size_t off = 4; off < x.size(); off += 8) {
    const std::uint16_t tag = load_le16(x.data(), off);
    const std::size_t at = out.size();
    switch (tag) {
      case 0x01: case 0x04: case 0x10: case 0x20:
        out.resize(at + 4);
        std::memcpy(out.data() + at, x.data() + off, 4);
        break;
      case 0x02: case 0x08:
        out.resize(at + 8);
        std::memcpy(out.data() + at, x.data() + off, 8);
        break;
      default:
        return make_error(Errc::invalid_argument, "POSIX ACL entry with unknown tag " + std::to_string(tag));
    }
  }
  return out;
}

struct HostTimes {
  Timespec atime, mtime, ctime;
};

class Populator {
 public:
  Populator(Writer& w, const PopulateOptions& o, PopulateReport& rep) : w_(w), o_(o), rep_(rep) {
    std::size_t chunk = std::max<std::size_t>(o.chunk_bytes, 4096);
    chunk -= chunk % 4096;
    buf_.resize(chunk);
  }

  // Returns an error only for what ends the whole walk (no_space).
  Status directory(const std::string& src, const std::string& dst) {
    // O_NOATIME: listing the directory does not change the atime we copy.
    int flags = O_RDONLY | O_DIRECTORY | O_CLOEXEC;
#if defined(O_NOATIME)
    flags |= O_NOATIME;
#endif
    int fd = ::open(src.c_str(), flags);
#if defined(O_NOATIME)
    if (fd < 0 && errno == EPERM) fd = ::open(src.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
#endif
    DIR* d = fd < 0 ? nullptr : ::fdopendir(fd);
    if (d == nullptr) {
      problem(src, dst, host_error("cannot open directory", errno));
      if (fd >= 0) ::close(fd);
      return {};
    }
    std::vector<std::string> names;
    errno = 0;
    while (const dirent* e = ::readdir(d)) {
      if (std::strcmp(e->d_name, ".") != 0 && std::strcmp(e->d_name, "..") != 0) names.emplace_back(e->d_name);
      errno = 0;
    }
    const int rerr = errno;
    ::closedir(d);
    if (rerr != 0) problem(src, dst, host_error("reading the directory", rerr));
    std::sort(names.begin(), names.end());  // the same image from the same tree
    for (const auto& n : names) {
      if (auto s = entry(src + "/" + n, join(dst, n)); !s) return s;
    }
    return {};
  }

  Status entry(const std::string& src, const std::string& dst) {
    struct stat st {};
    if (::lstat(src.c_str(), &st) != 0) {
      problem(src, dst, host_error("lstat", errno));
      return {};
    }
    const bool dir = S_ISDIR(st.st_mode);
    if (!dir && st.st_nlink > 1) {
      auto it = links_.find({st.st_dev, st.st_ino});
      if (it != links_.end()) {
        bool made = false;
        auto s = make_entry(src, dst, "link to " + it->second.path, made, [&]() -> Result<nid_t> {
          auto l = w_.link(it->second.path, dst);
          if (!l) return tl::unexpected(l.error());
          return it->second.ino;
        });
        if (!s || !made) return s;
        ++rep_.hard_links;
        done(dst);
        return {};
      }
    }
    Result<nid_t> ino = make_error(Errc::unsupported, "");
    const auto perm = static_cast<std::uint16_t>(st.st_mode & 07777);
    if (dir) {
      ino = w_.mkdir(dst, perm);
      if (!ino && ino.error().code == Errc::exists) {
        // A second populate into the same target: merge into the directory.
        auto there = existing(src, dst);
        if (!there) return tl::unexpected(there.error());
        if (!*there) return {};
        if (!(*there)->is_dir()) {
          problem(src, dst, Error{Errc::exists, 0, Error::kNoOffset, "exists in the volume and is not a directory"});
          return {};
        }
        ino = (*there)->ino;
        ++rep_.merged_directories;
      } else if (!ino) {
        return fail(src, dst, ino.error(), "mkdir");
      } else {
        ++rep_.directories;
      }
      if (auto s = directory(src, dst); !s) return s;
    } else if (S_ISREG(st.st_mode)) {
      bool made = false;
      if (auto s = make_entry(src, dst, "create", made, [&] { return ino = w_.create(dst, perm); }); !s || !made) return s;
      ++rep_.files;
      if (auto s = copy_data(src, dst, *ino, st); !s) return s;
    } else if (S_ISLNK(st.st_mode)) {
      std::string target(static_cast<std::size_t>(st.st_size > 0 ? st.st_size : 0) + 1, '\0');
      const ssize_t n = ::readlink(src.c_str(), target.data(), target.size());
      if (n < 0 || static_cast<std::size_t>(n) >= target.size()) {
        problem(src, dst, n < 0 ? host_error("readlink", errno)
                                : Error{Errc::io, 0, Error::kNoOffset, "readlink: the link changed while read"});
        return {};
      }
      target.resize(static_cast<std::size_t>(n));
      bool made = false;
      if (auto s = make_entry(src, dst, "symlink", made, [&] { return ino = w_.symlink(target, dst); }); !s || !made)
        return s;
      ++rep_.symlinks;
    } else if (S_ISCHR(st.st_mode) || S_ISBLK(st.st_mode) || S_ISFIFO(st.st_mode) || S_ISSOCK(st.st_mode)) {
      const bool dev = S_ISCHR(st.st_mode) || S_ISBLK(st.st_mode);
      bool made = false;
      if (auto s = make_entry(src, dst, "mknod", made, [&] {
            return ino = w_.mknod(dst, static_cast<std::uint16_t>(st.st_mode & 0xFFFF), dev ? encode_dev(st.st_rdev) : 0);
          });
          !s || !made)
        return s;
      ++rep_.specials;
    } else {
      problem(src, dst, Error{Errc::unsupported, 0, Error::kNoOffset, "unknown file type"});
      return {};
    }
    if (auto s = attributes(src, dst, *ino, st); !s) return s;
    if (!dir && st.st_nlink > 1) links_[{st.st_dev, st.st_ino}] = Linked{dst, *ino, st};
    done(dst);
    return {};
  }

  /// Times and owner of the target directory, xattrs included.
  Status attributes(const std::string& src, const std::string& dst, nid_t ino, const struct stat& st) {
    if (o_.xattrs) {
      if (auto s = copy_xattrs(src, dst, ino); !s) return s;
    }
    return set_attr(src, dst, ino, st);
  }

  /// Hard-linked inodes: link() changed their ctime after set_attr(), as in
  /// Linux; put the source's times back.
  Status relink_times() {
    for (const auto& [key, l] : links_) {
      if (auto s = set_attr(l.path, l.path, l.ino, l.st); !s) return s;
    }
    return {};
  }

 private:
  struct Linked {
    std::string path;
    nid_t ino = 0;
    struct stat st {};
  };

  // What is at dst in the volume (a populate into a target that has
  // entries): its stat, or nullopt after recording a problem.
  Result<std::optional<WriterStat>> existing(const std::string& src, const std::string& dst) {
    auto ino = w_.lookup(dst);
    if (!ino) {
      if (auto f = fail(src, dst, ino.error(), "lookup of the existing entry"); !f) return tl::unexpected(f.error());
      return std::optional<WriterStat>{};
    }
    auto st = w_.stat(*ino);
    if (!st) {
      if (auto f = fail(src, dst, st.error(), "stat of the existing entry"); !f) return tl::unexpected(f.error());
      return std::optional<WriterStat>{};
    }
    return std::optional<WriterStat>{*st};
  }

  // Calls make() to create the non-directory dst. When dst exists: kept as
  // it is (counted in kept), or with overwrite unlinked and made again; a
  // directory there is a problem of the entry. `made`: dst was created.
  template <class Make>
  Status make_entry(const std::string& src, const std::string& dst, const std::string& op, bool& made, Make make) {
    Result<nid_t> r = make();
    if (!r && r.error().code == Errc::exists) {
      auto there = existing(src, dst);
      if (!there) return tl::unexpected(there.error());
      if (!*there) return {};
      if ((*there)->is_dir()) {
        problem(src, dst, Error{Errc::exists, 0, Error::kNoOffset, "a directory of that name exists in the volume"});
        return {};
      }
      if (!o_.overwrite) {
        ++rep_.kept;
        done(dst);
        return {};
      }
      if (auto u = w_.unlink(dst); !u) return fail(src, dst, u.error(), "unlink of the existing entry");
      ++rep_.replaced;
      r = make();
    }
    if (!r) return fail(src, dst, r.error(), op);
    made = true;
    return {};
  }

  void problem(const std::string& src, const std::string& dst, Error e) {
    rep_.problems.push_back(PopulateProblem{src, dst, std::move(e)});
  }
  void done(const std::string& dst) {
    if (o_.on_entry) o_.on_entry(dst);
    advance(work_done_ + 1);
  }

 public:
  /// Counts the units of PopulateOptions::progress under `src` (the
  /// directory itself not counted) and reports 0 of them.
  void start_progress(const std::string& src) {
    if (!o_.progress) return;
    std::set<std::pair<dev_t, ino_t>> seen;
    work_max_ = count_tree(src, seen);
    o_.progress(0, work_max_);
    shown_ = 0;
  }
  /// The last report: current == max.
  void finish_progress() {
    if (o_.progress) o_.progress(work_max_, work_max_);
  }

 private:
  static std::uint64_t data_units(std::uint64_t bytes) { return (bytes + 4095) / 4096; }

  std::uint64_t count_tree(const std::string& src, std::set<std::pair<dev_t, ino_t>>& seen) {
    DIR* d = ::opendir(src.c_str());
    if (d == nullptr) return 0;
    std::uint64_t units = 0;
    std::vector<std::string> dirs;
    while (const dirent* e = ::readdir(d)) {
      if (std::strcmp(e->d_name, ".") == 0 || std::strcmp(e->d_name, "..") == 0) continue;
      ++units;
      const std::string path = src + "/" + e->d_name;
      struct stat st {};
      if (::lstat(path.c_str(), &st) != 0) continue;
      if (S_ISDIR(st.st_mode)) {
        dirs.push_back(path);
      } else if (S_ISREG(st.st_mode) && (st.st_nlink <= 1 || seen.insert({st.st_dev, st.st_ino}).second)) {
        units += data_units(static_cast<std::uint64_t>(st.st_size));
      }
    }
    ::closedir(d);
    for (const auto& sub : dirs) units += count_tree(sub, seen);
    return units;
  }

  // Moves the progress to `to` units (clamped to the count), reporting when
  // the per-mille shown changes.
  void advance(std::uint64_t to) {
    if (!o_.progress) return;
    work_done_ = std::max(work_done_, std::min(to, work_max_));
    const std::uint64_t permille = work_max_ ? work_done_ * 1000 / work_max_ : 1000;
    if (permille == shown_) return;
    shown_ = permille;
    o_.progress(work_done_, work_max_);
  }
  // A Writer error on one entry: no_space ends the walk, anything else is
  // recorded and the walk goes on.
  Status fail(const std::string& src, const std::string& dst, Error e, const std::string& op) {
    e.message = op + ": " + e.message;
    if (e.code == Errc::no_space) {
      e.message = dst + " (from " + src + "): " + e.message;
      problem(src, dst, e);
      return tl::unexpected<Error>(std::move(e));
    }
    problem(src, dst, std::move(e));
    return {};
  }

  Status set_attr(const std::string& src, const std::string& dst, nid_t ino, const struct stat& st) {
    SetAttr a;
    if (!S_ISLNK(st.st_mode)) a.mode = static_cast<std::uint16_t>(st.st_mode & 07777);
    a.uid = o_.preserve_owner ? static_cast<std::uint32_t>(st.st_uid) : 0u;
    a.gid = o_.preserve_owner ? static_cast<std::uint32_t>(st.st_gid) : 0u;
    if (o_.fixed_time) {
      const Timespec t{*o_.fixed_time, 0};
      a.atime = a.mtime = a.ctime = t;
    } else {
      auto ts = [](time_t s, long ns) {
        return Timespec{static_cast<std::uint64_t>(s < 0 ? 0 : s), static_cast<std::uint32_t>(ns)};
      };
#if defined(__APPLE__)
      a.atime = ts(st.st_atimespec.tv_sec, st.st_atimespec.tv_nsec);
      a.mtime = ts(st.st_mtimespec.tv_sec, st.st_mtimespec.tv_nsec);
      a.ctime = ts(st.st_ctimespec.tv_sec, st.st_ctimespec.tv_nsec);
#else
      a.atime = ts(st.st_atim.tv_sec, st.st_atim.tv_nsec);
      a.mtime = ts(st.st_mtim.tv_sec, st.st_mtim.tv_nsec);
      a.ctime = ts(st.st_ctim.tv_sec, st.st_ctim.tv_nsec);
#endif
    }
    auto s = w_.setattr(ino, a);
    if (!s) return fail(src, dst, s.error(), "setattr");
    return {};
  }

  Status copy_xattrs([[maybe_unused]] const std::string& src, [[maybe_unused]] const std::string& dst,
                     [[maybe_unused]] nid_t ino) {
#if defined(F2FSCORE_POPULATE_XATTR)
    ssize_t len = ::llistxattr(src.c_str(), nullptr, 0);
    if (len < 0) {
      if (errno != ENOTSUP) problem(src, dst, host_error("llistxattr", errno));
      return {};
    }
    if (len == 0) return {};
    std::string names(static_cast<std::size_t>(len), '\0');
    len = ::llistxattr(src.c_str(), names.data(), names.size());
    if (len < 0) {
      problem(src, dst, host_error("llistxattr", errno));
      return {};
    }
    names.resize(static_cast<std::size_t>(len));
    for (std::size_t p = 0; p < names.size();) {
      const std::string full = names.c_str() + p;
      p += full.size() + 1;
      if (full.empty()) continue;
      std::uint8_t index = 0;
      std::string name;
      static const std::pair<const char*, std::uint8_t> kPrefixes[] = {
          {"user.", disk::xattr_index::user},
          {"trusted.", disk::xattr_index::trusted},
          {"security.", disk::xattr_index::security},
      };
      for (const auto& [pre, idx] : kPrefixes) {
        if (full.rfind(pre, 0) == 0) {
          index = idx;
          name = full.substr(std::strlen(pre));
        }
      }
      if (full == "system.posix_acl_access") index = disk::xattr_index::posix_acl_access;
      if (full == "system.posix_acl_default") index = disk::xattr_index::posix_acl_default;
      if (index == 0) {
        problem(src, dst, Error{Errc::unsupported, 0, Error::kNoOffset,
                                "xattr " + full + ": a namespace f2fs does not store"});
        continue;
      }
      const ssize_t vlen = ::lgetxattr(src.c_str(), full.c_str(), nullptr, 0);
      if (vlen < 0) {
        problem(src, dst, host_error("lgetxattr " + full, errno));
        continue;
      }
      std::vector<std::uint8_t> value(static_cast<std::size_t>(vlen));
      const ssize_t got = ::lgetxattr(src.c_str(), full.c_str(), value.data(), value.size());
      if (got < 0) {
        problem(src, dst, host_error("lgetxattr " + full, errno));
        continue;
      }
      value.resize(static_cast<std::size_t>(got));
      if (index == disk::xattr_index::posix_acl_access || index == disk::xattr_index::posix_acl_default) {
        auto d = acl_to_disk(value);
        if (!d) {
          problem(src, dst, Error{Errc::invalid_argument, 0, Error::kNoOffset, "xattr " + full + ": " + d.error().message});
          continue;
        }
        value = std::move(*d);
      }
      auto s = w_.setxattr(ino, index, name, value);
      if (!s) {
        if (auto f = fail(src, dst, s.error(), "setxattr " + full); !f) return f;
        continue;
      }
      ++rep_.xattrs;
    }
#endif
    return {};
  }

  // Writes [from, to) of the host file at the same offsets.
  Status copy_range(const std::string& src, const std::string& dst, int fd, nid_t ino, std::uint64_t from,
                    std::uint64_t to, bool* shrank) {
    while (from < to) {
      const std::size_t want = static_cast<std::size_t>(std::min<std::uint64_t>(to - from, buf_.size()));
      std::size_t got = 0;
      while (got < want) {
        const ssize_t n = ::pread(fd, buf_.data() + got, want - got, static_cast<off_t>(from + got));
        if (n < 0 && errno == EINTR) continue;
        if (n < 0) {
          problem(src, dst, host_error("read at byte " + std::to_string(from + got), errno));
          *shrank = true;
          return {};
        }
        if (n == 0) break;
        got += static_cast<std::size_t>(n);
      }
      if (got > 0) {
        auto wr = w_.write(ino, from, std::span<const std::uint8_t>(buf_.data(), got));
        ++rep_.write_calls;
        if (!wr) {
          // The failed call may have mapped part of its span and moved
          // i_size: cut the file back to what the earlier calls wrote.
          Error e = wr.error();
          if (auto t = w_.truncate(ino, from); t)
            e.message += "; the file is kept with its first " + std::to_string(from) + " bytes";
          else
            e.message += "; truncating it to " + std::to_string(from) + " bytes failed too: " + t.error().message;
          return fail(src, dst, std::move(e), "write at byte " + std::to_string(from));
        }
        rep_.bytes_written += got;
        advance(file_base_ + data_units(from + got));
      }
      if (got < want) {
        problem(src, dst, Error{Errc::io, 0, Error::kNoOffset, "the file shrank while read (at byte " +
                                                                   std::to_string(from + got) + ")"});
        *shrank = true;
        return {};
      }
      from += got;
    }
    return {};
  }

  Status copy_data(const std::string& src, const std::string& dst, nid_t ino, const struct stat& st) {
    const auto size = static_cast<std::uint64_t>(st.st_size);
    if (size == 0) return {};
    int flags = O_RDONLY | O_CLOEXEC;
#if defined(O_NOATIME)
    flags |= O_NOATIME;  // reading does not change the times we copy
#endif
    int fd = ::open(src.c_str(), flags);
#if defined(O_NOATIME)
    if (fd < 0 && errno == EPERM) fd = ::open(src.c_str(), O_RDONLY | O_CLOEXEC);
#endif
    if (fd < 0) {
      problem(src, dst, host_error("open", errno));
      return {};
    }
    Status st_out{};
    bool shrank = false;
    const std::uint64_t written_before = rep_.bytes_written;
    file_base_ = work_done_;
    std::uint64_t off = 0;
    // A file with as many blocks allocated as its size needs has no hole:
    // no need to ask (two system calls fewer per small file).
    const bool dense = static_cast<std::uint64_t>(st.st_blocks) * 512 >= size;
    while (off < size && !shrank) {
      std::uint64_t data = off, hole = size;
#if defined(SEEK_DATA) && defined(SEEK_HOLE)
      if (!dense) {
        const off_t d = ::lseek(fd, static_cast<off_t>(off), SEEK_DATA);
        if (d < 0 && errno == ENXIO) break;  // the rest is a hole
        if (d >= 0) {
          data = static_cast<std::uint64_t>(d);
          const off_t h = ::lseek(fd, d, SEEK_HOLE);
          hole = h < 0 ? size : std::min<std::uint64_t>(static_cast<std::uint64_t>(h), size);
        }  // EINVAL etc.: no SEEK_DATA here; copy everything
      }
#endif
      if (data >= size) break;
      st_out = copy_range(src, dst, fd, ino, data, hole, &shrank);
      if (!st_out) break;
      off = hole;
    }
    ::close(fd);
    if (!st_out) return st_out;
    advance(file_base_ + data_units(size));  // holes and a shrunk file's tail count as copied
    if (shrank) return {};
    // A file ending in a hole: set the size; the tail stays unallocated.
    auto cur = w_.stat(ino);
    if (!cur) return fail(src, dst, cur.error(), "stat");
    rep_.hole_bytes += size - std::min(size, rep_.bytes_written - written_before);
    if (cur->size != size) {
      auto t = w_.truncate(ino, size);
      if (!t) return fail(src, dst, t.error(), "truncate to " + std::to_string(size));
    }
    return {};
  }

  Writer& w_;
  const PopulateOptions& o_;
  PopulateReport& rep_;
  std::vector<std::uint8_t> buf_;
  std::map<std::pair<dev_t, ino_t>, Linked> links_;
  // PopulateOptions::progress: units counted, done, the per-mille last
  // reported, and work_done_ when the current file's data began.
  std::uint64_t work_max_ = 0, work_done_ = 0, shown_ = 0, file_base_ = 0;
};

// Creates the missing directories of `path` (mode 0755); returns the last.
Result<nid_t> make_target(Writer& w, const std::string& path) {
  if (path.empty() || path[0] != '/')
    return make_error(Errc::invalid_argument, "target \"" + path + "\" is not an absolute path in the volume");
  std::string cur = "/";
  auto ino = w.lookup("/");
  if (!ino) return ino;
  std::size_t p = 1;
  while (p < path.size()) {
    std::size_t q = path.find('/', p);
    if (q == std::string::npos) q = path.size();
    if (q > p) {
      const std::string next = join(cur, path.substr(p, q - p));
      ino = w.lookup(next);
      if (!ino && ino.error().code == Errc::not_found) ino = w.mkdir(next, 0755);
      if (!ino) return make_error(ino.error().code, "target " + next + ": " + ino.error().message);
      cur = next;
    }
    p = q + 1;
  }
  auto s = w.stat(*ino);
  if (!s) return make_error(s.error());
  if (!s->is_dir()) return make_error(Errc::invalid_argument, "target " + cur + " is not a directory in the volume");
  return ino;
}

}  // namespace

Result<PopulateReport> populate(Writer& w, const std::string& source_dir, const PopulateOptions& opts) {
  struct stat st {};
  if (::stat(source_dir.c_str(), &st) != 0) {
    const int e = errno;
    return make_error(e == ENOENT ? Errc::not_found : Errc::invalid_argument,
                      "source " + source_dir + ": " + sys_text(e), Error::kNoOffset, e);
  }
  if (!S_ISDIR(st.st_mode)) return make_error(Errc::invalid_argument, "source " + source_dir + " is not a directory");
  if (::access(source_dir.c_str(), R_OK | X_OK) != 0)
    return make_error(Errc::invalid_argument, "source " + source_dir + ": " + sys_text(errno), Error::kNoOffset, errno);
  std::string target = opts.target.empty() ? "/" : opts.target;
  while (target.size() > 1 && target.back() == '/') target.pop_back();
  auto root = make_target(w, target);
  if (!root) return make_error(root.error());
  PopulateReport rep;
  Populator p(w, opts, rep);
  std::string src = source_dir;
  while (src.size() > 1 && src.back() == '/') src.pop_back();
  p.start_progress(src);
  if (auto s = p.directory(src, target); !s) return make_error(s.error());
  if (!opts.keep_target_attrs) {
    if (auto s = p.attributes(src, target, *root, st); !s) return make_error(s.error());
  }
  if (auto s = p.relink_times(); !s) return make_error(s.error());
  p.finish_progress();
  return rep;
}

#endif

}  // namespace f2fscore
