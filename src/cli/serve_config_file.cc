#include "cli/serve_config_file.h"

#include <yaml-cpp/yaml.h>

#include <algorithm>
#include <charconv>
#include <nlohmann/json.hpp>
#include <set>

namespace vllm {
namespace {

bool IsFlag(const CLI::Option& option) { return option.get_expected_max() == 0; }

// The options the command line after `serve` gives, and whether it names the model.
struct GivenOptions {
  std::set<const CLI::Option*> options;
  bool has_model = false;
};

GivenOptions OptionsOnCommandLine(const std::vector<std::string>& args, size_t first,
                                  const CLI::App& serve) {
  GivenOptions given;
  for (size_t i = first; i < args.size(); ++i) {
    const std::string& arg = args[i];
    if (arg == "--") {
      given.has_model = given.has_model || i + 1 < args.size();
      break;
    }
    if (arg.size() < 2 || arg[0] != '-') {  // the positional model
      given.has_model = true;
      continue;
    }
    const std::string name = arg.substr(0, arg.find('='));
    const CLI::Option* option = serve.get_option_no_throw(name);
    if (option == nullptr) continue;
    given.options.insert(option);
    if (IsFlag(*option) || name.size() < arg.size()) continue;
    // Its values: one, or each one up to the next flag for a list.
    const bool is_list = option->get_items_expected_max() > 1;
    while (i + 1 < args.size() && (args[i + 1].empty() || args[i + 1][0] != '-' ||
                                   std::isdigit(static_cast<unsigned char>(args[i + 1][1])))) {
      ++i;
      if (!is_list) break;
    }
  }
  if (const CLI::Option* model = serve.get_option_no_throw("--model");
      model != nullptr && given.options.count(model) > 0) {
    given.has_model = true;
  }
  return given;
}

// A YAML value as JSON: quoted scalars stay strings; plain ones are read as YAML 1.2's core
// schema reads them (null, booleans, numbers).
nlohmann::json ToJson(const YAML::Node& node) {
  if (node.IsMap()) {
    nlohmann::json object = nlohmann::json::object();
    for (const auto& entry : node) object[entry.first.as<std::string>()] = ToJson(entry.second);
    return object;
  }
  if (node.IsSequence()) {
    nlohmann::json array = nlohmann::json::array();
    for (const auto& item : node) array.push_back(ToJson(item));
    return array;
  }
  if (node.IsNull()) return nullptr;
  const std::string& text = node.Scalar();
  if (node.Tag() == "!") return text;
  if (text == "true" || text == "True") return true;
  if (text == "false" || text == "False") return false;
  int64_t integer = 0;
  const char* end = text.data() + text.size();
  if (auto [at, error] = std::from_chars(text.data(), end, integer);
      error == std::errc() && at == end) {
    return integer;
  }
  double real = 0;
  if (auto [at, error] = std::from_chars(text.data(), end, real);
      error == std::errc() && at == end) {
    return real;
  }
  return text;
}

}  // namespace

Expected<std::vector<std::string>> ApplyServeConfigFile(std::vector<std::string> args,
                                                        const CLI::App& serve) {
  // `serve`, not `bench serve` (a client with flags of its own).
  auto serve_at = std::find(args.begin(), args.end(), "serve");
  if (serve_at == args.end() || (serve_at != args.begin() && serve_at[-1] == "bench")) {
    return args;
  }
  const size_t first = static_cast<size_t>(serve_at - args.begin()) + 1;
  std::string path;
  bool found = false;
  for (size_t i = first; i < args.size(); ++i) {
    if (args[i] != "--config" && !args[i].starts_with("--config=")) continue;
    if (found) return Error{"--config is given twice"};
    found = true;
    size_t num_tokens = 1;
    if (args[i] == "--config") {
      if (i + 1 == args.size()) return Error{"--config needs a YAML file"};
      path = args[i + 1];
      num_tokens = 2;
    } else {
      path = args[i].substr(std::string_view("--config=").size());
    }
    args.erase(args.begin() + static_cast<std::ptrdiff_t>(i),
               args.begin() + static_cast<std::ptrdiff_t>(i + num_tokens));
    --i;
  }
  if (!found) return args;

  YAML::Node root;
  try {
    root = YAML::LoadFile(path);
  } catch (const YAML::BadFile&) {
    return Error{"--config: cannot read '" + path + "'"};
  } catch (const YAML::ParserException& error) {
    return Error{"--config " + path + ": line " + std::to_string(error.mark.line + 1) + ": " +
                 error.msg};
  }
  if (root.IsNull()) return args;
  if (!root.IsMap()) {
    return Error{"--config " + path + ": must be a YAML mapping of flag names to values"};
  }
  const GivenOptions given = OptionsOnCommandLine(args, first, serve);
  std::vector<std::string> from_file;
  for (const auto& entry : root) {
    const std::string key = entry.first.Scalar();
    const std::string where =
        "--config " + path + ": line " + std::to_string(entry.first.Mark().line + 1) + ": ";
    std::string name = key.substr(std::min(key.find_first_not_of('-'), key.size()));
    std::replace(name.begin(), name.end(), '_', '-');
    const YAML::Node& value = entry.second;
    if (name == "model" || name == "model-tag") {  // the positional model, or --model
      if (!value.IsScalar()) return Error{where + "'" + key + "' must be a model path"};
      if (!given.has_model) from_file.insert(from_file.end(), {"--model", value.Scalar()});
      continue;
    }
    const std::string flag = "--" + name;
    const CLI::Option* option = serve.get_option_no_throw(flag);
    if (option == nullptr || name.empty()) {
      return Error{where + "unknown key '" + key + "' (serve has no flag " + flag + ")"};
    }
    if (given.options.count(option) > 0) continue;  // the command line overrides the file
    if (IsFlag(*option)) {
      const nlohmann::json truth = value.IsScalar() ? ToJson(value) : nlohmann::json();
      if (!truth.is_boolean()) return Error{where + "'" + key + "' takes true or false"};
      if (truth.get<bool>()) {
        from_file.push_back(flag);
      } else if (serve.get_option_no_throw("--no-" + name) == option) {
        from_file.push_back("--no-" + name);
      }
    } else if (value.IsSequence()) {
      from_file.push_back(flag);
      for (const auto& item : value) {
        if (!item.IsScalar()) return Error{where + "'" + key + "' must be a list of values"};
        from_file.push_back(item.Scalar());
      }
    } else if (value.IsMap()) {
      from_file.push_back(flag + "=" + ToJson(value).dump());
    } else if (value.IsScalar()) {
      from_file.push_back(flag + "=" + value.Scalar());  // '=': a value may begin with '-'
    } else {
      return Error{where + "'" + key + "' has no value"};
    }
  }
  // At the end: a list of the file's cannot take the command line's positional model.
  args.insert(args.end(), from_file.begin(), from_file.end());
  return args;
}

}  // namespace vllm
