#include "server/openai/chat/handler.h"

#include "server/openai/chat/chat_output.h"
#include "server/openai/chat/protocol.h"
#include "server/openai/chat/streamed_token_ids.h"
#include "server/openai/chat/tools.h"
#include "server/openai/generation_job.h"
#include "server/openai/logprobs_format.h"
#include "server/openai/prompt_inputs.h"
#include "server/openai/structured_outputs_request.h"
#include "server/openai/without_tokenizer.h"
#include "server/worker_reply.h"

namespace vllm::server {
namespace {

class ChatJob : public GenerationJob {
 public:
  ChatJob(ServingContext& context, std::shared_ptr<ResponseWriter> writer, std::string id,
          GenerationRequest request, std::vector<PromptInputs> prompts, ChatPrompt chat,
          ChatOutputConfig output_config)
      : GenerationJob(context, std::move(writer), std::move(id), std::move(request),
                      std::move(prompts)),
        chat_(std::move(chat)),
        output_config_(std::move(output_config)),
        streamed_token_ids_(request_.params.n) {
    for (int i = 0; i < request_.params.n; ++i) delta_parsers_.emplace_back(output_config_);
  }

 private:
  // The reply's role, as vLLM's get_chat_request_role: --response-role after a generation
  // prompt, else (the reply continues the last message) that message's role.
  const std::string& Role() const {
    return chat_.add_generation_prompt ? context_.response_role : chat_.last_message_role;
  }

  // What echo puts before the reply: the last message, when it has the reply's role.
  std::string EchoText() const {
    return request_.echo && chat_.last_message_role == Role() ? chat_.last_message_content : "";
  }

  Json Chunk(Json choices) const {
    Json chunk = {{"id", response_id_},
                  {"object", "chat.completion.chunk"},
                  {"created", created_},
                  {"model", context_.ResponseModelName(request_.options.lora_request)},
                  {"choices", std::move(choices)}};
    if (request_.include_usage && request_.continuous_usage_stats) chunk["usage"] = Usage();
    return chunk;
  }

  Json LogprobsOf(const CompletionOutput& part) const {
    if (!request_.params.logprobs || !part.logprobs) return nullptr;
    return ChatLogprobs(part.token_ids, *part.logprobs, *request_.params.logprobs,
                        request_.tokens_as_ids);
  }

  // The first chunks of a stream: the role for every choice (with the prompt's token ids, as
  // vLLM's return_token_ids puts them) and the echoed message.
  void StartStream() {
    writer_->StartEventStream();
    for (int i = 0; i < request_.params.n; ++i) {
      Json role_chunk = Chunk(Json::array({{{"index", i},
                                            {"delta", {{"role", Role()}, {"content", ""}}},
                                            {"logprobs", nullptr},
                                            {"finish_reason", nullptr}}}));
      if (request_.return_token_ids) role_chunk["prompt_token_ids"] = prompts_.front().token_ids;
      SendEvent(role_chunk);
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
      if (request_.return_token_ids) streamed_token_ids_.Add(part.index, part.token_ids);
      if (part.text.empty() && part.finish_reason.empty()) continue;
      ChatDeltaParser& parser = delta_parsers_.at(part.index);
      Json fields = parser.Next(part.text, part.finished());
      Json logprobs = LogprobsOf(part);
      if (fields.empty() && logprobs.is_null() && !part.finished()) continue;
      std::string finish_reason = part.finish_reason;
      if (part.finished() && parser.auto_tools_called()) finish_reason = "tool_calls";
      Json choice = {
          {"index", part.index},
          {"delta", std::move(fields)},
          {"logprobs", std::move(logprobs)},
          {"finish_reason", finish_reason.empty() ? Json(nullptr) : Json(finish_reason)}};
      if (part.finished()) choice["stop_reason"] = StopReasonJson(part);
      if (request_.return_token_ids) choice["token_ids"] = streamed_token_ids_.Take(part.index);
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
      AssistantMessage message = ParseAssistantMessage(output_config_, completion.text);
      if (!EchoText().empty()) {
        message.content = EchoText() + message.content.get<std::string>();
      }
      choices.push_back(
          {{"index", completion.index},
           {"message",
            {{"role", Role()},
             {"content", std::move(message.content)},
             {"refusal", nullptr},
             {"annotations", nullptr},
             {"audio", nullptr},
             {"function_call", nullptr},
             {"tool_calls", std::move(message.tool_calls)},
             {"reasoning_content", std::move(message.reasoning_content)}}},
           {"logprobs", LogprobsOf(completion)},
           {"finish_reason", message.auto_tools_called ? "tool_calls" : completion.finish_reason},
           {"stop_reason", StopReasonJson(completion)}});
      if (request_.return_token_ids) choices.back()["token_ids"] = completion.token_ids;
    }
    Json response = {{"id", response_id_},
                     {"object", "chat.completion"},
                     {"created", created_},
                     {"model", context_.ResponseModelName(request_.options.lora_request)},
                     {"choices", std::move(choices)},
                     {"usage", std::move(usage)},
                     {"prompt_logprobs", output.prompt_logprobs && request_.params.prompt_logprobs
                                             ? PromptLogprobs(*output.prompt_logprobs)
                                             : Json(nullptr)}};
    if (request_.return_token_ids) response["prompt_token_ids"] = output.prompt_token_ids;
    return response;
  }

