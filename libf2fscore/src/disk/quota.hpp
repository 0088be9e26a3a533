// Quota files in the quota-v2 format (QFMT_VFS_V1): a header, then a
// four-level radix tree of 1 KiB blocks over the 32-bit id leading to data
// blocks of v2r1 entries (fs/quota/quota_tree.c, quotaio_v2.h and
// quota_tree.h in Linux). What mkfs.f2fs writes, the kernel's dquot code
// keeps and fsck.f2fs compares. Private to the library: the checker and the
// writer share it.
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <vector>

namespace f2fscore::disk::quota {

inline constexpr std::uint32_t kQtBlk = 1024;     ///< QT_BLKSIZE
inline constexpr std::uint32_t kQtTreeOff = 1;    ///< QT_TREEOFF: the root block
inline constexpr std::uint32_t kQtDepth = 4;      ///< QT_TREEDEPTH
inline constexpr std::uint32_t kDqdbHeader = 16;  ///< struct qt_disk_dqdbheader
inline constexpr std::uint32_t kV2r1Entry = 72;   ///< struct v2r1_disk_dqblk
inline constexpr std::uint32_t kDqstrInBlk = (kQtBlk - kDqdbHeader) / kV2r1Entry;  ///< 14 entries per data block
/// struct v2_disk_dqinfo after the 8-byte v2_disk_dqheader of block 0.
inline constexpr std::uint32_t kDqiBgrace = 8, kDqiIgrace = 12, kDqiFlags = 16, kDqiBlocks = 20, kDqiFreeBlk = 24,
                               kDqiFreeEntry = 28;
/// Fields of struct v2r1_disk_dqblk (byte offsets in an entry). Limits of
/// space are in 1 KiB units (v2_qbtos()), current space in bytes.
inline constexpr std::uint32_t kDqbId = 0, kDqbIhardlimit = 8, kDqbIsoftlimit = 16, kDqbCurinodes = 24,
                               kDqbBhardlimit = 32, kDqbBsoftlimit = 40, kDqbCurspace = 48, kDqbBtime = 56,
                               kDqbItime = 64;

/// One entry of a quota file.
struct Dquot {
  std::uint64_t file_off = 0;  ///< byte offset of the entry in the file
  std::uint64_t inodes = 0;    ///< dqb_curinodes
  std::uint64_t space = 0;     ///< dqb_curspace, bytes
  std::uint64_t ihardlimit = 0, isoftlimit = 0;  ///< inodes (0: none)
  std::uint64_t bhardlimit = 0, bsoftlimit = 0;  ///< 1 KiB units (0: none)
  std::uint64_t btime = 0, itime = 0;            ///< grace deadlines, seconds since the epoch
};

/// The entries of quota file `file` by id, found by walking the tree from
/// the root as qtree_read_dquot() does. Returns an empty string, or why the
/// tree cannot be walked (a reference outside the file or a loop) or holds
/// two entries for one id; `out` then holds what was found before.
std::string read_dquots(const std::vector<std::uint8_t>& file, std::map<std::uint32_t, Dquot>& out);

/// Adds an entry for `id` with the given usage (no limits), as
/// dq_insert_tree() / find_free_dqentry() / get_free_dqblk() in
/// fs/quota/quota_tree.c do: tree blocks are made below the first missing
/// reference, the entry takes the first unused slot of the head of the
/// free-entry list (or of a new data block), new blocks come from the
/// free-block list or else from dqi_blocks. With `grow` false dqi_blocks may
/// only grow within the file as it is (file.size()); with `grow` the vector
/// grows by 1 KiB blocks. On success `file` holds the new content and
/// *entry_off (when given) the entry's byte offset; on failure `file` is
/// unchanged and the reason is returned.
std::string insert_dquot(std::vector<std::uint8_t>& file, std::uint32_t id, std::uint64_t inodes, std::uint64_t space,
                         bool grow = false, std::uint64_t* entry_off = nullptr);

/// Removes the entry of `id` at byte `entry_off` from the tree, as
/// qtree_delete_dquot() / free_dqentry() / remove_tree() do: the entry is
/// zeroed, a data block left empty leaves the free-entry list and goes to
/// the free-block list (a block that was full joins the free-entry list),
/// tree blocks left empty go to the free-block list (never the root). On
/// failure `file` is unchanged and the reason is returned.
std::string delete_dquot(std::vector<std::uint8_t>& file, std::uint32_t id, std::uint64_t entry_off);

}  // namespace f2fscore::disk::quota
