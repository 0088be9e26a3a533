// The JSON of a f2fscore::populate() report, shared by f2fscore-sload (at
// the top level) and f2fscore-mkfs --populate (under "populated"). Header
// only: the tools that include it link f2fscore::host.
#pragma once

#include "f2fscore/populate.hpp"
#include "f2fscore/tools/common.hpp"

namespace f2fscore::tools {

// Counts as numbers; "problems": one object per entry not copied, with its
// host path ("source"), its path in the image ("path"), the error's code
// name ("code", errc_name(): "not_found", "no_space", ...) and its message.
inline void add_populate_report(Json& j, const PopulateReport& r) {
  j["directories"] = r.directories;
  j["files"] = r.files;
  j["hard_links"] = r.hard_links;
  j["symlinks"] = r.symlinks;
  j["specials"] = r.specials;
  j["xattrs"] = r.xattrs;
  j["bytes_written"] = r.bytes_written;
  j["hole_bytes"] = r.hole_bytes;
  j["write_calls"] = r.write_calls;
  j["merged_directories"] = r.merged_directories;
  j["kept"] = r.kept;
  j["replaced"] = r.replaced;
  Json problems = Json::array();
  for (const auto& p : r.problems)
    problems.push_back(
        {{"source", p.source}, {"path", p.path}, {"code", std::string(errc_name(p.error.code))}, {"message", p.error.message}});
  j["problems"] = std::move(problems);
}

}  // namespace f2fscore::tools
