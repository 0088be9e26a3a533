// Casefolding of names in casefolded directories, with ICU standing in for
// Linux's Unicode 12.1 table (see casefold.hpp for the rules).
//
// The folding runs in two steps. First the name is cut into items: each
// code point becomes the characters of its fold (each with its combining
// class), an ignorable becomes an empty item that still separates runs of
// marks, and a continuation byte that follows a complete character is kept
// as a stray byte. Then the items are emitted with the ordering rule of
// utf8byte() in fs/unicode/utf8-norm.c: a run of non-starters is emitted
// class by class in rising order, each class in input order, and Linux's
// cursor hands out stray bytes every time it walks over them, so a stray
// byte inside such a run comes out once per pass (one scan plus one pass
// per class). Linux accepts such names, so the same bytes must come out
// here for the hashes to agree.
#include "f2fscore/casefold.hpp"

#include <algorithm>
#include <cstring>
#include <vector>

#include "f2fscore/checksum.hpp"
#include "f2fscore/disk/constants.hpp"
#include "f2fscore/disk/node.hpp"
#include "util/text.hpp"

#ifndef F2FSCORE_HAVE_CASEFOLD
#define F2FSCORE_HAVE_CASEFOLD 0
#endif
#if F2FSCORE_HAVE_CASEFOLD
#include <unicode/uchar.h>
#include <unicode/unorm2.h>
#include <unicode/ustring.h>
#include <unicode/utf16.h>
#endif

