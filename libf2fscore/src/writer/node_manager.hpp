// The writer's node manager (as fs/f2fs/node.c's nm_i): NAT entries cached
// by NAT block as they are read (the current copy through the version
// bitmap, the NAT journal on top), the set of entries changed since the
// checkpoint (what the next checkpoint writes), the nids freed since the
// checkpoint (not reused before it) and the free-nid search through
// nat_bits and the loaded NAT blocks.
#pragma once

#include <array>
#include <cstdint>
#include <memory>
#include <unordered_map>
#include <unordered_set>
#include <vector>

#include "f2fscore/disk/constants.hpp"
#include "f2fscore/disk/nat.hpp"
#include "f2fscore/meta_rebuild.hpp"
#include "f2fscore/result.hpp"

namespace f2fscore {
class Volume;
class BlockDevice;
namespace meta {
struct MetaView;
}
}  // namespace f2fscore

namespace f2fscore::wr {

struct NatMem {
  disk::nid_t ino = 0;
  disk::block_t addr = 0;  ///< kNewAddr: a node not yet written
  std::uint8_t version = 0;
};

class NodeManager {
 public:
  NodeManager();
  ~NodeManager();
  NodeManager(const NodeManager&) = delete;
  NodeManager& operator=(const NodeManager&) = delete;

  /// Takes the current checkpoint's view of `vol` (read through `dev`):
  /// the NAT version bitmap, the NAT journal and, when they match the
  /// checkpoint (CP_NAT_BITS_FLAG and the header's cp_ver and crc, as
  /// f2fs_init_nat_bits() checks), the nat_bits. Reads no NAT block.
  /// Entries already cached stay (they are the writer's truth); the sets of
  /// changed and freed nids start empty. `first_nid`: where the free-nid
  /// search starts. Errors: io, corrupt (a bad journal count).
  Status load(Volume& vol, BlockDevice& dev, disk::nid_t first_nid);

  disk::nid_t max_nid() const noexcept { return max_nid_; }
  /// The entry of `n`, its NAT block read on first use. A nid past the NAT
  /// reads as free; a failed read too, and error() then reports it.
  const NatMem& get(disk::nid_t n);
  /// The entry of `n` for a change the next checkpoint writes.
  NatMem& set(disk::nid_t n);
  /// Marks `n` (already set free) as freed since the checkpoint: the
  /// free-nid search skips it until committed().
  void mark_freed(disk::nid_t n) { freed_.insert(n); }
  /// A free nid: the first at or after the search position (wrapping) whose
  /// entry has no address and no inode and that was not freed since the
  /// checkpoint; NAT blocks nat_bits marks full and not cached are skipped
  /// unread, those it marks empty give their first nid unread (as
  /// scan_nat_bits() in fs/f2fs/node.c; the block is read when the nid's
  /// entry is set), others are read and scanned (scan_nat_page()). Nids up
  /// to `reserved` and node_ino/meta_ino are never given. Errors: no_space
  /// when no nid is free, io.
  Result<disk::nid_t> alloc(disk::nid_t reserved, disk::nid_t node_ino, disk::nid_t meta_ino);
  void set_cursor(disk::nid_t n) noexcept { cursor_ = n; }

  /// The entries changed since the checkpoint, by nid.
  std::vector<meta::NatUse> changed_entries() const;
  /// For each NAT block holding a changed entry: entries with an address
  /// (nid 0 counted as used, as update_nat_bits() in fs/f2fs/node.c).
  std::vector<std::pair<std::uint32_t, std::uint32_t>> changed_block_usage() const;
  /// After the checkpoint that wrote the changes: nothing changed, nothing
  /// freed since.
  void committed();

  /// The first failed NAT block read since load(), if any.
  Status error() const;
  bool nat_bits_valid() const noexcept { return bits_ok_; }
  bool nat_block_full(std::uint32_t b) const;
  bool nat_block_empty(std::uint32_t b) const;
  std::size_t cached_blocks() const noexcept { return cache_.size(); }
  std::uint64_t blocks_read() const noexcept { return blocks_read_; }

 private:
  struct NatBlock {
    std::array<NatMem, disk::kNatEntryPerBlock> e;
  };
  Result<NatBlock*> block(std::uint32_t b);
  Volume* vol_ = nullptr;
  BlockDevice* dev_ = nullptr;
  disk::nid_t max_nid_ = 0;
  std::uint32_t nat_blocks_ = 0;
  disk::nid_t cursor_ = 0;
  std::unordered_map<std::uint32_t, std::unique_ptr<NatBlock>> cache_;
  std::unordered_map<disk::nid_t, disk::NatEntry> journal_;
  std::unordered_set<disk::nid_t> changed_, freed_;
  bool bits_ok_ = false;
  std::vector<std::uint8_t> full_bits_, empty_bits_;
  std::uint64_t blocks_read_ = 0;
  std::string error_;
};

}  // namespace f2fscore::wr
