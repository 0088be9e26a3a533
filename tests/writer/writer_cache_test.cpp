// The writer's page cache, direct and O_DSYNC writes, periodic checkpoints,
// discard, iostat tags and checkpoint cost (writer/cache.cpp,
// docs/writer.md "Page cache"). No threads here (unit label: runs under
// qemu-user); writer_thread_test.cpp has the multi-threaded test.
#include <gtest/gtest.h>

#include <cstdlib>
#include <cstring>
#include <memory>
#include <map>
#include <random>
#include <utility>
#include <vector>

#include "f2fscore/fsck.hpp"
#include "f2fscore/iostat.hpp"
#include "f2fscore/writer.hpp"
#include "meta/meta_test_util.hpp"
#include "util/aligned.hpp"
#include "writer/writer_test_util.hpp"

namespace {

using namespace metatest;

/// Passes everything to `inner` and records each request (op, tag, range).
class RecordingDevice final : public BlockDevice {
 public:
  struct Rec {
    IoOp op;
    std::uint16_t tag;
    std::uint64_t offset, length;
    const void* buf;
  };
  explicit RecordingDevice(BlockDevice& inner) : in_(inner) {}
  const DeviceInfo& info() const noexcept override { return in_.info(); }
  void submit(IoRequest& req) noexcept override {
    log.push_back({req.op, req.tag, req.offset, req.length, req.buf});
    in_.submit(req);
  }
  std::size_t poll(bool wait) noexcept override { return in_.poll(wait); }
  std::size_t in_flight() const noexcept override { return in_.in_flight(); }
  std::size_t count(IoOp op, std::uint16_t tag = 0xFFFF) const {
    std::size_t n = 0;
    for (const auto& r : log) n += r.op == op && (tag == 0xFFFF || r.tag == tag);
    return n;
  }
  std::uint64_t bytes(IoOp op, std::uint16_t tag = 0xFFFF) const {
    std::uint64_t n = 0;
    for (const auto& r : log)
      if (r.op == op && (tag == 0xFFFF || r.tag == tag)) n += r.length;
    return n;
  }
  std::vector<Rec> log;

