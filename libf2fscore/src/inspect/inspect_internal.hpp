// Helpers shared by the inspect module's source files: JSON (nlohmann,
// private to the library), text formatting, names and tree walks.
#pragma once

#include <cstdarg>
#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json.hpp>

#include "f2fscore/inspect.hpp"

namespace f2fscore::inspect::detail {

using Json = nlohmann::ordered_json;

/// The document as printed: two-space indentation, a final newline;
/// invalid UTF-8 (never expected: names go through printable()) replaced.
std::string json_text(const Json& j);

/// One compact line of JSON (an element of a long list).
std::string json_line(const Json& j);
/// A document made of `head`'s fields followed by `key`: an array of
/// pre-rendered compact elements, one per line. Long lists (NAT, SIT, SSA,
/// map) are built this way so that a million entries never sit in a DOM.
std::string json_with_list(const Json& head, std::string_view key, const std::vector<std::string>& items,
                           const std::vector<std::string>& problems = {});

/// Appends printf-style text.
#if defined(__MINGW32__)  // GCC's "printf" is Microsoft's there; vsnprintf is mingw's C99 one (%zu, %llu)
void appendf(std::string& out, const char* fmt, ...) __attribute__((format(gnu_printf, 2, 3)));
#else
void appendf(std::string& out, const char* fmt, ...) __attribute__((format(printf, 2, 3)));
#endif

/// dump.f2fs's DISP_u32/DISP_u64 line: name padded to 30, two tabs, "[0x%8x : %u]".
void disp(std::string& out, std::string_view name, std::uint64_t value, std::string_view note = {});
/// A field shown as a string: "name<pad>\t\t[value]".
void disp_str(std::string& out, std::string_view name, std::string_view value);

/// Raw bytes made safe to print: valid UTF-8 without control characters is
/// kept; anything else (and backslash) becomes \xNN / \\.
std::string printable(std::string_view raw);
bool is_printable_utf8(std::string_view raw);
bool is_utf8(std::string_view raw);  ///< well-formed UTF-8 (JSON can carry it as is)
/// A name for JSON: the raw bytes when they are UTF-8, else printable().
std::string json_string(std::string_view raw);
std::string hex(const std::uint8_t* p, std::size_t n);
inline std::string hex(std::string_view s) {
  return hex(reinterpret_cast<const std::uint8_t*>(s.data()), s.size());
}
std::string base64(std::span<const std::uint8_t> data);

/// "2023-11-14 22:13:20" (UTC); with nsec, "2023-11-14T22:13:20.000000000Z".
std::string time_utc(std::uint64_t seconds);
std::string time_utc_ns(std::uint64_t seconds, std::uint32_t nsec);

/// Names of set bits from a table, unknown bits as 0x...
struct BitName {
  std::uint32_t bit;
  const char* name;
};
std::vector<std::string> bit_names(std::uint32_t value, std::span<const BitName> table);
std::string join(const std::vector<std::string>& v, std::string_view sep = " ");

std::vector<std::string> inode_flag_names(std::uint32_t i_flags);
std::vector<std::string> advise_names(std::uint8_t advise);
std::vector<std::string> inline_names(std::uint8_t i_inline);
std::string file_type_name(std::uint16_t mode);  ///< "regular", "directory", ...

/// "<errc>: message" of an Error, for problem lines.
std::string describe(const Error& e);

/// The current copy (0 or 1) of NAT block `block_off` and SIT block
/// `block_off`, from the checkpoint's version bitmaps (as the reader).
int nat_copy(Volume& vol, std::uint32_t block_off);
int sit_copy(Volume& vol, std::uint32_t block_off);
/// The NAT and SIT version bitmaps inside the checkpoint blocks.
std::span<const std::uint8_t> nat_version_bitmap(Volume& vol);
std::span<const std::uint8_t> sit_version_bitmap(Volume& vol);

/// A directory entry joined with its inode (if it could be read).
struct Entry {
  DirEntryInfo dirent;
  std::optional<InodeInfo> inode;
  std::string error;  ///< why inode is absent
};
/// Volume::read_dir() bounded by the directory's last mapped block (so a
/// corrupt i_size cannot make it visit billions of holes).
Result<std::vector<DirEntryInfo>> read_dir_bounded(Volume& vol, const InodeInfo& dir);
/// The entries of `dir` without "." and "..", sorted by name, inodes
/// read. "." or ".." entries naming a non-directory (only in corrupt
/// images) are kept, for callers to show or refuse.
Result<std::vector<Entry>> list_dir(Volume& vol, const InodeInfo& dir);

/// Joins a directory path and a name: ("/", "a") -> "/a"; ("/a", "b") -> "/a/b".
std::string child_path(const std::string& dir, std::string_view name);

}  // namespace f2fscore::inspect::detail
