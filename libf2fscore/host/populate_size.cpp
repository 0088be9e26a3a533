// What populate() of a host tree writes (populate_size.hpp): a walk of the
// tree as populate() makes it, counting blocks instead of writing them.
#include "f2fscore/populate_size.hpp"

#include <algorithm>
#include <map>
#include <optional>
#include <set>
#include <utility>
#include <vector>

#include "f2fscore/checksum.hpp"
#include "f2fscore/disk/constants.hpp"
#include "f2fscore/disk/dentry.hpp"
#include "f2fscore/disk/node.hpp"
#include "f2fscore/disk/xattr.hpp"

#include "populate_host.hpp"

namespace f2fscore {

namespace {

namespace host = populate_host;
using namespace disk;

constexpr std::uint64_t kBlock = 4096;
constexpr std::uint32_t kInlineXattrBytes = 4 * kDefaultInlineXattrAddrs;  // 200
// What the inline area holds of entries: less the header and the end mark.
constexpr std::uint32_t kInlineXattrRoom = kInlineXattrBytes - static_cast<std::uint32_t>(sizeof(XattrHeader)) - 4;

/// The node blocks over a file's block indexes, counted once each, in
/// increasing order of index (get_node_path() in fs/f2fs/node.c: i_addr,
/// 2 direct, 2 indirect of 1018 direct, 1 double indirect).
class NodeCounter {
 public:
  explicit NodeCounter(std::uint64_t api) : api_(api) {}

  /// Counts the nodes over block indexes [from, to).
  void range(std::uint64_t from, std::uint64_t to) {
    const std::uint64_t apb = kDefAddrsPerBlock, n = kNidsPerBlock;
    std::uint64_t i = std::max(from, api_);
    while (i < to) {
      const std::uint64_t r = i - api_;  // index past i_addr
      // One direct node per apb indexes from api_: the direct node's number
      // in order, and (past the two direct nodes of the inode) its indirect.
      const std::uint64_t direct = r / apb;
      if (direct != last_direct_) {
        last_direct_ = direct;
        ++nodes_;
        if (direct >= 2) {
          const std::uint64_t ind = (direct - 2) / n;  // 0, 1: indirect; 2 and on: below the double indirect
          if (ind != last_ind_) {
            last_ind_ = ind;
            ++nodes_;
            if (ind >= 2 && !dind_) {
              dind_ = true;
              ++nodes_;
            }
          }
        }
      }
      i = api_ + (direct + 1) * apb;
    }
  }
  std::uint64_t nodes() const { return nodes_; }

 private:
  std::uint64_t api_;
  std::uint64_t nodes_ = 0;
  std::uint64_t last_direct_ = ~0ull, last_ind_ = ~0ull;
  bool dind_ = false;
};

/// The dentry blocks of one directory as the writer fills them
/// (Writer::Impl::add_entry(): level by level, the bucket of the hash, the
/// first block of it with room; a new directory's block 0 holds "." and "..").
class DirSim {
 public:
  DirSim() { block(0)[0] = 0x03; }  // slots 0 and 1: "." and ".."

  /// Adds a name of `len` bytes with hash `hash`; false when the levels
  /// are exhausted (the writer's no_space).
  bool add(std::size_t len, std::uint32_t hash) {
    const std::uint32_t need = static_cast<std::uint32_t>((len + kSlotLen - 1) / kSlotLen);
    for (std::uint32_t level = 0; level < 64; ++level) {
      const std::uint32_t nb = dir_buckets(level, 0);
      const std::uint64_t bidx = block_index(level, hash % nb);
      for (std::uint64_t b = bidx; b < bidx + bucket_blocks(level); ++b) {
        auto& bits = block(b);
        const std::uint32_t pos = room(bits, need);
        if (pos >= kNrDentryInBlock) continue;
        for (std::uint32_t k = pos; k < pos + need; ++k) bits[k / 8] = static_cast<std::uint8_t>(bits[k / 8] | (1u << (k % 8)));
        return true;
      }
    }
    return false;
  }
  /// Blocks holding an entry, and their node blocks past i_addr.
  std::uint64_t blocks() const {
    std::uint64_t n = 0;
    for (const auto& [idx, bits] : blocks_)
      if (std::any_of(bits.begin(), bits.end(), [](std::uint8_t b) { return b != 0; })) ++n;
    return n;
  }
  std::uint64_t nodes(std::uint64_t api) const {
    NodeCounter c(api);
    for (const auto& [idx, bits] : blocks_) c.range(idx, idx + 1);
    return c.nodes();
  }

