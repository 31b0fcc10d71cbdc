#include "hub/http_client.h"

#include <openssl/ssl.h>

#include <algorithm>
#include <cctype>
#include <chrono>
#include <cstdint>
#include <limits>

#include "hub/ascii_lower.h"

// clang-format off
#include <utility>
#include <boost/asio.hpp>
#include <boost/asio/ssl.hpp>
#include <boost/beast/core.hpp>
#include <boost/beast/http.hpp>
#include <boost/beast/ssl.hpp>
// clang-format on

namespace vllm::hub {
namespace {

namespace asio = boost::asio;
namespace beast = boost::beast;
namespace http = beast::http;
namespace ssl = asio::ssl;

// The most of an error response's body kept for its message.
constexpr size_t kMaxErrorBodyBytes = 64 << 10;

bool IsRedirect(int status) {
  return status == 301 || status == 302 || status == 303 || status == 307 || status == 308;
}

// Runs the one asynchronous operation `start` begins to completion; its error code.
template <typename Start>
beast::error_code Await(asio::io_context& io_context, Start&& start) {
  beast::error_code result;
  start([&result](beast::error_code error, auto&&...) { result = error; });
  io_context.restart();
  io_context.run();
  return result;
}

std::string Describe(const beast::error_code& error) {
  if (error == beast::error::timeout) return "timed out";
  if (error == http::error::partial_message || error == asio::error::eof ||
      error == asio::error::connection_reset) {
    return "the connection closed early";
  }
  return error.message();
}

struct Exchange {
  http::verb method;
  const Url& url;
  std::string authorization;
  int64_t offset;
  const HttpClient::BodySink* sink;  // null: the body goes to the response (up to a limit)
  int64_t max_body_bytes;
  std::chrono::steady_clock::duration timeout;
};

// One request and its response on a connected `stream`.
template <typename Stream>
Expected<HttpResponse> RunExchange(asio::io_context& io_context, Stream& stream,
                                   const Exchange& exchange) {
  auto& tcp = beast::get_lowest_layer(stream);
  http::request<http::empty_body> request{exchange.method, exchange.url.target, 11};
  const bool default_port = (exchange.url.scheme == "https" && exchange.url.port == "443") ||
                            (exchange.url.scheme == "http" && exchange.url.port == "80");
  request.set(http::field::host,
              default_port ? exchange.url.host : exchange.url.host + ":" + exchange.url.port);
  request.set(http::field::user_agent, "vllm-cpp");
  request.set(http::field::accept_encoding, "identity");
  if (!exchange.authorization.empty()) {
    request.set(http::field::authorization, exchange.authorization);
  }
  if (exchange.offset > 0) {
    request.set(http::field::range, "bytes=" + std::to_string(exchange.offset) + "-");
  }
  tcp.expires_after(exchange.timeout);
  if (auto error = Await(io_context, [&](auto handler) {
        http::async_write(stream, request, std::move(handler));
      })) {
    return Error{"sending the request: " + Describe(error)};
  }
  http::response_parser<http::buffer_body> parser;
  // Not boost::none: Boost 1.74 compares a Content-Length against the empty optional as above it.
  parser.body_limit(std::numeric_limits<std::uint64_t>::max());
  if (exchange.method == http::verb::head) parser.skip(true);
  beast::flat_buffer buffer;
  tcp.expires_after(exchange.timeout);
  if (auto error = Await(io_context, [&](auto handler) {
        http::async_read_header(stream, buffer, parser, std::move(handler));
      })) {
    return Error{"reading the response: " + Describe(error)};
  }
  HttpResponse response;
  response.url = exchange.url;
  response.status = static_cast<int>(parser.get().result_int());
  for (const auto& field : parser.get()) {
    response.headers[AsciiLower(std::string(field.name_string()))] = std::string(field.value());
  }
  const bool to_sink = exchange.sink != nullptr && response.status / 100 == 2;
  if (to_sink) VLLM_RETURN_IF_ERROR(exchange.sink->on_start(response));
  const size_t body_limit = to_sink ? SIZE_MAX
                            : response.status / 100 == 2
                                ? static_cast<size_t>(exchange.max_body_bytes)
                                : kMaxErrorBodyBytes;
  char chunk[64 << 10];
  while (!parser.is_done()) {
    parser.get().body().data = chunk;
    parser.get().body().size = sizeof(chunk);
    tcp.expires_after(exchange.timeout);
    auto error = Await(io_context, [&](auto handler) {
      http::async_read(stream, buffer, parser, std::move(handler));
    });
    if (error == http::error::need_buffer) error = {};
    const size_t size = sizeof(chunk) - parser.get().body().size;
    if (to_sink) {
      VLLM_RETURN_IF_ERROR(exchange.sink->on_bytes(chunk, size));
    } else if (response.body.size() + size > body_limit) {
      if (response.status / 100 == 2) {
        return Error{"the response from " + exchange.url.Origin() + " is over " +
                     std::to_string(body_limit) + " bytes"};
      }
      break;  // an error's message needs only its start
    } else {
      response.body.append(chunk, size);
    }
    if (error) return Error{"reading the response body: " + Describe(error)};
  }
  return response;
}

Expected<HttpResponse> RunOnNewConnection(const Exchange& exchange) {
  asio::io_context io_context(1);
  asio::ip::tcp::resolver resolver(io_context);
  asio::ip::tcp::resolver::results_type endpoints;
  beast::error_code error;
  endpoints = resolver.resolve(exchange.url.host, exchange.url.port, error);
  if (error) return Error{"cannot resolve " + exchange.url.host + ": " + error.message()};
  auto connect = [&](beast::tcp_stream& tcp) -> Status {
    tcp.expires_after(exchange.timeout);
    if (auto failed = Await(
            io_context, [&](auto handler) { tcp.async_connect(endpoints, std::move(handler)); })) {
      return Error{"cannot connect to " + exchange.url.Origin() + ": " + Describe(failed)};
    }
    return Status::Ok();
  };
  if (exchange.url.scheme == "http") {
    beast::tcp_stream stream(io_context);
    VLLM_RETURN_IF_ERROR(connect(stream));
    return RunExchange(io_context, stream, exchange);
  }
  ssl::context context(ssl::context::tls_client);
  context.set_default_verify_paths();
  context.set_verify_mode(ssl::verify_peer);
  beast::ssl_stream<beast::tcp_stream> stream(io_context, context);
  stream.set_verify_callback(ssl::host_name_verification(exchange.url.host));
  if (!SSL_set_tlsext_host_name(stream.native_handle(), exchange.url.host.c_str())) {
    return Error{"cannot set the TLS server name " + exchange.url.host};
  }
  VLLM_RETURN_IF_ERROR(connect(beast::get_lowest_layer(stream)));
  beast::get_lowest_layer(stream).expires_after(exchange.timeout);
  if (auto failed = Await(io_context, [&](auto handler) {
        stream.async_handshake(ssl::stream_base::client, std::move(handler));
      })) {
    return Error{"TLS with " + exchange.url.Origin() + " failed: " + Describe(failed)};
  }
  return RunExchange(io_context, stream, exchange);
}

}  // namespace

std::string Url::Origin() const { return scheme + "://" + host + ":" + port; }

std::string HttpResponse::Header(const std::string& lowercase_name) const {
  auto it = headers.find(lowercase_name);
  return it == headers.end() ? std::string() : it->second;
}

Expected<Url> ParseUrl(const std::string& text) {
  Url url;
  const size_t scheme_end = text.find("://");
  if (scheme_end == std::string::npos) return Error{"'" + text + "' is not an http(s) URL"};
  url.scheme = AsciiLower(text.substr(0, scheme_end));
  if (url.scheme != "http" && url.scheme != "https") {
    return Error{"'" + text + "' is not an http(s) URL"};
  }
  const size_t authority_begin = scheme_end + 3;
  const size_t path_begin = text.find_first_of("/?#", authority_begin);
  std::string authority = text.substr(authority_begin, path_begin - authority_begin);
  if (authority.find('@') != std::string::npos) {
    return Error{"'" + text + "': credentials in the URL are not supported"};
  }
  url.target = path_begin == std::string::npos ? "/" : text.substr(path_begin);
  if (size_t hash = url.target.find('#'); hash != std::string::npos) url.target.resize(hash);
  if (url.target.empty() || url.target.front() != '/') url.target.insert(0, "/");
  url.port = url.scheme == "https" ? "443" : "80";
  if (!authority.empty() && authority.front() == '[') {  // [IPv6]:port
    const size_t close = authority.find(']');
    if (close == std::string::npos) return Error{"'" + text + "' has a bad host"};
    url.host = authority.substr(1, close - 1);
    if (close + 1 < authority.size() && authority[close + 1] == ':') {
      url.port = authority.substr(close + 2);
    }
  } else if (size_t colon = authority.rfind(':'); colon != std::string::npos) {
    url.host = authority.substr(0, colon);
    url.port = authority.substr(colon + 1);
  } else {
    url.host = authority;
  }
  if (url.host.empty() || url.port.empty() ||
      !std::all_of(url.port.begin(), url.port.end(), [](char c) { return c >= '0' && c <= '9'; })) {
    return Error{"'" + text + "' has a bad host or port"};
  }
  return url;
}

Expected<Url> ResolveLocation(const Url& base, const std::string& location) {
  if (location.find("://") != std::string::npos) return ParseUrl(location);
  if (location.rfind("//", 0) == 0) return ParseUrl(base.scheme + ":" + location);
  Url url = base;
  if (!location.empty() && location.front() == '/') {
    url.target = location;
  } else {  // relative to the base's folder
    std::string folder = base.target.substr(0, base.target.find('?'));
    folder.resize(folder.rfind('/') + 1);
    url.target = folder + location;
  }
  return url;
}

std::string PercentEncode(const std::string& text, bool keep_slash) {
  static const char kHex[] = "0123456789ABCDEF";
  std::string encoded;
  for (unsigned char c : text) {
    if (std::isalnum(c) || c == '-' || c == '_' || c == '.' || c == '~' ||
        (keep_slash && c == '/')) {
      encoded += static_cast<char>(c);
    } else {
      encoded += '%';
      encoded += kHex[c >> 4];
      encoded += kHex[c & 15];
    }
  }
  return encoded;
}

Expected<HttpResponse> HttpClient::Head(const std::string& url) const {
  return Request(/*head=*/true, url, 0, nullptr, Redirects::kRelative);
}

Expected<HttpResponse> HttpClient::GetText(const std::string& url) const {
  return Request(/*head=*/false, url, 0, nullptr, Redirects::kAll);
}

Expected<HttpResponse> HttpClient::Download(const std::string& url, int64_t offset,
                                            const BodySink& sink) const {
  return Request(/*head=*/false, url, offset, &sink, Redirects::kAll);
}

Expected<HttpResponse> HttpClient::Request(bool head, const std::string& url, int64_t offset,
                                           const BodySink* sink, Redirects redirects) const {
  auto first = ParseUrl(url);
  if (!first) return Error{first.error()};
  Url current = *first;
  for (int redirect_count = 0;; ++redirect_count) {
    // The token goes only to the origin it was given for, never to a CDN a redirect names.
    const bool same_origin = current.Origin() == first->Origin();
    Exchange exchange{.method = head ? http::verb::head : http::verb::get,
                      .url = current,
                      .authorization = same_origin && !options_.bearer_token.empty()
                                           ? "Bearer " + options_.bearer_token
                                           : std::string(),
                      .offset = offset,
                      .sink = sink,
                      .max_body_bytes = options_.max_text_bytes,
                      .timeout = std::chrono::duration_cast<std::chrono::steady_clock::duration>(
                          std::chrono::duration<double>(options_.timeout_seconds))};
    auto response = RunOnNewConnection(exchange);
    if (!response) return Error{current.Origin() + current.target + ": " + response.error()};
    if (!IsRedirect(response->status)) return response;
    const std::string location = response->Header("location");
    const bool relative = location.find("://") == std::string::npos && location.rfind("//", 0) != 0;
    if (redirects == Redirects::kRelative && !relative) return response;
    if (redirect_count == options_.max_redirects) {
      return Error{url + ": more than " + std::to_string(options_.max_redirects) + " redirects"};
    }
    if (location.empty()) return Error{url + ": a redirect without a Location"};
    auto next = ResolveLocation(current, location);
    if (!next) return Error{url + ": redirected to " + next.error()};
    current = *next;
  }
}

}  // namespace vllm::hub
