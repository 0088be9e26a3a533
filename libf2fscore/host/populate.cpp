// Populating a mounted volume from a host directory (populate.hpp): the
// walk and what it writes through the Writer, the same on every host. What
// it reads of the host file system comes from the leaf of the platform
// (populate_host.hpp: populate_posix.cpp, populate_win32.cpp).
#include "f2fscore/populate.hpp"

#include <algorithm>
#include <cstring>
#include <map>
#include <optional>
#include <set>
#include <utility>

#include "f2fscore/disk/xattr.hpp"
#include "f2fscore/endian.hpp"

#include "populate_host.hpp"

namespace f2fscore {

std::string PopulateProblem::to_string() const {
  return source + " -> " + path + ": " + error.to_string();
}

namespace {

namespace host = populate_host;

std::string join(const std::string& dir, const std::string& name) {
  return dir == "/" ? "/" + name : dir + "/" + name;
}

constexpr std::uint16_t kTypeBits = 0170000;  // S_IFMT

/// PopulateOptions::mount_point with a leading '/' and no trailing one.
std::string normal_mount_point(const std::string& mp) {
  std::string m = mp.empty() ? "/" : mp;
  if (m[0] != '/') m.insert(0, "/");
  while (m.size() > 1 && m.back() == '/') m.pop_back();
  return m;
}

/// The path an entry's rules are looked up by: the mount point, then the
/// entry's path in the volume (set_perms_and_caps() and
/// set_selinux_xattr() in f2fs-tools' fsck/sload.c build it so).
std::string rule_path(const std::string& mp, const std::string& volume_path) {
  if (mp == "/") return volume_path;
  return volume_path == "/" ? mp : mp + volume_path;
}

/// Looks up the rules of every entry before populate() writes anything
/// (check_populate_rules()).
class RuleChecker {
 public:
  RuleChecker(const PopulateOptions& o, const std::string& top) : o_(o), mp_(normal_mount_point(o.mount_point)), top_(top) {
    links_file_ = host::links_file_name();
  }

  void check(const std::string& dst, std::uint16_t mode, bool target) {
    const std::string key = rule_path(mp_, dst);
    std::uint16_t perm = static_cast<std::uint16_t>(mode & 07777);
    if (o_.fs_config && !target) {
      if (const FsConfigRule* r = o_.fs_config->find(key)) {
        perm = r->mode;
      } else {
        missing("fs_config " + o_.fs_config->name() + ": no rule for " + key.substr(1));
        return;
      }
    }
    if (o_.file_contexts) {
      auto c = o_.file_contexts->lookup(key, static_cast<std::uint32_t>((mode & kTypeBits) | perm));
      if (!c) missing(c.error().message);
    }
  }

  void walk(const std::string& src, const std::string& dst) {
    std::optional<Error> read_error;
    auto names = host::list(src, read_error);
    if (!names) return;  // populate() reports it
    std::sort(names->begin(), names->end(), [](const host::Name& a, const host::Name& b) { return a.volume < b.volume; });
    for (const auto& n : *names) {
      if (src == top_ && links_file_ != nullptr && n.host == links_file_) continue;
      const std::string path = host::child(src, n.host);
      const std::string vdst = join(dst, n.volume);
      auto st = host::lstat(path);
      if (!st) continue;
      check(vdst, st->mode, false);
      if (st->kind == host::Kind::directory) walk(path, vdst);
    }
  }

  Status result() const {
    if (count_ == 0) return {};
    return make_error(Errc::not_found, first_ + (count_ > 1 ? " (and " + std::to_string(count_ - 1) +
                                                                  " more entries without a rule or context)"
                                                            : std::string()) +
                                           "; nothing written");
  }

 private:
  void missing(std::string m) {
    if (count_++ == 0) first_ = std::move(m);
  }

  const PopulateOptions& o_;
  std::string mp_, top_;
  const char* links_file_ = nullptr;
  std::string first_;
  std::uint64_t count_ = 0;
};

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

// One entry of a directory being copied: a host entry, or a symlink of
// the links file (host::links_file_name()).
struct Item {
  std::string volume;       // name in the volume
  std::string host;         // name in the host directory (host entries)
  std::string link_target;  // target (links-file symlinks)
  bool from_links_file = false;
};

class Populator {
 public:
  Populator(Writer& w, const PopulateOptions& o, PopulateReport& rep)
      : w_(w), o_(o), rep_(rep), mp_(normal_mount_point(o.mount_point)) {
    std::size_t chunk = std::max<std::size_t>(o.chunk_bytes, 4096);
    chunk -= chunk % 4096;
    buf_.resize(chunk);
  }

