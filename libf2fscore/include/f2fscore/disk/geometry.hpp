// The layout of a volume as its superblock and checkpoint define it: where
// each metadata area starts, how segments, sections and zones number the
// main area, which copy of a NAT or SIT block is current, and where the
// version bitmaps and nat_bits lie in a checkpoint pack. Every address is in
// 4 KiB blocks from the start of the volume; every segment number (segno)
// counts main-area segments from 0 (the kernel's GET_SEGNO()), every
// section number (secno) and zone number main-area sections and zones.
// Pure arithmetic: no I/O, no allocation.
#pragma once

#include <cstddef>
#include <cstdint>
#include <span>

#include "f2fscore/disk/checkpoint.hpp"
#include "f2fscore/disk/constants.hpp"
#include "f2fscore/disk/nat.hpp"
#include "f2fscore/disk/sit.hpp"
#include "f2fscore/disk/superblock.hpp"
#include "f2fscore/result.hpp"

namespace f2fscore::disk {

/// Blocks in a segment: 1 << log_blocks_per_seg, which sanity_check_raw_super()
/// in fs/f2fs/super.c requires to be 9 with 4 KiB blocks.
inline constexpr std::uint32_t kBlocksPerSeg = 1u << kLogBlocksPerSeg;
static_assert(kBlocksPerSeg == kDefaultBlocksPerSeg);

/// Byte offsets of the NAT and SIT version bitmaps in a buffer holding the
/// CP block followed by its cp_payload blocks, as __bitmap_ptr() in
/// fs/f2fs/f2fs.h: with CP_LARGE_NAT_BITMAP_FLAG both lie in the CP block
/// after a 4-byte field, NAT first (192 + 4, 192 + 4 + nat_bytes); else with
/// cp_payload > 0 the NAT bitmap lies in the CP block (192) and the SIT
/// bitmap fills the payload blocks (4096); else SIT (192) then NAT
/// (192 + sit_bytes) in the CP block.
struct BitmapOffsets {
  std::size_t nat = 0;
  std::size_t sit = 0;
};
BitmapOffsets version_bitmap_offsets(std::uint32_t ckpt_flags, std::uint32_t cp_payload, std::uint32_t sit_bytes,
                                     std::uint32_t nat_bytes) noexcept;

/// The checkpoint's NAT and SIT version bitmaps: bit i (MSB-first within a
/// byte, f2fs_test_bit() in fs/f2fs/f2fs.h) set means block i of the table is
/// current in copy 1. Views into the caller's CP blocks; they live as long as
/// that buffer.
struct VersionBitmaps {
  std::span<const std::uint8_t> nat;
  std::span<const std::uint8_t> sit;
  /// The current copy (0 or 1) of NAT block `idx`; 0 past the bitmap.
  int nat_copy(std::uint32_t idx) const noexcept;
  /// The current copy (0 or 1) of SIT block `idx`; 0 past the bitmap.
  int sit_copy(std::uint32_t idx) const noexcept;
};

/// nat_bits in a CP segment: an 8-byte header (nat_bits_header()), the
/// full-block bitmap, the empty-block bitmap (each bitmap_bytes long, one
/// LSB-first bit per NAT block), in `blocks` blocks ending at the end of the
/// pack's segment (__get_nat_bitmaps() / f2fs_enable_nat_bits() in
/// fs/f2fs/node.c).
struct NatBitsLayout {
  std::uint32_t bitmap_bytes = 0;
  std::uint32_t blocks = 0;
  std::size_t full_offset = 8;   ///< bytes into the nat_bits blocks
  std::size_t empty_offset = 8;  ///< bytes into the nat_bits blocks
};

/// The layout rules of one volume, from a superblock that passed
/// validate_superblock(). A default-constructed Geometry describes no
/// volume (every count 0).
class Geometry {
 public:
  Geometry() = default;
  explicit Geometry(const SuperBlock& sb) noexcept;

