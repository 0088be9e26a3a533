// f2fscore-label and f2fscore-tune as a user meets them: get and set, both
// superblock copies (volume_name UTF-16LE, decoded here by hand),
// sb_checksum, refusals with nothing written, exit codes; read back by
// f2fs-tools' f2fslabel and checked by fsck.f2fs -f.
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include "f2fscore/checksum.hpp"
#include "support/test_support.hpp"

namespace fs = std::filesystem;
using f2fstest::run;
using f2fstest::shell_quote;

namespace {

const std::string kLabel = F2FSCORE_LABEL_BIN;
const std::string kTune = F2FSCORE_TUNE_BIN;
const std::string kMkfs = F2FSCORE_MKFS_BIN;
const std::string kFsck = F2FSCORE_FSCK_BIN;

std::string q(const fs::path& p) { return shell_quote(p.string()); }
std::string digest(const fs::path& p) { return run("sha256sum " + q(p)).output.substr(0, 64); }

fs::path make_volume(const f2fstest::TempDir& t, const std::string& mkfs_args = "") {
  const auto img = t / "vol.img";
  f2fstest::make_sparse_file(img, 64ull << 20);
  auto r = run(kMkfs + " -q " + mkfs_args + " " + q(img));
  EXPECT_EQ(r.exit_code, 0) << r.output;
  return img;
}

// The UTF-16LE units of volume_name (superblock offset 124, 512 units) in
// superblock copy `copy`, up to the first NUL.
std::u16string stored_name(const fs::path& img, int copy) {
  const auto b = f2fstest::read_block(img, static_cast<std::uint64_t>(copy));
  std::u16string s;
  for (std::size_t i = 0; i < 512; ++i) {
    const auto u = static_cast<char16_t>(b[1024 + 124 + 2 * i] | (b[1024 + 124 + 2 * i + 1] << 8));
    if (u == 0) break;
    s.push_back(u);
  }
  return s;
}

// The first line of output that is not empty, without its newline.
std::string trimmed(const std::string& s) {
  const auto e = s.find('\n');
  return e == std::string::npos ? s : s.substr(0, e);
}

std::string repeat(const std::string& s, int n) {
  std::string o;
  for (int i = 0; i < n; ++i) o += s;
  return o;
}

}  // namespace

TEST(LabelTool, GetShowsTheMkfsLabel) {
  f2fstest::TempDir t;
  const auto img = make_volume(t, "-l first");
  auto r = run(kLabel + " " + q(img));
  EXPECT_EQ(r.exit_code, 0) << r.output;
  EXPECT_EQ(r.output, "first\n");
}

TEST(LabelTool, SetGetRoundTripInBothCopies) {
  f2fstest::TempDir t;
  const auto img = make_volume(t, "-l first");
  // "Données ✓ 😀": Latin-1, BMP and a non-BMP character (a surrogate pair).
  const std::string label = "Donn\xC3\xA9" "es \xE2\x9C\x93 \xF0\x9F\x98\x80";
  const std::u16string want = u"Donn\u00e9es \u2713 \U0001F600";
  auto s = run(kLabel + " " + q(img) + " " + shell_quote(label));
  ASSERT_EQ(s.exit_code, 0) << s.output;
  EXPECT_EQ(s.output, "");
  auto g = run(kLabel + " " + q(img));
  EXPECT_EQ(g.exit_code, 0);
  EXPECT_EQ(g.output, label + "\n");
  EXPECT_EQ(stored_name(img, 0), want);
  EXPECT_EQ(stored_name(img, 1), want);
  auto j = run(kLabel + " --json " + q(img));
  ASSERT_EQ(j.exit_code, 0) << j.output;
  auto doc = nlohmann::json::parse(j.output);
  EXPECT_EQ(doc["label"], label);
  EXPECT_EQ(doc["device"], img.string());
  // A shorter label leaves no tail of the longer one; "" clears it.
  ASSERT_EQ(run(kLabel + " " + q(img) + " ab").exit_code, 0);
  EXPECT_EQ(stored_name(img, 0), u"ab");
  EXPECT_EQ(stored_name(img, 1), u"ab");
  ASSERT_EQ(run(kLabel + " " + q(img) + " ''").exit_code, 0);
  EXPECT_EQ(run(kLabel + " " + q(img)).output, "\n");
  EXPECT_EQ(stored_name(img, 0), u"");
}

