// One Writer used from several threads at once (docs/writer.md, "Threads"):
// every public call takes the handle's lock. Threads create, write, read,
// fsync and truncate their own files, write disjoint ranges of a shared
// file, list and stat the shared directory, and one thread syncs now and
// then. Afterwards the image must hold exactly what each thread wrote, and
// be clean under our checker and fsck.f2fs -f. Label interop: threads hang
// qemu-i386, so this file is never a unit test.
#include <gtest/gtest.h>

#include <atomic>
#include <map>
#include <mutex>
#include <random>
#include <thread>

#include <unistd.h>

#include "f2fscore/fsck.hpp"
#include "f2fscore/writer.hpp"
#include "meta/meta_test_util.hpp"

namespace {

using namespace metatest;

std::span<const std::uint8_t> bytes(const std::string& s) {
  return {reinterpret_cast<const std::uint8_t*>(s.data()), s.size()};
}

std::string pattern(std::size_t n, std::uint32_t seed) {
  std::string s(n, '\0');
  std::mt19937 rng(seed);
  for (auto& c : s) c = static_cast<char>('a' + rng() % 26);
  return s;
}

void run_threads(std::uint64_t cache_bytes, int threads, int ops) {
  auto dev = our_mkfs(256ull << 20, kRichFeatures);
  ASSERT_TRUE(dev);
  MountOptions mo;
  mo.fixed_time = 1700000100;
  mo.cache_bytes = cache_bytes;
  mo.checkpoint_interval_s = 1;  // periodic checkpoints race with the rest too
  auto wm = Writer::mount(*dev, mo);
  ASSERT_OK(wm);
  Writer& w = **wm;
  ASSERT_TRUE(w.mkdir("/shared"));
  auto shared = w.create("/shared/common");
  ASSERT_TRUE(shared);
  constexpr std::size_t kSlice = 64 << 10;  // each thread's slice of the shared file
  std::mutex mu;
  std::map<std::string, std::string> expect;  // path -> contents, filled by each thread at its end
  std::vector<std::string> slices(static_cast<std::size_t>(threads), std::string(kSlice, '\0'));
  std::atomic<int> failures{0};
  std::atomic<bool> stop{false};
  auto fail = [&](const std::string& what) {
    std::lock_guard<std::mutex> g(mu);
    ADD_FAILURE() << what;
    ++failures;
  };
  std::vector<std::thread> ts;
  for (int t = 0; t < threads; ++t) {
    ts.emplace_back([&, t] {
      std::mt19937 rng(static_cast<std::uint32_t>(1000 + t));
      const std::string dir = "/t" + std::to_string(t);
      if (!w.mkdir(dir)) return fail(dir + ": mkdir");
      std::map<std::string, std::pair<nid_t, std::string>> mine;
      for (int k = 0; k < ops && !failures; ++k) {
        const int op = static_cast<int>(rng() % 10);
        if (op < 2 || mine.empty()) {
          const std::string p = dir + "/f" + std::to_string(k);
          auto ino = w.create(p);
          if (!ino) return fail(p + ": create: " + ino.error().to_string());
          mine[p] = {*ino, ""};
        } else if (op < 6) {
          auto it = std::next(mine.begin(), static_cast<std::ptrdiff_t>(rng() % mine.size()));
          auto& [ino, data] = it->second;
          const std::size_t off = data.empty() ? 0 : rng() % (data.size() + 1);
          const std::string d = pattern(1 + rng() % 20000, rng());
          WriteFlags fl;
          fl.dsync = rng() % 8 == 0;
          auto r = w.write(ino, off, bytes(d), fl);
          if (!r) return fail(it->first + ": write: " + r.error().to_string());
          if (off + d.size() > data.size()) data.resize(off + d.size(), '\0');
          data.replace(off, d.size(), d);
        } else if (op < 7) {
          auto it = std::next(mine.begin(), static_cast<std::ptrdiff_t>(rng() % mine.size()));
          auto& [ino, data] = it->second;
          std::string got(data.size(), '\0');
          auto n = w.read(ino, 0, std::span<std::uint8_t>(reinterpret_cast<std::uint8_t*>(got.data()), got.size()));
          if (!n || got != data) return fail(it->first + ": read back differs");
          if (!w.fsync(ino)) return fail(it->first + ": fsync");
        } else if (op < 8) {
          auto it = std::next(mine.begin(), static_cast<std::ptrdiff_t>(rng() % mine.size()));
          auto& [ino, data] = it->second;
          const std::size_t n = data.empty() ? 0 : rng() % data.size();
          if (!w.truncate(ino, n)) return fail(it->first + ": truncate");
          data.resize(n);
        } else if (op < 9) {
          // Disjoint 4 KiB-aligned ranges of the shared file, some direct.
          std::string& s = slices[static_cast<std::size_t>(t)];
          const std::size_t off = (rng() % (kSlice / 4096)) * 4096, n = 4096 * (1 + rng() % 3);
          const std::size_t len = std::min(n, kSlice - off);
          const std::string d = pattern(len, rng());
          WriteFlags fl;
          fl.direct = rng() % 2 == 0;
          auto r = w.write(*shared, static_cast<std::uint64_t>(t) * kSlice + off, bytes(d), fl);
          if (!r) return fail("shared: write: " + r.error().to_string());
          s.replace(off, len, d);
          std::string got(len, '\0');
          auto rr = w.read(*shared, static_cast<std::uint64_t>(t) * kSlice + off,
                           std::span<std::uint8_t>(reinterpret_cast<std::uint8_t*>(got.data()), got.size()));
          if (!rr || got != d) return fail("shared: read back differs");
        } else {
          auto it = std::next(mine.begin(), static_cast<std::ptrdiff_t>(rng() % mine.size()));
          if (rng() % 2) {
            if (!w.unlink(it->first)) return fail(it->first + ": unlink");
            mine.erase(it);
          } else {
            auto st = w.stat(it->second.first);
            if (!st || st->size != it->second.second.size()) return fail(it->first + ": stat size");
            auto l = w.list(*w.lookup("/shared"));
            if (!l) return fail("list /shared");
          }
        }
      }
      std::lock_guard<std::mutex> g(mu);
      for (auto& [p, v] : mine) expect[p] = v.second;
    });
  }
  std::thread syncer([&] {
    while (!stop) {
      if (!w.sync()) fail("sync");
      std::this_thread::sleep_for(std::chrono::milliseconds(20));
    }
  });
  for (auto& th : ts) th.join();
  stop = true;
  syncer.join();
  ASSERT_EQ(failures.load(), 0);
  std::string common(static_cast<std::size_t>(threads) * kSlice, '\0');
  for (int t = 0; t < threads; ++t) common.replace(static_cast<std::size_t>(t) * kSlice, kSlice, slices[static_cast<std::size_t>(t)]);
  // The shared file's size is the end of the highest slice written.
  auto st = w.stat(*shared);
  ASSERT_TRUE(st);
  common.resize(st->size);
  expect["/shared/common"] = common;
  ASSERT_TRUE(w.unmount());

  auto v = Volume::open(*dev);
  ASSERT_TRUE(v);
  EXPECT_TRUE((*v)->open_report().clean_unmount);
  for (const auto& [p, data] : expect) {
    auto in = (*v)->resolve(p);
    ASSERT_TRUE(in) << p;
    std::string got(in->size, '\0');
    auto n = (*v)->read(*in, 0, std::span<std::uint8_t>(reinterpret_cast<std::uint8_t*>(got.data()), got.size()));
    ASSERT_TRUE(n) << p;
    EXPECT_TRUE(got == data) << p << " differs (size " << got.size() << " vs " << data.size() << ")";
  }
  v->reset();
  fsck::Options fo;
  fo.mode = fsck::Mode::check_only;
  fo.force = true;
  auto rep = fsck::check(*dev, fo);
  ASSERT_OK(rep);
  std::string found;
  for (const auto& p : rep->problems) found += p.to_string() + "\n";
  EXPECT_TRUE(rep->problems.empty()) << found;
  if (f2fstest::reference_tool("fsck.f2fs").empty()) {
    if (f2fstest::required("FSCK")) ADD_FAILURE() << "fsck.f2fs missing and F2FSCORE_REQUIRE_FSCK=1";
    return;
  }
  const fs::path img = f2fstest::scratch_dir() / "writer_thread.img";
  ASSERT_TRUE(save(*dev, img));
  std::string log;
  auto probs = f2fstest::fsck_problems(img, &log);
  EXPECT_TRUE(probs.empty()) << "fsck.f2fs -f:\n" << log;
  fs::remove(img);
}

TEST(WriterThreads, FourThreadsLargeCache) { run_threads(64ull << 20, 4, 150); }
TEST(WriterThreads, EightThreadsSmallCache) { run_threads(128 << 10, 8, 80); }

}  // namespace
