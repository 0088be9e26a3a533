// Shared by the writer's tests (writer_ns_test.cpp, writer_model_test.cpp;
// the image checks also by writer_test.cpp, writer_fsync_test.cpp,
// writer_cache_test.cpp, writer_gc_test.cpp, writer_ipu_test.cpp): the checks every image the writer leaves must
// pass — our checker (check-only) and, in the interop build
// (WRITER_WITH_FSCK), fsck.f2fs -f on a copy — and a full description of a
// volume's tree as our reader sees it (types, modes, owners, times, sizes,
// contents, link counts and hard-link groups, symlink targets, device
// numbers, xattrs).
#pragma once

#include <gtest/gtest.h>

#include <algorithm>
#include <cstdio>
#include <functional>
#include <map>
#include <set>
#include <string>

#include "f2fscore/fsck.hpp"
#include "f2fscore/writer.hpp"
#include "f2fscore/fscrypt.hpp"
#include "meta/meta_test_util.hpp"

namespace writertest {

using namespace metatest;

inline std::span<const std::uint8_t> bytes(const std::string& s) {
  return {reinterpret_cast<const std::uint8_t*>(s.data()), s.size()};
}

/// FNV-1a of a byte string, as hex.
inline std::string digest(const std::string& s) {
  std::uint64_t h = 1469598103934665603ull;
  for (unsigned char c : s) h = (h ^ c) * 1099511628211ull;
  char b[24];
  std::snprintf(b, sizeof b, "%016llx", static_cast<unsigned long long>(h));
  return b;
}

/// fsck.f2fs -f on a copy is clean (interop build only; a missing fsck.f2fs
/// fails under F2FSCORE_REQUIRE_FSCK=1).
inline void fsck_f2fs_clean(BlockDevice& dev, const std::string& what) {
#ifdef WRITER_WITH_FSCK
  if (f2fstest::reference_tool("fsck.f2fs").empty()) {
    if (f2fstest::required("FSCK")) ADD_FAILURE() << "fsck.f2fs missing and F2FSCORE_REQUIRE_FSCK=1";
    return;
  }
  f2fstest::TempDir tmp;
  fs::path img = tmp / "writer_fsck.img";
  // A multi-device volume: each device where the superblock names it
  // (fsck.f2fs opens the others by those paths, and wants device 0 there too).
  std::vector<fs::path> others;
  auto* md = dynamic_cast<MultiDevice*>(&dev);
  if (md != nullptr) {
    img = md->range(0).path;
    for (std::size_t i = 0; i < md->members(); ++i) {
      others.push_back(md->range(i).path);
      ASSERT_TRUE(save(md->member(i), others.back()));
    }
  } else {
    ASSERT_TRUE(save(dev, img));
  }
  std::string log;
  auto probs = f2fstest::fsck_problems(img, &log, md != nullptr);
  EXPECT_TRUE(probs.empty()) << what << ": fsck.f2fs -f:\n" << log;
  fs::remove(img);
  for (const auto& p : others) fs::remove(p);
#else
  (void)dev;
  (void)what;
#endif
}

/// Our checker, check-only, finds nothing. `allow_torn_pack`: a checkpoint
/// pack torn by a power cut (its closing block never written, CP_PACK_BAD)
/// is the one warning a cut may leave: the other pack is in use, as Linux
/// picks it.
inline void our_fsck_clean(BlockDevice& dev, const std::string& what, bool allow_torn_pack = false) {
  fsck::Options fo;
  fo.mode = fsck::Mode::check_only;
  fo.force = true;
  auto rep = fsck::check(dev, fo);
  ASSERT_TRUE(rep) << what << ": " << rep.error().to_string();
  std::string found;
  for (const auto& p : rep->problems)
    if (!(allow_torn_pack && p.code == fsck::Code::CP_PACK_BAD)) found += p.to_string() + "\n";
  EXPECT_EQ(found, "") << what << ": f2fscore fsck";
}

/// Both checks every image a writer test leaves must pass: our checker
/// (check-only) and, in the interop build, fsck.f2fs -f on a copy.
inline void check_clean(BlockDevice& dev, const std::string& what, bool allow_torn_pack = false) {
  our_fsck_clean(dev, what, allow_torn_pack);
  fsck_f2fs_clean(dev, what);
}

/// The simpler form of a tree some tests keep (writer_test.cpp,
/// writer_fsync_test.cpp): path -> directory or file contents.
namespace contents {

struct ModelEntry {
  bool dir = false;
  std::string data;
  friend bool operator==(const ModelEntry&, const ModelEntry&) = default;
};
using Model = std::map<std::string, ModelEntry>;  // path -> entry, "" is the root

/// A file's contents through our reader ("READ-ERROR" if short or failed).
inline std::string content_of(Volume& v, const InodeInfo& in) {
  std::string s(in.size, '\0');
  auto n = v.read(in, 0, std::span<std::uint8_t>(reinterpret_cast<std::uint8_t*>(s.data()), s.size()));
  if (!n || *n != s.size()) return "READ-ERROR";
  return s;
}

/// The tree our reader sees, in the model's form ("lost+found" at the root
/// left out).
inline Model read_tree(Volume& v) {
  Model m;
  std::function<void(nid_t, const std::string&)> walk = [&](nid_t ino, const std::string& path) {
    auto in = v.read_inode(ino);
    if (!in) {
      m[path] = {false, "INODE-ERROR " + in.error().to_string()};
      return;
    }
    if (in->is_dir()) {
      m[path] = {true, ""};
      auto es = v.read_dir(*in);
      if (!es) {
        m[path + "/"] = {false, "DIR-ERROR"};
        return;
      }
      for (const auto& e : *es)
        if (e.name != "." && e.name != ".." && !(path.empty() && e.name == "lost+found")) walk(e.ino, path + "/" + e.name);
    } else {
      m[path] = {false, content_of(v, *in)};
    }
  };
  walk(v.superblock().root_ino.get(), "");
  return m;
}

/// One line per path missing, differing or extra in `got`; "" when equal.
inline std::string describe_diff(const Model& want, const Model& got) {
  std::string out;
  for (const auto& [p, e] : want) {
    auto it = got.find(p);
    if (it == got.end()) out += "missing " + p + "\n";
    else if (it->second.dir != e.dir || it->second.data != e.data)
      out += "differs " + p + " (size " + std::to_string(e.data.size()) + " vs " + std::to_string(it->second.data.size()) + ")\n";
  }
  for (const auto& [p, e] : got)
    if (!want.count(p)) out += "extra " + p + "\n";
  return out;
}

}  // namespace contents

/// What a tree reads as: path -> one line describing the inode. `times`:
/// include atime/mtime/ctime of non-directories.
using Tree = std::map<std::string, std::string>;

inline std::string xattr_line(const std::map<std::pair<int, std::string>, std::string>& xs) {
  std::string s;
  for (const auto& [k, v] : xs) s += " x" + std::to_string(k.first) + "." + k.second + "=" + digest(v);
  return s;
}

/// A stored name as a path component: as it is, or "<hex:...>" when it
/// holds '/' or NUL (ciphertext names of encrypted directories may).
inline std::string component(const std::string& name) {
  if (name.find_first_of(std::string("/\0", 2)) == std::string::npos) return name;
  static const char* const kHex = "0123456789abcdef";
  std::string h = "<hex:";
  for (unsigned char c : name) h += {kHex[c >> 4], kHex[c & 15]};
  return h + ">";
}

/// The tree our reader sees ("lost+found" at the root left out).
/// With `keys`: encrypted inodes whose key is there read in the clear
/// (names, contents, link targets; fscrypt.hpp), their encryption context
/// (xattr 9 "c", a random nonce) left out.
inline Tree read_tree(Volume& v, bool times = true, const fscrypt::Keyring* keys = nullptr) {
  Tree t;
  std::map<nid_t, std::string> group;  // hard-link groups: the smallest path of each inode
  std::map<std::string, nid_t> nondir;
  std::function<void(nid_t, const std::string&, int)> walk = [&](nid_t ino, const std::string& path, int depth) {
    auto in = v.read_inode(ino);
    if (!in) {
      t[path] = "INODE-ERROR " + in.error().to_string();
      return;
    }
    const Inode& r = in->raw.i;
    std::string d;
    const std::uint16_t type = in->mode & 0xF000;
    char tc = '?';
    switch (type) {
      case 0x8000: tc = 'f'; break;
      case 0x4000: tc = 'd'; break;
      case 0xA000: tc = 'l'; break;
      case 0x2000: tc = 'c'; break;
      case 0x6000: tc = 'b'; break;
      case 0x1000: tc = 'p'; break;
      case 0xC000: tc = 's'; break;
    }
    char head[96];
    std::snprintf(head, sizeof head, "%c %04o %u:%u links %u", tc, in->mode & 07777, in->uid, in->gid, in->links);
    d = head;
    if (tc != 'd') {
      nondir[path] = ino;
      if (!group.count(ino) || path < group[ino]) group[ino] = path;
      if (times) {
        char tb[160];
        std::snprintf(tb, sizeof tb, " a%llu.%u m%llu.%u c%llu.%u", static_cast<unsigned long long>(r.i_atime.get()),
                      r.i_atime_nsec.get(), static_cast<unsigned long long>(r.i_mtime.get()), r.i_mtime_nsec.get(),
                      static_cast<unsigned long long>(r.i_ctime.get()), r.i_ctime_nsec.get());
        d += tb;
      }
    }
    std::optional<fscrypt::InodeKey> key;
    if (keys && in->is_encrypted()) {
      auto k = fscrypt::inode_key(v, *in, *keys);
      if (k) key = std::move(*k);
    }
    if (tc == 'f') {
      std::string s(in->size, '\0');
      auto n = key ? fscrypt::read_file(v, *in, *key, 0, std::span<std::uint8_t>(reinterpret_cast<std::uint8_t*>(s.data()), s.size()))
                   : v.read(*in, 0, std::span<std::uint8_t>(reinterpret_cast<std::uint8_t*>(s.data()), s.size()));
      if (!n || *n != s.size()) d += " READ-ERROR";
      d += " size " + std::to_string(in->size) + " " + digest(s);
    } else if (tc == 'l') {
      auto l = v.read_link(*in);
      if (l && key) l = key->decrypt_symlink(*l);
      d += " -> " + (l ? *l : "LINK-ERROR " + l.error().to_string());
    } else if (tc == 'c' || tc == 'b') {
      const std::uint32_t x = in->extra_isize / 4;
      const std::uint32_t old = r.i_addr[x].get(), nw = r.i_addr[x + 1].get();
      d += " rdev " + std::to_string(old ? old : nw);
    }
    auto xs = v.xattrs(*in);
    if (!xs) d += " XATTR-ERROR " + xs.error().to_string();
    else {
      std::map<std::pair<int, std::string>, std::string> m;
      for (const auto& x : *xs)
        if (!(keys && x.index == 9)) m[{x.index, x.name}] = x.value;
      d += xattr_line(m);
    }
    t[path] = d;
    if (tc == 'd' && depth < 200) {
      auto es = v.read_dir(*in);
      if (!es) {
        t[path + "/"] = "DIR-ERROR " + es.error().to_string();
        return;
      }
      for (const auto& e : *es) {
        if (e.name == "." || e.name == ".." || (path.empty() && e.name == "lost+found")) continue;
        std::string name = e.name;
        if (key) {
          auto p = key->decrypt_name(e.name);
          name = p ? *p : "NAME-ERROR " + p.error().to_string();
        }
        walk(e.ino, path + "/" + component(name), depth + 1);
      }
    }
  };
  walk(v.superblock().root_ino.get(), "", 0);
  for (const auto& [p, ino] : nondir) t[p] += " group " + group[ino];
  return t;
}

inline std::string tree_diff(const Tree& want, const Tree& got) {
  std::string out;
  int n = 0;
  for (const auto& [p, e] : want) {
    auto it = got.find(p);
    if (it == got.end()) out += "missing " + p + " (" + e + ")\n";
    else if (it->second != e) out += "differs " + p + "\n   want " + e + "\n   got  " + it->second + "\n";
    else continue;
    if (++n > 20) return out + "...\n";
  }
  for (const auto& [p, e] : got)
    if (!want.count(p)) {
      out += "extra " + p + " (" + e + ")\n";
      if (++n > 20) return out + "...\n";
    }
  return out;
}

/// Every check of an image the writer left: our reader sees `want`, our
/// checker and fsck.f2fs -f are clean.
inline void check_volume(BlockDevice& dev, const Tree& want, const std::string& what, bool unmounted = true,
                         bool times = true, const fscrypt::Keyring* keys = nullptr) {
  {
    auto v = Volume::open(dev);
    ASSERT_TRUE(v) << what << ": " << v.error().to_string();
    if (unmounted) EXPECT_TRUE((*v)->open_report().clean_unmount) << what;
    EXPECT_EQ(tree_diff(want, read_tree(**v, times, keys)), "") << what;
  }
  our_fsck_clean(dev, what);
  fsck_f2fs_clean(dev, what);
}

}  // namespace writertest

