// vLLM's --logprobs-mode: what a sampled token's logprobs are computed from.
#pragma once

#include <optional>
#include <string_view>

namespace vllm {

enum class LogprobsMode {
  kRawLogprobs,        // log_softmax of the model's logits, before any processing (vLLM's default)
  kRawLogits,          // the model's logits themselves
  kProcessedLogprobs,  // log_softmax of the logits the sampler draws from (see Sampler::Process)
  kProcessedLogits,    // those logits themselves
};

// "raw_logprobs", "raw_logits", "processed_logprobs" or "processed_logits"; nullopt otherwise.
std::optional<LogprobsMode> ParseLogprobsMode(std::string_view name);

inline bool IsRaw(LogprobsMode mode) {
  return mode == LogprobsMode::kRawLogprobs || mode == LogprobsMode::kRawLogits;
}
inline bool ReturnsLogits(LogprobsMode mode) {
  return mode == LogprobsMode::kRawLogits || mode == LogprobsMode::kProcessedLogits;
}

}  // namespace vllm
