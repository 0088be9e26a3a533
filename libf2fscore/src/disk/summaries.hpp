// The active logs' summaries and the NAT/SIT journals of a checkpoint pack,
// read as restore_curseg_summaries() in fs/f2fs/segment.c reads them
// (private to the library).
#pragma once

#include <cstdint>

#include "f2fscore/device.hpp"
#include "f2fscore/disk/checkpoint.hpp"
#include "f2fscore/disk/geometry.hpp"
#include "f2fscore/disk/summary.hpp"
#include "f2fscore/result.hpp"

namespace f2fscore::disk {

/// What load_curseg_summaries() reads.
enum class SummaryScope : std::uint8_t {
  journals,  ///< the NAT and SIT journals only (1 block compact, 2 normal)
  data,      ///< the journals and the three data logs' summaries
  all,       ///< and the three node logs' summaries
};

/// The current summary of each active log (CursegType order) and the two
/// journals, as they stand on disk: journal counts are not checked against
/// the capacity (38 NAT, 6 SIT entries).
struct CursegSummaries {
  Journal nat_journal{};              ///< with the hot data log's summary
  Journal sit_journal{};              ///< with the cold data log's summary
  std::uint64_t nat_journal_blk = 0;  ///< CP block holding nat_journal (for messages)
  std::uint64_t sit_journal_blk = 0;  ///< CP block holding sit_journal
  SummaryBlock sum[kNrCursegType] = {};
  bool loaded[kNrCursegType] = {};
};

/// Reads the summaries of the checkpoint `cp` whose pack starts at block
/// `cp_start`, from cp_pack_start_sum on:
///  - CP_COMPACT_SUM_FLAG: the NAT journal, the SIT journal, then the data
///    logs' entries, 7 bytes each, hot to cold, cur_data_blkoff entries a log
///    (512 for an SSR log), continuing into the next block when the entry
///    would reach the footer (read_compacted_summaries());
///  - else one summary block per data log, the NAT journal in the hot one's,
///    the SIT journal in the cold one's (read_normal_summaries());
///  - node logs: the next three blocks of the pack with CP_UMOUNT_FLAG, else
///    the SSA block of each node log's segment.
/// Errors: Errc::corrupt when the summaries run past the pack
/// (cp_pack_total_block_count), the device's errors.
Status load_curseg_summaries(BlockDevice& dev, const Geometry& geo, const Checkpoint& cp, std::uint64_t cp_start,
                             SummaryScope scope, CursegSummaries& out);

/// Summary entries the compact area holds for data log `type` (0..2):
/// cur_data_blkoff, or a whole segment for an SSR log (alloc_type 1), as
/// read_compacted_summaries() / write_compacted_summaries().
std::uint32_t compact_summary_entries(const Checkpoint& cp, unsigned type) noexcept;

}  // namespace f2fscore::disk