 private:
  BlockDevice& in_;
};

std::span<const std::uint8_t> bytes(const std::string& s) {
  return {reinterpret_cast<const std::uint8_t*>(s.data()), s.size()};
}

std::string read_all(Writer& w, nid_t ino, std::size_t n) {
  std::string s(n, '\0');
  auto r = w.read(ino, 0, std::span<std::uint8_t>(reinterpret_cast<std::uint8_t*>(s.data()), s.size()));
  if (!r) return "READ-ERROR " + r.error().to_string();
  s.resize(*r);
  return s;
}

std::string pattern(std::size_t n, std::uint32_t seed) {
  std::string s(n, '\0');
  std::mt19937 rng(seed);
  for (auto& c : s) c = static_cast<char>(rng());
  return s;
}

// The files our reader sees, our checker check-only, and (interop build)
// fsck.f2fs -f on a copy.
void check_files(BlockDevice& dev, const std::map<std::string, std::string>& files, const std::string& what) {
  {
    auto v = Volume::open(dev);
    ASSERT_TRUE(v) << what << ": " << v.error().to_string();
    for (const auto& [path, data] : files) {
      auto in = (*v)->resolve(path);
      ASSERT_TRUE(in) << what << ": " << path;
      std::string got(in->size, '\0');
      auto n = (*v)->read(*in, 0, std::span<std::uint8_t>(reinterpret_cast<std::uint8_t*>(got.data()), got.size()));
      ASSERT_TRUE(n) << what << ": " << path;
      EXPECT_TRUE(got == data) << what << ": " << path << " differs (size " << got.size() << " vs " << data.size() << ")";
    }
  }
  writertest::check_clean(dev, what);
}

constexpr std::uint16_t kCpData = io_tag(IostatType::fs_cp_data_io);
constexpr std::uint16_t kDataWb = io_tag(IostatType::fs_data_io);
constexpr std::uint16_t kDirect = io_tag(IostatType::app_direct_io);

// A fixed clock and no periodic checkpoint: the tests count every request.
MountOptions test_options() {
  MountOptions mo;
  mo.fixed_time = 1700000100;
  mo.checkpoint_interval_s = 0;
  return mo;
}

TEST(WriterCache, DirtyPagesStayUntilWritebackAndCoalesce) {
  auto mem = our_mkfs(192ull << 20, kRichFeatures);
  ASSERT_TRUE(mem);
  RecordingDevice dev(*mem);
  MountOptions mo = test_options();
  auto w = Writer::mount(dev, mo);
  ASSERT_OK(w);
  auto f = (*w)->create("/seq");
  ASSERT_TRUE(f);
  const std::string data = pattern(8u << 20, 1);  // 2048 blocks
  dev.log.clear();
  for (std::size_t off = 0; off < data.size(); off += 256 << 10)
    ASSERT_TRUE((*w)->write(*f, off, bytes(data.substr(off, 256 << 10))));
  // The 64 MiB cache holds all of it: nothing written yet, but the blocks
  // are reserved (i_blocks counts them, as f2fs_reserve_block() does).
  EXPECT_EQ(dev.count(IoOp::write), 0u);
  auto st = (*w)->stat(*f);
  ASSERT_TRUE(st);
  // 864 addresses in this inode (rich features) + 1018 per direct node:
  // blocks 0..2047 need both direct nodes of the inode.
  EXPECT_EQ(st->blocks, 1u + 2048u + 2u);
  EXPECT_EQ(read_all(**w, *f, data.size()), data);
  ASSERT_TRUE((*w)->sync());
  // 2048 blocks of the warm data log: at most 1 MiB per request, so at
  // least 8 requests; a segment (512 blocks) boundary or a slab's end
  // (2 MiB) may split one. One 4 KiB request per block would be 2048.
  const std::size_t reqs = dev.count(IoOp::write, kCpData);
  EXPECT_GE(reqs, 8u);
  EXPECT_LE(reqs, 16u);
  // Plus the root's dentry block, cached since create() and written with
  // the checkpoint (Linux's dirty dentry pages go out as FS_CP_DATA_IO too).
  EXPECT_EQ(dev.bytes(IoOp::write, kCpData), data.size() + 4096u);
  EXPECT_EQ(read_all(**w, *f, data.size()), data);
  ASSERT_TRUE((*w)->unmount());
  check_files(*mem, {{"/seq", data}}, "8 MiB through the cache");
}

// Reads of blocks that follow each other on the device are one request per
// run (Writer::read() in chunks of 256 blocks); cached pages and holes are
// not read; what was read is cached.
TEST(WriterCache, ReadsOfContiguousBlocksAreOneRequestPerRun) {
  auto mem = our_mkfs(192ull << 20, kRichFeatures);
  ASSERT_TRUE(mem);
  std::string data = pattern(8u << 20, 7);
  {
    auto w = Writer::mount(*mem, test_options());
    ASSERT_OK(w);
    auto f = (*w)->create("/f");
    ASSERT_TRUE(f);
    // Blocks 0..1023 and 1536..2047; 1024..1535 a hole.
    ASSERT_TRUE((*w)->write(*f, 0, bytes(data.substr(0, 4u << 20))));
    ASSERT_TRUE((*w)->write(*f, 6u << 20, bytes(data.substr(6u << 20))));
    ASSERT_TRUE((*w)->unmount());
  }
  std::fill(data.begin() + (4 << 20), data.begin() + (6 << 20), '\0');
  RecordingDevice dev(*mem);
  auto w = Writer::mount(dev, test_options());
  ASSERT_OK(w);
  auto f = (*w)->lookup("/f");
  ASSERT_TRUE(f);
  const std::string blk100 = pattern(4096, 8);  // block 100 dirty in the cache
  ASSERT_TRUE((*w)->write(*f, 100u * 4096, bytes(blk100)));
  data.replace(100u * 4096, 4096, blk100);
  constexpr std::uint16_t kDataRead = io_tag(IostatType::fs_data_read_io);
  dev.log.clear();
  std::string got(data.size() - 2000, '\0');
  auto n = (*w)->read(*f, 1000, std::span<std::uint8_t>(reinterpret_cast<std::uint8_t*>(got.data()), got.size()));
  ASSERT_TRUE(n);
  ASSERT_EQ(*n, got.size());
  EXPECT_TRUE(got == data.substr(1000, got.size()));
  // Read from the device: blocks 0..1023 but 100, and 1536..2047.
  EXPECT_EQ(dev.bytes(IoOp::read, kDataRead), (1023u + 512u) * 4096u);
  // Runs [0,100) [101,256) [256,512) [512,768) [768,1024) [1536,1792)
  // [1792,2048): 7 requests, more only where the log's next segment is not
  // the adjacent one (4 segment boundaries in 2048 blocks). One request per
  // block would be 1535.
  const std::size_t reqs = dev.count(IoOp::read, kDataRead);
  EXPECT_GE(reqs, 7u);
  EXPECT_LE(reqs, 11u);
  dev.log.clear();
  EXPECT_EQ(read_all(**w, *f, data.size()), data);
  EXPECT_EQ(dev.count(IoOp::read, kDataRead), 0u) << "the blocks read are cached";
  ASSERT_TRUE((*w)->unmount());
}

// cache_reads = false (the FUSE daemon, under the kernel's page cache):
// what a read brings from the device is not kept, so reading it again
// reads the device again; dirty pages are still read from the cache.
TEST(WriterCache, ReadsNotCachedWhenAskedNotTo) {
  auto mem = our_mkfs(192ull << 20, kRichFeatures);
  ASSERT_TRUE(mem);
  const std::string data = pattern(1u << 20, 11);  // 256 blocks
  {
    auto w = Writer::mount(*mem, test_options());
    ASSERT_OK(w);
    auto f = (*w)->create("/f");
    ASSERT_TRUE(f);
    ASSERT_TRUE((*w)->write(*f, 0, bytes(data)));
    ASSERT_TRUE((*w)->unmount());
  }
  RecordingDevice dev(*mem);
  MountOptions mo = test_options();
  mo.cache_reads = false;
  auto w = Writer::mount(dev, mo);
  ASSERT_OK(w);
  auto f = (*w)->lookup("/f");
  ASSERT_TRUE(f);
  std::string expect = data;
  const std::string blk7 = pattern(4096, 12);  // block 7 dirty in the cache
  ASSERT_TRUE((*w)->write(*f, 7u * 4096, bytes(blk7)));
  expect.replace(7u * 4096, 4096, blk7);
  constexpr std::uint16_t kDataRead = io_tag(IostatType::fs_data_read_io);
  for (int round = 0; round < 2; ++round) {
    dev.log.clear();
    EXPECT_EQ(read_all(**w, *f, expect.size()), expect) << "round " << round;
    EXPECT_EQ(dev.bytes(IoOp::read, kDataRead), 255u * 4096u) << "round " << round << ": all but the dirty block";
  }
  ASSERT_TRUE((*w)->unmount());
  check_files(*mem, {{"/f", expect}}, "cache_reads off");
}

TEST(WriterCache, SmallCacheWritesBackWhenFull) {
  auto mem = our_mkfs(192ull << 20, kRichFeatures);
  ASSERT_TRUE(mem);
  RecordingDevice dev(*mem);
  MountOptions mo = test_options();
  mo.cache_bytes = 64 << 10;  // 16 pages
  auto w = Writer::mount(dev, mo);
  ASSERT_TRUE(w);
  auto f = (*w)->create("/a");
  auto g = (*w)->create("/b");
  ASSERT_TRUE(f && g);
  std::string a = pattern(3u << 20, 2), b;
  dev.log.clear();
  for (std::size_t off = 0; off < a.size(); off += 64 << 10) ASSERT_TRUE((*w)->write(*f, off, bytes(a.substr(off, 64 << 10))));
  // Writeback as the cache fills: in runs, not block by block.
  const std::size_t reqs = dev.count(IoOp::write, kDataWb);
  EXPECT_GT(reqs, 0u);
  EXPECT_LE(reqs, 768u / 4) << "writeback is not coalesced";
  // Partial overwrites and a second file, read back through and around the cache.
  std::mt19937 rng(3);
  for (int k = 0; k < 300; ++k) {
    const std::size_t off = rng() % a.size(), n = 1 + rng() % 9000;
    const std::string p = pattern(n, 100 + static_cast<std::uint32_t>(k));
    if (k % 3 == 0) {
      ASSERT_TRUE((*w)->write(*g, b.size(), bytes(p)));
      b += p;
    } else {
      ASSERT_TRUE((*w)->write(*f, off, bytes(p)));
      if (off + n > a.size()) a.resize(off + n);
      a.replace(off, n, p);
    }
    if (k % 50 == 0) {
      ASSERT_EQ(read_all(**w, *f, a.size()), a);
      ASSERT_EQ(read_all(**w, *g, b.size()), b);
    }
  }
  EXPECT_EQ(read_all(**w, *f, a.size()), a);
  EXPECT_EQ(read_all(**w, *g, b.size()), b);
  ASSERT_TRUE((*w)->unmount());
  check_files(*mem, {{"/a", a}, {"/b", b}}, "16-page cache");
  // Remount: read from the device.
  auto w2 = Writer::mount(*mem, mo);
  ASSERT_TRUE(w2);
  EXPECT_EQ(read_all(**w2, *f, a.size()), a);
  ASSERT_TRUE((*w2)->unmount());
}

TEST(WriterCache, NoCacheWritesThrough) {
  auto mem = our_mkfs(192ull << 20, kRichFeatures);
  ASSERT_TRUE(mem);
  RecordingDevice dev(*mem);
  MountOptions mo;
  mo.fixed_time = 1700000100;
  mo.cache_bytes = 0;
  auto w = Writer::mount(dev, mo);
  ASSERT_TRUE(w);
  auto f = (*w)->create("/a");
  ASSERT_TRUE(f);
  const std::string a = pattern(40960, 4);
  dev.log.clear();
  ASSERT_TRUE((*w)->write(*f, 0, bytes(a)));
  EXPECT_EQ(dev.bytes(IoOp::write), a.size());  // at once, 10 blocks
  ASSERT_TRUE((*w)->unmount());
  check_files(*mem, {{"/a", a}}, "no cache");
}

TEST(WriterCache, TruncateAndUnlinkDropCachedPages) {
  auto mem = our_mkfs(192ull << 20, kRichFeatures);
  ASSERT_TRUE(mem);
  MountOptions mo;
  mo.fixed_time = 1700000100;
  auto w = Writer::mount(*mem, mo);
  ASSERT_TRUE(w);
  auto f = (*w)->create("/t");
  auto u = (*w)->create("/u");
  ASSERT_TRUE(f && u);
  std::string a = pattern(10 * 4096, 5);
  ASSERT_TRUE((*w)->write(*f, 0, bytes(a)));
  ASSERT_TRUE((*w)->write(*u, 0, bytes(a)));
  // Dirty pages past the new size vanish, the tail of the last block is
  // zeroed in the cache; growing again reads zeroes.
  ASSERT_TRUE((*w)->truncate(*f, 5000));
  auto st = (*w)->stat(*f);
  ASSERT_TRUE(st);
  EXPECT_EQ(st->blocks, 1u + 2u);  // inode + blocks 0 and 1 (reserved, not yet written)
  ASSERT_TRUE((*w)->truncate(*f, 40960));
  a.resize(5000);
  a.resize(40960, '\0');
  EXPECT_EQ(read_all(**w, *f, a.size()), a);
  ASSERT_TRUE((*w)->unlink("/u"));
  ASSERT_TRUE((*w)->unmount());
  check_files(*mem, {{"/t", a}}, "truncate of cached pages");
}

TEST(WriterCache, DirectWrites) {
  auto mem = our_mkfs(192ull << 20, kRichFeatures);
  ASSERT_TRUE(mem);
  RecordingDevice dev(*mem);
  MountOptions mo = test_options();
  auto w = Writer::mount(dev, mo);
  ASSERT_TRUE(w);
  auto f = (*w)->create("/d");
  ASSERT_TRUE(f);
  WriteFlags direct;
  direct.direct = true;
  const std::string blk = pattern(4096, 6);
  EXPECT_EQ((*w)->write(*f, 100, bytes(blk), direct).error().code, Errc::unaligned);
  EXPECT_EQ((*w)->write(*f, 0, bytes(blk.substr(0, 1000)), direct).error().code, Errc::unaligned);
  // Buffered pages first, then a direct write over some of them: the direct
  // data wins, the rest of the buffered pages stay.
  std::string a = pattern(8 * 4096, 7);
  ASSERT_TRUE((*w)->write(*f, 0, bytes(a)));
  dev.log.clear();
  const std::string d = pattern(4 * 4096, 8);
  auto r = (*w)->write(*f, 2 * 4096, bytes(d), direct);
  ASSERT_OK(r);
  // On the device before write() returned, tagged as the application's
  // direct I/O, in one request (4 new consecutive blocks).
  EXPECT_EQ(dev.bytes(IoOp::write, kDirect), d.size());
  EXPECT_EQ(dev.count(IoOp::write, kDirect), 1u);
  EXPECT_EQ(dev.count(IoOp::write), 1u);
  a.replace(2 * 4096, d.size(), d);
  EXPECT_EQ(read_all(**w, *f, a.size()), a);
  // Past the end: extends the file.
  ASSERT_TRUE((*w)->write(*f, 20 * 4096, bytes(blk), direct));
  a.resize(20 * 4096, '\0');
  a += blk;
  EXPECT_EQ(read_all(**w, *f, a.size()), a);
  ASSERT_TRUE((*w)->unmount());
  check_files(*mem, {{"/d", a}}, "direct writes");
}

// WriteFlags::lend: whole aligned blocks of a lent buffer become cache
// pages with no copy, and the buffer goes back to its owner once, only
// after none of its blocks is cached or being written. Each owner's
// deleter scribbles over its buffer, as a lender reusing it would: data
// the cache read after giving a buffer back would show in the file.
TEST(WriterCache, LentBuffersKeptWithoutCopyAndGivenBackOnce) {
  auto mem = our_mkfs(192ull << 20, kRichFeatures);
  ASSERT_TRUE(mem);
  MountOptions mo = test_options();
  mo.cache_bytes = 256 << 10;  // 64 pages: lent pages are written back and evicted
  std::map<std::string, std::string> files;
  constexpr std::size_t kChunk = 64 << 10;
  std::size_t lent = 0, given_back = 0;
  std::map<std::size_t, int> gone;  // deleter calls per buffer, by its number
  auto lend_copy = [&](const std::string& data, std::size_t misalign) {
    void* raw = detail::aligned_alloc_bytes(4096, kChunk + 4096);
    auto* p = static_cast<std::uint8_t*>(raw) + misalign;
    std::memcpy(p, data.data(), data.size());
    auto owner = std::shared_ptr<const void>(raw, [&, id = lent++, n = data.size() + misalign](const void* q) {
      ++given_back;
      ++gone[id];
      std::memset(const_cast<void*>(q), 0xEE, n);
      detail::aligned_free(const_cast<void*>(q));
    });
    return std::pair{owner, std::span<const std::uint8_t>(p, data.size())};
  };
  {
    auto w = Writer::mount(*mem, mo);
    ASSERT_TRUE(w);
    auto f = (*w)->create("/lent");
    auto g = (*w)->create("/gone");
    ASSERT_TRUE(f && g);
    std::string a = pattern(3u << 20, 30), b = pattern(512u << 10, 31);
    std::size_t kept = 0;
    for (std::size_t off = 0; off < a.size(); off += kChunk) {
      auto [owner, span] = lend_copy(a.substr(off, kChunk), 0);
      WriteFlags wf;
      wf.lend = owner;
      ASSERT_TRUE((*w)->write(*f, off, span, wf));
      wf.lend.reset();
      kept += owner.use_count() > 1;
    }
    // Kept, not copied: the cache holds the owners of the chunks still cached.
    EXPECT_GT(kept, 0u);
    for (std::size_t off = 0; off < b.size(); off += kChunk) {
      auto [owner, span] = lend_copy(b.substr(off, kChunk), 0);
      WriteFlags wf;
      wf.lend = owner;
      ASSERT_TRUE((*w)->write(*g, off, span, wf));
    }
    // A buffer off a 4 KiB boundary in memory is copied: nothing keeps it.
    {
      const std::string c = pattern(kChunk, 32);
      auto [owner, span] = lend_copy(c, 8);
      WriteFlags wf;
      wf.lend = owner;
      ASSERT_TRUE((*w)->write(*f, 40 * 4096, span, wf));
      wf.lend.reset();
      EXPECT_EQ(owner.use_count(), 1);
      a.replace(40 * 4096, kChunk, c);
    }
    // Overwrites of cached lent pages, partial and whole, not lent.
    std::mt19937 rng(33);
    for (int k = 0; k < 200; ++k) {
      const std::size_t off = rng() % a.size(), n = 1 + rng() % 9000;
      const std::string p = pattern(n, 200 + static_cast<std::uint32_t>(k));
      ASSERT_TRUE((*w)->write(*f, off, bytes(p)));
      if (off + n > a.size()) a.resize(off + n);
      a.replace(off, n, p);
    }
    EXPECT_EQ(read_all(**w, *f, a.size()), a);
    // Truncation and unlink drop lent pages.
    ASSERT_TRUE((*w)->truncate(*f, a.size() - 100000));
    a.resize(a.size() - 100000);
    ASSERT_TRUE((*w)->unlink("/gone"));
    EXPECT_EQ(read_all(**w, *f, a.size()), a);
    ASSERT_TRUE((*w)->sync());
    EXPECT_EQ(read_all(**w, *f, a.size()), a);
    files["/lent"] = a;
    ASSERT_TRUE((*w)->unmount());
  }
  // The writer gone, every buffer is back with its owner, each once.
  EXPECT_EQ(given_back, lent);
  for (const auto& [id, n] : gone) EXPECT_EQ(n, 1) << "buffer " << id;
  check_files(*mem, files, "lent buffers");
}

// Writeback of lent buffers goes out from them, in runs that end at each
// buffer's end, also where a run starts on a page elsewhere in memory (the
// cache's own page of block 0 here, before the first lent buffer): the run
// built by copying that page returns to writing from memory at the next
// two pages consecutive in memory, instead of copying to its end.
TEST(WriterCache, LentBuffersWrittenBackFromThemselves) {
  auto mem = our_mkfs(192ull << 20, kRichFeatures);
  ASSERT_TRUE(mem);
  RecordingDevice dev(*mem);
  MountOptions mo = test_options();
  auto w = Writer::mount(dev, mo);
  ASSERT_TRUE(w);
  auto f = (*w)->create("/runs");
  ASSERT_TRUE(f);
  constexpr std::size_t kBuf = 1u << 20;  // 256 blocks, as the FUSE daemon's
  constexpr int kBufs = 4;
  std::string all = pattern(4096, 40);
  ASSERT_TRUE((*w)->write(*f, 0, bytes(all)));  // block 0: one of the cache's own pages
  std::vector<std::shared_ptr<std::uint8_t>> bufs;
  for (int k = 0; k < kBufs; ++k) {
    const std::string d = pattern(kBuf, 41 + static_cast<std::uint32_t>(k));
    std::shared_ptr<std::uint8_t> b(static_cast<std::uint8_t*>(detail::aligned_alloc_bytes(4096, kBuf)),
                                    [](std::uint8_t* p) { detail::aligned_free(p); });
    ASSERT_TRUE(b);
    std::memcpy(b.get(), d.data(), kBuf);
    WriteFlags wf;
    wf.lend = b;
    ASSERT_TRUE((*w)->write(*f, 4096 + static_cast<std::uint64_t>(k) * kBuf, std::span<const std::uint8_t>(b.get(), kBuf), wf));
    bufs.push_back(b);
    all += d;
  }
  dev.log.clear();
  ASSERT_TRUE((*w)->sync());
  // Bytes of the file's data written straight from the lent buffers.
  std::uint64_t from_lent = 0, data_bytes = 0;
  for (const auto& r : dev.log) {
    if (r.op != IoOp::write || r.tag != kCpData) continue;
    data_bytes += r.length;
    const auto* p = static_cast<const std::uint8_t*>(r.buf);
    for (const auto& b : bufs)
      if (p >= b.get() && p + r.length <= b.get() + kBuf) from_lent += r.length;
  }
  EXPECT_GE(data_bytes, all.size());
  // At most a block or two per buffer copied (where a run crosses from one
  // buffer, or from block 0's page, into the next).
  EXPECT_GE(from_lent, static_cast<std::uint64_t>(kBufs) * (kBuf - 2 * 4096)) << "writeback copied the lent pages";
  EXPECT_EQ(read_all(**w, *f, all.size()), all);
  ASSERT_TRUE((*w)->unmount());
  check_files(*mem, {{"/runs", all}}, "lent buffers written back");
}

TEST(WriterCache, DsyncWritesAndFlushes) {
  auto mem = our_mkfs(192ull << 20, kRichFeatures);
  ASSERT_TRUE(mem);
  RecordingDevice dev(*mem);
  MountOptions mo = test_options();
  auto w = Writer::mount(dev, mo);
  ASSERT_TRUE(w);
  auto f = (*w)->create("/s");
  ASSERT_TRUE(f);
  ASSERT_TRUE((*w)->sync());
  dev.log.clear();
  WriteFlags dsync;
  dsync.dsync = true;
  const std::string a = pattern(3 * 4096, 9);
  ASSERT_TRUE((*w)->write(*f, 0, bytes(a), dsync));
  // fdatasync: the three blocks are on the device and a flush followed them.
  EXPECT_GE(dev.bytes(IoOp::write), a.size());
  std::size_t last_data = 0, last_flush = 0;
  for (std::size_t i = 0; i < dev.log.size(); ++i) {
    if (dev.log[i].op == IoOp::flush) last_flush = i + 1;
    if (dev.log[i].op == IoOp::write && (dev.log[i].tag == kDataWb || dev.log[i].tag == kCpData) && !last_data) last_data = i + 1;
  }
  EXPECT_GT(last_data, 0u);
  EXPECT_GT(last_flush, last_data);
  ASSERT_TRUE((*w)->unmount());
  check_files(*mem, {{"/s", a}}, "dsync");
}

// The periodic checkpoint on the writer's injectable clock (MountOptions::
// clock), moved past the interval where the test wants it: no sleeping, and
// no checkpoint that a stalled test machine would take early.
TEST(WriterCache, PeriodicCheckpoint) {
  auto mem = our_mkfs(192ull << 20, kRichFeatures);
  ASSERT_TRUE(mem);
  std::uint64_t now = 1700000100ull * 1000000000ull;
  MountOptions mo;
  mo.checkpoint_interval_s = 1;
  mo.clock = {[](void* ctx) noexcept { return *static_cast<const std::uint64_t*>(ctx); }, &now};
  auto w = Writer::mount(*mem, mo);
  ASSERT_TRUE(w);
  auto f = (*w)->create("/p");
  ASSERT_TRUE(f);
  ASSERT_TRUE((*w)->write(*f, 0, bytes(std::string(5000, 'p'))));
  now += 999'000'000;  // inside the interval
  ASSERT_TRUE((*w)->write(*f, 0, bytes(std::string(5000, 'p'))));
  EXPECT_EQ((*w)->stats().checkpoints, 0u);
  now += 101'000'000;  // 1.1 s since the mount
  // Reads do not checkpoint; the next changing call does, first.
  EXPECT_EQ(read_all(**w, *f, 5000), std::string(5000, 'p'));
  EXPECT_EQ((*w)->stats().checkpoints, 0u);
  ASSERT_TRUE((*w)->create("/q"));
  EXPECT_EQ((*w)->stats().checkpoints, 1u);
  ASSERT_TRUE((*w)->create("/r"));
  EXPECT_EQ((*w)->stats().checkpoints, 1u);  // the interval starts again
  // The checkpoint committed /p (the image opens at it without unmount).
  {
    auto v = Volume::open(*mem);
    ASSERT_TRUE(v);
    auto in = (*v)->resolve("/p");
    ASSERT_TRUE(in);
    EXPECT_EQ(in->size, 5000u);
  }
  ASSERT_TRUE((*w)->unmount());
  check_files(*mem, {{"/p", std::string(5000, 'p')}, {"/q", ""}, {"/r", ""}}, "periodic checkpoint");

  // Interval 0: never.
  mo.checkpoint_interval_s = 0;
  auto w2 = Writer::mount(*mem, mo);
  ASSERT_TRUE(w2);
  now += 10'000'000'000;
  ASSERT_TRUE((*w2)->create("/s"));
  EXPECT_EQ((*w2)->stats().checkpoints, 0u);
  ASSERT_TRUE((*w2)->unmount());
}

TEST(WriterCache, DiscardsSegmentsFreedByACheckpoint) {
  for (bool on : {true, false}) {
    auto mem = our_mkfs(192ull << 20, kRichFeatures);
    ASSERT_TRUE(mem);
    RecordingDevice dev(*mem);
    MountOptions mo = test_options();
    mo.discard = on;
    auto w = Writer::mount(dev, mo);
    ASSERT_TRUE(w);
    auto f = (*w)->create("/big");
    ASSERT_TRUE(f);
    ASSERT_TRUE((*w)->write(*f, 0, bytes(pattern(4u << 20, 10))));  // 1024 blocks: 2 whole segments at least
    ASSERT_TRUE((*w)->sync());
    auto v = Volume::open(*mem);
    ASSERT_TRUE(v);
    const std::uint64_t main = (*v)->main_blkaddr();
    auto in = (*v)->resolve("/big");
    ASSERT_TRUE(in);
    // Which segments hold the file (all its blocks are in the warm data log).
    std::map<std::uint64_t, int> segs;
    for (std::uint64_t i = 0; i < 1024; ++i) {
      auto a = (*v)->map_block(*in, i);
      ASSERT_TRUE(a);
      ++segs[(*a - main) / 512];
    }
    v->reset();
    std::vector<std::uint64_t> whole;
    for (const auto& [s, n] : segs)
      if (n == 512) whole.push_back(s);
    ASSERT_GE(whole.size(), 1u);
    dev.log.clear();
    ASSERT_TRUE((*w)->unlink("/big"));
    ASSERT_TRUE((*w)->sync());
    // The segments wholly the file's are discarded after the checkpoint's
    // last flush, and only then.
    std::size_t last_flush = 0;
    for (std::size_t i = 0; i < dev.log.size(); ++i)
      if (dev.log[i].op == IoOp::flush) last_flush = i;
    for (std::uint64_t s : whole) {
      const std::uint64_t off = (main + s * 512) * 4096;
      bool found = false;
      for (std::size_t i = 0; i < dev.log.size(); ++i) {
        const auto& r = dev.log[i];
        if (r.op == IoOp::discard && r.offset <= off && off + 512 * 4096 <= r.offset + r.length) {
          found = true;
          EXPECT_GT(i, last_flush);
        }
      }
      EXPECT_EQ(found, on) << "segment " << s;
    }
    EXPECT_EQ((*w)->stats().discards > 0, on);
    EXPECT_GT((*w)->stats().meta_blocks_written, 0u);
    ASSERT_TRUE((*w)->unmount());
    check_files(*mem, {}, on ? "discard on" : "discard off");
  }
}

TEST(WriterCache, IoTags) {
  auto mem = our_mkfs(192ull << 20, kRichFeatures);
  ASSERT_TRUE(mem);
  RecordingDevice dev(*mem);
  MountOptions mo = test_options();
  auto w = Writer::mount(dev, mo);
  ASSERT_TRUE(w);
  auto f = (*w)->create("/x");
  ASSERT_TRUE(f);
  ASSERT_TRUE((*w)->write(*f, 0, bytes(pattern(8192, 11))));
  dev.log.clear();
  ASSERT_TRUE((*w)->sync());
  EXPECT_EQ(dev.bytes(IoOp::write, kCpData), 8192u + 4096u);  // and the root's cached dentry block
  EXPECT_GE(dev.count(IoOp::write, io_tag(IostatType::fs_cp_node_io)), 2u);  // the file's inode, the root's
  EXPECT_GE(dev.count(IoOp::write, io_tag(IostatType::fs_cp_meta_io)), 3u);  // at least the pack
  for (const auto& r : dev.log)
    if (r.op == IoOp::write) EXPECT_NE(r.tag, 0u) << "an untagged write at " << r.offset;
  ASSERT_TRUE((*w)->unmount());
}

}  // namespace

