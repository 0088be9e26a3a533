// What the per-request cost harnesses (reqcost.cpp, reqcost_job.cpp) share:
// their first arguments, FILE QD N [read|write] [auto|io_uring|uring|posix],
// and the device they open from them (O_DIRECT, read-only for reads).
#pragma once

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <optional>
#include <string>

#include "f2fscore/uring_device.hpp"

namespace reqcost {

struct Args {
  std::string path;
  std::uint32_t qd = 1;
  unsigned long long n = 0;
  bool write = false;
  f2fscore::BackendOptions backend;
  std::string backend_arg = "auto";
};

/// Argument 5's backend name: "posix", "io_uring" (Asio), "uring" (liburing
/// directly); anything else is Backend::automatic. With fewer than three
/// arguments: the usage line (`more` names the tool's own arguments) on
/// stderr, and nothing.
inline std::optional<Args> parse(int argc, char** argv, const char* more) {
  using f2fscore::Backend;
  if (argc < 4) {
    std::fprintf(stderr, "usage: %s FILE QD N [read|write] [auto|io_uring|uring|posix] %s\n", argv[0], more);
    return std::nullopt;
  }
  Args a;
  a.path = argv[1];
  a.qd = static_cast<std::uint32_t>(std::strtoul(argv[2], nullptr, 10));
  a.n = std::strtoull(argv[3], nullptr, 10);
  a.write = argc > 4 && std::strcmp(argv[4], "write") == 0;
  if (argc > 5) a.backend_arg = argv[5];
  a.backend.backend = a.backend_arg == "posix"      ? Backend::posix
                      : a.backend_arg == "io_uring" ? Backend::uring
                      : a.backend_arg == "uring"    ? Backend::liburing
                                                    : Backend::automatic;
  a.backend.queue_depth = a.qd;
  return a;
}

/// The device of `a`, or null after a message on stderr naming `tool`.
inline std::unique_ptr<f2fscore::OpenedDevice> open(const Args& a, const char* tool) {
  f2fscore::OpenOptions oo;
  oo.direct = true;
  oo.read_only = !a.write;
  auto opened = f2fscore::open_device(a.path, oo, a.backend);
  if (!opened) {
    std::fprintf(stderr, "%s: %s\n", tool, opened.error().to_string().c_str());
    return nullptr;
  }
  return std::make_unique<f2fscore::OpenedDevice>(std::move(*opened));
}

}  // namespace reqcost
