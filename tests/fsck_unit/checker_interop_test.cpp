// f2fscore-fsck against images made by mkfs.f2fs, sload.f2fs (then
// repaired by fsck.f2fs -f), f2fscore-mkfs and the shared images: all clean;
// -n leaves the image byte-identical; -p finds a zeroed inode block that
// fsck.f2fs -a misses. Skips when f2fs-tools are missing, unless
// F2FSCORE_REQUIRE_ORACLE is set.
#include <gtest/gtest.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <regex>
#include <sstream>

#include "f2fscore/volume.hpp"
#include "support/test_support.hpp"

namespace fs = std::filesystem;
using f2fstest::run;
using f2fstest::shell_quote;

namespace {

bool tools_present() {
  return !f2fstest::reference_tool("mkfs.f2fs").empty() && !f2fstest::reference_tool("fsck.f2fs").empty() &&
         !f2fstest::reference_tool("sload.f2fs").empty();
}

#define REQUIRE_TOOLS()                                                    \
  do {                                                                     \
    if (!tools_present()) {                                                \
      if (std::getenv("F2FSCORE_REQUIRE_ORACLE")) FAIL() << "f2fs-tools missing"; \
      GTEST_SKIP() << "f2fs-tools missing";                                \
    }                                                                      \
  } while (0)

fs::path scratch(const std::string& name) { return f2fstest::scratch_dir() / name; }

f2fstest::CommandResult ours(const std::string& args, const fs::path& img) {
  return run(std::string(F2FSCORE_FSCK_BIN) + " " + args + " " + shell_quote(img.string()));
}

void expect_clean(const fs::path& img, const std::string& what) {
  auto r = ours("-n", img);
  EXPECT_EQ(r.exit_code, 0) << what << ":\n" << r.output;
  auto j = ours("-n --json", img);
  EXPECT_NE(j.output.find("\"problems\":[]"), std::string::npos) << what << ":\n" << j.output;
  EXPECT_NE(j.output.find("\"exit_code\":0"), std::string::npos) << what;
}

void make_tree(const fs::path& d) {
  fs::create_directories(d / "a/b/c");
  for (int i = 0; i < 400; ++i) std::ofstream(d / "a" / ("f" + std::to_string(i))) << "file " << i << "\n";
  std::ofstream big(d / "a/b/big", std::ios::binary);
  for (int i = 0; i < 3 * 1024 * 1024 / 16; ++i) big << "0123456789abcdef";
  big.close();
  fs::create_symlink("a/f1", d / "link");
  fs::create_hard_link(d / "a/f2", d / "hard");
}

}  // namespace

TEST(FsckInterop, MkfsF2fsImagesAreClean) {
  REQUIRE_TOOLS();
  const char* sets[] = {"", "-O extra_attr,inode_checksum,sb_checksum,flexible_inline_xattr,inode_crtime,lost_found,quota",
                        "-O extra_attr,project_quota,compression,encrypt,verity", "-O casefold -C utf8", "-s 2", "-a 0"};
  for (const char* s : sets) {
    const fs::path img = scratch("mkfs.img");
    f2fstest::make_sparse_file(img, 300ull << 20);
    auto m = run("mkfs.f2fs -q -f " + std::string(s) + " " + shell_quote(img.string()));
    ASSERT_EQ(m.exit_code, 0) << s << m.output;
    expect_clean(img, std::string("mkfs.f2fs ") + s);
  }
}

TEST(FsckInterop, OurMkfsImagesAreClean) {
  REQUIRE_TOOLS();
  const char* sets[] = {"", "-O extra_attr,inode_checksum,sb_checksum,flexible_inline_xattr,inode_crtime,lost_found,quota,project_quota",
                        "-O extra_attr,compression,casefold -C utf8", "-O encrypt,verity,extra_attr", "-s 2", "-i", "-a 1"};
  for (const char* s : sets) {
    const fs::path img = scratch("ours.img");
    f2fstest::make_sparse_file(img, 300ull << 20);
    auto m = run(std::string(F2FSCORE_MKFS_BIN) + " -q -f " + s + " " + shell_quote(img.string()));
    ASSERT_EQ(m.exit_code, 0) << s << m.output;
    expect_clean(img, std::string("f2fscore-mkfs ") + s);
  }
}

