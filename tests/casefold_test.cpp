// Casefolded names: folds and dentry hashes as Linux 6.1 computes them with
// its Unicode 12.1 table, and lookups in casefolded directories of an image
// that Linux wrote (tests/data/linux61-casefold.img.zst, with what Linux's
// lookups found in tests/data/linux61-casefold.lookups.zst; see
// tests/data/README.md).
#include <gtest/gtest.h>

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <fstream>
#include <map>
#include <span>
#include <sstream>
#include <string>
#include <vector>

#include "f2fscore/casefold.hpp"
#include "f2fscore/checksum.hpp"
#include "f2fscore/disk/constants.hpp"
#include "f2fscore/disk/dentry.hpp"
#include "f2fscore/disk/superblock.hpp"
#include "f2fscore/volume.hpp"
#include "support/test_support.hpp"

using namespace f2fscore;

namespace {

// The sweep, shared word for word with the oracle run that recorded the
// digest (tests/data/README.md).
void sweep_append_utf8(std::string& s, char32_t c) {
  if (c < 0x80) {
    s += static_cast<char>(c);
  } else if (c < 0x800) {
    s += static_cast<char>(0xC0 | (c >> 6));
    s += static_cast<char>(0x80 | (c & 0x3F));
  } else if (c < 0x10000) {
    s += static_cast<char>(0xE0 | (c >> 12));
    s += static_cast<char>(0x80 | ((c >> 6) & 0x3F));
    s += static_cast<char>(0x80 | (c & 0x3F));
  } else {
    s += static_cast<char>(0xF0 | (c >> 18));
    s += static_cast<char>(0x80 | ((c >> 12) & 0x3F));
    s += static_cast<char>(0x80 | ((c >> 6) & 0x3F));
    s += static_cast<char>(0x80 | (c & 0x3F));
  }
}

// Every scalar value U+0001..U+10FFFF but '/' in runs of 16 ("c<n>_" + run),
// then 4000 mixes of marks, ignorables, folding, decomposing and post-12.1
// code points and stray continuation bytes ("m<n>_"), then 1000 strings of
// random bytes ("r<n>_"). Deterministic: the digest of the hashes Linux
// stored for these names is a constant of the test.
std::vector<std::string> sweep_names() {
  std::vector<std::string> out;
  for (char32_t base = 0; base <= 0x10FFFF; base += 16) {
    std::string run;
    for (char32_t c = base; c < base + 16; ++c)
      if (c != 0 && c != '/' && !(c >= 0xD800 && c <= 0xDFFF)) sweep_append_utf8(run, c);
    if (!run.empty()) out.push_back("c" + std::to_string(out.size()) + "_" + run);
  }
  // Ranges [first, last] to draw from; 0x80 stands for a stray continuation byte.
  static constexpr char32_t kPools[][2] = {
      {0x0300, 0x036F}, {0x0591, 0x05BD}, {0x0610, 0x061A}, {0x0F71, 0x0F84}, {0x1AB0, 0x1AC0},
      {0x1DC0, 0x1DFF}, {0x20D0, 0x20F0}, {0x302A, 0x302F}, {0x0345, 0x0345}, {0x1D165, 0x1D169},
      {0x00AD, 0x00AD}, {0x034F, 0x034F}, {0x200B, 0x200F}, {0xFE00, 0xFE0F}, {0xE0000, 0xE0101},
      {0x2060, 0x206F}, {0x115F, 0x1160}, {0x180B, 0x180F}, {0x0041, 0x005A}, {0x0130, 0x0131},
      {0x1E9E, 0x1E9E}, {0x1F80, 0x1FAF}, {0xFB00, 0xFB06}, {0x0390, 0x03B0}, {0x00C0, 0x00FF},
      {0x1E00, 0x1EFF}, {0xAC00, 0xAC40}, {0x0958, 0x095F}, {0x2126, 0x212B}, {0x13A0, 0x13FF},
      {0xAB70, 0xABBF}, {0x1F970, 0x1F97F}, {0xA7C0, 0xA7CF}, {0x11930, 0x1193F}, {0x10570, 0x105BF},
      {0x0061, 0x007A}, {0x0080, 0x0080}, {0x0080, 0x0080}};
  constexpr std::size_t kNumPools = sizeof kPools / sizeof kPools[0];
  std::uint64_t x = 0x2545F4914F6CDD1Dull;
  auto next = [&x] {
    x ^= x << 13;
    x ^= x >> 7;
    x ^= x << 17;
    return static_cast<std::uint32_t>(x >> 32);
  };
  for (int i = 0; i < 4000; ++i) {
    std::string body;
    const std::uint32_t len = 2 + next() % 14;
    for (std::uint32_t k = 0; k < len; ++k) {
      const auto& p = kPools[next() % kNumPools];
      const char32_t c = p[0] + next() % (p[1] - p[0] + 1);
      if (c == 0x80)
        body += static_cast<char>(0x80 + next() % 64);
      else
        sweep_append_utf8(body, c);
    }
    out.push_back("m" + std::to_string(i) + "_" + body);
  }
  for (int i = 0; i < 1000; ++i) {
    std::string body;
    const std::uint32_t len = 1 + next() % 12;
    for (std::uint32_t k = 0; k < len; ++k) {
      char b;
      do b = static_cast<char>(1 + next() % 255); while (b == '/');
      body += b;
    }
    out.push_back("r" + std::to_string(i) + "_" + body);
  }
  return out;
}

// FNV-1a over the little-endian bytes of each hash, in order.
std::uint32_t sweep_digest(const std::vector<std::uint32_t>& hashes) {
  std::uint32_t h = 0x811C9DC5u;
  for (std::uint32_t v : hashes)
    for (int k = 0; k < 4; ++k) {
      h ^= (v >> (8 * k)) & 0xFFu;
      h *= 0x01000193u;
    }
  return h;
}

// UTF-8 of the given code points.
std::string cps(std::initializer_list<char32_t> list) {
  std::string s;
  for (char32_t c : list) sweep_append_utf8(s, c);
  return s;
}

std::string hex(std::string_view s) {
  static const char* d = "0123456789abcdef";
  std::string o;
  for (unsigned char c : s) {
    o += d[c >> 4];
    o += d[c & 15];
  }
  return o;
}

std::string unhex(std::string_view h) {
  std::string s;
  for (std::size_t i = 0; i + 1 < h.size(); i += 2)
    s += static_cast<char>(std::stoi(std::string(h.substr(i, 2)), nullptr, 16));
  return s;
}

// The hash f2fs stores for a name whose folded form is `folded`.
std::uint32_t tea(std::string_view folded) { return dentry_hash(folded); }

#define REQUIRE_CASEFOLD() \
  if (!casefold_supported()) GTEST_SKIP() << "built without casefolding (F2FSCORE_WITH_CASEFOLD=OFF)"

}  // namespace

