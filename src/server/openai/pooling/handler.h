// POST /pooling: vLLM's pooling API, the pooler's raw output ("encode").
#pragma once

#include "server/http_session.h"
#include "server/openai/json.h"
#include "server/openai/prompt_inputs.h"
#include "server/serving_context.h"

namespace vllm::server {

// Runs on a request worker: data [{index, object "pooling", data}] (float or base64) and usage.
void HandlePooling(ServingContext& context, const RequestMeta& meta,
                   const std::shared_ptr<ResponseWriter>& writer, const Json& body);

}  // namespace vllm::server
