#include "test_support.hpp"

#include <algorithm>
#include <array>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <random>
#include <sstream>
#include <stdexcept>

#if defined(_WIN32)
#include <process.h>
#else
#include <fcntl.h>
#include <sys/wait.h>
#include <unistd.h>
#endif

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

unsigned sample_stride() {
  static const unsigned n = [] {
    const char* v = std::getenv("F2FSCORE_TEST_SAMPLE");
    const long x = v ? std::strtol(v, nullptr, 10) : 1;
    return x >= 1 && x <= 1000 ? static_cast<unsigned>(x) : 1u;
  }();
  return n;
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

namespace {
long process_id() {
#if defined(_WIN32)
  return static_cast<long>(_getpid());
#else
  return static_cast<long>(::getpid());
#endif
}
}  // namespace

TempDir::TempDir() : owner_(process_id()) {
  std::random_device rd;
  const fs::path base = fs::temp_directory_path();
  for (;;) {
    path_ = base / ("f2fscore-test-" + std::to_string(rd()));
    if (fs::create_directory(path_)) break;
  }
}
TempDir::~TempDir() {
  if (process_id() != owner_) return;  // a forked child leaves its parent's directory
  std::error_code ec;
  fs::remove_all(path_, ec);
}

const fs::path& scratch_dir() {
  static const TempDir dir;
  return dir.path();
}

void make_sparse_file(const fs::path& path, std::uint64_t bytes) {
  std::error_code ec;
  { std::ofstream(path, std::ios::binary | std::ios::trunc); }
  fs::resize_file(path, bytes, ec);
  if (ec || !fs::is_regular_file(path)) throw std::runtime_error("cannot create " + path.string());
}

std::string shell_quote(const std::string& s) {
  std::string o = "'";
  for (char c : s) {
    if (c == '\'') o += "'\\''";
    else o += c;
  }
  return o + "'";
}

#if !defined(_WIN32)

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
  fs::path out = scratch_dir() / src.stem();
  if (fs::exists(out)) fs::remove(out);
  const auto r = run("zstd -q -d -o " + shell_quote(out.string()) + " " + shell_quote(src.string()));
  if (r.exit_code != 0) return std::nullopt;
  return out;
}

bool read_zst(const fs::path& src, const std::function<void(std::span<const std::uint8_t>)>& sink) {
  FILE* f = ::popen(("zstd -q -d -c " + shell_quote(src.string()) + " 2>/dev/null").c_str(), "r");
  if (f == nullptr) return false;
  std::vector<std::uint8_t> buf(1 << 20);
  std::size_t n;
  while ((n = std::fread(buf.data(), 1, buf.size(), f)) > 0) sink(std::span<const std::uint8_t>(buf.data(), n));
  return ::pclose(f) == 0;
}

std::string reference_tool(const char* name) {
  for (const char* dir : {"/usr/sbin/", "/sbin/", "/usr/bin/"}) {
    const std::string p = std::string(dir) + name;
    if (::access(p.c_str(), X_OK) == 0) return p;
  }
  return {};
}

