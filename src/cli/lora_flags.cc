#include "cli/lora_flags.h"

#include <nlohmann/json.hpp>

#include "common/logging.h"

namespace vllm {
namespace {

Expected<server::LoraModulePath> ParseJsonModule(const std::string& item) {
  const nlohmann::json parsed = nlohmann::json::parse(item, nullptr, /*allow_exceptions=*/false);
  if (parsed.is_discarded()) return Error{"Invalid JSON format for --lora-modules: " + item};
  auto invalid = [&item](const std::string& why) {
    return Error{"Invalid fields for --lora-modules: " + item + " - " + why};
  };
  if (!parsed.is_object()) return invalid("expected a JSON object");
  server::LoraModulePath module;
  for (const auto& [key, value] : parsed.items()) {
    std::string* field = key == "name"              ? &module.name
                         : key == "path"            ? &module.path
                         : key == "base_model_name" ? &module.base_model_name
                                                    : nullptr;
    if (field == nullptr) return invalid("unexpected keyword argument '" + key + "'");
    if (key == "base_model_name" && value.is_null()) continue;
    if (!value.is_string()) return invalid("'" + key + "' must be a string");
    *field = value.get<std::string>();
  }
  for (const char* required : {"name", "path"}) {
    if (!parsed.contains(required)) {
      return invalid("missing required argument: '" + std::string(required) + "'");
    }
  }
  return module;
}

}  // namespace

void AddLoraEngineOptions(CLI::App& command, EngineArgs& args) {
  command.add_flag("--enable-lora,!--no-enable-lora", args.enable_lora,
                   "Serve LoRA adapters: a request names one in \"model\" (--lora-modules, "
                   "/v1/load_lora_adapter, Python's lora_request)");
  command.add_option("--max-loras", args.max_loras, "Most distinct LoRA adapters in one step")
      ->capture_default_str();
  command
      .add_option("--max-lora-rank", args.max_lora_rank,
                  "Highest LoRA rank accepted: 1, 8, 16, 32, 64, 128, 256, 320 or 512")
      ->capture_default_str();
  command.add_option("--max-cpu-loras", args.max_cpu_loras,
                     "LoRA adapters kept loaded, least recently used evicted (default: "
                     "--max-loras)");
  command
      .add_option_function<std::string>(
          "--lora-dtype",
          [&args](const std::string& dtype) {
            args.lora_dtype = dtype;
            if (dtype != "auto" && dtype != "float32") {
              VLLM_LOG(kInfo) << "--lora-dtype " << dtype
                              << ": the LoRA product runs in float32 here";
            }
          },
          "LoRA weights' dtype: auto|float16|bfloat16|float32 (the product runs in float32 "
          "whatever it says)")
      ->check(CLI::IsMember({"auto", "float16", "bfloat16", "float32"}))
      ->default_str("auto");
}

Expected<std::vector<server::LoraModulePath>> ParseLoraModules(
    const std::vector<std::string>& items) {
  std::vector<server::LoraModulePath> modules;
  for (const std::string& item : items) {
    if (item.empty()) continue;
    // name=path (vLLM's older form) when there is an '=' and no ',', as vLLM tells them apart.
    if (const size_t equals = item.find('=');
        equals != std::string::npos && item.find(',') == std::string::npos) {
      modules.push_back({.name = item.substr(0, equals), .path = item.substr(equals + 1)});
      continue;
    }
    auto module = ParseJsonModule(item);
    if (!module) return Error{module.error()};
    modules.push_back(std::move(*module));
  }
  return modules;
}

}  // namespace vllm
