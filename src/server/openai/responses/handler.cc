#include "server/openai/responses/handler.h"

#include <algorithm>
#include <charconv>
#include <cstdlib>
#include <string_view>

#include "server/openai/chat/handler.h"
#include "server/openai/logprobs_format.h"
#include "server/openai/responses/input_items.h"
#include "server/openai/responses/output_items.h"
#include "server/openai/responses/protocol.h"
#include "server/openai/responses/store.h"
#include "server/worker_reply.h"

namespace vllm::server {
namespace {

class ResponsesJob : public GenerationJob {
 public:
  ResponsesJob(ServingContext& context, std::shared_ptr<ResponseWriter> writer, std::string id,
               PreparedChat chat, ResponsesRequest responses, Json conversation)
      : GenerationJob(context, std::move(writer), std::move(id), std::move(chat.request),
                      std::move(chat.inputs)),
        output_config_(std::move(chat.output_config)),
        responses_(std::move(responses)),
        conversation_(std::move(conversation)),
        delta_parser_(output_config_) {}

  // The response before any output: what background requests answer at once, and the
  // response.created event.
  Json PendingResponse(const char* status) const {
    return ResponseObject(response_id_, created_, model(), responses_.echoed, status, Json::array(),
                          nullptr);
  }

  // A background response's stored status once its request is in the engine.
  void MarkInProgress() {
    context_.responses.Put(response_id_, {PendingResponse("in_progress"), conversation_});
  }

 private:
  // A background stream's events go to its event log, whose followers (the creating request,
  // then any GET ?stream=true) write them; its client going away does not end it.
  bool OutlivesClient() const override { return responses_.background; }

  const std::string& model() const {
    return context_.ResponseModelName(request_.options.lora_request);
  }

  // The output_text part's logprobs: chat's per-token entries, when the request included them.
  Json LogprobsOf(const CompletionOutput& part) const {
    if (!responses_.include_logprobs || !request_.params.logprobs || !part.logprobs) return nullptr;
    return ChatLogprobs(part.token_ids, *part.logprobs, *request_.params.logprobs,
                        request_.tokens_as_ids)["content"];
  }

  // The finished response: its status from the finish reason, stored when the request asks.
  Json FinishedResponse(Json output, const std::string& finish_reason, Json usage) const {
    Json response = ResponseObject(response_id_, created_, model(), responses_.echoed, "",
                                   std::move(output), std::move(usage));
    SetResponseStatus(finish_reason, &response);
    if (responses_.store) {
      Json conversation = conversation_;
      AppendOutputMessages(response["output"], &conversation);
      context_.responses.Put(response_id_, {response, std::move(conversation)});
    }
    return response;
  }

  Json UsageOf(const Json& usage, int64_t num_cached_tokens) const {
    return ResponseUsage(usage.value("prompt_tokens", int64_t{0}), num_cached_tokens,
                         usage.value("completion_tokens", int64_t{0}));
  }

  // Writes each event as OpenAI and vLLM do: `event: <type>` then its data, numbered in order.
  void Emit(std::vector<Json>& events) {
    for (Json& event : events) {
      event["sequence_number"] = next_sequence_number_++;
      std::string text =
          "event: " + event["type"].get<std::string>() + "\ndata: " + DumpJson(event) + "\n\n";
      if (responses_.background) {
        context_.response_events.Append(response_id_, std::move(text));
      } else {
        writer_->SendChunk(text);
      }
    }
    events.clear();
  }

  void EndEvents() {
    if (responses_.background) {
      context_.response_events.Close(response_id_);
    } else {
      writer_->EndEventStream();
    }
  }

  void StartStream() {
    stream_started_ = true;
    if (!responses_.background) writer_->StartEventStream();
    std::vector<Json> events = {
        {{"type", "response.created"}, {"response", PendingResponse("in_progress")}},
        {{"type", "response.in_progress"}, {"response", PendingResponse("in_progress")}}};
    Emit(events);
  }

  void OnDelta(size_t, const RequestOutput& delta) override {
    if (!stream_started_) StartStream();
    num_cached_tokens_ = delta.num_cached_tokens;
    std::vector<Json> events;
    for (const CompletionOutput& part : delta.outputs) {
      if (part.finished()) finish_reason_ = part.finish_reason;
      if (part.text.empty() && !part.finished()) continue;
      builder_.Add(delta_parser_.Next(part.text, part.finished()), LogprobsOf(part), &events);
    }
    Emit(events);
  }

