#include "f2fscore/tools/progress.hpp"

#include <algorithm>
#include <cstdio>

#if defined(_WIN32)
#include <io.h>
#define F2FSCORE_ISATTY(fd) _isatty(fd)
#define F2FSCORE_WRITE(fd, p, n) _write(fd, p, static_cast<unsigned>(n))
#else
#include <unistd.h>
#define F2FSCORE_ISATTY(fd) ::isatty(fd)
#define F2FSCORE_WRITE(fd, p, n) ::write(fd, p, n)
#endif

namespace f2fscore::tools {

bool Progress::active(bool json) const {
  if (fd_ > 0) return true;
  return fd_ == 0 && !json && F2FSCORE_ISATTY(1) != 0;
}

void Progress::operator()(int pass, std::uint64_t cur, std::uint64_t max) {
  if (fd_ == 0) {
    constexpr int kWidth = 40;
    const double f = ((pass - 1) + (max ? static_cast<double>(cur) / static_cast<double>(max) : 1.0)) / passes_;
    const int permille = static_cast<int>(f * 1000);
    if (permille == last_shown_) return;
    last_shown_ = permille;
    const int filled = std::clamp(static_cast<int>(f * kWidth), 0, kWidth);
    std::printf("\r%s: |%s%s| %5.1f%% (pass %d)", device_.c_str(), std::string(static_cast<std::size_t>(filled), '=').c_str(),
                std::string(static_cast<std::size_t>(kWidth - filled), ' ').c_str(), f * 100.0, pass);
    std::fflush(stdout);
    return;
  }
  if (fd_ < 0 || closed_) return;
  char line[512];
  const int n = std::snprintf(line, sizeof line, "%d %llu %llu %s\n", pass, static_cast<unsigned long long>(cur),
                              static_cast<unsigned long long>(max), device_.c_str());
  if (n <= 0) return;
  const std::size_t len = std::min<std::size_t>(static_cast<std::size_t>(n), sizeof line - 1);
  std::size_t off = 0;
  while (off < len) {
    const auto w = F2FSCORE_WRITE(fd_, line + off, len - off);
    if (w <= 0) {
      closed_ = true;  // a closed reader ends the reports, not the run
      return;
    }
    off += static_cast<std::size_t>(w);
  }
}

void Progress::finish() {
  if (fd_ == 0 && last_shown_ >= 0) {
    std::printf("\r%*s\r", static_cast<int>(device_.size()) + 60, "");
    std::fflush(stdout);
  }
}

std::function<void(std::uint64_t, std::uint64_t)> Progress::for_pass(int pass, bool json) {
  if (!active(json)) return {};
  return [this, pass](std::uint64_t cur, std::uint64_t max) { (*this)(pass, cur, max); };
}

}  // namespace f2fscore::tools
