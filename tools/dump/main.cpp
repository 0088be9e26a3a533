// f2fscore-dump: show what an F2FS image holds, and extract files from it.
// A thin front end: parse the command, open the image read-only, call one
// f2fscore::inspect function, print what it rendered, map the result to an
// exit status. Never prompts, never writes to the image.
#ifndef _FILE_OFFSET_BITS
#define _FILE_OFFSET_BITS 64
#endif
#include <CLI/CLI.hpp>
#include <cstdio>
#include <fstream>
#include <string>

#include "f2fscore/device.hpp"
#include "f2fscore/disk/superblock.hpp"
#include "f2fscore/extract.hpp"
#include "f2fscore/fscrypt.hpp"
#include "f2fscore/inspect.hpp"
#include "f2fscore/resize.hpp"
#include "f2fscore/tools/common.hpp"
#include "f2fscore/tools/progress.hpp"
#include "f2fscore/volume.hpp"

namespace {

namespace insp = f2fscore::inspect;

constexpr int kExitOk = 0, kExitFailure = 1, kExitUsage = 2;

const char* kFooter =
    "Ranges are inclusive: A~B (both ends), A~ or A~-1 (to the last), A (one); numbers in decimal or 0x-hex.\n"
    "INODE is a number (12, 0xc) or a path (/dir/file; write /12 for a file named 12).\n"
    "The image is opened read-only and never written. --json works with every command.\n"
    "Exit status: 0 success; 1 failure (cannot open the image, not F2FS: a file system of another kind\n"
    "is named; bad image: the error names the structure and its address; missing path, unreadable\n"
    "entries, extraction errors); 2 usage error (bad option, range or address; a nid, segment or block\n"
    "past the end of its area).";

int write_out(const std::string& s) {
  if (!s.empty() && std::fwrite(s.data(), 1, s.size(), stdout) != s.size()) return kExitFailure;
  return std::fflush(stdout) == 0 ? kExitOk : kExitFailure;
}

// With --json, a failure or usage error prints the object {"device",
// "error", "exit_code"} on stdout, unless a view was printed already (one
// JSON document per run); the message goes to stderr in every case.
struct ErrorJson {
  bool json = false;
  bool printed = false;
  std::string image;
} g_err;

int report(const std::string& m, int code) {
  std::fprintf(stderr, "f2fscore-dump: %s\n", m.c_str());
  if (g_err.json && !g_err.printed) {
    g_err.printed = true;
    namespace ftools = f2fscore::tools;
    ftools::print_json({{"device", g_err.image}, {"error", m}, {"exit_code", code}});
  }
  return code;
}

int fail(const std::string& m) { return report(m, kExitFailure); }

int usage(const std::string& m) { return report(m, kExitUsage); }

// A library error: bad arguments are usage errors, the rest failures.
int error_exit(const f2fscore::Error& e) {
  return e.code == f2fscore::Errc::invalid_argument ? usage(e.message) : fail(e.to_string());
}

// Prints a view; problems go to stderr and make the exit status 1.
int emit(const f2fscore::Result<insp::Output>& r) {
  if (!r) return error_exit(r.error());
  const int rc = write_out(r->text);
  g_err.printed = g_err.printed || !r->text.empty();
  for (const auto& p : r->problems) std::fprintf(stderr, "f2fscore-dump: %s\n", p.c_str());
  if (rc != kExitOk) return rc;
  return r->problems.empty() ? kExitOk : kExitFailure;
}

}  // namespace

