#include "server/api_router.h"

#include <chrono>

#include "server/openai/api_error.h"
#include "server/openai/chat/handler.h"
#include "server/openai/completions/handler.h"
#include "server/openai/json.h"
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

// The body as a JSON object, or the 4xx to answer with.
std::optional<ApiError> ParseBody(const HttpRequest& request, Json* body) {
  if (auto type = request.find(http::field::content_type); type != request.end()) {
    const std::string_view value(type->value().data(), type->value().size());
    if (value.substr(0, value.find(';')) != "application/json") {
      return ApiError{http::status::unsupported_media_type,
                      "Unsupported Media Type: Only 'application/json' is allowed", ""};
    }
  }
  *body = Json::parse(request.body(), nullptr, /*allow_exceptions=*/false);
  if (body->is_discarded()) {
    return ApiError::BadRequest("The request body is not valid JSON.");
  }
  if (!body->is_object()) return ApiError::BadRequest("The request body must be a JSON object.");
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

void HandleTokenize(ServingContext& context, const Json& body, ResponseWriter& writer) {
  const Tokenizer& tokenizer = context.engine.tokenizer();
  auto prompt = GetString(body, "prompt");
  if (!prompt.ok() || !prompt->has_value()) {
    return SendError(
        writer,
        ApiError::BadRequest(prompt.ok() ? "prompt: Field required" : prompt.error(), "prompt"));
  }
  auto add_special_tokens = GetBool(body, "add_special_tokens");
  auto return_token_strs = GetBool(body, "return_token_strs");
  if (!add_special_tokens.ok()) {
    return SendError(writer,
                     ApiError::BadRequest(add_special_tokens.error(), "add_special_tokens"));
  }
  if (!return_token_strs.ok()) {
    return SendError(writer, ApiError::BadRequest(return_token_strs.error(), "return_token_strs"));
  }
  const std::vector<int32_t> ids = tokenizer.Encode(**prompt, add_special_tokens->value_or(true));
  Json token_strs = nullptr;
  if (return_token_strs->value_or(false)) {
    token_strs = Json::array();
    for (int32_t id : ids) token_strs.push_back(std::string(tokenizer.TokenToPiece(id)));
  }
  SendJson(writer, {{"count", ids.size()},
                    {"max_model_len", context.engine.max_model_len()},
                    {"tokens", ids},
                    {"token_strs", std::move(token_strs)}});
}

void HandleDetokenize(ServingContext& context, const Json& body, ResponseWriter& writer) {
  const Tokenizer& tokenizer = context.engine.tokenizer();
  auto tokens = GetIntList(body, "tokens");
  if (!tokens.ok() || !tokens->has_value()) {
    return SendError(
        writer,
        ApiError::BadRequest(tokens.ok() ? "tokens: Field required" : tokens.error(), "tokens"));
  }
  for (int32_t id : **tokens) {
    if (id < 0 || id >= tokenizer.vocab_size()) {
      return SendError(
          writer, ApiError::BadRequest("Token id " + std::to_string(id) + " is out of vocabulary",
                                       "tokens"));
    }
  }
  SendJson(writer, {{"prompt", tokenizer.Decode(**tokens, false)}});
}

bool Authorized(const HttpRequest& request, const std::string& api_key) {
  if (api_key.empty()) return true;
  auto header = request.find(http::field::authorization);
  return header != request.end() &&
         std::string_view(header->value().data(), header->value().size()) == "Bearer " + api_key;
}

}  // namespace

RequestHandler MakeApiRouter(ServingContext& context, ApiOptions options) {
  return [&context, options](const HttpRequest& request, std::shared_ptr<ResponseWriter> writer) {
    const std::string target(request.target().data(), request.target().size());
    const std::string path = target.substr(0, target.find('?'));
    const http::verb method = request.method();
    if (method == http::verb::options) {  // CORS preflight
      writer->Send(http::status::ok, "text/plain", "");
      return;
    }
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
                               path == "/tokenize" || path == "/detokenize";
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
    Json body;
    if (auto error = ParseBody(request, &body)) return SendError(*writer, *error);
    if (path == "/v1/completions") return HandleCompletions(context, request, writer, body);
    if (path == "/v1/chat/completions") {
      return HandleChatCompletions(context, request, writer, body);
    }
    if (path == "/tokenize") return HandleTokenize(context, body, *writer);
    HandleDetokenize(context, body, *writer);
  };
}

}  // namespace vllm::server
