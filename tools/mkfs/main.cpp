// f2fscore-mkfs: create an F2FS file system on a block device or image file.
// A thin front end: parse options, open devices, refuse unsafe targets,
// call f2fscore::format_volume(), print the result.
//
// 64-bit file offsets on 32-bit hosts: without this, stat() of an image
// past 2 GiB fails on i686 (EOVERFLOW). Must precede every include.
#ifndef _FILE_OFFSET_BITS
#define _FILE_OFFSET_BITS 64
#endif
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>
#if defined(__linux__)
#include <linux/hdreg.h>
#include <sys/ioctl.h>
#include <sys/utsname.h>
#endif
#if defined(F2FSCORE_HAVE_BLKID)
#include <blkid/blkid.h>
#endif

#include <CLI/CLI.hpp>
#include <chrono>
#include <cerrno>
#include <climits>
#include <cstring>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <memory>
#include <random>
#include <sstream>
#include <filesystem>
#include <optional>
#include <string>
#include <vector>

#include "f2fscore/disk/constants.hpp"
#include "f2fscore/endian.hpp"
#include "f2fscore/android_rules.hpp"
#include "f2fscore/mkfs.hpp"
#include "f2fscore/multi_device.hpp"
#include "f2fscore/populate.hpp"
#include "f2fscore/populate_size.hpp"
#include "f2fscore/tools/common.hpp"
#include "f2fscore/tools/compression_args.hpp"
#include "f2fscore/tools/populate_json.hpp"
#include "f2fscore/tools/progress.hpp"
#include "f2fscore/tools/sparse_output.hpp"
#include "f2fscore/writer.hpp"

namespace {

namespace ftools = f2fscore::tools;
constexpr int kExitOk = ftools::exit_code::ok, kExitFailure = ftools::exit_code::failure,
              kExitUsage = ftools::exit_code::usage;

const char* kExitHelp =
    "Exit status: 0 success; 1 failure (device missing or read-only, too small, existing file\n"
    "system without -f, mounted device, I/O error; with --populate: a source directory that is\n"
    "missing or not a directory, no space left, an entry not copied); 2 usage error (bad option or value).";

// What already lives on the target: a file system or partition table name.
std::string existing_signature(const std::string& path, f2fscore::BlockDevice& dev) {
  std::uint8_t b[2 * 4096];
  if (dev.info().size_bytes >= sizeof b &&
      f2fscore::read_at(dev, 0, std::span<std::uint8_t>(b, sizeof b))) {
    if (f2fscore::load_le32(b, 1024) == f2fscore::disk::kSuperMagic ||
        f2fscore::load_le32(b, 4096 + 1024) == f2fscore::disk::kSuperMagic)
      return "an existing file system (f2fs)";
  }
#if defined(F2FSCORE_HAVE_BLKID)
  blkid_probe pr = blkid_new_probe_from_filename(path.c_str());
  if (pr == nullptr) return {};
  std::string found;
  blkid_probe_enable_partitions(pr, 1);
  if (blkid_do_fullprobe(pr) == 0) {
    const char* type = nullptr;
    if (blkid_probe_lookup_value(pr, "TYPE", &type, nullptr) == 0)
      found = std::string("an existing file system (") + type + ")";
    else if (blkid_probe_lookup_value(pr, "PTTYPE", &type, nullptr) == 0)
      found = std::string("a partition table (") + type + ")";
    else
      found = "an existing signature";
  }
  blkid_free_probe(pr);
  return found;
#else
  (void)path;
  return {};
#endif
}

std::string kernel_version() {
#if defined(__linux__)
  std::ifstream f("/proc/version");
  std::string line;
  if (f && std::getline(f, line)) return line.substr(0, 255);
  struct utsname u {};
  if (::uname(&u) == 0) return u.release;
#endif
  return "f2fscore " F2FSCORE_VERSION_STRING;
}

std::uint64_t start_sector_of(const std::string& path) {
#if defined(__linux__) && defined(HDIO_GETGEO)
  const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) return 0;
  struct hd_geometry g {};
  std::uint64_t start = 0;
  struct stat st {};
  if (::fstat(fd, &st) == 0 && S_ISBLK(st.st_mode) && ::ioctl(fd, HDIO_GETGEO, &g) == 0) start = g.start;
  ::close(fd);
  return start;
#else
  (void)path;
  return 0;
#endif
}

// --size-to-fit[=MARGIN]: the smallest image file holding the tree and
// MARGIN free. The size comes from an estimate of what populate() writes
// (estimate_populate()) and the mkfs plan of candidate sizes
// (smallest_fitting_size()); each build is checked (populate() fits, and
// statfs's free blocks cover the margin) and a short one grows the image
// and builds it again, at most kMaxBuilds times.
class FitState {
 public:
  static constexpr int kMaxBuilds = 6;

