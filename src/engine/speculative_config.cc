#include "engine/speculative_config.h"

#include <string>

namespace vllm {
namespace {

constexpr int kDefaultPromptLookup = 5;  // vLLM's default for both bounds

// vLLM's method names, with "[ngram]" and a bare `model` resolved.
std::string MethodOf(const SpeculativeConfig& config) {
  if (config.method == "[ngram]") return "ngram";
  if (!config.method.empty()) return config.method;
  if (config.model == "ngram" || config.model == "[ngram]") return "ngram";
  return config.model.empty() ? "" : "draft_model";
}

}  // namespace

Expected<NgramProposer::Options> ResolveSpeculativeConfig(const SpeculativeConfig& config) {
  const std::string method = MethodOf(config);
  if (method.empty()) {
    return Error{"--speculative-config needs a \"method\" (supported: \"ngram\")"};
  }
  if (method == "draft_model") {
    return Error{
        "--speculative-config: method \"draft_model\" is not implemented yet; "
        "supported: \"ngram\" (prompt lookup)"};
  }
  if (method != "ngram") {
    return Error{"--speculative-config: method \"" + method +
                 "\" is not supported; supported: \"ngram\" (prompt lookup)"};
  }
  if (config.num_speculative_tokens <= 0) {
    return Error{"--speculative-config: num_speculative_tokens must be > 0, got " +
                 std::to_string(config.num_speculative_tokens)};
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
  if (lookup_min > lookup_max) {
    return Error{"--speculative-config: prompt_lookup_min=" + std::to_string(lookup_min) +
                 " must be <= prompt_lookup_max=" + std::to_string(lookup_max)};
  }
  return NgramProposer::Options{.num_speculative_tokens = config.num_speculative_tokens,
                                .prompt_lookup_min = lookup_min,
                                .prompt_lookup_max = lookup_max};
}

}  // namespace vllm
