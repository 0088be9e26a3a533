// Extraction of files and trees from a volume to a host directory (the
// host-side part of inspection: it creates files, directories, links and
// xattrs on the host through POSIX calls, so it lives in f2fscore_host,
// beside the engine, not in it).
#pragma once

#include <cstdint>
#include <functional>
#include <string>
#include <string_view>
#include <vector>

#include "f2fscore/inspect.hpp"
#include "f2fscore/result.hpp"
#include "f2fscore/volume.hpp"

namespace f2fscore::fscrypt {
class Keyring;
}  // namespace f2fscore::fscrypt

namespace f2fscore::inspect {

/// How file data may be taken from the image file behind the volume's
/// device (BlockDevice::host_descriptor(): a regular file, read without
/// O_DIRECT) instead of being read through the device. Linux only;
/// elsewhere, and for inline, compressed and block-device data, every
/// block is read.
enum class HostCopy : std::uint8_t {
  off,      ///< read every block through the device
  reflink,  ///< share the extents (FICLONERANGE, where the host file system reflinks: Btrfs, XFS); reads elsewhere
  copy,     ///< as cp(1): FICLONERANGE where the host file system shares extents, else copy_file_range(2) (an in-kernel copy; server-side on NFS)
};

struct ExtractOptions {
  bool owners = true;   ///< chown to the image's uid/gid (only when running as root)
  bool xattrs = true;   ///< setxattr (user., trusted., security., POSIX ACLs)
  bool specials = true; ///< fifos and sockets, and devices (devices only as root)
  /// Extents taken from the image file (HostCopy); the default is what
  /// cp(1) does: shared where the host file system can, copied in the
  /// kernel elsewhere, with less CPU and a steadier time than reads and
  /// writes (docs/benchmarks.md, "Extraction"). Where blocks are copied or
  /// read rather than shared, the kernel is asked to read the next files'
  /// extents ahead of their copies (POSIX_FADV_WILLNEED, 64 MiB ahead).
  HostCopy host_copy = HostCopy::copy;
  /// Progress, if set: called as `progress(current, max)`, one unit per
  /// inode extracted (a hard link's second name is not one), `max` the
  /// checkpoint's valid inode count (exact for "/" on a consistent volume,
  /// an upper bound for a subtree). Called at 0, about once per 0.1 %, and
  /// with current == max when the extraction ends.
  std::function<void(std::uint64_t current, std::uint64_t max)> progress;
  /// fscrypt v2 master keys (fscrypt.hpp), if set: encrypted inodes whose
  /// key is there are extracted in the clear (names, contents, link
  /// targets; holes of encrypted files are written as zeros); the others
  /// are listed in ExtractReport::encrypted. POSIX only: on Windows every
  /// encrypted inode is listed. The caller keeps the keyring alive.
  const fscrypt::Keyring* keys = nullptr;
};

struct ExtractReport {
  std::string source;       ///< the path in the image
  std::string destination;  ///< host path of the extracted top item
  std::uint64_t files = 0, directories = 0, symlinks = 0, hard_links = 0, specials = 0;
  std::uint64_t bytes = 0;             ///< file contents written
  /// Bytes of mapped blocks shared with or copied from the image file by
  /// the host (ExtractOptions::host_copy), not read through the device;
  /// part of the files' contents.
  std::uint64_t host_copied_bytes = 0;
  std::uint64_t xattrs = 0;            ///< set on the host
  std::uint64_t xattrs_unsupported = 0;  ///< refused by the host (ENOTSUP, EPERM)
  std::vector<std::string> encrypted;  ///< paths skipped because encrypted
  std::vector<std::string> skipped;    ///< "path: why" (devices as non-root, sockets, ...)
  std::vector<std::string> warnings;   ///< host refusals that lose nothing essential
  std::vector<std::string> problems;   ///< entries not extracted because the image is bad
};

/// Extracts the file or tree at `path` in the image. If `dest` is an
/// existing directory the item goes inside it under its own name (the root
/// "/" puts its contents there); otherwise it is created as `dest`.
/// Keeps modes, owners (root only), atime and mtime, symlinks as symlinks,
/// hard links as hard links, xattrs where the host allows, fifos and (as
/// root) device nodes, and holes as holes: unmapped blocks are not
/// written, then the size is set. Mapped blocks read through the device are
/// written only when non-zero; mapped blocks copied from the image file
/// or shared (ExtractOptions::host_copy) are taken as the image file holds them,
/// data as data (zero-filled too, as `cp` does) and its holes as holes. Encrypted inodes are listed, not
/// extracted; fs-verity files give their contents. Never follows a symlink:
/// everything is created relative to directory descriptors opened with
/// O_NOFOLLOW, and names containing '/' or equal to "." or ".." (possible
/// only in corrupt images) are refused. Existing non-directories in the way
/// are replaced.
/// Errors: the source cannot be found or read, the destination cannot be
/// created. Per-entry failures land in ExtractReport::problems.
Result<ExtractReport> extract(Volume& vol, std::string_view path, const std::string& dest,
                              const ExtractOptions& o = {});
Output render_extract_report(const ExtractReport& r, Format f);

}  // namespace f2fscore::inspect
