// Android's rules for populate (android_rules.hpp): the canned fs_config
// parser, the security.capability value, SELinux file_contexts through
// libselinux (where the build has it), and populate() applying them to a
// memory volume. Expected values are written by hand from the formats:
// libcutils' canned fs_config lines, struct vfs_cap_data of
// include/uapi/linux/capability.h, file_contexts(5).
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <memory>
#include <string>

#include "f2fscore/android_rules.hpp"
#include "f2fscore/disk/xattr.hpp"
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

std::string error_of(const Result<FsConfig>& r) { return r ? std::string("(parsed)") : r.error().message; }

}  // namespace

TEST(FsConfigParse, LinesPathsAndNumbers) {
  auto c = FsConfig::parse(
      " 0 0 0755\n"
      "system/bin 0 2000 0751\n"
      "/system/bin/ping 0 3003 0750 capabilities=0x2000\n"
      "system/bin/run-as 0 2000 0750 capabilities=3221225664\n"  // decimal: bits 6, 7, 30, 31
      "system/xbin/su 0 2000 04750\r\n"
      "system/etc/hosts 1000 1000 0640 selabel=u:object_r:x:s0 capabilities=010\n"
      "\n"
      "system/bin 1 2 0700\n",  // a later line for the same path holds
      "fs_config");
  ASSERT_OK(c);
  EXPECT_EQ(c->size(), 6u);
  const FsConfigRule* root = c->find("/");
  ASSERT_NE(root, nullptr);
  EXPECT_EQ(root->mode, 0755);
  EXPECT_EQ(c->find(""), root);
  const FsConfigRule* bin = c->find("/system/bin");
  ASSERT_NE(bin, nullptr);
  EXPECT_EQ(bin->uid, 1u);
  EXPECT_EQ(bin->gid, 2u);
  EXPECT_EQ(bin->mode, 0700);
  const FsConfigRule* ping = c->find("system/bin/ping");
  ASSERT_NE(ping, nullptr);
  EXPECT_EQ(ping->gid, 3003u);
  EXPECT_EQ(ping->mode, 0750);
  EXPECT_EQ(ping->capabilities, 0x2000u);
  ASSERT_NE(c->find("system/bin/run-as"), nullptr);
  EXPECT_EQ(c->find("system/bin/run-as")->capabilities, 0xC00000C0u);
  ASSERT_NE(c->find("system/xbin/su"), nullptr);
  EXPECT_EQ(c->find("system/xbin/su")->mode, 04750);
  ASSERT_NE(c->find("system/etc/hosts"), nullptr);
  EXPECT_EQ(c->find("system/etc/hosts")->uid, 1000u);
  EXPECT_EQ(c->find("system/etc/hosts")->capabilities, 8u);  // octal 010
  EXPECT_EQ(c->find("system/etc/passwd"), nullptr);
  EXPECT_EQ(c->find("system"), nullptr);
}

TEST(FsConfigParse, ErrorsNameFileAndLine) {
  EXPECT_EQ(error_of(FsConfig::parse("a 0 0 0755\nb 0 0\n", "f")),
            "f:2: expected \"path uid gid mode [capabilities=N]\", not \"b 0 0\"");
  EXPECT_EQ(error_of(FsConfig::parse("a 0 0 0755\n\nc x 0 0644\n", "g")),
            "g:3: uid \"x\" is not a decimal number below 2^32");
  EXPECT_EQ(error_of(FsConfig::parse("a 0 4294967296 0644\n", "h")),
            "h:1: gid \"4294967296\" is not a decimal number below 2^32");
  EXPECT_EQ(error_of(FsConfig::parse("a 0 0 0789\n", "i")), "i:1: mode \"0789\" is not an octal mode of at most 07777");
  EXPECT_EQ(error_of(FsConfig::parse("a 0 0 0100644\n", "j")),
            "j:1: mode \"0100644\" is not an octal mode of at most 07777");
  EXPECT_EQ(error_of(FsConfig::parse("a 0 0 0644 capabilities=0xg\n", "k")),
            "k:1: \"capabilities=0xg\": capabilities is not a 64-bit number");
  EXPECT_EQ(error_of(FsConfig::parse("a 0 0 0644 capabilities=18446744073709551616\n", "l")),
            "l:1: \"capabilities=18446744073709551616\": capabilities is not a 64-bit number");
  EXPECT_EQ(error_of(FsConfig::parse(" \n", "m")), "m:1: expected \"path uid gid mode [capabilities=N]\", not \"/ \"");
}

