// The inspect module's shared pieces: argument parsing, names, text and
// JSON helpers, finding inodes and their paths.
#include <algorithm>
#include <cinttypes>
#include <cstdio>
#include <cstring>
#include <deque>
#include <unordered_set>

#include "f2fscore/disk/constants.hpp"
#include "f2fscore/endian.hpp"
#include "inspect/inspect_internal.hpp"

namespace f2fscore::inspect {

using namespace disk;
using namespace detail;

// ------------------------------------------------------------ arguments

Result<std::uint64_t> parse_number(std::string_view t) {
  auto bad = [&] { return make_error(Errc::invalid_argument, "\"" + std::string(t) + "\" is not a number"); };
  if (t.empty()) return bad();
  std::uint64_t v = 0;
  if (t.size() > 2 && t[0] == '0' && (t[1] == 'x' || t[1] == 'X')) {
    if (t.size() > 18) return bad();
    for (char c : t.substr(2)) {
      unsigned d;
      if (c >= '0' && c <= '9') d = static_cast<unsigned>(c - '0');
      else if (c >= 'a' && c <= 'f') d = static_cast<unsigned>(c - 'a' + 10);
      else if (c >= 'A' && c <= 'F') d = static_cast<unsigned>(c - 'A' + 10);
      else return bad();
      v = v << 4 | d;
    }
    return v;
  }
  for (char c : t) {
    if (c < '0' || c > '9') return bad();
    const auto d = static_cast<std::uint64_t>(c - '0');
    if (v > (~std::uint64_t{0} - d) / 10) return bad();
    v = v * 10 + d;
  }
  return v;
}

Result<Range> parse_range(std::string_view t) {
  const auto tilde = t.find('~');
  Range r;
  auto first = parse_number(t.substr(0, tilde));
  if (!first) return make_error(Errc::invalid_argument, "range \"" + std::string(t) + "\": expected A~B, A~ or A");
  r.first = *first;
  if (tilde == std::string_view::npos) {
    r.last = r.first;
    return r;
  }
  const std::string_view end = t.substr(tilde + 1);
  if (end.empty() || end == "-1") return r;  // to the last
  auto last = parse_number(end);
  if (!last) return make_error(Errc::invalid_argument, "range \"" + std::string(t) + "\": expected A~B, A~ or A");
  if (*last < r.first)
    return make_error(Errc::invalid_argument, "range \"" + std::string(t) + "\": the end is before the start");
  r.last = *last;
  return r;
}

namespace {
bool looks_numeric(std::string_view s) {
  if (s.empty()) return false;
  if (s.size() > 2 && s[0] == '0' && (s[1] == 'x' || s[1] == 'X')) return true;
  return std::all_of(s.begin(), s.end(), [](char c) { return c >= '0' && c <= '9'; });
}
}  // namespace

Result<InodeInfo> find_inode(Volume& vol, std::string_view spec) {
  if (looks_numeric(spec)) {
    auto n = parse_number(spec);
    if (!n) return make_error(n.error());
    if (*n >= vol.max_nid())
      return make_error(Errc::invalid_argument, "inode " + std::to_string(*n) + " is past the NAT (" +
                                                    std::to_string(vol.max_nid()) + " nids)");
    return vol.read_inode(static_cast<nid_t>(*n));
  }
  if (spec.empty()) return make_error(Errc::invalid_argument, "empty path");
  if (spec[0] == '/') return vol.resolve(spec);
  return vol.resolve("/" + std::string(spec));
}

Result<std::optional<std::string>> path_of(Volume& vol, nid_t ino) {
  const nid_t root = vol.superblock().root_ino.get();
  if (ino == root) return std::optional<std::string>("/");
  // Fast path: i_pino and i_name up to the root, each step checked.
  {
    std::vector<std::string> parts;
    std::unordered_set<nid_t> seen;
    nid_t cur = ino;
    for (int steps = 0; steps < 4096; ++steps) {
      if (!seen.insert(cur).second) break;
      auto in = vol.read_inode(cur);
      if (!in) break;
      const std::uint32_t len = in->raw.i.i_namelen.get();
      const nid_t pino = in->raw.i.i_pino.get();
      if (len == 0 || len > kNameLen || pino == 0) break;
      std::string name(reinterpret_cast<const char*>(in->raw.i.i_name), len);
      auto parent = vol.read_inode(pino);
      if (!parent || !parent->is_dir()) break;
      auto e = vol.lookup(*parent, name);
      if (!e || e->ino != cur) break;
      parts.push_back(std::move(name));
      if (pino == root) {
        std::string p;
        for (auto it = parts.rbegin(); it != parts.rend(); ++it) p += "/" + *it;
        return std::optional<std::string>(p);
      }
      cur = pino;
    }
  }
  // Slow path: breadth-first over the tree.
  auto r = vol.read_inode(root);
  if (!r) return make_error(r.error());
  std::deque<std::pair<nid_t, std::string>> queue{{root, "/"}};
  std::unordered_set<nid_t> visited{root};
  while (!queue.empty()) {
    auto [dino, dpath] = queue.front();
    queue.pop_front();
    auto d = vol.read_inode(dino);
    if (!d || !d->is_dir()) continue;
    auto entries = read_dir_bounded(vol, *d);
    if (!entries) continue;
    for (const auto& e : *entries) {
      if (e.name == "." || e.name == "..") continue;
      const std::string p = child_path(dpath, e.name);
      if (e.ino == ino) return std::optional<std::string>(p);
      if (e.type == FileType::dir && visited.insert(e.ino).second) queue.emplace_back(e.ino, p);
    }
  }
  return std::optional<std::string>();
}

// ---------------------------------------------------------------- names

std::vector<std::string> checkpoint_flag_names(std::uint32_t f) {
  static constexpr BitName kNames[] = {
      {cp_flag::quota_need_fsck, "quota_need_fsck"},
      {cp_flag::large_nat_bitmap, "large_nat_bitmap"},
      {cp_flag::nocrc_recovery, "allow_nocrc"},
      {cp_flag::trimmed, "trimmed"},
      {cp_flag::nat_bits, "nat_bits"},
      {cp_flag::crc_recovery, "crc"},
      {cp_flag::fastboot, "fastboot"},
      {cp_flag::fsck, "fsck"},
      {cp_flag::error, "error"},
      {cp_flag::compact_sum, "compacted_summary"},
      {cp_flag::orphan_present, "orphan_inodes"},
      {cp_flag::disabled, "disabled"},
      {cp_flag::disabled_quick, "disabled_quick"},
      {cp_flag::resizefs, "resizefs"},
  };
  auto out = bit_names(f & ~cp_flag::umount, kNames);
  out.push_back(f & cp_flag::umount ? "unmount" : "sudden-power-off");
  return out;
}

std::string log_type_name(std::uint8_t type) {
  static const char* kNames[] = {"hot_data", "warm_data", "cold_data", "hot_node", "warm_node", "cold_node"};
  if (type < 6) return kNames[type];
  return "type" + std::to_string(type);
}

std::string mode_string(std::uint16_t mode) {
  std::string s(10, '-');
  switch (mode & 0xF000) {
    case 0x4000: s[0] = 'd'; break;
    case 0xA000: s[0] = 'l'; break;
    case 0x2000: s[0] = 'c'; break;
    case 0x6000: s[0] = 'b'; break;
    case 0x1000: s[0] = 'p'; break;
    case 0xC000: s[0] = 's'; break;
    case 0x8000: s[0] = '-'; break;
    default: s[0] = '?';
  }
  const char* rwx = "rwxrwxrwx";
  for (int i = 0; i < 9; ++i)
    if (mode & (0400 >> i)) s[static_cast<std::size_t>(1 + i)] = rwx[i];
  if (mode & 04000) s[3] = (mode & 0100) ? 's' : 'S';
  if (mode & 02000) s[6] = (mode & 0010) ? 's' : 'S';
  if (mode & 01000) s[9] = (mode & 0001) ? 't' : 'T';
  return s;
}

DeviceNumber device_number(const InodeInfo& in) {
  const std::uint32_t base = in.extra_isize / 4;
  DeviceNumber d;
  if (base + 1 >= kDefAddrsPerInode) return d;
  const std::uint32_t old = in.raw.i.i_addr[base].get();
  if (old != 0) {
    d.major = (old >> 8) & 0xff;
    d.minor = old & 0xff;
  } else {
    const std::uint32_t v = in.raw.i.i_addr[base + 1].get();
    d.major = (v & 0xfff00) >> 8;
    d.minor = (v & 0xff) | ((v >> 12) & 0xfff00);
  }
  return d;
}

namespace detail {

// ------------------------------------------------------------- text & JSON

std::string json_text(const Json& j) {
  return j.dump(2, ' ', false, nlohmann::json::error_handler_t::replace) + "\n";
}

std::string json_line(const Json& j) { return j.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace); }

std::string json_with_list(const Json& head, std::string_view key, const std::vector<std::string>& items,
                           const std::vector<std::string>& problems) {
  Json h = head.is_object() ? head : Json::object();
  if (!problems.empty()) h["problems"] = problems;
  std::string out = h.dump(2, ' ', false, nlohmann::json::error_handler_t::replace);
  out.pop_back();  // the closing brace
  while (!out.empty() && (out.back() == '\n' || out.back() == ' ')) out.pop_back();
  out += h.empty() ? "\n" : ",\n";
  out += "  " + Json(std::string(key)).dump() + ": [";
  for (std::size_t i = 0; i < items.size(); ++i) {
    out += i ? ",\n    " : "\n    ";
    out += items[i];
  }
  out += items.empty() ? "]\n}\n" : "\n  ]\n}\n";
  return out;
}

void appendf(std::string& out, const char* fmt, ...) {
  char buf[512];
  va_list ap;
  va_start(ap, fmt);
  const int n = std::vsnprintf(buf, sizeof buf, fmt, ap);
  va_end(ap);
  if (n < 0) return;
  if (static_cast<std::size_t>(n) < sizeof buf) {
    out.append(buf, static_cast<std::size_t>(n));
    return;
  }
  std::string big(static_cast<std::size_t>(n) + 1, '\0');
  va_start(ap, fmt);
  std::vsnprintf(big.data(), big.size(), fmt, ap);
  va_end(ap);
  big.resize(static_cast<std::size_t>(n));
  out += big;
}

void disp(std::string& out, std::string_view name, std::uint64_t v, std::string_view note) {
  appendf(out, "%-30.*s\t\t[0x%8" PRIx64 " : %" PRIu64 "]", static_cast<int>(name.size()), name.data(), v, v);
  if (!note.empty()) {
    out += "  ";
    out += note;
  }
  out += '\n';
}

void disp_str(std::string& out, std::string_view name, std::string_view value) {
  appendf(out, "%-30.*s\t\t[", static_cast<int>(name.size()), name.data());
  out += value;
  out += "]\n";
}

namespace {
// Whether `s` is well-formed UTF-8 (no overlong forms, no surrogates); with
// `printable`, also without control characters and backslashes.
bool check_utf8(std::string_view s, bool printable) {
  std::size_t i = 0;
  while (i < s.size()) {
    const auto c = static_cast<unsigned char>(s[i]);
    if (printable && (c < 0x20 || c == 0x7f || c == '\\')) return false;
    if (c < 0x80) {
      ++i;
      continue;
    }
    std::size_t n;
    std::uint32_t cp;
    if ((c & 0xE0) == 0xC0) {
      n = 1;
      cp = c & 0x1Fu;
    } else if ((c & 0xF0) == 0xE0) {
      n = 2;
      cp = c & 0x0Fu;
    } else if ((c & 0xF8) == 0xF0) {
      n = 3;
      cp = c & 0x07u;
    } else {
      return false;
    }
    if (s.size() - i <= n) return false;
    for (std::size_t k = 1; k <= n; ++k) {
      const auto cc = static_cast<unsigned char>(s[i + k]);
      if ((cc & 0xC0) != 0x80) return false;
      cp = cp << 6 | (cc & 0x3Fu);
    }
    if ((n == 1 && cp < 0x80) || (n == 2 && cp < 0x800) || (n == 3 && cp < 0x10000) || cp > 0x10FFFF ||
        (cp >= 0xD800 && cp <= 0xDFFF))
      return false;
    if (printable && cp >= 0x80 && cp < 0xA0) return false;  // C1 controls
    i += n + 1;
  }
  return true;
}
}  // namespace

bool is_printable_utf8(std::string_view s) { return check_utf8(s, true); }
bool is_utf8(std::string_view s) { return check_utf8(s, false); }

std::string printable(std::string_view raw) {
  if (is_printable_utf8(raw)) return std::string(raw);
  std::string out;
  for (std::size_t i = 0; i < raw.size(); ++i) {
    const auto c = static_cast<unsigned char>(raw[i]);
    if (c == '\\') {
      out += "\\\\";
    } else if (c >= 0x20 && c < 0x7f) {
      out += static_cast<char>(c);
    } else {
      // Keep well-formed multi-byte sequences, escape everything else.
      std::size_t n = (c & 0xE0) == 0xC0 ? 1 : (c & 0xF0) == 0xE0 ? 2 : (c & 0xF8) == 0xF0 ? 3 : 0;
      if (n && i + n < raw.size() && is_printable_utf8(raw.substr(i, n + 1))) {
        out.append(raw.substr(i, n + 1));
        i += n;
        continue;
      }
      appendf(out, "\\x%02x", c);
    }
  }
  return out;
}

std::string json_string(std::string_view raw) { return is_utf8(raw) ? std::string(raw) : printable(raw); }

std::string hex(const std::uint8_t* p, std::size_t n) {
  static const char* d = "0123456789abcdef";
  std::string s;
  s.reserve(n * 2);
  for (std::size_t i = 0; i < n; ++i) {
    s += d[p[i] >> 4];
    s += d[p[i] & 15];
  }
  return s;
}

std::string base64(std::span<const std::uint8_t> in) {
  static const char* t = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
  std::string out;
  out.reserve((in.size() + 2) / 3 * 4);
  std::size_t i = 0;
  for (; i + 2 < in.size(); i += 3) {
    const std::uint32_t v = static_cast<std::uint32_t>(in[i]) << 16 | static_cast<std::uint32_t>(in[i + 1]) << 8 | in[i + 2];
    out += t[v >> 18];
    out += t[(v >> 12) & 63];
    out += t[(v >> 6) & 63];
    out += t[v & 63];
  }
  if (i < in.size()) {
    std::uint32_t v = static_cast<std::uint32_t>(in[i]) << 16;
    if (i + 1 < in.size()) v |= static_cast<std::uint32_t>(in[i + 1]) << 8;
    out += t[v >> 18];
    out += t[(v >> 12) & 63];
    out += i + 1 < in.size() ? t[(v >> 6) & 63] : '=';
    out += '=';
  }
  return out;
}

namespace {
// Days since 1970-01-01 to a civil date (H. Hinnant's algorithm): no
// dependence on the host's time_t width or time zone.
void civil(std::int64_t z, std::int64_t& y, unsigned& m, unsigned& d) {
  z += 719468;
  const std::int64_t era = (z >= 0 ? z : z - 146096) / 146097;
  const auto doe = static_cast<unsigned>(z - era * 146097);
  const unsigned yoe = (doe - doe / 1460 + doe / 36524 - doe / 146096) / 365;
  y = static_cast<std::int64_t>(yoe) + era * 400;
  const unsigned doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
  const unsigned mp = (5 * doy + 2) / 153;
  d = doy - (153 * mp + 2) / 5 + 1;
  m = mp < 10 ? mp + 3 : mp - 9;
  if (m <= 2) ++y;
}
}  // namespace

std::string time_utc(std::uint64_t s) {
  std::int64_t y;
  unsigned m, d;
  civil(static_cast<std::int64_t>(s / 86400), y, m, d);
  const std::uint64_t r = s % 86400;
  std::string out;
  appendf(out, "%04" PRId64 "-%02u-%02u %02u:%02u:%02u", y, m, d, static_cast<unsigned>(r / 3600),
          static_cast<unsigned>(r / 60 % 60), static_cast<unsigned>(r % 60));
  return out;
}

std::string time_utc_ns(std::uint64_t s, std::uint32_t ns) {
  std::string t = time_utc(s);
  t[10] = 'T';
  appendf(t, ".%09uZ", ns);
  return t;
}

std::vector<std::string> bit_names(std::uint32_t v, std::span<const BitName> table) {
  std::vector<std::string> out;
  std::uint32_t known = 0;
  for (const auto& b : table) {
    known |= b.bit;
    if (v & b.bit) out.emplace_back(b.name);
  }
  if (v & ~known) {
    std::string s;
    appendf(s, "0x%x", v & ~known);
    out.push_back(s);
  }
  return out;
}

std::string join(const std::vector<std::string>& v, std::string_view sep) {
  std::string s;
  for (const auto& x : v) {
    if (!s.empty()) s += sep;
    s += x;
  }
  return s;
}

std::vector<std::string> inode_flag_names(std::uint32_t f) {
  static constexpr BitName kNames[] = {
      {iflag::compr, "compr"},       {iflag::sync, "sync"},       {iflag::immutable, "immutable"},
      {iflag::append, "append"},     {iflag::nodump, "nodump"},   {iflag::noatime, "noatime"},
      {iflag::nocomp, "nocomp"},     {iflag::index, "index"},     {iflag::dirsync, "dirsync"},
      {iflag::projinherit, "projinherit"}, {iflag::casefold, "casefold"}, {0x80000000u, "device_alias"},
  };
  return bit_names(f, kNames);
}

std::vector<std::string> advise_names(std::uint8_t a) {
  static constexpr BitName kNames[] = {
      {advise::cold, "cold"},         {advise::lost_pino, "lost_pino"}, {advise::encrypt, "encrypt"},
      {advise::enc_name, "enc_name"}, {advise::keep_size, "keep_size"}, {advise::hot, "hot"},
      {advise::verity, "verity"},     {advise::truncate, "truncate"},
  };
  return bit_names(a, kNames);
}

std::vector<std::string> inline_names(std::uint8_t i) {
  static constexpr BitName kNames[] = {
      {inline_flag::xattr, "inline_xattr"},       {inline_flag::data, "inline_data"},
      {inline_flag::dentry, "inline_dentry"},     {inline_flag::data_exist, "data_exist"},
      {inline_flag::dots, "inline_dots"},         {inline_flag::extra_attr, "extra_attr"},
      {inline_flag::pin_file, "pin_file"},        {inline_flag::compress_released, "compress_released"},
  };
  return bit_names(i, kNames);
}

std::string file_type_name(std::uint16_t mode) {
  switch (mode & 0xF000) {
    case 0x8000: return "regular";
    case 0x4000: return "directory";
    case 0xA000: return "symlink";
    case 0x2000: return "chardev";
    case 0x6000: return "blockdev";
    case 0x1000: return "fifo";
    case 0xC000: return "socket";
    default: return "unknown";
  }
}

std::string describe(const Error& e) { return e.to_string(); }

// ----------------------------------------------------- version bitmaps

// Where the checkpoint keeps the bitmaps (__bitmap_ptr() in
// fs/f2fs/checkpoint.h): after a 4-byte header with large_nat_bitmap, in
// the payload blocks when there are any, else SIT then NAT in the CP block.
std::span<const std::uint8_t> nat_version_bitmap(Volume& vol) { return vol.version_bitmaps().nat; }

std::span<const std::uint8_t> sit_version_bitmap(Volume& vol) { return vol.version_bitmaps().sit; }

int nat_copy(Volume& vol, std::uint32_t block_off) { return vol.version_bitmaps().nat_copy(block_off); }

int sit_copy(Volume& vol, std::uint32_t block_off) { return vol.version_bitmaps().sit_copy(block_off); }

// ------------------------------------------------------------ directories

Result<std::vector<DirEntryInfo>> read_dir_bounded(Volume& vol, const InodeInfo& dir) {
  if (!dir.is_dir() || dir.has_inline_dentry()) return vol.read_dir(dir);
  // Volume::read_dir() visits every block index below i_size; a corrupt
  // i_size (up to 2^32 blocks) would take hours. Blocks past the last
  // mapped one are holes, so reading up to it gives the same entries.
  auto bm = block_map(vol, dir);
  if (!bm) return make_error(bm.error());
  std::uint64_t end = 0;
  for (const auto& r : bm->runs)
    if (r.blkaddr != kNewAddr && r.blkaddr != kCompressAddr) end = std::max<std::uint64_t>(end, r.file_block + r.len);
  if (end * kBlockSize >= dir.size) return vol.read_dir(dir);
  InodeInfo clamped = dir;
  clamped.size = end * kBlockSize;
  return vol.read_dir(clamped);
}

Result<std::vector<Entry>> list_dir(Volume& vol, const InodeInfo& dir) {
  auto entries = read_dir_bounded(vol, dir);
  if (!entries) return make_error(entries.error());
  std::vector<Entry> out;
  out.reserve(entries->size());
  for (auto& d : *entries) {
    // "." and ".." are the directory's own links (inline directories have
    // them twice: Volume::read_dir() adds them, and Linux also stores them
    // in the inline area). One pointing at a non-directory can only come
    // from a corrupt image and is kept, for callers to show or refuse.
    if ((d.name == "." || d.name == "..") && d.type == FileType::dir) continue;
    Entry e;
    e.dirent = std::move(d);
    auto in = vol.read_inode(e.dirent.ino);
    if (in) e.inode = std::move(*in);
    else e.error = describe(in.error());
    out.push_back(std::move(e));
  }
  std::sort(out.begin(), out.end(), [](const Entry& a, const Entry& b) { return a.dirent.name < b.dirent.name; });
  return out;
}

std::string child_path(const std::string& dir, std::string_view name) {
  std::string p = dir;
  if (p.empty() || p.back() != '/') p += '/';
  p += name;
  return p;
}

}  // namespace detail
}  // namespace f2fscore::inspect
