// Compressed files in the writer, as Linux 6.1 writes them (fs/f2fs/compress.c,
// data.c, file.c, namei.c):
//
//   - a file is compressed when it has F2FS_COMPR_FL (set on an empty file
//     or a directory, inherited from a flagged directory, or given by
//     compress_extension); its inode carries i_compress_algorithm,
//     i_log_cluster_size and i_compress_flag from the mount;
//   - its data is written in clusters of 1 << i_log_cluster_size blocks,
//     to the cold data log (f2fs_need_compress_data() in
//     __get_segment_type_6()); a cluster whose pages are all dirty at
//     writeback and that saves a block is written compressed: COMPRESS_ADDR
//     in its first slot, the compressed blocks in the next slots, NEW_ADDR
//     in the saved ones (the saved blocks stay reserved: valid_block_count
//     and i_blocks count them, until F2FS_IOC_RELEASE_COMPRESS_BLOCKS);
//   - any other cluster is written plain; a compressed cluster changed in
//     part is read whole first and rewritten whole
//     (f2fs_prepare_compress_overwrite());
//   - i_compr_blocks sums cluster size - compressed blocks over the
//     compressed clusters (f2fs_i_compr_blocks_update());
//   - compressed clusters are never written in place; GC moves their
//     blocks as they are (move_data_block());
//   - under compress_mode=user, clusters are written plain except while
//     F2FS_IOC_COMPRESS_FILE rewrites the file (FI_ENABLE_COMPRESS);
//   - F2FS_IOC_RELEASE_COMPRESS_BLOCKS gives the saved blocks' reserve back
//     to the volume, F2FS_IOC_RESERVE_COMPRESS_BLOCKS takes it again.
#include <algorithm>
#include <cerrno>
#include <cstring>

#include "f2fscore/iostat.hpp"
#include "meta/meta_internal.hpp"
#include "reader/volume_internal.hpp"
#include "writer/writer_internal.hpp"

