// A prompt given as embeddings instead of token ids (vLLM's EmbedsPrompt, --enable-prompt-embeds):
// one row per prompt position, each taking the place of the model's token-embedding lookup there
// (generated tokens are embedded as usual).
#pragma once

#include <cstdint>
#include <vector>

namespace vllm {

struct PromptEmbeds {
  int64_t num_tokens = 0;
  int64_t hidden_size = 0;
  std::vector<float> values;  // [num_tokens, hidden_size], row-major
};

}  // namespace vllm
