// A minimal, test-only walk of an F2FS image: pick the checkpoint, map
// nids through the NAT (and its journal), and visit every inode and the
// dentries of small directories. Just enough to check checksums and hashes
// against images that mkfs.f2fs and Linux wrote; the library's own reader
// is tested elsewhere.
#pragma once

#include <functional>
#include <map>
#include <string>
#include <vector>

#include "f2fscore/device.hpp"
#include "f2fscore/disk/dentry.hpp"
#include "f2fscore/disk/node.hpp"
#include "f2fscore/disk/superblock.hpp"

namespace f2fstest {

struct WalkedDentry {
  std::uint32_t dir_ino;
  std::string name;
  std::uint32_t hash_code;
  std::uint32_t ino;
  bool hashed_plain;  ///< the directory is neither casefolded nor encrypted
};

struct ImageWalk {
  f2fscore::disk::SuperBlock sb{};
  std::vector<std::uint8_t> cp;  ///< the valid CP block
  std::map<std::uint32_t, std::uint32_t> nat;  ///< nid -> blkaddr (non-zero)
  std::vector<std::pair<std::uint32_t, std::vector<std::uint8_t>>> inodes;  ///< ino, node block
  std::vector<WalkedDentry> dentries;
  std::string error;  ///< non-empty if the walk failed
};

ImageWalk walk_image(f2fscore::BlockDevice& dev);

}  // namespace f2fstest