  // Checks the target, estimates, sizes the file. An exit code on failure.
  template <class Fail, class Usage>
  std::optional<int> start(const std::string& path, const std::string& src, const f2fscore::MkfsOptions& o,
                           const f2fscore::PopulateOptions& po, const std::string& margin, bool force, Fail fail,
                           Usage usage) {
    path_ = path;
    opts_ = o;
    sector_size_ = o.wanted_sector_size ? o.wanted_sector_size : 512;
    if (!parse_margin(margin)) return usage("--size-to-fit: the margin is BYTES (K, M, G or T suffix: KiB ...) or "
                                            "PERCENT% of the tree, not \"" + margin + "\"");
    struct stat st {};
    bool exists = ::stat(path.c_str(), &st) == 0;
    if (exists && !S_ISREG(st.st_mode))
      return fail(path + " is not a regular file: --size-to-fit sizes an image file (a block device has its size)");
    if (exists && st.st_size > 0) {
      // In use, or holding a file system without -f: refused before the
      // file is resized.
      f2fscore::OpenOptions oo;
      oo.exclusive = true;
      oo.refuse_in_use = true;
      oo.sparse_as_raw = force;
      auto d = f2fscore::open_posix_device(path, oo);
      if (!d) {
        const auto& e = d.error();
        if (e.code == f2fscore::Errc::busy) return fail(e.message + "; refusing to format it");
        return fail(ftools::open_failure_text(path, e));
      }
      if (!force) {
        if (auto sig = existing_signature(path, **d); !sig.empty())
          return fail(path + " contains " + sig + "; use -f to overwrite it");
      }
    }
    auto est = f2fscore::estimate_populate(src, o.features, po);
    if (!est) return fail("--populate " + src + ": " + est.error().message + "; nothing written");
    est_ = *est;
    if (percent_) margin_blocks_ = (est_.blocks() * margin_percent_ + 99) / 100;
    need_ = est_.blocks() + margin_blocks_;
    auto f = f2fscore::smallest_fitting_size(need_, est_.nodes(), opts_, sector_size_);
    if (!f) return fail("--size-to-fit: " + f.error().message + "; nothing written");
    if (auto s = f2fscore::Writer::check_features(f->plan.sb, o.features & f2fscore::disk::feature::ro); !s)
      return fail("--populate " + src + ": " + s.error().message + "; nothing written");
    first_bytes_ = f->bytes;
    if (!exists) {
      std::ofstream created(path, std::ios::binary);
      if (!created) return fail(path + ": cannot create the image file: " + std::strerror(errno));
    }
    return resize(f->bytes, fail);
  }

  // After a build: nullopt when the build stands (it fits with the margin
  // and no smaller size is left to try, or the builds are used up and the
  // caller reports the failure); -1 to build again at the new size; else
  // an exit code. `free_blocks`: statfs's free blocks after the copy.
  // A short first build means the estimate missed: the image grows until a
  // build holds the tree, then the sizes between the largest short one and
  // the smallest good one are bisected while builds are left (one kept to
  // build the good size again).
  template <class Fail>
  std::optional<int> next(bool no_space, std::uint64_t free_blocks, Fail fail) {
    ++builds_;
    free_blocks_ = free_blocks;
    const std::uint64_t unit = (2ull << 20) * std::max<std::uint32_t>(opts_.segs_per_sec, 1);
    const bool ok = !no_space && free_blocks >= margin_blocks_;
    if (ok) good_bytes_ = bytes_;
    else bad_bytes_ = std::max(bad_bytes_, bytes_);
    if (good_bytes_ != 0) {
      if (bad_bytes_ != 0 && good_bytes_ - bad_bytes_ > unit && builds_ + 1 < kMaxBuilds) {
        const std::uint64_t mid = bad_bytes_ + (good_bytes_ - bad_bytes_) / 2 / unit * unit;
        if (auto rc = resize(mid, fail)) return rc;
        return -1;
      }
      if (ok) return std::nullopt;
      if (auto rc = resize(good_bytes_, fail)) return rc;  // the size that held it
      return -1;
    }
    if (builds_ >= kMaxBuilds) {
      if (no_space) return std::nullopt;
      return fail("--size-to-fit: after " + std::to_string(builds_) + " builds the image of " + std::to_string(bytes_) +
                  " bytes holds the tree with " + std::to_string(free_blocks) + " blocks free, fewer than the margin (" +
                  std::to_string(margin_blocks_) + ")");
    }
    // Short by an unknown amount: a quarter more (and 8 MiB); short of the
    // margin: by the blocks missing (and a segment).
    need_ = no_space ? need_ + need_ / 4 + 2048 : need_ + (margin_blocks_ - free_blocks) + 512;
    auto f = f2fscore::smallest_fitting_size(need_, est_.nodes(), opts_, sector_size_);
    if (!f) return fail("--size-to-fit: " + f.error().message);
    if (auto rc = resize(std::max(f->bytes, bytes_ + unit), fail)) return rc;
    return -1;
  }

