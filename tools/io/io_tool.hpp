// Shared by the modes of f2fscore-io (main.cpp: raw I/O; fs_mode.cpp: the
// filesystem engine).
#pragma once

#include <cstdint>
#include <string>

namespace f2fscore::io_tool {

inline constexpr int kExitOk = 0, kExitFailure = 1, kExitUsage = 2;

/// "4k", "1m", "64MiB" (powers of 1024) to bytes; false when malformed.
bool parse_size(const std::string& s, std::uint64_t& out);
/// A JSON string literal.
std::string json_string(const std::string& s);
/// `f2fscore-io fs ...` with argv[0] = "fs".
int fs_main(int argc, char** argv);

}  // namespace f2fscore::io_tool
