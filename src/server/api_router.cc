#include "server/api_router.h"

#include <chrono>

#include "common/logging.h"
#include "server/header_value.h"
#include "server/openai/api_error.h"
#include "server/openai/chat/handler.h"
#include "server/openai/chat/protocol.h"
#include "server/openai/classify/handler.h"
#include "server/openai/completions/handler.h"
#include "server/openai/embeddings/handler.h"
#include "server/openai/json.h"
#include "server/openai/pooling/handler.h"
#include "server/openai/prompt_inputs.h"
#include "server/openai/rerank/handler.h"
#include "server/openai/score/handler.h"
#include "server/worker_reply.h"
#include "tokenizer/tokenizer.h"

namespace vllm::server {
namespace {

constexpr char kVersion[] = "0.1.0";

void SendJson(ResponseWriter& writer, const Json& body) {
  writer.Send(http::status::ok, "application/json", DumpJson(body));
}

void SendError(ResponseWriter& writer, const ApiError& error) {
  writer.Send(error.status, "application/json", error.ToJson());
}

void PostJson(const std::shared_ptr<ResponseWriter>& writer, const Json& body) {
  PostResponse(writer, http::status::ok, "application/json", DumpJson(body));
}

// The 415 for a body that does not say it is JSON (an absent Content-Type is taken as JSON).
std::optional<ApiError> CheckContentType(const HttpRequest& request) {
  if (auto type = HeaderValue(request, http::field::content_type)) {
    if (type->substr(0, type->find(';')) != "application/json") {
      return ApiError{http::status::unsupported_media_type,
                      "Unsupported Media Type: Only 'application/json' is allowed", ""};
    }
  }
  return std::nullopt;
}

int64_t UnixSeconds() {
  return std::chrono::duration_cast<std::chrono::seconds>(
             std::chrono::system_clock::now().time_since_epoch())
      .count();
}

void HandleModels(ServingContext& context, ResponseWriter& writer) {
  Json data = Json::array();
  for (const std::string& name : context.served_model_names) {
    data.push_back({{"id", name},
                    {"object", "model"},
                    {"created", UnixSeconds()},
                    {"owned_by", "vllm"},
                    {"root", context.model_path},
                    {"parent", nullptr},
                    {"max_model_len", context.engine.max_model_len()}});
  }
  SendJson(writer, {{"object", "list"}, {"data", std::move(data)}});
}

// POST /tokenize, on a worker: {"prompt"} (special tokens added by default), or vLLM's chat form
// {"messages", ...} rendered as /v1/chat/completions renders it (add_generation_prompt,
// continue_final_message, tools, chat_template_kwargs; special tokens not added by default).
void HandleTokenize(ServingContext& context, const Json& body,
                    const std::shared_ptr<ResponseWriter>& writer) {
  const Tokenizer& tokenizer = context.engine.tokenizer();
  const bool chat = body.contains("messages");
  std::optional<std::string> prompt;
  bool add_special_tokens = !chat;
  bool return_token_strs = false;
  std::optional<ApiError> error;
  if (chat) {
    ChatPrompt rendered;
    error = RenderChatPrompt(tokenizer, context.chat_template, context.limits, body, &rendered);
    if (!error) prompt = std::move(rendered.text);
  } else {
    error = ReadField(body, "prompt", GetString, &prompt);
    if (!error && !prompt) error = ApiError::BadRequest("prompt: Field required", "prompt");
  }
  if (!error) error = ReadField(body, "add_special_tokens", GetBool, &add_special_tokens);
  if (!error) error = ReadField(body, "return_token_strs", GetBool, &return_token_strs);
  if (!error && prompt->size() > context.limits.max_prompt_bytes) {
    error = PromptTooLarge(prompt->size(), context.limits.max_prompt_bytes,
                           chat ? "messages" : "prompt");
  }
  if (error) return PostError(writer, *error);
  const std::vector<int32_t> ids = tokenizer.Encode(*prompt, add_special_tokens);
  Json token_strs = nullptr;
  if (return_token_strs) {
    token_strs = Json::array();
    for (int32_t id : ids) token_strs.push_back(std::string(tokenizer.TokenToPiece(id)));
  }
  PostJson(writer, {{"count", ids.size()},
                    {"max_model_len", context.engine.max_model_len()},
                    {"tokens", ids},
                    {"token_strs", std::move(token_strs)}});
}

// POST /detokenize, on a worker.
void HandleDetokenize(ServingContext& context, const Json& body,
                      const std::shared_ptr<ResponseWriter>& writer) {
  const Tokenizer& tokenizer = context.engine.tokenizer();
  std::optional<std::vector<int32_t>> tokens;
  if (auto error = ReadField(body, "tokens", GetIntList, &tokens)) return PostError(writer, *error);
  if (!tokens) return PostError(writer, ApiError::BadRequest("tokens: Field required", "tokens"));
  for (int32_t id : *tokens) {
    if (id < 0 || id >= tokenizer.vocab_size()) {
      return PostError(
          writer, ApiError::BadRequest("Token id " + std::to_string(id) + " is out of vocabulary",
                                       "tokens"));
    }
  }
  PostJson(writer, {{"prompt", tokenizer.Decode(*tokens, false)}});
}

// A POST route's work, on a worker: the body parsed at the edge, then the route's handler.
void RunPostRoute(ServingContext& context, const std::string& path, const RequestMeta& meta,
                  const std::string& body_text, const std::shared_ptr<ResponseWriter>& writer) {
  Expected<Json> body = ParseJsonObject(body_text);
  if (!body.ok()) return PostError(writer, ApiError::BadRequest(body.error()));
  if (path == "/v1/completions") return HandleCompletions(context, meta, writer, *body);
  if (path == "/v1/chat/completions") return HandleChatCompletions(context, meta, writer, *body);
  if (path == "/v1/embeddings") return HandleEmbeddings(context, meta, writer, *body);
  if (path == "/pooling") return HandlePooling(context, meta, writer, *body);
  if (path == "/classify") return HandleClassify(context, meta, writer, *body);
  if (path == "/score" || path == "/v1/score") return HandleScore(context, meta, writer, *body);
  if (path == "/rerank" || path == "/v1/rerank" || path == "/v2/rerank") {
    return HandleRerank(context, meta, writer, *body);
  }
  if (path == "/tokenize") return HandleTokenize(context, *body, writer);
  HandleDetokenize(context, *body, writer);
}

bool Authorized(const HttpRequest& request, const std::string& api_key) {
  if (api_key.empty()) return true;
  return HeaderValue(request, http::field::authorization) == "Bearer " + api_key;
}

}  // namespace

RequestHandler MakeApiRouter(ServingContext& context, ApiOptions options) {
  return [&context, options](HttpRequest request, std::shared_ptr<ResponseWriter> writer) {
    const std::string target(request.target().data(), request.target().size());
    const std::string path = target.substr(0, target.find('?'));
    const http::verb method = request.method();
    if (path.rfind("/v1/", 0) == 0 && !Authorized(request, options.api_key)) {
      return SendError(*writer, ApiError{http::status::unauthorized, "Unauthorized", ""});
    }
    auto route = [&](http::verb expected, const char* route_path) {
      return path == route_path && method == expected;
    };
    if (route(http::verb::get, "/health")) {
      return writer->Send(http::status::ok, "application/json", "");
    }
    if (route(http::verb::get, "/version")) return SendJson(*writer, {{"version", kVersion}});
    if (route(http::verb::get, "/metrics")) {
      return writer->Send(http::status::ok, "text/plain; version=0.0.4; charset=utf-8",
                          context.metrics.Render(context.engine.stats()));
    }
    if (route(http::verb::get, "/v1/models")) return HandleModels(context, *writer);
    const bool is_post_route = path == "/v1/completions" || path == "/v1/chat/completions" ||
                               path == "/tokenize" || path == "/detokenize" ||
                               path == "/v1/embeddings" || path == "/pooling" ||
                               path == "/classify" || path == "/score" || path == "/v1/score" ||
                               path == "/rerank" || path == "/v1/rerank" || path == "/v2/rerank";
    if (!is_post_route) {
      const bool known =
          path == "/health" || path == "/version" || path == "/metrics" || path == "/v1/models";
      return SendError(*writer,
                       known ? ApiError{http::status::method_not_allowed, "Method Not Allowed", ""}
                             : ApiError::NotFound("Not Found"));
    }
    if (method != http::verb::post) {
      return SendError(*writer,
                       ApiError{http::status::method_not_allowed, "Method Not Allowed", ""});
    }
    if (auto error = CheckContentType(request)) return SendError(*writer, *error);
    const bool generates = path == "/v1/completions" || path == "/v1/chat/completions";
    if (generates && context.shutting_down) {
      return SendError(*writer, ApiError::Unavailable("The server is shutting down."));
    }
    RequestMeta meta;
    if (auto header = request.find("X-Request-Id"); header != request.end()) {
      meta.request_id_header = std::string(header->value().data(), header->value().size());
    }
    auto work = [&context, path, meta = std::move(meta), body = std::move(request.body()), writer] {
      try {
        RunPostRoute(context, path, meta, body, writer);
      } catch (const std::exception& e) {
        VLLM_LOG(kError) << "request handler failed: " << e.what();
        PostError(writer, ApiError::Internal("Internal server error"));
      }
    };
    if (!context.workers.TrySubmit(std::move(work))) {
      SendError(*writer, ApiError::Unavailable("The server is busy: too many requests are being "
                                               "prepared. Retry later."));
    }
  };
}

}  // namespace vllm::server