namespace writertest {

/// SHA-256 of a byte string, as lowercase hex, so that manifests compare
/// with sha256sum in the Linux guest.
inline std::string sha256_hex(const std::string& msg) { return f2fstest::sha256_hex(msg); }

/// One line per path (lost+found left out, "/" itself too), sorted by path,
/// in the form writer_model_linux.sh makes with busybox in the Linux guest:
///   path|st_mode hex|uid|gid|size|links|mtime s|content|xattrs
/// content: sha256 of a file, "->target" of a symlink, "major,minor" (hex)
/// of a device, "-" else; xattrs: "full.name=value" sorted, comma-joined.
inline std::string manifest(Volume& v) {
  std::map<std::string, std::string> lines;
  std::function<void(nid_t, const std::string&)> walk = [&](nid_t ino, const std::string& path) {
    auto in = v.read_inode(ino);
    if (!in) {
      lines[path] = path + "|INODE-ERROR";
      return;
    }
    const std::uint16_t type = in->mode & 0xF000;
    std::string content = "-";
    if (type == 0x8000) {
      std::string s(in->size, '\0');
      auto n = v.read(*in, 0, std::span<std::uint8_t>(reinterpret_cast<std::uint8_t*>(s.data()), s.size()));
      content = n ? sha256_hex(s) : "READ-ERROR";
    } else if (type == 0xA000) {
      auto l = v.read_link(*in);
      content = "->" + (l ? *l : std::string("LINK-ERROR"));
    } else if (type == 0x2000 || type == 0x6000) {
      const std::uint32_t x = in->extra_isize / 4;
      const std::uint32_t old = in->raw.i.i_addr[x].get();
      const std::uint32_t dev = old ? old : in->raw.i.i_addr[x + 1].get();
      char b[32];
      std::snprintf(b, sizeof b, "%x,%x", (dev & 0xfff00u) >> 8, (dev & 0xffu) | ((dev >> 12) & 0xfff00u));
      content = b;
    }
    std::vector<std::string> xs;
    if (auto x = v.xattrs(*in)) {
      for (const auto& e : *x)
        if (e.index != disk::xattr_index::verity)  // fs-verity's own, which listxattr(2) does not give
          xs.push_back(e.full_name() + "=" + e.value);
    } else {
      xs.push_back("XATTR-ERROR");
    }
    std::sort(xs.begin(), xs.end());
    std::string xl;
    for (const auto& s : xs) xl += (xl.empty() ? "" : ",") + s;
    if (!path.empty()) {
      char head[160];
      std::snprintf(head, sizeof head, "|%x|%u|%u|%llu|%u|%llu|", in->mode, in->uid, in->gid,
                    static_cast<unsigned long long>(in->size), in->links,
                    static_cast<unsigned long long>(in->raw.i.i_mtime.get()));
      lines[path] = path + head + content + "|" + xl;
    }
    if (in->is_dir()) {
      auto es = v.read_dir(*in);
      if (!es) return;
      for (const auto& e : *es)
        if (e.name != "." && e.name != ".." && !(path.empty() && e.name == "lost+found")) walk(e.ino, path + "/" + e.name);
    }
  };
  walk(v.superblock().root_ino.get(), "");
  // Sorted as whole lines, as busybox sort does (byte order).
  std::vector<std::string> sorted;
  for (const auto& [p, l] : lines) sorted.push_back(l);
  std::sort(sorted.begin(), sorted.end());
  std::string out;
  for (const auto& l : sorted) out += l + "\n";
  return out;
}


/// A read-write mount with the times the writer sets fixed at 1700000100;
/// a refusal is reported as a test failure (and null returned).
inline std::unique_ptr<Writer> mount_fixed_time(BlockDevice& dev) {
  MountOptions mo;
  mo.fixed_time = 1700000100;
  auto w = Writer::mount(dev, mo);
  EXPECT_TRUE(w) << (w ? "" : w.error().to_string());
  return w ? std::move(*w) : nullptr;
}

/// The errno a failed call carries (Error::sys_errno); 0 when it succeeded.
template <typename R>
int err_no(const R& r) {
  return r ? 0 : r.error().sys_errno;
}

}  // namespace writertest
