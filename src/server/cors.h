// CORS as Starlette's CORSMiddleware applies it with vLLM's flags (--allowed-origins,
// --allow-credentials, --allowed-methods, --allowed-headers): the headers of ordinary responses
// and the answers to preflight requests.
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "server/asio.h"

namespace vllm::server {

struct CorsOptions {
  std::vector<std::string> allowed_origins = {"*"};  // "*": any origin
  bool allow_credentials = false;
  std::vector<std::string> allowed_methods = {"*"};  // "*": every method
  std::vector<std::string> allowed_headers = {"*"};  // "*": whichever a preflight asks for
};

// The header lines ("Name: value\r\n"...) a response to a request from `origin` (empty: none
// sent) carries.
std::string CorsResponseHeaders(const CorsOptions& options, std::string_view origin);

struct CorsPreflightAnswer {
  boost::beast::http::status status;  // 200, or 400 when the origin, method or headers are not
                                      // allowed
  std::string headers;                // header lines, as CorsResponseHeaders
  std::string body;                   // text/plain
};

// The answer to a preflight (OPTIONS with Origin and Access-Control-Request-Method); nullopt
// for any other request.
std::optional<CorsPreflightAnswer> AnswerCorsPreflight(
    const CorsOptions& options, const boost::beast::http::request_header<>& request);

}  // namespace vllm::server
