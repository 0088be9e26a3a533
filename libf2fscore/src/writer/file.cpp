// The writer's files: node trees (get_node_path() in fs/f2fs/node.c), block
// writes out of place, reads, truncation, inline data conversion, inodes.
#include <algorithm>
#include <cerrno>
#include <cstring>
#include <functional>
#include <optional>

#include "f2fscore/iostat.hpp"
#include "meta/meta_internal.hpp"
#include "writer/writer_internal.hpp"

namespace f2fscore {

using namespace disk;
using meta::fmt;

namespace wr {
NodePath node_path(std::uint64_t block, std::uint32_t api, std::uint32_t apb) {
  const std::uint64_t N = kNidsPerBlock, D = apb;
  NodePath p;
  if (block < api) {
    p.offset[0] = static_cast<std::uint32_t>(block);
    return p;
  }
  block -= api;
  if (block < D) {
    p.level = 1;
    p.offset[0] = 0;
    p.noffset[1] = 1;
    p.offset[1] = static_cast<std::uint32_t>(block);
    return p;
  }
  block -= D;
  if (block < D) {
    p.level = 1;
    p.offset[0] = 1;
    p.noffset[1] = 2;
    p.offset[1] = static_cast<std::uint32_t>(block);
    return p;
  }
  block -= D;
  if (block < N * D) {
    p.level = 2;
    p.offset[0] = 2;
    p.noffset[1] = 3;
    p.offset[1] = static_cast<std::uint32_t>(block / D);
    p.noffset[2] = 4 + p.offset[1];
    p.offset[2] = static_cast<std::uint32_t>(block % D);
    return p;
  }
  block -= N * D;
  if (block < N * D) {
    p.level = 2;
    p.offset[0] = 3;
    p.noffset[1] = static_cast<std::uint32_t>(4 + N);
    p.offset[1] = static_cast<std::uint32_t>(block / D);
    p.noffset[2] = static_cast<std::uint32_t>(5 + N + p.offset[1]);
    p.offset[2] = static_cast<std::uint32_t>(block % D);
    return p;
  }
  block -= N * D;
  p.level = 3;
  p.offset[0] = 4;
  p.noffset[1] = static_cast<std::uint32_t>(5 + 2 * N);
  p.offset[1] = static_cast<std::uint32_t>(block / (N * D));
  p.noffset[2] = static_cast<std::uint32_t>(6 + 2 * N + p.offset[1] * (N + 1));
  p.offset[2] = static_cast<std::uint32_t>((block / D) % N);
  p.noffset[3] = static_cast<std::uint32_t>(7 + 2 * N + p.offset[1] * (N + 1) + p.offset[2]);
  p.offset[3] = static_cast<std::uint32_t>(block % D);
  return p;
}
}  // namespace wr

// i_addr layout (fs/f2fs/f2fs.h: get_extra_isize(), get_inline_xattr_addrs(),
// ADDRS_PER_INODE()).
std::uint32_t Writer::Impl::extra_words(const Node& in) const {
  return (in.i.i_inline & inline_flag::extra_attr) ? in.i.extra.i_extra_isize.get() / 4 : 0;
}
static std::uint32_t inline_xattr_words(const SuperBlock& sb, const Node& in) {
  // As do_read_inode() in fs/f2fs/inode.c: with flexible_inline_xattr the
  // stored size whatever the inline_xattr flag; otherwise the default area
  // with the flag, and for an inline-dentry directory even without it.
  if ((sb.feature.get() & feature::flexible_inline_xattr) && (in.i.i_inline & inline_flag::extra_attr))
    return in.i.extra.i_inline_xattr_size.get();
  if (in.i.i_inline & (inline_flag::xattr | inline_flag::dentry)) return kDefaultInlineXattrAddrs;
  return 0;
}
// A compressed file's nodes hold whole clusters: both counts aligned down to
// the cluster size (addrs_per_inode(), addrs_per_block() in fs/f2fs/f2fs.h).
std::uint32_t Writer::Impl::addrs_per_inode(const Node& in) const {
  const std::uint32_t a = disk::addrs_per_inode(4 * extra_words(in), inline_xattr_words(sb, in));
  return compressed(in) ? a & ~(cluster_blocks(in) - 1) : a;
}
std::uint32_t Writer::Impl::addrs_per_block(const Node& in) const {
  return compressed(in) ? kDefAddrsPerBlock & ~(cluster_blocks(in) - 1) : kDefAddrsPerBlock;
}
std::uint64_t Writer::Impl::max_file_blocks(const Node& in) const {
  const std::uint64_t api = addrs_per_inode(in), apb = addrs_per_block(in), N = kNidsPerBlock;
  return api + 2 * apb + 2 * N * apb + N * N * apb;
}
std::uint32_t Writer::Impl::inline_offset(const Node& in) const {
  return inline_data_offset(4 * extra_words(in));
}
std::uint32_t Writer::Impl::max_inline(const Node& in) const {
  return max_inline_data(4 * extra_words(in), inline_xattr_words(sb, in));
}

// Dentry blocks hot, files warm, cold files cold (__get_segment_type_6()).
std::uint8_t Writer::Impl::data_type(const Node& in) const {
  if ((in.i.i_mode.get() & 0xF000) == 0x4000) return wr::kHotData;
  if (in.i.i_advise & advise::cold) return wr::kColdData;
  // f2fs_need_compress_data(): a compressed file's data goes to the cold
  // log, as __get_segment_type_6() puts it (compress_mode user: only while
  // F2FS_IOC_COMPRESS_FILE rewrites it).
  if (need_compress_data(in)) return wr::kColdData;
  return wr::kWarmData;
}

void Writer::Impl::touch(Node& in) { set_ctime(in, true); }

void Writer::Impl::set_ctime(Node& in, bool mtime) {
  const Timespec t = now_ts();
  in.i.i_ctime.set(t.sec);
  in.i.i_ctime_nsec.set(t.nsec);
  if (!mtime) return;
  in.i.i_mtime.set(t.sec);
  in.i.i_mtime_nsec.set(t.nsec);
}

Result<block_t> Writer::Impl::map(nid_t ino, std::uint64_t index, bool create, nid_t* dnode, std::uint32_t* slot) {
  auto inp = node(ino);
  if (!inp) return make_error(inp.error());
  const bool dir = ((*inp)->i.i_mode.get() & 0xF000) == 0x4000;
  const std::uint32_t api = addrs_per_inode(**inp);
  const std::uint32_t apb = addrs_per_block(**inp);
  if (const MapMemo m = map_memo; !fsync_recovering && m.ino == ino && index >= m.first && index - m.first < apb && m.api == api && m.apb == apb &&
                                  m.dn < max_nid && nm.get(m.dn).ino == ino) {
    auto dn = node(m.dn);
    if (!dn) return make_error(dn.error());
    const disk::Node& d = **dn;
    if (d.footer.nid.get() == m.dn && d.footer.ino.get() == ino &&
        (d.footer.flag.get() >> node_flag::offset_shift) == m.noffset) {
      const auto s = static_cast<std::uint32_t>(index - m.first);
      if (dnode) *dnode = m.dn;
      if (slot) *slot = s;
      return d.dn.addr[s].get();
    }
    map_memo = {};
  }
  const wr::NodePath p = wr::node_path(index, api, apb);
  if (p.level == 0) {
    if (dnode) *dnode = ino;
    if (slot) *slot = p.offset[0];
    return (*inp)->i.i_addr[extra_words(**inp) + p.offset[0]].get();
  }
  nid_t parent = ino;
  nid_t cur = 0;
  for (int l = 1; l <= p.level; ++l) {
    auto pn = node(parent);
    if (!pn) return make_error(pn.error());
    Le32& ref = l == 1 ? (*pn)->i.i_nid[p.offset[0]] : (*pn)->in.nid[p.offset[l - 1]];
    cur = ref.get();
    if (cur == 0) {
      if (!create) return kNullAddr;
      F2FSCORE_TRY(quota_alloc_block(ino));  // writer/quota.cpp: EDQUOT
      auto n = alloc_nid();
      if (!n) return make_error(n.error());
      cur = *n;
      ref.set(cur);  // before new_node: the map may rehash
      mark_dirty(parent);
      new_node(cur, ino, p.noffset[l], dir);
      auto ip = node(ino);
      if (!ip) return make_error(ip.error());
      (*ip)->i.i_blocks.set((*ip)->i.i_blocks.get() + 1);
      mark_dirty(ino);
    } else if (cur >= max_nid || nm.get(cur).ino != ino) {
      return make_error(Errc::corrupt, fmt("writer: inode %llu points at nid %llu, which is not its node", ino, cur));
    }
    parent = cur;
  }
  auto dn = node(cur);
  if (!dn) return make_error(dn.error());
  if (dnode) *dnode = cur;
  if (slot) *slot = p.offset[p.level];
  map_memo = {ino, cur, index - p.offset[p.level], api, apb, p.noffset[p.level]};
  return (*dn)->dn.addr[p.offset[p.level]].get();
}

Status Writer::Impl::read_file_blocks(nid_t ino, std::uint64_t index, std::uint64_t count, std::uint8_t* out) {
  bool drained = false;
  // A compressed file's compressed clusters are read and decompressed whole
  // (f2fs_read_multi_pages()); their pages are cached.
  std::uint32_t cs = 0;
  {
    auto ip = node(ino);
    if (!ip) return make_error(ip.error());
    if (compressed(**ip)) cs = cluster_blocks(**ip);
  }
  std::vector<std::uint8_t> cluster_buf;
  for (std::uint64_t i = 0; i < count;) {
    std::uint8_t* dst = out + static_cast<std::size_t>(i) * kBlockSize;
    if (cache_read(ino, index + i, dst)) {
      ++i;
      continue;
    }
    if (cs != 0) {
      const std::uint64_t cl = (index + i) / cs, first = cl * cs;
      auto c = cluster_compressed(ino, cl);
      if (!c) return make_error(c.error());
      if (*c) {
        cluster_buf.resize(std::size_t{cs} * kBlockSize);
        F2FSCORE_TRY(read_cluster(ino, cl, cluster_buf.data()));
        for (std::uint32_t k = 0; k < cs; ++k)
          if (!cache_has(ino, first + k)) cache_fill(ino, first + k, cluster_buf.data() + std::size_t{k} * kBlockSize);
        // This call's blocks of the cluster.
        while (i < count && (index + i) / cs == cl) {
          std::uint8_t* d = out + static_cast<std::size_t>(i) * kBlockSize;
          if (!cache_read(ino, index + i, d))
            std::memcpy(d, cluster_buf.data() + static_cast<std::size_t>(index + i - first) * kBlockSize, kBlockSize);
          ++i;
        }
        continue;
      }
    }
    auto a = map(ino, index + i, false);
    if (!a) return make_error(a.error());
    if (*a == kNullAddr || *a == kNewAddr) {
      std::memset(dst, 0, kBlockSize);
      ++i;
      continue;
    }
    if (!in_main(*a))
      return make_error(Errc::corrupt, fmt("writer: inode %llu block %llu points outside the main area", ino, index + i));
    // The run of following blocks that are not cached and sit right after
    // this one on the device.
    std::uint64_t run = 1;
    while (i + run < count && !cache_has(ino, index + i + run)) {
      auto next = map(ino, index + i + run, false);
      if (!next) return make_error(next.error());
      if (*next != *a + run || !in_main(*next)) break;
      ++run;
    }
    if (!drained && !io_batch().idle()) F2FSCORE_TRY(io_batch().drain());  // the blocks may be in flight
    drained = true;
    F2FSCORE_TRY(read_at(dev, static_cast<std::uint64_t>(*a) * kBlockSize,
                         std::span<std::uint8_t>(dst, static_cast<std::size_t>(run) * kBlockSize),
                         io_tag(IostatType::fs_data_read_io)));
    if (const fscrypt::InodeKey* key = contents_key(ino))  // writer/fscrypt.cpp
      for (std::uint64_t k = 0; k < run; ++k)
        F2FSCORE_TRY(key->decrypt_block(index + i + k, dst + static_cast<std::size_t>(k) * kBlockSize));
    if (opts.cache_reads)
      for (std::uint64_t k = 0; k < run; ++k) cache_fill(ino, index + i + k, dst + static_cast<std::size_t>(k) * kBlockSize);
    i += run;
  }
  return {};
}

void wr::drop_largest_extent(Node& in, std::uint64_t index) {
  const std::uint64_t fofs = in.i.i_ext.fofs.get(), len = in.i.i_ext.len.get();
  if (len != 0 && index >= fofs && index < fofs + len) in.i.i_ext.len.set(0);
}
using wr::drop_largest_extent;

// Where place_data() puts the block: in place, or a new block of the log
// with the old one invalid in the SIT. Pointers and counters are updated
// here; the caller writes the data (write_file_block(), or the page
// cache's coalesced writeback).
Result<block_t> Writer::Impl::place_file_block(nid_t ino, std::uint64_t index, std::uint8_t type,
                                               const wr::WriteContext& ctx) {
  nid_t dn = 0;
  std::uint32_t slot = 0;
  auto old = map(ino, index, true, &dn, &slot);
  if (!old) return make_error(old.error());
  if (*old == kNullAddr) F2FSCORE_TRY(check_space(1));  // a new block (inc_valid_block_count())
  if (*old == kNullAddr) F2FSCORE_TRY(quota_alloc_block(ino));  // writer/quota.cpp: EDQUOT
  IpuReason why = IpuReason::opu_policy;
  auto a = place_data(ino, index, *old, type, ctx, &why);
  if (!a) return make_error(a.error());
  ++stats.data_blocks_written;
  ++stats.ipu.data_blocks[static_cast<std::size_t>(why)];
  if (is_in_place(why) && *a == *old) return *a;  // in place: pointers, SIT and SSA unchanged
  // NEW_ADDR, and a compressed cluster's COMPRESS_ADDR being written plain,
  // hold a reserved block.
  if (*old == kNewAddr || *old == kCompressAddr) --reserved_blocks;
  else invalidate(*old);
  F2FSCORE_TRY(claim(*a, {*a, dn, static_cast<std::uint16_t>(slot), nm.get(dn).version, false}));
  append_written.insert(ino);
  auto dp = node(dn);
  if (!dp) return make_error(dp.error());
  if (dn == ino) (*dp)->i.i_addr[extra_words(**dp) + slot].set(*a);
  else (*dp)->dn.addr[slot].set(*a);
  mark_dirty(dn);
  auto ip = node(ino);
  if (!ip) return make_error(ip.error());
  drop_largest_extent(**ip, index);
  if (*old == kNullAddr) (*ip)->i.i_blocks.set((*ip)->i.i_blocks.get() + 1);
  mark_dirty(ino);
  return *a;
}

// One block at once (directories, inline conversion, GC moves); a cached
// page of the block takes the new contents, clean.
Status Writer::Impl::write_file_block(nid_t ino, std::uint64_t index, const std::uint8_t* data, std::uint8_t type,
                                      const wr::WriteContext& ctx) {
  auto a = place_file_block(ino, index, type, ctx);
  if (!a) return make_error(a.error());
  if (const fscrypt::InodeKey* key = contents_key(ino)) {  // writer/fscrypt.cpp
    std::vector<std::uint8_t> c(data, data + kBlockSize);
    F2FSCORE_TRY(key->encrypt_block(index, c.data()));
    F2FSCORE_TRY(io_batch().add(*a, c.data(), wr::data_write_tag(ctx)));
  } else {
    F2FSCORE_TRY(io_batch().add(*a, data, wr::data_write_tag(ctx)));
  }
  F2FSCORE_TRY(io_batch().drain());
  cache_fill(ino, index, data);
  return {};
}

Status Writer::Impl::free_file_block(nid_t ino, std::uint64_t index) {
  nid_t dn = 0;
  std::uint32_t slot = 0;
  cache_drop(ino, index, index + 1);
  auto old = map(ino, index, false, &dn, &slot);
  if (!old) return make_error(old.error());
  if (*old == kNullAddr) return {};
  bool counted = true;  // the slot holds a block of i_blocks
  if (*old == kCompressAddr) {
    // A compressed cluster goes: i_compr_blocks loses what it saved; its
    // header slot held a reserved block unless the cluster's blocks were
    // released (f2fs_truncate_data_blocks_range()).
    auto ip = node(ino);
    if (!ip) return make_error(ip.error());
    const bool released = (*ip)->i.i_inline & inline_flag::compress_released;
    if (compressed(**ip)) {
      const std::uint32_t cs = cluster_blocks(**ip);
      auto v = cluster_valid_blocks(ino, index, cs);
      if (!v) return make_error(v.error());
      add_compr_blocks(ino, -static_cast<std::int64_t>(cs - *v));
    }
    if (released) counted = false;
    else --reserved_blocks;
  } else if (*old == kNewAddr) {
    --reserved_blocks;
  } else {
    invalidate(*old);
  }
  auto dp = node(dn);
  if (!dp) return make_error(dp.error());
  if (dn == ino) (*dp)->i.i_addr[extra_words(**dp) + slot].set(kNullAddr);
  else (*dp)->dn.addr[slot].set(kNullAddr);
  mark_dirty(dn);
  auto ip = node(ino);
  if (!ip) return make_error(ip.error());
  drop_largest_extent(**ip, index);
  if (counted) (*ip)->i.i_blocks.set((*ip)->i.i_blocks.get() - 1);
  mark_dirty(ino);
  return {};
}

// Frees the blocks from file block `from` on, and every node left covering
// only blocks past it (truncate_inode_blocks() in fs/f2fs/node.c).
Status Writer::Impl::truncate_blocks(nid_t ino, std::uint64_t from) {
  cache_drop(ino, from);
  auto inp = node(ino);
  if (!inp) return make_error(inp.error());
  const std::uint32_t api = addrs_per_inode(**inp);
  for (std::uint64_t i = from; i < api; ++i) F2FSCORE_TRY(free_file_block(ino, i));
  const std::uint64_t N = kNidsPerBlock, D = addrs_per_block(**inp);
  const std::uint64_t starts[5] = {api, api + D, api + 2 * D, api + 2 * D + N * D, api + 2 * D + 2 * N * D};
  const int depth[5] = {0, 0, 1, 1, 2};
  // Returns whether `nid` was freed.
  auto drop_nid = [&](nid_t n) {
    free_node(n);
    auto ip = node(ino);
    if (ip) {
      (*ip)->i.i_blocks.set((*ip)->i.i_blocks.get() - 1);
      mark_dirty(ino);
    }
  };
  std::function<Result<bool>(nid_t, int, std::uint64_t)> walk = [&](nid_t n, int d, std::uint64_t start) -> Result<bool> {
    std::uint64_t span = D;
    for (int k = 0; k < d; ++k) span *= N;
    if (start + span <= from) return false;
    auto np = node(n);
    if (!np) return make_error(np.error());
    if (d == 0) {
      for (std::uint32_t j = 0; j < D; ++j) {
        if (start + j < from) continue;
        F2FSCORE_TRY(free_file_block(ino, start + j));
      }
    } else {
      const std::uint64_t child = span / N;
      for (std::uint32_t j = 0; j < N; ++j) {
        auto cp2 = node(n);
        if (!cp2) return make_error(cp2.error());
        const nid_t c = (*cp2)->in.nid[j].get();
        if (!c) continue;
        auto r = walk(c, d - 1, start + j * child);
        if (!r) return make_error(r.error());
        if (*r) {
          auto pp = node(n);
          if (!pp) return make_error(pp.error());
          (*pp)->in.nid[j].set(0);
          mark_dirty(n);
        }
      }
    }
    if (from <= start) {
      drop_nid(n);
      return true;
    }
    return false;
  };
  for (int k = 0; k < 5; ++k) {
    auto ip = node(ino);
    if (!ip) return make_error(ip.error());
    const nid_t n = (*ip)->i.i_nid[k].get();
    if (!n) continue;
    auto r = walk(n, depth[k], starts[k]);
    if (!r) return make_error(r.error());
    if (*r) {
      auto ip2 = node(ino);
      if (!ip2) return make_error(ip2.error());
      (*ip2)->i.i_nid[k].set(0);
      mark_dirty(ino);
    }
  }
  return {};
}

// Inline data outgrown: its bytes become block 0 (f2fs_convert_inline_page()).
Status Writer::Impl::convert_inline_data(nid_t ino) {
  auto inp = node(ino);
  if (!inp) return make_error(inp.error());
  Node& in = **inp;
  if (!(in.i.i_inline & inline_flag::data)) return {};
  std::vector<std::uint8_t> b(kBlockSize, 0);
  const std::uint32_t off = inline_offset(in), max = max_inline(in);
  const std::uint64_t size = std::min<std::uint64_t>(in.i.i_size.get(), max);
  auto* raw = reinterpret_cast<std::uint8_t*>(&in);
  std::memcpy(b.data(), raw + off, static_cast<std::size_t>(size));
  std::memset(raw + off, 0, max);
  const bool had = in.i.i_inline & inline_flag::data_exist;
  in.i.i_inline &= static_cast<std::uint8_t>(~(inline_flag::data | inline_flag::data_exist));
  mark_dirty(ino);
  if (had && size > 0) F2FSCORE_TRY(write_file_block(ino, 0, b.data(), data_type(in)));
  return {};
}

Status Writer::Impl::free_inode(nid_t ino) {
  cache_drop(ino, 0);
  append_written.erase(ino);
  inode_keys.erase(ino);  // writer/fscrypt.cpp: the nid may come back as another inode
  auto inp = node(ino);
  if (!inp) return make_error(inp.error());
  // Device, FIFO and socket inodes keep a device number, not addresses, in
  // i_addr (f2fs_update_inode()): nothing to free there.
  const std::uint16_t type = (*inp)->i.i_mode.get() & 0xF000;
  const bool has_blocks = type == 0x8000 || type == 0x4000 || type == 0xA000;
  if (has_blocks && !((*inp)->i.i_inline & (inline_flag::data | inline_flag::dentry))) F2FSCORE_TRY(truncate_blocks(ino, 0));
  auto ip = node(ino);
  if (!ip) return make_error(ip.error());
  const nid_t x = (*ip)->i.i_xattr_nid.get();
  if (x && x < max_nid && nm.get(x).ino == ino) free_node(x);
  quota_release(ino);  // writer/quota.cpp
  free_node(ino);
  --valid_inodes;
  return {};
}

Result<nid_t> Writer::Impl::make_inode(nid_t parent, std::string_view name, std::uint16_t mode, const Owner& owner) {
  const bool dir = (mode & 0xF000) == 0x4000;
  // The parent's inheritable flags (inherited_flags(): F2FS_FL_INHERITED
  // through f2fs_mask_flags(), so F2FS_PROJINHERIT_FL and F2FS_CASEFOLD_FL
  // reach directories only). Project quota: a parent with
  // F2FS_PROJINHERIT_FL gives its project id to every new inode, as
  // f2fs_new_inode() in fs/f2fs/namei.c; else F2FS_DEF_PROJID (0).
  std::uint32_t projid = 0, inherit = 0;
  {
    auto pp = node(parent);
    if (!pp) return make_error(pp.error());
    inherit = inherited_flags(**pp, mode);
    if ((sb.feature.get() & feature::project_quota) && ((*pp)->i.i_flags.get() & iflag::projinherit))
      projid = projid_of(**pp);
  }
  F2FSCORE_TRY(quota_alloc_inode(owner.uid, owner.gid, projid));  // writer/quota.cpp: EDQUOT
  auto n = alloc_nid();
  if (!n) return make_error(n.error());
  // Extra attributes and the inline xattr area as the root inode has them
  // (the image's features, as mkfs chose them).
  auto root = node(sb.root_ino.get());
  if (!root) return make_error(root.error());
  const Node tmpl = **root;
  std::optional<Node> dir_node;  // the parent's flags, for compression
  if (sb.feature.get() & feature::compression) {
    auto pp = node(parent);
    if (!pp) return make_error(pp.error());
    dir_node = **pp;
  }
  Node* in = new_node(*n, *n, 0, dir);
  in->i.i_mode.set(mode);
  // An inline xattr area as f2fs_new_inode() gives every inode under the
  // default inline_xattr mount option: 50 words (DEFAULT_INLINE_XATTR_ADDRS),
  // recorded in i_inline_xattr_size with flexible_inline_xattr.
  in->i.i_inline = static_cast<std::uint8_t>(inline_flag::xattr | (tmpl.i.i_inline & inline_flag::extra_attr));
  if (in->i.i_inline & inline_flag::extra_attr) {
    in->i.extra.i_extra_isize = tmpl.i.extra.i_extra_isize;
    in->i.extra.i_inline_xattr_size.set(
        (sb.feature.get() & feature::flexible_inline_xattr) ? static_cast<std::uint16_t>(kDefaultInlineXattrAddrs) : 0);
    if (sb.feature.get() & feature::inode_crtime) in->i.extra.i_crtime.set(now());
    if (projid_fits(*in)) in->i.extra.i_projid.set(projid);
  }
  // f2fs_new_inode() gives a directory F2FS_INDEX_FL too.
  if (dir) inherit |= iflag::index;
  if (inherit) in->i.i_flags.set(in->i.i_flags.get() | inherit);
  in->i.i_links.set(dir ? 2 : 1);
  in->i.i_blocks.set(1);
  in->i.i_uid.set(owner.uid);
  in->i.i_gid.set(owner.gid);
  const Timespec t = now_ts();
  in->i.i_atime.set(t.sec);
  in->i.i_ctime.set(t.sec);
  in->i.i_mtime.set(t.sec);
  in->i.i_atime_nsec.set(t.nsec);
  in->i.i_ctime_nsec.set(t.nsec);
  in->i.i_mtime_nsec.set(t.nsec);
  in->i.i_generation.set(static_cast<std::uint32_t>(*n * 2654435761u));
  in->i.i_pino.set(parent);
  in->i.i_namelen.set(static_cast<std::uint32_t>(name.size()));
  std::memcpy(in->i.i_name, name.data(), name.size());
  if (!dir) {
    // Cold by the superblock's cold extension list (set_file_temperature()
    // in fs/f2fs/namei.c: the first extension_count - hot_ext_count entries).
    const std::uint32_t total = std::min<std::uint32_t>(sb.extension_count.get(), kMaxExtension);
    const std::uint32_t cold = total - std::min<std::uint32_t>(sb.hot_ext_count, total);
    for (std::uint32_t e = 0; e < total; ++e) {
      const char* ext = reinterpret_cast<const char*>(sb.extension_list[e]);
      const std::size_t el = strnlen(ext, kExtensionLen);
      if (el == 0 || name.size() <= el + 1) continue;
      if (name[name.size() - el - 1] != '.' || name.substr(name.size() - el) != std::string_view(ext, el)) continue;
      if (e < cold) in->i.i_advise |= advise::cold;
      else in->i.i_advise |= advise::hot;
      break;
    }
  }
  if (dir_node) {
    auto st = compress_new_inode(*dir_node, *in, name);  // writer/compr.cpp
    if (!st) {
      free_node(*n);
      return make_error(st.error());
    }
  }
  ++valid_inodes;
  return *n;
}

// ---- Public file operations ----------------------------------------------------

Result<std::uint64_t> Writer::seek_data(nid_t ino, std::uint64_t offset, bool hole) {
  F2FSCORE_WRITER_LOCK(impl_);
  F2FSCORE_TRY(impl_->usable(false));
  Impl& w = *impl_;
  if (ino == 0 || ino >= w.max_nid || w.nm.get(ino).ino != ino || w.nm.get(ino).addr == kNullAddr)
    return errno_error(Errc::not_found, ENOENT, fmt("writer: no inode %llu", ino));
  auto in = w.node(ino);
  if (!in) return make_error(in.error());
  if (((*in)->i.i_mode.get() & 0xF000) != 0x8000)
    return errno_error(Errc::invalid_argument, EINVAL, fmt("writer: inode %llu is not a regular file", ino));
  const std::uint64_t size = (*in)->i.i_size.get();
  if (offset >= size) return errno_error(Errc::invalid_argument, ENXIO, "writer: seek at or past the end of the file");
  if ((*in)->i.i_inline & inline_flag::data) return hole ? size : offset;
  const std::uint64_t last = (size + kBlockSize - 1) / kBlockSize;
  const std::uint64_t api = w.addrs_per_inode(**in);
  for (std::uint64_t i = offset / kBlockSize; i < last;) {
    nid_t dn = 0;
    auto a = w.map(ino, i, false, &dn);
    if (!a) return make_error(a.error());
    if (dn == 0 && i >= api) {  // no direct node: a hole of its whole range
      if (hole) return std::max(offset, i * kBlockSize);
      const std::uint64_t apb = w.addrs_per_block(**in);
      i = api + ((i - api) / apb + 1) * apb;
      continue;
    }
    const bool is_data = (*a != kNullAddr && *a != kNewAddr) || (*a == kNewAddr && w.page_dirty(ino, i));
    if (hole ? *a == kNullAddr : is_data) return std::max(offset, i * kBlockSize);
    ++i;
  }
  if (hole) return size;
  return errno_error(Errc::invalid_argument, ENXIO, "writer: no data past the offset");
}

Result<WriterStat> Writer::stat(nid_t ino) {
  F2FSCORE_WRITER_LOCK(impl_);
  F2FSCORE_TRY(impl_->usable(false));
  if (ino == 0 || ino >= impl_->max_nid || impl_->nm.get(ino).ino != ino || impl_->nm.get(ino).addr == kNullAddr)
    return make_error(Errc::not_found, fmt("writer: no inode %llu", ino));
  auto in = impl_->node(ino);
  if (!in) return make_error(in.error());
  const Inode& i = (*in)->i;
  WriterStat st;
  st.ino = ino;
  st.mode = i.i_mode.get();
  st.size = i.i_size.get();
  st.blocks = i.i_blocks.get();
  st.links = i.i_links.get();
  st.uid = i.i_uid.get();
  st.gid = i.i_gid.get();
  st.projid = impl_->projid_of(**in);
  st.flags = i.i_flags.get();
  if (Impl::compressed(**in)) st.compr_blocks = i.extra.i_compr_blocks.get();
  st.atime = {i.i_atime.get(), i.i_atime_nsec.get()};
  st.mtime = {i.i_mtime.get(), i.i_mtime_nsec.get()};
  st.ctime = {i.i_ctime.get(), i.i_ctime_nsec.get()};
  const std::uint16_t type = i.i_mode.get() & 0xF000;
  if (type == 0x2000 || type == 0x6000) {
    // Device numbers live in the first data address slot (old or new
    // encoding, f2fs_iget() in fs/f2fs/inode.c: i_addr[extra] or [extra+1]).
    const std::uint32_t x = impl_->extra_words(**in);
    st.rdev = i.i_addr[x].get() ? i.i_addr[x].get() : i.i_addr[x + 1].get();
  }
  return st;
}

Result<std::size_t> Writer::read(nid_t ino, std::uint64_t offset, std::span<std::uint8_t> out) {
  F2FSCORE_WRITER_LOCK(impl_);
  auto st = stat(ino);
  if (!st) return make_error(st.error());
  if (!st->is_reg()) return make_error(Errc::invalid_argument, fmt("writer: inode %llu is not a regular file", ino));
  F2FSCORE_TRY(impl_->need_key(ino, "read"));
  if (offset >= st->size) return std::size_t{0};
  const std::size_t n = static_cast<std::size_t>(std::min<std::uint64_t>(out.size(), st->size - offset));
  auto inp = impl_->node(ino);
  if (!inp) return make_error(inp.error());
  if ((*inp)->i.i_inline & inline_flag::data) {
    const auto* raw = reinterpret_cast<const std::uint8_t*>(*inp);
    const std::uint32_t max = impl_->max_inline(**inp);
    for (std::size_t k = 0; k < n; ++k) out[k] = offset + k < max ? raw[impl_->inline_offset(**inp) + offset + k] : 0;
    if (impl_->iostat) impl_->iostat->account(IostatType::app_buffered_read_io, n);  // (stats)
    return n;
  }
  // Whole blocks straight into `out`; a partial first or last block, and
  // runs of up to kReadChunk blocks, through one scratch buffer.
  constexpr std::uint64_t kReadChunk = 256;
  std::vector<std::uint8_t> b;
  const std::uint64_t first = offset / kBlockSize, end = (offset + n + kBlockSize - 1) / kBlockSize;
  for (std::uint64_t blk = first; blk < end;) {
    const std::uint64_t cnt = std::min(kReadChunk, end - blk);
    const std::uint64_t from = std::max(offset, blk * kBlockSize), to = std::min<std::uint64_t>(offset + n, (blk + cnt) * kBlockSize);
    std::uint8_t* dst = out.data() + static_cast<std::size_t>(from - offset);
    if (from == blk * kBlockSize && to == (blk + cnt) * kBlockSize) {
      F2FSCORE_TRY(impl_->read_file_blocks(ino, blk, cnt, dst));
    } else {
      b.resize(static_cast<std::size_t>(cnt) * kBlockSize);
      F2FSCORE_TRY(impl_->read_file_blocks(ino, blk, cnt, b.data()));
      std::memcpy(dst, b.data() + static_cast<std::size_t>(from - blk * kBlockSize), static_cast<std::size_t>(to - from));
    }
    blk += cnt;
  }
  if (impl_->iostat) impl_->iostat->account(IostatType::app_buffered_read_io, n);  // (stats)
  return n;
}

Result<std::size_t> Writer::write(nid_t ino, std::uint64_t offset, std::span<const std::uint8_t> data,
                                  WriteFlags flags) {
  F2FSCORE_WRITER_LOCK(impl_);
  F2FSCORE_TRY(impl_->usable(true));
  auto st = stat(ino);
  if (!st) return make_error(st.error());
  if (!st->is_reg()) return make_error(Errc::invalid_argument, fmt("writer: inode %llu is not a regular file", ino));
  // f2fs_write_checks() in fs/f2fs/file.c: EPERM on an immutable inode.
  // An append-only one is written where the caller says (O_APPEND is
  // the opener's: open() refuses write access without it).
  F2FSCORE_TRY(impl_->refuse_flagged(ino, false, "no writes"));
  if (auto ip = impl_->node(ino); ip && Impl::compressed(**ip) && ((*ip)->i.i_advise & advise::encrypt))
    return errno_error(Errc::unsupported, EOPNOTSUPP,
                       fmt("writer: inode %llu is compressed and encrypted: the writer does not write such files", ino));
  F2FSCORE_TRY(impl_->refuse_verity(ino, "no writes"));  // its data is read-only
  // A file with F2FS_SYNC_FL (chattr +S) is written synchronously:
  // generic_write_sync() with IS_SYNC() makes it O_DSYNC.
  if (st->flags & iflag::sync) flags.dsync = true;
  if (flags.direct && (offset % kBlockSize || data.size() % kBlockSize))
    return make_error(Errc::unaligned, fmt("writer: a direct write of %llu bytes at %llu is not in whole 4 KiB blocks",
                                           static_cast<std::uint64_t>(data.size()), offset));
  if (data.empty()) return std::size_t{0};
  // The largest file: every pointer of the node tree, in 4 KiB blocks.
  auto inp0 = impl_->node(ino);
  if (!inp0) return make_error(inp0.error());
  const std::uint64_t max_blocks = impl_->max_file_blocks(**inp0);
  if (offset + data.size() > max_blocks * kBlockSize || offset + data.size() < offset)
    return errno_error(Errc::invalid_argument, EFBIG, fmt("writer: a write to %llu bytes passes the largest file (%llu bytes)",
                                                         offset + data.size(), max_blocks * kBlockSize));
  if (Impl::compressed(**inp0)) {
    F2FSCORE_TRY(impl_->compress_writable(ino, **inp0));
    flags.direct = false;  // buffered, as f2fs_force_buffered_io() makes it
  }
  F2FSCORE_TRY(impl_->convert_inline_data(ino));
  std::vector<std::uint8_t> b(kBlockSize);
  std::uint8_t type = 0;
  {
    auto inp = impl_->node(ino);
    if (!inp) return make_error(inp.error());
    type = impl_->data_type(**inp);
  }
  if (flags.direct) {
    // A segment at a time, GC between (balance_fs(), writer/gc.cpp).
    constexpr std::size_t kChunk = std::size_t{wr::kBlocksPerSeg} * kBlockSize;
    for (std::size_t done = 0; done < data.size(); done += kChunk) {
      if (done) F2FSCORE_TRY(impl_->balance_fs());
      F2FSCORE_TRY(impl_->direct_write(ino, (offset + done) / kBlockSize, data.subspan(done, std::min(kChunk, data.size() - done)),
                                   type));
    }
  }
  for (std::size_t done = flags.direct ? data.size() : 0; done < data.size();) {
    if (done) F2FSCORE_TRY(impl_->balance_fs());  // GC between blocks, as per page in the kernel
    const std::uint64_t pos = offset + done;
    const std::size_t in_blk = pos % kBlockSize;
    const std::size_t c = std::min<std::size_t>(data.size() - done, kBlockSize - in_blk);
    const std::uint64_t idx = pos / kBlockSize;
    if (c == kBlockSize) {  // a whole block: no staging copy
      F2FSCORE_TRY(impl_->cache_write(ino, idx, data.data() + done, type, flags.lend ? &flags.lend : nullptr));
      done += c;
      continue;
    }
    if (c < kBlockSize) {
      if (idx * kBlockSize < st->size) F2FSCORE_TRY(impl_->read_file_block(ino, idx, b.data()));
      else std::fill(b.begin(), b.end(), 0);
    }
    std::memcpy(b.data() + in_blk, data.data() + done, c);
    F2FSCORE_TRY(impl_->cache_write(ino, idx, b.data(), type));
    done += c;
  }
  auto inp = impl_->node(ino);
  if (!inp) return make_error(inp.error());
  if (offset + data.size() > (*inp)->i.i_size.get()) (*inp)->i.i_size.set(offset + data.size());
  impl_->touch(**inp);
  impl_->mark_dirty(ino);
  if (flags.dsync) F2FSCORE_TRY(fdatasync(ino));
  // (stats) Application bytes, as f2fs_file_write_iter(); direct writes are
  // counted by their device requests (APP_DIRECT_IO, wr::data_write_tag()).
  if (impl_->iostat && !flags.direct) impl_->iostat->account(IostatType::app_buffered_io, data.size());
  return data.size();
}

Status Writer::truncate(nid_t ino, std::uint64_t size) {
  F2FSCORE_WRITER_LOCK(impl_);
  F2FSCORE_TRY(impl_->usable(true));
  auto st = stat(ino);
  if (!st) return make_error(st.error());
  if (!st->is_reg()) return make_error(Errc::invalid_argument, fmt("writer: inode %llu is not a regular file", ino));
  // f2fs_setattr() refuses an immutable inode; vfs_truncate() and
  // do_sys_ftruncate() in fs/open.c an append-only one (EPERM).
  F2FSCORE_TRY(impl_->refuse_flagged(ino, true, "no truncate"));
  // fsverity_prepare_setattr() in fs/verity/open.c: EPERM.
  F2FSCORE_TRY(impl_->refuse_verity(ino, "no truncate"));
  auto inp = impl_->node(ino);
  if (!inp) return make_error(inp.error());
  {
    // The largest file (as write() checks): EFBIG from inode_newsize_ok().
    const std::uint64_t max_blocks = impl_->max_file_blocks(**inp);
    if (size > max_blocks * kBlockSize)
      return errno_error(Errc::invalid_argument, EFBIG, fmt("writer: a size of %llu bytes passes the largest file (%llu bytes)",
                                                           size, max_blocks * kBlockSize));
  }
  if ((*inp)->i.i_inline & inline_flag::data) {
    const std::uint32_t max = impl_->max_inline(**inp);
    if (size > max) {
      F2FSCORE_TRY(impl_->convert_inline_data(ino));
    } else {
      auto* raw = reinterpret_cast<std::uint8_t*>(*inp);
      if (size < st->size) std::memset(raw + impl_->inline_offset(**inp) + size, 0,
                                         static_cast<std::size_t>(std::min<std::uint64_t>(st->size, max) - size));
      (*inp)->i.i_size.set(size);
      impl_->touch(**inp);
      impl_->mark_dirty(ino);
      return {};
    }
  }
  // Blocks past the new size are freed also when the size does not change
  // (a failed write's blocks, fallocate KEEP_SIZE), as f2fs_setattr() in
  // fs/f2fs/file.c calls f2fs_truncate() for ia_size <= i_size.
  if (size <= st->size) {
    const std::uint64_t keep = (size + kBlockSize - 1) / kBlockSize;
    bool zero_tail = true;
    if (Impl::compressed(**inp)) {
      // f2fs_truncate_blocks(): whole clusters from the cluster after
      // `size`; in a compressed cluster, f2fs_truncate_partial_cluster().
      F2FSCORE_TRY(impl_->compress_writable(ino, **inp));
      const std::uint64_t cs = Impl::cluster_blocks(**inp);
      const std::uint64_t free_from = (keep + cs - 1) / cs * cs;
      F2FSCORE_TRY(impl_->truncate_blocks(ino, free_from));
      if (free_from != keep || size % kBlockSize) {
        auto c = impl_->cluster_compressed(ino, size / kBlockSize / cs);
        if (!c) return make_error(c.error());
        if (*c) {
          F2FSCORE_TRY(impl_->truncate_partial_cluster(ino, size));
          zero_tail = false;
        } else {
          F2FSCORE_TRY(impl_->truncate_blocks(ino, keep));
        }
      }
    } else {
      F2FSCORE_TRY(impl_->truncate_blocks(ino, keep));
    }
    if (zero_tail && size % kBlockSize) {
      // Zero the tail of the last block, as truncate_partial_data_page().
      // A cached page (dirty, maybe of a NEW_ADDR block) is zeroed in the
      // cache; a block on the device through it.
      auto a = impl_->map(ino, size / kBlockSize, false);
      if (!a) return make_error(a.error());
      std::vector<std::uint8_t> b(kBlockSize);
      const bool cached = impl_->cache_read(ino, size / kBlockSize, b.data());
      if (cached || (*a != kNullAddr && *a != kNewAddr)) {
        if (!cached) F2FSCORE_TRY(impl_->read_file_block(ino, size / kBlockSize, b.data()));
        std::fill(b.begin() + static_cast<std::ptrdiff_t>(size % kBlockSize), b.end(), 0);
        auto ip = impl_->node(ino);
        if (!ip) return make_error(ip.error());
        F2FSCORE_TRY(impl_->cache_write(ino, size / kBlockSize, b.data(), impl_->data_type(**ip)));
      }
    }
  }
  auto ip = impl_->node(ino);
  if (!ip) return make_error(ip.error());
  (*ip)->i.i_size.set(size);
  impl_->touch(**ip);
  impl_->mark_dirty(ino);
  return {};
}

}  // namespace f2fscore
