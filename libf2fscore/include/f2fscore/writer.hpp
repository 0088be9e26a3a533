// The log-structured writer: a read-write mount of an F2FS volume
// (docs/writer.md, docs/ipu.md, docs/gc.md).
//
// Regular files, directories, symlinks, special files, hard links and
// xattrs. In a casefolded directory (F2FS_CASEFOLD_FL on a casefold
// volume) every call finds names by any case, as casefold.hpp folds them,
// and new entries are hashed by their folded name (fs/f2fs/dir.c). Data goes through a bounded page cache (or straight to the
// device with WriteFlags::direct) and is placed by the kernel's IPU rules
// (in place or out of place, f2fs_should_update_inplace()); new blocks come
// from the six active logs by LFS (wholly free segments) or SSR (free
// blocks of dirty segments, never one the last checkpoint references), as
// fs/f2fs/segment.c allocates; foreground and background GC reclaim
// sections (fs/f2fs/gc.c). fsync() and fdatasync() write fsync-marked node
// chains where the kernel would (else a checkpoint), and a mount rolls
// such chains forward (f2fs_recover_fsync_data()). Checkpoints (sync(),
// unmount(), periodic, after GC) write the dirty nodes, then the changed
// NAT and SIT entries (through the journals when they fit), the summaries
// of the segments written and a new checkpoint pack (meta_rebuild.hpp's
// incremental path). Mount reads the checkpoint and the SIT; NAT blocks
// and summaries are read as they are needed. A power cut leaves the volume
// as the last checkpoint says plus what roll-forward recovers. One Writer
// may be used from several threads: every public call takes the handle's
// lock (see the class).
#pragma once

#include <array>
#include <cstdint>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "f2fscore/device.hpp"
#include "f2fscore/disk/constants.hpp"
#include "f2fscore/disk/superblock.hpp"
#include "f2fscore/result.hpp"
#include "f2fscore/writer_policy.hpp"

namespace f2fscore {

using disk::nid_t;

struct MountOptions {
  /// Seconds since the epoch for inode times the writer sets; 0: the clock.
  std::uint64_t fixed_time = 0;
  /// The writer's clock, injectable for tests: nanoseconds since the epoch
  /// (UTC). When `now_ns` is set it replaces the system clock for the
  /// times the writer sets (inode times, the SIT's segment mtimes, the
  /// checkpoint's elapsed_time; fixed_time, if set, still wins for these),
  /// and the monotonic clock for the periodic checkpoint
  /// (checkpoint_interval_s); background GC's idle time follows the times
  /// set. A test moves it forward to take a periodic checkpoint where it
  /// wants one. It must not go backwards; it is called with the handle's
  /// lock held and must not call the Writer. Null: the system clocks.
  struct Clock {
    std::uint64_t (*now_ns)(void* ctx) noexcept = nullptr;
    void* ctx = nullptr;
  } clock{};
  /// Mount read-only: every call that would change the volume fails with
  /// Errc::read_only and nothing is written (not even a checkpoint).
  bool read_only = false;
  /// Build-time mode for read-only images (the ro feature, as mkfs.f2fs -O ro
  /// makes them for Android system partitions): the one way to write such a
  /// volume, for a tool that makes and fills the image before anything
  /// mounts it (f2fscore-sload, f2fscore-mkfs --populate). The kernel mounts
  /// an ro volume read-only only (parse_options() in fs/f2fs/super.c:
  /// EROFS), with two active logs (NR_CURSEG_RO_TYPE: default_options()),
  /// hot data and hot node (__get_segment_type_2() in fs/f2fs/segment.c).
  /// So in this mode: every data block goes to the hot data log and every
  /// node block to the hot node log; the other four logs stay where the
  /// checkpoint has them and are never written (sanity_check_curseg() skips
  /// them for ro); a full segment opens a free one (LFS only: no SSR, no
  /// GC, no overprovision or reserved segments, so Errc::no_space once no
  /// segment is free); no SSA block is written (the volume has no SSA: the
  /// active logs' summaries live in the checkpoint pack); every checkpoint
  /// carries CP_UMOUNT_FLAG with the node summaries in the pack, as
  /// sload.f2fs leaves the image; fsync() takes a checkpoint (no roll-
  /// forward chains). Errors at mount: Errc::invalid_argument when the
  /// volume has no ro feature or with read_only. Without this option a
  /// read-write mount of an ro volume fails with Errc::unsupported.
  bool build_ro_image = false;
  /// Quota limits enforced per type (Linux's usrquota, grpquota, prjquota
  /// mount options): an allocation or chown past a hard limit, or past a
  /// soft limit after its grace time, fails with Errc::no_space and
  /// sys_errno EDQUOT (122), as check_bdq() / check_idq() in
  /// fs/quota/dquot.c for a caller without CAP_SYS_RESOURCE. Usage is kept
  /// on a quota volume whatever these say.
  bool usrquota = false, grpquota = false, prjquota = false;
  /// Compression on a volume with the compression feature (Linux's
  /// compress_algorithm, compress_log_size, compress_chksum,
  /// compress_extension and nocompress_extension mount options; the
  /// kernel's defaults, from default_options() in fs/f2fs/super.c, when
  /// unset: lz4, 2, off, none). A new inode takes them when it becomes
  /// compressed (set_compress_context() in fs/f2fs/f2fs.h): a regular file
  /// whose name ends in ".ext" of compress_extension (and of no
  /// nocompress_extension nor the superblock's hot list), or a file or
  /// directory made in a directory with F2FS_COMPR_FL
  /// (set_compress_new_inode() in fs/f2fs/namei.c). "*" matches every
  /// name. Errors at mount (Errc::invalid_argument): any of them set on a
  /// volume without the feature (the kernel ignores them there), an
  /// algorithm outside 0 lzo, 1 lz4, 2 zstd, 3 lzo-rle, a log size outside
  /// [2, 8] (MIN/MAX_COMPRESS_LOG_SIZE), more than 16 extensions
  /// (COMPRESS_EXT_NUM) or one longer than 7 bytes, an extension in both
  /// lists (EINVAL in f2fs_test_compress_extension()); Errc::unsupported
  /// for an algorithm this build has no encoder for.
  struct Compression {
    std::optional<std::uint8_t> algorithm;      ///< i_compress_algorithm: 0 lzo, 1 lz4, 2 zstd, 3 lzo-rle
    std::optional<std::uint8_t> log_size;       ///< i_log_cluster_size: clusters of 1 << log_size blocks
    std::optional<bool> chksum;                 ///< COMPRESS_CHKSUM in i_compress_flag
    std::vector<std::string> extension;         ///< compress_extension
    std::vector<std::string> nocompress_extension;
    /// A full cluster is stored compressed only when it saves at least this
    /// many blocks (cluster size less its compressed blocks), as
    /// sload.f2fs -m; unset: 1, the kernel's rule. At most the cluster size
    /// less 1 (Errc::invalid_argument at mount past the log size's cluster).
    std::optional<std::uint32_t> min_saved_blocks;
    /// compress_mode (COMPR_MODE_FS / COMPR_MODE_USER in fs/f2fs/f2fs.h;
    /// unset: fs). fs: every full cluster of a compressed file is written
    /// compressed when it saves a block. user: compressed files are written
    /// plain (a compressed cluster that is rewritten becomes plain), and
    /// clusters are compressed only by Writer::compress_file()
    /// (f2fs_need_compress_data() in fs/f2fs/compress.c: FI_ENABLE_COMPRESS).
    enum class Mode : std::uint8_t { fs, user };
    std::optional<Mode> mode;
    bool any() const {
      return algorithm || log_size || chksum || !extension.empty() || !nocompress_extension.empty() ||
             min_saved_blocks || mode;
    }
  } compression{};
  /// Bound of the page cache of buffered file data, bytes (dirty pages are
  /// written back when it fills, at fsync, sync and checkpoints).
  std::uint64_t cache_bytes = 64ull << 20;
  /// Keep the blocks read() brings from the device in that cache (clean).
  /// false where a cache above the writer holds them already, as the FUSE
  /// daemon's mount has the kernel's page cache: each block is then copied
  /// once, into the caller's buffer. Compressed clusters are cached either
  /// way (a cluster is decompressed whole).
  bool cache_reads = true;
  /// A checkpoint is taken by the first call after this many seconds since
  /// the last one when something changed (the kernel's cp_interval, 60 s);
  /// 0: only at sync(),
  /// unmount(), fsync() where roll-forward cannot carry it, and when the
  /// NAT entries changed since the last one pass the bounds below.
  std::uint32_t checkpoint_interval_s = 60;
  /// Bound of the node page cache, in 4 KiB node blocks: clean pages past
  /// it are evicted, least recently used first, at the start of each call;
  /// when half of it is dirty, the first changing call writes the dirty
  /// data pages, then the dirty node pages to the node logs without a
  /// checkpoint (node writeback, as
  /// f2fs_write_node_pages(); an fsync after it in the same checkpoint
  /// takes a checkpoint). A checkpoint is taken when the NAT entries
  /// changed since the last one reach a tenth of the NAT (excess_dirty_nats(),
  /// the kernel's dirty_nats_ratio 10) or fill half of the 1,024 NAT blocks
  /// the node manager keeps (a block with a changed entry stays cached until
  /// the checkpoint). One call may pass the bound while it runs (a large
  /// write, a truncate, GC).
  std::uint32_t node_cache_pages = 4096;
  /// Discard segments freed by a checkpoint (the kernel's "discard" mount
  /// option, on by default); devices without discard ignore it.
  bool discard = true;
  /// Fsynced node chains found after the checkpoint at mount: roll them
  /// forward as f2fs_recover_fsync_data() (fs/f2fs/recovery.c) does, or
  /// refuse the mount (Errc::unsupported).
  enum class Recovery : std::uint8_t { roll_forward, refuse } recovery = Recovery::roll_forward;
  IpuOptions ipu{};
  GcOptions gc{};
  /// New blocks go only to main-area sections wholly below this segment
  /// number (0: anywhere); evacuate() sets it. f2fscore-resize's shrink.
  std::uint32_t allocation_limit_segno = 0;
  /// New blocks go only to main-area sections wholly at or past this
  /// segment number (0: anywhere); evacuate_front() sets it.
  /// f2fscore-resize's grow that moves the main area's start.
  std::uint32_t allocation_floor_segno = 0;
  /// A read-write mount of a file or block device refuses one that
  /// check_in_use() reports in use (mounted, an image whose loop device is
  /// mounted or held, a block device another open holds with O_EXCL), with
  /// Errc::busy before anything is read or written. False for an embedder
  /// that knows better. Memory devices and read-only mounts are not checked.
  bool refuse_in_use = true;
  /// Before the first write, a read-write mount checks what the writer
  /// relies on: preen's fast check (every node the NAT points at, inode
  /// checksums and modes, SIT counts against their bitmaps, the
  /// checkpoint's counts, the fsynced node chain; fsck::Options::fast_only),
  /// the orphan list (every entry an inode with no links, as
  /// f2fs_recover_orphan_inodes() expects) and the active logs (inside the
  /// main area, their next block free and, for an LFS log, every block
  /// after it, as sanity_check_curseg() in fs/f2fs/segment.c). A volume
  /// with problems (other than informational ones, such as a torn
  /// checkpoint pack) is, per this option: refused
  /// with Errc::corrupt naming the first problem and "run f2fscore-fsck",
  /// nothing written; mounted read-only; or mounted read-write anyway (the
  /// allocation guards still refuse to hand out a nid or block in use).
  /// Read-only mounts are not checked.
  enum class OnDamage : std::uint8_t { refuse, read_only, read_write } on_damage = OnDamage::refuse;
  /// How much the pre-mount check reads. `full`: the checker's full check
  /// (fsck -n -f: besides the above, the namespace walk, so that a dentry
  /// naming a nid whose NAT entry is free, which alloc_nid() would hand out
  /// again, or a data pointer onto a block another owner holds refuses the
  /// mount); on a clean volume it reads the dentry blocks besides what the
  /// fast check reads (at 1,000,000 files the checker takes 5.5 s with -n -f
  /// against 1.0 s with -p: README).
  /// `fast`: preen's fast check alone, with the full check only when the
  /// checkpoint's counts disagree; a dangling dentry or a shared block on a
  /// volume whose counts agree is then not seen.
  enum class PremountCheck : std::uint8_t { full, fast } premount_check = PremountCheck::full;

