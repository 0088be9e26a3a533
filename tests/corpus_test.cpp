// The reader against Linux: a corpus of images built by Linux 6.1 and by
// mkfs.f2fs + sload.f2fs (tests/interop/make_corpus.sh), each with the
// manifest of what Linux reads from it, is read with f2fscore::Volume and
// every manifest line is compared: type, inode number (so hard links), mode,
// owners, size, link count, mtime, inode flags, content (sha256 and a
// hole-aware digest), link target, device number, xattr names and values.
// Encrypted entries: only that they are encrypted (and how many there are).
// Lookups: every path resolves to the inode Linux found, and in the
// casefolded directory the names Linux resolved case-insensitively too.
//
// Differences are reported one per line ("path: field: Linux X, ours Y")
// and split into three tests per image: the plain reader, compressed files
// (comp/) and the casefolded directory (cf/).
//
// The corpus is built once per run (a few minutes: one qemu guest) into a
// temporary directory, or into $F2FSCORE_CORPUS_DIR, where it is kept and
// reused while the scripts that made it are unchanged. Without the oracle or
// f2fs-tools the program exits 77 (skip), unless F2FSCORE_REQUIRE_ORACLE=1.
#include <gtest/gtest.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <array>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <iostream>
#include <map>
#include <optional>
#include <set>
#include <sstream>

#include "f2fscore/disk/xattr.hpp"
#include "f2fscore/volume.hpp"
#include "support/test_support.hpp"

using namespace f2fscore;
namespace fs = std::filesystem;

