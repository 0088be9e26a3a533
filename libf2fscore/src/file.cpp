// File data: mapping file blocks through i_addr and the node tree
// (get_node_path() in fs/f2fs/node.c), inline data, compressed clusters.
#include <algorithm>
#include <cstdio>
#include <cstring>

#include "volume_internal.hpp"

namespace f2fscore {

using namespace disk;

namespace {
std::string fmt(const char* f, unsigned long long a = 0, unsigned long long b = 0, unsigned long long c = 0) {
  char buf[256];
  std::snprintf(buf, sizeof buf, f, a, b, c);
  return buf;
}

// A path through the node tree: which i_addr slot, or which nids then slot.
struct NodePath {
  int depth = 0;            ///< 0: i_addr; 1: direct; 2: indirect; 3: double indirect
  std::uint32_t inode_slot = 0;  ///< i_addr index (depth 0) or i_nid index
  std::uint32_t offsets[3] = {0, 0, 0};  ///< per level below the inode
};

Result<NodePath> node_path(const InodeInfo& in, std::uint64_t index) {
  NodePath p;
  const std::uint64_t api = in.addrs_per_inode, apb = in.addrs_per_block, npb = kNidsPerBlock;
  if (index < api) {
    p.inode_slot = static_cast<std::uint32_t>(index);
    return p;
  }
  index -= api;
  for (std::uint32_t d = 0; d < 2; ++d) {
    if (index < apb) {
      p.depth = 1;
      p.inode_slot = d;
      p.offsets[0] = static_cast<std::uint32_t>(index);
      return p;
    }
    index -= apb;
  }
  for (std::uint32_t d = 2; d < 4; ++d) {
    if (index < apb * npb) {
      p.depth = 2;
      p.inode_slot = d;
      p.offsets[0] = static_cast<std::uint32_t>(index / apb);
      p.offsets[1] = static_cast<std::uint32_t>(index % apb);
      return p;
    }
    index -= apb * npb;
  }
  if (index < apb * npb * npb) {
    p.depth = 3;
    p.inode_slot = 4;
    p.offsets[0] = static_cast<std::uint32_t>(index / (apb * npb));
    p.offsets[1] = static_cast<std::uint32_t>((index / apb) % npb);
    p.offsets[2] = static_cast<std::uint32_t>(index % apb);
    return p;
  }
  return make_error(Errc::out_of_range, fmt("file block %llu is beyond the largest file", index));
}

}  // namespace

// Maps file blocks, keeping the last direct node read.
class FileMapper {
 public:
  FileMapper(Volume& v, const InodeInfo& in) : v_(v), in_(in) {}

  Result<block_t> map(std::uint64_t index) {
    auto p = node_path(in_, index);
    if (!p) return make_error(p.error());
    const Inode& i = in_.raw.i;
    if (p->depth == 0) return i.i_addr[in_.extra_isize / 4 + p->inode_slot].get();
    nid_t nid = i.i_nid[p->inode_slot].get();
    for (int level = 1; level < p->depth; ++level) {
      if (nid == 0) return kNullAddr;
      auto n = node(nid);
      if (!n) return make_error(n.error());
      nid = (*n)->in.nid[p->offsets[level - 1]].get();
    }
    if (nid == 0) return kNullAddr;
    auto n = node(nid);
    if (!n) return make_error(n.error());
    return (*n)->dn.addr[p->offsets[p->depth - 1]].get();
  }

