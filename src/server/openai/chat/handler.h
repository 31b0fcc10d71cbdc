// POST /v1/chat/completions.
#pragma once

#include "server/http_session.h"
#include "server/openai/json.h"
#include "server/serving_context.h"

namespace vllm::server {

void HandleChatCompletions(ServingContext& context, const HttpRequest& http_request,
                           std::shared_ptr<ResponseWriter> writer, const Json& body);

}  // namespace vllm::server
