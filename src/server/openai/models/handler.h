// GET /v1/models: the served model under each of its names, then the LoRA adapters loaded.
#pragma once

#include "server/http_session.h"
#include "server/openai/json.h"
#include "server/openai/prompt_inputs.h"
#include "server/serving_context.h"

namespace vllm::server {

// Answers at once, on the connection's strand: {"object": "list", "data": [{id, object "model",
// created, owned_by "vllm", root (the model path), parent null, max_model_len}]}; an adapter's
// card has its path as root, its base as parent and max_model_len null.
void HandleModels(ServingContext& context, const RequestMeta& meta,
                  const std::shared_ptr<ResponseWriter>& writer, const Json& body);

}  // namespace vllm::server
