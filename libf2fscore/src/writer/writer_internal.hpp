// Private state of the writer (writer/*.cpp): the node manager (NAT entries,
// free nids, the node page cache), the segment manager (SIT state,
// summaries, the active logs and block allocation), the page cache, the fsync
// and GC state.
#pragma once

#include <array>
#include <functional>
#include <memory>
#include <mutex>
#include <optional>
#include <span>
#include <string>
#include <unordered_map>
#include <unordered_set>
#include <vector>

#include "f2fscore/disk/checkpoint.hpp"
#include "f2fscore/disk/dentry.hpp"
#include "f2fscore/disk/node.hpp"
#include "f2fscore/disk/superblock.hpp"
#include "f2fscore/fscrypt.hpp"
#include "f2fscore/iostat.hpp"
#include "f2fscore/meta_rebuild.hpp"
#include "f2fscore/volume.hpp"
#include "f2fscore/writer.hpp"
#include "io/align_device.hpp"
#include "writer/node_manager.hpp"
#include "writer/segment_manager.hpp"

namespace f2fscore {

namespace wr {
using disk::kBlocksPerSeg;
inline constexpr std::uint8_t kHotData = 0, kWarmData = 1, kColdData = 2, kHotNode = 3, kWarmNode = 4, kColdNode = 5;

/// Where a file block's pointer lives (get_node_path() in fs/f2fs/node.c):
/// level 0 the inode, 1 a direct node under i_nid[offset[0]], 2 through an
/// indirect node, 3 through the double indirect node. noffset: the nodes'
/// offsets in the inode's node tree (the footer's offset field).
struct NodePath {
  int level = 0;
  std::uint32_t offset[4] = {};
  std::uint32_t noffset[4] = {};
};
NodePath node_path(std::uint64_t index, std::uint32_t addrs_per_inode, std::uint32_t addrs_per_block);

/// Why a data block is being written: the inputs of the placement rules
/// (writer/ipu.cpp, as f2fs_should_update_inplace() sees a write).
struct WriteContext {
  enum class Origin : std::uint8_t {
    writeback,       ///< async writeback of the page cache (cache full, periodic)
    sync_writeback,  ///< writeback for fsync/fdatasync/sync/checkpoint (REQ_SYNC)
    direct,          ///< WriteFlags::direct
    gc,              ///< a GC move
  } origin = Origin::writeback;
  bool fsync = false;      ///< inside fsync() (FI_NEED_IPU / is_fsync_dnode)
  /// The block belongs to a compressed cluster (or one being made plain):
  /// out of place whatever the policy, as f2fs_write_compressed_pages()
  /// writes them.
  bool no_ipu = false;
  bool fdatasync = false;  ///< inside fdatasync()
  std::uint64_t file_dirty_pages = 0;  ///< the file's dirty pages when its writeback began
  /// (writeback of a full cache) The file a write is filling: when it is
  /// compressed, its last dirty cluster stays dirty while not every page of
  /// it is, so that an appending writer fills it before it is written (a
  /// partial cluster goes plain). Linux's page cache, far larger, writes a
  /// file's clusters back after they filled.
  nid_t defer_tail_of = 0;
};

/// (stats) The writer's device: classifies every request for iostat
/// (IoRequest::tag, iostat.hpp) and forwards it. Requests the writer tags
/// itself keep their tag (data, node, checkpoint node); untagged reads are
/// metadata reads (FS_META_READ_IO), untagged writes metadata writes
/// (FS_META_IO);
/// flush and discard stay untagged (iostat counts them as fs flush and fs
/// discard). Without it the volume reader's untagged reads would count as
/// application direct reads. An IostatDevice below is called through its
/// own type (its gate inline: one load when iostat is off), not through
/// BlockDevice& (which would add its virtual forward to every call).
///
/// (direct I/O) On a device that wants aligned buffers
/// (DeviceInfo::buffer_alignment > 1: O_DIRECT, FILE_FLAG_NO_BUFFERING),
/// a read or write whose buffer is not aligned goes through an aligned
/// copy (detail::AlignDevice, below the tagging): the metadata paths use
/// ordinary buffers; data from the page cache, and direct writes from an
/// aligned caller buffer, pass straight through. Offsets and lengths are
/// the device's to check (whole 4 KiB blocks in the writer).
struct TagDevice final : BlockDevice {
  explicit TagDevice(BlockDevice& d) noexcept
      : inner(d), gate(dynamic_cast<IostatDevice*>(&d)), align(d.info().buffer_alignment), aligner(d) {}
  BlockDevice& inner;
  IostatDevice* gate;  ///< `inner` when it is an IostatDevice, else null
  std::uint32_t align;  ///< the device's buffer alignment (1: any)
  detail::AlignDevice aligner;  ///< `inner` behind aligned copies
  std::uint16_t write_tag = io_tag(IostatType::fs_meta_io);
  /// Writes and discards submitted since the handle was made: any of them
  /// after the last checkpoint makes the volume dirty (Impl::dirty()).
  std::uint64_t changes = 0;
  const DeviceInfo& info() const noexcept override { return inner.info(); }
  void submit(IoRequest& r) noexcept override {
    if (r.op == IoOp::write || r.op == IoOp::discard || r.op == IoOp::write_zeroes) ++changes;
    if (r.tag == 0) {
      if (r.op == IoOp::read) r.tag = io_tag(IostatType::fs_meta_read_io);
      else if (r.op == IoOp::write) r.tag = write_tag;
    }
    if (align > 1 && r.buf != nullptr && reinterpret_cast<std::uintptr_t>(r.buf) % align != 0 &&
        (r.op == IoOp::read || r.op == IoOp::write)) [[unlikely]]
      return aligner.submit(r);
    forward(r);
  }
  void forward(IoRequest& r) noexcept {
    if (gate != nullptr) gate->submit(r);
    else inner.submit(r);
  }
  std::size_t poll(bool wait) noexcept override { return gate != nullptr ? gate->poll(wait) : inner.poll(wait); }
  std::size_t in_flight() const noexcept override { return gate != nullptr ? gate->in_flight() : inner.in_flight(); }
  std::uint64_t next_data(std::uint64_t offset, std::uint64_t end) noexcept override {
    return inner.next_data(offset, end);
  }
  std::uint64_t next_hole(std::uint64_t offset, std::uint64_t end) noexcept override {
    return inner.next_hole(offset, end);
  }
  int host_descriptor() const noexcept override { return inner.host_descriptor(); }
};

/// The page cache (writer/cache.cpp); opaque elsewhere.
struct PageCache;
struct PageCacheDeleter {
  void operator()(PageCache* p) const noexcept;
};

/// The quota files in memory (writer/quota.cpp); opaque elsewhere.
struct QuotaFiles;
struct QuotaFilesDeleter {
  void operator()(QuotaFiles* p) const noexcept;
};

/// Coalesces 4 KiB block writes into large asynchronous requests
/// (writer/cache.cpp): blocks added at consecutive addresses with the same
/// tag join one request (up to `max_blocks`); up to `depth` requests are in
/// flight (the page cache's: 1 MiB, 16; the defaults: 2 MiB, 8). The
/// data is copied at add(), so the caller's buffer may change afterwards;
/// add_ref() and add_run() write from the caller's memory instead.
/// drain() submits what is pending and waits for every request; it returns
/// the first failure since the last drain().
class BatchWriter {
 public:
  explicit BatchWriter(BlockDevice& dev, std::uint32_t max_blocks = 512, std::uint32_t depth = 8);
  ~BatchWriter();
  BatchWriter(const BatchWriter&) = delete;
  BatchWriter& operator=(const BatchWriter&) = delete;
  Status add(disk::block_t addr, const std::uint8_t* block, std::uint16_t tag);
  /// One block at `addr` written from `block` itself (no copy) when it
  /// meets the device's buffer alignment, else as add(): blocks added so
  /// at consecutive addresses from consecutive memory join one request.
  /// `block` stays unchanged and allocated until the request is done:
  /// wait_buffer() before changing or reusing it.
  Status add_ref(disk::block_t addr, const std::uint8_t* block, std::uint16_t tag);
  /// Waits until no request pending or in flight reads the block at `p`
  /// (submitting the open run when it holds it).
  void wait_buffer(const std::uint8_t* p);
  /// `n` blocks at `addr` straight from `data` (no copy) when `data` meets
  /// the device's buffer alignment, else as add() block by block. The
  /// requests are queued without a poll, so that those of one call reach
  /// an asynchronous backend together, with the wait of the caller's
  /// drain() (one io_uring_enter for the lot). The caller keeps `data`
  /// unchanged until drain().
  Status add_run(disk::block_t addr, const std::uint8_t* data, std::uint32_t n, std::uint16_t tag);
  Status drain();
  /// Submits the pending run without waiting; returns the failures of the
  /// requests finished so far (the rest are reported by a later drain()).
  Status kick();
  bool idle() const noexcept;  ///< nothing pending or in flight
  std::uint64_t requests() const noexcept;  ///< write requests submitted so far