  // --- Units ---
  /// Blocks per segment (sbi->blocks_per_seg): 512.
  static constexpr std::uint32_t blocks_per_seg() noexcept { return kBlocksPerSeg; }
  static constexpr std::uint32_t log_blocks_per_seg() noexcept { return kLogBlocksPerSeg; }
  /// Segments per section (sbi->segs_per_sec), at least 1.
  std::uint32_t segs_per_sec() const noexcept { return segs_per_sec_; }
  /// Sections per zone (sbi->secs_per_zone), at least 1.
  std::uint32_t secs_per_zone() const noexcept { return secs_per_zone_; }
  /// Blocks per section (BLKS_PER_SEC() in fs/f2fs/segment.h).
  std::uint32_t blocks_per_sec() const noexcept { return segs_per_sec_ * kBlocksPerSeg; }
  /// Segments per zone.
  std::uint32_t segs_per_zone() const noexcept { return segs_per_sec_ * secs_per_zone_; }

  // --- Areas (block addresses) ---
  block_t segment0_blkaddr() const noexcept { return seg0_; }
  /// Segments from segment0 to the end of the main area (segment_count).
  std::uint32_t segment_count() const noexcept { return segment_count_; }
  block_t cp_blkaddr() const noexcept { return cp_; }
  block_t sit_blkaddr() const noexcept { return sit_; }
  block_t nat_blkaddr() const noexcept { return nat_; }
  block_t ssa_blkaddr() const noexcept { return ssa_; }
  /// First block of the main area (MAIN_BLKADDR()).
  block_t main_blkaddr() const noexcept { return main_; }
  /// Main-area segments (MAIN_SEGS(): segment_count_main).
  std::uint32_t main_segments() const noexcept { return main_segs_; }
  /// Main-area sections (MAIN_SECS(): segment_count_main / segs_per_sec).
  std::uint32_t main_sections() const noexcept { return main_segs_ / segs_per_sec_; }
  /// Main-area blocks: main_segments() * 512.
  std::uint64_t main_blocks() const noexcept { return static_cast<std::uint64_t>(main_segs_) * kBlocksPerSeg; }
  /// One past the last main-area block (MAX_BLKADDR() in fs/f2fs/segment.h).
  std::uint64_t main_end() const noexcept { return main_ + main_blocks(); }
  /// Whether `blkaddr` lies in the main area.
  bool is_main_addr(std::uint64_t blkaddr) const noexcept { return blkaddr >= main_ && blkaddr < main_end(); }
  /// One past the last block of the volume's segments:
  /// segment0_blkaddr + segment_count * 512.
  std::uint64_t volume_end() const noexcept {
    return seg0_ + (static_cast<std::uint64_t>(segment_count_) << kLogBlocksPerSeg);
  }
  /// Segments of the metadata areas before main: CP + SIT + NAT + SSA.
  std::uint32_t meta_segments() const noexcept { return ckpt_segs_ + sit_segs_ + nat_segs_ + ssa_segs_; }

  // --- Segments, sections, zones of the main area ---
  /// First block of main segment `segno` (START_BLOCK() in fs/f2fs/segment.h).
  std::uint64_t segment_start(std::uint32_t segno) const noexcept {
    return main_ + (static_cast<std::uint64_t>(segno) << kLogBlocksPerSeg);
  }
  /// Main segment of a main-area block (GET_SEGNO() in fs/f2fs/segment.h);
  /// `blkaddr` must satisfy is_main_addr().
  std::uint32_t segno_of(std::uint64_t blkaddr) const noexcept {
    return static_cast<std::uint32_t>((blkaddr - main_) >> kLogBlocksPerSeg);
  }
  /// Offset of a main-area block in its segment (GET_BLKOFF_FROM_SEG0()).
  std::uint32_t blkoff_of(std::uint64_t blkaddr) const noexcept {
    return static_cast<std::uint32_t>((blkaddr - main_) & (kBlocksPerSeg - 1));
  }
  /// Section of a main segment (GET_SEC_FROM_SEG()).
  std::uint32_t sec_of_seg(std::uint32_t segno) const noexcept { return segno / segs_per_sec_; }
  /// First segment of a section (GET_SEG_FROM_SEC()).
  std::uint32_t first_seg_of_sec(std::uint32_t secno) const noexcept { return secno * segs_per_sec_; }
  /// Zone of a section (GET_ZONE_FROM_SEC()).
  std::uint32_t zone_of_sec(std::uint32_t secno) const noexcept { return secno / secs_per_zone_; }
  /// Zone of a main segment (GET_ZONE_FROM_SEG()).
  std::uint32_t zone_of_seg(std::uint32_t segno) const noexcept { return zone_of_sec(sec_of_seg(segno)); }
  /// Section of a main-area block (GET_SEC_FROM_SEG(GET_SEGNO())).
  std::uint32_t sec_of(std::uint64_t blkaddr) const noexcept { return sec_of_seg(segno_of(blkaddr)); }
  /// First block of a section.
  std::uint64_t section_start(std::uint32_t secno) const noexcept { return segment_start(first_seg_of_sec(secno)); }

