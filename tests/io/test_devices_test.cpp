// The test devices of the public API: copy-on-write snapshots and clones
// (cow_device.hpp), the crash models of the fault device (fault_device.hpp),
// the recorder and its replay (recorder_device.hpp), and the test profile of
// mount options (MountOptions::test_profile()). Every expected survivor is
// worked out by hand from the writes made, and the random model's from the
// published SplitMix64 sequence.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstring>
#include <string>
#include <vector>

#include "f2fscore/cow_device.hpp"
#include "f2fscore/fault_device.hpp"
#include "f2fscore/fsck.hpp"
#include "f2fscore/mkfs.hpp"
#include "f2fscore/recorder_device.hpp"
#include "f2fscore/writer.hpp"
#include "support/assert_ok.hpp"

using namespace f2fscore;

namespace {

using Bytes = std::vector<std::uint8_t>;

Bytes fill(std::uint8_t v, std::size_t n = 4096) { return Bytes(n, v); }

// `n` bytes at `off` of `dev`.
Bytes read(BlockDevice& dev, std::uint64_t off, std::size_t n) {
  Bytes b(n);
  auto st = read_at(dev, off, b);
  EXPECT_TRUE(st) << st.error().to_string();
  return b;
}

// The first byte of each 4 KiB block [0, n) of `dev`, when the whole block
// holds that byte; 0xEE when it is mixed.
std::vector<int> block_values(BlockDevice& dev, std::size_t n) {
  std::vector<int> out;
  for (std::size_t i = 0; i < n; ++i) {
    Bytes b = read(dev, i * 4096, 4096);
    const bool same = std::all_of(b.begin(), b.end(), [&](std::uint8_t x) { return x == b[0]; });
    out.push_back(same ? b[0] : 0xEE);
  }
  return out;
}

void write_fua(BlockDevice& dev, std::uint64_t off, const Bytes& data) {
  IoRequest r;
  r.op = IoOp::write;
  r.flags = io_flag::fua;
  r.offset = off;
  r.length = data.size();
  r.buf = const_cast<std::uint8_t*>(data.data());
  bool done = false;
  r.user = &done;
  r.on_complete = [](IoRequest& q) noexcept { *static_cast<bool*>(q.user) = true; };
  dev.submit(r);
  while (!done) dev.poll(true);
  ASSERT_TRUE(r.ok());
}

std::unique_ptr<CowDevice> cow_memory(std::uint64_t size, std::uint32_t lbs = 512) {
  auto d = CowDevice::memory(size, lbs);
  EXPECT_TRUE(d) << d.error().to_string();
  return d ? std::move(*d) : nullptr;
}

// A fault device over a 1 MiB memory device holding writes until a flush.
std::unique_ptr<FaultDevice> cached_device() {
  FaultPlan p;
  p.drop_unflushed = true;
  return std::make_unique<FaultDevice>(make_memory_device(1 << 20, 512), p);
}

}  // namespace

// ---- CowDevice ----

TEST(CowDevice, ClonesAreIsolatedFromParentAndSiblings) {
  auto a = cow_memory(1 << 20);
  ASSERT_TRUE(a);
  ASSERT_OK(write_at(*a, 0, fill(1)));
  ASSERT_OK(write_at(*a, 4096, fill(2)));
  auto b = a->clone();
  auto c = a->clone();
  EXPECT_EQ(block_values(*b, 3), (std::vector<int>{1, 2, 0}));
  ASSERT_OK(write_at(*b, 0, fill(3)));       // a shared block
  ASSERT_OK(write_at(*b, 8192, fill(4)));    // a new one
  ASSERT_OK(write_at(*a, 4096, fill(5)));    // the parent changes after the clone
  EXPECT_EQ(block_values(*a, 3), (std::vector<int>{1, 5, 0}));
  EXPECT_EQ(block_values(*b, 3), (std::vector<int>{3, 2, 4}));
  EXPECT_EQ(block_values(*c, 3), (std::vector<int>{1, 2, 0})) << "a sibling sees neither";
  // A clone of a clone: the state of b now; then all three go their ways.
  auto d = b->clone();
  EXPECT_EQ(block_values(*d, 3), (std::vector<int>{3, 2, 4}));
  ASSERT_OK(write_at(*d, 4096, fill(6)));
  ASSERT_OK(write_zeroes(*d, 0, 4096));
  ASSERT_OK(write_at(*b, 8192, fill(7)));
  EXPECT_EQ(block_values(*d, 3), (std::vector<int>{0, 6, 4}));
  EXPECT_EQ(block_values(*b, 3), (std::vector<int>{3, 2, 7}));
  EXPECT_EQ(block_values(*a, 3), (std::vector<int>{1, 5, 0}));
  EXPECT_EQ(block_values(*c, 3), (std::vector<int>{1, 2, 0}));
  // A sub-block write (512-byte sectors) copies the shared block first.
  auto e = c->clone();
  ASSERT_OK(write_at(*e, 512, fill(9, 512)));
  Bytes want = fill(1);
  std::fill(want.begin() + 512, want.begin() + 1024, 9);
  EXPECT_EQ(read(*e, 0, 4096), want);
  EXPECT_EQ(read(*c, 0, 4096), fill(1));
}

