// The storage seam: memory and POSIX backends, asynchronous submission,
// and the errors for bad requests.
#include <gtest/gtest.h>

#if !defined(_WIN32)
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>
#endif
#if defined(__linux__)
#include <sys/mman.h>
#endif

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <numeric>

#include "f2fscore/cow_device.hpp"
#include "f2fscore/device.hpp"
#include "f2fscore/fault_device.hpp"
#include "f2fscore/iostat.hpp"
#include "f2fscore/mkfs.hpp"
#include "f2fscore/writer.hpp"
#include "support/test_support.hpp"

using namespace f2fscore;

namespace {
std::vector<std::uint8_t> pattern(std::size_t n, std::uint8_t seed) {
  std::vector<std::uint8_t> v(n);
  for (std::size_t i = 0; i < n; ++i) v[i] = static_cast<std::uint8_t>(seed + i * 7);
  return v;
}

void exercise(BlockDevice& dev) {
  const auto data = pattern(8192, 3);
  ASSERT_TRUE(write_at(dev, 4096, data));
  std::vector<std::uint8_t> back(8192);
  ASSERT_TRUE(read_at(dev, 4096, back));
  EXPECT_EQ(back, data);
  ASSERT_TRUE(flush(dev));
  // write_zeroes guarantees zeroes, also in a partial chunk.
  ASSERT_TRUE(write_zeroes(dev, 4096, 4096));
  ASSERT_TRUE(read_at(dev, 4096, back));
  EXPECT_TRUE(std::all_of(back.begin(), back.begin() + 4096, [](auto b) { return b == 0; }));
  EXPECT_TRUE(std::equal(back.begin() + 4096, back.end(), data.begin() + 4096));
  // Past the end: a clear error with the offset.
  std::vector<std::uint8_t> one(512);
  auto r = read_at(dev, dev.info().size_bytes, one);
  ASSERT_FALSE(r);
  EXPECT_EQ(r.error().code, Errc::out_of_range);
  EXPECT_EQ(r.error().offset, dev.info().size_bytes);
  EXPECT_NE(r.error().to_string().find("past the end"), std::string::npos);
  // Unaligned offset and length.
  r = read_at(dev, 100, one);
  ASSERT_FALSE(r);
  EXPECT_EQ(r.error().code, Errc::unaligned);
  std::vector<std::uint8_t> odd(100);
  r = write_at(dev, 0, odd);
  ASSERT_FALSE(r);
  EXPECT_EQ(r.error().code, Errc::unaligned);
}
}  // namespace

TEST(MemoryDevice, ReadWriteZeroesAndErrors) {
  auto dev = make_memory_device(1 << 20);
  EXPECT_EQ(dev->info().size_bytes, 1u << 20);
  EXPECT_EQ(dev->info().logical_block_size, 512u);
  exercise(*dev);
}

TEST(MemoryDevice, UnwrittenReadsAsZeroesEvenWhenHuge) {
  auto dev = make_memory_device(16ull << 40);  // 16 TiB, sparse
  std::vector<std::uint8_t> b(4096, 0xAA);
  ASSERT_TRUE(read_at(*dev, (16ull << 40) - 4096, b));
  EXPECT_TRUE(std::all_of(b.begin(), b.end(), [](auto x) { return x == 0; }));
}

