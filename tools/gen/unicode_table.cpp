// f2fscore-gen-unicode-table: writes the Unicode facts that casefolding
// needs (libf2fscore/src/reader/unicode_facts.hpp) as a C++ table, asked of
// the ICU of the machine it runs on (Debian: libicu-dev), for every code
// point U+0000..U+10FFFF.
//
//   f2fscore-gen-unicode-table OUTPUT.inc
//
// A build whose target has no ICU (the mingw-w64, s390x, i686 and aarch64
// cross builds) runs this on the build host and compiles the table in
// (F2FSCORE_CASEFOLD_TABLE; src/reader/unicode_facts_table.cpp reads it).
// The facts are ICU's answers, unfiltered: restricting them to Unicode 12.1
// is the folding code's job, the same for both sources. What it writes:
//
//   kAgeRuns, kIgnorableRuns, kCccRuns: runs covering U+0000..U+10FFFF, each
//     a uint32 (first code point << 8 | value) holding until the next run's
//     first: the age class (0 unassigned, 1 assigned in 12.1 or before,
//     2 assigned later; u_charAge), Default_Ignorable_Code_Point (0/1), the
//     canonical combining class (u_getCombiningClass);
//   kFoldRuns: code points whose full case folding (u_strFoldCase,
//     U_FOLD_CASE_DEFAULT) is one other code point, as runs {first, last,
//     step, delta}: first, first+step, ... last fold to themselves + delta;
//   kFoldLong: {code point, 2 or 3 code points} for longer foldings;
//   kDecompositions: the raw canonical decomposition (unorm2_getRawDecomposition
//     of NFD: one or two code points) of every code point but the Hangul
//     syllables U+AC00..U+D7A3, whose decomposition is arithmetic (Unicode
//     3.12) and done in code, each a uint64: cp << 42 | first << 21 | second
//     (second 0 for a singleton).
// The generator checks those assumptions (lengths, the Hangul arithmetic)
// and exits 1 if ICU answers otherwise. Exit 0 on success, 1 on a failure,
// 2 on usage errors.
#include <unicode/uchar.h>
#include <unicode/unorm2.h>
#include <unicode/ustring.h>
#include <unicode/utf16.h>
#include <unicode/uversion.h>

#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <iostream>
#include <sstream>
#include <string>
#include <vector>

namespace {

constexpr char32_t kLast = 0x10FFFF;
constexpr char32_t kHangulFirst = 0xAC00;
constexpr char32_t kHangulLast = 0xD7A3;

[[noreturn]] void fail(const std::string& what) {
  std::cerr << "f2fscore-gen-unicode-table: " << what << "\n";
  std::exit(1);
}

std::vector<char32_t> from_utf16(const UChar* s, std::int32_t n) {
  std::vector<char32_t> out;
  for (std::int32_t i = 0; i < n;) {
    UChar32 c;
    U16_NEXT(s, i, n, c);
    out.push_back(static_cast<char32_t>(c));
  }
  return out;
}

std::uint8_t age_class(char32_t c) {
  UVersionInfo age;
  u_charAge(static_cast<UChar32>(c), age);
  if (age[0] == 0 && age[1] == 0) return 0;
  return (age[0] < 12 || (age[0] == 12 && age[1] <= 1)) ? 1 : 2;
}

std::vector<char32_t> full_fold(char32_t c) {
  UChar src[2];
  std::int32_t n = 0;
  U16_APPEND_UNSAFE(src, n, static_cast<UChar32>(c));
  UChar dst[16];
  UErrorCode err = U_ZERO_ERROR;
  const std::int32_t m = u_strFoldCase(dst, 16, src, n, U_FOLD_CASE_DEFAULT, &err);
  if (U_FAILURE(err)) fail("u_strFoldCase failed");
  if (m == n && std::memcmp(dst, src, sizeof(UChar) * static_cast<std::size_t>(n)) == 0) return {};
  return from_utf16(dst, m);
}

std::vector<char32_t> raw_decomposition(const UNormalizer2* nfd, char32_t c) {
  UErrorCode err = U_ZERO_ERROR;
  UChar dst[32];
  const std::int32_t m = unorm2_getRawDecomposition(nfd, static_cast<UChar32>(c), dst, 32, &err);
  if (U_FAILURE(err)) fail("unorm2_getRawDecomposition failed");
  if (m < 0) return {};
  return from_utf16(dst, m);
}

// Unicode 3.12: an LV syllable gives L + V, an LVT syllable LV + T.
std::vector<char32_t> hangul_decomposition(char32_t c) {
  const char32_t s = c - kHangulFirst;
  if (s % 28 == 0) return {0x1100 + s / 588, 0x1161 + (s % 588) / 28};
  return {c - s % 28, 0x11A7 + s % 28};
}

std::string hex(char32_t c) {
  char buf[16];
  std::snprintf(buf, sizeof buf, "0x%04X", static_cast<unsigned>(c));
  return buf;
}

// Runs of one value over U+0000..U+10FFFF, printed as packed uint32s.
template <class F>
std::size_t write_runs(std::ostream& o, const char* name, F value) {
  std::ostringstream body;
  std::size_t rows = 0;
  int prev = -1;
  for (char32_t c = 0; c <= kLast; ++c) {
    const int v = value(c);
    if (v == prev) continue;
    body << (rows % 6 == 0 ? "\n    " : " ") << "0x" << std::hex << ((static_cast<std::uint32_t>(c) << 8) | static_cast<std::uint32_t>(v))
         << "u," << std::dec;
    ++rows;
    prev = v;
  }
  o << "inline constexpr std::uint32_t " << name << "[" << rows << "] = {" << body.str() << "\n};\n\n";
  return rows;
}

}  // namespace

