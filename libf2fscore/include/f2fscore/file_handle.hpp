// Files and directories by path, as a POSIX program sees them: open(2)
// with its flags returning a handle, read/write at a position,
// pread/pwrite, fsync/fdatasync telling whether they took a checkpoint,
// truncate, fallocate, stat, setattr, readdir and extended attributes by
// their full names ("user.k") (docs/embedding.md, "Files and
// directories").
//
// Every error these calls return carries the errno Linux's f2fs returns
// for the same call in Error::sys_errno (the oracle test
// tests/writer/handle_linux.sh compares them case by case with Linux 6.1);
// errno_of() (result.hpp) gives one for any Error. The values are those of the build's
// <cerrno>; EDQUOT (122) and EUCLEAN (117), which not every C library
// defines, have Linux's numbers.
//
// Included by writer.hpp (the Writer calls returning a FileHandle are
// declared there); it can be included on its own.
#pragma once

#include <cstdint>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "f2fscore/result.hpp"
#include "f2fscore/writer.hpp"

namespace f2fscore {

/// Flags of Writer::open(), as open(2) takes them. The values are Linux's
/// of include/uapi/asm-generic/fcntl.h (x86, i686, s390, RISC-V, ...);
/// arm, arm64, powerpc, mips, sparc, alpha and parisc number some of them
/// differently: a caller passing its own <fcntl.h> flags there translates
/// them. What the writer does with each is said below; bits it does not
/// know are ignored, as open(2) ignores them.
namespace open_flag {
inline constexpr std::uint32_t rdonly = 00;  ///< O_RDONLY: read only
inline constexpr std::uint32_t wronly = 01;  ///< O_WRONLY: write only
inline constexpr std::uint32_t rdwr = 02;    ///< O_RDWR: read and write
/// O_ACCMODE: the access mode bits. Mode 3 opens for neither reading nor
/// writing (both EBADF) but needs write access (EISDIR on a directory), as
/// Linux's ACC_MODE() and OPEN_FMODE().
inline constexpr std::uint32_t accmode = 03;
inline constexpr std::uint32_t creat = 0100;  ///< O_CREAT: create a regular file when the name is missing
inline constexpr std::uint32_t excl = 0200;   ///< O_EXCL: with creat, EEXIST when the name exists (symlinks not followed)
inline constexpr std::uint32_t noctty = 0400;  ///< O_NOCTTY: no effect
/// O_TRUNC: size 0 when opening an existing regular file (also with
/// rdonly, as Linux); EISDIR on a directory; no effect on other types.
inline constexpr std::uint32_t trunc = 01000;
inline constexpr std::uint32_t append = 02000;  ///< O_APPEND: every write (pwrite too, as Linux) goes at the end
inline constexpr std::uint32_t nonblock = 04000;  ///< O_NONBLOCK: no effect
inline constexpr std::uint32_t dsync = 010000;    ///< O_DSYNC: each write as WriteFlags::dsync
/// O_DIRECT: each write as WriteFlags::direct (4 KiB-aligned offsets and
/// sizes, else EINVAL as Linux); reads go through the cache.
inline constexpr std::uint32_t direct = 040000;
inline constexpr std::uint32_t largefile = 0100000;  ///< O_LARGEFILE: no effect (always large)
inline constexpr std::uint32_t directory = 0200000;  ///< O_DIRECTORY: ENOTDIR unless a directory
inline constexpr std::uint32_t nofollow = 0400000;   ///< O_NOFOLLOW: ELOOP when the last component is a symlink
inline constexpr std::uint32_t noatime = 01000000;   ///< O_NOATIME: no effect (the writer sets no atime on reads)
inline constexpr std::uint32_t cloexec = 02000000;   ///< O_CLOEXEC: no effect
inline constexpr std::uint32_t sync = 04010000;      ///< O_SYNC (includes dsync): each write as WriteFlags::dsync
inline constexpr std::uint32_t path = 010000000;     ///< O_PATH: not supported (EOPNOTSUPP)
inline constexpr std::uint32_t tmpfile = 020200000;  ///< O_TMPFILE (includes directory): not supported (EOPNOTSUPP)
}  // namespace open_flag

/// lseek(2)'s whence, with Linux's SEEK_* values.
enum class Whence : std::uint8_t { set = 0, cur = 1, end = 2, data = 3, hole = 4 };

/// The d_type values of readdir(3) / getdents64(2) (DT_* in
/// include/linux/fs_types.h), as fs_ftype_to_dtype() maps F2FS_FT_*.
namespace dirent_type {
inline constexpr std::uint8_t unknown = 0, fifo = 1, chr = 2, dir = 4, blk = 6, reg = 8, lnk = 10, sock = 12;
}  // namespace dirent_type

/// One entry of readdir(): the name, the inode it names and its d_type
/// (dirent_type), as getdents64(2) on Linux f2fs returns them.
struct Dirent {
  std::string name;
  nid_t ino = 0;
  std::uint8_t type = dirent_type::unknown;
  friend bool operator==(const Dirent&, const Dirent&) = default;
};

/// What fsync()/fdatasync() did: `checkpoint` when durability came from a
/// checkpoint (need_do_checkpoint() in fs/f2fs/file.c said so, or node
/// writeback ended the fsync chain) rather than from an fsync-marked node
/// chain that roll-forward recovers (f2fs_recover_fsync_data()).
struct SyncReport {
  bool checkpoint = false;
};

/// The F2FS name index (F2FS_XATTR_INDEX_* in fs/f2fs/xattr.h) and the
/// stored name of a full xattr name, as xattr_resolve_name() in
/// fs/xattr.c picks f2fs's handler: "user." 1, "system.posix_acl_access"
/// 2 (stored name ""), "system.posix_acl_default" 3 (""), "trusted." 4,
/// "security." 6, "system.advise" 7 ("": no entry is stored; the calls
/// read and set i_advise, as f2fs_xattr_advise_get()/_set()). Errors
/// (Errc, sys_errno): invalid_argument ERANGE for an empty name or one over
/// 255 bytes (XATTR_NAME_MAX, as setxattr(2) copies it); unsupported
/// EOPNOTSUPP for any other prefix (the encryption and verity entries
/// included: Linux exposes no handler for them); invalid_argument EINVAL
/// for a bare prefix ("user.").
struct XattrName {
  std::uint8_t index = 0;
  std::string name;
};
Result<XattrName> parse_xattr_name(std::string_view full);
/// The full name of a stored entry ("user." + name); empty for an index
/// Linux does not list (advise, encryption, verity, lustre, unknown).
std::string xattr_full_name(std::uint8_t index, std::string_view name);

/// An open file or directory of a Writer (Writer::open()): an inode, the
/// open flags and a position. Holding one keeps the inode alive when its
/// last name goes (Writer::open(nid_t)): it is freed when the last handle
/// closes, or at the next mount after a power cut
/// (f2fs_recover_orphan_inodes()). Closed by close() or the destructor
/// (which drops close()'s error). Movable, not copyable. The Writer must
/// outlive its handles; after Writer::unmount() a handle's calls fail
/// (invalid_argument EINVAL) and closing it does nothing. Calls take the
/// Writer's lock (one handle may be used from several threads; the
/// position is then shared, as a file description's).
///
/// Access mode: read(), pread() need rdonly or rdwr; write(), pwrite(),
/// fallocate() need wronly or rdwr, else EBADF as Linux's
/// vfs_read()/vfs_write()/vfs_fallocate(); truncate() needs them too, else
/// EINVAL (do_sys_ftruncate()). stat(), setattr(), fsync(), fdatasync(),
/// xattrs and readdir() work in any mode. Every call on a closed handle:
/// invalid_argument EBADF.
class FileHandle {
 public:
  FileHandle() = default;
  ~FileHandle();
  FileHandle(FileHandle&& o) noexcept;
  FileHandle& operator=(FileHandle&& o) noexcept;
  FileHandle(const FileHandle&) = delete;
  FileHandle& operator=(const FileHandle&) = delete;