  void FinishStream() override {
    if (!stream_started_) StartStream();
    std::vector<Json> events;
    builder_.Finish(&events);
    Emit(events);
    Json response =
        FinishedResponse(builder_.output(), finish_reason_, UsageOf(Usage(), num_cached_tokens_));
    const bool incomplete = response["status"] == "incomplete";
    events.push_back({{"type", incomplete ? "response.incomplete" : "response.completed"},
                      {"response", std::move(response)}});
    Emit(events);
    EndEvents();
  }

  Json BuildResponse(const std::vector<RequestOutput>& outputs, Json usage) const override {
    const RequestOutput& output = outputs.front();
    const CompletionOutput& completion = output.outputs.front();
    AssistantMessage message = ParseAssistantMessage(output_config_, completion.text);
    const Json fields = {{"reasoning_content", message.reasoning_content},
                         {"content", message.content},
                         {"tool_calls", message.tool_calls}};
    ResponseOutputBuilder builder;
    std::vector<Json> events;  // a whole response sends none
    builder.Add(fields, LogprobsOf(completion), &events);
    builder.Finish(&events);
    return FinishedResponse(builder.output(), completion.finish_reason,
                            UsageOf(usage, output.num_cached_tokens));
  }

  void SendError(const ApiError& error) override {
    if (responses_.background) {  // its client polls the store
      Json failed = PendingResponse("failed");
      failed["error"] = {{"code", "server_error"}, {"message", error.message}};
      context_.responses.Put(response_id_, {std::move(failed), conversation_});
    }
    // A background stream's events began when it was created.
    const bool as_event = request_.stream && (responses_.background || writer_->started());
    if (!as_event) return GenerationJob::SendError(error);
    // Mid-stream: OpenAI's error event, with vLLM's error object, which the SDKs raise.
    Json event = *ParseJsonObject(error.ToJson());
    event["type"] = "error";
    event["code"] = event["error"]["code"];
    event["message"] = error.message;
    event["param"] = error.param.empty() ? Json(nullptr) : Json(error.param);
    std::vector<Json> events = {std::move(event)};
    Emit(events);
    EndEvents();
  }

