#include "f2fscore/disk/node.hpp"

namespace f2fscore::disk {

std::uint16_t extra_isize_for_features(std::uint32_t f) noexcept {
  std::uint32_t end = offsetof(InodeExtra, i_projid);
  if (f & feature::project_quota) end = offsetof(InodeExtra, i_inode_checksum);
  if (f & feature::inode_checksum) end = offsetof(InodeExtra, i_crtime);
  if (f & feature::inode_crtime) end = offsetof(InodeExtra, i_compr_blocks);
  if (f & feature::compression) end = sizeof(InodeExtra);
  return static_cast<std::uint16_t>(end);
}

}  // namespace f2fscore::disk