  bool is_open() const noexcept { return w_ != nullptr; }
  nid_t ino() const noexcept { return ino_; }
  std::uint32_t flags() const noexcept { return flags_; }  ///< open_flag bits as opened
  std::uint64_t position() const noexcept { return pos_; }  ///< bytes

  /// Releases the writer's open count (Writer::release()); an inode
  /// unlinked while open is freed here. The handle is closed whatever the
  /// result. Errors: as Writer::release() (corrupt, io), EBADF when closed.
  Status close();

  /// Reads up to out.size() bytes at the position and advances it; 0 at or
  /// past the end. Errors: EBADF (not opened for reading), EISDIR (a
  /// directory, generic_read_dir()), EINVAL (a device node: no driver). A
  /// FIFO reads as a pipe no one writes to: 0 bytes.
  Result<std::size_t> read(std::span<std::uint8_t> out);
  /// Writes at the position (at the end with append) and advances it past
  /// the data. Errors: EBADF (not opened for writing), EINVAL (not a
  /// regular file; direct with unaligned offset or size), EFBIG (past the
  /// largest file, as generic_write_checks()), ENOSPC, EDQUOT.
  Result<std::size_t> write(std::span<const std::uint8_t> data);
  /// read() at byte `offset`, the position unchanged. EINVAL for an offset
  /// of 2^63 or more (a negative loff_t).
  Result<std::size_t> pread(std::span<std::uint8_t> out, std::uint64_t offset);
  /// write() at byte `offset` (at the end with append, as Linux), the
  /// position unchanged.
  Result<std::size_t> pwrite(std::span<const std::uint8_t> data, std::uint64_t offset);
  /// lseek(2): the new position (bytes). set/cur/end as
  /// generic_file_llseek(); data/hole as f2fs_seek_block() (ENXIO at or past
  /// the end). EINVAL for a negative result or data/hole on a directory.
  Result<std::uint64_t> seek(std::int64_t offset, Whence whence);
  /// fsync(2) / fdatasync(2) of the inode (Writer::fsync()), in any access
  /// mode; reports whether a checkpoint was taken. A directory or special
  /// file takes a checkpoint when its inode changed since the last one
  /// (f2fs_sync_file() on a non-regular inode: need_do_checkpoint()).
  Result<SyncReport> fsync();
  Result<SyncReport> fdatasync();
  /// ftruncate(2): the size in bytes. EINVAL when not opened for writing
  /// or not a regular file (do_sys_ftruncate()), EFBIG past the largest
  /// file (inode_newsize_ok()).
  Status truncate(std::uint64_t size);
  /// fallocate(2) with falloc:: modes (Writer::fallocate()). Checks in
  /// vfs_fallocate()'s order: EINVAL for length 0, EOPNOTSUPP for unknown
  /// modes, punch_hole with zero_range, punch_hole without keep_size, and
  /// the collapse and insert modes (which the writer does not do), EBADF
  /// when not opened for writing, EISDIR on a directory, ENODEV on other
  /// non-regular files, EFBIG past the largest file.
  Status fallocate(std::uint32_t mode, std::uint64_t offset, std::uint64_t length);
  /// fstat(2) (Writer::stat()).
  Result<WriterStat> stat();
  /// fchmod/fchown/futimens (Writer::setattr()).
  Status setattr(const SetAttr& attr);
  /// getdents64(2) of a directory handle (Writer::readdir()); ENOTDIR on
  /// another type.
  Result<std::vector<Dirent>> readdir();
  /// fgetxattr/fsetxattr/flistxattr/fremovexattr: as the Writer's calls by
  /// path.
  Result<std::vector<std::uint8_t>> getxattr(std::string_view name);
  Status setxattr(std::string_view name, std::span<const std::uint8_t> value, XattrSet how = XattrSet::any);
  Result<std::vector<std::string>> listxattr();
  Status removexattr(std::string_view name);

 private:
  friend class Writer;
  FileHandle(Writer* w, nid_t ino, std::uint32_t flags) noexcept : w_(w), ino_(ino), flags_(flags) {}
  Result<std::size_t> do_write(std::span<const std::uint8_t> data, std::uint64_t offset, bool advance);
  Result<std::size_t> do_read(std::span<std::uint8_t> out, std::uint64_t offset, bool advance);
  Result<SyncReport> do_sync(bool datasync);
  Writer* w_ = nullptr;
  nid_t ino_ = 0;
  std::uint32_t flags_ = 0;
  std::uint64_t pos_ = 0;
};

}  // namespace f2fscore
