// The Windows leaf of populate() (populate_host.hpp), written from
// Microsoft's documentation of FindFirstFileExW, CreateFileW,
// GetFileInformationByHandle(Ex), ReadFile and FSCTL_QUERY_ALLOCATED_RANGES.
// It reads back what extract_win32.cpp writes, so that an extraction
// copied in again gives the image's tree:
//   - Names: every %XX (two upper-case hex digits) is the byte XX; other
//     bytes are the name's UTF-8 as Windows gives it.
//   - Symlinks are the lines of ".f2fscore-links" at the top of the source
//     ("<path>\t<target>\n", the path's components and the target mapped as
//     the names are); that file is not copied. Windows symlinks and
//     junctions (reparse points) are not followed and not copied: each is a
//     problem of its entry.
//   - Modes: directories 0755, files 0644, 0444 when read-only
//     (FILE_ATTRIBUTE_READONLY); owners 0:0 (Windows has no POSIX ids);
//     atime and mtime from the file's times, ctime from its change time.
//   - Hard links: the same (volume serial number, file index) with more
//     than one link.
//   - Holes: the allocated ranges of a sparse file
//     (FSCTL_QUERY_ALLOCATED_RANGES); every byte of other files.
//   - No extended attributes.
#include <windows.h>
#include <winioctl.h>

#include <cerrno>
#include <cstring>

#include "populate_host.hpp"

namespace f2fscore::populate_host {

namespace {

constexpr const char* kLinksFile = ".f2fscore-links";

// The errno closest to a Win32 error code, for Error::sys_errno.
int errno_of(DWORD e) {
  switch (e) {
    case ERROR_FILE_NOT_FOUND: case ERROR_PATH_NOT_FOUND: case ERROR_INVALID_NAME: case ERROR_BAD_NETPATH:
    case ERROR_INVALID_DRIVE: return ENOENT;
    case ERROR_ACCESS_DENIED: case ERROR_SHARING_VIOLATION: case ERROR_LOCK_VIOLATION: return EACCES;
    case ERROR_DIRECTORY: return ENOTDIR;
    default: return EIO;
  }
}

// "No such file or directory (Windows error 2)".
std::string win_text(DWORD e) { return std::string(std::strerror(errno_of(e))) + " (Windows error " + std::to_string(e) + ")"; }

Error win_error(const std::string& what, DWORD e) {
  const int en = errno_of(e);
  return Error{en == ENOENT ? Errc::not_found : Errc::io, en, Error::kNoOffset, what + ": " + win_text(e)};
}

// UTF-8 to UTF-16; false for bytes that are not UTF-8.
bool widen(const std::string& s, std::wstring& out) {
  out.clear();
  if (s.empty()) return true;
  const int n = ::MultiByteToWideChar(CP_UTF8, MB_ERR_INVALID_CHARS, s.data(), static_cast<int>(s.size()), nullptr, 0);
  if (n <= 0) return false;
  out.resize(static_cast<std::size_t>(n));
  ::MultiByteToWideChar(CP_UTF8, MB_ERR_INVALID_CHARS, s.data(), static_cast<int>(s.size()), out.data(), n);
  return true;
}

// UTF-16 to UTF-8; false for a lone surrogate.
bool narrow(const wchar_t* w, std::string& out) {
  out.clear();
  const int len = static_cast<int>(std::wcslen(w));
  if (len == 0) return true;
  const int n = ::WideCharToMultiByte(CP_UTF8, WC_ERR_INVALID_CHARS, w, len, nullptr, 0, nullptr, nullptr);
  if (n <= 0) return false;
  out.resize(static_cast<std::size_t>(n));
  ::WideCharToMultiByte(CP_UTF8, WC_ERR_INVALID_CHARS, w, len, out.data(), n, nullptr, nullptr);
  return true;
}

int hex_digit(char c) {
  if (c >= '0' && c <= '9') return c - '0';
  if (c >= 'A' && c <= 'F') return c - 'A' + 10;
  return -1;
}

// Every %XX (upper-case hex) as the byte XX.
std::string unmap(const std::string& s) {
  std::string out;
  out.reserve(s.size());
  for (std::size_t i = 0; i < s.size(); ++i) {
    if (s[i] == '%' && i + 2 < s.size() && hex_digit(s[i + 1]) >= 0 && hex_digit(s[i + 2]) >= 0) {
      out += static_cast<char>(hex_digit(s[i + 1]) * 16 + hex_digit(s[i + 2]));
      i += 2;
    } else {
      out += s[i];
    }
  }
  return out;
}

// FILETIME (100 ns since 1601) to seconds and nanoseconds since 1970;
// times before 1970 are 0.
Timespec timespec_of(std::uint64_t t) {
  constexpr std::uint64_t kEpoch = 11644473600ull * 10000000ull;
  if (t < kEpoch) return Timespec{0, 0};
  t -= kEpoch;
  return Timespec{t / 10000000ull, static_cast<std::uint32_t>((t % 10000000ull) * 100)};
}
Timespec timespec_of(const FILETIME& ft) {
  return timespec_of((static_cast<std::uint64_t>(ft.dwHighDateTime) << 32) | ft.dwLowDateTime);
}

class Handle {
 public:
  explicit Handle(HANDLE h) : h_(h) {}
  ~Handle() {
    if (h_ != INVALID_HANDLE_VALUE) ::CloseHandle(h_);
  }
  Handle(const Handle&) = delete;
  Handle& operator=(const Handle&) = delete;
  HANDLE get() const { return h_; }
  bool ok() const { return h_ != INVALID_HANDLE_VALUE; }

