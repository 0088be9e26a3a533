// Open a volume and touch everything the read path offers, bounded: every
// directory (a visited set and a depth limit guard against loops), every
// file at its first bytes and at each node-tree boundary, links, xattrs,
// lookups and path resolution, NAT/SIT/SSA queries and inodes found by nid.
// Every error the library returns is collected with the call that returned
// it, and error_problem() says whether an error names the structure and the
// place. Used by tests/robustness_test.cpp and the libFuzzer target
// (tests/fuzz), so it is header-only and does not need GoogleTest.
#pragma once

#include <algorithm>
#include <cctype>
#include <cstdint>
#include <memory>
#include <set>
#include <string>
#include <vector>

#include "f2fscore/device.hpp"
#include "f2fscore/inspect.hpp"
#include "f2fscore/volume.hpp"

namespace f2fstest {

/// Forwards to another device, counting requests (and, apart, the writes:
/// every op but read and flush, which a check-only run must never issue);
/// past `budget` requests every request fails with Errc::io, so a runaway
/// loop in the library ends (and the caller sees budget_exceeded) instead of
/// hanging.
class BudgetDevice final : public f2fscore::BlockDevice {
 public:
  BudgetDevice(f2fscore::BlockDevice& inner, std::uint64_t budget) : inner_(inner), budget_(budget) {}
  const f2fscore::DeviceInfo& info() const noexcept override { return inner_.info(); }
  void submit(f2fscore::IoRequest& req) noexcept override {
    if (req.op != f2fscore::IoOp::read && req.op != f2fscore::IoOp::flush) ++writes_;
    if (++requests_ > budget_) {
      exceeded_ = true;
      req.status = f2fscore::Errc::io;
      req.transferred = 0;
      failed_.push_back(&req);
      return;
    }
    inner_.submit(req);
  }
  std::size_t poll(bool wait) noexcept override {
    std::size_t n = 0;
    while (!failed_.empty()) {
      f2fscore::IoRequest* r = failed_.front();
      failed_.erase(failed_.begin());
      ++n;
      if (r->on_complete) r->on_complete(*r);
    }
    return n + inner_.poll(wait && n == 0);
  }
  std::size_t in_flight() const noexcept override { return inner_.in_flight() + failed_.size(); }
  std::uint64_t requests() const { return requests_; }
  std::uint64_t writes() const { return writes_; }
  bool budget_exceeded() const { return exceeded_; }

 private:
  f2fscore::BlockDevice& inner_;
  std::uint64_t budget_;
  std::uint64_t requests_ = 0, writes_ = 0;
  bool exceeded_ = false;
  std::vector<f2fscore::IoRequest*> failed_;
};

struct WalkLimits {
  int max_depth = 24;                    ///< directory levels below the root
  std::size_t max_inodes = 512;          ///< inodes visited in all
  std::size_t max_entries_per_dir = 4096;
  std::uint64_t max_bytes_per_file = 64 * 1024;  ///< read from the start of each file
  std::uint32_t max_segments = 1024;     ///< SIT entries and summaries queried
  std::uint32_t nat_scan = 256;          ///< nids read as inodes directly
  std::size_t max_resolves = 256;        ///< paths resolved from the root
  std::size_t max_lookups_per_dir = 4096;  ///< entries of each directory looked up by name
  /// Also render the dump tool's views (f2fscore::inspect) of the volume and
  /// of up to this many inodes; 0: none.
  std::size_t tool_inodes = 0;
  int tool_format = -1;  ///< the views' format: -1 both, 0 text, 1 JSON
};

struct WalkError {
  std::string op;  ///< the call that failed ("open", "read_dir /a", ...)
  f2fscore::Error error;
};

struct WalkResult {
  bool opened = false;
  std::vector<WalkError> errors;
  std::vector<std::string> paths;  ///< "/a/b" of every entry visited, in walk order
  std::size_t inodes = 0, dirs = 0, files = 0;
  std::uint64_t bytes_read = 0;
  std::size_t tool_views = 0;  ///< inspect views rendered
};

/// Why an error from the library is not good enough, or "" when it is: the
/// message must be non-empty and name the structure; an error about the
/// disk's contents or a device failure must also give the place (Error::offset,
/// or a block number or byte offset in the message).
inline std::string error_problem(const f2fscore::Error& e) {
  using f2fscore::Errc;
  if (e.message.empty()) return "empty message";
  std::string lower;
  for (char c : e.message) lower += static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  static const char* const kStructures[] = {
      "superblock", "checkpoint", "nat", "nid", "sit", "segment", "ssa", "summary", "inode", "directory",
      "dentry", "xattr", "symlink", "node", "orphan", "journal", "device", "cluster", "file", "compress", "path"};
  bool named = false;
  for (const char* s : kStructures) named = named || lower.find(s) != std::string::npos;
  if (!named) return "names no structure";
  const bool about_place = e.code == Errc::corrupt || e.code == Errc::io || e.code == Errc::short_io;
  if (!about_place || e.offset != f2fscore::Error::kNoOffset) return "";
  for (const char* k : {"block ", "byte ", "blkaddr "}) {
    for (std::size_t p = lower.find(k); p != std::string::npos; p = lower.find(k, p + 1)) {
      const std::size_t d = p + std::string(k).size();
      if (d < lower.size() && std::isdigit(static_cast<unsigned char>(lower[d]))) return "";
    }
  }
  return "gives no address (block or byte offset)";
}

namespace detail {

struct Walker {
  f2fscore::Volume& v;
  const WalkLimits& lim;
  WalkResult& r;
  std::set<f2fscore::nid_t> seen_dirs;
  std::set<f2fscore::nid_t> seen_inodes;
  std::vector<f2fscore::InodeInfo> visited;  ///< for the tool's views
  std::size_t resolves = 0;