std::vector<std::string> fsck_problems(const fs::path& image, std::string* full_output, bool in_place) {
  TempDir tmp;
  const fs::path copy = in_place ? image : tmp / "copy.img";
  auto cp = in_place ? CommandResult{0, ""} : run("cp --sparse=always " + shell_quote(image.string()) + " " + shell_quote(copy.string()));
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

#else  // Windows

namespace {
// The build's decompressed copy of `src` (tests/unzstd_fixtures.cmake).
fs::path unzstd_copy_of(const fs::path& src) {
  return fs::path(F2FSCORE_UNZSTD_DIR) / src.parent_path().filename() / src.stem();
}
}  // namespace

bool read_zst(const fs::path& src, const std::function<void(std::span<const std::uint8_t>)>& sink) {
  std::ifstream in(unzstd_copy_of(src), std::ios::binary);
  if (!in) return false;
  std::vector<std::uint8_t> buf(1 << 20);
  while (in) {
    in.read(reinterpret_cast<char*>(buf.data()), static_cast<std::streamsize>(buf.size()));
    const auto n = static_cast<std::size_t>(in.gcount());
    if (n == 0) break;
    sink(std::span<const std::uint8_t>(buf.data(), n));
  }
  return !in.bad();
}

std::optional<fs::path> unzstd(const fs::path& src) {
  const fs::path out = scratch_dir() / src.stem();
  std::error_code ec;
  fs::remove(out, ec);
  std::uint64_t size = 0;
  bool ok = true;
  {
    std::ofstream o(out, std::ios::binary | std::ios::trunc);
    if (!o) return std::nullopt;
    ok = read_zst(src, [&](std::span<const std::uint8_t> chunk) {
      for (std::size_t b = 0; b < chunk.size(); b += 4096) {
        const std::size_t len = std::min<std::size_t>(4096, chunk.size() - b);
        const auto* p = chunk.data() + b;
        if (std::all_of(p, p + len, [](std::uint8_t c) { return c == 0; })) continue;
        o.seekp(static_cast<std::streamoff>(size + b));
        o.write(reinterpret_cast<const char*>(p), static_cast<std::streamsize>(len));
      }
      size += chunk.size();
    });
    ok = ok && o.good();
  }
  if (ok) fs::resize_file(out, size, ec);
  if (!ok || ec) {
    fs::remove(out, ec);
    return std::nullopt;
  }
  return out;
}

std::string reference_tool(const char*) { return {}; }

#endif

std::optional<SparseImage> load_zst_image(const fs::path& src) {
  SparseImage img;
  Block pending{};
  std::size_t have = 0;  // bytes of `pending` filled
  auto put = [&](const Block& b) {
    if (std::any_of(b.begin(), b.end(), [](std::uint8_t c) { return c != 0; }))
      img.blocks[img.size_bytes / b.size()] = b;
  };
  const bool ok = read_zst(src, [&](std::span<const std::uint8_t> chunk) {
    for (std::size_t at = 0; at < chunk.size();) {
      const std::size_t n = std::min(pending.size() - have, chunk.size() - at);
      std::memcpy(pending.data() + have, chunk.data() + at, n);
      have += n;
      at += n;
      if (have == pending.size()) {
        put(pending);
        img.size_bytes += pending.size();
        have = 0;
      }
    }
  });
  if (have > 0) {  // a short last block, zero-filled in the map
    std::fill(pending.begin() + static_cast<std::ptrdiff_t>(have), pending.end(), std::uint8_t{0});
    put(pending);
    img.size_bytes += have;
  }
  if (!ok || img.size_bytes == 0) return std::nullopt;
  return img;
}

namespace {
// Allocated extents of a file as [start, end) byte ranges: SEEK_DATA and
// SEEK_HOLE where the host has them, else the whole file.
std::vector<std::pair<std::uint64_t, std::uint64_t>> extents(const fs::path& path, std::uint64_t size) {
  std::vector<std::pair<std::uint64_t, std::uint64_t>> out;
#if defined(SEEK_DATA) && defined(SEEK_HOLE)
  const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd >= 0) {
    off_t pos = 0;
    while (static_cast<std::uint64_t>(pos) < size) {
      const off_t d = ::lseek(fd, pos, SEEK_DATA);
      if (d < 0) break;
      off_t h = ::lseek(fd, d, SEEK_HOLE);
      if (h < 0) h = static_cast<off_t>(size);
      out.emplace_back(static_cast<std::uint64_t>(d), static_cast<std::uint64_t>(h));
      pos = h;
    }
    ::close(fd);
    return out;
  }
#else
  (void)path;
#endif
  if (size > 0) out.emplace_back(0, size);
  return out;
}

// Reads `buf.size()` bytes at `off` (zeroes past the end of the file).
void read_zero_filled(std::ifstream& in, std::uint64_t off, std::span<std::uint8_t> buf) {
  std::fill(buf.begin(), buf.end(), std::uint8_t{0});
  in.clear();
  in.seekg(static_cast<std::streamoff>(off));
  if (in) in.read(reinterpret_cast<char*>(buf.data()), static_cast<std::streamsize>(buf.size()));
}
}  // namespace

std::vector<std::uint64_t> differing_blocks(const fs::path& a, const fs::path& b) {
  std::vector<std::uint64_t> diff;
  std::ifstream fa(a, std::ios::binary), fb(b, std::ios::binary);
  const std::uint64_t size = std::max(fs::file_size(a), fs::file_size(b));
  auto ea = extents(a, size), eb = extents(b, size);
  ea.insert(ea.end(), eb.begin(), eb.end());
  std::sort(ea.begin(), ea.end());
  std::vector<std::uint8_t> ba(1 << 20), bb(1 << 20);
  std::uint64_t done = 0;  // everything below `done` was compared
  for (auto [s, e] : ea) {
    s = std::max(s / 4096 * 4096, done);
    e = (e + 4095) / 4096 * 4096;
    for (std::uint64_t off = s; off < e; off += ba.size()) {
      const std::size_t n = static_cast<std::size_t>(std::min<std::uint64_t>(ba.size(), e - off));
      read_zero_filled(fa, off, std::span<std::uint8_t>(ba.data(), n));
      read_zero_filled(fb, off, std::span<std::uint8_t>(bb.data(), n));
      for (std::size_t i = 0; i < n; i += 4096)
        if (std::memcmp(ba.data() + i, bb.data() + i, std::min<std::size_t>(4096, n - i)) != 0)
          diff.push_back((off + i) / 4096);
    }
    done = std::max(done, e);
  }
  return diff;
}

std::vector<std::uint8_t> read_block(const fs::path& path, std::uint64_t blkaddr) {
  std::vector<std::uint8_t> b(4096, 0);
  std::ifstream in(path, std::ios::binary);
  read_zero_filled(in, blkaddr * 4096, b);
  return b;
}