TEST(CowDevice, MemoryFollowsTheBlocksWritten) {
  // 1 GiB of device, 3 blocks of data: 3 blocks stored.
  auto a = cow_memory(1ull << 30);
  ASSERT_TRUE(a);
  EXPECT_EQ(a->stored_blocks(), 0u);
  ASSERT_OK(write_at(*a, 0, fill(1)));
  ASSERT_OK(write_at(*a, 500ull << 20, fill(2)));
  ASSERT_OK(write_at(*a, (1ull << 30) - 4096, fill(3)));
  ASSERT_OK(write_at(*a, 0, fill(4)));  // rewriting a block costs nothing more
  EXPECT_EQ(a->stored_blocks(), 3u);
  EXPECT_EQ(a->private_blocks(), 3u);
  EXPECT_EQ(a->layers(), 0u);
  auto b = a->clone();
  EXPECT_EQ(b->stored_blocks(), 3u);
  EXPECT_EQ(b->private_blocks(), 0u) << "a clone shares every block";
  EXPECT_EQ(a->private_blocks(), 0u) << "frozen into the layer both read";
  EXPECT_EQ(a->layers(), 1u);
  EXPECT_EQ(b->layers(), 1u);
  // The clone writes one shared block and two new ones.
  ASSERT_OK(write_at(*b, 0, fill(5)));
  ASSERT_OK(write_at(*b, 4096, fill(6)));
  ASSERT_OK(write_at(*b, 8192, fill(7)));
  EXPECT_EQ(b->private_blocks(), 3u);
  EXPECT_EQ(b->stored_blocks(), 5u);
  EXPECT_EQ(a->private_blocks(), 0u);
  EXPECT_EQ(a->stored_blocks(), 3u);
  ASSERT_OK(write_at(*a, 4096, fill(8)));
  EXPECT_EQ(a->private_blocks(), 1u);
  EXPECT_EQ(a->stored_blocks(), 4u);
  // A clone of a clone adds a layer; cloning a device that wrote nothing
  // since its last clone adds none.
  auto c = b->clone();
  EXPECT_EQ(c->layers(), 2u);
  auto c2 = b->clone();
  EXPECT_EQ(c2->layers(), 2u);
  EXPECT_EQ(b->layers(), 2u);
  // Zeroing and discarding whole blocks of a memory device frees them.
  ASSERT_OK(write_zeroes(*b, 0, 8192));
  ASSERT_OK(discard(*b, 8192, 4096));
  EXPECT_EQ(b->stored_blocks(), 2u);
  EXPECT_EQ(b->private_blocks(), 0u);
  EXPECT_EQ(block_values(*b, 3), (std::vector<int>{0, 0, 0}));
  EXPECT_EQ(block_values(*c, 3), (std::vector<int>{5, 6, 7})) << "the clone of b before the zeroes";
  EXPECT_EQ(block_values(*a, 3), (std::vector<int>{4, 8, 0}));
}

TEST(CowDevice, LongChainsOfClonesStayCorrect) {
  // 40 generations, each writing block i and zeroing block i - 1 of what
  // its parent had: generation g reads block g as g + 1, blocks before it
  // as zeroes. Past 16 layers clone() merges the chain.
  auto first = cow_memory(1 << 20);
  ASSERT_TRUE(first);
  std::vector<std::unique_ptr<CowDevice>> gen;
  gen.push_back(std::move(first));
  for (std::uint32_t g = 0; g < 40; ++g) {
    CowDevice& d = *gen.back();
    ASSERT_OK(write_at(d, g * 4096ull, fill(static_cast<std::uint8_t>(g + 1))));
    if (g > 0) ASSERT_OK(write_zeroes(d, (g - 1) * 4096ull, 4096));
    gen.push_back(d.clone());
    EXPECT_LE(gen.back()->layers(), 17u);
  }
  for (std::uint32_t g = 0; g < 40; ++g) {
    std::vector<int> want(41, 0);
    want[g] = static_cast<int>(g + 1);
    EXPECT_EQ(block_values(*gen[g], 41), want) << "generation " << g;
    EXPECT_EQ(gen[g]->stored_blocks(), 1u) << "generation " << g;
    EXPECT_EQ(gen[g]->next_data(0, 1 << 20), g * 4096ull);
  }
  EXPECT_EQ(block_values(*gen[40], 41)[39], 40);
}