TEST(FsckInterop, SloadImagesRepairedByFsckF2fsAreClean) {
  REQUIRE_TOOLS();
  const fs::path src = scratch("tree");
  fs::remove_all(src);
  make_tree(src);
  const char* sets[] = {"", "-O extra_attr,inode_checksum,flexible_inline_xattr,inode_crtime,lost_found,quota",
                        "-O extra_attr,compression"};
  for (const char* s : sets) {
    const fs::path img = scratch("sload.img");
    fs::remove(img);
    f2fstest::make_sparse_file(img, 512ull << 20);
    ASSERT_EQ(run("mkfs.f2fs -q -f " + std::string(s) + " " + shell_quote(img.string())).exit_code, 0);
    run("sload.f2fs -f " + shell_quote(src.string()) + " " + shell_quote(img.string()));
    run("fsck.f2fs -f " + shell_quote(img.string()));  // sload writes inconsistent inodes (F2FS-FACTS 3.6)
    ASSERT_TRUE(f2fstest::fsck_problems(img).empty()) << "fsck.f2fs did not repair the sload image " << s;
    expect_clean(img, std::string("sload ") + s);
  }
}

TEST(FsckInterop, SharedImagesAreClean) {
  const fs::path dir = fs::path(F2FSCORE_SOURCE_DIR) / "../shared/images/syzkaller";
  if (!fs::exists(dir)) GTEST_SKIP() << dir << " missing";
  int n = 0;
  for (const auto& e : fs::directory_iterator(dir)) {
    if (e.path().extension() != ".zst") continue;
    const fs::path img = scratch("shared.img");
    fs::remove(img);
    ASSERT_EQ(run("zstd -q -d -f " + shell_quote(e.path().string()) + " -o " + shell_quote(img.string())).exit_code, 0);
    expect_clean(img, e.path().filename().string());
    ++n;
  }
  EXPECT_GT(n, 0);
}

TEST(FsckInterop, CheckOnlyIsByteIdenticalAndPreenFindsAZeroedInode) {
  REQUIRE_TOOLS();
  const fs::path src = scratch("tree2");
  fs::remove_all(src);
  make_tree(src);
  const fs::path img = scratch("zero.img");
  fs::remove(img);
  f2fstest::make_sparse_file(img, 256ull << 20);
  ASSERT_EQ(run("mkfs.f2fs -q -f -O extra_attr,inode_checksum " + shell_quote(img.string())).exit_code, 0);
  run("sload.f2fs -f " + shell_quote(src.string()) + " " + shell_quote(img.string()));
  run("fsck.f2fs -f " + shell_quote(img.string()));
  // The inode block of /a/f7.
  std::uint64_t blk = 0;
  std::uint32_t ino = 0;
  {
    f2fscore::OpenOptions oo;
    oo.read_only = true;
    auto dev = f2fscore::open_posix_device(img.string(), oo);
    ASSERT_TRUE(dev.has_value());
    auto vol = f2fscore::Volume::open(**dev);
    ASSERT_TRUE(vol.has_value());
    auto in = (*vol)->resolve("/a/f7");
    ASSERT_TRUE(in.has_value());
    blk = in->node_blkaddr;
    ino = in->ino;
  }
  ASSERT_EQ(run("dd if=/dev/zero of=" + shell_quote(img.string()) + " bs=4096 count=1 conv=notrunc seek=" +
                std::to_string(blk) + " 2>/dev/null").exit_code, 0);
  // fsck.f2fs -a on a copy: a volume marked clean passes (F2FS-FACTS 3.6).
  const fs::path copy = scratch("zero-copy.img");
  fs::copy_file(img, copy, fs::copy_options::overwrite_existing);
  auto theirs = run("fsck.f2fs -a " + shell_quote(copy.string()));
  EXPECT_EQ(theirs.exit_code, 0) << theirs.output;
  EXPECT_EQ(theirs.output.find("[ASSERT]"), std::string::npos) << "fsck.f2fs -a now finds it:\n" << theirs.output;
  // Ours, check only: finds it, changes nothing.
  fs::copy_file(img, copy, fs::copy_options::overwrite_existing);
  auto n = ours("-n --json", img);
  EXPECT_EQ(n.exit_code, 4) << n.output;
  EXPECT_NE(n.output.find("\"code\":\"NODE_FOOTER_NID\""), std::string::npos) << n.output;
  EXPECT_NE(n.output.find("\"blkaddr\":" + std::to_string(blk)), std::string::npos) << n.output;
  EXPECT_TRUE(f2fstest::differing_blocks(img, copy).empty()) << "-n wrote to the image";
  // Preen: the fast check on the clean-marked volume finds it.
  auto p = ours("-p --json", copy);
  EXPECT_NE(p.exit_code, 0) << p.output;
  EXPECT_NE(p.output.find("\"full_check\":true"), std::string::npos) << p.output;
  EXPECT_NE(p.output.find("\"ino\":" + std::to_string(ino)), std::string::npos) << p.output;
}