TEST(Casefold, Ascii) {
  REQUIRE_CASEFOLD();
  EXPECT_EQ(utf8_nfdicf("README.Md"), "readme.md");
  EXPECT_EQ(utf8_nfdicf("a-Z_0 9~!"), "a-z_0 9~!");
  EXPECT_EQ(casefold_name("Makefile"), "makefile");
  EXPECT_EQ(dentry_hash_casefold("Makefile", 0), tea("makefile"));
  EXPECT_EQ(dentry_hash_casefold("MAKEFILE", 0), dentry_hash_casefold("makefile", 0));
  EXPECT_NE(dentry_hash_casefold("Makefile", 0), dentry_hash("Makefile"));
}

TEST(Casefold, Latin1DecomposesAndFolds) {
  REQUIRE_CASEFOLD();
  // Ä -> a + U+0308; Ø has no decomposition, only a folding; µ folds to μ.
  EXPECT_EQ(utf8_nfdicf(cps({0xC4})), cps({'a', 0x308}));
  EXPECT_EQ(utf8_nfdicf(cps({0xD8})), cps({0xF8}));
  EXPECT_EQ(utf8_nfdicf(cps({0xB5})), cps({0x3BC}));
  EXPECT_EQ(utf8_nfdicf(cps({0xC9, 'T', 0xC9})), cps({'e', 0x301, 't', 'e', 0x301}));
  // ÿ decomposes, its capital Ÿ (U+0178) folds to it.
  EXPECT_EQ(utf8_nfdicf(cps({0x178})), utf8_nfdicf(cps({0xFF})));
}

