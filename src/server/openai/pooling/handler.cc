#include "server/openai/pooling/handler.h"

#include "server/openai/embeddings/handler.h"

namespace vllm::server {

void HandlePooling(ServingContext& context, const RequestMeta& meta,
                   const std::shared_ptr<ResponseWriter>& writer, const Json& body) {
  // The same request fields as /v1/embeddings; the pooler's raw output as "data".
  HandleVectorRoute(context, meta, writer, body,
                    {.task = "encode",
                     .name = "Pooling",
                     .id_prefix = "pool",
                     .object = "pooling",
                     .field = "data"});
}

}  // namespace vllm::server