TEST(CowDevice, OverlayNeverWritesItsBase) {
  auto base = make_memory_device(1 << 20, 512);
  ASSERT_OK(write_at(*base, 0, fill(1, 16384)));
  auto ov = CowDevice::overlay(*base);
  ASSERT_OK(ov);
  CowDevice& o = **ov;
  EXPECT_EQ(o.info().size_bytes, 1u << 20);
  EXPECT_EQ(o.info().logical_block_size, 512u);
  EXPECT_EQ(block_values(o, 5), (std::vector<int>{1, 1, 1, 1, 0})) << "reads fall through";
  ASSERT_OK(write_at(o, 4096, fill(2)));
  ASSERT_OK(write_at(o, 8192 + 1024, fill(3, 512)));  // merged into the base's block
  ASSERT_OK(write_zeroes(o, 12288, 4096));           // hides the base's block
  ASSERT_OK(write_at(o, 20480, fill(4)));
  ASSERT_OK(flush(o));
  Bytes mixed = fill(1);
  std::fill(mixed.begin() + 1024, mixed.begin() + 1536, 3);
  EXPECT_EQ(read(o, 8192, 4096), mixed);
  EXPECT_EQ(block_values(o, 6), (std::vector<int>{1, 2, 0xEE, 0, 0, 4}));
  EXPECT_EQ(block_values(*base, 6), (std::vector<int>{1, 1, 1, 1, 0, 0})) << "the base is untouched";
  EXPECT_EQ(o.stored_blocks(), 3u) << "blocks 1, 2 and 5 (3 is zeroes, recorded without data)";
  // A read across held and base blocks in one request.
  Bytes all = read(o, 0, 24576);
  EXPECT_EQ(Bytes(all.begin(), all.begin() + 4096), fill(1));
  EXPECT_EQ(Bytes(all.begin() + 4096, all.begin() + 8192), fill(2));
  // Clones of the overlay share the base and are isolated from each other.
  auto c = o.clone();
  ASSERT_OK(write_at(*c, 0, fill(8)));
  EXPECT_EQ(block_values(o, 1), (std::vector<int>{1}));
  EXPECT_EQ(block_values(*c, 6), (std::vector<int>{8, 2, 0xEE, 0, 0, 4}));
  EXPECT_EQ(block_values(*base, 1), (std::vector<int>{1}));
}

TEST(CowDevice, CopyOfADeviceStoresItsDataOnly) {
  auto mem = make_memory_device(8 << 20, 512);
  ASSERT_OK(write_at(*mem, 4096, fill(1)));
  ASSERT_OK(write_at(*mem, 8192, fill(0)));  // written, but zeroes
  ASSERT_OK(write_at(*mem, (8 << 20) - 4096, fill(2)));
  auto snap = CowDevice::copy_of(*mem);
  ASSERT_OK(snap);
  EXPECT_EQ((*snap)->info().size_bytes, 8u << 20);
  EXPECT_EQ((*snap)->stored_blocks(), 2u);
  EXPECT_EQ(read(**snap, 0, 12288), read(*mem, 0, 12288));
  EXPECT_EQ(read(**snap, (8 << 20) - 4096, 4096), fill(2));
  // The snapshot does not follow its source.
  ASSERT_OK(write_at(*mem, 4096, fill(3)));
  EXPECT_EQ(read(**snap, 4096, 4096), fill(1));
  // Holes of the copy: data in blocks 1 and 2047 only.
  EXPECT_EQ((*snap)->next_data(0, 8 << 20), 4096u);
  EXPECT_EQ((*snap)->next_hole(4096, 8 << 20), 8192u);
  EXPECT_EQ((*snap)->next_data(8192, 8 << 20), (8u << 20) - 4096);
  EXPECT_EQ((*snap)->next_hole((8 << 20) - 4096, 8 << 20), 8u << 20);
}

TEST(CowDevice, ShortLastBlockAndErrors) {
  // 3 blocks and one sector.
  auto a = cow_memory(3 * 4096 + 512);
  ASSERT_TRUE(a);
  ASSERT_OK(write_at(*a, 3 * 4096, fill(7, 512)));
  EXPECT_EQ(read(*a, 3 * 4096, 512), fill(7, 512));
  auto c = a->clone();
  ASSERT_OK(write_zeroes(*c, 3 * 4096, 512));
  EXPECT_EQ(read(*c, 3 * 4096, 512), fill(0, 512));
  EXPECT_EQ(read(*a, 3 * 4096, 512), fill(7, 512));
  Bytes b(4096);
  auto r = read_at(*a, 3 * 4096, b);
  ASSERT_FALSE(r);
  EXPECT_EQ(r.error().code, Errc::out_of_range);
  auto u = write_at(*a, 100, Bytes(512));
  ASSERT_FALSE(u);
  EXPECT_EQ(u.error().code, Errc::unaligned);
  EXPECT_EQ(CowDevice::memory(1000, 512).error().code, Errc::invalid_argument);
  EXPECT_EQ(CowDevice::memory(8192, 3000).error().code, Errc::invalid_argument);
  EXPECT_EQ(CowDevice::overlay(std::shared_ptr<BlockDevice>()).error().code, Errc::invalid_argument);
}

// ---- FaultDevice: crash models ----

