// The routes' refusals under --skip-tokenizer-init (no tokenizer loaded), with vLLM's messages
// where it has them: completions take token-id prompts and return token ids with empty text.
#pragma once

#include <optional>

#include "server/openai/api_error.h"
#include "server/openai/generation_request.h"

namespace vllm::server {

// vLLM's refusal of a route that needs the tokenizer (chat, /tokenize, /detokenize).
inline constexpr const char* kTokenizerNotAvailable =
    "Tokenizer not available when `skip_tokenizer_init=True`";

// A completion request's fields that need text: structured outputs, stop strings, bad words,
// echo, logprobs, prompt_logprobs and beam search are each a 400 naming the field.
std::optional<ApiError> CheckCompletionWithoutTokenizer(const GenerationRequest& request);

}  // namespace vllm::server
