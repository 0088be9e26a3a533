// Extraction of a file or a tree to a host directory.
//
// Safety: every entry is created relative to a directory descriptor opened
// with O_NOFOLLOW | O_DIRECTORY, files with O_CREAT | O_EXCL | O_NOFOLLOW,
// so a symlink written earlier (or planted in the destination) is never
// followed; names that could escape the directory ('/', ".", "..") or that
// the host cannot hold (empty, NUL) are refused. Directory modes and times
// are applied at the end, deepest first, so a read-only directory can
// still be filled and hard links can reach into it.
#ifndef _FILE_OFFSET_BITS
#define _FILE_OFFSET_BITS 64
#endif
// Windows has no *at() calls, modes or symlinks of this kind: its
// extractor is extract_win32.cpp, which shares render_extract_report().
#if !defined(_WIN32)
#include <fcntl.h>
#include <sys/stat.h>
#include <sys/types.h>
#include <unistd.h>
#endif
#if defined(__linux__)
#include <sys/sysmacros.h>
#include <sys/xattr.h>
#define F2FSCORE_HAVE_XATTR 1
#define F2FSCORE_HAVE_COPY_FILE_RANGE 1  // glibc 2.27, Linux 4.5; FICLONERANGE: Linux 4.5
#include <linux/fs.h>
#include <sys/ioctl.h>
#endif

#include <algorithm>
#include <array>
#include <cerrno>
#include <cinttypes>
#include <cstring>
#include <deque>
#include <tuple>
#include <unordered_map>
#include <unordered_set>

#include "f2fscore/disk/xattr.hpp"
#include "f2fscore/endian.hpp"
#include "f2fscore/extract.hpp"
#include "f2fscore/fscrypt.hpp"

#include "extract_progress.hpp"
#include "extract_runs.hpp"
#include "inspect/inspect_internal.hpp"

namespace f2fscore::inspect {

using namespace disk;
using namespace detail;

#if !defined(_WIN32)
namespace {

constexpr int kMaxDepth = 512;  // one open directory per level
constexpr std::size_t kChunkBlocks = 256;  // blocks per read of the device
constexpr std::size_t kReadAhead = 4;      // reads in flight
#if defined(F2FSCORE_HAVE_COPY_FILE_RANGE)
constexpr std::uint64_t kCopyMax = std::uint64_t{1} << 30;  // bytes per clone or copy_file_range() call
constexpr std::uint64_t kAdviseBytes = std::uint64_t{64} << 20;  // of a file's extents asked ahead of its copy
#endif

std::string errno_text(int e) { return std::strerror(e); }

/// Why a name from the image cannot be created on the host, or empty.
std::string refuse_reason(const std::string& n) {
  if (n.empty()) return "empty name";
  if (n == "." || n == "..") return "name \"" + n + "\"";
  if (n.find('/') != std::string::npos) return "name contains '/'";
  if (n.find('\0') != std::string::npos) return "name contains a NUL byte";
  return {};
}

/// Volume::xattrs() returns POSIX ACLs in the VFS xattr form (version 2),
/// as getxattr(2) does; one still in f2fs's on-disk form (version 1) is
/// one the kernel could not decode either.
bool is_vfs_acl(const std::string& v) { return v.size() >= 4 && load_le32(v.data(), 0) == 2; }

class Extractor {
 public:
  Extractor(Volume& v, const ExtractOptions& o, ExtractReport& r) : v_(v), o_(o), r_(r), progress_(v, o.progress) {
    is_root_ = ::geteuid() == 0;
  }

  void progress_done() { progress_.finish(); }

  void set_root(int fd, std::string host) {
    rootfd_ = fd;
    root_host_ = std::move(host);
  }

  // Extracts `in` as `name` inside `parentfd`; `rel` is its path relative
  // to the root descriptor, `img` its path in the image.
  void item(int parentfd, const std::string& name, const std::string& rel, const std::string& img, const InodeInfo& in,
            int depth) {
    if (in.is_encrypted()) {
      // With its master key among ExtractOptions::keys, in the clear.
      auto k = o_.keys ? fscrypt::inode_key(v_, in, *o_.keys) : Result<fscrypt::InodeKey>(make_error(Errc::unsupported, ""));
      if (!k) {
        r_.encrypted.push_back(img);
        return;
      }
      keys_.insert_or_assign(in.ino, std::move(*k));
    }
    const std::uint32_t type = in.mode & 0xF000;
    if (type != 0x4000 && in.links > 1) {
      if (auto it = links_.find(in.ino); it != links_.end()) {
        if (make_room(parentfd, name, rel, img, false) &&
            ::linkat(rootfd_, it->second.c_str(), parentfd, name.c_str(), 0) == 0) {
          ++r_.hard_links;
          return;
        }
        r_.warnings.push_back(img + ": cannot hard-link to " + it->second + " (" + errno_text(errno) + "); copied instead");
      }
    }
    progress_.inode();
    switch (type) {
      case 0x4000: directory(parentfd, name, rel, img, in, depth); break;
      case 0x8000: regular(parentfd, name, rel, img, in); break;
      case 0xA000: symlink(parentfd, name, rel, img, in); break;
      default: special(parentfd, name, rel, img, in); break;
    }
  }

