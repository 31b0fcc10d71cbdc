#include "model/registry.h"

#include <map>

namespace vllm {
namespace {
const std::map<std::string, ModelFactory>& Registry() {
  static const std::map<std::string, ModelFactory> registry = {
      {"gemma3", CreateGemma3Model}, {"llama", CreateLlamaModel},       {"qwen2", CreateLlamaModel},
      {"qwen3", CreateLlamaModel},   {"qwen3moe", CreateQwen3MoeModel}, {"phi3", CreatePhi3Model},
  };
  return registry;
}
}  // namespace

const ModelFactory* FindModelFactory(const std::string& architecture) {
  auto it = Registry().find(architecture);
  return it == Registry().end() ? nullptr : &it->second;
}

std::vector<std::string> SupportedArchitectures() {
  std::vector<std::string> names;
  for (const auto& [name, factory] : Registry()) names.push_back(name);
  return names;
}

Expected<std::unique_ptr<Model>> LoadModel(const TensorSource& source, const ModelConfig& config,
                                           const ModelLoadOptions& options) {
  if (options.pool == nullptr) return Error{"loading a model needs a thread pool"};
  VLLM_RETURN_IF_ERROR(config.Validate());
  const ModelFactory* factory = FindModelFactory(config.architecture);
  if (factory == nullptr) {
    std::string supported;
    for (const auto& name : SupportedArchitectures()) {
      supported += (supported.empty() ? "" : ", ") + name;
    }
    return Error{"unsupported architecture '" + config.architecture + "' (supported: " + supported +
                 ")"};
  }
  return (*factory)(source, config, options);
}

Expected<std::unique_ptr<Model>> LoadModelFromGguf(const GgufFile& file,
                                                   const ModelLoadOptions& options) {
  auto config = ModelConfigFromGguf(file);
  if (!config) return Error{config.error()};
  return LoadModel(GgufTensorSource(file), *config, options);
}

}  // namespace vllm