  template <typename T>
  bool ok(const f2fscore::Result<T>& res, const std::string& op) {
    if (res) return true;
    r.errors.push_back({op, res.error()});
    return false;
  }

  void read_file(const f2fscore::InodeInfo& in, const std::string& path) {
    using namespace f2fscore::disk;
    ++r.files;
    std::vector<std::uint8_t> buf(static_cast<std::size_t>(std::min<std::uint64_t>(in.size, lim.max_bytes_per_file)));
    auto n = v.read(in, 0, buf);
    if (!ok(n, "read " + path)) return;
    r.bytes_read += *n;
    // One block at each boundary of the node tree and the last block.
    const std::uint64_t api = in.addrs_per_inode, apb = in.addrs_per_block, npb = kNidsPerBlock;
    const std::uint64_t marks[] = {api,
                                   api + apb,
                                   api + 2 * apb,
                                   api + 2 * apb + apb * (npb - 1),
                                   api + 2 * apb + apb * npb,
                                   api + 2 * apb + 2 * apb * npb,
                                   api + 2 * apb + 2 * apb * npb + apb * npb,
                                   in.size == 0 ? 0 : (in.size - 1) / kBlockSize};
    std::vector<std::uint8_t> blk(kBlockSize);
    for (std::uint64_t m : marks) {
      if (m * kBlockSize >= in.size) continue;
      auto k = v.read(in, m * kBlockSize, blk);
      if (!ok(k, "read " + path + " at block " + std::to_string(m))) continue;
      r.bytes_read += *k;
      if (!in.has_inline_data()) (void)ok(v.map_block(in, m), "map_block " + path);
    }
    // Past the end: nothing, and no error.
    auto past = v.read(in, in.size + kBlockSize, blk);
    (void)ok(past, "read past the end of " + path);
  }

  // `resolvable`: every component of `path` is a name resolve() can take.
  void visit(f2fscore::nid_t ino, const std::string& path, int depth, bool resolvable = false) {
    if (r.inodes >= lim.max_inodes) return;
    auto in = v.read_inode(ino);
    if (!ok(in, "read_inode " + path)) return;
    ++r.inodes;
    const bool first = seen_inodes.insert(ino).second;
    if (first && visited.size() < lim.tool_inodes) visited.push_back(*in);
    if (first) (void)ok(v.xattrs(*in), "xattrs " + path);
    if (in->is_symlink()) {
      (void)ok(v.read_link(*in), "read_link " + path);
      if (first) read_file(*in, path);
    } else if (in->is_reg()) {
      if (first) read_file(*in, path);
    } else if (in->is_dir()) {
      if (depth > lim.max_depth || !seen_dirs.insert(ino).second) return;
      walk_dir(*in, path, depth, resolvable);
    }
  }

  void walk_dir(const f2fscore::InodeInfo& dir, const std::string& path, int depth, bool resolvable) {
    ++r.dirs;
    auto entries = v.read_dir(dir);
    if (!ok(entries, "read_dir " + path)) return;
    // A name that is not there: every level's bucket is searched (casefolded
    // directories then search every block).
    auto missing = v.lookup(dir, "no such name, surely");
    if (missing || missing.error().code != f2fscore::Errc::not_found) (void)ok(missing, "lookup a missing name in " + path);
    std::size_t count = 0, lookups = 0;
    for (const auto& e : *entries) {
      if (++count > lim.max_entries_per_dir || r.inodes >= lim.max_inodes) break;
      if (e.name == "." || e.name == "..") continue;
      const std::string child = (path == "/" ? "" : path) + "/" + e.name;
      r.paths.push_back(child);
      const bool plain_name = e.name.find('/') == std::string::npos && e.name.find('\0') == std::string::npos;
      if (plain_name && lookups++ < lim.max_lookups_per_dir) {
        (void)ok(v.lookup(dir, e.name), "lookup " + child);
        if (resolves < lim.max_resolves && resolvable) {
          ++resolves;
          (void)ok(v.resolve(child), "resolve " + child);
        }
      }
      visit(e.ino, child, depth + 1, resolvable && plain_name);
    }
  }

