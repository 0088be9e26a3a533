// A volume image held as its non-zero 4 KiB blocks, for tests and the fuzz
// target that damage images: capture a device, patch blocks, re-seal the
// checksums a patch broke (so damage reaches the checks behind them), and
// turn it back into a memory device. Header-only: the libFuzzer target
// (tests/fuzz) includes it without GoogleTest.
#pragma once

#include <algorithm>
#include <array>
#include <cstdint>
#include <cstring>
#include <map>
#include <memory>
#include <vector>

#include "f2fscore/checksum.hpp"
#include "f2fscore/device.hpp"
#include "f2fscore/disk/checkpoint.hpp"
#include "f2fscore/disk/node.hpp"
#include "f2fscore/disk/superblock.hpp"

namespace f2fstest {

using Block = std::array<std::uint8_t, f2fscore::disk::kBlockSize>;

struct SparseImage {
  std::uint64_t size_bytes = 0;
  std::map<std::uint64_t, Block> blocks;  ///< block number -> contents (absent: zeroes)

  std::uint64_t block_count() const { return size_bytes / f2fscore::disk::kBlockSize; }

  /// The block's bytes, or nullptr for a zero block.
  const std::uint8_t* get(std::uint64_t blk) const {
    auto it = blocks.find(blk);
    return it == blocks.end() ? nullptr : it->second.data();
  }
  /// The block's bytes for writing (a zero block is created).
  std::uint8_t* at(std::uint64_t blk) {
    auto it = blocks.find(blk);
    if (it == blocks.end()) it = blocks.emplace(blk, Block{}).first;
    return it->second.data();
  }
  template <typename T>
  T* view(std::uint64_t blk) {
    return reinterpret_cast<T*>(at(blk));
  }

  /// Reads every block of `dev`, keeping the non-zero ones.
  static SparseImage capture(f2fscore::BlockDevice& dev) {
    SparseImage img;
    img.size_bytes = dev.info().size_bytes / f2fscore::disk::kBlockSize * f2fscore::disk::kBlockSize;
    std::vector<std::uint8_t> buf(1 << 20);
    for (std::uint64_t off = 0; off < img.size_bytes; off += buf.size()) {
      const std::size_t n = static_cast<std::size_t>(std::min<std::uint64_t>(buf.size(), img.size_bytes - off));
      if (!f2fscore::read_at(dev, off, std::span<std::uint8_t>(buf.data(), n))) continue;
      for (std::size_t b = 0; b < n; b += f2fscore::disk::kBlockSize) {
        const std::uint8_t* p = buf.data() + b;
        if (std::all_of(p, p + f2fscore::disk::kBlockSize, [](std::uint8_t c) { return c == 0; })) continue;
        std::memcpy(img.at((off + b) / f2fscore::disk::kBlockSize), p, f2fscore::disk::kBlockSize);
      }
    }
    return img;
  }

  /// A memory device holding the image; `truncate_to` (bytes, rounded down
  /// to 512) cuts it short.
  std::unique_ptr<f2fscore::BlockDevice> to_device(std::uint64_t truncate_to = ~0ull) const {
    const std::uint64_t size = std::min(size_bytes, truncate_to) / 512 * 512;
    auto dev = f2fscore::make_memory_device(size, 512, "damaged image");
    for (const auto& [blk, data] : blocks) {
      const std::uint64_t off = blk * f2fscore::disk::kBlockSize;
      if (off >= size) continue;
      const std::size_t n = static_cast<std::size_t>(std::min<std::uint64_t>(data.size(), size - off));
      (void)f2fscore::write_at(*dev, off, std::span<const std::uint8_t>(data.data(), n));
    }
    return dev;
  }
};

/// Re-seals the checksums of block `blk` after it was patched, as a writer
/// that meant the new contents would: the superblock CRC (blocks 0 and 1),
/// a checkpoint block's CRC (any block of the CP area whose checksum_offset
/// is plausible), an inode's checksum (a node block whose footer says it is
/// an inode with the extra attribute area). Uses the superblock of copy 0,
/// else copy 1, for the geometry and the checksum seed.
inline void reseal_block(SparseImage& img, std::uint64_t blk) {
  using namespace f2fscore;
  using namespace f2fscore::disk;
  std::uint8_t* p = img.blocks.count(blk) ? img.at(blk) : nullptr;
  if (p == nullptr) return;
  if (blk < 2) {
    auto* sb = reinterpret_cast<SuperBlock*>(p + kSuperOffset);
    if (sb->magic.get() == kSuperMagic && sb->checksum_offset.get() == kSbChecksumOffset)
      sb->crc.set(superblock_checksum(*sb));
    return;
  }
  const SuperBlock* sb = nullptr;
  for (std::uint64_t c = 0; c < 2 && sb == nullptr; ++c) {
    const std::uint8_t* s = img.get(c);
    if (s && load_le32(s, kSuperOffset) == kSuperMagic) sb = reinterpret_cast<const SuperBlock*>(s + kSuperOffset);
  }
  if (sb == nullptr) return;
  const std::uint64_t cp0 = sb->cp_blkaddr.get();
  if (blk >= cp0 && blk < cp0 + 2ull * kDefaultBlocksPerSeg) {
    const std::uint32_t ofs = load_le32(p, offsetof(Checkpoint, checksum_offset));
    if (ofs >= kCpMinChecksumOffset && ofs <= kCpChecksumOffset && ofs % 4 == 0) seal_checkpoint(p);
    return;
  }
  if (blk < sb->main_blkaddr.get()) return;
  const auto* n = reinterpret_cast<const Node*>(p);
  if ((sb->feature.get() & feature::inode_checksum) && n->footer.nid.get() == n->footer.ino.get() &&
      (n->i.i_inline & inline_flag::extra_attr) && n->i.extra.i_extra_isize.get() >= 12 &&
      n->i.extra.i_extra_isize.get() <= sizeof(InodeExtra)) {
    const std::uint32_t seed = inode_checksum_seed(sb->uuid);
    reinterpret_cast<Node*>(p)->i.extra.i_inode_checksum.set(inode_checksum(seed, p));
  }
}

}  // namespace f2fstest
