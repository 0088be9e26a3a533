// Populating a mounted volume from a host directory tree, as sload.f2fs
// does (fsck/sload.c in f2fs-tools) and mke2fs -d does for ext4.
//
// With extraction, the part of the library that touches the host file
// system. It walks the source tree with POSIX calls (lstat, openat, read,
// lseek with SEEK_DATA/SEEK_HOLE, readlink, llistxattr/lgetxattr), or on
// Windows with the Win32 ones (host/populate_win32.cpp), and writes through
// the Writer's public API (writer.hpp).
//
// On Windows the tree is read as extraction writes it there (docs/design.md,
// "Extraction on Windows"), so that an extracted tree copied in gives the
// image's tree back: %XX in a name is the byte XX; the symlinks are the
// lines of ".f2fscore-links" at the top of the source (that file is not
// copied; Windows symlinks and junctions are problems of their entries);
// directories get mode 0755, files 0644 (0444 read-only), owners 0:0, no
// xattrs; holes are a sparse file's unallocated ranges.
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "f2fscore/android_rules.hpp"
#include "f2fscore/result.hpp"
#include "f2fscore/writer.hpp"

namespace f2fscore {

struct PopulateOptions {
  /// Directory of the volume the source's entries go into (f2fscore-sload
  /// --target-dir). Missing components are created (mode 0755). The source
  /// directory's own mode, owner, times and xattrs are given to it, as
  /// mke2fs -d does for the root, unless `keep_target_attrs`.
  std::string target = "/";
  bool keep_target_attrs = false;
  /// Every inode's atime, mtime and ctime, seconds since the epoch
  /// (sload.f2fs -T); unset: the source's times (ctime included).
  std::optional<std::uint64_t> fixed_time;
  /// Keep the source's uid and gid (sload.f2fs -P); otherwise 0:0.
  bool preserve_owner = false;
  /// Copy extended attributes (user., trusted., security., POSIX ACLs).
  bool xattrs = true;
  /// What an entry of the source whose path already exists in the volume
  /// becomes (a second populate into the same target). A directory that
  /// exists as a directory is merged into: its entries are kept, the
  /// source's are added, and it gets the source directory's mode, owner,
  /// times and xattrs. A non-directory that exists is kept as it is
  /// (counted in PopulateReport::kept) unless `overwrite`, which unlinks it
  /// and copies the source's entry in its place (tar --overwrite). A
  /// directory where the source has a non-directory, or a non-directory
  /// where the source has a directory, is a problem of that entry.
  bool overwrite = false;
  /// Android's rules (sload.f2fs -t, -C, -s; android_rules.hpp). The path
  /// an entry is looked up by is `mount_point` followed by its path in the
  /// volume, as sload.f2fs builds it: with mount point "/system" the
  /// volume's /bin/sh is "/system/bin/sh" (fs_config: "system/bin/sh"), the
  /// volume's root "/system". `mount_point` gets a leading '/' if it has
  /// none and loses trailing ones ("system/" is "/system"); empty is "/".
  std::string mount_point = "/";
  /// fs_config (sload.f2fs -C): every entry below the target directory
  /// takes uid, gid and permission bits (setuid, setgid and sticky
  /// included; symlinks too) from its rule in place of the source's (and of
  /// preserve_owner); a rule with capabilities gets a "security.capability"
  /// xattr (vfs_cap_data()), as e2fsdroid writes it; the source's own
  /// security.capability is not copied. The target directory itself is not
  /// looked up (sload.f2fs and e2fsdroid leave the root to mkfs). An entry
  /// without a rule is an error of the whole call before anything is
  /// written (libcutils' canned_fs_config() exits there).
  std::shared_ptr<const FsConfig> fs_config;
  /// SELinux labels (sload.f2fs -s): each entry and the target directory
  /// get "security.selinux" = the context selabel_lookup() gives for its
  /// path and i_mode, stored without a terminating NUL as sload.f2fs
  /// stores it (inode_set_selinux() in fsck/xattr.c: strlen bytes); the
  /// source's own security.selinux is not copied. A path without a context
  /// is an error of the whole call before anything is written (sload.f2fs
  /// stops there).
  std::shared_ptr<const FileContexts> file_contexts;
  /// The rules were checked already (check_populate_rules() returned
  /// success for this source and these options): populate() does not walk
  /// the tree again to check them.
  bool rules_checked = false;
  /// Largest span of file data given to one Writer::write() call, bytes
  /// (a multiple of 4 KiB; at least 4 KiB).
  std::size_t chunk_bytes = 8u << 20;
  /// Regular files for which this returns true (called with the host path
  /// and the file's size) are made compressed before their data is written:
  /// F2FS_COMPR_FL through Writer::set_flags(), so they take the mount's
  /// compression parameters (MountOptions::compression), as sload.f2fs -c
  /// picks its files. Empty: none (the writer's compress_extension mount
  /// option still applies).
  std::function<bool(const std::string& source, std::uint64_t size)> compress;
  /// Each regular file that the writer made compressed (its compression
  /// mount options: MountOptions::compression) has its compressed blocks
  /// released once its data is written (Writer::release_compress_blocks(),
  /// as sload.f2fs -r): the space its clusters save is free and the file's
  /// data can no longer change.
  bool release_compressed = false;
  /// Called for each entry after it is written (path in the volume); for
  /// progress output. May be empty.
  std::function<void(const std::string&)> on_entry;
  /// Progress, if set: called as `progress(current, max)` as the copy goes
  /// on, in units of one per entry of the source tree plus one per 4 KiB of
  /// regular-file size (rounded up per file; a hard-linked file's data
  /// counted once). `max` comes from a count of the source tree made first
  /// (readdir and lstat of every entry, only when `progress` is set). Called
  /// at 0, about once per 0.1 % after, and with current == max at the end;
  /// current never exceeds max (a tree that grows while copied is clamped).
  std::function<void(std::uint64_t current, std::uint64_t max)> progress;
};

/// A problem with one entry: the host path, the path in the volume, what
/// went wrong.
struct PopulateProblem {
  std::string source;  ///< host path
  std::string path;    ///< path in the volume
  Error error;
  std::string to_string() const;
};

/// What populate() did. Sizes in bytes.
struct PopulateReport {
  std::uint64_t directories = 0;  ///< created (the target itself not counted)
  std::uint64_t files = 0;        ///< regular files created
  std::uint64_t hard_links = 0;   ///< extra names of a file already copied
  std::uint64_t symlinks = 0;
  std::uint64_t specials = 0;     ///< device nodes, FIFOs, sockets
  std::uint64_t xattrs = 0;       ///< attributes set
  std::uint64_t bytes_written = 0;  ///< file data written (holes excluded)
  std::uint64_t hole_bytes = 0;     ///< file bytes left as holes
  std::uint64_t write_calls = 0;    ///< Writer::write() calls
  std::uint64_t merged_directories = 0;  ///< directories that existed and were merged into
  std::uint64_t kept = 0;                ///< existing non-directories left as they were
  std::uint64_t replaced = 0;            ///< existing non-directories replaced (overwrite)
  /// Entries that could not be copied (or copied only in part); the walk
  /// goes on past them. Empty: everything was copied.
  std::vector<PopulateProblem> problems;
};

/// Copies the tree under host directory `source_dir` into `w` below
/// `opts.target`. Does not sync or unmount `w`.
///
/// Holes: each regular file's data ranges come from lseek(SEEK_DATA /
/// SEEK_HOLE), and only those are written; the size is then set with
/// truncate(), so holes stay holes (i_blocks counts the data only). Where
/// the host has no SEEK_DATA (or the file system says "all data"), every
/// byte is read and written: zero blocks inside data are written as data,
/// not turned into holes.
/// (Windows: the allocated ranges of a sparse file,
/// FSCTL_QUERY_ALLOCATED_RANGES; every byte of other files.)
/// Hard links: a second name of the same (st_dev, st_ino) becomes
/// Writer::link() to the first. Symlinks keep their target bytes; device
/// nodes keep their number (new_encode_dev()). Directories get their mode,
/// owner and times after their entries (so entries added do not change them).
/// Xattrs: "user.x" -> index 1, "trusted.x" -> 4, "security.x" -> 6,
/// "system.posix_acl_access"/"_default" -> 2/3 converted to f2fs's compact
/// ACL form (f2fs_acl_to_disk() in fs/f2fs/acl.c); other namespaces are
/// reported as problems.
///
/// Errors (the whole call fails): invalid_argument/not_found when
/// `source_dir` is not a readable directory or `opts.target` names a
/// non-directory; no_space (the walk stops at the first entry the volume
/// has no room for; the problem list names it in the message; the file
/// being written when space ran out is truncated to the bytes written
/// before the failed Writer::write() call, so its size covers exactly what
/// is mapped). Per-entry problems are in the report.
///
/// With fs_config or file_contexts set, the rules of every entry are looked
/// up first (check_populate_rules()), unless `opts.rules_checked`.
Result<PopulateReport> populate(Writer& w, const std::string& source_dir, const PopulateOptions& opts = {});

/// Walks the source tree as populate() would and looks up the rules of
/// every entry (opts.fs_config, opts.file_contexts; nothing to do without
/// them), writing nothing: call it before opening the volume for writing
/// so a missing rule leaves the volume untouched. Errors: not_found
/// naming the first path without an fs_config rule ("fs_config FILE: no
/// rule for system/bin/x") or without an SELinux context, with the count of
/// others; invalid_argument/not_found as populate() for the source
/// directory. Directories of the source that cannot be read are left to
/// populate() to report.
Status check_populate_rules(const std::string& source_dir, const PopulateOptions& opts);

}  // namespace f2fscore
