// The IPU rules as pure functions (writer_policy.hpp: decide_ipu(),
// need_ssr() at rest, resolve_ipu_options(), ipu_policy parsing), for
// f2fs_should_update_outplace(), f2fs_should_update_inplace() and
// check_inplace_update_policy() in fs/f2fs/data.c (6.1) and f2fs_need_SSR()
// in fs/f2fs/segment.c; docs/ipu.md.
//
// (stats) The public face of the IPU module's rules (wr::ipu_decide() in
// writer_ipu.cpp) for programs and f2fscore-dump ipu, which look at an
// image at rest.
#include "f2fscore/writer_policy.hpp"
#include "writer_internal.hpp"

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
  // One copy of the rules: the IPU module's (writer_ipu.cpp, wr::ipu_decide()).
  if (w.has_old_block && w.other_opu && !w.pinned && !w.direct) return IpuReason::opu_other;
  wr::IpuInputs in;
  in.old_valid = w.has_old_block;
  in.direct = w.direct;
  in.pinned = w.pinned;
  in.dir = w.dir;
  in.quota = w.quota;
  in.opu_write = w.opu_write;
  in.gc = w.gc;
  in.cold = w.cold;
  in.sync = w.sync_io;
  in.fsync = w.fsync;
  in.fdatasync = w.fdatasync;
  in.dirty_pages = w.file_dirty_pages;
  in.need_ssr = ssr_needed;
  in.utilization = s.utilization();
  return wr::ipu_decide(o, in);
}

}  // namespace f2fscore
