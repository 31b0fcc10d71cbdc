// POST /v1/embeddings.
#pragma once

#include "server/http_session.h"
#include "server/openai/json.h"
#include "server/openai/prompt_inputs.h"
#include "server/serving_context.h"

namespace vllm::server {

// Runs on a request worker: every input goes to the engine as an "embed" pooling request (they
// batch with whatever else is running); the response is posted once all are done. 400 with
// vLLM's message when the model serves no embeddings.
void HandleEmbeddings(ServingContext& context, const RequestMeta& meta,
                      const std::shared_ptr<ResponseWriter>& writer, const Json& body);

}  // namespace vllm::server
