#include "server/openai/embeddings/handler.h"

#include "server/openai/embeddings/protocol.h"
#include "server/openai/pooling_job.h"
#include "server/worker_reply.h"

namespace vllm::server {

void HandleVectorRoute(ServingContext& context, const RequestMeta& meta,
                       const std::shared_ptr<ResponseWriter>& writer, const Json& body,
                       const VectorRoute& route) {
  std::string model;
  std::optional<LoraRequest> lora_request;
  if (auto error =
          CheckPoolingRoute(context, body, route.task, route.name, &model, &lora_request)) {
    return PostError(writer, *error);
  }
  ApiError error;
  auto request = ParseEmbeddingsRequest(body, &error);
  if (!request.ok()) return PostError(writer, error);
  const ResponseStamp stamp = MakeResponseStamp(meta, route.id_prefix);
  const bool base64 = request->base64;
  RunPoolingJob(context, writer, stamp.id, std::move(request->inputs), route.task, request->params,
                lora_request,
                [stamp, model, base64, route](const std::vector<PoolingRequestOutput>& outputs) {
                  return VectorListResponse(stamp, model, outputs, base64, route.object,
                                            route.field);
                });
}

void HandleEmbeddings(ServingContext& context, const RequestMeta& meta,
                      const std::shared_ptr<ResponseWriter>& writer, const Json& body) {
  HandleVectorRoute(context, meta, writer, body,
                    {.task = "embed",
                     .name = "Embeddings",
                     .id_prefix = "embd",
                     .object = "embedding",
                     .field = "embedding"});
}

}  // namespace vllm::server
