// Quota usage: the quota files (quota format v2, tree of 1 KiB blocks,
// v2r1 entries: fs/quota/quota_tree.c and quotaio_v2.h in Linux; what
// mkfs.f2fs and the kernel write into the f2fs quota inodes) against the
// usage counted by the walk: one inode per reached inode (quota files
// excluded) and (i_blocks - 1) 4 KiB blocks of space, as the kernel charges
// them (do_read_inode() sets the VFS i_blocks from i_blocks - 1).
#include <algorithm>
#include <cstdio>
#include <cstring>
#include <map>
#include <set>

#include "f2fscore/disk/superblock.hpp"
#include "fsck/fsck_internal.hpp"
#include "util/text.hpp"

namespace f2fscore::fsck {

using namespace disk;

namespace {
using detail::fmt;
constexpr std::uint32_t kQtBlk = 1024;        // QT_BLKSIZE
constexpr std::uint32_t kQtTreeOff = 1;       // QT_TREEOFF: the root block
constexpr std::uint32_t kQtDepth = 4;         // QT_TREEDEPTH
constexpr std::uint32_t kDqdbHeader = 16;     // struct qt_disk_dqdbheader
constexpr std::uint32_t kV2r1Entry = 72;      // struct v2r1_disk_dqblk
void put_le16(std::uint8_t* p, std::size_t off, std::uint16_t x) {
  p[off] = static_cast<std::uint8_t>(x);
  p[off + 1] = static_cast<std::uint8_t>(x >> 8);
}
constexpr std::uint32_t kDqstrInBlk = (kQtBlk - kDqdbHeader) / kV2r1Entry;  // 14 entries per data block
// struct v2_disk_dqinfo follows the 8-byte v2_disk_dqheader in block 0.
constexpr std::uint32_t kDqiBlocks = 20, kDqiFreeBlk = 24, kDqiFreeEntry = 28;
struct Usage {
  std::uint64_t inodes = 0, space = 0;
  std::uint64_t file_off = 0;  ///< byte offset of the entry in the quota file (0: none)
};

// Adding an id's entry to a quota tree, as the kernel's dq_insert_tree() /
// find_free_dqentry() / get_free_dqblk() in fs/quota/quota_tree.c do, on an
// in-memory copy of the file: tree blocks are created below the first
// missing reference, the entry goes in the first unused slot of the head of
// the free-entry list (or of a new data block), new blocks come from the
// free-block list or else from dqi_blocks, which may only grow within the
// file as it is (its i_size): the checker allocates no f2fs blocks. On
// success `file` holds the new content; on failure it is unchanged and the
// reason is returned.
std::string insert_dquot(std::vector<std::uint8_t>& file, std::uint32_t id, std::uint64_t inodes, std::uint64_t space) {
  std::vector<std::uint8_t> f = file;
  const std::uint32_t in_file = static_cast<std::uint32_t>(f.size() / kQtBlk);
  auto blk = [&](std::uint32_t b) { return f.data() + static_cast<std::size_t>(b) * kQtBlk; };
  std::string why;
  auto get_free_blk = [&]() -> std::uint32_t {
    std::uint32_t b = load_le32(f.data(), kDqiFreeBlk);
    if (b != 0) {
      if (b >= in_file) { why = "the quota free-block list points outside the file"; return 0; }
      store_le32(f.data(), kDqiFreeBlk, load_le32(blk(b), 0));
    } else {
      b = load_le32(f.data(), kDqiBlocks);
      if (b >= in_file) { why = "the quota tree must grow past the file's size, which needs f2fs blocks"; return 0; }
      store_le32(f.data(), kDqiBlocks, b + 1);
    }
    std::memset(blk(b), 0, kQtBlk);
    return b;
  };
  // The tree, depth 0..3, indexed by the id's bytes from the most significant.
  std::uint32_t b = kQtTreeOff;
  for (std::uint32_t depth = 0; depth + 1 < kQtDepth; ++depth) {
    const std::uint32_t slot = (id >> (8 * (kQtDepth - 1 - depth))) & 0xff;
    std::uint32_t ref = load_le32(blk(b), 4 * slot);
    if (ref == 0) {
      ref = get_free_blk();
      if (ref == 0) return why;
      store_le32(blk(b), 4 * slot, ref);
    } else if (ref >= in_file) {
      return "the quota tree references blocks outside the file";
    }
    b = ref;
  }
  const std::uint32_t slot = id & 0xff;
  if (load_le32(blk(b), 4 * slot) != 0) return "the leaf reference for this id exists but holds no entry for it";
  // A data block with a free entry.
  std::uint32_t data = load_le32(f.data(), kDqiFreeEntry);
  if (data >= in_file) return "the quota free-entry list points outside the file";
  if (data == 0) {
    data = get_free_blk();
    if (data == 0) return why;
    store_le32(blk(data), 0, 0);
    store_le32(blk(data), 4, 0);
    store_le32(f.data(), kDqiFreeEntry, data);  // insert_free_dqentry(): it has room
  }
  std::uint8_t* d = blk(data);
  std::uint32_t k = 0;
  for (; k < kDqstrInBlk; ++k) {
    bool used = false;
    for (std::uint32_t i = 0; i < kV2r1Entry; ++i) used |= d[kDqdbHeader + k * kV2r1Entry + i] != 0;
    if (!used) break;
  }
  if (k == kDqstrInBlk) return "the quota free-entry block is full";
  const std::uint16_t entries = static_cast<std::uint16_t>(load_le16(d, 8) + 1);
  put_le16(d, 8, entries);
  if (entries >= kDqstrInBlk) {  // remove_free_dqentry(): full now
    const std::uint32_t next = load_le32(d, 0);
    store_le32(f.data(), kDqiFreeEntry, next);
    if (next != 0 && next < in_file) store_le32(blk(next), 4, 0);
    store_le32(d, 0, 0);
    store_le32(d, 4, 0);
  }
  std::uint8_t* e = d + kDqdbHeader + k * kV2r1Entry;
  std::memset(e, 0, kV2r1Entry);
  store_le32(e, 0, id);
  store_le64(e, 24, inodes);  // dqb_curinodes
  store_le64(e, 48, space);   // dqb_curspace
  store_le32(blk(b), 4 * slot, data);
  file.swap(f);
  return {};
}
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
    std::uint32_t reports = 0;
    // The file as allocated: i_size rounded up to its last 4 KiB block,
    // which the tree may grow into (dqi_blocks) without allocating.
    std::vector<std::uint8_t> padded = file;
    padded.resize((file.size() + kBlockSize - 1) / kBlockSize * kBlockSize, 0);
    std::vector<std::uint8_t> new_file = padded;  // with the corrections and inserted entries
    std::vector<std::size_t> inserted;          // problems repaired by insertion
    if (tree_bad) {
      // The tree is rebuilt in the file's own blocks: block 0's header and
      // info kept (free lists emptied, dqi_blocks 2: the header and the
      // root), every other byte zeroed, then one entry per counted id
      // inserted (insert_dquot()), as fsck.f2fs rewrites a quota file from
      // its counts. Left when the counted ids do not fit the file.
      Problem p = prob(Code::QUOTA_INODE_BAD);
      p.ino = q;
      p.path = std::string("<quota:") + kNames[t] + ">";
      p.detail = "quota tree references blocks outside the file or loops";
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
