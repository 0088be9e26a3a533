// Quota usage: the quota files (quota format v2, tree of 1 KiB blocks,
// v2r1 entries: fs/quota/quota_tree.c and quotaio_v2.h in Linux; what
// mkfs.f2fs and the kernel write into the f2fs quota inodes) against the
// usage counted by the walk: one inode per reached inode (quota files
// excluded) and (i_blocks - 1) 4 KiB blocks of space, as the kernel charges
// them (do_read_inode() sets the VFS i_blocks from i_blocks - 1).
#include <cstdio>
#include <cstring>
#include <map>
#include <set>

#include "f2fscore/disk/superblock.hpp"
#include "fsck_internal.hpp"

namespace f2fscore::fsck {

using namespace disk;

namespace {
std::string fmt(const char* f, unsigned long long a = 0, unsigned long long b = 0, unsigned long long c = 0,
                unsigned long long d = 0) {
  char buf[320];
  std::snprintf(buf, sizeof buf, f, a, b, c, d);
  return buf;
}
constexpr std::uint32_t kQtBlk = 1024;        // QT_BLKSIZE
constexpr std::uint32_t kQtTreeOff = 1;       // QT_TREEOFF: the root block
constexpr std::uint32_t kQtDepth = 4;         // QT_TREEDEPTH
constexpr std::uint32_t kDqdbHeader = 16;     // struct qt_disk_dqdbheader
constexpr std::uint32_t kV2r1Entry = 72;      // struct v2r1_disk_dqblk
struct Usage {
  std::uint64_t inodes = 0, space = 0;
  std::uint64_t file_off = 0;  ///< byte offset of the entry in the quota file (0: none)
};
}  // namespace

void Checker::check_quota_usage() {
  if (!(features_ & feature::quota_ino)) return;
  static const char* kNames[3] = {"user", "group", "project"};
  for (int t = 0; t < 3; ++t) {
    const nid_t q = sb_.qf_ino[t].get();
    if (q == 0 || q >= max_nid_ || nodes_[q].inode < 0 || !nid_reached_[q]) continue;
    if (t == 2 && !(features_ & feature::project_quota)) continue;
    // The counted usage.
    std::map<std::uint32_t, Usage> want;
    for (nid_t ino : reached_inodes_) {
      bool is_q = false;
      for (int k = 0; k < 3; ++k) is_q |= sb_.qf_ino[k].get() == ino;
      if (is_q) continue;
      const InodeRec& in = inodes_[static_cast<std::size_t>(nodes_[ino].inode)];
      const auto it = state_.find(ino);
      const std::uint64_t blocks = it != state_.end() ? it->second.blocks_counted : in.blocks;
      const std::uint32_t id = t == 0 ? in.uid : t == 1 ? in.gid : in.projid;
      auto& u = want[id];
      ++u.inodes;
      u.space += (blocks ? blocks - 1 : 0) * kBlockSize;
    }
    // The file.
    auto info = vol_->read_inode(q);
    auto bad_file = [&](const std::string& why) {
      Problem p = prob(Code::QUOTA_INODE_BAD);
      p.ino = q;
      p.path = std::string("<quota:") + kNames[t] + ">";
      p.detail = why;
      add(p);
    };
    if (!info) {
      bad_file(info.error().message);
      continue;
    }
    if (info->size < 2 * kQtBlk || info->size > (64u << 20)) {
      bad_file(fmt("quota file of %llu bytes", info->size));
      continue;
    }
    std::vector<std::uint8_t> file(static_cast<std::size_t>(info->size));
    auto n = vol_->read(*info, 0, file);
    if (!n || *n != file.size()) {
      bad_file("quota file cannot be read");
      continue;
    }
    if (load_le32(file.data(), 0) != kQuotaMagics[t]) {
      bad_file(fmt("quota file magic 0x%llx, expected 0x%llx", load_le32(file.data(), 0), kQuotaMagics[t]));
      continue;
    }
    const std::uint32_t nblocks = static_cast<std::uint32_t>(file.size() / kQtBlk);
    std::set<std::uint32_t> leaves, seen;
    bool tree_bad = false;
    // Depth-first over the tree blocks (bounded: each block visited once).
    std::vector<std::pair<std::uint32_t, std::uint32_t>> stack{{kQtTreeOff, 0}};
    while (!stack.empty() && !tree_bad) {
      auto [blk, depth] = stack.back();
      stack.pop_back();
      if (blk >= nblocks || !seen.insert(blk).second) {
        tree_bad = true;
        break;
      }
      for (std::uint32_t i = 0; i < kQtBlk / 4; ++i) {
        const std::uint32_t ref = load_le32(file.data(), static_cast<std::size_t>(blk) * kQtBlk + 4 * i);
        if (ref == 0) continue;
        if (depth + 1 == kQtDepth) leaves.insert(ref);
        else stack.emplace_back(ref, depth + 1);
      }
    }
    std::map<std::uint32_t, Usage> have;
    for (std::uint32_t leaf : leaves) {
      if (leaf >= nblocks) {
        tree_bad = true;
        continue;
      }
      const std::uint8_t* b = file.data() + static_cast<std::size_t>(leaf) * kQtBlk;
      for (std::uint32_t o = kDqdbHeader; o + kV2r1Entry <= kQtBlk; o += kV2r1Entry) {
        bool used = false;
        for (std::uint32_t k = 0; k < kV2r1Entry; ++k) used |= b[o + k] != 0;
        if (!used) continue;
        auto& u = have[load_le32(b, o)];
        u.file_off = static_cast<std::uint64_t>(leaf) * kQtBlk + o;
        u.inodes = load_le64(b, o + 24);  // dqb_curinodes
        u.space = load_le64(b, o + 48);   // dqb_curspace
      }
    }
    if (tree_bad) {
      bad_file("quota tree references blocks outside the file or loops");
      continue;
    }
    std::uint32_t reports = 0;
    std::set<std::uint32_t> ids;
    for (auto& [id, u] : want) ids.insert(id);
    for (auto& [id, u] : have) ids.insert(id);
    for (std::uint32_t id : ids) {
      const Usage w = want.count(id) ? want[id] : Usage{};
      const Usage h = have.count(id) ? have[id] : Usage{};
      if (w.inodes == h.inodes && w.space == h.space) continue;
      if (reports++ >= 16) continue;
      Problem p = prob(Code::QUOTA_USAGE);
      p.ino = q;
      p.path = std::string("<quota:") + kNames[t] + ">";
      p.detail = std::string(kNames[t]) + fmt(" %llu: quota file says %llu inodes, %llu bytes; counted %llu inodes, ", id,
                                                h.inodes, h.space, w.inodes) +
                 fmt("%llu bytes", w.space);
      // The repair rewrites dqb_curinodes and dqb_curspace of an existing
      // entry in place; an id without an entry would need the tree to grow.
      if (h.file_off == 0) p.detail += " (no entry for this id: not repaired in place)";
      const std::size_t idx = add(p);
      if (h.file_off != 0) {
        auto a = vol_->map_block(*info, h.file_off / kBlockSize);
        if (a && valid_main(*a)) {
          const std::uint32_t o = static_cast<std::uint32_t>(h.file_off % kBlockSize);
          fix(idx, *a, [o, w](std::uint8_t* blk) {
            store_le64(blk, o + 24, w.inodes);
            store_le64(blk, o + 48, w.space);
          });
        }
      }
    }
  }
}

}  // namespace f2fscore::fsck
