// The mkfs writer: turns an MkfsPlan into blocks on the devices.
#include <cstring>
#include <vector>

#include "disk/cp_pack.hpp"
#include "f2fscore/checksum.hpp"
#include "f2fscore/disk/dentry.hpp"
#include "f2fscore/disk/nat.hpp"
#include "f2fscore/disk/node.hpp"
#include "f2fscore/disk/summary.hpp"
#include "f2fscore/disk/geometry.hpp"
#include "f2fscore/mkfs.hpp"

namespace f2fscore {

using namespace disk;

namespace {

using Block = std::vector<std::uint8_t>;
Block new_block() { return Block(kBlockSize, 0); }
Block to_block(std::span<const std::uint8_t> b) { return Block(b.begin(), b.end()); }

template <typename T>
T* view(Block& b) {
  static_assert(sizeof(T) <= kBlockSize);
  return reinterpret_cast<T*>(b.data());
}

// Writes volume blocks to whichever device holds them.
class VolumeWriter {
 public:
  VolumeWriter(std::span<const MkfsTarget> t, const MkfsPlan& p, MkfsReport& r)
      : targets_(t), plan_(p), report_(r) {}

  Status write_block(std::uint64_t blkaddr, const Block& b) {
    auto [dev, off] = locate(blkaddr);
    F2FSCORE_TRY(write_at(*dev, off, std::span<const std::uint8_t>(b.data(), b.size())));
    report_.bytes_written += b.size();
    return {};
  }
  Status zero_blocks(std::uint64_t blkaddr, std::uint64_t count) {
    auto [dev, off] = locate(blkaddr);
    F2FSCORE_TRY(write_zeroes(*dev, off, count * kBlockSize));
    report_.bytes_zeroed += count * kBlockSize;
    return {};
  }

 private:
  std::pair<BlockDevice*, std::uint64_t> locate(std::uint64_t blkaddr) const {
    for (std::size_t i = 0; i < plan_.devices.size(); ++i) {
      const auto& d = plan_.devices[i];
      if (blkaddr >= d.start_blkaddr && blkaddr <= d.end_blkaddr)
        return {targets_[i].device, (blkaddr - d.start_blkaddr) * kBlockSize};
    }
    return {targets_[0].device, blkaddr * kBlockSize};  // the device reports out_of_range
  }

  std::span<const MkfsTarget> targets_;
  const MkfsPlan& plan_;
  MkfsReport& report_;
};

struct Writer {
  const MkfsPlan& p;
  VolumeWriter& out;
  std::uint32_t feat() const { return p.sb.feature.get(); }
  std::uint64_t main() const { return p.sb.main_blkaddr.get(); }
  std::uint64_t seg_start(CursegType t) const {
    return Geometry(p.sb).segment_start(p.cur_seg[static_cast<int>(t)]);
  }
  std::uint32_t extra_slots() const {
    return (feat() & feature::extra_attr) ? extra_isize_for_features(feat()) / 4u : 0u;
  }

  // Fields every mkfs-made inode shares.
  void init_inode(Node& n, nid_t ino, std::uint16_t mode, std::uint32_t links) const {
    n.footer.nid.set(ino);
    n.footer.ino.set(ino);
    n.footer.cp_ver.set(1);
    n.i.i_mode.set(mode);
    n.i.i_links.set(links);
    n.i.i_uid.set(root_uid);
    n.i.i_gid.set(root_gid);
    n.i.i_atime.set(p.timestamp);
    n.i.i_ctime.set(p.timestamp);
    n.i.i_mtime.set(p.timestamp);
    if (feat() & feature::extra_attr) {
      n.i.i_inline = inline_flag::extra_attr;
      n.i.extra.i_extra_isize.set(extra_isize_for_features(feat()));
    }
  }

  Status write_inode(std::uint64_t blkaddr, Block& b) {
    if (feat() & feature::inode_checksum) {
      Node* n = view<Node>(b);
      n->i.extra.i_inode_checksum.set(inode_checksum(p.chksum_seed, b.data()));
    }
    return out.write_block(blkaddr, b);
  }

  std::uint32_t root_uid = 0, root_gid = 0;

