// POST /v1/embeddings, and the routes that share its request and response shape (/pooling).
#pragma once

#include "server/http_session.h"
#include "server/openai/json.h"
#include "server/openai/prompt_inputs.h"
#include "server/serving_context.h"

namespace vllm::server {

// A route that takes /v1/embeddings' request and answers a list of vectors.
struct VectorRoute {
  const char* task;       // the pooling task each input runs as
  const char* name;       // the route's name in errors ("Embeddings")
  const char* id_prefix;  // of the response id
  const char* object;     // each data item's "object"
  const char* field;      // the data item's field holding the vector
};

// Runs on a request worker: every input goes to the engine as a `route.task` pooling request
// (they batch with whatever else is running); the response (float or base64 vectors, usage) is
// posted once all are done. 400 with vLLM's message when the model does not serve the task.
void HandleVectorRoute(ServingContext& context, const RequestMeta& meta,
                       const std::shared_ptr<ResponseWriter>& writer, const Json& body,
                       const VectorRoute& route);

// /v1/embeddings: "embed" requests, data [{index, object "embedding", embedding}].
void HandleEmbeddings(ServingContext& context, const RequestMeta& meta,
                      const std::shared_ptr<ResponseWriter>& writer, const Json& body);

}  // namespace vllm::server
