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

#include "f2fscore/checksum.hpp"
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

std::map<std::uint32_t, std::pair<std::uint64_t, std::uint64_t>> Checker::counted_quota(int t) const {
  std::map<std::uint32_t, std::pair<std::uint64_t, std::uint64_t>> want;
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
    ++u.first;
    u.second += (blocks ? blocks - 1 : 0) * kBlockSize;
  }
  return want;
}

void Checker::check_quota_usage() {
  if (!(features_ & feature::quota_ino)) return;
  static const char* kNames[3] = {"user", "group", "project"};
  for (int t = 0; t < 3; ++t) {
    const nid_t q = sb_.qf_ino[t].get();
    if (q == 0 || q >= max_nid_ || node(q).inode() < 0 || !reached(q)) continue;
    if (t == 2 && !(features_ & feature::project_quota)) continue;
    // The counted usage.
    std::map<std::uint32_t, Usage> want;
    for (const auto& [id, u] : counted_quota(t)) want[id] = Usage{u.first, u.second, 0};
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


// A new quota file for quota type `t` whose inode (sb.qf_ino[t]) has no
// usable node block, as fsck.f2fs repairs one: a fresh inode at that
// number (f2fs_rebuild_qf_inode() in fsck/node.c, the fields of
// f2fs_init_qf_inode() in include/f2fs_fs.h and of our mkfs: S_IFREG|0600,
// one link, owner 0, immutable and noatime) holding a quota-v2 file written
// from the counted usage (fsck_chk_quota_files() in fsck/fsck.c rewrites
// the file from its counts): the header and info of mkfs.f2fs's file
// (QFMT_VFS_V1, a week of grace), an empty tree, then one entry per
// counted id (insert_dquot()), i_size its 1 KiB blocks (dqi_blocks). The
// inode goes to the next free block of the hot (else warm, cold) node log,
// the data to free blocks of the warm (else hot, cold) data log: blocks
// nothing uses, not valid in the SIT and named by no NAT entry, so that
// until the metadata rebuild commits them the old checkpoint's volume is
// untouched. The walk's truth gains the file (its node, its data blocks,
// the counts), so the rebuild writes its NAT entry, SIT bits and
// summaries; an active log whose next block it takes is moved by the
// rebuild (RebuildPlan::move_busy_cursegs). False, with the reason in
// the problem, when no room is found.
bool Checker::rebuild_quota_file(int t, std::size_t problem) {
  Problem& pr = report_.problems[problem];
  if (!allowed(Code::QUOTA_INODE_BAD) || opts_.mode != Mode::repair_all) return false;
  const nid_t q = sb_.qf_ino[t].get();
  if (q <= sb_.root_ino.get() || q >= max_nid_ || reached(q)) return false;
  if ((features_ & feature::flexible_inline_xattr) && !(features_ & feature::extra_attr)) return false;
  // The file: header and info in 1 KiB block 0, the tree's root in block 1.
  std::vector<std::uint8_t> file(2 * kQtBlk, 0);
  store_le32(file.data(), 0, kQuotaMagics[t]);
  store_le32(file.data(), 4, 1);  // dqh_version: QFMT_VFS_V1
  store_le32(file.data(), kDqiBgrace, 604800);
  store_le32(file.data(), kDqiIgrace, 604800);
  store_le32(file.data(), kDqiBlocks, kQtTreeOff + 1);
  for (const auto& [id, u] : counted_quota(t))
    if (std::string why = insert_dquot(file, id, u.first, u.second, true); !why.empty()) {
      pr.detail += "; no new quota file: " + why;
      return false;
    }
  const std::uint64_t size = static_cast<std::uint64_t>(load_le32(file.data(), kDqiBlocks)) * kQtBlk;
  file.resize(static_cast<std::size_t>((size + kBlockSize - 1) / kBlockSize * kBlockSize), 0);
  const std::uint32_t nblocks = static_cast<std::uint32_t>(file.size() / kBlockSize);
  InodeRec rec;
  rec.ino = q;
  rec.mode = 0x8180;
  rec.links = 1;
  rec.flags = iflag::immutable | iflag::noatime;
  if (features_ & feature::extra_attr) {
    rec.inline_flags = inline_flag::extra_attr;
    rec.extra_isize = static_cast<std::uint8_t>(extra_isize_for_features(features_));
  }
  if (nblocks > rec.addrs_per_inode()) {
    pr.detail += fmt("; no new quota file: %llu blocks do not fit the inode's direct addresses", nblocks);
    return false;
  }
  // Free blocks of the active logs (node: hot, warm, cold; data: warm, hot,
  // cold), from each log's next block on.
  std::vector<block_t> cand_node, cand_data;
  std::vector<std::uint32_t> segs;
  for (int k : {0, 1, 2}) segs.push_back(cp_.cur_node_segno[k].get());
  for (int k : {1, 0, 2}) segs.push_back(cp_.cur_data_segno[k].get());
  std::set<block_t> named;  // blocks of those segments a NAT entry names
  nids_.visit([&](nid_t, const NidTable::Rec& r) {
    if (!valid_main(r.nat.blkaddr)) return;
    if (std::find(segs.begin(), segs.end(), segno_of(r.nat.blkaddr)) != segs.end()) named.insert(r.nat.blkaddr);
  });
  auto collect = [&](std::uint32_t seg, std::uint32_t from, std::vector<block_t>& out, std::size_t want) {
    if (seg >= main_segs_) return;
    for (std::uint32_t off = from; off < kDefaultBlocksPerSeg && out.size() < want; ++off) {
      const auto a = static_cast<block_t>(vol_->segment_start(seg) + off);
      if (!valid_main(a) || used(a) || sit_valid(a) || edits_.count(a) || named.count(a)) continue;
      if (std::find(out.begin(), out.end(), a) == out.end()) out.push_back(a);
    }
  };
  for (int k : {0, 1, 2}) collect(cp_.cur_node_segno[k].get(), cp_.cur_node_blkoff[k].get(), cand_node, 1);
  for (int k : {1, 0, 2}) collect(cp_.cur_data_segno[k].get(), cp_.cur_data_blkoff[k].get(), cand_data, nblocks);
  if (cand_node.empty() || cand_data.size() < nblocks) {
    pr.detail += "; no new quota file: the active logs have no free block for it";
    return false;
  }
  const block_t iaddr = cand_node[0];
  const std::uint8_t version = nat(q).version;
  // The inode block.
  Node n;
  std::memset(&n, 0, sizeof n);
  n.i.i_mode = rec.mode;
  n.i.i_links = 1u;
  n.i.i_size = size;
  n.i.i_blocks = static_cast<std::uint64_t>(1 + nblocks);
  n.i.i_flags = rec.flags;
  n.i.i_inline = rec.inline_flags;
  if (rec.extra_isize) n.i.extra.i_extra_isize = static_cast<std::uint16_t>(rec.extra_isize);
  // The times of the root inode (as /lost+found gets them), when it reads.
  if (const nid_t root = sb_.root_ino.get(); reached(root) && node(root).inode() >= 0) {
    std::vector<std::uint8_t> rb(kBlockSize);
    if (read_at(dev_, static_cast<std::uint64_t>(nat(root).blkaddr) * kBlockSize, rb)) {
      const auto* r = reinterpret_cast<const Node*>(rb.data());
      n.i.i_atime = r->i.i_atime.get();
      n.i.i_ctime = r->i.i_ctime.get();
      n.i.i_mtime = r->i.i_mtime.get();
    }
  }
  const std::uint32_t base = rec.extra_isize / 4u;
  for (std::uint32_t k = 0; k < nblocks; ++k) n.i.i_addr[base + k] = cand_data[k];
  n.footer.nid = q;
  n.footer.ino = q;
  n.footer.cp_ver = cp_.checkpoint_ver.get();
  auto* raw = reinterpret_cast<std::uint8_t*>(&n);
  if ((features_ & feature::inode_checksum) && rec.extra_isize >= offsetof(InodeExtra, i_inode_checksum) + 4)
    n.i.extra.i_inode_checksum = inode_checksum(chksum_seed_, raw);
  fix(problem, iaddr, [n](std::uint8_t* p) { std::memcpy(p, &n, sizeof n); });
  for (std::uint32_t k = 0; k < nblocks; ++k) {
    std::vector<std::uint8_t> part(file.begin() + static_cast<std::ptrdiff_t>(k) * kBlockSize,
                                   file.begin() + static_cast<std::ptrdiff_t>(k + 1) * kBlockSize);
    fix(problem, cand_data[k], [part = std::move(part)](std::uint8_t* p) { std::memcpy(p, part.data(), part.size()); });
  }
  // The walk's truth gains the file.
  rec.size = size;
  rec.blocks_low = 1 + nblocks;
  NidTable::Rec& r = nids_.get(q);
  r.nat = {iaddr, q, version, false};
  r.node = NodeRec{};
  r.node.read_ok = true;
  footer_odd_.erase(q);
  r.node.addr_begin = addrs_.begin_run(nblocks);
  for (std::uint32_t k = 0; k < nblocks; ++k) addrs_.push_back({static_cast<std::uint16_t>(k), cand_data[k]});
  r.node.addr_count = static_cast<std::uint16_t>(nblocks);
  addr_use_.resize((addrs_.size() + 63) / 64, 0);
  InodeState& st = add_reached_inode(rec, std::string("<quota:") + (t == 0 ? "user" : t == 1 ? "group" : "project") + ">");
  st.blocks_counted = 1 + nblocks;
  claim_node(q, iaddr);
  for (std::uint32_t k = 0; k < nblocks; ++k) {
    claim(cand_data[k], false);
    const std::size_t ai = r.node.addr_begin + k;
    addr_use_[ai >> 6] |= 1ull << (ai & 63);
  }
  ++node_count_;
  ++inode_count_;
  valid_blocks_ += 1 + nblocks;
  pr.detail += fmt("; a new quota file from the counted usage: its inode at block %llu, %llu data blocks from %llu", iaddr,
                   nblocks, cand_data[0]);
  return true;
}

}  // namespace f2fscore::fsck