  // Fills an existing directory with the entries of `dir` (the root "/" into
  // an existing destination).
  void contents(int fd, const std::string& rel, const std::string& img, const InodeInfo& dir, int depth) {
    if (!dirs_seen_.insert(dir.ino).second) {
      r_.problems.push_back(img + ": directory loop; not descended");
      return;
    }
    auto entries = list_dir(v_, dir);
    if (!entries) {
      r_.problems.push_back(img + ": " + describe(entries.error()));
      return;
    }
    if (auto k = keys_.find(dir.ino); k != keys_.end())  // an encrypted directory: its names decrypted
      for (auto& e : *entries) {
        if (e.dirent.name == "." || e.dirent.name == "..") continue;
        auto p = k->second.decrypt_name(e.dirent.name);
        if (p) e.dirent.name = std::move(*p);
        else e.error = describe(p.error()), e.inode.reset();
      }
    Ahead ahead;
    for (std::size_t i = 0; i < entries->size(); ++i) {
      const auto& e = (*entries)[i];
#if defined(F2FSCORE_HAVE_COPY_FILE_RANGE)
      advise_ahead(*entries, i, ahead);
#endif
      const std::string cimg = child_path(img, e.dirent.name);
      if (const auto why = refuse_reason(e.dirent.name); !why.empty()) {
        r_.problems.push_back(printable(cimg) + ": refused: " + why);
        continue;
      }
      if (!e.inode) {
        r_.problems.push_back(cimg + ": " + e.error);
        continue;
      }
      item(fd, e.dirent.name, rel.empty() ? e.dirent.name : rel + "/" + e.dirent.name, cimg, *e.inode, depth + 1);
    }
#if defined(F2FSCORE_HAVE_COPY_FILE_RANGE)
    for (const auto& a : ahead.advised) advised_inos_.erase(a.ino);
#endif
  }

