// vLLM's structured-output request fields, read into SamplingParams::structured_outputs: the
// `structured_outputs` object, the older `guided_json` / `guided_regex` / `guided_choice` /
// `guided_grammar` fields, and OpenAI's `response_format` (json_object, json_schema).
#pragma once

#include <optional>
#include <string>
#include <string_view>

#include "server/openai/api_error.h"
#include "server/openai/json.h"
#include "vllm/sampling_params.h"

namespace vllm::server {

// Leaves params->structured_outputs empty when the body asks for no constraint. Only the shape
// is checked here; a schema, regex or grammar that does not compile is refused by the engine.
// Two fields that each set a constraint (structured_outputs and guided_regex, response_format
// json_schema and guided_json, ...) and unknown keys of `structured_outputs` are 400s naming
// them.
std::optional<ApiError> ParseStructuredOutputs(const Json& body, SamplingParams* params);

// `serve --structured-outputs-config`: the keys of vLLM's StructuredOutputsConfig that this
// server implements, for every request's JSON constraint.
struct StructuredOutputsConfig {
  bool disable_any_whitespace = false;
  bool disable_additional_properties = false;
  // A server-wide whitespace_pattern (not a key of vLLM's): e.g. "[ \n\t]*" lets JSON have
  // any whitespace between its tokens, as xgrammar's default does.
  std::optional<std::string> whitespace_pattern;
};

// The flag's JSON object: backend ("auto" or "xgrammar"), disable_fallback (accepted; there is
// one backend), disable_any_whitespace, disable_additional_properties, whitespace_pattern. An
// Error names a key that is unknown or of the wrong type.
Expected<StructuredOutputsConfig> ParseStructuredOutputsConfig(std::string_view json_text);

// Applies `config` to a request's constraint, if it has one: the disable_* flags add to the
// request's; the whitespace_pattern applies unless the request chose its whitespace.
void ApplyStructuredOutputsConfig(const StructuredOutputsConfig& config, SamplingParams* params);

}  // namespace vllm::server
