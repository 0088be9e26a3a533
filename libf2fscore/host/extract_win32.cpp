// Extraction to a Windows directory (the Windows build's extract(); the
// POSIX one is in extract.cpp). Written from Microsoft's documentation of
// CreateFileW, CreateDirectoryW, CreateHardLinkW, SetFileTime and the
// naming rules of "Naming Files, Paths, and Namespaces".
//
// What Windows cannot hold is mapped, reversibly:
//   - Names: each byte Windows forbids in a name (< > : " / \ | ? * and
//     0x01-0x1F), '%' itself, a trailing '.' or ' ', every byte of a
//     sequence that is not UTF-8, the first character of a reserved device
//     name (CON, PRN, AUX, NUL, COM1-COM9, LPT1-LPT9, alone or before a
//     '.', in any case) and the first '.' of the name ".f2fscore-links"
//     are written as %XX (two upper-case hex digits of the byte). Decoding
//     every %XX gives the name back. A name that then equals another of the
//     same directory when case is ignored (Windows' directories are
//     case-insensitive) is not extracted and reported as a problem.
//   - Symlinks are not created (they need a privilege on Windows and their
//     targets are POSIX paths): each is a line of the file .f2fscore-links
//     at the top of the extraction, "<mapped path>\t<target>\n", the path
//     relative to that top with '/' between components, the target's bytes
//     with '%', TAB, LF, CR and other bytes below 0x20 as %XX.
//   - Fifos, sockets and device nodes are skipped (ExtractReport::skipped);
//     owners, POSIX modes and xattrs are not kept (xattrs are counted in
//     xattrs_unsupported).
//   - Hard links are hard links (CreateHardLinkW), copies where refused.
//   - Files keep their mtime and atime (SetFileTime) and their holes as
//     unwritten ranges below the size set at the end.
#include <windows.h>

#include <cerrno>
#include <cinttypes>
#include <cstring>
#include <tuple>
#include <unordered_map>
#include <unordered_set>

#include "f2fscore/disk/xattr.hpp"
#include "f2fscore/extract.hpp"

#include "extract_progress.hpp"
#include "extract_runs.hpp"
#include "inspect/inspect_internal.hpp"