 private:
  HANDLE h_;
};

// The Stat of the file or directory open as `h`.
Result<Stat> stat_of(HANDLE h, const std::string& what) {
  BY_HANDLE_FILE_INFORMATION fi{};
  if (!::GetFileInformationByHandle(h, &fi)) return make_error(win_error(what, ::GetLastError()));
  Stat o;
  const bool dir = (fi.dwFileAttributes & FILE_ATTRIBUTE_DIRECTORY) != 0;
  if ((fi.dwFileAttributes & FILE_ATTRIBUTE_REPARSE_POINT) != 0) {
    o.kind = Kind::symlink;
    o.mode = 0120777;
  } else if (dir) {
    o.kind = Kind::directory;
    o.mode = 040755;
  } else {
    o.kind = Kind::regular;
    o.mode = (fi.dwFileAttributes & FILE_ATTRIBUTE_READONLY) != 0 ? 0100444 : 0100644;
  }
  o.size = dir ? 0 : (static_cast<std::uint64_t>(fi.nFileSizeHigh) << 32) | fi.nFileSizeLow;
  o.dense = (fi.dwFileAttributes & FILE_ATTRIBUTE_SPARSE_FILE) == 0;
  o.nlink = fi.nNumberOfLinks;
  o.id = {fi.dwVolumeSerialNumber, (static_cast<std::uint64_t>(fi.nFileIndexHigh) << 32) | fi.nFileIndexLow};
  o.atime = timespec_of(fi.ftLastAccessTime);
  o.mtime = timespec_of(fi.ftLastWriteTime);
  FILE_BASIC_INFO bi{};
  o.ctime = ::GetFileInformationByHandleEx(h, FileBasicInfo, &bi, sizeof bi)
                ? timespec_of(static_cast<std::uint64_t>(bi.ChangeTime.QuadPart))
                : o.mtime;
  return o;
}

// Opens `path` to read its attributes (directories too); `follow`: a
// reparse point is followed.
Result<std::unique_ptr<Handle>> open_attributes(const std::string& path, bool follow, const std::string& what) {
  std::wstring w;
  if (!widen(path, w)) return make_error(Errc::invalid_argument, what + ": the path is not valid UTF-8");
  DWORD flags = FILE_FLAG_BACKUP_SEMANTICS;  // directories too
  if (!follow) flags |= FILE_FLAG_OPEN_REPARSE_POINT;
  auto h = std::make_unique<Handle>(::CreateFileW(w.c_str(), FILE_READ_ATTRIBUTES,
                                                  FILE_SHARE_READ | FILE_SHARE_WRITE | FILE_SHARE_DELETE, nullptr,
                                                  OPEN_EXISTING, flags, nullptr));
  if (!h->ok()) return make_error(win_error(what, ::GetLastError()));
  return h;
}

class Win32File final : public File {
 public:
  explicit Win32File(HANDLE h) : h_(h) {}