TEST(LabelTool, OnlyTheSuperblockBytesChange) {
  f2fstest::TempDir t;
  const auto img = make_volume(t);
  const auto before = t / "before.img";
  ASSERT_EQ(run("cp --sparse=always " + q(img) + " " + q(before)).exit_code, 0);
  ASSERT_EQ(run(kLabel + " " + q(img) + " x").exit_code, 0);
  // volume_name sits in blocks 0 and 1 (bytes 1024 + 124 on): nothing else.
  EXPECT_EQ(f2fstest::differing_blocks(before, img), (std::vector<std::uint64_t>{0, 1}));
}

TEST(LabelTool, MaximumLengthAcceptedOneMoreRefusedNothingWritten) {
  f2fstest::TempDir t;
  const auto img = make_volume(t, "-l keep");
  // 512 UTF-16 units: 512 ASCII characters, or 256 characters outside the BMP.
  ASSERT_EQ(run(kLabel + " " + q(img) + " " + repeat("a", 512)).exit_code, 0);
  EXPECT_EQ(stored_name(img, 0).size(), 512u);
  ASSERT_EQ(run(kLabel + " " + q(img) + " " + repeat("\xF0\x9F\x98\x80", 256)).exit_code, 0);
  EXPECT_EQ(stored_name(img, 1).size(), 512u);
  const auto before = digest(img);
  for (const std::string& too_long : {repeat("a", 513), repeat("\xF0\x9F\x98\x80", 256) + "a"}) {
    auto r = run(kLabel + " " + q(img) + " " + too_long);
    EXPECT_EQ(r.exit_code, 1) << r.output;
    EXPECT_NE(r.output.find("longer than 512 UTF-16 units"), std::string::npos) << r.output;
    EXPECT_EQ(digest(img), before);
  }
  auto bad = run(kLabel + " " + q(img) + " \"$(printf '\\377')\"");
  EXPECT_EQ(bad.exit_code, 1) << bad.output;
  EXPECT_NE(bad.output.find("not valid UTF-8"), std::string::npos) << bad.output;
  EXPECT_EQ(digest(img), before);
}

TEST(LabelTool, UsageErrorsExit2) {
  EXPECT_EQ(run(kLabel).exit_code, 2);
  EXPECT_EQ(run(kLabel + " --no-such-option x").exit_code, 2);
  EXPECT_EQ(run(kLabel + " a b c").exit_code, 2);
  EXPECT_EQ(run(kLabel + " --help").exit_code, 0);
}

TEST(LabelTool, NotF2fsRefused) {
  f2fstest::TempDir t;
  const auto img = t / "zero.img";
  f2fstest::make_sparse_file(img, 16ull << 20);
  auto r = run(kLabel + " " + q(img) + " x");
  EXPECT_EQ(r.exit_code, 1) << r.output;
  EXPECT_NE(r.output.find("not an F2FS file system"), std::string::npos) << r.output;
  EXPECT_EQ(run(kLabel + " /nonexistent/vol.img").exit_code, 1);
  if (run("command -v mkfs.ext4").exit_code == 0) {
    const auto ext = t / "ext.img";
    f2fstest::make_sparse_file(ext, 16ull << 20);
    ASSERT_EQ(run("mkfs.ext4 -q -F " + q(ext) + " >/dev/null 2>&1").exit_code, 0);
    const auto before = digest(ext);
    auto e = run(kLabel + " " + q(ext) + " x");
    EXPECT_EQ(e.exit_code, 1) << e.output;
    EXPECT_NE(e.output.find("ext4"), std::string::npos) << e.output;
    EXPECT_EQ(digest(ext), before);
  }
}

TEST(LabelTool, SbChecksumRecomputed) {
  f2fstest::TempDir t;
  const auto img = make_volume(t, "-O sb_checksum -l old");
  ASSERT_EQ(run(kLabel + " " + q(img) + " renamed").exit_code, 0);
  for (int copy = 0; copy < 2; ++copy) {
    const auto b = f2fstest::read_block(img, static_cast<std::uint64_t>(copy));
    // crc32 seeded with the magic over bytes [0, 3068) of the superblock, as
    // the kernel's sanity_check_raw_super() checks it.
    const std::uint32_t stored = static_cast<std::uint32_t>(b[1024 + 3068]) | (b[1024 + 3069] << 8) |
                                 (b[1024 + 3070] << 16) | (static_cast<std::uint32_t>(b[1024 + 3071]) << 24);
    EXPECT_EQ(stored, f2fscore::f2fs_crc32(0xF2F52010u, b.data() + 1024, 3068)) << "copy " << copy;
  }
  EXPECT_EQ(run(kLabel + " " + q(img)).output, "renamed\n");
  // Our checker opens it clean.
  auto f = run(kFsck + " -f -n " + q(img));
  EXPECT_EQ(f.exit_code, 0) << f.output;
}