TEST(FsckInterop, UsageAndMissingDevice) {
  EXPECT_EQ(run(std::string(F2FSCORE_FSCK_BIN) + " --no-such-option x").exit_code, 16);
  EXPECT_EQ(run(std::string(F2FSCORE_FSCK_BIN) + " -n -y x").exit_code, 16);
  EXPECT_EQ(run(std::string(F2FSCORE_FSCK_BIN) + " -n /nonexistent/image").exit_code, 8);
  auto h = run(std::string(F2FSCORE_FSCK_BIN) + " --help");
  EXPECT_EQ(h.exit_code, 0);
  EXPECT_NE(h.output.find("16 usage"), std::string::npos);
  const fs::path junk = scratch("junk.img");
  f2fstest::make_sparse_file(junk, 64ull << 20);
  EXPECT_EQ(ours("-n", junk).exit_code, 8) << "no superblock is an operational error";
}

namespace {

struct Located {
  std::uint64_t inode_blk = 0;
  std::uint32_t ino = 0;
  std::uint64_t data_blk = 0;  ///< first data block (0 if none)
  std::uint64_t ssa_blk = 0;   ///< SSA block of the data block's segment
  std::uint64_t cp_blk = 0;    ///< the checkpoint block in use
};

Located locate(const fs::path& img, const std::string& path) {
  Located l;
  f2fscore::OpenOptions oo;
  oo.read_only = true;
  auto dev = f2fscore::open_posix_device(img.string(), oo);
  if (!dev) return l;
  auto vol = f2fscore::Volume::open(**dev);
  if (!vol) return l;
  auto in = (*vol)->resolve(path);
  if (!in) return l;
  l.inode_blk = in->node_blkaddr;
  l.ino = in->ino;
  auto a = (*vol)->map_block(*in, 0);
  if (a && (*vol)->is_valid_main_addr(*a)) {
    l.data_blk = *a;
    l.ssa_blk = (*vol)->superblock().ssa_blkaddr.get() + (*vol)->segno_of(*a);
  }
  l.cp_blk = (*vol)->superblock().cp_blkaddr.get() +
             static_cast<std::uint64_t>((*vol)->open_report().checkpoint_pack) * f2fscore::disk::kDefaultBlocksPerSeg;
  return l;
}

void patch(const fs::path& img, std::uint64_t blk, const std::function<void(std::uint8_t*)>& fn) {
  auto b = f2fstest::read_block(img, blk);
  fn(b.data());
  std::fstream f(img, std::ios::in | std::ios::out | std::ios::binary);
  f.seekp(static_cast<std::streamoff>(blk * 4096));
  f.write(reinterpret_cast<const char*>(b.data()), 4096);
}

}  // namespace

