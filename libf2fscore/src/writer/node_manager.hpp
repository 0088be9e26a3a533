// The writer's node manager (as fs/f2fs/node.c's nm_i): NAT entries cached
// by NAT block as they are read (the current copy through the version
// bitmap, the NAT journal on top), the set of entries changed since the
// checkpoint (what the next checkpoint writes), the nids freed since the
// checkpoint (not reused before it), the free-nid search through nat_bits
// and the loaded NAT blocks, and the node page cache (the kernel's
// NODE_MAPPING): node blocks read or made, the dirty ones kept until they
// are written, the clean ones evicted least recently used first beyond a
// bound, as clean NAT blocks are.
#pragma once

#include <array>
#include <bitset>
#include <cstdint>
#include <memory>
#include <string>
#include <unordered_map>
#include <unordered_set>
#include <vector>

#include "f2fscore/disk/constants.hpp"
#include "f2fscore/disk/nat.hpp"
#include "f2fscore/disk/node.hpp"
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

/// A node block in memory (the kernel's node page).
/// What the quota usage holds of an inode page (writer/quota.cpp): its
/// user, group and project ids and its blocks as last charged.
struct QuotaCharge {
  bool known = false;    ///< false: not recorded yet (a page just read)
  bool counted = false;  ///< the inode is charged (not a quota file, not new)
  std::uint32_t id[3] = {};
  std::uint64_t blocks = 0;  ///< i_blocks - 1, as the VFS i_blocks counts them
};

struct NodePage {
  disk::Node n{};
  std::uint64_t used = 0;  ///< the cache's clock at its last use (eviction order)
  QuotaCharge charge;      ///< of an inode page on a quota volume
};

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
  /// Entries changed since the checkpoint (the kernel's DIRTY_NAT count).
  std::size_t changed_count() const noexcept { return changed_count_; }
  /// NAT blocks holding an entry changed since the checkpoint: cached until
  /// it, whatever the block bound.
  std::size_t dirty_blocks() const noexcept { return dirty_blocks_; }

  /// The first failed NAT block read since load(), if any.
  Status error() const;
  bool nat_bits_valid() const noexcept { return bits_ok_; }
  bool nat_block_full(std::uint32_t b) const;
  bool nat_block_empty(std::uint32_t b) const;
  std::size_t cached_blocks() const noexcept { return cache_.size(); }
  std::uint64_t blocks_read() const noexcept { return blocks_read_; }

  // ---- Node page cache ----
  // Pointers and references this class returns (pages, NAT entries) stay
  // valid until shrink(), drop_page() or new_page() of the same nid: the
  // caller calls shrink() only where it holds none (the writer: at the
  // start of an outermost public call).

  /// Bounds of what shrink() keeps: node pages and NAT blocks (clean ones
  /// are evicted beyond them; dirty ones are never dropped).
  void set_bounds(std::size_t pages, std::size_t nat_blocks) noexcept {
    page_bound_ = pages;
    nat_block_bound_ = nat_blocks;
  }
  std::size_t page_bound() const noexcept { return page_bound_; }
  std::size_t nat_block_bound() const noexcept { return nat_block_bound_; }
  /// The cached page of node `n`, or nullptr (a use: it moves to the back
  /// of the eviction order).
  disk::Node* cached_page(disk::nid_t n) {
    auto it = pages_.find(n);
    if (it == pages_.end()) return nullptr;
    it->second->used = ++clock_;
    return &it->second->n;
  }
  bool page_cached(disk::nid_t n) const { return pages_.count(n) != 0; }
  /// Reads node `n` from block `addr` of `dev` into the cache, clean.
  /// Errors: io; corrupt when the block's footer names another nid (as
  /// f2fs_get_node_page() checks nid_of_node()).
  Result<disk::Node*> read_page(BlockDevice& dev, disk::nid_t n, disk::block_t addr, std::uint16_t tag);
  /// A zeroed page for node `n`, dirty, replacing any cached one (its
  /// quota charge known and empty).
  disk::Node* new_page(disk::nid_t n);
  /// The quota charge of the cached page of `n`, or nullptr.
  QuotaCharge* charge(disk::nid_t n) {
    auto it = pages_.find(n);
    return it == pages_.end() ? nullptr : &it->second->charge;
  }
  /// Marks the cached page of `n` dirty (the next checkpoint writes it).
  void mark_dirty(disk::nid_t n) { dirty_.insert(n); }
  /// The page of `n` was written (it stays cached, clean).
  void clear_dirty(disk::nid_t n) { dirty_.erase(n); }
  bool page_dirty(disk::nid_t n) const { return dirty_.count(n) != 0; }
  /// Drops the page of `n`, dirty or not (the node is freed).
  void drop_page(disk::nid_t n);
  /// The nids of the dirty pages, ascending.
  std::vector<disk::nid_t> dirty_nids() const;
  std::size_t dirty_pages() const noexcept { return dirty_.size(); }
  std::size_t cached_pages() const noexcept { return pages_.size(); }
  /// After a checkpoint wrote every dirty page: all pages clean.
  void pages_written() { dirty_.clear(); }
  /// Evicts clean pages past the page bound and clean NAT blocks (none of
  /// their entries changed since the checkpoint) past the block bound,
  /// least recently used first, down to 7/8 of each bound (so that eviction
  /// runs once per bound/8 new pages, not at every call).
  void shrink();
  std::uint64_t pages_evicted() const noexcept { return pages_evicted_; }
  std::uint64_t blocks_evicted() const noexcept { return blocks_evicted_; }

 private:
  struct NatBlock {
    std::array<NatMem, disk::kNatEntryPerBlock> e;
    std::uint64_t used = 0;  ///< clock at its last use
    bool dirty = false;      ///< an entry changed since the checkpoint
    std::bitset<disk::kNatEntryPerBlock> changed;  ///< the entries changed since the checkpoint
  };
  Result<NatBlock*> block(std::uint32_t b);
  Volume* vol_ = nullptr;
  BlockDevice* dev_ = nullptr;
  disk::nid_t max_nid_ = 0;
  std::uint32_t nat_blocks_ = 0;
  disk::nid_t cursor_ = 0;
  std::unordered_map<std::uint32_t, std::unique_ptr<NatBlock>> cache_;
  std::unordered_map<disk::nid_t, disk::NatEntry> journal_;
  std::unordered_set<disk::nid_t> freed_;
  std::size_t dirty_blocks_ = 0, changed_count_ = 0;
  bool bits_ok_ = false;
  std::vector<std::uint8_t> full_bits_, empty_bits_;
  std::uint64_t blocks_read_ = 0;
  std::string error_;
  std::unordered_map<disk::nid_t, std::unique_ptr<NodePage>> pages_;
  std::unordered_set<disk::nid_t> dirty_;
  std::uint64_t clock_ = 0;
  std::size_t page_bound_ = 4096, nat_block_bound_ = 1024;
  std::uint64_t pages_evicted_ = 0, blocks_evicted_ = 0;
};

}  // namespace f2fscore::wr