namespace f2fscore::inspect {

using namespace disk;
using namespace detail;

namespace {

constexpr int kMaxDepth = 512;
constexpr std::size_t kChunkBlocks = 256;
constexpr const char* kLinksFile = ".f2fscore-links";

std::string win_text(DWORD e) { return "Windows error " + std::to_string(e); }

void put_hex(std::string& out, unsigned char c) {
  static const char* kHex = "0123456789ABCDEF";
  out += '%';
  out += kHex[c >> 4];
  out += kHex[c & 15];
}

// Length of the UTF-8 sequence at s[i] (a scalar value, shortest form), or
// 0 when the bytes there are not one.
std::size_t utf8_len(std::string_view s, std::size_t i) {
  const auto b = [&](std::size_t k) { return static_cast<unsigned char>(s[k]); };
  const unsigned char c = b(i);
  if (c < 0x80) return 1;
  std::size_t n = 0;
  char32_t cp = 0;
  if (c >= 0xC2 && c <= 0xDF) n = 2, cp = c & 0x1F;
  else if (c >= 0xE0 && c <= 0xEF) n = 3, cp = c & 0x0F;
  else if (c >= 0xF0 && c <= 0xF4) n = 4, cp = c & 0x07;
  else return 0;
  if (i + n > s.size()) return 0;
  for (std::size_t k = 1; k < n; ++k) {
    if ((b(i + k) & 0xC0) != 0x80) return 0;
    cp = (cp << 6) | (b(i + k) & 0x3F);
  }
  if ((n == 3 && cp < 0x800) || (n == 4 && (cp < 0x10000 || cp > 0x10FFFF)) || (cp >= 0xD800 && cp <= 0xDFFF))
    return 0;
  return n;
}

bool is_reserved_device_name(std::string_view n) {
  const std::string_view stem = n.substr(0, n.find('.'));
  auto eq = [&](const char* w) {
    const std::size_t len = std::strlen(w);
    if (stem.size() != len) return false;
    for (std::size_t i = 0; i < len; ++i) {
      char c = stem[i];
      if (c >= 'a' && c <= 'z') c = static_cast<char>(c - 'a' + 'A');
      if (c != w[i]) return false;
    }
    return true;
  };
  if (eq("CON") || eq("PRN") || eq("AUX") || eq("NUL")) return true;
  if (stem.size() == 4 && stem[3] >= '1' && stem[3] <= '9') {
    const std::string_view head = stem.substr(0, 3);
    std::string up(head);
    for (auto& c : up)
      if (c >= 'a' && c <= 'z') c = static_cast<char>(c - 'a' + 'A');
    return up == "COM" || up == "LPT";
  }
  return false;
}

/// The Windows name of an image name (the mapping described above).
std::string windows_name(std::string_view n) {
  std::string out;
  out.reserve(n.size());
  const bool reserved = is_reserved_device_name(n) || n == kLinksFile;
  std::size_t i = 0;
  if (reserved && !n.empty()) {
    put_hex(out, static_cast<unsigned char>(n[0]));
    i = 1;
  }
  while (i < n.size()) {
    const auto c = static_cast<unsigned char>(n[i]);
    const bool last = i + 1 == n.size();
    if (c < 0x20 || c == '<' || c == '>' || c == ':' || c == '"' || c == '/' || c == '\\' || c == '|' || c == '?' ||
        c == '*' || c == '%' || (last && (c == '.' || c == ' '))) {
      put_hex(out, c);
      ++i;
      continue;
    }
    const std::size_t len = utf8_len(n, i);
    if (len == 0) {
      put_hex(out, c);
      ++i;
      continue;
    }
    out.append(n.substr(i, len));
    i += len;
  }
  return out;
}

// UTF-8 (valid: windows_name()'s output, or a caller's path) to UTF-16.
std::wstring widen(const std::string& s) {
  if (s.empty()) return {};
  const int n = ::MultiByteToWideChar(CP_UTF8, 0, s.data(), static_cast<int>(s.size()), nullptr, 0);
  std::wstring w(static_cast<std::size_t>(n > 0 ? n : 0), L'\0');
  if (n > 0) ::MultiByteToWideChar(CP_UTF8, 0, s.data(), static_cast<int>(s.size()), w.data(), n);
  return w;
}

std::string fold_case(const std::string& s) {
  std::wstring w = widen(s);
  if (!w.empty()) ::CharUpperBuffW(w.data(), static_cast<DWORD>(w.size()));
  std::string out(w.size() * 2, '\0');
  std::memcpy(out.data(), w.data(), out.size());
  return out;
}

std::string link_target_text(std::string_view t) {
  std::string out;
  for (const char ch : t) {
    const auto c = static_cast<unsigned char>(ch);
    if (c < 0x20 || c == '%') put_hex(out, c);
    else out += ch;
  }
  return out;
}

FILETIME filetime(std::uint64_t sec, std::uint32_t nsec) {
  const std::uint64_t t = (sec + 11644473600ull) * 10000000ull + (nsec % 1000000000u) / 100u;
  FILETIME ft;
  ft.dwLowDateTime = static_cast<DWORD>(t & 0xffffffffu);
  ft.dwHighDateTime = static_cast<DWORD>(t >> 32);
  return ft;
}

class Extractor {
 public:
  Extractor(Volume& v, const ExtractOptions& o, ExtractReport& r) : v_(v), r_(r), progress_(v, o.progress) {}

  void progress_done() { progress_.finish(); }

  void set_root(std::string host) { root_host_ = std::move(host); }

