// POST /classify: vLLM's classification API over a sequence-classification model.
#pragma once

#include "server/http_session.h"
#include "server/openai/json.h"
#include "server/openai/prompt_inputs.h"
#include "server/serving_context.h"

namespace vllm::server {

// Runs on a request worker; each input is a "classify" request, answered once all are done: data
// [{index, label (id2label of the top class), probs, num_classes}] and usage. 400 when the model
// has no classification head.
void HandleClassify(ServingContext& context, const RequestMeta& meta,
                    const std::shared_ptr<ResponseWriter>& writer, const Json& body);

}  // namespace vllm::server