  void metadata() {
    auto orphans = v.orphans();
    if (ok(orphans, "orphans"))
      for (std::size_t i = 0; i < orphans->size() && i < 16; ++i)
        visit((*orphans)[i], "<orphan " + std::to_string((*orphans)[i]) + ">", lim.max_depth);
    const std::uint32_t segs = std::min(v.main_segments(), lim.max_segments);
    for (std::uint32_t s = 0; s < segs; ++s) {
      (void)ok(v.segment(s), "segment " + std::to_string(s));
      (void)ok(v.summary(s), "summary " + std::to_string(s));
    }
  }

  // The dump tool's views: what f2fscore-dump prints, on the same volume.
  void tool_views(const std::vector<f2fscore::InodeInfo>& inodes) {
    namespace in = f2fscore::inspect;
    using F = in::Format;
    auto view = [&](const f2fscore::Result<in::Output>& o, const std::string& what) {
      ++r.tool_views;
      (void)ok(o, "inspect " + what);
    };
    for (F f : {F::text, F::json}) {
      if (lim.tool_format >= 0 && f != (lim.tool_format ? F::json : F::text)) continue;
      view(in::render_info(v, f), "info");
      view(in::render_checkpoint(v, f), "cp");
      view(in::render_nat(v, {0, 600}, f), "nat");
      view(in::render_sit(v, {0, 64}, f), "sit");
      view(in::render_ssa(v, {0, 64}, f), "ssa");
      view(in::render_ls(v, "/", {true, true}, f), "ls -lR /");
      view(in::render_map(v, "/", f), "map /");
      view(in::render_space(v, f), "space");
    }
    for (std::size_t i = 0; i < inodes.size() && i < lim.tool_inodes; ++i) {
      const auto& ino = inodes[i];
      const std::string id = std::to_string(ino.ino);
      view(in::render_inode(v, ino, i % 2 ? F::json : F::text), "inode " + id);
      view(in::render_block(v, ino.node_blkaddr, i % 2 ? F::text : F::json), "block of inode " + id);
      (void)ok(in::path_of(v, ino.ino), "inspect path_of " + id);
      if (ino.is_reg() && ino.size <= lim.max_bytes_per_file) {
        auto st = in::cat(v, std::to_string(ino.ino), i % 2 ? F::json : F::text,
                          [](std::span<const std::uint8_t>) -> f2fscore::Status { return {}; });
        ++r.tool_views;
        if (!st) r.errors.push_back({"inspect cat " + id, st.error()});
      }
    }
  }

  void nat_scan() {
    const f2fscore::nid_t end = std::min<f2fscore::nid_t>(v.max_nid(), lim.nat_scan);
    for (f2fscore::nid_t nid = 0; nid < end && r.inodes < lim.max_inodes; ++nid) {
      auto ne = v.nat_entry(nid);
      if (!ok(ne, "nat_entry " + std::to_string(nid))) continue;
      if (ne->block_addr.get() == 0 || ne->ino.get() != nid || nid < 3) continue;
      if (seen_inodes.count(nid)) continue;
      visit(nid, "<nid " + std::to_string(nid) + ">", lim.max_depth);
    }
  }
};

}  // namespace detail

/// Opens the volume on `dev` and walks it within `lim`.
inline WalkResult walk_volume(f2fscore::BlockDevice& dev, const WalkLimits& lim = {}) {
  WalkResult r;
  auto vol = f2fscore::Volume::open(dev);
  if (!vol) {
    r.errors.push_back({"open", vol.error()});
    return r;
  }
  r.opened = true;
  detail::Walker w{**vol, lim, r, {}, {}, {}, 0};
  w.metadata();
  const f2fscore::nid_t root = (*vol)->superblock().root_ino.get();
  auto rootin = (*vol)->read_inode(root);
  if (w.ok(rootin, "read_inode /")) {
    w.seen_dirs.insert(root);
    w.seen_inodes.insert(root);
    ++r.inodes;
    (void)w.ok((*vol)->xattrs(*rootin), "xattrs /");
    if (rootin->is_dir()) w.walk_dir(*rootin, "/", 0, true);
  }
  w.nat_scan();
  if (lim.tool_inodes) w.tool_views(w.visited);
  return r;
}

}  // namespace f2fstest