  void item(const std::string& rel, const std::string& img, const InodeInfo& in, int depth) {
    if (in.is_encrypted()) {
      r_.encrypted.push_back(img);
      return;
    }
    const std::uint32_t type = in.mode & 0xF000;
    if (type != 0x4000 && type != 0xA000 && in.links > 1) {
      if (auto it = links_.find(in.ino); it != links_.end()) {
        if (make_room(rel, img, false) &&
            ::CreateHardLinkW(widen(host_path(rel)).c_str(), widen(host_path(it->second)).c_str(), nullptr)) {
          ++r_.hard_links;
          return;
        }
        r_.warnings.push_back(img + ": cannot hard-link to " + host_path(it->second) + " (" +
                              win_text(::GetLastError()) + "); copied instead");
      }
    }
    progress_.inode();
    switch (type) {
      case 0x4000: directory(rel, img, in, depth); break;
      case 0x8000: regular(rel, img, in); break;
      case 0xA000: symlink(rel, img, in); break;
      default:
        r_.skipped.push_back(img + ": " + file_type_name(in.mode) + " (no such files on Windows)");
        break;
    }
  }

  void contents(const std::string& rel, const std::string& img, const InodeInfo& dir, int depth) {
    if (!dirs_seen_.insert(dir.ino).second) {
      r_.problems.push_back(img + ": directory loop; not descended");
      return;
    }
    auto entries = list_dir(v_, dir);
    if (!entries) {
      r_.problems.push_back(img + ": " + describe(entries.error()));
      return;
    }
    std::unordered_map<std::string, std::string> folded;  // case-folded host name -> image name
    for (const auto& e : *entries) {
      const std::string cimg = child_path(img, e.dirent.name);
      const std::string& n = e.dirent.name;
      if (n.empty() || n == "." || n == ".." || n.find('\0') != std::string::npos) {
        r_.problems.push_back(printable(cimg) + ": refused: name \"" + printable(n) + "\"");
        continue;
      }
      if (!e.inode) {
        r_.problems.push_back(cimg + ": " + e.error);
        continue;
      }
      const std::string host = windows_name(n);
      if (auto [it, fresh] = folded.emplace(fold_case(host), n); !fresh) {
        r_.problems.push_back(printable(cimg) + ": not extracted: its Windows name " + printable(host) +
                              " differs only in case from that of " + printable(child_path(img, it->second)));
        continue;
      }
      item(rel.empty() ? host : rel + "/" + host, cimg, *e.inode, depth + 1);
    }
  }

  // Writes .f2fscore-links and the directories' times.
  void finish() {
    for (auto it = pending_dirs_.rbegin(); it != pending_dirs_.rend(); ++it) set_times(it->rel, it->img, it->in, true);
    if (links_text_.empty()) return;
    const std::string path = host_path(kLinksFile);
    HANDLE h = ::CreateFileW(widen(path).c_str(), GENERIC_WRITE, 0, nullptr, CREATE_ALWAYS, FILE_ATTRIBUTE_NORMAL,
                             nullptr);
    DWORD wrote = 0;
    if (h == INVALID_HANDLE_VALUE ||
        !::WriteFile(h, links_text_.data(), static_cast<DWORD>(links_text_.size()), &wrote, nullptr) ||
        wrote != links_text_.size()) {
      r_.problems.push_back(path + ": cannot write the symlink list (" + win_text(::GetLastError()) + ")");
    }
    if (h != INVALID_HANDLE_VALUE) ::CloseHandle(h);
  }

 private:
  struct PendingDir {
    std::string rel, img;
    InodeInfo in;
  };

  std::string host_path(const std::string& rel) const { return rel.empty() ? root_host_ : root_host_ + "/" + rel; }

  void host_problem(const std::string& rel, const std::string& img, const std::string& what) {
    r_.problems.push_back(host_path(rel) + ": " + what + " (extracting " + printable(img) + ")");
  }