 private:
  struct State;
  std::unique_ptr<State> s_;
};

/// Nesting of public calls on this thread's handle (F2FSCORE_WRITER_LOCK), so
/// that a periodic checkpoint runs only at the start of an outermost call.
struct DepthGuard {
  std::uint32_t& d;
  // An outermost call starts without a clock reading (Impl::now()).
  DepthGuard(std::uint32_t& x, std::uint64_t& call_now) : d(x) {
    if (d++ == 0) call_now = 0;
  }
  ~DepthGuard() { --d; }
  DepthGuard(const DepthGuard&) = delete;
  DepthGuard& operator=(const DepthGuard&) = delete;
};

// ---- writer/compress.cpp: the codecs of compressed clusters ----
/// i_compress_algorithm values (enum compress_algorithm_type in fs/f2fs/f2fs.h).
inline constexpr std::uint8_t kComprLzo = 0, kComprLz4 = 1, kComprZstd = 2, kComprLzoRle = 3;
/// Whether this build has the encoder of `algorithm`.
bool codec_built(std::uint8_t algorithm) noexcept;
/// invalid_argument for an algorithm outside [0, 3], unsupported for one
/// not built.
Status check_codec(std::uint8_t algorithm);
/// Compresses the cluster `in` (whole blocks, at least 2) as
/// f2fs_compress_pages() does: `out` receives the compressed blocks (the
/// 24-byte header, cdata, zeros to the block's end) and the count of blocks
/// is returned; 0 when the cluster saves no block (stored plain then).
/// `chksum`: COMPRESS_CHKSUM (f2fs_crc32 of cdata in the header).
Result<std::uint32_t> compress_cluster(std::uint8_t algorithm, bool chksum, std::span<const std::uint8_t> in,
                                       std::vector<std::uint8_t>& out);

/// The inode's largest extent (i_ext) dropped when it covers file block
/// `index`, as __drop_largest_extent() in fs/f2fs/extent_cache.c on every
/// block address update (fsck.f2fs asserts "wrong ext" otherwise).
void drop_largest_extent(disk::Node& in, std::uint64_t index);

// ---- writer/fscrypt.cpp: what Linux shows of encrypted names without the key ----
namespace fscrypt {
/// SHA-256 (FIPS 180-4) of `data`.
std::array<std::uint8_t, 32> sha256(std::span<const std::uint8_t> data);
/// base64url without padding (RFC 4648 section 5), as
/// fscrypt_base64url_encode() in fs/crypto/fname.c.
std::string base64url_encode(std::span<const std::uint8_t> in);
/// The inverse; nullopt for a character outside the alphabet or stray bits.
std::optional<std::vector<std::uint8_t>> base64url_decode(std::string_view in);
/// The no-key name Linux 6.1 shows for the stored (ciphertext) name of an
/// entry with dentry hash `hash` (fscrypt_fname_disk_to_usr()): base64url
/// of the hash (little-endian), a zero word, then the name itself when it
/// is at most 149 bytes, else its first 149 bytes and the SHA-256 of the
/// rest. Symlink targets use hash 0.
std::string nokey_name(std::string_view ciphertext, std::uint32_t hash);
/// Whether `name` has the length of a no-key name (12 to 252 characters).
bool nokey_name_plausible(std::string_view name);
}  // namespace fscrypt

/// Milliseconds of a monotonic clock (periodic checkpoints).
std::uint64_t mono_ms();
/// The IoRequest tag of a data write for `ctx` (iostat.hpp io_tag()).
std::uint16_t data_write_tag(const WriteContext& ctx);
}  // namespace wr

struct Writer::Impl {
  wr::TagDevice tagged;  ///< (stats) `dev` is this: classifies the writer's I/O for iostat
  BlockDevice& dev;
  /// (stats) The Iostat of `dev` when the caller's device is an
  /// IostatDevice: application-level bytes (APP_BUFFERED_IO,
  /// APP_BUFFERED_READ_IO) are accounted there, as f2fs_file_write_iter()
  /// and f2fs_file_read_iter() do.
  Iostat* iostat = nullptr;
  MountOptions opts;
  std::unique_ptr<Volume> vol;
  disk::SuperBlock sb{};
  disk::Checkpoint cp{};
  std::uint64_t cp_ver_stamp = 0;  ///< cp_ver written in node footers
  std::uint64_t main_blk = 0;
  nid_t max_nid = 0;
  std::uint32_t csum_seed = 0;
  /// The volume has the ro feature (mounted with MountOptions::build_ro_image):
  /// two active logs, hot data and hot node; no SSA, no GC or SSR.
  bool ro_image = false;
  /// Whether log `t` (0..5) is written: all six, or the two of an ro volume.
  bool log_active(std::uint8_t t) const noexcept { return !ro_image || t == wr::kHotData || t == wr::kHotNode; }
  /// The log a block of log type `t` goes to (__get_segment_type_2() in
  /// fs/f2fs/segment.c for an ro volume: data to hot data, nodes to hot node).
  std::uint8_t log_for(std::uint8_t t) const noexcept {
    return !ro_image ? t : t < wr::kHotNode ? wr::kHotData : wr::kHotNode;
  }
  wr::NodeManager nm;     ///< NAT entries, free nids, node pages (writer/node_manager.hpp)
  wr::SegmentManager sm;  ///< SIT state, summaries, active logs, allocation (writer/segment_manager.hpp)
  std::uint64_t reserved_blocks = 0;  ///< NEW_ADDR slots: blocks reserved for pages not yet written
  std::uint64_t pending_new_nodes = 0;  ///< nodes made since the checkpoint, not yet on disk
  std::uint32_t valid_inodes = 0;
  std::vector<nid_t> orphans;
  bool unmounted = false;
  /// The mount changed the volume in memory (orphans freed, roll-forward,
  /// counts taken from a walk of the tree): the next checkpoint is due
  /// whatever else changes.
  bool changed_at_mount = false;
  /// tagged.changes and sm.edits() when the last checkpoint ended (or the
  /// mount loaded the volume).
  std::uint64_t changes_at_checkpoint = 0, sm_edits_at_checkpoint = 0;
  /// Whether anything changed since the last checkpoint: the kernel's
  /// SBI_IS_DIRTY, kept as what the next checkpoint would write (NAT or
  /// SIT entries, node or data pages, quota usage, counts that differ from
  /// the pack's, prefree segments, any write or discard to the device since
  /// it, a change made by the mount). A checkpoint that finds it false
  /// changes nothing but the pack's version, and is skipped where the
  /// kernel skips it (writer/mount.cpp).
  bool dirty() const;
  WriterStats stats;
  /// Every public call holds it (recursive: public calls call each other).
  std::recursive_mutex mu;