namespace {

// Checkpoint cost: a small change puts its NAT and SIT entries in the
// pack's journals (38 NAT, 6 SIT entries fit, __has_cursum_space() in
// fs/f2fs/segment.h), so no NAT or SIT block is written; many changes go to
// the NAT blocks, journal emptied. Either way the image reads back and is
// clean.
TEST(WriterCache, SmallCheckpointUsesJournals) {
  auto mem = our_mkfs(192ull << 20, kRichFeatures);
  ASSERT_TRUE(mem);
  RecordingDevice dev(*mem);
  MountOptions mo = test_options();
  std::uint64_t nat_lo = 0, nat_hi = 0, sit_lo = 0, sit_hi = 0;
  {
    auto v = Volume::open(*mem);
    ASSERT_TRUE(v);
    const auto& sb = (*v)->superblock();
    nat_lo = sb.nat_blkaddr.get() * 4096ull;
    nat_hi = nat_lo + sb.segment_count_nat.get() * 512ull * 4096;
    sit_lo = sb.sit_blkaddr.get() * 4096ull;
    sit_hi = sit_lo + sb.segment_count_sit.get() * 512ull * 4096;
  }
  auto in_area = [&](std::uint64_t lo, std::uint64_t hi) {
    std::size_t n = 0;
    for (const auto& r : dev.log)
      if (r.op == IoOp::write && r.offset < hi && r.offset + r.length > lo) ++n;
    return n;
  };
  auto w = Writer::mount(dev, mo);
  ASSERT_TRUE(w);
  std::map<std::string, std::string> files;
  ASSERT_TRUE((*w)->sync());  // the mkfs image's state once
  for (int round = 0; round < 3; ++round) {
    dev.log.clear();
    const std::string p = "/small" + std::to_string(round);
    auto f = (*w)->create(p);
    ASSERT_TRUE(f);
    files[p] = pattern(4096, 20 + static_cast<std::uint32_t>(round));
    ASSERT_TRUE((*w)->write(*f, 0, bytes(files[p])));
    const std::uint64_t before = (*w)->stats().meta_blocks_written;
    ASSERT_TRUE((*w)->sync());
    const std::uint64_t meta = (*w)->stats().meta_blocks_written - before;
    EXPECT_EQ(in_area(nat_lo, nat_hi), 0u) << "round " << round;
    EXPECT_EQ(in_area(sit_lo, sit_hi), 0u) << "round " << round;
    // The pack (head, compact summaries, tail; nat_bits) and the SSA blocks
    // of the node logs' segments, as the kernel writes them.
    EXPECT_LE(meta, 16u) << "round " << round;
    // Reads: the create's nodes and dentry block, the new pack reopened,
    // the NAT/SIT blocks of the changed entries. The full comparison and
    // the reload by a walk of the tree read 1,655 blocks here.
    EXPECT_LE(dev.count(IoOp::read), 24u) << "round " << round;
    std::printf("small checkpoint %d: %llu metadata blocks written, %zu reads, %zu write requests\n", round,
                static_cast<unsigned long long>(meta), dev.count(IoOp::read), dev.count(IoOp::write));
  }
  // 60 new inodes: more than the NAT journal holds.
  dev.log.clear();
  for (int i = 0; i < 60; ++i) {
    const std::string p = "/many" + std::to_string(i);
    ASSERT_TRUE((*w)->create(p));
    files[p] = "";
  }
  ASSERT_TRUE((*w)->sync());
  EXPECT_GT(in_area(nat_lo, nat_hi), 0u);
  ASSERT_TRUE((*w)->unmount());
  check_files(*mem, files, "journals");
  // A remount reads the journals back (then changes more).
  auto w2 = Writer::mount(*mem, mo);
  ASSERT_OK(w2);
  auto f = (*w2)->lookup("/small2");
  ASSERT_TRUE(f);
  EXPECT_EQ(read_all(**w2, *f, 4096), files["/small2"]);
  ASSERT_TRUE((*w2)->unlink("/small1"));
  files.erase("/small1");
  ASSERT_TRUE((*w2)->sync());
  ASSERT_TRUE((*w2)->unmount());
  check_files(*mem, files, "journals after remount");
}

/// A device that asks for O_DIRECT's alignment (4 KiB offsets, lengths and
/// buffers, DeviceInfo::direct) over `inner`, and counts the requests that
/// break it (they fail with Errc::unaligned, as an O_DIRECT file's EINVAL).
class DirectRulesDevice final : public BlockDevice {
 public:
  explicit DirectRulesDevice(BlockDevice& inner) : in_(inner), info_(inner.info()) {
    info_.logical_block_size = 4096;
    info_.buffer_alignment = 4096;
    info_.direct = true;
  }
  const DeviceInfo& info() const noexcept override { return info_; }
  void submit(IoRequest& req) noexcept override {
    const bool rw = req.op == IoOp::read || req.op == IoOp::write;
    if (rw && (req.offset % 4096 || req.length % 4096 || reinterpret_cast<std::uintptr_t>(req.buf) % 4096)) {
      ++broken;
      req.status = Errc::unaligned;
      failed_.push_back(&req);
      return;
    }
    in_.submit(req);
  }
  std::size_t poll(bool wait) noexcept override {
    std::size_t n = 0;
    for (IoRequest* r : std::exchange(failed_, {})) {
      r->on_complete(*r);
      ++n;
    }
    return n + in_.poll(wait && n == 0);
  }
  std::size_t in_flight() const noexcept override { return failed_.size() + in_.in_flight(); }
  std::size_t broken = 0;

