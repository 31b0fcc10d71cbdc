#include "server/api_router.h"

#include <gtest/gtest.h>

#include <set>
#include <utility>

#include "server/openai/detokenize/handler.h"
#include "server/openai/tokenize/handler.h"

namespace vllm::server {
namespace {

constexpr char kKey[] = "secret";

HttpRequest Request(http::verb method, std::string_view target, bool with_key = true) {
  HttpRequest request{method, boost::beast::string_view(target.data(), target.size()), 11};
  if (with_key) request.set(http::field::authorization, std::string("Bearer ") + kKey);
  return request;
}

// The status FindRoute answers instead of a route; 200 when it finds one.
int StatusOf(const HttpRequest& request) {
  ApiError error;
  if (FindRoute(request, kKey, &error) != nullptr) return 200;
  return static_cast<int>(error.status);
}

TEST(ApiRouterTest, EachMethodAndPathHasOneRow) {
  std::set<std::pair<http::verb, std::string_view>> seen;
  for (const Route& route : ApiRoutes()) {
    EXPECT_TRUE(seen.insert({route.method, route.path}).second) << route.path;
    EXPECT_NE(route.handler, nullptr) << route.path;
  }
}

// The old router sent a POST path missing from its if-chain to /detokenize.
TEST(ApiRouterTest, UnknownPathIsNotFoundWhateverTheMethod) {
  for (const char* path : {"/nothing", "/detokenizer", "/v1/nothing", "/v1/tokenize", "/"}) {
    EXPECT_EQ(StatusOf(Request(http::verb::post, path)), 404) << path;
    EXPECT_EQ(StatusOf(Request(http::verb::get, path)), 404) << path;
  }
}

TEST(ApiRouterTest, KnownPathWithAnotherMethodIsMethodNotAllowed) {
  for (auto [method, path] : {std::pair{http::verb::get, "/v1/completions"},
                              {http::verb::post, "/health"},
                              {http::verb::post, "/v1/models"},
                              {http::verb::get, "/tokenize"},
                              {http::verb::delete_, "/metrics"},
                              {http::verb::put, "/v2/rerank"}}) {
    EXPECT_EQ(StatusOf(Request(method, path)), 405) << path;
  }
}

TEST(ApiRouterTest, FindsEachRouteByMethodAndPathIgnoringTheQuery) {
  for (const Route& route : ApiRoutes()) {
    ApiError error;
    const std::string target = std::string(route.path) + "?x=1";
    EXPECT_EQ(FindRoute(Request(route.method, target), kKey, &error), &route) << route.path;
  }
  ApiError error;
  EXPECT_EQ(FindRoute(Request(http::verb::post, "/detokenize"), kKey, &error)->handler,
            &HandleDetokenize);
  EXPECT_EQ(FindRoute(Request(http::verb::post, "/tokenize"), kKey, &error)->handler,
            &HandleTokenize);
}

// vLLM's API-key middleware guards every path under /v1, routed or not, and nothing else.
TEST(ApiRouterTest, ApiKeyGuardsThePathsUnderV1) {
  for (const Route& route : ApiRoutes()) {
    EXPECT_EQ(route.auth == RouteAuth::kApiKey, route.path.starts_with("/v1/")) << route.path;
    const int status = StatusOf(Request(route.method, route.path, /*with_key=*/false));
    EXPECT_EQ(status, route.auth == RouteAuth::kApiKey ? 401 : 200) << route.path;
  }
  EXPECT_EQ(StatusOf(Request(http::verb::get, "/v1/nothing", /*with_key=*/false)), 401);
  EXPECT_EQ(StatusOf(Request(http::verb::get, "/nothing", /*with_key=*/false)), 404);
  // A known /v1/ path asked with another method: the key is checked first, as in vLLM.
  EXPECT_EQ(StatusOf(Request(http::verb::get, "/v1/completions", /*with_key=*/false)), 401);
  HttpRequest wrong_key = Request(http::verb::get, "/v1/models", /*with_key=*/false);
  wrong_key.set(http::field::authorization, "Bearer other");
  EXPECT_EQ(StatusOf(wrong_key), 401);
  ApiError error;
  EXPECT_NE(FindRoute(Request(http::verb::get, "/v1/models", /*with_key=*/false), "", &error),
            nullptr);
}

TEST(ApiRouterTest, OnlyGenerationIsRefusedDuringShutdown) {
  std::set<std::string_view> refused;
  for (const Route& route : ApiRoutes()) {
    if (route.on_shutdown == RouteOnShutdown::kRefuse) refused.insert(route.path);
  }
  EXPECT_EQ(refused, (std::set<std::string_view>{"/v1/completions", "/v1/chat/completions",
                                                 "/v1/responses", "/generate"}));
}

TEST(ApiRouterTest, PathParametersMatchOneNonEmptySegment) {
  std::vector<std::string> params;
  EXPECT_TRUE(MatchPath("/v1/responses/{id}", "/v1/responses/resp_1", &params));
  EXPECT_EQ(params, std::vector<std::string>{"resp_1"});
  EXPECT_TRUE(MatchPath("/v1/responses/{id}/cancel", "/v1/responses/r/cancel", &params));
  EXPECT_EQ(params, std::vector<std::string>{"r"});
  for (const char* path : {"/v1/responses", "/v1/responses/", "/v1/responses/a/b",
                           "/v1/responses/a/", "/v1/responsesx/a", "/v2/responses/a"}) {
    EXPECT_FALSE(MatchPath("/v1/responses/{id}", path, nullptr)) << path;
  }
  EXPECT_EQ(StatusOf(Request(http::verb::get, "/v1/responses/resp_1?stream=false")), 200);
  EXPECT_EQ(StatusOf(Request(http::verb::post, "/v1/responses/resp_1/cancel")), 200);
  EXPECT_EQ(StatusOf(Request(http::verb::delete_, "/v1/responses/resp_1")), 405);
  EXPECT_EQ(StatusOf(Request(http::verb::get, "/v1/responses/resp_1/other")), 404);
  EXPECT_EQ(StatusOf(Request(http::verb::get, "/v1/responses/resp_1", /*with_key=*/false)), 401);
}

}  // namespace
}  // namespace vllm::server