namespace f2fscore {

using namespace disk;
using meta::fmt;

namespace {

bool valid_data(block_t a) { return a != kNullAddr && a != kNewAddr && a != kCompressAddr; }

// COMPRESS_CHKSUM, bit 0 of i_compress_flag.
constexpr std::uint16_t kComprChksum = 1;
// COMPRESS_EXT_NUM and F2FS_EXTENSION_LEN - 1 (mount option limits).
constexpr std::size_t kComprExtNum = 16, kExtMax = 7;

// is_extension_exist(name, ext, false) in fs/f2fs/namei.c: "*" matches every
// name; else "name.ext" with at least one byte before the dot, compared
// without case.
bool has_extension(std::string_view name, std::string_view ext) {
  if (ext == "*") return true;
  if (name.size() < ext.size() + 2) return false;
  if (name[name.size() - ext.size() - 1] != '.') return false;
  for (std::size_t k = 0; k < ext.size(); ++k) {
    auto low = [](char c) { return (c >= 'A' && c <= 'Z') ? static_cast<char>(c - 'A' + 'a') : c; };
    if (low(name[name.size() - ext.size() + k]) != low(ext[k])) return false;
  }
  return true;
}

// F2FS_FITS_IN_INODE(i_compress_flag): the extra attributes hold the
// compression fields.
bool compress_fields_fit(const Node& in) {
  if (!(in.i.i_inline & inline_flag::extra_attr)) return false;
  return in.i.extra.i_extra_isize.get() >= offsetof(InodeExtra, i_compress_flag) + sizeof(Le16);
}

}  // namespace

Status Writer::Impl::check_compress_options() {
  const auto& c = opts.compression;
  if (!c.any()) return {};
  auto bad = [](const std::string& what) {
    return make_error(Errc::invalid_argument, "writer: compression mount options: " + what);
  };
  if (!(sb.feature.get() & feature::compression))
    return bad("the volume has no compression feature (f2fscore-mkfs -O extra_attr,compression)");
  if (c.algorithm) F2FSCORE_TRY(wr::check_codec(*c.algorithm));
  if (c.log_size && (*c.log_size < 2 || *c.log_size > 8))
    return bad(fmt("compress_log_size %llu outside [2, 8]", *c.log_size));
  if (c.extension.size() > kComprExtNum || c.nocompress_extension.size() > kComprExtNum)
    return bad(fmt("at most %llu extensions per list", kComprExtNum));
  for (const auto* list : {&c.extension, &c.nocompress_extension})
    for (const auto& e : *list)
      if (e.empty() || e.size() > kExtMax) return bad("extension \"" + e + "\" is empty or longer than 7 bytes");
  for (const auto& e : c.extension)
    for (const auto& n : c.nocompress_extension)
      if (e == n) return bad("extension \"" + e + "\" is in both compress_extension and nocompress_extension");
  if (c.min_saved_blocks) {
    const std::uint32_t cs = 1u << c.log_size.value_or(2);
    if (*c.min_saved_blocks < 1 || *c.min_saved_blocks >= cs)
      return bad(fmt("min_saved_blocks %llu outside [1, %llu] (clusters of %llu blocks)", *c.min_saved_blocks, cs - 1, cs));
  }
  return {};
}

bool Writer::Impl::need_compress_data(const Node& in) const {
  if (!compressed(in)) return false;
  if (opts.compression.mode.value_or(MountOptions::Compression::Mode::fs) == MountOptions::Compression::Mode::fs)
    return true;
  return enable_compress_ino != 0 && in.footer.ino.get() == enable_compress_ino;
}

Status Writer::Impl::set_compress_context(Node& in) {
  if (!compress_fields_fit(in))
    return errno_error(Errc::unsupported, EOPNOTSUPP,
                       "writer: the inode's extra attributes have no room for the compression fields");
  const auto& c = opts.compression;
  in.i.extra.i_compress_algorithm = c.algorithm.value_or(wr::kComprLz4);
  in.i.extra.i_log_cluster_size = c.log_size.value_or(2);
  in.i.extra.i_compress_flag.set(c.chksum.value_or(false) ? kComprChksum : 0);
  in.i.i_flags.set(in.i.i_flags.get() | iflag::compr);
  return {};
}

Status Writer::Impl::compress_new_inode(const Node& dir, Node& in, std::string_view name) {
  if (!(sb.feature.get() & feature::compression)) return {};
  const std::uint16_t type = in.i.i_mode.get() & 0xF000;
  if (type != 0x4000) {
    if (type != 0x8000) return {};
    // Not hot files (the superblock's hot extensions, as make_inode() set
    // them), not nocompress_extension, then compress_extension.
    if (in.i.i_advise & advise::hot) return {};
    for (const auto& e : opts.compression.nocompress_extension)
      if (has_extension(name, e)) return {};
    for (const auto& e : opts.compression.extension)
      if (has_extension(name, e)) return set_compress_context(in);
  }
  // The directory's {no,}compression flag.
  const std::uint32_t df = dir.i.i_flags.get();
  if (df & iflag::nocomp) {
    in.i.i_flags.set(in.i.i_flags.get() | iflag::nocomp);
    return {};
  }
  if (df & iflag::compr) return set_compress_context(in);
  return {};
}

void Writer::Impl::add_compr_blocks(nid_t ino, std::int64_t delta) {
  auto ip = node(ino);
  if (!ip) return;
  Le64& f = (*ip)->i.extra.i_compr_blocks;
  f.set(static_cast<std::uint64_t>(static_cast<std::int64_t>(f.get()) + delta));
  mark_dirty(ino);
}

Status Writer::Impl::compress_writable(nid_t ino, const Node& in) {
  if (in.i.i_inline & inline_flag::compress_released)
    return errno_error(Errc::invalid_argument, EPERM,
                       fmt("writer: inode %llu has its compressed blocks released (FI_COMPRESS_RELEASED): it is "
                           "read-only until they are reserved again (EPERM)",
                           ino));
  if (!compress_fields_fit(in) || in.i.extra.i_log_cluster_size < 2 || in.i.extra.i_log_cluster_size > 8)
    return make_error(Errc::corrupt, fmt("writer: compressed inode %llu has no valid i_log_cluster_size", ino));
  return wr::check_codec(in.i.extra.i_compress_algorithm);
}

Result<bool> Writer::Impl::cluster_compressed(nid_t ino, std::uint64_t cluster) {
  auto ip = node(ino);
  if (!ip) return make_error(ip.error());
  const std::uint64_t first = cluster * cluster_blocks(**ip);
  auto a = map(ino, first, false);
  if (!a) return make_error(a.error());
  return *a == kCompressAddr;
}

Result<std::uint32_t> Writer::Impl::cluster_valid_blocks(nid_t ino, std::uint64_t first, std::uint32_t cs) {
  std::uint32_t n = 0;
  for (std::uint32_t k = 1; k < cs; ++k) {
    auto a = map(ino, first + k, false);
    if (!a) return make_error(a.error());
    if (valid_data(*a)) ++n;
  }
  return n;
}

Status Writer::Impl::read_cluster(nid_t ino, std::uint64_t cluster, std::uint8_t* out) {
  auto ip = node(ino);
  if (!ip) return make_error(ip.error());
  const std::uint32_t cs = cluster_blocks(**ip);
  const std::uint8_t algorithm = (*ip)->i.extra.i_compress_algorithm;
  const std::uint64_t first = cluster * cs;
  const std::size_t bytes = std::size_t{cs} * kBlockSize;
  if (!io_batch().idle()) F2FSCORE_TRY(io_batch().drain());  // the blocks may be in flight
  auto a0 = map(ino, first, false);
  if (!a0) return make_error(a0.error());
  auto read_block = [&](block_t a, std::uint8_t* dst, std::uint64_t index) -> Status {
    if (!in_main(a))
      return make_error(Errc::corrupt, fmt("writer: inode %llu block %llu points outside the main area", ino, index));
    return read_at(dev, static_cast<std::uint64_t>(a) * kBlockSize, std::span<std::uint8_t>(dst, kBlockSize),
                   io_tag(IostatType::fs_data_read_io));
  };
  if (*a0 != kCompressAddr) {
    for (std::uint32_t k = 0; k < cs; ++k) {
      auto a = map(ino, first + k, false);
      if (!a) return make_error(a.error());
      std::uint8_t* dst = out + std::size_t{k} * kBlockSize;
      if (!valid_data(*a)) std::memset(dst, 0, kBlockSize);
      else F2FSCORE_TRY(read_block(*a, dst, first + k));
    }
    return {};
  }
  // The compressed blocks: the valid addresses after COMPRESS_ADDR, up to
  // the first that is not (f2fs_read_multi_pages()).
  std::vector<std::uint8_t> cbuf;
  for (std::uint32_t k = 1; k < cs; ++k) {
    auto a = map(ino, first + k, false);
    if (!a) return make_error(a.error());
    if (!valid_data(*a)) break;
    cbuf.resize(std::size_t{k} * kBlockSize);
    F2FSCORE_TRY(read_block(*a, cbuf.data() + std::size_t{k - 1} * kBlockSize, first + k));
  }
  auto st = decompress_cluster(algorithm, cbuf, std::span<std::uint8_t>(out, bytes), nullptr);
  if (!st)
    return make_error(st.error().code, fmt("writer: inode %llu cluster at block %llu: ", ino, first) + st.error().message);
  return {};
}

// Writes cluster `cluster` of `ino` from data[0, cluster bytes): the pages
// of `dirty`; when every page is dirty and the cluster saves a block,
// compressed. A compressed cluster is always written whole.
Status Writer::Impl::write_cluster(nid_t ino, std::uint64_t cluster, const std::uint8_t* data, const std::vector<bool>& dirty,
                                   const wr::WriteContext& ctx, std::uint16_t tag) {
  auto ip = node(ino);
  if (!ip) return make_error(ip.error());
  const std::uint32_t cs = cluster_blocks(**ip);
  const std::uint8_t algorithm = (*ip)->i.extra.i_compress_algorithm;
  const bool chksum = (*ip)->i.extra.i_compress_flag.get() & kComprChksum;
  const std::uint8_t type = data_type(**ip);
  const std::uint64_t first = cluster * cs;
  auto was = cluster_compressed(ino, cluster);
  if (!was) return make_error(was.error());
  std::uint32_t valid_before = 0;
  if (*was) {
    auto v = cluster_valid_blocks(ino, first, cs);
    if (!v) return make_error(v.error());
    valid_before = *v;
  }
  const bool full = std::all_of(dirty.begin(), dirty.end(), [](bool b) { return b; });
  if (*was && !full) return make_error(Errc::corrupt, "writer: a compressed cluster written in part");
  auto& io = io_batch();
  wr::WriteContext c2 = ctx;
  // Out of place also while F2FS_IOC_COMPRESS_FILE rewrites the file
  // (f2fs_should_update_outplace(): compress_mode user, FI_ENABLE_COMPRESS).
  c2.no_ipu = *was || enable_compress_ino == ino;
  std::vector<std::uint8_t> cbuf;
  std::uint32_t n = 0;
  if (full && need_compress_data(**ip)) {
    auto r = wr::compress_cluster(algorithm, chksum, std::span<const std::uint8_t>(data, std::size_t{cs} * kBlockSize), cbuf);
    if (!r) return make_error(r.error());
    n = *r;
    // Fewer blocks saved than asked (sload.f2fs -m): plain.
    if (n != 0 && cs - n < opts.compression.min_saved_blocks.value_or(1)) n = 0;
  }
  if (n == 0) {
    // Plain (f2fs_write_raw_pages()); a compressed cluster loses its
    // i_compr_blocks as its header slot is written (f2fs_do_write_data_page()).
    for (std::uint32_t k = 0; k < cs; ++k) {
      if (!dirty[k]) continue;
      auto a = place_file_block(ino, first + k, type, c2);
      if (!a) return make_error(a.error());
      F2FSCORE_TRY(io.add(*a, data + std::size_t{k} * kBlockSize, tag));
    }
    if (*was) add_compr_blocks(ino, -static_cast<std::int64_t>(cs - valid_before));
    return {};
  }
  // Compressed (f2fs_write_compressed_pages()).
  c2.no_ipu = true;
  for (std::uint32_t k = 0; k < cs; ++k) {
    const std::uint64_t index = first + k;
    nid_t dn = 0;
    std::uint32_t slot = 0;
    auto old = map(ino, index, true, &dn, &slot);
    if (!old) return make_error(old.error());
    block_t cur = *old;
    if (cur == kNullAddr) {
      // Every dirty page was reserved when it was dirtied; a hole here is
      // reserved now (f2fs_reserve_block()).
      F2FSCORE_TRY(check_space(1));
      F2FSCORE_TRY(quota_alloc_block(ino));
      auto ip2 = node(ino);
      if (!ip2) return make_error(ip2.error());
      (*ip2)->i.i_blocks.set((*ip2)->i.i_blocks.get() + 1);
      ++reserved_blocks;
      cur = kNewAddr;
    }
    block_t next = cur;
    if (k == 0) {
      // The header slot holds a reserved block.
      if (valid_data(cur)) {
        invalidate(cur);
        ++reserved_blocks;
      }
      next = kCompressAddr;
    } else if (k <= n) {
      IpuReason why = IpuReason::opu_policy;
      auto a = place_data(ino, index, cur, type, c2, &why);
      if (!a) return make_error(a.error());
      if (valid_data(cur)) invalidate(cur);
      else --reserved_blocks;  // NEW_ADDR (or COMPRESS_ADDR misplaced)
      F2FSCORE_TRY(claim(*a, {*a, dn, static_cast<std::uint16_t>(slot), nm.get(dn).version, false}));
      append_written.insert(ino);
      F2FSCORE_TRY(io.add(*a, cbuf.data() + std::size_t{k - 1} * kBlockSize, tag));
      ++stats.data_blocks_written;
      ++stats.ipu.data_blocks[static_cast<std::size_t>(why)];
      next = *a;
    } else if (valid_data(cur)) {
      invalidate(cur);
      ++reserved_blocks;
      next = kNewAddr;
    } else {
      next = kNewAddr;
    }
    auto dp = node(dn);
    if (!dp) return make_error(dp.error());
    if (dn == ino) (*dp)->i.i_addr[extra_words(**dp) + slot].set(next);
    else (*dp)->dn.addr[slot].set(next);
    mark_dirty(dn);
    auto ip3 = node(ino);
    if (!ip3) return make_error(ip3.error());
    wr::drop_largest_extent(**ip3, index);
    mark_dirty(ino);
  }
  if (*was) add_compr_blocks(ino, -static_cast<std::int64_t>(cs - valid_before));
  add_compr_blocks(ino, static_cast<std::int64_t>(cs - n));
  return {};
}

Status Writer::Impl::writeback_cluster(nid_t ino, std::uint64_t cluster, const wr::WriteContext& ctx, std::uint16_t tag) {
  auto ip = node(ino);
  if (!ip) return make_error(ip.error());
  F2FSCORE_TRY(compress_writable(ino, **ip));
  const std::uint32_t cs = cluster_blocks(**ip);
  const std::uint64_t first = cluster * cs;
  auto was = cluster_compressed(ino, cluster);
  if (!was) return make_error(was.error());
  std::vector<std::uint8_t> buf(std::size_t{cs} * kBlockSize);
  std::vector<bool> dirty(cs, false);
  bool have_old = false;
  for (std::uint32_t k = 0; k < cs; ++k) {
    std::uint8_t* dst = buf.data() + std::size_t{k} * kBlockSize;
    if (page_dirty(ino, first + k)) {
      cache_read(ino, first + k, dst);
      dirty[k] = true;
      continue;
    }
    if (!*was) continue;
    // A compressed cluster is rewritten whole: its clean pages as they are
    // (f2fs_prepare_compress_overwrite() reads the cluster).
    if (cache_read(ino, first + k, dst)) {
      dirty[k] = true;
      continue;
    }
    if (!have_old) {
      std::vector<std::uint8_t> old(buf.size());
      F2FSCORE_TRY(read_cluster(ino, cluster, old.data()));
      for (std::uint32_t j = k; j < cs; ++j)
        if (!page_dirty(ino, first + j) && !cache_has(ino, first + j))
          std::memcpy(buf.data() + std::size_t{j} * kBlockSize, old.data() + std::size_t{j} * kBlockSize, kBlockSize);
      have_old = true;
    }
    dirty[k] = true;
  }
  F2FSCORE_TRY(write_cluster(ino, cluster, buf.data(), dirty, ctx, tag));
  // The cluster's pages are clean now (cached as written).
  for (std::uint32_t k = 0; k < cs; ++k)
    if (dirty[k]) cache_fill(ino, first + k, buf.data() + std::size_t{k} * kBlockSize);
  return {};
}

Status Writer::Impl::write_compressed_block(nid_t ino, std::uint64_t index, const std::uint8_t* block) {
  auto ip = node(ino);
  if (!ip) return make_error(ip.error());
  F2FSCORE_TRY(compress_writable(ino, **ip));
  const std::uint32_t cs = cluster_blocks(**ip);
  const std::uint64_t cluster = index / cs, first = cluster * cs;
  auto was = cluster_compressed(ino, cluster);
  if (!was) return make_error(was.error());
  std::vector<std::uint8_t> buf(std::size_t{cs} * kBlockSize);
  std::vector<bool> dirty(cs, *was);
  if (*was) F2FSCORE_TRY(read_cluster(ino, cluster, buf.data()));
  const std::uint32_t k = static_cast<std::uint32_t>(index - first);
  std::memcpy(buf.data() + std::size_t{k} * kBlockSize, block, kBlockSize);
  dirty[k] = true;
  wr::WriteContext ctx;
  ctx.file_dirty_pages = 1;
  F2FSCORE_TRY(write_cluster(ino, cluster, buf.data(), dirty, ctx, wr::data_write_tag(ctx)));
  return io_batch().drain();
}

Status Writer::Impl::truncate_partial_cluster(nid_t ino, std::uint64_t size) {
  auto ip = node(ino);
  if (!ip) return make_error(ip.error());
  const std::uint32_t cs = cluster_blocks(**ip);
  const std::uint64_t cluster = size / kBlockSize / cs, first = cluster * cs;
  auto was = cluster_compressed(ino, cluster);
  if (!was) return make_error(was.error());
  if (!*was) return truncate_blocks(ino, (size + kBlockSize - 1) / kBlockSize);
  // f2fs_truncate_partial_cluster(): the cluster read whole, zeroed from
  // `size`, rewritten whole.
  std::vector<std::uint8_t> buf(std::size_t{cs} * kBlockSize), old(buf.size());
  F2FSCORE_TRY(read_cluster(ino, cluster, old.data()));
  for (std::uint32_t k = 0; k < cs; ++k) {
    std::uint8_t* dst = buf.data() + std::size_t{k} * kBlockSize;
    if (!cache_read(ino, first + k, dst)) std::memcpy(dst, old.data() + std::size_t{k} * kBlockSize, kBlockSize);
  }
  const std::uint64_t from = size - first * kBlockSize;
  std::memset(buf.data() + static_cast<std::size_t>(from), 0, buf.size() - static_cast<std::size_t>(from));
  cache_drop(ino, first, first + cs);  // their contents are in `buf`
  wr::WriteContext ctx;
  ctx.origin = wr::WriteContext::Origin::sync_writeback;
  F2FSCORE_TRY(write_cluster(ino, cluster, buf.data(), std::vector<bool>(cs, true), ctx, wr::data_write_tag(ctx)));
  return io_batch().drain();
}

// What release and reserve both ask first: the compression feature
// (EOPNOTSUPP) and a compressed file (EINVAL), as f2fs_release_compress_blocks()
// and f2fs_reserve_compress_blocks() in fs/f2fs/file.c check them.
static Status compressed_file_or_error(Writer::Impl& w, nid_t ino) {
  if (!(w.sb.feature.get() & feature::compression))
    return errno_error(Errc::unsupported, EOPNOTSUPP, "writer: the volume has no compression feature (EOPNOTSUPP)");
  auto ip = w.node(ino);
  if (!ip) return make_error(ip.error());
  if (!Writer::Impl::compressed(**ip))
    return errno_error(Errc::invalid_argument, EINVAL, fmt("writer: inode %llu is not a compressed file (EINVAL)", ino));
  return {};
}

// F2FS_IOC_RELEASE_COMPRESS_BLOCKS (f2fs_release_compress_blocks() and
// release_compress_blocks() in fs/f2fs/file.c).
Result<std::uint64_t> Writer::Impl::release_compressed(nid_t ino) {
  F2FSCORE_TRY(compressed_file_or_error(*this, ino));
  auto ip = node(ino);
  if (!ip) return make_error(ip.error());
  if ((*ip)->i.i_inline & inline_flag::compress_released)
    return errno_error(Errc::invalid_argument, EINVAL,
                       fmt("writer: inode %llu has its compressed blocks released already (EINVAL)", ino));
  wr::WriteContext ctx;
  ctx.origin = wr::WriteContext::Origin::sync_writeback;
  F2FSCORE_TRY(writeback(ino, ctx));
  F2FSCORE_TRY(io_batch().drain());
  ip = node(ino);
  if (!ip) return make_error(ip.error());
  (*ip)->i.i_inline = static_cast<std::uint8_t>((*ip)->i.i_inline | inline_flag::compress_released);
  set_ctime(**ip);
  mark_dirty(ino);
  if ((*ip)->i.extra.i_compr_blocks.get() == 0) return std::uint64_t{0};
  const std::uint32_t cs = cluster_blocks(**ip);
  const std::uint64_t last = ((*ip)->i.i_size.get() + kBlockSize - 1) / kBlockSize;
  std::uint64_t released = 0;
  for (std::uint64_t first = 0; first < last; first += cs) {
    auto a0 = map(ino, first, false);
    if (!a0) return make_error(a0.error());
    if (*a0 != kCompressAddr) continue;
    std::uint32_t compr = 0;
    for (std::uint32_t k = 1; k < cs; ++k) {
      nid_t dn = 0;
      std::uint32_t slot = 0;
      auto a = map(ino, first + k, false, &dn, &slot);
      if (!a) return make_error(a.error());
      if (valid_data(*a)) ++compr;
      if (*a != kNewAddr) continue;
      auto dp = node(dn);
      if (!dp) return make_error(dp.error());
      if (dn == ino) (*dp)->i.i_addr[extra_words(**dp) + slot].set(kNullAddr);
      else (*dp)->dn.addr[slot].set(kNullAddr);
      mark_dirty(dn);
    }
    const std::uint32_t freed = cs - compr;
    add_compr_blocks(ino, -static_cast<std::int64_t>(freed));
    reserved_blocks -= std::min<std::uint64_t>(reserved_blocks, freed);
    auto ip2 = node(ino);
    if (!ip2) return make_error(ip2.error());
    const std::uint64_t ib = (*ip2)->i.i_blocks.get();
    (*ip2)->i.i_blocks.set(ib > freed ? ib - freed : 0);
    mark_dirty(ino);
    released += freed;
  }
  return released;
}

Result<std::uint64_t> Writer::release_compress_blocks(nid_t ino) {
  F2FSCORE_WRITER_LOCK(impl_);
  F2FSCORE_TRY(impl_->usable(true));
  F2FSCORE_TRY(impl_->need_key(ino, "F2FS_IOC_RELEASE_COMPRESS_BLOCKS"));
  return impl_->release_compressed(ino);
}

// F2FS_IOC_RESERVE_COMPRESS_BLOCKS (f2fs_reserve_compress_blocks() and
// reserve_compress_blocks() in fs/f2fs/file.c). Two passes: the count, so
// that ENOSPC and EDQUOT come before the first change, then the change.
Result<std::uint64_t> Writer::Impl::reserve_compressed(nid_t ino) {
  F2FSCORE_TRY(compressed_file_or_error(*this, ino));
  auto ip = node(ino);
  if (!ip) return make_error(ip.error());
  F2FSCORE_TRY(usable(true));
  ip = node(ino);
  if (!ip) return make_error(ip.error());
  if (!((*ip)->i.i_inline & inline_flag::compress_released))
    return errno_error(Errc::invalid_argument, EINVAL,
                       fmt("writer: inode %llu has not had its compressed blocks released (EINVAL)", ino));
  if ((*ip)->i.extra.i_compr_blocks.get() != 0) return std::uint64_t{0};
  if (!compress_fields_fit(**ip) || (*ip)->i.extra.i_log_cluster_size < 2 || (*ip)->i.extra.i_log_cluster_size > 8)
    return make_error(Errc::corrupt, fmt("writer: compressed inode %llu has no valid i_log_cluster_size", ino));
  const std::uint32_t cs = cluster_blocks(**ip);
  const std::uint64_t last = ((*ip)->i.i_size.get() + kBlockSize - 1) / kBlockSize;
  // What each compressed cluster takes back: the COMPRESS_ADDR slot and the
  // slots after it that hold neither a block nor NEW_ADDR. A cluster whose
  // slots after COMPRESS_ADDR all hold a block or NEW_ADDR, one at least
  // NEW_ADDR, was never released (a release stopped part way): nothing to
  // take back. One whose slots all hold blocks (cluster size - 1 compressed
  // blocks) gave back its COMPRESS_ADDR slot and takes it back, as
  // reserve_compress_blocks() in fs/f2fs/file.c of Debian's 6.1.0-57 does
  // (measured under the oracle: three such clusters of 4 blocks release 3
  // and reserve 3, fsck.f2fs clean). Older 6.1 builds skipped such a
  // cluster, leaving valid_block_count and i_blocks a block short of what
  // fsck.f2fs counts.
  auto need_of = [&](std::uint64_t first) -> Result<std::uint32_t> {
    auto a0 = map(ino, first, false);
    if (!a0) return make_error(a0.error());
    if (*a0 != kCompressAddr) return std::uint32_t{0};
    std::uint32_t held = 0, reserved = 0;
    for (std::uint32_t k = 1; k < cs; ++k) {
      auto a = map(ino, first + k, false);
      if (!a) return make_error(a.error());
      if (valid_data(*a) && !in_main(*a))
        return make_error(Errc::corrupt, fmt("writer: inode %llu block %llu points outside the main area", ino, first + k));
      if (*a == kNewAddr || valid_data(*a)) ++held;
      if (*a == kNewAddr) ++reserved;
    }
    const std::uint32_t need = cs - held;
    return need == 1 && reserved ? 0 : need;
  };
  std::uint64_t total = 0;
  for (std::uint64_t first = 0; first < last; first += cs) {
    auto need = need_of(first);
    if (!need) return make_error(need.error());
    total += *need;
  }
  if (total) {
    F2FSCORE_TRY(check_space(total));
    F2FSCORE_TRY(quota_alloc_block(ino, total));  // writer/quota.cpp: EDQUOT
  }
  for (std::uint64_t first = 0; total && first < last; first += cs) {
    auto need = need_of(first);
    if (!need) return make_error(need.error());
    if (*need == 0) continue;
    for (std::uint32_t k = 1; k < cs; ++k) {
      nid_t dn = 0;
      std::uint32_t slot = 0;
      auto a = map(ino, first + k, false, &dn, &slot);
      if (!a) return make_error(a.error());
      if (*a != kNullAddr) continue;
      auto dp = node(dn);
      if (!dp) return make_error(dp.error());
      if (dn == ino) (*dp)->i.i_addr[extra_words(**dp) + slot].set(kNewAddr);
      else (*dp)->dn.addr[slot].set(kNewAddr);
      mark_dirty(dn);
    }
    add_compr_blocks(ino, static_cast<std::int64_t>(*need));
    reserved_blocks += *need;
    auto ip2 = node(ino);
    if (!ip2) return make_error(ip2.error());
    (*ip2)->i.i_blocks.set((*ip2)->i.i_blocks.get() + *need);
    mark_dirty(ino);
  }
  ip = node(ino);
  if (!ip) return make_error(ip.error());
  (*ip)->i.i_inline = static_cast<std::uint8_t>((*ip)->i.i_inline & ~inline_flag::compress_released);
  set_ctime(**ip);
  mark_dirty(ino);
  return total;
}

// F2FS_IOC_COMPRESS_FILE / F2FS_IOC_DECOMPRESS_FILE (f2fs_ioc_compress_file(),
// f2fs_ioc_decompress_file() and redirty_blocks() in fs/f2fs/file.c): every
// page up to i_size made dirty with its contents and written back, with
// FI_ENABLE_COMPRESS for compression. A page whose slot is NULL_ADDR is not
// written (f2fs_do_write_data_page() takes it as truncated), so a cluster
// with a hole stays plain.
Status Writer::Impl::rewrite_compressed(nid_t ino, bool compress) {
  const std::string what = compress ? "F2FS_IOC_COMPRESS_FILE" : "F2FS_IOC_DECOMPRESS_FILE";
  if (!(sb.feature.get() & feature::compression))
    return errno_error(Errc::unsupported, EOPNOTSUPP,
                       "writer: " + what + ": the volume has no compression feature (EOPNOTSUPP)");
  if (opts.compression.mode.value_or(MountOptions::Compression::Mode::fs) != MountOptions::Compression::Mode::user)
    return errno_error(Errc::unsupported, EOPNOTSUPP,
                       "writer: " + what + " needs the compress_mode=user mount option (EOPNOTSUPP)");
  auto ip = node(ino);
  if (!ip) return make_error(ip.error());
  if (!compressed(**ip))
    return errno_error(Errc::invalid_argument, EINVAL,
                       "writer: " + what + fmt(": inode %llu is not a compressed file (EINVAL)", ino));
  F2FSCORE_TRY(usable(true));
  ip = node(ino);
  if (!ip) return make_error(ip.error());
  if (auto c = wr::check_codec((*ip)->i.extra.i_compress_algorithm); !c)
    return errno_error(Errc::unsupported, EOPNOTSUPP, "writer: " + what + ": " + c.error().message + " (EOPNOTSUPP)");
  if ((*ip)->i.i_inline & inline_flag::compress_released)
    return errno_error(Errc::invalid_argument, EINVAL,
                       "writer: " + what + fmt(": inode %llu has its compressed blocks released (EINVAL)", ino));
  F2FSCORE_TRY(compress_writable(ino, **ip));
  wr::WriteContext ctx;
  ctx.origin = wr::WriteContext::Origin::sync_writeback;
  F2FSCORE_TRY(writeback(ino, ctx));
  F2FSCORE_TRY(io_batch().drain());
  ip = node(ino);
  if (!ip) return make_error(ip.error());
  if (!compress && (*ip)->i.extra.i_compr_blocks.get() == 0) return {};
  struct Enable {
    nid_t& slot;
    ~Enable() { slot = 0; }
  } enable{enable_compress_ino};
  if (compress) enable_compress_ino = ino;
  const std::uint32_t cs = cluster_blocks(**ip);
  const std::uint64_t last = ((*ip)->i.i_size.get() + kBlockSize - 1) / kBlockSize;
  const std::uint16_t tag = wr::data_write_tag(ctx);
  std::vector<std::uint8_t> buf(std::size_t{cs} * kBlockSize);
  std::uint64_t queued = 0;
  for (std::uint64_t first = 0; first < last; first += cs) {
    const std::uint64_t cluster = first / cs;
    auto was = cluster_compressed(ino, cluster);
    if (!was) return make_error(was.error());
    // A compressed cluster is rewritten whole (as at writeback); else the
    // pages below i_size whose slots hold a block or NEW_ADDR.
    std::vector<bool> dirty(cs, false);
    bool any = false;
    for (std::uint32_t k = 0; k < cs; ++k) {
      if (!*was) {
        if (first + k >= last) break;
        auto a = map(ino, first + k, false);
        if (!a) return make_error(a.error());
        if (*a == kNullAddr) continue;
      }
      dirty[k] = true;
      any = true;
    }
    if (!any) continue;
    F2FSCORE_TRY(read_cluster(ino, cluster, buf.data()));
    F2FSCORE_TRY(write_cluster(ino, cluster, buf.data(), dirty, ctx, tag));
    // The cache's clean pages hold these contents already.
    queued += cs;
    if (queued >= wr::kBlocksPerSeg) {
      // A segment at a time, then room made as for any write (balance_fs():
      // a checkpoint frees what the rewrite invalidated, GC if still short),
      // so the rewrite never eats the sections a checkpoint needs.
      F2FSCORE_TRY(io_batch().drain());
      F2FSCORE_TRY(balance_fs());
      queued = 0;
    }
  }
  return io_batch().drain();
}

Result<std::uint64_t> Writer::reserve_compress_blocks(nid_t ino) {
  F2FSCORE_WRITER_LOCK(impl_);
  F2FSCORE_TRY(impl_->usable(false));
  F2FSCORE_TRY(impl_->refuse_encrypted_compressed(ino, "F2FS_IOC_RESERVE_COMPRESS_BLOCKS"));
  return impl_->reserve_compressed(ino);
}

Status Writer::compress_file(nid_t ino) {
  F2FSCORE_WRITER_LOCK(impl_);
  F2FSCORE_TRY(impl_->usable(false));
  F2FSCORE_TRY(impl_->refuse_encrypted_compressed(ino, "F2FS_IOC_COMPRESS_FILE"));
  return impl_->rewrite_compressed(ino, true);
}

Status Writer::decompress_file(nid_t ino) {
  F2FSCORE_WRITER_LOCK(impl_);
  F2FSCORE_TRY(impl_->usable(false));
  F2FSCORE_TRY(impl_->refuse_encrypted_compressed(ino, "F2FS_IOC_DECOMPRESS_FILE"));
  return impl_->rewrite_compressed(ino, false);
}

// F2FS_IOC_GET_COMPRESS_OPTION (f2fs_ioc_get_compress_option()).
Result<Writer::CompressOption> Writer::get_compress_option(nid_t ino) {
  F2FSCORE_WRITER_LOCK(impl_);
  F2FSCORE_TRY(impl_->usable(false));
  if (!(impl_->sb.feature.get() & feature::compression))
    return errno_error(Errc::unsupported, EOPNOTSUPP, "writer: the volume has no compression feature (EOPNOTSUPP)");
  auto ip = impl_->node(ino);
  if (!ip) return make_error(ip.error());
  if (!Impl::compressed(**ip))
    return errno_error(Errc::not_found, ENODATA, fmt("writer: inode %llu is not a compressed file (ENODATA)", ino));
  return CompressOption{(*ip)->i.extra.i_compress_algorithm, (*ip)->i.extra.i_log_cluster_size};
}

// F2FS_IOC_SET_COMPRESS_OPTION (f2fs_ioc_set_compress_option()).
Status Writer::set_compress_option(nid_t ino, const CompressOption& opt) {
  F2FSCORE_WRITER_LOCK(impl_);
  F2FSCORE_TRY(impl_->usable(false));
  if (!(impl_->sb.feature.get() & feature::compression))
    return errno_error(Errc::unsupported, EOPNOTSUPP, "writer: the volume has no compression feature (EOPNOTSUPP)");
  if (opt.log_cluster_size < 2 || opt.log_cluster_size > 8 || opt.algorithm > wr::kComprLzoRle)
    return errno_error(Errc::invalid_argument, EINVAL,
                       fmt("writer: compress option algorithm %llu, log_cluster_size %llu: the algorithm must be 0 to 3 "
                           "and the log size 2 to 8 (EINVAL)",
                           opt.algorithm, opt.log_cluster_size));
  F2FSCORE_TRY(impl_->refuse_encrypted_compressed(ino, "F2FS_IOC_SET_COMPRESS_OPTION"));
  auto ip = impl_->node(ino);
  if (!ip) return make_error(ip.error());
  if (!Impl::compressed(**ip))
    return errno_error(Errc::invalid_argument, EINVAL, fmt("writer: inode %llu is not a compressed file (EINVAL)", ino));
  F2FSCORE_TRY(impl_->usable(true));
  if (impl_->dirty_pages(ino) != 0)
    return errno_error(Errc::busy, EBUSY, fmt("writer: inode %llu has dirty pages (EBUSY)", ino));
  ip = impl_->node(ino);
  if (!ip) return make_error(ip.error());
  if ((*ip)->i.i_blocks.get() > 1)
    return errno_error(Errc::invalid_argument, EFBIG,
                       fmt("writer: inode %llu has blocks: its compression options are fixed (EFBIG)", ino));
  if (!compress_fields_fit(**ip))
    return errno_error(Errc::unsupported, EOPNOTSUPP,
                       "writer: the inode's extra attributes have no room for the compression fields");
  auto& x = (*ip)->i.extra;
  x.i_compress_algorithm = opt.algorithm;
  x.i_log_cluster_size = opt.log_cluster_size;
  // The level in bits 8 and up (COMPRESS_LEVEL_OFFSET): zstd's default.
  const std::uint16_t level = opt.algorithm == wr::kComprZstd ? 1 : 0;
  x.i_compress_flag.set(static_cast<std::uint16_t>((x.i_compress_flag.get() & 0xFF) | (level << 8)));
  impl_->mark_dirty(ino);
  return {};
}

}  // namespace f2fscore
