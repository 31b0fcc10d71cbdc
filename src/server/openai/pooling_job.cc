#include "server/openai/pooling_job.h"

#include <chrono>
#include <limits>
#include <mutex>

#include "server/openai/generation_request.h"
#include "server/openai/prompt_inputs.h"
#include "server/worker_reply.h"

namespace vllm::server {
namespace {

// A JSON array of token ids (each an int32 ≥ 0) → the ids; nullopt when it is not one.
std::optional<std::vector<int32_t>> TokenArray(const Json& value) {
  if (!value.is_array() || value.empty()) return std::nullopt;
  std::vector<int32_t> ids;
  for (const Json& id : value) {
    if (!id.is_number_integer() || id.get<int64_t>() < 0 ||
        id.get<int64_t>() > std::numeric_limits<int32_t>::max()) {
      return std::nullopt;
    }
    ids.push_back(static_cast<int32_t>(id.get<int64_t>()));
  }
  return ids;
}

// The outputs of one HTTP request's engine requests, gathered on the engine thread.
struct PendingOutputs {
  std::mutex mutex;
  std::vector<PoolingRequestOutput> outputs;  // in input order
  size_t num_remaining = 0;
  std::optional<ApiError> error;  // the first failure
};

}  // namespace

Expected<std::vector<AsyncLLM::PoolingInput>> ParsePoolingInputs(const Json& body,
                                                                 const char* field,
                                                                 ApiError* error) {
  const std::string name = field;
  auto fail = [&](const std::string& message) -> Expected<std::vector<AsyncLLM::PoolingInput>> {
    *error = ApiError::BadRequest(message, name);
    return Error{message};
  };
  auto input = body.find(field);
  if (input == body.end() || input->is_null()) return fail(name + ": Field required");
  const std::string malformed = name +
                                ": Input should be a string, a list of strings, a list of token "
                                "ids or a list of lists of token ids";
  std::vector<AsyncLLM::PoolingInput> inputs;
  if (input->is_string()) {
    inputs.emplace_back(input->get<std::string>());
  } else if (auto ids = TokenArray(*input)) {
    inputs.emplace_back(std::move(*ids));
  } else if (input->is_array() && !input->empty()) {
    for (const Json& item : *input) {
      if (item.is_string()) {
        inputs.emplace_back(item.get<std::string>());
      } else if (auto item_ids = TokenArray(item)) {
        inputs.emplace_back(std::move(*item_ids));
      } else {
        return fail(malformed);
      }
    }
  } else {
    return fail(malformed);
  }
  return inputs;
}

std::optional<ApiError> CheckPoolingRoute(const ServingContext& context, const Json& body,
                                          const std::string& task, const std::string& api_name,
                                          std::string* model,
                                          std::optional<LoraRequest>* lora_request) {
  auto requested = GetString(body, "model");
  if (!requested.ok()) return ApiError::BadRequest(requested.error(), "model");
  const std::string name = requested->value_or("");
  if (!context.ResolveModel(name, lora_request)) {
    return ApiError::NotFound("The model `" + name + "` does not exist.");
  }
  const std::vector<std::string> tasks = context.engine.pooling_tasks();
  if (std::find(tasks.begin(), tasks.end(), task) == tasks.end()) {
    return ApiError::BadRequest("The model does not support " + api_name + " API");
  }
  *model = context.ResponseModelName(*lora_request);
  return std::nullopt;
}

Expected<PoolingParams> ParsePoolingParams(const Json& body, ApiError* error) {
  PoolingParams params;
  for (const auto& [name, field] :
       {std::pair<const char*, std::optional<int64_t>*>{"dimensions", &params.dimensions},
        {"truncate_prompt_tokens", &params.truncate_prompt_tokens}}) {
    auto value = GetInt(body, name);
    if (!value.ok()) {
      *error = ApiError::BadRequest(value.error(), name);
      return Error{value.error()};
    }
    *field = *value;
  }
  for (const auto& [name, field] :
       {std::pair<const char*, std::optional<bool>*>{"normalize", &params.normalize},
        {"use_activation", &params.use_activation},
        {"activation", &params.use_activation}}) {
    auto value = GetBool(body, name);
    if (!value.ok()) {
      *error = ApiError::BadRequest(value.error(), name);
      return Error{value.error()};
    }
    if (value->has_value()) *field = *value;
  }
  return params;
}

ResponseStamp MakeResponseStamp(const RequestMeta& meta, const char* prefix) {
  return {.id = MakeResponseId(meta, GenerationRequest{}, prefix),
          .created = std::chrono::duration_cast<std::chrono::seconds>(
                         std::chrono::system_clock::now().time_since_epoch())
                         .count()};
}

Json PoolingListResponse(const ResponseStamp& stamp, const std::string& model, Json data,
                         const std::vector<PoolingRequestOutput>& outputs) {
  int64_t num_prompt_tokens = 0;
  for (const PoolingRequestOutput& output : outputs) {
    num_prompt_tokens += static_cast<int64_t>(output.prompt_token_ids.size());
  }
  return {{"id", stamp.id},
          {"object", "list"},
          {"created", stamp.created},
          {"model", model},
          {"data", std::move(data)},
          {"usage",
           {{"prompt_tokens", num_prompt_tokens},
            {"total_tokens", num_prompt_tokens},
            {"completion_tokens", 0},
            {"prompt_tokens_details", nullptr}}}};
}

void RunPoolingJob(ServingContext& context, const std::shared_ptr<ResponseWriter>& writer,
                   const std::string& id, std::vector<AsyncLLM::PoolingInput> inputs,
                   const std::string& task, const PoolingParams& params,
                   const std::optional<LoraRequest>& lora_request, PoolingRespond respond) {
  if (auto too_many = CheckSequenceCount(context, inputs.size(), 1)) {
    return PostError(writer, *too_many);
  }
  auto pending = std::make_shared<PendingOutputs>();
  pending->outputs.resize(inputs.size());
  pending->num_remaining = inputs.size();
  auto shared_respond = std::make_shared<PoolingRespond>(std::move(respond));
  for (size_t i = 0; i < inputs.size(); ++i) {
    auto done = [pending, i, writer, shared_respond](const PoolingRequestOutput* output,
                                                     const std::string& message, bool rejected) {
      std::lock_guard<std::mutex> lock(pending->mutex);
      if (output != nullptr) {
        pending->outputs[i] = *output;
      } else if (!pending->error) {
        pending->error = rejected ? ApiError::BadRequest(message) : ApiError::Internal(message);
      }
      if (--pending->num_remaining > 0) return;
      if (pending->error) return PostError(writer, *pending->error);
      PostResponse(writer, http::status::ok, "application/json",
                   DumpJson((*shared_respond)(pending->outputs)));
    };
    const std::string request_id = id + "-" + std::to_string(i);
    auto* pair = std::get_if<std::pair<std::string, std::string>>(&inputs[i]);
    if (task == "score" && pair != nullptr) {
      context.engine.SubmitScore(request_id, std::move(*pair), params, std::move(done),
                                 lora_request);
    } else {
      context.engine.SubmitPooling(request_id, std::move(inputs[i]), task, params, std::move(done),
                                   lora_request);
    }
  }
}

}  // namespace vllm::server
