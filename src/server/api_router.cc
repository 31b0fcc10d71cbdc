#include "server/api_router.h"

#include <algorithm>
#include <chrono>
#include <optional>

#include "common/logging.h"
#include "server/header_value.h"
#include "server/lora_metrics.h"
#include "server/openai/api_error.h"
#include "server/openai/chat/handler.h"
#include "server/openai/classify/handler.h"
#include "server/openai/completions/handler.h"
#include "server/openai/detokenize/handler.h"
#include "server/openai/embeddings/handler.h"
#include "server/openai/generate/handler.h"
#include "server/openai/lora_adapters/handler.h"
#include "server/openai/models/handler.h"
#include "server/openai/pooling/handler.h"
#include "server/openai/rerank/handler.h"
#include "server/openai/responses/handler.h"
#include "server/openai/score/handler.h"
#include "server/openai/tokenize/handler.h"
#include "server/root_path.h"
#include "server/worker_reply.h"

namespace vllm::server {
namespace {

constexpr char kVersion[] = "0.1.0";

// 503 once the engine is dead (vLLM's EngineDeadError), with the reason.
void AnswerHealth(ServingContext& context, const RequestMeta&,
                  const std::shared_ptr<ResponseWriter>& writer, const Json&) {
  if (std::optional<std::string> dead = context.engine.dead_error()) {
    writer->Send(http::status::service_unavailable, "application/json",
                 DumpJson({{"error", *dead}}));
    return;
  }
  writer->Send(http::status::ok, "application/json", "");
}

void AnswerVersion(ServingContext&, const RequestMeta&,
                   const std::shared_ptr<ResponseWriter>& writer, const Json&) {
  writer->Send(http::status::ok, "application/json", DumpJson({{"version", kVersion}}));
}

void AnswerMetrics(ServingContext& context, const RequestMeta&,
                   const std::shared_ptr<ResponseWriter>& writer, const Json&) {
  const EngineStatsSnapshot stats = context.engine.stats();
  std::string text = context.metrics.Render(stats);
  if (context.max_loras > 0) {
    text += RenderLoraRequestsInfo(
        {.max_loras = context.max_loras,
         .running_lora_adapters = context.lora_adapters.NamesOf(stats.running_lora_ids),
         .waiting_lora_adapters = context.lora_adapters.NamesOf(stats.waiting_lora_ids),
         .unix_seconds =
             std::chrono::duration<double>(std::chrono::system_clock::now().time_since_epoch())
                 .count()});
  }
  writer->Send(http::status::ok, "text/plain; version=0.0.4; charset=utf-8", std::move(text));
}

using enum http::verb;
using enum RouteAuth;
using enum RouteBody;
using enum RouteOnShutdown;

// Paths under /v1/ need the API key, as in vLLM; /v2/rerank and vLLM's other extensions do not.
constexpr Route kRoutes[] = {
    // method, path, auth, body, on shutdown, handler
    {get, "/health", kOpen, kNone, kServe, AnswerHealth},
    {get, "/version", kOpen, kNone, kServe, AnswerVersion},
    {get, "/metrics", kOpen, kNone, kServe, AnswerMetrics},
    {get, "/v1/models", kApiKey, kNone, kServe, HandleModels},
    {post, "/v1/completions", kApiKey, kJson, kRefuse, HandleCompletions},
    {post, "/v1/chat/completions", kApiKey, kJson, kRefuse, HandleChatCompletions},
    {post, "/v1/responses", kApiKey, kJson, kRefuse, HandleCreateResponse},
    {get, "/v1/responses/{response_id}", kApiKey, kNone, kServe, HandleRetrieveResponse},
    {post, "/v1/responses/{response_id}/cancel", kApiKey, kNone, kServe, HandleCancelResponse},
    {post, "/v1/embeddings", kApiKey, kJson, kServe, HandleEmbeddings},
    {post, "/pooling", kOpen, kJson, kServe, HandlePooling},
    {post, "/classify", kOpen, kJson, kServe, HandleClassify},
    {post, "/score", kOpen, kJson, kServe, HandleScore},
    {post, "/v1/score", kApiKey, kJson, kServe, HandleScore},
    {post, "/rerank", kOpen, kJson, kServe, HandleRerank},
    {post, "/v1/rerank", kApiKey, kJson, kServe, HandleRerank},
    {post, "/v2/rerank", kOpen, kJson, kServe, HandleRerank},
    {post, "/generate", kOpen, kJson, kRefuse, HandleGenerate},
    {post, "/tokenize", kOpen, kJson, kServe, HandleTokenize},
    {post, "/detokenize", kOpen, kJson, kServe, HandleDetokenize},
    {post, "/v1/load_lora_adapter", kApiKey, kJson, kServe, HandleLoadLoraAdapter},
    {post, "/v1/unload_lora_adapter", kApiKey, kJson, kServe, HandleUnloadLoraAdapter},
};

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

void SendError(ResponseWriter& writer, const ApiError& error) {
  writer.Send(error.status, "application/json", error.ToJson());
}

bool Authorized(const HttpRequest& request, const std::string& api_key) {
  if (api_key.empty()) return true;
  return HeaderValue(request, http::field::authorization) == "Bearer " + api_key;
}

}  // namespace

std::span<const Route> ApiRoutes() { return kRoutes; }

bool MatchPath(std::string_view pattern, std::string_view path,
               std::vector<std::string>* path_params) {
  std::vector<std::string> params;
  while (!pattern.empty() && !path.empty()) {
    const size_t pattern_end = std::min(pattern.find('/', 1), pattern.size());
    const size_t path_end = std::min(path.find('/', 1), path.size());
    const std::string_view pattern_segment = pattern.substr(0, pattern_end);
    const std::string_view path_segment = path.substr(0, path_end);
    if (pattern_segment.starts_with("/{") && pattern_segment.ends_with("}")) {
      if (path_segment.size() < 2) return false;  // a parameter is never empty
      params.emplace_back(path_segment.substr(1));
    } else if (pattern_segment != path_segment) {
      return false;
    }
    pattern.remove_prefix(pattern_end);
    path.remove_prefix(path_end);
  }
  if (!pattern.empty() || !path.empty()) return false;
  if (path_params != nullptr) *path_params = std::move(params);
  return true;
}

const Route* FindRoute(const HttpRequest& request, const std::string& api_key, ApiError* error,
                       std::vector<std::string>* path_params) {
  const std::string_view target(request.target().data(), request.target().size());
  const std::string_view path = target.substr(0, target.find('?'));
  const Route* path_route = nullptr;  // the first row with the path: its API-key rule applies
  const Route* match = nullptr;
  for (const Route& route : kRoutes) {
    if (!MatchPath(route.path, path, path_params)) continue;
    if (path_route == nullptr) path_route = &route;
    if (route.method == request.method()) {
      match = &route;
      break;
    }
  }
  const bool needs_api_key =
      path_route != nullptr ? path_route->auth == kApiKey : path.starts_with("/v1/");
  if (needs_api_key && !Authorized(request, api_key)) {
    *error = ApiError{http::status::unauthorized, "Unauthorized", ""};
    return nullptr;
  }
  if (path_route == nullptr) {
    *error = ApiError::NotFound("Not Found");
  } else if (match == nullptr) {
    *error = ApiError{http::status::method_not_allowed, "Method Not Allowed", ""};
  }
  return match;
}

RequestHandler MakeApiRouter(ServingContext& context, ApiOptions options) {
  return [&context, options](HttpRequest request, std::shared_ptr<ResponseWriter> writer) {
    if (!options.root_path.empty()) {
      const std::string_view target(request.target().data(), request.target().size());
      request.target(StripRootPath(target, options.root_path));
    }
    ApiError not_routed;
    RequestMeta meta;
    const Route* route = FindRoute(request, options.api_key, &not_routed, &meta.path_params);
    if (route == nullptr) return SendError(*writer, not_routed);
    const std::string_view target(request.target().data(), request.target().size());
    if (const size_t mark = target.find('?'); mark != std::string_view::npos) {
      meta.query = std::string(target.substr(mark + 1));
    }
    if (auto header = request.find("X-Request-Id"); header != request.end()) {
      meta.request_id_header = std::string(header->value().data(), header->value().size());
    }
    if (route->body == kJson) {
      if (auto error = CheckContentType(request)) return SendError(*writer, *error);
    }
    if (route->on_shutdown == kRefuse && context.shutting_down) {
      return SendError(*writer, ApiError::Unavailable("The server is shutting down."));
    }
    if (route->body == kNone) return route->handler(context, meta, writer, Json());
    // The body is parsed at the edge, on the worker, then the route's handler runs there.
    auto work = [&context, handler = route->handler, meta = std::move(meta),
                 body = std::move(request.body()), writer] {
      try {
        Expected<Json> json = ParseJsonObject(body);
        if (!json.ok()) return PostError(writer, ApiError::BadRequest(json.error()));
        handler(context, meta, writer, *json);
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