namespace {

fs::path g_corpus;
const fs::path kInterop = fs::path(F2FSCORE_SOURCE_DIR) / "tests" / "interop";

using f2fstest::Sha256;

std::string hex(std::string_view s) {
  static const char* d = "0123456789abcdef";
  std::string o;
  o.reserve(s.size() * 2);
  for (unsigned char c : s) {
    o += d[c >> 4];
    o += d[c & 15];
  }
  return o;
}

// Printable form of a path for messages (bytes outside ASCII as \xNN).
std::string printable(std::string_view s) {
  std::string o;
  for (unsigned char c : s) {
    if (c >= 0x20 && c < 0x7f) {
      o += static_cast<char>(c);
    } else {
      char b[8];
      std::snprintf(b, sizeof b, "\\x%02x", c);
      o += b;
    }
  }
  return o;
}

// ------------------------------------------------------------- manifests
// One entry as corpus_tool prints it (see tests/interop/corpus_tool.c).
struct Entry {
  char type = '?';
  std::string path;
  std::map<std::string, std::string> f;  // ino, mode, uid, ..., xattrs
};

struct Manifest {
  std::map<std::string, Entry> entries;
  std::vector<std::string> order;
  std::multiset<std::string> enc;  // "ROOT|T|flags"
  struct Case {
    std::string dir, name, ino;
  };
  std::vector<Case> cases;
};

std::vector<std::string> split(const std::string& s, char sep) {
  std::vector<std::string> out;
  std::size_t b = 0;
  for (;;) {
    const std::size_t e = s.find(sep, b);
    out.push_back(s.substr(b, e == std::string::npos ? std::string::npos : e - b));
    if (e == std::string::npos) return out;
    b = e + 1;
  }
}

std::optional<Manifest> load_manifest(const fs::path& p, std::string* err) {
  std::ifstream in(p, std::ios::binary);
  if (!in) {
    *err = "cannot open " + p.string();
    return std::nullopt;
  }
  Manifest m;
  for (std::string line; std::getline(in, line);) {
    if (line.empty()) continue;
    auto parts = split(line, '|');
    if (parts[0] == "ENC" && parts.size() == 4) {
      m.enc.insert(parts[1] + "|" + parts[2].substr(5) + "|" + parts[3].substr(6));
      continue;
    }
    if (parts[0] == "CASE" && parts.size() == 4) {
      m.cases.push_back({parts[1], parts[2], parts[3].substr(4)});
      continue;
    }
    if (parts[0].size() != 1 || parts.size() < 3) {
      *err = "bad manifest line: " + printable(line);
      return std::nullopt;
    }
    Entry e;
    e.type = parts[0][0];
    e.path = parts[1];
    for (std::size_t i = 2; i < parts.size(); ++i) {
      const auto eq = parts[i].find('=');
      if (eq == std::string::npos) {
        *err = "bad manifest field: " + printable(line);
        return std::nullopt;
      }
      e.f[parts[i].substr(0, eq)] = parts[i].substr(eq + 1);
    }
    m.order.push_back(e.path);
    m.entries[e.path] = std::move(e);
  }
  return m;
}

// ------------------------------------------------------------ our reading
char type_char(std::uint16_t mode) {
  switch (mode & 0xF000) {
    case 0x8000: return 'F';
    case 0x4000: return 'D';
    case 0xA000: return 'L';
    case 0x2000: return 'C';
    case 0x6000: return 'B';
    case 0x1000: return 'P';
    case 0xC000: return 'S';
    default: return '?';
  }
}

// Flag letters as corpus_tool prints them. `statx`: only what statx shows.
std::string flag_letters(const InodeInfo& in, bool statx) {
  static constexpr std::pair<std::uint32_t, char> map[] = {
      {0x4, 'C'},      {0x8, 'S'},     {0x10, 'I'},         {0x20, 'A'},         {0x40, 'N'},
      {0x80, 'T'},     {0x400, 'm'},   {0x1000, 'X'},       {0x10000, 'D'},      {0x20000000, 'P'},
      {0x40000000, 'F'}};
  std::string s;
  for (auto [bit, c] : map) {
    if (!(in.flags & bit)) continue;
    if (statx && c != 'I' && c != 'A' && c != 'N' && !(c == 'C' && in.is_reg())) continue;
    s += c;
  }
  if (in.is_encrypted()) s += 'E';
  if (in.is_verity()) s += 'V';
  return s;
}

std::string mode_octal(std::uint32_t mode) {
  std::ostringstream o;
  o << '0' << std::oct << mode;
  return o.str();
}

std::string mtime_of(const InodeInfo& in) {
  char b[64];
  std::snprintf(b, sizeof b, "%lld.%09u", static_cast<long long>(static_cast<std::int64_t>(in.raw.i.i_mtime.get())),
                in.raw.i.i_mtime_nsec.get());
  return b;
}

// i_rdev as do_read_inode()/__get_inode_rdev() decode it: old encoding in
// the first data slot, else the new one in the second.
std::string rdev_of(const InodeInfo& in) {
  const std::uint32_t base = in.extra_isize / 4;
  const std::uint32_t old = in.raw.i.i_addr[base].get();
  std::uint32_t major, minor;
  if (old) {
    major = (old >> 8) & 0xff;
    minor = old & 0xff;
  } else {
    const std::uint32_t n = in.raw.i.i_addr[base + 1].get();
    major = (n & 0xfff00) >> 8;
    minor = (n & 0xff) | ((n >> 12) & 0xfff00);
  }
  return std::to_string(major) + ":" + std::to_string(minor);
}

bool listed_by_linux(std::uint8_t index) {
  using namespace disk::xattr_index;
  return index == user || index == posix_acl_access || index == posix_acl_default || index == trusted || index == security;
}

enum Category { kReader = 0, kCompression = 1, kCasefold = 2 };
const char* const kCategoryName[] = {"reader", "compression", "casefold"};

struct Comparison {
  std::vector<std::string> problems[3];
  std::size_t entries = 0, compared_bytes = 0;
  std::map<std::string, InodeInfo> inodes;  // by path, for the layout checks
};

class ImageReader {
 public:
  ImageReader(Volume& v, const Manifest& m, Comparison& out) : v_(v), m_(m), out_(out) {}

  void run() {
    auto root = v_.read_inode(v_.superblock().root_ino.get());
    if (!root) {
      out_.problems[kReader].push_back("root inode: " + root.error().to_string());
      return;
    }
    visit(".", *root, kReader);
    // Everything Linux saw must have been visited.
    for (const auto& p : m_.order)
      if (!seen_.count(p))
        problem(category_of_path(p), p, "Linux lists it (" + std::string(1, m_.entries.at(p).type) +
                                            "), our directory walk does not reach it");
    if (enc_ != m_.enc) {
      std::vector<std::string> missing, extra;
      std::set_difference(m_.enc.begin(), m_.enc.end(), enc_.begin(), enc_.end(), std::back_inserter(missing));
      std::set_difference(enc_.begin(), enc_.end(), m_.enc.begin(), m_.enc.end(), std::back_inserter(extra));
      for (const auto& s : missing) out_.problems[kReader].push_back("encrypted entry (root|type|flags) " + s + ": Linux has it, ours not");
      for (const auto& s : extra) out_.problems[kReader].push_back("encrypted entry (root|type|flags) " + s + ": ours has it, Linux not");
    }
    lookups();
  }