  /// The test profile's clock: 2020-09-13 12:26:40 UTC, seconds since the epoch.
  static constexpr std::uint64_t kTestProfileTime = 1'600'000'000;
  /// The test profile: the defaults, except what makes a run depend on
  /// time or on the volume's size, so that the same calls on the same image
  /// write the same bytes (two runs give byte-identical images) and a
  /// crash state depends only on where power was cut:
  ///   - fixed_time = kTestProfileTime: every time the writer sets is that
  ///     second (nanoseconds 0), never the system clock;
  ///   - checkpoint_interval_s = 0: no periodic checkpoint (checkpoints at
  ///     sync(), unmount(), an fsync() that needs one, and the NAT bounds);
  ///   - ipu.ipu_policy = ipu_bit::fsync (0x10, F2FS_IPU_FSYNC): the
  ///     kernel's default for a main area over 16 GiB, on every size. The
  ///     policy writes data in place only in the writeback of an fsync() or
  ///     fdatasync() of a file with at most ipu.min_fsync_blocks dirty
  ///     pages (pinned and cold files, and direct writes over written
  ///     blocks, are in place whatever the policy: docs/ipu.md); the
  ///     small-volume default (FORCE|HONOR_OPU_WRITE, 0x81) would rewrite
  ///     written blocks in place at every writeback, so that data written
  ///     after the last checkpoint could appear under it after a power cut;
  ///   - gc.background = false (as the default): no GC driven by idle time.
  /// Everything else is the default; change fields of the result as needed.
  static MountOptions test_profile() noexcept;
  /// fscrypt v2 master keys (64 bytes each, as FS_IOC_ADD_ENCRYPTION_KEY
  /// takes them): encrypted inodes whose context names one of them are
  /// read and written in the clear through the writer, names and
  /// contents encrypted on disk (docs/writer.md "Encrypted inodes"). A
  /// key in a build without OpenSSL refuses the mount (Errc::unsupported).
  std::vector<std::array<std::uint8_t, 64>> fscrypt_keys;
};

/// Seconds and nanoseconds since the epoch.
struct Timespec {
  std::uint64_t sec = 0;
  std::uint32_t nsec = 0;
  friend bool operator==(const Timespec&, const Timespec&) = default;
};

/// What setattr() changes: only the fields that are set.
struct SetAttr {
  std::optional<std::uint16_t> mode;  ///< permission bits (07777); the type bits are kept
  std::optional<std::uint32_t> uid, gid;
  std::optional<Timespec> atime, mtime, ctime;
  /// atime and mtime, when given, are the current time (utimensat(2) with
  /// NULL or UTIME_NOW: no ATTR_ATIME_SET / ATTR_MTIME_SET), which an
  /// append-only inode takes; explicit times on one are EPERM.
  bool times_now = false;
  /// The project id (fsx_projid of FS_IOC_FSSETXATTR, f2fs_ioc_setproject()
  /// in fs/f2fs/file.c): the inode's usage moves to the new project.
  /// Errors: unsupported (EOPNOTSUPP) without the project_quota feature
  /// (unless 0) or extra attributes; invalid_argument (EOVERFLOW) when the
  /// inode has no room for i_projid; read_only (EPERM) on a quota file.
  std::optional<std::uint32_t> projid;
  /// F2FS_PROJINHERIT_FL (FS_XFLAG_PROJINHERIT): what is made in the
  /// directory takes its project id.
  std::optional<bool> projinherit;
};

/// Quota usage and limits of one id (Writer::quota_usage()): as the
/// kernel's struct mem_dqblk holds them.
struct QuotaUsage {
  std::uint64_t inodes = 0;  ///< dqb_curinodes
  std::uint64_t space = 0;   ///< dqb_curspace, bytes
  std::uint64_t ihardlimit = 0, isoftlimit = 0;  ///< inodes, 0: none
  std::uint64_t bhardlimit = 0, bsoftlimit = 0;  ///< bytes, 0: none
};

/// Flags of write(): how the data reaches the device.
struct WriteFlags {
  /// Bypass the page cache: the blocks go to the device before write()
  /// returns (O_DIRECT; offset and size must be multiples of 4 KiB, else
  /// Errc::unaligned).
  bool direct = false;
  /// O_DSYNC: as write() then fdatasync().
  bool dsync = false;
  /// The owner of the caller's buffer, when the caller lends it: each whole
  /// 4 KiB block of the data that starts on a 4 KiB boundary in memory and
  /// is not cached yet becomes a page of the writer's cache as it is, with
  /// no copy, and the cache holds a reference to `lend` until that page
  /// leaves the cache and no device request reads it. The caller then
  /// neither reads nor changes the buffer while another reference than its
  /// own exists (`lend.use_count() > 1`), and frees it only when the last
  /// reference goes (the deleter). Empty: the data is copied, and the
  /// buffer is the caller's again when write() returns.
  std::shared_ptr<const void> lend;
};

/// The flags of FS_IOC_GETFLAGS / FS_IOC_SETFLAGS (FS_*_FL in
/// include/uapi/linux/fs.h) that f2fs knows: those stored in i_flags have
/// the values of disk::iflag; these come from other inode state.
namespace fs_flag {
inline constexpr std::uint32_t encrypt = 0x00000800;      ///< FS_ENCRYPT_FL
inline constexpr std::uint32_t verity = 0x00100000;       ///< FS_VERITY_FL
inline constexpr std::uint32_t nocow = 0x00800000;        ///< FS_NOCOW_FL: a pinned file
inline constexpr std::uint32_t inline_data = 0x10000000;  ///< FS_INLINE_DATA_FL
/// F2FS_GETTABLE_FS_FL (fs/f2fs/f2fs.h): what FS_IOC_GETFLAGS reports; a
/// bit outside it in FS_IOC_SETFLAGS is EOPNOTSUPP.
inline constexpr std::uint32_t gettable = 0x00000004 | 0x00000008 | 0x00000010 | 0x00000020 | 0x00000040 | 0x00000080 |
                                          0x00000400 | 0x00001000 | 0x00010000 | 0x20000000 | encrypt | inline_data |
                                          nocow | verity | 0x40000000;
/// F2FS_SETTABLE_FS_FL: the bits FS_IOC_SETFLAGS changes (compr, sync,
/// immutable, append, nodump, noatime, nocomp, dirsync, projinherit,
/// casefold).
inline constexpr std::uint32_t settable = 0x00000004 | 0x00000008 | 0x00000010 | 0x00000020 | 0x00000040 | 0x00000080 |
                                          0x00000400 | 0x00010000 | 0x20000000 | 0x40000000;
}  // namespace fs_flag

/// fallocate() modes (FALLOC_FL_* in include/uapi/linux/falloc.h).
namespace falloc {
inline constexpr std::uint32_t keep_size = 0x01;
inline constexpr std::uint32_t punch_hole = 0x02;
inline constexpr std::uint32_t zero_range = 0x10;
}  // namespace falloc

/// setxattr() flags (XATTR_CREATE / XATTR_REPLACE).
enum class XattrSet : std::uint8_t { any, create, replace };

/// One extended attribute: the name index (F2FS_XATTR_INDEX_*: 1 user,
/// 2 POSIX ACL access, 3 ACL default, 4 trusted, 6 security, 7 advise,
/// 9 encryption context) and the name without its prefix.
struct XattrItem {
  std::uint8_t index = 0;
  std::string name;
  std::vector<std::uint8_t> value;
};

/// What stat() tells about an inode. Sizes in bytes, blocks in 4 KiB blocks
/// (the inode block included, as i_blocks on disk).
struct WriterStat {
  nid_t ino = 0;
  std::uint16_t mode = 0;
  std::uint64_t size = 0;
  std::uint64_t blocks = 0;
  std::uint32_t links = 0;
  std::uint32_t uid = 0, gid = 0;
  std::uint32_t projid = 0;  ///< i_projid (0 without project_quota)
  std::uint32_t flags = 0;   ///< i_flags (F2FS_*_FL)
  /// i_compr_blocks: blocks the file's compressed clusters save (0 for a
  /// file that is not compressed; f2fs_i_compr_blocks_update()).
  std::uint64_t compr_blocks = 0;
  Timespec atime, mtime, ctime;
  std::uint32_t rdev = 0;  ///< device number (new_encode_dev()) of a device node
  bool is_dir() const { return (mode & 0xF000) == 0x4000; }
  bool is_reg() const { return (mode & 0xF000) == 0x8000; }
};

/// Who creates an inode through the *_at() calls: the caller's fsuid and
/// fsgid. As inode_init_owner() in fs/inode.c: a directory with S_ISGID
/// gives its gid to what is made in it (and S_ISGID to a new directory).
struct Owner {
  Owner() = default;
  Owner(std::uint32_t u, std::uint32_t g, std::optional<std::uint16_t> m = std::nullopt) : uid(u), gid(g), umask(m) {}
  std::uint32_t uid = 0, gid = 0;
  /// The caller's umask (0777 bits) when the call should create as a
  /// Linux mount with POSIX ACLs does (posix_acl_create() for
  /// f2fs_init_acl() in fs/f2fs/acl.c): a parent directory with a default
  /// ACL gives the new inode an access ACL (and a new directory the default
  /// ACL too), masked by the mode asked for, and the umask is not applied;
  /// without one the mode loses the umask bits. Unset: the mode is taken as
  /// given and no ACL is inherited (as sload.f2fs copies a tree).
  std::optional<std::uint16_t> umask;
};

/// One entry of Writer::list_at().
struct WriterDirEntry {
  std::string name;
  nid_t ino = 0;
  std::uint8_t file_type = 0;  ///< disk::FileType (F2FS_FT_*)
};

/// rename_at() flags (RENAME_* in include/uapi/linux/fs.h).
namespace rename_flag {
inline constexpr std::uint32_t noreplace = 1;  ///< RENAME_NOREPLACE: exists if the target exists
inline constexpr std::uint32_t exchange = 2;   ///< RENAME_EXCHANGE: swap two existing names
}  // namespace rename_flag

/// What statfs() reports, as f2fs_statfs() in fs/f2fs/super.c computes it
/// (4 KiB blocks; no root_reserved_blocks, no checkpoint=disable).
struct WriterStatfs {
  std::uint64_t blocks = 0;  ///< block_count - segment0_blkaddr
  std::uint64_t bfree = 0;   ///< user_block_count - valid blocks
  std::uint64_t bavail = 0;  ///< as bfree
  std::uint64_t files = 0;   ///< nids usable for nodes (max_nid - 3), or user_block_count if fewer
  std::uint64_t ffree = 0;   ///< files - valid nodes, at most bavail
};

/// Counters of what the writer did since mount.
struct WriterStats {
  std::uint64_t data_blocks_written = 0;  ///< 4 KiB data blocks (dentry blocks included)
  std::uint64_t node_blocks_written = 0;  ///< 4 KiB node blocks
  std::uint64_t checkpoints = 0;
  std::uint64_t segments_allocated = 0;   ///< new segments opened by the logs
  std::uint64_t meta_blocks_written = 0;  ///< 4 KiB NAT/SIT/SSA/checkpoint blocks
  std::uint64_t discards = 0;             ///< discard requests issued
  std::uint64_t recovered_nodes = 0;      ///< fsynced node blocks rolled forward at mount
  std::uint64_t node_writebacks = 0;      ///< node writebacks between checkpoints (MountOptions::node_cache_pages)
  std::uint64_t node_writeback_blocks = 0;  ///< node blocks they wrote (counted in node_blocks_written too)
  /// The node page cache and the NAT cache when stats() was called
  /// (MountOptions::node_cache_pages): node pages held, dirty among them,
  /// clean pages evicted so far; NAT blocks held.
  std::uint64_t node_pages_cached = 0, node_pages_dirty = 0, node_pages_evicted = 0;
  std::uint64_t nat_blocks_cached = 0;
  /// Problems the pre-mount check found (MountOptions::on_damage other than
  /// refuse let the mount go on); the first of them.
  std::uint64_t premount_problems = 0;
  std::string premount_first_problem;
  IpuStats ipu;
  GcStats gc;
};

class FileHandle;
struct Dirent;

//// A read-write mount. Paths are absolute ("/a/b"), bytes, no symlinks
/// followed (but by the calls of "Files and directories by path" below,
/// which follow them as Linux does). Names are at most 255 bytes (F2FS_NAME_LEN).
///
/// Threads: every public call takes the handle's lock, so one Writer may be
/// used from several threads at once; calls are serialised (docs/writer.md).
/// On a read_only mount every changing call fails with Errc::read_only.
class Writer {
 public:
  /// Mounts `dev` read-write. `dev` must outlive the Writer. Errc::busy for a
  /// device in use (MountOptions::refuse_in_use). Fsynced node
  /// chains after the checkpoint are rolled forward and checkpointed first
  /// (f2fs_recover_fsync_data() in fs/f2fs/recovery.c;
  /// WriterStats::recovered_nodes), or refused as MountOptions::recovery
  /// says. Refuses (Errc::unsupported, naming the reason) volumes it cannot
  /// write safely yet: zoned, read-only (ro
  /// feature) volumes outside MountOptions::build_ro_image (casefold ones as
  /// check_features() says), chains on a read-only
  /// mount, and chains holding what roll-forward does not handle. Errors
  /// from opening the volume (corrupt, io) as Volume::open and
  /// meta::plan_from_volume report them; corrupt for a bad chain (a loop,
  /// addresses outside the main area). Errc::corrupt, before anything is
  /// written, for a volume the pre-mount check finds damaged
  /// (MountOptions::on_damage). After mount, an allocation that would hand
  /// out a nid whose NAT entry is in use or a block valid in the SIT fails
  /// with Errc::corrupt naming it, and so does every later change and
  /// checkpoint (the volume stays as the last checkpoint left it).
  /// Volumes with the encrypt feature mount: encrypted inodes are listed
  /// by Linux's no-key names and every change to them fails with
  /// Errc::unsupported, sys_errno ENOKEY (docs/writer.md).
  /// The destructor writes nothing: a
  /// Writer dropped without unmount() leaves the volume as a power cut.
  static Result<std::unique_ptr<Writer>> mount(BlockDevice& dev, const MountOptions& opts = {});
  /// Whether mount() takes a volume with this superblock's features and
  /// devices read-write: Errc::unsupported naming the first it does not
  /// (zoned, ro unless `build_ro_image`, several devices; a
  /// casefold encoding other than utf8-12.1, or casefold in a build
  /// without casefolding), as mount() refuses them. `build_ro_image`:
  /// as MountOptions::build_ro_image (ro volumes taken, other volumes
  /// refused with Errc::invalid_argument).
  static Status check_features(const disk::SuperBlock& sb, bool build_ro_image = false);
  ~Writer();
  Writer(const Writer&) = delete;
  Writer& operator=(const Writer&) = delete;