  bool make_room(const std::string& rel, const std::string& img, bool want_dir) {
    const std::wstring w = widen(host_path(rel));
    const DWORD a = ::GetFileAttributesW(w.c_str());
    if (a == INVALID_FILE_ATTRIBUTES) return true;
    if ((a & FILE_ATTRIBUTE_DIRECTORY) != 0) {
      if (want_dir) return true;
      host_problem(rel, img, "a directory is in the way");
      return false;
    }
    if ((a & FILE_ATTRIBUTE_READONLY) != 0) ::SetFileAttributesW(w.c_str(), a & ~DWORD{FILE_ATTRIBUTE_READONLY});
    if (!::DeleteFileW(w.c_str())) {
      host_problem(rel, img, "cannot replace the existing entry: " + win_text(::GetLastError()));
      return false;
    }
    return true;
  }

  void directory(const std::string& rel, const std::string& img, const InodeInfo& in, int depth) {
    if (depth > kMaxDepth) {
      r_.problems.push_back(img + ": deeper than " + std::to_string(kMaxDepth) + " levels; not extracted");
      return;
    }
    if (!make_room(rel, img, true)) return;
    if (!::CreateDirectoryW(widen(host_path(rel)).c_str(), nullptr) && ::GetLastError() != ERROR_ALREADY_EXISTS) {
      host_problem(rel, img, "mkdir: " + win_text(::GetLastError()));
      return;
    }
    ++r_.directories;
    pending_dirs_.push_back({rel, img, in});
    contents(rel, img, in, depth);
  }

  void regular(const std::string& rel, const std::string& img, const InodeInfo& in) {
    if (!make_room(rel, img, false)) return;
    HANDLE h = ::CreateFileW(widen(host_path(rel)).c_str(), GENERIC_WRITE, 0, nullptr, CREATE_NEW,
                             FILE_ATTRIBUTE_NORMAL, nullptr);
    if (h == INVALID_HANDLE_VALUE) {
      host_problem(rel, img, "create: " + win_text(::GetLastError()));
      return;
    }
    auto st = write_contents(h, in);
    if (st) {
      LARGE_INTEGER size;
      size.QuadPart = static_cast<LONGLONG>(in.size);
      if (!::SetFilePointerEx(h, size, nullptr, FILE_BEGIN) || !::SetEndOfFile(h))
        st = make_error(Errc::io, "set the size: " + win_text(::GetLastError()));
    }
    if (!st) {
      r_.problems.push_back(img + ": " + describe(st.error()));
      ::CloseHandle(h);
      return;
    }
    ++r_.files;
    r_.bytes += in.size;
    const FILETIME at = filetime(in.raw.i.i_atime.get(), in.raw.i.i_atime_nsec.get());
    const FILETIME mt = filetime(in.raw.i.i_mtime.get(), in.raw.i.i_mtime_nsec.get());
    if (!::SetFileTime(h, nullptr, &at, &mt))
      r_.warnings.push_back(img + ": set times: " + win_text(::GetLastError()));
    ::CloseHandle(h);
    count_xattrs(img, in);
    if (in.links > 1) links_.emplace(in.ino, rel);
  }