TEST(FsConfigParse, LoadNamesTheMissingFile) {
  f2fstest::TempDir t;
  auto c = FsConfig::load((t / "nope").string());
  ASSERT_FALSE(c);
  EXPECT_EQ(c.error().code, Errc::not_found);
  EXPECT_NE(c.error().message.find("nope"), std::string::npos);
}

// struct vfs_cap_data: le32 magic_etc (VFS_CAP_REVISION_2 0x02000000 |
// VFS_CAP_FLAGS_EFFECTIVE 1), then {permitted, inheritable} for bits 0-31
// and 32-63.
TEST(VfsCapData, RevisionTwoLittleEndianEffective) {
  const std::array<std::uint8_t, 20> net_raw{0x01, 0x00, 0x00, 0x02, 0x00, 0x20, 0x00, 0x00, 0, 0,
                                             0,    0,    0,    0,    0,    0,    0,    0,    0, 0};
  EXPECT_EQ(vfs_cap_data(1ull << 13), net_raw);  // CAP_NET_RAW
  const std::array<std::uint8_t, 20> wake_alarm_and_chown{0x01, 0x00, 0x00, 0x02, 0x01, 0x00, 0x00, 0x00, 0, 0,
                                                          0,    0,    0x08, 0x00, 0x00, 0x00, 0,    0,    0, 0};
  EXPECT_EQ(vfs_cap_data((1ull << 35) | 1ull), wake_alarm_and_chown);  // CAP_WAKE_ALARM, CAP_CHOWN
}

TEST(FileContexts, LookupAndErrors) {
  if (!FileContexts::supported()) {
    auto fc = FileContexts::open({"x"});
    ASSERT_FALSE(fc);
    EXPECT_EQ(fc.error().code, Errc::unsupported);
    GTEST_SKIP() << "built without libselinux";
  }
  f2fstest::TempDir t;
  put(t / "fc",
      "/system(/.*)?          u:object_r:system_file:s0\n"
      "/system/bin/sh     --  u:object_r:shell_exec:s0\n"
      "/system/bin/dir    -d  u:object_r:dir_x:s0\n"
      "/system/none           <<none>>\n");
  put(t / "fc2", "/vendor(/.*)?  u:object_r:vendor_file:s0\n");
  auto fc = FileContexts::open_list((t / "fc").string() + "," + (t / "fc2").string());
  ASSERT_OK(fc);
  auto l = (*fc)->lookup("/system/bin/sh", 0100755);
  ASSERT_OK(l);
  EXPECT_EQ(*l, "u:object_r:shell_exec:s0");
  l = (*fc)->lookup("/system/bin/sh", 0040755);  // `--`: regular files only
  ASSERT_OK(l);
  EXPECT_EQ(*l, "u:object_r:system_file:s0");
  l = (*fc)->lookup("/system/bin/dir", 0040755);
  ASSERT_OK(l);
  EXPECT_EQ(*l, "u:object_r:dir_x:s0");
  l = (*fc)->lookup("/vendor/lib", 0040755);
  ASSERT_OK(l);
  EXPECT_EQ(*l, "u:object_r:vendor_file:s0");
  l = (*fc)->lookup("/data/x", 0100644);
  ASSERT_FALSE(l);
  EXPECT_EQ(l.error().code, Errc::not_found);
  l = (*fc)->lookup("/system/none", 0100644);
  ASSERT_FALSE(l);
  EXPECT_EQ(l.error().code, Errc::not_found);

  put(t / "bad", "/system(/.*)?  u:object_r:system_file:s0\n/system/bin\n");
  auto bad = FileContexts::open({(t / "bad").string()});
  ASSERT_FALSE(bad);
  EXPECT_EQ(bad.error().code, Errc::invalid_argument);
  EXPECT_NE(bad.error().message.find((t / "bad").string()), std::string::npos) << bad.error().message;
  EXPECT_NE(bad.error().message.find("line 2"), std::string::npos) << bad.error().message;
  auto missing = FileContexts::open({(t / "nope").string()});
  ASSERT_FALSE(missing);
  EXPECT_EQ(missing.error().code, Errc::not_found);
}