  /// Writes a checkpoint (CP_UMOUNT_FLAG clear): node blocks, NAT, SIT,
  /// SSA, then the checkpoint pack (docs/writer.md gives the order). If it
  /// fails the handle is closed (later calls: invalid_argument) and the
  /// volume is as the previous checkpoint left it, unless the error came
  /// from the last flush (docs/checkpoint.md). With nothing changed since
  /// the last checkpoint (no node, NAT, SIT, data or quota change, no write
  /// to the device since, nothing the mount recovered) it writes nothing,
  /// as f2fs_write_checkpoint() skips a CP_SYNC checkpoint without
  /// SBI_IS_DIRTY.
  Status sync();
  /// Writes the checkpoint of an unmount (CP_UMOUNT_FLAG set) when
  /// something changed since the last checkpoint (as sync()) or that one
  /// lacks CP_UMOUNT_FLAG, the condition of f2fs_put_super(); otherwise
  /// writes nothing, and the volume stays byte for byte as it was. Every
  /// later call but the destructor fails with Errc::invalid_argument.
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
  /// no_space, read_only (EPERM) for an immutable inode. A file with
  /// F2FS_SYNC_FL is written as with WriteFlags::dsync.
  Result<std::size_t> write(nid_t ino, std::uint64_t offset, std::span<const std::uint8_t> data,
                            WriteFlags flags = {});
  /// Reads up to out.size() bytes at `offset`; short at end of file; holes
  /// read as zeroes.
  Result<std::size_t> read(nid_t ino, std::uint64_t offset, std::span<std::uint8_t> out);
  /// Sets the size of regular file `ino` (bytes): shrinking frees the
  /// blocks and nodes past the end and zeroes the tail of the last block;
  /// growing leaves a hole. EPERM (read_only) for an immutable or
  /// append-only inode.
  Status truncate(nid_t ino, std::uint64_t size);