TEST(MemoryDevice, CompletionsRunOnlyInPollInSubmissionOrder) {
  auto dev = make_memory_device(1 << 20);
  std::vector<int> order;
  struct Ctx {
    std::vector<int>* order;
    int id;
  };
  IoRequest reqs[3];
  Ctx ctx[3];
  std::vector<std::uint8_t> buf(4096 * 3, 1);
  for (int i = 0; i < 3; ++i) {
    ctx[i] = {&order, i};
    reqs[i].op = IoOp::write;
    reqs[i].offset = static_cast<std::uint64_t>(i) * 4096;
    reqs[i].length = 4096;
    reqs[i].buf = buf.data() + i * 4096;
    reqs[i].user = &ctx[i];
    reqs[i].on_complete = [](IoRequest& r) noexcept {
      auto* c = static_cast<Ctx*>(r.user);
      c->order->push_back(c->id);
    };
    dev->submit(reqs[i]);
  }
  EXPECT_TRUE(order.empty());
  EXPECT_EQ(dev->in_flight(), 3u);
  EXPECT_EQ(dev->poll(true), 3u);
  EXPECT_EQ(order, (std::vector<int>{0, 1, 2}));
  EXPECT_EQ(dev->in_flight(), 0u);
  for (auto& r : reqs) EXPECT_EQ(r.transferred, 4096u);
}

TEST(PosixDevice, RegularFile) {
  f2fstest::TempDir tmp;
  const auto path = tmp / "dev.img";
  f2fstest::make_sparse_file(path, 1 << 20);
  auto dev = open_posix_device(path.string(), {});
  ASSERT_OK(dev);
  EXPECT_EQ((*dev)->info().kind, DeviceKind::regular_file);
  EXPECT_EQ((*dev)->info().size_bytes, 1u << 20);
  exercise(**dev);
}

#if !defined(_WIN32)
// host_descriptor(): the file backend's descriptor reads the bytes the
// device wrote at the same offsets; layers that only count forward it;
// layers that change what reads return, and memory, have none.
TEST(PosixDevice, HostDescriptorReadsTheDevicesBytesAtTheSameOffsets) {
  f2fstest::TempDir tmp;
  const auto path = tmp / "dev.img";
  f2fstest::make_sparse_file(path, 1 << 20);
  auto dev = open_posix_device(path.string(), {});
  ASSERT_OK(dev);
  const auto data = pattern(8192, 11);
  ASSERT_TRUE(write_at(**dev, 65536, data));
  const int fd = (*dev)->host_descriptor();
  ASSERT_GE(fd, 0);
  std::vector<std::uint8_t> back(8192);
  ASSERT_EQ(::pread(fd, back.data(), back.size(), 65536), 8192);
  EXPECT_EQ(back, data);
  Iostat stats;
  IostatDevice counted(std::move(*dev), stats);
  EXPECT_EQ(counted.host_descriptor(), fd);
  FaultDevice faulty(counted);
  EXPECT_EQ(faulty.host_descriptor(), -1);
  auto cow = CowDevice::copy_of(counted);
  ASSERT_OK(cow);
  EXPECT_EQ((*cow)->host_descriptor(), -1);
  EXPECT_EQ(make_memory_device(1 << 20)->host_descriptor(), -1);
}
#endif

TEST(PosixDevice, DiscardAndZeroesOnAFilePunchHoles) {
  f2fstest::TempDir tmp;
  const auto path = tmp / "dev.img";
  f2fstest::make_sparse_file(path, 4 << 20);
  auto dev = open_posix_device(path.string(), {});
  ASSERT_TRUE(dev);
  const auto data = pattern(2 << 20, 9);
  ASSERT_TRUE(write_at(**dev, 0, data));
  ASSERT_TRUE(flush(**dev));
#if !defined(_WIN32)
  struct stat before {};
  ::stat(path.c_str(), &before);
  ASSERT_TRUE(write_zeroes(**dev, 0, 2 << 20));
  struct stat after {};
  ::stat(path.c_str(), &after);
  EXPECT_LT(after.st_blocks, before.st_blocks);  // space given back, not zeroes written
#else
  // Windows has no allocated-block count in stat: the zeroes are checked.
  ASSERT_TRUE(write_zeroes(**dev, 0, 2 << 20));
#endif
  std::vector<std::uint8_t> back(4096, 1);
  ASSERT_TRUE(read_at(**dev, 8192, back));
  EXPECT_TRUE(std::all_of(back.begin(), back.end(), [](auto b) { return b == 0; }));
}

