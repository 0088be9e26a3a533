// Tree views: ls (plain, long, recursive) and cat.
#include <algorithm>
#include <cinttypes>
#include <functional>
#include <unordered_set>

#include "inspect/inspect_internal.hpp"

namespace f2fscore::inspect {

using namespace disk;
using namespace detail;

namespace {

Json entry_json(Volume& vol, const std::string& name, const InodeInfo& in, std::vector<std::string>& problems,
                const std::string& path) {
  const Inode& i = in.raw.i;
  Json e{{"name", json_string(name)},
         {"ino", in.ino},
         {"type", file_type_name(in.mode)},
         {"mode", in.mode},
         {"mode_string", mode_string(in.mode)},
         {"links", in.links},
         {"uid", in.uid},
         {"gid", in.gid},
         {"size", in.size},
         {"blocks", in.blocks},
         {"atime", i.i_atime.get()},
         {"mtime", i.i_mtime.get()},
         {"mtime_nsec", i.i_mtime_nsec.get()},
         {"ctime", i.i_ctime.get()},
         {"encrypted", in.is_encrypted()}};
  if (!is_utf8(name)) e["name_hex"] = hex(name);
  const std::uint32_t type = in.mode & 0xF000;
  if (type == 0x2000 || type == 0x6000) {
    const auto d = device_number(in);
    e["rdev"] = {{"major", d.major}, {"minor", d.minor}};
  }
  if (in.is_symlink()) {
    if (auto t = vol.read_link(in)) e["target"] = json_string(*t);
    else problems.push_back(path + ": " + describe(t.error()));
  }
  return e;
}

// One ls -l row: mode, links, uid, gid, size (or major, minor), mtime, name.
std::vector<std::string> long_row(Volume& vol, const std::string& name, const InodeInfo& in,
                                  std::vector<std::string>& problems, const std::string& path) {
  std::string size;
  const std::uint32_t type = in.mode & 0xF000;
  if (type == 0x2000 || type == 0x6000) {
    const auto d = device_number(in);
    appendf(size, "%u, %u", d.major, d.minor);
  } else {
    size = std::to_string(in.size);
  }
  std::string shown = printable(name);
  if (in.is_symlink()) {
    if (auto t = vol.read_link(in)) shown += " -> " + printable(*t);
    else problems.push_back(path + ": " + describe(t.error()));
  }
  return {mode_string(in.mode), std::to_string(in.links), std::to_string(in.uid), std::to_string(in.gid), size,
          time_utc(in.raw.i.i_mtime.get()).substr(0, 16), shown};
}

void print_rows(std::string& t, const std::vector<std::vector<std::string>>& rows) {
  std::size_t w[6] = {};
  for (const auto& r : rows)
    for (std::size_t k = 0; k < 6 && k < r.size(); ++k) w[k] = std::max(w[k], r[k].size());
  for (const auto& r : rows) {
    if (r.size() < 7) {
      t += r.back() + "\n";
      continue;
    }
    appendf(t, "%s %*s %-*s %-*s %*s %s %s\n", r[0].c_str(), static_cast<int>(w[1]), r[1].c_str(),
            static_cast<int>(w[2]), r[2].c_str(), static_cast<int>(w[3]), r[3].c_str(), static_cast<int>(w[4]),
            r[4].c_str(), r[5].c_str(), r[6].c_str());
  }
}

// The path the user means, for headers: absolute, as given.
std::string shown_path(Volume& vol, std::string_view spec, const InodeInfo& in) {
  if (spec.empty() || spec == "/") return "/";
  if (spec[0] == '/') return std::string(spec);
  if (std::all_of(spec.begin(), spec.end(), [](char c) { return (c >= '0' && c <= '9') || c == 'x' || c == 'X' ||
                                                                 (c >= 'a' && c <= 'f') || (c >= 'A' && c <= 'F'); })) {
    if (auto p = path_of(vol, in.ino); p && *p) return **p;
    return "<inode " + std::to_string(in.ino) + ">";
  }
  return "/" + std::string(spec);
}

}  // namespace

Result<Output> render_ls(Volume& vol, std::string_view path, const LsOptions& o, Format f) {
  auto top = find_inode(vol, path.empty() ? std::string_view("/") : path);
  if (!top) return make_error(top.error());
  const std::string top_path = shown_path(vol, path, *top);
  std::vector<std::string> problems;
  std::string t;
  if (!top->is_dir()) {
    Json j = entry_json(vol, top_path, *top, problems, top_path);
    if (o.long_format) print_rows(t, {long_row(vol, top_path, *top, problems, top_path)});
    else t += printable(top_path) + "\n";
    Output out;
    if (f == Format::json) {
      Json doc{{"path", json_string(top_path)}, {"entry", j}};
      if (!problems.empty()) doc["problems"] = problems;
      out.text = json_text(doc);
    } else {
      out.text = std::move(t);
    }
    out.problems = std::move(problems);
    return out;
  }
  std::unordered_set<nid_t> seen;
  bool first = true;
  // Lists `dir`; returns its entries as JSON (nested when recursive).
  std::function<Json(const std::string&, const InodeInfo&, int)> list = [&](const std::string& p, const InodeInfo& dir,
                                                                            int depth) -> Json {
    Json arr = Json::array();
    if (!seen.insert(dir.ino).second || depth > 1024) {
      problems.push_back(p + ": directory loop or too deep; not listed");
      return arr;
    }
    auto entries = list_dir(vol, dir);
    if (!entries) {
      problems.push_back(p + ": " + describe(entries.error()));
      return arr;
    }
    if (o.recursive) {
      if (!first) t += "\n";
      t += printable(p) + ":\n";
    }
    first = false;
    std::vector<std::vector<std::string>> rows;
    for (const auto& e : *entries) {
      const std::string cp = child_path(p, e.dirent.name);
      if (!e.inode) {
        problems.push_back(cp + ": " + e.error);
        Json bad{{"name", json_string(e.dirent.name)}, {"ino", e.dirent.ino}, {"error", e.error}};
        arr.push_back(bad);
        rows.push_back(o.long_format ? std::vector<std::string>{"??????????", "?", "?", "?", "?", "?",
                                                                printable(e.dirent.name)}
                                     : std::vector<std::string>{printable(e.dirent.name)});
        continue;
      }
      arr.push_back(entry_json(vol, e.dirent.name, *e.inode, problems, cp));
      if (o.long_format) rows.push_back(long_row(vol, e.dirent.name, *e.inode, problems, cp));
      else rows.push_back({printable(e.dirent.name)});
    }
    print_rows(t, rows);
    if (o.recursive) {
      // arr holds one element per entry, in the same order.
      for (std::size_t k = 0; k < entries->size(); ++k) {
        const auto& e = (*entries)[k];
        if (e.inode && e.inode->is_dir()) arr[k]["entries"] = list(child_path(p, e.dirent.name), *e.inode, depth + 1);
      }
    }
    return arr;
  };
  Json entries = list(top_path, *top, 0);
  Output out;
  if (f == Format::json) {
    Json doc{{"path", json_string(top_path)}, {"ino", top->ino}, {"recursive", o.recursive}, {"entries", entries}};
    if (!problems.empty()) doc["problems"] = problems;
    out.text = json_text(doc);
  } else {
    out.text = std::move(t);
  }
  out.problems = std::move(problems);
  return out;
}

Status cat(Volume& vol, std::string_view spec, Format f, const ByteSink& sink) {
  auto in = find_inode(vol, spec);
  if (!in) return make_error(in.error());
  if (!in->is_reg())
    return make_error(Errc::unsupported,
                      "\"" + std::string(spec) + "\" is a " + file_type_name(in->mode) + ", not a regular file");
  if (in->is_encrypted())
    return make_error(Errc::unsupported, "\"" + std::string(spec) + "\" (inode " + std::to_string(in->ino) +
                                             ") is encrypted: its contents cannot be read without the key");
  constexpr std::size_t kChunk = 1 << 20;
  std::vector<std::uint8_t> buf(static_cast<std::size_t>(std::min<std::uint64_t>(kChunk, std::max<std::uint64_t>(in->size, 1))));
  std::vector<std::uint8_t> all;
  for (std::uint64_t off = 0; off < in->size;) {
    auto n = vol.read(*in, off, buf);
    if (!n) return make_error(n.error());
    if (*n == 0) break;
    const std::span<const std::uint8_t> piece(buf.data(), *n);
    if (f == Format::text) F2FSCORE_TRY(sink(piece));
    else all.insert(all.end(), piece.begin(), piece.end());
    off += *n;
  }
  if (f == Format::json) {
    Json j{{"path", json_string(std::string(spec))}, {"ino", in->ino}, {"size", in->size},
           {"encoding", "base64"}, {"data", base64(all)}};
    const std::string s = json_text(j);
    F2FSCORE_TRY(sink(std::span<const std::uint8_t>(reinterpret_cast<const std::uint8_t*>(s.data()), s.size())));
  }
  return {};
}

}  // namespace f2fscore::inspect