#include "f2fscore/disk/checkpoint.hpp"
#include "f2fscore/disk/node.hpp"
#include "f2fscore/disk/dentry.hpp"
#include "f2fscore/endian.hpp"

// Two-pass repairs: pass 1 (-y) repairs and exits 1, pass 2 (-n) is clean,
// and fsck.f2fs -f agrees on a copy. The problem each edit must trigger is
// named by hand.
TEST(FsckInterop, RepairRoundTrips) {
  REQUIRE_TOOLS();
  const fs::path src = scratch("tree3");
  fs::remove_all(src);
  make_tree(src);
  const fs::path base = scratch("base.img");
  fs::remove(base);
  f2fstest::make_sparse_file(base, 256ull << 20);
  ASSERT_EQ(run("mkfs.f2fs -q -f -O extra_attr,inode_checksum,flexible_inline_xattr,lost_found " +
                shell_quote(base.string())).exit_code, 0);
  run("sload.f2fs -f " + shell_quote(src.string()) + " " + shell_quote(base.string()));
  run("fsck.f2fs -f " + shell_quote(base.string()));
  ASSERT_TRUE(f2fstest::fsck_problems(base).empty());
  ASSERT_EQ(ours("-n", base).exit_code, 0);

  using namespace f2fscore::disk;
  struct Case {
    const char* name;
    const char* code;
    std::function<std::string(const fs::path&)> edit;  // returns the JSON fragment naming the object
  };
  std::vector<Case> cases = {
      {"i_links + 3", "INODE_LINKS",
       [](const fs::path& img) {
         auto l = locate(img, "/a/f7");
         patch(img, l.inode_blk, [](std::uint8_t* b) { reinterpret_cast<Node*>(b)->i.i_links = 4u; });
         return "\"ino\":" + std::to_string(l.ino);
       }},
      {"i_blocks + 9", "INODE_BLOCKS",
       [](const fs::path& img) {
         auto l = locate(img, "/a/b/big");
         patch(img, l.inode_blk, [](std::uint8_t* b) {
           auto* n = reinterpret_cast<Node*>(b);
           n->i.i_blocks = n->i.i_blocks.get() + 9;
         });
         return "\"ino\":" + std::to_string(l.ino);
       }},
      {"zeroed inode block", "NODE_FOOTER_NID",
       [](const fs::path& img) {
         auto l = locate(img, "/a/f9");
         patch(img, l.inode_blk, [](std::uint8_t* b) { std::memset(b, 0, 4096); });
         return "\"nid\":" + std::to_string(l.ino);
       }},
      {"zeroed SSA block", "SSA_DATA_MISMATCH",
       [](const fs::path& img) {
         auto l = locate(img, "/a/b/big");
         patch(img, l.ssa_blk, [](std::uint8_t* b) { std::memset(b, 0, 4096); });
         return "\"blkaddr\":" + std::to_string(l.data_blk);
       }},
      {"cp valid_node_count + 1", "CP_VALID_NODE_COUNT",
       [](const fs::path& img) {
         auto l = locate(img, "/");
         patch(img, l.cp_blk, [](std::uint8_t* b) {
           auto* cp = reinterpret_cast<Checkpoint*>(b);
           cp->valid_node_count = cp->valid_node_count.get() + 1;
           seal_checkpoint(b);
         });
         return std::string("\"code\":\"CP_VALID_NODE_COUNT\"");
       }},
      {"dentry removed: inode to lost+found", "INODE_UNREACHABLE",
       [](const fs::path& img) {
         auto l = locate(img, "/a/f11");
         auto d = locate(img, "/a");
         // Clear the bitmap bit of "f11" in /a's dentry blocks.
         f2fscore::OpenOptions oo;
         oo.read_only = true;
         auto dev = f2fscore::open_posix_device(img.string(), oo);
         auto vol = f2fscore::Volume::open(**dev);
         auto dir = (*vol)->resolve("/a");
         std::vector<std::uint64_t> blks;
         for (std::uint64_t i = 0; i * 4096 < dir->size; ++i) {
           auto a = (*vol)->map_block(*dir, i);
           if (a && (*vol)->is_valid_main_addr(*a)) blks.push_back(*a);
         }
         vol->reset();
         for (auto b : blks)
           patch(img, b, [&](std::uint8_t* p) {
             auto* db = reinterpret_cast<DentryBlock*>(p);
             for (std::uint32_t k = 0; k < kNrDentryInBlock; ++k)
               if (f2fscore::test_bit_le(db->dentry_bitmap, k) && db->dentry[k].ino.get() == l.ino)
                 db->dentry_bitmap[k / 8] = static_cast<std::uint8_t>(db->dentry_bitmap[k / 8] & ~(1u << (k % 8)));
           });
         (void)d;
         return "\"ino\":" + std::to_string(l.ino);
       }},
      {"dentry hash", "DENTRY_HASH",
       [](const fs::path& img) {
         f2fscore::OpenOptions oo;
         oo.read_only = true;
         auto dev = f2fscore::open_posix_device(img.string(), oo);
         auto vol = f2fscore::Volume::open(**dev);
         auto dir = (*vol)->resolve("/a");
         const std::uint64_t b0 = *(*vol)->map_block(*dir, 0);
         vol->reset();
         patch(img, b0, [](std::uint8_t* p) {
           auto* db = reinterpret_cast<DentryBlock*>(p);
           for (std::uint32_t k = 2; k < kNrDentryInBlock; ++k)
             if (f2fscore::test_bit_le(db->dentry_bitmap, k) && db->dentry[k].name_len.get() > 2) {
               db->dentry[k].hash_code = db->dentry[k].hash_code.get() + 1;
               break;
             }
         });
         return "\"blkaddr\":" + std::to_string(b0);
       }},
      {"superblock #0 zeroed", "SB_PRIMARY_BAD",
       [](const fs::path& img) {
         patch(img, 0, [](std::uint8_t* p) { std::memset(p + 1024, 0, 3072); });
         return std::string("\"blkaddr\":0");
       }},
  };
  for (auto& c : cases) {
    const fs::path img = scratch("case.img");
    fs::copy_file(base, img, fs::copy_options::overwrite_existing);
    const std::string obj = c.edit(img);
    auto p1 = ours("-y --json", img);
    EXPECT_EQ(p1.exit_code, 1) << c.name << ":\n" << p1.output;
    EXPECT_NE(p1.output.find(std::string("\"code\":\"") + c.code + "\""), std::string::npos) << c.name << ":\n" << p1.output;
    EXPECT_NE(p1.output.find(obj), std::string::npos) << c.name << " must name " << obj << ":\n" << p1.output;
    auto p2 = ours("-n", img);
    EXPECT_EQ(p2.exit_code, 0) << c.name << " (second pass):\n" << p2.output;
    std::string full;
    auto theirs = f2fstest::fsck_problems(img, &full);
    EXPECT_TRUE(theirs.empty()) << c.name << ": fsck.f2fs -f after our repair:\n" << full;
  }
}