  void report_json(ftools::Json& j, std::uint64_t free_after_format) const {
    ftools::Json f;
    f["image_bytes"] = bytes_;
    f["first_estimate_bytes"] = first_bytes_;
    f["builds"] = builds_;
    f["margin_blocks"] = margin_blocks_;
    f["estimated_blocks"] = est_.blocks();
    f["estimated_nodes"] = est_.nodes();
    f["tree_blocks"] = free_after_format > free_blocks_ ? free_after_format - free_blocks_ : 0;
    f["free_blocks"] = free_blocks_;
    j["size_to_fit"] = std::move(f);
  }
  void report_text(std::uint64_t free_after_format) const {
    std::printf("Size to fit:       %llu bytes (%llu MiB; %d build%s): the tree took %llu blocks (estimated %llu), "
                "%llu blocks free (margin %llu)\n",
                static_cast<unsigned long long>(bytes_), static_cast<unsigned long long>(bytes_ >> 20), builds_,
                builds_ == 1 ? "" : "s",
                static_cast<unsigned long long>(free_after_format > free_blocks_ ? free_after_format - free_blocks_ : 0),
                static_cast<unsigned long long>(est_.blocks()), static_cast<unsigned long long>(free_blocks_),
                static_cast<unsigned long long>(margin_blocks_));
  }

 private:
  bool parse_margin(const std::string& m) {
    if (m.empty()) return true;
    char* end = nullptr;
    errno = 0;
    const unsigned long long v = std::strtoull(m.c_str(), &end, 10);
    if (end == m.c_str() || errno != 0 || m[0] == '-') return false;
    const std::string rest(end);
    if (rest == "%") {
      percent_ = true;
      margin_percent_ = v;
      return v <= 1000;
    }
    unsigned shift = 0;
    if (rest.empty()) shift = 0;
    else if (rest == "K" || rest == "k") shift = 10;
    else if (rest == "M" || rest == "m") shift = 20;
    else if (rest == "G" || rest == "g") shift = 30;
    else if (rest == "T" || rest == "t") shift = 40;
    else return false;
    if (v > (16ull << 40) >> shift) return false;
    margin_blocks_ = ((v << shift) + 4095) / 4096;
    return true;
  }
  template <class Fail>
  std::optional<int> resize(std::uint64_t bytes, Fail fail) {
    std::error_code ec;
    std::filesystem::resize_file(path_, bytes, ec);
    if (ec) return fail(path_ + ": cannot set the image size to " + std::to_string(bytes) + " bytes: " + ec.message());
    bytes_ = bytes;
    return std::nullopt;
  }

  std::string path_;
  f2fscore::MkfsOptions opts_;
  std::uint32_t sector_size_ = 512;
  bool percent_ = false;
  std::uint64_t margin_percent_ = 0, margin_blocks_ = 0, need_ = 0;
  f2fscore::PopulateEstimate est_;
  std::uint64_t bytes_ = 0, first_bytes_ = 0, free_blocks_ = 0, good_bytes_ = 0, bad_bytes_ = 0;
  int builds_ = 0;
};

}  // namespace

