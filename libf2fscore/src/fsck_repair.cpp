// The checker's repairs (see docs/fsck.md): in-place inode fixes written
// by the checker, global metadata through meta::rebuild().
#include "fsck_internal.hpp"

namespace f2fscore::fsck {

void Checker::repair() {}

}  // namespace f2fscore::fsck
