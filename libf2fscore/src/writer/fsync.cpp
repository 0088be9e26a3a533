// fsync and fdatasync as f2fs_do_sync_file() (fs/f2fs/file.c, Linux 6.1),
// and roll-forward recovery at mount as f2fs_recover_fsync_data()
// (fs/f2fs/recovery.c). docs/writer.md says what survives a power cut.
//
// An fsync either takes a checkpoint (where need_do_checkpoint() would) or
// appends the file's dirty direct nodes and inode to the warm node log as a
// chain Linux's find_fsync_dnodes() walks: it starts at the checkpoint's
// warm node curseg (NEXT_FREE_BLKADDR), every footer carries the
// checkpoint's version (with its CRC under CP_CRC_RECOVERY_FLAG) and the
// address the log gives next, the fsync mark, and the dentry mark on an
// inode neither checkpointed nor fsynced before (f2fs_need_dentry_mark()).
// Nothing else (NAT, SIT, SSA) is written: roll-forward recomputes it.
#include <algorithm>
#include <cstring>
#include <map>
#include <unordered_set>

#include "f2fscore/checksum.hpp"
#include "meta/meta_internal.hpp"
#include "writer/writer_internal.hpp"

namespace f2fscore {

using namespace disk;
using meta::fmt;

namespace {

/// XATTR_NODE_OFFSET (include/linux/f2fs_fs.h): every offset bit set.
constexpr std::uint32_t kXattrNodeOffset = (~std::uint32_t{0} << node_flag::offset_shift) >> node_flag::offset_shift;

std::uint32_t ofs_of(const Node& n) { return n.footer.flag.get() >> node_flag::offset_shift; }

bool is_dnode_ofs(std::uint32_t ofs) { return is_dnode_offset(ofs); }

bool valid_addr(block_t b) { return b != kNullAddr && b != kNewAddr; }

FileType type_of_mode(std::uint16_t mode) {
  switch (mode & 0xF000) {
    case 0x8000: return FileType::reg_file;
    case 0x4000: return FileType::dir;
    case 0x2000: return FileType::chrdev;
    case 0x6000: return FileType::blkdev;
    case 0x1000: return FileType::fifo;
    case 0xC000: return FileType::sock;
    case 0xA000: return FileType::symlink;
    default: return FileType::unknown;
  }
}

// F2FS_FITS_IN_INODE(): an extra attribute is present when it lies within
// i_extra_isize bytes.
bool fits(const Node& n, std::size_t off, std::size_t size) { return off + size <= n.i.extra.i_extra_isize.get(); }

std::uint32_t inline_xattr_words(const SuperBlock& sb, const Node& in) {
  // As do_read_inode() in fs/f2fs/inode.c: with flexible_inline_xattr the
  // stored size whatever the inline_xattr flag; otherwise the default area
  // with the flag, and for an inline-dentry directory even without it.
  if ((sb.feature.get() & feature::flexible_inline_xattr) && (in.i.i_inline & inline_flag::extra_attr))
    return in.i.extra.i_inline_xattr_size.get();
  if (in.i.i_inline & (inline_flag::xattr | inline_flag::dentry)) return kDefaultInlineXattrAddrs;
  return 0;
}

struct ChainNode {
  block_t addr = 0;
  std::unique_ptr<Node> n;
};

struct FsyncEntry {
  block_t blkaddr = 0;      ///< the last fsync-marked node of the inode
  block_t last_dentry = 0;  ///< the last inode block with the dentry mark
  bool done = false;        ///< its last fsync-marked node was replayed
};

}  // namespace

// ---- fsync -------------------------------------------------------------------

namespace {

struct Fsync {
  Writer::Impl& w;

  block_t log_pos() const {
    const wr::Curseg& l = w.sm.curseg(wr::kWarmNode);
    return static_cast<block_t>(w.vol->segment_start(l.segno) + l.next_blkoff);
  }
  block_t cp_pos() const {
    return static_cast<block_t>(w.vol->segment_start(w.cp.cur_node_segno[1].get()) + w.cp.cur_node_blkoff[1].get());
  }
  /// The state kept for fsync belongs to one checkpoint: start over after
  /// every new one (the kernel's nat_reset_flag()).
  void new_epoch() {
    if (w.fsync_epoch == w.cp.checkpoint_ver.get()) return;
    w.fsync_epoch = w.cp.checkpoint_ver.get();
    w.fsync_chain_next = 0;
    w.fsynced_inodes.clear();
    w.fsync_new_nodes.clear();
  }
  /// f2fs_is_checkpointed_node(): the nid had its node at the checkpoint.
  bool checkpointed(nid_t n) const {
    if (n == 0 || n >= w.max_nid) return false;
    return valid_addr(w.nm.get(n).addr) && !w.fsync_new_nodes.count(n);
  }
  /// f2fs_need_dentry_mark(): neither checkpointed nor fsynced since.
  bool need_dentry_mark(nid_t ino) const { return !checkpointed(ino) && !w.fsynced_inodes.count(ino); }
  /// The chain can take the next node where roll-forward will look for it.
  bool chain_ready() const {
    const wr::Curseg& l = w.sm.curseg(wr::kWarmNode);
    if (!l.usable || l.alloc_type != 0 || l.segno >= w.sm.main_segs() || l.next_blkoff >= wr::kBlocksPerSeg)
      return false;
    return log_pos() == (w.fsync_chain_next ? w.fsync_chain_next : cp_pos()) && block_free(log_pos());
  }
  bool block_free(block_t b) const {
    return w.in_main(b) && !w.block_valid(b);
  }
  /// Opens the warm node log's next segment now (an LFS segment from its
  /// first block); false when the allocator gave anything else.
  Result<bool> open_next_segment() {
    wr::Curseg& l = w.sm.curseg(wr::kWarmNode);
    auto b = w.alloc_block(wr::kWarmNode);
    if (!b) return make_error(b.error());
    const auto start = static_cast<block_t>(w.vol->segment_start(l.segno));
    if (l.alloc_type != 0 || l.next_blkoff != 1 || *b != start) return false;
    l.next_blkoff = 0;  // the block is taken by the next node write
    return true;
  }

