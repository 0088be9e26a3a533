// Shared by the metadata-rebuild tests: images to rebuild, what a volume's
// tree reads as, and the identity check (plan_from_volume + rebuild, then the
// same tree under the new checkpoint).
#pragma once

#include <gtest/gtest.h>

#include <cstdint>
#include <filesystem>
#include <fstream>
#include <functional>
#include <map>
#include <memory>
#include <random>
#include <set>
#include <string>
#include <vector>

#include "f2fscore/meta_rebuild.hpp"
#include "f2fscore/mkfs.hpp"
#include "f2fscore/multi_device.hpp"
#include "f2fscore/volume.hpp"
#include "support/rich_image.hpp"
#include "support/sparse_image.hpp"
#include "support/test_support.hpp"
#include "reader/volume_internal.hpp"  // FileMapper: walk sparse files a node at a time

namespace metatest {

namespace fs = std::filesystem;
using namespace f2fscore;
using namespace f2fscore::disk;
using meta::RebuildPlan;
using meta::RebuildStats;

/// Everything the tree reads as: path -> "mode uid gid size links | content
/// digest or link target | xattrs". Errors become entries too, so a tree
/// that stops reading differs.
inline std::map<std::string, std::string> tree_digest(Volume& v) {
  std::map<std::string, std::string> out;
  std::set<nid_t> seen_dirs;
  std::function<void(nid_t, const std::string&, int)> visit = [&](nid_t ino, const std::string& path, int depth) {
    auto in = v.read_inode(ino);
    if (!in) {
      out[path] = "ERROR " + in.error().to_string();
      return;
    }
    std::string d = std::to_string(in->mode) + " " + std::to_string(in->uid) + " " + std::to_string(in->gid) + " " +
                    std::to_string(in->size) + " " + std::to_string(in->links) + " | ";
    if (in->is_reg() && in->size > (8u << 20) && !in->is_compressed() && !in->has_inline_data()) {
      // Big sparse files: the mapped blocks only, found a node at a time.
      std::uint64_t h = 1469598103934665603ull;
      FileMapper m(v, *in);
      std::vector<std::uint8_t> buf(kBlockSize);
      const std::uint64_t nblocks = (in->size + kBlockSize - 1) / kBlockSize;
      for (std::uint64_t i = 0; i < nblocks;) {
        std::uint64_t next = i + 1;
        auto a = m.map(i, &next);
        if (!a) {
          d += "MAP-ERROR " + a.error().to_string();
          break;
        }
        if (*a != kNullAddr) {
          auto n = v.read(*in, i * kBlockSize, buf);
          if (!n) {
            d += "READ-ERROR " + n.error().to_string();
            break;
          }
          h = (h ^ i) * 1099511628211ull;
          for (std::size_t k = 0; k < *n; ++k) h = (h ^ buf[k]) * 1099511628211ull;
        }
        i = std::max(i + 1, next);
      }
      d += "sparse " + std::to_string(h);
    } else if (in->is_reg()) {
      std::uint64_t h = 1469598103934665603ull;
      std::vector<std::uint8_t> buf(1 << 16);
      for (std::uint64_t off = 0; off < in->size;) {
        auto n = v.read(*in, off, buf);
        if (!n || *n == 0) {
          d += "READ-ERROR " + (n ? std::string("short") : n.error().to_string());
          break;
        }
        for (std::size_t i = 0; i < *n; ++i) h = (h ^ buf[i]) * 1099511628211ull;
        off += *n;
      }
      d += std::to_string(h);
    } else if (in->is_symlink()) {
      auto t = v.read_link(*in);
      d += t ? *t : "LINK-ERROR";
    }
    auto xs = v.xattrs(*in);
    d += " |";
    if (xs)
      for (const auto& x : *xs) d += " " + x.full_name() + "=" + std::to_string(std::hash<std::string>{}(x.value));
    else d += " XATTR-ERROR";
    out[path] = d;
    if (in->is_dir() && depth < 64 && seen_dirs.insert(ino).second) {
      auto ents = v.read_dir(*in);
      if (!ents) {
        out[path + "/"] = "DIR-ERROR " + ents.error().to_string();
        return;
      }
      for (const auto& e : *ents)
        if (e.name != "." && e.name != "..") visit(e.ino, path + "/" + e.name, depth + 1);
    }
  };
  visit(v.superblock().root_ino.get(), "", 0);
  return out;
}

/// An in-memory image made by our mkfs.
inline std::unique_ptr<BlockDevice> our_mkfs(std::uint64_t bytes, std::uint32_t features, std::uint32_t segs_per_sec = 1,
                                             bool large_nat_bitmap = false) {
  auto dev = make_memory_device(bytes);
  MkfsTarget t{dev.get(), "meta"};
  MkfsOptions o;
  o.features = features;
  o.segs_per_sec = segs_per_sec;
  o.large_nat_bitmap = large_nat_bitmap;
  if (features & feature::casefold) o.encoding = kEncodingUtf8_12_1;
  o.timestamp = 1700000000;
  o.uuid = std::array<std::uint8_t, 16>{9, 8, 7, 6, 5, 4, 3, 2, 1, 0, 1, 2, 3, 4, 5, 6};
  auto r = format_volume(std::span<const MkfsTarget>(&t, 1), o);
  if (!r) {
    ADD_FAILURE() << "mkfs: " << r.error().to_string();
    return nullptr;
  }
  return dev;
}

/// The path our_mkfs_devices() names device `i` of a volume by in
/// the superblock: a host path (below 64 bytes) where fsck.f2fs finds it
/// when a test saves the device there (writertest::fsck_f2fs_clean()).
inline std::string extra_device_path(std::size_t i) {
  static const std::string tag = std::to_string(std::random_device{}() % 1000000000u);  // one per process
  return (fs::temp_directory_path() / ("f2fscore-md" + tag + "-" + std::to_string(i) + ".img")).string();
}

/// An in-memory multi-device volume made by our mkfs (as mkfs.f2fs -c):
/// device 0 of `bytes[0]` bytes, then one device per further size, each
/// named extra_device_path(i) in the superblock; returned as one MultiDevice.
inline std::unique_ptr<BlockDevice> our_mkfs_devices(std::span<const std::uint64_t> bytes, std::uint32_t features) {
  std::vector<std::unique_ptr<BlockDevice>> devs;
  std::vector<MkfsTarget> targets;
  for (std::size_t i = 0; i < bytes.size(); ++i) {
    devs.push_back(make_memory_device(bytes[i], 512, extra_device_path(i)));
    targets.push_back({devs.back().get(), extra_device_path(i)});
  }
  MkfsOptions o;
  o.features = features;
  if (features & feature::casefold) o.encoding = kEncodingUtf8_12_1;
  o.timestamp = 1700000000;
  o.uuid = std::array<std::uint8_t, 16>{9, 8, 7, 6, 5, 4, 3, 2, 1, 0, 1, 2, 3, 4, 5, 6};
  auto r = format_volume(targets, o);
  if (!r) {
    ADD_FAILURE() << "mkfs: " << r.error().to_string();
    return nullptr;
  }
  auto sb_dev = open_volume_devices(std::move(devs[0]), [&](const std::string&, std::size_t i) -> Result<std::unique_ptr<BlockDevice>> {
    return std::move(devs[i]);
  });
  if (!sb_dev) {
    ADD_FAILURE() << "open_volume_devices: " << sb_dev.error().to_string();
    return nullptr;
  }
  return std::move(*sb_dev);
}

inline constexpr std::uint32_t kRichFeatures = feature::extra_attr | feature::inode_checksum |
                                               feature::flexible_inline_xattr | feature::sb_checksum |
                                               feature::lost_found | feature::inode_crtime;

/// A rich image (support/rich_image.hpp) with nodes in a segment of their own.
inline std::unique_ptr<BlockDevice> rich(std::uint32_t features, std::uint16_t encoding = 0) {
  f2fstest::RichImageOptions o;
  o.features = features;
  o.encoding = encoding;
  o.node_segment = true;
  auto r = f2fstest::build_rich_image(o);
  if (!r.error.empty()) {
    ADD_FAILURE() << r.error;
    return nullptr;
  }
  return r.img.to_device();
}

/// A fixture of tests/data (zstd-compressed), or nullptr when zstd is missing.
inline std::unique_ptr<BlockDevice> fixture(const std::string& name) {
  auto p = f2fstest::unzstd(f2fstest::data_dir() / name);
  if (!p) return nullptr;
  auto dev = f2fstest::load_image(*p);
  std::error_code ec;
  fs::remove(*p, ec);
  return dev;
}

/// Writes a device's contents to a sparse file.
inline bool save(BlockDevice& dev, const fs::path& path) {
  auto img = f2fstest::SparseImage::capture(dev);
  std::ofstream out(path, std::ios::binary | std::ios::trunc);
  if (!out) return false;
  for (const auto& [blk, data] : img.blocks) {
    out.seekp(static_cast<std::streamoff>(blk * kBlockSize));
    out.write(reinterpret_cast<const char*>(data.data()), kBlockSize);
  }
  out.close();
  fs::resize_file(path, img.size_bytes);
  return true;
}

/// A copy of a device (memory). A multi-device volume is copied device by
/// device, into a MultiDevice again.
inline std::unique_ptr<BlockDevice> clone(BlockDevice& dev) {
  if (auto* md = dynamic_cast<MultiDevice*>(&dev)) {
    std::vector<std::unique_ptr<BlockDevice>> members;
    std::vector<DeviceRange> ranges;
    for (std::size_t i = 0; i < md->members(); ++i) {
      members.push_back(f2fstest::SparseImage::capture(md->member(i)).to_device());
      ranges.push_back(md->range(i));
    }
    auto c = MultiDevice::make(std::move(members), std::move(ranges));
    if (!c) {
      ADD_FAILURE() << c.error().to_string();
      return nullptr;
    }
    return std::move(*c);
  }
  return f2fstest::SparseImage::capture(dev).to_device();
}

/// Patches the current checkpoint pack's header and closing block (CRCs
/// resealed) in an image.
inline void patch_current_cp(f2fstest::SparseImage& img, const std::function<void(Checkpoint&)>& f) {
  auto dev = img.to_device();
  auto v = Volume::open(*dev);
  if (!v) {
    ADD_FAILURE() << v.error().to_string();
    return;
  }
  const std::uint64_t head = (*v)->superblock().cp_blkaddr.get() +
                             static_cast<std::uint64_t>((*v)->open_report().checkpoint_pack) * kDefaultBlocksPerSeg;
  const std::uint64_t tail = head + (*v)->checkpoint().cp_pack_total_block_count.get() - 1;
  for (std::uint64_t blk : {head, tail}) {
    f(*img.view<Checkpoint>(blk));
    seal_checkpoint(img.at(blk));
  }
}

/// An image of our mkfs (2 blocks in the hot data log) whose warm and cold
/// data logs claim `blkoff` blocks written each (none valid). A compact
/// summary holds 439 entries in its first block and 584 in a second
/// (f2fs_npages_for_summary_flush()): 500 each need 2 compact blocks, 511
/// each (1024 entries) 3 normal summary blocks.
inline std::unique_ptr<BlockDevice> long_data_logs(std::uint16_t blkoff) {
  auto dev = our_mkfs(64ull << 20, feature::extra_attr | feature::lost_found);
  if (!dev) return nullptr;
  auto img = f2fstest::SparseImage::capture(*dev);
  patch_current_cp(img, [blkoff](Checkpoint& cp) {
    cp.cur_data_blkoff[1].set(blkoff);
    cp.cur_data_blkoff[2].set(blkoff);
  });
  return img.to_device();
}

struct IdentityResult {
  RebuildStats stats;
  RebuildStats second;  ///< a second rebuild right after
  std::uint64_t old_ver = 0;
  int old_pack = 0;
};

/// plan_from_volume + rebuild on `dev`, then checks: the other pack is the
/// new one with checkpoint_ver + 1, the tree reads the same as before, and
/// `before` (when given) is what the tree read before.
inline void rebuild_and_check(BlockDevice& dev, IdentityResult* res = nullptr,
                              const std::map<std::string, std::string>* before = nullptr,
                              const std::function<void(RebuildPlan&)>& edit = {}) {
  std::map<std::string, std::string> tree;
  std::uint64_t old_ver = 0;
  int old_pack = 0;
  RebuildStats st;
  {
    auto vol = Volume::open(dev);
    ASSERT_OK(vol);
    tree = before ? *before : tree_digest(**vol);
    old_ver = (*vol)->open_report().checkpoint_ver;
    old_pack = (*vol)->open_report().checkpoint_pack;
    auto plan = meta::plan_from_volume(**vol);
    ASSERT_OK(plan);
    if (edit) edit(*plan);
    auto r = meta::rebuild(dev, **vol, *plan);
    ASSERT_OK(r);
    st = *r;
    EXPECT_EQ(r->checkpoint_ver, old_ver + 1);
  }
  auto vol = Volume::open(dev);
  ASSERT_OK(vol);
  EXPECT_EQ((*vol)->open_report().checkpoint_pack, 1 - old_pack);
  EXPECT_EQ((*vol)->open_report().checkpoint_ver, old_ver + 1);
  for (const auto& w : (*vol)->open_report().warnings) EXPECT_EQ(w.find("checkpoint"), std::string::npos) << w;
  const auto after = tree_digest(**vol);
  EXPECT_EQ(after, tree);
  EXPECT_GT(after.size(), 0u);
  if ((*vol)->checkpoint().ckpt_flags.get() & cp_flag::nat_bits) EXPECT_TRUE((*vol)->nat_bits_valid());
  if (res) {
    res->stats = st;
    res->old_ver = old_ver;
    res->old_pack = old_pack;
  }
}

}  // namespace metatest
