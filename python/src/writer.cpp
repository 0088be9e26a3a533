// The writer and the file-handle API (f2fscore/writer.hpp,
// f2fscore/file_handle.hpp) for Python.
#include <pybind11/stl.h>

#include <cerrno>

#include "bind.hpp"
#include "f2fscore/file_handle.hpp"

namespace f2fscore::py_bind {
namespace {

using WriterPtr = std::shared_ptr<WriterBox>;
using HandlePtr = std::shared_ptr<HandleBox>;

std::int64_t ns_of(const Timespec& t) {
  return static_cast<std::int64_t>(t.sec) * 1'000'000'000 + static_cast<std::int64_t>(t.nsec);
}
Timespec ts_of(std::int64_t ns) {
  if (ns < 0) raise(Errc::invalid_argument, "times before 1970 are not supported", EINVAL);
  return Timespec{static_cast<std::uint64_t>(ns / 1'000'000'000), static_cast<std::uint32_t>(ns % 1'000'000'000)};
}

SetAttr make_setattr(std::optional<std::uint16_t> mode, std::optional<std::uint32_t> uid,
                     std::optional<std::uint32_t> gid, std::optional<std::int64_t> atime_ns,
                     std::optional<std::int64_t> mtime_ns, std::optional<std::int64_t> ctime_ns) {
  SetAttr a;
  a.mode = mode;
  a.uid = uid;
  a.gid = gid;
  if (atime_ns) a.atime = ts_of(*atime_ns);
  if (mtime_ns) a.mtime = ts_of(*mtime_ns);
  if (ctime_ns) a.ctime = ts_of(*ctime_ns);
  return a;
}

// A size or offset from Python: negative ones are EINVAL, checked first as
// Linux's system calls check them (do_sys_ftruncate(), ksys_pread64(),
// vfs_fallocate()).
std::uint64_t nonneg(std::int64_t v, const char* what) {
  if (v < 0) raise(Errc::invalid_argument, std::string(what) + ": negative", EINVAL);
  return static_cast<std::uint64_t>(v);
}

XattrSet xattr_how(int flags) {
  switch (flags) {
    case 0: return XattrSet::any;
    case 1: return XattrSet::create;   // XATTR_CREATE
    case 2: return XattrSet::replace;  // XATTR_REPLACE
    default: raise(Errc::invalid_argument, "xattr flags: 0, XATTR_CREATE (1) or XATTR_REPLACE (2)", EINVAL);
  }
}

py::list names_of(std::vector<std::string>&& v) {
  py::list out;
  for (auto& s : v) out.append(py::bytes(s).attr("decode")("utf-8", "surrogateescape"));
  return out;
}

// read(n) of a handle: n < 0 reads to the end of the file.
py::bytes read_handle(FileHandle& h, std::int64_t n, std::optional<std::uint64_t> offset) {
  std::string buf;
  if (n >= 0) {
    buf.resize(static_cast<std::size_t>(n));
    std::span<std::uint8_t> out{reinterpret_cast<std::uint8_t*>(buf.data()), buf.size()};
    buf.resize(offset ? unwrap(h.pread(out, *offset)) : unwrap(h.read(out)));
    return py::bytes(buf);
  }
  constexpr std::size_t kChunk = 1 << 20;
  std::uint64_t at = offset.value_or(0);
  for (;;) {
    const std::size_t have = buf.size();
    buf.resize(have + kChunk);
    std::span<std::uint8_t> out{reinterpret_cast<std::uint8_t*>(buf.data()) + have, kChunk};
    const std::size_t got = offset ? unwrap(h.pread(out, at)) : unwrap(h.read(out));
    buf.resize(have + got);
    at += got;
    if (got == 0) break;
  }
  return py::bytes(buf);
}

}  // namespace

void bind_writer(py::module_& m) {
  // open(2)'s flags with Linux's asm-generic values (file_handle.hpp); the
  // os module's O_* are the same on x86 but not on arm, arm64, powerpc, ...
  m.attr("O_RDONLY") = open_flag::rdonly;
  m.attr("O_WRONLY") = open_flag::wronly;
  m.attr("O_RDWR") = open_flag::rdwr;
  m.attr("O_ACCMODE") = open_flag::accmode;
  m.attr("O_CREAT") = open_flag::creat;
  m.attr("O_EXCL") = open_flag::excl;
  m.attr("O_NOCTTY") = open_flag::noctty;
  m.attr("O_TRUNC") = open_flag::trunc;
  m.attr("O_APPEND") = open_flag::append;
  m.attr("O_NONBLOCK") = open_flag::nonblock;
  m.attr("O_DSYNC") = open_flag::dsync;
  m.attr("O_DIRECT") = open_flag::direct;
  m.attr("O_LARGEFILE") = open_flag::largefile;
  m.attr("O_DIRECTORY") = open_flag::directory;
  m.attr("O_NOFOLLOW") = open_flag::nofollow;
  m.attr("O_NOATIME") = open_flag::noatime;
  m.attr("O_CLOEXEC") = open_flag::cloexec;
  m.attr("O_SYNC") = open_flag::sync;
  m.attr("O_PATH") = open_flag::path;
  m.attr("O_TMPFILE") = open_flag::tmpfile;
  m.attr("SEEK_SET") = 0;
  m.attr("SEEK_CUR") = 1;
  m.attr("SEEK_END") = 2;
  m.attr("SEEK_DATA") = 3;
  m.attr("SEEK_HOLE") = 4;
  m.attr("DT_UNKNOWN") = dirent_type::unknown;
  m.attr("DT_FIFO") = dirent_type::fifo;
  m.attr("DT_CHR") = dirent_type::chr;
  m.attr("DT_DIR") = dirent_type::dir;
  m.attr("DT_BLK") = dirent_type::blk;
  m.attr("DT_REG") = dirent_type::reg;
  m.attr("DT_LNK") = dirent_type::lnk;
  m.attr("DT_SOCK") = dirent_type::sock;
  m.attr("FALLOC_FL_KEEP_SIZE") = falloc::keep_size;
  m.attr("FALLOC_FL_PUNCH_HOLE") = falloc::punch_hole;
  m.attr("FALLOC_FL_ZERO_RANGE") = falloc::zero_range;
  m.attr("XATTR_CREATE") = 1;
  m.attr("XATTR_REPLACE") = 2;

  py::class_<IpuOptions>(m, "IpuOptions", "The in-place-update tunables (f2fscore/writer_policy.hpp, docs/ipu.md).")
      .def(py::init<>())
      .def_readonly_static("KERNEL_DEFAULT", &IpuOptions::kKernelDefault)
      .def_readwrite("ipu_policy", &IpuOptions::ipu_policy, "F2FS_IPU_* bits; KERNEL_DEFAULT: by volume size.")
      .def_readwrite("min_ipu_util", &IpuOptions::min_ipu_util)
      .def_readwrite("min_fsync_blocks", &IpuOptions::min_fsync_blocks)
      .def_readwrite("min_hot_blocks", &IpuOptions::min_hot_blocks)
      .def_readwrite("min_ssr_sections", &IpuOptions::min_ssr_sections)
      .def_readwrite("fdatasync_in_place", &IpuOptions::fdatasync_in_place);
  py::class_<GcOptions>(m, "GcOptions", "Garbage collection (f2fscore/writer_policy.hpp, docs/gc.md).")
      .def(py::init<>())
      .def_readwrite("background", &GcOptions::background)
      .def_readwrite("idle_interval_s", &GcOptions::idle_interval_s);

  py::class_<MountOptions> mo(m, "MountOptions", "How Writer.mount() mounts (f2fscore/writer.hpp).");
  py::enum_<MountOptions::Recovery>(mo, "Recovery")
      .value("roll_forward", MountOptions::Recovery::roll_forward)
      .value("refuse", MountOptions::Recovery::refuse);
  py::enum_<MountOptions::OnDamage>(mo, "OnDamage")
      .value("refuse", MountOptions::OnDamage::refuse)
      .value("read_only", MountOptions::OnDamage::read_only)
      .value("read_write", MountOptions::OnDamage::read_write);
  py::enum_<MountOptions::PremountCheck>(mo, "PremountCheck")
      .value("full", MountOptions::PremountCheck::full)
      .value("fast", MountOptions::PremountCheck::fast);
  mo.def(py::init<>())
      .def_static("test_profile", &MountOptions::test_profile,
                  "The defaults without what depends on time or volume size: fixed clock "
                  "(TEST_PROFILE_TIME), no periodic checkpoint, ipu_policy F2FS_IPU_FSYNC (0x10).")
      .def_readonly_static("TEST_PROFILE_TIME", &MountOptions::kTestProfileTime)
      .def_readwrite("fixed_time", &MountOptions::fixed_time, "Seconds since the epoch for the times set; 0: the clock.")
      .def_readwrite("read_only", &MountOptions::read_only)
      .def_readwrite("cache_bytes", &MountOptions::cache_bytes)
      .def_readwrite("cache_reads", &MountOptions::cache_reads,
                     "Keep the blocks read() brings from the device in the page cache (clean).")
      .def_readwrite("checkpoint_interval_s", &MountOptions::checkpoint_interval_s)
      .def_readwrite("node_cache_pages", &MountOptions::node_cache_pages)
      .def_readwrite("discard", &MountOptions::discard)
      .def_readwrite("recovery", &MountOptions::recovery)
      .def_readwrite("ipu", &MountOptions::ipu)
      .def_readwrite("gc", &MountOptions::gc)
      .def_readwrite("refuse_in_use", &MountOptions::refuse_in_use)
      .def_readwrite("on_damage", &MountOptions::on_damage)
      .def_readwrite("premount_check", &MountOptions::premount_check);

  py::class_<WriterStat>(m, "Stat",
                         "stat(2) of an inode: sizes in bytes, blocks in 4 KiB blocks (the inode block "
                         "included, as i_blocks), times in nanoseconds since the epoch.")
      .def_readonly("ino", &WriterStat::ino)
      .def_readonly("mode", &WriterStat::mode)
      .def_readonly("size", &WriterStat::size)
      .def_readonly("blocks", &WriterStat::blocks)
      .def_readonly("nlink", &WriterStat::links)
      .def_readonly("uid", &WriterStat::uid)
      .def_readonly("gid", &WriterStat::gid)
      .def_readonly("projid", &WriterStat::projid)
      .def_readonly("flags", &WriterStat::flags)
      .def_readonly("rdev", &WriterStat::rdev)
      .def_property_readonly("atime_ns", [](const WriterStat& s) { return ns_of(s.atime); })
      .def_property_readonly("mtime_ns", [](const WriterStat& s) { return ns_of(s.mtime); })
      .def_property_readonly("ctime_ns", [](const WriterStat& s) { return ns_of(s.ctime); })
      .def("is_dir", &WriterStat::is_dir)
      .def("is_reg", &WriterStat::is_reg);
  py::class_<Dirent>(m, "Dirent", "A directory entry as getdents64(2) returns it: name, inode number, d_type (DT_*).")
      .def_property_readonly(
          "name", [](const Dirent& d) { return py::bytes(d.name).attr("decode")("utf-8", "surrogateescape"); },
          "The name; bytes that are not UTF-8 decode as surrogates, as os.listdir() gives them.")
      .def_readonly("ino", &Dirent::ino)
      .def_readonly("type", &Dirent::type)
      .def("__eq__", [](const Dirent& a, const Dirent& b) { return a == b; })
      .def("__repr__", [](const Dirent& d) {
        return "Dirent(" + d.name + ", ino=" + std::to_string(d.ino) + ", type=" + std::to_string(d.type) + ")";
      });
  py::class_<WriterStatfs>(m, "Statfs", "statfs(2) as Linux f2fs reports it, in 4 KiB blocks.")
      .def_readonly("blocks", &WriterStatfs::blocks)
      .def_readonly("bfree", &WriterStatfs::bfree)
      .def_readonly("bavail", &WriterStatfs::bavail)
      .def_readonly("files", &WriterStatfs::files)
      .def_readonly("ffree", &WriterStatfs::ffree);
  py::class_<IpuStats>(m, "IpuStats", "Data writes by IPU reason, and what fsync/fdatasync wrote (4 KiB blocks).")
      .def_property_readonly(
          "data_blocks",
          [](const IpuStats& s) {
            py::dict d;
            for (std::size_t i = 0; i < kIpuReasonCount; ++i) d[to_string(static_cast<IpuReason>(i))] = s.data_blocks[i];
            return d;
          },
          "{reason: 4 KiB data blocks written}: 'ipu_fsync', 'opu_new_block', ...")
      .def_property_readonly("in_place", &IpuStats::in_place)
      .def_property_readonly("out_of_place", &IpuStats::out_of_place)
      .def_readonly("fsyncs", &IpuStats::fsyncs)
      .def_readonly("fdatasyncs", &IpuStats::fdatasyncs)
      .def_readonly("fsync_node_blocks", &IpuStats::fsync_node_blocks)
      .def_readonly("fsync_meta_blocks", &IpuStats::fsync_meta_blocks)
      .def_readonly("fdatasync_node_blocks", &IpuStats::fdatasync_node_blocks)
      .def_readonly("fdatasync_meta_blocks", &IpuStats::fdatasync_meta_blocks)
      .def_readonly("fsync_checkpoints", &IpuStats::fsync_checkpoints);
  py::class_<GcStats>(m, "GcStats")
      .def_readonly("foreground_runs", &GcStats::foreground_runs)
      .def_readonly("background_runs", &GcStats::background_runs)
      .def_readonly("victims", &GcStats::victims)
      .def_readonly("data_blocks_moved", &GcStats::data_blocks_moved)
      .def_readonly("node_blocks_moved", &GcStats::node_blocks_moved)
      .def_readonly("sections_freed", &GcStats::sections_freed)
      .def_readonly("ssr_blocks", &GcStats::ssr_blocks)
      .def_readonly("lfs_blocks", &GcStats::lfs_blocks);
  py::class_<WriterStats>(m, "WriterStats", "What the writer did since mount (4 KiB blocks).")
      .def_readonly("data_blocks_written", &WriterStats::data_blocks_written)
      .def_readonly("node_blocks_written", &WriterStats::node_blocks_written)
      .def_readonly("checkpoints", &WriterStats::checkpoints)
      .def_readonly("segments_allocated", &WriterStats::segments_allocated)
      .def_readonly("meta_blocks_written", &WriterStats::meta_blocks_written)
      .def_readonly("discards", &WriterStats::discards)
      .def_readonly("recovered_nodes", &WriterStats::recovered_nodes)
      .def_readonly("node_writebacks", &WriterStats::node_writebacks)
      .def_readonly("premount_problems", &WriterStats::premount_problems)
      .def_readonly("ipu", &WriterStats::ipu)
      .def_readonly("gc", &WriterStats::gc);
  py::class_<SpaceState>(m, "SpaceState", "The space as the IPU, SSR and GC rules see it.")
      .def_readonly("user_blocks", &SpaceState::user_blocks)
      .def_readonly("valid_blocks", &SpaceState::valid_blocks)
      .def_readonly("main_sections", &SpaceState::main_sections)
      .def_readonly("free_sections", &SpaceState::free_sections)
      .def_readonly("dirty_sections", &SpaceState::dirty_sections)
      .def_readonly("full_sections", &SpaceState::full_sections)
      .def_readonly("reserved_sections", &SpaceState::reserved_sections)
      .def_readonly("overprov_sections", &SpaceState::overprov_sections)
      .def_property_readonly("utilization", &SpaceState::utilization);

  py::class_<HandleBox, HandlePtr>(
      m, "FileHandle",
      "An open file or directory (f2fscore/file_handle.hpp): read/write at a position, pread/pwrite, "
      "fsync returning whether it took a checkpoint. Closed by close(), the end of a `with` block or "
      "garbage collection; keeps its Writer alive.")
      .def_property_readonly("ino", [](const HandleBox& h) { return h.fh.ino(); })
      .def_property_readonly("flags", [](const HandleBox& h) { return h.fh.flags(); })
      .def_property_readonly("position", [](const HandleBox& h) { return h.fh.position(); })
      .def_property_readonly("closed", [](const HandleBox& h) { return !h.fh.is_open(); })
      .def("close", [](HandleBox& h) { check(h.fh.close()); })
      .def("__enter__", [](HandlePtr h) { return h; })
      .def("__exit__", [](HandleBox& h, py::args) {
        if (h.fh.is_open()) check(h.fh.close());
      })
      .def(
          "read", [](HandleBox& h, std::int64_t n) { return read_handle(h.fh, n, std::nullopt); }, py::arg("n") = -1,
          "Up to n bytes at the position (to the end of the file when n < 0); b'' at the end.")
      .def(
          "pread", [](HandleBox& h, std::int64_t n, std::int64_t off) { return read_handle(h.fh, n, nonneg(off, "pread")); },
          py::arg("n"), py::arg("offset"), "Up to n bytes at `offset`; the position unchanged.")
      .def(
          "write", [](HandleBox& h, const py::buffer& data) { return unwrap(h.fh.write(bytes_of(data).span())); },
          py::arg("data"), "Writes at the position (at the end with O_APPEND); returns the bytes written.")
      .def(
          "pwrite",
          [](HandleBox& h, const py::buffer& data, std::int64_t off) {
            return unwrap(h.fh.pwrite(bytes_of(data).span(), nonneg(off, "pwrite")));
          },
          py::arg("data"), py::arg("offset"))
      .def(
          "seek",
          [](HandleBox& h, std::int64_t off, int whence) {
            if (whence < 0 || whence > 4) raise(Errc::invalid_argument, "seek: whence 0..4 (SEEK_SET..SEEK_HOLE)", EINVAL);
            return unwrap(h.fh.seek(off, static_cast<Whence>(whence)));
          },
          py::arg("offset"), py::arg("whence") = 0, "lseek(2); returns the new position.")
      .def(
          "fsync", [](HandleBox& h) { return unwrap(h.fh.fsync()).checkpoint; },
          "fsync(2); True when it took a checkpoint, False when an fsync-marked node chain carries the data "
          "(roll-forward recovers it after a power cut).")
      .def(
          "fdatasync", [](HandleBox& h) { return unwrap(h.fh.fdatasync()).checkpoint; }, "As fsync().")
      .def("truncate", [](HandleBox& h, std::int64_t size) { check(h.fh.truncate(nonneg(size, "truncate"))); },
           py::arg("size"))
      .def(
          "fallocate",
          [](HandleBox& h, std::uint32_t mode, std::int64_t off, std::int64_t len) {
            check(h.fh.fallocate(mode, nonneg(off, "fallocate"), nonneg(len, "fallocate")));
          },
          py::arg("mode"), py::arg("offset"), py::arg("length"), "fallocate(2) with FALLOC_FL_* modes.")
      .def("stat", [](HandleBox& h) { return unwrap(h.fh.stat()); })
      .def(
          "setattr",
          [](HandleBox& h, std::optional<std::uint16_t> mode, std::optional<std::uint32_t> uid,
             std::optional<std::uint32_t> gid, std::optional<std::int64_t> a, std::optional<std::int64_t> mt,
             std::optional<std::int64_t> c) { check(h.fh.setattr(make_setattr(mode, uid, gid, a, mt, c))); },
          py::kw_only(), py::arg("mode") = py::none(), py::arg("uid") = py::none(), py::arg("gid") = py::none(),
          py::arg("atime_ns") = py::none(), py::arg("mtime_ns") = py::none(), py::arg("ctime_ns") = py::none())
      .def("readdir", [](HandleBox& h) { return unwrap(h.fh.readdir()); })
      .def("getxattr", [](HandleBox& h, std::string_view name) {
        auto v = unwrap(h.fh.getxattr(name));
        return to_bytes(v);
      }, py::arg("name"))
      .def(
          "setxattr",
          [](HandleBox& h, std::string_view name, const py::buffer& value, int flags) {
            check(h.fh.setxattr(name, bytes_of(value).span(), xattr_how(flags)));
          },
          py::arg("name"), py::arg("value"), py::arg("flags") = 0)
      .def("listxattr", [](HandleBox& h) { return names_of(unwrap(h.fh.listxattr())); })
      .def("removexattr", [](HandleBox& h, std::string_view name) { check(h.fh.removexattr(name)); }, py::arg("name"));

  py::class_<WriterBox, WriterPtr>(
      m, "Writer",
      "A read-write mount (f2fscore/writer.hpp). Calls take absolute paths and follow symlinks as Linux "
      "does. unmount() writes the unmount checkpoint (nothing when nothing changed since the last one, "
      "an unmount's); abandon() (or dropping the Writer without "
      "unmount) leaves the volume as a power cut would. In a `with` block: unmounted at the end, "
      "abandoned when the block raises.")
      .def_static(
          "mount",
          [](BlockDevice& dev, std::optional<MountOptions> opts) {
            auto box = std::make_shared<WriterBox>();
            Result<std::unique_ptr<Writer>> w = [&] {
              py::gil_scoped_release unlocked;
              return Writer::mount(dev, opts.value_or(MountOptions{}));
            }();
            box->w = unwrap(std::move(w));
            return box;
          },
          py::arg("device"), py::arg("options") = py::none(), py::keep_alive<0, 1>(),
          "Mounts `device` read-write (MountOptions() when None); the Writer keeps the device alive.")
      .def("__enter__", [](WriterPtr w) { return w; })
      .def("__exit__",
           [](WriterBox& b, const py::object& type, const py::object&, const py::object&) {
             if (!b.w) return;
             if (!type.is_none()) return b.abandon();
             check(b.w->unmount());
           })
      .def_property_readonly("mounted", [](const WriterBox& b) { return b.w != nullptr; },
                             "False after abandon().")
      .def("sync", [](WriterBox& b) { check(b.get().sync()); }, "Writes a checkpoint (nothing when nothing changed since the last one).")
      .def("unmount", [](WriterBox& b) { check(b.get().unmount()); },
           "Writes the unmount checkpoint (nothing when nothing changed since the last one and that one is "
           "an unmount's: the volume's bytes stay); later calls fail (EINVAL).")
      .def("abandon", &WriterBox::abandon,
           "Drops the mount without writing anything more, as a power cut: open handles are closed "
           "first (as C++ handles going out of scope), later calls fail (EINVAL).")
      .def(
          "open",
          [](WriterPtr b, std::string_view path, std::uint32_t flags, std::uint16_t mode) {
            return std::make_shared<HandleBox>(b, unwrap(b->get().open(path, flags, mode)));
          },
          py::arg("path"), py::arg("flags") = open_flag::rdonly, py::arg("mode") = 0644,
          "open(2): flags of O_* (f2fscore's values), mode the permission bits of a file it creates.")
      .def(
          "stat", [](WriterBox& b, std::string_view path, bool follow) { return unwrap(b.get().stat(path, follow)); },
          py::arg("path"), py::arg("follow") = true, "stat(2), or lstat(2) with follow=False.")
      .def(
          "setattr",
          [](WriterBox& b, std::string_view path, std::optional<std::uint16_t> mode, std::optional<std::uint32_t> uid,
             std::optional<std::uint32_t> gid, std::optional<std::int64_t> a, std::optional<std::int64_t> mt,
             std::optional<std::int64_t> c, bool follow) {
            check(b.get().setattr(path, make_setattr(mode, uid, gid, a, mt, c), follow));
          },
          py::arg("path"), py::kw_only(), py::arg("mode") = py::none(), py::arg("uid") = py::none(),
          py::arg("gid") = py::none(), py::arg("atime_ns") = py::none(), py::arg("mtime_ns") = py::none(),
          py::arg("ctime_ns") = py::none(), py::arg("follow") = true, "chmod/chown/utimensat.")
      .def(
          "truncate",
          [](WriterBox& b, std::string_view path, std::int64_t size) { check(b.get().truncate(path, nonneg(size, "truncate"))); },
          py::arg("path"), py::arg("size"))
      .def(
          "readdir", [](WriterBox& b, std::string_view path) { return unwrap(b.get().readdir(path)); }, py::arg("path"),
          "Dirent list: '.', '..', then the names in on-disk order.")
      .def(
          "mkdir", [](WriterBox& b, std::string_view path, std::uint16_t mode) { return unwrap(b.get().mkdir(path, mode)); },
          py::arg("path"), py::arg("mode") = 0755, "Returns the new inode number.")
      .def("unlink", [](WriterBox& b, std::string_view path) { check(b.get().unlink(path)); }, py::arg("path"))
      .def("rmdir", [](WriterBox& b, std::string_view path) { check(b.get().rmdir(path)); }, py::arg("path"))
      .def(
          "rename", [](WriterBox& b, std::string_view from, std::string_view to) { check(b.get().rename(from, to)); },
          py::arg("src"), py::arg("dst"))
      .def(
          "link", [](WriterBox& b, std::string_view from, std::string_view to) { check(b.get().link(from, to)); },
          py::arg("existing"), py::arg("new_path"))
      .def(
          "symlink",
          [](WriterBox& b, std::string_view target, std::string_view path) { return unwrap(b.get().symlink(target, path)); },
          py::arg("target"), py::arg("path"))
      .def(
          "readlink",
          [](WriterBox& b, std::string_view path) {
            Writer& w = b.get();
            return unwrap(w.readlink(unwrap(w.stat(path, false)).ino));
          },
          py::arg("path"))
      .def(
          "mknod",
          [](WriterBox& b, std::string_view path, std::uint16_t mode, std::uint32_t rdev) {
            return unwrap(b.get().mknod(path, mode, rdev));
          },
          py::arg("path"), py::arg("mode"), py::arg("rdev") = 0, "A device node, FIFO or socket (mode with its type bits).")
      .def(
          "getxattr",
          [](WriterBox& b, std::string_view path, std::string_view name, bool follow) {
            auto v = unwrap(b.get().getxattr(path, name, follow));
            return to_bytes(v);
          },
          py::arg("path"), py::arg("name"), py::arg("follow") = true, "By full name ('user.k'); ENODATA when absent.")
      .def(
          "setxattr",
          [](WriterBox& b, std::string_view path, std::string_view name, const py::buffer& value, int flags, bool follow) {
            check(b.get().setxattr(path, name, bytes_of(value).span(), xattr_how(flags), follow));
          },
          py::arg("path"), py::arg("name"), py::arg("value"), py::arg("flags") = 0, py::arg("follow") = true)
      .def(
          "listxattr", [](WriterBox& b, std::string_view path, bool follow) { return names_of(unwrap(b.get().listxattr(path, follow))); },
          py::arg("path"), py::arg("follow") = true)
      .def(
          "removexattr",
          [](WriterBox& b, std::string_view path, std::string_view name, bool follow) {
            check(b.get().removexattr(path, name, follow));
          },
          py::arg("path"), py::arg("name"), py::arg("follow") = true)
      .def("statfs", [](WriterBox& b) { return b.get().statfs(); })
      .def("stats", [](WriterBox& b) { return b.get().stats(); }, "Counters since mount, IPU and GC included.")
      .def("space", [](WriterBox& b) { return b.get().space(); })
      .def("ipu_options", [](WriterBox& b) { return b.get().ipu_options(); })
      .def("set_ipu_options", [](WriterBox& b, const IpuOptions& o) { check(b.get().set_ipu_options(o)); }, py::arg("options"))
      .def(
          "gc", [](WriterBox& b, std::uint32_t sections) { return unwrap(b.get().gc(sections)); }, py::arg("sections") = 1,
          "Foreground GC (F2FS_IOC_GARBAGE_COLLECT); returns the sections freed.");
}

}  // namespace f2fscore::py_bind