TEST(PosixDevice, ReadOnlyRefusesWrites) {
  f2fstest::TempDir tmp;
  const auto path = tmp / "ro.img";
  f2fstest::make_sparse_file(path, 1 << 20);
  OpenOptions o;
  o.read_only = true;
  auto dev = open_posix_device(path.string(), o);
  ASSERT_TRUE(dev);
  std::vector<std::uint8_t> b(4096, 1);
  auto r = write_at(**dev, 0, b);
  ASSERT_FALSE(r);
  EXPECT_EQ(r.error().code, Errc::read_only);
  EXPECT_TRUE(read_at(**dev, 0, b));
}

TEST(PosixDevice, MissingPathAndWrongKind) {
  auto r = open_posix_device("/nonexistent/f2fscore.img", {});
  ASSERT_FALSE(r);
  EXPECT_EQ(r.error().code, Errc::not_found);
  EXPECT_NE(r.error().message.find("/nonexistent/f2fscore.img"), std::string::npos);
  f2fstest::TempDir tmp;
  auto d = open_posix_device(tmp.path().string(), {});
  ASSERT_FALSE(d);
  EXPECT_EQ(d.error().code, Errc::unsupported);
}

TEST(PosixDevice, FileShrunkUnderneathGivesShortRead) {
  f2fstest::TempDir tmp;
  const auto path = tmp / "shrink.img";
  f2fstest::make_sparse_file(path, 1 << 20);
  auto dev = open_posix_device(path.string(), {});
  ASSERT_TRUE(dev);
  std::error_code ec;
  std::filesystem::resize_file(path, 4096, ec);
  ASSERT_FALSE(ec) << ec.message();
  std::vector<std::uint8_t> b(8192);
  auto r = read_at(**dev, 0, b);
  ASSERT_FALSE(r);
  EXPECT_EQ(r.error().code, Errc::short_io);
}

#if defined(__linux__)
namespace {
// Pages of `path` in the page cache (mincore(2) over a read-only mapping,
// which reads nothing); -1 when the file cannot be mapped.
long cached_pages(const std::string& path, std::size_t bytes) {
  const int fd = ::open(path.c_str(), O_RDONLY);
  if (fd < 0) return -1;
  void* m = ::mmap(nullptr, bytes, PROT_READ, MAP_SHARED, fd, 0);
  ::close(fd);
  if (m == MAP_FAILED) return -1;
  const std::size_t page = static_cast<std::size_t>(::sysconf(_SC_PAGESIZE));
  std::vector<unsigned char> vec((bytes + page - 1) / page);
  long n = -1;
  if (::mincore(m, bytes, vec.data()) == 0) n = std::count_if(vec.begin(), vec.end(), [](unsigned char c) { return c & 1; });
  ::munmap(m, bytes);
  return n;
}

// Writes `path` out and drops its pages from the page cache
// (POSIX_FADV_DONTNEED after fsync); false when they stay (tmpfs).
bool evict(const std::string& path, std::size_t bytes) {
  const int fd = ::open(path.c_str(), O_RDONLY);
  if (fd < 0) return false;
  ::fsync(fd);
  ::posix_fadvise(fd, 0, 0, POSIX_FADV_DONTNEED);
  ::close(fd);
  return cached_pages(path, bytes) == 0;
}
}  // namespace