TEST(Casefold, GermanSharpSFoldsToSs) {
  REQUIRE_CASEFOLD();
  EXPECT_EQ(utf8_nfdicf("Straße.txt"), "strasse.txt");
  EXPECT_EQ(utf8_nfdicf("STRASSE.TXT"), "strasse.txt");
  EXPECT_EQ(utf8_nfdicf(cps({0x1E9E})), "ss");  // capital sharp s
  EXPECT_EQ(dentry_hash_casefold("Straße.txt", 0), dentry_hash_casefold("STRASSE.TXT", 0));
  EXPECT_EQ(dentry_hash_casefold("Straße.txt", 0), 0x40c235aeu);  // as Linux stored it
}

TEST(Casefold, GreekFinalSigma) {
  REQUIRE_CASEFOLD();
  const std::string want = cps({0x3C3, 0x3B1, 0x3C3});
  EXPECT_EQ(utf8_nfdicf(cps({0x3A3, 0x391, 0x3A3})), want);  // ΣΑΣ
  EXPECT_EQ(utf8_nfdicf(cps({0x3C3, 0x3B1, 0x3C2})), want);  // σας: final sigma folds to σ
  EXPECT_EQ(dentry_hash_casefold(cps({0x3A3, 0x391, 0x3A3}), 0), 0xca15b614u);  // as Linux stored it
  // ΐ (U+0390) folds to ι + diaeresis + acute; so does its twin U+1FD3.
  EXPECT_EQ(utf8_nfdicf(cps({0x390})), cps({0x3B9, 0x308, 0x301}));
  EXPECT_EQ(utf8_nfdicf(cps({0x1FD3})), utf8_nfdicf(cps({0x390})));
}

TEST(Casefold, TurkishDottedAndDotlessI) {
  REQUIRE_CASEFOLD();
  // Full folding without the Turkic rules: İ -> i + combining dot above,
  // ı stays ı, I -> i.
  EXPECT_EQ(utf8_nfdicf(cps({0x130})), cps({'i', 0x307}));
  EXPECT_EQ(utf8_nfdicf(cps({0x131})), cps({0x131}));
  EXPECT_EQ(utf8_nfdicf("I"), "i");
  EXPECT_NE(dentry_hash_casefold(cps({0x131}), 0), dentry_hash_casefold("i", 0));
  EXPECT_EQ(dentry_hash_casefold(cps({0x130}), 0), dentry_hash_casefold(cps({'i', 0x307}), 0));
}

TEST(Casefold, CombiningCharactersAreDecomposedAndOrdered) {
  REQUIRE_CASEFOLD();
  EXPECT_EQ(utf8_nfdicf(cps({0xE9})), cps({'e', 0x301}));
  EXPECT_EQ(utf8_nfdicf(cps({'E', 0x301})), cps({'e', 0x301}));
  // Marks are sorted by combining class (220 before 230), stably.
  EXPECT_EQ(utf8_nfdicf(cps({'a', 0x301, 0x316})), cps({'a', 0x316, 0x301}));
  EXPECT_EQ(utf8_nfdicf(cps({'a', 0x301, 0x300})), cps({'a', 0x301, 0x300}));
  // An ignorable is removed but still separates the runs being sorted.
  EXPECT_EQ(utf8_nfdicf(cps({'a', 0x301, 0x200B, 0x316})), cps({'a', 0x301, 0x316}));
  // U+0345 (class 240) folds to ι (class 0) before sorting: no reordering.
  EXPECT_EQ(utf8_nfdicf(cps({'a', 0x345, 0x301})), cps({'a', 0x3B9, 0x301}));
  // ᾈ: capital alpha + psili + prosgegrammeni folds to α ̓ ι.
  EXPECT_EQ(utf8_nfdicf(cps({0x1F88})), cps({0x3B1, 0x313, 0x3B9}));
  // Hangul syllables decompose into jamo (LVT).
  EXPECT_EQ(utf8_nfdicf(cps({0xD55C})), cps({0x1112, 0x1161, 0x11AB}));
  // Singletons: Ω (ohm) -> ω, Å (angstrom) -> a + ring, K (kelvin) -> k.
  EXPECT_EQ(utf8_nfdicf(cps({0x2126})), cps({0x3C9}));
  EXPECT_EQ(utf8_nfdicf(cps({0x212B})), cps({'a', 0x30A}));
  EXPECT_EQ(utf8_nfdicf(cps({0x212A})), "k");
  // Compatibility decompositions are not applied: ² and ﬁ's NFKD differ.
  EXPECT_EQ(utf8_nfdicf(cps({0xB2})), cps({0xB2}));
  EXPECT_EQ(utf8_nfdicf(cps({0xFB01})), "fi");  // but ﬁ has a full case folding
}

