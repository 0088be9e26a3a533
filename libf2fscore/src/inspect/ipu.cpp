// (stats) f2fscore-dump ipu: the inputs of the IPU decisions for an image at
// rest, and what the rules (decide_ipu(), writer_policy.hpp) decide now
// (docs/stats.md).
#include <algorithm>
#include <cinttypes>

#include "f2fscore/disk/constants.hpp"
#include "inspect/inspect_internal.hpp"

namespace f2fscore::inspect {

using namespace detail;

namespace {

struct Case {
  const char* key;
  const char* what;
  IpuWrite w;
};

std::vector<Case> cases(const IpuOptions& o) {
  std::vector<Case> c;
  IpuWrite base;
  base.has_old_block = true;
  auto add = [&](const char* key, const char* what, auto&& f) {
    IpuWrite w = base;
    f(w);
    c.push_back({key, what, w});
  };
  add("async_writeback", "rewrite, async writeback (cache full, periodic)", [](IpuWrite& w) { w.sync_io = false; });
  add("sync_writeback", "rewrite, sync writeback (sync, checkpoint)", [](IpuWrite& w) { w.sync_io = true; });
  add("fdatasync", "rewrite, written back by fdatasync", [](IpuWrite& w) { w.sync_io = true, w.fdatasync = true; });
  add("fsync_few", "rewrite, fsync with <= min_fsync_blocks dirty pages", [&](IpuWrite& w) {
    w.sync_io = true, w.fsync = true, w.file_dirty_pages = std::max<std::uint32_t>(1, o.min_fsync_blocks);
  });
  add("fsync_many", "rewrite, fsync with more dirty pages", [&](IpuWrite& w) {
    w.sync_io = true, w.fsync = true, w.file_dirty_pages = std::uint64_t{o.min_fsync_blocks} + 1;
  });
  add("direct", "rewrite, direct write", [](IpuWrite& w) { w.sync_io = true, w.direct = true; });
  add("dir", "directory block", [](IpuWrite& w) { w.sync_io = true, w.dir = true; });
  add("pinned", "block of a pinned file", [](IpuWrite& w) { w.sync_io = true, w.pinned = true; });
  add("cold", "block of a cold file", [](IpuWrite& w) { w.sync_io = true, w.cold = true; });
  add("opu_write", "block of a file being defragmented (FI_OPU_WRITE)", [](IpuWrite& w) {
    w.sync_io = true, w.opu_write = true;
  });
  add("new_block", "first write of a block (hole)", [](IpuWrite& w) { w.sync_io = true, w.has_old_block = false; });
  return c;
}

}  // namespace

Result<Output> render_ipu(Volume& vol, const IpuOptions& asked, bool segments, Format f) {
  auto sr = space_summary(vol);
  if (!sr) return make_error(sr.error());
  const SpaceSummary& ss = *sr;
  SpaceState sp;
  sp.user_blocks = ss.user_block_count;
  sp.valid_blocks = ss.valid_block_count;
  const disk::Geometry& g = vol.geometry();
  sp.segs_per_sec = g.segs_per_sec();
  sp.main_sections = g.main_sections();
  sp.reserved_sections = ss.rsvd_segments / sp.segs_per_sec;
  sp.overprov_sections = ss.overprov_segments / sp.segs_per_sec;
  // Sections by state from the SIT: free (no valid block, no active log),
  // full, dirty (the rest but the active logs').
  const auto& cp = vol.checkpoint();
  std::vector<std::uint32_t> cur;
  for (int t = 0; t < 3; ++t) cur.push_back(cp.cur_data_segno[t].get()), cur.push_back(cp.cur_node_segno[t].get());
  std::vector<std::uint32_t> seg_valid(ss.main_segments, 0);
  std::vector<std::uint8_t> seg_type(ss.main_segments, 0);
  constexpr std::uint32_t kBatch = 64 * disk::kSitEntryPerBlock;
  std::vector<SegmentInfo> batch;
  for (std::uint32_t first = 0; first < ss.main_segments; first += kBatch) {
    F2FSCORE_TRY(vol.segments(first, std::min(kBatch, ss.main_segments - first), batch));
    for (std::uint32_t k = 0; k < batch.size(); ++k) {
      seg_valid[first + k] = batch[k].valid_blocks;
      seg_type[first + k] = batch[k].type;
    }
  }
  std::uint32_t active_sections = 0;
  for (std::uint32_t sec = 0; sec < sp.main_sections; ++sec) {
    bool active = false;
    std::uint64_t valid = 0;
    for (std::uint32_t k = 0; k < sp.segs_per_sec; ++k) {
      const std::uint32_t seg = g.first_seg_of_sec(sec) + k;
      active = active || std::find(cur.begin(), cur.end(), seg) != cur.end();
      valid += seg_valid[seg];
    }
    if (active) ++active_sections;
    else if (valid == 0) ++sp.free_sections;
    else if (valid == g.blocks_per_sec()) ++sp.full_sections;
    else ++sp.dirty_sections;
  }
  const bool defaulted = asked.ipu_policy == IpuOptions::kKernelDefault;
  const IpuOptions o = resolve_ipu_options(asked, ss.main_segments, sp.reserved_sections);
  const bool ssr = need_ssr(sp, o);
  const std::uint32_t util = sp.utilization();

  std::string t;
  Json j;
  appendf(t, "IPU inputs (the image at rest: no dirty pages)\n");
  appendf(t, "  utilization:       %u%% (%" PRIu64 " valid of %" PRIu64 " user blocks)\n", util, sp.valid_blocks,
          sp.user_blocks);
  appendf(t, "  sections:          %u main: %u free, %u dirty, %u full, %u of active logs (%u segment%s each)\n",
          sp.main_sections, sp.free_sections, sp.dirty_sections, sp.full_sections, active_sections, sp.segs_per_sec,
          sp.segs_per_sec == 1 ? "" : "s");
  appendf(t, "  reserved:          %u sections, overprovision %u sections\n", sp.reserved_sections, sp.overprov_sections);
  appendf(t, "  need_SSR:          %s (%u free sections %s min_ssr_sections %u + reserved %u)\n", ssr ? "yes" : "no",
          sp.free_sections, ssr ? "<=" : ">", o.min_ssr_sections, sp.reserved_sections);
  appendf(t, "  ipu_policy:        %s%s\n", ipu_policy_string(o.ipu_policy).c_str(),
          defaulted ? (ss.main_segments <= 16u * 512u ? " (the kernel's default: main area <= 16 GiB)"
                                                      : " (the kernel's default: main area > 16 GiB)")
                    : "");
  appendf(t, "  tunables:          min_ipu_util %u, min_fsync_blocks %u, fdatasync in place %s\n", o.min_ipu_util,
          o.min_fsync_blocks, o.fdatasync_in_place ? "on" : "off");
  j["utilization"] = util;
  j["valid_blocks"] = sp.valid_blocks;
  j["user_blocks"] = sp.user_blocks;
  j["segs_per_sec"] = sp.segs_per_sec;
  j["main_sections"] = sp.main_sections;
  j["free_sections"] = sp.free_sections;
  j["dirty_sections"] = sp.dirty_sections;
  j["full_sections"] = sp.full_sections;
  j["active_sections"] = active_sections;
  j["reserved_sections"] = sp.reserved_sections;
  j["overprov_sections"] = sp.overprov_sections;
  j["need_ssr"] = ssr;
  j["ipu_policy"] = o.ipu_policy;
  j["ipu_policy_default"] = defaulted;
  j["min_ipu_util"] = o.min_ipu_util;
  j["min_fsync_blocks"] = o.min_fsync_blocks;
  j["min_ssr_sections"] = o.min_ssr_sections;
  j["fdatasync_in_place"] = o.fdatasync_in_place;

  // Valid blocks per segment, by log type.
  appendf(t, "\nValid blocks per segment, by log type (segments holding valid blocks)\n");
  appendf(t, "  %-10s %8s %6s %6s %12s %5s %7s %5s %10s\n", "log", "segments", "full", "dirty", "valid_blocks", "min",
          "avg", "max", "current");
  Json logs = Json::object();
  for (std::uint8_t ty = 0; ty < 6; ++ty) {
    std::uint32_t n = 0, full = 0, dirty = 0, mn = ~0u, mx = 0;
    std::uint64_t sum = 0;
    for (std::uint32_t s = 0; s < ss.main_segments; ++s) {
      if (seg_type[s] != ty || seg_valid[s] == 0) continue;
      ++n;
      sum += seg_valid[s];
      mn = std::min(mn, seg_valid[s]);
      mx = std::max(mx, seg_valid[s]);
      const bool is_cur = std::find(cur.begin(), cur.end(), s) != cur.end();
      if (seg_valid[s] == ss.blocks_per_segment) ++full;
      else if (!is_cur) ++dirty;
    }
    const std::uint32_t cur_seg = ty < 3 ? cp.cur_data_segno[ty].get() : cp.cur_node_segno[ty - 3].get();
    appendf(t, "  %-10s %8u %6u %6u %12" PRIu64 " %5u %7.1f %5u %10u\n", log_type_name(ty).c_str(), n, full, dirty, sum,
            n ? mn : 0, n ? static_cast<double>(sum) / n : 0.0, mx, cur_seg);
    logs[log_type_name(ty)] = {{"segments", n}, {"full", full},        {"dirty", dirty},
                               {"valid_blocks", sum}, {"min", n ? mn : 0}, {"max", mx},
                               {"current_segno", cur_seg}};
  }
  j["logs"] = logs;
  if (segments) {
    appendf(t, "\n  %8s %-10s %6s\n", "segno", "log", "valid");
    Json list = Json::array();
    for (std::uint32_t s = 0; s < ss.main_segments; ++s) {
      const bool is_cur = std::find(cur.begin(), cur.end(), s) != cur.end();
      if (seg_valid[s] == 0 && !is_cur) continue;
      appendf(t, "  %8u %-10s %6u%s\n", s, log_type_name(seg_type[s]).c_str(), seg_valid[s], is_cur ? "  (active log)" : "");
      list.push_back({{"segno", s}, {"type", log_type_name(seg_type[s])}, {"valid_blocks", seg_valid[s]}, {"active", is_cur}});
    }
    j["segments"] = list;
  }

  // Each rule of check_inplace_update_policy(), on the inputs above.
  appendf(t, "\nRules of ipu_policy (check_inplace_update_policy(), in order) on these inputs\n");
  struct Rule {
    const char* name;
    std::uint32_t bit;
    std::string cond;
    const char* now;
  };
  const bool util_ok = util > o.min_ipu_util;
  const std::string u = std::to_string(util), m = std::to_string(o.min_ipu_util);
  const Rule rules[] = {
      {"HONOR_OPU_WRITE", ipu_bit::honor_opu_write, "file being moved (FI_OPU_WRITE): out of place", "those files"},
      {"FORCE", ipu_bit::force, "always", "every rewrite"},
      {"SSR", ipu_bit::ssr, std::string("need_SSR: ") + (ssr ? "yes" : "no"), ssr ? "every rewrite" : "none"},
      {"UTIL", ipu_bit::util, "utilization " + u + " > min_ipu_util " + m + ": " + (util_ok ? "yes" : "no"),
       util_ok ? "every rewrite" : "none"},
      {"SSR_UTIL", ipu_bit::ssr_util,
       std::string("need_SSR and utilization > min_ipu_util: ") + (ssr && util_ok ? "yes" : "no"),
       ssr && util_ok ? "every rewrite" : "none"},
      {"ASYNC", ipu_bit::async, "async writeback of a block not under writeback", "async writebacks"},
      {"FSYNC", ipu_bit::fsync,
       "fdatasync, or fsync with <= " + std::to_string(o.min_fsync_blocks) + " dirty pages (FI_NEED_IPU)",
       "those writebacks"},
  };
  appendf(t, "  %-16s %-5s %-4s %-70s %s\n", "rule", "bit", "set", "condition now", "writes in place");
  Json jr = Json::array();
  for (const auto& r : rules) {
    const bool set = o.ipu_policy & r.bit;
    appendf(t, "  %-16s 0x%02x  %-4s %-70s %s\n", r.name, r.bit, set ? "yes" : "-", r.cond.c_str(),
            set ? r.now : "(bit not set)");
    jr.push_back({{"rule", r.name}, {"bit", r.bit}, {"set", set}, {"condition", r.cond}, {"applies_to", set ? r.now : ""}});
  }
  j["rules"] = jr;

  // What the whole policy decides for typical writes (decide_ipu()).
  appendf(t, "\nDecisions now (decide_ipu() with the policy above)\n");
  Json jd = Json::array();
  for (const auto& c : cases(o)) {
    const IpuReason r = decide_ipu(o, sp, ssr, c.w);
    appendf(t, "  %-52s %-12s (%s)\n", c.what, is_in_place(r) ? "in place" : "out of place", to_string(r));
    jd.push_back({{"write", c.key}, {"in_place", is_in_place(r)}, {"reason", to_string(r)}});
  }
  j["decisions"] = jd;
  Output out;
  out.text = f == Format::json ? json_text(j) : std::move(t);
  return out;
}

}  // namespace f2fscore::inspect
