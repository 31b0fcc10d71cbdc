#include "server/openai/chat/handler.h"

#include "server/openai/chat/protocol.h"
#include "server/openai/generation_job.h"
#include "server/openai/logprobs_format.h"
#include "server/openai/prompt_inputs.h"
#include "server/worker_reply.h"

namespace vllm::server {
namespace {

constexpr char kAssistant[] = "assistant";

class ChatJob : public GenerationJob {
 public:
  ChatJob(ServingContext& context, std::shared_ptr<ResponseWriter> writer, std::string id,
          GenerationRequest request, std::vector<PromptInputs> prompts, ChatPrompt chat)
      : GenerationJob(context, std::move(writer), std::move(id), std::move(request),
                      std::move(prompts)),
        chat_(std::move(chat)) {}

 private:
  // What echo puts before the reply: the last message, when it is the assistant's.
  std::string EchoText() const {
    return request_.echo && chat_.last_message_role == kAssistant ? chat_.last_message_content : "";
  }

  Json Chunk(Json choices) const {
    Json chunk = {{"id", response_id_},
                  {"object", "chat.completion.chunk"},
                  {"created", created_},
                  {"model", context_.served_model_names.front()},
                  {"choices", std::move(choices)}};
    if (request_.include_usage && request_.continuous_usage_stats) chunk["usage"] = Usage();
    return chunk;
  }

  Json LogprobsOf(const CompletionOutput& part) const {
    if (!request_.params.logprobs || !part.logprobs) return nullptr;
    return ChatLogprobs(part.token_ids, *part.logprobs, *request_.params.logprobs);
  }

  // The first chunks of a stream: the role for every choice (and the echoed message).
  void StartStream() {
    writer_->StartEventStream();
    for (int i = 0; i < request_.params.n; ++i) {
      SendEvent(Chunk(Json::array({{{"index", i},
                                    {"delta", {{"role", kAssistant}, {"content", ""}}},
                                    {"logprobs", nullptr},
                                    {"finish_reason", nullptr}}})));
      if (!EchoText().empty()) {
        SendEvent(Chunk(Json::array({{{"index", i},
                                      {"delta", {{"content", EchoText()}}},
                                      {"logprobs", nullptr},
                                      {"finish_reason", nullptr}}})));
      }
    }
  }

  void OnDelta(size_t, const RequestOutput& delta) override {
    if (!writer_->started()) StartStream();
    for (const CompletionOutput& part : delta.outputs) {
      if (part.text.empty() && part.finish_reason.empty()) continue;
      Json choice = {
          {"index", part.index},
          {"delta", {{"content", part.text}}},
          {"logprobs", LogprobsOf(part)},
          {"finish_reason", part.finish_reason.empty() ? Json(nullptr) : Json(part.finish_reason)}};
      if (part.finished()) choice["stop_reason"] = StopReasonJson(part);
      SendEvent(Chunk(Json::array({std::move(choice)})));
    }
  }

  void FinishStream() override {
    if (!writer_->started()) StartStream();
    EndStream(Chunk(Json::array()));
  }

  Json BuildResponse(const std::vector<RequestOutput>& outputs, Json usage) const override {
    const RequestOutput& output = outputs.front();
    Json choices = Json::array();
    for (const CompletionOutput& completion : output.outputs) {
      choices.push_back({{"index", completion.index},
                         {"message",
                          {{"role", kAssistant},
                           {"content", EchoText() + completion.text},
                           {"refusal", nullptr},
                           {"annotations", nullptr},
                           {"audio", nullptr},
                           {"function_call", nullptr},
                           {"tool_calls", Json::array()},
                           {"reasoning_content", nullptr}}},
                         {"logprobs", LogprobsOf(completion)},
                         {"finish_reason", completion.finish_reason},
                         {"stop_reason", StopReasonJson(completion)}});
    }
    Json response = {{"id", response_id_},
                     {"object", "chat.completion"},
                     {"created", created_},
                     {"model", context_.served_model_names.front()},
                     {"choices", std::move(choices)},
                     {"usage", std::move(usage)},
                     {"prompt_logprobs", output.prompt_logprobs && request_.params.prompt_logprobs
                                             ? PromptLogprobs(*output.prompt_logprobs)
                                             : Json(nullptr)}};
    return response;
  }

  const ChatPrompt chat_;
};

}  // namespace

void HandleChatCompletions(ServingContext& context, const RequestMeta& meta,
                           const std::shared_ptr<ResponseWriter>& writer, const Json& body) {
  auto fail = [&](const ApiError& error) { PostError(writer, error); };
  GenerationRequest request;
  request.params = context.engine.default_sampling_params();
  if (auto error = ParseGenerationRequest(body, Endpoint::kChat, &request)) return fail(*error);
  if (auto error = CheckModelAndTokenIds(context, request)) return fail(*error);
  if (auto error = CheckSequenceCount(context, 1, request.params.n)) return fail(*error);
  ChatPrompt chat;
  if (auto error = RenderChatPrompt(context.engine.tokenizer(), context.chat_template,
                                    context.limits, body, &chat))
    return fail(*error);
  std::vector<PromptInputs> inputs(1);
  if (auto error = PreparePrompt(context, request, chat.text, &inputs[0])) return fail(*error);
  std::string id = MakeResponseId(meta, request, "chatcmpl");
  auto job = std::make_shared<ChatJob>(context, writer, std::move(id), std::move(request),
                                       std::move(inputs), std::move(chat));
  writer->Post([job] { job->Start(); });
}

}  // namespace vllm::server