  Status write_contents(HANDLE h, const InodeInfo& in) {
    const std::uint64_t nblocks = (in.size + kBlockSize - 1) / kBlockSize;
    if (buf_.empty()) buf_.resize(kChunkBlocks * kBlockSize);
    std::vector<std::uint8_t>& buf = buf_;
    auto put = [&](const std::uint8_t* p, std::size_t n, std::uint64_t off) -> Status {
      return host_detail::for_each_nonzero_run(p, n, [&](std::size_t k, std::size_t len) -> Status {
        OVERLAPPED ov{};
        const std::uint64_t at = off + k;
        ov.Offset = static_cast<DWORD>(at & 0xffffffffu);
        ov.OffsetHigh = static_cast<DWORD>(at >> 32);
        DWORD wrote = 0;
        if (!::WriteFile(h, p + k, static_cast<DWORD>(len), &wrote, &ov) || wrote != len)
          return make_error(Errc::io, "write: " + win_text(::GetLastError()), Error::kNoOffset, EIO);
        return {};
      });
    };
    if (in.has_inline_data() || in.is_compressed()) {
      for (std::uint64_t off = 0; off < in.size; off += buf.size()) {
        auto n = v_.read(in, off, buf);
        if (!n) return make_error(n.error());
        F2FSCORE_TRY(put(buf.data(), *n, off));
        if (*n < buf.size()) break;
      }
      return {};
    }
    auto bm = block_map(v_, in);
    if (!bm) return make_error(bm.error());
    for (const auto& r : bm->runs) {
      if (r.file_block >= nblocks) break;
      if (r.blkaddr == kNullAddr || r.blkaddr == kNewAddr || r.blkaddr == kCompressAddr) continue;
      const std::uint64_t len = std::min<std::uint64_t>(r.len, nblocks - r.file_block);
      const std::uint64_t last = static_cast<std::uint64_t>(r.blkaddr) + len - 1;
      if (!v_.is_valid_main_addr(r.blkaddr) || last > 0xFFFFFFFFu || !v_.is_valid_main_addr(static_cast<block_t>(last)))
        return make_error(Errc::corrupt, "inode " + std::to_string(in.ino) + ": file block " +
                                             std::to_string(r.file_block) + " maps to block " +
                                             std::to_string(r.blkaddr) + ", outside the main area");
      for (std::uint64_t k = 0; k < len; k += kChunkBlocks) {
        const std::size_t n = static_cast<std::size_t>(std::min<std::uint64_t>(kChunkBlocks, len - k)) * kBlockSize;
        F2FSCORE_TRY(read_at(v_.device(), (static_cast<std::uint64_t>(r.blkaddr) + k) * kBlockSize,
                             std::span<std::uint8_t>(buf.data(), n)));
        F2FSCORE_TRY(put(buf.data(), n, (r.file_block + k) * kBlockSize));
      }
    }
    return {};
  }

  void symlink(const std::string& rel, const std::string& img, const InodeInfo& in) {
    auto target = v_.read_link(in);
    if (!target) {
      r_.problems.push_back(img + ": " + describe(target.error()));
      return;
    }
    if (target->empty() || target->find('\0') != std::string::npos) {
      r_.problems.push_back(img + ": symlink target is empty or holds a NUL byte");
      return;
    }
    links_text_ += rel;
    links_text_ += '\t';
    links_text_ += link_target_text(*target);
    links_text_ += '\n';
    ++r_.symlinks;
    count_xattrs(img, in);
  }

  // xattrs have no Windows counterpart here: counted, one warning.
  void count_xattrs(const std::string& img, const InodeInfo& in) {
    auto xs = v_.xattrs(in);
    if (!xs) return;
    for (const auto& x : *xs) {
      switch (x.index) {
        case xattr_index::user: case xattr_index::trusted: case xattr_index::security:
        case xattr_index::posix_acl_access: case xattr_index::posix_acl_default: break;
        default: continue;
      }
      ++r_.xattrs_unsupported;
      if (!warned_xattrs_) {
        warned_xattrs_ = true;
        r_.warnings.push_back(img + ": xattrs are not supported on this host (only counted from now on)");
      }
    }
  }

  void set_times(const std::string& rel, const std::string& img, const InodeInfo& in, bool dir) {
    HANDLE h = ::CreateFileW(widen(host_path(rel)).c_str(), FILE_WRITE_ATTRIBUTES,
                             FILE_SHARE_READ | FILE_SHARE_WRITE | FILE_SHARE_DELETE, nullptr, OPEN_EXISTING,
                             dir ? FILE_FLAG_BACKUP_SEMANTICS : FILE_ATTRIBUTE_NORMAL, nullptr);
    if (h == INVALID_HANDLE_VALUE) return;
    const FILETIME at = filetime(in.raw.i.i_atime.get(), in.raw.i.i_atime_nsec.get());
    const FILETIME mt = filetime(in.raw.i.i_mtime.get(), in.raw.i.i_mtime_nsec.get());
    if (!::SetFileTime(h, nullptr, &at, &mt)) r_.warnings.push_back(img + ": set times: " + win_text(::GetLastError()));
    ::CloseHandle(h);
  }

