// The checker: finds every inconsistency fsck.f2fs finds (fsck/fsck.c and
// fsck/mount.c in f2fs-tools 1.15/1.16) and more, and repairs it.
//
// Problems come from one table (problem_table()): a stable code, a
// severity, and whether and how the problem is repaired. A run returns
// every problem found, each naming the objects concerned (ino, nid, blkaddr
// in 4 KiB blocks, segment number, path) where known, in a deterministic
// order. Modes follow e2fsck: check only (-n), preen (-p/-a), repair all
// (-y), force a full check (-f). Exit codes follow e2fsck (see exit_code()).
#pragma once

#include <cstdint>
#include <functional>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "f2fscore/device.hpp"
#include "f2fscore/disk/constants.hpp"
#include "f2fscore/result.hpp"

namespace f2fscore::fsck {

using disk::block_t;
using disk::nid_t;

/// Every problem the checker can report. Stable names (code_name()) are
/// what --json prints and what the golden tests expect; never renumber.
/// The fsck.f2fs counterpart of each is in problem_table().
#define F2FSCORE_FSCK_PROBLEMS(X)                                                       \
  /* superblocks and checkpoint */                                                       \
  X(SB_PRIMARY_BAD)          /* superblock #0 invalid, #1 good: restore #0 from #1 */     \
  X(SB_BACKUP_BAD)           /* superblock #1 invalid or different from #0 */            \
  X(CP_PACK_BAD)             /* one checkpoint pack invalid (the other in use) */        \
  X(CP_FLAGS)                /* CP_FSCK_FLAG / CP_ERROR_FLAG / quota-need-fsck set */     \
  X(CP_VALID_BLOCK_COUNT)    /* cp.valid_block_count != blocks reached */                \
  X(CP_VALID_NODE_COUNT)     /* cp.valid_node_count != nodes reached */                  \
  X(CP_VALID_INODE_COUNT)    /* cp.valid_inode_count != inodes reached */                \
  X(CP_FREE_SEGMENT_COUNT)   /* cp.free_segment_count != free segments in SIT */         \
  X(CP_NEXT_FREE_NID)        /* next_free_nid out of range */                            \
  X(CP_FIELD_BAD)            /* a CP field out of the superblock's bounds (recomputed / other pack) */ \
  /* NAT */                                                                              \
  X(NAT_BLKADDR_INVALID)     /* NAT blkaddr outside the main area */                     \
  X(NAT_BLKADDR_NOT_IN_SIT)  /* NAT blkaddr's SIT bit is clear */                        \
  X(NAT_INO_MISMATCH)        /* NAT ino differs from the node footer / owner */          \
  X(NAT_ENTRY_UNREACHABLE)   /* valid NAT entry whose node nothing reaches */            \
  X(NAT_BITS_MISMATCH)       /* nat_bits full/empty bitmaps wrong */                     \
  X(NAT_JOURNAL_BAD)         /* NAT journal entry count or nid out of range */           \
  /* SIT and SSA */                                                                      \
  X(SIT_BITMAP_MISMATCH)     /* SIT valid map bit != block reachable */                  \
  X(SIT_VBLOCKS_MISMATCH)    /* SIT vblocks != popcount(valid map) */                    \
  X(SIT_TYPE_MISMATCH)       /* SIT segment type != type of the blocks in it */          \
  X(SIT_JOURNAL_BAD)         /* SIT journal entry count or segno out of range */         \
  X(SSA_NODE_MISMATCH)       /* summary of a node block names another nid */             \
  X(SSA_DATA_MISMATCH)       /* summary of a data block names another nid/ofs */         \
  X(CURSEG_NEXT_BLOCK_NOT_FREE) /* an active log's next block is in use */               \
  X(CURSEG_TYPE_MISMATCH)    /* an active log's segment has another SIT type */          \
  /* nodes */                                                                            \
  X(NODE_NID_INVALID)        /* a pointer to nid 0, a reserved nid or past max_nid */    \
  X(NODE_NAT_MISSING)        /* a pointer to a nid whose NAT entry is null */            \
  X(NODE_FOOTER_NID)         /* footer nid != the nid that led here */                   \
  X(NODE_FOOTER_INO)         /* footer ino != the owning inode */                        \
  X(NODE_FOOTER_OFS)         /* footer offset != its place in the tree */                \
  X(NODE_NOT_INODE)          /* an inode pointer leads to a non-inode node */            \
  X(NODE_DUPLICATE)          /* a nid reached twice */                                   \
  X(NODE_UNREADABLE)         /* the node block cannot be read */                         \
  /* inodes */                                                                           \
  X(INODE_CHECKSUM)          /* inode checksum mismatch */                               \
  X(INODE_MODE)              /* unknown file type in i_mode */                           \
  X(INODE_EXTRA_ISIZE)       /* i_extra_isize invalid / extra_attr flag w/o feature */   \
  X(INODE_INLINE_XATTR_SIZE) /* i_inline_xattr_size invalid */                           \
  X(INODE_FLAGS)             /* casefold/compress flag where not allowed */              \
  X(INODE_SIZE)              /* i_size invalid for the inode's kind */                   \
  X(INODE_BLOCKS)            /* i_blocks != blocks counted */                            \
  X(INODE_LINKS)             /* i_links != real links (files) */                         \
  X(DIR_LINKS)               /* directory i_links != subdirectories + 2 */               \
  X(INODE_NAMELEN)           /* i_namelen != the dentry's name length */                 \
  X(INODE_PINO)              /* i_pino != the parent directory */                        \
  X(INODE_EXTENT)            /* i_ext not backed by the file's blocks */                 \
  X(INODE_COMPR_BLOCKS)      /* i_compr_blocks != count from the clusters */             \
  X(INODE_UNREACHABLE)       /* an inode nothing links to: to /lost+found */             \
  X(SYMLINK_SIZE)            /* symlink i_size != target length */                       \
  X(ROOT_BAD)                /* root inode missing or not a directory */                 \
  /* data */                                                                             \
  X(DATA_BLKADDR_INVALID)    /* data pointer outside the main area */                    \
  X(DATA_DUPLICATE)          /* a data block referenced twice */                         \
  X(INLINE_DATA_RESERVED)    /* inline inode's reserved i_addr[0] != 0 */                \
  X(INLINE_DATA_SIZE)        /* inline i_size > max inline bytes */                      \
  X(INLINE_DENTRY_BAD)       /* inline dentry flag on a non-directory, bad layout */     \
  X(COMPR_CLUSTER_BAD)       /* cluster header or COMPRESS_ADDR placement bad */         \
  /* directories */                                                                      \
  X(DENTRY_INO_INVALID)      /* dentry ino 0, reserved, or no such inode */              \
  X(DENTRY_NAMELEN)          /* name length 0, > 255, or past the block */               \
  X(DENTRY_FTYPE)            /* file type != the inode's mode */                         \
  X(DENTRY_HASH)             /* stored hash != hash of the name */                       \
  X(DENTRY_POSITION)         /* entry in the wrong level/bucket for its hash */          \
  X(DENTRY_DOT)              /* '.' missing, duplicated or wrong ino */                  \
  X(DENTRY_DOTDOT)           /* '..' missing, duplicated or wrong ino */                 \
  X(DENTRY_BITMAP)           /* bitmap bit set for a slot that is not an entry */        \
  X(DENTRY_DUPLICATE_NAME)   /* the same name twice in one directory */                  \
  X(DENTRY_DIR_HARDLINK)     /* a directory linked from two places */                    \
  /* xattrs */                                                                           \
  X(XATTR_NID_BAD)           /* xattr nid invalid or its footer wrong */                 \
  X(XATTR_ENTRY_BOUNDS)      /* an entry runs past the xattr area */                     \
  X(XATTR_TRAILING_BYTES)    /* non-zero bytes after the last entry */                   \
  /* orphans, quota, roll-forward */                                                     \
  X(ORPHAN_ENTRY_INVALID)    /* orphan entry names no inode */                           \
  X(ORPHAN_HAS_LINKS)        /* orphan inode with i_links != 0 */                        \
  X(QUOTA_INODE_BAD)         /* quota inode missing or invalid */                        \
  X(QUOTA_USAGE)             /* quota file usage != usage counted */                     \
  X(FSYNC_CHAIN_LOOP)        /* fsynced node chain loops */                              \
  X(FSYNC_CHAIN_BAD)         /* fsynced node chain names bad nids/inodes */            \
  /* the repair itself */                                                                \
  X(REPAIR_FAILED)           /* a repair refused (it would free what is mapped) or failed */ \
  X(VOLUME_TRUNCATED)        /* the device ends before the volume */                    \
  /* inodes (appended: codes are never renumbered) */                                    \
  X(INODE_GC_FAILURES)       /* i_gc_failures set on a regular file (fsck.f2fs resets it) */

enum class Code : std::uint16_t {
#define F2FSCORE_FSCK_ENUM(name) name,
  F2FSCORE_FSCK_PROBLEMS(F2FSCORE_FSCK_ENUM)
#undef F2FSCORE_FSCK_ENUM
};

/// "NAT_BLKADDR_INVALID" etc.
std::string_view code_name(Code c) noexcept;
/// Inverse of code_name(); nullopt for an unknown name.
std::optional<Code> code_from_name(std::string_view name) noexcept;

enum class Severity : std::uint8_t {
  info,     ///< worth reporting, not an inconsistency (e.g. CP_FLAGS)
  warning,  ///< inconsistent but harmless to read (counts, hashes)
  error,    ///< data or metadata wrong or unreachable
};

/// How a problem is repaired.
enum class FixClass : std::uint8_t {
  none,     ///< reported only
  safe,     ///< preen (-p) repairs it: no data is dropped
  repair,   ///< only -y repairs it (drops or moves something)
};

/// One row of the problem table.
struct ProblemDef {
  Code code;
  Severity severity;
  FixClass fix;
  std::string_view summary;     ///< one line: what is wrong
  std::string_view repair;      ///< what the repair does ("" when none)
  std::string_view fsck_f2fs;   ///< fsck.f2fs's counterpart ("" when it has none)
};

/// The whole table, in Code order.
std::span<const ProblemDef> problem_table() noexcept;
const ProblemDef& definition(Code c) noexcept;

/// One problem found. Optional fields are the objects it concerns.
struct Problem {
  Code code{};
  std::optional<nid_t> ino;
  std::optional<nid_t> nid;
  std::optional<block_t> blkaddr;    ///< 4 KiB block address
  std::optional<std::uint32_t> segno;  ///< main-area segment number
  std::string path;                  ///< "/a/b" when known, else ""
  std::string detail;                ///< the values: "i_links 0, real links 1"
  bool fixed = false;                ///< the run repaired it

