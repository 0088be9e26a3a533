// Policies and counters of the log-structured writer's space management:
// the in-place-update (IPU) policy, SSR and garbage collection,
// and what fsync/fdatasync cost. Plain data; the Writer applies
// them (writer.hpp, docs/ipu.md, docs/gc.md).
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

#include "f2fscore/result.hpp"

namespace f2fscore {

/// `ipu_policy` bits, values as F2FS_IPU_* in fs/f2fs/segment.h
/// (Documentation/ABI/testing/sysfs-fs-f2fs).
namespace ipu_bit {
inline constexpr std::uint32_t force = 0x01;
inline constexpr std::uint32_t ssr = 0x02;
inline constexpr std::uint32_t util = 0x04;
inline constexpr std::uint32_t ssr_util = 0x08;
inline constexpr std::uint32_t fsync = 0x10;
inline constexpr std::uint32_t async = 0x20;
inline constexpr std::uint32_t nocache = 0x40;
inline constexpr std::uint32_t honor_opu_write = 0x80;
inline constexpr std::uint32_t all = 0xFF;
}  // namespace ipu_bit

/// The IPU tunables (/sys/fs/f2fs/<dev>/{ipu_policy,min_ipu_util,...}),
/// checked as __sbi_store() in fs/f2fs/sysfs.c checks them (docs/ipu.md).
struct IpuOptions {
  /// Sentinel: the kernel's default. For ipu_policy: F2FS_IPU_FSYNC (0x10),
  /// or FORCE|HONOR_OPU_WRITE (0x81) when the main area has at most
  /// 16 x 512 segments (16 GiB; f2fs_build_segment_manager() in
  /// fs/f2fs/segment.c, then f2fs_tuning_parameters() in fs/f2fs/super.c).
  static constexpr std::uint32_t kKernelDefault = 0xFFFFFFFFu;
  /// Bits of ipu_bit; values of 0x100 and more are refused (F2FS_IPU_MAX).
  std::uint32_t ipu_policy = kKernelDefault;
  /// Percent of the user blocks valid above which UTIL and SSR_UTIL write
  /// in place (utilization() > min_ipu_util; DEF_MIN_IPU_UTIL 70). The
  /// kernel stores any value; over 100 no write qualifies.
  std::uint32_t min_ipu_util = 70;
  /// fsync() of a file with at most this many dirty 4 KiB pages sets
  /// FI_NEED_IPU (f2fs_do_sync_file(); DEF_MIN_FSYNC_BLOCKS 8).
  std::uint32_t min_fsync_blocks = 8;
  /// Writeback of a file with at most this many dirty 4 KiB pages marks it
  /// hot (FI_HOT_DATA, f2fs_write_cache_pages(); DEF_MIN_HOT_BLOCKS 16).
  std::uint32_t min_hot_blocks = 16;
  /// Sections added to the reserve in need_SSR() (f2fs_need_SSR() in
  /// fs/f2fs/segment.c); kKernelDefault: reserved_sections(), i.e.
  /// rsvd_segment_count / segs_per_sec, as f2fs_build_segment_manager().
  std::uint32_t min_ssr_sections = kKernelDefault;
  /// The change proposed upstream and not merged ("f2fs: separate IPU
  /// policy for fdatasync from F2FS_IPU_FSYNC", 2022-10-21): the writeback
  /// of fdatasync() writes in place whatever ipu_policy says, and that of
  /// fsync() with at most min_fsync_blocks dirty pages when ipu_policy has
  /// FSYNC; the test comes right after HONOR_OPU_WRITE, before FORCE. Off:
  /// the kernel's behaviour.
  bool fdatasync_in_place = false;
};

/// Why a data block was written where it was. The in-place reasons are the
/// rules of f2fs_should_update_inplace() and check_inplace_update_policy()
/// in fs/f2fs/data.c (Linux 6.1), the out-of-place reasons the outer rules
/// of f2fs_should_update_outplace() and the policy that said no. Precedence
/// (docs/ipu.md): new block, direct I/O, pinned, directory, quota,
/// FI_OPU_WRITE, GC, cold, [fdatasync option], FORCE, SSR, UTIL, SSR_UTIL,
/// ASYNC, FSYNC, else out of place.
enum class IpuReason : std::uint8_t {
  // in place
  ipu_pinned = 0,        ///< pinned file (FI_PIN_FILE, set_pinned())
  ipu_cold,              ///< cold file (FADVISE_COLD_BIT) not being defragmented
  ipu_force,             ///< F2FS_IPU_FORCE
  ipu_ssr,               ///< F2FS_IPU_SSR and need_SSR()
  ipu_util,              ///< F2FS_IPU_UTIL and utilization > min_ipu_util
  ipu_ssr_util,          ///< F2FS_IPU_SSR_UTIL: need_SSR() and utilization > min_ipu_util
  ipu_async,             ///< F2FS_IPU_ASYNC: writeback without REQ_SYNC
  ipu_fsync,             ///< F2FS_IPU_FSYNC: fdatasync, or fsync with <= min_fsync_blocks dirty
  ipu_fdatasync_option,  ///< IpuOptions::fdatasync_in_place: fdatasync
  ipu_direct,            ///< direct I/O over a written block (f2fs_map_blocks(), non-LFS)
  // out of place
  opu_policy,            ///< no rule of ipu_policy asked for IPU
  opu_new_block,         ///< the block had no address yet (first write, hole, NEW_ADDR)
  opu_dir,               ///< directories (dentry blocks) are never updated in place
  opu_quota,             ///< quota files (IS_NOQUOTA)
  opu_defrag,            ///< FI_OPU_WRITE: rewritten by defragment()
  opu_gc,                ///< a GC move (page_private_gcing)
  opu_other,             ///< any other outer rule
  count_
};
inline constexpr std::size_t kIpuReasonCount = static_cast<std::size_t>(IpuReason::count_);
constexpr bool is_in_place(IpuReason r) { return r < IpuReason::opu_policy; }
/// A short name for reports ("ipu_force", "opu_new_block", ...).
const char* to_string(IpuReason r) noexcept;

/// Data writes by reason, and what fsync/fdatasync wrote.
struct IpuStats {
  std::array<std::uint64_t, kIpuReasonCount> data_blocks{};  ///< 4 KiB data blocks written, by reason
  std::uint64_t in_place() const;
  std::uint64_t out_of_place() const;
  std::uint64_t count(IpuReason r) const { return data_blocks[static_cast<std::size_t>(r)]; }
  std::uint64_t fsyncs = 0, fdatasyncs = 0;
  std::uint64_t fsync_node_blocks = 0, fsync_meta_blocks = 0;          ///< 4 KiB blocks written by fsync
  std::uint64_t fdatasync_node_blocks = 0, fdatasync_meta_blocks = 0;  ///< 4 KiB blocks written by fdatasync
  std::uint64_t fsync_checkpoints = 0;  ///< fsyncs that had to take a checkpoint (need_do_checkpoint())
};

/// Victim selection (select_policy() in fs/f2fs/gc.c).
enum class GcPolicy : std::uint8_t { greedy, cost_benefit };

struct GcOptions {
  GcPolicy background_policy = GcPolicy::cost_benefit;  ///< the kernel's BG default
  GcPolicy foreground_policy = GcPolicy::greedy;        ///< FG GC is always greedy in the kernel
  /// Background GC when idle (the gc_merge/gc thread); off unless asked.
  /// One victim section per idle interval, moved at the start of the first
  /// public call after it; freed by the next checkpoint (docs/gc.md).
  bool background = false;
  /// Seconds without a public call after which background GC runs (the GC
  /// thread's DEF_GC_THREAD_MIN_SLEEP_TIME, 30 s); 0: at every outermost
  /// changing call (tests).
  std::uint32_t idle_interval_s = 30;
};

struct GcStats {
  std::uint64_t foreground_runs = 0, background_runs = 0;
  std::uint64_t victims = 0;                 ///< sections selected
  std::uint64_t data_blocks_moved = 0, node_blocks_moved = 0;
  std::uint64_t sections_freed = 0;          ///< after the checkpoint that freed them
  std::uint64_t ssr_blocks = 0;              ///< blocks allocated by SSR (in dirty segments)
  std::uint64_t lfs_blocks = 0;              ///< blocks allocated by LFS (in free segments)
};

// ---- The inputs of the decisions (writer/ipu.cpp; Writer::space(), f2fscore-dump ipu) ----

/// The volume's space as the IPU, SSR and GC rules see it. Blocks are 4 KiB.
struct SpaceState {
  std::uint64_t user_blocks = 0;   ///< user_block_count of the checkpoint
  std::uint64_t valid_blocks = 0;  ///< valid_user_blocks(): data and node blocks in use
  std::uint32_t segs_per_sec = 1;
  std::uint32_t main_sections = 0;
  std::uint32_t free_sections = 0;      ///< no valid block and no active log (free_sections())
  std::uint32_t dirty_sections = 0;     ///< some but not all blocks valid, no active log
  std::uint32_t full_sections = 0;      ///< every block valid
  std::uint32_t reserved_sections = 0;  ///< rsvd_segment_count / segs_per_sec (reserved_sections())
  std::uint32_t overprov_sections = 0;  ///< overprov_segment_count / segs_per_sec
  /// utilization(): valid_blocks * 100 / user_blocks, rounded down, as
  /// fs/f2fs/segment.h computes it.
  std::uint32_t utilization() const noexcept {
    return user_blocks ? static_cast<std::uint32_t>(valid_blocks * 100 / user_blocks) : 0;
  }
};

/// What one data write looks like to the IPU rules: the per-inode and
/// per-request inputs of f2fs_should_update_outplace(),
/// f2fs_should_update_inplace() and check_inplace_update_policy()
/// (fs/f2fs/data.c).
struct IpuWrite {
  bool has_old_block = true;  ///< the block has a valid address (not NULL_ADDR/NEW_ADDR)
  bool dir = false;           ///< a directory's block
  bool quota = false;         ///< a quota file (IS_NOQUOTA)
  bool cold = false;          ///< file_is_cold()
  bool pinned = false;        ///< f2fs_is_pinned_file()
  bool opu_write = false;     ///< FI_OPU_WRITE: the file is being defragmented (defragment())
  bool gc = false;            ///< this write is a GC move (page_private_gcing)
  bool fsync = false;         ///< inside fsync()'s writeback
  bool fdatasync = false;     ///< inside fdatasync()'s writeback
  std::uint64_t file_dirty_pages = 0;  ///< the file's dirty pages when its fsync began
  bool sync_io = false;       ///< REQ_SYNC (false: async writeback, the F2FS_IPU_ASYNC case)
  bool other_opu = false;     ///< any other outer rule forcing OPU (compressed, encrypted, atomic)
  bool direct = false;        ///< direct I/O (f2fs_map_blocks() maps the written block)
};

/// need_SSR() (f2fs_need_SSR() in fs/f2fs/segment.c) for a volume with no
/// dirty node or dentry pages: free sections at most min_ssr_sections +
/// reserved sections. The mounted writer also counts its dirty node pages
/// (Writer::Impl::need_ssr()).
bool need_ssr(const SpaceState& s, const IpuOptions& o) noexcept;

/// The IPU rules as a pure function (writer/ipu.cpp, docs/ipu.md): which
/// rule places the write (is_in_place() of the result: in place), given the
/// resolved options (no kKernelDefault), the volume, need_SSR() and the
/// write. The writer decides every data write with it.
IpuReason decide_ipu(const IpuOptions& o, const SpaceState& s, bool ssr_needed, const IpuWrite& w) noexcept;

/// f2fs_should_update_inplace(inode, NULL): whether the policy writes the
/// file in place without looking at a particular request (no ASYNC, no
/// FI_NEED_IPU). F2FS_IOC_DEFRAGMENT refuses such files (with FI_OPU_WRITE
/// set: HONOR_OPU_WRITE lets FORCE files be defragmented).
bool ipu_inplace_without_io(const IpuOptions& o, const SpaceState& s, bool ssr_needed, const IpuWrite& w) noexcept;

/// Parses an ipu_policy: a number (0x81, 129) or bit names joined by '|' or
/// ',' (force, ssr, util, ssr_util, fsync, async, nocache, honor_opu_write),
/// or "default" (IpuOptions::kKernelDefault). Errors: Errc::invalid_argument
/// for unknown names and values of 0x100 or more (as the sysfs store).
Result<std::uint32_t> parse_ipu_policy(std::string_view s);
/// "0x81 (force|honor_opu_write)"; "0x0 (none)".
std::string ipu_policy_string(std::uint32_t policy);

/// The options as the kernel resolves them for a volume: kKernelDefault
/// ipu_policy is FORCE|HONOR_OPU_WRITE (0x81) when the main area has at
/// most 16 x 512 segments, else FSYNC (0x10) (f2fs_build_segment_manager(),
/// f2fs_tuning_parameters()); kKernelDefault min_ssr_sections is the
/// reserved sections.
IpuOptions resolve_ipu_options(IpuOptions o, std::uint32_t main_segments, std::uint32_t reserved_sections) noexcept;

}  // namespace f2fscore