TEST(LabelTool, AgreesWithF2fsTools) {
  const std::string f2fslabel = f2fstest::reference_tool("f2fslabel");
  const std::string mkfs_f2fs = f2fstest::reference_tool("mkfs.f2fs");
  if (f2fslabel.empty() || mkfs_f2fs.empty() || f2fstest::reference_tool("fsck.f2fs").empty()) {
    if (f2fstest::required("FSCK")) FAIL() << "f2fs-tools (f2fslabel, mkfs.f2fs, fsck.f2fs) not installed";
    GTEST_SKIP() << "f2fs-tools not installed";
  }
  f2fstest::TempDir t;
  for (const std::string feats : {"", "-O sb_checksum"}) {
    const auto img = t / "ref.img";
    f2fstest::make_sparse_file(img, 64ull << 20);
    ASSERT_EQ(run(mkfs_f2fs + " -q -f " + feats + " -l 'r\xC3\xA9" "f' " + q(img)).exit_code, 0);
    // What mkfs.f2fs wrote, we read.
    EXPECT_EQ(run(kLabel + " " + q(img)).output, "r\xC3\xA9" "f\n") << feats;
    // What we write, f2fslabel reads, and fsck.f2fs -f finds clean.
    ASSERT_EQ(run(kLabel + " " + q(img) + " 'ours \xE2\x9C\x93'").exit_code, 0);
    auto r = run(f2fslabel + " " + q(img));
    EXPECT_EQ(r.exit_code, 0) << r.output;
    EXPECT_NE(r.output.find("volume label = ours \xE2\x9C\x93\n"), std::string::npos) << feats << r.output;
    std::string out;
    EXPECT_EQ(f2fstest::fsck_problems(img, &out), std::vector<std::string>{}) << feats << out;
    // What f2fslabel writes, we read.
    ASSERT_EQ(run(f2fslabel + " " + q(img) + " theirs").exit_code, 0);
    EXPECT_EQ(run(kLabel + " " + q(img)).output, "theirs\n") << feats;
  }
}

// ------------------------------------------------------------ f2fscore-tune

TEST(TuneTool, ShowsWhatMkfsWrote) {
  f2fstest::TempDir t;
  const auto img = make_volume(t, "-l shown -U 0c1d2e3f-4a5b-6c7d-8e9f-a0b1c2d3e4f5 -O extra_attr,inode_checksum");
  auto r = run(kTune + " " + q(img));
  EXPECT_EQ(r.exit_code, 0) << r.output;
  EXPECT_NE(r.output.find("label:    shown\n"), std::string::npos) << r.output;
  EXPECT_NE(r.output.find("uuid:     0c1d2e3f-4a5b-6c7d-8e9f-a0b1c2d3e4f5\n"), std::string::npos) << r.output;
  EXPECT_NE(r.output.find("extra_attr"), std::string::npos) << r.output;
  EXPECT_NE(r.output.find("inode_checksum"), std::string::npos) << r.output;
  auto j = run(kTune + " --json " + q(img));
  ASSERT_EQ(j.exit_code, 0) << j.output;
  const auto doc = nlohmann::json::parse(j.output);
  EXPECT_EQ(doc["state"]["label"], "shown");
  EXPECT_EQ(doc["state"]["uuid"], "0c1d2e3f-4a5b-6c7d-8e9f-a0b1c2d3e4f5");
  EXPECT_TRUE(doc["state"]["features"].is_array());
}

TEST(TuneTool, ChangesEveryTunableFieldCleanUnderBothCheckers) {
  f2fstest::TempDir t;
  const auto img = make_volume(t, "-l before");
  auto r = run(kTune + " -l after -U 00112233-4455-6677-8899-aabbccddeeff -O encrypt,verity,sb_checksum -C utf8 " +
               q(img));
  ASSERT_EQ(r.exit_code, 0) << r.output;
  auto s = run(kTune + " --json " + q(img));
  const auto doc = nlohmann::json::parse(s.output);
  EXPECT_EQ(doc["state"]["label"], "after");
  EXPECT_EQ(doc["state"]["uuid"], "00112233-4455-6677-8899-aabbccddeeff");
  for (const char* f : {"encrypt", "verity", "sb_checksum", "casefold"}) {
    bool found = false;
    for (const auto& n : doc["state"]["features"]) found = found || n == f;
    EXPECT_TRUE(found) << f << " " << s.output;
  }
  EXPECT_EQ(doc["state"]["encoding"], "utf8");
  EXPECT_EQ(run(kLabel + " " + q(img)).output, "after\n");
  auto f = run(kFsck + " -f -n " + q(img));
  EXPECT_EQ(f.exit_code, 0) << f.output;
  if (!f2fstest::reference_tool("fsck.f2fs").empty()) {
    std::string out;
    EXPECT_EQ(f2fstest::fsck_problems(img, &out), std::vector<std::string>{}) << out;
  } else if (f2fstest::required("FSCK")) {
    FAIL() << "fsck.f2fs not installed";
  }
}

