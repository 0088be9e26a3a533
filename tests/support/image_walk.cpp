#include "image_walk.hpp"

#include <cstring>

#include "f2fscore/disk/checkpoint.hpp"
#include "f2fscore/disk/nat.hpp"
#include "f2fscore/disk/summary.hpp"
#include "f2fscore/endian.hpp"

namespace f2fstest {

using namespace f2fscore;
using namespace f2fscore::disk;

namespace {
std::vector<std::uint8_t> block(BlockDevice& dev, std::uint64_t blkaddr) {
  std::vector<std::uint8_t> b(kBlockSize, 0);
  (void)read_at(dev, blkaddr * kBlockSize, b);
  return b;
}

void walk_dentries(ImageWalk& w, std::uint32_t dir, const std::uint8_t* bitmap, const DirEntry* de,
                   const std::uint8_t (*names)[kSlotLen], std::uint32_t slots, bool plain) {
  for (std::uint32_t i = 0; i < slots;) {
    if (!test_bit_le(bitmap, i)) {
      ++i;
      continue;
    }
    const std::uint16_t len = de[i].name_len.get();
    WalkedDentry d{dir, std::string(reinterpret_cast<const char*>(names[i]), std::min<std::uint32_t>(len, (slots - i) * kSlotLen)),
                   de[i].hash_code.get(), de[i].ino.get(), plain};
    w.dentries.push_back(d);
    i += len == 0 ? 1 : (len + kSlotLen - 1) / kSlotLen;
  }
}
}  // namespace

ImageWalk walk_image(BlockDevice& dev) {
  ImageWalk w;
  auto b0 = block(dev, 0);
  std::memcpy(&w.sb, b0.data() + kSuperOffset, sizeof(SuperBlock));
  if (w.sb.magic.get() != kSuperMagic) {
    auto b1 = block(dev, 1);
    std::memcpy(&w.sb, b1.data() + kSuperOffset, sizeof(SuperBlock));
  }
  const SuperBlock& sb = w.sb;
  // The newer valid CP pack.
  std::uint64_t best_ver = 0;
  std::uint64_t cp_start = 0;
  for (std::uint32_t pack = 0; pack < 2; ++pack) {
    const std::uint64_t start = sb.cp_blkaddr.get() + pack * kDefaultBlocksPerSeg;
    auto head = block(dev, start);
    const auto* c = reinterpret_cast<const Checkpoint*>(head.data());
    const std::uint32_t ofs = c->checksum_offset.get();
    if (ofs > kCpChecksumOffset || load_le32(head.data(), ofs) != checkpoint_checksum(head.data())) continue;
    auto tail = block(dev, start + c->cp_pack_total_block_count.get() - 1);
    if (load_le64(tail.data(), 0) != c->checkpoint_ver.get()) continue;
    if (w.cp.empty() || c->checkpoint_ver.get() > best_ver) {
      best_ver = c->checkpoint_ver.get();
      w.cp = head;
      cp_start = start;
    }
  }
  if (w.cp.empty()) {
    w.error = "no valid checkpoint";
    return w;
  }
  const auto* cp = reinterpret_cast<const Checkpoint*>(w.cp.data());
  const std::uint32_t flags = cp->ckpt_flags.get();
  if (flags & cp_flag::large_nat_bitmap) {
    w.error = "large NAT bitmap not handled by the test walker";
    return w;
  }
  const std::uint8_t* nat_bitmap = w.cp.data() + kCpBitmapOffset +
                                   (sb.cp_payload.get() > 0 ? 0 : cp->sit_ver_bitmap_bytesize.get());
  // NAT blocks in use: read every NAT block of the current copy.
  const std::uint32_t nat_blocks = (sb.segment_count_nat.get() / 2) * kDefaultBlocksPerSeg;
  for (std::uint32_t bi = 0; bi < nat_blocks; ++bi) {
    std::uint64_t addr = sb.nat_blkaddr.get() + ((bi >> kLogBlocksPerSeg) << (kLogBlocksPerSeg + 1)) +
                         (bi & (kDefaultBlocksPerSeg - 1));
    if (test_bit_msb(nat_bitmap, bi)) addr += kDefaultBlocksPerSeg;
    auto nb = block(dev, addr);
    const auto* n = reinterpret_cast<const NatBlock*>(nb.data());
    for (std::uint32_t e = 0; e < kNatEntryPerBlock; ++e)
      if (n->entries[e].block_addr.get() != 0) w.nat[bi * kNatEntryPerBlock + e] = n->entries[e].block_addr.get();
  }
  // The NAT journal overrides.
  auto sum = block(dev, cp_start + cp->cp_pack_start_sum.get());
  const std::uint8_t* jbytes =
      (flags & cp_flag::compact_sum) ? sum.data() : sum.data() + offsetof(SummaryBlock, journal);
  Journal j;
  std::memcpy(&j, jbytes, sizeof j);
  for (std::uint32_t i = 0; i < j.n_entries.get() && i < kNatJournalEntries; ++i) {
    const auto nid = j.nat_j.entries[i].nid.get();
    const auto addr = j.nat_j.entries[i].ne.block_addr.get();
    if (addr == 0) w.nat.erase(nid);
    else w.nat[nid] = addr;
  }
  const std::uint64_t main_start = sb.main_blkaddr.get();
  const std::uint64_t main_end = main_start + static_cast<std::uint64_t>(sb.segment_count_main.get()) * kDefaultBlocksPerSeg;
  for (auto [nid, addr] : w.nat) {
    if (addr < main_start || addr >= main_end) continue;
    auto nb = block(dev, addr);
    const auto* node = reinterpret_cast<const Node*>(nb.data());
    if (node->footer.nid.get() != nid || node->footer.ino.get() != nid) continue;  // not an inode
    w.inodes.emplace_back(nid, nb);
    const Inode& in = node->i;
    if ((in.i_mode.get() & 0xF000) != 0x4000) continue;
    const bool plain = !(in.i_flags.get() & iflag::casefold) && !(in.i_advise & advise::encrypt);
    const std::uint32_t extra = (in.i_inline & inline_flag::extra_attr) ? in.extra.i_extra_isize.get() / 4u : 0u;
    std::uint32_t xattr_addrs = 0;
    if (in.i_inline & inline_flag::xattr)
      xattr_addrs = (sb.feature.get() & feature::flexible_inline_xattr) ? in.extra.i_inline_xattr_size.get()
                                                                         : kDefaultInlineXattrAddrs;
    if (in.i_inline & inline_flag::dentry) {
      const std::uint32_t bytes = 4 * (kDefAddrsPerInode - xattr_addrs - extra - kDefInlineReservedSize);
      const auto lay = inline_dentry_layout(bytes);
      const std::uint8_t* base = reinterpret_cast<const std::uint8_t*>(&in.i_addr[extra + kDefInlineReservedSize]);
      walk_dentries(w, nid, base, reinterpret_cast<const DirEntry*>(base + lay.dentry_offset()),
                    reinterpret_cast<const std::uint8_t(*)[kSlotLen]>(base + lay.filename_offset()), lay.nr_slots, plain);
    } else {
      const std::uint32_t nblocks = static_cast<std::uint32_t>((in.i_size.get() + kBlockSize - 1) / kBlockSize);
      for (std::uint32_t i = 0; i < nblocks && extra + i < kDefAddrsPerInode - xattr_addrs; ++i) {
        const std::uint32_t a = in.i_addr[extra + i].get();
        if (a < main_start || a >= main_end) continue;
        auto db = block(dev, a);
        const auto* d = reinterpret_cast<const DentryBlock*>(db.data());
        walk_dentries(w, nid, d->dentry_bitmap, d->dentry, d->filename, kNrDentryInBlock, plain);
      }
    }
  }
  return w;
}

}  // namespace f2fstest
