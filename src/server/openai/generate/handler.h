// POST /generate: vLLM's simple API (vllm/entrypoints/api_server.py). The body is {"prompt",
// "stream", and SamplingParams' fields, with SamplingParams' own defaults (not the model's)};
// the answer is {"text": [prompt + output, one per n]}, or with stream, one such JSON object per
// line as the outputs grow (each line holds the whole text so far).
#pragma once

#include <memory>

#include "server/http_session.h"
#include "server/openai/json.h"
#include "server/openai/prompt_inputs.h"
#include "server/serving_context.h"

namespace vllm::server {

// Runs on a request worker; answers (or starts the job) on the connection's strand.
void HandleGenerate(ServingContext& context, const RequestMeta& meta,
                    const std::shared_ptr<ResponseWriter>& writer, const Json& body);

}  // namespace vllm::server
