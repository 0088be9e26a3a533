// The Unicode facts of casefolding (unicode_facts.hpp) from ICU.
#include <unicode/uchar.h>
#include <unicode/unorm2.h>
#include <unicode/ustring.h>
#include <unicode/utf16.h>

#include <cstring>

#include "f2fscore/casefold.hpp"
#include "reader/unicode_facts.hpp"

namespace f2fscore::detail {

namespace {

// Up to three code points of a UTF-16 string; size 0 if it holds more.
CodePoints from_utf16(const UChar* s, std::int32_t n) {
  CodePoints out;
  for (std::int32_t i = 0; i < n;) {
    UChar32 c;
    U16_NEXT(s, i, n, c);
    if (out.size == 3) return {};
    out.cp[out.size++] = static_cast<char32_t>(c);
  }
  return out;
}

class IcuFacts final : public UnicodeFacts {
 public:
  UnicodeAge age(char32_t c) const override {
    UVersionInfo age;
    u_charAge(static_cast<UChar32>(c), age);
    if (age[0] == 0 && age[1] == 0) return UnicodeAge::unassigned;  // 0.0 for unassigned code points
    if (age[0] < kCasefoldUnicodeMajor || (age[0] == kCasefoldUnicodeMajor && age[1] <= kCasefoldUnicodeMinor))
      return UnicodeAge::to_12_1;
    return UnicodeAge::after_12_1;
  }

  bool default_ignorable(char32_t c) const override {
    return u_hasBinaryProperty(static_cast<UChar32>(c), UCHAR_DEFAULT_IGNORABLE_CODE_POINT);
  }

  CodePoints full_fold(char32_t c) const override {
    UChar src[2];
    std::int32_t n = 0;
    U16_APPEND_UNSAFE(src, n, static_cast<UChar32>(c));
    UChar dst[16];
    UErrorCode err = U_ZERO_ERROR;
    const std::int32_t m = u_strFoldCase(dst, 16, src, n, U_FOLD_CASE_DEFAULT, &err);
    if (U_FAILURE(err) || (m == n && std::memcmp(dst, src, sizeof(UChar) * static_cast<std::size_t>(n)) == 0))
      return {};
    return from_utf16(dst, m);
  }

  CodePoints raw_decomposition(char32_t c) const override {
    UErrorCode err = U_ZERO_ERROR;
    const UNormalizer2* nfd = unorm2_getNFDInstance(&err);
    if (U_FAILURE(err)) return {};
    UChar dst[32];
    const std::int32_t m = unorm2_getRawDecomposition(nfd, static_cast<UChar32>(c), dst, 32, &err);
    if (U_FAILURE(err) || m < 0) return {};
    return from_utf16(dst, m);
  }

  std::uint8_t combining_class(char32_t c) const override { return u_getCombiningClass(static_cast<UChar32>(c)); }
};

}  // namespace

const UnicodeFacts* icu_unicode_facts() noexcept {
  static const IcuFacts facts;
  return &facts;
}

}  // namespace f2fscore::detail