int main(int argc, char** argv) {
  CLI::App app{"Create an F2FS file system (f2fscore " F2FSCORE_VERSION_STRING ")", "f2fscore-mkfs"};
  app.footer(kExitHelp);
  std::string device;
  std::uint64_t sectors = 0;
  std::string label, encoding, overprovision_s, uuid_s, root_owner, cold_ext, hot_ext;
  std::vector<std::string> feature_args, extra_devices;
  std::uint32_t segs_per_sec = 1, secs_per_zone = 1, sector_size = 0, heap = 0;
  int discard = 1;
  std::int64_t timestamp = -1;
  bool large_nat = false, force = false, quiet = false, json = false, version = false;
  std::string populate_dir;
  bool populate_owner = false;

  app.add_option("device", device, "Block device or image file")->required();
  app.add_option("sectors", sectors, "Size of the file system in sectors (default: the whole device)")
      ->check(ftools::decimal_count("sector count"));
  app.add_option("-l", label, "Volume label (at most 512 UTF-16 units)");
  app.add_option("-O", feature_args,
                 "Features, comma-separated and repeatable: encrypt, extra_attr, project_quota, "
                 "inode_checksum, flexible_inline_xattr, quota, inode_crtime, lost_found, verity, "
                 "sb_checksum, casefold, compression, ro")
      ->allow_extra_args(false);  // one list per -O: the operands after it stay the device and sectors
  app.add_option("-C", encoding, "Casefolding encoding: utf8[:strict]");
  app.add_option("-o", overprovision_s, "Overprovision ratio in percent (default: the best, as mkfs.f2fs 1.15)");
  app.add_option("-s", segs_per_sec, "Segments per section")->check(CLI::Range(1u, 65536u));
  app.add_option("-z", secs_per_zone, "Sections per zone")->check(CLI::Range(1u, 65536u));
  app.add_option("-a", heap, "Heap-based log placement, 0 or 1 (default 0)")->check(CLI::Range(0u, 1u));
  app.add_option("-e", cold_ext, "Cold file extensions, comma-separated (added to the defaults)");
  app.add_option("-E", hot_ext, "Hot file extensions, comma-separated (added to the defaults)");
  app.add_option("-U", uuid_s, "Volume UUID (default: random)");
  app.add_option("-T", timestamp, "Timestamp for the inodes, seconds since the epoch (default: now)");
  app.add_option("-R", root_owner, "Owner of the root directory, uid:gid (default 0:0)");
  app.add_option("-t", discard, "Discard the device first: 1 (default) or 0")->check(CLI::Range(0, 1));
  app.add_option("-w", sector_size, "Sector size in bytes for the sectors argument")->check(CLI::Range(512u, 4096u));
  app.add_flag("-i", large_nat, "Large NAT bitmap (20% of the NAT area)");
  std::string defset;
  app.add_option("-g", defset,
                 "Default options of a set, as mkfs.f2fs 1.15 -g: android (-f, -w 4096, -R 0:0 and, unless -O ro, "
                 "-O encrypt,verity,extra_attr,project_quota,quota)")
      ->check(CLI::IsMember({"android"}));
  app.add_option("-c", extra_devices, "Add a device to the volume (repeatable, one path each, up to 7)")
      ->allow_extra_args(false);
  app.add_option("--populate", populate_dir,
                 "After formatting, copy this host directory's tree into the root, as sload.f2fs -f or "
                 "mke2fs -d do (holes, hard links, symlinks, special files, modes, times, xattrs; "
                 "-T sets every time; owners are 0:0 unless --preserve-owner; -R keeps the root's owner)");
  std::string size_to_fit_arg;
  auto* size_to_fit_opt = app.add_flag(
      "--size-to-fit", size_to_fit_arg,
      "[=MARGIN] With --populate, on an image file: make it the smallest size holding the tree with MARGIN free "
      "(bytes with K, M, G or T, or a percentage of the tree such as 10%; default 0), "
      "creating the file if missing; the size is printed");
  app.add_flag("--preserve-owner", populate_owner, "With --populate: keep the source's uid and gid");
  // sload.f2fs's Android options for --populate (its -C -s -t -p; mkfs's
  // own -C -s -t mean other things, so long names only).
  std::string fs_config_file, file_contexts_arg, mount_point = "/", product_out;
  app.add_option("--fs-config", fs_config_file,
                 "With --populate: Android canned fs_config file (as sload.f2fs -C): owners, permission bits and "
                 "file capabilities from each entry's rule; an entry without one is an error before the format");
  app.add_option("--file-contexts", file_contexts_arg,
                 "With --populate: SELinux file_contexts, FILE[,FILE...] (as sload.f2fs -s): security.selinux of "
                 "each entry; needs a build with libselinux");
  app.add_option("--mount-point", mount_point,
                 "With --populate: where the image is mounted on the device (as sload.f2fs -t), the prefix of the "
                 "paths looked up in --fs-config and --file-contexts (default /)");
  app.add_option("--product-out", product_out,
                 "With --populate and --fs-config: Android's product-out directory (as sload.f2fs -p), accepted and "
                 "not needed: the fs_config file holds every rule");
  // With --populate: sload.f2fs's compression options (-c -a -L -i -x -m -r)
  // under long names (-c, -a, -i are mkfs.f2fs's own).
  ftools::CompressionArgs compression;
  compression.add_to(app, {"--compress", "--compress-algorithm", "--compress-log-size", "--compress-include",
                           "--compress-exclude", "--compress-min-blocks", "--compress-release"});
  int progress_fd = -1;
  app.add_option("--progress", progress_fd,
                 "With --populate: progress of the copy as e2fsck -C, lines \"1 CURRENT MAX DEVICE\" to "
                 "descriptor FD; 0: a bar on the terminal");
  std::uint64_t sparse_size = 0;
  app.add_option("-S", sparse_size,
                 "Write an Android sparse image of this many bytes (rounded down to 4 KiB) to the device path, a "
                 "file replaced when the format is complete, as make_f2fs -S")
      ->check(CLI::PositiveNumber);
  app.add_flag("-f", force, "Overwrite an existing file system or partition table");
  app.add_flag("-q", quiet, "Quiet: print only errors");
  app.add_flag("--json", json, "Print a machine-readable summary");
  app.add_flag("-V,--version", version, "Print the version and exit");
  if (auto rc = ftools::parse_device_command_line(app, argc, argv, kExitUsage, device, true)) return *rc;
  std::optional<std::string> size_to_fit;
  // Without a value the flag reads "true": no margin.
  if (size_to_fit_opt->count() > 0)
    size_to_fit = size_to_fit_arg == "true" || size_to_fit_arg == "0" ? std::string() : size_to_fit_arg;
  if (version) return ftools::print_version("f2fscore-mkfs", json);
  auto usage = [&](const std::string& m) {
    return ftools::report_usage_error("f2fscore-mkfs", device, json, m, kExitUsage);
  };
  auto fail = [&](const std::string& m) { return ftools::report_device_failure("f2fscore-mkfs", device, json, m); };

  f2fscore::MkfsOptions o;
  o.label = label;
  for (const auto& f : feature_args) {
    auto bits = f2fscore::parse_features(f);
    if (!bits) return usage(bits.error().message);
    o.features |= *bits;
  }
  if (!encoding.empty()) {
    auto enc = f2fscore::parse_encoding(encoding);
    if (!enc) return usage(enc.error().message);
    o.encoding = enc->first;
    o.encoding_flags = enc->second;
    o.features |= f2fscore::disk::feature::casefold;
  } else if (o.features & f2fscore::disk::feature::casefold) {
    o.encoding = f2fscore::disk::kEncodingUtf8_12_1;  // -O casefold alone means utf8
  }
  // -g android, as add_default_options() of mkfs.f2fs 1.15 applies it after
  // every other option: it wins over -w and -R; a read-only image (-O ro)
  // takes no other feature. (Measured: Debian's mkfs.f2fs 1.15 -g android
  // sets encrypt, verity, extra_attr, project_quota and quota.)
  if (defset == "android") {
    force = true;
    sector_size = 4096;
    root_owner = "0:0";
    if (!(o.features & f2fscore::disk::feature::ro))
      o.features |= f2fscore::disk::feature::encrypt | f2fscore::disk::feature::verity |
                    f2fscore::disk::feature::extra_attr | f2fscore::disk::feature::project_quota |
                    f2fscore::disk::feature::quota_ino;
  }
  // project_quota implies quota, as in mkfs.f2fs.
  if (o.features & f2fscore::disk::feature::project_quota) o.features |= f2fscore::disk::feature::quota_ino;
  if (!overprovision_s.empty()) {
    char* end = nullptr;
    o.overprovision = std::strtod(overprovision_s.c_str(), &end);
    if (end == overprovision_s.c_str() || *end != 0 || o.overprovision <= 0 || o.overprovision >= 100)
      return usage("-o: overprovision must be a percentage above 0 and below 100, not \"" + overprovision_s + "\"");
  }
  o.segs_per_sec = segs_per_sec;
  o.secs_per_zone = secs_per_zone;
  o.heap = heap == 1;
  auto split = [](const std::string& s) {
    std::vector<std::string> out;
    std::string cur;
    for (char c : s) {
      if (c == ',' || c == ' ') { if (!cur.empty()) out.push_back(cur); cur.clear(); }
      else cur += c;
    }
    if (!cur.empty()) out.push_back(cur);
    return out;
  };
  o.cold_extensions = split(cold_ext);
  o.hot_extensions = split(hot_ext);
  if (!uuid_s.empty()) {
    auto u = f2fscore::parse_uuid(uuid_s);
    if (!u) return usage("-U: " + u.error().message);
    o.uuid = *u;
  }
  if (!root_owner.empty()) {
    unsigned long uid = 0, gid = 0;
    char extra = 0;
    if (std::sscanf(root_owner.c_str(), "%lu:%lu%c", &uid, &gid, &extra) != 2 || uid > UINT32_MAX || gid > UINT32_MAX)
      return usage("-R: expected uid:gid, not \"" + root_owner + "\"");
    o.root_uid = static_cast<std::uint32_t>(uid);
    o.root_gid = static_cast<std::uint32_t>(gid);
  }
  o.timestamp = timestamp >= 0 ? static_cast<std::uint64_t>(timestamp)
                               : static_cast<std::uint64_t>(std::chrono::duration_cast<std::chrono::seconds>(
                                     std::chrono::system_clock::now().time_since_epoch()).count());
  o.random_seed = std::random_device{}() ^ (static_cast<std::uint64_t>(std::random_device{}()) << 32);
  o.discard = discard == 1;
  o.large_nat_bitmap = large_nat;
  o.wanted_sectors = sectors;
  o.wanted_sector_size = sector_size;
  o.version = kernel_version();
  f2fscore::MountOptions::Compression compress_opts;
  if (auto e = compression.apply(compress_opts)) return usage(*e);
  if (compression.enabled() && populate_dir.empty()) return usage("--compress needs --populate");
  if (compression.enabled() && !(o.features & f2fscore::disk::feature::compression))
    return fail("--compress: the volume has no compression feature (-O extra_attr,compression); nothing written");
  if (extra_devices.size() > 7) return usage("-c: at most 7 extra devices");
  if (!extra_devices.empty() && sectors != 0) return usage("a sector count cannot be given with -c");

  if (size_to_fit) {
    if (populate_dir.empty()) return usage("--size-to-fit goes with --populate: the size is that of the tree");
    if (sectors != 0) return usage("--size-to-fit finds the size: no sectors argument");
    if (!extra_devices.empty()) return usage("--size-to-fit sizes one image file: no -c");
    if (sparse_size != 0)
      return usage("--size-to-fit writes a raw image file; -S gives a size of its own (convert the image with img2simg)");
  }

  // -S: the volume is made in a raw staging file beside the target, which
  // becomes the sparse image at the end (the target untouched until then).
  std::optional<ftools::SparseStaging> staging;
  if (sparse_size != 0) {
    if (!extra_devices.empty()) return usage("-S writes one image file: no -c");
    if (sectors != 0) return usage("-S gives the image size: no sectors argument");
    struct stat tst {};
    if (::stat(device.c_str(), &tst) == 0) {
      if (!S_ISREG(tst.st_mode)) return fail(device + " is not a regular file: -S writes an image file");
      if (tst.st_size > 0 && !force) return fail(device + " exists; use -f to replace it with the sparse image");
    }
    auto st = ftools::SparseStaging::create(device, sparse_size / 4096 * 4096);
    if (!st) return fail("-S: " + st.error().message);
    staging.emplace(std::move(*st));
  }

  // The populate options, checked before anything is written.
  f2fscore::PopulateOptions po;
  if ((!fs_config_file.empty() || !file_contexts_arg.empty() || mount_point != "/" || !product_out.empty()) &&
      populate_dir.empty())
    return usage("--fs-config, --file-contexts, --mount-point and --product-out go with --populate");
  if (!product_out.empty() && fs_config_file.empty())
    return usage("--product-out serves Android's built-in fs_config tables (libcutils fs_config()), which f2fscore "
                 "does not have; give the canned fs_config file with --fs-config");
  po.mount_point = mount_point;
  if (timestamp >= 0) po.fixed_time = o.timestamp;  // else the source's times
  po.preserve_owner = populate_owner;
  if (!fs_config_file.empty()) {
    auto c = f2fscore::FsConfig::load(fs_config_file);
    if (!c) return fail("--fs-config: " + c.error().message + "; nothing written");
    po.fs_config = std::make_shared<const f2fscore::FsConfig>(std::move(*c));
  }
  if (!file_contexts_arg.empty()) {
    auto fc = f2fscore::FileContexts::open_list(file_contexts_arg);
    if (!fc) return fail("--file-contexts: " + fc.error().message + "; nothing written");
    po.file_contexts = std::move(*fc);
  }
  if (!populate_dir.empty()) {
    // Checked before anything is written; populate() checks again.
    struct stat pst {};
    if (::stat(populate_dir.c_str(), &pst) != 0)
      return fail("--populate " + populate_dir + ": no such directory");
    if (!S_ISDIR(pst.st_mode)) return fail("--populate " + populate_dir + ": not a directory");
    if (auto c = f2fscore::check_populate_rules(populate_dir, po); !c)
      return fail("--populate " + populate_dir + ": " + c.error().message);
    po.rules_checked = true;
  }

  // --size-to-fit: the image file gets the size found before it is opened.
  FitState fit;
  if (size_to_fit) {
    if (auto rc = fit.start(device, populate_dir, o, po, *size_to_fit, force, fail, usage)) return *rc;
  }

  // Open every device, refusing mounted ones and, without -f, ones that
  // hold a file system or partition table. Nothing is written before all
  // checks and the layout plan pass.
  std::vector<std::string> paths{staging ? staging->raw_path() : device};
  paths.insert(paths.end(), extra_devices.begin(), extra_devices.end());
  // One device named twice (the same file or device node by any path).
  for (std::size_t i = 0; i < paths.size(); ++i)
    for (std::size_t j = 0; j < i; ++j) {
      std::error_code ec;
      if (paths[i] == paths[j] || std::filesystem::equivalent(paths[i], paths[j], ec))
        return usage(paths[i] + " is given twice (" + paths[j] + "): each device of a volume once");
    }
  std::vector<std::unique_ptr<f2fscore::BlockDevice>> devs;
  std::vector<f2fscore::MkfsTarget> targets;
  // --size-to-fit opens the image again after each resize; -f holds then
  // (the image is ours since the first pass).
  bool check_signature = !force;
  auto open_all = [&]() -> std::optional<int> {
    targets.clear();
    devs.clear();
    for (const auto& p : paths) {
      // In use (mounted, swap, an image behind a mounted or held loop device,
      // a block device another program holds): refused whatever -f says.
      f2fscore::OpenOptions oo;
      oo.exclusive = true;
      oo.refuse_in_use = true;
      oo.sparse_as_raw = force;  // an Android sparse image is a file's content like any other under -f
      auto d = f2fscore::open_posix_device(p, oo);
      if (!d) {
        const auto& e = d.error();
        if (e.code == f2fscore::Errc::busy) return fail(e.message + "; refusing to format it");
        return fail(ftools::open_failure_text(p, e));
      }
      if (check_signature) {
        if (auto sig = existing_signature(p, **d); !sig.empty())
          return fail(p + " contains " + sig + "; use -f to overwrite it");
      }
      targets.push_back({d->get(), p});
      devs.push_back(std::move(*d));
    }
    return std::nullopt;
  };
  o.start_sector = start_sector_of(device);
  std::optional<f2fscore::MkfsReport> rep;
  f2fscore::PopulateReport copied;
  for (;;) {
    if (auto rc = open_all()) return *rc;
    auto plan = f2fscore::plan_mkfs(targets, o);
    if (!plan) {
      const auto& e = plan.error();
      return e.code == f2fscore::Errc::invalid_argument ? usage(e.message) : fail(e.message);
    }
    // A feature set the writer cannot fill is refused before the format.
    if (!populate_dir.empty()) {
      if (auto st = f2fscore::Writer::check_features(plan->sb, o.features & f2fscore::disk::feature::ro); !st)
        return fail("--populate " + populate_dir + ": " + st.error().message + "; nothing written");
    }
    auto formatted = f2fscore::format_volume(targets, o);
    if (!formatted) return fail("format failed: " + formatted.error().to_string());
    rep = std::move(*formatted);
    if (populate_dir.empty()) break;
    f2fscore::MountOptions mo;
    mo.fixed_time = o.timestamp.value_or(0);
    mo.checkpoint_interval_s = 0;
    mo.cache_bytes = 4u << 20;  // as f2fscore-sload: the copy streams through a small cache
    mo.node_cache_pages = 1024;  // and so do its nodes (a directory inode and the files being made)
    mo.build_ro_image = o.features & f2fscore::disk::feature::ro;  // a read-only image is filled here, at build time
    mo.compression = compress_opts;
    // Several devices (-c): the writer fills them as one volume.
    std::unique_ptr<f2fscore::BlockDevice> whole;
    if (devs.size() > 1) {
      std::vector<f2fscore::DeviceRange> ranges;
      for (std::size_t i = 0; i < devs.size(); ++i) {
        const auto& d = rep->plan.devices[i];
        ranges.push_back({targets[i].path, d.start_blkaddr, d.end_blkaddr - d.start_blkaddr + 1});
      }
      auto md = f2fscore::MultiDevice::make(std::move(devs), std::move(ranges));
      if (!md) return fail("--populate: " + md.error().message);
      devs.clear();
      whole = std::move(*md);
    }
    auto w = f2fscore::Writer::mount(whole ? *whole : *devs[0], mo);
    if (!w) return fail("--populate: cannot mount the new volume read-write: " + w.error().message);
    po.release_compressed = compression.release();
    if (compression.enabled()) po.compress = [&](const std::string& p, std::uint64_t n) { return compression.wants(p, n); };
    f2fscore::tools::Progress prog(progress_fd, device, 1);
    po.progress = prog.for_pass(1, json);
    auto pr = f2fscore::populate(**w, populate_dir, po);
    prog.finish();
    f2fscore::Status owner_ok{};
    if (pr && !root_owner.empty()) {
      f2fscore::SetAttr a;
      a.uid = o.root_uid;
      a.gid = o.root_gid;
      owner_ok = (*w)->setattr(f2fscore::disk::kRootIno, a);
    }
    const std::uint64_t free_blocks = (*w)->statfs().bfree;
    auto um = (*w)->unmount();
    w->reset();
    // --size-to-fit: a copy or a checkpoint out of space means too small a
    // size: the image is grown and built again from the format.
    const bool out_of_space = (!pr && pr.error().code == f2fscore::Errc::no_space) ||
                              (pr && !um && um.error().code == f2fscore::Errc::no_space);
    if (size_to_fit && (out_of_space || (pr && um))) {
      if (auto rc = fit.next(out_of_space, free_blocks, fail)) {
        if (*rc < 0) {
          devs.clear();
          check_signature = false;
          continue;
        }
        return *rc;
      }
    }
    if (!pr) {
      if (pr.error().code != f2fscore::Errc::no_space)
        return fail("--populate " + populate_dir + ": " + pr.error().message +
                    (um ? "" : "; unmount failed too: " + um.error().to_string()));
      // The volume is consistent but holds part of the tree: said so, exit 1.
      return fail("--populate " + populate_dir + ": no space left in the volume: " + pr.error().message +
                  (um ? (staging ? "; " + device + " unchanged (-S replaces it only after a complete copy)"
                                 : "; the image is INCOMPLETE: a consistent file system holding only what was "
                                   "copied before that entry")
                      : "; unmount failed too: " + um.error().to_string() +
                            "; the image is INCOMPLETE: as its last checkpoint left it"));
    }
    if (!owner_ok) return fail("-R: " + owner_ok.error().to_string());
    if (!um)
      return fail("--populate: unmount (checkpoint) failed: " + um.error().to_string() +
                  "; the image is INCOMPLETE: as its last checkpoint left it");
    copied = std::move(*pr);
    for (const auto& p : copied.problems) std::fprintf(stderr, "f2fscore-mkfs: --populate: %s\n", p.to_string().c_str());
    break;
  }

  if (staging) {
    devs.clear();
    if (auto st = staging->commit(); !st) return fail("-S: " + st.error().message + "; " + device + " unchanged");
  }
  const auto& sb = rep->plan.sb;
  const auto& cp = rep->plan.cp;
  const std::string uuid = f2fscore::format_uuid(sb.uuid);
  if (json) {
    ftools::Json j;
    j["device"] = device;
    j["uuid"] = uuid;
    j["label"] = label;
    j["features"] = ftools::name_array(f2fscore::disk::feature_names(sb.feature.get()));
    j["sector_size"] = rep->plan.sector_size;
    j["block_count"] = sb.block_count.get();
    j["segment_count"] = sb.segment_count.get();
    j["segment_count_main"] = sb.segment_count_main.get();
    j["section_count"] = sb.section_count.get();
    j["segs_per_sec"] = sb.segs_per_sec.get();
    j["secs_per_zone"] = sb.secs_per_zone.get();
    j["cp_blkaddr"] = sb.cp_blkaddr.get();
    j["sit_blkaddr"] = sb.sit_blkaddr.get();
    j["nat_blkaddr"] = sb.nat_blkaddr.get();
    j["ssa_blkaddr"] = sb.ssa_blkaddr.get();
    j["main_blkaddr"] = sb.main_blkaddr.get();
    j["segment_count_sit"] = sb.segment_count_sit.get();
    j["segment_count_nat"] = sb.segment_count_nat.get();
    j["segment_count_ssa"] = sb.segment_count_ssa.get();
    j["cp_payload"] = sb.cp_payload.get();
    j["overprovision_percent"] = rep->plan.overprovision;
    j["reserved_segments"] = rep->plan.reserved_segments;
    j["overprov_segments"] = cp.overprov_segment_count.get();
    j["user_block_count"] = cp.user_block_count.get();
    j["ckpt_flags"] = cp.ckpt_flags.get();
    j["device_bytes_written"] = rep->bytes_written;
    j["device_bytes_zeroed"] = rep->bytes_zeroed;
    j["discarded"] = rep->discarded;
    ftools::Json populated = ftools::Json::object();
    ftools::add_populate_report(populated, copied);
    j["populated"] = std::move(populated);
    if (size_to_fit) fit.report_json(j, cp.user_block_count.get() - cp.valid_block_count.get());
    j["exit_code"] = kExitOk;
    if (!ftools::print_json(j)) return kExitFailure;
  } else if (!quiet) {
    std::printf("f2fscore-mkfs %s\n", F2FSCORE_VERSION_STRING);
    std::printf("Device:            %s (%llu sectors of %u bytes)\n", device.c_str(),
                static_cast<unsigned long long>(rep->plan.devices[0].sectors), rep->plan.sector_size);
    std::printf("UUID:              %s\n", uuid.c_str());
    if (!label.empty()) std::printf("Label:             %s\n", label.c_str());
    std::printf("Features:          %s\n", f2fscore::disk::feature_names(sb.feature.get()).c_str());
    std::printf("Segments:          %u of 2 MiB (%u per section, %u sections per zone)\n", sb.segment_count.get(),
                sb.segs_per_sec.get(), sb.secs_per_zone.get());
    std::printf("Layout (4 KiB blocks): CP %u, SIT %u (%u segs), NAT %u (%u segs), SSA %u (%u segs), main %u (%u segs)\n",
                sb.cp_blkaddr.get(), sb.sit_blkaddr.get(), sb.segment_count_sit.get(), sb.nat_blkaddr.get(),
                sb.segment_count_nat.get(), sb.ssa_blkaddr.get(), sb.segment_count_ssa.get(), sb.main_blkaddr.get(),
                sb.segment_count_main.get());
    std::printf("Overprovision:     %.3f%% (%u segments, %u reserved for GC)\n", rep->plan.overprovision,
                cp.overprov_segment_count.get(), rep->plan.reserved_segments);
    std::printf("User blocks:       %llu (%llu MiB)\n", static_cast<unsigned long long>(cp.user_block_count.get()),
                static_cast<unsigned long long>(cp.user_block_count.get() / 256));
    std::printf("Written:           %llu bytes, zeroed %llu bytes%s\n",
                static_cast<unsigned long long>(rep->bytes_written), static_cast<unsigned long long>(rep->bytes_zeroed),
                rep->discarded ? ", device discarded" : "");
    if (!populate_dir.empty())
      std::printf("Populated from %s: %llu directories, %llu files, %llu hard links, %llu symlinks, %llu special "
                  "files, %llu xattrs, %llu bytes of data%s\n",
                  populate_dir.c_str(), static_cast<unsigned long long>(copied.directories),
                  static_cast<unsigned long long>(copied.files), static_cast<unsigned long long>(copied.hard_links),
                  static_cast<unsigned long long>(copied.symlinks), static_cast<unsigned long long>(copied.specials),
                  static_cast<unsigned long long>(copied.xattrs), static_cast<unsigned long long>(copied.bytes_written),
                  copied.problems.empty() ? "" : " (some entries not copied, see above)");
    if (size_to_fit) fit.report_text(cp.user_block_count.get() - cp.valid_block_count.get());
    std::printf("Format successful.\n");
  }
  return copied.problems.empty() ? kExitOk : kExitFailure;
}
