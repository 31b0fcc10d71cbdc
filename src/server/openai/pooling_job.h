// What the pooling routes (/v1/embeddings, /pooling, /classify, /score, /rerank) share: their
// input field (a string, a list of strings, a token array or a list of token arrays), the check
// that the served model does the task (vLLM's 400 otherwise), and the job that submits every
// input to the engine (they batch with whatever else runs) and answers once all are done.
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "common/expected.h"
#include "server/http_session.h"
#include "server/openai/api_error.h"
#include "server/openai/json.h"
#include "server/openai/prompt_inputs.h"
#include "server/serving_context.h"
#include "vllm/async_llm.h"

namespace vllm::server {

// body[field] as pooling inputs; a 400 naming the field when absent or malformed.
Expected<std::vector<AsyncLLM::PoolingInput>> ParsePoolingInputs(const Json& body,
                                                                 const char* field,
                                                                 ApiError* error);

// The request's "model" (the base's, or a LoRA adapter's, set in *lora_request; 404 when neither)
// and `task` (400 "The model does not support <api_name> API" when the model does not do it);
// *model is the name to answer with.
std::optional<ApiError> CheckPoolingRoute(const ServingContext& context, const Json& body,
                                          const std::string& task, const std::string& api_name,
                                          std::string* model,
                                          std::optional<LoraRequest>* lora_request);

// truncate_prompt_tokens and the task's PoolingParams fields present in the body.
Expected<PoolingParams> ParsePoolingParams(const Json& body, ApiError* error);

// "<prefix>-<32 hex digits>" (or the X-Request-Id header's) and the creation time.
struct ResponseStamp {
  std::string id;
  int64_t created = 0;
};
ResponseStamp MakeResponseStamp(const RequestMeta& meta, const char* prefix);

// {"id", "object": "list", "created", "model", "data", "usage"}: the pooling routes' response,
// usage {"prompt_tokens", "total_tokens", "completion_tokens": 0, "prompt_tokens_details": null}
// over the outputs' prompts.
Json PoolingListResponse(const ResponseStamp& stamp, const std::string& model, Json data,
                         const std::vector<PoolingRequestOutput>& outputs);

// Submits one engine request per input (SubmitPooling, or SubmitScore for text pairs with task
// "score"), each with `lora_request`, then posts `respond(outputs)` (in input order) as a 200, or
// the first failure (a refusal: 400 with the engine's message).
using PoolingRespond = std::function<Json(const std::vector<PoolingRequestOutput>& outputs)>;
void RunPoolingJob(ServingContext& context, const std::shared_ptr<ResponseWriter>& writer,
                   const std::string& id, std::vector<AsyncLLM::PoolingInput> inputs,
                   const std::string& task, const PoolingParams& params,
                   const std::optional<LoraRequest>& lora_request, PoolingRespond respond);

}  // namespace vllm::server