  /// "[INODE_LINKS] ino 5 (/a/b): i_links 0, real links 1 (fixed)"
  std::string to_string() const;
};

enum class Mode : std::uint8_t {
  check_only,  ///< -n: writes nothing; the device is byte-identical afterwards
  preen,       ///< -p / -a: fast check on a clean volume, safe repairs
  repair_all,  ///< -y: repair everything
};

struct Options {
  Mode mode = Mode::check_only;
  bool force = false;  ///< -f: full check even when marked clean; every NAT block read (nat_bits ignored)
  /// Preen's fast check only, whatever the checkpoint's flags, and nothing
  /// repaired whatever the mode: the superblocks, the checkpoint, every
  /// node the NAT points at (footer, inode checks), the SIT counts against
  /// their bitmaps, the checkpoint's counts and the fsynced node chain. No
  /// namespace walk (Report::full_check false). The writer's pre-mount
  /// check runs this.
  bool fast_only = false;
  /// Node and data blocks are read in batches of up to this many 4 KiB
  /// blocks, this many requests in flight (through BlockDevice's async API):
  /// at most batch_blocks * queue_depth * 4 KiB of read buffers (4 MiB),
  /// less when the blocks to read span less.
  std::uint32_t batch_blocks = 64;
  std::uint32_t queue_depth = 16;
  /// Progress, if set: called as `progress(pass, current, max)` while a
  /// pass runs, `current` steps of `max` done. Passes, in order: 1 the NAT
  /// and SIT blocks read, 2 the node blocks read, 3 the inodes reached by
  /// the namespace walk, 4 the segments compared with the SIT and the SSA
  /// blocks read, 5 the blocks written by the repair (only when it writes).
  /// Preen's fast check reports passes 1 and 2 (then 1 to 4 again when it
  /// finds something and the full check follows). Each pass is reported at
  /// 0, at `max`, and at most about 1000 times between (the shape of
  /// e2fsck's -C completion lines, e2fsck_update_progress() in
  /// e2fsck/unix.c). Called on the thread that runs check().
  std::function<void(int pass, std::uint64_t current, std::uint64_t max)> progress;
  /// Repair modes, if set: grows the device to `size_bytes` (an image file
  /// shorter than its volume; f2fscore-fsck sets it for regular files).
  /// Called only when the lost tail holds no block in use (the SIT and the
  /// walk agree), so zeroes there lose nothing. Errors: the caller's.
  std::function<Status(std::uint64_t size_bytes)> grow;
};

struct Stats {
  std::uint64_t inodes = 0, nodes = 0, data_blocks = 0, dirs = 0, files = 0;
  std::uint64_t bytes_read = 0;
};

struct Report {
  std::vector<Problem> problems;  ///< deterministic order
  bool full_check = false;        ///< false when preen's fast check sufficed
  bool wrote = false;             ///< the device was written
  Stats stats;