  // ---- writer/cache.cpp: page cache, periodic checkpoints, discard ----
  std::unique_ptr<wr::PageCache, wr::PageCacheDeleter> cache;
  std::uint64_t last_checkpoint_time = 0;  ///< interval_ms() of the last checkpoint (or mount)
  std::uint32_t call_depth = 0;            ///< public calls in progress (F2FSCORE_WRITER_LOCK)
  /// After a checkpoint: reopens the volume (superblock, the new pack) and
  /// resets what a checkpoint resets (logs as the pack says, free segments,
  /// nids freed since, the change sets) from memory.
  Status reload_committed();
  /// The active logs' segments' summaries as dirty summaries (load(),
  /// reload_committed()): the next checkpoint writes them.
  /// `restore_node_summaries`: at mount, rebuild the node logs' summaries from
  /// their blocks' footers when the checkpoint holds none (no CP_UMOUNT_FLAG).
  Status load_curseg_summaries(bool restore_node_summaries);
  /// load() when the checkpoint's counts disagree with the SIT.
  Status load_from_tree();
  /// The handle's coalescing writer (data writeback, direct writes, node
  /// blocks at checkpoints); created with the cache. Writeback of a full
  /// cache leaves its last requests in flight: code that reads data blocks
  /// from the device other than through read_file_block() (which does it)
  /// must io_batch().drain() first.
  wr::BatchWriter& io_batch();
  /// Writes whole blocks [index, index + data.size() / 4 KiB) of `ino`
  /// straight to the device (WriteFlags::direct), dropping cached pages of
  /// the range first; the blocks are on the device when it returns.
  Status direct_write(nid_t ino, std::uint64_t index, std::span<const std::uint8_t> data, std::uint8_t type);
  /// The block just read from or written to the device as a clean page.
  void cache_fill(nid_t ino, std::uint64_t index, const std::uint8_t* block);
  /// Segments with no valid block that were not free at the last
  /// checkpoint and are no active log (the kernel's prefree segments).
  std::vector<std::uint32_t> prefree_segments() const;
  /// Discards `segs` (after the checkpoint that freed them), opts.discard.
  void discard_segments(const std::vector<std::uint32_t>& segs);

  // ---- writer/quota.cpp: quota usage (docs/writer.md) ----
  /// The quota files as loaded at mount and changed since; null on a
  /// volume without the quota feature.
  std::unique_ptr<wr::QuotaFiles, wr::QuotaFilesDeleter> quota;
  /// At a read-write mount (quota feature): reads the quota files.
  /// Errc::corrupt when a file's magic or tree is wrong, or the checkpoint
  /// has CP_QUOTA_NEED_FSCK_FLAG (run f2fscore-fsck), nothing written.
  Status quota_load();
  /// Node page `n` was read from the device: an inode's ids and blocks are
  /// what the quota files hold for it.
  void quota_seen(nid_t n);
  /// Charges the change of inode page `n` since it was last charged (ids
  /// and i_blocks), before the page is written and may be evicted.
  void quota_settle(nid_t n);
  /// Whether `ino` is one of the superblock's quota files (s_quota_inum[]);
  /// the quota files are charged to nobody and their flags and ids are fixed.
  bool is_quota_file(nid_t ino) const {
    for (std::uint32_t q = 0; q < disk::kMaxQuotas; ++q)
      if (ino != 0 && sb.qf_ino[q].get() == ino) return true;
    return false;
  }
  /// Inode `n` is freed: its charge is returned (dquot_free_inode(),
  /// dquot_free_block() at f2fs_evict_inode()).
  void quota_release(nid_t n);
  /// At a checkpoint, before the node pages go: every dirty inode settled,
  /// the changed entries written into the quota files through the file
  /// path (new ids inserted into the tree, the file grown as the kernel's
  /// quota writes grow it).
  Status quota_flush();
  /// Usage changed since the last quota_flush() (a checkpoint writes it).
  bool quota_dirty() const;
  /// The quota limits allow `blocks` more blocks for inode `ino` (the
  /// enforced types, MountOptions::usrquota...): else Errc::no_space with
  /// EDQUOT. Starts a soft limit's grace time when passing it.
  Status quota_alloc_block(nid_t ino, std::uint64_t blocks = 1);
  /// The same for one more inode of these ids (dquot_alloc_inode()).
  Status quota_alloc_inode(std::uint32_t uid, std::uint32_t gid, std::uint32_t projid);
  /// The same for inode `ino` moving to these ids (__dquot_transfer()).
  Status quota_transfer(nid_t ino, std::uint32_t uid, std::uint32_t gid, std::uint32_t projid);
  /// Directory `dir` with F2FS_PROJINHERIT_FL takes a name of inode `ino`
  /// only when their project ids are equal: else Errc::invalid_argument
  /// with EXDEV, as f2fs_link() and f2fs_rename() refuse it.
  Status quota_same_project(nid_t dir, nid_t ino);
  /// The project id an inode page carries (0 without project_quota or
  /// room for i_projid in its extra attributes; F2FS_DEF_PROJID).
  std::uint32_t projid_of(const disk::Node& in) const;
  /// i_projid fits in the inode's extra attributes (F2FS_FITS_IN_INODE()).
  bool projid_fits(const disk::Node& in) const;

