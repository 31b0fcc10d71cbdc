// POST /rerank, /v1/rerank and /v2/rerank: vLLM's Jina / Cohere-style rerank API.
#pragma once

#include "server/http_session.h"
#include "server/openai/json.h"
#include "server/openai/prompt_inputs.h"
#include "server/serving_context.h"

namespace vllm::server {

// Runs on a request worker: the query scored against each document, results sorted by
// relevance_score (best first), the first top_n (all when absent or 0), each with its document
// unless return_documents is false.
void HandleRerank(ServingContext& context, const RequestMeta& meta,
                  const std::shared_ptr<ResponseWriter>& writer, const Json& body);

}  // namespace vllm::server