  // ---- Namespace (writer/ns.cpp) ----
  /// Renames `from` to `to`, replacing an existing `to` (a file by a file,
  /// an empty directory by a directory), as f2fs_rename(). Errors:
  /// not_found, invalid_argument (a directory into itself or below itself,
  /// a directory over a file or the reverse), exists (non-empty target
  /// directory: ENOTEMPTY).
  Status rename(std::string_view from, std::string_view to);
  /// A new name for an existing non-directory. Errors: exists, not_found,
  /// invalid_argument (a directory), too many links (invalid_argument).
  Status link(std::string_view existing, std::string_view new_path);
  /// A symbolic link holding `target` (inline when it fits, as Linux).
  Result<nid_t> symlink(std::string_view target, std::string_view link_path);
  Result<std::string> readlink(nid_t ino);
  /// A device node, FIFO or socket: `mode` with its type bits (S_IFCHR,
  /// S_IFBLK, S_IFIFO, S_IFSOCK), `rdev` as new_encode_dev().
  Result<nid_t> mknod(std::string_view path, std::uint16_t mode, std::uint32_t rdev = 0);
  /// Changes mode bits, owner, project id and times (ctime is set to now
  /// unless given). On a quota volume the inode's usage moves with its ids
  /// (__dquot_transfer()). EPERM (read_only) for any change but the
  /// project id alone on an immutable inode, and for the mode, owner or
  /// explicit times (SetAttr::times_now false) on an append-only one
  /// (f2fs_setattr() in fs/f2fs/file.c, may_setattr() in fs/attr.c).
  Status setattr(nid_t ino, const SetAttr& attr);
  /// The quota usage of `id` for `type` (0 user, 1 group, 2 project) as the
  /// quota files will hold it after the next checkpoint (each checkpoint
  /// writes it there). An id without an entry reads as zeros. Errors:
  /// invalid_argument for a type above 2; unsupported when the volume keeps
  /// no quota of that type (no quota, or project_quota, feature) and on a
  /// read-only mount (which does not load the quota files).
  Result<QuotaUsage> quota_usage(std::uint32_t type, std::uint32_t id);
  /// Sets the limits of `id` for `type` (the limit fields of `limits`;
  /// usage is kept), as quotactl(Q_SETQUOTA) / dquot_set_dqblk(): space
  /// limits are rounded up to 1 KiB (the file's unit), a grace time starts
  /// when usage is over a new soft limit. Written at the next checkpoint.
  /// Errors as quota_usage(); read_only on a read-only mount.
  Status set_quota_limits(std::uint32_t type, std::uint32_t id, const QuotaUsage& limits);
  /// Opens `ino` (counts openers): an inode unlinked while open stays on
  /// the orphan list until its last release(), and is freed at the next
  /// mount if the volume was not unmounted (f2fs_recover_orphan_inodes()).
  /// `flags` (open_flag: the access mode, trunc, append) as may_open() in
  /// fs/namei.c checks them against the inode's flags: EPERM (read_only)
  /// for write access (an access mode but rdonly, or trunc) to an
  /// immutable inode, and for write access without append, or trunc, to
  /// an append-only one. The permission bits are the caller's.
  Status open(nid_t ino, std::uint32_t flags = 0);
  Status release(nid_t ino);

