// fsync, fdatasync and roll-forward (libf2fscore/src/writer/fsync.cpp):
// node chains as Linux's find_fsync_dnodes() walks them, the cases where
// need_do_checkpoint() takes a checkpoint instead, recovery at mount, and
// power cuts at every write of a workload with fsyncs. The interop build
// (WRITER_WITH_FSCK) adds fsck.f2fs -f on the images; the DISABLED_ tests
// are driven by fsync_linux.sh (Linux recovers our chains, we recover
// Linux's).
#include <gtest/gtest.h>

#include <cstdlib>
#include <fstream>
#include <functional>
#include <map>
#include <optional>
#include <random>

#include "f2fscore/fault_device.hpp"
#include "f2fscore/fsck.hpp"
#include "f2fscore/writer.hpp"
#include "meta/meta_test_util.hpp"
#include "writer/writer_test_util.hpp"

namespace {

using namespace metatest;

constexpr std::uint32_t kFeatures = kRichFeatures;

using writertest::contents::content_of;
using writertest::contents::describe_diff;
using writertest::contents::Model;
using writertest::contents::ModelEntry;
using writertest::contents::read_tree;

std::span<const std::uint8_t> bytes(const std::string& s) {
  return {reinterpret_cast<const std::uint8_t*>(s.data()), s.size()};
}

Model tree_of(BlockDevice& dev) {
  auto v = Volume::open(dev);
  if (!v) return {{"", {false, "OPEN-ERROR " + v.error().to_string()}}};
  return read_tree(**v);
}

// Our checker (check-only) finds nothing; fsck.f2fs -f too in the interop build.
void check_clean(BlockDevice& dev, const std::string& what, bool with_fsck_f2fs = true) {
  writertest::our_fsck_clean(dev, what);
  if (with_fsck_f2fs) writertest::fsck_f2fs_clean(dev, what);
}

std::string pattern(std::size_t n, unsigned seed) {
  std::string s(n, '\0');
  std::uint32_t x = seed * 2654435761u + 1;
  for (auto& c : s) {
    x = x * 1664525u + 1013904223u;
    c = static_cast<char>(x >> 24);
  }
  return s;
}

std::uint64_t warm_node_start(Volume& v) {
  const auto& cp = v.checkpoint();
  return v.segment_start(cp.cur_node_segno[1].get()) + cp.cur_node_blkoff[1].get();
}

Node read_node(BlockDevice& dev, std::uint64_t addr) {
  Node n{};
  EXPECT_TRUE(read_at(dev, addr * kBlockSize, std::span<std::uint8_t>(reinterpret_cast<std::uint8_t*>(&n), kBlockSize)));
  return n;
}

// A volume with /base (f0, f1, f2 of a few blocks, an empty directory),
// unmounted: the checkpoint the workloads start from. With the quota
// feature in `features`, f1 belongs to 1000:100 and f2 to project 7.
std::unique_ptr<BlockDevice> base_image(Model* m, std::uint32_t features = kFeatures) {
  auto dev = our_mkfs(128ull << 20, features);
  if (!dev) return nullptr;
  auto w = Writer::mount(*dev, {1700000100});
  if (!w) {
    ADD_FAILURE() << w.error().to_string();
    return nullptr;
  }
  (*m)[""] = {true, ""};
  EXPECT_TRUE((*w)->mkdir("/base"));
  (*m)["/base"] = {true, ""};
  EXPECT_TRUE((*w)->mkdir("/base/empty"));
  (*m)["/base/empty"] = {true, ""};
  for (int i = 0; i < 3; ++i) {
    const std::string p = "/base/f" + std::to_string(i);
    auto f = (*w)->create(p);
    EXPECT_TRUE(f);
    const std::string d = pattern(7000 + 3000 * i, 10 + i);
    EXPECT_TRUE((*w)->write(*f, 0, bytes(d)));
    (*m)[p] = {false, d};
    if ((features & feature::quota_ino) && i == 1) EXPECT_TRUE((*w)->setattr(*f, {.uid = 1000, .gid = 100}));
    if ((features & feature::project_quota) && i == 2) EXPECT_TRUE((*w)->setattr(*f, {.projid = 7}));
  }
  EXPECT_TRUE((*w)->unmount());
  return dev;
}

// ---- The chain on disk ---------------------------------------------------------

// An fsync of a file whose parent is checkpointed writes a node chain where
// roll-forward looks for it (the checkpoint's warm node curseg), with the
// fsync mark, the checkpoint's version and next_blkaddr linking the blocks;
// a new file's inode carries the dentry mark. No checkpoint is taken.
TEST(Fsync, ChainWhereRollForwardLooks) {
  Model m;
  auto dev = base_image(&m);
  ASSERT_TRUE(dev);
  std::uint64_t start = 0, cpver = 0;
  {
    auto v = Volume::open(*dev);
    ASSERT_TRUE(v);
    start = warm_node_start(**v);
    cpver = (*v)->open_report().checkpoint_ver;
  }
  auto w = Writer::mount(*dev, {1700000200});
  ASSERT_OK(w);
  auto f0 = (*w)->lookup("/base/f0");
  ASSERT_TRUE(f0);
  const std::string more = pattern(5000, 77);
  ASSERT_TRUE((*w)->write(*f0, m["/base/f0"].data.size(), bytes(more)));
  m["/base/f0"].data += more;
  ASSERT_TRUE((*w)->fsync(*f0));
  EXPECT_EQ((*w)->stats().ipu.fsync_checkpoints, 0u);
  EXPECT_EQ((*w)->stats().checkpoints, 0u);
  EXPECT_EQ((*w)->stats().ipu.fsync_node_blocks, 1u);  // the inode holds every pointer
  auto n1 = (*w)->create("/base/n1");
  ASSERT_TRUE(n1);
  const std::string nd = pattern(9000, 78);
  ASSERT_TRUE((*w)->write(*n1, 0, bytes(nd)));
  m["/base/n1"] = {false, nd};
  ASSERT_TRUE((*w)->fsync(*n1));
  EXPECT_EQ((*w)->stats().checkpoints, 0u);
  EXPECT_EQ((*w)->stats().ipu.fsync_node_blocks, 2u);

  // The chain as find_fsync_dnodes() reads it.
  const Node a = read_node(*dev, start);
  EXPECT_EQ(a.footer.ino.get(), *f0);
  EXPECT_EQ(a.footer.cp_ver.get() & 0xFFFFFFFFull, cpver & 0xFFFFFFFFull);
  EXPECT_TRUE(a.footer.flag.get() & node_flag::fsync);
  EXPECT_FALSE(a.footer.flag.get() & node_flag::dent) << "f0 was checkpointed: no dentry mark";
  EXPECT_EQ(a.footer.next_blkaddr.get(), start + 1);
  const Node b = read_node(*dev, a.footer.next_blkaddr.get());
  EXPECT_EQ(b.footer.ino.get(), *n1);
  EXPECT_EQ(b.footer.cp_ver.get(), a.footer.cp_ver.get());
  EXPECT_TRUE(b.footer.flag.get() & node_flag::fsync);
  EXPECT_TRUE(b.footer.flag.get() & node_flag::dent) << "a new inode's first fsync carries the dentry mark";
  EXPECT_EQ(b.i.i_pino.get(), *(*w)->lookup("/base"));
  {
    // Our reader follows the chain by the kernel's rules on its own.
    auto c = clone(*dev);
    auto v = Volume::open(*c);
    ASSERT_TRUE(v);
    EXPECT_EQ((*v)->open_report().pending_fsync_nodes, 2u);
    EXPECT_EQ((*v)->open_report().checkpoint_ver, cpver) << "fsync wrote no checkpoint";
  }
  // The second fsync of n1 has no dentry mark (HAS_FSYNCED_INODE).
  ASSERT_TRUE((*w)->write(*n1, nd.size(), bytes(std::string(10, 'q'))));
  m["/base/n1"].data += std::string(10, 'q');
  ASSERT_TRUE((*w)->fsync(*n1));
  const Node c2 = read_node(*dev, b.footer.next_blkaddr.get());
  EXPECT_EQ(c2.footer.ino.get(), *n1);
  EXPECT_TRUE(c2.footer.flag.get() & node_flag::fsync);
  EXPECT_FALSE(c2.footer.flag.get() & node_flag::dent);

  // Stop without a checkpoint: the destructor writes nothing.
  const auto before = f2fstest::SparseImage::capture(*dev);
  w->reset();
  EXPECT_TRUE(f2fstest::SparseImage::capture(*dev).blocks == before.blocks) << "dropping the Writer wrote to the device";
  // Our reader alone sees the checkpoint: no f0 append, no n1.
  Model cp_only = m;
  cp_only.erase("/base/n1");
  cp_only["/base/f0"].data.resize(7000);
  EXPECT_EQ(describe_diff(cp_only, tree_of(*dev)), "");

  // Roll-forward at mount brings the fsynced state back.
  auto w2 = Writer::mount(*dev, {1700000300});
  ASSERT_OK(w2);
  EXPECT_EQ((*w2)->stats().recovered_nodes, 3u);
  EXPECT_EQ((*w2)->stats().checkpoints, 1u) << "recovery ends with a checkpoint";
  ASSERT_TRUE((*w2)->unmount());
  EXPECT_EQ(describe_diff(m, tree_of(*dev)), "");
  {
    auto v = Volume::open(*dev);
    ASSERT_TRUE(v);
    EXPECT_EQ((*v)->open_report().pending_fsync_nodes, 0u);
  }
  check_clean(*dev, "after roll-forward");
}

// 700 fsyncs without a checkpoint: the chain fills the warm node log's
// segment and continues in the next one, the last block of the first naming
// the first of the next (the kernel moves a full curseg at once).
Status long_chain(BlockDevice& dev, Model* m) {
  auto w = Writer::mount(dev, {1700000400});
  if (!w) return make_error(w.error());
  auto f = (*w)->create("/base/log");
  if (!f) return make_error(f.error());
  std::string d;
  for (int i = 0; i < 700; ++i) {
    const std::string rec = "record " + std::to_string(i) + " " + pattern(40, static_cast<unsigned>(i)) + "\n";
    auto r = (*w)->write(*f, d.size(), bytes(rec));
    if (!r) return make_error(r.error());
    d += rec;
    F2FSCORE_TRY(i % 3 ? (*w)->fdatasync(*f) : (*w)->fsync(*f));
  }
  if ((*w)->stats().ipu.fsync_checkpoints != 0) return make_error(Errc::invalid_argument, "an fsync took a checkpoint");
  (*m)["/base/log"] = {false, d};
  return {};
}

TEST(Fsync, ChainCrossesSegments) {
  Model m;
  auto dev = base_image(&m);
  ASSERT_TRUE(dev);
  std::uint64_t start = 0, main = 0;
  {
    auto v = Volume::open(*dev);
    ASSERT_TRUE(v);
    start = warm_node_start(**v);
    main = (*v)->main_blkaddr();
  }
  auto r = long_chain(*dev, &m);
  ASSERT_OK(r);
  // Walk the chain as find_fsync_dnodes() does.
  std::uint64_t addr = start, n = 0, jumps = 0;
  const std::uint64_t ver = read_node(*dev, start).footer.cp_ver.get();
  while (n < 2000) {
    const Node x = read_node(*dev, addr);
    if (x.footer.cp_ver.get() != ver) break;
    EXPECT_TRUE(x.footer.flag.get() & node_flag::fsync);
    const std::uint64_t next = x.footer.next_blkaddr.get();
    if (next != addr + 1) {
      ++jumps;
      EXPECT_EQ((addr + 1 - main) % 512, 0u) << "a jump only from a segment's last block";
      EXPECT_EQ((next - main) % 512, 0u) << "to the first block of the next segment";
    }
    addr = next;
    ++n;
  }
  EXPECT_EQ(n, 700u) << "the chain as roll-forward walks it";
  EXPECT_GE(jumps, 1u);
  {
    auto c = clone(*dev);
    auto v = Volume::open(*c);
    ASSERT_TRUE(v);
    EXPECT_EQ((*v)->open_report().pending_fsync_nodes, 700u);
  }
  auto w = Writer::mount(*dev);
  ASSERT_OK(w);
  EXPECT_EQ((*w)->stats().recovered_nodes, 700u);
  ASSERT_TRUE((*w)->unmount());
  EXPECT_EQ(describe_diff(m, tree_of(*dev)), "");
  check_clean(*dev, "after a chain across segments");
}

// need_do_checkpoint(): directories, files in directories made since the
// checkpoint and files that lost a node take a checkpoint; the others write
// a chain. fdatasync leaves an inode out when only its times changed.
TEST(Fsync, CheckpointWhereTheKernelWould) {
  Model m;
  auto dev = base_image(&m);
  ASSERT_TRUE(dev);
  // No IPU rule (ipu_policy 0): every overwrite goes out of place and
  // changes its direct node, as the counts below assume.
  MountOptions mo;
  mo.fixed_time = 1700000200;
  mo.ipu.ipu_policy = 0;
  auto w = Writer::mount(*dev, mo);
  ASSERT_OK(w);
  Writer& wr = **w;
  auto st = [&wr] { return wr.stats(); };  // a copy each time (stats() takes the lock)
  // Nothing written since the mount: f2fs_do_sync_file() returns before
  // need_do_checkpoint(), even for a directory.
  ASSERT_TRUE(wr.fsync(*wr.lookup("/base")));
  EXPECT_EQ(st().ipu.fsync_checkpoints, 0u);
  // A directory with a new entry (CP_NON_REGULAR).
  ASSERT_TRUE(wr.create("/base/e"));
  ASSERT_TRUE(wr.fsync(*wr.lookup("/base")));
  EXPECT_EQ(st().ipu.fsync_checkpoints, 1u);
  EXPECT_EQ(st().checkpoints, 1u);
  ASSERT_TRUE(wr.fsync(*wr.lookup("/base")));  // nothing since: no checkpoint
  EXPECT_EQ(st().ipu.fsync_checkpoints, 1u);
  // A file in a directory made since the checkpoint (CP_NODE_NEED_CP).
  ASSERT_TRUE(wr.mkdir("/fresh"));
  auto x = wr.create("/fresh/x");
  ASSERT_TRUE(x);
  ASSERT_TRUE(wr.write(*x, 0, bytes(std::string(100, 'x'))));
  ASSERT_TRUE(wr.fsync(*x));
  EXPECT_EQ(st().ipu.fsync_checkpoints, 2u);
  EXPECT_GT(st().ipu.fsync_meta_blocks, 0u) << "a checkpoint writes NAT/SIT/SSA and the pack";
  // Now /fresh is checkpointed: the next fsync is a chain.
  ASSERT_TRUE(wr.write(*x, 100, bytes(std::string(100, 'y'))));
  ASSERT_TRUE(wr.fsync(*x));
  EXPECT_EQ(st().ipu.fsync_checkpoints, 2u);
  // A file larger than its inode's pointers (a direct node): shrinking it
  // frees the direct node, which a chain cannot express.
  auto big = wr.create("/base/big");
  ASSERT_TRUE(big);
  const std::uint64_t far = 4ull << 20;  // block 1024: past the 923 - extra pointers of the inode
  ASSERT_TRUE(wr.write(*big, far, bytes(pattern(4096, 5))));
  ASSERT_TRUE(wr.fsync(*big));  // new file, checkpointed parent: chain (inode + direct node)
  EXPECT_EQ(st().ipu.fsync_checkpoints, 2u);
  const std::uint64_t n0 = st().ipu.fsync_node_blocks;
  ASSERT_TRUE(wr.write(*big, far, bytes(pattern(4096, 6))));  // only the direct node changes, and mtime
  ASSERT_TRUE(wr.fdatasync(*big));
  EXPECT_EQ(st().ipu.fdatasync_node_blocks, 1u) << "fdatasync skips an inode whose times alone changed";
  ASSERT_TRUE(wr.write(*big, far, bytes(pattern(4096, 7))));
  ASSERT_TRUE(wr.fsync(*big));
  EXPECT_EQ(st().ipu.fsync_node_blocks, n0 + 2) << "fsync writes the inode too";
  EXPECT_EQ(st().ipu.fsync_checkpoints, 2u);
  ASSERT_TRUE(wr.truncate(*big, 100));
  ASSERT_TRUE(wr.fsync(*big));
  EXPECT_EQ(st().ipu.fsync_checkpoints, 3u);
  EXPECT_EQ(st().ipu.fsyncs, 8u);
  EXPECT_EQ(st().ipu.fdatasyncs, 1u);
  ASSERT_TRUE(wr.unmount());
  check_clean(*dev, "after the checkpoint cases");
}

// The model as host files and directories (for Linux to compare with).
void write_tree(const Model& m, const fs::path& dir) {
  fs::remove_all(dir);
  fs::create_directories(dir);
  for (const auto& [p, e] : m) {
    if (p.empty()) continue;
    if (e.dir) {
      fs::create_directories(dir / p.substr(1));
      continue;
    }
    fs::create_directories((dir / p.substr(1)).parent_path());
    std::ofstream f(dir / p.substr(1), std::ios::binary);
    f.write(e.data.data(), static_cast<std::streamsize>(e.data.size()));
  }
}

// ---- Power cuts ------------------------------------------------------------------

// A workload with fsyncs, fdatasyncs and a sync. `durable` is called after
// each durability call returns with the tree a power cut may leave from
// then on: the last checkpoint plus every file as its last fsync left it.
using DurableFn = std::function<void(const Model&)>;

// The tree a workload has made on `wr` (`cur`) and what a power cut may
// leave of it: the last checkpoint plus every file as its last fsync left it.
struct DurableTracker {
  DurableTracker(Writer& w, const Model& base, const DurableFn& fn)
      : wr(w), cur(base), cp(base), durable(fn), cps(w.stats().checkpoints) {}
  Writer& wr;
  Model cur, cp;
  std::map<std::string, ModelEntry> fsynced;
  const DurableFn& durable;
  std::uint64_t cps;
  // After a durability call on `path` ("" for sync) returned: a checkpoint
  // (sync, or an fsync that took one) makes everything durable; else the
  // file alone, as it is now. Calls `durable` with that state.
  void synced(const std::string& path) {
    if (wr.stats().checkpoints != cps) {
      cps = wr.stats().checkpoints;
      cp = cur;
      fsynced.clear();
    } else if (!path.empty()) {
      fsynced[path] = cur[path];
    }
    Model d = cp;
    for (const auto& [p, e] : fsynced) d[p] = e;
    durable(d);
  }
  // Truncates `p` to `size` bytes.
  Status truncate(const std::string& p, std::uint64_t size) {
    auto ino = wr.lookup(p);
    if (!ino) return make_error(ino.error());
    F2FSCORE_TRY(wr.truncate(*ino, size));
    cur[p].data.resize(static_cast<std::size_t>(size), '\0');
    return {};
  }
  // Writes `d` at byte `off` of `p`, creating the file when it has no entry.
  Status write(const std::string& p, std::uint64_t off, const std::string& d) {
    auto ino = wr.lookup(p);
    if (!ino) {
      auto c = wr.create(p);
      if (!c) return make_error(c.error());
      ino = *c;
      cur[p] = {false, ""};
    }
    auto r = wr.write(*ino, off, bytes(d));
    if (!r) return make_error(r.error());
    auto& s = cur[p].data;
    if (s.size() < off + d.size()) s.resize(static_cast<std::size_t>(off + d.size()), '\0');
    std::copy(d.begin(), d.end(), s.begin() + static_cast<std::ptrdiff_t>(off));
    return {};
  }
};

Status fsync_workload(BlockDevice& dev, const Model& base, const DurableFn& durable) {
  MountOptions mo;
  mo.fixed_time = 1700000200;
  mo.checkpoint_interval_s = 0;
  auto w = Writer::mount(dev, mo);
  if (!w) return make_error(w.error());
  Writer& wr = **w;
  DurableTracker t(wr, base, durable);
  Model& cur = t.cur;
  auto after_sync = [&](const std::string& path) { t.synced(path); };
  auto write = [&](const std::string& p, std::uint64_t off, const std::string& d) { return t.write(p, off, d); };
  auto fsync = [&](const std::string& p, bool data) -> Status {
    auto ino = wr.lookup(p);
    if (!ino) return make_error(ino.error());
    F2FSCORE_TRY(data ? wr.fdatasync(*ino) : wr.fsync(*ino));
    after_sync(p);
    return {};
  };
  F2FSCORE_TRY(write("/base/f0", 7000, pattern(5000, 1)));  // append
  F2FSCORE_TRY(fsync("/base/f0", false));
  F2FSCORE_TRY(write("/base/n1", 0, pattern(9000, 2)));  // new file, dentry mark
  F2FSCORE_TRY(fsync("/base/n1", false));
  F2FSCORE_TRY(write("/base/f1", 2000, pattern(3000, 3)));  // overwrite in the middle
  F2FSCORE_TRY(fsync("/base/f1", true));
  F2FSCORE_TRY(write("/base/n2", 0, pattern(5000, 4)));  // never fsynced
  F2FSCORE_TRY(write("/base/sp", 4ull << 20, pattern(4096, 5)));  // inode(DF) + direct node(F)
  F2FSCORE_TRY(fsync("/base/sp", false));
  {
    auto ino = wr.lookup("/base/f2");
    if (!ino) return make_error(ino.error());
    F2FSCORE_TRY(wr.truncate(*ino, 100));
    cur["/base/f2"].data.resize(100);
  }
  F2FSCORE_TRY(fsync("/base/f2", false));
  {
    auto d = wr.mkdir("/new");
    if (!d) return make_error(d.error());
    cur["/new"] = {true, ""};
  }
  F2FSCORE_TRY(write("/new/x", 0, pattern(6000, 6)));
  F2FSCORE_TRY(fsync("/new/x", false));  // parent not checkpointed: a checkpoint
  F2FSCORE_TRY(write("/base/n1", 9000, pattern(20000, 7)));
  F2FSCORE_TRY(fsync("/base/n1", false));  // a chain after that checkpoint
  F2FSCORE_TRY(wr.unlink("/base/n2"));
  cur.erase("/base/n2");
  F2FSCORE_TRY(write("/base/f0", 0, pattern(4096, 8)));
  F2FSCORE_TRY(fsync("/base/f0", true));
  F2FSCORE_TRY(write("/new/y", 0, pattern(3000, 9)));
  F2FSCORE_TRY(fsync("/new/y", false));
  F2FSCORE_TRY(wr.sync());
  after_sync("");
  F2FSCORE_TRY(write("/base/f1", 10000, pattern(7000, 10)));
  F2FSCORE_TRY(fsync("/base/f1", false));
  // A checkpointed name taken by a new file: roll-forward replaces the
  // entry and frees the old inode (recover_dentry()).
  F2FSCORE_TRY(wr.unlink("/base/f2"));
  cur.erase("/base/f2");
  F2FSCORE_TRY(write("/base/f2", 0, pattern(2500, 12)));
  F2FSCORE_TRY(fsync("/base/f2", true));
  F2FSCORE_TRY(write("/new/x", 6000, pattern(100, 11)));  // not fsynced
  // Stop without a checkpoint (the Writer is dropped).
  return {};
}

// The volumes the random sequences run on: plain, with compression (r3
// and r4 compressed, zstd in clusters of 4 blocks, checksums on), with
// quota and project quota (r3, r4, r5 and /base/f1 of other owners and
// projects).
enum class Vol { plain, compression, quota };

std::uint32_t features_of(Vol v) {
  switch (v) {
    case Vol::compression: return kFeatures | feature::compression;
    case Vol::quota: return kFeatures | feature::quota_ino | feature::project_quota;
    case Vol::plain: break;
  }
  return kFeatures;
}

constexpr std::uint32_t kComprFl = 0x4;  // F2FS_COMPR_FL

// Compressible bytes: numbered text lines from `seed`.
std::string text(std::size_t n, unsigned seed) {
  std::string s;
  for (std::size_t i = seed % 50; s.size() < n; ++i) s += "line " + std::to_string(i % 61) + " of a compressible file\n";
  s.resize(n);
  return s;
}

struct CutResult {
  std::uint64_t total = 0;
  std::uint64_t writebacks = 0;  ///< node writebacks in the uncut runs
  std::uint64_t compr_blocks = 0;  ///< i_compr_blocks of the compressed files after the uncut runs
  int cuts = 0, with_chain = 0, recovered = 0;
};

using Workload = std::function<Status(BlockDevice&, const DurableFn&)>;

// What cut_every_write() checks beyond the tree, and which cut images it keeps.
struct CutSpec {
  std::string trace;                 ///< prefix of each cut's trace
  bool recovered_iff_chain = false;  ///< our mount rolls forward exactly when a chain is pending
  bool allow_torn_pack = false;      ///< a torn checkpoint pack is the one finding allowed
  int fsck_every = 0;                ///< fsck.f2fs on every k-th cut (0: never)
  fs::path export_dir;               ///< where cut images Linux must roll forward go (empty: none)
  std::function<bool(std::uint64_t n, std::uint64_t total, int exported)> export_when;
  std::string tag;                   ///< exported as TAG<n>.img with TAG<n>.tree
};

// Cuts `workload` (run on `image`; `states`: the durable states it reports,
// `total` its counted requests) at every write and flush n in turn
// (unflushed writes dropped; one n in f2fstest::sample_stride(), and the
// uncut run), then: our Writer mounts the image (rolling forward), the tree
// is the durable state of the last completed call (or of the one in
// flight), and the image is clean.
void cut_every_write(const f2fstest::SparseImage& image, const std::vector<Model>& states, std::uint64_t total,
                     const Workload& workload, const CutSpec& spec, CutResult* out) {
  int exported = 0;
  for (std::uint64_t n = 0; n <= total; ++n) {
    if (n != total && !f2fstest::sampled(n)) continue;
    SCOPED_TRACE(spec.trace + "cut at request " + std::to_string(n) + " of " + std::to_string(total));
    FaultPlan fp;
    fp.ops = io_op_bit(IoOp::write) | io_op_bit(IoOp::flush);
    fp.drop_unflushed = true;
    fp.fail_after = n;
    FaultDevice dev(image.to_device(), fp);
    std::size_t done = 0;
    auto r = workload(dev, [&](const Model&) { ++done; });
    EXPECT_EQ(static_cast<bool>(r), n >= total);
    dev.power_cut();
    dev.set_plan({});
    std::uint64_t pending = 0;
    {
      auto v = Volume::open(dev);
      ASSERT_OK(v);
      pending = (*v)->open_report().pending_fsync_nodes;
    }
    out->with_chain += pending > 0;
    std::optional<f2fstest::SparseImage> raw;
    if (!spec.export_dir.empty() && pending > 0 && spec.export_when(n, total, exported))
      raw = f2fstest::SparseImage::capture(dev);
    auto w = Writer::mount(dev);
    ASSERT_OK(w);
    out->recovered += (*w)->stats().recovered_nodes > 0;
    if (spec.recovered_iff_chain) EXPECT_EQ((*w)->stats().recovered_nodes > 0, pending > 0);
    w->reset();
    const Model got = tree_of(dev);
    const bool at_last = describe_diff(states[done], got).empty();
    const bool at_next = done + 1 < states.size() && describe_diff(states[done + 1], got).empty();
    EXPECT_TRUE(at_last || at_next) << done << " durability calls returned; against the last durable state:\n"
                                    << describe_diff(states[done], got);
    writertest::our_fsck_clean(dev, "after a cut", spec.allow_torn_pack);
    if (spec.fsck_every > 0 && n % static_cast<std::uint64_t>(spec.fsck_every) == 0)
      writertest::fsck_f2fs_clean(dev, "after a cut");
    if (raw && at_last && describe_diff(states[done], tree_of(*raw->to_device())) != "") {
      // (the checkpoint alone reads differently: Linux must roll forward)
      const std::string tag = spec.tag + std::to_string(n);
      auto rd = raw->to_device();
      ASSERT_TRUE(save(*rd, spec.export_dir / (tag + ".img")));
      write_tree(states[done], spec.export_dir / (tag + ".tree"));
      ++exported;
    }
    ++out->cuts;
    if (::testing::Test::HasFailure()) return;
  }
}

// Cuts the workload at every write and flush n in turn (unflushed writes
// dropped), then: our Writer mounts the image (rolling forward), the tree
// is the durable state of the last completed call (or of the one in
// flight), and the image is clean. `fsck_every`: fsck.f2fs on every k-th
// cut (interop build); `export_dir`: keep the raw cut images with a chain.
void power_cut_run(int fsck_every, CutResult* out, const fs::path& export_dir = {}, Vol vol = Vol::plain) {
  Model base;
  auto basedev = base_image(&base, features_of(vol));
  ASSERT_TRUE(basedev);
  const auto image = f2fstest::SparseImage::capture(*basedev);
  std::vector<Model> states{base};
  std::uint64_t total = 0;
  {
    FaultPlan fp;
    fp.ops = io_op_bit(IoOp::write) | io_op_bit(IoOp::flush);
    fp.drop_unflushed = true;
    FaultDevice dev(image.to_device(), fp);
    auto r = fsync_workload(dev, base, [&](const Model& m) { states.push_back(m); });
    ASSERT_OK(r);
    total = dev.counted();
    dev.power_cut();
    // The end state without a cut: the last durable state after recovery.
    dev.set_plan({});
    auto w = Writer::mount(dev);
    ASSERT_OK(w);
    EXPECT_GT((*w)->stats().recovered_nodes, 0u);
    w->reset();
    EXPECT_EQ(describe_diff(states.back(), tree_of(dev)), "") << "no cut";
  }
  ASSERT_GT(total, 20u);
  ASSERT_EQ(states.size(), 13u);
  out->total = total;
  CutSpec spec;
  spec.recovered_iff_chain = true;
  spec.fsck_every = fsck_every;
  spec.export_dir = export_dir;
  spec.export_when = [](std::uint64_t n, std::uint64_t, int exported) { return exported < 3 && n % 5 == 0; };
  spec.tag = vol == Vol::quota ? "cutq" : "cut";
  cut_every_write(image, states, total, [&](BlockDevice& d, const DurableFn& fn) { return fsync_workload(d, base, fn); },
                  spec, out);
}

TEST(Fsync, PowerCutAtEveryWrite) {
  CutResult r;
#ifdef WRITER_WITH_FSCK
  power_cut_run(1, &r);
#else
  power_cut_run(0, &r);
#endif
  // Roll-forward is what brought the fsynced files back in many cuts (one
  // cut in f2fstest::sample_stride() is made).
  EXPECT_GT(r.with_chain * static_cast<int>(f2fstest::sample_stride()), 10);
  EXPECT_EQ(r.recovered, r.with_chain);
  std::cout << "cuts " << r.cuts << ", with a chain " << r.with_chain << ", rolled forward " << r.recovered << "\n";
}

// The fsync workload on a quota and project quota volume (/base/f1 of
// 1000:100, /base/f2 of project 7): after every cut and roll-forward the
// quota files hold the usage our checker counts (and fsck.f2fs -f in the
// interop build): roll-forward charges what it replays, as Linux's
// recovery does through dquot_alloc_block()/dquot_transfer() with quotas
// on (f2fs_recover_fsync_data()).
TEST(Fsync, QuotaVolumePowerCutAtEveryWrite) {
  CutResult r;
#ifdef WRITER_WITH_FSCK
  power_cut_run(3, &r, {}, Vol::quota);
#else
  power_cut_run(0, &r, {}, Vol::quota);
#endif
  EXPECT_GT(r.with_chain * static_cast<int>(f2fstest::sample_stride()), 10);
  EXPECT_EQ(r.recovered, r.with_chain);
  std::cout << "cuts " << r.cuts << ", with a chain " << r.with_chain << ", rolled forward " << r.recovered << "\n";
}

// Quota usage after roll-forward, hand-computed from the kernel's rules
// (per inode one inode and (i_blocks - 1) x 4 KiB to its user, group and
// project; roll-forward charges what it replays, recover_inode() moving
// the usage of a changed owner with dquot_transfer()): a new file of
// 1000:100 with 5 blocks, /base/f1 (3 blocks, 1000:100 in the base image)
// given to 3000:300 and project 5, both fsynced as chains; an unsynced
// write to a third file is not charged.
TEST(Fsync, QuotaUsageAfterRollForward) {
  Model m;
  auto dev = base_image(&m, features_of(Vol::quota));
  ASSERT_TRUE(dev);
  {
    MountOptions mo;
    mo.fixed_time = 1700000600;
    mo.checkpoint_interval_s = 0;
    auto w = Writer::mount(*dev, mo);
    ASSERT_OK(w);
    Writer& wr = **w;
    auto q = wr.create("/base/q");
    ASSERT_OK(q);
    ASSERT_TRUE(wr.setattr(*q, {.uid = 2000, .gid = 200}));
    ASSERT_TRUE(wr.write(*q, 0, bytes(pattern(5 * 4096, 1))));
    ASSERT_TRUE(wr.fsync(*q));
    auto f1 = wr.lookup("/base/f1");
    ASSERT_OK(f1);
    ASSERT_TRUE(wr.setattr(*f1, {.uid = 3000, .gid = 300, .projid = 5}));
    ASSERT_TRUE(wr.fsync(*f1));
    auto f0 = wr.lookup("/base/f0");
    ASSERT_OK(f0);
    ASSERT_TRUE(wr.write(*f0, 7000, bytes(pattern(3 * 4096, 2))));  // never fsynced
    EXPECT_EQ(wr.stats().ipu.fsync_checkpoints, 0u) << "both fsyncs must be chains";
  }  // dropped: a power cut
  auto w = Writer::mount(*dev);
  ASSERT_OK(w);
  EXPECT_GT((*w)->stats().recovered_nodes, 0u);
  auto usage = [&](std::uint32_t type, std::uint32_t id) {
    auto u = (*w)->quota_usage(type, id);
    EXPECT_TRUE(u) << u.error().to_string();
    using P = std::pair<std::uint64_t, std::uint64_t>;
    return u ? P(u->inodes, u->space / 4096) : P(~std::uint64_t{0}, ~std::uint64_t{0});
  };
  using P = std::pair<std::uint64_t, std::uint64_t>;
  EXPECT_EQ(usage(0, 2000), P(1, 5));
  EXPECT_EQ(usage(1, 200), P(1, 5));
  EXPECT_EQ(usage(0, 3000), P(1, 3));
  EXPECT_EQ(usage(1, 300), P(1, 3));
  EXPECT_EQ(usage(2, 5), P(1, 3));
  EXPECT_EQ(usage(0, 1000), P(0, 0));
  EXPECT_EQ(usage(1, 100), P(0, 0));
  // Root owns the root, lost+found, /base, /base/empty, f0 and f2; f2
  // (13,000 bytes: 4 blocks) is project 7's.
  EXPECT_EQ(usage(0, 0).first, 6u);
  EXPECT_EQ(usage(2, 7), P(1, 4));
  ASSERT_TRUE((*w)->unmount());
  check_clean(*dev, "quota usage after roll-forward");
}

// A scripted workload on a compression volume (lz4, clusters of 4 blocks):
// compressed files with compressible and incompressible clusters and a
// plain tail cluster, an overwrite and a truncation inside a compressed
// cluster, fsync and fdatasync of compressed files (each a checkpoint, as
// need_do_checkpoint() in fs/f2fs/file.c answers CP_COMPRESSED: Linux 6.1
// does not roll compressed files forward), plain files fsynced by chains
// meanwhile, and unsynced changes of both kinds; `durable` as in
// fsync_workload(). Stops without a checkpoint.
Status compress_cut_workload(BlockDevice& dev, const Model& base, const DurableFn& durable) {
  MountOptions mo;
  mo.fixed_time = 1700000400;
  mo.checkpoint_interval_s = 0;
  mo.compression.algorithm = 1;
  mo.compression.log_size = 2;
  auto w = Writer::mount(dev, mo);
  if (!w) return make_error(w.error());
  Writer& wr = **w;
  DurableTracker t(wr, base, durable);
  auto write = [&](const std::string& p, std::uint64_t off, const std::string& d) { return t.write(p, off, d); };
  auto fsync = [&](const std::string& p, bool data) -> Status {
    auto ino = wr.lookup(p);
    if (!ino) return make_error(ino.error());
    F2FSCORE_TRY(data ? wr.fdatasync(*ino) : wr.fsync(*ino));
    t.synced(p);
    return {};
  };
  auto create_compressed = [&](const std::string& p) -> Status {
    auto c = wr.create(p);
    if (!c) return make_error(c.error());
    t.cur[p] = {false, ""};
    return wr.set_flags(*c, kComprFl, kComprFl);
  };
  F2FSCORE_TRY(create_compressed("/base/c1"));
  F2FSCORE_TRY(write("/base/c1", 0, text(40960, 1)));           // clusters 0-2 compress
  F2FSCORE_TRY(write("/base/c1", 49152, pattern(16384, 2)));     // cluster 3 saves nothing: plain
  F2FSCORE_TRY(write("/base/c1", 65536, text(5000, 3)));         // a tail cluster of 2 pages: plain
  F2FSCORE_TRY(fsync("/base/c1", false));                        // a checkpoint
  F2FSCORE_TRY(write("/base/f0", 7000, pattern(5000, 4)));
  F2FSCORE_TRY(fsync("/base/f0", false));                        // a chain
  F2FSCORE_TRY(write("/base/c1", 5000, pattern(300, 5)));        // inside compressed cluster 0, not fsynced
  F2FSCORE_TRY(write("/base/n1", 0, pattern(9000, 6)));
  F2FSCORE_TRY(fsync("/base/n1", true));                         // a chain with the dentry mark
  F2FSCORE_TRY(create_compressed("/base/c2"));
  F2FSCORE_TRY(write("/base/c2", 0, text(32768, 7)));
  F2FSCORE_TRY(fsync("/base/c2", true));                         // fdatasync: a checkpoint (c1's overwrite too)
  F2FSCORE_TRY(t.truncate("/base/c1", 20000));                   // inside compressed cluster 1
  F2FSCORE_TRY(fsync("/base/c1", false));
  F2FSCORE_TRY(write("/base/c2", 4096, pattern(8192, 8)));       // a compressed cluster rewritten
  F2FSCORE_TRY(write("/base/f1", 2000, pattern(3000, 9)));
  F2FSCORE_TRY(fsync("/base/f1", true));                         // a chain; c2's change stays out
  F2FSCORE_TRY(write("/base/c1", 20000, text(30000, 10)));       // extends over the cut cluster
  F2FSCORE_TRY(fsync("/base/c1", true));
  F2FSCORE_TRY(write("/base/n1", 9000, pattern(20000, 11)));
  F2FSCORE_TRY(fsync("/base/n1", false));                        // a chain after that checkpoint
  F2FSCORE_TRY(write("/base/c2", 0, text(100, 12)));             // never fsynced
  F2FSCORE_TRY(write("/base/f2", 0, pattern(100, 13)));          // never fsynced
  return {};
}

// fsync of a compressed file as f2fs_do_sync_file() decides it: data
// written since its last fsync (FI_APPEND_WRITE, which a checkpoint leaves
// set) takes a checkpoint (CP_COMPRESSED), which makes every other change
// durable too; nothing written since its last fsync returns at once, so an
// unsynced change elsewhere is lost at the power cut. Expected trees from
// those two rules, read after the Writer is dropped.
TEST(Fsync, CompressedFileFsyncChecksWhatWasWritten) {
  Model m;
  auto dev = base_image(&m, features_of(Vol::compression));
  ASSERT_TRUE(dev);
  Model want = m;
  {
    MountOptions mo;
    mo.fixed_time = 1700000500;
    mo.checkpoint_interval_s = 0;
    auto w = Writer::mount(*dev, mo);
    ASSERT_OK(w);
    Writer& wr = **w;
    auto c = wr.create("/base/c");
    ASSERT_OK(c);
    ASSERT_TRUE(wr.set_flags(*c, kComprFl, kComprFl));
    const std::string d1 = text(20000, 1);
    ASSERT_TRUE(wr.write(*c, 0, bytes(d1)));
    ASSERT_TRUE(wr.fsync(*c));
    EXPECT_EQ(wr.stats().ipu.fsync_checkpoints, 1u);
    want["/base/c"] = {false, d1};
    auto f0 = wr.lookup("/base/f0");
    ASSERT_OK(f0);
    ASSERT_TRUE(wr.write(*f0, 0, bytes(pattern(100, 2))));  // never made durable
    ASSERT_TRUE(wr.fsync(*c));
    ASSERT_TRUE(wr.fdatasync(*c));
    EXPECT_EQ(wr.stats().ipu.fsync_checkpoints, 1u) << "nothing written to /base/c since its fsync";
    EXPECT_EQ(wr.stats().checkpoints, 1u);
    // Written and then checkpointed by sync(): FI_APPEND_WRITE stays until
    // the file's next fsync, which takes a checkpoint again.
    const std::string d2 = text(8000, 3);
    ASSERT_TRUE(wr.write(*c, 20000, bytes(d2)));
    ASSERT_TRUE(wr.sync());
    std::string f0d = m["/base/f0"].data;
    std::copy_n(pattern(100, 2).begin(), 100, f0d.begin());
    want["/base/f0"].data = f0d;
    want["/base/c"].data = d1 + d2;
    auto f1 = wr.lookup("/base/f1");
    ASSERT_OK(f1);
    const std::string p1 = pattern(50, 4);
    ASSERT_TRUE(wr.write(*f1, 0, bytes(p1)));
    ASSERT_TRUE(wr.fsync(*c));
    EXPECT_EQ(wr.stats().ipu.fsync_checkpoints, 2u);
    std::copy(p1.begin(), p1.end(), want["/base/f1"].data.begin());
    ASSERT_TRUE(wr.write(*f1, 100, bytes(pattern(50, 5))));  // never made durable
    ASSERT_TRUE(wr.fsync(*c));
    EXPECT_EQ(wr.stats().ipu.fsync_checkpoints, 2u);
  }  // dropped without a checkpoint: a power cut
  EXPECT_EQ(describe_diff(want, tree_of(*dev)), "");
  check_clean(*dev, "compressed fsyncs");
}

TEST(Fsync, CompressionVolumePowerCutAtEveryWrite) {
  Model base;
  auto basedev = base_image(&base, features_of(Vol::compression));
  ASSERT_TRUE(basedev);
  const auto image = f2fstest::SparseImage::capture(*basedev);
  std::vector<Model> states{base};
  std::uint64_t total = 0;
  {
    FaultPlan fp;
    fp.ops = io_op_bit(IoOp::write) | io_op_bit(IoOp::flush);
    fp.drop_unflushed = true;
    FaultDevice dev(image.to_device(), fp);
    ASSERT_OK(compress_cut_workload(dev, base, [&](const Model& m) { states.push_back(m); }));
    total = dev.counted();
    dev.power_cut();
    dev.set_plan({});
    auto w = Writer::mount(dev);
    ASSERT_OK(w);
    EXPECT_GT((*w)->stats().recovered_nodes, 0u);
    w->reset();
    EXPECT_EQ(describe_diff(states.back(), tree_of(dev)), "") << "no cut";
    auto v = Volume::open(dev);
    ASSERT_OK(v);
    // Hand-computed: text clusters compress; c1 (50,000 bytes) has clusters
    // 0-2 of text (0 with 300 random bytes), cluster 3 of text too after the
    // last write: at least 3 compressed clusters saving a block each.
    auto c1 = (*v)->resolve("/base/c1");
    ASSERT_OK(c1);
    EXPECT_TRUE(c1->is_compressed());
    EXPECT_GE(c1->raw.i.extra.i_compr_blocks.get(), 3u);
  }
  ASSERT_EQ(states.size(), 9u);
  CutResult r;
  r.total = total;
  CutSpec spec;
  spec.recovered_iff_chain = true;
  spec.allow_torn_pack = true;  // cuts inside the fsyncs' checkpoints
#ifdef WRITER_WITH_FSCK
  spec.fsck_every = 3;
#endif
  spec.tag = "cutc";
  cut_every_write(image, states, total,
                  [&](BlockDevice& d, const DurableFn& fn) { return compress_cut_workload(d, base, fn); }, spec, &r);
  EXPECT_GT(r.with_chain * static_cast<int>(f2fstest::sample_stride()), 5);
  EXPECT_EQ(r.recovered, r.with_chain);
  std::cout << total << " writes, cuts " << r.cuts << ", with a chain " << r.with_chain << ", rolled forward "
            << r.recovered << "\n";
}

// ---- Random sequences cut at every write ------------------------------------------

// A seeded random sequence of creates, writes (appends, overwrites, holes),
// fsyncs, fdatasyncs and syncs on a few files of /base; `durable` as in
// fsync_workload(). Stops without a checkpoint.
// `node_cache_pages` (0: the default) bounds the node page cache; a small
// one makes node writeback run between checkpoints. `writebacks`: where the
// count of node writebacks goes. On a compression volume half the writes of
// the compressed files are compressible text and some syncs become
// truncations; on a quota volume new files take other owners and some
// syncs become chown or project changes (the plain volume's sequences stay
// as they were).
Status random_cut_workload(BlockDevice& dev, const Model& base, std::uint32_t seed, int ops, const DurableFn& durable,
                           std::uint32_t node_cache_pages = 0, std::uint64_t* writebacks = nullptr,
                           Vol vol = Vol::plain) {
  MountOptions mo;
  mo.fixed_time = 1700000300;
  mo.checkpoint_interval_s = 0;
  if (node_cache_pages) mo.node_cache_pages = node_cache_pages;
  if (vol == Vol::compression) {
    mo.compression.algorithm = 2;
    mo.compression.log_size = 2;
    mo.compression.chksum = true;
  }
  // Every write out of place (ipu_policy 0): an in-place write reaches a
  // checkpointed block before any fsync, which no durable state describes
  // (in Linux too).
  mo.ipu.ipu_policy = 0;
  auto w = Writer::mount(dev, mo);
  if (!w) return make_error(w.error());
  Writer& wr = **w;
  std::mt19937 rng(seed);
  DurableTracker t(wr, base, durable);
  const Model& cur = t.cur;
  auto after_sync = [&](const std::string& path) { t.synced(path); };
  auto file = [&]() -> std::string {
    const unsigned k = rng() % 6;
    return k < 3 ? "/base/f" + std::to_string(k) : "/base/r" + std::to_string(k);
  };
  for (int i = 0; i < ops; ++i) {
    const unsigned op = rng() % 10;
    const std::string p = file();
    if (op < 5) {  // create (first write of a new name) or write
      const auto it = cur.find(p);
      if (it == cur.end() && vol != Vol::plain) {
        auto c = wr.create(p);
        if (!c) return make_error(c.error());
        t.cur[p] = {false, ""};
        const char k = p.back();
        if (vol == Vol::compression && (k == '3' || k == '4')) F2FSCORE_TRY(wr.set_flags(*c, kComprFl, kComprFl));
        if (vol == Vol::quota && k == '3') F2FSCORE_TRY(wr.setattr(*c, {.uid = 1000, .gid = 100}));
        if (vol == Vol::quota && k == '4') F2FSCORE_TRY(wr.setattr(*c, {.uid = 2000, .gid = 200, .projid = 9}));
        if (vol == Vol::quota && k == '5') F2FSCORE_TRY(wr.setattr(*c, {.projid = 7}));
      }
      const std::uint64_t size = it == cur.end() ? 0 : it->second.data.size();
      const std::uint32_t r = rng() % 100;
      const std::uint64_t off = r < 40 ? size : r < 80 ? rng() % (size + 1) : rng() % 300000;
      const std::size_t len = 1 + rng() % (r % 4 == 0 ? 20000 : 3000);
      const unsigned dseed = rng();
      const bool compressible = vol == Vol::compression && rng() % 2;
      F2FSCORE_TRY(t.write(p, off, compressible ? text(len, dseed) : pattern(len, dseed)));
    } else if (vol != Vol::plain && op == 9 && rng() % 2) {
      if (!cur.count(p)) continue;
      if (vol == Vol::compression) {  // truncation, mostly inside a cluster
        const std::uint64_t size = cur.at(p).data.size();
        F2FSCORE_TRY(t.truncate(p, size == 0 ? 0 : rng() % (size + 1)));
      } else {  // chown or a project change: the usage moves
        auto ino = wr.lookup(p);
        if (!ino) return make_error(ino.error());
        const std::uint32_t id = 1000 * (1 + rng() % 3);
        if (rng() % 2)
          F2FSCORE_TRY(wr.setattr(*ino, {.uid = id, .gid = id / 10}));
        else
          F2FSCORE_TRY(wr.setattr(*ino, {.projid = id / 100}));
      }
    } else if (op < 9) {  // fsync / fdatasync
      if (!cur.count(p)) continue;
      auto ino = wr.lookup(p);
      if (!ino) return make_error(ino.error());
      F2FSCORE_TRY(op % 2 ? wr.fdatasync(*ino) : wr.fsync(*ino));
      after_sync(p);
    } else {
      F2FSCORE_TRY(wr.sync());
      after_sync("");
    }
  }
  if (writebacks) *writebacks = wr.stats().node_writebacks;
  return {};
}

// Cuts random_cut_workload(seed) at every write and flush in turn: our
// roll-forward must read the last checkpoint plus what was fsynced (the
// durable state of the last call that returned, or of the one in flight),
// and the image must be clean. `export_dir`: keep up to `keep` raw cut
// images whose chain Linux must roll forward (spread over the second half of
// the writes and later), with the tree ours read.
void random_cut_run(std::uint32_t seed, int ops, CutResult* out, int fsck_every, const fs::path& export_dir = {},
                    int keep = 1, std::uint32_t node_cache_pages = 0, Vol vol = Vol::plain) {
  Model base;
  auto basedev = base_image(&base, features_of(vol));
  ASSERT_TRUE(basedev);
  const auto image = f2fstest::SparseImage::capture(*basedev);
  std::vector<Model> states{base};
  std::uint64_t total = 0;
  {
    FaultPlan fp;
    fp.ops = io_op_bit(IoOp::write) | io_op_bit(IoOp::flush);
    fp.drop_unflushed = true;
    FaultDevice dev(image.to_device(), fp);
    std::uint64_t wb = 0;
    ASSERT_OK(random_cut_workload(dev, base, seed, ops, [&](const Model& m) { states.push_back(m); }, node_cache_pages, &wb,
                                  vol));
    total = dev.counted();
    out->writebacks += wb;
    if (vol == Vol::compression) {
      dev.power_cut();
      dev.set_plan({});
      ASSERT_OK(Writer::mount(dev));  // rolled forward, then dropped
      auto v = Volume::open(dev);
      ASSERT_OK(v);
      for (const char* p : {"/base/r3", "/base/r4"})
        if (auto in = (*v)->resolve(p)) out->compr_blocks += in->raw.i.extra.i_compr_blocks.get();
    }
  }
  out->total += total;
  CutSpec spec;
  spec.trace = "seed " + std::to_string(seed) + ": ";
  // A cut during a checkpoint's pack leaves that pack torn (the other is
  // in use, as Linux picks it): the one finding allowed.
  spec.allow_torn_pack = true;
  spec.fsck_every = fsck_every;
  spec.export_dir = export_dir;
  spec.export_when = [keep](std::uint64_t n, std::uint64_t t, int exported) {
    return exported < keep && n * static_cast<std::uint64_t>(keep + 1) > t * static_cast<std::uint64_t>(exported + 1);
  };
  spec.tag = std::string(vol == Vol::compression ? "cutc" : vol == Vol::quota ? "cutq" : node_cache_pages ? "cutw" : "cutr") +
             std::to_string(seed) + "_";
  cut_every_write(
      image, states, total,
      [&](BlockDevice& d, const DurableFn& fn) {
        return random_cut_workload(d, base, seed, ops, fn, node_cache_pages, nullptr, vol);
      },
      spec, out);
}

// Seeds from FSYNC_CUT_SEEDS ("FROM-TO"; default 1-3), 40 operations each.
TEST(Fsync, RandomSequencesPowerCutAtEveryWrite) {
  std::uint32_t from = 1, to = 3;
  if (const char* e = std::getenv("FSYNC_CUT_SEEDS")) std::sscanf(e, "%u-%u", &from, &to);
  CutResult r;
  for (std::uint32_t seed = from; seed <= to && !::testing::Test::HasFailure(); ++seed)
#ifdef WRITER_WITH_FSCK
    random_cut_run(seed, 40, &r, 7);
#else
    random_cut_run(seed, 40, &r, 0);
#endif
  std::cout << "seeds " << from << "-" << to << ": " << r.total << " writes, cuts " << r.cuts << ", with a chain "
            << r.with_chain << ", rolled forward " << r.recovered << "\n";
  EXPECT_GT(r.with_chain, 0);
  EXPECT_EQ(r.recovered, r.with_chain);
}

// The random sequences on a compression volume (zstd, clusters of 4
// blocks: r3 and r4 compressed, half their writes compressible text, some
// syncs replaced by truncations) and on a quota and project quota volume
// (new files and /base/f1 of other owners, some syncs replaced by chown
// and project changes, which roll-forward replays as recover_inode()'s
// dquot_transfer() does): every cut reads as the last checkpoint plus what
// was fsynced, and both checkers (ours counts quota usage) are clean.
// Seeds from FSYNC_CUT_SEEDS as above.
void random_vol_cut_test(Vol vol) {
  std::uint32_t from = 1, to = 3;
  if (const char* e = std::getenv("FSYNC_CUT_SEEDS")) std::sscanf(e, "%u-%u", &from, &to);
  CutResult r;
  for (std::uint32_t seed = from; seed <= to && !::testing::Test::HasFailure(); ++seed)
#ifdef WRITER_WITH_FSCK
    random_cut_run(seed, 40, &r, 7, {}, 1, 0, vol);
#else
    random_cut_run(seed, 40, &r, 0, {}, 1, 0, vol);
#endif
  std::cout << "seeds " << from << "-" << to << ": " << r.total << " writes, cuts " << r.cuts << ", with a chain "
            << r.with_chain << ", rolled forward " << r.recovered << "\n";
  EXPECT_GT(r.with_chain, 0);
  EXPECT_EQ(r.recovered, r.with_chain);
  if (vol == Vol::compression) EXPECT_GT(r.compr_blocks, 0u) << "the text clusters must compress";
}

TEST(Fsync, CompressionVolumeRandomSequencesPowerCutAtEveryWrite) { random_vol_cut_test(Vol::compression); }
TEST(Fsync, QuotaVolumeRandomSequencesPowerCutAtEveryWrite) { random_vol_cut_test(Vol::quota); }

// The same sequences with a node page cache of 4 pages: node writeback
// runs between checkpoints (dirty pages to the node logs, no checkpoint).
// A written-back node in the warm node log ends roll-forward's chain, so
// every cut still reads as the last checkpoint plus what was fsynced before
// it, and an fsync after a writeback takes a checkpoint.
TEST(Fsync, RandomSequencesWithNodeWritebackPowerCutAtEveryWrite) {
  std::uint32_t from = 1, to = 3;
  if (const char* e = std::getenv("FSYNC_CUT_SEEDS")) std::sscanf(e, "%u-%u", &from, &to);
  CutResult r;
  for (std::uint32_t seed = from; seed <= to && !::testing::Test::HasFailure(); ++seed)
    random_cut_run(seed, 40, &r, 0, {}, 1, 4);
  std::cout << "seeds " << from << "-" << to << ": " << r.total << " writes, " << r.writebacks << " node writebacks, cuts "
            << r.cuts << ", with a chain " << r.with_chain << ", rolled forward " << r.recovered << "\n";
  EXPECT_GT(r.writebacks, 0u);
  EXPECT_EQ(r.recovered, r.with_chain);
}

// The checkpoint after an fsync rewrites the fsynced node blocks: as the
// kernel's f2fs_sync_node_pages() (fs/f2fs/node.c), a checkpoint writes them
// with the fsync and dentry marks cleared, so that a cut during it leaves
// nothing for roll-forward from the previous checkpoint. `path` new (create,
// fsync, sync, write 100 bytes, sync) or existing (/base/f0: an extending
// write fsynced, sync, another extending write, sync), cut at every write.
// `export_dir`: keep some raw cut images (before our recovery) with the
// tree our recovery read, for Linux (fsync_stale_linux.sh): two cuts during
// the last sync's checkpoint and the first with a chain to roll forward.
void stale_mark_run(const std::string& path, bool existing, std::uint32_t ipu_policy,
                    const fs::path& export_dir = {}) {
  Model base;
  auto basedev = base_image(&base);
  ASSERT_TRUE(basedev);
  const auto image = f2fstest::SparseImage::capture(*basedev);
  auto workload = [&](BlockDevice& dev, std::vector<Model>* states) -> Status {
    MountOptions mo;
    mo.fixed_time = 1700000300;
    mo.checkpoint_interval_s = 0;
    mo.ipu.ipu_policy = ipu_policy;
    auto w = Writer::mount(dev, mo);
    if (!w) return make_error(w.error());
    Writer& wr = **w;
    Model cur = base;
    auto write = [&](nid_t ino, std::uint64_t off, const std::string& d) -> Status {
      auto r = wr.write(ino, off, bytes(d));
      if (!r) return make_error(r.error());
      auto& s = cur[path].data;
      if (s.size() < off + d.size()) s.resize(static_cast<std::size_t>(off + d.size()), '\0');
      std::copy(d.begin(), d.end(), s.begin() + static_cast<std::ptrdiff_t>(off));
      return {};
    };
    nid_t ino = 0;
    if (existing) {
      auto l = wr.lookup(path);
      if (!l) return make_error(l.error());
      ino = *l;
      F2FSCORE_TRY(write(ino, cur[path].data.size(), pattern(3000, 21)));
    } else {
      auto c = wr.create(path);
      if (!c) return make_error(c.error());
      ino = *c;
      cur[path] = {false, ""};
    }
    F2FSCORE_TRY(wr.fsync(ino));
    if (states) states->push_back(cur);
    F2FSCORE_TRY(wr.sync());
    if (states) states->push_back(cur);
    F2FSCORE_TRY(write(ino, existing ? cur[path].data.size() : 0, pattern(100, 22)));
    F2FSCORE_TRY(wr.sync());
    if (states) states->push_back(cur);
    return {};
  };
  std::vector<Model> states{base};
  std::uint64_t total = 0;
  {
    FaultPlan fp;
    fp.ops = io_op_bit(IoOp::write) | io_op_bit(IoOp::flush);
    fp.drop_unflushed = true;
    FaultDevice dev(image.to_device(), fp);
    auto r = workload(dev, &states);
    ASSERT_TRUE(r) << r.error().to_string();
    total = dev.counted();
  }
  ASSERT_EQ(states.size(), 4u);
  ASSERT_GT(total, 10u);
  int rolled = 0, exported_chain = 0;
  for (std::uint64_t n = 0; n <= total; ++n) {
    SCOPED_TRACE(path + ": cut at request " + std::to_string(n) + " of " + std::to_string(total));
    FaultPlan fp;
    fp.ops = io_op_bit(IoOp::write) | io_op_bit(IoOp::flush);
    fp.drop_unflushed = true;
    fp.fail_after = n;
    FaultDevice dev(image.to_device(), fp);
    std::vector<Model> seen;
    auto r = workload(dev, &seen);
    EXPECT_EQ(static_cast<bool>(r), n >= total);
    dev.power_cut();
    dev.set_plan({});
    std::uint64_t pending = 0;
    {
      auto v = Volume::open(dev);
      ASSERT_TRUE(v) << v.error().to_string();
      pending = (*v)->open_report().pending_fsync_nodes;
    }
    const bool in_last_sync = seen.size() == 2;
    std::optional<f2fstest::SparseImage> raw;
    // In the last sync's checkpoint (its node, NAT/SIT, SSA and pack writes
    // are the last few), where the stale marks were left.
    const bool take_sync = !export_dir.empty() && in_last_sync && (n + 5 == total || n + 3 == total);
    const bool take_chain = !export_dir.empty() && !take_sync && pending > 0 && exported_chain < 1;
    if (take_sync || take_chain) {
      raw = f2fstest::SparseImage::capture(dev);
      if (take_chain) ++exported_chain;
    }
    auto w = Writer::mount(dev);
    ASSERT_TRUE(w) << w.error().to_string();
    rolled += (*w)->stats().recovered_nodes > 0;
    // No fsync after the first sync returned: nothing to roll forward from
    // its checkpoint (the second write was never fsynced).
    if (seen.size() >= 2) EXPECT_EQ((*w)->stats().recovered_nodes, 0u) << seen.size() << " calls returned";
    w->reset();
    // What a cut may leave: the state of the last call that returned, or of
    // the one in flight; never the unsynced write replayed on its own.
    const std::size_t done = seen.size();
    const Model got = tree_of(dev);
    const bool at_last = describe_diff(states[done], got).empty();
    const bool at_next = done + 1 < states.size() && describe_diff(states[done + 1], got).empty();
    EXPECT_TRUE(at_last || at_next) << done << " calls returned; against the last durable state:\n"
                                    << describe_diff(states[done], got);
    // A cut during a checkpoint's pack leaves that pack torn: the one
    // finding allowed (the other pack is in use, as Linux picks it).
    writertest::our_fsck_clean(dev, "after a cut", true);
#ifdef WRITER_WITH_FSCK
    writertest::fsck_f2fs_clean(dev, "after a cut");
#endif
    if (raw) {
      const std::string tag = (existing ? "stale-existing-cut" : "stale-new-cut") + std::to_string(n);
      auto rd = raw->to_device();
      ASSERT_TRUE(save(*rd, export_dir / (tag + ".img")));
      write_tree(got, export_dir / (tag + ".tree"));
    }
    if (::testing::Test::HasFailure()) return;
  }
  std::cout << path << ": " << total << " writes cut, rolled forward in " << rolled << "\n";
}

TEST(Fsync, CheckpointDropsStaleMarksNewFile) { stale_mark_run("/base/n1", false, IpuOptions::kKernelDefault); }
TEST(Fsync, CheckpointDropsStaleMarksExistingFile) { stale_mark_run("/base/f0", true, 0); }

// Seeded random workloads: creates, writes (some past the inode's pointers
// and into indirect nodes), truncates, unlinks, mkdir/rmdir, fsync,
// fdatasync and sync on random files; each phase stops without a checkpoint
// and the next mount must read the last checkpoint plus every file as its
// last fsync left it (an unlinked fsynced file comes back, as in Linux).
struct RandomCounts {
  std::uint64_t chains = 0, checkpoints = 0, recovered = 0;
};

void random_fsync_run(std::uint32_t seed, int phases, int ops, RandomCounts* counts, const fs::path& export_img = {}) {
  Model base;
  auto dev = base_image(&base);
  ASSERT_TRUE(dev);
  std::mt19937 rng(seed);
  Model durable = base;
  for (int phase = 0; phase < phases; ++phase) {
    SCOPED_TRACE("seed " + std::to_string(seed) + " phase " + std::to_string(phase));
    MountOptions mo;
    mo.fixed_time = 1700001000 + static_cast<std::uint64_t>(phase);
    mo.checkpoint_interval_s = 0;
    auto w = Writer::mount(*dev, mo);
    ASSERT_OK(w);
    Writer& wr = **w;
    Model cur = durable, cp = durable;
    std::map<std::string, ModelEntry> fsynced;
    std::uint64_t cps = wr.stats().checkpoints;
    auto pick = [&](bool dir) -> std::string {
      std::vector<std::string> c;
      for (const auto& [p, e] : cur)
        if (e.dir == dir && (dir || !p.empty())) c.push_back(p);
      if (c.empty()) return "";
      return c[rng() % c.size()];
    };
    auto after_sync = [&](const std::string& path) {
      if (wr.stats().checkpoints != cps) {
        cps = wr.stats().checkpoints;
        cp = cur;
        fsynced.clear();
      } else if (!path.empty()) {
        fsynced[path] = cur[path];
      }
    };
    for (int i = 0; i < ops; ++i) {
      // The last third: no sync, directory fsync or mkdir, so that chains
      // pile up after the last checkpoint for the next mount to roll forward.
      unsigned op = rng() % 20;
      if (3 * i >= 2 * ops && (op == 7 || op >= 18)) op = 8 + rng() % 10;
      if (op < 4) {  // create or write
        std::string p = pick(false);
        if (p.empty() || rng() % 3 == 0) p = pick(true) + "/r" + std::to_string(rng() % 1000);
        if (cur.count(p) && cur[p].dir) continue;
        auto ino = wr.lookup(p);
        if (!ino) {
          auto c = wr.create(p);
          ASSERT_TRUE(c) << p << ": " << c.error().to_string();
          ino = *c;
          cur[p] = {false, ""};
        }
        const std::uint32_t r = rng() % 100;
        const std::uint64_t off = r < 60 ? rng() % 20000 : r < 90 ? rng() % 400000 : (4ull << 20) + rng() % (3ull << 20);
        const std::size_t len = 1 + rng() % (r < 95 ? 9000 : 300000);
        const std::string d = pattern(len, rng());
        ASSERT_TRUE(wr.write(*ino, off, bytes(d)));
        auto& s2 = cur[p].data;
        if (s2.size() < off + len) s2.resize(static_cast<std::size_t>(off + len), '\0');
        std::copy(d.begin(), d.end(), s2.begin() + static_cast<std::ptrdiff_t>(off));
      } else if (op < 6) {  // truncate
        const std::string p = pick(false);
        if (p.empty()) continue;
        const std::uint64_t sz = cur[p].data.empty() ? 0 : rng() % (cur[p].data.size() + 5000);
        ASSERT_TRUE(wr.truncate(*wr.lookup(p), sz));
        cur[p].data.resize(static_cast<std::size_t>(sz), '\0');
      } else if (op < 7) {  // unlink
        const std::string p = pick(false);
        if (p.empty()) continue;
        ASSERT_TRUE(wr.unlink(p));
        cur.erase(p);
      } else if (op < 8) {  // mkdir / rmdir
        const std::string d = pick(true);
        bool empty = true;
        for (const auto& [p, e] : cur)
          if (p.size() > d.size() && p.compare(0, d.size() + 1, d + "/") == 0) empty = false;
        if (!d.empty() && empty && rng() % 2) {
          ASSERT_TRUE(wr.rmdir(d));
          cur.erase(d);
        } else if (d.size() < 40) {
          const std::string n = d + "/d" + std::to_string(rng() % 100);
          if (cur.count(n)) continue;
          ASSERT_TRUE(wr.mkdir(n));
          cur[n] = {true, ""};
        }
      } else if (op < 18) {  // fsync / fdatasync
        const std::string p = pick(false);
        if (p.empty()) continue;
        auto ino = wr.lookup(p);
        ASSERT_TRUE(ino);
        ASSERT_TRUE(op % 2 ? wr.fdatasync(*ino) : wr.fsync(*ino));
        after_sync(p);
      } else if (op < 19 && rng() % 4 == 0) {
        ASSERT_TRUE(wr.sync());
        after_sync("");
      } else {
        const std::string d = pick(true);
        ASSERT_TRUE(wr.fsync(d.empty() ? *wr.lookup("/") : *wr.lookup(d)));  // a directory: a checkpoint
        after_sync("");
      }
    }
    durable = cp;
    for (const auto& [p, e] : fsynced) durable[p] = e;
    const auto st = wr.stats();
    w->reset();  // stop without a checkpoint
    if (!export_img.empty() && phase + 1 == phases) {
      // Linux must roll forward to read the durable tree.
      EXPECT_NE(describe_diff(durable, tree_of(*dev)), "") << "the checkpoint alone already reads as durable";
      ASSERT_TRUE(save(*dev, export_img));
      write_tree(durable, export_img.string() + ".tree");
    }
    auto w2 = Writer::mount(*dev);
    ASSERT_OK(w2);
    counts->chains += st.ipu.fsyncs + st.ipu.fdatasyncs - st.ipu.fsync_checkpoints;
    counts->checkpoints += st.ipu.fsync_checkpoints;
    counts->recovered += (*w2)->stats().recovered_nodes;
    w2->reset();
    EXPECT_EQ(describe_diff(durable, tree_of(*dev)), "")
        << st.ipu.fsyncs << " fsyncs, " << st.ipu.fdatasyncs << " fdatasyncs, " << st.ipu.fsync_checkpoints
        << " took a checkpoint";
    check_clean(*dev, "seed " + std::to_string(seed) + " phase " + std::to_string(phase));
    if (::testing::Test::HasFailure()) return;
  }
}

TEST(Fsync, RandomWorkloadsRollForward) {
  std::uint32_t from = 1, to = 4;
  if (const char* e = std::getenv("FSYNC_SEEDS")) std::sscanf(e, "%u-%u", &from, &to);
  RandomCounts c;
  for (std::uint32_t seed = from; seed <= to && !::testing::Test::HasFailure(); ++seed)
    if (f2fstest::sampled(seed - from)) random_fsync_run(seed, 3, 150, &c);
  std::cout << "fsyncs by chain " << c.chains << ", by checkpoint " << c.checkpoints << "; nodes rolled forward "
            << c.recovered << "\n";
  EXPECT_GT(c.chains, c.checkpoints / 4) << "the workloads must exercise chains, not only checkpoints";
  EXPECT_GT(c.recovered, 10u);
}

// A power cut during roll-forward itself: the recovery writes nothing over
// the chain before its checkpoint commits, so the next mount recovers the
// same tree.
TEST(Fsync, PowerCutDuringRollForward) {
  Model base;
  auto basedev = base_image(&base);
  ASSERT_TRUE(basedev);
  std::vector<Model> states;
  ASSERT_TRUE(fsync_workload(*basedev, base, [&](const Model& m) { states.push_back(m); }));
  const auto image = f2fstest::SparseImage::capture(*basedev);
  {
    auto v = Volume::open(*basedev);
    ASSERT_TRUE(v);
    ASSERT_GT((*v)->open_report().pending_fsync_nodes, 0u);
  }
  std::uint64_t total = 0;
  {
    FaultPlan fp;
    fp.ops = io_op_bit(IoOp::write) | io_op_bit(IoOp::flush);
    fp.drop_unflushed = true;
    FaultDevice dev(image.to_device(), fp);
    auto w = Writer::mount(dev);
    ASSERT_OK(w);
    total = dev.counted();
  }
  ASSERT_GT(total, 3u);
  for (std::uint64_t n = 0; n < total; ++n) {
    SCOPED_TRACE("cut at request " + std::to_string(n) + " of " + std::to_string(total) + " of the recovery");
    FaultPlan fp;
    fp.ops = io_op_bit(IoOp::write) | io_op_bit(IoOp::flush);
    fp.drop_unflushed = true;
    fp.fail_after = n;
    FaultDevice dev(image.to_device(), fp);
    EXPECT_FALSE(Writer::mount(dev)) << "the recovery's checkpoint cannot complete";
    dev.power_cut();
    dev.set_plan({});
    auto w = Writer::mount(dev);
    ASSERT_OK(w);
    EXPECT_GT((*w)->stats().recovered_nodes, 0u);
    w->reset();
    EXPECT_EQ(describe_diff(states.back(), tree_of(dev)), "");
    check_clean(dev, "after a cut during roll-forward", n % 4 == 0);
    if (::testing::Test::HasFailure()) return;
  }
}

// ---- For fsync_linux.sh ------------------------------------------------------

// Our engine writes and fsyncs, stops without a checkpoint;
// FSYNC_IMAGE gets the image, FSYNC_IMAGE.tree the files Linux must read.
TEST(FsyncOracle, DISABLED_WriteImage) {
  const char* out = std::getenv("FSYNC_IMAGE");
  ASSERT_NE(out, nullptr) << "set FSYNC_IMAGE";
  Model base;
  auto dev = base_image(&base);
  ASSERT_TRUE(dev);
  Model want;
  std::vector<Model> states;
  ASSERT_TRUE(fsync_workload(*dev, base, [&](const Model& m) { states.push_back(m); }));
  want = states.back();
  {
    auto v = Volume::open(*dev);
    ASSERT_TRUE(v);
    ASSERT_GT((*v)->open_report().pending_fsync_nodes, 0u);
  }
  ASSERT_TRUE(save(*dev, out));
  write_tree(want, std::string(out) + ".tree");
}

// A random workload's last phase, stopped without a checkpoint, for Linux
// to roll forward (FSYNC_RANDOM_OUT: image; .tree beside it).
TEST(FsyncOracle, DISABLED_RandomImage) {
  const char* out = std::getenv("FSYNC_RANDOM_OUT");
  ASSERT_NE(out, nullptr) << "set FSYNC_RANDOM_OUT";
  RandomCounts c;
  random_fsync_run(3, 3, 150, &c, out);
  EXPECT_GT(c.recovered, 0u);
}

// The 700-fsync chain across segments (FSYNC_LONG_OUT: image; .tree).
TEST(FsyncOracle, DISABLED_LongChainImage) {
  const char* out = std::getenv("FSYNC_LONG_OUT");
  ASSERT_NE(out, nullptr) << "set FSYNC_LONG_OUT";
  Model m;
  auto dev = base_image(&m);
  ASSERT_TRUE(dev);
  auto r = long_chain(*dev, &m);
  ASSERT_OK(r);
  ASSERT_TRUE(save(*dev, out));
  write_tree(m, std::string(out) + ".tree");
}

// The Linux sample of cut images: raw cut images (not recovered by us) with
// their expected trees, into FSYNC_CUTS.
//
// The random sequences' raw cut images, for fsync_random_linux.sh: seeds
// FSYNC_CUT_SEEDS ("FROM-TO", default 1-4), up to FSYNC_CUT_KEEP (default 2)
// cuts with a chain per seed, each TAG.img with TAG.tree (the tree our
// roll-forward read, the last checkpoint plus what was fsynced) in
// FSYNC_CUTS; FSYNC_CUT_VOL=compression or quota: on that volume.
TEST(FsyncOracle, DISABLED_RandomCutImages) {
  const char* out = std::getenv("FSYNC_CUTS");
  ASSERT_NE(out, nullptr) << "set FSYNC_CUTS";
  fs::create_directories(out);
  std::uint32_t from = 1, to = 4;
  int keep = 2;
  if (const char* e = std::getenv("FSYNC_CUT_SEEDS")) std::sscanf(e, "%u-%u", &from, &to);
  if (const char* e = std::getenv("FSYNC_CUT_KEEP")) keep = std::atoi(e);
  std::uint32_t cache = 0;  // FSYNC_CUT_NODE_CACHE: node page cache bound (node writeback)
  if (const char* e = std::getenv("FSYNC_CUT_NODE_CACHE")) cache = static_cast<std::uint32_t>(std::atoi(e));
  Vol vol = Vol::plain;  // FSYNC_CUT_VOL: "compression" or "quota" (the volumes of random_cut_workload())
  if (const char* e = std::getenv("FSYNC_CUT_VOL")) {
    const std::string v = e;
    ASSERT_TRUE(v == "compression" || v == "quota") << "FSYNC_CUT_VOL: compression or quota, not " << v;
    vol = v == "compression" ? Vol::compression : Vol::quota;
  }
  CutResult r;
  for (std::uint32_t seed = from; seed <= to && !::testing::Test::HasFailure(); ++seed)
    random_cut_run(seed, 40, &r, 0, out, keep, cache, vol);
  std::cout << "seeds " << from << "-" << to << ": cuts " << r.cuts << ", with a chain " << r.with_chain << "\n";
}

// The stale-mark sequences' raw cut images, for fsync_stale_linux.sh
// (FSYNC_CUTS: the directory): Linux must read each as our recovery did.
TEST(FsyncOracle, DISABLED_StaleMarkCutImages) {
  const char* out = std::getenv("FSYNC_CUTS");
  ASSERT_NE(out, nullptr) << "set FSYNC_CUTS";
  fs::create_directories(out);
  stale_mark_run("/base/n1", false, IpuOptions::kKernelDefault, out);
  stale_mark_run("/base/f0", true, 0, out);
}

TEST(FsyncOracle, DISABLED_CutImages) {
  const char* out = std::getenv("FSYNC_CUTS");
  ASSERT_NE(out, nullptr) << "set FSYNC_CUTS";
  fs::create_directories(out);
  CutResult r;
  power_cut_run(0, &r, out);
}

// An image Linux left after a power cut (FSYNC_IMAGE), whose fsynced files
// are the files under FSYNC_EXPECT (paths relative to the volume's root):
// our Writer rolls it forward and reads them; after our unmount the image
// is clean.
TEST(FsyncOracle, DISABLED_RecoverLinuxImage) {
  const char* img = std::getenv("FSYNC_IMAGE");
  const char* expect = std::getenv("FSYNC_EXPECT");
  ASSERT_TRUE(img && expect) << "set FSYNC_IMAGE and FSYNC_EXPECT";
  auto dev = f2fstest::load_image(img);
  ASSERT_TRUE(dev);
  std::uint64_t pending = 0;
  {
    auto v = Volume::open(*dev);
    ASSERT_OK(v);
    pending = (*v)->open_report().pending_fsync_nodes;
    EXPECT_FALSE((*v)->open_report().clean_unmount);
  }
  EXPECT_GT(pending, 0u) << "Linux left no fsynced node chain";
  auto w = Writer::mount(*dev);
  ASSERT_OK(w);
  EXPECT_GT((*w)->stats().recovered_nodes, 0u);
  std::cout << "Linux's chain: " << pending << " fsync-marked nodes; we rolled forward " << (*w)->stats().recovered_nodes
            << " nodes\n";
  for (const auto& e : fs::recursive_directory_iterator(expect)) {
    if (!e.is_regular_file()) continue;
    const std::string rel = "/" + fs::relative(e.path(), expect).string();
    std::ifstream in(e.path(), std::ios::binary);
    const std::string want((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
    auto ino = (*w)->lookup(rel);
    ASSERT_TRUE(ino) << rel << ": " << ino.error().to_string();
    std::string got(want.size() + 100, '\0');
    auto n = (*w)->read(*ino, 0, std::span<std::uint8_t>(reinterpret_cast<std::uint8_t*>(got.data()), got.size()));
    ASSERT_TRUE(n);
    got.resize(*n);
    EXPECT_TRUE(got == want) << rel << ": " << got.size() << " bytes read, " << want.size() << " fsynced";
  }
  // Keep writing on the recovered volume, then unmount.
  auto f = (*w)->create("/after-recovery");
  ASSERT_OK(f);
  ASSERT_TRUE((*w)->write(*f, 0, bytes(pattern(10000, 99))));
  ASSERT_TRUE((*w)->unmount());
  check_clean(*dev, "Linux's power-cut image after our roll-forward and unmount");
  ASSERT_TRUE(save(*dev, img));
}

}  // namespace