  // --- SSA ---
  /// The summary block of main segment `segno` (GET_SUM_BLOCK() in
  /// fs/f2fs/segment.h): ssa_blkaddr + segno.
  std::uint64_t ssa_addr(std::uint32_t segno) const noexcept { return static_cast<std::uint64_t>(ssa_) + segno; }

  // --- NAT and SIT ---
  /// NAT blocks in one copy: segment_count_nat / 2 * 512
  /// (f2fs_init_node_manager() in fs/f2fs/node.c).
  std::uint32_t nat_blocks() const noexcept { return nat_segs_ / 2 * kBlocksPerSeg; }
  /// SIT blocks in one copy: segment_count_sit / 2 * 512 (sit_i->sit_blocks,
  /// build_sit_info() in fs/f2fs/segment.c).
  std::uint32_t sit_blocks() const noexcept { return sit_segs_ / 2 * kBlocksPerSeg; }
  /// SIT blocks that hold the main segments' entries: ceil(main_segments / 55).
  std::uint32_t sit_blocks_used() const noexcept { return (main_segs_ + kSitEntryPerBlock - 1) / kSitEntryPerBlock; }
  /// Bytes of the NAT version bitmap (nat_blocks / 8; nat_ver_bitmap_bytesize).
  std::uint32_t nat_bitmap_bytes() const noexcept { return nat_blocks() / 8; }
  /// Bytes of the SIT version bitmap (sit_blocks / 8; sit_ver_bitmap_bytesize).
  std::uint32_t sit_bitmap_bytes() const noexcept { return sit_blocks() / 8; }
  /// One past the largest nid: NAT_ENTRY_PER_BLOCK * nat_blocks (nm_i->max_nid).
  nid_t max_nid() const noexcept { return nat_blocks() * kNatEntryPerBlock; }
  /// The NAT block holding `nid` (NAT_BLOCK_OFFSET()).
  static constexpr std::uint32_t nat_block_of(nid_t nid) noexcept { return nid / kNatEntryPerBlock; }
  /// The SIT block holding main segment `segno` (SIT_BLOCK_OFFSET()).
  static constexpr std::uint32_t sit_block_of(std::uint32_t segno) noexcept { return segno / kSitEntryPerBlock; }
  /// Address of NAT block `idx` in copy 0 or 1: the copies of each NAT
  /// segment lie in a pair of adjacent segments, copy 1 one segment after
  /// copy 0 (current_nat_addr() in fs/f2fs/node.h).
  std::uint64_t nat_addr(std::uint32_t idx, int copy) const noexcept {
    return nat_ + (static_cast<std::uint64_t>(idx >> kLogBlocksPerSeg) << (kLogBlocksPerSeg + 1)) +
           (idx & (kBlocksPerSeg - 1)) + (copy ? kBlocksPerSeg : 0);
  }
  /// Address of SIT block `idx` in copy 0 or 1: copy 1 follows the whole of
  /// copy 0 (current_sit_addr() in fs/f2fs/segment.h).
  std::uint64_t sit_addr(std::uint32_t idx, int copy) const noexcept {
    return static_cast<std::uint64_t>(sit_) + idx + (copy ? sit_blocks() : 0);
  }
  /// The current address of NAT block `idx` through the version bitmap.
  std::uint64_t current_nat_addr(std::uint32_t idx, const VersionBitmaps& bm) const noexcept {
    return nat_addr(idx, bm.nat_copy(idx));
  }
  /// The current address of SIT block `idx` through the version bitmap.
  std::uint64_t current_sit_addr(std::uint32_t idx, const VersionBitmaps& bm) const noexcept {
    return sit_addr(idx, bm.sit_copy(idx));
  }
  /// Inverse of nat_addr(): the NAT block index and copy of an address in
  /// the NAT area. Returns false outside it.
  bool nat_index(std::uint64_t blkaddr, std::uint32_t* idx, int* copy) const noexcept;
  /// Inverse of sit_addr(): the SIT block index and copy of an address in
  /// the SIT area. Returns false outside it.
  bool sit_index(std::uint64_t blkaddr, std::uint32_t* idx, int* copy) const noexcept;
  /// The NAT block index of an address in the NAT area (either copy).
  std::uint32_t nat_block_index(std::uint64_t blkaddr) const noexcept {
    const std::uint64_t rel = blkaddr - nat_;
    return static_cast<std::uint32_t>(((rel >> (kLogBlocksPerSeg + 1)) << kLogBlocksPerSeg) | (rel & (kBlocksPerSeg - 1)));
  }
  /// The SIT block index of an address in the SIT area (either copy).
  std::uint32_t sit_block_index(std::uint64_t blkaddr) const noexcept {
    const std::uint64_t rel = blkaddr - sit_;
    return static_cast<std::uint32_t>(rel >= sit_blocks() ? rel - sit_blocks() : rel);
  }

