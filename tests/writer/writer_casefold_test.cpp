// The writer on casefold volumes (f2fscore-mkfs -O casefold -C utf8): the
// casefold flag (chattr +F) as f2fs_setflags_common() in fs/f2fs/file.c
// allows it, its inheritance (f2fs_new_inode()), names found, created,
// linked, renamed and removed by any case in a casefolded directory as
// fs/f2fs/dir.c and namei.c do, the strict encoding flag, and what our
// reader and both checkers see after a remount.
//
// Expected values are Linux's rules written out by hand: ASCII and the
// Unicode full case folding of the few non-ASCII letters used (U+00DF ß ->
// "ss", U+212A KELVIN SIGN -> "k", U+00C9 É -> "e" U+0301 after the
// canonical decomposition), hashes as the TEA hash (dentry_hash(), checked
// against Linux in checksum_test.cpp) of those hand-folded names, errno
// values as Linux returns them. writer_casefold_linux.sh checks the same
// against Linux itself.
#include <cerrno>
#include <cstdlib>
#include <fstream>
#include <gtest/gtest.h>

#include "f2fscore/casefold.hpp"
#include "f2fscore/checksum.hpp"
#include "f2fscore/mkfs.hpp"
#include "writer/writer_test_util.hpp"

namespace {

using namespace writertest;

constexpr std::uint32_t kCasefoldFl = 0x40000000;  // F2FS_CASEFOLD_FL
constexpr std::uint16_t kReg = 0x8000, kDir = 0x4000;

#define REQUIRE_CASEFOLD() \
  if (!casefold_supported()) GTEST_SKIP() << "built without casefolding (F2FSCORE_WITH_CASEFOLD=OFF)"

std::unique_ptr<BlockDevice> cf_volume(std::uint16_t encoding_flags = 0) {
  auto dev = make_memory_device(192ull << 20);
  MkfsTarget t{dev.get(), "casefold"};
  MkfsOptions o;
  o.features = kRichFeatures | feature::casefold;
  o.encoding = kEncodingUtf8_12_1;
  o.encoding_flags = encoding_flags;
  o.timestamp = 1700000000;
  o.uuid = std::array<std::uint8_t, 16>{1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16};
  auto r = format_volume(std::span<const MkfsTarget>(&t, 1), o);
  if (!r) {
    ADD_FAILURE() << "mkfs: " << r.error().to_string();
    return nullptr;
  }
  return dev;
}


// The entries of `path` as our reader sees them: name -> stored hash.
std::map<std::string, std::uint32_t> stored(BlockDevice& dev, const std::string& path) {
  std::map<std::string, std::uint32_t> out;
  auto v = Volume::open(dev);
  EXPECT_TRUE(v);
  if (!v) return out;
  auto d = (*v)->resolve(path);
  EXPECT_TRUE(d) << path;
  if (!d) return out;
  auto es = (*v)->read_dir(*d);
  EXPECT_TRUE(es);
  if (!es) return out;
  for (const auto& e : *es)
    if (e.name != "." && e.name != "..") out[e.name] = e.hash;
  return out;
}

const std::string kSharpS = "Stra\xc3\x9f" "e";     // "Straße": folds to "strasse"
const std::string kKelvin = "\xe2\x84\xaa" "elvin";  // KELVIN SIGN + "elvin": folds to "kelvin"
const std::string kEAcute = "Caf\xc3\x89";           // "CafÉ": folds to "cafe" + U+0301

TEST(WriterCasefold, FlagOnlyOnEmptyDirectoriesOfCasefoldVolumes) {
  REQUIRE_CASEFOLD();
  auto dev = cf_volume();
  ASSERT_TRUE(dev);
  auto w = mount_fixed_time(*dev);
  ASSERT_TRUE(w);
  auto d = w->mkdir("/cf");
  ASSERT_OK(d);
  EXPECT_EQ(*w->get_flags(*d) & kCasefoldFl, 0u);
  ASSERT_OK(w->set_flags(*d, kCasefoldFl, kCasefoldFl));
  EXPECT_EQ(*w->get_flags(*d) & kCasefoldFl, kCasefoldFl);
  // Setting it again changes nothing.
  EXPECT_OK(w->set_flags(*d, kCasefoldFl, kCasefoldFl));

  // A directory with an entry: ENOTEMPTY, both ways.
  auto full = w->mkdir("/full");
  ASSERT_OK(full);
  ASSERT_OK(w->create("/full/x"));
  auto r = w->set_flags(*full, kCasefoldFl, kCasefoldFl);
  EXPECT_EQ(err_no(r), ENOTEMPTY);
  EXPECT_EQ(*w->get_flags(*full) & kCasefoldFl, 0u);
  ASSERT_OK(w->create("/cf/y"));
  EXPECT_EQ(err_no(w->set_flags(*d, 0, kCasefoldFl)), ENOTEMPTY);
  EXPECT_EQ(*w->get_flags(*d) & kCasefoldFl, kCasefoldFl);
  ASSERT_OK(w->unlink("/cf/y"));
  // Empty again: the flag can be cleared and set back.
  EXPECT_OK(w->set_flags(*d, 0, kCasefoldFl));
  EXPECT_EQ(*w->get_flags(*d) & kCasefoldFl, 0u);
  EXPECT_OK(w->set_flags(*d, kCasefoldFl, kCasefoldFl));

  // Not a directory: EOPNOTSUPP (f2fs_mask_flags()).
  auto f = w->create("/file");
  ASSERT_OK(f);
  EXPECT_EQ(err_no(w->set_flags(*f, kCasefoldFl, kCasefoldFl)), EOPNOTSUPP);
  // The other flags of F2FS_SETTABLE_FS_FL change too (immutable here);
  // casefold stays refused on the file whatever else the word holds.
  EXPECT_OK(w->set_flags(*f, 0x10, 0x10));
  EXPECT_EQ(*w->get_flags(*f), 0x10u);
  EXPECT_EQ(err_no(w->set_flags(*f, kCasefoldFl | 0x10, ~0u)), EOPNOTSUPP);
  EXPECT_OK(w->set_flags(*f, 0, 0x10));
  EXPECT_EQ(err_no(w->set_flags(12345, kCasefoldFl, kCasefoldFl)), ENOENT);
  ASSERT_OK(w->unmount());
  check_clean(*dev, "casefold flags");

  // Without the casefold feature: EOPNOTSUPP.
  auto plain = our_mkfs(192ull << 20, kRichFeatures);
  ASSERT_TRUE(plain);
  auto w2 = mount_fixed_time(*plain);
  ASSERT_TRUE(w2);
  auto d2 = w2->mkdir("/d");
  ASSERT_OK(d2);
  EXPECT_EQ(err_no(w2->set_flags(*d2, kCasefoldFl, kCasefoldFl)), EOPNOTSUPP);
  EXPECT_EQ(*w2->get_flags(*d2) & kCasefoldFl, 0u);
  ASSERT_OK(w2->unmount());
}

TEST(WriterCasefold, InheritedByNewDirectoriesOnly) {
  REQUIRE_CASEFOLD();
  auto dev = cf_volume();
  ASSERT_TRUE(dev);
  auto w = mount_fixed_time(*dev);
  ASSERT_TRUE(w);
  auto d = w->mkdir("/cf");
  ASSERT_OK(d);
  ASSERT_OK(w->set_flags(*d, kCasefoldFl, kCasefoldFl));
  auto sub = w->mkdir("/cf/Sub");
  ASSERT_OK(sub);
  auto subsub = w->mkdir("/cf/sub/Deeper");
  ASSERT_OK(subsub);
  auto file = w->create("/cf/SUB/deeper/File");
  ASSERT_OK(file);
  auto fifo = w->mknod_at(*d, "Fifo", 0x1000 | 0644);
  ASSERT_OK(fifo);
  EXPECT_EQ(*w->get_flags(*sub) & kCasefoldFl, kCasefoldFl);
  EXPECT_EQ(*w->get_flags(*subsub) & kCasefoldFl, kCasefoldFl);
  EXPECT_EQ(*w->get_flags(*file) & kCasefoldFl, 0u);
  EXPECT_EQ(*w->get_flags(*fifo) & kCasefoldFl, 0u);
  auto plain = w->mkdir("/plain");
  ASSERT_OK(plain);
  EXPECT_EQ(*w->get_flags(*plain) & kCasefoldFl, 0u);
  ASSERT_OK(w->unmount());
  check_clean(*dev, "casefold inheritance");
  auto v = Volume::open(*dev);
  ASSERT_OK(v);
  auto in = (*v)->resolve("/cf/sUb/DEEPER/file");
  ASSERT_OK(in);
  EXPECT_EQ(in->ino, *file);
}

TEST(WriterCasefold, NamesByAnyCase) {
  REQUIRE_CASEFOLD();
  auto dev = cf_volume();
  ASSERT_TRUE(dev);
  auto w = mount_fixed_time(*dev);
  ASSERT_TRUE(w);
  auto d = w->mkdir("/cf");
  ASSERT_OK(d);
  ASSERT_OK(w->set_flags(*d, kCasefoldFl, kCasefoldFl));

  auto a = w->create("/cf/Mixed Case.TXT");
  ASSERT_OK(a);
  ASSERT_OK(w->write(*a, 0, bytes("mixed")));
  EXPECT_EQ(*w->lookup("/cf/mixed case.txt"), *a);
  EXPECT_EQ(w->lookup("/CF/MIXED CASE.txt").error().code, Errc::not_found);  // "/" is not casefolded
  EXPECT_EQ(*w->lookup_at(*d, "MIXED case.Txt"), *a);
  // A name matching an entry by case: EEXIST, for every way of adding one.
  EXPECT_EQ(w->create("/cf/MIXED CASE.TXT").error().code, Errc::exists);
  EXPECT_EQ(w->mkdir("/cf/mixed case.txt").error().code, Errc::exists);
  EXPECT_EQ(err_no(w->mknod_at(*d, "mixed CASE.txt", kReg | 0644)), EEXIST);
  EXPECT_EQ(err_no(w->mknod_at(*d, "mixed CASE.txt", kDir | 0755)), EEXIST);
  EXPECT_EQ(err_no(w->symlink_at(*d, "MIXED CASE.TXT", "t")), EEXIST);
  EXPECT_EQ(w->symlink("t", "/cf/MIXED CASE.TXT").error().code, Errc::exists);

  auto s = w->create("/cf/" + kSharpS);
  ASSERT_OK(s);
  EXPECT_EQ(*w->lookup("/cf/STRASSE"), *s);
  EXPECT_EQ(*w->lookup("/cf/strasse"), *s);
  EXPECT_EQ(err_no(w->mknod_at(*d, "STRASSE", kReg | 0644)), EEXIST);
  auto k = w->create("/cf/" + kKelvin);
  ASSERT_OK(k);
  EXPECT_EQ(*w->lookup("/cf/KELVIN"), *k);
  auto e = w->create("/cf/" + kEAcute);
  ASSERT_OK(e);
  EXPECT_EQ(*w->lookup("/cf/cafe\xcc\x81"), *e);  // e + COMBINING ACUTE ACCENT
  EXPECT_EQ(*w->lookup("/cf/CAF\xc3\xa9"), *e);    // é, precomposed
  EXPECT_EQ(w->lookup("/cf/cafe").error().code, Errc::not_found);

  // link by another case: EEXIST; a new name: kept as given.
  EXPECT_EQ(w->link("/cf/Mixed Case.TXT", "/cf/strASSE").error().code, Errc::exists);
  EXPECT_EQ(err_no(w->link_at(*a, *d, "Mixed case.txt")), EEXIST);
  ASSERT_OK(w->link_at(*a, *d, "Second Name"));
  EXPECT_EQ(*w->lookup("/cf/SECOND NAME"), *a);

  // The entries keep their names as given; the hashes are of the folded names.
  ASSERT_OK(w->sync());
  auto names = stored(*dev, "/cf");
  std::map<std::string, std::uint32_t> want = {
      {"Mixed Case.TXT", dentry_hash("mixed case.txt")}, {kSharpS, dentry_hash("strasse")},
      {kKelvin, dentry_hash("kelvin")},                  {kEAcute, dentry_hash("cafe\xcc\x81")},
      {"Second Name", dentry_hash("second name")}};
  EXPECT_EQ(names, want);

  // unlink and rmdir by another case.
  ASSERT_OK(w->unlink("/cf/SECOND name"));
  EXPECT_EQ(w->lookup("/cf/second name").error().code, Errc::not_found);
  EXPECT_EQ(w->stat(*a)->links, 1u);
  ASSERT_OK(w->mkdir("/cf/Sub Dir"));
  EXPECT_EQ(err_no(w->unlink("/cf/SUB DIR")), EISDIR);
  ASSERT_OK(w->rmdir("/cf/sub dir"));
  EXPECT_EQ(w->lookup("/cf/Sub Dir").error().code, Errc::not_found);
  ASSERT_OK(w->mknod_at(*d, "Gone", kDir | 0755));
  ASSERT_OK(w->rmdir_at(*d, "GONE"));
  ASSERT_OK(w->unlink_at(*d, "KELVIN"));
  EXPECT_EQ(w->lookup("/cf/" + kKelvin).error().code, Errc::not_found);
  ASSERT_OK(w->unmount());
  check_clean(*dev, "casefolded names");

  // Remounted: our reader and the writer find them by any case.
  auto v = Volume::open(*dev);
  ASSERT_OK(v);
  auto in = (*v)->resolve("/cf/MIXED CASE.TXT");
  ASSERT_OK(in);
  EXPECT_EQ(in->ino, *a);
  std::string back(5, '\0');
  ASSERT_OK((*v)->read(*in, 0, std::span<std::uint8_t>(reinterpret_cast<std::uint8_t*>(back.data()), back.size())));
  EXPECT_EQ(back, "mixed");
  ASSERT_OK((*v)->resolve("/cf/strasse"));
  EXPECT_FALSE((*v)->resolve("/cf/kelvin"));
  v->reset();
  auto w2 = mount_fixed_time(*dev);
  ASSERT_TRUE(w2);
  EXPECT_EQ(*w2->lookup("/cf/mixed CASE.txt"), *a);
  ASSERT_OK(w2->unlink("/cf/STRASSE"));
  ASSERT_OK(w2->unmount());
  check_clean(*dev, "casefolded names after a remount");
  EXPECT_EQ(stored(*dev, "/cf").size(), 2u);
}

TEST(WriterCasefold, RenameByAnyCase) {
  REQUIRE_CASEFOLD();
  auto dev = cf_volume();
  ASSERT_TRUE(dev);
  auto w = mount_fixed_time(*dev);
  ASSERT_TRUE(w);
  auto d = w->mkdir("/cf");
  ASSERT_OK(d);
  ASSERT_OK(w->set_flags(*d, kCasefoldFl, kCasefoldFl));
  auto plain = w->mkdir("/plain");
  ASSERT_OK(plain);
  auto foo = w->create("/cf/foo");
  ASSERT_OK(foo);
  auto bar = w->create("/cf/Bar");
  ASSERT_OK(bar);
  auto tgt = w->create("/cf/Target.txt");
  ASSERT_OK(tgt);

  // A new name only in case: the same entry, nothing changes (vfs_rename()
  // with source == target).
  ASSERT_OK(w->rename("/cf/foo", "/cf/FOO"));
  ASSERT_OK(w->rename_at(*d, "FOO", *d, "Foo", 0));
  // By another case, to a new name.
  ASSERT_OK(w->rename("/cf/BAR", "/cf/Renamed"));
  EXPECT_EQ(*w->lookup("/cf/renamed"), *bar);
  EXPECT_EQ(w->lookup("/cf/bar").error().code, Errc::not_found);
  // Over an existing name given in another case: the target's entry keeps
  // its name and names the source (f2fs_set_link()).
  ASSERT_OK(w->rename("/cf/RENAMED", "/cf/target.TXT"));
  EXPECT_EQ(*w->lookup("/cf/TARGET.txt"), *bar);
  EXPECT_EQ(w->stat(*tgt).error().code, Errc::not_found);
  // RENAME_NOREPLACE onto another case of an entry: EEXIST.
  EXPECT_EQ(err_no(w->rename_at(*d, "FOO", *d, "TARGET.TXT", rename_flag::noreplace)), EEXIST);
  // RENAME_EXCHANGE by other cases: each entry keeps its name.
  ASSERT_OK(w->rename_at(*d, "FOO", *d, "target.txt", rename_flag::exchange));
  EXPECT_EQ(*w->lookup("/cf/foo"), *bar);
  EXPECT_EQ(*w->lookup("/cf/Target.txt"), *foo);
  // Across directories, both ways.
  ASSERT_OK(w->rename("/cf/TARGET.TXT", "/plain/Moved"));
  EXPECT_EQ(*w->lookup("/plain/Moved"), *foo);
  EXPECT_EQ(w->lookup("/plain/moved").error().code, Errc::not_found);
  ASSERT_OK(w->rename("/plain/Moved", "/cf/Back"));
  EXPECT_EQ(*w->lookup("/cf/BACK"), *foo);
  // A directory into the casefolded one keeps its own (clear) flag.
  auto sub = w->mkdir("/plain/Sub");
  ASSERT_OK(sub);
  ASSERT_OK(w->rename("/plain/Sub", "/cf/Sub"));
  EXPECT_EQ(*w->get_flags(*sub) & kCasefoldFl, 0u);
  ASSERT_OK(w->create("/cf/SUB/Exact"));
  EXPECT_EQ(w->lookup("/cf/sub/exact").error().code, Errc::not_found);
  ASSERT_OK(w->unmount());
  check_clean(*dev, "casefolded renames");
  std::map<std::string, std::uint32_t> want = {
      {"Back", dentry_hash("back")}, {"Sub", dentry_hash("sub")}, {"foo", dentry_hash("foo")}};
  EXPECT_EQ(stored(*dev, "/cf"), want);
  auto v = Volume::open(*dev);
  ASSERT_OK(v);
  auto t = (*v)->resolve("/cf/FOO");
  ASSERT_OK(t);
  EXPECT_EQ(t->ino, *bar);
  EXPECT_EQ((*v)->resolve("/cf/back")->ino, *foo);
}

// Many entries: the inline area fills, block 0 and the hash levels follow;
// each name is found and removed by another case.
TEST(WriterCasefold, ManyEntries) {
  REQUIRE_CASEFOLD();
  auto dev = cf_volume();
  ASSERT_TRUE(dev);
  auto w = mount_fixed_time(*dev);
  ASSERT_TRUE(w);
  auto d = w->mkdir("/cf");
  ASSERT_OK(d);
  ASSERT_OK(w->set_flags(*d, kCasefoldFl, kCasefoldFl));
  constexpr int kN = 800;
  std::vector<nid_t> inos;
  for (int i = 0; i < kN; ++i) {
    auto f = w->create("/cf/Entry-" + std::to_string(i) + (i % 5 == 0 ? "-" + kSharpS : "-X"));
    ASSERT_OK(f);
    inos.push_back(*f);
  }
  for (int i = 0; i < kN; ++i) {
    auto f = w->lookup("/cf/ENTRY-" + std::to_string(i) + (i % 5 == 0 ? "-STRASSE" : "-x"));
    ASSERT_OK(f);
    EXPECT_EQ(*f, inos[static_cast<std::size_t>(i)]);
    EXPECT_EQ(err_no(w->mknod_at(*d, "entry-" + std::to_string(i) + (i % 5 == 0 ? "-strasse" : "-x"), kReg | 0644)), EEXIST);
  }
  for (int i = 0; i < kN; i += 2) ASSERT_OK(w->unlink("/cf/entry-" + std::to_string(i) + (i % 5 == 0 ? "-STRASSE" : "-X")));
  ASSERT_OK(w->unmount());
  check_clean(*dev, "many casefolded entries");
  auto names = stored(*dev, "/cf");
  EXPECT_EQ(names.size(), static_cast<std::size_t>(kN / 2));
  for (int i = 1; i < kN; i += 2) {
    const std::string n = "Entry-" + std::to_string(i) + (i % 5 == 0 ? "-" + kSharpS : "-X");
    const std::string folded = "entry-" + std::to_string(i) + (i % 5 == 0 ? "-strasse" : "-x");
    ASSERT_EQ(names.count(n), 1u) << n;
    EXPECT_EQ(names[n], dentry_hash(folded)) << n;
  }
}

// Names with no folded form (not UTF-8): without the strict flag stored and
// hashed as their bytes, found only by those bytes (f2fs_hash_filename()'s
// fallback, f2fs_match_ci_name()); with it refused with EINVAL
// (f2fs_init_casefolded_name()), in casefolded directories only.
TEST(WriterCasefold, InvalidUtf8WithoutStrictMode) {
  REQUIRE_CASEFOLD();
  auto dev = cf_volume();
  ASSERT_TRUE(dev);
  auto w = mount_fixed_time(*dev);
  ASSERT_TRUE(w);
  auto d = w->mkdir("/cf");
  ASSERT_OK(d);
  ASSERT_OK(w->set_flags(*d, kCasefoldFl, kCasefoldFl));
  const std::string bad = "Bad\xff" "Name";
  auto f = w->create("/cf/" + bad);
  ASSERT_OK(f);
  EXPECT_EQ(*w->lookup("/cf/" + bad), *f);
  EXPECT_EQ(w->lookup("/cf/bad\xff" "name").error().code, Errc::not_found);
  auto g = w->create("/cf/bad\xff" "name");  // another name: bytes differ
  ASSERT_OK(g);
  ASSERT_OK(w->unmount());
  check_clean(*dev, "invalid UTF-8 in a casefolded directory");
  std::map<std::string, std::uint32_t> want = {{bad, dentry_hash(bad)}, {"bad\xff" "name", dentry_hash("bad\xff" "name")}};
  EXPECT_EQ(stored(*dev, "/cf"), want);
}

TEST(WriterCasefold, StrictModeRefusesInvalidNames) {
  REQUIRE_CASEFOLD();
  auto dev = cf_volume(kEncStrictModeFl);
  ASSERT_TRUE(dev);
  auto w = mount_fixed_time(*dev);
  ASSERT_TRUE(w);
  auto d = w->mkdir("/cf");
  ASSERT_OK(d);
  ASSERT_OK(w->set_flags(*d, kCasefoldFl, kCasefoldFl));
  auto plain = w->mkdir("/plain");
  ASSERT_OK(plain);
  ASSERT_OK(w->create("/cf/Valid"));
  const std::string bad = "Bad\xff" "Name";
  const std::string overlong = "\xc0\xaf";  // an overlong '/': not UTF-8
  for (const std::string& n : {bad, overlong, std::string("a\xe2\x82")}) {
    auto c = w->create("/cf/" + n);
    ASSERT_FALSE(c) << n;
    EXPECT_EQ(c.error().code, Errc::invalid_argument);
    EXPECT_EQ(err_no(w->mknod_at(*d, n, kReg | 0644)), EINVAL);
    EXPECT_EQ(err_no(w->mknod_at(*d, n, kDir | 0755)), EINVAL);
    EXPECT_EQ(err_no(w->symlink_at(*d, n, "t")), EINVAL);
    EXPECT_EQ(err_no(w->lookup_at(*d, n)), EINVAL);
    EXPECT_EQ(err_no(w->rename_at(*d, "Valid", *d, n, 0)), EINVAL);
    EXPECT_EQ(err_no(w->link(std::string("/cf/Valid"), "/cf/" + n)), EINVAL);
    // In a directory without the flag the same name is fine.
    ASSERT_OK(w->mknod_at(*plain, n, kReg | 0644));
  }
  // A name folding to 255 bytes or more has no folded form either: 50 x
  // U+0390 (100 bytes) fold to 50 x U+03B9 U+0308 U+0301 (300 bytes).
  std::string iota;
  for (int i = 0; i < 50; ++i) iota += "\xce\x90";
  EXPECT_EQ(err_no(w->mknod_at(*d, iota, kReg | 0644)), EINVAL);
  ASSERT_OK(w->mknod_at(*d, std::string(254, 'A'), kReg | 0644));  // folds to 254 bytes: fine
  EXPECT_EQ(err_no(w->mknod_at(*d, std::string(254, 'a'), kReg | 0644)), EEXIST);
  ASSERT_OK(w->unmount());
  check_clean(*dev, "strict mode");
  EXPECT_EQ(stored(*dev, "/cf").size(), 2u);
  EXPECT_EQ(stored(*dev, "/plain").size(), 3u);
}

// Without strict mode a name folding to 255 bytes or more is stored and
// hashed by its bytes (f2fs_hash_filename() without cf_name). Linux 6.1
// stores the same hashes for these names (measured with the oracle: 0xd0198ba8
// for 255 x 'A', 0xc724bf33 for 50 x U+0390); fsck.f2fs 1.15 hashes their
// folded form instead and reports "Mismatch hash_code" on Linux's image as
// on ours, so only our checker runs here.
TEST(WriterCasefold, LongFoldsUseTheRawName) {
  REQUIRE_CASEFOLD();
  auto dev = cf_volume();
  ASSERT_TRUE(dev);
  auto w = mount_fixed_time(*dev);
  ASSERT_TRUE(w);
  auto d = w->mkdir("/cf");
  ASSERT_OK(d);
  ASSERT_OK(w->set_flags(*d, kCasefoldFl, kCasefoldFl));
  ASSERT_OK(w->mknod_at(*d, std::string(255, 'A'), kReg | 0644));
  std::string iota;
  for (int i = 0; i < 50; ++i) iota += "\xce\x90";
  ASSERT_OK(w->mknod_at(*d, iota, kReg | 0644));
  EXPECT_EQ(err_no(w->mknod_at(*d, iota, kReg | 0644)), EEXIST);
  ASSERT_OK(w->mknod_at(*d, std::string(254, 'B'), kReg | 0644));
  EXPECT_EQ(err_no(w->mknod_at(*d, std::string(254, 'b'), kReg | 0644)), EEXIST);
  ASSERT_OK(w->unmount());
  our_fsck_clean(*dev, "long names");
  std::map<std::string, std::uint32_t> want = {{std::string(255, 'A'), dentry_hash(std::string(255, 'A'))},
                                               {iota, dentry_hash(iota)},
                                               {std::string(254, 'B'), dentry_hash(std::string(254, 'b'))}};
  EXPECT_EQ(stored(*dev, "/cf"), want);
  EXPECT_EQ(want[std::string(255, 'A')], 0xd0198ba8u);
  EXPECT_EQ(want[iota], 0xc724bf33u);
}

TEST(WriterCasefold, UnknownEncodingRefused) {
  auto dev = cf_volume();
  ASSERT_TRUE(dev);
  auto v = Volume::open(*dev);
  ASSERT_OK(v);
  disk::SuperBlock sb = (*v)->superblock();
  if (casefold_supported()) EXPECT_OK(Writer::check_features(sb));
  else EXPECT_EQ(Writer::check_features(sb).error().code, Errc::unsupported);
  sb.s_encoding.set(2);
  auto s = Writer::check_features(sb);
  ASSERT_FALSE(s);
  EXPECT_EQ(s.error().code, Errc::unsupported);
  EXPECT_NE(s.error().message.find("encoding 2"), std::string::npos) << s.error().message;
}

// ---- writer_casefold_linux.sh: Linux reads what we wrote in casefolded
// directories and changes them; we read Linux's changes and keep writing ----

std::string read_text(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  return std::string((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
}

std::string pattern(std::size_t n, int seed) {
  std::string s(n, '\0');
  for (std::size_t i = 0; i < n; ++i) s[i] = static_cast<char>('a' + (i * 7 + static_cast<std::size_t>(seed)) % 26);
  return s;
}

// Lookups the guest checks: "OTHER-CASE PATH<TAB>inode<TAB>casefold bit".
std::string lookups(Volume& v, const std::vector<std::pair<std::string, std::string>>& alt) {
  std::string out;
  for (const auto& [path, other] : alt) {
    auto in = v.resolve(path);
    EXPECT_TRUE(in) << path;
    if (!in) continue;
    out += other + "\t" + std::to_string(in->ino) + "\t" + ((in->flags & kCasefoldFl) ? "1" : "0") + "\n";
  }
  return out;
}

// Our writer on a casefold volume: /cf (+F) with names in mixed case,
// ß, KELVIN SIGN, É, an invalid UTF-8 name, 300 entries (dentry blocks), a
// subdirectory (inherits +F) with a 100 KiB file; /plain without the flag.
// Writes WRITER_IMAGE, its manifest and the lookups Linux must answer.
TEST(WriterCasefoldOracle, DISABLED_WriteImage) {
  const char* out = std::getenv("WRITER_IMAGE");
  ASSERT_NE(out, nullptr) << "set WRITER_IMAGE";
  REQUIRE_CASEFOLD();
  auto dev = cf_volume();
  ASSERT_TRUE(dev);
  {
    MountOptions mo;
    mo.fixed_time = 1750000000;
    auto w = Writer::mount(*dev, mo);
    ASSERT_OK(w);
    Writer& wr = **w;
    auto cf = wr.mkdir("/cf");
    ASSERT_OK(cf);
    ASSERT_OK(wr.set_flags(*cf, kCasefoldFl, kCasefoldFl));
    ASSERT_OK(wr.mkdir("/plain"));
    auto put = [&](const std::string& p, const std::string& data) {
      auto f = wr.create(p);
      ASSERT_OK(f) << p;
      if (!data.empty()) ASSERT_OK(wr.write(*f, 0, bytes(data))) << p;
    };
    put("/cf/Mixed Case.TXT", "mixed case\n");
    put("/cf/" + kSharpS + ".txt", pattern(20000, 1));
    put("/cf/" + kKelvin, pattern(10, 2));
    put("/cf/" + kEAcute, pattern(5000, 3));
    put("/cf/Bad\xff" "Name", pattern(7, 4));
    ASSERT_OK(wr.mkdir("/cf/Sub"));
    put("/cf/SUB/Inner.bin", pattern(100 << 10, 5));
    for (int i = 0; i < 300; ++i) put("/cf/Entry-" + std::to_string(i) + "-X", i % 10 == 0 ? pattern(64, i) : "");
    put("/plain/Mixed", "plain\n");
    ASSERT_OK(wr.unmount());
  }
  check_clean(*dev, "casefold oracle image");
  ASSERT_TRUE(save(*dev, out));
  auto v = Volume::open(*dev);
  ASSERT_OK(v);
  std::ofstream(std::string(out) + ".manifest", std::ios::binary) << manifest(**v);
  std::ofstream(std::string(out) + ".lookups", std::ios::binary)
      << lookups(**v, {{"/cf/Mixed Case.TXT", "/cf/mIXED cASE.txt"},
                       {"/cf/" + kSharpS + ".txt", "/cf/STRASSE.TXT"},
                       {"/cf/" + kKelvin, "/cf/kelvin"},
                       {"/cf/" + kEAcute, "/cf/CAFE\xcc\x81"},
                       {"/cf/Bad\xff" "Name", "/cf/Bad\xff" "Name"},
                       {"/cf/Sub", "/cf/sub"},
                       {"/cf/Sub/Inner.bin", "/cf/SUB/INNER.BIN"},
                       {"/cf/Entry-0-X", "/cf/entry-0-x"},
                       {"/cf/Entry-299-X", "/cf/ENTRY-299-x"},
                       {"/cf", "/cf"},
                       {"/plain/Mixed", "/plain/Mixed"}});
}

// After Linux changed the image (writer_casefold_linux.sh's guest): our
// reader's manifest equals Linux's; Linux's new entries are found by other
// cases, carry the hashes of their folded names, and its new directory the
// casefold flag; then our writer changes them and writes WRITER_IMAGE, its
// manifest and lookups for Linux again.
TEST(WriterCasefoldOracle, DISABLED_AfterLinux) {
  const char* img = std::getenv("WRITER_IMAGE");
  const char* theirs = std::getenv("WRITER_LINUX_MANIFEST");
  ASSERT_TRUE(img && theirs) << "set WRITER_IMAGE and WRITER_LINUX_MANIFEST";
  REQUIRE_CASEFOLD();
  auto dev = f2fstest::load_image(img);
  ASSERT_TRUE(dev);
  {
    auto v = Volume::open(*dev);
    ASSERT_OK(v);
    EXPECT_EQ(manifest(**v), read_text(theirs)) << "our reader differs from Linux";
    auto ln = (*v)->resolve("/cf/LINUX-NEW.TXT");
    ASSERT_OK(ln);
    EXPECT_EQ(writertest::contents::content_of(**v, *ln), "linux wrote this\n");
    auto rn = (*v)->resolve("/cf/renamed-by-LINUX.txt");
    ASSERT_OK(rn);
    EXPECT_EQ(writertest::contents::content_of(**v, *rn), pattern(20000, 1));
    EXPECT_FALSE((*v)->resolve("/cf/strasse.txt"));
    EXPECT_FALSE((*v)->resolve("/cf/" + kEAcute));
    auto ld = (*v)->resolve("/cf/linuxdir");
    ASSERT_OK(ld);
    EXPECT_TRUE(ld->flags & kCasefoldFl) << "Linux's new directory in /cf";
    EXPECT_FALSE(ln->flags & kCasefoldFl) << "Linux's new file in /cf";
    auto li = (*v)->resolve("/cf/LinuxDir/INNER");
    ASSERT_OK(li);
  }
  // The hashes Linux stored: those of the hand-folded names.
  auto names = stored(*dev, "/cf");
  EXPECT_EQ(names["Linux-New.txt"], dentry_hash("linux-new.txt"));
  EXPECT_EQ(names["Renamed-By-Linux.txt"], dentry_hash("renamed-by-linux.txt"));
  EXPECT_EQ(names["LinuxDir"], dentry_hash("linuxdir"));
  EXPECT_EQ(names["ENTRY-5-MOVED"], dentry_hash("entry-5-moved"));
  EXPECT_EQ(names["Linux-" + kSharpS + "-42"], dentry_hash("linux-strasse-42"));
  for (int i = 0; i < 100; ++i) ASSERT_EQ(names.count("Linux-" + std::to_string(i)), 1u) << i;
  our_fsck_clean(*dev, "Linux's image");
  {
    MountOptions mo;
    mo.fixed_time = 1800000000;
    auto w = Writer::mount(*dev, mo);
    ASSERT_OK(w);
    Writer& wr = **w;
    auto cf = wr.lookup("/cf");
    ASSERT_OK(cf);
    auto ours = wr.create("/cf/LINUXDIR/Ours");
    ASSERT_OK(ours);
    ASSERT_OK(wr.write(*ours, 0, bytes(pattern(50000, 6))));
    ASSERT_OK(wr.rename("/cf/LINUX-7", "/cf/Ours-7"));
    ASSERT_OK(wr.unlink("/cf/linux-8"));
    EXPECT_EQ(wr.create("/cf/LINUX-9").error().code, Errc::exists);
    EXPECT_EQ(err_no(wr.mknod_at(*cf, "linux-STRASSE-42", kReg | 0644)), EEXIST);
    ASSERT_OK(wr.rename_at(*cf, "LINUX-NEW.TXT", *cf, "linux-10", rename_flag::exchange));
    auto sub = wr.mkdir("/cf/linuxdir/OurSub");
    ASSERT_OK(sub);
    EXPECT_EQ(*wr.get_flags(*sub) & kCasefoldFl, kCasefoldFl);
    ASSERT_OK(wr.create("/cf/LinuxDir/oursub/Deep"));
    for (int i = 1; i < 200; i += 2)
      if (i != 5) ASSERT_OK(wr.unlink("/cf/ENTRY-" + std::to_string(i) + "-x"));  // Linux renamed entry-5
    ASSERT_OK(wr.unmount());
  }
  check_clean(*dev, "our writer after Linux");
  ASSERT_TRUE(save(*dev, img));
  auto v = Volume::open(*dev);
  ASSERT_OK(v);
  std::ofstream(std::string(img) + ".final.manifest", std::ios::binary) << manifest(**v);
  std::ofstream(std::string(img) + ".final.lookups", std::ios::binary)
      << lookups(**v, {{"/cf/LinuxDir/Ours", "/cf/linuxdir/OURS"},
                       {"/cf/Ours-7", "/cf/OURS-7"},
                       {"/cf/Linux-10", "/cf/LINUX-10"},
                       {"/cf/Linux-New.txt", "/cf/linux-NEW.txt"},
                       {"/cf/LinuxDir/OurSub", "/cf/LINUXDIR/oursub"},
                       {"/cf/LinuxDir/OurSub/Deep", "/cf/linuxdir/OURSUB/deep"},
                       {"/cf/Mixed Case.TXT", "/cf/MIXED CASE.TXT"}});
}

// A strict-mode volume (s_encoding_flags 0x1): /cf (+F) and /plain with a
// few names; our writer refuses an invalid name in /cf (EINVAL), takes it
// in /plain. Writes WRITER_IMAGE for the guest, which checks that Linux
// refuses the same name in /cf with EINVAL and finds ours by other cases.
TEST(WriterCasefoldOracle, DISABLED_WriteStrictImage) {
  const char* out = std::getenv("WRITER_IMAGE");
  ASSERT_NE(out, nullptr) << "set WRITER_IMAGE";
  REQUIRE_CASEFOLD();
  auto dev = cf_volume(kEncStrictModeFl);
  ASSERT_TRUE(dev);
  {
    auto w = mount_fixed_time(*dev);
    ASSERT_TRUE(w);
    auto cf = w->mkdir("/cf");
    ASSERT_OK(cf);
    ASSERT_OK(w->set_flags(*cf, kCasefoldFl, kCasefoldFl));
    auto plain = w->mkdir("/plain");
    ASSERT_OK(plain);
    auto f = w->create("/cf/Valid-Name");
    ASSERT_OK(f);
    ASSERT_OK(w->write(*f, 0, bytes("strict\n")));
    ASSERT_OK(w->create("/cf/" + kSharpS));
    EXPECT_EQ(err_no(w->mknod_at(*cf, "ours\xff", kReg | 0644)), EINVAL);
    ASSERT_OK(w->mknod_at(*plain, "ours\xff", kReg | 0644));
    ASSERT_OK(w->unmount());
  }
  check_clean(*dev, "strict image");
  ASSERT_TRUE(save(*dev, out));
}

}  // namespace