TEST(Casefold, IgnorablesAreRemoved) {
  REQUIRE_CASEFOLD();
  EXPECT_EQ(utf8_nfdicf(cps({'a', 'b', 0xAD, 'c'})), "abc");     // soft hyphen
  EXPECT_EQ(utf8_nfdicf(cps({0x200B, 'X'})), "x");                // zero width space
  EXPECT_EQ(utf8_nfdicf(cps({0xFE0F, 0x2065, 0xE0080})), "");     // incl. unassigned ignorables
  // All-ignorable names fold to nothing: f2fs hashes the raw name then.
  EXPECT_EQ(casefold_name(cps({0x200B})), std::nullopt);
  EXPECT_EQ(dentry_hash_casefold(cps({0x200B}), 0), dentry_hash(cps({0x200B})));
  // U+200B "." folds to "."; it is hashed as the folded bytes, not as a dot.
  EXPECT_EQ(casefold_name(cps({0x200B, '.'})), ".");
  EXPECT_NE(dentry_hash_casefold(cps({0x200B, '.'}), 0), 0u);
  EXPECT_EQ(dentry_hash_casefold(".", 0), 0u);
  EXPECT_EQ(dentry_hash_casefold("..", 0), 0u);
}

TEST(Casefold, CodePointsAfterUnicode12_1PassUnchanged) {
  REQUIRE_CASEFOLD();
  // U+1F972 (13.0) is unknown to Linux's table: it folds as itself, the name
  // is folded (not rejected), exactly as Linux stored it.
  EXPECT_EQ(utf8_nfdicf(cps({0x1F972})), cps({0x1F972}));
  EXPECT_EQ(utf8_nfdicf(cps({'A', 0x1F972})), cps({'a', 0x1F972}));
  EXPECT_EQ(dentry_hash_casefold(cps({0x1F972}), 0), tea(cps({0x1F972})));
  // U+A7C7 (13.0) folds to U+A7C8 in later Unicode, not in 12.1.
  EXPECT_EQ(utf8_nfdicf(cps({0xA7C7})), cps({0xA7C7}));
  // U+11938 (13.0) has a canonical decomposition since 13.0.
  EXPECT_EQ(utf8_nfdicf(cps({0x11938})), cps({0x11938}));
  // U+1ABF (13.0, class 220 later) counts as a starter: no reordering.
  EXPECT_EQ(utf8_nfdicf(cps({'x', 0x301, 0x1ABF})), cps({'x', 0x301, 0x1ABF}));
  // U+180F (14.0) became ignorable later: kept.
  EXPECT_EQ(utf8_nfdicf(cps({0x180F})), cps({0x180F}));
  // Unassigned in every version so far.
  EXPECT_EQ(utf8_nfdicf(cps({0x378})), cps({0x378}));
}

TEST(Casefold, InvalidUtf8DoesNotFold) {
  REQUIRE_CASEFOLD();
  for (const std::string& bad :
       {std::string("abc\xff"), std::string("\xc0\x80x"), std::string("\xed\xa0\x80"), std::string("\xf4\x90\x80\x80"),
        std::string("\xe0\x80\x80"), std::string("\xc3" "A"), std::string("ok\xe2\x82"),
        std::string("\xf5\x80\x80\x80"),
        std::string("\x80" "abc"), std::string("\xfe")}) {
    SCOPED_TRACE(hex(bad));
    EXPECT_EQ(utf8_nfdicf(bad), std::nullopt);
    EXPECT_EQ(casefold_name(bad), std::nullopt);
    EXPECT_EQ(dentry_hash_casefold(bad, 0), dentry_hash(bad));
  }
  // As Linux, a continuation byte after a complete character is copied.
  EXPECT_EQ(utf8_nfdicf("A\x80"), "a\x80");
  // ...and inside a run of marks it comes out once per sorting pass.
  EXPECT_EQ(utf8_nfdicf("x\xcc\x81\x80\xcc\x96"), "x\x80\x80\xcc\x96\xcc\x81\x80");
  EXPECT_EQ(dentry_hash_casefold("x\xcc\x81\x80\xcc\x96", 0), 0x93cb9988u);  // as Linux stored it
}

