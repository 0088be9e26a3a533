// The case script of handle_cases.txt run through f2fscore's handle API
// (Writer::open() and the calls by path, FileHandle): one output line per
// call in the format of handle_cases.c, which runs the same script as
// system calls on Linux f2fs. Script paths are relative to the test
// directory: here "/t/" + path ("''" is the empty path). The error name
// comes from Error::sys_errno, so a missing errno shows as "E0".
#pragma once

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <map>
#include <sstream>
#include <string>
#include <vector>

#include "f2fscore/file_handle.hpp"
#include "f2fscore/writer.hpp"

namespace handlecases {

using namespace f2fscore;

inline std::string ename(int e) {
  switch (e) {
#define E(x) \
  case x: return #x;
    E(EPERM) E(ENOENT) E(EIO) E(EBADF) E(EACCES) E(EEXIST) E(EXDEV) E(ENOTDIR) E(EISDIR) E(EINVAL) E(EFBIG) E(ENOSPC) E(EROFS)
    E(EMLINK) E(ERANGE) E(ENAMETOOLONG) E(ENOTEMPTY) E(ELOOP) E(ENODATA) E(EOPNOTSUPP) E(ENXIO) E(EBUSY) E(E2BIG)
    E(ETXTBSY) E(ESPIPE) E(ENODEV)
#undef E
    case 122: return "EDQUOT";
    case 0: return "E0";
    default: return "E?";
  }
}

/// {c*N}: N copies of c; '' the empty string.
inline std::string expand(const std::string& t) {
  if (t == "''") return {};
  std::string o;
  for (std::size_t i = 0; i < t.size();) {
    if (t[i] == '{' && i + 3 < t.size() && t[i + 2] == '*' && t.find('}', i) != std::string::npos) {
      const std::size_t end = t.find('}', i);
      o.append(static_cast<std::size_t>(std::strtol(t.c_str() + i + 3, nullptr, 10)), t[i + 1]);
      i = end + 1;
    } else {
      o += t[i++];
    }
  }
  return o;
}

inline std::vector<std::uint8_t> value(const std::string& t) {
  std::vector<std::uint8_t> v;
  if (t.rfind("hex:", 0) == 0) {
    for (std::size_t i = 4; i + 1 < t.size(); i += 2)
      v.push_back(static_cast<std::uint8_t>(std::strtol(t.substr(i, 2).c_str(), nullptr, 16)));
    return v;
  }
  const std::string s = expand(t);
  return {s.begin(), s.end()};
}

inline std::vector<std::string> split(const std::string& s, char sep) {
  std::vector<std::string> out;
  std::string cur;
  std::istringstream in(s);
  while (std::getline(in, cur, sep))
    if (!cur.empty()) out.push_back(cur);
  return out;
}

inline std::uint32_t oflags(const std::string& s) {
  static const std::map<std::string, std::uint32_t> m = {
      {"RDONLY", open_flag::rdonly}, {"WRONLY", open_flag::wronly},     {"RDWR", open_flag::rdwr},
      {"ACCMODE", open_flag::accmode}, {"CREAT", open_flag::creat},     {"EXCL", open_flag::excl},
      {"TRUNC", open_flag::trunc},   {"APPEND", open_flag::append},     {"DIRECTORY", open_flag::directory},
      {"NOFOLLOW", open_flag::nofollow}, {"NONBLOCK", open_flag::nonblock}, {"DSYNC", open_flag::dsync},
      {"SYNC", open_flag::sync}};
  std::uint32_t f = 0;
  for (const auto& p : split(s, '|')) f |= m.at(p);
  return f;
}

inline std::uint32_t fmode(const std::string& s) {
  std::uint32_t f = 0;
  for (const auto& p : split(s, '|')) {
    if (p == "KEEP") f |= 0x01;
    if (p == "PUNCH") f |= 0x02;
    if (p == "COLLAPSE") f |= 0x08;
    if (p == "ZERO") f |= 0x10;
    if (p == "INSERT") f |= 0x20;
  }
  return f;
}

inline std::string bytes_text(const std::uint8_t* b, std::size_t n) {
  std::string o = "\"";
  for (std::size_t i = 0; i < n && i < 64; ++i) {
    if (b[i] >= 0x20 && b[i] < 0x7f && b[i] != '"' && b[i] != '\\') {
      o += static_cast<char>(b[i]);
    } else {
      char x[8];
      std::snprintf(x, sizeof x, "\\x%02x", b[i]);
      o += x;
    }
  }
  o += "\"";
  if (n > 64) o += "(+" + std::to_string(n - 64) + ")";
  return o;
}

inline std::string stat_text(const WriterStat& st) {
  const unsigned t = st.mode & 0xF000u;
  const char* type = t == 0x8000 ? "reg" : t == 0x4000 ? "dir" : t == 0xA000 ? "lnk" : t == 0x1000 ? "fifo" : t == 0x2000 ? "chr" : t == 0x6000 ? "blk" : "sock";
  char b[160];
  if (t == 0x4000)
    std::snprintf(b, sizeof b, "[%s %04o nlink %u uid %u gid %u]", type, st.mode & 07777u, st.links, st.uid, st.gid);
  else
    std::snprintf(b, sizeof b, "[%s %04o nlink %u uid %u gid %u size %llu]", type, st.mode & 07777u, st.links, st.uid, st.gid,
                  static_cast<unsigned long long>(st.size));
  return b;
}

/// Runs `script` on `w` (a directory /t is made first); returns the
/// output lines. `checkpoints`, when given, receives one line per
/// fsync/fdatasync saying whether it took a checkpoint.
inline std::string run(Writer& w, const std::string& script, std::string* checkpoints = nullptr) {
  std::string out;
  if (auto m = w.mkdir("/t", 0755); !m) return "cannot make /t: " + m.error().to_string() + "\n";
  FileHandle fds[10];
  std::string fd_path[10];
  int ncase = 0;
  std::istringstream in(script);
  std::string line;
  auto path = [](const std::string& t) { return t == "''" ? std::string() : "/t/" + expand(t); };
  while (std::getline(in, line)) {
    if (line.empty() || line[0] == '#') continue;
    const std::vector<std::string> tok = split(line, ' ');
    const std::string& op = tok[0];
    auto arg = [&](std::size_t i) { return i < tok.size() ? tok[i] : std::string(); };
    const int h = tok.size() > 1 ? std::atoi(tok[1].c_str()) % 10 : 0;
    long long r = 0;
    int err = 0;
    std::string extra;
    auto fail = [&](const Error& e) {
      r = -1;
      err = e.sys_errno;
    };
    auto status = [&](const Status& s) {
      if (!s) fail(s.error());
    };
    if (op == "open") {
      auto f = w.open(path(arg(2)), oflags(arg(3)),
                      static_cast<std::uint16_t>(tok.size() > 4 ? std::strtol(arg(4).c_str(), nullptr, 8) : 0644));
      if (f) fds[h] = std::move(*f), fd_path[h] = path(arg(2));
      else fail(f.error());
    } else if (op == "close") {
      status(fds[h].close());
    } else if (op == "read" || op == "pread") {
      std::vector<std::uint8_t> b(static_cast<std::size_t>(std::atol(arg(2).c_str())));
      auto n = op == "read" ? fds[h].read(b) : fds[h].pread(b, static_cast<std::uint64_t>(std::atoll(arg(3).c_str())));
      if (n) r = static_cast<long long>(*n), extra = bytes_text(b.data(), *n);
      else fail(n.error());
    } else if (op == "write" || op == "pwrite") {
      const auto v = value(arg(2));
      auto n = op == "write" ? fds[h].write(v) : fds[h].pwrite(v, static_cast<std::uint64_t>(std::atoll(arg(3).c_str())));
      if (n) r = static_cast<long long>(*n);
      else fail(n.error());
    } else if (op == "seek") {
      const std::string& wh = arg(3);
      const Whence whence = wh == "SET" ? Whence::set : wh == "CUR" ? Whence::cur : wh == "END" ? Whence::end : wh == "DATA" ? Whence::data : Whence::hole;
      auto p = fds[h].seek(std::atoll(arg(2).c_str()), whence);
      if (p) r = static_cast<long long>(*p);
      else fail(p.error());
    } else if (op == "fsync" || op == "fdatasync") {
      auto s = op == "fsync" ? fds[h].fsync() : fds[h].fdatasync();
      if (!s) fail(s.error());
      else if (checkpoints) *checkpoints += line + (s->checkpoint ? ": checkpoint\n" : ": node chain\n");
    } else if (op == "ftruncate") {
      status(fds[h].truncate(static_cast<std::uint64_t>(std::atoll(arg(2).c_str()))));
    } else if (op == "fallocate") {
      status(fds[h].fallocate(fmode(arg(2)), static_cast<std::uint64_t>(std::atoll(arg(3).c_str())),
                              static_cast<std::uint64_t>(std::atoll(arg(4).c_str()))));
    } else if (op == "fstat" || op == "stat" || op == "lstat") {
      auto st = op == "fstat" ? fds[h].stat() : w.stat(path(arg(1)), op == "stat");
      if (st) extra = stat_text(*st);
      else fail(st.error());
    } else if (op == "truncate") {
      status(w.truncate(path(arg(1)), static_cast<std::uint64_t>(std::atoll(arg(2).c_str()))));
    } else if (op == "chmod" || op == "fchmod") {
      SetAttr a;
      a.mode = static_cast<std::uint16_t>(std::strtol(arg(2).c_str(), nullptr, 8));
      status(op == "chmod" ? w.setattr(path(arg(1)), a) : fds[h].setattr(a));
    } else if (op == "mkdir") {
      auto n = w.mkdir(path(arg(1)), static_cast<std::uint16_t>(std::strtol(arg(2).c_str(), nullptr, 8)));
      if (!n) fail(n.error());
    } else if (op == "mkfifo") {
      auto n = w.mknod(path(arg(1)), static_cast<std::uint16_t>(0x1000 | std::strtol(arg(2).c_str(), nullptr, 8)));
      if (!n) fail(n.error());
    } else if (op == "rmdir") {
      status(w.rmdir(path(arg(1))));
    } else if (op == "unlink") {
      status(w.unlink(path(arg(1))));
    } else if (op == "rename") {
      status(w.rename(path(arg(1)), path(arg(2))));
    } else if (op == "link") {
      status(w.link(path(arg(1)), path(arg(2))));
    } else if (op == "symlink") {
      auto n = w.symlink(expand(arg(1)), path(arg(2)));
      if (!n) fail(n.error());
    } else if (op == "readdir" || op == "freaddir") {
      const std::string dir = op == "readdir" ? path(arg(1)) : fd_path[h];
      auto es = op == "readdir" ? w.readdir(dir) : fds[h].readdir();
      if (!es) {
        fail(es.error());
      } else {
        std::sort(es->begin(), es->end(), [](const Dirent& a, const Dirent& b) { return a.name < b.name; });
        extra = "[";
        for (const Dirent& e : *es) {
          auto st = w.stat(dir + "/" + e.name, false);
          extra += (extra.size() > 1 ? " " : "") + e.name + ":" + std::to_string(e.type) + ":" + (st && st->ino == e.ino ? "=" : "!=");
        }
        extra += "]";
      }
    } else if (op == "getxattr" || op == "lgetxattr" || op == "fgetxattr") {
      auto v = op == "fgetxattr" ? fds[h].getxattr(expand(arg(2))) : w.getxattr(path(arg(1)), expand(arg(2)), op == "getxattr");
      if (v) r = static_cast<long long>(v->size()), extra = bytes_text(v->data(), v->size());
      else fail(v.error());
    } else if (op == "setxattr" || op == "lsetxattr" || op == "fsetxattr") {
      const auto v = value(arg(3));
      const XattrSet how = arg(4) == "CREATE" ? XattrSet::create : arg(4) == "REPLACE" ? XattrSet::replace : XattrSet::any;
      status(op == "fsetxattr" ? fds[h].setxattr(expand(arg(2)), v, how)
                               : w.setxattr(path(arg(1)), expand(arg(2)), v, how, op == "setxattr"));
    } else if (op == "listxattr" || op == "llistxattr" || op == "flistxattr") {
      auto l = op == "flistxattr" ? fds[h].listxattr() : w.listxattr(path(arg(1)), op == "listxattr");
      if (l) {
        extra = "[";
        for (const auto& n : *l) extra += (extra.size() > 1 ? "," : "") + n;
        extra += "]";
      } else {
        fail(l.error());
      }
    } else if (op == "removexattr" || op == "lremovexattr" || op == "fremovexattr") {
      status(op == "fremovexattr" ? fds[h].removexattr(expand(arg(2)))
                                  : w.removexattr(path(arg(1)), expand(arg(2)), op == "removexattr"));
    } else {
      return out + "unknown call: " + line + "\n";
    }
    char num[16];
    std::snprintf(num, sizeof num, "%03d ", ++ncase);
    out += num + line + ": " + std::to_string(r < 0 ? -1 : r) + " " + (r < 0 ? ename(err) : std::string("0")) +
           (extra.empty() ? "" : " " + extra) + "\n";
  }
  out += "=== " + std::to_string(ncase) + " cases\n";
  return out;
}

}  // namespace handlecases