namespace {

struct ProgressLine {
  int pass;
  unsigned long long cur, max;
};

// Parses e2fsck's -C FD completion lines, "PASS CURRENT MAX DEVICE" (as
// e2fsck_update_progress() in e2fsck/unix.c writes them): each line must
// name `device`; returns the lines in order.
std::vector<ProgressLine> parse_progress(const fs::path& file, const std::string& device) {
  std::ifstream in(file);
  std::vector<ProgressLine> out;
  std::string line;
  const std::regex re("^([0-9]+) ([0-9]+) ([0-9]+) (.+)$");
  while (std::getline(in, line)) {
    std::smatch m;
    EXPECT_TRUE(std::regex_match(line, m, re)) << "not a progress line: " << line;
    if (m.empty()) continue;
    EXPECT_EQ(m[4].str(), device);
    out.push_back({std::stoi(m[1].str()), std::stoull(m[2].str()), std::stoull(m[3].str())});
  }
  return out;
}

// The passes in order, each from 0 to its max, current never above max or
// going back within a pass; returns the passes seen.
std::vector<int> check_progress(const std::vector<ProgressLine>& lines) {
  std::vector<int> passes;
  for (std::size_t i = 0; i < lines.size(); ++i) {
    const auto& l = lines[i];
    EXPECT_LE(l.cur, l.max) << "line " << i;
    const bool first = i == 0 || lines[i - 1].pass != l.pass;
    const bool last = i + 1 == lines.size() || lines[i + 1].pass != l.pass;
    if (first) {
      EXPECT_EQ(l.cur, 0u) << "pass " << l.pass << " starts at 0";
      passes.push_back(l.pass);
    } else {
      EXPECT_GE(l.cur, lines[i - 1].cur) << "line " << i;
    }
    if (last) EXPECT_EQ(l.cur, l.max) << "pass " << l.pass << " ends at its max";
  }
  return passes;
}

}  // namespace

