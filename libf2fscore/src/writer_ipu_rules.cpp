// The IPU rules as a pure function (writer_policy.hpp: need_ssr(),
// decide_ipu()), in the kernel's order of precedence, from
// f2fs_should_update_outplace(), f2fs_should_update_inplace() and
// check_inplace_update_policy() in fs/f2fs/data.c (6.1) and need_SSR() in
// fs/f2fs/segment.h; docs/ipu.md.
//
// Provisional (written by the stats module so f2fscore-dump ipu can show
// the decisions of an image at rest); the IPU module owns these rules and
// place_data() should decide with decide_ipu() so there is one copy.
#include "f2fscore/writer_policy.hpp"

#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <utility>

namespace f2fscore {

namespace {
std::string fmt_policy(std::uint32_t v, const std::string& names) {
  char b[32];
  std::snprintf(b, sizeof b, "0x%x", v);
  return std::string(b) + " (" + (names.empty() ? "none" : names) + ")";
}
}  // namespace

namespace {
constexpr std::pair<const char*, std::uint32_t> kIpuBits[] = {
    {"force", ipu_bit::force}, {"ssr", ipu_bit::ssr},         {"util", ipu_bit::util},
    {"ssr_util", ipu_bit::ssr_util}, {"fsync", ipu_bit::fsync}, {"async", ipu_bit::async},
    {"nocache", ipu_bit::nocache}, {"honor_opu_write", ipu_bit::honor_opu_write}};
}  // namespace

Result<std::uint32_t> parse_ipu_policy(std::string_view s) {
  if (s == "default") return IpuOptions::kKernelDefault;
  if (!s.empty() && s[0] >= '0' && s[0] <= '9') {
    const std::string t(s);
    char* end = nullptr;
    errno = 0;
    const unsigned long long v = std::strtoull(t.c_str(), &end, 0);
    if (errno != 0 || end == t.c_str() || *end != '\0')
      return make_error(Errc::invalid_argument, "bad ipu_policy '" + t + "'");
    if (v > ipu_bit::all)
      return make_error(Errc::invalid_argument, "ipu_policy " + t + " has bits outside 0xff (F2FS_IPU_MAX is 8)");
    return static_cast<std::uint32_t>(v);
  }
  std::uint32_t v = 0;
  std::size_t i = 0;
  while (i <= s.size()) {
    std::size_t j = s.find_first_of("|,", i);
    if (j == std::string_view::npos) j = s.size();
    const std::string_view name = s.substr(i, j - i);
    bool found = false;
    for (const auto& [n, b] : kIpuBits)
      if (name == n) v |= b, found = true;
    if (!found)
      return make_error(Errc::invalid_argument,
                        "unknown ipu_policy bit '" + std::string(name) +
                            "' (force, ssr, util, ssr_util, fsync, async, nocache, honor_opu_write, or a number)");
    i = j + 1;
  }
  return v;
}

std::string ipu_policy_string(std::uint32_t policy) {
  if (policy == IpuOptions::kKernelDefault) return "default";
  std::string names;
  for (const auto& [n, b] : kIpuBits)
    if (policy & b) names += (names.empty() ? "" : "|") + std::string(n);
  return fmt_policy(policy, names);
}


IpuOptions resolve_ipu_options(IpuOptions o, std::uint32_t main_segments, std::uint32_t reserved_sections) noexcept {
  if (o.ipu_policy == IpuOptions::kKernelDefault)
    o.ipu_policy = main_segments <= 16u * 512u ? (ipu_bit::force | ipu_bit::honor_opu_write) : ipu_bit::fsync;
  if (o.min_ssr_sections == IpuOptions::kKernelDefault) o.min_ssr_sections = reserved_sections;
  return o;
}

bool need_ssr(const SpaceState& s, const IpuOptions& o) noexcept {
  // No dirty node, dentry or imeta pages at rest: those terms are 0.
  const std::uint64_t min_ssr = o.min_ssr_sections == IpuOptions::kKernelDefault ? s.reserved_sections
                                                                                 : o.min_ssr_sections;
  return s.free_sections <= min_ssr + s.reserved_sections;
}

IpuReason decide_ipu(const IpuOptions& o, const SpaceState& s, bool ssr_needed, const IpuWrite& w) noexcept {
  if (!w.has_old_block) return IpuReason::opu_new_block;  // nothing to update in place
  if (w.direct) return IpuReason::ipu_force;              // f2fs_map_blocks() keeps written blocks
  if (w.gc) return IpuReason::opu_gc;
  // f2fs_should_update_outplace()
  if (w.dir) return IpuReason::opu_dir;
  if (w.quota) return IpuReason::opu_quota;
  if (w.other_opu) return IpuReason::opu_other;
  // f2fs_should_update_inplace(): pinned files, and cold files not being
  // moved, are written in place.
  if (w.pinned) return IpuReason::ipu_pinned;
  if (w.cold && !w.opu_write) return IpuReason::ipu_force;
  // check_inplace_update_policy(): F2FS_IPU_HONOR_OPU_WRITE comes first.
  if (w.opu_write && (o.ipu_policy & ipu_bit::honor_opu_write)) return IpuReason::opu_honor_opu_write;
  // check_inplace_update_policy()
  const std::uint32_t p = o.ipu_policy;
  const std::uint32_t util = s.utilization();
  if (p & ipu_bit::force) return IpuReason::ipu_force;
  if ((p & ipu_bit::ssr) && ssr_needed) return IpuReason::ipu_ssr;
  if ((p & ipu_bit::util) && util > o.min_ipu_util) return IpuReason::ipu_util;
  if ((p & ipu_bit::ssr_util) && ssr_needed && util > o.min_ipu_util) return IpuReason::ipu_ssr_util;
  if ((p & ipu_bit::async) && !w.sync_io) return IpuReason::ipu_async;
  // FI_NEED_IPU: fdatasync, or fsync of at most min_fsync_blocks dirty pages
  // (f2fs_do_sync_file() in fs/f2fs/file.c). The fdatasync_in_place option
  // counts only the writes no rule of the policy put in place.
  const bool need_ipu = w.fdatasync || (w.fsync && w.file_dirty_pages <= o.min_fsync_blocks);
  if ((p & ipu_bit::fsync) && need_ipu) return IpuReason::ipu_fsync;
  if (o.fdatasync_in_place && need_ipu) return IpuReason::ipu_fdatasync_option;
  return IpuReason::opu_policy;
}

}  // namespace f2fscore
