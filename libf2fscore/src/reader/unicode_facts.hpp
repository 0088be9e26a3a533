// The Unicode facts casefolding asks per code point (casefold.cpp), behind
// one interface with two sources:
//
//   - icu_unicode_facts(): ICU (Debian: libicu-dev), on builds that find it
//     for their target (unicode_facts_icu.cpp);
//   - table_unicode_facts(): a table generated at build time from the build
//     host's ICU by tools/gen/unicode_table.cpp (unicode_facts_table.cpp),
//     for targets without ICU (the mingw-w64, s390x, i686 and aarch64 cross
//     builds), and on native builds beside ICU to test it against ICU.
//
// Both answer as the ICU they come from does, unrestricted: what Unicode 12.1
// (Linux's utf8-12.1) leaves out is decided by casefold.cpp, once for both.
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

namespace f2fscore::detail {

/// When a code point was assigned (u_charAge), as casefolding needs it.
enum class UnicodeAge : std::uint8_t {
  unassigned,  // not assigned in the source's Unicode version
  to_12_1,     // assigned in Unicode 12.1 or before
  after_12_1,  // assigned in a later version
};

/// One to three code points (a folding or a decomposition); size 0 = none.
struct CodePoints {
  char32_t cp[3] = {};
  std::uint8_t size = 0;

  friend bool operator==(const CodePoints& a, const CodePoints& b) {
    if (a.size != b.size) return false;
    for (std::uint8_t i = 0; i < a.size; ++i)
      if (a.cp[i] != b.cp[i]) return false;
    return true;
  }
};

/// The five questions, for any code point c in U+0000..U+10FFFF.
class UnicodeFacts {
 public:
  virtual ~UnicodeFacts() = default;
  /// u_charAge(c), classed.
  virtual UnicodeAge age(char32_t c) const = 0;
  /// Default_Ignorable_Code_Point (DerivedCoreProperties.txt).
  virtual bool default_ignorable(char32_t c) const = 0;
  /// Full case folding (CaseFolding.txt status C and F; u_strFoldCase with
  /// U_FOLD_CASE_DEFAULT) of c alone; size 0 when c folds to itself.
  virtual CodePoints full_fold(char32_t c) const = 0;
  /// The canonical decomposition mapping of c, one level deep
  /// (unorm2_getRawDecomposition of NFD: 1 or 2 code points; a Hangul LVT
  /// syllable gives LV + T); size 0 when none.
  virtual CodePoints raw_decomposition(char32_t c) const = 0;
  /// The canonical combining class (u_getCombiningClass), 0..254.
  virtual std::uint8_t combining_class(char32_t c) const = 0;
};

/// ICU's facts; nullptr in a build without ICU.
const UnicodeFacts* icu_unicode_facts() noexcept;
/// The generated table's facts; nullptr in a build without the table.
const UnicodeFacts* table_unicode_facts() noexcept;
/// What casefold.cpp uses: ICU's when built with it, else the table's;
/// nullptr in a build without either (casefold_supported() false).
const UnicodeFacts* default_unicode_facts() noexcept;

/// utf8_nfdicf(), casefold_name() and dentry_hash_casefold() of casefold.hpp
/// over the given facts (the public functions use default_unicode_facts()).
std::optional<std::string> utf8_nfdicf(const UnicodeFacts& facts, std::string_view s);
std::optional<std::string> casefold_name(const UnicodeFacts& facts, std::string_view name);
std::uint32_t dentry_hash_casefold(const UnicodeFacts& facts, std::string_view name);

}  // namespace f2fscore::detail