 private:
  using Bits = std::vector<std::uint8_t>;
  static std::uint64_t block_index(std::uint32_t level, std::uint32_t idx) {
    std::uint64_t b = 0;
    for (std::uint32_t i = 0; i < level; ++i) b += static_cast<std::uint64_t>(dir_buckets(i, 0)) * bucket_blocks(i);
    return b + static_cast<std::uint64_t>(idx) * bucket_blocks(level);
  }
  Bits& block(std::uint64_t idx) {
    auto it = blocks_.find(idx);
    if (it == blocks_.end()) it = blocks_.emplace(idx, Bits(kDentryBitmapSize, 0)).first;
    return it->second;
  }
  static bool bit(const Bits& b, std::uint32_t i) { return b[i / 8] & (1u << (i % 8)); }
  // The first run of n free slots (DView::room() in writer/dir.cpp).
  static std::uint32_t room(const Bits& b, std::uint32_t n) {
    for (std::uint32_t i = 0; i + n <= kNrDentryInBlock; ++i) {
      std::uint32_t k = 0;
      while (k < n && !bit(b, i + k)) ++k;
      if (k == n) return i;
      i += k;
    }
    return kNrDentryInBlock;
  }
  std::map<std::uint64_t, Bits> blocks_;
};

class Estimator {
 public:
  Estimator(std::uint32_t features, const PopulateOptions& o) : o_(o), features_(features) {
    const std::uint32_t extra = (features & feature::extra_attr) ? extra_isize_for_features(features) : 0;
    api_ = addrs_per_inode(extra, kDefaultInlineXattrAddrs);
    max_inline_ = max_inline_data(extra, kDefaultInlineXattrAddrs);
    links_file_ = host::links_file_name();
  }

  Status directory(const std::string& src, bool top) {
    std::optional<Error> read_error;
    auto names = host::list(src, read_error);
    if (!names) return {};  // populate() reports it as a problem of the entry
    std::sort(names->begin(), names->end(), [](const host::Name& a, const host::Name& b) { return a.volume < b.volume; });
    DirSim dir;
    for (const auto& n : *names) {
      if (top && links_file_ != nullptr && n.host == links_file_) continue;
      const std::string path = host::child(src, n.host);
      auto st = host::lstat(path);
      if (!st) continue;
      if (!dir.add(n.volume.size(), dentry_hash(n.volume))) continue;  // populate(): a problem of the entry
      ++e_.entries;
      entry(path, *st);
      if (st->kind == host::Kind::directory) F2FSCORE_TRY(directory(path, false));
    }
    // The target's block 0 exists already; a new directory's is counted.
    const std::uint64_t b = dir.blocks();
    e_.dentry_blocks += top ? (b > 0 ? b - 1 : 0) : b;
    e_.dnode_blocks += dir.nodes(api_);
    return {};
  }

  PopulateEstimate result() const {
    PopulateEstimate e = e_;
    // Quota files (-O quota): one dquot of 72 bytes per id, 14 to a 1 KiB
    // quota block, under a 4-level tree of 256 references a block (the
    // v2r1 format of quota-tools, as fs/quota/quota_tree.c reads it), in
    // 4 KiB blocks; the ids are the owners the copy gives (0 unless
    // preserve_owner; with fs_config up to 64 of the rules').
    if (features_ & feature::quota_ino) {
      auto file_blocks = [](std::uint64_t ids) {
        const std::uint64_t qblocks = 4 + (ids + 13) / 14 + 2 * ((ids + 255) / 256);
        return (qblocks + 3) / 4;
      };
      const std::uint64_t rules = o_.fs_config ? 64 : 0;
      e.quota_blocks = file_blocks(uids_.size() + rules) + file_blocks(gids_.size() + rules);
    }
    return e;
  }