  // ---- writer/ipu.cpp: placement policy ----
  IpuOptions ipu;  ///< resolved (no kKernelDefault left)
  std::unordered_set<nid_t> opu_write;  ///< FI_OPU_WRITE: files defragment() is rewriting

  // ---- writer/gc.cpp: SSR and GC (docs/gc.md) ----
  std::uint64_t gc_move_mtime = 0;               ///< while GC moves a block: its old segment's mtime
  bool in_gc = false;
  std::uint64_t last_call_time = 0;              ///< now() at the last public call (idle detection)
  /// The system clock's seconds, read once per outermost public call
  /// (now(): SIT mtimes are stamped per block); 0: not read yet.
  mutable std::uint64_t call_now_s = 0;
  /// (stats.checkpoints << 32 | free_sections()) when foreground GC last found
  /// nothing to move: not retried until one of them changes.
  std::uint64_t gc_futile_at = ~std::uint64_t{0};

  /// Starts the segment manager's SIT mtime clock, no GC victim (load()).
  void gc_load();
  /// need_SSR() of fs/f2fs/segment.c (6.1): free sections at or under the
  /// dirty node and dentry sections + min_ssr_sections + reserved sections.
  bool need_ssr() const;
  /// Wholly free sections not taken by a log (free_sections() in
  /// fs/f2fs/segment.h; segments freed since the checkpoint are not free).
  std::uint32_t free_sections() const { return sm.free_sections(); }
  std::uint32_t reserved_sections() const;
  /// has_not_enough_free_secs() of fs/f2fs/segment.h (6.1), plus the
  /// sections the page cache's dirty data pages need (docs/gc.md).
  bool has_not_enough_free_secs(std::uint32_t freed, std::uint32_t needed) const;
  /// Errc::no_space when `blocks` more blocks would pass user_block_count
  /// (valid + NEW_ADDR + unwritten new nodes; inc_valid_block_count()).
  Status check_space(std::uint64_t blocks) const;
  /// valid_user_blocks() in fs/f2fs/segment.h (total_valid_block_count):
  /// blocks valid in the SIT, reserved (NEW_ADDR) and new nodes not yet
  /// written (inc_valid_block_count(), inc_valid_node_count()).
  std::uint64_t valid_user_blocks() const { return sm.valid_blocks() + reserved_blocks + pending_new_nodes; }
  /// At a safe point (no operation in flight): background GC when idle,
  /// foreground GC when free sections run low (f2fs_balance_fs()).
  Status balance_fs();
  /// The writer's inputs to the segment manager's allocation for log
  /// `type`: LFS only for the warm node log without CP_CRC_RECOVERY_FLAG,
  /// no SSR while rolling forward, need_ssr().
  wr::AllocRules alloc_rules(std::uint8_t type) const;
  /// The address alloc_block(type) gives next (NEXT_FREE_BLKADDR), opening
  /// a segment for the log if it has none (SegmentManager::next_block()).
  Result<disk::block_t> next_block(std::uint8_t type);
  /// alloc_block()'s body: LFS or SSR (SegmentManager::allocate_block()).
  Result<disk::block_t> allocate_block(std::uint8_t type);
  Status new_segment(std::uint8_t type);
  /// get_mtime(): the segment manager's SIT clock at now().
  std::uint64_t get_mtime() const;

  // ---- writer/fsync.cpp: fsync chains and roll-forward ----
  /// checkpoint_ver the fields below belong to; a new checkpoint resets them.
  std::uint64_t fsync_epoch = ~std::uint64_t{0};
  /// Where the warm node log's fsync chain continues (0: no chain yet in
  /// this checkpoint; it must start at the checkpoint's warm node curseg).
  disk::block_t fsync_chain_next = 0;
  /// Inodes written with the fsync mark since the checkpoint (the NAT
  /// entry's HAS_FSYNCED_INODE), and nodes made since the checkpoint that
  /// fsync wrote (not IS_CHECKPOINTED although they have an address).
  std::unordered_set<nid_t> fsynced_inodes, fsync_new_nodes;
  /// Inodes that lost a node (truncate, xattr removal), with the
  /// checkpoint_ver then: a node chain cannot express a removed node, so
  /// their fsync in that checkpoint takes a checkpoint.
  std::unordered_map<nid_t, std::uint64_t> fsync_lost_nodes;
  /// Files with data written out of place since their last fsync (the
  /// kernel's FI_APPEND_WRITE: set by each such write, GC moves included,
  /// cleared by the file's fsync only, not by checkpoints).
  std::unordered_set<nid_t> append_written;
  bool fsync_recovering = false;
  /// After node writeback: no fsync chain continues in this checkpoint (a
  /// written-back node in the warm node log ends roll-forward's chain, and
  /// nodes made since the checkpoint have addresses now although they are
  /// not IS_CHECKPOINTED), so every later fsync in it takes a checkpoint.
  void end_fsync_chain();

  // ---- writer/ns.cpp: namespace, open files ----
  std::unordered_map<nid_t, std::uint32_t> open_count;
  /// The last name of `ino` went (unlink, rename over it): i_links 0; freed
  /// now, or kept on the orphan list while open (f2fs_drop_nlink() then
  /// f2fs_evict_inode() at the last iput).
  Status drop_inode(nid_t ino);
  /// At mount: frees the inodes of the checkpoint's orphan list, as
  /// f2fs_recover_orphan_inodes() in fs/f2fs/checkpoint.c.
  Status recover_orphans();
  /// At unmount: every file is closed; open-unlinked inodes are freed.
  Status release_all();

  Impl(BlockDevice& d, const MountOptions& o)
      : tagged(d), dev(tagged), iostat(dynamic_cast<IostatDevice*>(&d) ? &dynamic_cast<IostatDevice*>(&d)->stats() : nullptr),
        opts(o) {
    nm.set_bounds(o.node_cache_pages, kNatCacheBlocks);
  }
  /// NAT blocks the node manager keeps clean past their changes (5.4 KiB each).
  static constexpr std::size_t kNatCacheBlocks = 1024;

  /// Errc::invalid_argument after unmount, Errc::read_only on a read-only
  /// mount when `modify`; else ok. With `modify`, at the start of an
  /// outermost call, takes a periodic checkpoint when one is due, then runs
  /// balance_fs() (GC when free sections run low, as f2fs_balance_fs()).
  Status usable(bool modify);

