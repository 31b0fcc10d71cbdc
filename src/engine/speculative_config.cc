#include "engine/speculative_config.h"

#include <string>

namespace vllm {
namespace {

constexpr int kDefaultPromptLookup = 5;  // vLLM's default for both bounds
constexpr const char* kSupported = "\"ngram\" (prompt lookup), \"draft_model\"";

// vLLM's method names, with "[ngram]" and a bare `model` resolved.
std::string MethodOf(const SpeculativeConfig& config) {
  if (config.method == "[ngram]") return "ngram";
  if (!config.method.empty()) return config.method;
  if (config.model == "ngram" || config.model == "[ngram]") return "ngram";
  return config.model.empty() ? "" : "draft_model";
}

}  // namespace

Expected<SpeculativeMethod> ResolveSpeculativeConfig(const SpeculativeConfig& config) {
  const std::string method = MethodOf(config);
  if (method.empty()) {
    return Error{"--speculative-config needs a \"method\" (supported: " + std::string(kSupported) +
                 ")"};
  }
  if (method != "ngram" && method != "draft_model") {
    return Error{"--speculative-config: method \"" + method +
                 "\" is not supported; supported: " + kSupported};
  }
  if (config.num_speculative_tokens <= 0) {
    return Error{"--speculative-config: num_speculative_tokens must be > 0, got " +
                 std::to_string(config.num_speculative_tokens)};
  }
  if (config.num_speculative_tokens > kMaxNumSpeculativeTokens) {
    return Error{"--speculative-config: num_speculative_tokens must be at most " +
                 std::to_string(kMaxNumSpeculativeTokens) + " (longer drafts are almost never " +
                 "accepted whole), got " + std::to_string(config.num_speculative_tokens)};
  }
  if (method == "draft_model") {
    if (config.model.empty()) {
      return Error{
          "--speculative-config: method \"draft_model\" needs \"model\": the draft model's path"};
    }
    return SpeculativeMethod{.num_speculative_tokens = config.num_speculative_tokens,
                             .draft_model = config.model};
  }
  const int lookup_min =
      config.prompt_lookup_min.value_or(config.prompt_lookup_max.value_or(kDefaultPromptLookup));
  const int lookup_max = config.prompt_lookup_max.value_or(lookup_min);
  if (lookup_min < 1) {
    return Error{"--speculative-config: prompt_lookup_min=" + std::to_string(lookup_min) +
                 " must be > 0"};
  }
  if (lookup_max < 1) {
    return Error{"--speculative-config: prompt_lookup_max=" + std::to_string(lookup_max) +
                 " must be > 0"};
  }
  if (lookup_max > kMaxPromptLookup) {
    return Error{"--speculative-config: prompt_lookup_max=" + std::to_string(lookup_max) +
                 " must be <= " + std::to_string(kMaxPromptLookup)};
  }
  if (lookup_min > lookup_max) {
    return Error{"--speculative-config: prompt_lookup_min=" + std::to_string(lookup_min) +
                 " must be <= prompt_lookup_max=" + std::to_string(lookup_max)};
  }
  return SpeculativeMethod{
      .num_speculative_tokens = config.num_speculative_tokens,
      .ngram = NgramProposer::Options{.num_speculative_tokens = config.num_speculative_tokens,
                                      .prompt_lookup_min = lookup_min,
                                      .prompt_lookup_max = lookup_max}};
}

Status CheckDraftModel(const ModelConfig& target, const ModelConfig& draft, int64_t max_model_len) {
  if (draft.vocab_size != target.vocab_size) {
    return Error{"--speculative-config: the draft model's vocabulary size (" +
                 std::to_string(draft.vocab_size) + ") differs from the target model's (" +
                 std::to_string(target.vocab_size) + "); a draft model must share its vocabulary"};
  }
  if (draft.is_encoder) {
    return Error{"--speculative-config: the draft model (" + draft.architecture +
                 ") is an encoder, not a generative model"};
  }
  const int64_t draft_max_model_len = draft.DerivedMaxModelLen();
  if (draft_max_model_len < max_model_len) {
    return Error{"--speculative-config: the draft model's max_model_len (" +
                 std::to_string(draft_max_model_len) + ") is less than the engine's (" +
                 std::to_string(max_model_len) + "); lower --max-model-len"};
  }
  return Status::Ok();
}

}  // namespace vllm
