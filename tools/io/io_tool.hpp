// Shared by the modes of f2fscore-io (main.cpp: raw I/O; fs_mode.cpp: the
// filesystem engine).
#pragma once

#include <cstdint>
#include <string>

#include "f2fscore/tools/common.hpp"

namespace f2fscore::io_tool {

inline constexpr int kExitOk = tools::exit_code::ok, kExitFailure = tools::exit_code::failure,
                     kExitUsage = tools::exit_code::usage;

/// "4k", "1m", "64MiB" (powers of 1024) to bytes; false when malformed.
bool parse_size(const std::string& s, std::uint64_t& out);
/// A JSON text that the drivers or the library rendered, as a value to
/// nest in the tool's output.
tools::Json nested_json(const std::string& text);
/// `f2fscore-io fs ...` with argv[0] = "fs".
int fs_main(int argc, char** argv);

}  // namespace f2fscore::io_tool