  // ---- Inode-relative namespace (writer/dir.cpp, writer/ns.cpp) ----
  // The calls of a FUSE daemon or a VFS: a directory inode and one name
  // (no '/', at most 255 bytes). Errors carry the errno Linux f2fs returns
  // in Error::sys_errno (also set where the Errc is coarser): ENOENT
  // (not_found: no such name, or `dir` is no inode), ENOTDIR
  // (invalid_argument: `dir`, or a rename's target, not a directory), EISDIR
  // (invalid_argument), EEXIST (exists), ENOTEMPTY (exists), ENAMETOOLONG
  // (invalid_argument), EINVAL (invalid_argument: "." or "..", a directory
  // moved below itself), EPERM (invalid_argument: a hard link to a
  // directory), EMLINK (invalid_argument), EBUSY (invalid_argument: the
  // root), ENOSPC (no_space), EPERM (read_only) where the VFS refuses
  // immutable and append-only inodes: a name made in an immutable
  // directory (may_create()), a name removed from an immutable or
  // append-only directory or naming such an inode (may_delete(): unlink,
  // rmdir, rename's source and replaced target), a link to such an inode
  // (vfs_link()), all in fs/namei.c. On a read_only mount the changing calls fail
  // with read_only (EROFS).

  /// The inode `name` names in directory `dir`; "." is `dir`, ".." its parent.
  Result<nid_t> lookup_at(nid_t dir, std::string_view name);
  /// A new inode of `mode` (type bits and permission bits 07777) named
  /// `name` in `dir`: a regular file (S_IFREG), a directory (S_IFDIR, with
  /// "." and ".."), a device node, FIFO or socket (`rdev` as
  /// new_encode_dev()), owned as Owner says. Symlinks: symlink_at().
  Result<nid_t> mknod_at(nid_t dir, std::string_view name, std::uint16_t mode, std::uint32_t rdev = 0,
                         const Owner& owner = {});
  /// A symbolic link holding `target` (ENAMETOOLONG past 4,095 bytes,
  /// ENOENT when empty).
  Result<nid_t> symlink_at(nid_t dir, std::string_view name, std::string_view target, const Owner& owner = {});
  /// Removes a name of a non-directory (EISDIR for a directory); the inode
  /// is freed at link count 0 unless open (then at its last release()).
  Status unlink_at(nid_t dir, std::string_view name);
  /// Removes an empty directory (ENOTDIR, ENOTEMPTY, EBUSY for the root).
  Status rmdir_at(nid_t dir, std::string_view name);
  /// Renames as renameat2(2) with `flags` of rename_flag (others: EINVAL):
  /// replaces an existing target as rename(), refuses one with noreplace
  /// (EEXIST), swaps two existing names with exchange (ENOENT when the
  /// target is missing), as f2fs_rename() and f2fs_cross_rename() in
  /// fs/f2fs/namei.c.
  Status rename_at(nid_t old_dir, std::string_view old_name, nid_t new_dir, std::string_view new_name,
                   std::uint32_t flags = 0);
  /// A new name for non-directory `ino` (EPERM for a directory, EMLINK).
  Status link_at(nid_t ino, nid_t new_dir, std::string_view new_name);
  /// Names and inodes in directory `dir`, "." and ".." left out, in on-disk
  /// order, with each entry's file type. ENOENT, ENOTDIR.
  Result<std::vector<WriterDirEntry>> list_at(nid_t dir);
  /// The space and inode counts, as statfs(2) on Linux f2fs reports them.
  WriterStatfs statfs() const;

  // ---- Extended attributes (writer/xattr.cpp) ----
  /// Sets an attribute in the inline xattr area or the xattr node, as
  /// f2fs_setxattr(). Errors: exists (create), not_found (replace),
  /// invalid_argument (name over 255 bytes or, with its "user."/"trusted."/
  /// "security." prefix, over XATTR_NAME_MAX; bad index), no_space (the
  /// inode's xattr space, the inline area + 4,068 bytes, is full: E2BIG in
  /// Linux 6.1); read_only (EPERM) for an immutable or append-only inode
  /// (xattr_permission() in fs/xattr.c), also for removexattr().
  Status setxattr(nid_t ino, std::uint8_t index, std::string_view name, std::span<const std::uint8_t> value,
                  XattrSet how = XattrSet::any);
  Result<std::vector<std::uint8_t>> getxattr(nid_t ino, std::uint8_t index, std::string_view name);
  Result<std::vector<XattrItem>> listxattr(nid_t ino);
  Status removexattr(nid_t ino, std::uint8_t index, std::string_view name);