  // An inode whose fields beyond its times differ from its last written
  // copy (the kernel's gdirty list: fdatasync writes the inode only then).
  Result<bool> inode_needs_write(nid_t ino, const Node& cur) {
    if (!valid_addr(w.nm.get(ino).addr)) return true;
    Node old{};
    F2FSCORE_TRY(read_at(w.dev, static_cast<std::uint64_t>(w.nm.get(ino).addr) * kBlockSize,
                     std::span<std::uint8_t>(reinterpret_cast<std::uint8_t*>(&old), kBlockSize),
                     io_tag(IostatType::fs_node_read_io)));
    Node now = cur;
    for (Node* n : {&old, &now}) {
      n->i.i_atime.set(0);
      n->i.i_ctime.set(0);
      n->i.i_mtime.set(0);
      n->i.i_atime_nsec.set(0);
      n->i.i_ctime_nsec.set(0);
      n->i.i_mtime_nsec.set(0);
      if (n->i.i_inline & inline_flag::extra_attr) n->i.extra.i_inode_checksum.set(0);
    }
    return std::memcmp(&old, &now, kNodeFooterOffset) != 0;
  }

  // need_do_checkpoint() in fs/f2fs/file.c, plus what our chain cannot
  // carry; nullptr when a node chain will do.
  const char* checkpoint_reason(nid_t ino, const Node& in, std::size_t nodes_to_write) {
    const std::uint16_t mode = in.i.i_mode.get();
    if ((mode & 0xF000) != 0x8000) return "not a regular file (CP_NON_REGULAR)";
    // Roll-forward here does not replay compressed clusters: their fsync
    // commits through a checkpoint.
    if (Writer::Impl::compressed(in)) return "a compressed file";
    if (in.i.i_links.get() != 1) return "hard links (CP_HARDLINK)";
    if (in.i.i_advise & advise::lost_pino) return "wrong parent (CP_WRONG_PINO)";
    if (!checkpointed(in.i.i_pino.get())) return "parent not checkpointed (CP_NODE_NEED_CP)";
    if (auto it = w.fsync_lost_nodes.find(ino); it != w.fsync_lost_nodes.end() && it->second == w.cp.checkpoint_ver.get())
      return "a node of the file was freed since the checkpoint";
    if (!chain_ready()) return "the warm node log does not continue the chain";
    if (w.valid_user_blocks() + nodes_to_write + 2 * wr::kBlocksPerSeg >
        w.cp.user_block_count.get())
      return "no space for roll-forward (CP_NO_SPC_ROLL)";
    if (need_dentry_mark(ino)) {
      // Roll-forward adds the name from i_name under i_pino: it must be the
      // name the file has now (else the kernel would have lost the pino).
      const std::uint32_t len = in.i.i_namelen.get();
      if (len == 0 || len > kNameLen) return "no name in the inode";
      auto e = w.find_entry(in.i.i_pino.get(), std::string_view(reinterpret_cast<const char*>(in.i.i_name), len));
      if (!e || *e != ino) return "the inode's name is not in its parent (CP_WRONG_PINO)";
    }
    return nullptr;
  }

  Status checkpoint(bool datasync) {
    // A warm node log that cannot start a chain at the next checkpoint's
    // curseg (full, or busy after its offset) opens its next segment now, so
    // that the checkpoint records a position fsync can continue from.
    const wr::Curseg& l = w.sm.curseg(wr::kWarmNode);
    if (!l.usable || l.next_blkoff >= wr::kBlocksPerSeg) {
      auto a = open_next_segment();
      if (!a) return make_error(a.error());
    }
    const std::uint64_t n0 = w.stats.node_blocks_written, m0 = w.stats.meta_blocks_written;
    auto r = w.checkpoint(false);
    if (!r) {
      w.unmounted = true;  // as Writer::sync(): the previous checkpoint stays valid
      return r;
    }
    ++w.stats.ipu.fsync_checkpoints;
    (datasync ? w.stats.ipu.fdatasync_node_blocks : w.stats.ipu.fsync_node_blocks) += w.stats.node_blocks_written - n0;
    (datasync ? w.stats.ipu.fdatasync_meta_blocks : w.stats.ipu.fsync_meta_blocks) += w.stats.meta_blocks_written - m0;
    return {};
  }

