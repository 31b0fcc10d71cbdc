#include "model/registry.h"

#include "dist/communicator.h"

namespace vllm {

const std::vector<const Architecture*>& Architectures() {
  static const std::vector<const Architecture*> architectures = {
      &kLlamaArchitecture,      &kQwen2Architecture,          &kQwen3Architecture,
      &kQwen3MoeArchitecture,   &kPhi3Architecture,           &kGemma2Architecture,
      &kGemma3Architecture,     &kGptOssArchitecture,         &kBertArchitecture,
      &kXlmRobertaArchitecture, &kGemmaEmbeddingArchitecture,
  };
  return architectures;
}

const Architecture* FindArchitecture(const std::string& name) {
  for (const Architecture* architecture : Architectures()) {
    if (architecture->name == name) return architecture;
  }
  return nullptr;
}

const Architecture* FindHfArchitecture(const std::string& hf_name) {
  for (const Architecture* architecture : Architectures()) {
    for (const std::string& name : architecture->hf_names) {
      if (name == hf_name) return architecture;
    }
  }
  return nullptr;
}

std::string SupportedArchitectureNames(bool hf) {
  std::string names;
  for (const Architecture* architecture : Architectures()) {
    for (const std::string& name :
         hf ? architecture->hf_names : std::vector<std::string>{architecture->name}) {
      names += (names.empty() ? "" : ", ") + name;
    }
  }
  return names;
}

Expected<std::unique_ptr<Model>> LoadModel(const TensorSource& source, const ModelConfig& config,
                                           const ModelLoadOptions& options) {
  if (options.pool == nullptr) return Error{"loading a model needs a thread pool"};
  VLLM_RETURN_IF_ERROR(config.Validate());
  const Architecture* architecture = FindArchitecture(config.architecture);
  if (architecture == nullptr) {
    return Error{"unsupported architecture '" + config.architecture +
                 "' (supported: " + SupportedArchitectureNames(false) + ")"};
  }
  ModelConfig flagged = config;
  ApplyPoolerConfigFlag(options.pooler_config_flag, &flagged.pooler);
  const bool split =
      (options.tensor_parallel != nullptr && options.tensor_parallel->size() > 1) ||
      (options.pipeline_parallel != nullptr && options.pipeline_parallel->size() > 1);
  if (split && (flagged.is_encoder || flagged.bidirectional_attention ||
                flagged.pooler.is_pooling_checkpoint || flagged.num_labels > 0 ||
                !flagged.pooler.classifier_token_ids.empty())) {
    return Error{"pooling model " + config.architecture +
                 " with tensor or pipeline parallel is not supported yet"};
  }
  return architecture->create(source, flagged, options);
}

Expected<std::unique_ptr<Model>> LoadModelFromGguf(const GgufFile& file,
                                                   const ModelLoadOptions& options) {
  auto config = ModelConfigFromGguf(file);
  if (!config) return Error{config.error()};
  return LoadModel(GgufTensorSource(file), *config, options);
}

}  // namespace vllm