  /// e2fsck's codes: 0 clean, 1 problems all repaired, 4 problems left.
  /// An informational problem (Severity::info) counts only when repaired,
  /// except CP_FLAGS (the volume asks for a check until a repair clears
  /// it): a checkpoint pack that the other valid pack supersedes, as after
  /// a power cut during a checkpoint, leaves a check-only run at 0.
  /// (8 operational error and 16 usage are the tool's, for Errors.)
  int exit_code() const;
};

/// Checks (and, per Options::mode, repairs) the volume on `dev`.
/// Returns an Error only for an operational failure: the device fails, or
/// neither superblock or neither checkpoint pack is usable (exit 8).
Result<Report> check(BlockDevice& dev, const Options& opts);

/// "info", "warning" or "error".
std::string_view severity_name(Severity s) noexcept;
/// "check_only" (-n), "preen" (-p/-a) or "repair_all" (-y).
std::string_view mode_name(Mode m) noexcept;

/// What a rendered report says besides the Report: the device as the user
/// named it, the mode the check ran in, its wall time in seconds.
struct ReportContext {
  std::string device;
  Mode mode = Mode::check_only;
  double seconds = 0;
};

/// f2fscore-fsck's text: one Problem::to_string() line per problem, then
/// (unless quiet) "DEVICE: full check (MODE): N problems, M fixed;
/// I inodes (D dirs, F files), N nodes, B data blocks; S s" (a fast check,
/// which walks no directory: "DEVICE: fast check (MODE): N problems, M
/// fixed; I inodes, N nodes in the NAT (...); S s") and "clean",
/// "all problems repaired" or "problems left unrepaired" by exit_code().
std::string render_report_text(const Report& r, const ReportContext& c, bool quiet);

/// f2fscore-fsck --json: one line, an object {"device", "mode",
/// "full_check", "problems": [{"code" (code_name()), "severity", "ino",
/// "nid", "blkaddr", "segno", "path", "detail" (each only when known),
/// "fixed"}], "stats": {"inodes", "nodes", "data_blocks", "dirs", "files"
/// (these three after a full check only), "bytes_read", "seconds"},
/// "wrote", "exit_code"} and a newline
/// (docs/json/fsck.schema.json).
std::string render_report_json(const Report& r, const ReportContext& c);

/// f2fscore-fsck --json after an operational or usage error: {"device", "mode",
/// "error", "exit_code"} on one line and a newline.
std::string render_error_json(const ReportContext& c, std::string_view message, int exit_code);

}  // namespace f2fscore::fsck