// OpenOptions::random_access turns the kernel's read-ahead off: two 4 KiB
// reads bring two 4 KiB pages into the page cache, where the default open
// reads ahead of each (mm/readahead.c: an initial window of four times a
// small request, more for a sequential stream).
TEST(PosixDevice, RandomAccessReadsOnlyWhatIsAsked) {
  f2fstest::TempDir tmp;
  const auto path = (tmp / "ra.img").string();
  constexpr std::size_t kBytes = 16u << 20;
  {
    std::ofstream f(path, std::ios::binary);
    const auto chunk = pattern(1u << 20, 5);
    for (std::size_t i = 0; i < kBytes / chunk.size(); ++i) f.write(reinterpret_cast<const char*>(chunk.data()), static_cast<std::streamsize>(chunk.size()));
  }
  if (::sysconf(_SC_PAGESIZE) != 4096) GTEST_SKIP() << "the page size is not 4 KiB";
  if (!evict(path, kBytes)) GTEST_SKIP() << "the page cache keeps the file's pages (tmpfs?): nothing to measure";
  auto read_two = [&](bool random_access) {
    OpenOptions oo;
    oo.read_only = true;
    oo.random_access = random_access;
    auto dev = open_posix_device(path, oo);
    EXPECT_TRUE(dev);
    if (!dev) return -1L;
    std::vector<std::uint8_t> b(4096);
    EXPECT_TRUE(read_at(**dev, 0, b));
    EXPECT_TRUE(read_at(**dev, 8u << 20, b));
    EXPECT_EQ(b, pattern(4096, 5));  // the chunk's first block (8 MiB is a chunk's start)
    return cached_pages(path, kBytes);
  };
  const long ahead = read_two(false);
  if (ahead <= 2) GTEST_SKIP() << "no read-ahead on this file system (" << ahead << " pages cached): nothing to turn off";
  ASSERT_TRUE(evict(path, kBytes));
  EXPECT_EQ(read_two(true), 2) << "with read-ahead " << ahead << " pages";
}
#endif

// ---- Devices in use (check_in_use(), io/in_use.cpp) ----

namespace {

namespace fs = std::filesystem;

int sh(const std::string& cmd) { return std::system((cmd + " >/dev/null 2>&1").c_str()); }

std::string sh_out(const std::string& cmd) {
  std::string out;
  if (FILE* f = ::popen(cmd.c_str(), "r")) {
    char buf[256];
    while (std::fgets(buf, sizeof buf, f) != nullptr) out += buf;
    ::pclose(f);
  }
  while (!out.empty() && (out.back() == '\n' || out.back() == ' ')) out.pop_back();
  return out;
}

// A loop device over `file`, detached at destruction; empty without root
// or loop devices.
struct LoopDevice {
  std::string dev;
  explicit LoopDevice(const fs::path& file) {
#if !defined(_WIN32)
    if (::geteuid() == 0) dev = sh_out("losetup -f --show '" + file.string() + "' 2>/dev/null");
#else
    (void)file;  // loop devices are Linux's
#endif
  }
  ~LoopDevice() {
    if (!dev.empty()) sh("losetup -d " + dev);
  }
};

std::unique_ptr<BlockDevice> f2fs_image(const fs::path& path) {
  f2fstest::make_sparse_file(path, 64ull << 20);
  auto dev = open_posix_device(path.string(), {});
  if (!dev) return nullptr;
  MkfsTarget t{dev->get(), path.string()};
  MkfsOptions mo;
  mo.timestamp = 1700000000;
  if (!format_volume(std::span<const MkfsTarget>(&t, 1), mo)) return nullptr;
  return std::move(*dev);
}

// The open for raw writes (refuse_in_use, refuse_other_file_system) of
// `path` fails with Errc::busy, its message containing `why`.
void expect_raw_write_refused(const std::string& path, const char* why) {
  OpenOptions oo;
  oo.refuse_in_use = true;
  oo.refuse_other_file_system = true;
  auto d = open_posix_device(path, oo);
  ASSERT_FALSE(d);
  EXPECT_EQ(d.error().code, Errc::busy);
  EXPECT_NE(d.error().message.find(why), std::string::npos) << d.error().message;
}

}  // namespace