 private:
  static Category category_of_path(const std::string& p) {
    if (p.rfind("comp/", 0) == 0) return kCompression;
    if (p.rfind("cf/", 0) == 0) return kCasefold;
    return kReader;
  }

  void problem(Category c, const std::string& path, const std::string& what) {
    out_.problems[c].push_back(printable(path) + ": " + what);
  }

  void visit(const std::string& path, const InodeInfo& in, Category cat) {
    seen_.insert(path);
    ++out_.entries;
    out_.inodes.emplace(path, in);
    if (in.is_compressed() && cat == kReader) cat = kCompression;
    compare(path, in, cat);
    if (!in.is_dir()) return;
    if (in.is_encrypted()) {
      visit_encrypted(path, in, 0);
      return;
    }
    auto entries = v_.read_dir(in);
    if (!entries) {
      problem(cat, path, "read_dir: " + entries.error().to_string());
      return;
    }
    const Category child_cat = in.is_casefolded() && cat == kReader ? kCasefold : cat;
    // "." and ".." once each, as Linux's readdir shows them (on disk, inline
    // directories included: f2fs_do_make_empty_dir()).
    std::vector<nid_t> dot, dotdot;
    for (const auto& e : *entries) {
      if (e.name == ".") dot.push_back(e.ino);
      if (e.name == "..") dotdot.push_back(e.ino);
    }
    const nid_t parent_ino = parents_.empty() ? in.ino : parents_.back();
    if (dot.size() != 1 || dot[0] != in.ino || dotdot.size() != 1 || dotdot[0] != parent_ino) {
      std::string d = "read_dir: \".\" entries:";
      for (auto n : dot) d += " " + std::to_string(n);
      d += "; \"..\" entries:";
      for (auto n : dotdot) d += " " + std::to_string(n);
      problem(kReader, path, d + " (Linux: one each, " + std::to_string(in.ino) + " and " + std::to_string(parent_ino) +
                             (in.has_inline_dentry() ? "; an inline directory)" : ")"));
    }
    parents_.push_back(in.ino);
    struct Pop {
      std::vector<nid_t>& v;
      ~Pop() { v.pop_back(); }
    } pop{parents_};
    for (const auto& e : *entries) {
      if (e.name == "." || e.name == "..") continue;
      const std::string p = path == "." ? e.name : path + "/" + e.name;
      auto child = v_.read_inode(e.ino);
      if (!child) {
        seen_.insert(p);
        problem(child_cat, p, "read_inode(" + std::to_string(e.ino) + "): " + child.error().to_string());
        continue;
      }
      if (e.type != disk::FileType::unknown && file_type_char(e.type) != type_char(child->mode))
        problem(child_cat, p, std::string("dentry file_type says ") + file_type_char(e.type) + ", the inode's mode " +
                                  type_char(child->mode));
      visit(p, *child, child_cat);
    }
  }

  static char file_type_char(disk::FileType t) {
    switch (t) {
      case disk::FileType::reg_file: return 'F';
      case disk::FileType::dir: return 'D';
      case disk::FileType::symlink: return 'L';
      case disk::FileType::chrdev: return 'C';
      case disk::FileType::blkdev: return 'B';
      case disk::FileType::fifo: return 'P';
      case disk::FileType::sock: return 'S';
      default: return '?';
    }
  }

  void visit_encrypted(const std::string& root, const InodeInfo& dir, int depth) {
    if (depth > 64) return;
    auto entries = v_.read_dir(dir);
    if (!entries) {
      problem(kReader, root, "read_dir (encrypted): " + entries.error().to_string());
      return;
    }
    for (const auto& e : *entries) {
      if (e.name == "." || e.name == "..") continue;
      auto child = v_.read_inode(e.ino);
      if (!child) {
        problem(kReader, root, "an encrypted entry: read_inode(" + std::to_string(e.ino) + "): " + child.error().to_string());
        continue;
      }
      enc_.insert(root + "|" + type_char(child->mode) + "|statx:" + flag_letters(*child, true));
      if (child->is_dir()) visit_encrypted(root, *child, depth + 1);
    }
  }