TEST(Casefold, FoldedNamesLongerThan254BytesAreNotUsed) {
  REQUIRE_CASEFOLD();
  const std::string ok = std::string(252, 'A') + "ß";     // folds to 254 bytes
  const std::string over = std::string(253, 'A') + "ß";   // folds to 255 bytes
  ASSERT_TRUE(casefold_name(ok));
  EXPECT_EQ(casefold_name(ok)->size(), 254u);
  EXPECT_EQ(casefold_name(over), std::nullopt);
  EXPECT_EQ(utf8_nfdicf(over)->size(), 255u);
  EXPECT_EQ(dentry_hash_casefold(over, 0), dentry_hash(over));
  std::string e127;
  for (int i = 0; i < 127; ++i) e127 += cps({0xC9});  // 254 bytes, folds to 381
  EXPECT_EQ(casefold_name(e127), std::nullopt);
  EXPECT_EQ(dentry_hash_casefold(e127, 0), dentry_hash(e127));
}

TEST(Casefold, MatchAsLinuxDoes) {
  REQUIRE_CASEFOLD();
  const std::uint16_t strict = disk::kEncStrictModeFl;
  EXPECT_TRUE(casefold_match("strasse.txt", "Straße.txt", 0));
  EXPECT_TRUE(casefold_match("strasse.txt", "STRASSE.TXT", 0));
  EXPECT_FALSE(casefold_match("strasse.txt", "strasse.txt2", 0));
  EXPECT_FALSE(casefold_match("strasse.tx", "strasse.txt", 0));
  // An entry that does not fold is compared raw with the folded name,
  // except under the strict flag.
  const std::string folded = *utf8_nfdicf(cps({0x301}) + "\x80");  // "\x80" U+0301 "\x80"
  const std::string entry = folded;  // starts with a continuation byte: does not fold
  EXPECT_EQ(utf8_nfdicf(entry), std::nullopt);
  EXPECT_TRUE(casefold_match(folded, entry, 0));
  EXPECT_FALSE(casefold_match(folded, entry, strict));
  // Differing before the invalid part: no match, no fallback.
  EXPECT_FALSE(casefold_match("abc", "xyz\xff", 0));
}

TEST(Casefold, EveryCodePointHashesAsLinux) {
  REQUIRE_CASEFOLD();
  // Linux 6.1 stored these hashes for the sweep's 74504 names (every code
  // point, mixes of marks/ignorables/newer code points/stray bytes, random
  // bytes); see tests/data/README.md. Their digest:
  constexpr std::uint32_t kLinuxDigest = 0xb72eb784u;
  const auto names = sweep_names();
  ASSERT_EQ(names.size(), 74504u);
  std::vector<std::uint32_t> hashes;
  hashes.reserve(names.size());
  for (const auto& n : names) hashes.push_back(dentry_hash_casefold(n, 0));
  EXPECT_EQ(sweep_digest(hashes), kLinuxDigest);
}

// --- The image Linux wrote -------------------------------------------------

namespace {

struct LinuxLookup {
  std::string dir;
  std::string name;
  std::string result;  ///< inode number, "-" (ENOENT), "loop" (ELOOP), "inval" (EINVAL)
};

class CasefoldImage : public ::testing::Test {
 protected:
  void SetUp() override {
    auto img = f2fstest::unzstd(f2fstest::data_dir() / "linux61-casefold.img.zst");
    if (!img) GTEST_SKIP() << "zstd is not available to unpack the fixture";
    dev_ = f2fstest::load_image(*img);
    auto table = f2fstest::unzstd(f2fstest::data_dir() / "linux61-casefold.lookups.zst");
    ASSERT_TRUE(table);
    std::ifstream in(*table);
    for (std::string line; std::getline(in, line);) {
      if (line.empty() || line[0] == '#') continue;
      std::istringstream l(line);
      std::string dir, h, result, strict_result;
      ASSERT_TRUE(l >> dir >> h >> result >> strict_result) << line;
      lookups_.push_back({dir, unhex(h), result});
      strict_.push_back({dir, unhex(h), strict_result});
    }
    ASSERT_GT(lookups_.size(), 700u);
    ASSERT_GT(strict_.size(), 700u);
  }