  Volume& v_;
  ExtractReport& r_;
  host_detail::ExtractProgress progress_;
  std::string root_host_;
  std::string links_text_;
  bool warned_xattrs_ = false;
  std::unordered_map<nid_t, std::string> links_;  // ino -> path relative to the root
  std::unordered_set<nid_t> dirs_seen_;
  std::vector<PendingDir> pending_dirs_;
  std::vector<std::uint8_t> buf_;  // a file's blocks on their way out, kChunkBlocks of them (one allocation)
};

std::pair<std::string, std::string> split_host(const std::string& p) {
  std::string s = p;
  while (s.size() > 1 && (s.back() == '/' || s.back() == '\\')) s.pop_back();
  const auto slash = s.find_last_of("/\\");
  if (slash == std::string::npos) return {".", s};
  if (slash == 0) return {s.substr(0, 1), s.substr(1)};
  return {s.substr(0, slash), s.substr(slash + 1)};
}

}  // namespace

Result<ExtractReport> extract(Volume& vol, std::string_view path, const std::string& dest, const ExtractOptions& o) {
  // Owners, xattrs and special files have no Windows counterpart: of `o`
  // only the progress is used.
  auto src = find_inode(vol, path.empty() ? std::string_view("/") : path);
  if (!src) return make_error(src.error());
  if (dest.empty()) return make_error(Errc::invalid_argument, "empty destination");
  ExtractReport rep;
  std::string img;
  if (path.empty() || path == "/") img = "/";
  else if (path[0] == '/') img = std::string(path);
  else if (auto p = path_of(vol, src->ino); p && *p) img = **p;
  else img = "/" + std::string(path);
  while (img.size() > 1 && img.back() == '/') img.pop_back();
  const bool is_root = src->ino == vol.superblock().root_ino.get();
  std::string base = img == "/" ? std::string() : img.substr(img.rfind('/') + 1);
  if (base.empty() && !is_root) base = "inode-" + std::to_string(src->ino);
  rep.source = img;

  Extractor x(vol, o, rep);
  const DWORD a = ::GetFileAttributesW(widen(dest).c_str());
  const bool exists = a != INVALID_FILE_ATTRIBUTES;
  const bool is_dir = exists && (a & FILE_ATTRIBUTE_DIRECTORY) != 0;
  std::string parent_host, name;
  if (is_dir) {
    if (is_root) {
      rep.destination = dest;
      x.set_root(dest);
      x.contents("", img, *src, 0);
      x.finish();
      x.progress_done();
      return rep;
    }
    parent_host = dest;
    name = windows_name(base);
  } else if (exists && src->is_dir()) {
    return make_error(Errc::exists, dest + " exists and is not a directory");
  } else {
    std::tie(parent_host, name) = split_host(dest);
    if (name.empty() || name == "." || name == "..")
      return make_error(Errc::invalid_argument, "destination \"" + dest + "\" has no usable last component");
  }
  const DWORD pa = ::GetFileAttributesW(widen(parent_host).c_str());
  if (pa == INVALID_FILE_ATTRIBUTES || (pa & FILE_ATTRIBUTE_DIRECTORY) == 0)
    return make_error(Errc::not_found, "cannot open directory " + parent_host, Error::kNoOffset, ENOENT);
  rep.destination = parent_host + "/" + name;
  x.set_root(parent_host);
  x.item(name, img, *src, 0);
  x.finish();
  x.progress_done();
  return rep;
}

}  // namespace f2fscore::inspect
