// The -o mount options of f2fscore-fuse: the writer's tunables, the
// daemon's FUSE knobs, and the FUSE mount options passed on to libfuse.
#pragma once

#include <charconv>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "f2fscore/writer.hpp"

namespace f2fscore::tools {

struct FuseOptions {
  /// The writer's options as the daemon mounts with them: the kernel's page
  /// cache of the mount sits above the writer's, so the writer keeps no
  /// clean blocks it read (cache_reads off) and a 16 MiB cache for dirty
  /// data before its writeback (cache_mib= changes it).
  MountOptions mount = [] {
    MountOptions m;
    m.cache_bytes = 16ull << 20;
    m.cache_reads = false;
    return m;
  }();
  bool read_only = false;
  bool iostat = false;
  std::string iostat_file;  ///< iostat=FILE: the unmount report goes there (else stderr)
  bool writeback_cache = false;
  /// Writes of 64 KiB and more (the writer's writeback runs) go to the
  /// device with O_DIRECT (OpenOptions::direct_large_writes);
  /// nodirect_large_writes: through the host's page cache.
  bool direct_large_writes = true;
  double attr_timeout = 1.0, entry_timeout = 1.0;
  std::uint32_t max_write = 1u << 20;
  bool acl = true;  ///< POSIX ACLs stored and evaluated (f2fs's acl option, its default); noacl: not
  std::string fsname, subtype;
  std::vector<std::string> passthrough;  ///< FUSE mount options given to libfuse as they are
  std::vector<std::string> key_files;    ///< key=FILE: fscrypt v2 master keys (64 raw bytes each)
};

namespace detail {

template <typename T>
bool parse_number(std::string_view v, T& out) {
  int base = 10;
  if (v.size() > 2 && v[0] == '0' && (v[1] == 'x' || v[1] == 'X')) {
    v.remove_prefix(2);
    base = 16;
  }
  if (v.empty()) return false;
  auto [p, ec] = std::from_chars(v.data(), v.data() + v.size(), out, base);
  return ec == std::errc() && p == v.data() + v.size();
}

inline bool parse_seconds(std::string_view v, double& out) {
  try {
    std::size_t used = 0;
    const std::string s(v);
    out = std::stod(s, &used);
    return used == s.size() && out >= 0 && out <= 86400;
  } catch (...) {
    return false;
  }
}

}  // namespace detail

/// Parses one -o list into `o`; returns an empty string, or what is wrong.
inline std::string parse_fuse_options(std::string_view list, FuseOptions& o) {
  static const char* kPassFlags[] = {"allow_other", "allow_root", "auto_unmount", "dev", "nodev", "suid", "nosuid",
                                     "exec", "noexec", "atime", "noatime", "relatime", "nodiratime", "async", "sync",
                                     "dirsync", "default_permissions"};
  while (!list.empty()) {
    const std::size_t comma = list.find(',');
    const std::string_view item = list.substr(0, comma);
    list = comma == std::string_view::npos ? std::string_view() : list.substr(comma + 1);
    if (item.empty()) continue;
    const std::size_t eq = item.find('=');
    const std::string_view key = item.substr(0, eq);
    const std::string_view val = eq == std::string_view::npos ? std::string_view() : item.substr(eq + 1);
    const bool has_val = eq != std::string_view::npos;
    auto bad = [&](const char* what) { return std::string(item) + ": " + what; };
    auto need_val = [&]() { return has_val && !val.empty(); };
    if (key == "ro" && !has_val) o.read_only = true;
    else if (key == "rw" && !has_val) o.read_only = false;
    else if (key == "ipu_policy") {
      if (!need_val() || !detail::parse_number(val, o.mount.ipu.ipu_policy) || o.mount.ipu.ipu_policy >= 0x100)
        return bad("a number below 0x100 (F2FS_IPU_* bits)");
    } else if (key == "min_ipu_util") {
      if (!need_val() || !detail::parse_number(val, o.mount.ipu.min_ipu_util)) return bad("a number (percent)");
    } else if (key == "min_fsync_blocks") {
      if (!need_val() || !detail::parse_number(val, o.mount.ipu.min_fsync_blocks)) return bad("a number of blocks");
    } else if (key == "min_hot_blocks") {
      if (!need_val() || !detail::parse_number(val, o.mount.ipu.min_hot_blocks)) return bad("a number of blocks");
    } else if (key == "fdatasync_in_place" && !has_val) {
      o.mount.ipu.fdatasync_in_place = true;
    } else if (key == "cache_mib") {
      std::uint64_t m = 0;
      if (!need_val() || !detail::parse_number(val, m) || m == 0 || m > (1u << 20)) return bad("MiB in [1, 1048576]");
      o.mount.cache_bytes = m << 20;
    } else if (key == "node_cache_pages") {
      if (!need_val() || !detail::parse_number(val, o.mount.node_cache_pages) || o.mount.node_cache_pages < 64)
        return bad("a number of 4 KiB pages, at least 64");
    } else if (key == "checkpoint_interval") {
      if (!need_val() || !detail::parse_number(val, o.mount.checkpoint_interval_s)) return bad("seconds (0: none)");
    } else if (key == "discard" && !has_val) {
      o.mount.discard = true;
    } else if (key == "nodiscard" && !has_val) {
      o.mount.discard = false;
    } else if (key == "background_gc") {
      if (val == "on") o.mount.gc.background = true;
      else if (val == "off") o.mount.gc.background = false;
      else return bad("on or off");
    } else if (key == "compress_algorithm") {
      // Linux's names (parse_options() in fs/f2fs/super.c); no ":level".
      std::uint8_t a = 0;
      if (val == "lzo") a = 0;
      else if (val == "lz4") a = 1;
      else if (val == "zstd") a = 2;
      else if (val == "lzo-rle") a = 3;
      else return bad("lzo, lz4, zstd or lzo-rle (no compression level)");
      o.mount.compression.algorithm = a;
    } else if (key == "compress_log_size") {
      unsigned n = 0;
      if (!need_val() || !detail::parse_number(val, n) || n < 2 || n > 8) return bad("a number in [2, 8]");
      o.mount.compression.log_size = static_cast<std::uint8_t>(n);
    } else if (key == "compress_chksum" && !has_val) {
      o.mount.compression.chksum = true;
    } else if (key == "compress_extension" || key == "nocompress_extension") {
      if (!need_val()) return bad("an extension");
      (key == "compress_extension" ? o.mount.compression.extension : o.mount.compression.nocompress_extension)
          .emplace_back(val);
    } else if (key == "compress_mode") {
      if (val == "fs") o.mount.compression.mode = MountOptions::Compression::Mode::fs;
      else if (val == "user") o.mount.compression.mode = MountOptions::Compression::Mode::user;
      else return bad("fs or user");
    } else if (key == "iostat") {
      o.iostat = true;
      o.iostat_file = std::string(val);
    } else if (key == "acl" && !has_val) {
      o.acl = true;
    } else if (key == "noacl" && !has_val) {
      o.acl = false;
    } else if (key == "writeback_cache" && !has_val) {
      o.writeback_cache = true;
    } else if (key == "direct_large_writes" && !has_val) {
      o.direct_large_writes = true;
    } else if (key == "nodirect_large_writes" && !has_val) {
      o.direct_large_writes = false;
    } else if (key == "attr_timeout") {
      if (!need_val() || !detail::parse_seconds(val, o.attr_timeout)) return bad("seconds in [0, 86400]");
    } else if (key == "entry_timeout") {
      if (!need_val() || !detail::parse_seconds(val, o.entry_timeout)) return bad("seconds in [0, 86400]");
    } else if (key == "max_write") {
      if (!need_val() || !detail::parse_number(val, o.max_write) || o.max_write < 4096 || o.max_write > (1u << 20))
        return bad("bytes in [4096, 1048576]");
    } else if (key == "key") {
      if (!need_val()) return bad("a key file (64 raw bytes: an fscrypt v2 master key)");
      o.key_files.emplace_back(val);
    } else if (key == "fsname") {
      if (!need_val()) return bad("a name");
      o.fsname = std::string(val);
    } else if (key == "subtype") {
      if (!need_val()) return bad("a name");
      o.subtype = std::string(val);
    } else {
      bool known = false;
      for (const char* p : kPassFlags)
        if (!has_val && key == p) known = true;
      if (!known) return "unknown mount option '" + std::string(item) + "'";
      if (key != "default_permissions") o.passthrough.emplace_back(item);
    }
  }
  return {};
}

}  // namespace f2fscore::tools