int main(int argc, char** argv) {
  CLI::App app{"Show what an F2FS image holds, and extract files from it (f2fscore " F2FSCORE_VERSION_STRING ")",
               "f2fscore-dump"};
  app.footer(kFooter);
  app.fallthrough();
  app.require_subcommand(0, 1);
  std::string image;
  bool json = false, version = false;
  app.add_option("image", image, "Image file or block device (opened read-only)");
  std::vector<std::string> other_devices;
  f2fscore::tools::add_device_option(app, other_devices);
  app.add_flag("--json", json, "Print one JSON document instead of text");
  app.add_flag("-V,--version", version, "Print the version and exit");

  std::string range_s, ino_s, blk_s, path_s, dest_s;
  bool ls_long = false, ls_rec = false, no_owners = false, no_xattrs = false, no_specials = false;
  auto* c_info = app.add_subcommand("info", "How the image opened: superblock copy, checkpoint pack, clean unmount, "
                                            "pending roll-forward, orphans, warnings");
  int sb_copy = -1;
  auto* c_sb = app.add_subcommand("sb", "Every superblock field, with feature names (the copy in use; if the volume "
                                        "does not open, the first valid copy as stored, with exit status 1)");
  c_sb->add_option("--copy", sb_copy, "Show this copy (0 or 1) as stored, checked but shown even if invalid")
      ->check(CLI::Range(0, 1));
  auto* c_cp = app.add_subcommand("cp", "Every checkpoint field, flags by name, version bitmaps, orphans");
  auto* c_nat = app.add_subcommand("nat", "NAT entries of a nid range (used entries only)");
  c_nat->add_option("range", range_s, "nids A~B")->required();
  auto* c_sit = app.add_subcommand("sit", "SIT entries of a segment range, with valid maps");
  c_sit->add_option("range", range_s, "segments A~B")->required();
  auto* c_ssa = app.add_subcommand("ssa", "Summary (SSA) entries of a segment range");
  c_ssa->add_option("range", range_s, "segments A~B")->required();
  auto* c_inode = app.add_subcommand("inode", "Every field of an inode, its xattrs, node blocks and block map");
  c_inode->add_option("inode", ino_s, "Inode number or path")->required();
  auto* c_block = app.add_subcommand("block", "Who owns a block: area, segment, SIT, SSA, owner, file offset, path");
  c_block->add_option("blkaddr", blk_s, "Block address (4 KiB units)")->required();
  auto* c_ls = app.add_subcommand("ls", "List a directory (sorted by name)");
  c_ls->add_flag("-l", ls_long, "Long format: mode, links, uid, gid, size, mtime (UTC), link target");
  c_ls->add_flag("-R", ls_rec, "Recursive");
  c_ls->add_option("path", path_s, "Directory or file (default /)");
  auto* c_cat = app.add_subcommand("cat", "Write a regular file's contents to stdout");
  c_cat->add_option("path", path_s, "Path or inode number")->required();
  auto* c_map = app.add_subcommand("map", "File-to-block map like fsck.f2fs -M: one line per file, "
                                          "ranges a-b, holes 0 or 0*N");
  c_map->add_option("path", path_s, "Directory or file (default /)");
  auto* c_space = app.add_subcommand("space", "Space summary: valid blocks, free/dirty/full segments per log, "
                                              "utilization histogram");
  auto* c_ipu = app.add_subcommand("ipu", "Inputs of the IPU decisions (utilization, free/dirty sections, need_SSR, "
                                          "valid blocks per segment by log) and what each rule would decide now");
  std::string ipu_policy_s;
  std::uint32_t min_ipu_util = 70, min_fsync_blocks = 8, min_ssr_sections = f2fscore::IpuOptions::kKernelDefault;
  bool fdatasync_ipu = false, ipu_segments = false;
  c_ipu->add_option("--ipu-policy", ipu_policy_s, "ipu_policy: a number or bit names joined by | (default: the "
                                                  "kernel's for the volume)");
  c_ipu->add_option("--min-ipu-util", min_ipu_util, "min_ipu_util, percent (default 70)");
  c_ipu->add_option("--min-fsync-blocks", min_fsync_blocks, "min_fsync_blocks (default 8)");
  c_ipu->add_option("--min-ssr-sections", min_ssr_sections, "min_ssr_sections (default: the reserved sections)");
  c_ipu->add_flag("--fdatasync-in-place", fdatasync_ipu, "The fdatasync-in-place option (the 2022 proposal)");
  c_ipu->add_flag("--segments", ipu_segments, "List every segment holding valid blocks");
  auto* c_extract = app.add_subcommand("extract", "Extract a file or a tree to a host directory");
  c_extract->add_option("path", path_s, "Path in the image (/ for everything)")->required();
  c_extract->add_option("dest", dest_s, "Host destination: an existing directory receives the item under its name; "
                                        "otherwise it is created")->required();
  c_extract->add_flag("--no-owners", no_owners, "Do not chown (owners are only set when running as root)");
  c_extract->add_flag("--no-xattrs", no_xattrs, "Do not set extended attributes");
  c_extract->add_flag("--no-specials", no_specials, "Skip fifos, sockets and device nodes");
  std::string host_copy_s = "copy";
  c_extract
      ->add_option("--host-copy", host_copy_s,
                   "How file data is taken from an image file: copy (as cp: extents shared where the host file "
                   "system can, copy_file_range elsewhere; the default), reflink (shared where the host can, read "
                   "elsewhere), off (read every block)")
      ->check(CLI::IsMember({"reflink", "copy", "off"}));
  std::vector<std::string> key_files;
  c_extract->add_option("--key", key_files,
                        "An fscrypt v2 master key file (64 raw bytes), repeatable: encrypted files, directories and "
                        "symlinks whose key is given are extracted in the clear (the others are listed as encrypted)")
      ->allow_extra_args(false);
  int progress_fd = -1;
  c_extract->add_option("--progress", progress_fd,
                        "Progress as e2fsck -C: lines \"1 CURRENT MAX DEVICE\" (inodes extracted of the valid "
                        "inode count) to descriptor FD; 0: a bar on the terminal");
  for (auto* c : {c_info, c_sb, c_cp, c_nat, c_sit, c_ssa, c_inode, c_block, c_ls, c_cat, c_map, c_space, c_ipu, c_extract})
    c->footer(kFooter);

  if (auto done = f2fscore::tools::parse_or(app, argc, argv, [&](const CLI::ParseError& e, const std::string& m) {
        g_err.json = f2fscore::tools::json_requested(argc, argv);
        g_err.image = image;
        // After the image, a word that is no command: name it as a command.
        const auto extras = app.remaining(true);
        if (dynamic_cast<const CLI::ExtrasError*>(&e) != nullptr && !image.empty() && app.get_subcommands().empty() &&
            !extras.empty() && !extras.front().empty() && extras.front()[0] != '-') {
          std::string names;
          for (const auto* c : app.get_subcommands({})) names += (names.empty() ? "" : ", ") + c->get_name();
          return usage("unknown command \"" + extras.front() + "\" (commands: " + names + ")");
        }
        return usage(m + " (try --help)");
      }))
    return *done;
  g_err.json = json;
  g_err.image = image;
  if (version) return f2fscore::tools::print_version("f2fscore-dump", json);
  if (image.empty()) return usage("no image given (try --help)");
  if (app.get_subcommands().empty()) return usage("no command given (try --help)");
  const auto fmt = json ? insp::Format::json : insp::Format::text;

  // Arguments first, so that a usage error never depends on the image.
  f2fscore::IpuOptions ipu_opts;
  if (c_ipu->parsed()) {
    if (!ipu_policy_s.empty()) {
      auto p = f2fscore::parse_ipu_policy(ipu_policy_s);
      if (!p) return usage(p.error().message);
      ipu_opts.ipu_policy = *p;
    }
    ipu_opts.min_ipu_util = min_ipu_util;
    ipu_opts.min_fsync_blocks = min_fsync_blocks;
    ipu_opts.min_ssr_sections = min_ssr_sections;
    ipu_opts.fdatasync_in_place = fdatasync_ipu;
  }
  insp::Range range;
  if (c_nat->parsed() || c_sit->parsed() || c_ssa->parsed()) {
    auto r = insp::parse_range(range_s);
    if (!r) return usage(r.error().message);
    range = *r;
  }
  std::uint64_t blkaddr = 0;
  if (c_block->parsed()) {
    auto b = insp::parse_number(blk_s);
    if (!b) return usage("block address: " + b.error().message);
    if (*b > 0xFFFFFFFFull) return usage("block address " + blk_s + " does not fit 32 bits");
    blkaddr = *b;
  }

  f2fscore::OpenOptions oo;
  oo.read_only = true;
  // The POSIX backend for every command, extraction too: its reads of
  // file data are overlapped by the kernel's readahead (and asked for
  // ahead, design.md "Inspection"), and io_uring's cost per synchronous
  // metadata read made extracting 10,000 small files about 10% slower.
  auto dev = f2fscore::open_posix_device(image, oo);
  if (!dev) return fail("cannot open " + image + ": " + dev.error().to_string());
  // A multi-device volume: its other devices, read-only too.
  if (auto whole = f2fscore::tools::open_whole_volume(
          std::move(*dev), other_devices,
          [&](const std::string& p) { return f2fscore::open_posix_device(p, oo); });
      whole)
    *dev = std::move(*whole);
  else
    return whole.error().code == f2fscore::Errc::invalid_argument ? usage(whole.error().message) : fail(whole.error().message);
  if (c_sb->parsed() && sb_copy >= 0) {
    // One copy as stored, with its validation result.
    auto sb = insp::raw_superblock(**dev, sb_copy);
    if (!sb) return fail(image + ": " + sb.error().to_string());
    const int rc = emit(insp::render_superblock(*sb, fmt));
    auto st = f2fscore::disk::validate_superblock(*sb, (*dev)->info().size_bytes / 4096, sb_copy);
    if (!st) return fail(image + ": " + st.error().to_string());
    return rc;
  }
  auto vol = f2fscore::Volume::open(**dev);
  if (!vol) {
    // No F2FS there but a file system of another kind: say which (libblkid
    // where the library has it, as mkfs names what it would overwrite).
    if (vol.error().code == f2fscore::Errc::corrupt) {
      if (auto f = f2fscore::tools::foreign_file_system(image); !f.empty()) return fail(f);
      // A resize that moves the metadata, cut in its copy: name the state.
      if (auto staged = f2fscore::interrupted_resize(**dev); staged && !staged->empty())
        return fail(image + ": " + *staged);
    }
    const std::string why = image + ": " + vol.error().to_string();
    if (c_sb->parsed()) {  // still show what is there: the first valid copy, else copy 0
      auto sb = insp::raw_superblock(**dev, 0);
      auto sb1 = insp::raw_superblock(**dev, 1);
      if (sb && !f2fscore::disk::validate_superblock(*sb, (*dev)->info().size_bytes / 4096, 0) && sb1 &&
          f2fscore::disk::validate_superblock(*sb1, (*dev)->info().size_bytes / 4096, 1))
        sb = sb1;
      if (sb) (void)emit(insp::render_superblock(*sb, fmt));
    }
    return fail(why);
  }
  f2fscore::Volume& v = **vol;

  if (c_info->parsed()) return emit(insp::render_info(v, fmt));
  if (c_sb->parsed()) return emit(insp::render_superblock(v.superblock(), fmt));
  if (c_cp->parsed()) return emit(insp::render_checkpoint(v, fmt));
  if (c_nat->parsed()) return emit(insp::render_nat(v, range, fmt));
  if (c_sit->parsed()) return emit(insp::render_sit(v, range, fmt));
  if (c_ssa->parsed()) return emit(insp::render_ssa(v, range, fmt));
  if (c_space->parsed()) return emit(insp::render_space(v, fmt));
  if (c_ipu->parsed()) return emit(insp::render_ipu(v, ipu_opts, ipu_segments, fmt));
  if (c_block->parsed()) return emit(insp::render_block(v, static_cast<f2fscore::block_t>(blkaddr), fmt));
  if (c_inode->parsed()) {
    auto in = insp::find_inode(v, ino_s);
    if (!in) return error_exit(in.error());
    return emit(insp::render_inode(v, *in, fmt));
  }
  if (c_ls->parsed()) {
    insp::LsOptions o;
    o.long_format = ls_long;
    o.recursive = ls_rec;
    return emit(insp::render_ls(v, path_s, o, fmt));
  }
  if (c_map->parsed()) return emit(insp::render_map(v, path_s, fmt));
  if (c_cat->parsed()) {
    auto st = insp::cat(v, path_s, fmt, [](std::span<const std::uint8_t> d) -> f2fscore::Status {
      g_err.printed = g_err.printed || !d.empty();
      if (std::fwrite(d.data(), 1, d.size(), stdout) != d.size())
        return f2fscore::make_error(f2fscore::Errc::io, "write to stdout failed");
      return {};
    });
    if (std::fflush(stdout) != 0) return fail("write to stdout failed");
    if (!st) return error_exit(st.error());
    return kExitOk;
  }
  if (c_extract->parsed()) {
    insp::ExtractOptions o;
    o.owners = !no_owners;
    o.xattrs = !no_xattrs;
    o.specials = !no_specials;
    o.host_copy = host_copy_s == "off"    ? insp::HostCopy::off
                  : host_copy_s == "copy" ? insp::HostCopy::copy
                                          : insp::HostCopy::reflink;
    f2fscore::fscrypt::Keyring keys;
    for (const auto& kf : key_files) {
      auto bytes = f2fscore::tools::read_master_key_file(kf);
      if (!bytes) return error_exit(bytes.error());
      auto k = f2fscore::fscrypt::parse_master_key(*bytes);
      if (!k) {
        auto e = k.error();
        e.message = kf + ": " + e.message;
        return error_exit(e);
      }
      auto added = keys.add(*k);
      if (!added) return error_exit(added.error());
    }
    if (!key_files.empty()) o.keys = &keys;
    f2fscore::tools::Progress prog(progress_fd, image, 1);
    o.progress = prog.for_pass(1, json);
    auto r = insp::extract(v, path_s, dest_s, o);
    prog.finish();
    if (!r) return error_exit(r.error());
    return emit(insp::render_extract_report(*r, fmt));
  }
  return usage("unknown command");
}