TEST(FaultDeviceCrash, EnumeratesTheUnflushedWrites) {
  auto d = cached_device();
  ASSERT_OK(write_at(*d, 0, fill(0xA)));           // request 0
  ASSERT_OK(flush(*d));                            // 1
  ASSERT_OK(write_at(*d, 4096, fill(0xB, 8192)));  // 2: blocks 1 and 2
  ASSERT_OK(write_at(*d, 0, fill(0xC), 77));       // 3, tag 77
  write_fua(*d, 16384, fill(0xD));                 // 4: durable at once, not listed
  const auto ws = d->unflushed_writes();
  ASSERT_EQ(ws.size(), 2u);
  EXPECT_EQ(ws[0].request, 2u);
  EXPECT_EQ(ws[0].offset, 4096u);
  EXPECT_EQ(ws[0].length, 8192u);
  EXPECT_EQ(Bytes(ws[0].data.begin(), ws[0].data.end()), fill(0xB, 8192));
  EXPECT_EQ(ws[1].request, 3u);
  EXPECT_EQ(ws[1].offset, 0u);
  EXPECT_EQ(ws[1].tag, 77u);
  EXPECT_EQ(d->submitted(), 5u);
  EXPECT_EQ(d->unflushed_bytes(), 3u * 4096);
  EXPECT_EQ(d->crash_units(CrashUnit::request),
            (std::vector<KeptPart>{{0, 0, 8192}, {1, 0, 4096}}));
  EXPECT_EQ(d->crash_units(CrashUnit::block),
            (std::vector<KeptPart>{{0, 0, 4096}, {0, 4096, 4096}, {1, 0, 4096}}));
  EXPECT_EQ(d->crash_units(CrashUnit::sector).size(), 16u + 8u);
  // What is durable: the flushed write and the FUA one.
  EXPECT_EQ(block_values(d->inner(), 5), (std::vector<int>{0xA, 0, 0, 0, 0xD}));
}

TEST(FaultDeviceCrash, KeepChosenRequests) {
  // history: A@0 flush | B@1-2  C@0  (unflushed: 0 = B, 1 = C)
  struct Case {
    std::vector<KeptPart> keep;
    std::vector<int> want;
  };
  const std::vector<Case> cases = {
      {{}, {0xA, 0, 0}},
      {{{0}}, {0xA, 0xB, 0xB}},
      {{{1}}, {0xC, 0, 0}},
      {{{1}, {0}}, {0xC, 0xB, 0xB}},  // any order of the list
      {{{0, 4096, 4096}}, {0xA, 0, 0xB}},          // a block of B
      {{{0, 0, 4096}, {1}}, {0xC, 0xB, 0}},
  };
  for (std::size_t i = 0; i < cases.size(); ++i) {
    auto d = cached_device();
    ASSERT_OK(write_at(*d, 0, fill(0xA)));
    ASSERT_OK(flush(*d));
    ASSERT_OK(write_at(*d, 4096, fill(0xB, 8192)));
    ASSERT_OK(write_at(*d, 0, fill(0xC)));
    EXPECT_EQ(block_values(*d, 3), (std::vector<int>{0xC, 0xB, 0xB})) << "before the cut, the caller sees its writes";
    ASSERT_OK(d->power_cut_keep(cases[i].keep));
    EXPECT_EQ(d->unflushed_writes().size(), 0u);
    EXPECT_EQ(block_values(*d, 3), cases[i].want) << "case " << i;
    EXPECT_EQ(block_values(d->inner(), 3), cases[i].want) << "case " << i;
  }
}

TEST(FaultDeviceCrash, LaterKeptWriteWinsAndDurableRequestsAreNotUndone) {
  {
    // X then Y on block 0, both unflushed.
    for (int keep = 1; keep <= 3; ++keep) {
      auto d = cached_device();
      ASSERT_OK(write_at(*d, 0, fill(0x1)));
      ASSERT_OK(write_at(*d, 0, fill(0x2)));
      std::vector<KeptPart> k;
      if (keep & 1) k.push_back({0});
      if (keep & 2) k.push_back({1});
      ASSERT_OK(d->power_cut_keep(k));
      EXPECT_EQ(block_values(*d, 1), (std::vector<int>{keep == 1 ? 1 : 2})) << "keep mask " << keep;
    }
  }
  // A FUA write and a write_zeroes after cached writes: keeping the cached
  // ones must not bring back what the durable requests replaced.
  auto d = cached_device();
  ASSERT_OK(write_at(*d, 0, fill(0x1, 12288)));  // blocks 0-2
  write_fua(*d, 4096, fill(0x2));                // block 1, durable
  ASSERT_OK(write_zeroes(*d, 8192, 4096));       // block 2, durable
  ASSERT_OK(write_at(*d, 4096, fill(0x3)));      // block 1 again, cached
  EXPECT_EQ(block_values(*d, 3), (std::vector<int>{1, 3, 0}));
  EXPECT_EQ(d->unflushed_writes().size(), 2u);
  EXPECT_EQ(d->unflushed_bytes(), 2u * 4096);
  ASSERT_OK(d->power_cut_keep(std::vector<KeptPart>{{0}}));
  EXPECT_EQ(block_values(*d, 3), (std::vector<int>{1, 2, 0}));
}

