// Populating an image from a host directory (populate.hpp), the
// f2fscore-sload tool and f2fscore-mkfs --populate; and images made by
// sload.f2fs, changed by our writer.
//
// Expected values come from the host tree (lstat, SEEK_DATA ranges,
// llistxattr) and from fsck.f2fs, not from the code under test.
#ifndef _FILE_OFFSET_BITS
#define _FILE_OFFSET_BITS 64
#endif
#include <fcntl.h>
#include <gtest/gtest.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <sys/un.h>
#include <sys/xattr.h>
#include <unistd.h>

#include <cstring>
#include <fstream>
#include <map>
#include <random>
#include <set>

#include "f2fscore/extract.hpp"
#include "f2fscore/fsck.hpp"
#include "f2fscore/inspect.hpp"
#include "f2fscore/populate.hpp"
#include "f2fscore/volume.hpp"
#include "f2fscore/writer.hpp"
#include "support/test_support.hpp"

namespace fs = std::filesystem;
using namespace f2fscore;
using f2fstest::run;
using f2fstest::shell_quote;

namespace {

constexpr std::uint64_t MiB = 1ull << 20;
const std::string kMkfs = F2FSCORE_MKFS_BIN;
const std::string kSload = F2FSCORE_SLOAD_BIN;

bool have_fsck() {
  if (!f2fstest::reference_tool("fsck.f2fs").empty()) return true;
  if (f2fstest::required("FSCK")) ADD_FAILURE() << "fsck.f2fs missing and F2FSCORE_REQUIRE_FSCK=1";
  return false;
}

void write_at(const fs::path& p, std::uint64_t off, const std::string& data) {
  const int fd = ::open(p.c_str(), O_WRONLY | O_CREAT, 0644);
  ASSERT_GE(fd, 0) << p;
  ASSERT_EQ(::pwrite(fd, data.data(), data.size(), static_cast<off_t>(off)), static_cast<ssize_t>(data.size()));
  ::close(fd);
}

std::string random_bytes(std::size_t n, std::uint32_t seed) {
  std::mt19937 g(seed);
  std::string s(n, '\0');
  for (auto& c : s) c = static_cast<char>(g() | 1);  // no zero bytes: every block is data
  return s;
}

void set_times(const fs::path& p, std::int64_t a, long an, std::int64_t m, long mn) {
  struct timespec ts[2] = {{static_cast<time_t>(a), an}, {static_cast<time_t>(m), mn}};
  ASSERT_EQ(::utimensat(AT_FDCWD, p.c_str(), ts, AT_SYMLINK_NOFOLLOW), 0) << p << ": " << std::strerror(errno);
}

// A POSIX ACL in the xattr form (version 2, {tag, perm, id} entries).
std::string acl(std::initializer_list<std::tuple<std::uint16_t, std::uint16_t, std::uint32_t>> entries) {
  std::string s;
  auto put = [&](std::uint32_t v, int n) {
    for (int i = 0; i < n; ++i) s += static_cast<char>((v >> (8 * i)) & 0xff);
  };
  put(2, 4);
  for (auto [tag, perm, id] : entries) {
    put(tag, 2);
    put(perm, 2);
    put(id, 4);
  }
  return s;
}

// Every kind of entry: nested and empty directories, small, multi-chunk and
// sparse files, hard links across directories, short and long symlinks,
// device nodes, a FIFO, a socket, odd modes, owners, times with
// nanoseconds, xattrs of each namespace and POSIX ACLs. Some steps need
// root (mknod, chown, trusted.*): the tree records what it got.
struct HostTree {
  bool devices = false, owners = false, trusted = false, security = false, acls = false;
};

HostTree make_host_tree(const fs::path& r) {
  HostTree t;
  fs::create_directories(r / "a/b/c");
  fs::create_directories(r / "empty");
  fs::create_directories(r / "sticky");
  write_at(r / "small.txt", 0, "hello, f2fs\n");
  write_at(r / "a/random.bin", 0, random_bytes(100000, 1));
  write_at(r / "a/b/big.bin", 0, random_bytes(9 * MiB + 123, 2));  // several 1 MiB chunks
  write_at(r / "a/b/c/deep.txt", 0, "deep\n");
  write_at(r / "empty.file", 0, "");
  // Sparse: data at [0, 4 KiB) and [5 MiB, 5 MiB + 100 KiB), size 16 MiB.
  write_at(r / "sparse", 0, random_bytes(4096, 3));
  write_at(r / "sparse", 5 * MiB, random_bytes(100 * 1024, 4));
  ::truncate((r / "sparse").c_str(), 16 * MiB);
  // Starts with a hole, ends with data in a partial block.
  write_at(r / "a/hole_first", 3 * MiB + 10, random_bytes(5000, 5));
  // Hard links: three names in three directories.
  write_at(r / "a/linked", 0, "one inode, three names\n");
  fs::create_hard_link(r / "a/linked", r / "a/b/linked2");
  fs::create_hard_link(r / "a/linked", r / "linked3");
  // Symlinks: short (inline in the inode) and long (a data block).
  fs::create_symlink("small.txt", r / "link_short");
  fs::create_symlink(std::string(3000, 'x') + "/target", r / "a/link_long");
  fs::create_symlink("/nonexistent/absolute", r / "a/b/dangling");
  // Special files.
  if (::mknod((r / "chr").c_str(), S_IFCHR | 0620, makedev(1, 3)) == 0 &&
      ::mknod((r / "blk").c_str(), S_IFBLK | 0660, makedev(259, 70000)) == 0)  // minor > 255: new encoding
    t.devices = true;
  EXPECT_EQ(::mkfifo((r / "a/fifo").c_str(), 0640), 0);
  {
    const int s = ::socket(AF_UNIX, SOCK_STREAM, 0);
    sockaddr_un a{};
    a.sun_family = AF_UNIX;
    const std::string sp = (r / "a/sock").string();
    if (sp.size() < sizeof a.sun_path) {
      std::memcpy(a.sun_path, sp.c_str(), sp.size() + 1);
      EXPECT_EQ(::bind(s, reinterpret_cast<sockaddr*>(&a), sizeof a), 0);
    }
    ::close(s);
  }
  // Modes.
  ::chmod((r / "small.txt").c_str(), 0600);
  ::chmod((r / "a/random.bin").c_str(), 04755);
  ::chmod((r / "sticky").c_str(), 01777);
  ::chmod((r / "empty").c_str(), 0700);
  // Owners.
  if (::lchown((r / "small.txt").c_str(), 1234, 5678) == 0 && ::lchown((r / "a").c_str(), 42, 43) == 0 &&
      ::lchown((r / "link_short").c_str(), 7, 8) == 0)
    t.owners = true;
  // Xattrs.
  auto sx = [](const fs::path& p, const char* n, const std::string& v) {
    return ::lsetxattr(p.c_str(), n, v.data(), v.size(), 0) == 0;
  };
  EXPECT_TRUE(sx(r / "small.txt", "user.comment", "a user attribute"));
  EXPECT_TRUE(sx(r / "a", "user.dir", "on a directory"));
  EXPECT_TRUE(sx(r / "a/b/big.bin", "user.empty", ""));
  EXPECT_TRUE(sx(r / "a/b/big.bin", "user.long", std::string(1000, 'v')));
  t.trusted = sx(r / "small.txt", "trusted.t", std::string("\x00\x01\x02", 3));
  t.security = sx(r / "a/random.bin", "security.selinux", std::string("system_u:object_r:etc_t:s0\0", 27));
  t.acls = sx(r / "a/b", "system.posix_acl_access",
              acl({{0x01, 7, 0xffffffff}, {0x02, 4, 1000}, {0x04, 5, 0xffffffff}, {0x08, 1, 2000},
                   {0x10, 5, 0xffffffff}, {0x20, 4, 0xffffffff}})) &&
           sx(r / "a/b", "system.posix_acl_default",
              acl({{0x01, 7, 0xffffffff}, {0x04, 5, 0xffffffff}, {0x20, 0, 0xffffffff}}));
  // Times, last (they change with everything above): nanoseconds kept.
  for (const auto& e : fs::recursive_directory_iterator(r)) {
    set_times(e.path(), 1600000000 + static_cast<std::int64_t>(e.path().string().size()), 111,
              1500000000 + static_cast<std::int64_t>(e.path().string().size()), 999999999);
  }
  set_times(r, 1600000001, 5, 1500000001, 7);
  return t;
}

std::map<std::string, std::string> host_xattrs(const fs::path& p) {
  std::map<std::string, std::string> out;
  char names[65536];
  const ssize_t n = ::llistxattr(p.c_str(), names, sizeof names);
  for (ssize_t i = 0; i < n;) {
    const std::string name = names + i;
    i += static_cast<ssize_t>(name.size() + 1);
    char v[65536];
    const ssize_t vl = ::lgetxattr(p.c_str(), name.c_str(), v, sizeof v);
    if (vl >= 0) out[name] = std::string(v, static_cast<std::size_t>(vl));
  }
  return out;
}

// Data ranges of a host file by SEEK_DATA/SEEK_HOLE, as 4 KiB block indexes.
std::set<std::uint64_t> host_data_blocks(const fs::path& p, std::uint64_t size) {
  std::set<std::uint64_t> out;
  const int fd = ::open(p.c_str(), O_RDONLY);
  off_t off = 0;
  while (static_cast<std::uint64_t>(off) < size) {
    const off_t d = ::lseek(fd, off, SEEK_DATA);
    if (d < 0) break;
    off_t h = ::lseek(fd, d, SEEK_HOLE);
    if (h < 0) h = static_cast<off_t>(size);
    for (std::uint64_t b = static_cast<std::uint64_t>(d) / 4096; b < (static_cast<std::uint64_t>(h) + 4095) / 4096; ++b)
      out.insert(b);
    off = h;
  }
  ::close(fd);
  return out;
}

std::string host_content(const fs::path& p) {
  std::ifstream f(p, std::ios::binary);
  return std::string(std::istreambuf_iterator<char>(f), {});
}

// Host atimes, taken before the tree is read (reading a directory or file
// without O_NOATIME changes them under relatime).
using Atimes = std::map<std::string, struct timespec>;
Atimes snapshot_atimes(const fs::path& root) {
  Atimes out;
  struct stat st {};
  for (const auto& e : fs::recursive_directory_iterator(root)) {
    ::lstat(e.path().c_str(), &st);
    out[e.path().string()] = st.st_atim;
  }
  ::lstat(root.c_str(), &st);  // after the listing, which may have changed it
  out[root.string()] = st.st_atim;
  return out;
}

struct CompareOptions {
  const Atimes* atimes = nullptr;            // host atimes before the copy
  bool owners = true;                        // expect the host's uid/gid, else 0:0
  std::optional<std::uint64_t> fixed_time;   // expect this for every time
  bool root_attrs = true;                    // the target got the source's attributes
};

// The image's tree under `target` equals the host tree under `root`.
void expect_same_tree(Volume& v, const fs::path& root, const std::string& target, const CompareOptions& co) {
  std::map<std::pair<dev_t, ino_t>, nid_t> inode_of;
  std::function<void(const fs::path&, const std::string&, bool)> walk = [&](const fs::path& hp, const std::string& ip,
                                                                           bool is_root) {
    SCOPED_TRACE(ip);
    struct stat st {};
    ASSERT_EQ(::lstat(hp.c_str(), &st), 0);
    auto in = v.resolve(ip);
    ASSERT_OK(in);
    if (!is_root || co.root_attrs) {
      EXPECT_EQ(in->mode, static_cast<std::uint16_t>(st.st_mode)) << std::oct << in->mode << " vs " << st.st_mode;
      EXPECT_EQ(in->uid, co.owners ? st.st_uid : 0u);
      EXPECT_EQ(in->gid, co.owners ? st.st_gid : 0u);
      const auto& i = in->raw.i;
      if (co.fixed_time) {
        EXPECT_EQ(i.i_mtime.get(), *co.fixed_time);
        EXPECT_EQ(i.i_atime.get(), *co.fixed_time);
        EXPECT_EQ(i.i_ctime.get(), *co.fixed_time);
      } else {
        EXPECT_EQ(i.i_mtime.get(), static_cast<std::uint64_t>(st.st_mtim.tv_sec));
        EXPECT_EQ(i.i_mtime_nsec.get(), static_cast<std::uint32_t>(st.st_mtim.tv_nsec));
        const struct timespec at = co.atimes ? co.atimes->at(hp.string()) : st.st_atim;
        EXPECT_EQ(i.i_atime.get(), static_cast<std::uint64_t>(at.tv_sec));
        EXPECT_EQ(i.i_atime_nsec.get(), static_cast<std::uint32_t>(at.tv_nsec));
        EXPECT_EQ(i.i_ctime.get(), static_cast<std::uint64_t>(st.st_ctim.tv_sec));
        EXPECT_EQ(i.i_ctime_nsec.get(), static_cast<std::uint32_t>(st.st_ctim.tv_nsec));
      }
      // Xattrs: the same names and values.
      auto xs = v.xattrs(*in);
      ASSERT_OK(xs);
      std::map<std::string, std::string> got;
      for (const auto& x : *xs) got[x.full_name()] = x.value;
      EXPECT_EQ(got, host_xattrs(hp));
    }
    if (!S_ISDIR(st.st_mode)) {
      EXPECT_EQ(in->links, static_cast<std::uint32_t>(st.st_nlink));
      auto [it, first] = inode_of.emplace(std::make_pair(st.st_dev, st.st_ino), in->ino);
      if (!first) EXPECT_EQ(in->ino, it->second) << "hard link to a different inode";
    }
    if (S_ISREG(st.st_mode)) {
      EXPECT_EQ(in->size, static_cast<std::uint64_t>(st.st_size));
      std::string data(static_cast<std::size_t>(st.st_size), '\0');
      auto n = v.read(*in, 0, std::span<std::uint8_t>(reinterpret_cast<std::uint8_t*>(data.data()), data.size()));
      ASSERT_TRUE(n);
      EXPECT_EQ(*n, data.size());
      EXPECT_TRUE(data == host_content(hp)) << "contents differ";
      // Holes kept: exactly the host's data blocks are mapped.
      if (!in->has_inline_data()) {
        const auto want = host_data_blocks(hp, static_cast<std::uint64_t>(st.st_size));
        std::set<std::uint64_t> mapped;
        for (std::uint64_t b = 0; b < (in->size + 4095) / 4096; ++b) {
          auto a = v.map_block(*in, b);
          ASSERT_TRUE(a);
          if (*a != 0) mapped.insert(b);
        }
        EXPECT_EQ(mapped, want);
      }
    } else if (S_ISLNK(st.st_mode)) {
      auto t = v.read_link(*in);
      ASSERT_TRUE(t);
      EXPECT_EQ(*t, fs::read_symlink(hp).string());
    } else if (S_ISCHR(st.st_mode) || S_ISBLK(st.st_mode)) {
      auto d = inspect::device_number(*in);
      EXPECT_EQ(d.major, major(st.st_rdev));
      EXPECT_EQ(d.minor, minor(st.st_rdev));
    } else if (S_ISDIR(st.st_mode)) {
      auto ents = v.read_dir(*in);
      ASSERT_TRUE(ents);
      std::set<std::string> names;
      for (const auto& e : *ents)
        if (e.name != "." && e.name != ".." && !(is_root && e.name == "lost+found")) names.insert(e.name);
      std::set<std::string> want;
      for (const auto& e : fs::directory_iterator(hp)) want.insert(e.path().filename().string());
      if (is_root && want.count("lost+found")) names.insert("lost+found");
      EXPECT_EQ(names, want);
      for (const auto& n : want) walk(hp / n, ip == "/" ? "/" + n : ip + "/" + n, false);
    }
  };
  walk(root, target, true);
}

// Our checker (check-only) and fsck.f2fs -f find nothing.
void expect_clean(const fs::path& img, const std::string& what) {
  {
    auto dev = open_posix_device(img.string(), {true});
    ASSERT_TRUE(dev);
    fsck::Options fo;
    fo.mode = fsck::Mode::check_only;
    fo.force = true;
    auto rep = fsck::check(**dev, fo);
    ASSERT_TRUE(rep) << what << ": " << rep.error().to_string();
    std::string found;
    for (const auto& p : rep->problems) found += p.to_string() + "\n";
    EXPECT_TRUE(rep->problems.empty()) << what << ": f2fscore fsck:\n" << found;
  }
  if (have_fsck()) {
    std::string log;
    auto probs = f2fstest::fsck_problems(img, &log);
    EXPECT_TRUE(probs.empty()) << what << ": fsck.f2fs -f:\n" << log;
  }
}

fs::path our_image(const f2fstest::TempDir& t, const std::string& name, std::uint64_t bytes, const std::string& features) {
  const auto img = t / name;
  f2fstest::make_sparse_file(img, bytes);
  auto r = run(kMkfs + " -q -f -T 1700000000 " + (features.empty() ? "" : "-O " + features + " ") + shell_quote(img.string()));
  EXPECT_EQ(r.exit_code, 0) << r.output;
  return img;
}

struct FeatureCase {
  const char* name;
  const char* features;
};

class PopulateTree : public ::testing::TestWithParam<FeatureCase> {};

TEST_P(PopulateTree, ImageEqualsHostTreeAndIsClean) {
  f2fstest::TempDir t;
  const auto src = t / "src";
  const HostTree ht = make_host_tree(src);
  const Atimes at0 = snapshot_atimes(src);
  const auto img = our_image(t, "img", 256 * MiB, GetParam().features);
  {
    auto dev = open_posix_device(img.string(), {});
    ASSERT_TRUE(dev);
    auto w = Writer::mount(**dev, {1700000500});
    ASSERT_OK(w);
    PopulateOptions po;
    po.preserve_owner = true;
    po.chunk_bytes = 1 * MiB;  // big.bin takes ten write() calls
    auto rep = populate(**w, src.string(), po);
    ASSERT_OK(rep);
    std::string probs;
    for (const auto& p : rep->problems) probs += p.to_string() + "\n";
    EXPECT_TRUE(rep->problems.empty()) << probs;
    EXPECT_EQ(rep->hard_links, 2u);
    EXPECT_EQ(rep->symlinks, 3u);
    EXPECT_EQ(rep->specials, ht.devices ? 4u : 2u);
    EXPECT_EQ(rep->directories, 5u);  // a, a/b, a/b/c, empty, sticky
    // Holes: sparse (16 MiB - 4 KiB - 100 KiB) + hole_first's leading 3 MiB + 8 KiB... as SEEK_DATA saw them.
    EXPECT_GT(rep->hole_bytes, 15 * MiB);
    ASSERT_TRUE((*w)->unmount());
  }
  {
    auto dev = open_posix_device(img.string(), {true});
    ASSERT_TRUE(dev);
    auto v = Volume::open(**dev);
    ASSERT_OK(v);
    EXPECT_TRUE((*v)->open_report().clean_unmount);
    expect_same_tree(**v, src, "/", {&at0});
    // i_blocks of the sparse file: the inode, 26 data blocks (1 + 25) and
    // one direct node (block 1280 is past the inode's own slots).
    auto in = (*v)->resolve("/sparse");
    ASSERT_TRUE(in);
    EXPECT_EQ(in->blocks, 1u + 26u + (1280 >= in->addrs_per_inode ? 1u : 0u));
  }
  expect_clean(img, GetParam().name);
  if (::geteuid() == 0) {  // as root every kind of entry must have been made
    EXPECT_TRUE(ht.devices && ht.owners && ht.trusted && ht.security && ht.acls)
        << ht.devices << ht.owners << ht.trusted << ht.security << ht.acls;
  }
}

INSTANTIATE_TEST_SUITE_P(Features, PopulateTree,
                         ::testing::Values(FeatureCase{"default", ""},
                                           FeatureCase{"checksums", "extra_attr,inode_checksum,flexible_inline_xattr,"
                                                                    "inode_crtime,sb_checksum,lost_found"}),
                         [](const auto& i) { return std::string(i.param.name); });

TEST(Populate, IntoTargetWithFixedTimeAndRootOwner) {
  f2fstest::TempDir t;
  const auto src = t / "src";
  make_host_tree(src);
  const Atimes at0 = snapshot_atimes(src);
  const auto img = our_image(t, "img", 128 * MiB, "extra_attr,inode_checksum,flexible_inline_xattr");
  {
    auto dev = open_posix_device(img.string(), {});
    ASSERT_TRUE(dev);
    auto w = Writer::mount(**dev, {1700000500});
    ASSERT_OK(w);
    PopulateOptions po;
    po.target = "/sub/dir";  // created
    po.fixed_time = 1234567890;
    auto rep = populate(**w, src.string(), po);
    ASSERT_OK(rep);
    EXPECT_TRUE(rep->problems.empty()) << (rep->problems.empty() ? "" : rep->problems[0].to_string());
    // A target that is a file is refused.
    ASSERT_TRUE((*w)->create("/plain"));
    po.target = "/plain";
    auto bad = populate(**w, src.string(), po);
    ASSERT_FALSE(bad);
    EXPECT_EQ(bad.error().code, Errc::invalid_argument);
    EXPECT_NE(bad.error().message.find("not a directory"), std::string::npos) << bad.error().message;
    ASSERT_TRUE((*w)->unmount());
  }
  {
    auto dev = open_posix_device(img.string(), {true});
    ASSERT_TRUE(dev);
    auto v = Volume::open(**dev);
    ASSERT_TRUE(v);
    CompareOptions co;
    co.owners = false;
    co.fixed_time = 1234567890;
    expect_same_tree(**v, src, "/sub/dir", co);
  }
  expect_clean(img, "target /sub/dir");
}

TEST(Populate, BadSourceIsRefused) {
  f2fstest::TempDir t;
  const auto img = our_image(t, "img", 64 * MiB, "");
  auto dev = open_posix_device(img.string(), {});
  ASSERT_TRUE(dev);
  auto w = Writer::mount(**dev, {1700000500});
  ASSERT_TRUE(w);
  auto r = populate(**w, (t / "missing").string());
  ASSERT_FALSE(r);
  EXPECT_EQ(r.error().code, Errc::not_found);
  EXPECT_NE(r.error().message.find("missing"), std::string::npos);
  write_at(t / "file", 0, "x");
  r = populate(**w, (t / "file").string());
  ASSERT_FALSE(r);
  EXPECT_EQ(r.error().code, Errc::invalid_argument);
  EXPECT_NE(r.error().message.find("not a directory"), std::string::npos) << r.error().message;
  ASSERT_TRUE((*w)->unmount());
}

// Progress units counted by hand: one per entry plus one per 4 KiB of size
// (rounded up per file; a hard link's data once).
TEST(Populate, ProgressCountsEntriesAndBlocks) {
  f2fstest::TempDir t;
  const auto src = t / "src";
  fs::create_directories(src / "d1" / "d2");
  write_at(src / "empty", 0, "");
  ASSERT_EQ(::truncate((src / "empty").c_str(), 0), 0);
  write_at(src / "one", 0, "x");                                  // 1 block
  write_at(src / "d1" / "page", 0, std::string(4096, 'a'));      // 1 block
  write_at(src / "d1" / "d2" / "page1", 0, std::string(4097, 'b'));  // 2 blocks
  write_at(src / "sparse", 40959, "z");                             // 10 blocks of size
  write_at(src / "linked", 0, std::string(8192, 'c'));            // 2 blocks, once
  ASSERT_EQ(::link((src / "linked").c_str(), (src / "d1" / "link2").c_str()), 0);
  ASSERT_EQ(::symlink("one", (src / "sym").c_str()), 0);
  // Entries: empty one sparse linked sym d1 d1/page d1/link2 d1/d2 d1/d2/page1 = 10.
  const std::uint64_t expected_max = 10 + (0 + 1 + 1 + 2 + 10 + 2);
  const auto img = our_image(t, "img", 64 * MiB, "");
  auto dev = open_posix_device(img.string(), {});
  ASSERT_TRUE(dev);
  auto w = Writer::mount(**dev, {1700000500});
  ASSERT_OK(w);
  std::vector<std::pair<std::uint64_t, std::uint64_t>> calls;
  PopulateOptions po;
  po.progress = [&](std::uint64_t cur, std::uint64_t max) { calls.emplace_back(cur, max); };
  auto rep = populate(**w, src.string(), po);
  ASSERT_OK(rep);
  ASSERT_TRUE((*w)->unmount());
  ASSERT_GE(calls.size(), 2u);
  EXPECT_EQ(calls.front(), std::make_pair(std::uint64_t{0}, expected_max));
  EXPECT_EQ(calls.back(), std::make_pair(expected_max, expected_max));
  for (std::size_t i = 1; i < calls.size(); ++i) {
    EXPECT_EQ(calls[i].second, expected_max);
    EXPECT_GE(calls[i].first, calls[i - 1].first) << "call " << i;
    EXPECT_LE(calls[i].first, expected_max);
  }
  // Every step of the copy is shown (26 units: fewer than 1,000 per mille).
  EXPECT_GE(calls.size(), 10u);
}

// Extraction progress: one unit per inode of the valid inode count (the
// root, 5 files, 2 directories, a symlink: 9; the hard link's second name
// is no inode). "/a" counts fewer and ends with the whole count.
TEST(Populate, ExtractProgressCountsInodes) {
  f2fstest::TempDir t;
  const auto src = t / "src";
  fs::create_directories(src / "a" / "b");
  for (const char* f : {"f1", "f2", "a/f3", "a/b/f4", "a/b/f5"}) write_at(src / f, 0, f);
  ASSERT_EQ(::link((src / "f1").c_str(), (src / "a" / "f1-link").c_str()), 0);
  ASSERT_EQ(::symlink("f2", (src / "sym").c_str()), 0);
  const std::uint64_t inodes = 1 + 5 + 2 + 1;
  const auto img = our_image(t, "img", 64 * MiB, "");
  {
    auto dev = open_posix_device(img.string(), {});
    ASSERT_TRUE(dev);
    auto w = Writer::mount(**dev, {1700000500});
    ASSERT_OK(w);
    ASSERT_OK(populate(**w, src.string()));
    ASSERT_TRUE((*w)->unmount());
  }
  auto dev = open_posix_device(img.string(), {true});
  ASSERT_TRUE(dev);
  auto v = Volume::open(**dev);
  ASSERT_TRUE(v);
  for (const std::string path : {"/", "/a"}) {
    std::vector<std::pair<std::uint64_t, std::uint64_t>> calls;
    inspect::ExtractOptions eo;
    eo.owners = false;
    eo.progress = [&](std::uint64_t cur, std::uint64_t max) { calls.emplace_back(cur, max); };
    const auto out = t / ("out" + std::to_string(path.size()));
    auto rep = inspect::extract(**v, path, out.string(), eo);
    ASSERT_OK(rep);
    ASSERT_GE(calls.size(), 2u) << path;
    EXPECT_EQ(calls.front(), std::make_pair(std::uint64_t{0}, inodes)) << path;
    EXPECT_EQ(calls.back(), std::make_pair(inodes, inodes)) << path;
    for (std::size_t i = 1; i < calls.size(); ++i) EXPECT_GE(calls[i].first, calls[i - 1].first) << path;
    if (path == "/") {
      // `out` does not exist: the root is extracted as it, so every inode
      // is one step (each step shown: 9 units are fewer than 1,000 per
      // mille), and the last step is the end.
      ASSERT_EQ(calls.size(), 1 + inodes) << path;
      for (std::uint64_t i = 0; i <= inodes; ++i) EXPECT_EQ(calls[i].first, i) << path;
    }
  }
}

// ---------------------------------------------------------------- the tools

TEST(SloadCli, CopiesATreeAndReportsJson) {
  f2fstest::TempDir t;
  const auto src = t / "src";
  make_host_tree(src);
  const Atimes at0 = snapshot_atimes(src);
  const auto img = our_image(t, "img", 128 * MiB, "extra_attr,inode_checksum,flexible_inline_xattr");
  auto r = run(kSload + " -f " + shell_quote(src.string()) + " -P --json " + shell_quote(img.string()));
  EXPECT_EQ(r.exit_code, 0) << r.output;
  EXPECT_NE(r.output.find("\"hard_links\":2"), std::string::npos) << r.output;
  EXPECT_NE(r.output.find("\"problems\":[]"), std::string::npos) << r.output;
  {
    auto dev = open_posix_device(img.string(), {true});
    ASSERT_TRUE(dev);
    auto v = Volume::open(**dev);
    ASSERT_TRUE(v);
    expect_same_tree(**v, src, "/", {&at0});
  }
  expect_clean(img, "f2fscore-sload");
}

// Every backend --help names is accepted, and each copies the tree.
TEST(SloadCli, EveryBackendItsHelpNames) {
  f2fstest::TempDir t;
  const auto src = t / "src";
  make_host_tree(src);
  const auto help = run(kSload + " --help");
  for (const char* backend : {"auto", "posix", "io_uring", "uring"}) {
    EXPECT_NE(help.output.find(backend), std::string::npos) << backend;
    const auto img = our_image(t, std::string("img-") + backend, 64 * MiB, "");
    auto r = run(kSload + " -q --backend " + backend + " -f " + shell_quote(src.string()) + " " +
                 shell_quote(img.string()));
    if (r.exit_code == 1 && r.output.find("io_uring") != std::string::npos &&
        std::string(backend).find("uring") != std::string::npos)
      continue;  // the kernel refuses io_uring here: the refusal names it
    EXPECT_EQ(r.exit_code, 0) << backend << ": " << r.output;
    expect_clean(img, std::string("sload --backend ") + backend);
  }
  const auto img = our_image(t, "img-bad", 64 * MiB, "");
  auto r = run(kSload + " --backend nvme -f " + shell_quote(src.string()) + " " + shell_quote(img.string()));
  EXPECT_EQ(r.exit_code, 2) << r.output;
}

TEST(SloadCli, BadArguments) {
  f2fstest::TempDir t;
  const auto img = our_image(t, "img", 64 * MiB, "");
  const std::string qi = shell_quote(img.string());
  auto r = run(kSload + " " + qi);  // no -f
  EXPECT_EQ(r.exit_code, 2) << r.output;
  EXPECT_NE(r.output.find("source directory is required"), std::string::npos) << r.output;
  r = run(kSload + " --no-such-option -f /tmp " + qi);
  EXPECT_EQ(r.exit_code, 2) << r.output;
  r = run(kSload + " -f /tmp --target-dir relative " + qi);
  EXPECT_EQ(r.exit_code, 2) << r.output;
  r = run(kSload + " -f /tmp -T -5 " + qi);  // a time before the epoch: not kept silently as the source's
  EXPECT_EQ(r.exit_code, 2) << r.output;
  r = run(kSload + " -f " + shell_quote((t / "missing").string()) + " " + qi);
  EXPECT_EQ(r.exit_code, 1) << r.output;
  EXPECT_NE(r.output.find("No such file"), std::string::npos) << r.output;
  write_at(t / "file", 0, "x");
  r = run(kSload + " -f " + shell_quote((t / "file").string()) + " " + qi);
  EXPECT_EQ(r.exit_code, 1) << r.output;
  EXPECT_NE(r.output.find("not a directory"), std::string::npos) << r.output;
  r = run(kSload + " -f /tmp " + shell_quote((t / "noimage").string()));
  EXPECT_EQ(r.exit_code, 1) << r.output;
  f2fstest::make_sparse_file(t / "zeros", 64 * MiB);
  r = run(kSload + " -f " + shell_quote(t.path().string()) + " " + shell_quote((t / "zeros").string()));
  EXPECT_EQ(r.exit_code, 1) << r.output;
  EXPECT_NE(r.output.find("cannot mount"), std::string::npos) << r.output;
  expect_clean(img, "after refusals");
}

// A run refused after the writer mounted (the source missing, the target
// directory impossible: a 256-byte name) copies nothing and writes nothing:
// the image's bytes are the ones mkfs left (the project's rule; the writer
// writes the unmount checkpoint only when something changed, as
// f2fs_put_super()). A run that copies a file changes them.
TEST(SloadCli, RefusalAfterMountWritesNothing) {
  f2fstest::TempDir t;
  const auto img = our_image(t, "img", 64 * MiB, "extra_attr,inode_checksum,flexible_inline_xattr,quota");
  const std::string qi = shell_quote(img.string());
  auto image_sum = [&] {
    std::ifstream in(img, std::ios::binary);
    std::string all((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
    return f2fstest::sha256_hex(all);
  };
  const std::string before = image_sum();
  auto r = run(kSload + " -f " + shell_quote((t / "missing").string()) + " " + qi);
  EXPECT_EQ(r.exit_code, 1) << r.output;
  EXPECT_NE(r.output.find("No such file"), std::string::npos) << r.output;
  EXPECT_EQ(image_sum(), before) << "a missing source changed the image";
  fs::create_directories(t / "src");
  write_at(t / "src/f", 0, "data\n");
  r = run(kSload + " -f " + shell_quote((t / "src").string()) + " --target-dir /" + std::string(256, 'n') + " " + qi);
  EXPECT_EQ(r.exit_code, 1) << r.output;
  EXPECT_NE(r.output.find("target"), std::string::npos) << r.output;
  EXPECT_EQ(image_sum(), before) << "an impossible target changed the image";
  r = run(kSload + " -f " + shell_quote((t / "src").string()) + " " + qi);
  EXPECT_EQ(r.exit_code, 0) << r.output;
  EXPECT_NE(image_sum(), before);
  expect_clean(img, "after the copy");
}

TEST(SloadCli, ImageTooSmallIsNoSpaceAndStaysClean) {
  f2fstest::TempDir t;
  const auto src = t / "src";
  fs::create_directories(src / "d");
  for (int i = 0; i < 4; ++i) {
    const int fd = ::open((src / ("f" + std::to_string(i))).c_str(), O_WRONLY | O_CREAT, 0644);
    ASSERT_GE(fd, 0);
    const std::string chunk(MiB, static_cast<char>('a' + i));
    for (int m = 0; m < 30; ++m) ASSERT_EQ(::write(fd, chunk.data(), chunk.size()), static_cast<ssize_t>(chunk.size()));
    ::close(fd);
  }
  write_at(src / "d/after", 0, "never reached\n");
  const auto img = our_image(t, "img", 64 * MiB, "");
  auto r = run(kSload + " -f " + shell_quote(src.string()) + " " + shell_quote(img.string()));
  EXPECT_EQ(r.exit_code, 1) << r.output;
  EXPECT_NE(r.output.find("no space left in the image"), std::string::npos) << r.output;
  EXPECT_NE(r.output.find("/f"), std::string::npos) << "names the file: " << r.output;
  expect_clean(img, "after no_space");
  // Every file the image holds reads back as the start of its source, with
  // every block below i_size mapped (the sources have no holes): the file
  // being written when space ran out does not claim bytes it does not store.
  auto dev = open_posix_device(img.string(), {true});
  ASSERT_TRUE(dev);
  auto v = Volume::open(**dev);
  ASSERT_TRUE(v);
  int present = 0;
  for (int i = 0; i < 4; ++i) {
    auto in = (*v)->resolve("/f" + std::to_string(i));
    if (!in) continue;
    ++present;
    ASSERT_LE(in->size, 30 * MiB);
    std::string got(static_cast<std::size_t>(in->size), '\0');
    auto n = (*v)->read(*in, 0, std::span<std::uint8_t>(reinterpret_cast<std::uint8_t*>(got.data()), got.size()));
    ASSERT_TRUE(n);
    EXPECT_EQ(got.find_first_not_of(static_cast<char>('a' + i)), std::string::npos)
        << "/f" << i << " (" << in->size << " bytes) holds bytes its source does not have";
    for (std::uint64_t b = 0; b < (in->size + 4095) / 4096; ++b) {
      auto a = (*v)->map_block(*in, b);
      ASSERT_TRUE(a);
      ASSERT_NE(*a, 0u) << "/f" << i << ": block " << b << " below i_size " << in->size << " is not mapped";
    }
    // ... and none past it (the failed write's blocks are freed).
    for (std::uint64_t b = (in->size + 4095) / 4096; b < 30 * MiB / 4096; ++b) {
      auto a = (*v)->map_block(*in, b);
      ASSERT_TRUE(a);
      ASSERT_EQ(*a, 0u) << "/f" << i << ": block " << b << " past i_size " << in->size << " is mapped";
    }
  }
  EXPECT_GE(present, 1);
}

// A second sload into the same image merges: existing
// directories get the new entries, existing files are kept unless
// --overwrite, and the result is the union of the two trees, clean under
// both checkers. The expected trees are the host's, built here.
TEST(SloadCli, SecondLoadMergesIntoExistingDirectories) {
  f2fstest::TempDir t;
  const auto a = t / "a", b = t / "b", both = t / "both", over = t / "over";
  fs::create_directories(a / "etc/conf.d");
  fs::create_directories(a / "usr/bin");
  write_at(a / "etc/hosts", 0, "from a\n");
  write_at(a / "etc/conf.d/one", 0, "one\n");
  write_at(a / "usr/bin/tool", 0, random_bytes(20000, 1));
  fs::create_directories(b / "etc/conf.d");
  fs::create_directories(b / "var/log");
  write_at(b / "etc/hosts", 0, "from b, longer than a's\n");
  write_at(b / "etc/conf.d/two", 0, "two\n");
  write_at(b / "var/log/big", 0, random_bytes(300000, 2));
  fs::create_symlink("hosts", b / "etc/link");
  // The expected trees, by cp -a on the host: b then a over it (a was
  // loaded first and its files are kept), and a then b over it (b's files
  // replace a's).
  for (const auto& [dst, first, second] : {std::tuple{both, b, a}, std::tuple{over, a, b}}) {
    fs::create_directories(dst);
    for (const auto& src : {first, second})
      ASSERT_EQ(std::system(("cp -a " + shell_quote(src.string()) + "/. " + shell_quote(dst.string()) + "/").c_str()), 0);
  }
  for (const bool overwrite : {false, true}) {
    const auto img = our_image(t, overwrite ? "over.img" : "kept.img", 64 * MiB, "");
    auto r = run(kSload + " -q -T 1234567890 -f " + shell_quote(a.string()) + " " + shell_quote(img.string()));
    ASSERT_EQ(r.exit_code, 0) << r.output;
    r = run(kSload + " -T 1234567890 --json" + (overwrite ? " --overwrite" : "") + " -f " + shell_quote(b.string()) + " " +
            shell_quote(img.string()));
    ASSERT_EQ(r.exit_code, 0) << r.output;
    // b's directories etc and etc/conf.d exist (merged into); etc/hosts is
    // b's one existing file; var, var/log created.
    EXPECT_NE(r.output.find("\"directories\":2"), std::string::npos) << r.output;
    EXPECT_NE(r.output.find("\"merged_directories\":2"), std::string::npos) << r.output;
    EXPECT_NE(r.output.find(overwrite ? "\"kept\":0" : "\"kept\":1"), std::string::npos) << r.output;
    EXPECT_NE(r.output.find(overwrite ? "\"replaced\":1" : "\"replaced\":0"), std::string::npos) << r.output;
    {
      auto dev = open_posix_device(img.string(), {true});
      ASSERT_TRUE(dev);
      auto v = Volume::open(**dev);
      ASSERT_TRUE(v);
      CompareOptions co;
      co.owners = false;
      co.fixed_time = 1234567890;
      co.root_attrs = false;
      expect_same_tree(**v, overwrite ? over : both, "/", co);
    }
    expect_clean(img, overwrite ? "second sload --overwrite" : "second sload");
  }
  // A directory where the source has a file: reported, exit 1, the rest copied.
  const auto img = our_image(t, "clash.img", 64 * MiB, "");
  ASSERT_EQ(run(kSload + " -q -f " + shell_quote(a.string()) + " " + shell_quote(img.string())).exit_code, 0);
  const auto c = t / "c";
  fs::create_directories(c / "usr");
  write_at(c / "usr/bin", 0, "a file where a has a directory\n");
  write_at(c / "new", 0, "copied\n");
  auto r = run(kSload + " --overwrite -f " + shell_quote(c.string()) + " " + shell_quote(img.string()));
  EXPECT_EQ(r.exit_code, 1) << r.output;
  EXPECT_NE(r.output.find("/usr/bin"), std::string::npos) << r.output;
  EXPECT_NE(r.output.find("a directory of that name exists"), std::string::npos) << r.output;
  expect_clean(img, "sload over a directory clash");
}

TEST(MkfsPopulate, FormatsAndCopiesInOneStep) {
  f2fstest::TempDir t;
  const auto src = t / "src";
  make_host_tree(src);
  const Atimes at0 = snapshot_atimes(src);
  const auto img = t / "img";
  f2fstest::make_sparse_file(img, 128 * MiB);
  auto r = run(kMkfs + " -f -O extra_attr,inode_checksum,flexible_inline_xattr,inode_crtime --populate " +
               shell_quote(src.string()) + " --preserve-owner " + shell_quote(img.string()));
  EXPECT_EQ(r.exit_code, 0) << r.output;
  EXPECT_NE(r.output.find("Populated from"), std::string::npos) << r.output;
  {
    auto dev = open_posix_device(img.string(), {true});
    ASSERT_TRUE(dev);
    auto v = Volume::open(**dev);
    ASSERT_TRUE(v);
    expect_same_tree(**v, src, "/", {&at0});
  }
  expect_clean(img, "mkfs --populate");
}

// --progress FD: e2fsck -C's lines "1 CURRENT MAX DEVICE", the last one
// complete; nothing on stdout without it.
TEST(MkfsPopulate, ProgressLinesOnADescriptor) {
  f2fstest::TempDir t;
  const auto src = t / "src";
  fs::create_directories(src / "d");
  write_at(src / "d" / "f", 0, std::string(3 * 4096, 'q'));  // 3 blocks
  write_at(src / "g", 0, "g");                                // 1 block
  const std::uint64_t expected_max = 3 + 3 + 1;                // d, d/f, g; data
  for (const std::string tool : {"mkfs", "sload"}) {
    const auto img = t / ("img-" + tool);
    const auto log = t / ("progress-" + tool);
    f2fstest::make_sparse_file(img, 64 * MiB);
    std::string cmd;
    if (tool == "mkfs") {
      cmd = kMkfs + " -f -q --populate " + shell_quote(src.string()) + " --progress 3 " + shell_quote(img.string());
    } else {
      ASSERT_EQ(run(kMkfs + " -f -q " + shell_quote(img.string())).exit_code, 0);
      cmd = kSload + " -q -f " + shell_quote(src.string()) + " --progress 3 " + shell_quote(img.string());
    }
    auto r = run(cmd + " 3>" + shell_quote(log.string()));
    ASSERT_EQ(r.exit_code, 0) << cmd << "\n" << r.output;
    std::ifstream in(log);
    std::string line, last;
    int lines = 0;
    while (std::getline(in, line)) {
      ++lines;
      unsigned pass = 0;
      unsigned long long cur = 0, max = 0;
      char dev[4096] = {};
      ASSERT_EQ(std::sscanf(line.c_str(), "%u %llu %llu %4095s", &pass, &cur, &max, dev), 4) << line;
      EXPECT_EQ(pass, 1u) << line;
      EXPECT_EQ(max, expected_max) << line;
      EXPECT_LE(cur, max) << line;
      EXPECT_EQ(std::string(dev), img.string()) << line;
      last = line;
    }
    EXPECT_GE(lines, 2) << tool;
    EXPECT_EQ(last, "1 " + std::to_string(expected_max) + " " + std::to_string(expected_max) + " " + img.string())
        << tool;
  }
}

TEST(MkfsPopulate, MissingOrNonDirectorySourceWritesNothing) {
  f2fstest::TempDir t;
  const auto img = t / "img";
  f2fstest::make_sparse_file(img, 64 * MiB);
  write_at(img, 0, std::string(4096, 'z'));
  const auto before = run("sha256sum " + shell_quote(img.string())).output.substr(0, 64);
  auto r = run(kMkfs + " -f --populate " + shell_quote((t / "missing").string()) + " " + shell_quote(img.string()));
  EXPECT_EQ(r.exit_code, 1) << r.output;
  EXPECT_NE(r.output.find("no such directory"), std::string::npos) << r.output;
  r = run(kMkfs + " -f --populate " + shell_quote(img.string()) + " " + shell_quote(img.string()));
  EXPECT_EQ(r.exit_code, 1) << r.output;
  EXPECT_NE(r.output.find("not a directory"), std::string::npos) << r.output;
  EXPECT_EQ(run("sha256sum " + shell_quote(img.string())).output.substr(0, 64), before);
}

// -------------------------------------------- sload.f2fs images

TEST(SloadF2fsImage, WriterModifiesItAndFsckIsClean) {
  const std::string mkfs_f2fs = f2fstest::reference_tool("mkfs.f2fs");
  const std::string sload_f2fs = f2fstest::reference_tool("sload.f2fs");
  if (mkfs_f2fs.empty() || sload_f2fs.empty() || !have_fsck()) {
    if (f2fstest::required("FSCK")) FAIL() << "mkfs.f2fs/sload.f2fs missing and F2FSCORE_REQUIRE_FSCK=1";
    GTEST_SKIP() << "f2fs-tools not installed";
  }
  f2fstest::TempDir t;
  const auto src = t / "src";
  fs::create_directories(src / "dir/sub");
  write_at(src / "a.txt", 0, "sload.f2fs wrote this\n");
  write_at(src / "dir/big.bin", 0, random_bytes(3 * MiB + 17, 9));
  write_at(src / "dir/sub/small", 0, "x");
  fs::create_symlink("../a.txt", src / "dir/link");
  const auto img = t / "img";
  f2fstest::make_sparse_file(img, 128 * MiB);
  auto r = run(mkfs_f2fs + " -f -q " + shell_quote(img.string()));
  ASSERT_EQ(r.exit_code, 0) << r.output;
  r = run(sload_f2fs + " -f " + shell_quote(src.string()) + " " + shell_quote(img.string()));
  ASSERT_TRUE(r.exit_code == 0 || r.exit_code == 1) << r.output;  // 1: its own fsck fixed something
  // docs/fsck.md: sload leaves work for fsck on some feature sets; a
  // repaired image is the starting point, as a user would have it.
  (void)run(f2fstest::reference_tool("fsck.f2fs") + " -f " + shell_quote(img.string()));
  std::string expect_big = host_content(src / "dir/big.bin");
  {
    auto dev = open_posix_device(img.string(), {});
    ASSERT_TRUE(dev);
    auto w = Writer::mount(**dev, {1700000900});
    ASSERT_OK(w);
    auto big = (*w)->lookup("/dir/big.bin");
    ASSERT_OK(big);
    const std::string patch(10000, 'P');
    ASSERT_TRUE((*w)->write(*big, 4096 * 100 + 5, std::span<const std::uint8_t>(
                                                     reinterpret_cast<const std::uint8_t*>(patch.data()), patch.size())));
    expect_big.replace(4096 * 100 + 5, patch.size(), patch);
    ASSERT_TRUE((*w)->unlink("/dir/sub/small"));
    ASSERT_TRUE((*w)->rmdir("/dir/sub"));
    ASSERT_TRUE((*w)->mkdir("/new"));
    auto f = (*w)->create("/new/file");
    ASSERT_TRUE(f);
    const std::string data = random_bytes(2 * MiB, 10);
    ASSERT_TRUE((*w)->write(*f, 0, std::span<const std::uint8_t>(reinterpret_cast<const std::uint8_t*>(data.data()),
                                                                   data.size())));
    // And a populate on top of sload's tree.
    auto rep = populate(**w, (src / "dir").string(), {.target = "/copy"});
    ASSERT_OK(rep);
    ASSERT_TRUE((*w)->unmount());
  }
  {
    auto dev = open_posix_device(img.string(), {true});
    ASSERT_TRUE(dev);
    auto v = Volume::open(**dev);
    ASSERT_TRUE(v);
    auto in = (*v)->resolve("/dir/big.bin");
    ASSERT_TRUE(in);
    std::string got(expect_big.size(), '\0');
    ASSERT_TRUE((*v)->read(*in, 0, std::span<std::uint8_t>(reinterpret_cast<std::uint8_t*>(got.data()), got.size())));
    EXPECT_TRUE(got == expect_big);
    EXPECT_FALSE((*v)->resolve("/dir/sub"));
    auto a = (*v)->resolve("/a.txt");
    ASSERT_TRUE(a);
    EXPECT_TRUE((*v)->resolve("/new/file"));
    EXPECT_TRUE((*v)->resolve("/copy/big.bin"));
  }
  expect_clean(img, "sload.f2fs image after our writer");
}

}  // namespace
