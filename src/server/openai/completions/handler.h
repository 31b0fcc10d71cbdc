// POST /v1/completions.
#pragma once

#include "server/http_session.h"
#include "server/openai/json.h"
#include "server/openai/prompt_inputs.h"
#include "server/serving_context.h"

namespace vllm::server {

// Runs on a request worker; answers (or starts the job) on the connection's strand.
void HandleCompletions(ServingContext& context, const RequestMeta& meta,
                       const std::shared_ptr<ResponseWriter>& writer, const Json& body);

}  // namespace vllm::server
