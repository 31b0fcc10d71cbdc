// The OpenAI-compatible API's routes: one table (api_router.cc's kRoutes) with each route's
// method, path, API-key rule, body and handler; the router answers every request from it. The
// handlers live in openai/<endpoint>/, except those of /health, /version and /metrics (below).
#pragma once

#include <memory>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "server/http_session.h"
#include "server/openai/json.h"
#include "server/openai/prompt_inputs.h"
#include "server/serving_context.h"

namespace vllm::server {

struct ApiOptions {
  std::string api_key;    // empty: no key needed
  std::string root_path;  // --root-path: a prefix routes are also found under (root_path.h)
};

// Whether a route needs `Authorization: Bearer <--api-key>` (when a key is set).
enum class RouteAuth { kOpen, kApiKey };

// What a route reads of the request. Every body is capped first by --max-request-body-bytes
// (413, in the session, before routing).
enum class RouteBody {
  kNone,  // nothing: the handler answers at once, on the connection's strand (its body is null)
  // A JSON object: a Content-Type other than application/json is a 415, a malformed or non-object
  // body (or one nested deeper than kMaxJsonDepth) a 400; the handler runs on a request worker.
  kJson,
};

// Whether a route still takes requests once a graceful shutdown began (else 503).
enum class RouteOnShutdown { kServe, kRefuse };

// Answers one request. `meta` holds what the handler needs of the headers; `body` is the parsed
// JSON object (null for RouteBody::kNone).
using RouteHandler = void (*)(ServingContext& context, const RequestMeta& meta,
                              const std::shared_ptr<ResponseWriter>& writer, const Json& body);

struct Route {
  http::verb method;
  // Exact, but for parameter segments (`/{name}`), which match any one non-empty segment; a
  // query string is ignored.
  std::string_view path;
  RouteAuth auth;
  RouteBody body;
  RouteOnShutdown on_shutdown;
  RouteHandler handler;
};

// Every route the server answers, one row each.
std::span<const Route> ApiRoutes();

// The route for the request's method and path; nullptr with `*error` set to what to answer
// instead: 401 without the API key where the path needs it (a known path as its row says, any
// other under /v1/ as vLLM's key middleware does), else 404 for a path no row has, 405 for a
// known path asked with another method.
// `path_params`, when given, gets the values of the route's parameter segments.
const Route* FindRoute(const HttpRequest& request, const std::string& api_key, ApiError* error,
                       std::vector<std::string>* path_params = nullptr);

// Whether `path` has the shape of route path `pattern`; `path_params` (when given and it does)
// gets the values of the pattern's `/{name}` segments, in order.
bool MatchPath(std::string_view pattern, std::string_view path,
               std::vector<std::string>* path_params);

// The handler the HTTP server calls for every request.
RequestHandler MakeApiRouter(ServingContext& context, ApiOptions options);

}  // namespace vllm::server