  // --- Checkpoint packs ---
  /// Extra CP blocks after the CP block (cp_payload; __cp_payload()).
  std::uint32_t cp_payload() const noexcept { return cp_payload_; }
  /// First block of CP pack 0 or 1 (__start_cp_addr() in fs/f2fs/checkpoint.c):
  /// cp_blkaddr, or cp_blkaddr + 512.
  std::uint64_t cp_pack_start(int pack) const noexcept {
    return static_cast<std::uint64_t>(cp_) + (pack ? kBlocksPerSeg : 0);
  }
  /// The version bitmaps' offsets for a checkpoint with `ckpt_flags`
  /// (__bitmap_ptr()); the sizes are this volume's.
  BitmapOffsets bitmap_offsets(std::uint32_t ckpt_flags) const noexcept {
    return version_bitmap_offsets(ckpt_flags, cp_payload_, sit_bitmap_bytes(), nat_bitmap_bytes());
  }
  /// The version bitmaps of a checkpoint: `cp_blocks` holds the CP block
  /// followed by its cp_payload blocks. Errors: Errc::corrupt when the
  /// buffer is shorter than 1 + cp_payload blocks, the checkpoint's bitmap
  /// sizes differ from this volume's (sanity_check_ckpt() in
  /// fs/f2fs/super.c), or a bitmap runs past the buffer.
  Result<VersionBitmaps> version_bitmaps(std::span<const std::uint8_t> cp_blocks) const;
  /// nat_bits size and offsets (nm_i->nat_bits_blocks: (2 * nat_blocks / 8
  /// + 8) rounded up to blocks).
  NatBitsLayout nat_bits_layout() const noexcept;
  /// First nat_bits block of CP pack 0 or 1: the pack's last nat_bits
  /// blocks of its segment (__get_nat_bitmaps() in fs/f2fs/node.c).
  std::uint64_t nat_bits_addr(int pack) const noexcept { return cp_pack_start(pack) + kBlocksPerSeg - nat_bits_layout().blocks; }

 private:
  block_t seg0_ = 0, cp_ = 0, sit_ = 0, nat_ = 0, ssa_ = 0, main_ = 0;
  std::uint32_t segment_count_ = 0, ckpt_segs_ = 0, sit_segs_ = 0, nat_segs_ = 0, ssa_segs_ = 0, main_segs_ = 0;
  std::uint32_t segs_per_sec_ = 1, secs_per_zone_ = 1, cp_payload_ = 0;
};

}  // namespace f2fscore::disk