  // Content digests as corpus_tool computes them; false and *err on a read error.
  bool digests(const InodeInfo& in, std::string* sha, std::string* zsha, std::string* err) {
    static constexpr std::size_t kChunk = 4u << 20;
    static const std::vector<std::uint8_t> zero(4096, 0);
    std::vector<std::uint8_t> buf(kChunk);
    Sha256 full, z;
    const bool want_full = in.size <= (64ull << 20);
    for (std::uint64_t off = 0; off < in.size;) {
      const std::size_t want = static_cast<std::size_t>(std::min<std::uint64_t>(kChunk, in.size - off));
      auto n = v_.read(in, off, std::span<std::uint8_t>(buf.data(), want));
      if (!n) {
        *err = "read at " + std::to_string(off) + ": " + n.error().to_string();
        return false;
      }
      if (*n != want) {
        *err = "read at " + std::to_string(off) + " returned " + std::to_string(*n) + " bytes, expected " + std::to_string(want);
        return false;
      }
      if (want_full) full.update(buf.data(), want);
      const std::size_t padded = (want + 4095) & ~std::size_t{4095};
      std::fill(buf.begin() + static_cast<std::ptrdiff_t>(want), buf.begin() + static_cast<std::ptrdiff_t>(padded), 0);
      for (std::size_t b = 0; b < padded; b += 4096) {
        if (std::memcmp(buf.data() + b, zero.data(), 4096) == 0) continue;
        const std::uint64_t index = (off + b) / 4096;
        std::uint8_t le[8];
        for (int i = 0; i < 8; ++i) le[i] = static_cast<std::uint8_t>(index >> (8 * i));
        z.update(le, 8);
        z.update(buf.data() + b, 4096);
      }
      off += want;
      out_.compared_bytes += want;
    }
    *sha = want_full ? full.hex() : "-";
    *zsha = z.hex();
    return true;
  }

  void compare(const std::string& path, const InodeInfo& in, Category cat) {
    auto it = m_.entries.find(path);
    if (it == m_.entries.end()) {
      problem(cat, path, std::string("our walk finds it (") + type_char(in.mode) + ", ino " + std::to_string(in.ino) +
                             "), Linux does not list it");
      return;
    }
    const Entry& e = it->second;
    auto linux_value = [&](const char* name) {
      auto f = e.f.find(name);
      return f == e.f.end() ? std::string("(absent)") : f->second;
    };
    auto shorten = [](const std::string& s) {
      return s.size() > 200 ? s.substr(0, 200) + "...(" + std::to_string(s.size()) + " chars)" : s;
    };
    auto field = [&](const char* name, const std::string& ours) {
      const std::string linux_v = linux_value(name);
      if (linux_v != ours) problem(cat, path, std::string(name) + ": Linux " + shorten(linux_v) + ", ours " + shorten(ours));
    };
    // Where Linux refuses (ERR:EUCLEAN ...), we must fail too.
    auto refused = [&](const char* name, const std::string* our_error) {
      const std::string linux_v = linux_value(name);
      const bool linux_err = linux_v.rfind("ERR:", 0) == 0;
      if (linux_err && !our_error) problem(cat, path, std::string(name) + ": Linux fails (" + linux_v + "), ours succeeds");
      if (!linux_err && our_error) problem(cat, path, std::string(name) + ": Linux reads it, ours fails: " + *our_error);
      return linux_err || our_error;
    };
    if (e.type != type_char(in.mode))
      problem(cat, path, std::string("type: Linux ") + e.type + ", ours " + type_char(in.mode));
    const std::string fl = e.f.count("flags") ? e.f.at("flags") : "";
    const bool statx = fl.rfind("statx:", 0) == 0;
    field("flags", (statx ? "statx:" : "ioctl:") + flag_letters(in, statx));
    if (in.is_encrypted()) return;  // encrypted: only that it is
    field("ino", std::to_string(in.ino));
    field("mode", mode_octal(in.mode));
    field("uid", std::to_string(in.uid));
    field("gid", std::to_string(in.gid));
    field("size", std::to_string(in.size));
    field("nlink", std::to_string(in.links));
    field("mtime", mtime_of(in));
    if (in.is_reg()) {
      std::string sha, zsha, err;
      const bool ok = digests(in, &sha, &zsha, &err);
      if (!refused("sha256", ok ? nullptr : &err)) {
        field("sha256", sha);
        field("zsha", zsha);
      }
    }
    if (in.is_symlink()) {
      auto t = v_.read_link(in);
      if (!t) problem(cat, path, "read_link: " + t.error().to_string());
      else field("target", hex(*t));
    }
    if ((in.mode & 0xF000) == 0x2000 || (in.mode & 0xF000) == 0x6000) field("rdev", rdev_of(in));
    auto xs = v_.xattrs(in);
    const std::string xerr = xs ? "" : xs.error().to_string();
    if (!refused("xattrs", xs ? nullptr : &xerr)) {
      std::vector<std::pair<std::string, std::string>> v;
      for (const auto& x : *xs)
        if (listed_by_linux(x.index)) v.emplace_back(x.full_name(), hex(x.value));
      std::sort(v.begin(), v.end());
      std::string s;
      for (const auto& [n, val] : v) s += (s.empty() ? "" : ";") + n + "=" + val;
      field("xattrs", s.empty() ? "-" : s);
    }
  }

