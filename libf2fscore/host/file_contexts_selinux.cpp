// FileContexts through libselinux (android_rules.hpp): selabel_open() of
// the file backend and selabel_lookup(), libselinux's messages collected
// into the errors instead of printed.
#include <selinux/label.h>
#include <selinux/selinux.h>
#include <sys/stat.h>

#include <unistd.h>

#include <cerrno>
#include <cstdarg>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <mutex>
#include <sstream>

#include "f2fscore/android_rules.hpp"

namespace f2fscore {

struct FileContexts::Handle {
  selabel_handle* h = nullptr;
  ~Handle() {
    if (h != nullptr) selabel_close(h);
  }
};

namespace {

// libselinux logs through one process-wide callback: while open() runs,
// its messages go to `g_log` (open() holds g_log_mutex).
std::mutex g_log_mutex;
std::string* g_log = nullptr;

__attribute__((format(printf, 2, 3))) int collect_log(int /*type*/, const char* fmt, ...) {
  char buf[1024];
  va_list ap;
  va_start(ap, fmt);
  std::vsnprintf(buf, sizeof buf, fmt, ap);
  va_end(ap);
  if (g_log != nullptr) {
    std::string line(buf);
    while (!line.empty() && (line.back() == '\n' || line.back() == ' ')) line.pop_back();
    if (!line.empty() && g_log->find(line) == std::string::npos) {  // libselinux repeats some
      if (!g_log->empty()) *g_log += "; ";
      *g_log += line;
    }
  }
  return 0;
}

// selabel_open() of one file, libselinux's messages in the error.
Result<selabel_handle*> open_one(const std::string& file) {
  const selinux_opt opt{SELABEL_OPT_PATH, file.c_str()};
  std::string log;
  selabel_handle* h = nullptr;
  int err = 0;
  {
    std::lock_guard<std::mutex> lock(g_log_mutex);
    const selinux_callback old = selinux_get_callback(SELINUX_CB_LOG);
    selinux_callback cb{};
    cb.func_log = collect_log;
    g_log = &log;
    selinux_set_callback(SELINUX_CB_LOG, cb);
    errno = 0;
    h = selabel_open(SELABEL_CTX_FILE, &opt, 1);
    err = errno;
    selinux_set_callback(SELINUX_CB_LOG, old);
    g_log = nullptr;
  }
  if (h == nullptr)
    return make_error(Errc::invalid_argument,
                      "file_contexts " + file + ": " + (log.empty() ? std::string(std::strerror(err)) : log));
  return h;
}

}  // namespace

bool FileContexts::supported() { return true; }

FileContexts::FileContexts(std::unique_ptr<Handle> h) : h_(std::move(h)) {}
FileContexts::~FileContexts() = default;

Result<std::shared_ptr<const FileContexts>> FileContexts::open(const std::vector<std::string>& files) {
  if (files.empty()) return make_error(Errc::invalid_argument, "file_contexts: no file given");
  if (files.size() > 8) return make_error(Errc::invalid_argument, "file_contexts: at most 8 files (as sload.f2fs)");
  std::string names;
  for (const auto& f : files) {
    names += names.empty() ? f : "," + f;
    struct stat st {};
    if (::stat(f.c_str(), &st) != 0)
      return make_error(Errc::not_found, "file_contexts " + f + ": " + std::strerror(errno));
    if (!S_ISREG(st.st_mode)) return make_error(Errc::invalid_argument, "file_contexts " + f + ": not a regular file");
  }
  // Debian's libselinux reads only the first SELABEL_OPT_PATH (Android's
  // reads them all, as one list): each file is opened alone first, so an
  // error names its file and line, then several are read as one file made
  // of them in order.
  selabel_handle* h = nullptr;
  for (const auto& f : files) {
    auto one = open_one(f);
    if (!one) return make_error(one.error());
    if (files.size() == 1) {
      h = *one;
      break;
    }
    selabel_close(*one);
  }
  if (h == nullptr) {
    std::string joined;
    for (const auto& f : files) {
      std::ifstream in(f, std::ios::binary);
      std::ostringstream ss;
      ss << in.rdbuf();
      if (!in) return make_error(Errc::io, "file_contexts " + f + ": read error");
      joined += ss.str();
      if (!joined.empty() && joined.back() != '\n') joined += '\n';
    }
    std::string tmp = (std::filesystem::temp_directory_path() / "f2fscore-file_contexts.XXXXXX").string();
    const int fd = ::mkstemp(tmp.data());
    if (fd < 0) return make_error(Errc::io, "file_contexts " + names + ": a temporary file: " + std::strerror(errno));
    const bool written = ::write(fd, joined.data(), joined.size()) == static_cast<ssize_t>(joined.size());
    ::close(fd);
    auto all = written ? open_one(tmp) : Result<selabel_handle*>(make_error(Errc::io, "writing " + tmp));
    ::unlink(tmp.c_str());
    if (!all) return make_error(all.error().code, "file_contexts " + names + " read together: " + all.error().message);
    h = *all;
  }
  auto handle = std::make_unique<Handle>();
  handle->h = h;
  return std::shared_ptr<const FileContexts>(new FileContexts(std::move(handle)));
}

Result<std::string> FileContexts::lookup(const std::string& path, std::uint32_t mode) const {
  char* con = nullptr;
  errno = 0;
  if (selabel_lookup(h_->h, &con, path.c_str(), static_cast<int>(mode)) < 0) {
    const int e = errno;
    if (e == ENOENT) return make_error(Errc::not_found, "no SELinux context for " + path + " in file_contexts");
    return make_error(Errc::io, "SELinux context of " + path + ": " + std::strerror(e));
  }
  std::string out = con != nullptr ? con : "";
  freecon(con);
  return out;
}

}  // namespace f2fscore
