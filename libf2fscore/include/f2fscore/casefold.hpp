// Casefolded file names, as Linux's f2fs handles them in directories with
// F2FS_CASEFOLD_FL on volumes formatted with `-O casefold -C utf8`
// (s_encoding 1: "utf8-12.1").
//
// Linux folds a name with its own Unicode 12.1 table ("nfdicf" in
// fs/unicode/utf8-norm.c). This module computes the same bytes from the
// Unicode data of ICU, a newer Unicode, restricted to what 12.1 knows; on
// targets without ICU (the cross builds) from a table generated from the
// build host's ICU (tools/gen/unicode_table.cpp), which gives the same
// answers:
//
//   - per code point: Default_Ignorable_Code_Point removed, else full case
//     folding (CaseFolding.txt status C and F; not the Turkic T), else the
//     canonical decomposition, applied recursively (Hangul included);
//   - then a stable sort by canonical combining class of every run of
//     non-starters (a removed ignorable counts as a starter, and the sort
//     uses the classes of the folded characters);
//   - code points unassigned in Unicode 12.1 (including those that ICU
//     knows from a later version, e.g. U+1F972 from 13.0, or U+A7C7 whose
//     13.0 case folding Linux does not have) pass unchanged, as starters;
//   - the input must be UTF-8 as Linux's table accepts it (shortest forms,
//     no surrogates, nothing above U+10FFFF, nothing cut short); as Linux,
//     a stray continuation byte after a complete character is copied
//     through rather than refused.
//
// When the library is built without casefolding (F2FSCORE_WITH_CASEFOLD=OFF:
// neither ICU nor F2FSCORE_CASEFOLD_TABLE), casefold_supported() is false, nothing
// folds, and casefolded directories are searched by exact bytes: names that
// Linux would find under another case or normalisation are not found.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

namespace f2fscore {

/// Whether this build folds names (built with ICU or the generated
/// Unicode table). When false,
/// utf8_nfdicf() and casefold_name() always return std::nullopt.
bool casefold_supported() noexcept;

/// The Unicode version whose assignments folding follows: 12.1.0, the
/// table of s_encoding 1. Code points assigned later pass unchanged.
inline constexpr int kCasefoldUnicodeMajor = 12;
inline constexpr int kCasefoldUnicodeMinor = 1;

/// Linux's utf8 "nfdicf" of `s` (what utf8_casefold() in
/// fs/unicode/utf8-core.c produces, without its length limit). Stops at a
/// NUL byte as Linux does. std::nullopt when `s` is not UTF-8 as Linux's
/// table accepts it (see above), or when casefolding is not built in.
/// An all-ignorable string folds to "".
std::optional<std::string> utf8_nfdicf(std::string_view s);

/// The folded form f2fs hashes and compares a name with
/// (f2fs_init_casefolded_name() in fs/f2fs/dir.c): utf8_nfdicf(name) when
/// it is 1 to 254 bytes long. std::nullopt when f2fs uses the raw bytes
/// instead: "." and "..", names that do not fold (invalid UTF-8), names
/// that fold to nothing (only ignorables) or to 255 bytes or more. On a
/// volume with the strict encoding flag (s_encoding_flags & 0x1) Linux
/// refuses such names (EINVAL) instead, "." and ".." aside.
std::optional<std::string> casefold_name(std::string_view name);

/// The dentry hash f2fs stores for `name` in a casefolded directory
/// (f2fs_hash_filename() in fs/f2fs/hash.c): the TEA hash of
/// casefold_name(name), or of the raw name when that is std::nullopt;
/// "." and ".." hash to 0. `encoding_flags` is s_encoding_flags; the hash
/// does not depend on it (under the strict flag Linux never stores names
/// without a folded form; for those this returns the raw-name hash).
std::uint32_t dentry_hash_casefold(std::string_view name, std::uint16_t encoding_flags);

/// Whether the on-disk name `entry` matches a lookup of a name whose
/// folded form is `folded` (casefold_name() of the name looked up), as
/// f2fs_match_ci_name() does: `entry` folds to the same bytes; if `entry`
/// does not fold (before differing), the raw bytes of `entry` are compared
/// with `folded` unless `encoding_flags` has the strict flag. The dentry
/// hash is checked separately. Without a folded form, f2fs compares raw
/// bytes (use `==`).
bool casefold_match(std::string_view folded, std::string_view entry, std::uint16_t encoding_flags);

}  // namespace f2fscore