  // Every path (not below an encrypted directory) resolves to Linux's inode;
  // in the casefolded directory, the other-case names Linux resolved.
  void lookups() {
    for (const auto& [path, e] : m_.entries) {
      if (path == ".") continue;
      const Category cat = category_of_path(path);
      auto r = v_.resolve("/" + path);
      const std::string want = e.f.count("ino") ? e.f.at("ino") : "?";
      if (!r) problem(cat, path, "resolve: " + r.error().to_string() + " (Linux: ino " + want + ")");
      else if (std::to_string(r->ino) != want)
        problem(cat, path, "resolve: ino " + std::to_string(r->ino) + ", Linux " + want);
    }
    for (const auto& c : m_.cases) {
      auto r = v_.resolve("/" + c.dir + "/" + c.name);
      const std::string ours = r ? std::to_string(r->ino) : "-";
      if (ours != c.ino)
        problem(kCasefold, c.dir + "/" + c.name,
                "case-insensitive lookup: Linux finds " + (c.ino == "-" ? std::string("nothing") : "ino " + c.ino) +
                    ", ours " + (r ? "ino " + ours : r.error().to_string()));
    }
  }

  Volume& v_;
  const Manifest& m_;
  Comparison& out_;
  std::set<std::string> seen_;
  std::multiset<std::string> enc_;
  std::vector<nid_t> parents_;  // directories being visited
};

// Compares one image with its manifest, once per run.
const Comparison& compare_image(const std::string& name) {
  static std::map<std::string, Comparison> cache;
  if (auto it = cache.find(name); it != cache.end()) return it->second;
  Comparison& c = cache[name];
  std::string err;
  auto m = load_manifest(g_corpus / (name + ".manifest"), &err);
  if (!m) {
    c.problems[kReader].push_back(err);
    return c;
  }
  OpenOptions oo;
  oo.read_only = true;
  auto dev = open_posix_device((g_corpus / (name + ".img")).string(), oo);
  if (!dev) {
    c.problems[kReader].push_back("open " + name + ".img: " + dev.error().to_string());
    return c;
  }
  auto vol = Volume::open(**dev);
  if (!vol) {
    c.problems[kReader].push_back("Volume::open: " + vol.error().to_string());
    return c;
  }
  ImageReader(**vol, *m, c).run();
  std::cout << "[ corpus   ] " << name << ": " << c.entries << " entries, " << (c.compared_bytes >> 20)
            << " MiB of content read; differences: " << c.problems[kReader].size() << " reader, "
            << c.problems[kCompression].size() << " compression, " << c.problems[kCasefold].size() << " casefold\n";
  return c;
}

void expect_no_differences(const std::string& image, Category cat) {
  const auto& c = compare_image(image);
  const auto& p = c.problems[cat];
  std::ostringstream o;
  for (const auto& s : p) o << "  " << s << "\n";
  EXPECT_TRUE(p.empty()) << image << ".img: " << p.size() << " " << kCategoryName[cat]
                         << " difference(s) from what Linux reads:\n"
                         << o.str();
}

}  // namespace

TEST(Corpus, LinuxImageReadsAsLinuxReadsIt) { expect_no_differences("linux", kReader); }
TEST(Corpus, LinuxImageCompressedFiles) { expect_no_differences("linux", kCompression); }
TEST(Corpus, LinuxImageCasefoldedDirectory) { expect_no_differences("linux", kCasefold); }
TEST(Corpus, SloadImageReadsAsLinuxReadsIt) {
  for (int c = 0; c < 3; ++c) expect_no_differences("sload", static_cast<Category>(c));
}
TEST(Corpus, SloadPlainImageReadsAsLinuxReadsIt) {
  for (int c = 0; c < 3; ++c) expect_no_differences("sload_plain", static_cast<Category>(c));
}