 private:
  Result<const Node*> node(nid_t nid) {
    for (auto& c : cache_)
      if (c.nid == nid) return &c.node;
    auto n = v_.read_node(nid);
    if (!n) return make_error(n.error());
    if (n->footer.ino.get() != in_.ino)
      return make_error(Errc::corrupt, fmt("inode %llu: its node %llu belongs to inode %llu", in_.ino, nid, n->footer.ino.get()));
    Slot& s = cache_[next_++ % 3];
    s.nid = nid;
    s.node = *n;
    return &s.node;
  }
  struct Slot {
    nid_t nid = 0;
    Node node{};
  };
  Volume& v_;
  const InodeInfo& in_;
  Slot cache_[3];  // one per level: indirect chains stay cached
  unsigned next_ = 0;
};

Result<block_t> Volume::map_block(const InodeInfo& inode, std::uint64_t index) {
  if (inode.has_inline_data() || inode.has_inline_dentry())
    return make_error(Errc::invalid_argument, fmt("inode %llu keeps its data inline: it has no blocks", inode.ino));
  FileMapper m(*this, inode);
  return m.map(index);
}

Result<std::size_t> Volume::read(const InodeInfo& in, std::uint64_t offset, std::span<std::uint8_t> out) {
  if (offset >= in.size) return std::size_t{0};
  const std::size_t n = static_cast<std::size_t>(std::min<std::uint64_t>(out.size(), in.size - offset));
  if (in.has_inline_data()) {
    const std::uint32_t max = in.max_inline_bytes();
    std::memset(out.data(), 0, n);
    if (offset < max) {
      const auto* base = reinterpret_cast<const std::uint8_t*>(&in.raw) + in.inline_offset();
      std::memcpy(out.data(), base + offset, static_cast<std::size_t>(std::min<std::uint64_t>(n, max - offset)));
    }
    return n;
  }
  FileMapper m(*this, in);
  std::vector<std::uint8_t> blk(kBlockSize);
  std::vector<std::uint8_t> cluster;
  std::uint64_t cluster_loaded = ~0ull;
  std::size_t done = 0;
  while (done < n) {
    const std::uint64_t pos = offset + done;
    const std::uint64_t index = pos / kBlockSize;
    const std::size_t in_blk = static_cast<std::size_t>(pos % kBlockSize);
    const std::size_t len = std::min<std::size_t>(kBlockSize - in_blk, n - done);
    const std::uint8_t* src = nullptr;
    if (in.cluster_blocks) {
      const std::uint64_t c = index / in.cluster_blocks;
      auto head = m.map(c * in.cluster_blocks);
      if (!head) return make_error(head.error());
      if (*head == kCompressAddr) {
        if (cluster_loaded != c) {
          // Compressed cluster: the valid addresses after the marker hold
          // the compressed bytes; decompress the whole cluster.
          std::vector<std::uint8_t> cdata;
          for (std::uint32_t k = 1; k < in.cluster_blocks; ++k) {
            auto a = m.map(c * in.cluster_blocks + k);
            if (!a) return make_error(a.error());
            if (*a == kNullAddr || *a == kNewAddr) break;
            if (!is_valid_main_addr(*a))
              return make_error(Errc::corrupt, fmt("inode %llu: compressed block address 0x%llx out of range", in.ino, *a));
            F2FS_TRY(read_block(*a, blk));
            cdata.insert(cdata.end(), blk.begin(), blk.end());
          }
          cluster.assign(static_cast<std::size_t>(in.cluster_blocks) * kBlockSize, 0);
          std::size_t produced = 0;
          auto st = decompress_cluster(in.raw.i.extra.i_compress_algorithm, cdata, cluster, &produced);
          if (!st)
            return make_error(st.error().code, fmt("inode %llu cluster %llu: ", in.ino, c) + st.error().message);
          cluster_loaded = c;
        }
        src = cluster.data() + (index % in.cluster_blocks) * kBlockSize;
      }
    }
    if (src == nullptr) {
      auto a = m.map(index);
      if (!a) return make_error(a.error());
      if (*a == kNullAddr || *a == kNewAddr || *a == kCompressAddr) {
        std::memset(blk.data(), 0, kBlockSize);
      } else {
        if (!is_valid_main_addr(*a))
          return make_error(Errc::corrupt,
                            fmt("inode %llu: block %llu maps to 0x%llx, outside the main area", in.ino, index, *a));
        F2FS_TRY(read_block(*a, blk));
      }
      src = blk.data();
    }
    std::memcpy(out.data() + done, src + in_blk, len);
    done += len;
  }
  return n;
}

Result<std::string> Volume::read_link(const InodeInfo& in) {
  if (!in.is_symlink()) return make_error(Errc::invalid_argument, fmt("inode %llu is not a symlink", in.ino));
  if (in.size > kBlockSize) return make_error(Errc::corrupt, fmt("symlink %llu is %llu bytes long", in.ino, in.size));
  std::string s(static_cast<std::size_t>(in.size), '\0');
  auto r = read(in, 0, std::span<std::uint8_t>(reinterpret_cast<std::uint8_t*>(s.data()), s.size()));
  if (!r) return make_error(r.error());
  s.resize(*r);
  return s;
}

}  // namespace f2fscore
