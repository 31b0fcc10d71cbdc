#include "sampling/logprobs_mode.h"

namespace vllm {

std::optional<LogprobsMode> ParseLogprobsMode(std::string_view name) {
  if (name == "raw_logprobs") return LogprobsMode::kRawLogprobs;
  if (name == "raw_logits") return LogprobsMode::kRawLogits;
  if (name == "processed_logprobs") return LogprobsMode::kProcessedLogprobs;
  if (name == "processed_logits") return LogprobsMode::kProcessedLogits;
  return std::nullopt;
}

}  // namespace vllm
