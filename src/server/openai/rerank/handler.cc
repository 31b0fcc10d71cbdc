#include "server/openai/rerank/handler.h"

#include <algorithm>
#include <numeric>

#include "server/openai/pooling_job.h"
#include "server/worker_reply.h"

namespace vllm::server {

void HandleRerank(ServingContext& context, const RequestMeta& meta,
                  const std::shared_ptr<ResponseWriter>& writer, const Json& body) {
  std::string model;
  std::optional<LoraRequest> lora_request;
  if (auto error = CheckPoolingRoute(context, body, "score", "Rerank", &model, &lora_request)) {
    return PostError(writer, *error);
  }
  auto query = GetString(body, "query");
  if (!query.ok() || !query->has_value()) {
    return PostError(writer, ApiError::BadRequest(
                                 query.ok() ? "query: Field required" : query.error(), "query"));
  }
  // Documents as strings, or as Cohere's {"text": ...} objects.
  auto documents_field = body.find("documents");
  if (documents_field == body.end() || !documents_field->is_array() || documents_field->empty()) {
    return PostError(
        writer, ApiError::BadRequest("documents: Input should be a non-empty list", "documents"));
  }
  std::vector<std::string> documents;
  for (const Json& document : *documents_field) {
    if (document.is_string()) {
      documents.push_back(document.get<std::string>());
    } else if (document.is_object() && document.contains("text") && document["text"].is_string()) {
      documents.push_back(document["text"].get<std::string>());
    } else {
      return PostError(
          writer, ApiError::BadRequest(
                      "documents: each document must be a string or {\"text\": ...}", "documents"));
    }
  }
  int64_t top_n = 0;
  if (auto error = ReadField(body, "top_n", GetInt, &top_n)) return PostError(writer, *error);
  if (top_n < 0) return PostError(writer, ApiError::BadRequest("top_n must not be negative"));
  bool return_documents = true;
  if (auto error = ReadField(body, "return_documents", GetBool, &return_documents)) {
    return PostError(writer, *error);
  }
  ApiError error;
  auto params = ParsePoolingParams(body, &error);
  if (!params.ok()) return PostError(writer, error);
  std::vector<AsyncLLM::PoolingInput> pairs;
  for (const std::string& document : documents)
    pairs.emplace_back(std::make_pair(**query, document));
  const ResponseStamp stamp = MakeResponseStamp(meta, "rerank");
  RunPoolingJob(context, writer, stamp.id, std::move(pairs), "score", *params, lora_request,
                [stamp, model, documents, top_n,
                 return_documents](const std::vector<PoolingRequestOutput>& outputs) {
                  std::vector<size_t> order(outputs.size());
                  std::iota(order.begin(), order.end(), 0);
                  // Best first; equal scores keep the documents' order.
                  std::stable_sort(order.begin(), order.end(), [&](size_t a, size_t b) {
                    return outputs[a].outputs.data.at(0) > outputs[b].outputs.data.at(0);
                  });
                  if (top_n > 0 && static_cast<size_t>(top_n) < order.size()) order.resize(top_n);
                  Json results = Json::array();
                  for (size_t i : order) {
                    Json result = {{"index", i}};
                    if (return_documents) result["document"] = {{"text", documents[i]}};
                    result["relevance_score"] = outputs[i].outputs.data.at(0);
                    results.push_back(std::move(result));
                  }
                  int64_t num_tokens = 0;
                  for (const auto& output : outputs) {
                    num_tokens += static_cast<int64_t>(output.prompt_token_ids.size());
                  }
                  return Json{{"id", stamp.id},
                              {"model", model},
                              {"usage", {{"total_tokens", num_tokens}}},
                              {"results", std::move(results)}};
                });
}

}  // namespace vllm::server