int main(int argc, char** argv) {
  if (argc != 2) {
    std::cerr << "usage: f2fscore-gen-unicode-table OUTPUT.inc\n";
    return 2;
  }
  UErrorCode err = U_ZERO_ERROR;
  const UNormalizer2* nfd = unorm2_getNFDInstance(&err);
  if (U_FAILURE(err)) fail("no NFD normalizer");

  std::ostringstream o;
  o << "// Generated by f2fscore-gen-unicode-table (tools/gen/unicode_table.cpp) from ICU " << U_ICU_VERSION
    << " (Unicode " << U_UNICODE_VERSION << "). Do not edit.\n"
    << "// The layout of each table is described in that file.\n\n";
  std::size_t bytes = 0, rows = 0;

  std::size_t n = write_runs(o, "kAgeRuns", [](char32_t c) { return int{age_class(c)}; });
  rows += n, bytes += 4 * n;
  n = write_runs(o, "kIgnorableRuns", [](char32_t c) {
    return u_hasBinaryProperty(static_cast<UChar32>(c), UCHAR_DEFAULT_IGNORABLE_CODE_POINT) ? 1 : 0;
  });
  rows += n, bytes += 4 * n;
  n = write_runs(o, "kCccRuns", [](char32_t c) { return int{u_getCombiningClass(static_cast<UChar32>(c))}; });
  rows += n, bytes += 4 * n;

  // Case foldings.
  struct Run {
    char32_t first, last;
    std::uint32_t step;
    std::int64_t delta;
  };
  std::vector<Run> runs;
  std::ostringstream longs;
  std::size_t nlong = 0;
  for (char32_t c = 0; c <= kLast; ++c) {
    const auto f = full_fold(c);
    if (f.empty()) continue;
    if (f.size() > 3) fail("the folding of " + hex(c) + " is longer than 3 code points");
    if (f.size() > 1) {
      longs << "\n    {" << hex(c) << ", {" << hex(f[0]) << ", " << hex(f[1]) << ", " << hex(f.size() > 2 ? f[2] : 0)
            << "}},";
      ++nlong;
      continue;
    }
    const std::int64_t delta = static_cast<std::int64_t>(f[0]) - static_cast<std::int64_t>(c);
    if (!runs.empty()) {
      Run& r = runs.back();
      const char32_t gap = c - r.last;
      if (r.delta == delta && ((r.first == r.last && gap <= 2) || gap == r.step)) {
        r.step = gap;
        r.last = c;
        continue;
      }
    }
    runs.push_back({c, c, 1, delta});
  }
  o << "struct FoldRun {\n  std::uint32_t first, last;\n  std::int32_t delta;\n  std::uint32_t step;\n};\n"
    << "inline constexpr FoldRun kFoldRuns[" << runs.size() << "] = {";
  for (std::size_t i = 0; i < runs.size(); ++i)
    o << (i % 3 == 0 ? "\n    " : " ") << "{" << hex(runs[i].first) << ", " << hex(runs[i].last) << ", "
      << runs[i].delta << ", " << runs[i].step << "},";
  o << "\n};\n\n";
  rows += runs.size(), bytes += 16 * runs.size();
  o << "struct FoldLong {\n  std::uint32_t cp;\n  std::uint32_t to[3];\n};\n"
    << "inline constexpr FoldLong kFoldLong[" << nlong << "] = {" << longs.str() << "\n};\n\n";
  rows += nlong, bytes += 16 * nlong;

  // Canonical decompositions.
  std::ostringstream dec;
  std::size_t ndec = 0;
  for (char32_t c = 0; c <= kLast; ++c) {
    const auto d = raw_decomposition(nfd, c);
    if (c >= kHangulFirst && c <= kHangulLast) {
      if (d != hangul_decomposition(c)) fail("ICU decomposes Hangul syllable " + hex(c) + " otherwise");
      continue;
    }
    if (d.empty()) continue;
    if (d.size() > 2) fail("the raw decomposition of " + hex(c) + " is longer than 2 code points");
    const std::uint64_t v = (std::uint64_t{c} << 42) | (std::uint64_t{d[0]} << 21) | (d.size() > 1 ? d[1] : 0);
    char buf[32];
    std::snprintf(buf, sizeof buf, "0x%015llxu,", static_cast<unsigned long long>(v));
    dec << (ndec % 4 == 0 ? "\n    " : " ") << buf;
    ++ndec;
  }
  o << "inline constexpr std::uint64_t kDecompositions[" << ndec << "] = {" << dec.str() << "\n};\n\n";
  rows += ndec, bytes += 8 * ndec;
  o << "// " << rows << " rows, " << bytes << " bytes.\n";

  std::ofstream out(argv[1], std::ios::binary | std::ios::trunc);
  out << o.str();
  out.close();
  if (!out) fail(std::string("cannot write ") + argv[1]);
  std::cout << "f2fscore-gen-unicode-table: " << argv[1] << ": " << rows << " rows, " << bytes << " bytes (ICU "
            << U_ICU_VERSION << ")\n";
  return 0;
}