  // Applies directory modes, owners, xattrs and times, deepest first.
  void finish() {
    for (auto it = pending_dirs_.rbegin(); it != pending_dirs_.rend(); ++it) {
      const int fd = it->rel.empty() ? ::openat(rootfd_, ".", O_RDONLY | O_DIRECTORY | O_CLOEXEC)
                                     : ::openat(rootfd_, it->rel.c_str(), O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
      if (fd < 0) {
        r_.warnings.push_back(it->img + ": cannot reopen to set its mode and times (" + errno_text(errno) + ")");
        continue;
      }
      attributes(fd, it->img, it->in, host_path(it->rel));
      ::close(fd);
    }
    pending_dirs_.clear();
  }

 private:
  struct PendingDir {
    std::string rel, img;
    InodeInfo in;
  };

  std::string host_path(const std::string& rel) const { return rel.empty() ? root_host_ : root_host_ + "/" + rel; }

  // A host-side failure: names the host path it happened on, then the
  // image path being extracted there.
  void host_problem(const std::string& rel, const std::string& img, const std::string& what) {
    r_.problems.push_back(host_path(rel) + ": " + what + " (extracting " + printable(img) + ")");
  }

  // Removes what is in the way of a new entry `name` (not a directory that
  // we want as a directory). Returns false (with a problem) if impossible.
  bool make_room(int parentfd, const std::string& name, const std::string& rel, const std::string& img, bool want_dir) {
    struct stat st {};
    if (::fstatat(parentfd, name.c_str(), &st, AT_SYMLINK_NOFOLLOW) != 0) return true;
    if (S_ISDIR(st.st_mode)) {
      if (want_dir) return true;
      host_problem(rel, img, "a directory is in the way");
      return false;
    }
    if (::unlinkat(parentfd, name.c_str(), 0) != 0) {
      host_problem(rel, img, "cannot replace the existing entry: " + errno_text(errno));
      return false;
    }
    return true;
  }

  void directory(int parentfd, const std::string& name, const std::string& rel, const std::string& img,
                 const InodeInfo& in, int depth) {
    if (depth > kMaxDepth) {
      r_.problems.push_back(img + ": deeper than " + std::to_string(kMaxDepth) + " levels; not extracted");
      return;
    }
    if (!make_room(parentfd, name, rel, img, true)) return;
    if (::mkdirat(parentfd, name.c_str(), 0700) != 0 && errno != EEXIST) {
      host_problem(rel, img, "mkdir: " + errno_text(errno));
      return;
    }
    const int fd = ::openat(parentfd, name.c_str(), O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
    if (fd < 0) {
      host_problem(rel, img, "open directory: " + errno_text(errno));
      return;
    }
    ++r_.directories;
    pending_dirs_.push_back({rel, img, in});
    contents(fd, rel, img, in, depth);
    ::close(fd);
  }

  void regular(int parentfd, const std::string& name, const std::string& rel, const std::string& img,
               const InodeInfo& in) {
    if (!make_room(parentfd, name, rel, img, false)) return;
    const int fd = ::openat(parentfd, name.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0600);
    if (fd < 0) {
      host_problem(rel, img, "create: " + errno_text(errno));
      return;
    }
    auto st = write_contents(fd, in);
    if (st && ::ftruncate(fd, static_cast<off_t>(in.size)) != 0)
      st = make_error(Errc::io, "ftruncate: " + errno_text(errno));
    if (!st) {
      r_.problems.push_back(img + ": " + describe(st.error()));
      ::close(fd);
      return;
    }
    ++r_.files;
    r_.bytes += in.size;
    attributes(fd, img, in, host_path(rel));
    ::close(fd);
    if (in.links > 1) links_.emplace(in.ino, rel);
  }

  // One contiguous piece of a file on the device: `len` blocks at block
  // address `blkaddr`, holding file block `file_block` onwards.
  struct Extent {
    std::uint64_t file_block, blkaddr, len;
  };

  // Writes the bytes [p, p + n) at file offset `off`, only its non-zero
  // blocks: zero blocks stay holes.
  static Status put(int fd, const std::uint8_t* p, std::size_t n, std::uint64_t off) {
    return host_detail::for_each_nonzero_run(p, n, [&](std::size_t k, std::size_t len) -> Status {
      std::size_t done = 0;
      while (done < len) {
        const ssize_t w = ::pwrite(fd, p + k + done, len - done, static_cast<off_t>(off + k + done));
        if (w < 0) {
          if (errno == EINTR) continue;
          return make_error(Errc::io, "write: " + errno_text(errno), Error::kNoOffset, errno);
        }
        done += static_cast<std::size_t>(w);
      }
      return {};
    });
  }

  // The file's mapped blocks in runs (holes, NEW_ADDR and COMPRESS_ADDR
  // left out) into `ext`, cut at its size. Errors: the block map's, and
  // Errc::corrupt for a run outside the main area.
  Status mapped_extents(const InodeInfo& in, std::vector<Extent>& ext) {
    const std::uint64_t nblocks = (in.size + kBlockSize - 1) / kBlockSize;
    auto bm = block_map(v_, in);
    if (!bm) return make_error(bm.error());
    ext.clear();
    for (const auto& r : bm->runs) {
      if (r.file_block >= nblocks) break;
      if (r.blkaddr == kNullAddr || r.blkaddr == kNewAddr || r.blkaddr == kCompressAddr) continue;
      const std::uint64_t len = std::min<std::uint64_t>(r.len, nblocks - r.file_block);
      const std::uint64_t last = static_cast<std::uint64_t>(r.blkaddr) + len - 1;
      if (!v_.is_valid_main_addr(r.blkaddr) || last > 0xFFFFFFFFu || !v_.is_valid_main_addr(static_cast<block_t>(last)))
        return make_error(Errc::corrupt, "inode " + std::to_string(in.ino) + ": file block " +
                                             std::to_string(r.file_block) + " maps to block " +
                                             std::to_string(r.blkaddr) + ", outside the main area");
      ext.push_back({r.file_block, r.blkaddr, len});
    }
    return {};
  }

  // Writes a file's contents: unmapped blocks stay holes. Mapped blocks go
  // through copy_file_range() from the image file where the device has one
  // (copy_extent()), else through reads of the device (read_extents()).
  Status write_contents(int fd, const InodeInfo& in) {
    if (auto k = keys_.find(in.ino); k != keys_.end()) {  // encrypted: read and decrypted block by block
      if (buf_.size() < kChunkBlocks * kBlockSize) buf_.resize(kChunkBlocks * kBlockSize);
      const std::span<std::uint8_t> buf(buf_.data(), kChunkBlocks * kBlockSize);
      for (std::uint64_t off = 0; off < in.size; off += buf.size()) {
        auto n = fscrypt::read_file(v_, in, k->second, off, buf);
        if (!n) return make_error(n.error());
        F2FSCORE_TRY(put(fd, buf.data(), *n, off));
        if (*n < buf.size()) break;
      }
      return {};
    }
    if (in.has_inline_data() || in.is_compressed()) {
      if (buf_.size() < kChunkBlocks * kBlockSize) buf_.resize(kChunkBlocks * kBlockSize);
      const std::span<std::uint8_t> buf(buf_.data(), kChunkBlocks * kBlockSize);
      for (std::uint64_t off = 0; off < in.size; off += buf.size()) {
        auto n = v_.read(in, off, buf);
        if (!n) return make_error(n.error());
        F2FSCORE_TRY(put(fd, buf.data(), *n, off));
        if (*n < buf.size()) break;
      }
      return {};
    }
    std::vector<Extent>& ext = extents_;
    F2FSCORE_TRY(mapped_extents(in, ext));
    std::size_t first_unread = 0;
#if defined(F2FSCORE_HAVE_COPY_FILE_RANGE)
    // The file's extents asked for unless advise_ahead() did, as soon as
    // they will be read or copied rather than shared.
    bool advised = advised_inos_.contains(in.ino);
    auto advise_rest = [&] {
      if (advised || !advise_ok()) return;
      advise_extents(std::span<const Extent>(ext).subspan(first_unread), kAdviseBytes);
      advised = true;
    };
    for (; first_unread < ext.size() && copy_ok(); ++first_unread) {
      advise_rest();
      auto copied = copy_extent(fd, ext[first_unread]);
      if (!copied) return make_error(copied.error());
      if (*copied < ext[first_unread].len) {  // the host refused: the rest through reads
        ext[first_unread].file_block += *copied;
        ext[first_unread].blkaddr += *copied;
        ext[first_unread].len -= *copied;
        break;
      }
    }
    advise_rest();
#endif
    return read_extents(fd, std::span<const Extent>(ext).subspan(first_unread));
  }

  // Reads extents from the device and writes them out, with up to kReadAhead
  // reads of kChunkBlocks in flight while the host write of the oldest
  // runs (a backend that completes at submission, POSIX, reads one ahead).
  Status read_extents(int fd, std::span<const Extent> ext) {
    struct Slot {
      IoRequest req;
      std::uint64_t file_offset = 0;
      bool done = false;
    };
    constexpr std::size_t kChunk = kChunkBlocks * kBlockSize;
    if (buf_.size() < kReadAhead * kChunk) buf_.resize(kReadAhead * kChunk);
    std::array<Slot, kReadAhead> slots{};
    BlockDevice& dev = v_.device();
    std::size_t ei = 0;         // next extent to submit from
    std::uint64_t eoff = 0;     // blocks of ext[ei] already submitted
    std::size_t head = 0, queued = 0;
    // Submits the next chunk into slot `s`; false when nothing is left.
    auto submit_next = [&](std::size_t s) {
      while (ei < ext.size() && eoff >= ext[ei].len) {
        ++ei;
        eoff = 0;
      }
      if (ei == ext.size()) return false;
      const std::uint64_t n = std::min<std::uint64_t>(kChunkBlocks, ext[ei].len - eoff);
      Slot& sl = slots[s];
      sl = Slot{};
      sl.file_offset = (ext[ei].file_block + eoff) * kBlockSize;
      sl.req.op = IoOp::read;
      sl.req.offset = (ext[ei].blkaddr + eoff) * kBlockSize;
      sl.req.length = n * kBlockSize;
      sl.req.buf = buf_.data() + s * kChunk;
      sl.req.user = &sl;
      sl.req.on_complete = [](IoRequest& r) noexcept { static_cast<Slot*>(r.user)->done = true; };
      eoff += n;
      dev.submit(sl.req);
      return true;
    };
    Status st;
    while (queued < kReadAhead && submit_next((head + queued) % kReadAhead)) ++queued;
    while (queued > 0) {
      Slot& sl = slots[head];
      while (!sl.done) dev.poll(true);
      if (st) {
        if (!sl.req.ok()) st = make_error(sl.req.error());
        else st = put(fd, static_cast<const std::uint8_t*>(sl.req.buf), static_cast<std::size_t>(sl.req.length),
                      sl.file_offset);
      }
      --queued;
      head = (head + 1) % kReadAhead;
      // After a failure nothing more is submitted; what is in flight drains.
      if (st && submit_next((head + queued) % kReadAhead)) ++queued;
    }
    return st;
  }

#if defined(F2FSCORE_HAVE_COPY_FILE_RANGE)
  // Whether copies from the image file are possible: a regular file behind
  // the device, read without O_DIRECT, and no earlier refusal.
  bool copy_ok() {
    if (copy_state_ == 0 && o_.host_copy == HostCopy::off) copy_state_ = -1;
    if (copy_state_ == 0) {
      const DeviceInfo& di = v_.device().info();
      copy_state_ = v_.device().host_descriptor() >= 0 && di.kind == DeviceKind::regular_file && !di.direct ? 1 : -1;
    }
    return copy_state_ > 0;
  }

  // Whether the kernel can be asked to read ahead what is copied or read:
  // the device has a host descriptor (an image file or a block device)
  // read through the host's page cache (not O_DIRECT).
  // Not while extents may be shared with the image file (reflinks read
  // nothing): with HostCopy::copy or reflink, once FICLONERANGE was refused.
  bool advise_ok() {
    if (advise_state_ == 0)
      advise_state_ = v_.device().host_descriptor() >= 0 && !v_.device().info().direct ? 1 : -1;
    return advise_state_ > 0 && (o_.host_copy == HostCopy::off || clone_state_ < 0 || !copy_ok());
  }

  // The files of a directory whose data the kernel was asked to read ahead
  // of their copies or reads (advise_ahead()): entry index, ino, bytes asked.
  struct Ahead {
    struct File {
      std::size_t index;
      nid_t ino;
      std::uint64_t bytes;
    };
    std::deque<File> advised;
    std::size_t next = 0;     // the first entry not looked at
    std::uint64_t bytes = 0;  // asked for and not yet copied
  };

#if defined(F2FSCORE_HAVE_COPY_FILE_RANGE)
  // Before entry `cur` of a directory is extracted: the kernel is asked to
  // read (POSIX_FADV_WILLNEED) the device's extents of the plain files from
  // `cur` on, up to kAdviseBytes ahead of the copies, so that the reads of
  // the next files overlap the copy of this one and the disk does not idle
  // between files (a copy_file_range() or the readahead of pread() reads
  // only the file at hand).
  void advise_ahead(const std::vector<Entry>& es, std::size_t cur, Ahead& a) {
    while (!a.advised.empty() && a.advised.front().index < cur) {
      a.bytes -= a.advised.front().bytes;
      advised_inos_.erase(a.advised.front().ino);
      a.advised.pop_front();
    }
    if (!advise_ok()) return;
    a.next = std::max(a.next, cur);
    for (; a.next < es.size() && a.bytes < kAdviseBytes; ++a.next) {
      const auto& e = es[a.next];
      if (!e.inode || !e.inode->is_reg() || e.inode->has_inline_data() || e.inode->is_compressed() ||
          e.inode->is_encrypted() || e.inode->size == 0)
        continue;
      std::vector<Extent>& ext = extents_;
      if (!mapped_extents(*e.inode, ext)) continue;  // the copy names the problem
      const std::uint64_t n = advise_extents(ext, kAdviseBytes - a.bytes);
      a.advised.push_back({a.next, e.inode->ino, n});
      a.bytes += n;
      advised_inos_.insert(e.inode->ino);
    }
  }
#endif

  // Asks the kernel to read the file's extents from the device's host
  // descriptor (POSIX_FADV_WILLNEED), up to `limit` bytes of them: their
  // reads are sent at once and overlap the copies of the extents before
  // them. Without it each copy reads under the descriptor's readahead
  // state, which the metadata reads between files leave at a random-read
  // window: the copy then reads in small steps that ramp up (measured: the
  // copy_file_range() calls of 100 files of 8 MiB took three times cp's).
  // Returns the bytes asked for (at most `limit`).
  std::uint64_t advise_extents(std::span<const Extent> ext, std::uint64_t limit) {
    const int src = v_.device().host_descriptor();
    std::uint64_t advised = 0;
    for (const Extent& e : ext) {
      if (advised >= limit) break;
      const std::uint64_t len = std::min(e.len * kBlockSize, limit - advised);
      (void)::posix_fadvise(src, static_cast<off64_t>(e.blkaddr * kBlockSize), static_cast<off64_t>(len),
                            POSIX_FADV_WILLNEED);
      advised += len;
    }
    return advised;
  }

  // Takes an extent from the image file: shares it (FICLONERANGE) where the
  // host file system can; with HostCopy::copy, what it cannot share is
  // copied with copy_file_range(2) (an in-kernel copy; after the first
  // refusal of FICLONERANGE by the host, every extent), as cp(1) does.
  // Ranges the image file holds as holes (SEEK_DATA) are skipped: they
  // stay holes. Returns the blocks done: all of them, or fewer when the
  // host refuses: EINVAL (alignment, this extent only); EXDEV, EOPNOTSUPP,
  // ENOTTY, ENOSYS, EPERM, EBADF or an early end of the image file, after
  // which copy_ok() is false for the rest of the extraction. The caller
  // reads the remainder. Errors: Errc::io, Errc::no_space for a failing
  // write on the host.
  Result<std::uint64_t> copy_extent(int fd, const Extent& e) {
    BlockDevice& dev = v_.device();
    const int src = dev.host_descriptor();
    const std::uint64_t start = e.blkaddr * kBlockSize, end = start + e.len * kBlockSize;
    std::uint64_t pos = start;
    while (pos < end) {
      // The next range of the image file that may hold data, in whole blocks.
      std::uint64_t d = std::min(dev.next_data(pos, end), end);
      d -= d % kBlockSize;
      if (d < pos) d = pos;
      if (d >= end) break;
      std::uint64_t h = std::min(dev.next_hole(d, end), end);
      h = std::min(end, (h + kBlockSize - 1) / kBlockSize * kBlockSize);
      if (h <= d) h = std::min(end, d + kBlockSize);
      auto in_off = static_cast<off64_t>(d);
      auto out_off = static_cast<off64_t>(e.file_block * kBlockSize + (d - start));
      bool clone = clone_state_ >= 0;
      while (static_cast<std::uint64_t>(in_off) < h) {
        const std::uint64_t want = std::min<std::uint64_t>(h - static_cast<std::uint64_t>(in_off), kCopyMax);
        ssize_t n = 0;
        if (clone) {
          struct file_clone_range fcr {};
          fcr.src_fd = static_cast<std::int64_t>(src);
          fcr.src_offset = static_cast<std::uint64_t>(in_off);
          fcr.src_length = want;
          fcr.dest_offset = static_cast<std::uint64_t>(out_off);
          n = ::ioctl(fd, FICLONERANGE, &fcr) == 0 ? static_cast<ssize_t>(want) : -1;
          if (n > 0) {
            in_off += static_cast<off64_t>(want);
            out_off += static_cast<off64_t>(want);
            clone_state_ = 1;
          }
        } else {
          n = ::copy_file_range(src, &in_off, fd, &out_off, static_cast<std::size_t>(want), 0);
        }
        if (n > 0) {
          r_.host_copied_bytes += static_cast<std::uint64_t>(n);
          continue;
        }
        const int err = n == 0 ? 0 : errno;
        if (err == EINTR) continue;
        const bool refused = n == 0 || err == EXDEV || err == ENOSYS || err == EOPNOTSUPP || err == ENOTTY ||
                             err == EPERM || err == EBADF;
        if (clone && o_.host_copy == HostCopy::copy && (err == EINVAL || (refused && n != 0))) {
          // Not shared: copied instead (this extent for EINVAL, every one
          // after a refusal of the kind).
          if (err != EINVAL) clone_state_ = -1;
          clone = false;
          continue;
        }
        if (err == EINVAL) return (static_cast<std::uint64_t>(in_off) - start) / kBlockSize;
        if (refused) {
          if (clone) clone_state_ = -1;
          copy_state_ = -1;
          // Whole blocks only: the caller reads from the first block not copied.
          return (static_cast<std::uint64_t>(in_off) - start) / kBlockSize;
        }
        return make_error(err == ENOSPC || err == EDQUOT ? Errc::no_space : Errc::io,
                          std::string(clone ? "FICLONERANGE: " : "copy_file_range: ") +
                              errno_text(err),
                          Error::kNoOffset, err);
      }
      pos = h;
    }
    return e.len;
  }
#endif

  void symlink(int parentfd, const std::string& name, const std::string& rel, const std::string& img,
               const InodeInfo& in) {
    auto target = v_.read_link(in);
    if (auto k = keys_.find(in.ino); target && k != keys_.end()) target = k->second.decrypt_symlink(*target);
    if (!target) {
      r_.problems.push_back(img + ": " + describe(target.error()));
      return;
    }
    if (target->empty() || target->find('\0') != std::string::npos) {
      r_.problems.push_back(img + ": symlink target is empty or holds a NUL byte");
      return;
    }
    if (!make_room(parentfd, name, rel, img, false)) return;
    if (::symlinkat(target->c_str(), parentfd, name.c_str()) != 0) {
      host_problem(rel, img, "symlink: " + errno_text(errno));
      return;
    }
    ++r_.symlinks;
    attributes_at(parentfd, name, img, in, host_path(rel), true);
    if (in.links > 1) links_.emplace(in.ino, rel);
  }

  void special(int parentfd, const std::string& name, const std::string& rel, const std::string& img,
               const InodeInfo& in) {
    const std::uint32_t type = in.mode & 0xF000;
    if (!o_.specials) {
      r_.skipped.push_back(img + ": " + file_type_name(in.mode) + " (special files not requested)");
      return;
    }
    const bool device = type == 0x2000 || type == 0x6000;
    if (device && !is_root_) {
      r_.skipped.push_back(img + ": " + file_type_name(in.mode) + " (device nodes need root)");
      return;
    }
    if (!make_room(parentfd, name, rel, img, false)) return;
    dev_t dev = 0;
    if (device) {
      const auto d = device_number(in);
      dev = makedev(d.major, d.minor);
    }
    const mode_t m = static_cast<mode_t>(type | 0600);
    const int rc = type == 0x1000 ? ::mkfifoat(parentfd, name.c_str(), 0600) : ::mknodat(parentfd, name.c_str(), m, dev);
    if (rc != 0) {
      if (errno == EPERM || errno == EACCES || errno == ENOTSUP) {
        r_.skipped.push_back(img + ": " + file_type_name(in.mode) + " (" + errno_text(errno) + ")");
      } else {
        host_problem(rel, img, "mknod: " + errno_text(errno));
      }
      return;
    }
    ++r_.specials;
    attributes_at(parentfd, name, img, in, host_path(rel), false);
    if (in.links > 1) links_.emplace(in.ino, rel);
  }

  // Host name and value of an image xattr, or empty for internal ones
  // (advise, encryption context, verity descriptor location) and unknown.
  static std::pair<std::string, std::string> host_xattr(const XattrInfo& x) {
    switch (x.index) {
      case xattr_index::user: return {"user." + x.name, x.value};
      case xattr_index::trusted: return {"trusted." + x.name, x.value};
      case xattr_index::security: return {"security." + x.name, x.value};
      case xattr_index::posix_acl_access: return {"system.posix_acl_access", x.value};
      case xattr_index::posix_acl_default: return {"system.posix_acl_default", x.value};
      default: return {};
    }
  }

  void set_xattrs(int fd, const std::string& img, const InodeInfo& in, const std::string& host, bool nofollow_path) {
    if (!o_.xattrs) return;
    auto xs = v_.xattrs(in);
    if (!xs) {
      r_.problems.push_back(img + ": " + describe(xs.error()));
      return;
    }
    for (const auto& x : *xs) {
      auto [name, value] = host_xattr(x);
      if (name.empty()) continue;
      if (!is_vfs_acl(value) && (x.index == xattr_index::posix_acl_access || x.index == xattr_index::posix_acl_default)) {
        r_.problems.push_back(img + ": malformed ACL in " + name);
        continue;
      }
#if defined(F2FSCORE_HAVE_XATTR)
      const int rc = nofollow_path ? ::lsetxattr(host.c_str(), name.c_str(), value.data(), value.size(), 0)
                                   : ::fsetxattr(fd, name.c_str(), value.data(), value.size(), 0);
      if (rc == 0) {
        ++r_.xattrs;
        continue;
      }
      const int e = errno;
      ++r_.xattrs_unsupported;
      if (warned_xattr_errnos_.insert(e).second)
        r_.warnings.push_back(img + ": setxattr " + printable(name) + ": " + errno_text(e) +
                              " (further xattrs refused for this reason are only counted)");
#else
      (void)fd;
      (void)host;
      (void)nofollow_path;
      ++r_.xattrs_unsupported;
      if (warned_xattr_errnos_.insert(ENOTSUP).second)
        r_.warnings.push_back(img + ": xattrs are not supported on this host (only counted from now on)");
#endif
    }
  }

  // Owner, xattrs, mode and times through an open descriptor.
  void attributes(int fd, const std::string& img, const InodeInfo& in, const std::string& host) {
    if (is_root_ && o_.owners && ::fchown(fd, in.uid, in.gid) != 0)
      r_.warnings.push_back(img + ": chown: " + errno_text(errno));
    set_xattrs(fd, img, in, host, false);
    if (::fchmod(fd, static_cast<mode_t>(in.mode & 07777)) != 0)
      r_.warnings.push_back(img + ": chmod: " + errno_text(errno));
    const struct timespec ts[2] = {
        {static_cast<time_t>(in.raw.i.i_atime.get()), static_cast<long>(in.raw.i.i_atime_nsec.get() % 1000000000u)},
        {static_cast<time_t>(in.raw.i.i_mtime.get()), static_cast<long>(in.raw.i.i_mtime_nsec.get() % 1000000000u)}};
    if (::futimens(fd, ts) != 0) r_.warnings.push_back(img + ": set times: " + errno_text(errno));
  }

  // The same for entries without a descriptor (symlinks, specials).
  void attributes_at(int parentfd, const std::string& name, const std::string& img, const InodeInfo& in,
                     const std::string& host, bool is_link) {
    if (is_root_ && o_.owners && ::fchownat(parentfd, name.c_str(), in.uid, in.gid, AT_SYMLINK_NOFOLLOW) != 0)
      r_.warnings.push_back(img + ": chown: " + errno_text(errno));
    set_xattrs(-1, img, in, host, true);
    if (!is_link && ::fchmodat(parentfd, name.c_str(), static_cast<mode_t>(in.mode & 07777), 0) != 0)
      r_.warnings.push_back(img + ": chmod: " + errno_text(errno));
    const struct timespec ts[2] = {
        {static_cast<time_t>(in.raw.i.i_atime.get()), static_cast<long>(in.raw.i.i_atime_nsec.get() % 1000000000u)},
        {static_cast<time_t>(in.raw.i.i_mtime.get()), static_cast<long>(in.raw.i.i_mtime_nsec.get() % 1000000000u)}};
    if (::utimensat(parentfd, name.c_str(), ts, AT_SYMLINK_NOFOLLOW) != 0)
      r_.warnings.push_back(img + ": set times: " + errno_text(errno));
  }

  Volume& v_;
  std::unordered_map<nid_t, fscrypt::InodeKey> keys_;  ///< encrypted inodes whose key was given
  const ExtractOptions& o_;
  ExtractReport& r_;
  host_detail::ExtractProgress progress_;
  bool is_root_ = false;
  int rootfd_ = -1;
  std::string root_host_;
  std::unordered_map<nid_t, std::string> links_;  // ino -> path relative to the root descriptor
  std::unordered_set<nid_t> dirs_seen_;
  std::vector<PendingDir> pending_dirs_;
  std::vector<std::uint8_t> buf_;  // a file's blocks on their way out, kReadAhead chunks (one allocation)
  std::vector<Extent> extents_;    // the mapped extents of the file being written
#if defined(F2FSCORE_HAVE_COPY_FILE_RANGE)
  std::unordered_set<nid_t> advised_inos_;  // files advise_ahead() asked the kernel to read
  int advise_state_ = 0;  // advise_ok(): 0 not yet known, 1 a host descriptor read through the page cache, -1 no
  int clone_state_ = 0;   // FICLONERANGE: 0 not tried, 1 shared an extent, -1 refused by the host
  int copy_state_ = 0;  // copy_ok(): 0 not yet known, 1 takes extents from the image file, -1 reads
#endif
  std::unordered_set<int> warned_xattr_errnos_;
};

std::pair<std::string, std::string> split_host(const std::string& p) {
  std::string s = p;
  while (s.size() > 1 && s.back() == '/') s.pop_back();
  const auto slash = s.rfind('/');
  if (slash == std::string::npos) return {".", s};
  if (slash == 0) return {"/", s.substr(1)};
  return {s.substr(0, slash), s.substr(slash + 1)};
}

}  // namespace

Result<ExtractReport> extract(Volume& vol, std::string_view path, const std::string& dest, const ExtractOptions& o) {
  auto src = find_inode(vol, path.empty() ? std::string_view("/") : path);
  if (!src) return make_error(src.error());
  if (dest.empty()) return make_error(Errc::invalid_argument, "empty destination");
  ExtractReport rep;
  // The source's path and name in the image.
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
  struct stat st {};
  const bool exists = ::stat(dest.c_str(), &st) == 0;
  std::string parent_host, name;
  if (exists && S_ISDIR(st.st_mode)) {
    if (is_root) {
      // "/" into an existing directory: its contents go there.
      const int fd = ::open(dest.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
      if (fd < 0) return make_error(Errc::io, "cannot open " + dest + ": " + errno_text(errno), Error::kNoOffset, errno);
      rep.destination = dest;
      x.set_root(fd, dest);
      x.contents(fd, "", img, *src, 0);
      x.finish();
      x.progress_done();
      ::close(fd);
      return rep;
    }
    parent_host = dest;
    name = base;
  } else if (exists && src->is_dir()) {
    return make_error(Errc::exists, dest + " exists and is not a directory");
  } else {
    std::tie(parent_host, name) = split_host(dest);
    if (name.empty() || name == "." || name == "..")
      return make_error(Errc::invalid_argument, "destination \"" + dest + "\" has no usable last component");
  }
  if (const auto why = refuse_reason(name); !why.empty())
    return make_error(Errc::corrupt, "refusing to extract " + printable(img) + ": " + why);
  const int pfd = ::open(parent_host.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (pfd < 0)
    return make_error(Errc::not_found, "cannot open directory " + parent_host + ": " + errno_text(errno),
                      Error::kNoOffset, errno);
  rep.destination = parent_host == "/" ? "/" + name : parent_host + "/" + name;
  // Paths for hard links are relative to the parent; the top item's own
  // path is its name.
  x.set_root(pfd, parent_host);
  x.item(pfd, name, name, img, *src, 0);
  x.finish();
  x.progress_done();
  ::close(pfd);
  return rep;
}
#endif  // !_WIN32

Output render_extract_report(const ExtractReport& r, Format f) {
  Output o;
  o.problems = r.problems;
  if (f == Format::json) {
    Json j{{"source", json_string(r.source)},
           {"destination", json_string(r.destination)},
           {"files", r.files},
           {"directories", r.directories},
           {"symlinks", r.symlinks},
           {"hard_links", r.hard_links},
           {"specials", r.specials},
           {"bytes", r.bytes},
           {"host_copied_bytes", r.host_copied_bytes},
           {"xattrs", r.xattrs},
           {"xattrs_unsupported", r.xattrs_unsupported},
           {"encrypted", Json::array()},
           {"skipped", Json::array()},
           {"warnings", Json::array()},
           {"problems", Json::array()}};
    for (const auto& s : r.encrypted) j["encrypted"].push_back(json_string(s));
    for (const auto& s : r.skipped) j["skipped"].push_back(json_string(s));
    for (const auto& s : r.warnings) j["warnings"].push_back(json_string(s));
    for (const auto& s : r.problems) j["problems"].push_back(json_string(s));
    o.text = json_text(j);
    return o;
  }
  std::string& t = o.text;
  // "Extracted" only when nothing failed; otherwise the line says what is
  // missing (the problems themselves go to the caller).
  if (r.problems.empty())
    appendf(t, "Extracted %s to %s: ", printable(r.source).c_str(), printable(r.destination).c_str());
  else
    appendf(t, "Extraction of %s to %s incomplete: %zu %s not extracted; written: ", printable(r.source).c_str(),
            printable(r.destination).c_str(), r.problems.size(), r.problems.size() == 1 ? "entry" : "entries");
  appendf(t, "%" PRIu64 " files (%" PRIu64 " bytes), %" PRIu64 " directories, %" PRIu64 " symlinks, %" PRIu64
             " hard links, %" PRIu64 " special files, %" PRIu64 " xattrs\n",
          r.files, r.bytes, r.directories, r.symlinks, r.hard_links, r.specials, r.xattrs);
  if (r.xattrs_unsupported) appendf(t, "xattrs refused by the host: %" PRIu64 "\n", r.xattrs_unsupported);
  for (const auto& s : r.encrypted) appendf(t, "encrypted, not extracted: %s\n", printable(s).c_str());
  for (const auto& s : r.skipped) appendf(t, "skipped: %s\n", printable(s).c_str());
  for (const auto& s : r.warnings) appendf(t, "warning: %s\n", printable(s).c_str());
  return o;
}

}  // namespace f2fscore::inspect
