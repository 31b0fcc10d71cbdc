// POST /v1/completions: the prompt forms of the request and the shapes of the response.
#pragma once

#include <optional>
#include <string>
#include <variant>
#include <vector>

#include "server/openai/api_error.h"
#include "server/openai/json.h"

namespace vllm::server {

// A prompt as given: text, or token ids.
using CompletionPrompt = std::variant<std::string, std::vector<int32_t>>;

// Reads "prompt": a string, a list of strings, a list of token ids or a list of such lists. With
// prompt_embeds given, an absent, null or empty-string prompt adds none.
std::optional<ApiError> ParseCompletionPrompts(const Json& body,
                                               std::vector<CompletionPrompt>* prompts,
                                               bool has_prompt_embeds = false);

}  // namespace vllm::server