  // ---- Inode flags (writer/flags.cpp) ----
  /// The flags FS_IOC_GETFLAGS reports (fs_flag; the F2FS_*_FL bits of
  /// i_flags have the same values), as f2fs_fileattr_get() in
  /// fs/f2fs/file.c: i_flags within fs_flag::gettable, plus encrypt
  /// (FADVISE_ENCRYPT_BIT), verity (FADVISE_VERITY_BIT), inline_data
  /// (inline data or inline dentries) and nocow (a pinned file). The raw
  /// i_flags are WriterStat::flags. Answers for every type (the ioctl
  /// reaches only regular files and directories: ENOTTY for the others).
  /// A new directory has index (F2FS_INDEX_FL, f2fs_new_inode()); a new
  /// inode takes sync, nodump, noatime, dirsync, projinherit and casefold
  /// from its directory as its type allows (F2FS_FL_INHERITED,
  /// f2fs_mask_flags()). Errors: not_found (ENOENT).
  Result<std::uint32_t> get_flags(nid_t ino);
  /// Sets the bits of `mask` in the flags of `ino` to those of `flags`, as
  /// FS_IOC_SETFLAGS does (a whole word: `mask` ~0u) through
  /// vfs_fileattr_set() in fs/ioctl.c, f2fs_fileattr_set() and
  /// f2fs_setflags_common() in fs/f2fs/file.c (Linux 6.1); ctime becomes
  /// now, also when nothing changes. The flags that change are those of
  /// fs_flag::settable: sync, immutable, append, nodump, noatime, nocomp,
  /// dirsync, projinherit, compr, casefold; the other bits of `flags` in
  /// fs_flag::gettable are ignored. Errors (sys_errno), in the kernel's
  /// order: ENOTTY (unsupported) on a type other than regular file and
  /// directory (no fileattr_set in their inode operations); EPERM (read_only) for a change of immutable or append when
  /// `cap_linux_immutable` is false (the caller lacks CAP_LINUX_IMMUTABLE,
  /// fileattr_set_prepare()); EOPNOTSUPP (unsupported) for a bit outside
  /// fs_flag::gettable, and for a bit the inode's type cannot carry
  /// (f2fs_mask_flags() in fs/f2fs/f2fs.h: dirsync, projinherit and
  /// casefold on directories only); EPERM for a quota file; casefold: EOPNOTSUPP
  /// without the casefold feature, ENOTEMPTY (exists) for a directory with
  /// entries; compr or nocomp: EOPNOTSUPP without the compression feature,
  /// EINVAL for both at once; clearing compr: EINVAL while the file has
  /// data blocks; setting compr: inline data is moved to a block first
  /// (f2fs_convert_inline_inode(), kept when the rest fails), then EINVAL
  /// for a file with data blocks, a pinned file or a type other than
  /// regular file and directory (f2fs_may_compress()); it gives the inode
  /// the mount's compression parameters (MountOptions::compression,
  /// set_compress_context()). The owner check of vfs_fileattr_set()
  /// (EPERM unless the owner or CAP_FOWNER) is the caller's. What the
  /// flags do in the writer: immutable and append as the calls above
  /// say; sync makes write() synchronous (WriteFlags::dsync); dirsync or
  /// sync on a directory makes each call that adds, removes or renames a
  /// name in it end with a checkpoint (IS_DIRSYNC() in fs/f2fs/namei.c);
  /// the others are kept for Linux.
  Status set_flags(nid_t ino, std::uint32_t flags, std::uint32_t mask, bool cap_linux_immutable = true);
  /// F2FS_IOC_RELEASE_COMPRESS_BLOCKS on a compressed regular file
  /// (f2fs_release_compress_blocks() in fs/f2fs/file.c, Linux 6.1): its
  /// dirty pages are written, then it takes FI_COMPRESS_RELEASED
  /// (F2FS_COMPRESS_RELEASED in i_inline) and ctime now; in each compressed
  /// cluster the NEW_ADDR slots become NULL_ADDR, and the blocks the cluster
  /// held in reserve (cluster size less its compressed blocks: the
  /// COMPRESS_ADDR slot and the saved ones) leave valid_block_count,
  /// i_blocks and i_compr_blocks (0 after). The file's data can then no
  /// longer be written or cut by truncate() (EPERM; a truncate that grows
  /// i_size is done, no block added) and fallocate() is EOPNOTSUPP as on
  /// any compressed file, as in Linux until
  /// F2FS_IOC_RESERVE_COMPRESS_BLOCKS; it reads as before. sload.f2fs -r
  /// leaves files so. Returns the blocks released (0 for a file whose
  /// clusters save nothing). Errors: unsupported (EOPNOTSUPP) without the
  /// compression feature; invalid_argument (EINVAL) for a file that is not
  /// compressed or is released already; not_found; read_only.
  Result<std::uint64_t> release_compress_blocks(nid_t ino);
  /// F2FS_IOC_RESERVE_COMPRESS_BLOCKS, the inverse of
  /// release_compress_blocks() (f2fs_reserve_compress_blocks() and
  /// reserve_compress_blocks() in fs/f2fs/file.c, Linux 6.1 as Debian
  /// builds it): in each compressed cluster (COMPRESS_ADDR first) the
  /// NULL_ADDR slots become NEW_ADDR, and the cluster's reserve (cluster
  /// size less the slots after COMPRESS_ADDR that hold a block or NEW_ADDR:
  /// the COMPRESS_ADDR slot and the saved ones) returns to
  /// valid_block_count, i_blocks, quota usage and i_compr_blocks; a cluster
  /// with nothing to reserve is left as it is. Then FI_COMPRESS_RELEASED
  /// is cleared and ctime is now: the file can be written again. The
  /// immutable flag is neither checked nor changed (Linux 6.1 keeps the
  /// released state in F2FS_COMPRESS_RELEASED of i_inline alone). Returns
  /// the blocks reserved. Linux's quirk is kept: a released file whose
  /// i_compr_blocks is not 0 (a release that stopped part way) gets 0 and
  /// stays released. Errors (sys_errno), checked before anything changes:
  /// unsupported (EOPNOTSUPP) without the compression feature;
  /// invalid_argument (EINVAL) for a file that is not compressed or not
  /// released; read_only (EROFS); no_space (ENOSPC) when the volume lacks
  /// the blocks (Linux reserves cluster by cluster and may stop part way:
  /// here the whole count is checked first), EDQUOT past a quota limit;
  /// corrupt for a block address outside the main area; not_found.
  Result<std::uint64_t> reserve_compress_blocks(nid_t ino);
  /// F2FS_IOC_COMPRESS_FILE (f2fs_ioc_compress_file() in fs/f2fs/file.c,
  /// Linux 6.1), under MountOptions::Compression::Mode::user: the file's
  /// dirty pages are written, then every cluster up to i_size is rewritten
  /// with compression on (FI_ENABLE_COMPRESS): a full cluster whose slots
  /// all hold a block (or NEW_ADDR) and that saves a block is written
  /// compressed, as at writeback in fs mode; other clusters are rewritten
  /// plain, out of place, and holes stay holes (f2fs_do_write_data_page()
  /// skips a page whose slot is NULL_ADDR). i_compr_blocks follows.
  /// Errors (sys_errno): unsupported (EOPNOTSUPP) without the compression
  /// feature or in compress_mode fs, and when this build has no encoder for
  /// the file's algorithm; invalid_argument (EINVAL) for a file that is not
  /// compressed or is released; read_only; no_space; not_found. The EBADF
  /// of a descriptor not open for writing is the caller's.
  Status compress_file(nid_t ino);
  /// F2FS_IOC_DECOMPRESS_FILE (f2fs_ioc_decompress_file()), under
  /// compress_mode user: the dirty pages are written; a file whose
  /// i_compr_blocks is 0 is left so; else every cluster is rewritten plain
  /// (compressed clusters whole, the saved blocks allocated from their
  /// NEW_ADDR reserve), and i_compr_blocks becomes 0. Errors as
  /// compress_file().
  Status decompress_file(nid_t ino);
  /// struct f2fs_comp_option (include/uapi/linux/f2fs.h).
  struct CompressOption {
    std::uint8_t algorithm = 0;         ///< 0 lzo, 1 lz4, 2 zstd, 3 lzo-rle
    std::uint8_t log_cluster_size = 0;  ///< clusters of 1 << log_cluster_size blocks
  };
  /// F2FS_IOC_GET_COMPRESS_OPTION (f2fs_ioc_get_compress_option()): the
  /// inode's i_compress_algorithm and i_log_cluster_size. Errors:
  /// unsupported (EOPNOTSUPP) without the compression feature; not_found
  /// (ENODATA) for a file that is not compressed.
  Result<CompressOption> get_compress_option(nid_t ino);
  /// F2FS_IOC_SET_COMPRESS_OPTION (f2fs_ioc_set_compress_option()): gives
  /// an empty compressed file another algorithm and cluster size; the
  /// level bits of i_compress_flag become zstd's default level 1
  /// (F2FS_ZSTD_DEFAULT_CLEVEL) for zstd, else 0; COMPRESS_CHKSUM stays.
  /// An algorithm this build cannot encode is accepted (Linux only warns);
  /// writing the file then fails. Errors (sys_errno), in Linux's order:
  /// unsupported (EOPNOTSUPP) without the compression feature;
  /// invalid_argument (EINVAL) for log_cluster_size outside [2, 8] or an
  /// algorithm above 3, and for a file that is not compressed; busy
  /// (EBUSY) while the file has dirty pages in the cache; invalid_argument
  /// (EFBIG) when it has blocks (i_blocks above 1: data, reserved or an
  /// xattr node); read_only; not_found.
  Status set_compress_option(nid_t ino, const CompressOption& opt);

