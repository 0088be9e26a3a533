// The smallest volume holding a given number of blocks and nodes
// (smallest_fitting_size() in mkfs.hpp): plan_mkfs() of candidate sizes on
// a device that only reports its size.
#include <algorithm>
#include <optional>

#include "f2fscore/disk/geometry.hpp"
#include "f2fscore/mkfs.hpp"

namespace f2fscore {

namespace {

constexpr std::uint64_t kSegBytes = 2ull << 20;
constexpr std::uint64_t kMaxBytes = 16ull << 40;
constexpr std::uint64_t kReservedNids = 3;  // nid 0, the node and meta inodes (F2FS_RESERVED_NODE_NUM)

struct Try {
  bool planned = false;  // plan_mkfs() accepted the size
  bool fits = false;
  FitPlan fit;
};

}  // namespace

Result<FitPlan> smallest_fitting_size(std::uint64_t blocks, std::uint64_t nids, const MkfsOptions& opts,
                                      std::uint32_t sector_size) {
  MkfsOptions o = opts;
  o.wanted_sectors = 0;
  const std::uint64_t unit = kSegBytes * std::max<std::uint32_t>(opts.segs_per_sec, 1);
  Error last{Errc::no_space, 0, Error::kNoOffset, "no size up to 16 TiB holds the content"};
  auto attempt = [&](std::uint64_t units) -> Result<Try> {
    Try t;
    const std::uint64_t bytes = units * unit;
    // A memory device is sparse: only its size is asked.
    auto dev = make_memory_device(bytes, sector_size, "size-to-fit");
    MkfsTarget target{dev.get(), "size-to-fit"};
    auto p = plan_mkfs(std::span<const MkfsTarget>(&target, 1), o);
    if (!p) {
      if (p.error().code != Errc::no_space) return make_error(p.error());
      last = p.error();
      return t;
    }
    t.planned = true;
    t.fit.bytes = bytes;
    const std::uint64_t user = p->cp.user_block_count.get(), valid = p->cp.valid_block_count.get();
    const std::uint64_t max_nid = disk::Geometry(p->sb).max_nid();
    const std::uint64_t used_nids = kReservedNids + p->cp.valid_node_count.get();
    t.fit.free_blocks = user > valid ? user - valid : 0;
    t.fit.free_nids = max_nid > used_nids ? max_nid - used_nids : 0;
    t.fit.plan = std::move(*p);
    t.fits = t.fit.free_blocks >= blocks && t.fit.free_nids >= nids;
    return t;
  };
  const std::uint64_t max_units = kMaxBytes / unit;
  // Upward, doubling from the content's own size.
  std::uint64_t lo = 0;  // a count of units that does not fit (0: none tried)
  std::uint64_t hi = std::max<std::uint64_t>((blocks * 4096 + unit - 1) / unit, 1);
  std::optional<Try> found;
  while (true) {
    auto t = attempt(hi);
    if (!t) return make_error(t.error());
    if (t->fits) {
      found = std::move(*t);
      break;
    }
    lo = hi;
    if (hi >= max_units) return make_error(last);
    hi = std::min(hi * 2, max_units);
  }
  // Bisect (lo, hi].
  while (hi - lo > 1) {
    const std::uint64_t mid = lo + (hi - lo) / 2;
    auto t = attempt(mid);
    if (!t) return make_error(t.error());
    if (t->fits) {
      hi = mid;
      found = std::move(*t);
    } else {
      lo = mid;
    }
  }
  // Below the bisected size: a smaller one can fit where the
  // overprovision ratio jumps.
  for (std::uint64_t u = hi > 64 ? hi - 64 : 1; u < hi; ++u) {
    auto t = attempt(u);
    if (!t) return make_error(t.error());
    if (t->fits) {
      found = std::move(*t);
      break;
    }
  }
  return std::move(found->fit);
}

}  // namespace f2fscore