namespace {
std::uint32_t ror(std::uint32_t x, int n) { return (x >> n) | (x << (32 - n)); }
}  // namespace

void Sha256::update(const void* data, std::size_t len) {
  const auto* p = static_cast<const std::uint8_t*>(data);
  len_ += len;
  if (n_) {
    const std::size_t k = std::min(len, 64 - n_);
    std::memcpy(buf_ + n_, p, k);
    n_ += k;
    p += k;
    len -= k;
    if (n_ == 64) {
      block(buf_);
      n_ = 0;
    }
  }
  for (; len >= 64; p += 64, len -= 64) block(p);
  if (len) {
    std::memcpy(buf_, p, len);
    n_ = len;
  }
}

// The padding of FIPS 180-4, 5.1.1: a 1 bit, zeroes to 56 mod 64 bytes, the
// message's length in bits as a big-endian 64-bit number.
std::string Sha256::hex() {
  const std::uint64_t bits = len_ * 8;
  const std::uint8_t pad = 0x80, zero = 0;
  update(&pad, 1);
  while (n_ != 56) update(&zero, 1);
  std::uint8_t l[8];
  for (int i = 0; i < 8; ++i) l[i] = static_cast<std::uint8_t>(bits >> (56 - 8 * i));
  update(l, 8);
  char out[65];
  for (int i = 0; i < 8; ++i) std::snprintf(out + 8 * i, 9, "%08x", static_cast<unsigned>(h_[i]));
  return std::string(out, 64);
}

// One 64-byte block (FIPS 180-4, 6.2.2; the constants of 4.2.2).
void Sha256::block(const std::uint8_t* p) {
  static constexpr std::uint32_t k[64] = {
      0x428a2f98, 0x71374491, 0xb5c0fbcf, 0xe9b5dba5, 0x3956c25b, 0x59f111f1, 0x923f82a4, 0xab1c5ed5,
      0xd807aa98, 0x12835b01, 0x243185be, 0x550c7dc3, 0x72be5d74, 0x80deb1fe, 0x9bdc06a7, 0xc19bf174,
      0xe49b69c1, 0xefbe4786, 0x0fc19dc6, 0x240ca1cc, 0x2de92c6f, 0x4a7484aa, 0x5cb0a9dc, 0x76f988da,
      0x983e5152, 0xa831c66d, 0xb00327c8, 0xbf597fc7, 0xc6e00bf3, 0xd5a79147, 0x06ca6351, 0x14292967,
      0x27b70a85, 0x2e1b2138, 0x4d2c6dfc, 0x53380d13, 0x650a7354, 0x766a0abb, 0x81c2c92e, 0x92722c85,
      0xa2bfe8a1, 0xa81a664b, 0xc24b8b70, 0xc76c51a3, 0xd192e819, 0xd6990624, 0xf40e3585, 0x106aa070,
      0x19a4c116, 0x1e376c08, 0x2748774c, 0x34b0bcb5, 0x391c0cb3, 0x4ed8aa4a, 0x5b9cca4f, 0x682e6ff3,
      0x748f82ee, 0x78a5636f, 0x84c87814, 0x8cc70208, 0x90befffa, 0xa4506ceb, 0xbef9a3f7, 0xc67178f2};
  std::uint32_t w[64];
  for (int i = 0; i < 16; ++i)
    w[i] = std::uint32_t{p[4 * i]} << 24 | std::uint32_t{p[4 * i + 1]} << 16 | std::uint32_t{p[4 * i + 2]} << 8 | p[4 * i + 3];
  for (int i = 16; i < 64; ++i)
    w[i] = w[i - 16] + (ror(w[i - 15], 7) ^ ror(w[i - 15], 18) ^ (w[i - 15] >> 3)) + w[i - 7] +
           (ror(w[i - 2], 17) ^ ror(w[i - 2], 19) ^ (w[i - 2] >> 10));
  std::uint32_t a = h_[0], b = h_[1], c = h_[2], d = h_[3], e = h_[4], f = h_[5], g = h_[6], h = h_[7];
  for (int i = 0; i < 64; ++i) {
    const std::uint32_t t1 = h + (ror(e, 6) ^ ror(e, 11) ^ ror(e, 25)) + ((e & f) ^ (~e & g)) + k[i] + w[i];
    const std::uint32_t t2 = (ror(a, 2) ^ ror(a, 13) ^ ror(a, 22)) + ((a & b) ^ (a & c) ^ (b & c));
    h = g;
    g = f;
    f = e;
    e = d + t1;
    d = c;
    c = b;
    b = a;
    a = t1 + t2;
  }
  h_[0] += a; h_[1] += b; h_[2] += c; h_[3] += d; h_[4] += e; h_[5] += f; h_[6] += g; h_[7] += h;
}

std::string sha256_hex(std::string_view data) {
  Sha256 h;
  h.update(data.data(), data.size());
  return h.hex();
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