TEST(TuneTool, RefusalsWriteNothing) {
  f2fstest::TempDir t;
  const auto img = make_volume(t, "-O extra_attr,inode_checksum");
  const auto before = digest(img);
  auto r = run(kTune + " -O compression -l x " + q(img));
  EXPECT_EQ(r.exit_code, 1) << r.output;
  EXPECT_NE(r.output.find("compression cannot be turned on after format"), std::string::npos) << r.output;
  EXPECT_NE(r.output.find("nothing written"), std::string::npos) << r.output;
  r = run(kTune + " -U random " + q(img));
  EXPECT_EQ(r.exit_code, 1) << r.output;
  EXPECT_NE(r.output.find("inode_checksum"), std::string::npos) << r.output;
  r = run(kTune + " -n -l dry -O encrypt " + q(img));  // a dry run
  EXPECT_EQ(r.exit_code, 0) << r.output;
  EXPECT_NE(r.output.find("nothing written"), std::string::npos) << r.output;
  EXPECT_EQ(digest(img), before);
  // Usage errors: 2.
  for (const std::string bad : {"-O nosuchfeature", "-O ^encrypt", "-U not-a-uuid", "-C latin1", "--bogus", ""}) {
    r = run(kTune + " " + bad + (bad.empty() ? "" : " ") + (bad.empty() ? std::string() : q(img)));
    EXPECT_EQ(r.exit_code, 2) << bad << ": " << r.output;
    EXPECT_EQ(r.output.rfind("f2fscore-tune: ", 0), 0u) << bad << ": " << r.output;
  }
  EXPECT_EQ(digest(img), before);
  // Not F2FS: exit 1.
  f2fstest::make_sparse_file(t / "zeros", 8ull << 20);
  r = run(kTune + " -l x " + q(t / "zeros"));
  EXPECT_EQ(r.exit_code, 1) << r.output;
}

TEST(TuneTool, FsckF2fsTurnsOnWhatWeReadAndTheReverse) {
  const std::string mkfs_f2fs = f2fstest::reference_tool("mkfs.f2fs");
  const std::string fsck_f2fs = f2fstest::reference_tool("fsck.f2fs");
  if (mkfs_f2fs.empty() || fsck_f2fs.empty()) {
    if (f2fstest::required("FSCK")) FAIL() << "f2fs-tools not installed";
    GTEST_SKIP() << "f2fs-tools not installed";
  }
  f2fstest::TempDir t;
  // fsck.f2fs -O encrypt (tune_sb_features()) sets the bit we then read.
  const auto img = t / "ref.img";
  f2fstest::make_sparse_file(img, 64ull << 20);
  ASSERT_EQ(run(mkfs_f2fs + " -q -f " + q(img)).exit_code, 0);
  run("yes n 2>/dev/null | " + fsck_f2fs + " -O encrypt " + q(img));
  auto r = run(kTune + " " + q(img));
  EXPECT_NE(r.output.find("encrypt"), std::string::npos) << r.output;
  // What we set on mkfs.f2fs's image, fsck.f2fs -f finds clean.
  ASSERT_EQ(run(kTune + " -O verity,sb_checksum -C utf8 -l theirs " + q(img)).exit_code, 0);
  std::string out;
  EXPECT_EQ(f2fstest::fsck_problems(img, &out), std::vector<std::string>{}) << out;
}

