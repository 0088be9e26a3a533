#include "f2fscore/tools/common.hpp"

#include <cstdio>
#include <string>
#include <vector>

namespace f2fscore::tools {

namespace {

constexpr const char* kHint = "Run with --help for more information.";

}  // namespace

std::string parse_error_message(CLI::App& app, const CLI::ParseError& e) {
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

std::optional<int> parse_command_line(CLI::App& app, int argc, char** argv, int usage_code,
                                      const char* version_line) {
  try {
    app.parse(argc, argv);
    return std::nullopt;
  } catch (const CLI::CallForHelp& e) {
    return app.exit(e);
  } catch (const CLI::CallForAllHelp& e) {
    return app.exit(e);
  } catch (const CLI::ParseError& e) {
    if (version_line != nullptr)
      for (int i = 1; i < argc; ++i)
        if (std::string_view(argv[i]) == "-V" || std::string_view(argv[i]) == "--version") {
          std::printf("%s\n", version_line);
          return exit_code::ok;
        }
    return print_error(app.get_name(), parse_error_message(app, e), usage_code, true);
  }
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