TEST(FaultDeviceCrash, TornWriteAtASectorBoundary) {
  // Three unflushed writes; the second is 16 KiB, sector i holding i + 1.
  Bytes w1(16384);
  for (std::size_t i = 0; i < w1.size(); ++i) w1[i] = static_cast<std::uint8_t>(i / 512 + 1);
  for (std::uint64_t sectors : {0u, 1u, 3u, 8u, 31u, 32u}) {
    auto d = cached_device();
    ASSERT_OK(write_at(*d, 0, fill(0x40)));
    ASSERT_OK(write_at(*d, 8192, w1));
    ASSERT_OK(write_at(*d, 4096, fill(0x50)));
    ASSERT_OK(d->power_cut_torn(1, sectors));
    EXPECT_EQ(read(*d, 0, 4096), fill(0x40)) << "the write before survives";
    EXPECT_EQ(read(*d, 4096, 4096), fill(0)) << "the write after is lost";
    Bytes want(16384, 0);
    std::copy(w1.begin(), w1.begin() + static_cast<std::ptrdiff_t>(sectors * 512), want.begin());
    EXPECT_EQ(read(*d, 8192, 16384), want) << sectors << " sectors";
  }
  auto d = cached_device();
  ASSERT_OK(write_at(*d, 0, fill(1)));
  EXPECT_EQ(d->power_cut_torn(1, 0).error().code, Errc::invalid_argument);
  EXPECT_EQ(d->power_cut_torn(0, 9).error().code, Errc::invalid_argument);
  EXPECT_EQ(d->unflushed_writes().size(), 1u) << "a refused cut keeps the cache";
}

TEST(FaultDeviceCrash, TornWriteOnA4KiBSectorDeviceMergesWithTheOldBlock) {
  FaultPlan p;
  p.drop_unflushed = true;
  FaultDevice d(make_memory_device(1 << 20, 4096), p);
  ASSERT_OK(write_at(d, 0, fill(0x11, 8192)));
  ASSERT_OK(flush(d));
  ASSERT_OK(write_at(d, 0, fill(0x22, 8192)));
  ASSERT_OK(d.power_cut_torn(0, 9));  // 4608 bytes: block 0 and a sector of block 1
  Bytes want = fill(0x11, 8192);
  std::fill(want.begin(), want.begin() + 4608, 0x22);
  EXPECT_EQ(read(d, 0, 8192), want);
}

TEST(FaultDeviceCrash, PerBlockUnitsOfAnUnalignedWrite) {
  // 1 KiB at 3.5 KiB: half in block 0, half in block 1 of the device.
  auto d = cached_device();
  ASSERT_OK(write_at(*d, 3584, fill(0x5, 1024)));
  const auto units = d->crash_units(CrashUnit::block);
  EXPECT_EQ(units, (std::vector<KeptPart>{{0, 0, 512}, {0, 512, 512}}));
  ASSERT_OK(d->power_cut_keep(std::span(units).subspan(1)));
  Bytes want(8192, 0);
  std::fill(want.begin() + 4096, want.begin() + 4608, 5);
  EXPECT_EQ(read(*d, 0, 8192), want);
}

TEST(FaultDeviceCrash, RandomSubsetFollowsSplitMix64) {
  // SplitMix64 from state 0 gives 0xe220a8397b1dcdaf, 0x6e789e6aa1b965f4,
  // 0x06c45d188009454f (Vigna's reference splitmix64.c); modulo 100: 35, 0,
  // 79. A unit survives when that value is below keep_percent.
  struct Case {
    std::uint32_t percent;
    std::vector<int> want;  // blocks 0..2, written 1, 2, 3
  };
  const std::vector<Case> cases = {{0, {0, 0, 0}}, {1, {0, 2, 0}}, {35, {0, 2, 0}}, {36, {1, 2, 0}},
                                   {50, {1, 2, 0}}, {79, {1, 2, 0}}, {80, {1, 2, 3}}, {100, {1, 2, 3}}};
  for (const Case& c : cases) {
    for (CrashUnit unit : {CrashUnit::request, CrashUnit::block}) {
      auto d = cached_device();
      for (std::uint8_t i = 0; i < 3; ++i) ASSERT_OK(write_at(*d, i * 4096u, fill(static_cast<std::uint8_t>(i + 1))));
      auto kept = d->power_cut_random(0, unit, c.percent);
      ASSERT_OK(kept);
      EXPECT_EQ(block_values(*d, 3), c.want) << c.percent << "%";
      std::size_t n = 0;
      for (int v : c.want) n += v != 0;
      EXPECT_EQ(kept->size(), n);
    }
  }
  // Per block: one 12 KiB write is three units, drawn the same way.
  auto d = cached_device();
  Bytes w(12288);
  for (std::size_t i = 0; i < w.size(); ++i) w[i] = static_cast<std::uint8_t>(i / 4096 + 1);
  ASSERT_OK(write_at(*d, 0, w));
  ASSERT_OK(d->power_cut_random(0, CrashUnit::block, 50));
  EXPECT_EQ(block_values(*d, 3), (std::vector<int>{1, 2, 0}));
  EXPECT_EQ(cached_device()->power_cut_random(1, CrashUnit::block, 101).error().code, Errc::invalid_argument);
}