  // Returns an error only for what ends the whole walk (no_space).
  Status directory(const std::string& src, const std::string& dst) {
    std::optional<Error> read_error;
    auto names = host::list(src, read_error);
    if (!names) {
      problem(src, dst, names.error());
      return {};
    }
    if (read_error) problem(src, dst, *read_error);
    std::vector<Item> items;
    for (auto& n : *names) {
      if (src == top_ && links_file_ != nullptr && n.host == links_file_) continue;
      items.push_back(Item{std::move(n.volume), std::move(n.host), {}, false});
    }
    if (auto it = links_.find(dst); it != links_.end()) {
      for (auto& [name, target] : it->second) items.push_back(Item{name, {}, target, true});
      links_.erase(it);
    }
    // The same image from the same tree.
    std::sort(items.begin(), items.end(), [](const Item& a, const Item& b) { return a.volume < b.volume; });
    for (const auto& i : items) {
      auto s = i.from_links_file ? link_entry(join(dst, i.volume), i.link_target)
                                 : entry(host::child(src, i.host), join(dst, i.volume));
      if (!s) return s;
    }
    return {};
  }

  Status entry(const std::string& src, const std::string& dst) {
    auto got = host::lstat(src);
    if (!got) {
      problem(src, dst, got.error());
      return {};
    }
    const host::Stat& st = *got;
    const bool dir = st.kind == host::Kind::directory;
    if (!dir && st.nlink > 1) {
      auto it = links_seen_.find(st.id);
      if (it != links_seen_.end()) {
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
    const auto perm = static_cast<std::uint16_t>(st.mode & 07777);
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
    } else if (st.kind == host::Kind::regular) {
      bool made = false;
      if (auto s = make_entry(src, dst, "create", made, [&] { return ino = w_.create(dst, perm); }); !s || !made) return s;
      ++rep_.files;
      if (o_.compress && o_.compress(src, st.size)) {
        constexpr std::uint32_t kComprFl = 0x4;  // F2FS_COMPR_FL
        if (auto f = w_.set_flags(*ino, kComprFl, kComprFl); !f) return fail(src, dst, f.error(), "compress");
      }
      if (auto s = copy_data(src, dst, *ino, st); !s) return s;
      if (o_.release_compressed) {
        // F2FS_COMPR_FL: made compressed (sload.f2fs -r releases those).
        auto ws = w_.stat(*ino);
        if (!ws) return fail(src, dst, ws.error(), "stat");
        if (ws->flags & 0x4u)
          if (auto r = w_.release_compress_blocks(*ino); !r) return fail(src, dst, r.error(), "release compressed blocks");
      }
    } else if (st.kind == host::Kind::symlink) {
      auto target = host::readlink(src, st);
      if (!target) {
        problem(src, dst, target.error());
        return {};
      }
      bool made = false;
      if (auto s = make_entry(src, dst, "symlink", made, [&] { return ino = w_.symlink(*target, dst); }); !s || !made)
        return s;
      ++rep_.symlinks;
    } else if (st.kind == host::Kind::device || st.kind == host::Kind::fifo || st.kind == host::Kind::socket) {
      bool made = false;
      if (auto s = make_entry(src, dst, "mknod", made, [&] {
            return ino = w_.mknod(dst, st.mode, st.kind == host::Kind::device ? st.rdev : 0);
          });
          !s || !made)
        return s;
      ++rep_.specials;
    } else {
      problem(src, dst, Error{Errc::unsupported, 0, Error::kNoOffset, "unknown file type"});
      return {};
    }
    if (auto s = attributes(src, dst, *ino, st); !s) return s;
    if (!dir && st.nlink > 1) links_seen_[st.id] = Linked{dst, *ino, st};
    done(dst);
    return {};
  }

  /// Mode, owner and times of an entry (`target`: of the target
  /// directory), xattrs included.
  Status attributes(const std::string& src, const std::string& dst, nid_t ino, const host::Stat& st,
                    bool target = false) {
    if (o_.xattrs) {
      if (auto s = copy_xattrs(src, dst, ino); !s) return s;
    }
    if (auto s = android_xattrs(src, dst, ino, st, target); !s) return s;
    return set_attr(src, dst, ino, st, target);
  }

  /// Hard-linked inodes: link() changed their ctime after set_attr(), as in
  /// Linux; put the source's times back.
  Status relink_times() {
    // In the order of the volume's paths, not of the host's inode numbers:
    // the same image from the same tree.
    std::vector<const Linked*> order;
    for (const auto& [key, l] : links_seen_) order.push_back(&l);
    std::sort(order.begin(), order.end(), [](const Linked* a, const Linked* b) { return a->path < b->path; });
    for (const Linked* l : order) {
      if (auto s = set_attr(l->path, l->path, l->ino, l->st); !s) return s;
    }
    return {};
  }

  /// The symlinks of the links file at the top of `src` (none where the
  /// host has real symlinks, or the file is not there), made in the
  /// directories of `target` as the walk reaches them.
  void load_links(const std::string& src, const std::string& target) {
    top_ = src;
    links_file_ = host::links_file_name();
    if (links_file_ == nullptr) return;
    const std::string path = host::child(src, links_file_);
    auto st = host::lstat(path);
    if (!st) return;  // no links file: no symlinks
    const std::string where = join(target, links_file_);
    if (st->kind != host::Kind::regular) {
      problem(path, where, Error{Errc::invalid_argument, 0, Error::kNoOffset, "the links file is not a regular file"});
      return;
    }
    links_stat_ = *st;
    links_stat_.kind = host::Kind::symlink;
    links_stat_.mode = 0120777;
    auto f = host::open(path);
    if (!f) {
      problem(path, where, f.error());
      return;
    }
    std::string text;
    for (std::uint64_t off = 0;;) {
      auto n = (*f)->read_at(off, buf_);
      if (!n) {
        problem(path, where, n.error());
        return;
      }
      if (*n == 0) break;
      text.append(reinterpret_cast<const char*>(buf_.data()), *n);
      off += *n;
    }
    for (std::size_t p = 0; p < text.size();) {
      std::size_t e = text.find('\n', p);
      if (e == std::string::npos) e = text.size();
      const std::string line = text.substr(p, e - p);
      p = e + 1;
      if (line.empty()) continue;
      auto l = host::parse_links_line(line);
      if (!l) {
        problem(path, where, Error{Errc::invalid_argument, 0, Error::kNoOffset, "not a line of the links file: " + line});
        continue;
      }
      const std::string full = join(target, l->first);
      const std::size_t slash = full.rfind('/');
      links_[slash == 0 ? "/" : full.substr(0, slash)].emplace_back(full.substr(slash + 1), l->second);
    }
  }

  /// Links of the links file whose directory the walk did not reach.
  void unplaced_links() {
    for (const auto& [dir, links] : links_)
      for (const auto& [name, target] : links)
        problem(host::child(top_, links_file_), join(dir, name),
                Error{Errc::not_found, 0, Error::kNoOffset, "symlink of the links file: its directory is not in the tree"});
    links_.clear();
  }

 private:
  struct Linked {
    std::string path;
    nid_t ino = 0;
    host::Stat st;
  };

  // A symlink of the links file: made as a host symlink would be, with the
  // links file's owner and times.
  Status link_entry(const std::string& dst, const std::string& target) {
    const std::string src = host::child(top_, links_file_);
    Result<nid_t> ino = make_error(Errc::unsupported, "");
    bool made = false;
    if (auto s = make_entry(src, dst, "symlink", made, [&] { return ino = w_.symlink(target, dst); }); !s || !made)
      return s;
    ++rep_.symlinks;
    if (auto s = android_xattrs(src, dst, *ino, links_stat_, false); !s) return s;
    if (auto s = set_attr(src, dst, *ino, links_stat_); !s) return s;
    done(dst);
    return {};
  }

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
    std::set<std::pair<std::uint64_t, std::uint64_t>> seen;
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

  std::uint64_t count_tree(const std::string& src, std::set<std::pair<std::uint64_t, std::uint64_t>>& seen) {
    std::optional<Error> read_error;
    auto names = host::list(src, read_error);
    if (!names) return 0;
    std::uint64_t units = 0;
    std::vector<std::string> dirs;
    for (const auto& n : *names) {
      ++units;
      const std::string path = host::child(src, n.host);
      auto st = host::lstat(path);
      if (!st) continue;
      if (st->kind == host::Kind::directory) {
        dirs.push_back(path);
      } else if (st->kind == host::Kind::regular && (st->nlink <= 1 || seen.insert(st->id).second)) {
        units += data_units(st->size);
      }
    }
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

  // The fs_config rule of the entry at dst (none for the target directory).
  const FsConfigRule* rule_of(const std::string& dst, bool target) const {
    return o_.fs_config && !target ? o_.fs_config->find(rule_path(mp_, dst)) : nullptr;
  }

  /// security.capability from the fs_config rule, security.selinux from
  /// the file contexts.
  Status android_xattrs(const std::string& src, const std::string& dst, nid_t ino, const host::Stat& st, bool target) {
    if (!o_.fs_config && !o_.file_contexts) return {};
    std::uint16_t perm = static_cast<std::uint16_t>(st.mode & 07777);
    const std::string key = rule_path(mp_, dst);
    if (o_.fs_config && !target) {
      const FsConfigRule* r = rule_of(dst, target);
      if (r == nullptr) {  // the tree changed since the rules were checked
        problem(src, dst, Error{Errc::not_found, 0, Error::kNoOffset,
                                "fs_config " + o_.fs_config->name() + ": no rule for " + key.substr(1)});
        return {};
      }
      perm = r->mode;
      if (r->capabilities != 0) {
        const auto v = vfs_cap_data(r->capabilities);
        if (auto s = w_.setxattr(ino, disk::xattr_index::security, "capability", v); !s) {
          if (auto f = fail(src, dst, s.error(), "setxattr security.capability"); !f) return f;
        } else {
          ++rep_.xattrs;
        }
      }
    }
    if (o_.file_contexts) {
      auto c = o_.file_contexts->lookup(key, static_cast<std::uint32_t>((st.mode & kTypeBits) | perm));
      if (!c) {
        problem(src, dst, c.error());
        return {};
      }
      const auto* b = reinterpret_cast<const std::uint8_t*>(c->data());
      if (auto s = w_.setxattr(ino, disk::xattr_index::security, "selinux", std::span<const std::uint8_t>(b, c->size()));
          !s) {
        if (auto f = fail(src, dst, s.error(), "setxattr security.selinux"); !f) return f;
      } else {
        ++rep_.xattrs;
      }
    }
    return {};
  }

  Status set_attr(const std::string& src, const std::string& dst, nid_t ino, const host::Stat& st,
                  bool target = false) {
    SetAttr a;
    if (st.kind != host::Kind::symlink) a.mode = static_cast<std::uint16_t>(st.mode & 07777);
    a.uid = o_.preserve_owner ? st.uid : 0u;
    a.gid = o_.preserve_owner ? st.gid : 0u;
    if (const FsConfigRule* r = rule_of(dst, target)) {  // symlinks too, as sload.f2fs and e2fsdroid
      a.mode = r->mode;
      a.uid = r->uid;
      a.gid = r->gid;
    }
    if (o_.fixed_time) {
      const Timespec t{*o_.fixed_time, 0};
      a.atime = a.mtime = a.ctime = t;
    } else {
      a.atime = st.atime;
      a.mtime = st.mtime;
      a.ctime = st.ctime;
    }
    auto s = w_.setattr(ino, a);
    if (!s) return fail(src, dst, s.error(), "setattr");
    return {};
  }

  Status copy_xattrs(const std::string& src, const std::string& dst, nid_t ino) {
    std::vector<Error> read_problems;
    auto attrs = host::xattrs(src, read_problems);
    for (auto& e : read_problems) problem(src, dst, std::move(e));
    for (auto& [full, value] : attrs) {
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
      // The rules decide these two (PopulateOptions::fs_config, file_contexts).
      if ((o_.fs_config && full == "security.capability") || (o_.file_contexts && full == "security.selinux")) continue;
      if (full == "system.posix_acl_access") index = disk::xattr_index::posix_acl_access;
      if (full == "system.posix_acl_default") index = disk::xattr_index::posix_acl_default;
      if (index == 0) {
        problem(src, dst, Error{Errc::unsupported, 0, Error::kNoOffset,
                                "xattr " + full + ": a namespace f2fs does not store"});
        continue;
      }
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
    return {};
  }

  // Writes [from, to) of the host file at the same offsets.
  Status copy_range(const std::string& src, const std::string& dst, host::File& file, nid_t ino, std::uint64_t from,
                    std::uint64_t to, bool* shrank) {
    while (from < to) {
      const std::size_t want = static_cast<std::size_t>(std::min<std::uint64_t>(to - from, buf_.size()));
      std::size_t got = 0;
      while (got < want) {
        auto n = file.read_at(from + got, std::span<std::uint8_t>(buf_.data() + got, want - got));
        if (!n) {
          problem(src, dst, n.error());
          *shrank = true;
          return {};
        }
        if (*n == 0) break;
        got += *n;
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

  Status copy_data(const std::string& src, const std::string& dst, nid_t ino, const host::Stat& st) {
    const std::uint64_t size = st.size;
    if (size == 0) return {};
    auto file = host::open(src);
    if (!file) {
      problem(src, dst, file.error());
      return {};
    }
    Status st_out{};
    bool shrank = false;
    const std::uint64_t written_before = rep_.bytes_written;
    file_base_ = work_done_;
    std::uint64_t off = 0;
    while (off < size && !shrank) {
      std::uint64_t data = off, hole = size;
      // A file with as many blocks allocated as its size needs has no
      // hole: no need to ask.
      if (!st.dense) {
        auto r = (*file)->next_data(off, size);
        if (!r) break;  // the rest is a hole
        data = r->first;
        hole = r->second;
      }
      if (data >= size) break;
      st_out = copy_range(src, dst, **file, ino, data, hole, &shrank);
      if (!st_out) break;
      off = hole;
    }
    file->reset();
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
  std::string mp_;  // PopulateOptions::mount_point, normalized
  std::vector<std::uint8_t> buf_;
  std::map<std::pair<std::uint64_t, std::uint64_t>, Linked> links_seen_;
  // The links file (host::links_file_name()): the top of the source, the
  // file's name, its stat (the times of its symlinks) and its symlinks by
  // directory of the volume (name, target), until made.
  std::string top_;
  const char* links_file_ = nullptr;
  host::Stat links_stat_;
  std::map<std::string, std::vector<std::pair<std::string, std::string>>> links_;
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

Status check_populate_rules(const std::string& source_dir, const PopulateOptions& opts) {
  if (!opts.fs_config && !opts.file_contexts) return {};
  auto st = host::source_directory(source_dir);
  if (!st) return make_error(st.error());
  std::string target = opts.target.empty() ? "/" : opts.target;
  while (target.size() > 1 && target.back() == '/') target.pop_back();
  std::string src = source_dir;
  while (src.size() > 1 && src.back() == '/') src.pop_back();
  RuleChecker c(opts, src);
  if (!opts.keep_target_attrs) c.check(target, st->mode, true);
  c.walk(src, target);
  return c.result();
}

Result<PopulateReport> populate(Writer& w, const std::string& source_dir, const PopulateOptions& opts) {
  auto st = host::source_directory(source_dir);
  if (!st) return make_error(st.error());
  if (!opts.rules_checked) {
    if (auto c = check_populate_rules(source_dir, opts); !c) return make_error(c.error());
  }
  std::string target = opts.target.empty() ? "/" : opts.target;
  while (target.size() > 1 && target.back() == '/') target.pop_back();
  auto root = make_target(w, target);
  if (!root) return make_error(root.error());
  PopulateReport rep;
  Populator p(w, opts, rep);
  std::string src = source_dir;
  while (src.size() > 1 && src.back() == '/') src.pop_back();
  p.load_links(src, target);
  p.start_progress(src);
  if (auto s = p.directory(src, target); !s) return make_error(s.error());
  p.unplaced_links();
  if (!opts.keep_target_attrs) {
    if (auto s = p.attributes(src, target, *root, *st, true); !s) return make_error(s.error());
  }
  if (auto s = p.relink_times(); !s) return make_error(s.error());
  p.finish_progress();
  return rep;
}

}  // namespace f2fscore
