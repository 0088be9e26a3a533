// File data: mapping file blocks through i_addr and the node tree
// (get_node_path() in fs/f2fs/node.c), inline data, compressed clusters.
#include <algorithm>
#include <cstdio>
#include <cstring>

#include "reader/volume_internal.hpp"
#include "util/text.hpp"

namespace f2fscore {

using namespace disk;

namespace {
using detail::fmt;

// A path through the node tree: which i_addr slot, or which i_nid and then
// which slot on each level; the footer offset each node on the path must
// carry, and how many file blocks each node on the path covers.
struct NodePath {
  int depth = 0;            ///< 0: i_addr; 1: direct; 2: indirect; 3: double indirect
  std::uint32_t inode_slot = 0;  ///< i_addr index (depth 0) or i_nid index
  std::uint32_t offsets[3] = {0, 0, 0};  ///< per level below the inode
  std::uint32_t noffset[3] = {0, 0, 0};  ///< footer offset of the node on each level
  std::uint64_t rel = 0;                 ///< index relative to the start of i_nid[inode_slot]'s range
  std::uint64_t span[3] = {0, 0, 0};     ///< file blocks covered by the node on each level
};

Result<NodePath> node_path(const InodeInfo& in, std::uint64_t index) {
  NodePath p;
  const std::uint64_t api = in.addrs_per_inode, apb = in.addrs_per_block, npb = kNidsPerBlock;
  const std::uint64_t asked = index;
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
      p.noffset[0] = 1 + d;
      p.rel = index;
      p.span[0] = apb;
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
      p.noffset[0] = d == 2 ? 3 : static_cast<std::uint32_t>(4 + npb);
      p.noffset[1] = p.noffset[0] + 1 + p.offsets[0];
      p.rel = index;
      p.span[0] = apb * npb;
      p.span[1] = apb;
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
    p.noffset[0] = static_cast<std::uint32_t>(5 + 2 * npb);
    p.noffset[1] = static_cast<std::uint32_t>(6 + 2 * npb + p.offsets[0] * (npb + 1));
    p.noffset[2] = static_cast<std::uint32_t>(7 + 2 * npb + p.offsets[0] * (npb + 1) + p.offsets[1]);
    p.rel = index;
    p.span[0] = apb * npb * npb;
    p.span[1] = apb * npb;
    p.span[2] = apb;
    return p;
  }
  return make_error(Errc::out_of_range,
                    fmt("inode %llu: file block %llu is beyond the largest file", in.ino, asked));
}

}  // namespace

Result<block_t> FileMapper::map(std::uint64_t index, std::uint64_t* next) {
  if (next) *next = index + 1;
  auto p = node_path(in_, index);
  if (!p) return make_error(p.error());
  const Inode& i = in_.raw.i;
  holder_ = in_.node_blkaddr;
  if (p->depth == 0) return i.i_addr[in_.extra_isize / 4 + p->inode_slot].get();
  nid_t nid = i.i_nid[p->inode_slot].get();
  const Node* n = nullptr;
  for (int level = 0; level < p->depth; ++level) {
    if (nid == 0) {
      // A missing node: a hole over its whole range.
      if (next) *next = index + (p->span[level] - p->rel % p->span[level]);
      return kNullAddr;
    }
    auto got = node(nid, p->noffset[level], level);
    if (!got) return make_error(got.error());
    n = *got;
    if (level + 1 < p->depth) nid = n->in.nid[p->offsets[level]].get();
  }
  holder_ = cache_[p->depth - 1].blk;
  return n->dn.addr[p->offsets[p->depth - 1]].get();
}

Result<const Node*> FileMapper::node(nid_t nid, std::uint32_t ofs, int slot) {
  Slot& s = cache_[slot];
  if (s.nid == nid && s.ofs == ofs && s.blk != 0) return &s.node;
  block_t blk = 0;
  auto n = v_.read_node(nid, &blk);
  if (!n)
    return make_error(n.error().code, fmt("inode %llu", in_.ino) + at_block(in_.node_blkaddr) +
                                          fmt(": node %llu of its tree: ", nid) + n.error().message,
                      n.error().offset);
  const std::uint64_t where = static_cast<std::uint64_t>(blk) * kBlockSize;
  if (n->footer.ino.get() != in_.ino)
    return make_error(Errc::corrupt, fmt("inode %llu: its node %llu", in_.ino, nid) + at_block(blk) +
                                         fmt(" belongs to inode %llu", n->footer.ino.get()), where);
  const std::uint32_t got = n->footer.flag.get() >> node_flag::offset_shift;
  if (got != ofs)
    return make_error(Errc::corrupt, fmt("inode %llu: node %llu", in_.ino, nid) + at_block(blk) +
                                         fmt(" has offset %llu in its footer, expected %llu for its place in the tree",
                                             got, ofs), where);
  s.nid = nid;
  s.ofs = ofs;
  s.blk = blk;
  s.node = *n;
  return &s.node;
}

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
              return make_error(Errc::corrupt,
                                fmt("inode %llu: compressed block address 0x%llx out of range", in.ino, *a) +
                                    at_block(m.holder()),
                                m.holder() * kBlockSize);
            F2FSCORE_TRY(read_block(*a, blk));
            cdata.insert(cdata.end(), blk.begin(), blk.end());
          }
          cluster.assign(static_cast<std::size_t>(in.cluster_blocks) * kBlockSize, 0);
          std::size_t produced = 0;
          auto st = decompress_cluster(in.raw.i.extra.i_compress_algorithm, cdata, cluster, &produced);
          if (!st)
            return make_error(st.error().code, fmt("inode %llu cluster %llu", in.ino, c) + at_block(m.holder()) + ": " +
                                                   st.error().message,
                              m.holder() * kBlockSize);
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
                            fmt("inode %llu: file block %llu maps to 0x%llx, outside the main area", in.ino, index, *a) +
                                at_block(m.holder()),
                            m.holder() * kBlockSize);
        F2FSCORE_TRY(read_block(*a, blk));
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
  if (in.size > kBlockSize)
    return make_error(Errc::corrupt, fmt("symlink %llu", in.ino) + at_block(in.node_blkaddr) + fmt(" is %llu bytes long", in.size),
                      static_cast<std::uint64_t>(in.node_blkaddr) * kBlockSize);
  std::string s(static_cast<std::size_t>(in.size), '\0');
  auto r = read(in, 0, std::span<std::uint8_t>(reinterpret_cast<std::uint8_t*>(s.data()), s.size()));
  if (!r) return make_error(r.error());
  s.resize(*r);
  return s;
}

}  // namespace f2fscore