  const ChatPrompt chat_;
  const ChatOutputConfig output_config_;
  std::vector<ChatDeltaParser> delta_parsers_;  // [n], streaming only
  StreamedTokenIds streamed_token_ids_;         // streaming with return_token_ids
};

// What the reply's text is parsed with: the server's parsers, the request's tools and whether
// the template was asked to think (chat_template_kwargs enable_thinking / thinking).
std::optional<ApiError> MakeOutputConfig(const ServingContext& context, const Json& body,
                                         GenerationRequest* request, ChatOutputConfig* config) {
  if (auto error = ParseChatTools(body, !context.tool_call_parser.empty(), &request->params,
                                  &config->tools)) {
    return error;
  }
  config->reasoning_parser = context.reasoning_parser;
  if (config->tools.choice == ToolChoiceKind::kAuto) config->tool_parser = context.tool_call_parser;
  if (auto kwargs = body.find("chat_template_kwargs");
      kwargs != body.end() && kwargs->is_object()) {
    for (const char* flag : {"enable_thinking", "thinking"}) {
      if (auto it = kwargs->find(flag); it != kwargs->end() && it->is_boolean()) {
        config->reasoning_options.thinking_enabled = it->get<bool>();
      }
    }
  }
  // Parsers that read special-token markers need them in the text.
  const bool needs_special_tokens = (!config->tool_parser.empty() &&
                                     ToolParserInfoOf(config->tool_parser)->needs_special_tokens) ||
                                    config->reasoning_parser == "openai";
  if (needs_special_tokens) request->params.skip_special_tokens = false;
  return std::nullopt;
}

// With a reasoning parser, structured output starts after the thinking ends, unless the prompt
// already ended it (a template that closes an empty thinking block when thinking is off).
void ConstrainAfterReasoning(const ChatOutputConfig& config, const std::string& prompt,
                             GenerationRequest* request) {
  if (config.reasoning_parser.empty() || !request->params.structured_outputs) return;
  const std::string end(
      CreateReasoningParser(config.reasoning_parser, config.reasoning_options)->reasoning_end());
  if (end.empty()) return;  // thinking is off: the answer starts at once
  const size_t last = prompt.find_last_not_of(" \t\r\n");
  const std::string_view trimmed(prompt.data(), last == std::string::npos ? 0 : last + 1);
  const bool ended =
      trimmed.size() >= end.size() && trimmed.substr(trimmed.size() - end.size()) == end;
  if (!ended) request->options.structured_output_after = end;
}

}  // namespace

std::optional<ApiError> PrepareChatRequest(ServingContext& context, const Json& body,
                                           PreparedChat* chat) {
  if (!context.engine.has_tokenizer()) return ApiError::BadRequest(kTokenizerNotAvailable);
  GenerationRequest& request = chat->request;
  request.params = context.engine.default_sampling_params();
  request.max_logprobs = context.limits.max_logprobs;
  // The tools and the server's structured-output settings edit the params before their check.
  auto route_edits = [&](GenerationRequest* parsed) -> std::optional<ApiError> {
    if (auto error = MakeOutputConfig(context, body, parsed, &chat->output_config)) return error;
    ApplyStructuredOutputsConfig(context.structured_outputs_config, &parsed->params);
    return std::nullopt;
  };
  if (auto error = ParseGenerationRequest(body, Endpoint::kChat, &request, route_edits)) {
    return error;
  }
  if (auto error = CheckModelAndTokenIds(context, &request)) return error;
  if (auto error = CheckSequenceCount(context, 1, request.params.n)) return error;
  if (auto error = RenderChatPrompt(context.engine.tokenizer(), context.chat_template,
                                    context.limits, body, &chat->prompt)) {
    return error;
  }
  ConstrainAfterReasoning(chat->output_config, chat->prompt.text, &request);
  chat->inputs.resize(1);
  return PreparePrompt(context, request, chat->prompt.text, &chat->inputs[0]);
}

void HandleChatCompletions(ServingContext& context, const RequestMeta& meta,
                           const std::shared_ptr<ResponseWriter>& writer, const Json& body) {
  PreparedChat chat;
  if (auto error = PrepareChatRequest(context, body, &chat)) return PostError(writer, *error);
  GenerationRequest& request = chat.request;
  std::string id = MakeResponseId(meta, request, "chatcmpl");
  auto job = std::make_shared<ChatJob>(context, writer, std::move(id), std::move(request),
                                       std::move(chat.inputs), std::move(chat.prompt),
                                       std::move(chat.output_config));
  writer->Post([job] { job->Start(); });
}

}  // namespace vllm::server