namespace f2fscore {

namespace {

// The TEA hash of the one- and two-byte names "." and "..": f2fs hashes a
// folded name even when it reads "." (from U+200B "."), while dentry_hash()
// gives the dot entries 0.
constexpr std::uint32_t kTeaHashOfDot = 0x31fd669d;
constexpr std::uint32_t kTeaHashOfDotDot = 0xbc44b5bf;

bool is_dot_or_dotdot(std::string_view s) { return s == "." || s == ".."; }

std::uint32_t tea_hash(std::string_view s) {
  if (s == ".") return kTeaHashOfDot;
  if (s == "..") return kTeaHashOfDotDot;
  return dentry_hash(s);
}

#if F2FSCORE_HAVE_CASEFOLD

using detail::append_utf8;

// Decodes the character at s[i] if Linux's table has a leaf for it: the
// shortest form, no surrogates, at most U+10FFFF, complete within s.
// Returns its length, or 0 if the sequence is not valid.
std::size_t decode_utf8(std::string_view s, std::size_t i, char32_t& cp) {
  const auto byte = [&](std::size_t k) { return static_cast<unsigned char>(s[k]); };
  const unsigned char b0 = byte(i);
  if (b0 < 0x80) {
    cp = b0;
    return 1;
  }
  std::size_t n;
  unsigned char lo = 0x80, hi = 0xBF;  // allowed range of the second byte
  if (b0 >= 0xC2 && b0 <= 0xDF) {
    n = 2;
    cp = b0 & 0x1Fu;
  } else if (b0 >= 0xE0 && b0 <= 0xEF) {
    n = 3;
    cp = b0 & 0x0Fu;
    if (b0 == 0xE0) lo = 0xA0;
    if (b0 == 0xED) hi = 0x9F;  // U+D800..U+DFFF
  } else if (b0 >= 0xF0 && b0 <= 0xF4) {
    n = 4;
    cp = b0 & 0x07u;
    if (b0 == 0xF0) lo = 0x90;
    if (b0 == 0xF4) hi = 0x8F;
  } else {
    return 0;  // C0, C1 (overlong) and F5..FF; continuation bytes are handled by the caller
  }
  if (s.size() - i < n) return 0;
  for (std::size_t k = 1; k < n; ++k) {
    const unsigned char b = byte(i + k);
    if (k == 1 ? (b < lo || b > hi) : (b < 0x80 || b > 0xBF)) return 0;
    cp = (cp << 6) | (b & 0x3Fu);
  }
  return n;
}

// --- What Unicode 12.1 says about one code point, from ICU ------------------

// Assigned in Unicode 12.1 (u_charAge is 0.0 for unassigned code points).
bool known_to_12_1(char32_t c) {
  UVersionInfo age;
  u_charAge(static_cast<UChar32>(c), age);
  if (age[0] == 0 && age[1] == 0) return false;
  return age[0] < kCasefoldUnicodeMajor || (age[0] == kCasefoldUnicodeMajor && age[1] <= kCasefoldUnicodeMinor);
}

bool assigned_after_12_1(char32_t c) {
  UVersionInfo age;
  u_charAge(static_cast<UChar32>(c), age);
  return age[0] > kCasefoldUnicodeMajor || (age[0] == kCasefoldUnicodeMajor && age[1] > kCasefoldUnicodeMinor);
}

// Default_Ignorable_Code_Point as in 12.1's DerivedCoreProperties.txt. That
// list covers unassigned ranges too (U+2065, U+FFF0..U+FFF8, U+E0000..
// U+E0FFF), which Linux removes like assigned ignorables; a code point that
// was only assigned (and made ignorable) later, such as U+180F in 14.0,
// stays.
bool ignorable_in_12_1(char32_t c) {
  return u_hasBinaryProperty(static_cast<UChar32>(c), UCHAR_DEFAULT_IGNORABLE_CODE_POINT) && !assigned_after_12_1(c);
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

// Full case folding (C + F) of one code point; empty if it folds to itself.
std::vector<char32_t> full_fold(char32_t c) {
  UChar src[2];
  std::int32_t n = 0;
  U16_APPEND_UNSAFE(src, n, static_cast<UChar32>(c));
  UChar dst[16];
  UErrorCode err = U_ZERO_ERROR;
  const std::int32_t m = u_strFoldCase(dst, 16, src, n, U_FOLD_CASE_DEFAULT, &err);
  if (U_FAILURE(err) || (m == n && std::memcmp(dst, src, sizeof(UChar) * static_cast<std::size_t>(n)) == 0)) return {};
  return from_utf16(dst, m);
}

// The canonical decomposition mapping of one code point, one level deep
// (as listed in UnicodeData.txt; Hangul LVT gives LV + T); empty if none.
std::vector<char32_t> raw_decomposition(char32_t c) {
  UErrorCode err = U_ZERO_ERROR;
  const UNormalizer2* nfd = unorm2_getNFDInstance(&err);
  if (U_FAILURE(err)) return {};
  UChar dst[32];
  const std::int32_t m = unorm2_getRawDecomposition(nfd, static_cast<UChar32>(c), dst, 32, &err);
  if (U_FAILURE(err) || m < 0) return {};
  return from_utf16(dst, m);
}

// What one code point becomes (the "nfdicf" leaf of Linux's table): an
// ignorable nothing; a case folding or else a canonical decomposition,
// each of its characters treated the same way; otherwise itself.
void fold_code_point(char32_t c, std::vector<char32_t>& out, int depth = 0) {
  if (ignorable_in_12_1(c)) return;
  if (!known_to_12_1(c) || depth > 8) {
    out.push_back(c);
    return;
  }
  auto m = full_fold(c);
  if (m.empty()) m = raw_decomposition(c);
  if (m.empty()) {
    out.push_back(c);
    return;
  }
  for (char32_t x : m) fold_code_point(x, out, depth + 1);
}

std::uint8_t combining_class(char32_t c) {
  if (!known_to_12_1(c)) return 0;  // Linux's leaf of an unknown code point: class 0
  return u_getCombiningClass(static_cast<UChar32>(c));
}

// --- The two steps ----------------------------------------------------------

struct Item {
  enum Kind : std::uint8_t { character, ignorable, stray_byte, invalid } kind;
  std::uint8_t ccc;  // character: its combining class
  char32_t value;    // character: the code point; stray_byte: the byte
};

bool is_starter(const Item& it) {
  return it.kind == Item::ignorable || (it.kind == Item::character && it.ccc == 0);
}

// Cuts `s` into items; an invalid sequence ends the list with an `invalid`
// item (Linux fails only when its cursor reaches that point).
std::vector<Item> itemize(std::string_view s) {
  std::vector<Item> items;
  std::vector<char32_t> folded;
  for (std::size_t i = 0; i < s.size() && s[i] != '\0';) {
    const auto b = static_cast<unsigned char>(s[i]);
    if ((b & 0xC0) == 0x80) {
      items.push_back({Item::stray_byte, 0, b});
      ++i;
      continue;
    }
    char32_t cp = 0;
    const std::size_t n = decode_utf8(s, i, cp);
    if (n == 0) {
      items.push_back({Item::invalid, 0, 0});
      break;
    }
    i += n;
    folded.clear();
    fold_code_point(cp, folded);
    if (folded.empty()) items.push_back({Item::ignorable, 0, cp});
    for (char32_t x : folded) items.push_back({Item::character, combining_class(x), x});
  }
  return items;
}

struct Folded {
  std::string bytes;  // everything emitted, up to the failure if any
  bool ok = true;
};

// Emits the items in Linux's order.
Folded emit(const std::vector<Item>& items) {
  Folded f;
  const std::size_t n = items.size();
  const auto put = [&](const Item& it) {
    if (it.kind == Item::stray_byte)
      f.bytes += static_cast<char>(it.value);
    else
      append_utf8(f.bytes, it.value);
  };
  std::size_t pos = 0;
  while (pos < n) {
    const Item& it = items[pos];
    if (it.kind == Item::invalid) {
      f.ok = false;
      return f;
    }
    if (it.kind != Item::character || it.ccc == 0) {
      if (it.kind != Item::ignorable) put(it);
      ++pos;
      continue;
    }
    // A run of non-starters up to the next starter: a scan pass (which
    // meets any invalid sequence first and hands out stray bytes), then one
    // pass per class present.
    std::size_t end = pos;
    std::vector<std::uint8_t> classes;
    for (; end < n && !is_starter(items[end]); ++end) {
      if (items[end].kind == Item::invalid) {
        f.ok = false;
        return f;
      }
      if (items[end].kind == Item::stray_byte)
        put(items[end]);
      else
        classes.push_back(items[end].ccc);
    }
    std::sort(classes.begin(), classes.end());
    classes.erase(std::unique(classes.begin(), classes.end()), classes.end());
    for (std::uint8_t ccc : classes)
      for (std::size_t k = pos; k < end; ++k)
        if (items[k].kind == Item::stray_byte || items[k].ccc == ccc) put(items[k]);
    pos = end;
  }
  return f;
}

Folded fold(std::string_view s) {
  // Linux's cursor refuses a string that starts with a continuation byte.
  if (!s.empty() && (static_cast<unsigned char>(s[0]) & 0xC0) == 0x80) return {{}, false};
  return emit(itemize(s));
}

#endif  // F2FSCORE_HAVE_CASEFOLD

}  // namespace

bool casefold_supported() noexcept { return F2FSCORE_HAVE_CASEFOLD != 0; }

std::optional<std::string> utf8_nfdicf(std::string_view s) {
#if F2FSCORE_HAVE_CASEFOLD
  auto f = fold(s);
  if (!f.ok) return std::nullopt;
  return std::move(f.bytes);
#else
  (void)s;
  return std::nullopt;
#endif
}

std::optional<std::string> casefold_name(std::string_view name) {
  if (is_dot_or_dotdot(name)) return std::nullopt;
  auto f = utf8_nfdicf(name);
  // utf8_casefold() into an F2FS_NAME_LEN buffer: the terminating NUL must
  // fit too, and a length of 0 counts as a failure in f2fs.
  if (!f || f->empty() || f->size() >= disk::kNameLen) return std::nullopt;
  return f;
}

std::uint32_t dentry_hash_casefold(std::string_view name, std::uint16_t encoding_flags) {
  (void)encoding_flags;
  if (is_dot_or_dotdot(name)) return 0;
  if (auto f = casefold_name(name)) return tea_hash(*f);
  return dentry_hash(name);
}

bool casefold_match(std::string_view folded, std::string_view entry, std::uint16_t encoding_flags) {
#if F2FSCORE_HAVE_CASEFOLD
  // utf8_strncasecmp_folded(): compare the entry's fold byte by byte with
  // the NUL-terminated folded name; a difference ends it, and only a
  // failure reached before any difference is an error.
  const Folded f = fold(entry);
  const std::size_t common = std::min(f.bytes.size(), folded.size());
  if (std::memcmp(f.bytes.data(), folded.data(), common) != 0) return false;
  if (f.ok) return f.bytes.size() == folded.size();
  if (f.bytes.size() > folded.size()) return false;  // differed at the NUL
  if (encoding_flags & disk::kEncStrictModeFl) return false;
  return folded == entry;  // not foldable: f2fs falls back to the raw bytes
#else
  (void)encoding_flags;
  return folded == entry;
#endif
}

}  // namespace f2fscore