  Status write_root_inode() {
    Block b = new_block();
    Node& n = *view<Node>(b);
    init_inode(n, kRootIno, 0x41ed, p.lpf_ino ? 3 : 2);
    n.footer.next_blkaddr.set(static_cast<std::uint32_t>(seg_start(CursegType::hot_node) + 1));
    n.i.i_size.set(kBlockSize);
    n.i.i_blocks.set(2);
    n.i.i_current_depth.set(1);
    if (feat() & feature::inode_crtime) n.i.extra.i_crtime.set(p.timestamp);
    n.i.i_addr[extra_slots()].set(static_cast<std::uint32_t>(seg_start(CursegType::hot_data)));
    return write_inode(seg_start(CursegType::hot_node), b);
  }

  // A quota file as quota-v2 (QFMT_VFS_V1) with a four-level tree of 1 KiB
  // blocks leading to one data block holding the owner of the root
  // directory: 6 KiB over two 4 KiB blocks.
  Status write_quota_data(std::uint32_t qtype, std::uint64_t blkaddr, std::uint32_t id) {
    std::vector<std::uint8_t> f(2 * kBlockSize, 0);
    store_le32(f.data(), 0, kQuotaMagics[qtype]);
    store_le32(f.data(), 4, 1);           // dqh_version: QFMT_VFS_V1
    store_le32(f.data(), 8, 604800);      // dqi_bgrace: one week
    store_le32(f.data(), 12, 604800);     // dqi_igrace
    store_le32(f.data(), 16, 0);          // dqi_flags
    store_le32(f.data(), 20, 6);          // dqi_blocks: header + 4 tree blocks + 1 data block
    store_le32(f.data(), 24, 0);          // dqi_free_blk
    store_le32(f.data(), 28, 5);          // dqi_free_entry: the data block has room
    // Tree blocks 1..4 (1 KiB each): the slot for each byte of the id points
    // to the next level; level 4 points at data block 5.
    for (std::uint32_t depth = 0; depth < 4; ++depth) {
      const std::uint32_t slot = (id >> (8 * (3 - depth))) & 0xFF;
      store_le32(f.data(), 1024 * (depth + 1) + slot * 4, depth + 2);
    }
    // Data block 5: a 16-byte header (one entry in use), then v2r1 dquots.
    f[5120 + 8] = 1;
    const std::uint32_t lpf = p.lpf_ino ? 1 : 0;
    std::uint8_t* d = f.data() + 5136;
    store_le32(d, 0, id);                 // dqb_id
    store_le64(d, 24, 1 + lpf);           // dqb_curinodes: root (and lost+found)
    store_le64(d, 48, (1 + lpf) * kBlockSize);  // dqb_curspace, bytes
    Block b0(f.begin(), f.begin() + kBlockSize), b1(f.begin() + kBlockSize, f.end());
    F2FSCORE_TRY(out.write_block(blkaddr, b0));
    return out.write_block(blkaddr + 1, b1);
  }

  Status write_quota_inode(std::uint32_t qtype, std::uint32_t index) {
    Block b = new_block();
    Node& n = *view<Node>(b);
    const nid_t ino = p.sb.qf_ino[qtype].get();
    init_inode(n, ino, 0x8180, 1);
    n.footer.next_blkaddr.set(static_cast<std::uint32_t>(seg_start(CursegType::hot_node) + 1 + qtype + 1));
    n.i.i_size.set(1024 * 6);
    n.i.i_blocks.set(1 + 2);
    n.i.i_flags.set(iflag::immutable);
    const std::uint64_t data = seg_start(CursegType::hot_data) + 1 + index * 2;
    const std::uint32_t id = qtype == 0 ? root_uid : qtype == 1 ? root_gid : 0;
    F2FSCORE_TRY(write_quota_data(qtype, data, id));
    for (std::uint32_t i = 0; i < 2; ++i)
      n.i.i_addr[extra_slots() + i].set(static_cast<std::uint32_t>(data + i));
    return write_inode(seg_start(CursegType::hot_node) + index + 1, b);
  }

