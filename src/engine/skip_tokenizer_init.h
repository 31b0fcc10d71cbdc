// --skip-tokenizer-init (vLLM's skip_tokenizer_init=True): the engine loads no tokenizer, so a
// request may use only what works on token ids. The messages are vLLM's where it has one.
#pragma once

#include <string>
#include <variant>
#include <vector>

#include "common/expected.h"
#include "vllm/sampling_params.h"

namespace vllm {

// vLLM's refusal of a text prompt without a tokenizer.
inline constexpr const char* kTextPromptWithoutTokenizer =
    "You cannot pass text prompts when `skip_tokenizer_init=True`";

// What params without a tokenizer cannot have: structured outputs, stop strings or bad words
// (both need text); the error names the first one found.
Status CheckParamsWithoutTokenizer(const SamplingParams& params);
// The same, and the prompt must be token ids.
Status CheckRequestWithoutTokenizer(const std::variant<std::string, std::vector<int32_t>>& prompt,
                                    const SamplingParams& params);

}  // namespace vllm
