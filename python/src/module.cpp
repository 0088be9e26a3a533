// The module f2fscore._f2fscore: errors, constants and the devices
// (python/f2fscore/__init__.py re-exports it; docs/embedding.md, "Python").
#include <pybind11/operators.h>
#include <pybind11/stl.h>

#include <cerrno>
#include <map>

#include "bind.hpp"
#include "f2fscore/cow_device.hpp"
#include "f2fscore/fault_device.hpp"
#include "f2fscore/iostat.hpp"
#include "f2fscore/recorder_device.hpp"

namespace f2fscore::py_bind {
namespace {

// The exception classes: f2fscore.Error (an OSError), and for the errno
// values Python gives an OSError subclass of their own, a class deriving
// from both (so `except FileNotFoundError` catches f2fscore's ENOENT).
// Created once, never freed (they live as long as the interpreter).
py::object* g_error = nullptr;
std::map<int, py::object>* g_error_by_errno = nullptr;

void make_error_classes(py::module_& m) {
  py::object builtins = py::module_::import("builtins");
  py::object type = builtins.attr("type");
  py::dict ns;
  ns["__module__"] = "f2fscore";
  ns["__doc__"] =
      "An error of the f2fscore library: an OSError whose errno is the one Linux's f2fs returns for the "
      "same call (errno_of() in f2fscore/result.hpp), whose strerror is the library's message, with "
      "`code` (the Errc name: 'not_found', 'corrupt', ...) and `offset` (the byte offset on the device, "
      "or None).";
  g_error = new py::object(type("Error", py::make_tuple(builtins.attr("OSError")), ns));
  m.attr("Error") = *g_error;
  g_error_by_errno = new std::map<int, py::object>();
  const std::pair<int, const char*> specific[] = {
      {ENOENT, "FileNotFoundError"},   {EEXIST, "FileExistsError"},  {EISDIR, "IsADirectoryError"},
      {ENOTDIR, "NotADirectoryError"}, {EPERM, "PermissionError"},   {EACCES, "PermissionError"},
      {EINTR, "InterruptedError"},     {ETIMEDOUT, "TimeoutError"},
  };
  for (const auto& [en, name] : specific) {
    py::dict sub;
    sub["__module__"] = "f2fscore";
    sub["__doc__"] = std::string("f2fscore.Error with errno ") + std::to_string(en) + ", also a " + name + ".";
    (*g_error_by_errno)[en] = type(name, py::make_tuple(*g_error, builtins.attr(name)), sub);
  }
  py::register_exception_translator([](std::exception_ptr p) {
    try {
      if (p) std::rethrow_exception(p);
    } catch (const ErrorException& e) {
      const int en = errno_of(e.error);
      auto it = g_error_by_errno->find(en);
      py::object cls = it != g_error_by_errno->end() ? it->second : *g_error;
      py::object inst = cls(en, e.error.to_string());
      inst.attr("code") = std::string(errc_name(e.error.code));
      inst.attr("offset") = e.error.offset == Error::kNoOffset ? py::object(py::none()) : py::int_(e.error.offset);
      PyErr_SetObject(cls.ptr(), inst.ptr());
    }
  });
}

std::string_view kind_name(DeviceKind k) {
  switch (k) {
    case DeviceKind::memory: return "memory";
    case DeviceKind::regular_file: return "regular_file";
    case DeviceKind::block_device: return "block_device";
    default: return "other";
  }
}

// The writes in a fault device's volatile cache, their bytes copied (the
// library's spans die with the next request).
py::list unflushed_list(const FaultDevice& d) {
  py::list out;
  for (const UnflushedWrite& u : d.unflushed_writes()) {
    py::dict w;
    w["request"] = u.request;
    w["offset"] = u.offset;
    w["length"] = u.length;
    w["flags"] = u.flags;
    w["tag"] = u.tag;
    w["data"] = to_bytes(u.data);
    out.append(w);
  }
  return out;
}

// An Iostat and the layer that accounts into it, kept together (the layer
// holds a reference to the Iostat). The layer forwards to a device Python
// keeps alive.
struct IostatBox {
  Iostat stats;
  IostatDevice dev;
  explicit IostatBox(BlockDevice& inner) : dev(std::make_unique<BorrowedDevice>(inner), stats) {}
};

}  // namespace

void bind_devices(py::module_& m) {
  py::enum_<Errc>(m, "Errc", "The library's error classes (f2fscore/result.hpp).")
      .value("ok", Errc::ok)
      .value("invalid_argument", Errc::invalid_argument)
      .value("io", Errc::io)
      .value("short_io", Errc::short_io)
      .value("out_of_range", Errc::out_of_range)
      .value("corrupt", Errc::corrupt)
      .value("unsupported", Errc::unsupported)
      .value("no_space", Errc::no_space)
      .value("not_found", Errc::not_found)
      .value("exists", Errc::exists)
      .value("busy", Errc::busy)
      .value("read_only", Errc::read_only)
      .value("unaligned", Errc::unaligned)
      .value("cancelled", Errc::cancelled);
  py::enum_<IoOp>(m, "IoOp", "A request's operation (f2fscore/device.hpp).")
      .value("read", IoOp::read)
      .value("write", IoOp::write)
      .value("flush", IoOp::flush)
      .value("discard", IoOp::discard)
      .value("write_zeroes", IoOp::write_zeroes);
  m.def("io_op_bit", &io_op_bit, py::arg("op"), "The bit of an IoOp in FaultPlan.ops.");
  m.attr("ALL_IO_OPS") = kAllIoOps;
  m.attr("IO_FLAG_SYNC") = io_flag::sync;
  m.attr("IO_FLAG_FUA") = io_flag::fua;

  py::class_<BlockDevice, std::shared_ptr<BlockDevice>>(
      m, "Device",
      "A block device (f2fscore/device.hpp). Offsets and lengths are bytes, multiples of "
      "logical_block_size. Made by memory_device(), open_file(), CowDevice, FaultDevice, "
      "RecorderDevice or IostatDevice; layers keep the device below them alive.")
      .def_property_readonly("size", [](const BlockDevice& d) { return d.info().size_bytes; }, "Bytes.")
      .def_property_readonly("logical_block_size", [](const BlockDevice& d) { return d.info().logical_block_size; })
      .def_property_readonly("name", [](const BlockDevice& d) { return d.info().name; })
      .def_property_readonly("kind", [](const BlockDevice& d) { return std::string(kind_name(d.info().kind)); },
                             "'memory', 'regular_file', 'block_device' or 'other'.")
      .def_property_readonly("read_only", [](const BlockDevice& d) { return d.info().read_only; })
      .def(
          "read",
          [](BlockDevice& d, std::uint64_t offset, std::uint64_t length) {
            std::string buf(static_cast<std::size_t>(length), '\0');
            check(read_at(d, offset, {reinterpret_cast<std::uint8_t*>(buf.data()), buf.size()}));
            return py::bytes(buf);
          },
          py::arg("offset"), py::arg("length"), "`length` bytes at byte `offset` (read_at()).")
      .def(
          "write", [](BlockDevice& d, std::uint64_t offset, const py::buffer& data) {
            check(write_at(d, offset, bytes_of(data).span()));
          },
          py::arg("offset"), py::arg("data"), "Writes a bytes-like object at byte `offset` (write_at()).")
      .def("flush", [](BlockDevice& d) { check(flush(d)); }, "Makes completed writes durable.")
      .def("discard", [](BlockDevice& d, std::uint64_t o, std::uint64_t n) { check(discard(d, o, n)); },
           py::arg("offset"), py::arg("length"))
      .def("write_zeroes", [](BlockDevice& d, std::uint64_t o, std::uint64_t n) { check(write_zeroes(d, o, n)); },
           py::arg("offset"), py::arg("length"))
      .def("__repr__", [](const BlockDevice& d) {
        return "<f2fscore.Device " + d.info().name + " " + std::to_string(d.info().size_bytes) + " bytes>";
      });

  m.def(
      "memory_device",
      [](std::uint64_t size, std::uint32_t lbs, std::string name) {
        if (lbs != 512 && lbs != 4096) raise(Errc::invalid_argument, "logical_block_size must be 512 or 4096", EINVAL);
        if (size == 0 || size % lbs != 0)
          raise(Errc::invalid_argument, "size must be a positive multiple of logical_block_size", EINVAL);
        return std::shared_ptr<BlockDevice>(make_memory_device(size, lbs, std::move(name)));
      },
      py::arg("size"), py::arg("logical_block_size") = 512, py::arg("name") = "memory",
      "A sparse device in memory (make_memory_device()); CowDevice.memory() for one that clones.");
  m.def(
      "open_file",
      [](const std::string& path, bool read_only) {
        OpenOptions o;
        o.read_only = read_only;
        o.refuse_in_use = !read_only;
        return std::shared_ptr<BlockDevice>(unwrap(open_posix_device(path, o)));
      },
      py::arg("path"), py::arg("read_only") = false,
      "An image file or block device through pread/pwrite (open_posix_device()); a writable open "
      "refuses one in use (mounted, held by a loop device).");

  py::class_<CowDevice, BlockDevice, std::shared_ptr<CowDevice>>(
      m, "CowDevice",
      "Copy-on-write snapshots and clones of a device image, in 4 KiB blocks in memory "
      "(f2fscore/cow_device.hpp).")
      .def_static(
          "memory",
          [](std::uint64_t size, std::uint32_t lbs, std::string name) {
            return std::shared_ptr<CowDevice>(unwrap(CowDevice::memory(size, lbs, std::move(name))));
          },
          py::arg("size"), py::arg("logical_block_size") = 512, py::arg("name") = "cow memory",
          "A sparse memory device whose blocks read as zeroes until written.")
      .def_static(
          "overlay",
          [](std::shared_ptr<BlockDevice> base, std::string name) {
            return std::shared_ptr<CowDevice>(unwrap(CowDevice::overlay(std::move(base), std::move(name))));
          },
          py::arg("base"), py::arg("name") = "",
          "An overlay over `base`, which it only reads: writes stay in memory. Nothing may write `base` "
          "while the overlay or a clone of it is in use.")
      .def_static(
          "copy_of",
          [](BlockDevice& dev, std::string name) {
            return std::shared_ptr<CowDevice>(unwrap(CowDevice::copy_of(dev, std::move(name))));
          },
          py::arg("device"), py::arg("name") = "", "A snapshot of what `device` holds now, copied into memory.")
      .def(
          "clone", [](CowDevice& d, std::string name) { return std::shared_ptr<CowDevice>(d.clone(std::move(name))); },
          py::arg("name") = "",
          "A device with this one's contents now; writes to either never reach the other.")
      .def_property_readonly("stored_blocks", &CowDevice::stored_blocks)
      .def_property_readonly("private_blocks", &CowDevice::private_blocks,
                             "4 KiB blocks written since the device was made or last cloned.")
      .def_property_readonly("layers", &CowDevice::layers);

  py::class_<FaultPlan>(m, "FaultPlan", "What a FaultDevice injects (f2fscore/fault_device.hpp).")
      .def(py::init([](std::uint64_t fail_request, std::uint64_t fail_after, std::uint64_t short_request, Errc error,
                       int sys_errno, std::uint8_t ops, bool garbage_after_discard, bool drop_unflushed) {
             FaultPlan p;
             p.fail_request = fail_request;
             p.fail_after = fail_after;
             p.short_request = short_request;
             p.error = error;
             p.sys_errno = sys_errno;
             p.ops = ops;
             p.garbage_after_discard = garbage_after_discard;
             p.drop_unflushed = drop_unflushed;
             return p;
           }),
           py::kw_only(), py::arg("fail_request") = FaultPlan::kNever, py::arg("fail_after") = FaultPlan::kNever,
           py::arg("short_request") = FaultPlan::kNever, py::arg("error") = Errc::io, py::arg("sys_errno") = EIO,
           py::arg("ops") = kAllIoOps, py::arg("garbage_after_discard") = false, py::arg("drop_unflushed") = false)
      .def_readonly_static("NEVER", &FaultPlan::kNever)
      .def_readwrite("fail_request", &FaultPlan::fail_request, "The request with this index fails.")
      .def_readwrite("fail_after", &FaultPlan::fail_after, "Every request with an index >= this fails.")
      .def_readwrite("short_request", &FaultPlan::short_request, "This request transfers half its blocks.")
      .def_readwrite("error", &FaultPlan::error)
      .def_readwrite("sys_errno", &FaultPlan::sys_errno)
      .def_readwrite("ops", &FaultPlan::ops, "Bits of io_op_bit(): which ops are counted and may fail.")
      .def_readwrite("garbage_after_discard", &FaultPlan::garbage_after_discard)
      .def_readwrite("drop_unflushed", &FaultPlan::drop_unflushed,
                     "Hold writes in a volatile cache until a flush; a power cut drops them.");

  py::enum_<CrashUnit>(m, "CrashUnit", "What one choice of a crash model covers.")
      .value("request", CrashUnit::request)
      .value("block", CrashUnit::block)
      .value("sector", CrashUnit::sector);
  py::class_<KeptPart>(m, "KeptPart",
                       "Bytes [offset, offset + length) of unflushed write number `write` that survive a power cut.")
      .def(py::init([](std::uint64_t write, std::uint64_t offset, std::uint64_t length) {
             return KeptPart{write, offset, length};
           }),
           py::arg("write"), py::arg("offset") = 0, py::arg("length") = KeptPart::kWhole)
      .def_readonly_static("WHOLE", &KeptPart::kWhole)
      .def_readwrite("write", &KeptPart::write)
      .def_readwrite("offset", &KeptPart::offset)
      .def_readwrite("length", &KeptPart::length)
      .def(py::self == py::self)
      .def("__repr__", [](const KeptPart& k) {
        return "KeptPart(write=" + std::to_string(k.write) + ", offset=" + std::to_string(k.offset) +
               ", length=" + (k.length == KeptPart::kWhole ? std::string("WHOLE") : std::to_string(k.length)) + ")";
      });

  py::class_<FaultDevice, BlockDevice, std::shared_ptr<FaultDevice>>(
      m, "FaultDevice",
      "Failure injection and crash models over a device it keeps alive (f2fscore/fault_device.hpp).")
      .def(py::init([](BlockDevice& inner, const FaultPlan& plan) { return std::make_shared<FaultDevice>(inner, plan); }),
           py::arg("inner"), py::arg("plan") = FaultPlan{}, py::keep_alive<1, 2>())
      .def("set_plan", &FaultDevice::set_plan, py::arg("plan"), py::arg("reset_counter") = false,
           "Replaces the plan; leaving drop_unflushed makes what is cached durable.")
      .def_property_readonly("plan", [](const FaultDevice& d) { return d.plan(); }, "A copy of the plan (set_plan() changes it).")
      .def("reset_counters", &FaultDevice::reset_counters)
      .def_property_readonly("counted", &FaultDevice::counted)
      .def_property_readonly("failed", &FaultDevice::failed)
      .def_property_readonly("submitted", &FaultDevice::submitted)
      .def_property_readonly("unflushed_bytes", &FaultDevice::unflushed_bytes)
      .def("unflushed_writes", &unflushed_list,
           "The writes in the volatile cache, oldest first: dicts of request, offset, length, flags, tag, data.")
      .def("crash_units", &FaultDevice::crash_units, py::arg("unit"),
           "Every unit of the unflushed writes (KeptPart list); a subset given to power_cut_keep() is one "
           "crash state of that model.")
      .def("power_cut", &FaultDevice::power_cut, "Every write not yet flushed is lost.")
      .def(
          "power_cut_keep", [](FaultDevice& d, const std::vector<KeptPart>& keep) { check(d.power_cut_keep(keep)); },
          py::arg("keep"), "Keeps the parts `keep` of the unflushed writes, drops the rest.")
      .def(
          "power_cut_random",
          [](FaultDevice& d, std::uint64_t seed, CrashUnit unit, std::uint32_t percent) {
            return unwrap(d.power_cut_random(seed, unit, percent));
          },
          py::arg("seed"), py::arg("unit") = CrashUnit::block, py::arg("keep_percent") = 50,
          "The reorder model: each unit survives with probability keep_percent/100 (SplitMix64 from `seed`); "
          "returns the parts kept.")
      .def(
          "power_cut_torn",
          [](FaultDevice& d, std::uint64_t write, std::uint64_t sectors) { check(d.power_cut_torn(write, sectors)); },
          py::arg("write"), py::arg("sectors"),
          "Writes before `write` survive, then its first `sectors` 512-byte sectors, nothing after.")
      .def_property_readonly(
          "inner", [](FaultDevice& d) -> BlockDevice& { return d.inner(); }, py::return_value_policy::reference_internal,
          "The device below: with drop_unflushed, exactly what is durable.");

  py::class_<RecordedRequest>(m, "RecordedRequest", "One request a RecorderDevice logged.")
      .def_readonly("index", &RecordedRequest::index)
      .def_readonly("op", &RecordedRequest::op)
      .def_readonly("flags", &RecordedRequest::flags)
      .def_readonly("tag", &RecordedRequest::tag)
      .def_readonly("offset", &RecordedRequest::offset)
      .def_readonly("length", &RecordedRequest::length)
      .def_property_readonly("data", [](const RecordedRequest& r) { return to_bytes(r.data); })
      .def_readonly("completed", &RecordedRequest::completed)
      .def_readonly("status", &RecordedRequest::status)
      .def_readonly("transferred", &RecordedRequest::transferred);
  py::class_<RecorderDevice, BlockDevice, std::shared_ptr<RecorderDevice>>(
      m, "RecorderDevice",
      "Logs every request passed to the device below, which it keeps alive (f2fscore/recorder_device.hpp).")
      .def(py::init([](BlockDevice& inner, bool record_reads) {
             return std::make_shared<RecorderDevice>(inner, record_reads);
           }),
           py::arg("inner"), py::arg("record_reads") = true, py::keep_alive<1, 2>())
      .def("__len__", [](const RecorderDevice& r) { return r.log().size(); })
      .def(
          "__getitem__",
          [](const RecorderDevice& r, std::int64_t i) {
            const auto n = static_cast<std::int64_t>(r.log().size());
            if (i < 0) i += n;
            if (i < 0 || i >= n) throw py::index_error("log index out of range");
            return r.log()[static_cast<std::size_t>(i)];  // a copy: the log may grow and move
          },
          "Logged request i (a copy, its write data included).")
      .def("clear", &RecorderDevice::clear)
      .def_property_readonly("logged_bytes", &RecorderDevice::logged_bytes)
      .def_property_readonly("missed", &RecorderDevice::missed);
  m.def(
      "replay",
      [](BlockDevice& dev, const RecorderDevice& rec, std::optional<std::size_t> count) {
        std::span<const RecordedRequest> log(rec.log());
        if (count) log = log.first(std::min(*count, log.size()));
        check(replay(dev, log));
      },
      py::arg("device"), py::arg("recorder"), py::arg("count") = py::none(),
      "Applies the first `count` logged requests (all when None) to `device`: the device as it was "
      "after them, when `device` starts as the image the recorder started on.");

  py::class_<IostatDevice, BlockDevice, std::shared_ptr<IostatDevice>>(
      m, "IostatDevice",
      "The kernel's f2fs I/O statistics (iostat_info) of what passes to the device below, which it "
      "keeps alive (f2fscore/iostat.hpp). Off until enabled.")
      .def(py::init([](BlockDevice& inner, bool enabled) {
             auto box = std::make_shared<IostatBox>(inner);
             box->stats.set_enabled(enabled);
             return std::shared_ptr<IostatDevice>(box, &box->dev);
           }),
           py::arg("inner"), py::arg("enabled") = true, py::keep_alive<1, 2>())
      .def_property(
          "enabled", [](IostatDevice& d) { return d.stats().enabled(); },
          [](IostatDevice& d, bool on) { d.stats().set_enabled(on); }, "Switching it off resets the counters.")
      .def(
          "iostat",
          [](IostatDevice& d, std::int64_t unix_time) { return json_loads(iostat_json(d.stats().snapshot(), unix_time)); },
          py::arg("unix_time") = 0,
          "The counters as a dict: {'enabled', 'time', 'types': {key: {'name', 'bytes', 'count', "
          "'avg_bytes'}}, 'latency': {...}} (iostat_json()).")
      .def(
          "iostat_info",
          [](IostatDevice& d, std::int64_t unix_time) { return format_iostat_info(d.stats().snapshot(), unix_time); },
          py::arg("unix_time") = 0, "/proc/fs/f2fs/<dev>/iostat_info as Linux 6.3+ prints it.");
}

}  // namespace f2fscore::py_bind

PYBIND11_MODULE(_f2fscore, m) {
  m.doc() = "f2fscore: a portable F2FS engine (format, mount, files, fsck, dump views, test devices).";
  f2fscore::py_bind::make_error_classes(m);
  f2fscore::py_bind::bind_devices(m);
  f2fscore::py_bind::bind_writer(m);
  f2fscore::py_bind::bind_checks(m);
}
