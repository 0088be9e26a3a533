// What every f2fscore tool shares: parsing the command line (usage errors
// prefixed with the tool's name, CLI11's own included), the exit codes each
// tool documents in --help and its manual page, and JSON output (every JSON
// document of the tools is built with nlohmann-json and printed here).
#pragma once

#include <CLI/CLI.hpp>
#include <nlohmann/json.hpp>

#include "f2fscore/device.hpp"
#include "f2fscore/result.hpp"
#include <array>
#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace f2fscore::tools {

// JSON object with keys in insertion order, as the library's renderers use.
using Json = nlohmann::ordered_json;

// Exit codes of mkfs, sload, dump, label and io.
namespace exit_code {
inline constexpr int ok = 0;
inline constexpr int failure = 1;
inline constexpr int usage = 2;
}  // namespace exit_code

// Exit codes of fsck, e2fsck's (e2fsck(8), "EXIT CODE").
namespace fsck_exit_code {
inline constexpr int clean = 0;
inline constexpr int repaired = 1;
inline constexpr int left_unrepaired = 4;
inline constexpr int operational = 8;
inline constexpr int usage = 16;
}  // namespace fsck_exit_code

// Parses argv into app. Returns std::nullopt when the command line is
// accepted, else the code the tool exits with: 0 after --help (printed to
// stdout) or, with answers_version and -V/--version among the arguments,
// after print_version(); usage_code after a parse error,
// printed to stderr as "TOOL: MESSAGE" (TOOL is app's name) and a hint
// line. An argument CLI11 does not know that starts with '-' is named as an
// unknown option.
std::optional<int> parse_command_line(CLI::App& app, int argc, char** argv, int usage_code,
                                      bool answers_version = false);

// Parses the command line: nullopt when it parsed; the exit status of
// CLI11's --help / --help-all output; on a parse error, what `on_error`
// returns, given the error and its text as parse_error_message() gives it.
// Only arguments starting with '-' are options, on Windows too (CLI11's
// "/name" style is turned off in `app` and its subcommands).
std::optional<int> parse_or(CLI::App& app, int argc, char** argv,
                            const std::function<int(const CLI::ParseError& e, const std::string& message)>& on_error);

// True when --json is among the arguments (before a "--"), so that a usage
// error found before the parse is complete is reported as JSON too.
bool json_requested(int argc, char** argv);

// parse_command_line for a tool that works on one device and prints JSON:
// a usage error prints "TOOL: MESSAGE" and the hint on stderr, and with
// --json among the arguments also {"device": device (as far as parsed),
// "error": MESSAGE, "exit_code": usage_code} on stdout. With answers_version,
// -V/--version prints the version and exits 0 as parse_command_line does.
std::optional<int> parse_device_command_line(CLI::App& app, int argc, char** argv, int usage_code,
                                             const std::string& device, bool answers_version = false);

// Prints "TOOL VERSION" on stdout, or with `json` the object {"tool": TOOL,
// "version": VERSION, "exit_code": 0}. Returns exit_code::ok.
int print_version(std::string_view tool, bool json);

// A usage error of a tool that works on one device, found after parsing:
// "TOOL: MESSAGE" and the hint on stderr, and with `json` the object
// {"device", "error": message, "exit_code": code} on stdout. Returns code.
int report_usage_error(std::string_view tool, const std::string& device, bool json, const std::string& message,
                       int code);

// A CLI11 check that a value is a decimal count (digits only: no sign,
// which CLI11 would wrap into an unsigned type): "\"-5\" is not a WHAT".
CLI::Validator decimal_count(const std::string& what);

// "PATH holds a file system of another kind (TYPE), not F2FS" when libblkid's
// probe (check_in_use() with InUseCheck::other_file_system) finds one on
// `path`; empty otherwise. For the message of a tool that found no F2FS.
std::string foreign_file_system(const std::string& path);

// The text of a parse error as parse_command_line prints it, without the
// tool's name and the hint line. Options CLI11 does not know are named
// ("unknown option --x") ahead of a missing required operand.
std::string parse_error_message(CLI::App& app, const CLI::ParseError& e);

// Prints "TOOL: MESSAGE" on stderr (the hint line too when hint is set) and
// returns code.
int print_error(std::string_view tool, std::string_view message, int code, bool hint = false);

// A failure of a tool that works on one device: with `json`, the object
// {"device", "error": message, "exit_code": 1} on stdout, else "TOOL: MESSAGE"
// on stderr. Returns exit_code::failure.
int report_device_failure(std::string_view tool, const std::string& device, bool json, const std::string& message);

// Why `device` could not be opened, in the words every tool uses: "cannot
// open DEVICE for writing: it is read-only" (Errc::read_only), "cannot open
// DEVICE: no such file or device" (Errc::not_found), else the library's
// message with the OS's text once ("... [Permission denied]").
std::string open_failure_text(const std::string& device, const Error& e);

// --device PATH, repeatable: the devices of a multi-device volume besides
// the first, in the order of its superblock's device list, where they are
// not at the paths the superblock names (images moved, other device names
// on this host).
void add_device_option(CLI::App& app, std::vector<std::string>& paths);

// The whole volume whose first device is `first` (open_volume_devices()):
// for a multi-device volume the other devices opened with `open` (the
// tool's own policy: read-only or not, direct I/O, refusal of a device in
// use) by the superblock's paths or `paths` (--device). `first` itself for
// a single device. The error's message is complete, for the tool to print
// as is: "device 1 of 2 (PATH): cannot open PATH: no such file or device;
// name it with --device PATH".
Result<std::unique_ptr<BlockDevice>> open_whole_volume(
    std::unique_ptr<BlockDevice> first, const std::vector<std::string>& paths,
    const std::function<Result<std::unique_ptr<BlockDevice>>(const std::string& path)>& open);

// An fscrypt v2 master key from the key file `path` (--key FILE, -o
// key=FILE): at most 65 bytes are read, so a directory, a device or an
// endless file (/dev/zero) is an error naming the file, never an exception
// or an unbounded read. Errors carry a complete message: "PATH: cannot read
// the key file [OS text]", "PATH: fscrypt: a v2 master key is 64 bytes,
// this one N" (or "more than 64").
Result<std::array<std::uint8_t, 64>> read_master_key_file(const std::string& path);

// j on one line ({"a":1,"b":[2]}); invalid UTF-8 in strings replaced by
// U+FFFD, never an exception.
std::string json_line(const Json& j);

// j on one line with a space after each ',' and ':' ({"a": 1, "b": [2]}),
// the layout of f2fscore-io's JSON; strings and numbers as json_line.
std::string json_line_spaced(const Json& j);

// j indented by two spaces, as f2fscore-dump prints.
std::string json_pretty(const Json& j);

// Prints j in the layout (json_line, json_line_spaced, json_pretty) and a newline to
// stdout; false when stdout could not be written.
enum class JsonLayout { line, line_spaced, pretty };
bool print_json(const Json& j, JsonLayout layout = JsonLayout::line);

}  // namespace f2fscore::tools

namespace f2fscore::tools {

// A space-separated list of names (as disk::feature_names() gives) as a JSON
// array of strings, the shape every tool's "features" field has.
Json name_array(std::string_view names);

}  // namespace f2fscore::tools