  // f2fs_fsync_node_pages(): the file's dirty direct nodes (IS_DNODE and
  // cold: files' nodes), in nid order, each with the fsync mark. False when
  // the log stopped giving the blocks the chain needs (a checkpoint then
  // makes the rest durable; the nodes written so far are valid copies).
  Result<bool> write_chain(nid_t ino, const std::vector<nid_t>& ns, bool datasync) {
    const bool csum = w.sb.feature.get() & feature::inode_checksum;
    const bool dent = need_dentry_mark(ino);
    wr::Curseg& l = w.sm.curseg(wr::kWarmNode);
    bool wrote_inode = false;
    for (nid_t n : ns) {
      auto np = w.node(n);
      if (!np) return make_error(np.error());
      Node& nd = **np;
      if (!chain_ready()) return false;
      w.quota_settle(n);  // writer/quota.cpp: before the page can be evicted
      const block_t a = log_pos();
      {
        // Taken as allocate_block() takes blocks (writer/gc.cpp): SSR must
        // never hand a chain block out again before the next checkpoint.
        w.sm.mark_ckpt_valid(w.seg_of(a), w.off_of(a));
      }
      ++l.next_blkoff;
      if (l.next_blkoff >= wr::kBlocksPerSeg) {
        // The kernel moves a full curseg at once, so next_blkaddr names the
        // first block of the next segment: open it now.
        auto b = open_next_segment();
        if (!b) return make_error(b.error());
        if (!*b) return false;
      }
      const block_t next = log_pos();
      std::uint32_t flag = nd.footer.flag.get() & ~(node_flag::fsync | node_flag::dent);
      flag |= node_flag::fsync;
      if (n == ino && dent) flag |= node_flag::dent;
      nd.footer.flag.set(flag);
      nd.footer.cp_ver.set(w.cp_ver_stamp);
      nd.footer.next_blkaddr.set(next);
      if (n == ino && csum && (nd.i.i_inline & inline_flag::extra_attr) &&
          nd.i.extra.i_extra_isize.get() >= offsetof(InodeExtra, i_inode_checksum) + 4)
        nd.i.extra.i_inode_checksum.set(inode_checksum(w.csum_seed, reinterpret_cast<const std::uint8_t*>(&nd)));
      F2FSCORE_TRY(write_at(w.dev, static_cast<std::uint64_t>(a) * kBlockSize,
                        std::span<const std::uint8_t>(reinterpret_cast<const std::uint8_t*>(&nd), kBlockSize),
                        io_tag(IostatType::fs_node_io)));
      // The marks belong to this copy only (f2fs_sync_node_pages() clears
      // them before a checkpoint writes the node again).
      nd.footer.flag.set(flag & ~(node_flag::fsync | node_flag::dent));
      if (w.nm.get(n).addr == kNewAddr) {
        --w.pending_new_nodes;
        w.fsync_new_nodes.insert(n);
      }
      w.invalidate(w.nm.get(n).addr);
      w.nm.set(n).addr = a;
      F2FSCORE_TRY(w.claim(a, {a, n, 0, 0, true}));
      w.nm.clear_dirty(n);
      w.fsync_chain_next = next;
      if (n == ino) wrote_inode = true;
      ++w.stats.node_blocks_written;
      ++(datasync ? w.stats.ipu.fdatasync_node_blocks : w.stats.ipu.fsync_node_blocks);
    }
    if (wrote_inode) w.fsynced_inodes.insert(ino);
    return true;
  }