  // ---- fs-verity (writer/verity.cpp) ----
  /// FS_IOC_ENABLE_VERITY on regular file `ino`, as Linux 6.1 does it on
  /// f2fs (fsverity_ioctl_enable() in fs/verity/enable.c,
  /// f2fs_begin_enable_verity() / f2fs_end_enable_verity() in
  /// fs/f2fs/verity.c): inline data is moved to a block, the file's dirty
  /// pages are written, then the Merkle tree (SHA-256, 4 KiB blocks, the
  /// top level first) and the 256-byte fsverity_descriptor are written past
  /// EOF from byte round_up(i_size, 65536) on (f2fs_verity_metadata_pos()),
  /// through the writer's data path (they count in i_blocks, the SIT and
  /// checkpoints); the xattr F2FS_XATTR_INDEX_VERITY "v" takes the
  /// descriptor's location (le32 version 1, le32 size, le64 pos) and the
  /// inode FADVISE_VERITY_BIT; a checkpoint ends the call (Linux takes none:
  /// here no roll-forward chain then holds blocks past EOF, whose recovery
  /// would grow i_size over them). From then on the file's data cannot be
  /// written, truncated or fallocated, nor the file opened for writing
  /// (EPERM, as fsverity_file_open() and fsverity_prepare_setattr()). A
  /// partial last block whose bytes past i_size are not zero on the device
  /// is rewritten with them zeroed first (the page Linux hashes and
  /// verifies has them zero). Memory: the tree (about i_size / 127).
  /// Errors (sys_errno): unsupported (EOPNOTSUPP) without the verity
  /// feature, for a compressed file (which this writer does not extend past
  /// EOF), and in a build without OpenSSL; unsupported (ENOKEY) for an
  /// encrypted file (its tree would have to be encrypted); invalid_argument
  /// (EMSGSIZE) for a salt over 32 bytes; read_only (EPERM) for an
  /// immutable or append-only inode; invalid_argument (EISDIR) for a
  /// directory, (EINVAL) for another non-regular file; exists (EEXIST) when the file is verity already; invalid_argument
  /// (EFBIG) when the metadata would pass the largest file; no_space;
  /// read_only (EROFS) on a read-only mount. Write opens are not tracked
  /// here: the ETXTBSY of a file open for writing is the caller's.
  struct VerityOptions {
    std::vector<std::uint8_t> salt;  ///< 0 to 32 bytes (fsverity_descriptor.salt); none by default
  };
  Status enable_verity(nid_t ino, const VerityOptions& opts = {});
  /// As above, for the file a path names (symlinks followed).
  Status enable_verity(std::string_view path, const VerityOptions& opts = {});
  /// FS_IOC_MEASURE_VERITY: the file digest of verity file `ino`, SHA-256
  /// of its fsverity_descriptor with sig_size taken as 0
  /// (compute_file_digest() in fs/verity/open.c), read from where the xattr
  /// says. `algorithm` is FS_VERITY_HASH_ALG_SHA256 (1). Errors: not_found
  /// (ENODATA) for a file that is not verity; corrupt (EINVAL) for a
  /// descriptor or location Linux would refuse (version, data_size not
  /// i_size, position before round_up(i_size, 65536), hash algorithm other
  /// than SHA-256); unsupported in a build without OpenSSL.
  struct VerityDigest {
    std::uint16_t algorithm = 0;
    std::vector<std::uint8_t> digest;
  };
  Result<VerityDigest> measure_verity(nid_t ino);

  /// FS_IOC_SET_ENCRYPTION_POLICY (fscrypt_ioctl_set_policy() in
  /// fs/crypto/policy.c) with a v2 policy: AES-256-XTS contents, AES-256-CTS
  /// names, name padding `padding` (4, 8, 16 or 32 bytes), the master key
  /// `key` (which must be among MountOptions::fscrypt_keys). Directory
  /// `dir` must be empty; its context gets a random nonce, and everything
  /// made in it inherits the policy. The same policy again is nothing.
  /// Errors: invalid_argument ENOTDIR for a non-directory, ENOTEMPTY for a
  /// directory with entries, EINVAL for a bad padding; exists (EEXIST) for
  /// a directory with another policy; unsupported ENOKEY when the key was
  /// not given, and in a build without OpenSSL; read_only on a read-only
  /// mount.
  Status set_encryption_policy(nid_t dir, const std::array<std::uint8_t, 64>& key, std::uint32_t padding = 32);

  // ---- Space of regular files (writer/ns.cpp) ----
  /// fallocate(2) on a regular file: mode 0 or keep_size reserves blocks
  /// (NEW_ADDR, read as zeroes) and with mode 0 extends i_size;
  /// punch_hole|keep_size frees whole blocks in the range and zeroes the
  /// partial ends; zero_range zeroes the range. Offsets and lengths in bytes.
  /// EPERM (read_only) on an immutable inode, and on an append-only one
  /// for modes other than 0 and keep_size (vfs_fallocate() in fs/open.c).
  Status fallocate(nid_t ino, std::uint32_t mode, std::uint64_t offset, std::uint64_t length);

  /// lseek(2)'s SEEK_DATA (`hole` false) or SEEK_HOLE (`hole` true) from
  /// byte `offset` of regular file `ino`, as f2fs_seek_block() in
  /// fs/f2fs/file.c: a block is data when written or reserved with a dirty
  /// page, a hole when it has no address (NULL_ADDR); inline data is data
  /// up to i_size; SEEK_HOLE finds at most i_size. Errors: ENXIO
  /// (invalid_argument) at or past i_size and when SEEK_DATA finds none.
  Result<std::uint64_t> seek_data(nid_t ino, std::uint64_t offset, bool hole);

  // ---- Durability (writer/fsync.cpp) ----
  /// Writes the file's dirty data, then its dirty node blocks to the warm
  /// node log with the fsync mark on the last dnode (and the dentry mark
  /// while its dentry is not checkpointed), so that Linux's roll-forward
  /// (f2fs_recover_fsync_data()) recovers them after a power cut; takes a
  /// checkpoint instead where the kernel would (need_do_checkpoint() in
  /// fs/f2fs/file.c). Flushes the device.
  Status fsync(nid_t ino);
  /// As fsync() but the inode is written only when its size or block
  /// mapping changed (f2fs_do_sync_file() with datasync).
  Status fdatasync(nid_t ino);