TEST(FsckProgress, FdLinesFollowE2fsckProtocol) {
  const fs::path src = scratch("progress-src");
  fs::remove_all(src);
  make_tree(src);
  const fs::path img = scratch("progress.img");
  f2fstest::make_sparse_file(img, 300ull << 20);
  auto m = run(std::string(F2FSCORE_MKFS_BIN) + " -q -f --populate " + shell_quote(src.string()) + " " +
               shell_quote(img.string()));
  ASSERT_EQ(m.exit_code, 0) << m.output;
  const fs::path prog = scratch("progress.txt");
  // Full check: passes 1 to 4 in order, nothing on stdout but the result.
  auto r = run(std::string(F2FSCORE_FSCK_BIN) + " -f -n -C 3 " + shell_quote(img.string()) + " 3>" +
               shell_quote(prog.string()));
  ASSERT_EQ(r.exit_code, 0) << r.output;
  auto lines = parse_progress(prog, img.string());
  EXPECT_EQ(check_progress(lines), (std::vector<int>{1, 2, 3, 4}));
  // Pass 2 counts the node blocks: at least one per file of the tree (400
  // files, 3 directories, a symlink, a 3 MiB file).
  for (const auto& l : lines)
    if (l.pass == 2) EXPECT_GE(l.max, 405u);
  EXPECT_EQ(std::count(r.output.begin(), r.output.end(), '\n'), 2) << "progress leaked to stdout:\n" << r.output;
  // Preen on a clean volume: the fast check reads NAT, SIT and nodes only.
  r = run(std::string(F2FSCORE_FSCK_BIN) + " -p -C 3 " + shell_quote(img.string()) + " 3>" + shell_quote(prog.string()));
  ASSERT_EQ(r.exit_code, 0) << r.output;
  EXPECT_EQ(check_progress(parse_progress(prog, img.string())), (std::vector<int>{1, 2}));
  // -C 0 without a terminal, and no -C: the same two lines of result.
  auto plain = run(std::string(F2FSCORE_FSCK_BIN) + " -f -n " + shell_quote(img.string()) + " </dev/null | cat");
  auto bar = run(std::string(F2FSCORE_FSCK_BIN) + " -f -n -C 0 " + shell_quote(img.string()) + " </dev/null | cat");
  EXPECT_EQ(plain.exit_code, 0);
  EXPECT_EQ(bar.output.find('\r'), std::string::npos) << "a bar drawn on a pipe";
  EXPECT_EQ(std::count(plain.output.begin(), plain.output.end(), '\n'), 2) << plain.output;
  EXPECT_EQ(std::count(bar.output.begin(), bar.output.end(), '\n'), 2) << bar.output;
  // A negative descriptor is a usage error.
  EXPECT_EQ(run(std::string(F2FSCORE_FSCK_BIN) + " -n -C -1 " + shell_quote(img.string())).exit_code, 16);
  fs::remove_all(src);
}
