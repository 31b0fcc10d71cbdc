// POST /score and /v1/score: vLLM's score API (text_1 against text_2: 1:1, 1:N or N:N).
#pragma once

#include "server/http_session.h"
#include "server/openai/json.h"
#include "server/openai/prompt_inputs.h"
#include "server/serving_context.h"

namespace vllm::server {

// Runs on a request worker: one "score" request per pair (a cross-encoder's head, or the cosine of
// two embeddings); data [{index, object "score", score}] and usage.
void HandleScore(ServingContext& context, const RequestMeta& meta,
                 const std::shared_ptr<ResponseWriter>& writer, const Json& body);

}  // namespace vllm::server
