// populate() (f2fscore_host) from a small host tree into a memory volume,
// read back with the reader and checked by our checker: through the POSIX
// leaf, and on Windows (under wine in CI) through the Win32 one, which also
// reads back extraction's mapping of names and symlinks.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <string>

#include "f2fscore/fsck.hpp"
#include "f2fscore/mkfs.hpp"
#include "f2fscore/populate.hpp"
#include "f2fscore/volume.hpp"
#include "f2fscore/writer.hpp"
#include "support/test_support.hpp"

using namespace f2fscore;
namespace fs = std::filesystem;

namespace {

void put(const fs::path& p, const std::string& data) {
  std::ofstream(p, std::ios::binary | std::ios::trunc).write(data.data(), static_cast<std::streamsize>(data.size()));
}

std::unique_ptr<BlockDevice> formatted() {
  auto dev = make_memory_device(64ull << 20);
  MkfsTarget t{dev.get(), "mem"};
  MkfsOptions mo;
  mo.timestamp = 1700000000;
  EXPECT_TRUE(format_volume(std::span<const MkfsTarget>(&t, 1), mo));
  return dev;
}

// Populates `src` into a fresh volume (fixed times); the report.
Result<PopulateReport> populate_into(BlockDevice& dev, const fs::path& src) {
  auto w = Writer::mount(dev, {1700000000});
  if (!w) return make_error(w.error());
  PopulateOptions po;
  po.fixed_time = 1700000100;
  auto rep = populate(**w, src.string(), po);
  if (auto u = (*w)->unmount(); !u) return make_error(u.error());
  return rep;
}

std::string contents(Volume& v, const std::string& path) {
  auto in = v.resolve(path);
  if (!in) return "(" + in.error().to_string() + ")";
  std::string data(in->size, '\0');
  auto n = v.read(*in, 0, std::span<std::uint8_t>(reinterpret_cast<std::uint8_t*>(data.data()), data.size()));
  if (!n) return "(" + n.error().to_string() + ")";
  return data;
}

void expect_clean(BlockDevice& dev) {
  fsck::Options fo;
  fo.mode = fsck::Mode::check_only;
  fo.force = true;
  auto rep = fsck::check(dev, fo);
  ASSERT_TRUE(rep) << rep.error().to_string();
  for (const auto& p : rep->problems) ADD_FAILURE() << p.to_string();
}

}  // namespace

TEST(PopulateHost, FilesDirectoriesAndHardLinks) {
  f2fstest::TempDir t;
  const fs::path src = t / "src";
  fs::create_directories(src / "d" / "e");
  std::string big(70000, '\0');
  for (std::size_t i = 0; i < big.size(); ++i) big[i] = static_cast<char>('a' + i % 23);
  put(src / "big", big);
  put(src / "d" / "small", "hello");
  std::error_code ec;
  fs::create_hard_link(src / "big", src / "d" / "again", ec);
  ASSERT_FALSE(ec) << ec.message();
  auto dev = formatted();
  auto rep = populate_into(*dev, src);
  ASSERT_OK(rep);
  for (const auto& p : rep->problems) ADD_FAILURE() << p.to_string();
  EXPECT_EQ(rep->files, 2u);
  EXPECT_EQ(rep->hard_links, 1u);
  EXPECT_EQ(rep->directories, 2u);
  EXPECT_EQ(rep->bytes_written, 70000u + 5u);
  auto v = Volume::open(*dev);
  ASSERT_OK(v);
  EXPECT_EQ(contents(**v, "/big"), big);
  EXPECT_EQ(contents(**v, "/d/small"), "hello");
  auto a = (*v)->resolve("/big"), b = (*v)->resolve("/d/again");
  ASSERT_TRUE(a && b);
  EXPECT_EQ(a->ino, b->ino);
  EXPECT_EQ(a->links, 2u);
  auto e = (*v)->resolve("/d/e");
  ASSERT_TRUE(e);
  EXPECT_TRUE(e->is_dir());
  EXPECT_EQ(e->raw.i.i_mtime.get(), 1700000100u);
  v->reset();
  expect_clean(*dev);
}

// Names with %XX and a .f2fscore-links file: on Windows the mapping of
// extraction read back (docs/design.md, "Populate on Windows"): %XX is the
// byte XX, the links file's lines are symlinks and the file is not copied;
// elsewhere names and files are copied as they are.
TEST(PopulateHost, ExtractionMappingReadBackOnWindowsOnly) {
  f2fstest::TempDir t;
  const fs::path src = t / "src";
  fs::create_directories(src / "d%3C%3E");
  put(src / "p%41", "x");
  put(src / "%2Ef2fscore-links", "11");  // an image file named .f2fscore-links
  put(src / "d%3C%3E" / "x%7Cy", "10");
  put(src / ".f2fscore-links", "d%3C%3E/ln\ta%25b\nCON%2Etxt\tp%41\n");
  auto dev = formatted();
  auto rep = populate_into(*dev, src);
  ASSERT_OK(rep);
  for (const auto& p : rep->problems) ADD_FAILURE() << p.to_string();
  auto v = Volume::open(*dev);
  ASSERT_OK(v);
#if defined(_WIN32)
  EXPECT_EQ(rep->files, 3u);
  EXPECT_EQ(rep->symlinks, 2u);
  EXPECT_EQ(contents(**v, "/pA"), "x");
  EXPECT_EQ(contents(**v, "/.f2fscore-links"), "11");
  EXPECT_EQ(contents(**v, "/d<>/x|y"), "10");
  for (const auto& [path, target] : {std::pair<std::string, std::string>{"/d<>/ln", "a%b"}, {"/CON.txt", "pA"}}) {
    auto l = (*v)->resolve(path);
    ASSERT_TRUE(l) << path << ": " << l.error().to_string();
    ASSERT_TRUE(l->is_symlink()) << path;
    auto got = (*v)->read_link(*l);
    ASSERT_TRUE(got);
    EXPECT_EQ(*got, target) << path;
  }
  auto f = (*v)->resolve("/pA");
  ASSERT_TRUE(f);
  EXPECT_EQ(f->mode & 07777, 0644);
  auto d = (*v)->resolve("/d<>");
  ASSERT_TRUE(d);
  EXPECT_EQ(d->mode & 07777, 0755);
#else
  EXPECT_EQ(rep->files, 4u);
  EXPECT_EQ(rep->symlinks, 0u);
  EXPECT_EQ(contents(**v, "/p%41"), "x");
  EXPECT_EQ(contents(**v, "/%2Ef2fscore-links"), "11");
  EXPECT_EQ(contents(**v, "/d%3C%3E/x%7Cy"), "10");
  EXPECT_EQ(contents(**v, "/.f2fscore-links"), "d%3C%3E/ln\ta%25b\nCON%2Etxt\tp%41\n");
#endif
  v->reset();
  expect_clean(*dev);
}
