#include "server/openai/pooling/handler.h"

#include "server/openai/embeddings/protocol.h"
#include "server/openai/pooling_job.h"
#include "server/worker_reply.h"

namespace vllm::server {

void HandlePooling(ServingContext& context, const RequestMeta& meta,
                   const std::shared_ptr<ResponseWriter>& writer, const Json& body) {
  std::string model;
  if (auto error = CheckPoolingRoute(context, body, "encode", "Pooling", &model)) {
    return PostError(writer, *error);
  }
  ApiError error;
  // The same fields as /v1/embeddings.
  auto request = ParseEmbeddingsRequest(body, &error);
  if (!request.ok()) return PostError(writer, error);
  const ResponseStamp stamp = MakeResponseStamp(meta, "pool");
  const bool base64 = request->base64;
  RunPoolingJob(context, writer, stamp.id, std::move(request->inputs), "encode", request->params,
                [stamp, model, base64](const std::vector<PoolingRequestOutput>& outputs) {
                  return VectorListResponse(stamp, model, outputs, base64, "pooling", "data");
                });
}

}  // namespace vllm::server