  const ChatOutputConfig output_config_;
  const ResponsesRequest responses_;
  const Json conversation_;  // the earlier conversation and this input, without instructions
  // Streaming only.
  ChatDeltaParser delta_parser_;
  ResponseOutputBuilder builder_;
  std::string finish_reason_;
  int64_t num_cached_tokens_ = 0;
  int64_t next_sequence_number_ = 0;
  bool stream_started_ = false;
};

const std::string& PathId(const RequestMeta& meta) { return meta.path_params.front(); }

// Writes the events of response `id`'s log numbered after `starting_after` on `writer`, then
// its new ones until the log closes; the client going away stops the following, not the
// response. An error when the log does not have them.
std::optional<ApiError> FollowEvents(ServingContext& context, const std::string& id,
                                     int64_t starting_after,
                                     const std::shared_ptr<ResponseWriter>& writer) {
  ResponseEventLogs& logs = context.response_events;
  // Posted, so they run on the strand after the stream has started.
  auto follower = [writer](std::string event, bool closed) {
    writer->Post([writer, event = std::move(event), closed] {
      if (closed) {
        writer->EndEventStream();
      } else {
        writer->SendChunk(event);
      }
    });
  };
  Expected<uint64_t> handle = logs.Follow(id, starting_after, std::move(follower));
  if (!handle.ok()) return ApiError::BadRequest(handle.error());
  writer->StartEventStream();
  writer->OnDisconnect([&logs, id, handle = *handle] { logs.Unfollow(id, handle); });
  return std::nullopt;
}

// The GET query's `stream` and `starting_after` (vLLM's and OpenAI's retrieve parameters).
std::optional<ApiError> ParseRetrieveQuery(const std::string& query, bool* stream,
                                           int64_t* starting_after) {
  size_t begin = 0;
  while (begin <= query.size()) {
    const size_t end = std::min(query.find('&', begin), query.size());
    const std::string_view pair(query.data() + begin, end - begin);
    const size_t equals = pair.find('=');
    const std::string_view name = pair.substr(0, equals);
    const std::string_view value =
        equals == std::string_view::npos ? std::string_view() : pair.substr(equals + 1);
    if (name == "stream") {
      if (value != "true" && value != "false") {
        return ApiError::BadRequest("stream: Input should be a valid boolean", "stream");
      }
      *stream = value == "true";
    } else if (name == "starting_after") {
      const auto [last, error] =
          std::from_chars(value.data(), value.data() + value.size(), *starting_after);
      if (error != std::errc() || last != value.data() + value.size() || *starting_after < -1) {
        return ApiError::BadRequest("starting_after: Input should be a valid integer",
                                    "starting_after");
      }
    }
    begin = end + 1;
  }
  return std::nullopt;
}

// A float as the double it reads as (0.7f as 0.7, not 0.699999988079071).
double ShortestDouble(float value) {
  char text[32];
  const auto [end, error] = std::to_chars(text, text + sizeof(text), value);
  return std::strtod(std::string(text, end).c_str(), nullptr);
}

}  // namespace

void HandleCreateResponse(ServingContext& context, const RequestMeta&,
                          const std::shared_ptr<ResponseWriter>& writer, const Json& body) {
  auto fail = [&](const ApiError& error) { PostError(writer, error); };
  ResponsesRequest responses;
  if (auto error = ParseResponsesRequest(body, &responses)) return fail(*error);
  Json conversation = Json::array();
  if (responses.previous_response_id) {
    auto previous = context.responses.Get(*responses.previous_response_id);
    if (!previous) return fail(ResponseNotFound(*responses.previous_response_id));
    conversation = std::move(previous->conversation);
  }
  Json chat_body = responses.chat_body;
  chat_body["messages"] = ConversationMessages(responses, conversation);
  for (const Json& message : responses.input_messages) conversation.push_back(message);
  PreparedChat chat;
  if (auto error = PrepareChatRequest(context, chat_body, &chat)) return fail(*error);
  // The response repeats the sampling values the request runs with, the model's defaults too.
  for (auto [name, value] : {std::pair{"temperature", chat.request.params.temperature},
                             {"top_p", chat.request.params.top_p}}) {
    if (!IsPresent(body, name)) responses.echoed[name] = ShortestDouble(value);
  }
  std::string id = responses.request_id.value_or(MakeItemId("resp"));
  const bool background = responses.background;
  auto job = std::make_shared<ResponsesJob>(context, writer, std::move(id), std::move(chat),
                                            std::move(responses), conversation);
  if (!background) {
    writer->Post([job] { job->Start(); });
    return;
  }
  Json queued = job->PendingResponse("queued");
  const std::string response_id = queued["id"];
  context.responses.Put(response_id, {queued, std::move(conversation)});
  if (responses.stream) {
    // The creating request is the log's first follower; the job writes only to the log.
    context.response_events.Create(response_id);
    writer->Post([&context, job, writer, response_id] {
      FollowEvents(context, response_id, -1, writer);  // a log just created has every event
      job->Start();
      job->MarkInProgress();
    });
    return;
  }
  // Answered once the job runs; the job runs on when its client goes.
  writer->Post([job, writer, body = DumpJson(queued)]() mutable {
    job->Start();
    job->MarkInProgress();
    writer->Send(http::status::ok, "application/json", std::move(body));
  });
}

void HandleRetrieveResponse(ServingContext& context, const RequestMeta& meta,
                            const std::shared_ptr<ResponseWriter>& writer, const Json&) {
  auto fail = [&](const ApiError& error) {
    writer->Send(error.status, "application/json", error.ToJson());
  };
  bool stream = false;
  int64_t starting_after = -1;
  if (auto error = ParseRetrieveQuery(meta.query, &stream, &starting_after)) return fail(*error);
  auto stored = context.responses.Get(PathId(meta));
  if (!stored) return fail(ResponseNotFound(PathId(meta)));
  if (stream) {
    if (auto error = FollowEvents(context, PathId(meta), starting_after, writer)) fail(*error);
    return;
  }
  writer->Send(http::status::ok, "application/json", DumpJson(stored->response));
}

void HandleCancelResponse(ServingContext& context, const RequestMeta& meta,
                          const std::shared_ptr<ResponseWriter>& writer, const Json&) {
  Json response;
  if (auto error = context.responses.Cancel(PathId(meta), &response)) {
    return writer->Send(error->status, "application/json", error->ToJson());
  }
  context.engine.Abort(PathId(meta));  // the job's engine request has the response's id
  writer->Send(http::status::ok, "application/json", DumpJson(response));
}

}  // namespace vllm::server
