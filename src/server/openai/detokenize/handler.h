// POST /detokenize (vLLM's extension): token ids to text.
#pragma once

#include "server/http_session.h"
#include "server/openai/json.h"
#include "server/openai/prompt_inputs.h"
#include "server/serving_context.h"

namespace vllm::server {

// Runs on a request worker: {"tokens": [ids]} → {"prompt": text, special tokens kept}; 400 for
// an id outside the vocabulary.
void HandleDetokenize(ServingContext& context, const RequestMeta& meta,
                      const std::shared_ptr<ResponseWriter>& writer, const Json& body);

}  // namespace vllm::server
