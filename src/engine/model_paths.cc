#include "engine/model_paths.h"

#include <filesystem>

#include "engine/speculative_config.h"
#include "hub/resolve_model.h"

namespace vllm {

Expected<ModelPaths> ResolveModelPaths(const EngineArgs& args) {
  const hub::HubOptions hub_options{
      .download_dir = args.download_dir, .revision = args.revision, .token = args.hf_token};
  ModelPaths paths;
  auto model = hub::ResolveModel(args.model, hub_options);
  if (!model) return Error{model.error()};
  paths.model = *model;
  paths.tokenizer = paths.model;
  if (!args.tokenizer.empty() &&
      (args.tokenizer != args.model || !args.tokenizer_revision.empty())) {
    hub::HubOptions tokenizer_options = hub_options;
    if (!args.tokenizer_revision.empty()) tokenizer_options.revision = args.tokenizer_revision;
    tokenizer_options.part = hub::RepoPart::kTokenizer;
    auto tokenizer = hub::ResolveModel(args.tokenizer, tokenizer_options);
    if (!tokenizer) return Error{"--tokenizer: " + tokenizer.error()};
    paths.tokenizer = *tokenizer;
  }
  if (!args.hf_config_path.empty()) {
    // vLLM reads the config at --revision too; a repo's config.json comes with its tokenizer
    // files, without the weights.
    hub::HubOptions config_options = hub_options;
    config_options.part = hub::RepoPart::kTokenizer;
    auto config = hub::ResolveModel(args.hf_config_path, config_options);
    if (!config) return Error{"--hf-config-path: " + config.error()};
    std::error_code error;
    if (!std::filesystem::is_regular_file(std::filesystem::path(*config) / "config.json", error)) {
      return Error{"--hf-config-path " + args.hf_config_path + ": no config.json in " + *config};
    }
    paths.hf_config = *config;
  }
  if (args.speculative_config) {
    auto method = ResolveSpeculativeConfig(*args.speculative_config);
    if (method && !method->draft_model.empty()) {
      hub::HubOptions draft_options = hub_options;
      draft_options.revision.clear();
      auto draft = hub::ResolveModel(method->draft_model, draft_options);
      if (!draft) return Error{"--speculative-config: draft model: " + draft.error()};
      paths.draft_model = *draft;
    }
  }
  return paths;
}

}  // namespace vllm
