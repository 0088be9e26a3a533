// The Unicode facts behind casefolding (libf2fscore/src/reader/unicode_facts.hpp):
// the table generated from the build host's ICU (tools/gen/unicode_table.cpp),
// which the cross builds fold with, answers every question for every code
// point exactly as ICU does, and folds and hashes names to the same bytes.
// Needs a native build with both (F2FSCORE_CASEFOLD_GENERATE_TABLE, on by
// default with ICU); the cross builds, which have only the table, skip the
// comparisons and run the Hangul arithmetic check and casefold_test.cpp's
// Linux values instead.
#include <gtest/gtest.h>

#include <cstdint>
#include <sstream>
#include <string>
#include <vector>

#include "f2fscore/casefold.hpp"
#include "reader/unicode_facts.hpp"
#include "util/text.hpp"

using namespace f2fscore;
using namespace f2fscore::detail;

namespace {

constexpr char32_t kLastCodePoint = 0x10FFFF;

std::string show(const CodePoints& p) {
  std::ostringstream o;
  o << "[";
  for (std::uint8_t i = 0; i < p.size; ++i) o << (i ? " " : "") << std::hex << static_cast<std::uint32_t>(p.cp[i]);
  return o.str() + "]";
}

using detail::append_utf8;

std::string utf8(std::initializer_list<char32_t> cps) {
  std::string s;
  for (char32_t c : cps) append_utf8(s, c);
  return s;
}

#define REQUIRE_BOTH(icu, table)                                                                      \
  const UnicodeFacts* icu = icu_unicode_facts();                                                      \
  const UnicodeFacts* table = table_unicode_facts();                                                  \
  if (icu == nullptr) GTEST_SKIP() << "built without ICU: nothing to compare the table with";        \
  if (table == nullptr) GTEST_SKIP() << "built without the table (F2FSCORE_CASEFOLD_GENERATE_TABLE=OFF)"

}  // namespace

TEST(UnicodeFacts, TableAnswersAsIcuForEveryCodePoint) {
  REQUIRE_BOTH(icu, table);
  std::size_t mismatches = 0, folds = 0, decompositions = 0, marks = 0, ignorables = 0, to_12_1 = 0;
  const auto report = [&](char32_t c, const char* what, const std::string& a, const std::string& b) {
    if (++mismatches <= 20)
      ADD_FAILURE() << "U+" << std::hex << static_cast<std::uint32_t>(c) << " " << what << ": ICU " << a << ", table "
                    << b;
  };
  for (char32_t c = 0; c <= kLastCodePoint; ++c) {
    const UnicodeAge a = icu->age(c), b = table->age(c);
    if (a != b) report(c, "age", std::to_string(static_cast<int>(a)), std::to_string(static_cast<int>(b)));
    to_12_1 += a == UnicodeAge::to_12_1;
    const bool ia = icu->default_ignorable(c), ib = table->default_ignorable(c);
    if (ia != ib) report(c, "Default_Ignorable_Code_Point", std::to_string(ia), std::to_string(ib));
    ignorables += ia;
    const CodePoints fa = icu->full_fold(c), fb = table->full_fold(c);
    if (!(fa == fb)) report(c, "full folding", show(fa), show(fb));
    folds += fa.size != 0;
    const CodePoints da = icu->raw_decomposition(c), db = table->raw_decomposition(c);
    if (!(da == db)) report(c, "raw decomposition", show(da), show(db));
    decompositions += da.size != 0;
    const std::uint8_t ca = icu->combining_class(c), cb = table->combining_class(c);
    if (ca != cb) report(c, "combining class", std::to_string(ca), std::to_string(cb));
    marks += ca != 0;
  }
  EXPECT_EQ(mismatches, 0u);
  // Lower bounds, so that a comparison of two empty answers cannot pass:
  // 137,468 private-use code points alone are assigned by Unicode 2.0.
  EXPECT_GT(to_12_1, 270000u);  // with 137,000+ characters (Unicode 12.1)
  EXPECT_GE(folds, 1400u);            // CaseFolding.txt C + F entries: 1,400+ in 12.1
  EXPECT_GE(decompositions, 13000u);  // 2,000+ listed + 11,172 Hangul syllables
  EXPECT_GE(marks, 800u);
  EXPECT_GE(ignorables, 4000u);  // U+E0000..U+E0FFF alone are 4,096
}

