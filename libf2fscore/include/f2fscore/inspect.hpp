// Inspecting a volume: what the dump tool shows, rendered by the library as
// text or JSON (extraction to a host directory: f2fscore/extract.hpp).
//
// Every view works on an open (read-only) Volume. Views return the bytes to
// print, so the tool and the tests print and compare the same output; the
// library itself never prints. Text follows dump.f2fs where it has a form
// (fields as "name<tab><tab>[0xhex : decimal]"); JSON is one document per
// call, with the kernel's field names as keys.
//
// Errors: a view that cannot be produced at all returns the Error (naming
// the structure and the address). Views over many objects (ls -R, map,
// extraction) continue past a bad entry and list it in Output::problems.
#pragma once

#include <array>
#include <cstdint>
#include <functional>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "f2fscore/result.hpp"
#include "f2fscore/volume.hpp"
#include "f2fscore/writer_policy.hpp"

namespace f2fscore::inspect {

enum class Format : std::uint8_t { text, json };

/// What a view produced.
struct Output {
  std::string text;  ///< to print on stdout (text or one JSON document), newline-terminated
  /// Entries that could not be read ("/a/b: corrupt: inode 12 (block 9000): ...").
  /// In JSON they are also in the document ("problems"); in text they are
  /// not in `text` (a tool prints them on stderr). Non-empty means failure.
  std::vector<std::string> problems;
};

// ---------------------------------------------------------------- arguments

/// A number in decimal or 0x-hex. Errors: Errc::invalid_argument.
Result<std::uint64_t> parse_number(std::string_view text);

/// An inclusive range "A~B" (both ends included; unlike dump.f2fs, whose end
/// is exclusive). "A" alone is one item; "A~" and "A~-1" run to the last.
struct Range {
  std::uint64_t first = 0;
  std::uint64_t last = ~std::uint64_t{0};
};
Result<Range> parse_range(std::string_view text);

/// An inode by number ("12", "0xc") or by absolute or root-relative path
/// ("/dir/file", "dir/file"; "/" is the root). A name made only of digits
/// is a number: write "/12" for the file named 12.
Result<InodeInfo> find_inode(Volume& vol, std::string_view spec);

/// A path of inode `ino` from the root ("/a/b"), or std::nullopt when no
/// directory entry reaches it. Tries i_pino and i_name first (verified by
/// lookup), then walks the tree. Hard links: one of the paths.
Result<std::optional<std::string>> path_of(Volume& vol, nid_t ino);

// ------------------------------------------------------------------- names

/// The checkpoint flags as fsck.f2fs prints them (print_cp_state), in its
/// order: "quota_need_fsck large_nat_bitmap allow_nocrc trimmed nat_bits
/// crc fastboot fsck error compacted_summary orphan_inodes disabled
/// disabled_quick resizefs", then "unmount" or "sudden-power-off".
std::vector<std::string> checkpoint_flag_names(std::uint32_t ckpt_flags);
/// "hot_data" .. "cold_node" for a disk::CursegType value, else "type<N>".
std::string log_type_name(std::uint8_t type);
/// ls -l style mode: "drwxr-xr-x", "-rwsr-x---", "lrwxrwxrwx".
std::string mode_string(std::uint16_t mode);

/// Device number of a character or block device (or fifo/socket) inode,
/// as the kernel reads it (__get_inode_rdev(): the old 16-bit encoding in
/// the first data slot, else the new 32-bit one in the second).
struct DeviceNumber {
  std::uint32_t major = 0, minor = 0;
};
DeviceNumber device_number(const InodeInfo& inode);

// ---------------------------------------------------------- structured data

/// A run of file blocks mapped to consecutive block addresses. `blkaddr` is
/// the first address; runs of NEW_ADDR (allocated, unwritten) and
/// COMPRESS_ADDR (compressed cluster headers) keep that address for every
/// block of the run. Holes (NULL_ADDR) are the gaps between runs.
struct BlockRun {
  std::uint64_t file_block = 0;
  block_t blkaddr = 0;
  std::uint32_t len = 0;
};

/// A node of an inode's node tree (direct, indirect, double indirect) and
/// its xattr node.
struct NodeRef {
  nid_t nid = 0;
  block_t blkaddr = 0;
  std::uint32_t offset = 0;  ///< node offset in the tree (the footer's ofs_of_node)
  enum class Kind : std::uint8_t { direct, indirect, double_indirect, xattr } kind = Kind::direct;
};

struct BlockMap {
  std::vector<BlockRun> runs;   ///< in file order
  std::vector<NodeRef> nodes;   ///< in tree order, xattr node last
  std::uint64_t mapped_blocks = 0;  ///< blocks with a real address (not NEW/COMPRESS)
};

/// Walks the whole node tree of `inode` (i_addr, 2 direct, 2 indirect, 1
/// double indirect node), skipping absent subtrees, so a sparse terabyte
/// costs only its nodes. Inline inodes have no runs. Errors: Errc::corrupt
/// when a node belongs to another inode or appears twice.
Result<BlockMap> block_map(Volume& vol, const InodeInfo& inode);

/// The file block of the data address at `ofs_in_node` of the node at tree
/// offset `node_offset` (start_bidx_of_node() + ofs_in_node).
std::uint64_t file_block_of(const InodeInfo& inode, std::uint32_t node_offset, std::uint32_t ofs_in_node);

/// Who owns a block (dump.f2fs -b, extended).
struct BlockOwner {
  block_t blkaddr = 0;
  /// "superblock", "checkpoint", "sit", "nat", "ssa", "main", "beyond".
  std::string area;
  std::string detail;  ///< for metadata areas: which copy or pack, which entries
  // Main area only:
  std::uint32_t segno = 0, offset_in_segment = 0;
  std::uint8_t seg_type = 0;      ///< from the SIT
  std::uint32_t seg_valid_blocks = 0;
  bool valid = false;              ///< the SIT valid map has this block
  std::optional<std::uint8_t> current_log;  ///< the active log writing this segment
  bool node = false;               ///< SSA says node (else data)
  nid_t sum_nid = 0;               ///< the SSA entry: owner node
  std::uint16_t sum_ofs_in_node = 0;
  std::uint8_t sum_version = 0;
  nid_t nid = 0;                   ///< the node (node blocks) or the dnode (data)
  nid_t ino = 0;                   ///< the inode owning it, 0 if unknown
  std::uint32_t node_offset = 0;   ///< ofs_of_node of that node
  std::optional<std::uint64_t> file_block;  ///< data: block index in the file
  /// The owner still points here: NAT (node) or the file's mapping (data).
  bool live = false;
  std::optional<std::string> path;
  std::vector<std::string> notes;  ///< why it is not live, what could not be read
};
Result<BlockOwner> block_owner(Volume& vol, block_t blkaddr);

/// Space use: what GC, SSR and IPU decisions look at.
struct SpaceSummary {
  struct Log {
    std::uint32_t segments = 0;  ///< segments of this type holding valid blocks (current included)
    std::uint32_t full = 0;      ///< all 512 blocks valid
    std::uint32_t dirty = 0;     ///< partly valid, not current (GC/SSR candidates)
    std::uint64_t valid_blocks = 0;
    std::uint32_t current_segno = 0;  ///< the active log's segment
    std::uint32_t current_blkoff = 0;
  };
  std::uint32_t main_segments = 0, segs_per_sec = 1, blocks_per_segment = 512;
  std::uint64_t user_block_count = 0;      ///< checkpoint
  std::uint64_t valid_block_count = 0;     ///< checkpoint
  std::uint32_t valid_node_count = 0, valid_inode_count = 0;
  std::uint32_t cp_free_segments = 0;      ///< free_segment_count in the checkpoint
  std::uint32_t rsvd_segments = 0, overprov_segments = 0;
  std::uint64_t sit_valid_blocks = 0;      ///< sum over the SIT
  std::uint32_t free_segments = 0;         ///< no valid block and not current
  std::uint32_t free_sections = 0;
  std::uint32_t full_segments = 0, dirty_segments = 0, current_segments = 0;
  std::uint64_t reclaimable_blocks = 0;    ///< invalid blocks in dirty segments
  std::array<Log, 6> logs{};               ///< disk::CursegType order
  std::uint32_t other_type_segments = 0;   ///< SIT type outside 0..5
  /// Segments holding valid blocks by utilization: [0]=(0,10%) ..
  /// [9]=[90%,100%]; free segments are not counted.
  std::array<std::uint32_t, 10> histogram{};
};
Result<SpaceSummary> space_summary(Volume& vol);

// ------------------------------------------------------------ rendered views

/// How the volume was opened: superblock copy, checkpoint pack and version,
/// warnings, clean unmount or pending roll-forward, orphans, nat_bits.
Result<Output> render_info(Volume& vol, Format f);
/// Every superblock field, with feature names.
Output render_superblock(const disk::SuperBlock& sb, Format f);
/// Superblock copy `copy` (0 or 1) as stored, unchecked: for looking at a
/// volume that does not open, or at the copy not in use. Errors:
/// Errc::invalid_argument (copy), the device's read errors.
Result<disk::SuperBlock> raw_superblock(BlockDevice& dev, int copy);
/// Every checkpoint field, flags by name, version bitmaps, orphans.
Result<Output> render_checkpoint(Volume& vol, Format f);
/// NAT entries of nids in `r` (used ones: block_addr or ino non-zero),
/// with the node's offset and cp_ver, and where the entry came from.
Result<Output> render_nat(Volume& vol, Range r, Format f);
/// SIT entries of main-area segments in `r`, with valid maps.
Result<Output> render_sit(Volume& vol, Range r, Format f);
/// SSA (summary) blocks of segments in `r`: every used entry.
Result<Output> render_ssa(Volume& vol, Range r, Format f);
/// Every field of an inode, its extra attributes, xattrs, encryption and
/// verity descriptors, its node blocks and its block map.
Result<Output> render_inode(Volume& vol, const InodeInfo& inode, Format f);
/// block_owner() rendered. Errors: Errc::invalid_argument for an address
/// past the main area (block_owner()'s area "beyond"), as render_sit() for a
/// segment past it.
Result<Output> render_block(Volume& vol, block_t blkaddr, Format f);

struct LsOptions {
  bool long_format = false;  ///< -l: mode, links, owner, size, mtime, link target
  bool recursive = false;    ///< -R
};
/// Lists a directory (sorted by name, "." and ".." left out) or shows one
/// non-directory, like ls -1 / ls -l / ls -R.
Result<Output> render_ls(Volume& vol, std::string_view path, const LsOptions& o, Format f);

/// The file-to-block map of every inode under `path` (fsck.f2fs -M, one
/// line per file: "path r1 r2 ...", a run "a-b" or "a", a hole "0" or
/// "0*N" for N blocks).
Result<Output> render_map(Volume& vol, std::string_view path, Format f);
/// space_summary() rendered.
Result<Output> render_space(Volume& vol, Format f);
/// (stats) The inputs of the IPU decisions for the image at rest and what
/// each rule, and the policy `ipu` as a whole, would decide now for typical
/// writes (docs/stats.md): utilization, free/dirty/full sections, need_SSR,
/// valid blocks per segment by log type (every segment with `segments`).
/// kKernelDefault in `ipu` resolves as the kernel does for this volume.
Result<Output> render_ipu(Volume& vol, const IpuOptions& ipu, bool segments, Format f);

/// Receives file contents or rendered output piece by piece.
using ByteSink = std::function<Status(std::span<const std::uint8_t>)>;
/// The contents of a regular file: text streams the raw bytes to `sink`;
/// JSON sends one document {path, ino, size, encoding: "base64", data}.
/// Errors: Errc::unsupported for a non-regular or an encrypted file, and
/// read errors.
Status cat(Volume& vol, std::string_view spec, Format f, const ByteSink& sink);

}  // namespace f2fscore::inspect
