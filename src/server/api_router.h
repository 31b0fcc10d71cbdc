// The OpenAI-compatible API: routes, the API key, JSON bodies, and the small routes (models,
// tokenize, detokenize, health, version, metrics). Generation routes live in openai/.
#pragma once

#include <string>

#include "server/http_session.h"
#include "server/serving_context.h"

namespace vllm::server {

struct ApiOptions {
  std::string api_key;  // empty: no key needed
};

// The handler the HTTP server calls for every request.
RequestHandler MakeApiRouter(ServingContext& context, ApiOptions options);

}  // namespace vllm::server