  // writer/premount.cpp: what a read-write mount checks before its first
  // write, and the allocation guards.
  /// In load(), before the SIT and NAT are loaded: preen's fast check
  /// (fsck::Options::fast_only) and the active logs against the SIT.
  /// Damage refuses the mount (Errc::corrupt naming the first problem and
  /// f2fscore-fsck) or, per opts.on_damage, mounts read-only or anyway.
  Status premount_check();
  /// Nids whose NAT entry at the last checkpoint is in use but that
  /// load_from_tree() found unreached: never handed out by alloc_nid().
  std::unordered_set<nid_t> unreached_nids;
  /// The pre-mount check found checkpoint counts that disagree: load()
  /// takes them from a walk of the tree.
  bool recount = false;
  /// Set when an allocation guard tripped: every later change and every
  /// checkpoint fails with it (the volume stays at the last checkpoint).
  std::string guard_error;
  /// Records `what` as guard_error and returns Errc::corrupt with it.
  Status guard_trip(std::string what);
  /// Errc::corrupt when a guard tripped earlier.
  Status guard_status() const;

  // writer/mount.cpp
  Status load();
  Status checkpoint(bool umount);
  /// The dirty page of node `n` to a new block of its node log, clean after
  /// (the checkpoint's copy when `for_checkpoint`, else node writeback).
  /// Errors: no_space, io, the guards'.
  Status write_node_page(nid_t n, bool for_checkpoint);
  /// Every dirty node page to its log, no checkpoint (node writeback).
  Status write_back_nodes();
  Result<disk::block_t> alloc_block(std::uint8_t type);
  void invalidate(disk::block_t addr);
  /// Records a block written: valid in the SIT, its summary entry (node
  /// blocks: the nid; data: the dnode, its NAT version, the slot).
  Status claim(disk::block_t addr, const meta::BlockUse& u);
  bool in_main(disk::block_t addr) const { return addr >= main_blk && addr < main_blk + sm.main_blocks(); }
  std::uint32_t seg_of(disk::block_t addr) const { return static_cast<std::uint32_t>((addr - main_blk) / wr::kBlocksPerSeg); }
  std::uint32_t off_of(disk::block_t addr) const { return static_cast<std::uint32_t>((addr - main_blk) % wr::kBlocksPerSeg); }
  /// Whether main-area block `addr` is valid now.
  bool block_valid(disk::block_t addr) const { return in_main(addr) && sm.is_valid(seg_of(addr), off_of(addr)); }
  Result<nid_t> alloc_nid();
  /// Node `nid`'s page, from the node cache or read into it (read_node()).
  Result<disk::Node*> node(nid_t nid) {
    if (disk::Node* p = nm.cached_page(nid)) return p;
    return read_node(nid);
  }
  /// Reads node `nid` through its NAT entry into the node cache. Errors:
  /// corrupt (nid outside the NAT, an entry with no node block in the main
  /// area, a block whose footer names another nid), io.
  Result<disk::Node*> read_node(nid_t nid);
  disk::Node* new_node(nid_t nid, nid_t ino, std::uint32_t ofs, bool dir);
  void mark_dirty(nid_t nid) { nm.mark_dirty(nid); }
  void free_node(nid_t nid);
  std::uint64_t now() const;
  /// now() with nanoseconds (0 under MountOptions::fixed_time), as
  /// current_time() stamps inodes.
  Timespec now_ts() const;
  /// Milliseconds for the periodic checkpoint: MountOptions::clock, else
  /// the monotonic clock (wr::mono_ms()).
  std::uint64_t interval_ms() const;
  /// i_ctime (and with `mtime` i_mtime) of `in` := now_ts().
  void set_ctime(disk::Node& in, bool mtime = false);
  bool ok() const { return !unmounted; }

  // writer/file.cpp
  std::uint32_t addrs_per_inode(const disk::Node& in) const;
  /// Data slots used in each direct node of `in` (DEF_ADDRS_PER_BLOCK,
  /// aligned down to the cluster for a compressed file).
  std::uint32_t addrs_per_block(const disk::Node& in) const;
  /// The largest file `in` can hold, in blocks (every pointer of its tree).
  std::uint64_t max_file_blocks(const disk::Node& in) const;
  std::uint32_t extra_words(const disk::Node& in) const;
  std::uint32_t inline_offset(const disk::Node& in) const;
  std::uint32_t max_inline(const disk::Node& in) const;
  /// Address of file block `index` (0 for a hole); with `create`, the
  /// nodes on the way are made and *dnode/*slot say where the pointer is.
  Result<disk::block_t> map(nid_t ino, std::uint64_t index, bool create, nid_t* dnode = nullptr, std::uint32_t* slot = nullptr);
  /// The direct node map() found last (a file written or read in order
  /// asks the same one for every block of its range): `first` is the file
  /// block of its slot 0. Trusted only while the node's footer still names
  /// ino, nid and offset; free_node() forgets it.
  struct MapMemo {
    nid_t ino = 0, dn = 0;
    std::uint64_t first = 0;
    std::uint32_t api = 0, apb = 0, noffset = 0;
  } map_memo;
  /// Reads 4 KiB file block `index` of `ino` into out[0, 4096): the cached
  /// page, zeros for a hole, else the device (the block then cached).
  /// Errc::corrupt for an address outside the main area.
  Status read_file_block(nid_t ino, std::uint64_t index, std::uint8_t* out) { return read_file_blocks(ino, index, 1, out); }
  /// Blocks [index, index + count) into out[0, count * 4096), as
  /// read_file_block() each; blocks not cached whose addresses follow each
  /// other on the device are read with one request (up to `count`).
  Status read_file_blocks(nid_t ino, std::uint64_t index, std::uint64_t count, std::uint8_t* out);
  /// Writes one 4 KiB block of a file to where place_data() says (the
  /// device at once; the page cache calls this at writeback).
  Status write_file_block(nid_t ino, std::uint64_t index, const std::uint8_t* data, std::uint8_t type,
                          const wr::WriteContext& ctx = {});
  /// The placement step of a block write: where place_data() puts block
  /// `index` of `ino`; pointers, SIT, SSA and counters are updated as if
  /// written. The caller writes the 4 KiB there.
  Result<disk::block_t> place_file_block(nid_t ino, std::uint64_t index, std::uint8_t type,
                                         const wr::WriteContext& ctx);
  Status free_file_block(nid_t ino, std::uint64_t index);
  Status truncate_blocks(nid_t ino, std::uint64_t from);
  Status convert_inline_data(nid_t ino);
  Status free_inode(nid_t ino);
  std::uint8_t data_type(const disk::Node& in) const;
  void touch(disk::Node& in);

