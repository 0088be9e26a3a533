// The log-structured writer: a read-write mount of an F2FS volume.
//
// First layer (docs/writer.md): regular files and directories; every data
// and node write goes to a new block of one of the six active logs
// (out-of-place update, LFS allocation of wholly free segments, as
// fs/f2fs/segment.c does without SSR); data blocks reach the device when
// written, node blocks, NAT, SIT, SSA and the checkpoint pack at sync() and
// unmount(), through the metadata rebuild's checkpoint writer
// (meta_rebuild.hpp). A power cut leaves the volume as the last checkpoint
// says. Not thread-safe yet: serialise calls per Writer.
#pragma once

#include <cstdint>
#include <memory>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "f2fscore/device.hpp"
#include "f2fscore/disk/constants.hpp"
#include "f2fscore/result.hpp"

namespace f2fscore {

using disk::nid_t;

struct MountOptions {
  /// Seconds since the epoch for inode times the writer sets; 0: the clock.
  std::uint64_t fixed_time = 0;
};

/// What stat() tells about an inode. Sizes in bytes, blocks in 4 KiB blocks
/// (the inode block included, as i_blocks on disk).
struct WriterStat {
  nid_t ino = 0;
  std::uint16_t mode = 0;
  std::uint64_t size = 0;
  std::uint64_t blocks = 0;
  std::uint32_t links = 0;
  bool is_dir() const { return (mode & 0xF000) == 0x4000; }
  bool is_reg() const { return (mode & 0xF000) == 0x8000; }
};

/// Counters of what the writer did since mount.
struct WriterStats {
  std::uint64_t data_blocks_written = 0;  ///< 4 KiB data blocks (dentry blocks included)
  std::uint64_t node_blocks_written = 0;  ///< 4 KiB node blocks
  std::uint64_t checkpoints = 0;
  std::uint64_t segments_allocated = 0;   ///< new segments opened by the logs
};

/// A read-write mount. Paths are absolute ("/a/b"), bytes, no symlinks
/// followed. Names are at most 255 bytes (F2FS_NAME_LEN).
class Writer {
 public:
  /// Mounts `dev` read-write. `dev` must outlive the Writer. Refuses
  /// (Errc::unsupported, naming the reason) volumes it cannot write safely
  /// yet: compression, encryption, casefold, quota, zoned, multi-device,
  /// read-only (ro feature) volumes, and volumes with fsynced node chains
  /// after the checkpoint (Linux would roll them forward:
  /// f2fs_recover_fsync_data() in fs/f2fs/recovery.c; a checkpoint from us
  /// would lose them). Errors from opening the volume (corrupt, io) as
  /// Volume::open and meta::plan_from_volume report them.
  static Result<std::unique_ptr<Writer>> mount(BlockDevice& dev, const MountOptions& opts = {});
  ~Writer();
  Writer(const Writer&) = delete;
  Writer& operator=(const Writer&) = delete;

  /// Writes a checkpoint (CP_UMOUNT_FLAG clear): node blocks, NAT, SIT,
  /// SSA, then the checkpoint pack (docs/writer.md gives the order). If it
  /// fails the handle is closed (later calls: invalid_argument) and the
  /// volume is as the previous checkpoint left it, unless the error came
  /// from the last flush (docs/checkpoint.md).
  Status sync();
  /// Writes the checkpoint of an unmount (CP_UMOUNT_FLAG set). Every later
  /// call but the destructor fails with Errc::invalid_argument.
  Status unmount();

  /// Creates an empty regular file. Errors: exists, not_found (parent),
  /// invalid_argument (bad name, parent not a directory), no_space.
  Result<nid_t> create(std::string_view path, std::uint16_t perm = 0644);
  /// Creates an empty directory (a dentry block with "." and "..").
  Result<nid_t> mkdir(std::string_view path, std::uint16_t perm = 0755);
  /// Removes a name of a regular file; at link count 0 frees its blocks,
  /// nodes and nid. Errors: not_found; invalid_argument for a directory.
  Status unlink(std::string_view path);
  /// Removes an empty directory. Errors: not_found; invalid_argument for a
  /// non-directory, the root or a directory with entries.
  Status rmdir(std::string_view path);
  /// The inode a path names. Errors: not_found, invalid_argument.
  Result<nid_t> lookup(std::string_view path);
  Result<WriterStat> stat(nid_t ino);
  /// Names in a directory, "." and ".." left out, in on-disk order.
  Result<std::vector<std::string>> list(nid_t dir);

  /// Writes `data` at byte `offset` of regular file `ino`, extending it.
  /// Errors: invalid_argument (not a regular file, past the largest file),
  /// no_space.
  Result<std::size_t> write(nid_t ino, std::uint64_t offset, std::span<const std::uint8_t> data);
  /// Reads up to out.size() bytes at `offset`; short at end of file; holes
  /// read as zeroes.
  Result<std::size_t> read(nid_t ino, std::uint64_t offset, std::span<std::uint8_t> out);
  /// Sets the size of regular file `ino` (bytes): shrinking frees the
  /// blocks and nodes past the end and zeroes the tail of the last block;
  /// growing leaves a hole.
  Status truncate(nid_t ino, std::uint64_t size);

  const WriterStats& stats() const;

  struct Impl;

 private:
  explicit Writer(std::unique_ptr<Impl> impl);
  std::unique_ptr<Impl> impl_;
};

}  // namespace f2fscore
