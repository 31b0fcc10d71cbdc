// vLLM's structured-output request fields, read into SamplingParams::structured_outputs: the
// `structured_outputs` object, the older `guided_json` / `guided_regex` / `guided_choice` /
// `guided_grammar` fields, and OpenAI's `response_format` (json_object, json_schema).
#pragma once

#include <optional>

#include "server/openai/api_error.h"
#include "server/openai/json.h"
#include "vllm/sampling_params.h"

namespace vllm::server {

// Leaves params->structured_outputs empty when the body asks for no constraint. Only the shape
// is checked here; a schema, regex or grammar that does not compile is refused by the engine.
std::optional<ApiError> ParseStructuredOutputs(const Json& body, SamplingParams* params);

}  // namespace vllm::server
