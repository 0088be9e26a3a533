#include "f2fscore/disk/geometry.hpp"

#include <algorithm>
#include <string>

#include "f2fscore/endian.hpp"

namespace f2fscore::disk {

BitmapOffsets version_bitmap_offsets(std::uint32_t ckpt_flags, std::uint32_t cp_payload, std::uint32_t sit_bytes,
                                     std::uint32_t nat_bytes) noexcept {
  BitmapOffsets o;
  if (ckpt_flags & cp_flag::large_nat_bitmap) {
    o.nat = kCpBitmapOffset + 4;
    o.sit = kCpBitmapOffset + 4 + static_cast<std::size_t>(nat_bytes);
  } else if (cp_payload > 0) {
    o.nat = kCpBitmapOffset;
    o.sit = kBlockSize;
  } else {
    o.sit = kCpBitmapOffset;
    o.nat = kCpBitmapOffset + static_cast<std::size_t>(sit_bytes);
  }
  return o;
}

int VersionBitmaps::nat_copy(std::uint32_t idx) const noexcept {
  return idx / 8 < nat.size() && test_bit_msb(nat.data(), idx) ? 1 : 0;
}

int VersionBitmaps::sit_copy(std::uint32_t idx) const noexcept {
  return idx / 8 < sit.size() && test_bit_msb(sit.data(), idx) ? 1 : 0;
}

Geometry::Geometry(const SuperBlock& sb) noexcept
    : seg0_(sb.segment0_blkaddr.get()),
      cp_(sb.cp_blkaddr.get()),
      sit_(sb.sit_blkaddr.get()),
      nat_(sb.nat_blkaddr.get()),
      ssa_(sb.ssa_blkaddr.get()),
      main_(sb.main_blkaddr.get()),
      segment_count_(sb.segment_count.get()),
      ckpt_segs_(sb.segment_count_ckpt.get()),
      sit_segs_(sb.segment_count_sit.get()),
      nat_segs_(sb.segment_count_nat.get()),
      ssa_segs_(sb.segment_count_ssa.get()),
      main_segs_(sb.segment_count_main.get()),
      segs_per_sec_(std::max<std::uint32_t>(1, sb.segs_per_sec.get())),
      secs_per_zone_(std::max<std::uint32_t>(1, sb.secs_per_zone.get())),
      cp_payload_(sb.cp_payload.get()) {}

bool Geometry::nat_index(std::uint64_t blkaddr, std::uint32_t* idx, int* copy) const noexcept {
  if (blkaddr < nat_ || blkaddr >= nat_ + 2ull * nat_blocks()) return false;
  *idx = nat_block_index(blkaddr);
  *copy = static_cast<int>(((blkaddr - nat_) >> kLogBlocksPerSeg) & 1);
  return true;
}

bool Geometry::sit_index(std::uint64_t blkaddr, std::uint32_t* idx, int* copy) const noexcept {
  if (blkaddr < sit_ || blkaddr >= sit_ + 2ull * sit_blocks()) return false;
  *idx = sit_block_index(blkaddr);
  *copy = blkaddr - sit_ >= sit_blocks() ? 1 : 0;
  return true;
}

Result<VersionBitmaps> Geometry::version_bitmaps(std::span<const std::uint8_t> cp_blocks) const {
  auto bad = [](const std::string& m) { return make_error(Errc::corrupt, "checkpoint: " + m); };
  const std::size_t need = (1 + static_cast<std::size_t>(cp_payload_)) * kBlockSize;
  if (cp_blocks.size() < need)
    return bad("the CP block and its " + std::to_string(cp_payload_) + " payload blocks are not all there (" +
               std::to_string(cp_blocks.size()) + " bytes)");
  const std::uint32_t flags = load_le32(cp_blocks.data(), offsetof(Checkpoint, ckpt_flags));
  const std::uint32_t sit_bytes = load_le32(cp_blocks.data(), offsetof(Checkpoint, sit_ver_bitmap_bytesize));
  const std::uint32_t nat_bytes = load_le32(cp_blocks.data(), offsetof(Checkpoint, nat_ver_bitmap_bytesize));
  if (sit_bytes != sit_bitmap_bytes() || nat_bytes != nat_bitmap_bytes())
    return bad("version bitmap sizes " + std::to_string(sit_bytes) + "/" + std::to_string(nat_bytes) + ", expected " +
               std::to_string(sit_bitmap_bytes()) + "/" + std::to_string(nat_bitmap_bytes()));
  const BitmapOffsets o = bitmap_offsets(flags);
  if (o.nat + nat_bytes > need || o.sit + sit_bytes > need) return bad("a version bitmap runs past the checkpoint blocks");
  VersionBitmaps bm;
  bm.nat = cp_blocks.subspan(o.nat, nat_bytes);
  bm.sit = cp_blocks.subspan(o.sit, sit_bytes);
  return bm;
}

NatBitsLayout Geometry::nat_bits_layout() const noexcept {
  const NatBitsSize s = nat_bits_size(nat_segs_);
  NatBitsLayout l;
  l.bitmap_bytes = s.bitmap_bytes;
  l.blocks = s.blocks;
  l.full_offset = 8;
  l.empty_offset = 8 + static_cast<std::size_t>(s.bitmap_bytes);
  return l;
}

}  // namespace f2fscore::disk
