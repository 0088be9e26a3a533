// Multi-device volumes at the storage seam: the block ranges of a device
// list (as f2fs_scan_devices() in fs/f2fs/super.c lays them, values
// hand-computed), requests split across devices, and the refusals of
// open_volume_devices() and of the reader given device 0 alone.
#include <gtest/gtest.h>

#include <cstring>

#include "f2fscore/fsck.hpp"
#include "f2fscore/mkfs.hpp"
#include "f2fscore/multi_device.hpp"
#include "f2fscore/volume.hpp"

using namespace f2fscore;

namespace {

constexpr std::uint64_t MiB = 1ull << 20;

// Device sizes: 100 MiB; 300 MiB + 12345 sectors (not a whole segment);
// 67 MiB. Segment 0 starts at block 512 (the first 2 MiB zone past the two
// superblock blocks), so device 0 holds (100 - 2) / 2 = 49 segments and
// blkaddrs [0, 512 + 49 x 512) = [0, 25600); device 1 floor((300 MiB +
// 6320640) / 2 MiB) = 153 segments, [25600, 25600 + 78336); device 2 33
// segments, [103936, 103936 + 16896).
const std::uint64_t kSizes[3] = {100 * MiB, 300 * MiB + 12345 * 512, 67 * MiB};
const DeviceRange kRanges[3] = {{"meta", 0, 25600}, {"/d/one", 25600, 78336}, {"/d/two", 103936, 16896}};

struct Volume3 {
  std::vector<std::unique_ptr<BlockDevice>> devs;
};

Volume3 format3() {
  Volume3 v;
  std::vector<MkfsTarget> t;
  const char* names[3] = {"meta", "/d/one", "/d/two"};
  for (int i = 0; i < 3; ++i) {
    v.devs.push_back(make_memory_device(kSizes[i], 512, names[i]));
    t.push_back({v.devs.back().get(), names[i]});
  }
  MkfsOptions o;
  o.timestamp = 1700000000;
  o.uuid = std::array<std::uint8_t, 16>{1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16};
  auto r = format_volume(t, o);
  EXPECT_TRUE(r) << (r ? "" : r.error().to_string());
  return v;
}

disk::SuperBlock superblock_of(BlockDevice& dev) {
  std::vector<std::uint8_t> b(disk::kBlockSize);
  EXPECT_TRUE(read_at(dev, 0, b));
  disk::SuperBlock sb;
  std::memcpy(&sb, b.data() + disk::kSuperOffset, sizeof sb);
  return sb;
}

TEST(MultiDevice, RangesAsTheKernelMapsThem) {
  auto v = format3();
  const auto sb = superblock_of(*v.devs[0]);
  ASSERT_TRUE(is_multi_device(sb));
  const auto r = device_ranges(sb);
  ASSERT_EQ(r.size(), 3u);
  for (int i = 0; i < 3; ++i) {
    EXPECT_EQ(r[i].path, kRanges[i].path) << i;
    EXPECT_EQ(r[i].start_blkaddr, kRanges[i].start_blkaddr) << i;
    EXPECT_EQ(r[i].blocks, kRanges[i].blocks) << i;
  }
  // One device named alone is a single-device volume.
  disk::SuperBlock one = sb;
  std::memset(&one.devs[1], 0, sizeof one.devs[1]);
  EXPECT_FALSE(is_multi_device(one));
  EXPECT_TRUE(device_ranges(one).empty());
}

TEST(MultiDevice, RequestsSplitWhereDevicesMeet) {
  std::vector<std::unique_ptr<BlockDevice>> m;
  for (int i = 0; i < 3; ++i) m.push_back(make_memory_device(kSizes[i], 512, kRanges[i].path));
  BlockDevice* raw[3] = {m[0].get(), m[1].get(), m[2].get()};
  auto md = MultiDevice::make(std::move(m), {kRanges[0], kRanges[1], kRanges[2]});
  ASSERT_TRUE(md) << md.error().to_string();
  BlockDevice& d = **md;
  EXPECT_EQ(d.info().size_bytes, (103936ull + 16896) * 4096);
  EXPECT_EQ(d.info().name, "meta+2");
  EXPECT_EQ((*md)->member_of(25599), 0u);
  EXPECT_EQ((*md)->member_of(25600), 1u);
  EXPECT_EQ((*md)->member_of(103936), 2u);
  EXPECT_EQ((*md)->member_of(103936 + 16896), 3u);

  // Blocks 25599, 25600, 25601: the last block of device 0, the first two
  // of device 1.
  std::vector<std::uint8_t> w(3 * 4096);
  for (std::size_t i = 0; i < w.size(); ++i) w[i] = static_cast<std::uint8_t>(i * 13 + i / 4096);
  ASSERT_TRUE(write_at(d, 25599ull * 4096, w));
  std::vector<std::uint8_t> a(4096), b(8192);
  ASSERT_TRUE(read_at(*raw[0], 25599ull * 4096, a));
  ASSERT_TRUE(read_at(*raw[1], 0, b));
  EXPECT_TRUE(std::equal(a.begin(), a.end(), w.begin()));
  EXPECT_TRUE(std::equal(b.begin(), b.end(), w.begin() + 4096));
  std::vector<std::uint8_t> back(w.size());
  ASSERT_TRUE(read_at(d, 25599ull * 4096, back));
  EXPECT_EQ(back, w);
  // Across all three devices at once: the last block of 1, the first of 2.
  std::vector<std::uint8_t> big((103936 - 25600 + 1) * 4096ull);
  ASSERT_TRUE(read_at(d, 25600ull * 4096, big));
  EXPECT_TRUE(std::equal(big.begin(), big.begin() + 8192, w.begin() + 4096));
  ASSERT_TRUE(write_at(d, 103936ull * 4096, std::span<const std::uint8_t>(w.data(), 4096)));
  ASSERT_TRUE(read_at(*raw[2], 0, a));
  EXPECT_TRUE(std::equal(a.begin(), a.end(), w.begin()));
  EXPECT_TRUE(flush(d));
  // Holes: past the first 64 KiB chunk of device 2 (the memory device's
  // unit) nothing was written; from device 1's last block on, the data
  // is device 2's first block.
  EXPECT_EQ(d.next_data(103952ull * 4096, d.info().size_bytes), d.info().size_bytes);
  EXPECT_EQ(d.next_data(103935ull * 4096, d.info().size_bytes), 103936ull * 4096);
  EXPECT_EQ(d.next_hole(25599ull * 4096, d.info().size_bytes), 25600ull * 4096 + 65536);
  // Past the volume.
  auto past = read_at(d, d.info().size_bytes, std::span<std::uint8_t>(a.data(), 4096));
  ASSERT_FALSE(past);
  EXPECT_EQ(past.error().code, Errc::out_of_range);
}

TEST(MultiDevice, OpenVolumeDevicesAndItsRefusals) {
  // Device 0 alone: the reader names the other devices.
  {
    auto v = format3();
    auto vol = Volume::open(*v.devs[0]);
    ASSERT_FALSE(vol);
    EXPECT_NE(vol.error().message.find("device 0 of a volume of 3 devices (the others: /d/one, /d/two)"),
              std::string::npos)
        << vol.error().message;
  }
  // By the superblock's paths; then the whole volume opens.
  {
    auto v = format3();
    std::vector<std::string> asked;
    auto d = open_volume_devices(std::move(v.devs[0]), [&](const std::string& p, std::size_t i) -> Result<std::unique_ptr<BlockDevice>> {
      asked.push_back(p);
      return std::move(v.devs[i]);
    });
    ASSERT_TRUE(d) << d.error().to_string();
    EXPECT_EQ(asked, (std::vector<std::string>{"/d/one", "/d/two"}));
    auto vol = Volume::open(**d);
    ASSERT_TRUE(vol) << vol.error().to_string();
    // block_count counts the devices' tails past their last segment (as
    // mkfs.f2fs sums the devices' sizes): no truncation for the checker.
    EXPECT_GT(vol->get()->superblock().block_count.get(), (103936ull + 16896));
    fsck::Options fo;
    fo.mode = fsck::Mode::check_only;
    fo.force = true;
    auto rep = fsck::check(**d, fo);
    ASSERT_TRUE(rep) << rep.error().to_string();
    std::string found;
    for (const auto& p : rep->problems) found += p.to_string() + "\n";
    EXPECT_EQ(found, "");
  }
  // A path given for device 1 replaces the superblock's.
  {
    auto v = format3();
    std::vector<std::string> asked;
    const std::vector<std::string> paths{"/moved/one"};
    auto d = open_volume_devices(
        std::move(v.devs[0]),
        [&](const std::string& p, std::size_t i) -> Result<std::unique_ptr<BlockDevice>> {
          asked.push_back(p);
          return std::move(v.devs[i]);
        },
        paths);
    ASSERT_TRUE(d) << d.error().to_string();
    EXPECT_EQ(asked, (std::vector<std::string>{"/moved/one", "/d/two"}));
  }
  // More paths than devices.
  {
    auto v = format3();
    const std::vector<std::string> paths{"a", "b", "c"};
    auto d = open_volume_devices(std::move(v.devs[0]), [&](const std::string&, std::size_t i) -> Result<std::unique_ptr<BlockDevice>> {
      return std::move(v.devs[i]);
    }, paths);
    ASSERT_FALSE(d);
    EXPECT_EQ(d.error().code, Errc::invalid_argument);
    EXPECT_NE(d.error().message.find("3 other devices named, but meta is a volume of 3 devices (2 besides it)"),
              std::string::npos)
        << d.error().message;
  }
  // A missing device.
  {
    auto v = format3();
    auto d = open_volume_devices(std::move(v.devs[0]), [&](const std::string& p, std::size_t i) -> Result<std::unique_ptr<BlockDevice>> {
      if (i == 2) return make_error(Errc::not_found, "cannot open " + p + ": no such file");
      return std::move(v.devs[i]);
    });
    ASSERT_FALSE(d);
    EXPECT_EQ(d.error().code, Errc::not_found);
    EXPECT_EQ(d.error().message, "device 2 of 3 (/d/two): cannot open /d/two: no such file");
  }
  // A device smaller than its range (33 segments, 69206016 bytes).
  {
    auto v = format3();
    auto d = open_volume_devices(std::move(v.devs[0]), [&](const std::string& p, std::size_t i) -> Result<std::unique_ptr<BlockDevice>> {
      if (i == 2) return make_memory_device(64 * MiB, 512, p);
      return std::move(v.devs[i]);
    });
    ASSERT_FALSE(d);
    EXPECT_EQ(d.error().code, Errc::corrupt);
    EXPECT_EQ(d.error().message, "device 2 of 3 (/d/two) has 67108864 bytes; the volume's device list needs 69206016");
  }
  // Device 1 named twice (as device 2 too).
  {
    auto v = format3();
    const std::vector<std::string> paths{"", "/d/one"};
    auto d = open_volume_devices(std::move(v.devs[0]), [&](const std::string&, std::size_t i) -> Result<std::unique_ptr<BlockDevice>> {
      return std::move(v.devs[i]);
    }, paths);
    ASSERT_FALSE(d);
    EXPECT_EQ(d.error().code, Errc::invalid_argument);
    EXPECT_NE(d.error().message.find("device 2 of 3 (/d/one) is device 1 (/d/one) too"), std::string::npos)
        << d.error().message;
  }
  // A single-device volume with a path for another device.
  {
    auto dev = make_memory_device(100 * MiB, 512, "single");
    MkfsTarget t{dev.get(), "single"};
    MkfsOptions o;
    o.timestamp = 1700000000;
    ASSERT_TRUE(format_volume(std::span<const MkfsTarget>(&t, 1), o));
    const std::vector<std::string> paths{"x"};
    auto d = open_volume_devices(std::move(dev), [](const std::string&, std::size_t) -> Result<std::unique_ptr<BlockDevice>> {
      return make_error(Errc::io, "not called");
    }, paths);
    ASSERT_FALSE(d);
    EXPECT_EQ(d.error().message, "single is a single-device volume: no other device to name");
  }
}

}  // namespace