  // writer/compr.cpp: compressed files (fs/f2fs/compress.c)
  /// A regular file with F2FS_COMPR_FL (f2fs_compressed_file()).
  static bool compressed(const disk::Node& in) {
    return (in.i.i_mode.get() & 0xF000) == 0x8000 && (in.i.i_flags.get() & disk::iflag::compr);
  }
  /// Blocks per cluster of a compressed inode (1 << i_log_cluster_size).
  static std::uint32_t cluster_blocks(const disk::Node& in) { return 1u << in.i.extra.i_log_cluster_size; }
  /// The mount's compression parameters given to `in`, with F2FS_COMPR_FL
  /// (set_compress_context()). Errc::unsupported when the inode's extra
  /// attributes have no room for them.
  Status set_compress_context(disk::Node& in);
  /// Whether a new inode named `name` in `dir` is compressed, and then its
  /// context set (set_compress_new_inode() in fs/f2fs/namei.c).
  Status compress_new_inode(const disk::Node& dir, disk::Node& in, std::string_view name);
  /// Whether cluster `cluster` of `ino` is compressed on the device (its
  /// first slot COMPRESS_ADDR).
  Result<bool> cluster_compressed(nid_t ino, std::uint64_t cluster);
  /// The cluster as the device has it, decompressed when compressed, in
  /// out[0, cluster blocks x 4 KiB) (holes and NEW_ADDR zeros); no cache.
  Status read_cluster(nid_t ino, std::uint64_t cluster, std::uint8_t* out);
  /// Writeback of the dirty pages of compressed file `ino` in cluster
  /// `cluster` (f2fs_write_multi_pages()): a compressed cluster is first
  /// made whole in the cache (f2fs_prepare_compress_overwrite()); a whole
  /// dirty cluster that compresses is written compressed
  /// (f2fs_write_compressed_pages()), else its dirty pages plain
  /// (f2fs_write_raw_pages()).
  Status writeback_cluster(nid_t ino, std::uint64_t cluster, const wr::WriteContext& ctx, std::uint16_t tag);
  /// A compressed cluster about to be changed in part: every page of it
  /// dirty in the cache with its current contents.
  Status prepare_compress_overwrite(nid_t ino, std::uint64_t cluster);
  /// i_compr_blocks of `ino` += delta.
  void add_compr_blocks(nid_t ino, std::int64_t delta);
  /// Valid block addresses after the COMPRESS_ADDR of the cluster at
  /// `first` (f2fs_compressed_blocks()).
  Result<std::uint32_t> cluster_valid_blocks(nid_t ino, std::uint64_t first, std::uint32_t cluster_size);
  /// The compression mount options against the volume (at load()).
  Status check_compress_options();
  /// Writes the cluster from data[0, cluster bytes): the pages marked in
  /// `dirty`; with every page dirty and a block saved, compressed
  /// (f2fs_write_compressed_pages()), else plain. A compressed cluster is
  /// written whole (Errc::corrupt otherwise). The caller drains the batch.
  Status write_cluster(nid_t ino, std::uint64_t cluster, const std::uint8_t* data, const std::vector<bool>& dirty,
                       const wr::WriteContext& ctx, std::uint16_t tag);
  /// One block of a compressed file without the page cache
  /// (MountOptions::cache_bytes 0): a compressed cluster is rewritten whole.
  Status write_compressed_block(nid_t ino, std::uint64_t index, const std::uint8_t* block);
  /// Truncation to `size` inside a compressed cluster
  /// (f2fs_truncate_partial_cluster()): the cluster zeroed from `size` and
  /// rewritten whole; blocks past the cluster are freed by the caller.
  Status truncate_partial_cluster(nid_t ino, std::uint64_t size);
  /// Compressed file: the mount allows writing it (codec built; not
  /// released, FI_COMPRESS_RELEASED: EPERM).
  Status compress_writable(nid_t ino, const disk::Node& in);
  /// Writer::release_compress_blocks() (F2FS_IOC_RELEASE_COMPRESS_BLOCKS).
  Result<std::uint64_t> release_compressed(nid_t ino);
  /// Writer::reserve_compress_blocks() (F2FS_IOC_RESERVE_COMPRESS_BLOCKS).
  Result<std::uint64_t> reserve_compressed(nid_t ino);
  /// Writer::compress_file() (`compress` true) and
  /// Writer::decompress_file(): every cluster rewritten, compressed when it
  /// can be or plain.
  Status rewrite_compressed(nid_t ino, bool compress);
  /// The inode being compressed by Writer::compress_file()
  /// (FI_ENABLE_COMPRESS); 0 when none.
  nid_t enable_compress_ino = 0;
  /// f2fs_need_compress_data(): full clusters of compressed inode `in` are
  /// written compressed (compress_mode fs, or user with FI_ENABLE_COMPRESS).
  bool need_compress_data(const disk::Node& in) const;

