// A corruption library for the checker's tests: typed edits of an F2FS
// volume, applied through the library's own layout code (disk/*.hpp
// records, Volume for lookups), with the checksums the edit breaks
// re-sealed (inode checksum, checkpoint CRC and the nat_bits header that
// carries it, superblock CRC) unless the edit is raw.
//
// An edit is a string, the same for the tests and for the f2fscore-corrupt
// tool:   [raw:]TARGET[ARG].FIELD OP VALUE      OP: = += -= |= &= ^=
//         [raw:]ACTION[ARG]=VALUE               (actions, below)
//
// ARG is a number (decimal or 0x-hex) or a path. A path names an inode
// ("/dir/file"); for block targets "/path@K" names the block that file
// block K maps to, and "/path" the inode's node block.
//
// Targets and fields (4 KiB blocks; byte offsets from the record start):
//   sb[0|1].FIELD            superblock copy 0 or 1 (magic, log_blocksize,
//                            segment_count_main, cp_blkaddr, qf_ino[i], crc,
//                            devs0.path[i] (a byte of devs[0].path),
//                            devs0.total_segments, ...)
//   cp.FIELD, cpx.FIELD      the checkpoint pack in use / the other pack
//                            (valid_block_count, free_segment_count,
//                            cur_data_blkoff[i], ckpt_flags, crc, ...);
//                            both copies of the CP block in the pack are edited
//   nat[NID].F               version, ino, block_addr: the entry where it
//                            lives (NAT journal of the hot data log, else the
//                            current NAT copy per the CP's version bitmap)
//   sit[SEGNO].F             vblocks (count, type kept), type, mtime,
//                            valid_map[BIT] (0/1): SIT journal, else the
//                            current SIT copy; ARG may be "/path@K"
//   ssa[BLKADDR].F           nid, version, ofs_in_node: the summary entry of
//                            a main-area block (active logs: in the CP pack)
//   natj.n_nats, sitj.n_sits the journal counts
//   nat_bits.full[K], nat_bits.empty[K]   nat_bits bits of NAT block K
//   inode[INO].F             i_mode ... i_namelen, i_dir_level, i_ext.fofs,
//                            i_ext.blk_addr, i_ext.len, i_extra_isize,
//                            i_inline_xattr_size, i_projid, i_inode_checksum,
//                            i_compr_blocks, i_compress_algorithm,
//                            i_log_cluster_size, i_compress_flag,
//                            i_addr[K] (raw slot K), addr[K] (data slot K:
//                            past the extra area), i_nid[K], footer.F
//   node[NID].F              footer.nid, footer.ino, footer.flag,
//                            footer.offset (flag >> 3), footer.cp_ver,
//                            footer.next_blkaddr, addr[K], nid[K]
//   dentry[/dir/NAME].F      hash_code, ino, name_len, file_type, bit
//                            (its bitmap bit); "." and ".." too; inline
//                            dentries as well as dentry blocks
//   xattr[INO].entry[K].F    e_name_index, e_name_len, e_value_size
//   xattr[INO].trailing      a word after the list's end marker
//   block[BLKADDR].u8[OFF] / u16 / u32 / u64      raw bytes (never re-sealed)
// Actions:
//   block[BLKADDR].zero=1               zero the block
//   dentry_add[/dir/NAME]=INO[:FTYPE]   add an entry (hash of NAME) in the
//                                       directory's first block with room
//   dentry_del[/dir/NAME]=1             clear the entry's bitmap bits
//   dentry_move[/dir/NAME]=BIDX         move the entry to directory block BIDX
//   orphan_add=INO                      append to the CP's orphan list
//                                       (inserts an orphan block if none)
//   fsync_chain[INO]=loop|bad           write a copy of INO's inode block,
//                                       marked fsync+dentry with this CP's
//                                       version, at the warm node log's next
//                                       block; "loop": its next_blkaddr is
//                                       itself; "bad": the copy names a
//                                       nid past the NAT
//   xattr_inline[INO]=1                 move the xattr node's entries into
//                                       the inline xattr area (sload.f2fs
//                                       keeps the header in the node)
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "f2fscore/device.hpp"
#include "f2fscore/disk/dentry.hpp"
#include "f2fscore/result.hpp"
#include "f2fscore/volume.hpp"

