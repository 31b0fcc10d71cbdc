#include "engine/generation_config.h"

#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <sstream>
#include <type_traits>

#include "common/logging.h"
#include "vllm/sampling_params_fields.h"

namespace vllm {
namespace {

using Json = nlohmann::json;

// The generation_config.json keys vLLM turns into default sampling params.
constexpr const char* kSamplingKeys[] = {
    "repetition_penalty", "temperature", "top_k", "top_p", "min_p", "max_new_tokens"};

bool IsSamplingKey(const std::string& key) {
  for (const char* name : kSamplingKeys) {
    if (key == name) return true;
  }
  return false;
}

// transformers' GenerationConfig defaults, which its to_diff_dict leaves out (vLLM reads only the
// keys that differ).
bool IsTransformersDefault(const std::string& key, const Json& value) {
  if (!value.is_number()) return false;
  const double number = value.get<double>();
  return ((key == "temperature" || key == "top_p" || key == "repetition_penalty") &&
          number == 1.0) ||
         (key == "top_k" && number == 50);
}

Expected<Json> ParseOverrides(const std::string& text) {
  constexpr const char* kFlag = "--override-generation-config";
  if (text.empty()) return Json::object();
  Json overrides = Json::parse(text, nullptr, false);
  if (!overrides.is_object()) {
    return Error{std::string(kFlag) + " must be a JSON object, e.g. '{\"temperature\": 0.5}'"};
  }
  for (const auto& [key, value] : overrides.items()) {
    if (!IsSamplingKey(key)) continue;  // vLLM keeps other keys, which set no sampling default
    if (!value.is_number() && !value.is_null()) {
      return Error{std::string(kFlag) + ": \"" + key + "\" must be a number or null"};
    }
  }
  return overrides;
}

Expected<Json> ReadConfigFile(const std::filesystem::path& dir) {
  const std::filesystem::path path = dir / "generation_config.json";
  std::error_code error;
  if (dir.empty() || !std::filesystem::is_regular_file(path, error)) return Json::object();
  std::ifstream file(path, std::ios::binary);
  std::stringstream text;
  text << file.rdbuf();
  Json config = Json::parse(text.str(), nullptr, false);
  if (!config.is_object()) return Error{path.string() + " is not a JSON object"};
  return config;
}

}  // namespace

Status CheckGenerationConfigArgs(const EngineArgs& args) {
  const std::string& source = args.generation_config;
  std::error_code error;
  if (source != "auto" && source != "vllm" && !std::filesystem::is_directory(source, error)) {
    return Error{"--generation-config " + source +
                 ": not auto, vllm or a directory holding generation_config.json"};
  }
  auto overrides = ParseOverrides(args.override_generation_config);
  if (!overrides) return Error{overrides.error()};
  return Status::Ok();
}

Expected<GenerationConfig> LoadGenerationConfig(const EngineArgs& args,
                                                const std::string& model_dir) {
  VLLM_RETURN_IF_ERROR(CheckGenerationConfigArgs(args));
  const bool from_model = args.generation_config == "auto" || args.generation_config == "vllm";
  const std::string dir = from_model ? model_dir : args.generation_config;
  auto file = ReadConfigFile(dir);
  if (!file) return Error{file.error()};
  GenerationConfig result;
  if (auto eos = file->find("eos_token_id"); eos != file->end()) {
    if (eos->is_number_integer()) result.eos_token_ids.push_back(eos->get<int32_t>());
    if (eos->is_array()) {
      for (const auto& id : *eos) {
        if (id.is_number_integer()) result.eos_token_ids.push_back(id.get<int32_t>());
      }
    }
  }
  // vLLM's diff: the file's sampling keys (none for vllm), then the overrides over them.
  Json sampling = Json::object();
  if (args.generation_config != "vllm") {
    for (const auto& [key, value] : file->items()) {
      if (IsSamplingKey(key) && value.is_number() && !IsTransformersDefault(key, value)) {
        sampling[key] = value;
      }
    }
  }
  auto overrides = ParseOverrides(args.override_generation_config);
  if (!overrides) return Error{overrides.error()};
  for (const auto& [key, value] : overrides->items()) {
    if (!IsSamplingKey(key)) {
      VLLM_LOG(kWarning) << "--override-generation-config: \"" << key
                         << "\" sets no default sampling parameter (ignored)";
    } else if (value.is_null()) {
      sampling.erase(key);
    } else {
      sampling[key] = value;
    }
  }
  SamplingParams& defaults = result.default_sampling_params;
  ForEachSamplingField([&](const auto& field) {
    using Number = typename std::decay_t<decltype(field)>::Type;
    if constexpr (std::is_arithmetic_v<Number>) {
      auto it = sampling.find(field.name);
      if (field.sources.generation_config && it != sampling.end()) {
        defaults.*field.member = it->template get<Number>();
      }
    }
  });
  if (auto it = sampling.find("max_new_tokens"); it != sampling.end()) {
    defaults.max_tokens = it->get<int>();  // transformers' max_new_tokens is vLLM's max_tokens
  }
  const std::string source =
      "--generation-config " + args.generation_config +
      (args.override_generation_config.empty() ? "" : " and --override-generation-config");
  if (std::string invalid = defaults.Validate(); !invalid.empty()) {
    return Error{source + ": " + invalid};
  }
  if (!sampling.empty()) {
    VLLM_LOG(kInfo) << "default sampling params from " << source << ": " << sampling.dump()
                    << " (--generation-config vllm: vLLM's own)";
  }
  return result;
}

}  // namespace vllm
