// POST /v1/responses, GET /v1/responses/{id} and POST /v1/responses/{id}/cancel: OpenAI's
// Responses API over the chat route's machinery (protocol.h), its stream events
// (output_items.h) and the response store (store.h).
#pragma once

#include <memory>

#include "server/http_session.h"
#include "server/openai/json.h"
#include "server/openai/prompt_inputs.h"
#include "server/serving_context.h"

namespace vllm::server {

// Runs on a request worker; answers (or starts the job) on the connection's strand. With
// background, answers at once with the queued response while the request runs on.
void HandleCreateResponse(ServingContext& context, const RequestMeta& meta,
                          const std::shared_ptr<ResponseWriter>& writer, const Json& body);

// The stored response meta.path_params[0] names; 404 when the store does not hold it.
void HandleRetrieveResponse(ServingContext& context, const RequestMeta& meta,
                            const std::shared_ptr<ResponseWriter>& writer, const Json& body);

// Cancels a background response: marks it cancelled and aborts its engine request (which
// frees its KV blocks); 400 for one that is not running in the background.
void HandleCancelResponse(ServingContext& context, const RequestMeta& meta,
                          const std::shared_ptr<ResponseWriter>& writer, const Json& body);

}  // namespace vllm::server