  Status run(nid_t ino, bool datasync) {
    if (ino == 0 || ino >= w.max_nid || w.nm.get(ino).ino != ino || w.nm.get(ino).addr == kNullAddr)
      return make_error(Errc::not_found, fmt("writer: no inode %llu", ino));
    new_epoch();
    ++(datasync ? w.stats.ipu.fdatasyncs : w.stats.ipu.fsyncs);
    wr::WriteContext ctx;
    ctx.origin = wr::WriteContext::Origin::sync_writeback;
    ctx.fsync = !datasync;
    ctx.fdatasync = datasync;
    ctx.file_dirty_pages = w.dirty_pages(ino);
    F2FSCORE_TRY(w.writeback(ino, ctx));
    // An ro image being built has no warm node log for a chain: a checkpoint.
    if (w.ro_image) return w.checkpoint(false);
    auto inp = w.node(ino);
    if (!inp) return make_error(inp.error());
    std::vector<nid_t> ns;
    for (nid_t n : w.nm.dirty_nids()) {
      if (n >= w.max_nid || w.nm.get(n).ino != ino) continue;
      auto np = w.node(n);
      if (!np) return make_error(np.error());
      const std::uint32_t fl = (*np)->footer.flag.get();
      if (!is_dnode_ofs(fl >> node_flag::offset_shift) || !(fl & node_flag::cold)) continue;
      // fdatasync: an inode on disk already (checkpointed or fsynced) goes
      // only when more than its times changed (f2fs_skip_inode_update()).
      if (n == ino && datasync && !need_dentry_mark(ino)) {
        auto need = inode_needs_write(ino, **np);
        if (!need) return make_error(need.error());
        if (!*need) continue;
      }
      ns.push_back(n);
    }
    // f2fs_need_inode_block_update(): an inode neither checkpointed nor
    // fsynced yet goes with its first chain, or roll-forward cannot find it.
    if (need_dentry_mark(ino) && std::find(ns.begin(), ns.end(), ino) == ns.end()) ns.push_back(ino);
    std::sort(ns.begin(), ns.end());
    inp = w.node(ino);
    if (!inp) return make_error(inp.error());
    // f2fs_do_sync_file()'s early exit: no data written out of place since
    // the file's last fsync (FI_APPEND_WRITE) and an inode that needs no
    // write (need_inode_page_update(): its page clean, checkpointed or
    // fsynced): nothing to make durable, so neither a checkpoint (whatever
    // need_do_checkpoint() would say) nor a chain.
    if (!w.append_written.count(ino) && ns.empty() && !w.nm.page_dirty(ino) && !need_dentry_mark(ino)) return {};
    if (checkpoint_reason(ino, **inp, ns.size())) {
      F2FSCORE_TRY(checkpoint(datasync));
      w.append_written.erase(ino);
      return {};
    }
    auto done = write_chain(ino, ns, datasync);
    if (!done) return make_error(done.error());
    if (!*done) {
      w.fsync_chain_next = ~block_t{0};  // no chain continues in this checkpoint
      F2FSCORE_TRY(checkpoint(datasync));
      w.append_written.erase(ino);
      return {};
    }
    // The data and the chain durable before fsync returns (f2fs_issue_flush()).
    F2FSCORE_TRY(flush(w.dev));
    w.append_written.erase(ino);
    return {};
  }
};

}  // namespace

Status Writer::Impl::fsync_file(nid_t ino, bool datasync) { return Fsync{*this}.run(ino, datasync); }

void Writer::Impl::end_fsync_chain() {
  Fsync f{*this};
  f.new_epoch();
  fsync_chain_next = ~block_t{0};  // no chain continues in this checkpoint
}

// ---- Roll-forward ------------------------------------------------------------

namespace {

struct Recovery {
  Writer::Impl& w;
  std::map<nid_t, FsyncEntry> entries;

  tl::unexpected<Error> corrupt(const std::string& what) {
    return make_error(Errc::corrupt, "writer: roll-forward: " + what + "; the volume is left as it was");
  }
  tl::unexpected<Error> beyond(const std::string& what) {
    return make_error(Errc::unsupported, "writer: cannot mount read-write: roll-forward of fsynced nodes would need " + what +
                                             ", which is not implemented; mount it in Linux first (the volume is left as it was)");
  }
  bool in_main(block_t b) const { return w.in_main(b); }

  // is_recoverable_dnode() in fs/f2fs/recovery.c.
  bool recoverable(const Node& n) const {
    const std::uint64_t ver = n.footer.cp_ver.get();
    if (w.cp.ckpt_flags.get() & cp_flag::nocrc_recovery) return (ver << 32) == (w.cp_ver_stamp << 32);
    return ver == w.cp_ver_stamp;
  }

  // The chain from the checkpoint's warm node curseg, following
  // next_blkaddr while the nodes carry the checkpoint's version.
  Result<std::vector<ChainNode>> read_chain() {
    std::vector<ChainNode> chain;
    auto addr = static_cast<block_t>(w.vol->segment_start(w.cp.cur_node_segno[1].get()) + w.cp.cur_node_blkoff[1].get());
    std::unordered_set<block_t> seen;
    while (in_main(addr)) {
      if (!seen.insert(addr).second)
        return corrupt(fmt("the fsync node chain loops back to block %llu (sanity_check_node_chain())", addr));
      auto n = std::make_unique<Node>();
      F2FSCORE_TRY(read_at(w.dev, static_cast<std::uint64_t>(addr) * kBlockSize,
                       std::span<std::uint8_t>(reinterpret_cast<std::uint8_t*>(n.get()), kBlockSize),
                       io_tag(IostatType::fs_node_read_io)));
      if (!recoverable(*n)) break;
      const block_t next = n->footer.next_blkaddr.get();
      chain.push_back({addr, std::move(n)});
      addr = next;
    }
    return chain;
  }

  /// f2fs_iget() of an inode the NAT knows: true, false when it does not
  /// exist (ENOENT), an error when its node is unreadable.
  Result<bool> iget(nid_t ino) {
    if (ino == 0 || ino >= w.max_nid || w.nm.get(ino).ino != ino || w.nm.get(ino).addr == kNullAddr) return false;
    auto n = w.node(ino);
    if (!n) return make_error(n.error());
    if (ofs_of(**n) != 0 || (*n)->footer.ino.get() != ino) return corrupt(fmt("node %llu is not an inode", ino));
    return true;
  }