  std::unique_ptr<Volume> open() {
    auto v = Volume::open(*dev_);
    EXPECT_OK(v);
    return v ? std::move(*v) : nullptr;
  }

  // Overwrites bytes of the image (read-modify-write of the 4 KiB block).
  void patch(std::uint64_t offset, std::span<const std::uint8_t> bytes) {
    std::vector<std::uint8_t> blk(disk::kBlockSize);
    const std::uint64_t start = offset / disk::kBlockSize * disk::kBlockSize;
    ASSERT_LE(offset - start + bytes.size(), blk.size());
    ASSERT_TRUE(read_at(*dev_, start, blk));
    std::copy(bytes.begin(), bytes.end(), blk.begin() + static_cast<std::ptrdiff_t>(offset - start));
    ASSERT_TRUE(write_at(*dev_, start, blk));
  }

  // Sets s_encoding_flags in both superblocks (no sb_checksum on this image).
  void set_encoding_flags(std::uint16_t flags) {
    const std::uint8_t b[2] = {static_cast<std::uint8_t>(flags), static_cast<std::uint8_t>(flags >> 8)};
    for (std::uint64_t sb : {0ull, 4096ull})
      patch(sb + disk::kSuperOffset + offsetof(disk::SuperBlock, s_encoding_flags), b);
  }

  // Our lookup in the form Linux's results take.
  static std::string our_result(Volume& v, const InodeInfo& dir, const std::string& name) {
    auto e = v.lookup(dir, name);
    if (e) return std::to_string(e->ino);
    if (e.error().code == Errc::not_found) return "-";
    if (e.error().message.find("ELOOP") != std::string::npos) return "loop";
    if (e.error().code == Errc::invalid_argument) return "inval";
    return "error: " + e.error().to_string();
  }

  void check(const std::vector<LinuxLookup>& want) {
    auto v = open();
    ASSERT_TRUE(v);
    std::map<std::string, InodeInfo> dirs;
    int compared = 0;
    for (const auto& q : want) {
      if (!dirs.count(q.dir)) {
        auto d = v->resolve("/" + q.dir);
        ASSERT_OK(d);
        dirs.emplace(q.dir, *d);
      }
      EXPECT_EQ(our_result(*v, dirs.at(q.dir), q.name), q.result) << "/" << q.dir << "/ " << hex(q.name);
      ++compared;
    }
    EXPECT_EQ(compared, static_cast<int>(want.size()));
  }

  std::unique_ptr<BlockDevice> dev_;
  std::vector<LinuxLookup> lookups_, strict_;
};

}  // namespace

TEST_F(CasefoldImage, StoredHashesAreOurs) {
  REQUIRE_CASEFOLD();
  auto v = open();
  ASSERT_TRUE(v);
  int names = 0;
  for (const char* path : {"/d", "/s", "/big"}) {
    auto d = v->resolve(path);
    ASSERT_OK(d);
    EXPECT_TRUE(d->is_casefolded()) << path;
    auto es = v->read_dir(*d);
    ASSERT_OK(es);
    for (const auto& e : *es) {
      if (e.name == "." || e.name == "..") continue;
      EXPECT_EQ(dentry_hash_casefold(e.name, 0), e.hash) << path << "/ " << hex(e.name);
      // Every entry is found under its own name, in the entry Linux made.
      auto f = v->lookup(*d, e.name);
      ASSERT_TRUE(f) << path << "/ " << hex(e.name) << ": " << f.error().to_string();
      EXPECT_EQ(f->name, e.name);
      ++names;
    }
  }
  EXPECT_EQ(names, 109 + 5 + 400);  // /d: 119 names made, 7 matched an earlier one, 3 hit "." or ".."
}

