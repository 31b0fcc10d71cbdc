#include "server/cors.h"

#include <algorithm>
#include <cctype>

#include "common/join.h"
#include "server/header_value.h"

namespace vllm::server {
namespace {

namespace http = boost::beast::http;

constexpr std::string_view kEveryMethod[] = {"DELETE", "GET",  "HEAD", "OPTIONS",
                                             "PATCH",  "POST", "PUT"};
// The CORS-safelisted request headers: a preflight may always ask for them.
constexpr std::string_view kSafelistedHeaders[] = {"accept", "accept-language", "content-language",
                                                   "content-type"};

bool Contains(const std::vector<std::string>& list, std::string_view value) {
  return std::find(list.begin(), list.end(), value) != list.end();
}

std::string Lowercase(std::string_view text) {
  std::string lower(text);
  for (char& c : lower) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return lower;
}

std::string_view Trim(std::string_view text) {
  const size_t begin = text.find_first_not_of(" \t");
  if (begin == std::string_view::npos) return {};
  return text.substr(begin, text.find_last_not_of(" \t") - begin + 1);
}

// True when every name of the comma-separated `names` is in `allowed` (lowercase names).
bool AllListed(const std::vector<std::string>& allowed, std::string_view names) {
  while (true) {
    const size_t comma = names.find(',');
    if (!Contains(allowed, Lowercase(Trim(names.substr(0, comma))))) return false;
    if (comma == std::string_view::npos) return true;
    names.remove_prefix(comma + 1);
  }
}

}  // namespace

std::string CorsResponseHeaders(const CorsOptions& options, std::string_view origin) {
  const bool any_origin = Contains(options.allowed_origins, "*");
  if (origin.empty() || !(any_origin || Contains(options.allowed_origins, origin))) return "";
  if (any_origin && !options.allow_credentials) return "Access-Control-Allow-Origin: *\r\n";
  // Listed origins, or credentials (which a browser refuses with "*"): the origin itself.
  std::string headers = "Access-Control-Allow-Origin: ";
  headers.append(origin);
  headers += "\r\nVary: Origin\r\n";
  if (options.allow_credentials) headers += "Access-Control-Allow-Credentials: true\r\n";
  return headers;
}

std::optional<CorsPreflightAnswer> AnswerCorsPreflight(const CorsOptions& options,
                                                       const http::request_header<>& request) {
  const std::optional<std::string_view> origin = HeaderValue(request, http::field::origin);
  const std::optional<std::string_view> requested_method =
      HeaderValue(request, http::field::access_control_request_method);
  if (request.method() != http::verb::options || !origin || !requested_method) return std::nullopt;
  std::vector<std::string> failures;
  std::string headers;

  const bool any_origin = Contains(options.allowed_origins, "*");
  if (any_origin && !options.allow_credentials) {
    headers += "Access-Control-Allow-Origin: *\r\n";
  } else {
    if (any_origin || Contains(options.allowed_origins, *origin)) {
      headers += "Access-Control-Allow-Origin: " + std::string(*origin) + "\r\n";
    }
    headers += "Vary: Origin\r\n";
  }
  if (!any_origin && !Contains(options.allowed_origins, *origin)) failures.push_back("origin");

  const std::vector<std::string> methods =
      Contains(options.allowed_methods, "*")
          ? std::vector<std::string>(std::begin(kEveryMethod), std::end(kEveryMethod))
          : options.allowed_methods;
  if (!Contains(methods, *requested_method)) failures.push_back("method");
  headers += "Access-Control-Allow-Methods: " + Join(methods, ", ") + "\r\n";
  headers += "Access-Control-Max-Age: 600\r\n";

  const std::optional<std::string_view> requested_headers =
      HeaderValue(request, http::field::access_control_request_headers);
  if (Contains(options.allowed_headers, "*")) {
    if (requested_headers) {
      headers += "Access-Control-Allow-Headers: " + std::string(*requested_headers) + "\r\n";
    }
  } else {
    std::vector<std::string> allowed(std::begin(kSafelistedHeaders), std::end(kSafelistedHeaders));
    for (const std::string& header : options.allowed_headers) allowed.push_back(Lowercase(header));
    std::sort(allowed.begin(), allowed.end());
    allowed.erase(std::unique(allowed.begin(), allowed.end()), allowed.end());
    headers += "Access-Control-Allow-Headers: " + Join(allowed, ", ") + "\r\n";
    if (requested_headers && !AllListed(allowed, *requested_headers)) failures.push_back("headers");
  }
  if (options.allow_credentials) headers += "Access-Control-Allow-Credentials: true\r\n";

  if (failures.empty()) return CorsPreflightAnswer{http::status::ok, std::move(headers), "OK"};
  return CorsPreflightAnswer{http::status::bad_request, std::move(headers),
                             "Disallowed CORS " + Join(failures, ", ")};
}

}  // namespace vllm::server
