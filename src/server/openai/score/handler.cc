#include "server/openai/score/handler.h"

#include "server/openai/pooling_job.h"
#include "server/worker_reply.h"

namespace vllm::server {

void HandleScore(ServingContext& context, const RequestMeta& meta,
                 const std::shared_ptr<ResponseWriter>& writer, const Json& body) {
  std::string model;
  std::optional<LoraRequest> lora_request;
  if (auto error = CheckPoolingRoute(context, body, "score", "Score", &model, &lora_request)) {
    return PostError(writer, *error);
  }
  auto text_1 = GetStringOrList(body, "text_1");
  if (!text_1.ok()) return PostError(writer, ApiError::BadRequest(text_1.error(), "text_1"));
  auto text_2 = GetStringOrList(body, "text_2");
  if (!text_2.ok()) return PostError(writer, ApiError::BadRequest(text_2.error(), "text_2"));
  if (!text_1->has_value() || !text_2->has_value()) {
    return PostError(writer, ApiError::BadRequest("text_1 and text_2 are required"));
  }
  const std::vector<std::string>& firsts = **text_1;
  const std::vector<std::string>& seconds = **text_2;
  if (firsts.empty() || seconds.empty() ||
      (firsts.size() != 1 && firsts.size() != seconds.size())) {
    return PostError(writer, ApiError::BadRequest("Input lengths must be either 1:1, 1:N or N:N"));
  }
  ApiError error;
  auto params = ParsePoolingParams(body, &error);
  if (!params.ok()) return PostError(writer, error);
  std::vector<AsyncLLM::PoolingInput> pairs;
  for (size_t i = 0; i < seconds.size(); ++i) {
    pairs.emplace_back(std::make_pair(firsts.size() == 1 ? firsts[0] : firsts[i], seconds[i]));
  }
  const ResponseStamp stamp = MakeResponseStamp(meta, "score");
  RunPoolingJob(
      context, writer, stamp.id, std::move(pairs), "score", *params, lora_request,
      [stamp, model](const std::vector<PoolingRequestOutput>& outputs) {
        Json data = Json::array();
        for (size_t i = 0; i < outputs.size(); ++i) {
          data.push_back(
              {{"index", i}, {"object", "score"}, {"score", outputs[i].outputs.data.at(0)}});
        }
        return PoolingListResponse(stamp, model, std::move(data), outputs);
      });
}

}  // namespace vllm::server
