// Formatting, the checker and the dump tool's views (f2fscore/mkfs.hpp,
// f2fscore/fsck.hpp, f2fscore/inspect.hpp) for Python.
#include <pybind11/stl.h>

#include <cerrno>

#include "bind.hpp"
#include "f2fscore/fsck.hpp"
#include "f2fscore/inspect.hpp"
#include "f2fscore/mkfs.hpp"
#include "f2fscore/volume.hpp"

namespace f2fscore::py_bind {
namespace {

namespace insp = inspect;

// A rendered view as Python takes it: the text, or with json=True the
// document parsed. Entries that could not be read fail the call (the tool
// prints them on stderr and exits 1), as Errc::corrupt naming them.
py::object view(Result<insp::Output>&& r, bool json) {
  insp::Output o = unwrap(std::move(r));
  if (!o.problems.empty()) {
    std::string msg = "view: " + std::to_string(o.problems.size()) + " entries could not be read: " + o.problems.front();
    raise(Errc::corrupt, std::move(msg), 117 /* EUCLEAN */);
  }
  if (json) return json_loads(o.text);
  return py::str(o.text);
}
insp::Format fmt(bool json) { return json ? insp::Format::json : insp::Format::text; }

insp::Range range_of(std::uint64_t first, std::optional<std::uint64_t> last) {
  insp::Range r;
  r.first = first;
  r.last = last.value_or(~std::uint64_t{0});
  return r;
}

// The pieces of a Volume Python holds: the device stays alive (keep_alive).
struct VolumeBox {
  std::unique_ptr<Volume> v;
};

fsck::Mode mode_of(const std::string& m) {
  if (m == "check_only" || m == "n") return fsck::Mode::check_only;
  if (m == "preen" || m == "p") return fsck::Mode::preen;
  if (m == "repair_all" || m == "y") return fsck::Mode::repair_all;
  raise(Errc::invalid_argument, "fsck mode: 'check_only', 'preen' or 'repair_all', not '" + m + "'", EINVAL);
}

}  // namespace

void bind_checks(py::module_& m) {
  py::class_<MkfsReport>(m, "FormatReport", "What format() wrote.")
      .def_property_readonly(
          "superblock", [](const MkfsReport& r) { return json_loads(insp::render_superblock(r.plan.sb, insp::Format::json).text); },
          "Every superblock field by its kernel name (as f2fscore-dump superblock --json).")
      .def_property_readonly("overprovision", [](const MkfsReport& r) { return r.plan.overprovision; }, "Percent.")
      .def_property_readonly("reserved_segments", [](const MkfsReport& r) { return r.plan.reserved_segments; })
      .def_readonly("bytes_written", &MkfsReport::bytes_written)
      .def_readonly("bytes_zeroed", &MkfsReport::bytes_zeroed)
      .def_readonly("bytes_discarded", &MkfsReport::bytes_discarded)
      .def_readonly("discarded", &MkfsReport::discarded);
  m.def(
      "format",
      [](BlockDevice& dev, const std::string& label, const std::string& features, const std::string& encoding,
         double overprovision, std::uint32_t segs_per_sec, std::uint32_t secs_per_zone, bool heap,
         std::vector<std::string> cold_extensions, std::vector<std::string> hot_extensions,
         std::optional<std::string> uuid, std::optional<std::uint64_t> timestamp, std::uint32_t root_uid,
         std::uint32_t root_gid, bool discard, bool large_nat_bitmap, std::uint64_t wanted_sectors,
         std::uint32_t wanted_sector_size, std::uint64_t random_seed) {
        MkfsOptions o;
        o.label = label;
        if (!features.empty()) o.features = unwrap(parse_features(features));
        if (!encoding.empty()) std::tie(o.encoding, o.encoding_flags) = unwrap(parse_encoding(encoding));
        o.overprovision = overprovision;
        o.segs_per_sec = segs_per_sec;
        o.secs_per_zone = secs_per_zone;
        o.heap = heap;
        o.cold_extensions = std::move(cold_extensions);
        o.hot_extensions = std::move(hot_extensions);
        if (uuid) o.uuid = unwrap(parse_uuid(*uuid));
        o.timestamp = timestamp;
        o.root_uid = root_uid;
        o.root_gid = root_gid;
        o.discard = discard;
        o.large_nat_bitmap = large_nat_bitmap;
        o.wanted_sectors = wanted_sectors;
        o.wanted_sector_size = wanted_sector_size;
        o.random_seed = random_seed;
        MkfsTarget t{&dev, dev.info().name};
        py::gil_scoped_release unlocked;
        return unwrap(format_volume({&t, 1}, o));
      },
      py::arg("device"), py::kw_only(), py::arg("label") = "", py::arg("features") = "", py::arg("encoding") = "",
      py::arg("overprovision") = 0.0, py::arg("segs_per_sec") = 1, py::arg("secs_per_zone") = 1,
      py::arg("heap") = false, py::arg("cold_extensions") = std::vector<std::string>{},
      py::arg("hot_extensions") = std::vector<std::string>{}, py::arg("uuid") = py::none(),
      py::arg("timestamp") = py::none(), py::arg("root_uid") = 0, py::arg("root_gid") = 0, py::arg("discard") = true,
      py::arg("large_nat_bitmap") = false, py::arg("wanted_sectors") = 0, py::arg("wanted_sector_size") = 0,
      py::arg("random_seed") = 0,
      "Formats `device` as mkfs.f2fs 1.15 does with the same options (-l label, -O features, -C encoding, "
      "-o overprovision, -s, -z, -a, -e/-E, -U uuid, -T timestamp, -R uid:gid, -t discard, -i, the sector "
      "count and -w). A fixed uuid and timestamp make the image byte-reproducible.");

  py::class_<fsck::Problem>(m, "Problem", "One problem fsck() found (the codes of f2fscore/fsck.hpp).")
      .def_property_readonly("code", [](const fsck::Problem& p) { return std::string(fsck::code_name(p.code)); },
                             "'INODE_LINKS', 'SB_PRIMARY_BAD', ...")
      .def_property_readonly(
          "severity", [](const fsck::Problem& p) { return std::string(fsck::severity_name(fsck::definition(p.code).severity)); },
          "'info', 'warning' or 'error'.")
      .def_readonly("ino", &fsck::Problem::ino)
      .def_readonly("nid", &fsck::Problem::nid)
      .def_readonly("blkaddr", &fsck::Problem::blkaddr)
      .def_readonly("segno", &fsck::Problem::segno)
      .def_readonly("path", &fsck::Problem::path)
      .def_readonly("detail", &fsck::Problem::detail)
      .def_readonly("fixed", &fsck::Problem::fixed)
      .def("__str__", &fsck::Problem::to_string)
      .def("__repr__", [](const fsck::Problem& p) { return "<f2fscore.Problem " + p.to_string() + ">"; });
  py::class_<fsck::Report>(m, "FsckReport", "What fsck() found and did.")
      .def_readonly("problems", &fsck::Report::problems)
      .def_readonly("full_check", &fsck::Report::full_check)
      .def_readonly("wrote", &fsck::Report::wrote)
      .def_property_readonly("exit_code", &fsck::Report::exit_code,
                             "e2fsck's codes: 0 clean, 1 problems all repaired, 4 problems left.")
      .def_property_readonly("clean", [](const fsck::Report& r) { return r.exit_code() == 0; })
      .def_property_readonly("stats",
                             [](const fsck::Report& r) {
                               py::dict d;
                               d["inodes"] = r.stats.inodes;
                               d["nodes"] = r.stats.nodes;
                               d["data_blocks"] = r.stats.data_blocks;
                               d["dirs"] = r.stats.dirs;
                               d["files"] = r.stats.files;
                               d["bytes_read"] = r.stats.bytes_read;
                               return d;
                             })
      .def(
          "text",
          [](const fsck::Report& r, const std::string& device, const std::string& mode) {
            return fsck::render_report_text(r, fsck::ReportContext{device, mode_of(mode), 0}, false);
          },
          py::arg("device") = "", py::arg("mode") = "check_only", "f2fscore-fsck's text.");
  m.def(
      "fsck",
      [](BlockDevice& dev, const std::string& mode, bool force, bool fast_only) {
        fsck::Options o;
        o.mode = mode_of(mode);
        o.force = force;
        o.fast_only = fast_only;
        py::gil_scoped_release unlocked;
        return unwrap(fsck::check(dev, o));
      },
      py::arg("device"), py::kw_only(), py::arg("mode") = "check_only", py::arg("force") = true,
      py::arg("fast_only") = false,
      "Checks the volume on `device` (and repairs it with mode 'preen' or 'repair_all', as fsck -p/-y); "
      "force (-f, the default here) checks a volume marked clean in full. Raises only for an operational "
      "failure (no usable superblock or checkpoint, a failing device).");

  m.def(
      "raw_superblock",
      [](BlockDevice& dev, int copy) {
        return json_loads(insp::render_superblock(unwrap(insp::raw_superblock(dev, copy)), insp::Format::json).text);
      },
      py::arg("device"), py::arg("copy") = 0,
      "Superblock copy `copy` (0 or 1) as stored, unchecked, as a dict (f2fscore-dump superblock --copy): for a "
      "volume that does not open.");

  py::class_<VolumeBox>(
      m, "Volume",
      "A read-only open of a volume: the views of f2fscore-dump (f2fscore/inspect.hpp). Each view returns "
      "the tool's text, or with json=True its JSON document parsed. Open it on a device no Writer is "
      "writing (it caches what it reads).")
      .def_static(
          "open",
          [](BlockDevice& dev) {
            VolumeBox b;
            b.v = unwrap(Volume::open(dev));
            return b;
          },
          py::arg("device"), py::keep_alive<0, 1>())
      .def("info", [](VolumeBox& b, bool json) { return view(insp::render_info(*b.v, fmt(json)), json); },
           py::arg("json") = false, "Superblock copy, checkpoint pack, clean unmount, pending roll-forward.")
      .def("superblock", [](VolumeBox& b, bool json) { return view(insp::render_superblock(b.v->superblock(), fmt(json)), json); },
           py::arg("json") = false)
      .def("checkpoint", [](VolumeBox& b, bool json) { return view(insp::render_checkpoint(*b.v, fmt(json)), json); },
           py::arg("json") = false)
      .def(
          "nat",
          [](VolumeBox& b, std::uint64_t first, std::optional<std::uint64_t> last, bool json) {
            return view(insp::render_nat(*b.v, range_of(first, last), fmt(json)), json);
          },
          py::arg("first") = 0, py::arg("last") = py::none(), py::arg("json") = false,
          "NAT entries of nids first..last (inclusive; None: to the last) in use.")
      .def(
          "sit",
          [](VolumeBox& b, std::uint64_t first, std::optional<std::uint64_t> last, bool json) {
            return view(insp::render_sit(*b.v, range_of(first, last), fmt(json)), json);
          },
          py::arg("first") = 0, py::arg("last") = py::none(), py::arg("json") = false,
          "SIT entries of main-area segments first..last.")
      .def(
          "ssa",
          [](VolumeBox& b, std::uint64_t first, std::optional<std::uint64_t> last, bool json) {
            return view(insp::render_ssa(*b.v, range_of(first, last), fmt(json)), json);
          },
          py::arg("first") = 0, py::arg("last") = py::none(), py::arg("json") = false)
      .def(
          "inode",
          [](VolumeBox& b, const std::string& spec, bool json) {
            const InodeInfo in = unwrap(insp::find_inode(*b.v, spec));
            return view(insp::render_inode(*b.v, in, fmt(json)), json);
          },
          py::arg("spec"), py::arg("json") = false, "An inode by number ('5', '0x5') or path ('/a/b').")
      .def(
          "block",
          [](VolumeBox& b, std::uint64_t blkaddr, bool json) {
            return view(insp::render_block(*b.v, static_cast<block_t>(blkaddr), fmt(json)), json);
          },
          py::arg("blkaddr"), py::arg("json") = false, "Who owns a 4 KiB block address.")
      .def(
          "ls",
          [](VolumeBox& b, const std::string& path, bool long_format, bool recursive, bool json) {
            insp::LsOptions o;
            o.long_format = long_format;
            o.recursive = recursive;
            return view(insp::render_ls(*b.v, path, o, fmt(json)), json);
          },
          py::arg("path") = "/", py::arg("long_format") = false, py::arg("recursive") = false, py::arg("json") = false)
      .def(
          "map", [](VolumeBox& b, const std::string& path, bool json) { return view(insp::render_map(*b.v, path, fmt(json)), json); },
          py::arg("path") = "/", py::arg("json") = false, "The file-to-block map of every inode under `path`.")
      .def("space", [](VolumeBox& b, bool json) { return view(insp::render_space(*b.v, fmt(json)), json); },
           py::arg("json") = false)
      .def(
          "ipu",
          [](VolumeBox& b, std::optional<IpuOptions> ipu, bool segments, bool json) {
            return view(insp::render_ipu(*b.v, ipu.value_or(IpuOptions{}), segments, fmt(json)), json);
          },
          py::arg("options") = py::none(), py::arg("segments") = false, py::arg("json") = false,
          "The inputs of the IPU decisions at rest and what each rule would decide (docs/stats.md).")
      .def(
          "cat",
          [](VolumeBox& b, const std::string& spec) {
            std::string out;
            check(insp::cat(*b.v, spec, insp::Format::text, [&](std::span<const std::uint8_t> piece) -> Status {
              out.append(reinterpret_cast<const char*>(piece.data()), piece.size());
              return {};
            }));
            return py::bytes(out);
          },
          py::arg("spec"), "The contents of a regular file.");
}

}  // namespace f2fscore::py_bind
