// The writer's mount, allocation (nids, blocks, segments) and checkpoint.
// See docs/writer.md.
#include <algorithm>
#include <chrono>
#include <cstring>

#include "f2fscore/checksum.hpp"
#include "f2fscore/iostat.hpp"
#include "meta/meta_internal.hpp"
#include "writer/writer_internal.hpp"

namespace f2fscore {

using namespace disk;
using meta::fmt;

std::uint64_t Writer::Impl::now() const {
  if (opts.fixed_time) return opts.fixed_time;
  return static_cast<std::uint64_t>(
      std::chrono::duration_cast<std::chrono::seconds>(std::chrono::system_clock::now().time_since_epoch()).count());
}

Status Writer::Impl::load() {
  auto v = Volume::open(dev);
  if (!v) return make_error(v.error());
  vol = std::move(*v);
  sb = vol->superblock();
  cp = vol->checkpoint();
  const std::uint32_t f = sb.feature.get();
  auto refuse = [](const char* what) { return make_error(Errc::unsupported, std::string("writer: cannot mount read-write: ") + what); };
  if (f & feature::compression) return refuse("compression is not supported yet");
  if (f & feature::encrypt) return refuse("encryption is not supported yet");
  if (f & feature::casefold) return refuse("casefolded directories are not supported yet");
  if (f & feature::quota_ino) return refuse("quota files are not updated yet");
  if (f & feature::blkzoned) return refuse("zoned devices are not supported");
  if (f & feature::ro) return refuse("the volume has the ro feature (read-only by design)");
  if (sb.devs[0].path[0] != 0) return refuse("multi-device volumes are not supported yet");
  const bool pending_fsync = vol->open_report().pending_fsync_nodes > 0;
  if (pending_fsync && (opts.recovery == MountOptions::Recovery::refuse || opts.read_only))
    return refuse(fmt("%llu fsynced node blocks follow the checkpoint; mount it read-write with roll-forward (or in "
                      "Linux) first (f2fs_recover_fsync_data()), a checkpoint from us would drop them",
                      vol->open_report().pending_fsync_nodes)
                      .c_str());
  if (cp.ckpt_flags.get() & (cp_flag::error | cp_flag::fsck | cp_flag::disabled | cp_flag::resizefs))
    return refuse("the checkpoint carries CP_ERROR, CP_FSCK, CP_DISABLED or CP_RESIZEFS: run fsck first");
  main_blk = vol->main_blkaddr();
  main_segs = vol->main_segments();
  segs_per_sec = std::max<std::uint32_t>(1, sb.segs_per_sec.get());
  max_nid = vol->max_nid();
  csum_seed = inode_checksum_seed(sb.uuid);
  cp_ver_stamp = cp.checkpoint_ver.get();
  if (cp.ckpt_flags.get() & cp_flag::crc_recovery) {
    const auto blocks = vol->checkpoint_blocks();
    const std::uint32_t off = cp.checksum_offset.get();
    if (off + 4 <= kBlockSize) cp_ver_stamp |= static_cast<std::uint64_t>(load_le32(blocks.data(), off)) << 32;
  }

  auto plan = meta::plan_from_volume(*vol);
  if (!plan) return make_error(plan.error());
  meta::MetaView mv(*vol, dev);
  F2FS_TRY(mv.load());
  auto all = mv.all_nat_entries();
  if (!all) return make_error(all.error());
  nat.assign(max_nid, {});
  for (nid_t n = 0; n < max_nid && n < all->size(); ++n) nat[n].version = (*all)[n].version;
  for (const auto& u : plan->nat) nat[u.nid] = {u.ino, u.blkaddr, u.version};
  owner.assign(static_cast<std::size_t>(main_segs) * wr::kBlocksPerSeg, {});
  seg_valid.assign(main_segs, 0);
  seg_changed.assign(main_segs, 0);
  valid_blocks = 0;  // claim() counts them again: a reload after a checkpoint must not double them
  for (const auto& b : plan->blocks) claim(b.blkaddr, b);
  std::fill(seg_changed.begin(), seg_changed.end(), 0);
  nat_at_cp = nat;
  reserved_blocks = plan->reserved_blocks;
  valid_inodes = plan->valid_inode_count;
  orphans = plan->orphans;
  nid_blocked.assign(max_nid, 0);
  nid_cursor = sb.root_ino.get() + 1;
  seg_type.assign(main_segs, wr::kWarmData);
  seg_mtime.assign(main_segs, 0);
  for (std::uint32_t s = 0; s < main_segs; ++s) {
    auto si = vol->segment(s);
    if (!si) return make_error(si.error());
    seg_type[s] = si->type < 6 ? si->type : wr::kWarmData;
    seg_mtime[s] = si->mtime;
  }
  for (int t = 0; t < 3; ++t) {
    logs[t] = {cp.cur_data_segno[t].get(), cp.cur_data_blkoff[t].get(), cp.alloc_type[t]};
    logs[t + 3] = {cp.cur_node_segno[t].get(), cp.cur_node_blkoff[t].get(), cp.alloc_type[t + 3]};
  }
  // A log is written on only when its next block is free and, for an LFS
  // log, every block after it (as sanity_check_curseg() in
  // fs/f2fs/segment.c demands); else its first write opens a new segment.
  for (int t = 0; t < 6; ++t) {
    const auto& l = logs[t];
    bool usable = l.alloc_type <= 1 && l.segno < main_segs && l.blkoff < wr::kBlocksPerSeg;
    for (std::uint32_t j = l.blkoff; usable && j < (l.alloc_type ? l.blkoff + 1u : wr::kBlocksPerSeg); ++j)
      if (owner[static_cast<std::size_t>(l.segno) * wr::kBlocksPerSeg + j].blkaddr) usable = false;
    log_usable[t] = usable;
  }
  seg_alloc.assign(main_segs, 0);
  for (std::uint32_t s = 0; s < main_segs; ++s) seg_alloc[s] = seg_valid[s] == 0;
  for (const auto& l : logs)
    if (l.segno < main_segs) seg_alloc[l.segno] = 0;
  gc_load();
  if (pending_fsync) F2FS_TRY(recover_fsync());
  return {};
}

Status Writer::Impl::usable(bool modify) {
  if (unmounted) return make_error(Errc::invalid_argument, "writer: the volume is unmounted");
  if (modify && opts.read_only) return make_error(Errc::read_only, "writer: the volume is mounted read-only");
  if (modify) {
    F2FS_TRY(maybe_periodic_checkpoint());
    return balance_fs();
  }
  return {};
}

void Writer::Impl::claim(block_t addr, const meta::BlockUse& u) {
  const auto i = static_cast<std::size_t>(addr - main_blk);
  owner[i] = u;
  owner[i].blkaddr = addr;
  ++seg_valid[i / wr::kBlocksPerSeg];
  seg_changed[i / wr::kBlocksPerSeg] = 1;
  ++valid_blocks;
}

void Writer::Impl::invalidate(block_t addr) {
  if (addr < main_blk || addr >= main_blk + owner.size()) return;
  const auto i = static_cast<std::size_t>(addr - main_blk);
  if (!owner[i].blkaddr) return;
  owner[i] = {};
  --seg_valid[i / wr::kBlocksPerSeg];
  seg_changed[i / wr::kBlocksPerSeg] = 1;
  --valid_blocks;
}

// Block allocation (LFS and SSR, as f2fs_allocate_data_block()): writer/gc.cpp.
Result<block_t> Writer::Impl::alloc_block(std::uint8_t type) { return allocate_block(type); }

Result<nid_t> Writer::Impl::alloc_nid() {
  // A new nid is a new node block: counted as inc_valid_node_count() does.
  F2FS_TRY(check_space(1));
  const nid_t node_ino = sb.node_ino.get(), meta_ino = sb.meta_ino.get();
  for (nid_t k = 0; k < max_nid; ++k) {
    nid_t n = nid_cursor + k;
    if (n >= max_nid) n = n - max_nid;
    if (n == 0 || n == node_ino || n == meta_ino || n <= sb.root_ino.get()) continue;
    if (nat[n].addr == kNullAddr && nat[n].ino == 0 && !nid_blocked[n]) {
      nid_cursor = n + 1;
      return n;
    }
  }
  return make_error(Errc::no_space, "writer: no free nid");
}

Result<Node*> Writer::Impl::node(nid_t nid) {
  if (auto it = nodes.find(nid); it != nodes.end()) return &it->second->n;
  if (nid == 0 || nid >= max_nid) return make_error(Errc::corrupt, fmt("writer: nid %llu outside the NAT", nid));
  const block_t addr = nat[nid].addr;
  if (addr < main_blk || addr >= main_blk + owner.size())
    return make_error(Errc::corrupt, fmt("writer: nid %llu has no node block (address %llu)", nid, addr));
  auto p = std::make_unique<wr::NodePage>();
  F2FS_TRY(read_at(dev, static_cast<std::uint64_t>(addr) * kBlockSize,
                   std::span<std::uint8_t>(reinterpret_cast<std::uint8_t*>(&p->n), kBlockSize),
                   io_tag(IostatType::fs_node_read_io)));
  if (p->n.footer.nid.get() != nid)
    return make_error(Errc::corrupt, fmt("writer: block %llu is not node %llu (footer says %llu)", addr, nid, p->n.footer.nid.get()));
  Node* r = &p->n;
  nodes.emplace(nid, std::move(p));
  return r;
}

Node* Writer::Impl::new_node(nid_t nid, nid_t ino, std::uint32_t ofs, bool dir) {
  auto p = std::make_unique<wr::NodePage>();
  p->n.footer.nid.set(nid);
  p->n.footer.ino.set(ino);
  // Nodes of files carry the cold bit, of directories not (set_cold_node()).
  p->n.footer.flag.set((ofs << node_flag::offset_shift) | (dir ? 0 : node_flag::cold));
  nat[nid].ino = ino;
  nat[nid].addr = kNewAddr;
  ++pending_new_nodes;
  Node* r = &p->n;
  nodes[nid] = std::move(p);
  mark_dirty(nid);
  return r;
}

void Writer::Impl::free_node(nid_t nid) {
  if (nat[nid].ino && nat[nid].ino != nid) fsync_lost_nodes[nat[nid].ino] = cp.checkpoint_ver.get();  // writer/fsync.cpp
  if (nat[nid].addr == kNewAddr) --pending_new_nodes;
  invalidate(nat[nid].addr);
  nat[nid].addr = kNullAddr;
  nat[nid].ino = 0;
  nid_blocked[nid] = 1;
  nodes.erase(nid);
  dirty.erase(nid);
}

// The checkpoint: dirty nodes to new blocks of the node logs, then the
// metadata rebuild from the in-memory truth (NAT/SIT to the other copies,
// SSA, the new pack; flushes between) — f2fs_write_checkpoint()'s order.
Status Writer::Impl::checkpoint(bool umount) {
  {
    wr::WriteContext ctx;
    ctx.origin = wr::WriteContext::Origin::sync_writeback;
    F2FS_TRY(writeback(0, ctx));
  }
  std::vector<nid_t> ds;
  for (const auto& [n, d] : dirty) ds.push_back(n);
  std::sort(ds.begin(), ds.end());
  const bool csum = sb.feature.get() & feature::inode_checksum;
  for (nid_t n : ds) {
    auto np = node(n);
    if (!np) return make_error(np.error());
    Node& nd = **np;
    const std::uint32_t ofs = nd.footer.flag.get() >> node_flag::offset_shift;
    const bool is_inode = ofs == 0 && nd.footer.ino.get() == n;
    bool dnode = is_inode;
    if (!is_inode) {
      dnode = !(ofs == 3 || ofs == 4 + kNidsPerBlock || ofs == 5 + 2 * kNidsPerBlock ||
                (ofs >= 6 + 2 * kNidsPerBlock && (ofs - (6 + 2 * kNidsPerBlock)) % (kNidsPerBlock + 1) == 0));
    }
    // Direct nodes of directories hot, of files warm, indirect nodes cold
    // (__get_segment_type_6() in fs/f2fs/segment.c).
    const bool cold = nd.footer.flag.get() & node_flag::cold;
    const std::uint8_t type = !dnode ? wr::kColdNode : cold ? wr::kWarmNode : wr::kHotNode;
    auto a = alloc_block(type);
    if (!a) return make_error(a.error());
    if (nat[n].addr == kNewAddr) --pending_new_nodes;
    invalidate(nat[n].addr);
    nat[n].addr = *a;
    claim(*a, {*a, n, 0, 0, true});
    // A checkpoint writes every node without the fsync and dentry marks
    // (set_fsync_mark(page, 0), set_dentry_mark(page, 0) in
    // f2fs_sync_node_pages(), fs/f2fs/node.c): the copy carries the old
    // version until the pack commits, and a cut before that must leave no
    // chain for roll-forward. A node read back from an fsync chain still
    // has them.
    nd.footer.flag.set(nd.footer.flag.get() & ~(node_flag::fsync | node_flag::dent));
    nd.footer.cp_ver.set(cp_ver_stamp);
    {
      // NEXT_FREE_BLKADDR after the allocation (fill_node_footer_blkaddr()).
      auto nx = next_block(type);
      nd.footer.next_blkaddr.set(nx ? *nx : *a + 1);
    }
    if (is_inode && csum && (nd.i.i_inline & inline_flag::extra_attr) &&
        nd.i.extra.i_extra_isize.get() >= offsetof(InodeExtra, i_inode_checksum) + 4)
      nd.i.extra.i_inode_checksum.set(inode_checksum(csum_seed, reinterpret_cast<const std::uint8_t*>(&nd)));
    F2FS_TRY(io_batch().add(*a, reinterpret_cast<const std::uint8_t*>(&nd), io_tag(IostatType::fs_cp_node_io)));
    ++stats.node_blocks_written;
  }
  F2FS_TRY(io_batch().drain());
  const std::vector<std::uint32_t> prefree = prefree_segments();
  meta::RebuildPlan plan;
  plan.blocks.reserve(static_cast<std::size_t>(valid_blocks));
  for (const auto& u : owner)
    if (u.blkaddr) plan.blocks.push_back(u);
  const nid_t node_ino = sb.node_ino.get(), meta_ino = sb.meta_ino.get();
  for (nid_t n = 1; n < max_nid; ++n) {
    if (n == node_ino || n == meta_ino) continue;
    if (nat[n].addr != kNullAddr) plan.nat.push_back({n, nat[n].ino, nat[n].addr, nat[n].version});
  }
  plan.orphans = orphans;
  plan.valid_inode_count = valid_inodes;
  plan.reserved_blocks = reserved_blocks;
  plan.segment_types = seg_type;
  for (std::uint32_t s = 0; s < main_segs; ++s) {
    // Types only matter where blocks are; keep them of the right kind.
    bool has_node = false, has_data = false;
    for (std::uint32_t j = 0; j < wr::kBlocksPerSeg && !(has_node && has_data); ++j) {
      const auto& o = owner[static_cast<std::size_t>(s) * wr::kBlocksPerSeg + j];
      if (o.blkaddr) (o.node ? has_node : has_data) = true;
    }
    if (has_node && plan.segment_types[s] < 3) plan.segment_types[s] = wr::kWarmNode;
    if (has_data && plan.segment_types[s] >= 3) plan.segment_types[s] = wr::kWarmData;
  }
  std::array<meta::LogPosition, 6> cs = logs;
  plan.cursegs = cs;
  plan.segment_mtimes = seg_mtime;
  plan.elapsed_time = get_mtime();
  plan.umount = umount;
  plan.move_busy_cursegs = true;
  // Incremental: only what changed since the last checkpoint (NAT/SIT
  // journals when it fits, as the kernel's checkpoint).
  plan.changed_nids.emplace();
  for (nid_t n = 1; n < max_nid && n < nat_at_cp.size(); ++n)
    if (nat[n].addr != nat_at_cp[n].addr || nat[n].ino != nat_at_cp[n].ino || nat[n].version != nat_at_cp[n].version)
      plan.changed_nids->push_back(n);
  plan.changed_segments.emplace();
  for (std::uint32_t s = 0; s < main_segs; ++s)
    if (seg_changed[s]) plan.changed_segments->push_back(s);
  auto r = meta::rebuild(dev, *vol, plan);
  if (!r) return make_error(r.error());
  ++stats.checkpoints;
  stats.meta_blocks_written += r->nat_blocks_written + r->sit_blocks_written + r->ssa_blocks_written + r->cp_blocks_written;
  last_checkpoint_time = wr::mono_ms();
  discard_segments(prefree);
  dirty.clear();
  pending_new_nodes = 0;
  nodes.clear();
  if (umount) return {};  // the handle closes: nothing to reload
  // The new checkpoint's view: the pack from the device, the rest is what
  // the plan was made of (no walk of the tree again).
  return reload_committed(plan.segment_types);
}

// ---- Public entry points -----------------------------------------------------

Writer::Writer(std::unique_ptr<Impl> impl) : impl_(std::move(impl)) {}
Writer::~Writer() = default;

Result<std::unique_ptr<Writer>> Writer::mount(BlockDevice& dev, const MountOptions& opts) {
  {
    const DeviceInfo& di = dev.info();
    if (opts.refuse_in_use && !opts.read_only &&
        (di.kind == DeviceKind::regular_file || di.kind == DeviceKind::block_device)) {
      InUseCheck what;
      what.exclusive = !di.exclusive;  // this process's own O_EXCL claim answers EBUSY
      if (InUse u = check_in_use(di.name, what))
        return make_error(Errc::busy, "writer: refusing to mount " + di.name + " read-write: " + u.detail);
    }
  }
  auto impl = std::make_unique<Impl>(dev, opts);
  F2FS_TRY(impl->load());
  // Orphans of the last session are freed (f2fs_recover_orphan_inodes();
  // committed by the next checkpoint). Not on a read-only mount.
  if (!opts.read_only && !impl->orphans.empty()) F2FS_TRY(impl->recover_orphans());
  impl->resolve_ipu_defaults();
  impl->last_checkpoint_time = wr::mono_ms();
  impl->last_call_time = impl->now();
  return std::unique_ptr<Writer>(new Writer(std::move(impl)));
}

// A checkpoint that fails leaves the in-memory state half-committed: the
// handle is closed (the previous checkpoint on disk stays the valid one).
Status Writer::sync() {
  F2FS_WRITER_LOCK(impl_);
  F2FS_TRY(impl_->usable(true));
  auto r = impl_->checkpoint(false);
  if (!r) impl_->unmounted = true;
  return r;
}

Status Writer::unmount() {
  F2FS_WRITER_LOCK(impl_);
  F2FS_TRY(impl_->usable(false));
  if (impl_->opts.read_only) {
    impl_->unmounted = true;
    return {};
  }
  // Unmounting closes every file: open-unlinked inodes are freed (writer/ns.cpp).
  auto r = impl_->release_all();
  if (r) r = impl_->checkpoint(true);
  impl_->unmounted = true;
  return r;
}

const WriterStats& Writer::stats() const { return impl_->stats; }

}  // namespace f2fscore
