// vLLM's `prompt_embeds` field of /v1/completions (--enable-prompt-embeds): the base64 of a
// torch.save'd (seq_len, hidden_size) tensor, or a list of them. Each becomes a prompt of its
// own, placed before the text or token-id prompts, as vLLM orders them.
#pragma once

#include <optional>
#include <vector>

#include "server/openai/api_error.h"
#include "server/openai/generation_job.h"
#include "server/openai/generation_request.h"
#include "server/openai/json.h"
#include "server/serving_context.h"

namespace vllm::server {

// Appends one input per tensor of body["prompt_embeds"] to `inputs` (none when the field is
// absent or null); a 400 when the server was started without --enable-prompt-embeds, or for
// bad base64, a file that is not one saved tensor, or a tensor not of shape (seq_len, hidden).
std::optional<ApiError> ParsePromptEmbeds(const ServingContext& context, const Json& body,
                                          const GenerationRequest& request,
                                          std::vector<PromptInputs>* inputs);

}  // namespace vllm::server