 private:
  BlockDevice& in_;
  DeviceInfo info_;
  std::vector<IoRequest*> failed_;
};

// On a device with O_DIRECT's rules the writer's own unaligned buffers
// (superblock, checkpoint, NAT/SIT/SSA, node pages) are copied into aligned
// ones; page-cache writeback (pages written out of order, rewritten while
// their writeback may be in flight, a small cache) and direct writes from
// aligned and unaligned caller buffers all reach it aligned, and the volume
// holds what was written.
TEST(WriterCache, DirectDeviceGetsOnlyAlignedRequests) {
  auto mem = our_mkfs(192ull << 20, kRichFeatures);
  ASSERT_TRUE(mem);
  DirectRulesDevice dev(*mem);
  MountOptions mo = test_options();
  mo.cache_bytes = 1u << 20;  // 256 pages: writeback while writing
  std::map<std::string, std::string> files;
  {
    auto w = Writer::mount(dev, mo);
    ASSERT_OK(w);
    auto f = (*w)->create("/buffered");
    ASSERT_TRUE(f);
    std::string data = pattern(6u << 20, 21);
    for (std::size_t off = 0; off < data.size(); off += 64 << 10)
      ASSERT_TRUE((*w)->write(*f, off, bytes(data.substr(off, 64 << 10))));
    // Blocks rewritten out of order, some of them just written back.
    std::mt19937 rng(5);
    for (int i = 0; i < 600; ++i) {
      const std::size_t blk = rng() % (data.size() / 4096);
      const std::string b = pattern(4096, 100 + static_cast<std::uint32_t>(i));
      ASSERT_TRUE((*w)->write(*f, blk * 4096, bytes(b)));
      data.replace(blk * 4096, 4096, b);
    }
    files["/buffered"] = data;
    auto g = (*w)->create("/direct");
    ASSERT_TRUE(g);
    const std::string d = pattern(3u << 20, 22);
    std::vector<std::uint8_t> raw(d.size() + 2 * 4096);
    auto* aligned = raw.data() + (4096 - reinterpret_cast<std::uintptr_t>(raw.data()) % 4096) % 4096;
    std::memcpy(aligned, d.data(), 2u << 20);
    WriteFlags direct;
    direct.direct = true;
    ASSERT_TRUE((*w)->write(*g, 0, std::span<const std::uint8_t>(aligned, 2u << 20), direct));
    // The last MiB from a buffer off by 8 bytes: written through copies.
    std::memcpy(aligned + 8, d.data() + (2u << 20), 1u << 20);
    ASSERT_TRUE((*w)->write(*g, 2u << 20, std::span<const std::uint8_t>(aligned + 8, 1u << 20), direct));
    files["/direct"] = d;
    ASSERT_TRUE((*w)->sync());
    EXPECT_EQ(read_all(**w, *f, files["/buffered"].size()), files["/buffered"]);
    ASSERT_TRUE((*w)->unmount());
  }
  EXPECT_EQ(dev.broken, 0u);
  check_files(*mem, files, "a device with O_DIRECT's alignment");
}

}  // namespace