  // f2fs_recover_inode_page() in fs/f2fs/node.c: an inode made after the
  // checkpoint, from its dentry-marked copy in the chain.
  Status recover_inode_page(const Node& src) {
    const nid_t ino = src.footer.ino.get();
    if (ino == 0 || ino >= w.max_nid) return corrupt(fmt("inode number %llu outside the NAT", ino));
    if (w.nm.get(ino).addr != kNullAddr)
      return corrupt(fmt("inode %llu carries the dentry mark but its NAT entry is in use", ino));
    Node& d = *w.nm.new_page(ino);
    d.footer.nid.set(ino);
    d.footer.ino.set(ino);
    d.footer.flag.set(node_flag::cold);
    std::memcpy(&d.i, &src.i, offsetof(Inode, i_ext));
    d.i.i_size.set(0);
    d.i.i_blocks.set(1);
    d.i.i_links.set(1);
    d.i.i_xattr_nid.set(0);
    d.i.i_inline = src.i.i_inline & (inline_flag::xattr | inline_flag::extra_attr);
    if (d.i.i_inline & inline_flag::extra_attr) {
      const std::uint32_t f = w.sb.feature.get();
      d.i.extra.i_extra_isize = src.i.extra.i_extra_isize;
      if ((f & feature::flexible_inline_xattr) && fits(src, offsetof(InodeExtra, i_inline_xattr_size), 2))
        d.i.extra.i_inline_xattr_size = src.i.extra.i_inline_xattr_size;
      if ((f & feature::project_quota) && fits(src, offsetof(InodeExtra, i_projid), 4))
        d.i.extra.i_projid = src.i.extra.i_projid;
      if ((f & feature::inode_crtime) && fits(src, offsetof(InodeExtra, i_crtime_nsec), 4)) {
        d.i.extra.i_crtime = src.i.extra.i_crtime;
        d.i.extra.i_crtime_nsec = src.i.extra.i_crtime_nsec;
      }
    }
    w.nm.set(ino).ino = ino;
    w.nm.set(ino).addr = kNewAddr;
    ++w.pending_new_nodes;
    ++w.valid_inodes;
    return {};
  }

  // find_fsync_dnodes(): the inodes with fsync-marked nodes, their last
  // fsync-marked and dentry-marked blocks.
  Status find_fsync_dnodes(const std::vector<ChainNode>& chain) {
    for (const auto& c : chain) {
      const Node& p = *c.n;
      const std::uint32_t fl = p.footer.flag.get();
      if (!is_dnode_ofs(fl >> node_flag::offset_shift) || !(fl & node_flag::fsync)) continue;
      const nid_t ino = p.footer.ino.get();
      auto it = entries.find(ino);
      if (it == entries.end()) {
        if (ofs_of(p) == 0 && (fl & node_flag::dent)) F2FSCORE_TRY(recover_inode_page(p));
        auto ok = iget(ino);
        if (!ok) return make_error(ok.error());
        if (!*ok) continue;  // CP | dnode(F) | inode(DF): wait for the inode
        it = entries.emplace(ino, FsyncEntry{}).first;
      }
      it->second.blkaddr = c.addr;
      if (ofs_of(p) == 0 && (fl & node_flag::dent)) it->second.last_dentry = c.addr;
    }
    return {};
  }

  // recover_inode(): the fields Linux takes from the fsynced inode.
  Status recover_inode(nid_t ino, const Node& src) {
    auto dp = w.node(ino);
    if (!dp) return make_error(dp.error());
    Node& d = **dp;
    d.i.i_mode = src.i.i_mode;
    d.i.i_uid = src.i.i_uid;
    d.i.i_gid = src.i.i_gid;
    if ((src.i.i_inline & inline_flag::extra_attr) && (d.i.i_inline & inline_flag::extra_attr) &&
        (w.sb.feature.get() & feature::project_quota) && fits(src, offsetof(InodeExtra, i_projid), 4))
      d.i.extra.i_projid = src.i.extra.i_projid;
    d.i.i_size = src.i.i_size;
    d.i.i_atime = src.i.i_atime;
    d.i.i_ctime = src.i.i_ctime;
    d.i.i_mtime = src.i.i_mtime;
    d.i.i_atime_nsec = src.i.i_atime_nsec;
    d.i.i_ctime_nsec = src.i.i_ctime_nsec;
    d.i.i_mtime_nsec = src.i.i_mtime_nsec;
    d.i.i_advise = src.i.i_advise;
    d.i.i_flags = src.i.i_flags;
    if ((d.i.i_mode.get() & 0xF000) == 0x8000)  // i_gc_failures: the low half of i_current_depth
      std::memcpy(&d.i.i_current_depth, &src.i.i_current_depth, 2);
    const std::uint8_t keep = inline_flag::pin_file | inline_flag::data_exist;
    d.i.i_inline = static_cast<std::uint8_t>((d.i.i_inline & ~keep) | (src.i.i_inline & keep));
    w.mark_dirty(ino);
    return {};
  }

