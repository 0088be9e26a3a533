// Private state of a Volume, shared by the reader's source files.
#pragma once

#include <vector>

#include "disk/summaries.hpp"
#include "f2fscore/volume.hpp"

namespace f2fscore {

struct Volume::Impl {
  BlockDevice* dev = nullptr;
  VolumeOpenOptions opts;
  OpenReport report;
  disk::SuperBlock sb{};
  disk::Checkpoint cp{};
  std::vector<std::uint8_t> cp_blocks;  ///< CP block + cp_payload blocks
  std::uint64_t cp_start = 0;           ///< first block of the chosen pack
  std::uint32_t chksum_seed = 0;
  disk::CursegSummaries sums;           ///< active logs' summaries and the journals
  bool nat_bits_ok = false;
  std::vector<std::uint8_t> nat_bits;  ///< header + full + empty bitmaps

  disk::Geometry geo;                   ///< from sb
  disk::VersionBitmaps bitmaps;         ///< views into cp_blocks
  Status read(std::uint64_t blkaddr, void* out, std::uint32_t nblocks = 1);
  /// The NAT entry of `nid` (journal first) and the block it came from.
  Result<disk::NatEntry> nat_lookup(disk::nid_t nid, std::uint64_t* from_blk);
};

/// The largest i_size Linux can produce (s_maxbytes: DEF_ADDRS_PER_INODE
/// slots, two direct, two indirect and one double-indirect node, bytes).
inline constexpr std::uint64_t kMaxFileBytes =
    (static_cast<std::uint64_t>(disk::kDefAddrsPerInode) + 2ull * disk::kDefAddrsPerBlock +
     2ull * disk::kDefAddrsPerBlock * disk::kNidsPerBlock +
     static_cast<std::uint64_t>(disk::kDefAddrsPerBlock) * disk::kNidsPerBlock * disk::kNidsPerBlock) *
    disk::kBlockSize;

/// Maps an inode's file blocks through i_addr and its node tree
/// (get_node_path() in fs/f2fs/node.c), keeping the nodes last read. Every
/// node must carry the inode's number and, in its footer, the offset of its
/// place in the tree, so a node cannot stand in for another (a loop in the
/// tree is caught at the first step). reader/file.cpp.
class FileMapper {
 public:
  FileMapper(Volume& v, const InodeInfo& in) : v_(v), in_(in) {}
  /// The address stored for file block `index` (NULL_ADDR for a hole,
  /// NEW_ADDR, COMPRESS_ADDR as stored). With `next`, *next is the next
  /// index that may map elsewhere: past the whole range of a missing node,
  /// so a sparse tree is walked a node at a time.
  Result<disk::block_t> map(std::uint64_t index, std::uint64_t* next = nullptr);
  /// The block holding the address map() returned last (the inode or a
  /// direct node), for messages.
  std::uint64_t holder() const { return holder_; }

 private:
  Result<const disk::Node*> node(disk::nid_t nid, std::uint32_t ofs, int slot);
  struct Slot {
    disk::nid_t nid = 0;
    std::uint32_t ofs = 0;
    std::uint64_t blk = 0;
    disk::Node node{};
  };
  Volume& v_;
  const InodeInfo& in_;
  Slot cache_[3];  // one per level below the inode
  std::uint64_t holder_ = 0;
};

/// "<what> at block <addr>" style context for messages.
std::string at_block(std::uint64_t blkaddr);

/// The compressed cluster's format (struct compress_data in fs/f2fs/f2fs.h),
/// shared by the reader's decoder and the writer's encoder.
namespace compr {
inline constexpr std::size_t kHeaderSize = 24;              ///< COMPRESS_HEADER_SIZE: clen, chksum, reserved[4]
inline constexpr std::uint32_t kCrcSeed = 0xF2F52010u;      ///< F2FS_SUPER_MAGIC, the seed of f2fs_crc32()
inline constexpr const char* kNames[] = {"lzo", "lz4", "zstd", "lzo-rle"};  ///< by i_compress_algorithm
}  // namespace compr

/// Decompresses one cluster (reader/compress.cpp). `algorithm` as i_compress_algorithm.
Status decompress_cluster(std::uint8_t algorithm, std::span<const std::uint8_t> in, std::span<std::uint8_t> out,
                          std::size_t* produced);

}  // namespace f2fscore