// -C utf8:hashonly stores SB_ENC_NO_COMPAT_FALLBACK_FL (0x2, include/linux/
// f2fs_fs.h) in s_encoding_flags (superblock offset 2760), and tune shows
// it by the name -C takes; a refusal names the encodings, never numbers.
TEST(TuneTool, EncodingFlagsShownByName) {
  f2fstest::TempDir t;
  const auto img = make_volume(t);
  auto r = run(kTune + " -C utf8:hashonly " + q(img));
  ASSERT_EQ(r.exit_code, 0) << r.output;
  for (int copy = 0; copy < 2; ++copy) {
    const auto b = f2fstest::read_block(img, static_cast<std::uint64_t>(copy));
    EXPECT_EQ(b[1024 + 2758] | (b[1024 + 2759] << 8), 1) << "s_encoding: utf8-12.1";
    EXPECT_EQ(b[1024 + 2760] | (b[1024 + 2761] << 8), 2) << "s_encoding_flags: hashonly only";
  }
  r = run(kTune + " " + q(img));
  EXPECT_NE(r.output.find("encoding: utf8:hashonly\n"), std::string::npos) << r.output;
  auto j = run(kTune + " --json " + q(img));
  ASSERT_EQ(j.exit_code, 0) << j.output;
  const auto doc = nlohmann::json::parse(j.output);
  EXPECT_EQ(doc["state"]["encoding"], "utf8");
  EXPECT_EQ(doc["state"]["encoding_flags"], nlohmann::json::array({"hashonly"}));
  EXPECT_EQ(doc["state"]["encoding_strict"], false);
  // Another encoding for a casefolded volume: refused, both named.
  const auto before = digest(img);
  r = run(kTune + " -C utf8:strict " + q(img));
  EXPECT_EQ(r.exit_code, 1) << r.output;
  EXPECT_NE(r.output.find("casefolded with encoding utf8:hashonly, not utf8:strict"), std::string::npos) << r.output;
  EXPECT_EQ(r.output.find("0x"), std::string::npos) << r.output;
  EXPECT_EQ(digest(img), before);
}

// An empty name in -O is a usage error (nothing written); -O quota is
// refused under the name asked, with the superblock's name beside it.
TEST(TuneTool, FeatureListErrorsNameWhatWasAsked) {
  f2fstest::TempDir t;
  const auto img = make_volume(t);
  const auto before = digest(img);
  auto r = run(kTune + " -O encrypt,,casefold " + q(img));
  EXPECT_EQ(r.exit_code, 2) << r.output;
  EXPECT_EQ(r.output.rfind("f2fscore-tune: -O: empty feature name", 0), 0u) << r.output;
  r = run(kTune + " -O quota " + q(img));
  EXPECT_EQ(r.exit_code, 1) << r.output;
  EXPECT_NE(r.output.find("feature quota (quota_ino in the feature list) cannot be turned on"), std::string::npos)
      << r.output;
  EXPECT_EQ(digest(img), before);
  // mkfs takes the same lists: the empty name is a usage error there too.
  const auto img2 = t / "two.img";
  f2fstest::make_sparse_file(img2, 64ull << 20);
  r = run(kMkfs + " -q -O extra_attr,,inode_checksum " + q(img2));
  EXPECT_EQ(r.exit_code, 2) << r.output;
}

// Every feature tune turns on leaves the volume writable by f2fscore's
// writer (encrypt and casefold included: Writer::mount takes them): no
// warning, and the JSON object's warnings are empty.
TEST(TuneTool, TurningOnFeaturesWarnsOfNothing) {
  f2fstest::TempDir t;
  const auto img = make_volume(t);
  auto r = run(kTune + " -O verity " + q(img));
  ASSERT_EQ(r.exit_code, 0) << r.output;
  EXPECT_EQ(r.output.find("warning"), std::string::npos) << r.output;
  r = run(kTune + " --json -O encrypt,casefold " + q(img) + " 2>/dev/null");
  ASSERT_EQ(r.exit_code, 0) << r.output;
  const auto doc = nlohmann::json::parse(r.output);
  EXPECT_TRUE(doc["warnings"].empty()) << r.output;
  r = run(kTune + " -l again " + q(img));
  EXPECT_EQ(r.output.find("warning"), std::string::npos) << r.output;
}

// Usage errors under --json print the error object too (exit_code 2), for
// label and tune as for their failures.
TEST(TuneTool, UsageErrorsUnderJsonPrintAnObject) {
  f2fstest::TempDir t;
  const auto img = make_volume(t);
  for (const std::string& cmd : {kTune + " --json -O nosuch " + q(img), kTune + " --json --bogus " + q(img),
                                 kTune + " --json", kLabel + " --json", kLabel + " --json --bogus " + q(img)}) {
    auto r = run(cmd + " 2>/dev/null");
    EXPECT_EQ(r.exit_code, 2) << cmd << ": " << r.output;
    nlohmann::json doc;
    ASSERT_NO_THROW(doc = nlohmann::json::parse(r.output)) << cmd << ": " << r.output;
    EXPECT_EQ(doc["exit_code"], 2) << cmd;
    EXPECT_TRUE(doc["error"].is_string()) << cmd;
  }
}
