// The LLM calls' per-prompt adapters (vLLM's lora_request as a list): empty, every prompt on the
// base model, or one per prompt (nullopt: that prompt on the base model).
#pragma once

#include <optional>
#include <stdexcept>
#include <vector>

#include "vllm/lora_request.h"

namespace vllm {

// Throws std::invalid_argument with vLLM's message when the list is neither empty nor one per
// prompt.
inline void CheckLoraRequestsPerPrompt(const std::vector<std::optional<LoraRequest>>& lora_requests,
                                       size_t num_prompts) {
  if (!lora_requests.empty() && lora_requests.size() != num_prompts) {
    throw std::invalid_argument("The lengths of prompts and lora_request must be the same.");
  }
}

// Prompt i's adapter (CheckLoraRequestsPerPrompt passed).
inline std::optional<LoraRequest> LoraRequestOfPrompt(
    const std::vector<std::optional<LoraRequest>>& lora_requests, size_t i) {
  return lora_requests.empty() ? std::nullopt : lora_requests[i];
}

}  // namespace vllm
