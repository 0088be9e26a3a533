// What the binding files share: errors as Python exceptions, byte buffers,
// and the device and writer holders that keep C++ lifetimes safe under
// Python's (a Python object may outlive what it was made from).
#pragma once

#include <pybind11/pybind11.h>

#include <cstdint>
#include <exception>
#include <memory>
#include <set>
#include <span>
#include <string>
#include <utility>

#include "f2fscore/device.hpp"
#include "f2fscore/result.hpp"
#include "f2fscore/writer.hpp"

namespace f2fscore::py_bind {

namespace py = pybind11;

/// A library Error on its way to Python: the exception translator
/// (module.cpp) raises it as f2fscore.Error (an OSError) carrying
/// errno_of(error), Error::to_string(), the Errc name and the offset.
struct ErrorException : std::exception {
  Error error;
  explicit ErrorException(Error e) : error(std::move(e)) {}
  const char* what() const noexcept override { return error.message.c_str(); }
};

[[noreturn]] inline void raise(Error e) { throw ErrorException(std::move(e)); }
[[noreturn]] inline void raise(Errc code, std::string message, int sys_errno = 0) {
  raise(Error{code, sys_errno, Error::kNoOffset, std::move(message)});
}

/// The value of a Result, or its Error raised.
template <class T>
T unwrap(Result<T>&& r) {
  if (!r) raise(std::move(r.error()));
  return std::move(*r);
}
inline void check(Status&& s) {
  if (!s) raise(std::move(s.error()));
}

/// The bytes of a Python bytes-like object (bytes, bytearray, memoryview of
/// bytes), contiguous. A TypeError for anything else.
struct ByteView {
  py::buffer_info info;
  std::span<const std::uint8_t> span() const {
    return {static_cast<const std::uint8_t*>(info.ptr), static_cast<std::size_t>(info.size * info.itemsize)};
  }
};
inline ByteView bytes_of(const py::buffer& b) {
  ByteView v{b.request()};
  if (v.info.ndim > 1 || (v.info.ndim == 1 && v.info.strides[0] != v.info.itemsize))
    throw py::type_error("a contiguous bytes-like object is required");
  return v;
}
inline py::bytes to_bytes(std::span<const std::uint8_t> s) {
  return py::bytes(reinterpret_cast<const char*>(s.data()), s.size());
}

/// A JSON document the library rendered (nlohmann-json), as Python objects.
inline py::object json_loads(const std::string& text) { return py::module_::import("json").attr("loads")(text); }

/// A device that forwards to one it does not own (for layers that take
/// ownership of the device below, IostatDevice; Python keeps the real one
/// alive).
class BorrowedDevice final : public BlockDevice {
 public:
  explicit BorrowedDevice(BlockDevice& d) : d_(d) {}
  const DeviceInfo& info() const noexcept override { return d_.info(); }
  void submit(IoRequest& req) noexcept override { d_.submit(req); }
  std::size_t poll(bool wait) noexcept override { return d_.poll(wait); }
  std::size_t in_flight() const noexcept override { return d_.in_flight(); }
  std::uint64_t next_data(std::uint64_t offset, std::uint64_t end) noexcept override {
    return d_.next_data(offset, end);
  }
  std::uint64_t next_hole(std::uint64_t offset, std::uint64_t end) noexcept override {
    return d_.next_hole(offset, end);
  }

 private:
  BlockDevice& d_;
};

struct HandleBox;

/// A mounted Writer as Python holds it: the handles opened through it
/// register here, so that abandon() (a power cut: the Writer dropped
/// without unmount) can close them first, as C++ code whose handles go out
/// of scope before the Writer does.
struct WriterBox {
  std::unique_ptr<Writer> w;
  std::set<HandleBox*> handles;

  Writer& get() const {
    if (!w) raise(Errc::invalid_argument, "writer: dropped (abandon()): mount the device again", 22 /* EINVAL */);
    return *w;
  }
  void abandon();
};

/// A FileHandle as Python holds it: the WriterBox stays alive while the
/// handle does (so the Writer outlives its handles, as the C++ API
/// requires).
struct HandleBox {
  std::shared_ptr<WriterBox> owner;
  FileHandle fh;
  HandleBox(std::shared_ptr<WriterBox> o, FileHandle h) : owner(std::move(o)), fh(std::move(h)) {
    owner->handles.insert(this);
  }
  HandleBox(const HandleBox&) = delete;
  HandleBox& operator=(const HandleBox&) = delete;
  ~HandleBox() {
    fh = FileHandle{};  // closes, while the Writer is alive
    owner->handles.erase(this);
  }
};

inline void WriterBox::abandon() {
  for (HandleBox* h : handles) h->fh = FileHandle{};
  handles.clear();
  w.reset();
}

void bind_devices(py::module_& m);
void bind_writer(py::module_& m);
void bind_checks(py::module_& m);

}  // namespace f2fscore::py_bind