  Status write_lpf() {
    const std::uint64_t dblk = seg_start(CursegType::hot_data) + 1 + p.quota_blocks;
    Block d = new_block();
    DentryBlock& db = *view<DentryBlock>(d);
    add_dentry(db, 0, ".", p.lpf_ino);
    add_dentry(db, 1, "..", kRootIno);
    F2FSCORE_TRY(out.write_block(dblk, d));

    Block b = new_block();
    Node& n = *view<Node>(b);
    init_inode(n, p.lpf_ino, 0x41c0, 2);
    n.footer.next_blkaddr.set(static_cast<std::uint32_t>(seg_start(CursegType::hot_node) + 1 + p.quota_inodes + 1));
    n.i.i_size.set(kBlockSize);
    n.i.i_blocks.set(2);
    n.i.i_pino.set(kRootIno);
    n.i.i_namelen.set(10);
    std::memcpy(n.i.i_name, "lost+found", 10);
    n.i.i_current_depth.set(1);
    if (feat() & feature::inode_crtime) n.i.extra.i_crtime.set(p.timestamp);
    n.i.i_addr[extra_slots()].set(static_cast<std::uint32_t>(dblk));
    return write_inode(seg_start(CursegType::hot_node) + p.quota_inodes + 1, b);
  }

  static void add_dentry(DentryBlock& db, std::uint32_t slot, std::string_view name, nid_t ino) {
    DirEntry& e = db.dentry[slot];
    e.hash_code.set(dentry_hash(name));
    e.ino.set(ino);
    e.name_len.set(static_cast<std::uint16_t>(name.size()));
    e.file_type = static_cast<std::uint8_t>(FileType::dir);
    const std::uint32_t slots = static_cast<std::uint32_t>((name.size() + kSlotLen - 1) / kSlotLen);
    std::memcpy(db.filename[slot], name.data(), name.size());
    for (std::uint32_t i = 0; i < slots; ++i) set_bit_le(db.dentry_bitmap, slot + i);
  }

  Status write_root_dentries() {
    Block d = new_block();
    DentryBlock& db = *view<DentryBlock>(d);
    add_dentry(db, 0, ".", kRootIno);
    add_dentry(db, 1, "..", kRootIno);
    // lost+found is hashed as a plain name even on casefolded volumes: the
    // root directory is not casefolded at format time.
    if (p.lpf_ino) add_dentry(db, 2, "lost+found", p.lpf_ino);
    return out.write_block(seg_start(CursegType::hot_data), d);
  }

  Status write_nat() {
    Block b = new_block();
    NatBlock& nb = *view<NatBlock>(b);
    for (std::uint32_t q = 0; q < p.quota_inodes; ++q) {
      const nid_t ino = p.sb.qf_ino[q].get();
      nb.entries[ino].block_addr.set(static_cast<std::uint32_t>(seg_start(CursegType::hot_node) + q + 1));
      nb.entries[ino].ino.set(ino);
    }
    nb.entries[kRootIno].block_addr.set(static_cast<std::uint32_t>(seg_start(CursegType::hot_node)));
    nb.entries[kRootIno].ino.set(kRootIno);
    nb.entries[kNodeIno].block_addr.set(1);
    nb.entries[kNodeIno].ino.set(kNodeIno);
    nb.entries[kMetaIno].block_addr.set(1);
    nb.entries[kMetaIno].ino.set(kMetaIno);
    return out.write_block(p.sb.nat_blkaddr.get(), b);
  }