TEST(FaultDeviceCrash, SameSeedSameCrashState) {
  auto run = [](std::uint64_t seed) {
    auto d = cached_device();
    for (std::uint32_t i = 0; i < 64; ++i) (void)write_at(*d, i * 4096u, fill(static_cast<std::uint8_t>(i + 1)));
    auto kept = d->power_cut_random(seed, CrashUnit::block);
    EXPECT_TRUE(kept);
    return block_values(*d, 64);
  };
  EXPECT_EQ(run(42), run(42));
  EXPECT_NE(run(42), run(43));
}

TEST(FaultDeviceCrash, FlushMakesEverythingBeforeItDurable) {
  auto d = cached_device();
  ASSERT_OK(write_at(*d, 0, fill(1)));
  ASSERT_OK(write_at(*d, 4096, fill(2)));
  ASSERT_OK(flush(*d));
  ASSERT_OK(write_at(*d, 8192, fill(3)));
  EXPECT_EQ(d->unflushed_writes().size(), 1u);
  d->power_cut();
  EXPECT_EQ(block_values(*d, 3), (std::vector<int>{1, 2, 0}));
}

TEST(FaultDeviceCrash, ShortWriteIsCachedLikeAnyWrite) {
  FaultPlan p;
  p.drop_unflushed = true;
  p.short_request = 0;
  FaultDevice d(make_memory_device(1 << 20, 512), p);
  auto r = write_at(d, 0, fill(1, 8192));
  ASSERT_FALSE(r);
  EXPECT_EQ(r.error().code, Errc::short_io);
  ASSERT_EQ(d.unflushed_writes().size(), 1u);
  EXPECT_EQ(d.unflushed_writes()[0].length, 4096u) << "the half that was moved";
  d.power_cut();
  EXPECT_EQ(block_values(d, 2), (std::vector<int>{0, 0}));
}

TEST(FaultDeviceCrash, RefusesBadPartsAndKeepsTheCache) {
  auto d = cached_device();
  ASSERT_OK(write_at(*d, 0, fill(1, 8192)));
  for (KeptPart bad : {KeptPart{1}, KeptPart{0, 100, 512}, KeptPart{0, 0, 700}, KeptPart{0, 4096, 8192}}) {
    auto st = d->power_cut_keep(std::vector<KeptPart>{bad});
    ASSERT_FALSE(st);
    EXPECT_EQ(st.error().code, Errc::invalid_argument) << st.error().to_string();
  }
  EXPECT_EQ(d->unflushed_writes().size(), 1u);
  EXPECT_EQ(block_values(d->inner(), 2), (std::vector<int>{0, 0})) << "nothing written";
}

TEST(FaultDevice, ResetCountersAndBorrowedInner) {
  auto base = cow_memory(1 << 20);
  ASSERT_TRUE(base);
  FaultPlan p;
  p.fail_request = 1;
  FaultDevice d(*base, p);
  EXPECT_EQ(d.inner_as<CowDevice>(), base.get());
  EXPECT_EQ(d.inner_as<FaultDevice>(), nullptr);
  ASSERT_OK(write_at(d, 0, fill(1)));
  EXPECT_FALSE(write_at(d, 0, fill(2)));
  ASSERT_OK(write_at(d, 0, fill(3)));
  EXPECT_EQ(d.counted(), 3u);
  EXPECT_EQ(d.failed(), 1u);
  d.reset_counters();
  EXPECT_EQ(d.counted(), 0u);
  EXPECT_EQ(d.failed(), 0u);
  EXPECT_EQ(d.submitted(), 0u);
  ASSERT_OK(write_at(d, 0, fill(4)));
  EXPECT_FALSE(write_at(d, 0, fill(5))) << "request 1 again after the reset";
  EXPECT_EQ(read(*base, 0, 4096), fill(4));
}

// ---- RecorderDevice ----

namespace {

// Below a recorder: clones the CowDevice after every request, so that
// states[k] is the device after the first k requests.
class CloneEachRequest final : public BlockDevice {
 public:
  explicit CloneEachRequest(CowDevice& dev) : dev_(dev) { states.push_back(dev.clone()); }
  const DeviceInfo& info() const noexcept override { return dev_.info(); }
  void submit(IoRequest& req) noexcept override {
    dev_.submit(req);  // completes at submission
    states.push_back(dev_.clone());
  }
  std::size_t poll(bool wait) noexcept override { return dev_.poll(wait); }
  std::size_t in_flight() const noexcept override { return dev_.in_flight(); }
  std::vector<std::unique_ptr<CowDevice>> states;

 private:
  CowDevice& dev_;
};

bool same_contents(BlockDevice& a, BlockDevice& b) {
  const std::uint64_t size = a.info().size_bytes;
  if (size != b.info().size_bytes) return false;
  Bytes x(1 << 20), y(1 << 20);
  for (std::uint64_t o = 0; o < size; o += x.size()) {
    const auto n = static_cast<std::size_t>(std::min<std::uint64_t>(x.size(), size - o));
    if (!read_at(a, o, {x.data(), n}) || !read_at(b, o, {y.data(), n})) return false;
    if (std::memcmp(x.data(), y.data(), n) != 0) return false;
  }
  return true;
}

}  // namespace

