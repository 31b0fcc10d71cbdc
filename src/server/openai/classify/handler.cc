#include "server/openai/classify/handler.h"

#include <algorithm>

#include "server/openai/pooling_job.h"
#include "server/worker_reply.h"

namespace vllm::server {

void HandleClassify(ServingContext& context, const RequestMeta& meta,
                    const std::shared_ptr<ResponseWriter>& writer, const Json& body) {
  std::string model;
  std::optional<LoraRequest> lora_request;
  if (auto error =
          CheckPoolingRoute(context, body, "classify", "Classification", &model, &lora_request)) {
    return PostError(writer, *error);
  }
  ApiError error;
  auto inputs = ParsePoolingInputs(body, "input", &error);
  if (!inputs.ok()) return PostError(writer, error);
  auto params = ParsePoolingParams(body, &error);
  if (!params.ok()) return PostError(writer, error);
  const ResponseStamp stamp = MakeResponseStamp(meta, "classify");
  const std::vector<std::string> labels = context.engine.classifier_labels();
  RunPoolingJob(context, writer, stamp.id, std::move(*inputs), "classify", *params, lora_request,
                [stamp, model, labels](const std::vector<PoolingRequestOutput>& outputs) {
                  Json data = Json::array();
                  for (size_t i = 0; i < outputs.size(); ++i) {
                    const std::vector<float>& probs = outputs[i].outputs.data;
                    const size_t top = std::max_element(probs.begin(), probs.end()) - probs.begin();
                    data.push_back({{"index", i},
                                    {"label", top < labels.size() ? labels[top]
                                                                  : "LABEL_" + std::to_string(top)},
                                    {"probs", probs},
                                    {"num_classes", probs.size()}});
                  }
                  return PoolingListResponse(stamp, model, std::move(data), outputs);
                });
}

}  // namespace vllm::server