  // ---- Policy (writer/ipu.cpp, writer/gc.cpp) ----
  /// Changes the IPU tunables at run time (docs/ipu.md). Errors:
  /// invalid_argument for ipu_policy bits of 0x100 and above, as the sysfs
  /// store has refused them since Linux 6.3 ("f2fs: fix to set ipu
  /// policy"; 6.1 stores them and no rule reads them). The other tunables
  /// take any value, as every kernel's store does (min_ipu_util over 100:
  /// UTIL never applies). kKernelDefault resolves ipu_policy and
  /// min_ssr_sections to the kernel's defaults for this volume.
  Status set_ipu_options(const IpuOptions& o);
  /// The policy in force (ipu_policy and min_ssr_sections resolved from
  /// kKernelDefault).
  IpuOptions ipu_options() const;
  /// The device address (4 KiB block) of block `index` of regular file or
  /// directory `ino`, as FIBMAP: 0 for a hole, inline data or a block
  /// reserved but never written (NEW_ADDR). A block still only in the page
  /// cache reports where the device has it now. Errors: invalid_argument
  /// (another file type).
  Result<disk::block_t> bmap(nid_t ino, std::uint64_t index);
  /// Pins (or unpins) regular file `ino`, as F2FS_IOC_SET_PIN_FILE
  /// (f2fs_ioc_set_pin_file() in fs/f2fs/file.c): every later rewrite of a
  /// written block goes in place whatever ipu_policy says, and the flag is
  /// kept on disk (F2FS_PIN_FILE in i_inline). Inline data is moved to a
  /// block first. Errors: invalid_argument (not a regular file, a quota
  /// file), as the ioctl's EINVAL.
  Status set_pinned(nid_t ino, bool pin);
  /// Rewrites the written blocks of regular file `ino` in [offset, offset +
  /// length) (bytes, multiples of 4 KiB) out of place when they are not
  /// contiguous on the device, as F2FS_IOC_DEFRAGMENT
  /// (f2fs_defragment_range() in fs/f2fs/file.c): the file carries
  /// FI_OPU_WRITE meanwhile. Returns the bytes moved (0: already
  /// contiguous). Errors: invalid_argument (unaligned or too large a range,
  /// not a regular file, or the policy would write the file in place:
  /// pinned, or FORCE without HONOR_OPU_WRITE, ...), no_space.
  Result<std::uint64_t> defragment(nid_t ino, std::uint64_t offset, std::uint64_t length);
  /// Runs foreground GC until `sections` sections are free or no victim is
  /// left (F2FS_IOC_GARBAGE_COLLECT); returns the sections freed by the
  /// checkpoint it takes.
  Result<std::uint32_t> gc(std::uint32_t sections = 1);
  /// Moves every valid block of the main-area segments from `first_segno`
  /// on below it, through GC (do_garbage_collect()'s moves: data to the
  /// cold data log, nodes with the checkpoint's node writes), and takes
  /// checkpoints; from then on blocks are allocated only below it
  /// (MountOptions::allocation_limit_segno). Returns the valid blocks left
  /// at or past `first_segno` (0: all moved). Errors: invalid_argument for
  /// a segment number past the main area, no_space, the device's.
  Result<std::uint64_t> evacuate(std::uint32_t first_segno);
  /// As evacuate(), for the main-area segments below `end_segno` (rounded
  /// up to a section): their valid blocks move to sections at or past it,
  /// and blocks are allocated only there from then on
  /// (MountOptions::allocation_floor_segno). Returns the valid blocks left
  /// below it. Errors: as evacuate().
  Result<std::uint64_t> evacuate_front(std::uint32_t end_segno);

  // ---- Files and directories by path (writer/handle.cpp, file_handle.hpp) ----
  // POSIX calls by absolute path, as a program calls them on a Linux f2fs
  // mount: symlinks are followed in every component but the last, and in
  // the last unless said (an absolute target resolves from the volume's
  // root, as under chroot; 40 links at most, else ELOOP, as Linux's
  // MAXSYMLINKS), "." and ".." as Linux. Errors carry the errno Linux
  // returns in Error::sys_errno (errno_of()): ENOENT, ENOTDIR,
  // ENAMETOOLONG (a component over 255 bytes), ELOOP, EROFS on a read_only
  // mount, and the ones each call lists.

  /// open(2): `flags` of open_flag, `mode` the permission bits (07777) of a
  /// file it creates (owned by uid 0, gid 0, as root's open). Follows
  /// do_open() and may_open() in fs/namei.c (Linux 6.1): with creat a
  /// missing last name becomes an empty regular file (its parent must
  /// exist: ENOENT), a trailing '/' is EISDIR, an existing directory
  /// EISDIR; creat|excl on an existing name (a symlink too) EEXIST;
  /// creat|directory is EINVAL (as Linux since 6.4; 6.1 creates a file
  /// then fails with ENOTDIR); directory on a non-directory ENOTDIR;
  /// nofollow on a symlink ELOOP; a directory opened for writing (wronly,
  /// rdwr, or trunc) EISDIR; accmode 3 opens for neither reading nor
  /// writing (open_flag::accmode); path, tmpfile EOPNOTSUPP.
  /// trunc truncates an existing regular file. Special files: a socket
  /// does not open (ENXIO); a FIFO opens as with O_NONBLOCK (write-only:
  /// ENXIO, no reader; the writer never blocks) and reads as an empty pipe
  /// without writers; a device node opens, its reads and writes reach no
  /// driver (EINVAL).
  Result<FileHandle> open(std::string_view path, std::uint32_t flags, std::uint16_t mode = 0644);
  /// stat(2) (`follow`) or lstat(2) of a path.
  Result<WriterStat> stat(std::string_view path, bool follow = true);
  /// chmod/chown/utimensat of a path (Writer::setattr(nid_t, ...)); `follow`
  /// false as lchown / AT_SYMLINK_NOFOLLOW.
  Status setattr(std::string_view path, const SetAttr& attr, bool follow = true);
  /// truncate(2): EISDIR on a directory, EINVAL on another non-regular
  /// file (vfs_truncate() in fs/open.c), EFBIG past the largest file.
  Status truncate(std::string_view path, std::uint64_t size);
  /// The entries of a directory as getdents64(2) on Linux f2fs returns
  /// them: "." and ".." first (".." of the root is the root), then the
  /// names in on-disk order (list_at()), each with its inode and d_type.
  /// ENOTDIR for a non-directory.
  Result<std::vector<Dirent>> readdir(std::string_view path);
  /// Extended attributes by full name ("user.k", "trusted.k",
  /// "security.k", "system.posix_acl_access", "system.posix_acl_default",
  /// "system.advise": i_advise, one byte, of which set changes the cold and
  /// hot bits only (EINVAL for others, or to remove it);
  /// parse_xattr_name() gives the mapping and its errors: ERANGE,
  /// EOPNOTSUPP, EINVAL), as getxattr(2), setxattr(2), listxattr(2),
  /// removexattr(2) on Linux f2fs (fs/xattr.c, f2fs_getxattr() and
  /// __f2fs_setxattr() in fs/f2fs/xattr.c); `follow` false as the l*
  /// calls. Values are returned whole, so ERANGE for a short buffer does
  /// not arise. get: ENODATA when absent. set: `how` create EEXIST when
  /// present, replace ENODATA when absent; E2BIG for a value over 65,536
  /// bytes (XATTR_SIZE_MAX) or over the inode's xattr space;
  /// "user." on a symlink or special file EPERM (xattr_permission()).
  /// POSIX ACLs are given and taken in the xattr format
  /// (posix_acl_xattr_header, version 2) and kept in f2fs's on-disk
  /// format (f2fs_acl_to_disk() in fs/f2fs/acl.c); setting a malformed one
  /// is EINVAL, a default ACL on a non-directory EACCES; an access ACL the
  /// mode bits express is not stored, its bits go to the mode
  /// (posix_acl_update_mode()). list: the full names in on-disk order.
  /// remove: ENODATA when absent (an absent ACL: no error, as Linux).
  Result<std::vector<std::uint8_t>> getxattr(std::string_view path, std::string_view name, bool follow = true);
  Status setxattr(std::string_view path, std::string_view name, std::span<const std::uint8_t> value,
                  XattrSet how = XattrSet::any, bool follow = true);
  Result<std::vector<std::string>> listxattr(std::string_view path, bool follow = true);
  Status removexattr(std::string_view path, std::string_view name, bool follow = true);
  /// The same by inode (as the f*xattr calls on an open file): what a FUSE
  /// daemon gets. Errors as above, not_found (ENOENT) for a free inode.
  Result<std::vector<std::uint8_t>> getxattr_at(nid_t ino, std::string_view name);
  Status setxattr_at(nid_t ino, std::string_view name, std::span<const std::uint8_t> value,
                     XattrSet how = XattrSet::any);
  Status removexattr_at(nid_t ino, std::string_view name);

  /// A copy of the counters, taken under the handle's lock.
  WriterStats stats() const;
  /// (stats) The space now: utilization, free and dirty sections (the
  /// inputs of the IPU and GC decisions), from the writer's SIT in memory.
  SpaceState space() const;

  struct Impl;

 private:
  friend class FileHandle;
  explicit Writer(std::unique_ptr<Impl> impl);
  std::unique_ptr<Impl> impl_;
};

}  // namespace f2fscore

// FileHandle, the open flags, Dirent: the handle API of the calls above.
#include "f2fscore/file_handle.hpp"
