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

// need_ssr() and decide_ipu(): writer/ipu.cpp (one copy of the rules).

}  // namespace f2fscore