// The corpus is only worth something if its files sit where they were meant
// to: check the layout assumptions of corpus_guest.sh against the image.
TEST(Corpus, LinuxImageCoversTheBoundaries) {
  const auto& c = compare_image("linux");
  auto get = [&](const std::string& p) -> const InodeInfo* {
    auto it = c.inodes.find(p);
    if (it == c.inodes.end()) ADD_FAILURE() << p << " is not in the image";
    return it == c.inodes.end() ? nullptr : &it->second;
  };
  if (auto* in = get("bound/size_3452")) {
    EXPECT_EQ(in->max_inline_bytes(), 3452u);
    EXPECT_TRUE(in->has_inline_data()) << "the inline limit";
    EXPECT_EQ(in->addrs_per_inode, 864u);
  }
  if (auto* in = get("bound/size_3453")) EXPECT_FALSE(in->has_inline_data()) << "one past the inline limit";
  if (auto* in = get("bound/iaddr_full")) EXPECT_EQ(in->raw.i.i_nid[0].get(), 0u) << "all in i_addr";
  if (auto* in = get("bound/iaddr_full_plus1")) {
    EXPECT_NE(in->raw.i.i_nid[0].get(), 0u);
    EXPECT_EQ(in->raw.i.i_nid[1].get(), 0u);
  }
  if (auto* in = get("bound/dnode1_full")) EXPECT_EQ(in->raw.i.i_nid[1].get(), 0u);
  if (auto* in = get("bound/dnode1_full_plus1")) EXPECT_NE(in->raw.i.i_nid[1].get(), 0u);
  if (auto* in = get("bound/dnode2_full_plus1")) EXPECT_NE(in->raw.i.i_nid[2].get(), 0u) << "first indirect node";
  if (auto* in = get("sparse/all_boundaries")) {
    EXPECT_NE(in->raw.i.i_nid[3].get(), 0u) << "second indirect node";
    EXPECT_NE(in->raw.i.i_nid[4].get(), 0u) << "double indirect node";
  }
  if (auto* in = get("inline_full")) EXPECT_TRUE(in->has_inline_dentry()) << "178 entries (and the dots) fit inline";
  if (auto* in = get("inline_over")) EXPECT_FALSE(in->has_inline_dentry());
  if (auto* in = get("big")) EXPECT_GE(in->raw.i.i_current_depth.get(), 3u) << "a multi-level directory";
  if (auto* in = get("xattr/many")) EXPECT_NE(in->raw.i.i_xattr_nid.get(), 0u) << "xattrs in the xattr node";
  if (auto* in = get("xattr/one")) EXPECT_EQ(in->raw.i.i_xattr_nid.get(), 0u) << "inline xattrs only";
  if (auto* in = get("links/s3452")) EXPECT_TRUE(in->has_inline_data()) << "an inline symlink";
  if (auto* in = get("links/s3453")) EXPECT_FALSE(in->has_inline_data()) << "a symlink in a block";
  if (auto* in = get("enc")) EXPECT_TRUE(in->is_encrypted());
  if (auto* in = get("verity/one_mib")) EXPECT_TRUE(in->is_verity());
  if (auto* in = get("cf")) EXPECT_TRUE(in->is_casefolded());
  if (auto* in = get("special/null")) EXPECT_NE(in->raw.i.i_addr[in->extra_isize / 4].get(), 0u) << "old dev_t encoding";
  if (auto* in = get("special/chr_big")) EXPECT_EQ(in->raw.i.i_addr[in->extra_isize / 4].get(), 0u) << "new dev_t encoding";
  // One directory per algorithm: lzo 0, lz4 1, zstd 2, lzo-rle 3.
  const std::pair<const char*, int> algs[] = {{"comp/lzo/text_6m", 0}, {"comp/lz4/text_6m", 1}, {"comp/zstd/text_6m", 2},
                                              {"comp/lzo-rle/text_6m", 3}, {"comp/lz4_chksum/text_6m", 1}};
  for (auto [p, alg] : algs)
    if (auto* in = get(p)) {
      EXPECT_TRUE(in->is_compressed()) << p;
      EXPECT_EQ(in->raw.i.extra.i_compress_algorithm, alg) << p;
      EXPECT_GT(in->raw.i.extra.i_compr_blocks.get(), 0u) << p << ": Linux saved no blocks";
    }
  if (auto* in = get("comp/zstd/text_6m")) EXPECT_EQ(in->cluster_blocks, 64u);
}

