// The host side of populate() (populate.cpp): what it asks of the host's
// file system, one leaf per platform. populate_posix.cpp: lstat, readdir,
// readlink, pread, lseek(SEEK_DATA/SEEK_HOLE), llistxattr/lgetxattr (Linux).
// populate_win32.cpp: FindFirstFileW, GetFileInformationByHandle(Ex),
// ReadFile, with the names and symlinks of extract_win32.cpp's mapping read
// back. Private to f2fscore_host.
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <utility>
#include <vector>

#include "f2fscore/result.hpp"
#include "f2fscore/writer.hpp"

namespace f2fscore::populate_host {

enum class Kind : std::uint8_t { directory, regular, symlink, device, fifo, socket, other };

/// What populate() copies of a host entry.
struct Stat {
  Kind kind = Kind::other;
  /// The inode's i_mode: the file type bits (S_IFDIR, S_IFREG, ... as
  /// Linux's) and the permission bits.
  std::uint16_t mode = 0;
  std::uint32_t uid = 0, gid = 0;
  std::uint64_t size = 0;  ///< bytes; a symlink's: its target's length
  /// As many bytes allocated as the size needs: no hole to look for.
  bool dense = true;
  std::uint64_t nlink = 1;
  /// Identity of the file for hard links: (device, file number).
  std::pair<std::uint64_t, std::uint64_t> id{0, 0};
  /// A device node's number in the 32-bit form Linux keeps in the inode
  /// (new_encode_dev()).
  std::uint32_t rdev = 0;
  Timespec atime, mtime, ctime;
};

/// One entry of a host directory: its name there and the name it gets in
/// the volume (different where the leaf reverses a mapping of names).
struct Name {
  std::string host;
  std::string volume;
};

/// The host path of `name` in host directory `dir`.
std::string child(const std::string& dir, const std::string& name);

/// The entry itself (a symlink is not followed). Errors name the call
/// ("lstat: ...").
Result<Stat> lstat(const std::string& path);
/// The source directory of a populate: followed if a symlink; an error
/// (not_found, invalid_argument) when it is missing or not readable as a
/// directory, the message "source PATH: why".
Result<Stat> source_directory(const std::string& path);

/// The entries of host directory `dir` ("." and ".." left out), in no
/// particular order. An error when it cannot be opened ("cannot open
/// directory: ..."); `read_error` set when reading stopped part way
/// ("reading the directory: ..."), the names read before kept.
Result<std::vector<Name>> list(const std::string& dir, std::optional<Error>& read_error);

/// A symlink's target bytes ("readlink: ..."). `st` is its lstat().
Result<std::string> readlink(const std::string& path, const Stat& st);

/// Extended attributes of the entry (full names as "user.x",
/// "system.posix_acl_access", with their values); those that could not be
/// read are in `problems`. Empty where the host has none.
std::vector<std::pair<std::string, std::vector<std::uint8_t>>> xattrs(const std::string& path,
                                                                      std::vector<Error>& problems);

/// A regular file open for reading.
class File {
 public:
  virtual ~File() = default;
  /// Reads up to `buf.size()` bytes at `off`: the count (0 at the end of
  /// the file), or an error ("read at byte N: ...").
  virtual Result<std::size_t> read_at(std::uint64_t off, std::span<std::uint8_t> buf) = 0;
  /// The data range [first, second) at or after `off` below `size`, or
  /// nullopt when the rest is a hole. Where the host cannot tell,
  /// {off, size}: every byte is data.
  virtual std::optional<std::pair<std::uint64_t, std::uint64_t>> next_data(std::uint64_t off,
                                                                           std::uint64_t size) = 0;
};
/// Opens a regular file for reading without changing its atime where the
/// host allows ("open: ...").
Result<std::unique_ptr<File>> open(const std::string& path);

/// Symlinks that the host tree holds as lines of a file rather than as
/// links (extract_win32.cpp's ".f2fscore-links" at the top of an
/// extraction): the name of that file in the top directory, or nullptr
/// where the host has real symlinks. populate() leaves the file out and
/// makes each of its links.
const char* links_file_name();

/// One line of a links file: the path below the top (its components in
/// the volume's names, '/' between them) and the target's bytes; nullopt
/// for a line that is not one.
std::optional<std::pair<std::string, std::string>> parse_links_line(const std::string& line);

}  // namespace f2fscore::populate_host
