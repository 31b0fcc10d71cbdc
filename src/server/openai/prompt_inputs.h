// Turns a request's prompts into engine inputs: tokenized, truncated, checked against the
// vocabulary and the context length, each with its own max_tokens.
#pragma once

#include <optional>
#include <string>
#include <variant>
#include <vector>

#include "server/http_session.h"
#include "server/openai/api_error.h"
#include "server/openai/generation_job.h"
#include "server/openai/generation_request.h"
#include "server/serving_context.h"

namespace vllm::server {

// A prompt as text (tokenized with add_special_tokens as the request says) or as token ids.
std::optional<ApiError> PreparePrompt(const ServingContext& context,
                                      const GenerationRequest& request,
                                      const std::variant<std::string, std::vector<int32_t>>& prompt,
                                      PromptInputs* inputs);

// What a route's worker needs of the HTTP request besides its body.
struct RequestMeta {
  std::optional<std::string> request_id_header;  // X-Request-Id
  std::vector<std::string> path_params;          // the route path's {…} segments, in order
  std::string query;                             // the target after its '?'; empty when none
};

// The 400 for a request that would start more than limits.max_sequences sequences.
std::optional<ApiError> CheckSequenceCount(const ServingContext& context, size_t num_prompts,
                                           int n);

// The checks every generation route makes first: the model name (the base's, or a LoRA
// adapter's, which is set in request->options.lora_request) and the token ids named in the
// sampling parameters.
std::optional<ApiError> CheckModelAndTokenIds(const ServingContext& context,
                                              GenerationRequest* request);

// "<prefix>-<id>": the X-Request-Id header when given, else the body's "request_id", else 32
// random hex digits (vLLM's order).
std::string MakeResponseId(const RequestMeta& meta, const GenerationRequest& request,
                           const char* prefix);

// The "stop_reason" field: a stop string, a stop token id, or null.
Json StopReasonJson(const CompletionOutput& output);

}  // namespace vllm::server