  // recover_dentry(): the name of a new inode in its parent, replacing an
  // entry of another inode with that name.
  Status recover_dentry(nid_t ino, const Node& src) {
    const nid_t dir = src.i.i_pino.get();
    const std::uint32_t len = src.i.i_namelen.get();
    if (len == 0 || len > kNameLen) return corrupt(fmt("inode %llu has a name of %llu bytes", ino, len));
    const std::string name(reinterpret_cast<const char*>(src.i.i_name), len);
    auto ok = iget(dir);
    if (!ok) return make_error(ok.error());
    if (!*ok) return corrupt(fmt("the parent %llu of fsynced inode %llu does not exist", dir, ino));
    auto dn = w.node(dir);
    if (!dn) return make_error(dn.error());
    if (((*dn)->i.i_mode.get() & 0xF000) != 0x4000)
      return corrupt(fmt("the parent %llu of fsynced inode %llu is not a directory", dir, ino));
    for (int round = 0; round < 2; ++round) {
      auto e = w.find_entry(dir, name);
      if (e && *e == ino) return {};
      if (!e) {
        if (e.error().code != Errc::not_found) return make_error(e.error());
        auto in = w.node(ino);
        if (!in) return make_error(in.error());
        const FileType t = type_of_mode((*in)->i.i_mode.get());
        if (t == FileType::unknown) return corrupt(fmt("inode %llu has mode %llo", ino, (*in)->i.i_mode.get()));
        return w.add_entry(dir, name, ino, t);
      }
      const nid_t other = *e;
      if (auto it = entries.find(other); it != entries.end() && !it->second.done)
        return beyond(fmt("replacing the name of inode %llu that is being recovered too", other));
      auto on = iget(other);
      if (!on) return make_error(on.error());
      if (!*on) return corrupt(fmt("directory %llu names inode %llu, which does not exist", dir, other));
      auto op = w.node(other);
      if (!op) return make_error(op.error());
      if (((*op)->i.i_mode.get() & 0xF000) == 0x4000) return beyond("replacing a directory's name by a file");
      F2FSCORE_TRY(w.remove_entry(dir, name));
      op = w.node(other);
      if (!op) return make_error(op.error());
      const std::uint32_t links = (*op)->i.i_links.get();
      if (links <= 1) {
        F2FSCORE_TRY(w.free_inode(other));
      } else {
        (*op)->i.i_links.set(links - 1);
        w.mark_dirty(other);
      }
    }
    return corrupt("a name could not be recovered");
  }

  // f2fs_recover_inline_xattr().
  Status recover_inline_xattr(nid_t ino, const Node& src) {
    auto dp = w.node(ino);
    if (!dp) return make_error(dp.error());
    Node& d = **dp;
    if (src.i.i_inline & inline_flag::xattr) {
      d.i.i_inline |= inline_flag::xattr;
      const std::uint32_t words = inline_xattr_words(w.sb, d);
      if (words && words <= kDefAddrsPerInode)
        std::memcpy(&d.i.i_addr[kDefAddrsPerInode - words], &src.i.i_addr[kDefAddrsPerInode - words], 4 * words);
    } else {
      d.i.i_inline &= static_cast<std::uint8_t>(~inline_flag::xattr);
    }
    w.mark_dirty(ino);
    return {};
  }

  // f2fs_recover_xattr_data(): the fsynced xattr node replaces the old one
  // under a new nid.
  Status recover_xattr_node(nid_t ino, const Node& src) {
    auto ip = w.node(ino);
    if (!ip) return make_error(ip.error());
    const nid_t prev = (*ip)->i.i_xattr_nid.get();
    if (prev && prev < w.max_nid && w.nm.get(prev).ino == ino && w.nm.get(prev).addr != kNullAddr) {
      w.free_node(prev);
      ip = w.node(ino);
      if (!ip) return make_error(ip.error());
      (*ip)->i.i_blocks.set((*ip)->i.i_blocks.get() - 1);
    }
    auto x = w.alloc_nid();
    if (!x) return make_error(x.error());
    Node* xn = w.new_node(*x, ino, kXattrNodeOffset, false);
    std::memcpy(xn, &src, kNodeFooterOffset);
    ip = w.node(ino);
    if (!ip) return make_error(ip.error());
    (*ip)->i.i_xattr_nid.set(*x);
    (*ip)->i.i_blocks.set((*ip)->i.i_blocks.get() + 1);
    w.mark_dirty(ino);
    return {};
  }