  Status write_cp_packs() {
    const SuperBlock& sb = p.sb;
    const Geometry geo(sb);
    const std::uint32_t payload = sb.cp_payload.get();
    const std::uint32_t lpf = p.lpf_ino ? 1 : 0;

    // NAT journal: the root, quota and lost+found inodes.
    Journal nat{};
    nat.n_entries.set(static_cast<std::uint16_t>(1 + p.quota_inodes + lpf));
    auto put_nat = [&](std::uint32_t i, nid_t nid, std::uint64_t addr) {
      nat.nat_j.entries[i].nid.set(nid);
      nat.nat_j.entries[i].ne.ino.set(nid);
      nat.nat_j.entries[i].ne.block_addr.set(static_cast<std::uint32_t>(addr));
    };
    const std::uint64_t hn = seg_start(CursegType::hot_node);
    put_nat(0, kRootIno, hn);
    for (std::uint32_t q = 0; q < p.quota_inodes; ++q) put_nat(1 + q, sb.qf_ino[q].get(), hn + 1 + q);
    if (lpf) put_nat(1 + p.quota_inodes, p.lpf_ino, hn + 1 + p.quota_inodes);

    // SIT journal: the active logs' segments (six; two on a read-only
    // image, hot node and hot data).
    const bool ro = sb.feature.get() & feature::ro;
    Journal sit{};
    sit.n_entries.set(ro ? 2 : kNrCursegType);
    const struct {
      CursegType t;
      std::uint32_t valid;
    } logs[6] = {{CursegType::hot_node, 1 + p.quota_inodes + lpf}, {CursegType::warm_node, 0},
                 {CursegType::cold_node, 0}, {CursegType::hot_data, 1 + p.quota_blocks + lpf},
                 {CursegType::warm_data, 0}, {CursegType::cold_data, 0}};
    for (int i = 0, j = 0; i < 6; ++i) {
      if (ro && logs[i].t != CursegType::hot_node && logs[i].t != CursegType::hot_data) continue;
      SitJournalEntry& e = sit.sit_j.entries[j++];
      e.segno.set(p.cur_seg[static_cast<int>(logs[i].t)]);
      e.se.vblocks.set(make_sit_vblocks(static_cast<std::uint8_t>(logs[i].t),
                                        static_cast<std::uint16_t>(logs[i].valid)));
      for (std::uint32_t b = 0; b < logs[i].valid; ++b) set_bit_msb(e.se.valid_map, b);
    }

    // Data summaries: the hot data log's blocks (root dentries, quota data,
    // lost+found dentries); node summaries: the hot node log's inodes.
    SummaryBlock data_sums[3] = {};
    for (auto& d : data_sums) d.footer.entry_type = kSumTypeData;
    std::uint32_t off = 0;
    data_sums[0].entries[off++].nid.set(kRootIno);
    for (std::uint32_t q = 0; q < p.quota_inodes; ++q)
      for (std::uint16_t j = 0; j < 2; ++j) {
        data_sums[0].entries[off].nid.set(sb.qf_ino[q].get());
        data_sums[0].entries[off++].ofs_in_node.set(j);
      }
    if (lpf) data_sums[0].entries[off++].nid.set(p.lpf_ino);
    SummaryBlock node_sums[3] = {};
    for (auto& n : node_sums) n.footer.entry_type = kSumTypeNode;
    node_sums[0].entries[0].nid.set(kRootIno);
    for (std::uint32_t q = 0; q < p.quota_inodes; ++q) node_sums[0].entries[1 + q].nid.set(sb.qf_ino[q].get());
    if (lpf) node_sums[0].entries[1 + p.quota_inodes].nid.set(p.lpf_ino);

    // nat_bits: every NAT block empty but block 0 (the reserved and root
    // entries); none full.
    const NatBitsLayout nbl = geo.nat_bits_layout();
    std::vector<std::uint8_t> empty_bits(nbl.bitmap_bytes, 0xFF);
    clear_bit_le(empty_bits.data(), 0);

    CpPackContents c;
    c.cp = &p.cp;
    c.nat_journal = &nat;
    c.sit_journal = &sit;
    c.data_sums = data_sums;
    c.node_sums = node_sums;
    c.nat_bits_empty = empty_bits;
    auto pack = encode_cp_pack(geo, c);
    if (!pack) return make_error(pack.error());

    // Pack 1. The payload blocks hold only zeroes (the SIT version bitmap
    // starts clear): zeroed, not written.
    const std::uint64_t start = geo.cp_pack_start(0);
    F2FSCORE_TRY(out.write_block(start, to_block(pack->block(0))));
    if (payload) F2FSCORE_TRY(out.zero_blocks(start + 1, payload));
    for (std::uint32_t i = 1 + payload; i < pack->block_count(); ++i) F2FSCORE_TRY(out.write_block(start + i, to_block(pack->block(i))));
    if (p.nat_bits_blocks)
      for (std::uint32_t i = 0; i < p.nat_bits_blocks; ++i)
        F2FSCORE_TRY(out.write_block(start + pack->nat_bits_start + i,
                                 to_block(std::span<const std::uint8_t>(pack->nat_bits).subspan(
                                     static_cast<std::size_t>(i) * kBlockSize, kBlockSize))));

    // Pack 2: version 0, so that pack 1 is the newer one; as mkfs.f2fs, only
    // its CP blocks are written.
    Checkpoint cp2 = p.cp;
    cp2.checkpoint_ver.set(0);
    c.cp = &cp2;
    auto pack2 = encode_cp_pack(geo, c);
    if (!pack2) return make_error(pack2.error());
    const std::uint64_t start2 = geo.cp_pack_start(1);
    F2FSCORE_TRY(out.write_block(start2, to_block(pack2->block(0))));
    if (payload) F2FSCORE_TRY(out.zero_blocks(start2 + 1, payload));
    return out.write_block(start2 + pack2->block_count() - 1, to_block(pack2->block(pack2->block_count() - 1)));
  }
};

}  // namespace

Result<MkfsReport> format_volume(std::span<const MkfsTarget> targets, const MkfsOptions& opts) {
  auto plan = plan_mkfs(targets, opts);
  if (!plan) return make_error(plan.error());
  MkfsReport report;
  report.plan = std::move(*plan);
  const MkfsPlan& p = report.plan;
  const SuperBlock& sb = p.sb;
  VolumeWriter out(targets, p, report);

  // 1. Discard every device (mkfs.f2fs -t 1). A device that cannot discard
  //    is not an error, as with mkfs.f2fs; the flag records the request.
  if (opts.discard) {
    report.discarded = true;
    for (std::size_t i = 0; i < targets.size(); ++i) {
      const std::uint64_t bytes = p.devices[i].sectors * p.sector_size;
      if (discard(*targets[i].device, 0, bytes)) report.bytes_discarded += bytes;
      else report.discarded = false;
    }
  }
  // 2. Invalidate any old superblock first, so a failure below cannot leave
  //    an old superblock pointing at half-new metadata.
  F2FSCORE_TRY(out.zero_blocks(0, 2));
  // 3. SIT and NAT start as zeroes. Only the first copy of each is read
  //    (the checkpoint's version bitmaps start clear) and the kernel writes
  //    a whole block when it moves one to the other copy, so, as mkfs.f2fs,
  //    zero the first SIT half and the even NAT segments. write_zeroes
  //    guarantees zeroes; a bare discard would not.
  const Geometry geo(sb);
  F2FSCORE_TRY(out.zero_blocks(geo.sit_addr(0, 0), geo.sit_blocks()));
  for (std::uint32_t b = 0; b < geo.nat_blocks(); b += kBlocksPerSeg) F2FSCORE_TRY(out.zero_blocks(geo.nat_addr(b, 0), kBlocksPerSeg));
  // 4. Main area: inodes and dentries; clear the first warm node block so
  //    that roll-forward recovery finds no stale fsynced node chain there.
  Writer w{p, out};
  w.root_uid = opts.root_uid;
  w.root_gid = opts.root_gid;
  F2FSCORE_TRY(w.write_root_inode());
  for (std::uint32_t q = 0; q < p.quota_inodes; ++q) F2FSCORE_TRY(w.write_quota_inode(q, q));
  if (p.lpf_ino) F2FSCORE_TRY(w.write_lpf());
  // (A read-only image has no warm node log: never recovered, nothing cleared.)
  if (!(sb.feature.get() & feature::ro)) F2FSCORE_TRY(out.zero_blocks(w.seg_start(CursegType::warm_node), 1));
  F2FSCORE_TRY(w.write_nat());
  F2FSCORE_TRY(w.write_root_dentries());
  // 5. Checkpoint packs, made durable before the superblocks point at them.
  F2FSCORE_TRY(w.write_cp_packs());
  for (const auto& t : targets) F2FSCORE_TRY(flush(*t.device));
  // 6. Both superblock copies, then flush.
  Block sbb = new_block();
  std::memcpy(sbb.data() + kSuperOffset, &sb, sizeof(SuperBlock));
  F2FSCORE_TRY(out.write_block(0, sbb));
  F2FSCORE_TRY(out.write_block(1, sbb));
  for (const auto& t : targets) F2FSCORE_TRY(flush(*t.device));
  return report;
}

}  // namespace f2fscore