TEST(InUse, NothingHoldsAPlainFileOrAMissingPath) {
  f2fstest::TempDir tmp;
  const auto path = tmp / "plain.img";
  ASSERT_TRUE(f2fs_image(path));
  InUseCheck all;
  all.other_file_system = true;
  EXPECT_FALSE(check_in_use(path.string(), all)) << check_in_use(path.string(), all).detail;  // F2FS is ours
  // For raw writes F2FS counts too (f2fs_too), and the raw-write open
  // refuses the image, opening nothing.
  all.f2fs_too = true;
  EXPECT_EQ(check_in_use(path.string(), all).kind, InUseKind::other_file_system);
  expect_raw_write_refused(path.string(), "holds an F2FS volume");
  EXPECT_FALSE(check_in_use((tmp / "missing").string()));
  // The memory device is never in use: the writer mounts it as always.
  auto mem = make_memory_device(64ull << 20);
  MkfsTarget t{mem.get(), "mem"};
  MkfsOptions mo;
  mo.timestamp = 1700000000;
  ASSERT_TRUE(format_volume(std::span<const MkfsTarget>(&t, 1), mo));
  auto w = Writer::mount(*mem, {1700000000});
  ASSERT_TRUE(w) << w.error().to_string();
  EXPECT_TRUE((*w)->unmount());
}

TEST(InUse, AnotherFileSystemOnlyWhenAsked) {
  f2fstest::TempDir tmp;
  const auto path = tmp / "ext4.img";
  f2fstest::make_sparse_file(path, 16ull << 20);
#if !defined(_WIN32)
  if (sh("command -v mkfs.ext4") != 0) GTEST_SKIP() << "mkfs.ext4 not installed";
  ASSERT_EQ(sh("mkfs.ext4 -q -F '" + path.string() + "'"), 0);
#else
  // mkfs.ext4 is a Linux program: the ext2/3/4 superblock's s_magic 0xEF53
  // (little-endian, at byte 56 of the superblock at byte 1024), the bytes
  // the magic-number probe looks for.
  {
    std::fstream f(path, std::ios::binary | std::ios::in | std::ios::out);
    f.seekp(1024 + 56);
    f.put(static_cast<char>(0x53)).put(static_cast<char>(0xEF));
    ASSERT_TRUE(f.good());
  }
#endif
  EXPECT_FALSE(check_in_use(path.string()));
  InUseCheck what;
  what.other_file_system = true;
  const InUse u = check_in_use(path.string(), what);
  EXPECT_EQ(u.kind, InUseKind::other_file_system);
  EXPECT_NE(u.detail.find("ext"), std::string::npos) << u.detail;
  // The open option for raw writes refuses it, and opens nothing.
  expect_raw_write_refused(path.string(), "another kind");
}

// Two writers on one image file: the second open for writing with
// refuse_in_use finds the first's exclusive flock() and is refused (an image
// file has no O_EXCL); read-only opens are not; the lock goes with the first.
TEST(InUse, SecondWriterOfAnImageFileIsRefused) {
  f2fstest::TempDir tmp;
  const auto path = tmp / "v.img";
  f2fstest::make_sparse_file(path, 4ull << 20);
  OpenOptions w;
  w.refuse_in_use = true;
  auto first = open_posix_device(path.string(), w);
  ASSERT_OK(first);
  auto second = open_posix_device(path.string(), w);
  ASSERT_FALSE(second);
  EXPECT_EQ(second.error().code, Errc::busy);
  EXPECT_NE(second.error().message.find("in use"), std::string::npos) << second.error().message;
  OpenOptions r;
  r.read_only = true;
  r.refuse_in_use = true;
#if !defined(_WIN32)
  EXPECT_OK(open_posix_device(path.string(), r));
#else
  // The Win32 backend's writable open with refuse_in_use shares nothing
  // (io/win32/win32_device.cpp): no reader either while it is open.
  auto reader = open_posix_device(path.string(), r);
  ASSERT_FALSE(reader);
  EXPECT_EQ(reader.error().code, Errc::busy);
  EXPECT_NE(reader.error().message.find("in use"), std::string::npos) << reader.error().message;
#endif
  first->reset();
  EXPECT_OK(open_posix_device(path.string(), w));
}