TEST(UnicodeFacts, TableFoldsAndHashesNamesAsIcu) {
  REQUIRE_BOTH(icu, table);
  std::vector<std::string> names;
  // Every code point, alone and between a capital and a mark.
  for (char32_t c = 0x1; c <= kLastCodePoint; ++c) {
    if (c >= 0xD800 && c <= 0xDFFF) continue;
    std::string s = "A";
    append_utf8(s, c);
    append_utf8(s, 0x0301);
    names.push_back(std::move(s));
  }
  // Runs of marks in mixed classes, ignorables inside them, stray bytes,
  // Hangul, code points assigned after 12.1, invalid UTF-8.
  names.push_back(utf8({'E', 0x0301, 0x0327, 0x0316, 0x0300, 0x05B0}));
  names.push_back(utf8({0x1E9E, 0x00DF, 0x0390, 0x1F88, 0xFB03}));
  names.push_back(utf8({'a', 0x0301, 0x200B, 0x0327, 0xAD, 0x0316}));
  names.push_back(utf8({0xD4DB, 0xAC00, 0x1100, 0x1161, 0x11A8, 0xD7A3}));
  names.push_back(utf8({0x1F972, 0xA7C7, 0x180F, 0x0301, 0xE0001}));
  names.push_back("a\xcc\x81\x80\xcc\xa7");
  names.push_back("\xc3\x28");
  names.push_back("ok\xed\xa0\x80");
  names.push_back(".");
  names.push_back("..");
  names.push_back(utf8({0x200B, '.'}));
  std::size_t differ = 0;
  for (const auto& n : names) {
    const auto fa = utf8_nfdicf(*icu, n), fb = utf8_nfdicf(*table, n);
    const auto ha = dentry_hash_casefold(*icu, n), hb = dentry_hash_casefold(*table, n);
    if (fa != fb || ha != hb) {
      if (++differ <= 20) ADD_FAILURE() << "name " << ::testing::PrintToString(n) << " folds or hashes differently";
    }
  }
  EXPECT_EQ(differ, 0u) << "of " << names.size() << " names";
}

// Unicode 3.12 "Hangul Syllable Decomposition", worked examples: U+D4DB
// is LVT (U+D4CC + U+11B6), U+D4CC is LV (U+1111 + U+1171). Runs on every
// build that folds, with the facts it folds with.
TEST(UnicodeFacts, HangulSyllablesDecomposeAsTheStandardSays) {
  const UnicodeFacts* u = default_unicode_facts();
  if (u == nullptr) GTEST_SKIP() << "built without casefolding (F2FSCORE_WITH_CASEFOLD=OFF)";
  const CodePoints lvt = u->raw_decomposition(0xD4DB);
  ASSERT_EQ(lvt.size, 2u);
  EXPECT_EQ(lvt.cp[0], U'\uD4CC');
  EXPECT_EQ(lvt.cp[1], U'\u11B6');
  const CodePoints lv = u->raw_decomposition(0xD4CC);
  ASSERT_EQ(lv.size, 2u);
  EXPECT_EQ(lv.cp[0], U'\u1111');
  EXPECT_EQ(lv.cp[1], U'\u1171');
  EXPECT_EQ(utf8_nfdicf(utf8({0xD4DB})), utf8({0x1111, 0x1171, 0x11B6}));
  EXPECT_EQ(u->raw_decomposition(0xD7A4).size, 0u);  // one past the last syllable
}
