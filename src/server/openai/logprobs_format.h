// Logprobs in the OpenAI shapes vLLM emits: completions' {tokens, token_logprobs, top_logprobs,
// text_offset}, chat's content[] of {token, logprob, bytes, top_logprobs}, and prompt_logprobs.
#pragma once

#include <optional>
#include <vector>

#include "server/openai/json.h"
#include "tokenizer/tokenizer.h"
#include "vllm/outputs.h"

namespace vllm::server {

// Per position: the sampled token first, then the others by rank (vLLM's dict order).
std::vector<std::pair<int32_t, const Logprob*>> OrderedLogprobs(const PositionLogprobs& position,
                                                                int32_t sampled_token_id);

// Completions' logprobs for `token_ids` (a position without logprobs, the first prompt token,
// has null logprobs). Offsets count characters from `initial_text_offset`. With `tokens_as_ids`
// (vLLM's return_tokens_as_token_ids) tokens are named "token_id:<id>" instead of by their text.
Json CompletionLogprobs(const Tokenizer& tokenizer, const std::vector<int32_t>& token_ids,
                        const std::vector<std::optional<PositionLogprobs>>& logprobs,
                        int num_top_logprobs, int64_t initial_text_offset, bool tokens_as_ids);

// Chat's {"content": [...]} for generated tokens.
Json ChatLogprobs(const std::vector<int32_t>& token_ids,
                  const std::vector<PositionLogprobs>& logprobs, int num_top_logprobs,
                  bool tokens_as_ids);

// vLLM's prompt_logprobs: null for the first token, then {"<id>": {logprob, rank,
// decoded_token}} per position.
Json PromptLogprobs(const std::vector<std::optional<PositionLogprobs>>& logprobs);

// Characters (code points) in UTF-8 text, as Python's len() counts them.
int64_t CountCharacters(std::string_view text);

}  // namespace vllm::server
