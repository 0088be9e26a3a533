// MountOptions::test_profile(): deterministic mount options for tests.
#include "f2fscore/writer.hpp"

namespace f2fscore {

MountOptions MountOptions::test_profile() noexcept {
  MountOptions o;
  o.fixed_time = kTestProfileTime;
  o.checkpoint_interval_s = 0;
  o.ipu.ipu_policy = ipu_bit::fsync;
  o.gc.background = false;
  return o;
}

}  // namespace f2fscore
