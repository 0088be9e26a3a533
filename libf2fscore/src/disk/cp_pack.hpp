// The checkpoint pack encoder (private to the library): the blocks of one CP
// pack and its nat_bits, as do_checkpoint() in fs/f2fs/checkpoint.c lays
// them out. mkfs and the metadata rebuild write packs through it.
#pragma once

#include <cstdint>
#include <span>
#include <vector>

#include "f2fscore/disk/checkpoint.hpp"
#include "f2fscore/disk/geometry.hpp"
#include "f2fscore/disk/summary.hpp"
#include "f2fscore/result.hpp"

namespace f2fscore::disk {

/// Blocks the data logs' summaries take in a pack with `entries` summary
/// entries over the three data logs, as f2fs_npages_for_summary_flush() in
/// fs/f2fs/checkpoint.c: 1 when they fit beside the two journals (439), 2
/// when the rest fit one more block (584), else 3 (normal summaries).
std::uint32_t compact_summary_blocks(std::uint32_t entries) noexcept;

/// What a pack holds. The header's ckpt_flags say which parts are present
/// (CP_COMPACT_SUM_FLAG, CP_UMOUNT_FLAG: node summaries, CP_ORPHAN_PRESENT_FLAG,
/// CP_NAT_BITS_FLAG); its cp_pack_start_sum and cp_pack_total_block_count
/// must count those parts.
struct CpPackContents {
  /// The CP block and its cp_payload blocks as they stand (the bytes the
  /// header and the bitmaps do not cover are kept); empty or short: zeros.
  std::span<const std::uint8_t> head;
  const Checkpoint* cp = nullptr;  ///< the header, written at byte 0 of the CP block
  /// The version bitmaps, written at their __bitmap_ptr() offsets; empty:
  /// as in `head`.
  std::span<const std::uint8_t> nat_bitmap, sit_bitmap;
  std::span<const nid_t> orphans;  ///< 1020 a block (write_orphan_inodes())
  const Journal* nat_journal = nullptr;  ///< null: an empty journal
  const Journal* sit_journal = nullptr;
  /// The hot, warm and cold data logs' summaries: compact, the first
  /// compact_summary_entries() entries of each; normal, each whole block with
  /// the NAT journal put into the hot one and the SIT journal into the cold
  /// one. Null: empty summaries.
  const SummaryBlock* data_sums = nullptr;
  /// The hot, warm and cold node logs' summaries, written with CP_UMOUNT_FLAG.
  const SummaryBlock* node_sums = nullptr;
  /// nat_bits (with CP_NAT_BITS_FLAG): the full and empty NAT block bitmaps,
  /// up to Geometry::nat_bits_layout().bitmap_bytes each; shorter: zeros after.
  std::span<const std::uint8_t> nat_bits_full, nat_bits_empty;
};

/// One encoded pack.
struct CpPack {
  /// cp_pack_total_block_count blocks from the pack's first block: the CP
  /// block (checksum sealed), payload, orphan blocks, data summaries, node
  /// summaries, and the closing copy of the CP block.
  std::vector<std::uint8_t> blocks;
  /// nat_bits blocks (empty without CP_NAT_BITS_FLAG): the 8-byte header
  /// (nat_bits_header() of the sealed CP block), the full bitmap, the
  /// empty bitmap.
  std::vector<std::uint8_t> nat_bits;
  /// First nat_bits block, in blocks from the pack's first block.
  std::uint32_t nat_bits_start = 0;

  std::uint32_t block_count() const noexcept { return static_cast<std::uint32_t>(blocks.size() / kBlockSize); }
  std::span<const std::uint8_t> block(std::uint32_t i) const noexcept {
    return std::span<const std::uint8_t>(blocks).subspan(static_cast<std::size_t>(i) * kBlockSize, kBlockSize);
  }
};

/// Encodes a pack. Errors: Errc::invalid_argument when the header's
/// cp_pack_start_sum or cp_pack_total_block_count do not count the parts,
/// orphans are given without CP_ORPHAN_PRESENT_FLAG, compact summaries need
/// 3 blocks, a bitmap is larger than the volume's, or the pack and its
/// nat_bits do not fit a segment.
Result<CpPack> encode_cp_pack(const Geometry& geo, const CpPackContents& in);

}  // namespace f2fscore::disk