// A reader asking about an image file a writing tool holds (the lock of
// open_device()'s writable open): being_written with writer_lock, nothing
// without it, nothing once the writer is gone; the probe itself leaves no
// lock behind (a writer opens right after it).
TEST(InUse, ImageFileBeingWrittenOnlyWhenAsked) {
#if !defined(__linux__)
  GTEST_SKIP() << "the lock probe is flock(2)'s, on Linux";
#else
  f2fstest::TempDir tmp;
  const auto path = tmp / "w.img";
  f2fstest::make_sparse_file(path, 4ull << 20);
  InUseCheck reader;
  reader.writer_lock = true;
  EXPECT_FALSE(check_in_use(path.string(), reader)) << check_in_use(path.string(), reader).detail;
  OpenOptions w;
  w.refuse_in_use = true;
  auto writer = open_posix_device(path.string(), w);
  ASSERT_OK(writer);
  const InUse u = check_in_use(path.string(), reader);
  EXPECT_EQ(u.kind, InUseKind::being_written);
  EXPECT_NE(u.detail.find("being written"), std::string::npos) << u.detail;
  EXPECT_FALSE(check_in_use(path.string())) << "without writer_lock the lock is not asked about";
  writer->reset();
  EXPECT_FALSE(check_in_use(path.string(), reader));
  EXPECT_OK(open_posix_device(path.string(), w));
#endif
}

// An image behind a loop device that another open holds with O_EXCL (here
// a descriptor of this process, as a program holding it would): in use for
// check_in_use(), Writer::mount and open_device(refuse_in_use); the loop
// device itself too, unless the caller holds the claim (exclusive=false).
TEST(InUse, ImageBehindAHeldLoopDevice) {
#if defined(_WIN32)
  GTEST_SKIP() << "loop devices and O_EXCL are Linux's";
#else
  f2fstest::TempDir tmp;
  const auto path = tmp / "held.img";
  auto img = f2fs_image(path);
  ASSERT_TRUE(img);
  LoopDevice loop(path);
  if (loop.dev.empty()) GTEST_SKIP() << "needs root and a free loop device";
  const int fd = ::open(loop.dev.c_str(), O_RDONLY | O_EXCL | O_CLOEXEC);
  ASSERT_GE(fd, 0) << loop.dev;
  const InUse u = check_in_use(path.string());
  EXPECT_EQ(u.kind, InUseKind::held_exclusively) << u.detail;
  EXPECT_NE(u.detail.find("backs " + loop.dev), std::string::npos) << u.detail;
  EXPECT_EQ(check_in_use(loop.dev).kind, InUseKind::held_exclusively);
  InUseCheck ours;
  ours.exclusive = false;
  EXPECT_FALSE(check_in_use(loop.dev, ours));
  {
    auto w = Writer::mount(*img, {1700000000});
    ASSERT_FALSE(w);
    EXPECT_EQ(w.error().code, Errc::busy);
    EXPECT_NE(w.error().message.find("held open exclusively"), std::string::npos) << w.error().message;
  }
  {
    MountOptions ro;
    ro.read_only = true;  // a read-only mount writes nothing: not checked
    auto w = Writer::mount(*img, ro);
    EXPECT_TRUE(w) << w.error().to_string();
  }
  {
    MountOptions mo;
    mo.fixed_time = 1700000000;
    mo.refuse_in_use = false;  // an embedder that knows better
    auto w = Writer::mount(*img, mo);
    ASSERT_TRUE(w) << w.error().to_string();
    EXPECT_TRUE((*w)->unmount());
  }
  OpenOptions oo;
  oo.refuse_in_use = true;
  auto d = open_posix_device(path.string(), oo);
  ASSERT_FALSE(d);
  EXPECT_EQ(d.error().code, Errc::busy);
  ::close(fd);
  EXPECT_FALSE(check_in_use(path.string()));
  auto again = open_posix_device(path.string(), oo);
  EXPECT_TRUE(again) << again.error().to_string();
#endif
}