  // f2fs_recover_inline_data(): true when the inode's data is inline and
  // was replayed (no block addresses to recover).
  Result<bool> recover_inline_data(nid_t ino, const Node& src) {
    auto dp = w.node(ino);
    if (!dp) return make_error(dp.error());
    Node* d = *dp;
    const bool src_inline = ofs_of(src) == 0 && (src.i.i_inline & inline_flag::data);
    auto copy = [&]() {
      const std::uint32_t off = w.inline_offset(*d), max = w.max_inline(*d);
      std::memcpy(reinterpret_cast<std::uint8_t*>(d) + off, reinterpret_cast<const std::uint8_t*>(&src) + off, max);
      d->i.i_inline |= inline_flag::data | inline_flag::data_exist;
      w.mark_dirty(ino);
    };
    if ((d->i.i_inline & inline_flag::data) && src_inline) {
      copy();
      return true;
    }
    if (d->i.i_inline & inline_flag::data) {
      std::memset(reinterpret_cast<std::uint8_t*>(d) + w.inline_offset(*d), 0, w.max_inline(*d));
      d->i.i_inline &= static_cast<std::uint8_t>(~(inline_flag::data | inline_flag::data_exist));
      w.mark_dirty(ino);
    } else if (src_inline) {
      F2FSCORE_TRY(w.truncate_blocks(ino, 0));
      dp = w.node(ino);
      if (!dp) return make_error(dp.error());
      d = *dp;
      copy();
      return true;
    }
    return false;
  }

  // check_index_in_prev_nodes(): a block the fsynced node names that the
  // checkpoint gave to another pointer loses that pointer.
  Status check_index_in_prev_nodes(block_t dest) {
    // The block's owner as the summary names it (the kernel reads the
    // segment's summary block: f2fs_get_sum_page()).
    if (!w.block_valid(dest)) return {};
    const std::uint32_t seg = w.seg_of(dest);
    auto sum = w.sm.summary(*w.vol, seg);
    if (!sum) return make_error(sum.error());
    const Summary& se = sum->entries[w.off_of(dest)];
    const meta::BlockUse o{dest, se.nid.get(), se.ofs_in_node.get(), se.version, w.sm.type(seg) >= wr::kHotNode};
    if (o.node) return corrupt(fmt("an fsynced pointer names node block %llu", dest));
    const nid_t on = o.nid;
    if (on == 0 || on >= w.max_nid || w.nm.get(on).ino == 0) return corrupt(fmt("block %llu has no owner node", dest));
    const nid_t oi = w.nm.get(on).ino;
    auto np = w.node(on);
    if (!np) return make_error(np.error());
    Le32* ref = nullptr;
    if (on == oi) {
      const std::uint32_t k = w.extra_words(**np) + o.ofs_in_node;
      if (k < kDefAddrsPerInode) ref = &(*np)->i.i_addr[k];
    } else if (o.ofs_in_node < kDefAddrsPerBlock) {
      ref = &(*np)->dn.addr[o.ofs_in_node];
    }
    if (!ref || ref->get() != dest) return {};
    ref->set(kNullAddr);
    w.invalidate(dest);
    w.mark_dirty(on);
    auto ip = w.node(oi);
    if (!ip) return make_error(ip.error());
    (*ip)->i.i_blocks.set((*ip)->i.i_blocks.get() - 1);
    w.mark_dirty(oi);
    return {};
  }

  // do_recover_data(): the node's block addresses replace the tree's.
  Status do_recover_data(nid_t ino, const Node& src) {
    const std::uint32_t ofs = ofs_of(src);
    if (ofs == 0) {
      F2FSCORE_TRY(recover_inline_xattr(ino, src));
    } else if (ofs == kXattrNodeOffset) {
      return recover_xattr_node(ino, src);
    }
    auto inl = recover_inline_data(ino, src);
    if (!inl) return make_error(inl.error());
    if (*inl) return {};
    auto ip = w.node(ino);
    if (!ip) return make_error(ip.error());
    if (Writer::Impl::compressed(**ip)) return beyond("replaying the data of a compressed file");
    const std::uint32_t api = w.addrs_per_inode(**ip);
    const std::uint32_t xw = w.extra_words(**ip);
    const std::uint64_t start = start_bidx_of_node(ofs, api, kDefAddrsPerBlock);
    const std::uint32_t count = ofs == 0 ? api : kDefAddrsPerBlock;
    nid_t dn = 0;
    std::uint32_t slot0 = 0;
    auto m = w.map(ino, start, true, &dn, &slot0);
    if (!m) return make_error(m.error());
    auto dp = w.node(dn);
    if (!dp) return make_error(dp.error());
    Node* d = *dp;
    if (ofs_of(*d) != ofs || slot0 != 0)
      return corrupt(fmt("inode %llu: node offset %llu in the tree, %llu in the fsynced node", ino, ofs_of(*d), ofs));
    auto slot = [&](std::uint32_t i) -> Le32& { return dn == ino ? d->i.i_addr[xw + i] : d->dn.addr[i]; };
    auto add_blocks = [&](std::int64_t k) -> Status {
      auto p = w.node(ino);
      if (!p) return make_error(p.error());
      (*p)->i.i_blocks.set(static_cast<std::uint64_t>(static_cast<std::int64_t>((*p)->i.i_blocks.get()) + k));
      w.mark_dirty(ino);
      return {};
    };
    // f2fs_truncate_data_blocks_range(dn, 1) on one slot.
    auto truncate_slot = [&](std::uint32_t i) -> Status {
      const block_t cur = slot(i).get();
      if (cur == kNullAddr) return {};
      if (cur == kNewAddr) --w.reserved_blocks;
      else w.invalidate(cur);
      slot(i).set(kNullAddr);
      return add_blocks(-1);
    };
    auto reserve_slot = [&](std::uint32_t i) -> Status {
      slot(i).set(kNewAddr);
      ++w.reserved_blocks;
      return add_blocks(1);
    };
    for (std::uint32_t i = 0; i < count; ++i) {
      const std::uint64_t index = start + i;
      const block_t sa = slot(i).get();
      const block_t da = ofs == 0 ? src.i.i_addr[xw + i].get() : src.dn.addr[i].get();
      if (sa == kCompressAddr || da == kCompressAddr) return beyond("replaying compressed clusters");
      if (valid_addr(sa) && !in_main(sa)) return corrupt(fmt("inode %llu block %llu at %llu outside the main area", ino, index, sa));
      if (valid_addr(da) && !in_main(da))
        return corrupt(fmt("fsynced inode %llu block %llu at %llu outside the main area", ino, index, da));
      if (sa == da) continue;
      if (da == kNullAddr) {
        F2FSCORE_TRY(truncate_slot(i));
        continue;
      }
      {
        auto p = w.node(ino);
        if (!p) return make_error(p.error());
        if (!((*p)->i.i_advise & advise::keep_size) && (*p)->i.i_size.get() <= index * kBlockSize) {
          (*p)->i.i_size.set((index + 1) * kBlockSize);
          w.mark_dirty(ino);
        }
      }
      if (da == kNewAddr) {
        F2FSCORE_TRY(truncate_slot(i));
        F2FSCORE_TRY(reserve_slot(i));
        continue;
      }
      if (sa == kNullAddr) F2FSCORE_TRY(reserve_slot(i));
      F2FSCORE_TRY(check_index_in_prev_nodes(da));
      if (w.block_valid(da))
        return corrupt(fmt("fsynced inode %llu block %llu at %llu is still in use elsewhere", ino, index, da));
      const block_t cur = slot(i).get();
      if (cur == kNewAddr) --w.reserved_blocks;
      else w.invalidate(cur);
      F2FSCORE_TRY(w.claim(da, {da, dn, static_cast<std::uint16_t>(i), w.nm.get(dn).version, false}));
      slot(i).set(da);
    }
    w.mark_dirty(dn);
    return {};
  }

