// The writer's mount, allocation (nids, blocks, segments) and checkpoint.
// See docs/writer.md.
#include <algorithm>
#include <chrono>
#include <cstring>

#include "f2fscore/casefold.hpp"
#include "f2fscore/checksum.hpp"
#include "f2fscore/iostat.hpp"
#include "f2fscore/multi_device.hpp"
#include "meta/meta_internal.hpp"
#include "writer/writer_internal.hpp"

namespace f2fscore {

using namespace disk;
using meta::fmt;

std::uint64_t Writer::Impl::now() const {
  if (opts.fixed_time) return opts.fixed_time;
  if (opts.clock.now_ns != nullptr) return opts.clock.now_ns(opts.clock.ctx) / 1000000000;
  // Seconds only (SIT mtimes, the checkpoint's elapsed time, crtime): one
  // reading serves a whole public call.
  if (call_depth > 0 && call_now_s != 0) return call_now_s;
  const auto t = static_cast<std::uint64_t>(
      std::chrono::duration_cast<std::chrono::seconds>(std::chrono::system_clock::now().time_since_epoch()).count());
  if (call_depth > 0) call_now_s = t;
  return t;
}

Timespec Writer::Impl::now_ts() const {
  if (opts.fixed_time) return {opts.fixed_time, 0};
  if (opts.clock.now_ns != nullptr) {
    const std::uint64_t ns = opts.clock.now_ns(opts.clock.ctx);
    return {ns / 1000000000, static_cast<std::uint32_t>(ns % 1000000000)};
  }
  const auto ns = std::chrono::duration_cast<std::chrono::nanoseconds>(std::chrono::system_clock::now().time_since_epoch()).count();
  return {static_cast<std::uint64_t>(ns / 1000000000), static_cast<std::uint32_t>(ns % 1000000000)};
}

std::uint64_t Writer::Impl::interval_ms() const {
  if (opts.clock.now_ns != nullptr) return opts.clock.now_ns(opts.clock.ctx) / 1000000;
  return wr::mono_ms();
}

Status Writer::check_features(const disk::SuperBlock& sb, bool build_ro_image) {
  const std::uint32_t f = sb.feature.get();
  if (build_ro_image && !(f & feature::ro))
    return make_error(Errc::invalid_argument,
                      "writer: build_ro_image is for volumes with the ro feature (f2fscore-mkfs -O ro); this one has none");
  auto refuse = [](const char* what) { return make_error(Errc::unsupported, std::string("writer: cannot mount read-write: ") + what); };
  // Casefolded directories need the folding of s_encoding (f2fs_setup_casefold()
  // in fs/f2fs/super.c refuses an encoding it does not know).
  if ((f & feature::casefold) && sb.s_encoding.get() != kEncodingUtf8_12_1)
    return refuse(fmt("casefold encoding %llu is unknown (1: utf8-12.1)", sb.s_encoding.get()).c_str());
  if ((f & feature::casefold) && !casefold_supported())
    return refuse("casefolded directories need a build with casefolding (F2FSCORE_WITH_CASEFOLD)");
  if (f & feature::blkzoned) return refuse("zoned devices are not supported");
  // The kernel mounts an ro volume read-only only (parse_options() in
  // fs/f2fs/super.c); only a build-time fill writes one.
  if ((f & feature::ro) && !build_ro_image)
    return refuse("the volume has the ro feature (read-only by design: mount it read-only; only a build-time fill "
                  "such as f2fscore-sload writes it)");
  return {};
}

Status Writer::Impl::load() {
  if (!opts.fscrypt_keys.empty() && !fscrypt::supported())
    return make_error(Errc::unsupported,
                      "writer: fscrypt keys were given, but this build has no OpenSSL (F2FSCORE_WITH_OPENSSL) to use them");
  for (const auto& k : opts.fscrypt_keys) F2FSCORE_TRY(keyring.add(k));
  auto v = Volume::open(dev);
  if (!v) return make_error(v.error());
  vol = std::move(*v);
  sb = vol->superblock();
  cp = vol->checkpoint();
  if (opts.build_ro_image && opts.read_only)
    return make_error(Errc::invalid_argument, "writer: build_ro_image writes the volume: not with read_only");
  ro_image = sb.feature.get() & feature::ro;
  // A read-only mount reads an ro volume, as Linux mounts it; only the
  // build-time mode writes one.
  F2FSCORE_TRY(Writer::check_features(sb, opts.build_ro_image || (opts.read_only && ro_image)));
  F2FSCORE_TRY(check_compress_options());  // writer/compr.cpp
  auto refuse = [](const char* what) { return make_error(Errc::unsupported, std::string("writer: cannot mount read-write: ") + what); };
  const bool pending_fsync = vol->open_report().pending_fsync_nodes > 0;
  if (pending_fsync && (opts.recovery == MountOptions::Recovery::refuse || opts.read_only))
    return refuse(fmt("%llu fsynced node blocks follow the checkpoint; mount it read-write with roll-forward (or in "
                      "Linux) first (f2fs_recover_fsync_data()), a checkpoint from us would drop them",
                      vol->open_report().pending_fsync_nodes)
                      .c_str());
  if (cp.ckpt_flags.get() & (cp_flag::error | cp_flag::fsck | cp_flag::disabled | cp_flag::resizefs))
    return refuse("the checkpoint carries CP_ERROR, CP_FSCK, CP_DISABLED or CP_RESIZEFS: run f2fscore-fsck first");
  main_blk = vol->main_blkaddr();
  max_nid = vol->max_nid();
  csum_seed = inode_checksum_seed(sb.uuid);
  cp_ver_stamp = cp.checkpoint_ver.get();
  if (cp.ckpt_flags.get() & cp_flag::crc_recovery) {
    const auto blocks = vol->checkpoint_blocks();
    const std::uint32_t off = cp.checksum_offset.get();
    if (off + 4 <= kBlockSize) cp_ver_stamp |= static_cast<std::uint64_t>(load_le32(blocks.data(), off)) << 32;
  }

  F2FSCORE_TRY(premount_check());  // writer/premount.cpp: nothing is written before it

  // What the kernel's f2fs_fill_super() takes from the checkpoint: the
  // counts, the orphans, the active logs; the SIT read whole but for the
  // blocks in a hole (build_sit_entries()), the NAT block by block as nids
  // are used.
  const Geometry& g = vol->geometry();
  F2FSCORE_TRY(sm.load(*vol, dev, main_blk, g.main_segments(), g.segs_per_sec(), g.secs_per_zone()));
  F2FSCORE_TRY(nm.load(*vol, dev, sb.root_ino.get() + 1));
  const std::uint64_t valid_blocks = sm.valid_blocks();
  // The SIT is trusted only when its valid blocks are the checkpoint's
  // count. Fewer may be NEW_ADDR reservations (counted in valid_block_count,
  // no SIT bit) or blocks in use whose SIT bits were lost, which
  // alloc_block() would hand out again: only a walk of the tree tells them
  // apart, so a volume holding reservations is walked at every mount.
  if (!recount && valid_blocks == cp.valid_block_count.get() && sm.valid_node_blocks() == cp.valid_node_count.get()) {
    reserved_blocks = 0;
    valid_inodes = cp.valid_inode_count.get();
    auto o = vol->orphans();
    if (!o) return make_error(o.error());
    orphans = std::move(*o);
  } else {
    F2FSCORE_TRY(load_from_tree());
    changed_at_mount = true;  // the counts and entries the walk fixed go out at the next checkpoint
  }
  // The active logs, their segments held; a log whose next block is in use
  // opens a new segment on its first write (SegmentManager::load_cursegs()).
  sm.load_cursegs(cp);
  F2FSCORE_TRY(load_curseg_summaries(true));
  gc_load();
  F2FSCORE_TRY(quota_load());  // writer/quota.cpp
  // What the volume holds, as loaded: changes are counted from here.
  changes_at_checkpoint = tagged.changes;
  sm_edits_at_checkpoint = sm.edits();
  if (pending_fsync) {
    changed_at_mount = true;
    F2FSCORE_TRY(recover_fsync());
  }
  return {};
}

// The kernel sets SBI_IS_DIRTY when a node, dentry, meta or quota page is
// dirtied (inc_page_count() in fs/f2fs/f2fs.h) and clears it in
// do_checkpoint(); here the same question is asked of what the next
// checkpoint would write, and of the device (any write or discard since the
// last checkpoint, fsync chains and data included). When unsure: dirty.
bool Writer::Impl::dirty() const {
  if (changed_at_mount || tagged.changes != changes_at_checkpoint) return true;
  if (nm.changed_count() != 0 || nm.dirty_pages() != 0 || pending_new_nodes != 0) return true;
  if (sm.edits() != sm_edits_at_checkpoint || !sm.prefree().empty()) return true;
  if (dirty_pages(0) != 0 || quota_dirty()) return true;
  // The counts and the orphan list the pack would carry.
  return sm.valid_blocks() + reserved_blocks != cp.valid_block_count.get() ||
         sm.valid_node_blocks() != cp.valid_node_count.get() || valid_inodes != cp.valid_inode_count.get() ||
         orphans.empty() == ((cp.ckpt_flags.get() & cp_flag::orphan_present) != 0);
}

Status Writer::Impl::usable(bool modify) {
  if (unmounted) return make_error(Errc::invalid_argument, "writer: the volume is unmounted");
  if (modify && opts.read_only) return make_error(Errc::read_only, "writer: the volume is mounted read-only");
  if (modify) {
    F2FSCORE_TRY(guard_status());
    F2FSCORE_TRY(maybe_periodic_checkpoint());
  }
  // At the start of an outermost call no node page pointer or NAT entry
  // reference is held: the node manager trims its caches to their bounds.
  if (call_depth <= 1) nm.shrink();
  return modify ? balance_fs() : Status{};
}

// The checkpoint's counts disagree with the SIT: the truth comes from a walk
// of the tree (meta::plan_from_volume()); the SIT state, the summaries and
// the NAT entries that differ from it are changed, and the next checkpoint
// writes them.
Status Writer::Impl::load_from_tree() {
  // A walk that finds a block with two owners (or another damage it cannot
  // count through) refuses the mount: nothing has been written yet.
  auto plan = meta::plan_from_volume(*vol);
  if (!plan)
    return make_error(plan.error().code, "writer: refusing to mount read-write: the walk of the tree to recount "
                                         "the checkpoint failed: " + plan.error().message + "; run f2fscore-fsck");
  sm.reset_to(plan->blocks);
  reserved_blocks = plan->reserved_blocks;
  valid_inodes = plan->valid_inode_count;
  orphans = plan->orphans;
  meta::MetaView mv(*vol, dev);
  F2FSCORE_TRY(mv.load());
  std::unordered_map<nid_t, const meta::NatUse*> used;
  for (const auto& u : plan->nat) used[u.nid] = &u;
  const nid_t node_ino = sb.node_ino.get(), meta_ino = sb.meta_ino.get();
  F2FSCORE_TRY(mv.for_each_nat_entry([&](nid_t n, const NatEntry& e) -> Status {
    if (n == 0 || n >= max_nid || n == node_ino || n == meta_ino) return {};
    auto it = used.find(n);
    if (it != used.end()) {
      const meta::NatUse& u = *it->second;
      if (e.block_addr.get() != u.blkaddr || e.ino.get() != u.ino || e.version != u.version) {
        wr::NatMem& m = nm.set(n);
        m = {u.ino, u.blkaddr, u.version};
      }
    } else if (e.block_addr.get() != kNullAddr) {
      // An entry without a block address is free whatever its ino says:
      // the kernel keeps the owner's ino in the entry of a node it frees
      // (truncate_node() in fs/f2fs/node.c sets only the address).
      unreached_nids.insert(n);  // writer/premount.cpp: alloc_nid() never gives it
      wr::NatMem& m = nm.set(n);
      m.addr = kNullAddr;
      m.ino = 0;
    }
    return {};
  }));
  return nm.error();
}

Status Writer::Impl::load_curseg_summaries(bool restore_node_summaries) {
  for (std::uint8_t t = 0; t < 6; ++t) {
    const wr::Curseg& l = sm.curseg(t);
    if (l.segno >= sm.main_segs() || !log_active(t)) continue;
    auto s = sm.dirty_summary(*vol, l.segno, false);
    if (!s) return make_error(s.error());
    // A checkpoint without CP_UMOUNT_FLAG holds no node summaries, and the
    // SSA block of an active node log is not written until the log leaves
    // the segment: the summary is rebuilt from the footers of the node
    // blocks the SIT marks valid, as f2fs_restore_node_summary() in
    // fs/f2fs/node.c does at mount.
    if (!restore_node_summaries || t < 3 || (cp.ckpt_flags.get() & cp_flag::umount)) continue;
    Node nd{};
    for (std::uint32_t j = 0; j < wr::kBlocksPerSeg; ++j) {
      if (!sm.is_valid(l.segno, j)) continue;
      const std::uint64_t addr = vol->segment_start(l.segno) + j;
      F2FSCORE_TRY(read_at(dev, addr * kBlockSize,
                           std::span<std::uint8_t>(reinterpret_cast<std::uint8_t*>(&nd), kBlockSize),
                           io_tag(IostatType::fs_node_read_io)));
      Summary& e = (*s)->entries[j];
      e.nid.set(nd.footer.nid.get());
      e.version = 0;
      e.ofs_in_node.set(0);
    }
  }
  return {};
}

Status Writer::Impl::claim(block_t addr, const meta::BlockUse& u) {
  if (!in_main(addr)) return make_error(Errc::corrupt, fmt("writer: block %llu outside the main area", addr));
  const std::uint32_t seg = seg_of(addr), off = off_of(addr);
  // A segment holds node or data blocks, never both (its SIT type says which).
  const bool node_seg = sm.type(seg) >= wr::kHotNode;
  if (node_seg != u.node) sm.set_type(seg, u.node ? wr::kWarmNode : wr::kWarmData);
  sm.set_valid(seg, off);
  auto sp = sm.dirty_summary(*vol, seg, false);
  if (!sp) return make_error(sp.error());
  Summary& e = (*sp)->entries[off];
  // Node summaries carry version 0 and ofs_in_node 0, as
  // f2fs_do_write_node_page() writes them.
  e.nid.set(u.nid);
  e.version = u.node ? 0 : u.version;
  e.ofs_in_node.set(u.node ? 0 : u.ofs_in_node);
  return {};
}

void Writer::Impl::invalidate(block_t addr) {
  if (!in_main(addr)) return;
  sm.clear_valid(seg_of(addr), off_of(addr));
}

// Block allocation (LFS and SSR, as f2fs_allocate_data_block()): writer/gc.cpp.
// The guard (writer/premount.cpp): a block valid in the SIT is never
// handed out.
Result<block_t> Writer::Impl::alloc_block(std::uint8_t type) {
  F2FSCORE_TRY(guard_status());
  auto a = allocate_block(type);
  if (!a) return a;
  if (!in_main(*a)) return make_error(guard_trip(fmt("block %llu to be allocated is outside the main area", *a)).error());
  if (sm.is_valid(seg_of(*a), off_of(*a)))
    return make_error(guard_trip(fmt("block %llu to be allocated is valid in the SIT (segment %llu)", *a, seg_of(*a))).error());
  return a;
}

Result<nid_t> Writer::Impl::alloc_nid() {
  F2FSCORE_TRY(guard_status());
  // A new nid is a new node block: counted as inc_valid_node_count() does.
  F2FSCORE_TRY(check_space(1));
  auto n = nm.alloc(sb.root_ino.get(), sb.node_ino.get(), sb.meta_ino.get());
  if (!n) return n;
  // The guard (writer/premount.cpp): a nid in use, or one the last
  // checkpoint's NAT gives a node that the tree walk did not reach (an
  // entry may still name it), is never handed out.
  if (unreached_nids.count(*n))
    return make_error(guard_trip(fmt("nid %llu to be allocated has a NAT entry in use at the last checkpoint that "
                                     "nothing reached (a dentry or node may still name it)",
                                     *n))
                          .error());
  const wr::NatMem& e = nm.get(*n);
  if (e.addr != kNullAddr || e.ino != 0 || nm.page_cached(*n))
    return make_error(guard_trip(fmt("nid %llu to be allocated is in use (NAT block address %llu, ino %llu)", *n, e.addr, e.ino)).error());
  return n;
}

Result<Node*> Writer::Impl::read_node(nid_t nid) {
  if (nid == 0 || nid >= max_nid) return make_error(Errc::corrupt, fmt("writer: nid %llu outside the NAT", nid));
  const block_t addr = nm.get(nid).addr;
  F2FSCORE_TRY(nm.error());
  if (!in_main(addr))
    return make_error(Errc::corrupt, fmt("writer: nid %llu has no node block (address %llu)", nid, addr));
  auto p = nm.read_page(dev, nid, addr, io_tag(IostatType::fs_node_read_io));
  if (p) quota_seen(nid);
  return p;
}

Node* Writer::Impl::new_node(nid_t nid, nid_t ino, std::uint32_t ofs, bool dir) {
  Node* r = nm.new_page(nid);
  r->footer.nid.set(nid);
  r->footer.ino.set(ino);
  // Nodes of files carry the cold bit, of directories not (set_cold_node()).
  r->footer.flag.set((ofs << node_flag::offset_shift) | (dir ? 0 : node_flag::cold));
  wr::NatMem& e = nm.set(nid);
  e.ino = ino;
  e.addr = kNewAddr;
  ++pending_new_nodes;
  return r;
}

void Writer::Impl::free_node(nid_t nid) {
  if (map_memo.dn == nid || map_memo.ino == nid) map_memo = {};
  wr::NatMem& e = nm.set(nid);
  if (e.ino && e.ino != nid) fsync_lost_nodes[e.ino] = cp.checkpoint_ver.get();  // writer/fsync.cpp
  if (e.addr == kNewAddr) --pending_new_nodes;
  invalidate(e.addr);
  e.addr = kNullAddr;
  e.ino = 0;
  nm.mark_freed(nid);
  nm.drop_page(nid);
}

// A dirty node page to the next block of its node log (f2fs_write_node_page()):
// direct nodes of directories hot, of files warm, indirect nodes cold
// (__get_segment_type_6() in fs/f2fs/segment.c); the NAT entry in memory
// takes the new address, the old block is invalid (kept from reuse until the
// checkpoint by the checkpoint-valid map), the page is clean. Every copy
// goes without the fsync and dentry marks (set_fsync_mark(page, 0),
// set_dentry_mark(page, 0) in f2fs_sync_node_pages(), fs/f2fs/node.c): a
// node read back from an fsync chain still has them. A checkpoint's copies
// carry the version the pack commits; a writeback between checkpoints into
// the warm node log carries the one before it, so that roll-forward's chain
// (is_recoverable_dnode()) ends there.
Status Writer::Impl::write_node_page(nid_t n, bool for_checkpoint) {
  auto np = node(n);
  if (!np) return make_error(np.error());
  quota_settle(n);  // writer/quota.cpp: before the page can be evicted
  Node& nd = **np;
  const std::uint32_t ofs = nd.footer.flag.get() >> node_flag::offset_shift;
  const bool is_inode = ofs == 0 && nd.footer.ino.get() == n;
  const bool dnode = is_inode || is_dnode_offset(ofs);
  const bool cold = nd.footer.flag.get() & node_flag::cold;
  const std::uint8_t type = !dnode ? wr::kColdNode : cold ? wr::kWarmNode : wr::kHotNode;
  auto a = alloc_block(type);
  if (!a) return make_error(a.error());
  wr::NatMem& e = nm.set(n);
  if (e.addr == kNewAddr) --pending_new_nodes;
  invalidate(e.addr);
  e.addr = *a;
  F2FSCORE_TRY(claim(*a, {*a, n, 0, 0, true}));
  nd.footer.flag.set(nd.footer.flag.get() & ~(node_flag::fsync | node_flag::dent));
  std::uint64_t ver = cp_ver_stamp;
  if (!for_checkpoint && type == wr::kWarmNode)
    ver = (cp_ver_stamp & ~std::uint64_t{0xFFFFFFFF}) | ((cp_ver_stamp - 1) & 0xFFFFFFFF);
  nd.footer.cp_ver.set(ver);
  {
    // NEXT_FREE_BLKADDR after the allocation (fill_node_footer_blkaddr()).
    auto nx = next_block(type);
    nd.footer.next_blkaddr.set(nx ? *nx : *a + 1);
  }
  const bool csum = sb.feature.get() & feature::inode_checksum;
  if (is_inode && csum && (nd.i.i_inline & inline_flag::extra_attr) &&
      nd.i.extra.i_extra_isize.get() >= offsetof(InodeExtra, i_inode_checksum) + 4)
    nd.i.extra.i_inode_checksum.set(inode_checksum(csum_seed, reinterpret_cast<const std::uint8_t*>(&nd)));
  F2FSCORE_TRY(io_batch().add(*a, reinterpret_cast<const std::uint8_t*>(&nd),
                              io_tag(for_checkpoint ? IostatType::fs_cp_node_io : IostatType::fs_node_io)));
  nm.clear_dirty(n);
  ++stats.node_blocks_written;
  if (!for_checkpoint) ++stats.node_writeback_blocks;
  return {};
}

// Node writeback between checkpoints (the flusher's f2fs_write_node_pages()
// when dirty node pages pass half the node page cache): the dirty data
// pages first, so that the nodes written carry their blocks' addresses
// (otherwise each inode of a file whose data is still cached is written
// again when the data is placed), then every dirty node page to its log;
// the cache can then evict them.
// No fsync chain continues after it in this checkpoint (end_fsync_chain()).
Status Writer::Impl::write_back_nodes() {
  if (nm.dirty_nids().empty()) return {};
  {
    wr::WriteContext ctx;
    ctx.origin = wr::WriteContext::Origin::writeback;
    F2FSCORE_TRY(writeback(0, ctx));
  }
  const std::vector<nid_t> ds = nm.dirty_nids();
  if (ds.empty()) return {};
  end_fsync_chain();
  for (nid_t n : ds) F2FSCORE_TRY(write_node_page(n, false));
  ++stats.node_writebacks;
  return io_batch().drain();
}

// The checkpoint: dirty nodes to new blocks of the node logs, then the
// metadata rebuild from the in-memory truth (NAT/SIT to the other copies,
// SSA, the new pack; flushes between) — f2fs_write_checkpoint()'s order.
Status Writer::Impl::checkpoint(bool umount) {
  F2FSCORE_TRY(guard_status());
  {
    wr::WriteContext ctx;
    ctx.origin = wr::WriteContext::Origin::sync_writeback;
    F2FSCORE_TRY(writeback(0, ctx));
  }
  F2FSCORE_TRY(quota_flush());  // writer/quota.cpp: the usage into the quota files
  for (nid_t n : nm.dirty_nids()) F2FSCORE_TRY(write_node_page(n, true));
  F2FSCORE_TRY(io_batch().drain());
  // An active log whose next block is in use takes a new segment (the
  // checkpoint records positions the next mount can write at).
  // An ro image has no reserve: with no free section, a segment this
  // checkpoint frees.
  for (std::uint8_t t = 0; t < 6; ++t) {
    if (!log_active(t) || sm.curseg_writable(t)) continue;
    auto st = new_segment(t);
    if (!st && ro_image && st.error().code == Errc::no_space) st = sm.park_on_prefree(*vol, t);
    F2FSCORE_TRY(st);
  }
  F2FSCORE_TRY(nm.error());
  const std::vector<std::uint32_t> prefree = prefree_segments();
  meta::RebuildPlan plan;
  plan.orphans = orphans;
  plan.valid_inode_count = valid_inodes;
  plan.cursegs = sm.curseg_positions();
  plan.elapsed_time = get_mtime();
  // An ro image being built: every pack as sload.f2fs leaves one, with
  // the node summaries (there is no SSA to hold them) and no roll-forward.
  plan.umount = umount || ro_image;
  plan.move_busy_cursegs = false;
  // Incremental, as the kernel's checkpoint: the NAT entries and SIT
  // entries changed since the last one, the summaries of the segments
  // written to (NAT/SIT journals when they fit).
  meta::CheckpointDelta& d = plan.delta.emplace();
  std::vector<std::uint32_t> segs = sm.changed_segments();
  for (std::uint8_t t = 0; t < 6; ++t) segs.push_back(sm.curseg(t).segno);
  for (int t = 0; t < 3; ++t) {
    segs.push_back(cp.cur_data_segno[t].get());
    segs.push_back(cp.cur_node_segno[t].get());
  }
  std::sort(segs.begin(), segs.end());
  segs.erase(std::unique(segs.begin(), segs.end()), segs.end());
  for (std::uint32_t s : segs) {
    if (s >= sm.main_segs()) continue;
    meta::SegmentUpdate u;
    u.segno = s;
    u.type = sm.type(s);
    u.valid_blocks = sm.valid(s);
    u.mtime = sm.mtime(s);
    u.valid_map = sm.bitmap(s);
    u.summary = sm.find_dirty_summary(s);
    d.segments.push_back(u);
  }
  d.nat = nm.changed_entries();
  d.nat_block_used = nm.changed_block_usage();
  d.valid_block_count = sm.valid_blocks() + reserved_blocks;
  d.valid_node_count = static_cast<std::uint32_t>(sm.valid_node_blocks());
  d.free_segment_count = sm.empty_segments();
  for (std::uint8_t t = 0; t < 6; ++t) {
    const std::uint32_t seg = sm.curseg(t).segno;
    bool dup = false;
    for (std::uint8_t o = 0; o < t; ++o) dup = dup || sm.curseg(o).segno == seg;
    if (!dup && seg < sm.main_segs() && sm.valid(seg) == 0) --d.free_segment_count;
  }
  auto r = meta::rebuild(dev, *vol, plan);
  if (!r) return make_error(r.error());
  ++stats.checkpoints;
  stats.meta_blocks_written += r->nat_blocks_written + r->sit_blocks_written + r->ssa_blocks_written + r->cp_blocks_written;
  last_checkpoint_time = interval_ms();
  discard_segments(prefree);
  nm.pages_written();  // the pages stay cached, clean (shrink() evicts them)
  pending_new_nodes = 0;
  changed_at_mount = false;
  changes_at_checkpoint = tagged.changes;
  if (umount) return {};  // the handle closes: nothing to reload
  // The new checkpoint's view: the pack from the device, the rest is what
  // the plan was made of (no walk of the tree again).
  F2FSCORE_TRY(reload_committed());
  sm_edits_at_checkpoint = sm.edits();
  return {};
}

// ---- Public entry points -----------------------------------------------------

Writer::Writer(std::unique_ptr<Impl> impl) : impl_(std::move(impl)) {}
Writer::~Writer() = default;

Result<std::unique_ptr<Writer>> Writer::mount(BlockDevice& dev, const MountOptions& opts) {
  {
    const DeviceInfo& di = dev.info();
    auto refuse_used = [&](const DeviceInfo& i) -> Status {
      if (!opts.refuse_in_use || opts.read_only ||
          (i.kind != DeviceKind::regular_file && i.kind != DeviceKind::block_device))
        return {};
      InUseCheck what;
      what.exclusive = !i.exclusive;  // this process's own O_EXCL claim answers EBUSY
      if (InUse u = check_in_use(i.name, what))
        return make_error(Errc::busy, "writer: refusing to mount " + i.name + " read-write: " + u.detail);
      return {};
    };
    F2FSCORE_TRY(refuse_used(di));
    // Every device of a multi-device volume.
    if (const auto* md = dynamic_cast<const MultiDevice*>(&dev))
      for (std::size_t i = 0; i < md->members(); ++i) F2FSCORE_TRY(refuse_used(md->member(i).info()));
  }
  auto impl = std::make_unique<Impl>(dev, opts);
  F2FSCORE_TRY(impl->load());
  // Orphans of the last session are freed (f2fs_recover_orphan_inodes();
  // committed by the next checkpoint). Not on a read-only mount.
  if (!impl->opts.read_only && !impl->orphans.empty()) {
    impl->changed_at_mount = true;
    F2FSCORE_TRY(impl->recover_orphans());
  }
  impl->resolve_ipu_defaults();
  impl->last_checkpoint_time = impl->interval_ms();
  impl->last_call_time = impl->now();
  return std::unique_ptr<Writer>(new Writer(std::move(impl)));
}

// A checkpoint that fails leaves the in-memory state half-committed: the
// handle is closed (the previous checkpoint on disk stays the valid one).
Status Writer::sync() {
  F2FSCORE_WRITER_LOCK(impl_);
  F2FSCORE_TRY(impl_->usable(true));
  // Nothing changed since the last checkpoint: nothing is written, as
  // f2fs_write_checkpoint() returns early for CP_SYNC without SBI_IS_DIRTY.
  if (!impl_->dirty()) return {};
  auto r = impl_->checkpoint(false);
  if (!r) impl_->unmounted = true;
  return r;
}

Status Writer::unmount() {
  F2FSCORE_WRITER_LOCK(impl_);
  F2FSCORE_TRY(impl_->usable(false));
  if (impl_->opts.read_only || !impl_->guard_error.empty()) {
    impl_->unmounted = true;
    return impl_->guard_status();
  }
  // Unmounting closes every file: open-unlinked inodes are freed (writer/ns.cpp).
  auto r = impl_->release_all();
  // The checkpoint of an unmount is written when something changed since
  // the last one or that one lacks CP_UMOUNT_FLAG, the condition of
  // f2fs_put_super() in fs/f2fs/super.c: an unmount with nothing to commit
  // leaves the volume byte for byte as it was.
  if (r && (impl_->dirty() || !(impl_->cp.ckpt_flags.get() & cp_flag::umount))) r = impl_->checkpoint(true);
  impl_->unmounted = true;
  return r;
}

WriterStats Writer::stats() const {
  F2FSCORE_WRITER_LOCK(impl_);
  WriterStats s = impl_->stats;
  s.node_pages_cached = impl_->nm.cached_pages();
  s.node_pages_dirty = impl_->nm.dirty_pages();
  s.node_pages_evicted = impl_->nm.pages_evicted();
  s.nat_blocks_cached = impl_->nm.cached_blocks();
  return s;
}

}  // namespace f2fscore