  Result<std::size_t> read_at(std::uint64_t off, std::span<std::uint8_t> buf) override {
    OVERLAPPED ov{};
    ov.Offset = static_cast<DWORD>(off & 0xffffffffu);
    ov.OffsetHigh = static_cast<DWORD>(off >> 32);
    DWORD got = 0;
    const auto len = static_cast<DWORD>(std::min<std::size_t>(buf.size(), 1u << 30));
    if (!::ReadFile(h_.get(), buf.data(), len, &got, &ov)) {
      const DWORD e = ::GetLastError();
      if (e == ERROR_HANDLE_EOF) return std::size_t{0};
      return make_error(win_error("read at byte " + std::to_string(off), e));
    }
    return static_cast<std::size_t>(got);
  }

  std::optional<std::pair<std::uint64_t, std::uint64_t>> next_data(std::uint64_t off, std::uint64_t size) override {
    FILE_ALLOCATED_RANGE_BUFFER in{}, out{};
    in.FileOffset.QuadPart = static_cast<LONGLONG>(off);
    in.Length.QuadPart = static_cast<LONGLONG>(size - off);
    DWORD ret = 0;
    const BOOL ok = ::DeviceIoControl(h_.get(), FSCTL_QUERY_ALLOCATED_RANGES, &in, sizeof in, &out, sizeof out, &ret,
                                      nullptr);
    if (!ok && ::GetLastError() != ERROR_MORE_DATA) return std::pair<std::uint64_t, std::uint64_t>{off, size};
    if (ret < sizeof out) return std::nullopt;  // no allocated range: the rest is a hole
    const auto first = std::max<std::uint64_t>(static_cast<std::uint64_t>(out.FileOffset.QuadPart), off);
    const auto end = static_cast<std::uint64_t>(out.FileOffset.QuadPart) + static_cast<std::uint64_t>(out.Length.QuadPart);
    return std::pair<std::uint64_t, std::uint64_t>{first, std::min(end, size)};
  }

