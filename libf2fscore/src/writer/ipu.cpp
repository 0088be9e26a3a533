// Where a data block is written: the in-place-update (IPU) policy of Linux
// 6.1 (fs/f2fs/data.c, fs/f2fs/segment.h, fs/f2fs/super.c), its tunables,
// pinned files and defragmentation. docs/ipu.md gives the rules in order.
//
// An in-place write rewrites the block the file already has: no new block,
// no SIT, SSA or NAT change, the dnode not dirtied. Like the kernel's, it is
// not protected by the checkpoint: after a power cut the block holds the new
// data (or, for a torn write, a mix) while the metadata is the checkpoint's.
// The volume stays consistent; only the file's data is newer than its
// checkpoint, which is what IPU accepts in exchange for fewer node writes.
#include <algorithm>
#include <vector>

#include "meta/meta_internal.hpp"
#include "writer/writer_internal.hpp"

namespace f2fscore {

using namespace disk;
using meta::fmt;

const char* to_string(IpuReason r) noexcept {
  static constexpr const char* names[kIpuReasonCount] = {
      "ipu_pinned", "ipu_cold",   "ipu_force",     "ipu_ssr",       "ipu_util", "ipu_ssr_util",
      "ipu_async",  "ipu_fsync",  "ipu_fdatasync_option", "ipu_direct", "opu_policy", "opu_new_block",
      "opu_dir",    "opu_quota",  "opu_defrag",    "opu_gc",        "opu_other"};
  const auto i = static_cast<std::size_t>(r);
  return i < kIpuReasonCount ? names[i] : "unknown";
}

std::uint64_t IpuStats::in_place() const {
  std::uint64_t n = 0;
  for (std::size_t i = 0; i < kIpuReasonCount; ++i)
    if (is_in_place(static_cast<IpuReason>(i))) n += data_blocks[i];
  return n;
}

std::uint64_t IpuStats::out_of_place() const {
  std::uint64_t n = 0;
  for (std::size_t i = 0; i < kIpuReasonCount; ++i)
    if (!is_in_place(static_cast<IpuReason>(i))) n += data_blocks[i];
  return n;
}

namespace {
// FI_NEED_IPU as f2fs_do_sync_file() (fs/f2fs/file.c) sets it for a
// non-directory: fdatasync, or at most min_fsync_blocks dirty pages. With
// the proposed change the small-fsync case also needs the FSYNC bit.
bool need_ipu_flag(const IpuOptions& o, const IpuWrite& w, bool patched) {
  if (w.dir) return false;
  if (w.fdatasync) return true;
  if (!w.fsync || w.file_dirty_pages > o.min_fsync_blocks) return false;
  return !patched || (o.ipu_policy & ipu_bit::fsync);
}

// check_inplace_update_policy(): kNoRule when no rule applies. with_io: a
// particular request (fio) is being placed.
constexpr auto kNoRule = IpuReason::count_;
IpuReason policy_rule(const IpuOptions& o, const SpaceState& s, bool ssr, const IpuWrite& w, bool with_io) {
  const std::uint32_t p = o.ipu_policy;
  if ((p & ipu_bit::honor_opu_write) && w.opu_write) return kNoRule;
  if (with_io && o.fdatasync_in_place && need_ipu_flag(o, w, true))
    return w.fdatasync ? IpuReason::ipu_fdatasync_option : IpuReason::ipu_fsync;
  if (p & ipu_bit::force) return IpuReason::ipu_force;
  if ((p & ipu_bit::ssr) && ssr) return IpuReason::ipu_ssr;
  if ((p & ipu_bit::util) && s.utilization() > o.min_ipu_util) return IpuReason::ipu_util;
  if ((p & ipu_bit::ssr_util) && ssr && s.utilization() > o.min_ipu_util) return IpuReason::ipu_ssr_util;
  // IPU for async rewrites: a write without REQ_SYNC (encrypted inodes
  // excluded; the writer writes no encrypted data: it has no keys).
  if (with_io && (p & ipu_bit::async) && !w.sync_io) return IpuReason::ipu_async;
  if (with_io && !o.fdatasync_in_place && (p & ipu_bit::fsync) && need_ipu_flag(o, w, false))
    return IpuReason::ipu_fsync;
  return kNoRule;
}
}  // namespace

bool need_ssr(const SpaceState& s, const IpuOptions& o) noexcept {
  const std::uint64_t min_ssr =
      o.min_ssr_sections == IpuOptions::kKernelDefault ? s.reserved_sections : o.min_ssr_sections;
  return s.free_sections <= min_ssr + s.reserved_sections;
}

IpuReason decide_ipu(const IpuOptions& o, const SpaceState& s, bool ssr_needed, const IpuWrite& w) noexcept {
  // f2fs_do_write_data_page(): only a written block can be rewritten.
  if (!w.has_old_block) return IpuReason::opu_new_block;
  // Direct I/O maps the existing block (f2fs_map_blocks(), not LFS mode).
  if (w.direct) return IpuReason::ipu_direct;
  // f2fs_should_update_outplace(): a pinned file is never forced out...
  if (!w.pinned) {
    if (w.dir) return IpuReason::opu_dir;
    if (w.quota) return IpuReason::opu_quota;
    if (w.other_opu) return IpuReason::opu_other;
    if (w.opu_write) return IpuReason::opu_defrag;
    if (w.gc) return IpuReason::opu_gc;
  }
  // ...and f2fs_should_update_inplace() keeps it in place.
  if (w.pinned) return IpuReason::ipu_pinned;
  if (w.cold && !w.opu_write) return IpuReason::ipu_cold;
  const IpuReason r = policy_rule(o, s, ssr_needed, w, true);
  return r == kNoRule ? IpuReason::opu_policy : r;
}

bool ipu_inplace_without_io(const IpuOptions& o, const SpaceState& s, bool ssr_needed, const IpuWrite& w) noexcept {
  if (w.pinned) return true;
  if (w.cold && !w.opu_write) return true;
  return policy_rule(o, s, ssr_needed, w, false) != kNoRule;
}

// Small volumes: at most 16 x 512 main segments (SMALL_VOLUME_SEGMENTS,
// 16 GiB) get FORCE|HONOR_OPU_WRITE (f2fs_tuning_parameters()), others
// FSYNC (f2fs_build_segment_manager()); min_ssr_sections defaults to the
// reserved sections.
void Writer::Impl::resolve_ipu_defaults() {
  ipu = opts.ipu;
  if (ipu.ipu_policy == IpuOptions::kKernelDefault)
    ipu.ipu_policy = vol->main_segments() <= 16u * 512u ? (ipu_bit::force | ipu_bit::honor_opu_write) : ipu_bit::fsync;
  if (ipu.min_ssr_sections == IpuOptions::kKernelDefault)
    ipu.min_ssr_sections = reserved_sections();
}

SpaceState Writer::Impl::ipu_space() const {
  const Geometry& g = vol->geometry();
  const std::uint32_t sps = g.segs_per_sec();
  SpaceState sp;
  sp.user_blocks = cp.user_block_count.get();
  sp.valid_blocks = valid_user_blocks();
  sp.segs_per_sec = sps;
  sp.main_sections = g.main_sections();
  sp.reserved_sections = cp.rsvd_segment_count.get() / sps;
  sp.overprov_sections = cp.overprov_segment_count.get() / sps;
  return sp;
}

std::uint32_t Writer::Impl::utilization() const { return ipu_space().utilization(); }

Result<IpuWrite> Writer::Impl::ipu_write(nid_t ino, block_t old, const wr::WriteContext& ctx) {
  IpuWrite w;
  // COMPRESS_ADDR: a compressed cluster's header slot being written plain.
  w.has_old_block = old != kNullAddr && old != kNewAddr && old != kCompressAddr;
  if (w.has_old_block && !in_main(old))
    return make_error(Errc::corrupt, fmt("writer: inode %llu has a data block at %llu, outside the main area", ino, old));
  auto inp = node(ino);
  if (!inp) return make_error(inp.error());
  const Node& n = **inp;
  using O = wr::WriteContext::Origin;
  w.direct = ctx.origin == O::direct;
  w.gc = ctx.origin == O::gc;
  w.pinned = n.i.i_inline & inline_flag::pin_file;
  w.dir = (n.i.i_mode.get() & 0xF000) == 0x4000;
  for (std::size_t q = 0; q < kMaxQuotas; ++q)
    if (sb.qf_ino[q].get() == ino && ino != 0) w.quota = true;
  w.opu_write = opu_write.count(ino) != 0;
  w.cold = n.i.i_advise & advise::cold;
  w.fsync = ctx.fsync;
  w.fdatasync = ctx.fdatasync;
  w.sync_io = ctx.origin != O::writeback || ctx.fsync || ctx.fdatasync;
  w.file_dirty_pages = ctx.file_dirty_pages;
  return w;
}

Result<block_t> Writer::Impl::place_data(nid_t ino, std::uint64_t, block_t old, std::uint8_t type,
                                         const wr::WriteContext& ctx, IpuReason* why) {
  auto w = ipu_write(ino, old, ctx);
  if (!w) return make_error(w.error());
  SpaceState sp;
  bool ssr = false;
  if (w->has_old_block && !ctx.no_ipu) {
    const std::uint32_t p = ipu.ipu_policy;
    if (p & (ipu_bit::util | ipu_bit::ssr_util)) sp = ipu_space();
    if (p & (ipu_bit::ssr | ipu_bit::ssr_util)) ssr = need_ssr();
  }
  *why = ctx.no_ipu ? IpuReason::opu_policy : decide_ipu(ipu, sp, ssr, *w);
  if (is_in_place(*why)) return old;
  // FI_HOT_DATA: the writeback of a file with at most min_hot_blocks dirty
  // pages goes to the hot data log (f2fs_write_cache_pages(), then
  // __get_segment_type_6(); cold files stay cold). 0 dirty pages: the
  // caller did not count them (no page cache), the type stands.
  using O = wr::WriteContext::Origin;
  if (type == wr::kWarmData && (ctx.origin == O::writeback || ctx.origin == O::sync_writeback) &&
      ctx.file_dirty_pages > 0 && ctx.file_dirty_pages <= ipu.min_hot_blocks)
    type = wr::kHotData;
  return alloc_block(type);
}

// ---- Public entry points -----------------------------------------------------

Status Writer::set_ipu_options(const IpuOptions& o) {
  F2FSCORE_WRITER_LOCK(impl_);
  F2FSCORE_TRY(impl_->usable(false));
  if (o.ipu_policy != IpuOptions::kKernelDefault && o.ipu_policy > ipu_bit::all)
    return make_error(Errc::invalid_argument,
                      fmt("writer: ipu_policy 0x%llx has bits above F2FS_IPU_HONOR_OPU_WRITE (0x80)", o.ipu_policy));
  impl_->opts.ipu = o;
  impl_->resolve_ipu_defaults();
  return {};
}

IpuOptions Writer::ipu_options() const {
  F2FSCORE_WRITER_LOCK(impl_);
  return impl_->ipu;
}

Result<block_t> Writer::bmap(nid_t ino, std::uint64_t index) {
  F2FSCORE_WRITER_LOCK(impl_);
  F2FSCORE_TRY(impl_->usable(false));
  auto st = stat(ino);
  if (!st) return make_error(st.error());
  if (!st->is_reg() && !st->is_dir())
    return make_error(Errc::invalid_argument, fmt("writer: bmap: inode %llu is not a regular file or directory", ino));
  auto inp = impl_->node(ino);
  if (!inp) return make_error(inp.error());
  if ((*inp)->i.i_inline & (inline_flag::data | inline_flag::dentry)) return block_t{0};
  auto a = impl_->map(ino, index, false);
  if (!a) return make_error(a.error());
  return (*a == kNullAddr || *a == kNewAddr) ? block_t{0} : *a;
}

Status Writer::set_pinned(nid_t ino, bool pin) {
  F2FSCORE_WRITER_LOCK(impl_);
  F2FSCORE_TRY(impl_->usable(true));
  auto st = stat(ino);
  if (!st) return make_error(st.error());
  if (!st->is_reg())
    return make_error(Errc::invalid_argument, fmt("writer: only regular files can be pinned (inode %llu)", ino));
  F2FSCORE_TRY(impl_->need_key(ino, "pinning"));
  auto inp = impl_->node(ino);
  if (!inp) return make_error(inp.error());
  if (!pin) {
    // Unpinning clears the flag and i_gc_failures.
    (*inp)->i.i_inline &= static_cast<std::uint8_t>(~inline_flag::pin_file);
    (*inp)->i.i_current_depth.set(0);
    impl_->mark_dirty(ino);
    return {};
  }
  // f2fs_should_update_outplace(inode, NULL) refuses: quota files, files
  // being defragmented (directories are not regular files).
  auto in = impl_->ipu_write(ino, kNullAddr, {});
  if (!in) return make_error(in.error());
  if (in->quota) return make_error(Errc::invalid_argument, fmt("writer: inode %llu is a quota file", ino));
  if (in->opu_write) return make_error(Errc::invalid_argument, fmt("writer: inode %llu is being defragmented", ino));
  // f2fs_ioc_set_pin_file(): a compressed file loses the flag when it has
  // no data blocks (f2fs_disable_compressed_file()), else EOPNOTSUPP.
  inp = impl_->node(ino);
  if (!inp) return make_error(inp.error());
  if (Impl::compressed(**inp)) {
    const std::uint64_t meta_blocks = 1 + ((*inp)->i.i_xattr_nid.get() != 0 ? 1 : 0);
    if ((*inp)->i.i_blocks.get() > meta_blocks)
      return errno_error(Errc::unsupported, EOPNOTSUPP,
                         fmt("writer: inode %llu is compressed and has data blocks: it cannot be pinned (EOPNOTSUPP)", ino));
    (*inp)->i.i_flags.set((*inp)->i.i_flags.get() & ~iflag::compr);
    impl_->mark_dirty(ino);
  }
  F2FSCORE_TRY(impl_->convert_inline_data(ino));
  inp = impl_->node(ino);
  if (!inp) return make_error(inp.error());
  (*inp)->i.i_inline |= inline_flag::pin_file;
  impl_->mark_dirty(ino);
  return {};
}

Result<std::uint64_t> Writer::defragment(nid_t ino, std::uint64_t offset, std::uint64_t length) {
  F2FSCORE_WRITER_LOCK(impl_);
  F2FSCORE_TRY(impl_->usable(true));
  auto st = stat(ino);
  if (!st) return make_error(st.error());
  if (!st->is_reg())
    return make_error(Errc::invalid_argument, fmt("writer: defragment: inode %llu is not a regular file", ino));
  F2FSCORE_TRY(impl_->need_key(ino, "defragment"));
  if (offset % kBlockSize || length % kBlockSize)
    return make_error(Errc::invalid_argument,
                      fmt("writer: defragment: offset %llu and length %llu must be multiples of 4096", offset, length));
  auto inp = impl_->node(ino);
  if (!inp) return make_error(inp.error());
  const std::uint64_t max_blocks = impl_->max_file_blocks(**inp);
  if (offset + length < offset || (offset + length) / kBlockSize > max_blocks)
    return make_error(Errc::invalid_argument, fmt("writer: defragment: the range ends past the largest file"));
  if ((*inp)->i.i_inline & inline_flag::data) return std::uint64_t{0};
  if (Impl::compressed(**inp))
    return errno_error(Errc::unsupported, EOPNOTSUPP,
                       fmt("writer: defragment: inode %llu is compressed (EOPNOTSUPP)", ino));
  // FI_OPU_WRITE for the whole call; a policy that writes the file in place
  // anyway makes defragmenting pointless (EINVAL).
  impl_->opu_write.insert(ino);
  struct Clear {
    Writer::Impl* w;
    nid_t ino;
    ~Clear() { w->opu_write.erase(ino); }
  } clear{impl_.get(), ino};
  auto in = impl_->ipu_write(ino, kNullAddr, {});
  if (!in) return make_error(in.error());
  if (ipu_inplace_without_io(impl_->ipu, impl_->ipu_space(), impl_->need_ssr(), *in))
    return make_error(Errc::invalid_argument,
                      fmt("writer: defragment: the IPU policy (0x%llx) writes inode %llu in place", impl_->ipu.ipu_policy, ino));
  {
    wr::WriteContext ctx;
    ctx.origin = wr::WriteContext::Origin::sync_writeback;
    F2FSCORE_TRY(impl_->writeback(ino, ctx));
  }
  // Skip files whose written blocks are contiguous, holes allowed.
  const std::uint64_t first = offset / kBlockSize, end = (offset + length) / kBlockSize;
  std::vector<std::uint64_t> idx;
  bool fragmented = false;
  block_t next = 0;
  for (std::uint64_t i = first; i < end && i * kBlockSize < st->size; ++i) {
    auto a = impl_->map(ino, i, false);
    if (!a) return make_error(a.error());
    if (*a == kNullAddr || *a == kNewAddr) continue;
    if (next && *a != next) fragmented = true;
    next = *a + 1;
    idx.push_back(i);
  }
  if (!fragmented) return std::uint64_t{0};
  std::vector<std::uint8_t> b(kBlockSize);
  wr::WriteContext ctx;
  ctx.origin = wr::WriteContext::Origin::sync_writeback;
  for (std::uint64_t i : idx) {
    F2FSCORE_TRY(impl_->read_file_block(ino, i, b.data()));
    auto ip = impl_->node(ino);
    if (!ip) return make_error(ip.error());
    F2FSCORE_TRY(impl_->write_file_block(ino, i, b.data(), impl_->data_type(**ip), ctx));
  }
  return static_cast<std::uint64_t>(idx.size()) * kBlockSize;
}

}  // namespace f2fscore