// ------------------------------------------------------------ extraction
// `f2fscore-dump IMAGE extract / DIR`, then corpus_tool's manifest of DIR
// compared with Linux's: everything but inode numbers (hard links are
// compared as groups), flags and directory sizes, which a host file system
// keeps its own way. Encrypted directories must be reported, not extracted.
#ifdef F2FSCORE_DUMP_BIN
namespace {
void expect_extraction_equal(const std::string& name) {
  std::string err;
  auto lm = load_manifest(g_corpus / (name + ".manifest"), &err);
  ASSERT_TRUE(lm) << err;
  f2fstest::TempDir t;
  const fs::path dest = t / "x";
  fs::create_directory(dest);
  const auto ex = f2fstest::run(f2fstest::shell_quote(F2FSCORE_DUMP_BIN) + " " +
                                f2fstest::shell_quote((g_corpus / (name + ".img")).string()) + " extract / " +
                                f2fstest::shell_quote(dest.string()));
  // Problems it reports ("f2fscore-dump: /path: why", exit 1) are fine
  // where Linux refuses too (an ERR: field in its manifest).
  std::vector<std::string> unexplained;
  {
    std::istringstream lines(ex.output);
    for (std::string l; std::getline(lines, l);) {
      const std::string prefix = "f2fscore-dump: /";
      if (l.rfind(prefix, 0) != 0) continue;
      const std::string p = l.substr(prefix.size(), l.find(": ", prefix.size()) - prefix.size());
      auto it = lm->entries.find(p);
      bool linux_refuses = false;
      if (it != lm->entries.end())
        for (const auto& [k, v] : it->second.f) linux_refuses |= v.find("ERR:") != std::string::npos;
      if (!linux_refuses) unexplained.push_back(l);
    }
  }
  EXPECT_TRUE(ex.exit_code == 0 || (ex.exit_code == 1 && ex.output.find("f2fscore-dump: /") != std::string::npos))
      << "f2fscore-dump extract exited with " << ex.exit_code << ":\n" << ex.output;
  std::ostringstream un;
  for (const auto& l : unexplained) un << "  " << l << "\n";
  EXPECT_TRUE(unexplained.empty()) << "f2fscore-dump extract reports problems where Linux reads without error:\n" << un.str();
  const fs::path host_manifest = t / "host.manifest";
  const auto mr = f2fstest::run(f2fstest::shell_quote((g_corpus / "in" / "corpus_tool").string()) + " manifest " +
                                f2fstest::shell_quote(dest.string()) + " > " + f2fstest::shell_quote(host_manifest.string()));
  ASSERT_EQ(mr.exit_code, 0) << "corpus_tool manifest of the extracted tree:\n" << mr.output;
  auto hm = load_manifest(host_manifest, &err);
  ASSERT_TRUE(hm) << err;

  const bool root = ::geteuid() == 0;
  std::vector<std::string> problems[3];
  auto cat_of = [](const std::string& p) {
    return p.rfind("comp/", 0) == 0 ? kCompression : p.rfind("cf/", 0) == 0 ? kCasefold : kReader;
  };
  std::vector<std::string> enc_roots;
  std::map<std::string, std::set<std::string>> linux_links, host_links;  // ino -> paths
  for (const auto& [path, le] : lm->entries) {
    if (path == ".") continue;
    const Category c = cat_of(path);
    auto report = [&](const std::string& what) { problems[c].push_back(printable(path) + ": " + what); };
    bool below_enc = false;
    for (const auto& r : enc_roots) below_enc |= path.rfind(r + "/", 0) == 0;
    if (below_enc) continue;
    if (le.f.at("flags").find('E') != std::string::npos) {
      enc_roots.push_back(path);
      if (hm->entries.count(path)) report("encrypted, but extracted");
      if (ex.output.find("encrypted, not extracted: /" + path) == std::string::npos)
        report("encrypted: not reported as \"encrypted, not extracted\"");
      continue;
    }
    auto it = hm->entries.find(path);
    if (it == hm->entries.end()) {
      std::string why;
      std::istringstream lines(ex.output);
      for (std::string l; std::getline(lines, l);)
        if (l.find(printable(path)) != std::string::npos) why += " [" + l + "]";
      report(std::string("not extracted (") + le.type + ")" + why);
      continue;
    }
    const Entry& he = it->second;
    if (le.type != he.type) report(std::string("type: Linux ") + le.type + ", extracted " + he.type);
    if (le.type != 'D' || he.type != 'D') {
      linux_links[le.f.at("ino")].insert(path);
      host_links[he.f.at("ino")].insert(path);
    }
    for (const char* f : {"mode", "uid", "gid", "size", "nlink", "mtime", "sha256", "zsha", "target", "rdev", "xattrs"}) {
      const std::string field = f;
      if ((field == "uid" || field == "gid") && !root) continue;
      if (field == "size" && le.type == 'D') continue;
      const std::string lv = le.f.count(f) ? le.f.at(f) : "(absent)", hv = he.f.count(f) ? he.f.at(f) : "(absent)";
      if (lv.find("ERR:") != std::string::npos) continue;  // Linux could not read it either
      if (lv != hv)
        report(field + ": Linux " + (lv.size() > 200 ? lv.substr(0, 200) + "..." : lv) + ", extracted " +
               (hv.size() > 200 ? hv.substr(0, 200) + "..." : hv));
    }
  }
  for (const auto& [path, he] : hm->entries)
    if (path != "." && !lm->entries.count(path)) problems[cat_of(path)].push_back(printable(path) + ": extracted, Linux does not list it");
  // Hard links: the same groups of names.
  std::set<std::set<std::string>> lg, hg;
  for (auto& [ino, paths] : linux_links) lg.insert(paths);
  for (auto& [ino, paths] : host_links) hg.insert(paths);
  for (const auto& g : lg)
    if (g.size() > 1 && !hg.count(g)) {
      std::string names;
      for (const auto& p : g) names += " " + printable(p);
      problems[kReader].push_back("hard links not kept together:" + names);
    }
  for (int c = 0; c < 3; ++c) {
    std::ostringstream o;
    for (const auto& s : problems[c]) o << "  " << s << "\n";
    EXPECT_TRUE(problems[c].empty()) << name << ".img extracted: " << problems[c].size() << " " << kCategoryName[c]
                                     << " difference(s) from what Linux reads:\n"
                                     << o.str();
  }
}
}  // namespace