TEST_F(CasefoldImage, LookupsFindWhatLinuxFinds) {
  REQUIRE_CASEFOLD();
  auto v = open();
  ASSERT_TRUE(v);
  auto d = v->resolve("/d");
  ASSERT_TRUE(d);
  auto straße = v->lookup(*d, "Straße.txt");
  ASSERT_TRUE(straße);
  for (const char* other : {"STRASSE.TXT", "strasse.txt", "straße.TXT"}) {
    auto e = v->lookup(*d, other);
    ASSERT_TRUE(e) << other;
    EXPECT_EQ(e->ino, straße->ino) << other;
    EXPECT_EQ(e->name, "Straße.txt");
  }
  auto via_path = v->resolve("/d/STRASSE.TXT");
  ASSERT_TRUE(via_path);
  EXPECT_EQ(via_path->ino, straße->ino);
  check(lookups_);
}

TEST_F(CasefoldImage, StrictLookupsFindWhatLinuxFinds) {
  REQUIRE_CASEFOLD();
  set_encoding_flags(disk::kEncStrictModeFl);
  check(strict_);
}

TEST_F(CasefoldImage, StaleHashesAreFoundByTheLinearFallback) {
  REQUIRE_CASEFOLD();
  // Linux 6.1 (with the linear-lookup backport) searches every entry of a
  // casefolded directory when the hashed search fails, whatever
  // s_encoding_flags says: an entry whose stored hash is wrong is found.
  auto v = open();
  ASSERT_TRUE(v);
  auto s = v->resolve("/s");
  ASSERT_TRUE(s);
  ASSERT_TRUE(s->has_inline_dentry());
  auto alpha = v->lookup(*s, "ALPHA");
  ASSERT_TRUE(alpha);
  // Break the stored hash of "Alpha" in the inline area.
  const auto lay = disk::inline_dentry_layout(s->max_inline_bytes());
  const auto* base = reinterpret_cast<const std::uint8_t*>(&s->raw) + s->inline_offset();
  const auto* de = reinterpret_cast<const disk::DirEntry*>(base + lay.dentry_offset());
  std::uint32_t slot = lay.nr_slots;
  for (std::uint32_t i = 0; i < lay.nr_slots; ++i)
    if (de[i].name_len.get() == 5 &&
        std::string(reinterpret_cast<const char*>(base + lay.filename_offset() + 8 * i), 5) == "Alpha")
      slot = i;
  ASSERT_LT(slot, lay.nr_slots);
  const std::uint64_t off = s->node_blkaddr * disk::kBlockSize + s->inline_offset() + lay.dentry_offset() +
                            slot * sizeof(disk::DirEntry);
  const std::uint8_t junk[4] = {0x78, 0x56, 0x34, 0x12};
  patch(off, junk);
  set_encoding_flags(disk::kEncNoCompatFallbackFl);  // Linux 6.1 ignores it
  auto v2 = open();
  ASSERT_TRUE(v2);
  auto s2 = v2->resolve("/s");
  ASSERT_TRUE(s2);
  auto found = v2->lookup(*s2, "alpha");
  ASSERT_OK(found);
  EXPECT_EQ(found->ino, alpha->ino);
  EXPECT_EQ(found->hash, 0x12345678u);
}

TEST_F(CasefoldImage, WithoutCasefoldingLookupsMatchExactBytes) {
  if (casefold_supported()) GTEST_SKIP() << "casefolding is built in";
  auto v = open();
  ASSERT_TRUE(v);
  auto d = v->resolve("/d");
  ASSERT_TRUE(d);
  EXPECT_TRUE(v->lookup(*d, "Straße.txt"));
  auto e = v->lookup(*d, "STRASSE.TXT");
  ASSERT_FALSE(e);
  EXPECT_EQ(e.error().code, Errc::not_found);
  EXPECT_NE(e.error().message.find("exact bytes"), std::string::npos) << e.error().message;
  EXPECT_EQ(utf8_nfdicf("A"), std::nullopt);
  EXPECT_EQ(dentry_hash_casefold("A", 0), dentry_hash("A"));
}

TEST_F(CasefoldImage, PlainDirectoriesStayExact) {
  auto v = open();
  ASSERT_TRUE(v);
  auto p = v->resolve("/plain");
  ASSERT_TRUE(p);
  EXPECT_FALSE(p->is_casefolded());
  EXPECT_TRUE(v->lookup(*p, "Straße.txt"));
  EXPECT_FALSE(v->lookup(*p, "STRASSE.TXT"));
}