TEST(RecorderDevice, LogsEveryRequest) {
  auto mem = make_memory_device(1 << 20, 512);
  RecorderDevice rec(*mem);
  ASSERT_OK(write_at(rec, 4096, fill(1), 9));
  Bytes b(4096);
  ASSERT_OK(read_at(rec, 4096, b));
  ASSERT_OK(flush(rec));
  write_fua(rec, 0, fill(2, 512));
  ASSERT_OK(discard(rec, 8192, 4096));
  ASSERT_OK(write_zeroes(rec, 12288, 1024));
  EXPECT_FALSE(read_at(rec, 1 << 20, b));  // past the end: logged, failed
  const auto& log = rec.log();
  ASSERT_EQ(log.size(), 7u);
  EXPECT_EQ(log[0].op, IoOp::write);
  EXPECT_EQ(log[0].offset, 4096u);
  EXPECT_EQ(log[0].length, 4096u);
  EXPECT_EQ(log[0].tag, 9u);
  EXPECT_EQ(log[0].data, fill(1));
  EXPECT_EQ(log[1].op, IoOp::read);
  EXPECT_TRUE(log[1].data.empty());
  EXPECT_EQ(log[2].op, IoOp::flush);
  EXPECT_EQ(log[3].flags & io_flag::fua, io_flag::fua);
  EXPECT_EQ(log[3].data, fill(2, 512));
  EXPECT_EQ(log[4].op, IoOp::discard);
  EXPECT_EQ(log[5].op, IoOp::write_zeroes);
  EXPECT_EQ(log[5].length, 1024u);
  EXPECT_EQ(log[6].status, Errc::out_of_range);
  for (std::size_t i = 0; i < log.size(); ++i) {
    EXPECT_EQ(log[i].index, i);
    EXPECT_TRUE(log[i].completed);
  }
  EXPECT_EQ(rec.logged_bytes(), 4096u + 512u);
  rec.clear();
  EXPECT_TRUE(rec.log().empty());
  RecorderDevice no_reads(*mem, false);
  ASSERT_OK(read_at(no_reads, 0, b));
  EXPECT_TRUE(no_reads.log().empty());
}

TEST(RecorderDevice, ReplayOfEveryPrefixEqualsTheStateThen) {
  auto start = cow_memory(256 << 10);
  ASSERT_TRUE(start);
  ASSERT_OK(write_at(*start, 0, fill(0x77, 65536)));  // the starting image
  auto live = start->clone();
  CloneEachRequest states(*live);
  RecorderDevice rec(states);
  ASSERT_OK(write_at(rec, 4096, fill(1, 8192)));
  ASSERT_OK(write_at(rec, 512, fill(2, 512)));
  Bytes b(4096);
  ASSERT_OK(read_at(rec, 0, b));
  ASSERT_OK(flush(rec));
  ASSERT_OK(write_zeroes(rec, 8192, 16384));
  ASSERT_OK(discard(rec, 32768, 8192));
  write_fua(rec, 131072, fill(3, 1024));
  ASSERT_OK(write_at(rec, 4096, fill(4)));
  EXPECT_FALSE(write_at(rec, 256 << 10, b));  // failed: replay skips it
  const std::size_t n = rec.log().size();
  ASSERT_EQ(n, 9u);
  ASSERT_EQ(states.states.size(), n + 1);
  for (std::size_t k = 0; k <= n; ++k) {
    auto copy = start->clone();
    ASSERT_OK(replay(*copy, std::span(rec.log()).first(k)));
    EXPECT_TRUE(same_contents(*copy, *states.states[k])) << "prefix of " << k << " requests";
  }
  // The test can fail: prefixes that differ in a write differ in contents.
  auto two = start->clone(), three = start->clone();
  ASSERT_OK(replay(*two, std::span(rec.log()).first(1)));
  ASSERT_OK(replay(*three, std::span(rec.log()).first(2)));
  EXPECT_FALSE(same_contents(*two, *three));
}

// ---- The test profile ----

namespace {

constexpr std::uint64_t kVolume = 64ull << 20;

std::unique_ptr<CowDevice> formatted() {
  auto dev = CowDevice::memory(kVolume, 512, "profile");
  if (!dev) return nullptr;
  MkfsTarget t{dev->get(), "profile"};
  MkfsOptions o;
  o.timestamp = 1700000000;
  o.uuid = std::array<std::uint8_t, 16>{1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16};
  auto r = format_volume(std::span<const MkfsTarget>(&t, 1), o);
  if (!r) {
    ADD_FAILURE() << "mkfs: " << r.error().to_string();
    return nullptr;
  }
  return std::move(*dev);
}

std::span<const std::uint8_t> as_bytes(const std::string& s) {
  return {reinterpret_cast<const std::uint8_t*>(s.data()), s.size()};
}

// A workload of namespace calls, buffered and fsynced writes, a checkpoint
// in the middle and an unmount.
void workload(BlockDevice& dev, const MountOptions& mo) {
  auto w = Writer::mount(dev, mo);
  ASSERT_OK(w);
  Writer& wr = **w;
  ASSERT_OK(wr.mkdir("/d"));
  for (int i = 0; i < 20; ++i) {
    auto f = wr.create("/d/f" + std::to_string(i));
    ASSERT_OK(f);
    ASSERT_OK(wr.write(*f, 0, as_bytes(std::string(static_cast<std::size_t>(3000 * i + 17), static_cast<char>('a' + i)))));
    if (i % 5 == 0) {
      ASSERT_OK(wr.fsync(*f));
    }
  }
  ASSERT_OK(wr.sync());
  ASSERT_OK(wr.rename("/d/f3", "/d/g3"));
  ASSERT_OK(wr.unlink("/d/f4"));
  auto f = wr.lookup("/d/f7");
  ASSERT_OK(f);
  ASSERT_OK(wr.write(*f, 5000, as_bytes("rewritten")));
  ASSERT_OK(wr.fsync(*f));
  ASSERT_OK(wr.unmount());
}

}  // namespace