  // writer/dir.cpp
  Result<nid_t> resolve(std::string_view path, nid_t* parent = nullptr, std::string* leaf = nullptr);
  /// A name that can be created or removed: not empty, ".", ".." (EINVAL),
  /// at most 255 bytes (ENAMETOOLONG), no '/' or NUL (EINVAL).
  static Status check_name(std::string_view name);
  /// `dir` is a directory inode in use: ENOENT (no inode, or unlinked),
  /// ENOTDIR.
  Result<disk::Node*> dir_inode(nid_t dir);
  /// A new inode of `mode` named `leaf` in directory `parent` (the common
  /// part of create, mkdir, mknod and symlink: f2fs_new_inode(), a
  /// directory's first dentry block, f2fs_add_link()); `init` fills the
  /// type's fields before the name is added. Errors as Writer::mknod_at().
  /// `owner_rules`: a S_ISGID parent gives its group (and S_ISGID to a new
  /// directory), as the *_at() calls do; the path calls make root's inodes
  /// and leave the group to the caller's setattr().
  Result<nid_t> create_in(nid_t parent, std::string_view leaf, std::uint16_t mode, const Owner& owner,
                          const std::function<Status(disk::Node&)>& init = {}, bool owner_rules = true);
  /// Removes name `leaf` of `parent`: `dir` false as unlink, true as rmdir.
  Status remove_in(nid_t parent, std::string_view leaf, bool dir);
  /// f2fs_rename() / f2fs_cross_rename() on resolved names (Writer::rename_at()).
  Status rename_in(nid_t op, std::string_view oleaf, nid_t np, std::string_view nleaf, std::uint32_t flags);
  /// f2fs_link() on a resolved inode and new name (Writer::link_at()).
  Status link_in(nid_t ino, nid_t np, std::string_view nleaf);
  // writer/fscrypt.cpp: encrypted inodes (fscrypt), with and without keys.
  fscrypt::Keyring keyring;  ///< MountOptions::fscrypt_keys
  /// Keys of encrypted inodes derived so far (per-file keys).
  std::unordered_map<nid_t, std::shared_ptr<const fscrypt::InodeKey>> inode_keys;
  /// The key of inode `ino`: null when it is not encrypted; Errc::unsupported
  /// with ENOKEY when its master key was not given (or its policy is not
  /// supported), corrupt for a missing context.
  Result<const fscrypt::InodeKey*> key_for(nid_t ino);
  /// The stored form of `name` in directory `dir`: the name itself, or in
  /// an encrypted directory with its key, the ciphertext
  /// (fscrypt_setup_filename()); "." and ".." as they are. unsupported for
  /// an encrypted casefolded directory; the key's errors.
  Result<std::string> disk_name(nid_t dir, std::string_view name);
  /// A new inode `ino` made in encrypted directory `dir`: FADVISE_ENC_NAME,
  /// and for a regular file, directory or symlink the directory's policy
  /// with a random nonce (fscrypt_prepare_new_inode(), fscrypt_set_context())
  /// and FADVISE_ENCRYPT_BIT. Nothing in an unencrypted directory.
  Status inherit_encryption(nid_t dir, nid_t ino);
  /// fscrypt_prepare_link() / fscrypt_prepare_rename(): a name of `ino`
  /// may go into encrypted directory `dir` only with the same policy
  /// (EXDEV, Errc::invalid_argument); ENOKEY without the key.
  Status same_policy(nid_t dir, nid_t ino);
  /// The contents key of regular file `ino` when it is encrypted and its
  /// key is given; null otherwise (its blocks then move as they are on
  /// the device). Data blocks are decrypted as they are read into the page
  /// cache and encrypted on their way to the device, with the IV of their
  /// file block number.
  const fscrypt::InodeKey* contents_key(nid_t ino);
  /// For the compression calls that rewrite or re-reserve a file's
  /// clusters: ENOKEY (need_key()) for an encrypted file without its key,
  /// Errc::unsupported EOPNOTSUPP for a compressed encrypted one (the
  /// writer does not write those); nothing otherwise.
  Status refuse_encrypted_compressed(nid_t ino, std::string_view what);
  /// Whether inode page `in` is encrypted (FADVISE_ENCRYPT_BIT) and the
  /// writer has no key for it: its data and names are ciphertext to us.
  bool lacks_key(const disk::Node& in);
  /// Errc::unsupported with ENOKEY naming `what`, the inode and its path
  /// (path_hint()) when `ino` lacks its key (lacks_key()); else nothing.
  /// Every changing call checks it for each inode it would change, before
  /// its first write (refuse_flagged() calls it).
  Status need_key(nid_t ino, std::string_view what);
  /// The path of `ino` from its inode's i_pino and i_name up to the root,
  /// names in encrypted directories as no-key names, for messages.
  std::string path_hint(nid_t ino);
  // writer/flags.cpp: what the VFS refuses on immutable (F2FS_IMMUTABLE_FL,
  // IS_IMMUTABLE()) and append-only (F2FS_APPEND_FL, IS_APPEND()) inodes.
  /// EPERM (Errc::read_only) naming `what` when inode `ino` is immutable,
  /// or, with `append_too`, append-only; nothing when it is neither.
  Status refuse_flagged(nid_t ino, bool append_too, const char* what);
  /// may_delete() in fs/namei.c for name-removing calls (unlink, rmdir,
  /// the source and a replaced target of rename): EPERM when directory
  /// `dir` is immutable (inode_permission() with MAY_WRITE) or append-only,
  /// or when `victim` is immutable or append-only.
  /// EPERM (read_only) when `ino` is an fs-verity file (FADVISE_VERITY_BIT):
  /// its data is read-only (writer/verity.cpp).
  Status refuse_verity(nid_t ino, const char* what);
  Status may_delete(nid_t dir, nid_t victim);
  /// The i_flags a new inode of `mode` takes from directory `dir`:
  /// F2FS_FL_INHERITED through f2fs_mask_flags(), as f2fs_new_inode() in
  /// fs/f2fs/namei.c.
  static std::uint32_t inherited_flags(const disk::Node& dir, std::uint16_t mode);
  /// IS_DIRSYNC() of directory `dir` (F2FS_DIRSYNC_FL or F2FS_SYNC_FL, as
  /// f2fs_set_inode_flags() maps them): the namespace calls in it end with
  /// a checkpoint, as f2fs_create(), f2fs_link(), f2fs_unlink(),
  /// f2fs_symlink(), f2fs_mkdir(), f2fs_mknod() and f2fs_rename() in
  /// fs/f2fs/namei.c call f2fs_sync_fs(). A failed checkpoint closes the
  /// handle, as sync().
  Status dirsync(nid_t dir);
  /// `r`, after dirsync(dir) when it succeeded.
  template <typename R>
  R dirsync_after(nid_t dir, R r) {
    if (r) {
      auto s = dirsync(dir);
      if (!s) return make_error(s.error());
    }
    return r;
  }
  /// may_create() in fs/namei.c (create, mkdir, mknod, symlink, link, a
  /// rename onto a free name): EPERM when `dir` is immutable.
  Status may_create(nid_t dir) { return refuse_flagged(dir, false, "a name made in an immutable directory"); }
  /// The entry `name` of `dir` names `ino` of `type` now (f2fs_set_link()).
  Status set_entry(nid_t dir, std::string_view name, nid_t ino, disk::FileType type);
  Result<std::vector<WriterDirEntry>> entries_info(nid_t dir);
  /// How a name is looked up in one directory (struct f2fs_filename): its
  /// dentry hash and, in a casefolded directory, its folded form.
  struct NameKey {
    std::string_view name;
    std::uint32_t hash = 0;
    std::optional<std::string> folded;  ///< casefold_name(name) in a casefolded directory
    bool casefolded = false;
    std::uint16_t enc_flags = 0;  ///< s_encoding_flags
    /// Whether the stored name `entry` is this name (f2fs_match_name()):
    /// alike folded in a casefolded directory, else the same bytes.
    bool matches(std::string_view entry) const;
  };
  /// The key of `name` in directory inode `dir` (f2fs_setup_filename(),
  /// f2fs_init_casefolded_name(), f2fs_hash_filename() in fs/f2fs/dir.c
  /// and hash.c). In a casefolded directory of a volume with the strict
  /// encoding flag, a name with no folded form (not UTF-8, or folding to
  /// nothing or to 255 bytes or more) is EINVAL (invalid_argument), "."
  /// and ".." aside.
  Result<NameKey> name_key(const disk::Node& dir, std::string_view name) const;
  /// The inode `name` names in `dir` (f2fs_find_entry()): in a casefolded
  /// directory by any case, the hash's buckets first, then every entry.
  /// `stored`, when given, receives the name as the entry holds it.
  /// not_found when there is none; errors of name_key().
  Result<nid_t> find_entry(nid_t dir, std::string_view name, std::string* stored = nullptr);
  Status add_entry(nid_t dir, std::string_view name, nid_t ino, disk::FileType type);
  Status remove_entry(nid_t dir, std::string_view name);
  Result<bool> dir_empty(nid_t dir);
  Result<std::vector<std::pair<std::string, nid_t>>> entries(nid_t dir);
  Result<nid_t> make_inode(nid_t parent, std::string_view name, std::uint16_t mode, const Owner& owner = {});