TEST(Corpus, LinuxImageExtractsAsLinuxReadsIt) { expect_extraction_equal("linux"); }
TEST(Corpus, SloadImageExtractsAsLinuxReadsIt) { expect_extraction_equal("sload"); }
TEST(Corpus, SloadPlainImageExtractsAsLinuxReadsIt) { expect_extraction_equal("sload_plain"); }
#endif

namespace {
std::string script_stamp() {
  Sha256 h;
  for (const char* f : {"make_corpus.sh", "corpus_guest.sh", "corpus_tool.c"}) {
    std::ifstream in(kInterop / f, std::ios::binary);
    std::string s((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
    h.update(s.data(), s.size());
  }
  return h.hex().substr(0, 16);
}

bool corpus_is_current(const fs::path& dir) {
  std::ifstream in(dir / "stamp");
  std::string s;
  return in && std::getline(in, s) && s == script_stamp();
}
}  // namespace

int main(int argc, char** argv) {
  ::testing::InitGoogleTest(&argc, argv);
  std::optional<f2fstest::TempDir> tmp;
  if (const char* e = std::getenv("F2FSCORE_CORPUS_DIR"); e && *e) {
    g_corpus = e;
  } else {
    tmp.emplace();
    g_corpus = tmp->path();
  }
  if (corpus_is_current(g_corpus)) {
    std::cout << "corpus: reusing " << g_corpus << "\n";
  } else {
    const std::string cmd = f2fstest::shell_quote((kInterop / "make_corpus.sh").string()) + " --timeout 2400 " +
                            f2fstest::shell_quote(g_corpus.string()) + " </dev/null";
    std::cout << "corpus: " << cmd << std::endl;
    const int st = std::system(cmd.c_str());
    const int rc = WIFEXITED(st) ? WEXITSTATUS(st) : 1;
    if (rc == 77) {
      std::cout << "SKIP: the corpus cannot be built here (see above)\n";
      return 77;
    }
    if (rc != 0) {
      std::cerr << "FAIL: make_corpus.sh exited with " << rc << "\n";
      return 1;
    }
  }
  return RUN_ALL_TESTS();
}
