#include <algorithm>
#include "test_support.hpp"

#include <fcntl.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <array>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <random>
#include <sstream>

namespace f2fstest {

fs::path data_dir() { return fs::path(F2FSCORE_TESTDATA_DIR); }

std::optional<fs::path> shared_images_dir() {
  if (const char* e = std::getenv("F2FSCORE_SHARED_DIR")) {
    fs::path p = fs::path(e) / "images";
    if (fs::is_directory(p)) return p;
  }
  fs::path p = fs::path(F2FSCORE_SOURCE_DIR) / ".." / "shared" / "images";
  if (fs::is_directory(p)) return fs::canonical(p);
  return std::nullopt;
}

bool required(const char* what) {
  const std::string var = std::string("F2FSCORE_REQUIRE_") + what;
  const char* v = std::getenv(var.c_str());
  return v != nullptr && std::string(v) == "1";
}

std::unique_ptr<f2fscore::BlockDevice> load_image(const fs::path& path) {
  const auto size = fs::file_size(path);
  auto dev = f2fscore::make_memory_device(size, 512, path.string());
  std::ifstream in(path, std::ios::binary);
  std::vector<std::uint8_t> buf(1 << 20);
  std::uint64_t off = 0;
  while (off < size) {
    const auto n = static_cast<std::size_t>(std::min<std::uint64_t>(buf.size(), size - off));
    in.read(reinterpret_cast<char*>(buf.data()), static_cast<std::streamsize>(n));
    for (std::size_t b = 0; b < n; b += 4096) {
      const std::size_t len = std::min<std::size_t>(4096, n - b);
      bool zero = true;
      for (std::size_t i = 0; i < len && zero; ++i) zero = buf[b + i] == 0;
      if (!zero)
        (void)f2fscore::write_at(*dev, off + b, std::span<const std::uint8_t>(buf.data() + b, len));
    }
    off += n;
  }
  return dev;
}

TempDir::TempDir() {
  std::random_device rd;
  const fs::path base = std::getenv("TMPDIR") ? fs::path(std::getenv("TMPDIR")) : fs::path("/tmp");
  for (;;) {
    path_ = base / ("f2fscore-test-" + std::to_string(rd()));
    if (fs::create_directory(path_)) break;
  }
}
TempDir::~TempDir() {
  std::error_code ec;
  fs::remove_all(path_, ec);
}

void make_sparse_file(const fs::path& path, std::uint64_t bytes) {
  const int fd = ::open(path.c_str(), O_CREAT | O_TRUNC | O_WRONLY, 0644);
  if (fd < 0 || ::ftruncate(fd, static_cast<off_t>(bytes)) != 0) {
    if (fd >= 0) ::close(fd);
    throw std::runtime_error("cannot create " + path.string());
  }
  ::close(fd);
}

std::string shell_quote(const std::string& s) {
  std::string o = "'";
  for (char c : s) {
    if (c == '\'') o += "'\\''";
    else o += c;
  }
  return o + "'";
}

CommandResult run(const std::string& command) {
  CommandResult r;
  const std::string full = "(" + command + ") </dev/null 2>&1";
  FILE* p = ::popen(full.c_str(), "r");
  if (p == nullptr) return r;
  std::array<char, 4096> buf{};
  std::size_t n;
  while ((n = std::fread(buf.data(), 1, buf.size(), p)) > 0) r.output.append(buf.data(), n);
  const int status = ::pclose(p);
  r.exit_code = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
  return r;
}

std::optional<fs::path> unzstd(const fs::path& src) {
  static TempDir* dir = new TempDir();  // lives for the process
  fs::path out = dir->path() / src.stem();
  if (fs::exists(out)) fs::remove(out);
  const auto r = run("zstd -q -d -o " + shell_quote(out.string()) + " " + shell_quote(src.string()));
  if (r.exit_code != 0) return std::nullopt;
  return out;
}

std::string reference_tool(const char* name) {
  for (const char* dir : {"/usr/sbin/", "/sbin/", "/usr/bin/"}) {
    const std::string p = std::string(dir) + name;
    if (::access(p.c_str(), X_OK) == 0) return p;
  }
  return {};
}

std::vector<std::string> fsck_problems(const fs::path& image, std::string* full_output) {
  TempDir tmp;
  const fs::path copy = tmp / "copy.img";
  auto cp = run("cp --sparse=always " + shell_quote(image.string()) + " " + shell_quote(copy.string()));
  std::vector<std::string> problems;
  if (cp.exit_code != 0) {
    problems.push_back("cannot copy image: " + cp.output);
    return problems;
  }
  const auto r = run(reference_tool("fsck.f2fs") + " -f " + shell_quote(copy.string()));
  if (full_output) *full_output = r.output;
  if (r.exit_code != 0) problems.push_back("fsck.f2fs exit status " + std::to_string(r.exit_code));
  std::istringstream is(r.output);
  std::string line;
  bool summary = false;
  while (std::getline(is, line)) {
    if (line.rfind("[FSCK]", 0) == 0) {
      summary = true;
      if (line.find("fixing SIT types") != std::string::npos) continue;
      if (line.find("Max image size") != std::string::npos) continue;
      // Progress of big trees ("[FSCK] Check node 251 / 2503 (10.04%)").
      if (line.rfind("[FSCK] Check node ", 0) == 0) continue;
      if (line.find("[Ok..]") == std::string::npos) problems.push_back(line);
      continue;
    }
    for (const char* bad : {"[Fail]", "[ASSERT]", "[FIX]", "Fixing", "Reconnect", "Move curseg"})
      if (line.find(bad) != std::string::npos) {
        problems.push_back(line);
        break;
      }
  }
  if (!summary) problems.push_back("fsck.f2fs printed no [FSCK] summary");
  return problems;
}

namespace {
// Allocated extents of a file as [start, end) byte ranges.
std::vector<std::pair<std::uint64_t, std::uint64_t>> extents(int fd, std::uint64_t size) {
  std::vector<std::pair<std::uint64_t, std::uint64_t>> out;
  off_t pos = 0;
  while (static_cast<std::uint64_t>(pos) < size) {
    const off_t d = ::lseek(fd, pos, SEEK_DATA);
    if (d < 0) break;
    off_t h = ::lseek(fd, d, SEEK_HOLE);
    if (h < 0) h = static_cast<off_t>(size);
    out.emplace_back(static_cast<std::uint64_t>(d), static_cast<std::uint64_t>(h));
    pos = h;
  }
  return out;
}
}  // namespace

std::vector<std::uint64_t> differing_blocks(const fs::path& a, const fs::path& b) {
  std::vector<std::uint64_t> diff;
  const int fa = ::open(a.c_str(), O_RDONLY), fb = ::open(b.c_str(), O_RDONLY);
  const std::uint64_t size = std::max(fs::file_size(a), fs::file_size(b));
  auto ea = extents(fa, size), eb = extents(fb, size);
  ea.insert(ea.end(), eb.begin(), eb.end());
  std::sort(ea.begin(), ea.end());
  std::vector<std::uint8_t> ba(1 << 20), bb(1 << 20);
  std::uint64_t done = 0;  // everything below `done` was compared
  for (auto [s, e] : ea) {
    s = std::max(s / 4096 * 4096, done);
    e = (e + 4095) / 4096 * 4096;
    for (std::uint64_t off = s; off < e; off += ba.size()) {
      const std::size_t n = static_cast<std::size_t>(std::min<std::uint64_t>(ba.size(), e - off));
      std::memset(ba.data(), 0, n);
      std::memset(bb.data(), 0, n);
      (void)!::pread(fa, ba.data(), n, static_cast<off_t>(off));
      (void)!::pread(fb, bb.data(), n, static_cast<off_t>(off));
      for (std::size_t i = 0; i < n; i += 4096)
        if (std::memcmp(ba.data() + i, bb.data() + i, std::min<std::size_t>(4096, n - i)) != 0)
          diff.push_back((off + i) / 4096);
    }
    done = std::max(done, e);
  }
  ::close(fa);
  ::close(fb);
  return diff;
}

std::vector<std::uint8_t> read_block(const fs::path& path, std::uint64_t blkaddr) {
  std::vector<std::uint8_t> b(4096, 0);
  const int fd = ::open(path.c_str(), O_RDONLY);
  (void)!::pread(fd, b.data(), b.size(), static_cast<off_t>(blkaddr * 4096));
  ::close(fd);
  return b;
}

std::vector<SharedImage> shared_syzkaller_images(const fs::path& images_dir) {
  std::vector<SharedImage> out;
  for (const auto& ent : fs::directory_iterator(images_dir / "syzkaller")) {
    const auto p = ent.path();
    if (p.extension() != ".zst") continue;
    SharedImage si;
    si.stem = p.filename().string().substr(0, p.filename().string().find('.'));
    si.image_zst = p;
    std::ifstream m(images_dir / "syzkaller" / (si.stem + ".linux-manifest"));
    for (std::string l; std::getline(m, l);)
      if (!l.empty()) si.manifest.push_back(l);
    std::sort(si.manifest.begin(), si.manifest.end());
    out.push_back(std::move(si));
  }
  std::sort(out.begin(), out.end(), [](const SharedImage& a, const SharedImage& b) { return a.stem < b.stem; });
  return out;
}

}  // namespace f2fstest
