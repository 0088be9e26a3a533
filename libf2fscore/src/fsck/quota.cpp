// Quota usage: the quota files (quota format v2, tree of 1 KiB blocks,
// v2r1 entries: disk/quota.hpp; what mkfs.f2fs and the kernel write into
// the f2fs quota inodes) against the
// usage counted by the walk: one inode per reached inode (quota files
// excluded) and (i_blocks - 1) 4 KiB blocks of space, as the kernel charges
// them (do_read_inode() sets the VFS i_blocks from i_blocks - 1).
#include <algorithm>
#include <cstdio>
#include <cstring>
#include <map>
#include <set>

#include "f2fscore/disk/superblock.hpp"
#include "disk/quota.hpp"
#include "fsck/fsck_internal.hpp"
#include "util/text.hpp"

namespace f2fscore::fsck {

using namespace disk;

namespace {
using detail::fmt;
using namespace disk::quota;
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
    if (q == 0 || q >= max_nid_ || node(q).inode() < 0 || !reached(q)) continue;
    if (t == 2 && !(features_ & feature::project_quota)) continue;
    // The counted usage.
    std::map<std::uint32_t, Usage> want;
    for (std::size_t ri = 0; ri < walk_.size() && ri < inodes_.size(); ++ri) {
    if (!walk_[ri].seen()) continue;
    const nid_t ino = inodes_[ri].ino;
      bool is_q = false;
      for (int k = 0; k < 3; ++k) is_q |= sb_.qf_ino[k].get() == ino;
      if (is_q) continue;
      const auto index = static_cast<std::size_t>(node(ino).inode());
      const InodeRec& in = inodes_[index];
      const InodeState* st = find_state(ino);
      const std::uint64_t blocks = st ? st->blocks_counted : i_blocks(in);
      const std::uint32_t id = t == 0 ? owner_ids(index).first : t == 1 ? owner_ids(index).second : extras(in).projid;
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
    std::map<std::uint32_t, Usage> have;
    std::map<std::uint32_t, Dquot> dquots;
    const std::string tree_why = read_dquots(file, dquots);
    const bool tree_bad = !tree_why.empty();
    for (const auto& [id, d] : dquots) have[id] = Usage{d.inodes, d.space, d.file_off};
    std::uint32_t reports = 0;
    // The file as allocated: i_size rounded up to its last 4 KiB block,
    // which the tree may grow into (dqi_blocks) without allocating.
    std::vector<std::uint8_t> padded = file;
    padded.resize((file.size() + kBlockSize - 1) / kBlockSize * kBlockSize, 0);
    std::vector<std::uint8_t> new_file = padded;  // with the corrections and inserted entries
    std::vector<std::size_t> inserted;          // problems repaired by insertion
    if (tree_bad) {
      // The tree (its references outside the file, a loop, or two entries
      // for one id) is rebuilt in the file's own blocks: block 0's header and
      // info kept (free lists emptied, dqi_blocks 2: the header and the
      // root), every other byte zeroed, then one entry per counted id
      // inserted (insert_dquot()), as fsck.f2fs rewrites a quota file from
      // its counts. Left when the counted ids do not fit the file.
      Problem p = prob(Code::QUOTA_INODE_BAD);
      p.ino = q;
      p.path = std::string("<quota:") + kNames[t] + ">";
      p.detail = tree_why;
      std::fill(new_file.begin() + 32, new_file.end(), std::uint8_t{0});
      store_le32(new_file.data(), kDqiBlocks, kQtTreeOff + 1);
      store_le32(new_file.data(), kDqiFreeBlk, 0);
      store_le32(new_file.data(), kDqiFreeEntry, 0);
      std::string left;
      for (const auto& [id, u] : want)
        if (left.empty()) left = insert_dquot(new_file, id, u.inodes, u.space);
      if (!left.empty()) p.detail += " (the tree cannot be rebuilt in place: " + left + ")";
      const std::size_t idx = add(p);
      if (!left.empty()) continue;
      inserted.push_back(idx);
      want.clear();
      have.clear();
    }
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
      // entry in place; an id without an entry gets one inserted into the
      // tree when that fits the file (insert_dquot()).
      std::string left;
      if (h.file_off == 0) {
        left = insert_dquot(new_file, id, w.inodes, w.space);
        if (!left.empty()) p.detail += " (no entry for this id and it cannot be added: " + left + ")";
      }
      const std::size_t idx = add(p);
      if (h.file_off == 0 && left.empty()) inserted.push_back(idx);
      if (h.file_off != 0) {
        // Also in the copy the insertions patch from, so that a patch
        // spanning this entry carries the corrected usage.
        store_le64(new_file.data(), static_cast<std::size_t>(h.file_off + 24), w.inodes);
        store_le64(new_file.data(), static_cast<std::size_t>(h.file_off + 48), w.space);
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
    if (inserted.empty()) continue;
    // The insertions, as byte-range patches per 4 KiB block of the file (the
    // in-place usage edits above touch other bytes). Every changed block
    // must be mapped, else nothing is written for the insertions.
    struct Patch {
      block_t addr;
      std::uint32_t off;
      std::vector<std::uint8_t> bytes;
    };
    std::vector<Patch> patches;
    bool mapped = true;
    for (std::size_t o = 0; o < padded.size() && mapped; o += kBlockSize) {
      const std::size_t end = std::min<std::size_t>(o + kBlockSize, padded.size());
      std::size_t lo = end, hi = o;
      for (std::size_t i = o; i < end; ++i)
        if (padded[i] != new_file[i]) {
          lo = std::min(lo, i);
          hi = i + 1;
        }
      if (lo >= hi) continue;
      auto a = vol_->map_block(*info, o / kBlockSize);
      if (!a || !valid_main(*a)) {
        mapped = false;
        break;
      }
      patches.push_back({*a, static_cast<std::uint32_t>(lo - o),
                         std::vector<std::uint8_t>(new_file.begin() + static_cast<std::ptrdiff_t>(lo),
                                                   new_file.begin() + static_cast<std::ptrdiff_t>(hi))});
    }
    if (!mapped) {
      for (std::size_t idx : inserted) report_.problems[idx].detail += " (the quota file has a hole: left)";
      continue;
    }
    // One problem carries the edits; the others share its outcome.
    for (const auto& pt : patches)
      fix(inserted.front(), pt.addr, [pt](std::uint8_t* blk) { std::memcpy(blk + pt.off, pt.bytes.data(), pt.bytes.size()); });
    for (std::size_t i = 1; i < inserted.size(); ++i)
      for (const auto& pt : patches)
        fix(inserted[i], pt.addr, [](std::uint8_t*) {});
    // A tree grown past i_size: i_size follows dqi_blocks (1 KiB blocks), as
    // the kernel's quota writes extend the file.
    const std::uint64_t new_size = static_cast<std::uint64_t>(load_le32(new_file.data(), kDqiBlocks)) * kQtBlk;
    if (new_size > file.size()) {
      const InodeRec& qin = inodes_[static_cast<std::size_t>(node(q).inode())];
      fix_inode_field(inserted.front(), qin, [new_size](Node& node) { node.i.i_size = new_size; });
    }
  }
}

}  // namespace f2fscore::fsck