  // writer/cache.cpp
  /// Stages a whole 4 KiB block of file `ino` as dirty (writes back when
  /// the cache is over opts.cache_bytes). With `lend` (WriteFlags::lend)
  /// and `block` on a 4 KiB boundary, a page not cached yet keeps `block`
  /// itself, with a reference to `lend`, instead of a copy.
  Status cache_write(nid_t ino, std::uint64_t index, const std::uint8_t* block, std::uint8_t type,
                     const std::shared_ptr<const void>* lend = nullptr);
  /// Copies a cached block to `out`; false when not cached.
  bool cache_read(nid_t ino, std::uint64_t index, std::uint8_t* out);
  /// Whether block `index` of `ino` is cached (no copy, LRU order unchanged).
  bool cache_has(nid_t ino, std::uint64_t index) const;
  /// Writes back the dirty pages of `ino` (0: of every file).
  Status writeback(nid_t ino, const wr::WriteContext& ctx);
  /// Drops cached pages of `ino` in [from, to) (truncate, punch, unlink).
  void cache_drop(nid_t ino, std::uint64_t from, std::uint64_t to = ~std::uint64_t{0});
  /// Block `index` of `ino` has a dirty page in the cache.
  bool page_dirty(nid_t ino, std::uint64_t index);
  /// Dirty pages of `ino` in the cache; 0: of every file.
  std::uint64_t dirty_pages(nid_t ino) const;
  /// Takes a checkpoint when opts.checkpoint_interval_s has passed.
  Status maybe_periodic_checkpoint();

  // writer/ipu.cpp
  /// Where block `index` of `ino`, now at `old` (kNullAddr/kNewAddr: not
  /// yet written), goes: `old` itself (in place) or a new block of log
  /// `type`; *why says which rule decided.
  Result<disk::block_t> place_data(nid_t ino, std::uint64_t index, disk::block_t old, std::uint8_t type,
                                   const wr::WriteContext& ctx, IpuReason* why);
  void resolve_ipu_defaults();
  /// utilization() in fs/f2fs/segment.h: valid blocks (data, nodes,
  /// reserved) x 100 / user_block_count.
  std::uint32_t utilization() const;
  /// The placement inputs of inode `ino` for a write of `ctx` (ssr and util
  /// filled only when the policy reads them).
  Result<IpuWrite> ipu_write(nid_t ino, disk::block_t old, const wr::WriteContext& ctx);
  /// The space the rules read: user and valid blocks (reserved and new
  /// nodes counted, as valid_user_blocks()), sections.
  SpaceState ipu_space() const;

  // writer/gc.cpp
  /// Foreground GC until `sections` more sections are free (or no victim).
  Result<std::uint32_t> gc_foreground(std::uint32_t sections);
  Result<std::uint64_t> evacuate(std::uint32_t first_segno);
  Result<std::uint64_t> evacuate_front(std::uint32_t end_segno);
  Result<std::uint64_t> evacuate_sections(std::uint32_t sec_from, std::uint32_t sec_to, std::uint32_t seg_from,
                                          std::uint32_t seg_to);

  // writer/fsync.cpp
  Status fsync_file(nid_t ino, bool datasync);
  /// At mount: rolls fsynced node chains forward (opts.recovery).
  Status recover_fsync();
};

// ---- writer/xattr.cpp: the xattr area of an inode, under the caller's lock ----
namespace wr {
/// The value of xattr (`index`, `name`) of `ino`. Errors: not_found (ENODATA).
Result<std::vector<std::uint8_t>> xattr_get(Writer::Impl& w, nid_t ino, std::uint8_t index, std::string_view name);
/// Sets (`value`) or removes (null) xattr (`index`, `name`) of `ino`, as
/// Writer::setxattr() / removexattr().
Status xattr_set(Writer::Impl& w, nid_t ino, std::uint8_t index, std::string_view name,
                 const std::span<const std::uint8_t>* value, XattrSet how);
}  // namespace wr

// ---- writer/acl.cpp: POSIX ACLs (fs/posix_acl.c, fs/f2fs/acl.c) ----
namespace wr::acl {
/// ACL_* tags of include/uapi/linux/posix_acl.h.
constexpr std::uint16_t kUserObj = 0x01, kUser = 0x02, kGroupObj = 0x04, kGroup = 0x08, kMask = 0x10, kOther = 0x20;
struct Entry {
  std::uint16_t tag = 0, perm = 0;
  std::uint32_t id = 0;  ///< for kUser and kGroup; 0 for the others
};
/// posix_acl_from_xattr(): the xattr format (le32 version 2, then le16
/// tag, le16 perm, le32 id per entry). EINVAL for a bad size, tag or id,
/// EOPNOTSUPP for another version; no entries: an empty ACL.
Result<std::vector<Entry>> from_xattr(std::span<const std::uint8_t> v);
/// posix_acl_to_xattr(): ids of the non-named entries as ACL_UNDEFINED_ID.
std::vector<std::uint8_t> to_xattr(const std::vector<Entry>& acl);
/// posix_acl_valid(): the entries in order, each once, rwx bits only (EINVAL).
Status valid(const std::vector<Entry>& acl);
/// f2fs_acl_to_disk() / f2fs_acl_from_disk() in fs/f2fs/acl.c: le32 version
/// 1, then 4-byte entries for the object, mask and other entries and 8-byte
/// ones with the id for named users and groups. from_disk: Errc::corrupt.
std::vector<std::uint8_t> to_disk(const std::vector<Entry>& acl);
Result<std::vector<Entry>> from_disk(std::span<const std::uint8_t> v);
/// posix_acl_equiv_mode(): the permission bits (0777) an access ACL gives;
/// true when the mode expresses it whole (no named entry, no mask).
bool equiv_mode(const std::vector<Entry>& acl, std::uint16_t& perm);
/// posix_acl_chmod() through f2fs_set_acl(): the stored access ACL of `ino`,
/// if it has one, takes the permission bits of `mode` (owner, mask or
/// group, other). Not for symlinks (nothing done).
Status chmod(Writer::Impl& w, nid_t ino, std::uint16_t mode);
/// What a new inode gets from directory `dir` (posix_acl_create() for
/// f2fs_init_acl()): without a default ACL on `dir`, `mode` loses the
/// `umask` bits and no ACL is made; with one, `mode`'s permission bits are
/// masked by it (posix_acl_create_masq()), `access` is that ACL unless the
/// mode expresses it, and a directory keeps `dir`'s default ACL as its own.
/// Both in f2fs's on-disk format; empty: none. Symlinks get neither and
/// keep their mode.
struct Inherited {
  std::vector<std::uint8_t> access, def;
};
Result<Inherited> create(Writer::Impl& w, nid_t dir, std::uint16_t& mode, std::uint16_t umask);
}  // namespace wr::acl

/// Takes the handle's lock for the rest of the scope.
/// An error of the inode-relative calls: the class and the errno Linux
/// returns (Error::sys_errno).
inline tl::unexpected<Error> errno_error(Errc c, int sys_errno, std::string message) {
  return make_error(c, std::move(message), Error::kNoOffset, sys_errno);
}

#define F2FSCORE_WRITER_LOCK(impl)                                             \
  std::lock_guard<std::recursive_mutex> f2fscore_writer_lock_((impl)->mu); \
  ::f2fscore::wr::DepthGuard f2fscore_writer_depth_((impl)->call_depth, (impl)->call_now_s)

}  // namespace f2fscore