  Status run() {
    auto chain = read_chain();
    if (!chain) return make_error(chain.error());
    if (chain->empty()) return {};
    F2FSCORE_TRY(find_fsync_dnodes(*chain));
    // Nothing recovered may be overwritten before the checkpoint commits:
    // every log opens a fresh segment on its next write, and no segment the
    // chain or its blocks touch is opened (the kernel's
    // f2fs_allocate_new_segments() after do_recover_data).
    w.sm.close_cursegs();
    auto keep = [&](block_t b) {
      if (valid_addr(b) && in_main(b)) w.sm.hold(w.seg_of(b));
    };
    for (const auto& c : *chain) {
      keep(c.addr);
      const Node& p = *c.n;
      const std::uint32_t o = ofs_of(p);
      if (o == 0) {
        for (std::uint32_t i = 0; i < kDefAddrsPerInode; ++i) keep(p.i.i_addr[i].get());
      } else if (o != kXattrNodeOffset && is_dnode_ofs(o)) {
        for (std::uint32_t i = 0; i < kDefAddrsPerBlock; ++i) keep(p.dn.addr[i].get());
      }
    }
    // recover_data(): every node of an inode up to its last fsync mark.
    for (const auto& c : *chain) {
      const Node& p = *c.n;
      const nid_t ino = p.footer.ino.get();
      auto it = entries.find(ino);
      if (it == entries.end() || it->second.done) continue;
      if (ofs_of(p) == 0) F2FSCORE_TRY(recover_inode(ino, p));
      if (it->second.last_dentry == c.addr) F2FSCORE_TRY(recover_dentry(ino, p));
      F2FSCORE_TRY(do_recover_data(ino, p));
      ++w.stats.recovered_nodes;
      if (it->second.blkaddr == c.addr) it->second.done = true;
    }
    // The chain is consumed: a checkpoint (CP_RECOVERY) makes the result
    // durable and leaves no chain behind.
    return w.checkpoint(false);
  }
};

}  // namespace

Status Writer::Impl::recover_fsync() {
  if (fsync_recovering)
    return make_error(Errc::corrupt, "writer: roll-forward found fsynced nodes again after its own checkpoint");
  fsync_recovering = true;
  resolve_ipu_defaults();
  auto r = Recovery{*this, {}}.run();
  fsync_recovering = false;
  map_memo = {};  // recovery replaced inode pages wholesale
  return r;
}

Status Writer::fsync(nid_t ino) {
  F2FSCORE_WRITER_LOCK(impl_);
  F2FSCORE_TRY(impl_->usable(true));
  return impl_->fsync_file(ino, false);
}

Status Writer::fdatasync(nid_t ino) {
  F2FSCORE_WRITER_LOCK(impl_);
  F2FSCORE_TRY(impl_->usable(true));
  return impl_->fsync_file(ino, true);
}

}  // namespace f2fscore