 private:
  Handle h_;
};

}  // namespace

std::string child(const std::string& dir, const std::string& name) { return dir + "/" + name; }

Result<Stat> lstat(const std::string& path) {
  auto h = open_attributes(path, false, "lstat");
  if (!h) return make_error(h.error());
  return stat_of((*h)->get(), "lstat");
}

Result<Stat> source_directory(const std::string& path) {
  std::wstring w;
  if (!widen(path, w)) return make_error(Errc::invalid_argument, "source " + path + ": the path is not valid UTF-8");
  const DWORD attrs = ::GetFileAttributesW(w.c_str());
  if (attrs == INVALID_FILE_ATTRIBUTES) {
    const DWORD e = ::GetLastError();
    return make_error(errno_of(e) == ENOENT ? Errc::not_found : Errc::invalid_argument,
                      "source " + path + ": " + win_text(e), Error::kNoOffset, errno_of(e));
  }
  if ((attrs & FILE_ATTRIBUTE_DIRECTORY) == 0)
    return make_error(Errc::invalid_argument, "source " + path + " is not a directory");
  auto h = open_attributes(path, true, "source " + path);
  if (!h) return make_error(Errc::invalid_argument, h.error().message, Error::kNoOffset, h.error().sys_errno);
  return stat_of((*h)->get(), "source " + path);
}

Result<std::vector<Name>> list(const std::string& dir, std::optional<Error>& read_error) {
  std::wstring w;
  if (!widen(dir + "/*", w)) return make_error(Errc::invalid_argument, "cannot open directory: the path is not valid UTF-8");
  WIN32_FIND_DATAW fd{};
  HANDLE f = ::FindFirstFileExW(w.c_str(), FindExInfoBasic, &fd, FindExSearchNameMatch, nullptr, 0);
  if (f == INVALID_HANDLE_VALUE) return make_error(win_error("cannot open directory", ::GetLastError()));
  std::vector<Name> names;
  for (;;) {
    if (std::wcscmp(fd.cFileName, L".") != 0 && std::wcscmp(fd.cFileName, L"..") != 0) {
      std::string n;
      if (narrow(fd.cFileName, n)) names.push_back(Name{n, unmap(n)});
      else read_error = Error{Errc::invalid_argument, EILSEQ, Error::kNoOffset,
                              "reading the directory: a name that is not UTF-16 (left out)"};
    }
    if (!::FindNextFileW(f, &fd)) {
      const DWORD e = ::GetLastError();
      if (e != ERROR_NO_MORE_FILES) read_error = win_error("reading the directory", e);
      break;
    }
  }
  ::FindClose(f);
  return names;
}

Result<std::string> readlink(const std::string&, const Stat&) {
  return make_error(Errc::unsupported,
                    "readlink: a Windows symlink or junction is not copied (symlinks come from .f2fscore-links)");
}

std::vector<std::pair<std::string, std::vector<std::uint8_t>>> xattrs(const std::string&, std::vector<Error>&) {
  return {};
}

Result<std::unique_ptr<File>> open(const std::string& path) {
  std::wstring w;
  if (!widen(path, w)) return make_error(Errc::invalid_argument, "open: the path is not valid UTF-8");
  const DWORD share = FILE_SHARE_READ | FILE_SHARE_WRITE | FILE_SHARE_DELETE;
  // With FILE_WRITE_ATTRIBUTES the last-access time can be kept as it is
  // (SetFileTime with 0xFFFFFFFF in both halves); without it where refused.
  HANDLE h = ::CreateFileW(w.c_str(), GENERIC_READ | FILE_WRITE_ATTRIBUTES, share, nullptr, OPEN_EXISTING,
                           FILE_FLAG_SEQUENTIAL_SCAN, nullptr);
  if (h != INVALID_HANDLE_VALUE) {
    FILETIME keep{0xFFFFFFFFu, 0xFFFFFFFFu};
    ::SetFileTime(h, nullptr, &keep, nullptr);
  } else {
    h = ::CreateFileW(w.c_str(), GENERIC_READ, share, nullptr, OPEN_EXISTING, FILE_FLAG_SEQUENTIAL_SCAN, nullptr);
  }
  if (h == INVALID_HANDLE_VALUE) return make_error(win_error("open", ::GetLastError()));
  return std::unique_ptr<File>(new Win32File(h));
}

const char* links_file_name() { return kLinksFile; }

std::optional<std::pair<std::string, std::string>> parse_links_line(const std::string& line) {
  std::string l = line;
  if (!l.empty() && l.back() == '\r') l.pop_back();
  const std::size_t tab = l.find('\t');
  if (tab == std::string::npos || tab == 0 || tab + 1 >= l.size()) return std::nullopt;
  std::string path;
  for (std::size_t p = 0; p < tab;) {
    std::size_t q = l.find('/', p);
    if (q == std::string::npos || q > tab) q = tab;
    const std::string comp = unmap(l.substr(p, q - p));
    if (comp.empty() || comp == "." || comp == ".." || comp.find('/') != std::string::npos ||
        comp.find('\0') != std::string::npos)
      return std::nullopt;
    path += (path.empty() ? "" : "/") + comp;
    p = q + 1;
  }
  std::string target = unmap(l.substr(tab + 1));
  if (target.find('\0') != std::string::npos) return std::nullopt;
  return std::pair<std::string, std::string>{path, target};
}

}  // namespace f2fscore::populate_host
