// The corruption library (corrupt.hpp): locating records through the
// layout (superblock, checkpoint pack, NAT/SIT with their journals and
// version bitmaps, SSA, node trees, dentries, xattrs), editing them, and
// re-sealing the checksums the edit broke.
#include "fsck/corrupt.hpp"

#include <algorithm>
#include <cstddef>
#include <cstdio>
#include <cstdlib>
#include <cstring>

#include "f2fscore/checksum.hpp"
#include "f2fscore/disk/checkpoint.hpp"
#include "f2fscore/disk/nat.hpp"
#include "f2fscore/disk/node.hpp"
#include "f2fscore/disk/sit.hpp"
#include "f2fscore/disk/summary.hpp"
#include "f2fscore/disk/superblock.hpp"
#include "f2fscore/disk/xattr.hpp"
#include "f2fscore/endian.hpp"

namespace f2fstest::corrupt {

using namespace f2fscore;
using namespace f2fscore::disk;

namespace {

constexpr std::uint32_t kBlocksPerSeg = kDefaultBlocksPerSeg;

enum Op { kSet, kAdd, kSub, kOr, kAnd, kXor };

std::uint64_t combine(std::uint64_t cur, int op, std::uint64_t v) {
  switch (op) {
    case kAdd: return cur + v;
    case kSub: return cur - v;
    case kOr: return cur | v;
    case kAnd: return cur & v;
    case kXor: return cur ^ v;
    default: return v;
  }
}

std::uint64_t load(const std::uint8_t* p, unsigned size) {
  std::uint64_t v = 0;
  for (unsigned i = 0; i < size; ++i) v |= static_cast<std::uint64_t>(p[i]) << (8 * i);
  return v;
}
void store(std::uint8_t* p, unsigned size, std::uint64_t v) {
  for (unsigned i = 0; i < size; ++i) p[i] = static_cast<std::uint8_t>(v >> (8 * i));
}

tl::unexpected<Error> bad(const std::string& msg) { return make_error(Errc::invalid_argument, msg); }

std::optional<std::uint64_t> parse_num(std::string_view s) {
  if (s.empty()) return std::nullopt;
  std::string t(s);
  char* end = nullptr;
  const bool neg = t[0] == '-';
  const unsigned long long v = std::strtoull(neg ? t.c_str() + 1 : t.c_str(), &end, 0);
  if (end == nullptr || *end != '\0') return std::nullopt;
  return neg ? static_cast<std::uint64_t>(-static_cast<long long>(v)) : v;
}

/// A field: name (with "[]" for arrays), byte offset, size, element stride.
struct Field {
  const char* name;
  std::uint32_t off;
  std::uint8_t size;
  std::uint32_t count = 1;
};

/// Finds "name" or "name[i]" in a table: byte offset and size.
std::optional<std::pair<std::uint32_t, unsigned>> find_field(const Field* tab, std::size_t n, std::string_view f) {
  std::string_view base = f;
  std::uint64_t idx = 0;
  bool indexed = false;
  if (auto lb = f.find('['); lb != std::string_view::npos && f.back() == ']') {
    base = f.substr(0, lb);
    auto v = parse_num(f.substr(lb + 1, f.size() - lb - 2));
    if (!v) return std::nullopt;
    idx = *v;
    indexed = true;
  }
  for (std::size_t i = 0; i < n; ++i) {
    if (base != tab[i].name) continue;
    if (indexed && idx >= tab[i].count) return std::nullopt;
    if (!indexed && tab[i].count > 1) return std::nullopt;
    return std::make_pair(tab[i].off + static_cast<std::uint32_t>(idx) * tab[i].size, static_cast<unsigned>(tab[i].size));
  }
  return std::nullopt;
}

#define F(s, m) Field{#m, static_cast<std::uint32_t>(offsetof(s, m)), sizeof(s::m)}
#define FA(s, m, n) Field{#m, static_cast<std::uint32_t>(offsetof(s, m)), sizeof(s::m) / (n), n}

const Field kSbFields[] = {
    F(SuperBlock, magic), F(SuperBlock, major_ver), F(SuperBlock, minor_ver), F(SuperBlock, log_sectorsize),
    F(SuperBlock, log_sectors_per_block), F(SuperBlock, log_blocksize), F(SuperBlock, log_blocks_per_seg),
    F(SuperBlock, segs_per_sec), F(SuperBlock, secs_per_zone), F(SuperBlock, checksum_offset),
    F(SuperBlock, block_count), F(SuperBlock, section_count), F(SuperBlock, segment_count),
    F(SuperBlock, segment_count_ckpt), F(SuperBlock, segment_count_sit), F(SuperBlock, segment_count_nat),
    F(SuperBlock, segment_count_ssa), F(SuperBlock, segment_count_main), F(SuperBlock, segment0_blkaddr),
    F(SuperBlock, cp_blkaddr), F(SuperBlock, sit_blkaddr), F(SuperBlock, nat_blkaddr), F(SuperBlock, ssa_blkaddr),
    F(SuperBlock, main_blkaddr), F(SuperBlock, root_ino), F(SuperBlock, node_ino), F(SuperBlock, meta_ino),
    F(SuperBlock, extension_count), F(SuperBlock, cp_payload), F(SuperBlock, feature),
    F(SuperBlock, encryption_level), FA(SuperBlock, qf_ino, kMaxQuotas), F(SuperBlock, hot_ext_count),
    F(SuperBlock, s_encoding), F(SuperBlock, s_encoding_flags), F(SuperBlock, crc),
    // devs[0] of the device list: a byte of its path, its segment count.
    Field{"devs0.path", static_cast<std::uint32_t>(offsetof(SuperBlock, devs) + offsetof(Device, path)), 1, kMaxPathLen},
    Field{"devs0.total_segments", static_cast<std::uint32_t>(offsetof(SuperBlock, devs) + offsetof(Device, total_segments)), 4},
};

const Field kCpFields[] = {
    F(Checkpoint, checkpoint_ver), F(Checkpoint, user_block_count), F(Checkpoint, valid_block_count),
    F(Checkpoint, rsvd_segment_count), F(Checkpoint, overprov_segment_count), F(Checkpoint, free_segment_count),
    FA(Checkpoint, cur_node_segno, kMaxActiveNodeLogs), FA(Checkpoint, cur_node_blkoff, kMaxActiveNodeLogs),
    FA(Checkpoint, cur_data_segno, kMaxActiveDataLogs), FA(Checkpoint, cur_data_blkoff, kMaxActiveDataLogs),
    F(Checkpoint, ckpt_flags), F(Checkpoint, cp_pack_total_block_count), F(Checkpoint, cp_pack_start_sum),
    F(Checkpoint, valid_node_count), F(Checkpoint, valid_inode_count), F(Checkpoint, next_free_nid),
    F(Checkpoint, sit_ver_bitmap_bytesize), F(Checkpoint, nat_ver_bitmap_bytesize), F(Checkpoint, checksum_offset),
    F(Checkpoint, elapsed_time), FA(Checkpoint, alloc_type, kMaxActiveLogs),
};

const Field kInodeFields[] = {
    F(Inode, i_mode), F(Inode, i_advise), F(Inode, i_inline), F(Inode, i_uid), F(Inode, i_gid), F(Inode, i_links),
    F(Inode, i_size), F(Inode, i_blocks), F(Inode, i_atime), F(Inode, i_ctime), F(Inode, i_mtime),
    F(Inode, i_atime_nsec), F(Inode, i_ctime_nsec), F(Inode, i_mtime_nsec), F(Inode, i_generation),
    F(Inode, i_current_depth), F(Inode, i_xattr_nid), F(Inode, i_flags), F(Inode, i_pino), F(Inode, i_namelen),
    F(Inode, i_dir_level), FA(Inode, i_addr, kDefAddrsPerInode), FA(Inode, i_nid, 5),
    Field{"i_ext.fofs", offsetof(Inode, i_ext) + offsetof(Extent, fofs), 4},
    Field{"i_ext.blk_addr", offsetof(Inode, i_ext) + offsetof(Extent, blk_addr), 4},
    Field{"i_ext.len", offsetof(Inode, i_ext) + offsetof(Extent, len), 4},
    Field{"i_extra_isize", kExtraIsizeOffset + offsetof(InodeExtra, i_extra_isize), 2},
    Field{"i_inline_xattr_size", kExtraIsizeOffset + offsetof(InodeExtra, i_inline_xattr_size), 2},
    Field{"i_projid", kExtraIsizeOffset + offsetof(InodeExtra, i_projid), 4},
    Field{"i_inode_checksum", kExtraIsizeOffset + offsetof(InodeExtra, i_inode_checksum), 4},
    Field{"i_crtime", kExtraIsizeOffset + offsetof(InodeExtra, i_crtime), 8},
    Field{"i_compr_blocks", kExtraIsizeOffset + offsetof(InodeExtra, i_compr_blocks), 8},
    Field{"i_compress_algorithm", kExtraIsizeOffset + offsetof(InodeExtra, i_compress_algorithm), 1},
    Field{"i_log_cluster_size", kExtraIsizeOffset + offsetof(InodeExtra, i_log_cluster_size), 1},
    Field{"i_compress_flag", kExtraIsizeOffset + offsetof(InodeExtra, i_compress_flag), 2},
};

const Field kFooterFields[] = {
    Field{"footer.nid", kNodeFooterOffset + offsetof(NodeFooter, nid), 4},
    Field{"footer.ino", kNodeFooterOffset + offsetof(NodeFooter, ino), 4},
    Field{"footer.flag", kNodeFooterOffset + offsetof(NodeFooter, flag), 4},
    Field{"footer.cp_ver", kNodeFooterOffset + offsetof(NodeFooter, cp_ver), 8},
    Field{"footer.next_blkaddr", kNodeFooterOffset + offsetof(NodeFooter, next_blkaddr), 4},
    Field{"addr", 0, 4, kDefAddrsPerBlock},
    Field{"nid", 0, 4, kNidsPerBlock},
};

const Field kNatFields[] = {F(NatEntry, version), F(NatEntry, ino), F(NatEntry, block_addr)};
const Field kSsaFields[] = {F(Summary, nid), F(Summary, version), F(Summary, ofs_in_node)};
const Field kDentryFields[] = {F(DirEntry, hash_code), F(DirEntry, ino), F(DirEntry, name_len), F(DirEntry, file_type)};

#undef F
#undef FA

std::uint32_t extra_isize_of(const Node& n) {
  return (n.i.i_inline & inline_flag::extra_attr) ? n.i.extra.i_extra_isize.get() : 0;
}

std::uint32_t inline_xattr_addrs_of(const SuperBlock& sb, const Node& n) {
  if (!(n.i.i_inline & inline_flag::xattr)) return 0;
  if ((sb.feature.get() & feature::flexible_inline_xattr) && (n.i.i_inline & inline_flag::extra_attr))
    return n.i.extra.i_inline_xattr_size.get();
  return kDefaultInlineXattrAddrs;
}

FileType ftype_of_mode(std::uint16_t mode) {
  switch (mode & 0xF000) {
    case 0x8000: return FileType::reg_file;
    case 0x4000: return FileType::dir;
    case 0x2000: return FileType::chrdev;
    case 0x6000: return FileType::blkdev;
    case 0x1000: return FileType::fifo;
    case 0xC000: return FileType::sock;
    case 0xA000: return FileType::symlink;
    default: return FileType::unknown;
  }
}

}  // namespace

// ---------------------------------------------------------------------------

Result<std::unique_ptr<Corruptor>> Corruptor::open(BlockDevice& dev) {
  std::unique_ptr<Corruptor> c(new Corruptor(dev));
  F2FSCORE_TRY(c->reopen());
  return c;
}

// After an edit the volume may no longer open (that is often the point of
// the edit): then the lookups keep using the volume as it was opened last,
// and stale() says why.
Status Corruptor::reopen() {
  VolumeOpenOptions o;
  o.verify_inode_checksums = false;
  auto v = Volume::open(dev_, o);
  if (!v) {
    if (!vol_) return make_error(v.error());
    stale_ = v.error().to_string();
    return {};
  }
  vol_ = std::move(*v);
  stale_.clear();
  return {};
}

Status Corruptor::read(std::uint64_t blk, std::uint8_t* out) {
  return read_at(dev_, blk * kBlockSize, std::span<std::uint8_t>(out, kBlockSize));
}
Status Corruptor::write(std::uint64_t blk, const std::uint8_t* in) {
  return write_at(dev_, blk * kBlockSize, std::span<const std::uint8_t>(in, kBlockSize));
}

std::uint64_t Corruptor::cp_start(bool other) const {
  const int pack = vol_->open_report().checkpoint_pack ^ (other ? 1 : 0);
  return sb().cp_blkaddr.get() + static_cast<std::uint64_t>(pack) * kBlocksPerSeg;
}

Result<nid_t> Corruptor::ino(std::string_view path) {
  auto in = vol_->resolve(path);
  if (!in) return make_error(in.error());
  return in->ino;
}

Result<block_t> Corruptor::node_blk(nid_t nid) {
  auto ne = vol_->nat_entry(nid);
  if (!ne) return make_error(ne.error());
  return ne->block_addr.get();
}

Result<Node> Corruptor::node(nid_t nid) {
  auto b = node_blk(nid);
  if (!b) return make_error(b.error());
  Node n;
  F2FSCORE_TRY(read(*b, reinterpret_cast<std::uint8_t*>(&n)));
  return n;
}

Result<std::uint32_t> Corruptor::data_slot0(nid_t ino) {
  auto n = node(ino);
  if (!n) return make_error(n.error());
  return extra_isize_of(*n) / 4;
}

Result<std::pair<nid_t, std::uint32_t>> Corruptor::data_owner(nid_t ino, std::uint64_t index) {
  auto in = node(ino);
  if (!in) return make_error(in.error());
  const std::uint64_t api = kDefAddrsPerInode - extra_isize_of(*in) / 4 - inline_xattr_addrs_of(sb(), *in);
  if (index < api) return std::make_pair(ino, static_cast<std::uint32_t>(index));
  index -= api;
  const std::uint64_t apb = kDefAddrsPerBlock, npb = kNidsPerBlock;
  auto child = [&](nid_t parent, std::uint32_t k) -> Result<nid_t> {
    auto n = node(parent);
    if (!n) return make_error(n.error());
    const nid_t c = n->in.nid[k].get();
    if (c == 0) return make_error(Errc::not_found, "hole in the node tree");
    return c;
  };
  for (int i = 0; i < 2; ++i, index -= apb)
    if (index < apb) {
      const nid_t d = in->i.i_nid[i].get();
      if (d == 0) return make_error(Errc::not_found, "hole in the node tree");
      return std::make_pair(d, static_cast<std::uint32_t>(index));
    }
  for (int i = 2; i < 4; ++i, index -= apb * npb)
    if (index < apb * npb) {
      const nid_t ind = in->i.i_nid[i].get();
      if (ind == 0) return make_error(Errc::not_found, "hole in the node tree");
      auto d = child(ind, static_cast<std::uint32_t>(index / apb));
      if (!d) return make_error(d.error());
      return std::make_pair(*d, static_cast<std::uint32_t>(index % apb));
    }
  const nid_t din = in->i.i_nid[4].get();
  if (din == 0) return make_error(Errc::not_found, "hole in the node tree");
  auto ind = child(din, static_cast<std::uint32_t>(index / (apb * npb)));
  if (!ind) return make_error(ind.error());
  auto d = child(*ind, static_cast<std::uint32_t>(index / apb % npb));
  if (!d) return make_error(d.error());
  return std::make_pair(*d, static_cast<std::uint32_t>(index % apb));
}

Result<block_t> Corruptor::data_blk(nid_t ino, std::uint64_t index) {
  auto o = data_owner(ino, index);
  if (!o) return make_error(o.error());
  auto n = node(o->first);
  if (!n) return make_error(n.error());
  if (o->first == ino && n->footer.nid.get() == n->footer.ino.get())
    return n->i.i_addr[extra_isize_of(*n) / 4 + o->second].get();
  return n->dn.addr[o->second].get();
}

// NAT journal: in the hot data log's summary; SIT journal: the cold data
// log's. Compact summaries: both journals at the start of the first block.
static void journal_locs(const Checkpoint& cp, std::uint64_t start, Loc* nat, Loc* sit) {
  const std::uint64_t sum = start + cp.cp_pack_start_sum.get();
  if (cp.ckpt_flags.get() & cp_flag::compact_sum) {
    *nat = Loc{sum, 0, true};
    *sit = Loc{sum, kSumJournalSize, true};
  } else {
    *nat = Loc{sum + 0, offsetof(SummaryBlock, journal), true};
    *sit = Loc{sum + 2, offsetof(SummaryBlock, journal), true};
  }
}

Result<Loc> Corruptor::nat_loc(nid_t nid) {
  if (nid >= vol_->max_nid()) return bad("nid " + std::to_string(nid) + " is past the NAT");
  Loc nj, sj;
  journal_locs(cp(), cp_start(), &nj, &sj);
  std::vector<std::uint8_t> b(kBlockSize);
  F2FSCORE_TRY(read(nj.blk, b.data()));
  const std::uint32_t n = std::min<std::uint32_t>(load_le16(b.data(), nj.off), kNatJournalEntries);
  for (std::uint32_t i = 0; i < n; ++i) {
    const std::uint32_t e = nj.off + 2 + i * static_cast<std::uint32_t>(sizeof(NatJournalEntry));
    if (load_le32(b.data(), e) == nid) return Loc{nj.blk, e + 4, true};
  }
  const std::uint32_t block_off = nid / kNatEntryPerBlock;
  std::uint64_t addr = sb().nat_blkaddr.get() +
                       (static_cast<std::uint64_t>(block_off >> kLogBlocksPerSeg) << (kLogBlocksPerSeg + 1)) +
                       (block_off & (kBlocksPerSeg - 1));
  // The NAT version bitmap (__bitmap_ptr() in fs/f2fs/checkpoint.h).
  const auto cpb = vol_->checkpoint_blocks();
  const std::uint8_t* base = cpb.data() + kCpBitmapOffset;
  const std::uint8_t* bm = (cp().ckpt_flags.get() & cp_flag::large_nat_bitmap) ? base + 4
                           : sb().cp_payload.get() > 0                         ? base
                                                                               : base + cp().sit_ver_bitmap_bytesize.get();
  if (test_bit_msb(bm, block_off)) addr += kBlocksPerSeg;
  return Loc{addr, static_cast<std::uint32_t>((nid % kNatEntryPerBlock) * sizeof(NatEntry)), false};
}

Result<Loc> Corruptor::sit_loc(std::uint32_t segno) {
  if (segno >= vol_->main_segments()) return bad("segment " + std::to_string(segno) + " is past the main area");
  Loc nj, sj;
  journal_locs(cp(), cp_start(), &nj, &sj);
  std::vector<std::uint8_t> b(kBlockSize);
  F2FSCORE_TRY(read(sj.blk, b.data()));
  const std::uint32_t n = std::min<std::uint32_t>(load_le16(b.data(), sj.off), kSitJournalEntries);
  for (std::uint32_t i = 0; i < n; ++i) {
    const std::uint32_t e = sj.off + 2 + i * static_cast<std::uint32_t>(sizeof(SitJournalEntry));
    if (load_le32(b.data(), e) == segno) return Loc{sj.blk, e + 4, true};
  }
  const std::uint32_t blk = segno / kSitEntryPerBlock;
  std::uint64_t addr = sb().sit_blkaddr.get() + blk;
  const auto cpb = vol_->checkpoint_blocks();
  const std::uint8_t* base = cpb.data() + kCpBitmapOffset;
  const std::uint8_t* bm = (cp().ckpt_flags.get() & cp_flag::large_nat_bitmap)
                               ? base + 4 + cp().nat_ver_bitmap_bytesize.get()
                           : sb().cp_payload.get() > 0 ? cpb.data() + kBlockSize
                                                       : base;
  if (test_bit_msb(bm, blk)) addr += sb().segment_count_sit.get() / 2 * kBlocksPerSeg;
  return Loc{addr, static_cast<std::uint32_t>((segno % kSitEntryPerBlock) * sizeof(SitEntry)), false};
}

Result<Loc> Corruptor::ssa_loc(block_t blkaddr) {
  if (!vol_->is_valid_main_addr(blkaddr)) return bad("block " + std::to_string(blkaddr) + " is outside the main area");
  const std::uint32_t segno = vol_->segno_of(blkaddr);
  const std::uint32_t ofs = static_cast<std::uint32_t>(blkaddr - vol_->segment_start(segno));
  const Checkpoint& c = cp();
  const std::uint32_t flags = c.ckpt_flags.get();
  const std::uint64_t start = cp_start();
  for (unsigned i = 0; i < 3; ++i) {
    if (c.cur_data_segno[i].get() == segno) {
      // read_compacted_summaries() / read_normal_summaries() in fs/f2fs/segment.c.
      if (!(flags & cp_flag::compact_sum))
        return Loc{start + c.cp_pack_start_sum.get() + i, ofs * kSumEntrySize, true};
      if (ofs >= c.cur_data_blkoff[i].get())
        return make_error(Errc::not_found, "block " + std::to_string(blkaddr) + " is past its active log's next block: no summary");
      std::uint64_t blk = start + c.cp_pack_start_sum.get();
      std::uint32_t off = 2 * kSumJournalSize;
      for (unsigned t = 0; t < 3; ++t)
        for (std::uint32_t j = 0; j < c.cur_data_blkoff[t].get(); ++j) {
          if (t == i && j == ofs) return Loc{blk, off, true};
          off += kSumEntrySize;
          if (off + kSumEntrySize > kBlockSize - kSumFooterSize) {
            ++blk;
            off = 0;
          }
        }
    }
    if (c.cur_node_segno[i].get() == segno && (flags & (cp_flag::umount | cp_flag::fastboot)))
      return Loc{start + c.cp_pack_total_block_count.get() - 4 + i, ofs * kSumEntrySize, true};
  }
  return Loc{sb().ssa_blkaddr.get() + segno, ofs * kSumEntrySize, false};
}

// The dentry areas of a directory: its inline area, or each mapped block.
Result<std::vector<DentryLoc>> Corruptor::dentry_areas(std::string_view dir_path) {
  auto d = ino(dir_path);
  if (!d) return make_error(d.error());
  auto dn = node(*d);
  if (!dn) return make_error(dn.error());
  auto nb = node_blk(*d);
  if (!nb) return make_error(nb.error());
  std::vector<DentryLoc> out;
  DentryLoc L;
  L.dir = *d;
  if (dn->i.i_inline & inline_flag::dentry) {
    const std::uint32_t extra = extra_isize_of(*dn);
    const std::uint32_t inl = 4 * (kDefAddrsPerInode - extra / 4 - inline_xattr_addrs_of(sb(), *dn) - kDefInlineReservedSize);
    const std::uint32_t base = static_cast<std::uint32_t>(offsetof(Inode, i_addr)) + 4 * (extra / 4 + kDefInlineReservedSize);
    const auto lay = inline_dentry_layout(inl);
    L.is_inline = true;
    L.blk = *nb;
    L.bitmap_off = base;
    L.dentry_off = base + lay.dentry_offset();
    L.name_off = base + lay.filename_offset();
    L.nr_slots = lay.nr_slots;
    out.push_back(L);
    return out;
  }
  const std::uint64_t nblocks = dn->i.i_size.get() / kBlockSize;
  for (std::uint64_t bidx = 0; bidx < nblocks; ++bidx) {
    auto a = data_blk(*d, bidx);
    if (!a) continue;
    if (*a == kNullAddr || *a == kNewAddr || !vol_->is_valid_main_addr(*a)) continue;
    L.blk = *a;
    L.bidx = static_cast<std::uint32_t>(bidx);
    L.bitmap_off = offsetof(DentryBlock, dentry_bitmap);
    L.dentry_off = offsetof(DentryBlock, dentry);
    L.name_off = offsetof(DentryBlock, filename);
    L.nr_slots = kNrDentryInBlock;
    out.push_back(L);
  }
  return out;
}

Result<DentryLoc> Corruptor::dentry(std::string_view dir_path, std::string_view name) {
  auto areas = dentry_areas(dir_path);
  if (!areas) return make_error(areas.error());
  std::vector<std::uint8_t> b(kBlockSize);
  for (DentryLoc L : *areas) {
    F2FSCORE_TRY(read(L.blk, b.data()));
    const std::uint8_t* bm = b.data() + L.bitmap_off;
    for (std::uint32_t s = 0; s < L.nr_slots;) {
      if (!test_bit_le(bm, s)) {
        ++s;
        continue;
      }
      DirEntry de;
      std::memcpy(&de, b.data() + L.dentry_off + s * sizeof(DirEntry), sizeof de);
      const std::uint32_t len = de.name_len.get();
      if (len == name.size() && s * kSlotLen + len <= L.nr_slots * kSlotLen &&
          std::memcmp(b.data() + L.name_off + s * kSlotLen, name.data(), len) == 0) {
        L.slot = s;
        L.de = de;
        return L;
      }
      s += std::max<std::uint32_t>(1, (len + kSlotLen - 1) / kSlotLen);
    }
  }
  return make_error(Errc::not_found, std::string("no entry \"") + std::string(name) + "\" in " + std::string(dir_path));
}

Result<nid_t> Corruptor::free_nid(nid_t from) {
  for (nid_t n = std::max<nid_t>(from, sb().root_ino.get() + 1); n < vol_->max_nid(); ++n) {
    auto ne = vol_->nat_entry(n);
    if (ne && ne->block_addr.get() == 0 && ne->ino.get() == 0) return n;
  }
  return make_error(Errc::no_space, "no free nid");
}

Result<block_t> Corruptor::free_block() {
  const Checkpoint& c = cp();
  for (std::uint32_t s = vol_->main_segments() / 2; s < vol_->main_segments(); ++s) {
    bool active = false;
    for (unsigned i = 0; i < 3; ++i) active = active || c.cur_data_segno[i].get() == s || c.cur_node_segno[i].get() == s;
    if (active) continue;
    auto si = vol_->segment(s);
    if (si && si->valid_blocks == 0) return static_cast<block_t>(vol_->segment_start(s));
  }
  return make_error(Errc::no_space, "no free segment");
}

Result<std::uint64_t> Corruptor::resolve(std::string_view arg, bool block) {
  if (arg.empty() || arg[0] != '/') {
    auto v = parse_num(arg);
    if (!v) return bad("not a number or a path: \"" + std::string(arg) + "\"");
    return *v;
  }
  if (auto at = arg.rfind('@'); at != std::string_view::npos) {
    auto k = parse_num(arg.substr(at + 1));
    if (!k) return bad("bad block index in \"" + std::string(arg) + "\"");
    auto i = ino(arg.substr(0, at));
    if (!i) return make_error(i.error());
    auto b = data_blk(*i, *k);
    if (!b) return make_error(b.error());
    return *b;
  }
  auto i = ino(arg);
  if (!i) return make_error(i.error());
  if (!block) return *i;
  auto b = node_blk(*i);
  if (!b) return make_error(b.error());
  return *b;
}

Status Corruptor::seal_node_block(std::uint8_t* p) {
  const auto* n = reinterpret_cast<const Node*>(p);
  const std::uint32_t extra = n->i.extra.i_extra_isize.get();
  if ((sb().feature.get() & feature::inode_checksum) && n->footer.nid.get() == n->footer.ino.get() &&
      (n->i.i_inline & inline_flag::extra_attr) && extra >= offsetof(InodeExtra, i_inode_checksum) + 4 &&
      extra <= kDefAddrsPerInode * 4) {
    reinterpret_cast<Node*>(p)->i.extra.i_inode_checksum.set(inode_checksum(inode_checksum_seed(sb().uuid), p));
  }
  return {};
}

// Rewrites a pack's blocks (header at [0], closing copy at [total-1]) after
// an edit of the header: the closing copy follows the header, the CRCs are
// re-sealed, and the nat_bits header (which carries the CP's CRC) follows.
Status Corruptor::rewrite_cp_blocks(bool other, std::vector<std::uint8_t>& pack, std::uint32_t old_total, bool raw) {
  const std::uint64_t start = cp_start(other);
  const std::uint32_t total = load_le32(pack.data(), offsetof(Checkpoint, cp_pack_total_block_count));
  std::vector<std::uint8_t> old_cp(kBlockSize);
  F2FSCORE_TRY(read(start, old_cp.data()));
  if (!raw) seal_checkpoint(pack.data());
  if (total >= 2 && total <= kBlocksPerSeg && pack.size() >= static_cast<std::size_t>(total) * kBlockSize)
    std::memcpy(pack.data() + static_cast<std::size_t>(total - 1) * kBlockSize, pack.data(), kBlockSize);
  else if (old_total >= 2 && old_total <= kBlocksPerSeg && pack.size() >= static_cast<std::size_t>(old_total) * kBlockSize)
    std::memcpy(pack.data() + static_cast<std::size_t>(old_total - 1) * kBlockSize, pack.data(), kBlockSize);
  for (std::size_t i = 0; i * kBlockSize < pack.size(); ++i) F2FSCORE_TRY(write(start + i, pack.data() + i * kBlockSize));
  // nat_bits at the end of the CP segment (f2fs_write_checkpoint()).
  if (!raw && (load_le32(pack.data(), offsetof(Checkpoint, ckpt_flags)) & cp_flag::nat_bits)) {
    const auto nb = nat_bits_size(sb().segment_count_nat.get());
    const std::uint64_t nat_bits_blk = start + kBlocksPerSeg - nb.blocks;
    std::vector<std::uint8_t> h(kBlockSize);
    F2FSCORE_TRY(read(nat_bits_blk, h.data()));
    if (load_le64(h.data()) == nat_bits_header(old_cp.data())) {
      store_le64(h.data(), 0, nat_bits_header(pack.data()));
      F2FSCORE_TRY(write(nat_bits_blk, h.data()));
    }
  }
  return reopen();
}

Status Corruptor::edit_cp(bool other, const std::string& field, int op, std::uint64_t value, bool raw) {
  const std::uint64_t start = cp_start(other);
  std::vector<std::uint8_t> head(kBlockSize);
  F2FSCORE_TRY(read(start, head.data()));
  const std::uint32_t total = load_le32(head.data(), offsetof(Checkpoint, cp_pack_total_block_count));
  if (total < 2 || total > kBlocksPerSeg) return bad("checkpoint pack at block " + std::to_string(start) + " has a bad block count");
  std::vector<std::uint8_t> pack(static_cast<std::size_t>(total) * kBlockSize);
  for (std::uint32_t i = 0; i < total; ++i) F2FSCORE_TRY(read(start + i, pack.data() + static_cast<std::size_t>(i) * kBlockSize));
  std::uint32_t off = 0;
  unsigned size = 4;
  if (field == "crc") {
    off = std::min<std::uint32_t>(load_le32(pack.data(), offsetof(Checkpoint, checksum_offset)), kCpChecksumOffset);
    raw = true;
  } else {
    auto f = find_field(kCpFields, std::size(kCpFields), field);
    if (!f) return bad("unknown checkpoint field \"" + field + "\"");
    off = f->first;
    size = f->second;
  }
  store(pack.data() + off, size, combine(load(pack.data() + off, size), op, value));
  if (raw) {  // the closing copy gets the same bytes
    std::memcpy(pack.data() + static_cast<std::size_t>(total - 1) * kBlockSize + off, pack.data() + off, size);
    for (std::uint32_t i : {0u, total - 1}) F2FSCORE_TRY(write(start + i, pack.data() + static_cast<std::size_t>(i) * kBlockSize));
    return reopen();
  }
  return rewrite_cp_blocks(other, pack, total, false);
}

Status Corruptor::orphan_add(nid_t ino) {
  const std::uint64_t start = cp_start();
  const Checkpoint c = cp();
  const std::uint32_t total = c.cp_pack_total_block_count.get();
  std::vector<std::uint8_t> pack(static_cast<std::size_t>(total) * kBlockSize);
  for (std::uint32_t i = 0; i < total; ++i) F2FSCORE_TRY(read(start + i, pack.data() + static_cast<std::size_t>(i) * kBlockSize));
  const std::uint32_t first = 1 + sb().cp_payload.get();
  if (c.ckpt_flags.get() & cp_flag::orphan_present) {
    // Append to the last orphan block (orphan blocks sit between the
    // payload and cp_pack_start_sum; recover_orphan_inodes()).
    const std::uint32_t last = c.cp_pack_start_sum.get() - 1;
    auto* ob = reinterpret_cast<OrphanBlock*>(pack.data() + static_cast<std::size_t>(last) * kBlockSize);
    const std::uint32_t n = ob->entry_count.get();
    if (n >= kOrphansPerBlock) return make_error(Errc::no_space, "the last orphan block is full");
    ob->ino[n].set(ino);
    ob->entry_count.set(n + 1);
    F2FSCORE_TRY(write(start + last, pack.data() + static_cast<std::size_t>(last) * kBlockSize));
    return reopen();
  }
  if (total + 1 > kBlocksPerSeg - nat_bits_size(sb().segment_count_nat.get()).blocks)
    return make_error(Errc::no_space, "no room for an orphan block in the checkpoint pack");
  std::vector<std::uint8_t> ob(kBlockSize, 0);
  auto* o = reinterpret_cast<OrphanBlock*>(ob.data());
  o->ino[0].set(ino);
  o->blk_addr.set(0);
  o->blk_count.set(1);
  o->entry_count.set(1);
  pack.insert(pack.begin() + static_cast<std::ptrdiff_t>(first) * kBlockSize, ob.begin(), ob.end());
  auto* h = reinterpret_cast<Checkpoint*>(pack.data());
  h->cp_pack_start_sum.set(h->cp_pack_start_sum.get() + 1);
  h->cp_pack_total_block_count.set(total + 1);
  h->ckpt_flags.set(h->ckpt_flags.get() | cp_flag::orphan_present);
  return rewrite_cp_blocks(false, pack, total, false);
}

Status Corruptor::fsync_chain(nid_t ino, std::string_view kind) {
  if (kind != "loop" && kind != "bad") return bad("fsync_chain wants loop or bad");
  auto n = node(ino);
  if (!n) return make_error(n.error());
  const Checkpoint& c = cp();
  // is_recoverable_dnode() in fs/f2fs/recovery.c: the footer's cp_ver is the
  // checkpoint version, with the CP's CRC in the high half under
  // CP_CRC_RECOVERY_FLAG.
  std::uint64_t ver = c.checkpoint_ver.get();
  if (c.ckpt_flags.get() & cp_flag::crc_recovery) {
    const auto cpb = vol_->checkpoint_blocks();
    const std::uint32_t crc_ofs = std::min<std::uint32_t>(c.checksum_offset.get(), kCpChecksumOffset);
    ver |= static_cast<std::uint64_t>(load_le32(cpb.data(), crc_ofs)) << 32;
  }
  const std::uint64_t blk = vol_->segment_start(c.cur_node_segno[1].get()) + c.cur_node_blkoff[1].get();
  Node w = *n;
  w.footer.flag.set((w.footer.flag.get() & ~7u) | node_flag::fsync | node_flag::dent);
  w.footer.cp_ver.set(ver);
  if (kind == "loop") {
    w.footer.next_blkaddr.set(static_cast<std::uint32_t>(blk));
  } else {
    const nid_t past = vol_->max_nid() + 7;
    w.footer.nid.set(past);
    w.footer.ino.set(past);
    w.footer.next_blkaddr.set(0);
  }
  auto* p = reinterpret_cast<std::uint8_t*>(&w);
  F2FSCORE_TRY(seal_node_block(p));
  F2FSCORE_TRY(write(blk, p));
  return reopen();
}

Status Corruptor::dentry_add(std::string_view dir_path, std::string_view name, std::string_view value) {
  auto colon = value.find(':');
  auto v = resolve(value.substr(0, colon), false);
  if (!v) return make_error(v.error());
  const nid_t target = static_cast<nid_t>(*v);
  std::uint8_t ftype = 0;
  if (colon != std::string_view::npos) {
    auto t = parse_num(value.substr(colon + 1));
    if (!t) return bad("bad file type in \"" + std::string(value) + "\"");
    ftype = static_cast<std::uint8_t>(*t);
  } else {
    auto tn = node(target);
    ftype = tn ? static_cast<std::uint8_t>(ftype_of_mode(tn->i.i_mode.get())) : 1;
  }
  auto areas = dentry_areas(dir_path);
  if (!areas) return make_error(areas.error());
  const std::uint32_t need = std::max<std::uint32_t>(1, static_cast<std::uint32_t>((name.size() + kSlotLen - 1) / kSlotLen));
  std::vector<std::uint8_t> b(kBlockSize);
  for (const DentryLoc& a : *areas) {
    F2FSCORE_TRY(read(a.blk, b.data()));
    std::uint8_t* bm = b.data() + a.bitmap_off;
    for (std::uint32_t s = 0; s + need <= a.nr_slots; ++s) {
      bool free = true;
      for (std::uint32_t k = 0; k < need && free; ++k) free = !test_bit_le(bm, s + k);
      if (!free) continue;
      DirEntry de{};
      de.hash_code.set(name == "." || name == ".." ? 0u : dentry_hash(name));
      de.ino.set(target);
      de.name_len.set(static_cast<std::uint16_t>(name.size()));
      de.file_type = ftype;
      std::memcpy(b.data() + a.dentry_off + s * sizeof(DirEntry), &de, sizeof de);
      std::memcpy(b.data() + a.name_off + s * kSlotLen, name.data(), name.size());
      for (std::uint32_t k = 0; k < need; ++k) set_bit_le(bm, s + k);
      if (a.is_inline) F2FSCORE_TRY(seal_node_block(b.data()));
      F2FSCORE_TRY(write(a.blk, b.data()));
      return reopen();
    }
  }
  return make_error(Errc::no_space, "no room for \"" + std::string(name) + "\" in " + std::string(dir_path));
}

Status Corruptor::dentry_move(std::string_view dir_path, std::string_view name, std::uint32_t bidx) {
  auto L = dentry(dir_path, name);
  if (!L) return make_error(L.error());
  if (L->is_inline) return bad("dentry_move: the directory is inline");
  auto d = ino(dir_path);
  auto to = data_blk(*d, bidx);
  if (!to) return make_error(to.error());
  if (*to == kNullAddr || *to == kNewAddr || !vol_->is_valid_main_addr(*to))
    return bad("dentry_move: directory block " + std::to_string(bidx) + " is not mapped");
  if (*to == L->blk) return bad("dentry_move: the entry is in that block already");
  const std::uint32_t need = std::max<std::uint32_t>(1, (L->de.name_len.get() + kSlotLen - 1) / kSlotLen);
  std::vector<std::uint8_t> src(kBlockSize), dst(kBlockSize);
  F2FSCORE_TRY(read(L->blk, src.data()));
  F2FSCORE_TRY(read(*to, dst.data()));
  for (std::uint32_t s = 0; s + need <= kNrDentryInBlock; ++s) {
    bool free = true;
    for (std::uint32_t k = 0; k < need && free; ++k) free = !test_bit_le(dst.data(), s + k);
    if (!free) continue;
    std::memcpy(dst.data() + L->dentry_off + s * sizeof(DirEntry), src.data() + L->dentry_off + L->slot * sizeof(DirEntry),
                sizeof(DirEntry));
    std::memcpy(dst.data() + L->name_off + s * kSlotLen, src.data() + L->name_off + L->slot * kSlotLen, need * kSlotLen);
    for (std::uint32_t k = 0; k < need; ++k) {
      set_bit_le(dst.data(), s + k);
      clear_bit_le(src.data(), L->slot + k);
    }
    F2FSCORE_TRY(write(*to, dst.data()));
    F2FSCORE_TRY(write(L->blk, src.data()));
    return reopen();
  }
  return make_error(Errc::no_space, "dentry_move: no room in block " + std::to_string(bidx));
}

// ---------------------------------------------------------------------------

Status Corruptor::apply(std::string_view edit) {
  std::string_view s = edit;
  bool raw = false;
  if (s.substr(0, 4) == "raw:") {
    raw = true;
    s.remove_prefix(4);
  }
  const auto eq = s.find('=');
  if (eq == std::string_view::npos || eq == 0) return bad("edit \"" + std::string(edit) + "\" has no '='");
  int op = kSet;
  std::size_t lhs_end = eq;
  switch (s[eq - 1]) {
    case '+': op = kAdd; --lhs_end; break;
    case '-': op = kSub; --lhs_end; break;
    case '|': op = kOr; --lhs_end; break;
    case '&': op = kAnd; --lhs_end; break;
    case '^': op = kXor; --lhs_end; break;
    default: break;
  }
  const std::string_view lhs = s.substr(0, lhs_end);
  const std::string_view rhs = s.substr(eq + 1);
  // TARGET[ARG].FIELD
  std::string_view target = lhs, arg, field;
  if (auto lb = lhs.find('['); lb != std::string_view::npos && lb < lhs.find('.')) {
    const auto rb = lhs.find("].", lb);
    const auto rb_end = lhs.size() - 1;
    if (rb != std::string_view::npos) {
      arg = lhs.substr(lb + 1, rb - lb - 1);
      field = lhs.substr(rb + 2);
    } else if (lhs[rb_end] == ']') {
      arg = lhs.substr(lb + 1, rb_end - lb - 1);
    } else {
      return bad("edit \"" + std::string(edit) + "\": unbalanced '['");
    }
    target = lhs.substr(0, lb);
  } else if (auto dot = lhs.find('.'); dot != std::string_view::npos) {
    target = lhs.substr(0, dot);
    field = lhs.substr(dot + 1);
  }
  const std::string fld(field);
  auto value_num = [&]() -> Result<std::uint64_t> { return resolve(rhs, false); };
  auto split_path = [&](std::string_view p) -> std::pair<std::string, std::string> {
    const auto sl = p.rfind('/');
    std::string dir(p.substr(0, sl));
    if (dir.empty()) dir = "/";
    return {dir, std::string(p.substr(sl + 1))};
  };
  // A read-modify-write of one integer field in a block.
  auto rmw = [&](std::uint64_t blk, std::uint32_t off, unsigned size, bool reseal_inode) -> Status {
    auto v = value_num();
    if (!v) return make_error(v.error());
    std::vector<std::uint8_t> b(kBlockSize);
    F2FSCORE_TRY(read(blk, b.data()));
    store(b.data() + off, size, combine(load(b.data() + off, size), op, *v));
    if (reseal_inode && !raw) F2FSCORE_TRY(seal_node_block(b.data()));
    F2FSCORE_TRY(write(blk, b.data()));
    return reopen();
  };

  if (target == "sb") {
    auto copy = parse_num(arg);
    if (!copy || *copy > 1) return bad("sb[0] or sb[1]");
    auto f = find_field(kSbFields, std::size(kSbFields), fld);
    if (!f) return bad("unknown superblock field \"" + fld + "\"");
    auto v = value_num();
    if (!v) return make_error(v.error());
    std::vector<std::uint8_t> b(kBlockSize);
    F2FSCORE_TRY(read(*copy, b.data()));
    std::uint8_t* p = b.data() + kSuperOffset + f->first;
    store(p, f->second, combine(load(p, f->second), op, *v));
    auto* sbp = reinterpret_cast<SuperBlock*>(b.data() + kSuperOffset);
    if (!raw && fld != "crc" && (sbp->feature.get() & feature::sb_checksum) && sbp->checksum_offset.get() == kSbChecksumOffset)
      sbp->crc.set(superblock_checksum(*sbp));
    F2FSCORE_TRY(write(*copy, b.data()));
    return reopen();
  }
  if (target == "cp" || target == "cpx") {
    auto v = value_num();
    if (!v) return make_error(v.error());
    return edit_cp(target == "cpx", fld, op, *v, raw);
  }
  if (target == "nat") {
    auto n = resolve(arg, false);
    if (!n) return make_error(n.error());
    auto f = find_field(kNatFields, std::size(kNatFields), fld);
    if (!f) return bad("unknown NAT field \"" + fld + "\"");
    auto L = nat_loc(static_cast<nid_t>(*n));
    if (!L) return make_error(L.error());
    return rmw(L->blk, L->off + f->first, f->second, false);
  }
  if (target == "natj" || target == "sitj") {
    Loc nj, sj;
    journal_locs(cp(), cp_start(), &nj, &sj);
    const Loc& L = target == "natj" ? nj : sj;
    if (fld != "n_nats" && fld != "n_sits") return bad("natj.n_nats or sitj.n_sits");
    return rmw(L.blk, L.off, 2, false);
  }
  if (target == "sit") {
    auto sn = arg.empty() || arg[0] != '/' ? resolve(arg, false) : resolve(arg, true);
    if (!sn) return make_error(sn.error());
    std::uint64_t segno = *sn;
    if (!arg.empty() && arg[0] == '/') segno = vol_->segno_of(static_cast<block_t>(*sn));
    auto L = sit_loc(static_cast<std::uint32_t>(segno));
    if (!L) return make_error(L.error());
    auto v = value_num();
    if (!v) return make_error(v.error());
    std::vector<std::uint8_t> b(kBlockSize);
    F2FSCORE_TRY(read(L->blk, b.data()));
    auto* e = reinterpret_cast<SitEntry*>(b.data() + L->off);
    if (fld == "vblocks") {
      e->vblocks.set(make_sit_vblocks(sit_type(*e), static_cast<std::uint16_t>(combine(sit_vblocks(*e), op, *v))));
    } else if (fld == "type") {
      e->vblocks.set(make_sit_vblocks(static_cast<std::uint8_t>(combine(sit_type(*e), op, *v)), sit_vblocks(*e)));
    } else if (fld == "mtime") {
      e->mtime.set(combine(e->mtime.get(), op, *v));
    } else if (fld.rfind("valid_map[", 0) == 0 && fld.back() == ']') {
      auto bit = parse_num(std::string_view(fld).substr(10, fld.size() - 11));
      if (!bit || *bit >= kBlocksPerSeg) return bad("valid_map[0..511]");
      const bool cur = test_bit_msb(e->valid_map, *bit);
      const bool nv = combine(cur ? 1 : 0, op, *v) & 1;
      if (nv) set_bit_msb(e->valid_map, *bit); else clear_bit_msb(e->valid_map, *bit);
    } else {
      return bad("unknown SIT field \"" + fld + "\"");
    }
    F2FSCORE_TRY(write(L->blk, b.data()));
    return reopen();
  }
  if (target == "ssa") {
    auto blk = resolve(arg, true);
    if (!blk) return make_error(blk.error());
    auto f = find_field(kSsaFields, std::size(kSsaFields), fld);
    if (!f) return bad("unknown summary field \"" + fld + "\"");
    auto L = ssa_loc(static_cast<block_t>(*blk));
    if (!L) return make_error(L.error());
    return rmw(L->blk, L->off + f->first, f->second, false);
  }
  if (target == "nat_bits") {
    const auto nb = nat_bits_size(sb().segment_count_nat.get());
    const std::uint64_t first = cp_start() + kBlocksPerSeg - nb.blocks;
    std::uint64_t byte = 8;
    std::string_view fv = fld;
    if (fv.rfind("full[", 0) == 0) fv.remove_prefix(5);
    else if (fv.rfind("empty[", 0) == 0) { fv.remove_prefix(6); byte += nb.bitmap_bytes; }
    else return bad("nat_bits.full[K] or nat_bits.empty[K]");
    auto k = parse_num(fv.substr(0, fv.size() - 1));
    auto v = value_num();
    if (!k || !v || *k >= nb.bitmap_bytes * 8ull) return bad("bad nat_bits index or value");
    byte += *k / 8;
    std::vector<std::uint8_t> b(kBlockSize);
    const std::uint64_t blk = first + byte / kBlockSize;
    F2FSCORE_TRY(read(blk, b.data()));
    std::uint8_t* p = b.data() + byte % kBlockSize;
    const bool cur = (*p >> (*k % 8)) & 1;
    const bool nv = combine(cur ? 1 : 0, op, *v) & 1;
    *p = static_cast<std::uint8_t>(nv ? (*p | (1u << (*k % 8))) : (*p & ~(1u << (*k % 8))));
    F2FSCORE_TRY(write(blk, b.data()));
    return reopen();
  }
  if (target == "inode" || target == "node") {
    auto n = resolve(arg, false);
    if (!n) return make_error(n.error());
    auto blk = node_blk(static_cast<nid_t>(*n));
    if (!blk) return make_error(blk.error());
    std::optional<std::pair<std::uint32_t, unsigned>> f;
    if (target == "inode") {
      f = find_field(kInodeFields, std::size(kInodeFields), fld);
      if (!f && fld.rfind("addr[", 0) == 0) {
        auto k = parse_num(std::string_view(fld).substr(5, fld.size() - 6));
        auto s0 = data_slot0(static_cast<nid_t>(*n));
        if (!k || !s0 || *s0 + *k >= kDefAddrsPerInode) return bad("bad addr index");
        f = std::make_pair(static_cast<std::uint32_t>(offsetof(Inode, i_addr) + 4 * (*s0 + *k)), 4u);
      }
    }
    if (!f && fld == "footer.offset") {
      auto v = value_num();
      if (!v) return make_error(v.error());
      std::vector<std::uint8_t> b(kBlockSize);
      F2FSCORE_TRY(read(*blk, b.data()));
      auto* nd = reinterpret_cast<Node*>(b.data());
      const std::uint32_t flag = nd->footer.flag.get();
      const std::uint64_t ofs = combine(flag >> node_flag::offset_shift, op, *v);
      nd->footer.flag.set(static_cast<std::uint32_t>((flag & 7u) | (ofs << node_flag::offset_shift)));
      if (!raw) F2FSCORE_TRY(seal_node_block(b.data()));
      F2FSCORE_TRY(write(*blk, b.data()));
      return reopen();
    }
    if (!f) f = find_field(kFooterFields, std::size(kFooterFields), fld);
    if (!f) return bad("unknown " + std::string(target) + " field \"" + fld + "\"");
    return rmw(*blk, f->first, f->second, true);
  }
  if (target == "dentry") {
    const auto [dir, name] = split_path(arg);
    auto L = dentry(dir, name);
    if (!L) return make_error(L.error());
    if (fld == "bit") {
      auto v = value_num();
      if (!v) return make_error(v.error());
      std::vector<std::uint8_t> b(kBlockSize);
      F2FSCORE_TRY(read(L->blk, b.data()));
      if (combine(1, op, *v) & 1) set_bit_le(b.data() + L->bitmap_off, L->slot);
      else clear_bit_le(b.data() + L->bitmap_off, L->slot);
      if (L->is_inline && !raw) F2FSCORE_TRY(seal_node_block(b.data()));
      F2FSCORE_TRY(write(L->blk, b.data()));
      return reopen();
    }
    auto f = find_field(kDentryFields, std::size(kDentryFields), fld);
    if (!f) return bad("unknown dentry field \"" + fld + "\"");
    return rmw(L->blk, L->dentry_off + L->slot * static_cast<std::uint32_t>(sizeof(DirEntry)) + f->first, f->second,
               L->is_inline);
  }
  if (target == "dentry_add") {
    const auto [dir, name] = split_path(arg);
    return dentry_add(dir, name, rhs);
  }
  if (target == "dentry_del") {
    const auto [dir, name] = split_path(arg);
    auto L = dentry(dir, name);
    if (!L) return make_error(L.error());
    std::vector<std::uint8_t> b(kBlockSize);
    F2FSCORE_TRY(read(L->blk, b.data()));
    const std::uint32_t need = std::max<std::uint32_t>(1, (L->de.name_len.get() + kSlotLen - 1) / kSlotLen);
    for (std::uint32_t k = 0; k < need; ++k) clear_bit_le(b.data() + L->bitmap_off, L->slot + k);
    if (L->is_inline && !raw) F2FSCORE_TRY(seal_node_block(b.data()));
    F2FSCORE_TRY(write(L->blk, b.data()));
    return reopen();
  }
  if (target == "dentry_move") {
    const auto [dir, name] = split_path(arg);
    auto v = parse_num(rhs);
    if (!v) return bad("dentry_move wants a block index");
    return dentry_move(dir, name, static_cast<std::uint32_t>(*v));
  }
  if (target == "orphan_add") {
    auto v = value_num();
    if (!v) return make_error(v.error());
    return orphan_add(static_cast<nid_t>(*v));
  }
  if (target == "fsync_chain") {
    auto n = resolve(arg, false);
    if (!n) return make_error(n.error());
    return fsync_chain(static_cast<nid_t>(*n), rhs);
  }
  if (target == "xattr") {
    auto n = resolve(arg, false);
    if (!n) return make_error(n.error());
    const nid_t ino = static_cast<nid_t>(*n);
    auto in = node(ino);
    auto iblk = node_blk(ino);
    if (!in || !iblk) return bad("xattr: no such inode");
    // One buffer: the inline xattr area, then the xattr node
    // (read_all_xattrs() in fs/f2fs/xattr.c); positions map back to blocks.
    const std::uint32_t inl = 4 * inline_xattr_addrs_of(sb(), *in);
    const std::uint32_t inl_off = static_cast<std::uint32_t>(offsetof(Inode, i_addr)) + 4 * (kDefAddrsPerInode - inl / 4);
    const nid_t xnid = in->i.i_xattr_nid.get();
    std::uint64_t xblk = 0;
    std::vector<std::uint8_t> ib(kBlockSize), xb(kBlockSize, 0);
    F2FSCORE_TRY(read(*iblk, ib.data()));
    if (xnid != 0) {
      auto x = node_blk(xnid);
      if (!x) return make_error(x.error());
      xblk = *x;
      F2FSCORE_TRY(read(xblk, xb.data()));
    }
    const std::uint32_t total = inl + (xnid ? kNodeFooterOffset : 0);
    auto at = [&](std::uint32_t pos) -> std::uint8_t* {
      return pos < inl ? ib.data() + inl_off + pos : xb.data() + (pos - inl);
    };
    std::uint32_t pos = sizeof(XattrHeader);
    std::vector<std::uint32_t> entries;
    while (pos + 4 <= total) {
      std::uint32_t w = 0;
      for (unsigned i = 0; i < 4; ++i) w |= static_cast<std::uint32_t>(*at(pos + i)) << (8 * i);
      if (w == 0) break;
      entries.push_back(pos);
      const std::uint32_t nl = *at(pos + 1), vs = *at(pos + 2) | (static_cast<std::uint32_t>(*at(pos + 3)) << 8);
      pos += xattr_entry_size(nl, vs);
    }
    auto v = value_num();
    if (!v) return make_error(v.error());
    std::uint32_t fpos = 0;
    unsigned size = 0;
    if (fld == "trailing") {
      fpos = pos + 4;
      size = 4;
    } else if (fld.rfind("entry[", 0) == 0) {
      const auto rb = fld.find("].");
      auto k = parse_num(std::string_view(fld).substr(6, rb - 6));
      if (rb == std::string::npos || !k || *k >= entries.size()) return bad("xattr: no such entry");
      const std::string ef = fld.substr(rb + 2);
      fpos = entries[*k];
      if (ef == "e_name_index") size = 1;
      else if (ef == "e_name_len") { fpos += 1; size = 1; }
      else if (ef == "e_value_size") { fpos += 2; size = 2; }
      else return bad("xattr entry fields: e_name_index, e_name_len, e_value_size");
    } else {
      return bad("xattr[INO].entry[K].FIELD or xattr[INO].trailing");
    }
    if (fpos + size > total) return bad("xattr: the field is past the xattr area");
    std::uint64_t cur = 0;
    for (unsigned i = 0; i < size; ++i) cur |= static_cast<std::uint64_t>(*at(fpos + i)) << (8 * i);
    const std::uint64_t nv = combine(cur, op, *v);
    bool inode_touched = false, node_touched = false;
    for (unsigned i = 0; i < size; ++i) {
      *at(fpos + i) = static_cast<std::uint8_t>(nv >> (8 * i));
      (fpos + i < inl ? inode_touched : node_touched) = true;
    }
    if (inode_touched) {
      if (!raw) F2FSCORE_TRY(seal_node_block(ib.data()));
      F2FSCORE_TRY(write(*iblk, ib.data()));
    }
    if (node_touched) F2FSCORE_TRY(write(xblk, xb.data()));
    return reopen();
  }
  if (target == "xattr_inline") {
    // Moves the entries of the xattr node into the inode's inline xattr area
    // (where read_all_xattrs() in fs/f2fs/xattr.c expects the header when
    // the inode has one), leaving the node empty. For building bases from
    // sload.f2fs images, which keep the header in the node.
    auto n = resolve(arg, false);
    if (!n) return make_error(n.error());
    const nid_t ino = static_cast<nid_t>(*n);
    auto in = node(ino);
    auto iblk = node_blk(ino);
    if (!in || !iblk) return bad("xattr_inline: no such inode");
    const std::uint32_t inl = 4 * inline_xattr_addrs_of(sb(), *in);
    const nid_t xnid = in->i.i_xattr_nid.get();
    if (inl == 0 || xnid == 0) return bad("xattr_inline: the inode has no inline xattr area or no xattr node");
    auto x = node_blk(xnid);
    if (!x) return make_error(x.error());
    std::vector<std::uint8_t> ib(kBlockSize), xb(kBlockSize);
    F2FSCORE_TRY(read(*iblk, ib.data()));
    F2FSCORE_TRY(read(*x, xb.data()));
    std::uint32_t used = sizeof(XattrHeader);
    while (used + 4 <= kNodeFooterOffset && load_le32(xb.data(), used) != 0)
      used += xattr_entry_size(xb[used + 1], load_le16(xb.data(), used + 2));
    if (used + 4 > inl) return make_error(Errc::no_space, "xattr_inline: the entries do not fit inline");
    const std::uint32_t inl_off = static_cast<std::uint32_t>(offsetof(Inode, i_addr)) + 4 * (kDefAddrsPerInode - inl / 4);
    std::memset(ib.data() + inl_off, 0, inl);
    std::memcpy(ib.data() + inl_off, xb.data(), used);
    std::memset(xb.data(), 0, kNodeFooterOffset);
    if (!raw) F2FSCORE_TRY(seal_node_block(ib.data()));
    F2FSCORE_TRY(write(*iblk, ib.data()));
    F2FSCORE_TRY(write(*x, xb.data()));
    return reopen();
  }
  if (target == "block") {
    auto blk = resolve(arg, true);
    if (!blk) return make_error(blk.error());
    std::vector<std::uint8_t> b(kBlockSize);
    if (fld == "zero") {
      F2FSCORE_TRY(write(*blk, b.data()));
      return reopen();
    }
    unsigned size = 0;
    std::string_view fv = fld;
    for (auto [nm, sz] : {std::pair{"u8[", 1u}, std::pair{"u16[", 2u}, std::pair{"u32[", 4u}, std::pair{"u64[", 8u}})
      if (fv.rfind(nm, 0) == 0) {
        size = sz;
        fv.remove_prefix(std::strlen(nm));
      }
    auto off = size ? parse_num(fv.substr(0, fv.size() - 1)) : std::nullopt;
    if (!off || *off + size > kBlockSize) return bad("block[B].u8|u16|u32|u64[OFF] or block[B].zero");
    raw = true;
    return rmw(*blk, static_cast<std::uint32_t>(*off), size, false);
  }
  return bad("unknown target \"" + std::string(target) + "\" in \"" + std::string(edit) + "\"");
}

Status apply_edits(BlockDevice& dev, const std::vector<std::string>& edits) {
  auto c = Corruptor::open(dev);
  if (!c) return make_error(c.error());
  for (const auto& e : edits) {
    auto r = (*c)->apply(e);
    if (!r) {
      Error err = r.error();
      err.message = "edit \"" + e + "\": " + err.message;
      return make_error(err);
    }
  }
  return {};
}

}  // namespace f2fstest::corrupt
