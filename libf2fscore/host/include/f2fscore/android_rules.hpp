// Android's per-path rules for the files of an image, as the Android build
// gives them to sload.f2fs and e2fsdroid: the canned fs_config file (owner,
// mode and file capabilities of each path, libcutils canned_fs_config.cpp)
// and SELinux file_contexts (the security.selinux label of each path,
// through libselinux's selabel_lookup()). populate() applies them
// (PopulateOptions::fs_config, PopulateOptions::file_contexts).
#pragma once

#include <array>
#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "f2fscore/result.hpp"

namespace f2fscore {

/// One line of a canned fs_config file.
struct FsConfigRule {
  std::uint32_t uid = 0, gid = 0;
  std::uint16_t mode = 0;            ///< permission bits, 07777 at most
  std::uint64_t capabilities = 0;    ///< CAP_* bit mask; 0: none
};

/// A canned fs_config file: lines `path uid gid mode [capabilities=N]`
/// (the text the Android build's fs_config tool writes and
/// load_canned_fs_config() in libcutils reads). `path` is relative to the
/// image's mount point, written with or without a leading '/'; a line that
/// begins with a space names the mount point itself. uid and gid are
/// decimal; mode is octal (at most 07777); `capabilities=` takes a number
/// in C notation (0x.. hex, 0.. octal, else decimal). Other tokens after
/// the mode (such as `selabel=...`) are ignored, as libcutils ignores them.
/// When a path has several lines the last one holds. Empty lines are
/// skipped. Stricter than libcutils, which reads numbers with atoi() and
/// strtol() and takes what parses: a field that is not wholly a number of
/// its base is an error here.
class FsConfig {
 public:
  /// Parses the whole text. Errors (invalid_argument): "NAME:LINE: what is
  /// wrong" for the first line that does not parse.
  static Result<FsConfig> parse(std::string_view text, const std::string& name);
  /// Reads and parses a file; not_found/io naming the file when it cannot
  /// be read.
  static Result<FsConfig> load(const std::string& path);

  /// The rule of `path` (a leading '/' ignored: "/system/bin/sh" and
  /// "system/bin/sh" are the same path), or nullptr.
  const FsConfigRule* find(std::string_view path) const;
  std::size_t size() const { return rules_.size(); }
  /// The name given to parse() (the file's path for load()).
  const std::string& name() const { return name_; }

 private:
  std::string name_;
  std::unordered_map<std::string, FsConfigRule> rules_;
};

/// The value of the "security.capability" xattr that gives a file the
/// capability set `capabilities`: struct vfs_cap_data of
/// include/uapi/linux/capability.h, revision 2 (magic_etc 0x02000000 with
/// VFS_CAP_FLAGS_EFFECTIVE, 0x000001, set), then {permitted, inheritable}
/// for bits 0-31 and for bits 32-63, inheritable 0; every field a
/// little-endian 32-bit word. The form e2fsdroid (contrib/android/perms.c
/// in e2fsprogs) and make_ext4fs write for fs_config capabilities.
std::array<std::uint8_t, 20> vfs_cap_data(std::uint64_t capabilities);

/// SELinux file contexts (sload.f2fs -s, e2fsdroid -S): the label of each
/// path, from libselinux's file backend (selabel_open(SELABEL_CTX_FILE)).
/// Several files are read as one list, in order, as Android's libselinux
/// reads several SELABEL_OPT_PATH options (Debian's reads only the first,
/// so they are joined into one temporary file). Regular expressions are
/// compiled by libselinux at the first lookup, so a bad one shows as a
/// path without a context. Built only where libselinux is
/// (Debian: libselinux1-dev); elsewhere supported() is false and open()
/// fails with Errc::unsupported.
class FileContexts {
 public:
  /// Whether this build has libselinux.
  static bool supported();
  /// Opens the files (at most 8, as sload.f2fs). Errors: invalid_argument
  /// naming the files with libselinux's messages (a line it cannot read, a
  /// regular expression it rejects), not_found for a missing file,
  /// unsupported without libselinux.
  static Result<std::shared_ptr<const FileContexts>> open(const std::vector<std::string>& files);
  /// open() of the files of a comma-separated list ("a,b", as sload.f2fs
  /// -s takes them; empty items skipped).
  static Result<std::shared_ptr<const FileContexts>> open_list(std::string_view files);
  ~FileContexts();
  FileContexts(const FileContexts&) = delete;
  FileContexts& operator=(const FileContexts&) = delete;

  /// The context of `path` (an absolute path as mounted, "/system/bin/sh")
  /// for an inode of i_mode `mode` (type bits matter: the `--`/`-d`
  /// qualifiers of file_contexts), as selabel_lookup() gives it. Errors:
  /// not_found when no line matches or the match is <<none>> (sload.f2fs
  /// and e2fsdroid stop there too), io for another failure.
  Result<std::string> lookup(const std::string& path, std::uint32_t mode) const;

  struct Handle;

 private:
  explicit FileContexts(std::unique_ptr<Handle> h);
  std::unique_ptr<Handle> h_;
};

}  // namespace f2fscore