 private:
  void entry(const std::string& path, const host::Stat& st) {
    if (st.kind != host::Kind::directory && st.nlink > 1 && !seen_.insert(st.id).second) return;  // a hard link
    ++e_.inodes;
    if (o_.preserve_owner && (features_ & feature::quota_ino)) {
      uids_.insert(st.uid);
      gids_.insert(st.gid);
    }
    xattrs(path);
    if (st.kind == host::Kind::symlink) {
      if (st.size > max_inline_) ++e_.data_blocks;
      return;
    }
    if (st.kind != host::Kind::regular || st.size == 0) return;
    e_.source_bytes += st.size;
    NodeCounter nodes(api_);
    auto add = [&](std::uint64_t from, std::uint64_t to) {  // bytes
      const std::uint64_t a = from / kBlock, b = (to + kBlock - 1) / kBlock;
      e_.data_blocks += b - a;
      nodes.range(a, b);
    };
    if (st.dense) {
      add(0, st.size);
    } else if (auto f = host::open(path); !f) {
      add(0, st.size);  // populate() reports it; counted whole
    } else {
      std::uint64_t off = 0, last_block = 0;
      while (off < st.size) {
        auto r = (*f)->next_data(off, st.size);
        if (!r) break;
        // Ranges meet in a block: that block counted once.
        std::uint64_t from = std::max(r->first, last_block * kBlock);
        if (from < r->second) add(from, r->second);
        last_block = (r->second + kBlock - 1) / kBlock;
        off = r->second;
      }
    }
    e_.dnode_blocks += nodes.nodes();
  }

  void xattrs(const std::string& path) {
    std::uint32_t bytes = 0;
    if (o_.xattrs) {
      std::vector<Error> ignored;
      for (const auto& [name, value] : host::xattrs(path, ignored)) {
        if ((o_.fs_config && name == "security.capability") || (o_.file_contexts && name == "security.selinux")) continue;
        // Stored without the namespace prefix; the ACLs under an empty name.
        const std::size_t dot = name.find('.');
        std::size_t short_len = dot == std::string::npos ? name.size() : name.size() - dot - 1;
        if (name.rfind("system.posix_acl_", 0) == 0) short_len = 0;
        bytes += xattr_entry_size(static_cast<std::uint32_t>(short_len), static_cast<std::uint32_t>(value.size()));
      }
    }
    if (o_.file_contexts) bytes += xattr_entry_size(7, 64);     // "selinux", a context of up to 64 bytes
    if (o_.fs_config) bytes += xattr_entry_size(10, 20);        // "capability", vfs_cap_data revision 2
    if (bytes > kInlineXattrRoom) ++e_.xattr_blocks;
  }

  const PopulateOptions& o_;
  std::uint32_t features_ = 0;
  std::set<std::uint32_t> uids_{0}, gids_{0};
  std::uint64_t api_ = 0, max_inline_ = 0;
  const char* links_file_ = nullptr;
  std::set<std::pair<std::uint64_t, std::uint64_t>> seen_;
  PopulateEstimate e_;
};

}  // namespace

Result<PopulateEstimate> estimate_populate(const std::string& source_dir, std::uint32_t features,
                                           const PopulateOptions& opts) {
  auto st = host::source_directory(source_dir);
  if (!st) return make_error(st.error());
  std::string src = source_dir;
  while (src.size() > 1 && src.back() == '/') src.pop_back();
  Estimator e(features, opts);
  F2FSCORE_TRY(e.directory(src, true));
  return e.result();
}

}  // namespace f2fscore
