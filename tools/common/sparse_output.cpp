// Android sparse output through libsparse (see sparse_output.hpp).
#include "f2fscore/tools/sparse_output.hpp"

#if defined(F2FSCORE_HAVE_LIBSPARSE)
#ifndef _FILE_OFFSET_BITS
#define _FILE_OFFSET_BITS 64
#endif
#include <fcntl.h>
#include <sparse/sparse.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <filesystem>
#include <vector>

#include "f2fscore/device.hpp"
#include "f2fscore/sparse_image.hpp"
#include "f2fscore/uring_device.hpp"
#endif

namespace f2fscore::tools {

#if defined(F2FSCORE_HAVE_LIBSPARSE)

namespace {

constexpr std::uint64_t kBlock = 4096;

std::string errno_text(int e) { return std::strerror(e); }

Error io_error(const std::string& what, int e) {
  return Error{e == ENOSPC || e == EDQUOT ? Errc::no_space : Errc::io, e, Error::kNoOffset,
               what + ": " + errno_text(e)};
}

// A new empty file beside `target`: ".NAME.f2fscore-TAG-XXXXXX" in its
// directory. Returns the path; `fd` open for reading and writing.
Result<std::string> temp_beside(const std::string& target, const char* tag, int& fd) {
  const std::filesystem::path t(target);
  const std::filesystem::path dir = t.has_parent_path() ? t.parent_path() : std::filesystem::path(".");
  std::string tmpl = (dir / ("." + t.filename().string() + ".f2fscore-" + tag + "-XXXXXX")).string();
  std::vector<char> buf(tmpl.begin(), tmpl.end());
  buf.push_back('\0');
  fd = ::mkstemp(buf.data());
  if (fd < 0) return make_error(io_error("cannot create a temporary file in " + dir.string(), errno));
  return std::string(buf.data());
}

Status write_all(int fd, const std::uint8_t* p, std::size_t n, std::uint64_t off, const std::string& path) {
  while (n > 0) {
    const ssize_t w = ::pwrite(fd, p, n, static_cast<off_t>(off));
    if (w < 0 && errno == EINTR) continue;
    if (w <= 0) return make_error(io_error("write " + path, w < 0 ? errno : EIO));
    p += w;
    n -= static_cast<std::size_t>(w);
    off += static_cast<std::uint64_t>(w);
  }
  return {};
}

bool zero_block(const std::uint8_t* p, std::size_t n) {
  return std::all_of(p, p + n, [](std::uint8_t b) { return b == 0; });
}

// A target in use (an image behind a mounted or held loop device) is
// refused before anything is made: the rename would leave the loop device
// on the old file while the caller believes it replaced.
Status refuse_in_use(const std::string& target) {
  if (InUse u = check_in_use(target))
    return make_error(Errc::busy, "cannot replace " + target + ": " + u.detail, Error::kNoOffset, EBUSY);
  return {};
}

}  // namespace

bool sparse_output_compiled() noexcept { return true; }

Result<SparseStaging> SparseStaging::create(const std::string& target, std::uint64_t size) {
  F2FSCORE_TRY(refuse_in_use(target));
  return make(target, size);
}

Result<SparseStaging> SparseStaging::make(const std::string& target, std::uint64_t size) {
  if (size == 0 || size % kBlock != 0)
    return make_error(Errc::invalid_argument, "the image size " + std::to_string(size) +
                                                  " is not a positive multiple of 4096 bytes");
  struct stat st {};
  if (::stat(target.c_str(), &st) == 0 && !S_ISREG(st.st_mode))
    return make_error(Errc::unsupported, target + " is not a regular file: a sparse image is written to an image file");
  int fd = -1;
  auto raw = temp_beside(target, "raw", fd);
  if (!raw) return make_error(raw.error());
  SparseStaging s(target, *raw);
  if (::ftruncate(fd, static_cast<off_t>(size)) != 0) {
    const int e = errno;
    ::close(fd);
    return make_error(io_error("cannot size " + *raw, e));
  }
  ::close(fd);
  return s;
}

Result<SparseStaging> SparseStaging::expand(const std::string& target) {
  F2FSCORE_TRY(refuse_in_use(target));
  OpenOptions oo;
  oo.read_only = true;
  auto file = open_posix_device(target, oo);
  if (!file) return make_error(file.error());
  // open_posix_device() reads a sparse image as the image: check the file.
  {
    OpenOptions raw_oo = oo;
    raw_oo.sparse_as_raw = true;
    auto raw = open_posix_device(target, raw_oo);
    if (!raw) return make_error(raw.error());
    auto is = is_sparse_image(**raw);
    if (!is) return make_error(is.error());
    if (!*is) return make_error(Errc::invalid_argument, target + " is not an Android sparse image (-S reads and writes one)");
  }
  BlockDevice& dev = **file;
  const std::uint64_t size = dev.info().size_bytes;
  if (size % kBlock != 0)
    return make_error(Errc::invalid_argument, target + ": the sparse image describes " + std::to_string(size) +
                                                  " bytes, not a multiple of 4096");
  auto s = make(target, size);
  if (!s) return s;
  const int fd = ::open(s->raw_.c_str(), O_WRONLY | O_CLOEXEC);
  if (fd < 0) return make_error(io_error("cannot open " + s->raw_, errno));
  constexpr std::uint64_t kPiece = std::uint64_t{1} << 20;
  std::vector<std::uint8_t> buf(kPiece);
  Status st;
  for (std::uint64_t pos = 0; st && pos < size;) {
    const std::uint64_t a = dev.next_data(pos, size);
    if (a >= size) break;
    const std::uint64_t b = dev.next_hole(a, size);
    for (std::uint64_t o = a; st && o < b; o += kPiece) {
      const std::uint64_t n = std::min(kPiece, b - o);
      st = read_at(dev, o, {buf.data(), static_cast<std::size_t>(n)});
      if (st) st = write_all(fd, buf.data(), static_cast<std::size_t>(n), o, s->raw_);
    }
    pos = b;
  }
  ::close(fd);
  if (!st) return make_error(st.error());
  return s;
}

SparseStaging::SparseStaging(SparseStaging&& o) noexcept : target_(std::move(o.target_)), raw_(std::move(o.raw_)) {
  o.raw_.clear();
}

SparseStaging::~SparseStaging() {
  if (!raw_.empty()) ::unlink(raw_.c_str());
}

Status SparseStaging::commit() {
  const int rfd = ::open(raw_.c_str(), O_RDONLY | O_CLOEXEC);
  if (rfd < 0) return make_error(io_error("cannot open " + raw_, errno));
  struct stat st {};
  if (::fstat(rfd, &st) != 0) {
    const int e = errno;
    ::close(rfd);
    return make_error(io_error("cannot stat " + raw_, e));
  }
  const auto size = static_cast<std::uint64_t>(st.st_size);
  struct sparse_file* sf = sparse_file_new(static_cast<unsigned>(kBlock), static_cast<std::int64_t>(size));
  if (sf == nullptr) {
    ::close(rfd);
    return make_error(Errc::no_space, "libsparse: cannot make a sparse file of " + std::to_string(size) + " bytes");
  }
  // Runs of non-zero blocks of the staging file's data ranges become raw
  // chunks read from it at write time (sparse_file_add_fd); at most
  // kMaxRun bytes per chunk.
  constexpr std::uint64_t kPiece = std::uint64_t{1} << 20, kMaxRun = std::uint64_t{64} << 20;
  std::vector<std::uint8_t> buf(kPiece);
  Status result;
  std::uint64_t run_start = 0, run_len = 0;
  auto end_run = [&]() -> Status {
    if (run_len == 0) return {};
    const int r = sparse_file_add_fd(sf, rfd, static_cast<std::int64_t>(run_start), static_cast<unsigned>(run_len),
                                     static_cast<unsigned>(run_start / kBlock));
    run_len = 0;
    if (r != 0) return make_error(Errc::no_space, "libsparse: sparse_file_add_fd failed");
    return {};
  };
  for (std::uint64_t pos = 0; result && pos < size;) {
    off_t a = ::lseek(rfd, static_cast<off_t>(pos), SEEK_DATA);
    if (a < 0) {
      if (errno == ENXIO) break;  // no data after pos
      a = static_cast<off_t>(pos);  // no SEEK_DATA here: all of it may be data
    }
    off_t b = ::lseek(rfd, a, SEEK_HOLE);
    if (b < 0) b = static_cast<off_t>(size);
    auto da = static_cast<std::uint64_t>(a) / kBlock * kBlock;
    auto db = std::min(size, (static_cast<std::uint64_t>(b) + kBlock - 1) / kBlock * kBlock);
    for (std::uint64_t o = da; result && o < db; o += kPiece) {
      const std::uint64_t n = std::min(kPiece, db - o);
      std::size_t got = 0;
      while (got < n) {
        const ssize_t r = ::pread(rfd, buf.data() + got, static_cast<std::size_t>(n - got), static_cast<off_t>(o + got));
        if (r < 0 && errno == EINTR) continue;
        if (r <= 0) {
          result = make_error(io_error("read " + raw_, r < 0 ? errno : EIO));
          break;
        }
        got += static_cast<std::size_t>(r);
      }
      for (std::uint64_t k = 0; result && k < n; k += kBlock) {
        const std::uint64_t blk = o + k;
        if (zero_block(buf.data() + k, static_cast<std::size_t>(std::min(kBlock, n - k)))) {
          result = end_run();
          continue;
        }
        if (run_len != 0 && (run_start + run_len != blk || run_len >= kMaxRun)) result = end_run();
        if (!result) break;
        if (run_len == 0) run_start = blk;
        run_len += kBlock;
      }
    }
    if (result) result = end_run();
    pos = std::max(db, pos + kBlock);
  }
  if (result) result = end_run();
  int ofd = -1;
  std::string out;
  if (result) {
    auto t = temp_beside(target_, "sparse", ofd);
    if (!t) result = make_error(t.error());
    else out = *t;
  }
  if (result) {
    // The target's mode when it exists; else rw-r--r-- (mkstemp made 0600).
    struct stat ts {};
    ::fchmod(ofd, ::stat(target_.c_str(), &ts) == 0 ? (ts.st_mode & 07777) : 0644);
    if (sparse_file_write(sf, ofd, false, true, false) != 0) result = make_error(io_error("libsparse: write " + out, errno ? errno : EIO));
    else if (::fsync(ofd) != 0) result = make_error(io_error("fsync " + out, errno));
  }
  if (ofd >= 0) ::close(ofd);
  sparse_file_destroy(sf);
  ::close(rfd);
  if (result && ::rename(out.c_str(), target_.c_str()) != 0) result = make_error(io_error("rename " + out + " to " + target_, errno));
  if (!result) {
    if (!out.empty()) ::unlink(out.c_str());
    return result;
  }
  // The rename durable: the directory synced.
  const std::filesystem::path t(target_);
  const std::string dir = t.has_parent_path() ? t.parent_path().string() : ".";
  const int dfd = ::open(dir.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (dfd >= 0) {
    ::fsync(dfd);
    ::close(dfd);
  }
  return {};
}

#else  // no libsparse

namespace {
Error no_libsparse() {
  return Error{Errc::unsupported, 0, Error::kNoOffset,
               "this build writes no Android sparse images (-S): it was built without libsparse "
               "(Debian: android-libsparse-dev)"};
}
}  // namespace

bool sparse_output_compiled() noexcept { return false; }
Result<SparseStaging> SparseStaging::create(const std::string&, std::uint64_t) { return make_error(no_libsparse()); }
Result<SparseStaging> SparseStaging::expand(const std::string&) { return make_error(no_libsparse()); }
SparseStaging::SparseStaging(SparseStaging&& o) noexcept : target_(std::move(o.target_)), raw_(std::move(o.raw_)) {
  o.raw_.clear();
}
SparseStaging::~SparseStaging() = default;
Status SparseStaging::commit() { return make_error(no_libsparse()); }

#endif

}  // namespace f2fscore::tools