TEST(TestProfile, StatesItsOptions) {
  const MountOptions o = MountOptions::test_profile();
  EXPECT_EQ(o.fixed_time, 1600000000u);
  EXPECT_EQ(o.checkpoint_interval_s, 0u);
  EXPECT_EQ(o.ipu.ipu_policy, 0x10u);  // F2FS_IPU_FSYNC: 1 << 4 (fs/f2fs/segment.h)
  EXPECT_FALSE(o.gc.background);
  // The rest is the defaults.
  const MountOptions d;
  EXPECT_EQ(o.cache_bytes, d.cache_bytes);
  EXPECT_EQ(o.node_cache_pages, d.node_cache_pages);
  EXPECT_EQ(o.discard, d.discard);
  EXPECT_EQ(o.read_only, d.read_only);
}

TEST(TestProfile, TwoRunsWriteByteIdenticalImages) {
  auto base = formatted();
  ASSERT_TRUE(base);
  auto run1 = base->clone(), run2 = base->clone();
  workload(*run1, MountOptions::test_profile());
  workload(*run2, MountOptions::test_profile());
  EXPECT_TRUE(same_contents(*run1, *run2));
  EXPECT_FALSE(same_contents(*run1, *base)) << "the workload wrote something";
  // The times the writer set are the profile's clock.
  auto w = Writer::mount(*run1, MountOptions::test_profile());
  ASSERT_OK(w);
  auto f = (*w)->lookup("/d/f7");
  ASSERT_OK(f);
  auto st = (*w)->stat(*f);
  ASSERT_OK(st);
  EXPECT_EQ(st->mtime, (Timespec{1600000000, 0}));
  EXPECT_EQ(st->ctime, (Timespec{1600000000, 0}));
  (void)(*w)->unmount();
  fsck::Options fo;
  fo.force = true;
  auto rep = fsck::check(*run1, fo);
  ASSERT_OK(rep);
  EXPECT_EQ(rep->exit_code(), 0) << rep->problems.size() << " problems";
  // Without the fixed clock the two runs set different times (the system
  // clock's nanoseconds): the comparison above can fail.
  auto run3 = base->clone(), run4 = base->clone();
  MountOptions clocked = MountOptions::test_profile();
  clocked.fixed_time = 0;
  workload(*run3, clocked);
  workload(*run4, clocked);
  EXPECT_FALSE(same_contents(*run3, *run4));
}

namespace {

struct StepClock {
  std::uint64_t ns = 0;
  static std::uint64_t now(void* c) noexcept { return static_cast<StepClock*>(c)->ns; }
};

}  // namespace

TEST(TestProfile, InjectedClockSetsTimesAndDrivesThePeriodicCheckpoint) {
  auto dev = formatted();
  ASSERT_TRUE(dev);
  StepClock c{1650000000ull * 1000000000 + 123456789};
  MountOptions mo = MountOptions::test_profile();
  mo.fixed_time = 0;
  mo.checkpoint_interval_s = 60;
  mo.clock = {&StepClock::now, &c};
  auto w = Writer::mount(*dev, mo);
  ASSERT_OK(w);
  auto a = (*w)->create("/a");
  ASSERT_OK(a);
  auto st = (*w)->stat(*a);
  ASSERT_OK(st);
  EXPECT_EQ(st->mtime, (Timespec{1650000000, 123456789}));
  const std::uint64_t cps = (*w)->stats().checkpoints;
  c.ns += 59ull * 1000000000;  // 59 s after the mount: no checkpoint yet
  ASSERT_OK((*w)->create("/b"));
  EXPECT_EQ((*w)->stats().checkpoints, cps);
  c.ns += 2ull * 1000000000;  // 61 s: the next call takes one
  ASSERT_OK((*w)->create("/c"));
  EXPECT_EQ((*w)->stats().checkpoints, cps + 1);
  auto cst = (*w)->stat(*(*w)->lookup("/c"));
  ASSERT_OK(cst);
  EXPECT_EQ(cst->ctime, (Timespec{1650000061, 123456789}));
  ASSERT_OK((*w)->unmount());
}