// populate() with a mount point and an fs_config: owners, modes and the
// capability xattr from the rules; the target directory keeps the source's
// attributes; a missing rule fails before anything is written.
TEST(PopulateAndroid, FsConfigRulesApplied) {
  f2fstest::TempDir t;
  const fs::path src = t / "src";
  fs::create_directories(src / "bin");
  put(src / "bin" / "ping", "ping");
  put(src / "bin" / "su", "su");
  put(src / "notes", "n");
  auto cfg = FsConfig::parse(
      "system/bin 0 2000 0751\n"
      "system/bin/ping 0 3003 0750 capabilities=0x2000\n"
      "system/bin/su 0 2000 06755\n"
      "system/notes 1000 1001 01640\n",
      "cfg");
  ASSERT_OK(cfg);
  auto dev = make_memory_device(64ull << 20);
  MkfsTarget mt{dev.get(), "mem"};
  MkfsOptions mo;
  mo.timestamp = 1700000000;
  ASSERT_TRUE(format_volume(std::span<const MkfsTarget>(&mt, 1), mo));

  PopulateOptions po;
  po.fixed_time = 1700000100;
  po.mount_point = "system/";  // normalized to /system
  po.fs_config = std::make_shared<const FsConfig>(std::move(*cfg));
  {
    auto w = Writer::mount(*dev, {1700000000});
    ASSERT_OK(w);
    auto rep = populate(**w, src.string(), po);
    ASSERT_OK(rep);
    for (const auto& p : rep->problems) ADD_FAILURE() << p.to_string();
    EXPECT_EQ(rep->xattrs, 1u);
    ASSERT_OK((*w)->unmount());
  }
  auto v = Volume::open(*dev);
  ASSERT_OK(v);
  auto bin = (*v)->resolve("/bin");
  ASSERT_OK(bin);
  EXPECT_EQ(bin->mode, 0040751);
  EXPECT_EQ(bin->gid, 2000u);
  auto ping = (*v)->resolve("/bin/ping");
  ASSERT_OK(ping);
  EXPECT_EQ(ping->mode, 0100750);
  EXPECT_EQ(ping->gid, 3003u);
  auto xs = (*v)->xattrs(*ping);
  ASSERT_OK(xs);
  ASSERT_EQ(xs->size(), 1u);
  EXPECT_EQ((*xs)[0].full_name(), "security.capability");
  EXPECT_EQ((*xs)[0].value, std::string("\x01\x00\x00\x02\x00\x20\x00\x00\0\0\0\0\0\0\0\0\0\0\0\0", 20));
  auto su = (*v)->resolve("/bin/su");
  ASSERT_OK(su);
  EXPECT_EQ(su->mode, 0106755);
  auto notes = (*v)->resolve("/notes");
  ASSERT_OK(notes);
  EXPECT_EQ(notes->mode, 0101640);
  EXPECT_EQ(notes->uid, 1000u);
  EXPECT_EQ(notes->gid, 1001u);
  auto xn = (*v)->xattrs(*notes);
  ASSERT_OK(xn);
  EXPECT_TRUE(xn->empty());
  v->reset();

  // A file without a rule: the whole call fails, naming it, before a write.
  put(src / "bin" / "extra", "e");
  auto c = check_populate_rules(src.string(), po);
  ASSERT_FALSE(c);
  EXPECT_EQ(c.error().code, Errc::not_found);
  EXPECT_EQ(c.error().message, "fs_config cfg: no rule for system/bin/extra; nothing written");
  auto w = Writer::mount(*dev, {1700000000});
  ASSERT_OK(w);
  auto rep = populate(**w, src.string(), po);
  ASSERT_FALSE(rep);
  EXPECT_EQ(rep.error().code, Errc::not_found);
  auto none = (*w)->lookup("/bin/extra");
  EXPECT_FALSE(none);
  ASSERT_OK((*w)->unmount());
}
