#include "f2fscore/tools/common.hpp"
#include "f2fscore/multi_device.hpp"

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <string>
#include <vector>

#include "f2fscore/device.hpp"

namespace f2fscore::tools {

namespace {

constexpr const char* kHint = "Run with --help for more information.";

}  // namespace

std::string foreign_file_system(const std::string& path) {
  InUseCheck what;
  what.exclusive = false;
  what.other_file_system = true;
  if (InUse u = check_in_use(path, what); u.kind == InUseKind::other_file_system) return u.detail + ", not F2FS";
  return {};
}

CLI::Validator decimal_count(const std::string& what) {
  return CLI::Validator(
      [what](std::string& v) {
        return !v.empty() && v.find_first_not_of("0123456789") == std::string::npos ? std::string()
                                                                                    : "\"" + v + "\" is not a " + what;
      },
      "COUNT");
}

std::string parse_error_message(CLI::App& app, const CLI::ParseError& e) {
  // CLI11 checks required operands before it reports arguments it does not
  // know, so "TOOL --bogus" would be "device is required": an unknown
  // option is the first thing to name.
  if (dynamic_cast<const CLI::RequiredError*>(&e) != nullptr) {
    std::vector<std::string> unknown;
    for (auto& a : app.remaining(true))
      if (a.size() > 1 && a[0] == '-') unknown.push_back(a);
    if (!unknown.empty()) {
      std::string m = unknown.size() > 1 ? "unknown options" : "unknown option";
      for (const auto& a : unknown) m += " " + a;
      return m;
    }
  }
  if (dynamic_cast<const CLI::ExtrasError*>(&e) != nullptr) {
    std::vector<std::string> extras = app.remaining(true);
    if (extras.empty()) return e.what();
    std::vector<std::string> options, operands;
    for (auto& a : extras) (a.size() > 1 && a[0] == '-' ? options : operands).push_back(a);
    std::string m;
    auto join = [](const std::vector<std::string>& v) {
      std::string s;
      for (const auto& x : v) s += (s.empty() ? "" : " ") + x;
      return s;
    };
    if (!options.empty()) m = std::string(options.size() > 1 ? "unknown options " : "unknown option ") + join(options);
    if (!operands.empty())
      m += (m.empty() ? "" : "; ") + std::string(operands.size() > 1 ? "unexpected arguments " : "unexpected argument ") +
           join(operands);
    return m;
  }
  return e.what();
}

int print_error(std::string_view tool, std::string_view message, int code, bool hint) {
  std::fprintf(stderr, "%.*s: %.*s\n", static_cast<int>(tool.size()), tool.data(), static_cast<int>(message.size()),
               message.data());
  if (hint) std::fprintf(stderr, "%s\n", kHint);
  return code;
}

int report_device_failure(std::string_view tool, const std::string& device, bool json, const std::string& message) {
  if (json) {
    print_json({{"device", device}, {"error", message}, {"exit_code", exit_code::failure}});
    return exit_code::failure;
  }
  return print_error(tool, message, exit_code::failure);
}

bool json_requested(int argc, char** argv) {
  for (int i = 1; i < argc; ++i) {
    const std::string_view a(argv[i]);
    if (a == "--") return false;
    if (a == "--json") return true;
  }
  return false;
}

int report_usage_error(std::string_view tool, const std::string& device, bool json, const std::string& message,
                       int code) {
  if (json) print_json({{"device", device}, {"error", message}, {"exit_code", code}});
  return print_error(tool, message, code, true);
}

std::optional<int> parse_or(CLI::App& app, int argc, char** argv,
                            const std::function<int(const CLI::ParseError& e, const std::string& message)>& on_error) {
  // Options start with '-' on every platform: CLI11 also takes "/name" as
  // an option on Windows, which would swallow absolute paths ("/tmp/x.img").
  std::function<void(CLI::App&)> dash_only = [&](CLI::App& a) {
    a.allow_windows_style_options(false);
    for (CLI::App* sub : a.get_subcommands([](CLI::App*) { return true; })) dash_only(*sub);
  };
  dash_only(app);
  try {
    app.parse(argc, argv);
    return std::nullopt;
  } catch (const CLI::CallForHelp& e) {
    return app.exit(e);
  } catch (const CLI::CallForAllHelp& e) {
    return app.exit(e);
  } catch (const CLI::ParseError& e) {
    return on_error(e, parse_error_message(app, e));
  }
}

namespace {

// -V or --version among the arguments, so that a version request is
// answered although a required operand is missing.
bool version_requested(int argc, char** argv) {
  for (int i = 1; i < argc; ++i)
    if (std::string_view(argv[i]) == "-V" || std::string_view(argv[i]) == "--version") return true;
  return false;
}

}  // namespace

int print_version(std::string_view tool, bool json) {
  if (json)
    return print_json({{"tool", std::string(tool)}, {"version", F2FSCORE_VERSION_STRING}, {"exit_code", exit_code::ok}})
               ? exit_code::ok
               : exit_code::failure;
  std::printf("%.*s %s\n", static_cast<int>(tool.size()), tool.data(), F2FSCORE_VERSION_STRING);
  return exit_code::ok;
}

std::optional<int> parse_device_command_line(CLI::App& app, int argc, char** argv, int usage_code,
                                             const std::string& device, bool answers_version) {
  return parse_or(app, argc, argv, [&](const CLI::ParseError&, const std::string& m) {
    if (answers_version && version_requested(argc, argv))
      return print_version(app.get_name(), json_requested(argc, argv));
    return report_usage_error(app.get_name(), device, json_requested(argc, argv), m, usage_code);
  });
}

std::optional<int> parse_command_line(CLI::App& app, int argc, char** argv, int usage_code,
                                      bool answers_version) {
  return parse_or(app, argc, argv, [&](const CLI::ParseError&, const std::string& m) {
    if (answers_version && version_requested(argc, argv))
      return print_version(app.get_name(), json_requested(argc, argv));
    return print_error(app.get_name(), m, usage_code, true);
  });
}

std::string open_failure_text(const std::string& device, const Error& e) {
  if (e.code == Errc::read_only) return "cannot open " + device + " for writing: it is read-only";
  if (e.code == Errc::not_found) return "cannot open " + device + ": no such file or device";
  std::string m = e.message.rfind("cannot open", 0) == 0 ? e.message : "cannot open " + device + ": " + e.message;
  if (e.sys_errno != 0) {
    const std::string os = std::strerror(e.sys_errno);
    if (m.find(os) == std::string::npos) m += " [" + os + "]";
  }
  return m;
}

void add_device_option(CLI::App& app, std::vector<std::string>& paths) {
  // One path per --device: the operands after it stay the tool's own
  // (CLI11 lets a vector option take every following operand otherwise).
  app.add_option("--device", paths,
                 "a device of a multi-device volume besides the first, in the order of its device list (repeatable, "
                 "one path each; default: the paths in its superblock)")
      ->allow_extra_args(false);
}

Result<std::array<std::uint8_t, 64>> read_master_key_file(const std::string& path) {
  std::array<std::uint8_t, 64> key{};
  std::FILE* f = std::fopen(path.c_str(), "rb");
  if (f == nullptr)
    return make_error(Errc::io, path + ": cannot read the key file [" + std::strerror(errno) + "]");
  std::uint8_t buf[65];
  const std::size_t n = std::fread(buf, 1, sizeof buf, f);
  const int err = std::ferror(f) != 0 ? errno : 0;
  std::fclose(f);
  if (err != 0)
    return make_error(Errc::io, path + ": cannot read the key file [" + std::strerror(err) + "]");
  if (n != key.size())
    return make_error(Errc::invalid_argument, path + ": fscrypt: a v2 master key is 64 bytes, this one " +
                                                  (n > key.size() ? std::string("more than 64") : std::to_string(n)));
  std::copy(buf, buf + n, key.begin());
  return key;
}

Result<std::unique_ptr<BlockDevice>> open_whole_volume(
    std::unique_ptr<BlockDevice> first, const std::vector<std::string>& paths,
    const std::function<Result<std::unique_ptr<BlockDevice>>(const std::string& path)>& open) {
  auto r = open_volume_devices(
      std::move(first),
      [&](const std::string& path, std::size_t) -> Result<std::unique_ptr<BlockDevice>> {
        auto d = open(path);
        if (d) return d;
        Error e = d.error();
        e.message = open_failure_text(path, e);
        if (e.code == Errc::not_found) e.message += "; name it with --device PATH";
        e.sys_errno = 0;
        return make_error(std::move(e));
      },
      paths);
  return r;
}

std::string json_line(const Json& j) { return j.dump(-1, ' ', false, Json::error_handler_t::replace); }

namespace {

void append_spaced(std::string& out, const Json& j) {
  if (j.is_object()) {
    out += '{';
    bool first = true;
    for (const auto& [k, v] : j.items()) {
      if (!first) out += ", ";
      first = false;
      out += json_line(Json(k));
      out += ": ";
      append_spaced(out, v);
    }
    out += '}';
  } else if (j.is_array()) {
    out += '[';
    for (std::size_t i = 0; i < j.size(); ++i) {
      if (i) out += ", ";
      append_spaced(out, j[i]);
    }
    out += ']';
  } else {
    out += json_line(j);
  }
}

}  // namespace

std::string json_line_spaced(const Json& j) {
  std::string out;
  append_spaced(out, j);
  return out;
}

std::string json_pretty(const Json& j) { return j.dump(2, ' ', false, Json::error_handler_t::replace); }

bool print_json(const Json& j, JsonLayout layout) {
  const std::string s = (layout == JsonLayout::pretty        ? json_pretty(j)
                         : layout == JsonLayout::line_spaced ? json_line_spaced(j)
                                                             : json_line(j)) +
                        "\n";
  if (std::fwrite(s.data(), 1, s.size(), stdout) != s.size()) return false;
  return std::fflush(stdout) == 0;
}

}  // namespace f2fscore::tools

namespace f2fscore::tools {

Json name_array(std::string_view names) {
  Json a = Json::array();
  std::size_t p = 0;
  while (p < names.size()) {
    std::size_t e = names.find(' ', p);
    if (e == std::string_view::npos) e = names.size();
    if (e > p) a.push_back(std::string(names.substr(p, e - p)));
    p = e + 1;
  }
  return a;
}

}  // namespace f2fscore::tools