namespace f2fstest::corrupt {

using f2fscore::Result;
using f2fscore::Status;
using f2fscore::disk::block_t;
using f2fscore::disk::nid_t;

/// Where a record lives: block, byte offset, and whether it came from the
/// checkpoint pack (journals, active logs' summaries).
struct Loc {
  std::uint64_t blk = 0;
  std::uint32_t off = 0;
  bool in_cp_pack = false;
};

/// A dentry found by name.
struct DentryLoc {
  nid_t dir = 0;
  bool is_inline = false;
  std::uint64_t blk = 0;          ///< the dentry block, or the directory's inode block
  std::uint32_t bidx = 0;         ///< directory block index (0 when inline)
  std::uint32_t slot = 0;
  std::uint32_t bitmap_off = 0;   ///< byte offset of the bitmap in `blk`
  std::uint32_t dentry_off = 0;   ///< byte offset of DirEntry[slot]
  std::uint32_t name_off = 0;     ///< byte offset of the name slots
  std::uint32_t nr_slots = 0;
  f2fscore::disk::DirEntry de{};
};

class Corruptor {
 public:
  /// Opens the volume on `dev` (which must outlive the Corruptor).
  static Result<std::unique_ptr<Corruptor>> open(f2fscore::BlockDevice& dev);

  /// Applies one edit string (grammar above).
  Status apply(std::string_view edit);

  // ---- Lookups (after the last edit) ----
  f2fscore::Volume& vol() { return *vol_; }
  /// Why the volume no longer opens after the last edit ("" when it does);
  /// lookups then use the volume as last opened.
  const std::string& stale() const { return stale_; }
  const f2fscore::disk::SuperBlock& sb() const { return vol_->superblock(); }
  const f2fscore::disk::Checkpoint& cp() const { return vol_->checkpoint(); }
  /// First block of the checkpoint pack in use (or of the other pack).
  std::uint64_t cp_start(bool other = false) const;
  Result<nid_t> ino(std::string_view path);
  /// The node block of a nid (its NAT entry's block_addr).
  Result<block_t> node_blk(nid_t nid);
  /// The raw node block of a nid.
  Result<f2fscore::disk::Node> node(nid_t nid);
  /// The block address file block `index` of inode `ino` maps to, as stored
  /// (raw i_addr/dnode walk; no inode checks).
  Result<block_t> data_blk(nid_t ino, std::uint64_t index);
  /// The nid of the node holding file block `index` (the inode or a dnode)
  /// and the slot in its address array (ofs_in_node, as the SSA records it).
  Result<std::pair<nid_t, std::uint32_t>> data_owner(nid_t ino, std::uint64_t index);
  Result<Loc> nat_loc(nid_t nid);
  Result<Loc> sit_loc(std::uint32_t segno);
  Result<Loc> ssa_loc(block_t blkaddr);
  Result<DentryLoc> dentry(std::string_view dir_path, std::string_view name);
  /// A directory's dentry areas (its inline area, or each mapped block),
  /// slot and de left empty.
  Result<std::vector<DentryLoc>> dentry_areas(std::string_view dir_path);
  /// Data slot 0 in i_addr of an inode (extra_isize / 4).
  Result<std::uint32_t> data_slot0(nid_t ino);
  /// A nid whose NAT entry is null, from `from` up.
  Result<nid_t> free_nid(nid_t from = 100);
  /// The first block of a main-area segment with no valid blocks that is no
  /// active log's.
  Result<block_t> free_block();
  /// Resolves an ARG ("123", "0x7b", "/path", "/path@K") to a number:
  /// `block` selects block semantics for paths (node block / data block).
  Result<std::uint64_t> resolve(std::string_view arg, bool block);

  /// Reads/writes one block (4 KiB) of the device.
  Status read(std::uint64_t blk, std::uint8_t* out);
  Status write(std::uint64_t blk, const std::uint8_t* in);

 private:
  explicit Corruptor(f2fscore::BlockDevice& dev) : dev_(dev) {}
  Status reopen();
  Status edit_cp(bool other, const std::string& field, int op, std::uint64_t value, bool raw);
  Status seal_node_block(std::uint8_t* b);
  Status rewrite_cp_blocks(bool other, std::vector<std::uint8_t>& pack, std::uint32_t old_total, bool raw);
  Status orphan_add(nid_t ino);
  Status fsync_chain(nid_t ino, std::string_view kind);
  Status dentry_add(std::string_view dir_path, std::string_view name, std::string_view value);
  Status dentry_move(std::string_view dir_path, std::string_view name, std::uint32_t bidx);

  f2fscore::BlockDevice& dev_;
  std::unique_ptr<f2fscore::Volume> vol_;
  std::string stale_;
};

/// Applies each edit in order to the volume on `dev`.
Status apply_edits(f2fscore::BlockDevice& dev, const std::vector<std::string>& edits);

}  // namespace f2fstest::corrupt
