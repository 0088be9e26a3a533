// Casefolding of names in casefolded directories, with ICU or a table
// generated from ICU standing in for Linux's Unicode 12.1 table (see
// casefold.hpp for the rules). The Unicode facts come through
// unicode_facts.hpp; what Unicode 12.1 keeps of them is decided here.
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
#include "reader/unicode_facts.hpp"
#include "util/text.hpp"

#ifndef F2FSCORE_HAVE_ICU
#define F2FSCORE_HAVE_ICU 0
#endif
#ifndef F2FSCORE_HAVE_UNICODE_TABLE
#define F2FSCORE_HAVE_UNICODE_TABLE 0
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

using detail::append_utf8;
using detail::CodePoints;
using detail::UnicodeAge;
using detail::UnicodeFacts;

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

// --- What Unicode 12.1 says about one code point ---------------------------

// Assigned in Unicode 12.1.
bool known_to_12_1(const UnicodeFacts& u, char32_t c) { return u.age(c) == UnicodeAge::to_12_1; }

// Default_Ignorable_Code_Point as in 12.1's DerivedCoreProperties.txt. That
// list covers unassigned ranges too (U+2065, U+FFF0..U+FFF8, U+E0000..
// U+E0FFF), which Linux removes like assigned ignorables; a code point that
// was only assigned (and made ignorable) later, such as U+180F in 14.0,
// stays.
bool ignorable_in_12_1(const UnicodeFacts& u, char32_t c) {
  return u.default_ignorable(c) && u.age(c) != UnicodeAge::after_12_1;
}

// What one code point becomes (the "nfdicf" leaf of Linux's table): an
// ignorable nothing; a case folding or else a canonical decomposition,
// each of its characters treated the same way; otherwise itself.
void fold_code_point(const UnicodeFacts& u, char32_t c, std::vector<char32_t>& out, int depth = 0) {
  if (ignorable_in_12_1(u, c)) return;
  if (!known_to_12_1(u, c) || depth > 8) {
    out.push_back(c);
    return;
  }
  CodePoints m = u.full_fold(c);
  if (m.size == 0) m = u.raw_decomposition(c);
  if (m.size == 0) {
    out.push_back(c);
    return;
  }
  for (std::uint8_t i = 0; i < m.size; ++i) fold_code_point(u, m.cp[i], out, depth + 1);
}

std::uint8_t combining_class(const UnicodeFacts& u, char32_t c) {
  if (!known_to_12_1(u, c)) return 0;  // Linux's leaf of an unknown code point: class 0
  return u.combining_class(c);
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
std::vector<Item> itemize(const UnicodeFacts& u, std::string_view s) {
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
    fold_code_point(u, cp, folded);
    if (folded.empty()) items.push_back({Item::ignorable, 0, cp});
    for (char32_t x : folded) items.push_back({Item::character, combining_class(u, x), x});
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

Folded fold(const UnicodeFacts& u, std::string_view s) {
  // Linux's cursor refuses a string that starts with a continuation byte.
  if (!s.empty() && (static_cast<unsigned char>(s[0]) & 0xC0) == 0x80) return {{}, false};
  return emit(itemize(u, s));
}

}  // namespace

namespace detail {

#if !F2FSCORE_HAVE_ICU
const UnicodeFacts* icu_unicode_facts() noexcept { return nullptr; }
#endif
#if !F2FSCORE_HAVE_UNICODE_TABLE
const UnicodeFacts* table_unicode_facts() noexcept { return nullptr; }
#endif

const UnicodeFacts* default_unicode_facts() noexcept {
  if (const UnicodeFacts* u = icu_unicode_facts()) return u;
  return table_unicode_facts();
}

std::optional<std::string> utf8_nfdicf(const UnicodeFacts& facts, std::string_view s) {
  auto f = fold(facts, s);
  if (!f.ok) return std::nullopt;
  return std::move(f.bytes);
}

std::optional<std::string> casefold_name(const UnicodeFacts& facts, std::string_view name) {
  if (is_dot_or_dotdot(name)) return std::nullopt;
  auto f = utf8_nfdicf(facts, name);
  // utf8_casefold() into an F2FS_NAME_LEN buffer: the terminating NUL must
  // fit too, and a length of 0 counts as a failure in f2fs.
  if (!f || f->empty() || f->size() >= disk::kNameLen) return std::nullopt;
  return f;
}

std::uint32_t dentry_hash_casefold(const UnicodeFacts& facts, std::string_view name) {
  if (is_dot_or_dotdot(name)) return 0;
  if (auto f = casefold_name(facts, name)) return tea_hash(*f);
  return dentry_hash(name);
}

}  // namespace detail

bool casefold_supported() noexcept { return detail::default_unicode_facts() != nullptr; }

std::optional<std::string> utf8_nfdicf(std::string_view s) {
  if (const UnicodeFacts* u = detail::default_unicode_facts()) return detail::utf8_nfdicf(*u, s);
  return std::nullopt;
}

std::optional<std::string> casefold_name(std::string_view name) {
  if (const UnicodeFacts* u = detail::default_unicode_facts()) return detail::casefold_name(*u, name);
  return std::nullopt;
}

std::uint32_t dentry_hash_casefold(std::string_view name, std::uint16_t encoding_flags) {
  (void)encoding_flags;
  if (const UnicodeFacts* u = detail::default_unicode_facts()) return detail::dentry_hash_casefold(*u, name);
  if (is_dot_or_dotdot(name)) return 0;
  return dentry_hash(name);
}

bool casefold_match(std::string_view folded, std::string_view entry, std::uint16_t encoding_flags) {
  const UnicodeFacts* u = detail::default_unicode_facts();
  if (u == nullptr) return folded == entry;
  // utf8_strncasecmp_folded(): compare the entry's fold byte by byte with
  // the NUL-terminated folded name; a difference ends it, and only a
  // failure reached before any difference is an error.
  const Folded f = fold(*u, entry);
  const std::size_t common = std::min(f.bytes.size(), folded.size());
  if (std::memcmp(f.bytes.data(), folded.data(), common) != 0) return false;
  if (f.ok) return f.bytes.size() == folded.size();
  if (f.bytes.size() > folded.size()) return false;  // differed at the NUL
  if (encoding_flags & disk::kEncStrictModeFl) return false;
  return folded == entry;  // not foldable: f2fs falls back to the raw bytes
}

}  // namespace f2fscore
