// One HTTP/1.1 connection: reads requests (keep-alive, a body limit), hands each to the router
// and writes its response — a whole body, or a server-sent event stream in chunked encoding.
// Everything here runs on the connection's strand; other threads reach it through Post().
#pragma once

#include <deque>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "server/asio.h"

namespace vllm::server {

namespace beast = boost::beast;
namespace http = boost::beast::http;
namespace asio = boost::asio;

using HttpRequest = http::request<http::string_body>;
class HttpSession;

// How one request is answered. Handlers keep it (a shared pointer) until they have answered;
// every call must run on the session's strand (see Post).
class ResponseWriter {
 public:
  explicit ResponseWriter(std::shared_ptr<HttpSession> session) : session_(std::move(session)) {}

  // A complete response; ends the exchange.
  void Send(http::status status, std::string_view content_type, std::string body);
  // Starts a `text/event-stream` response (200, chunked).
  void StartEventStream();
  // Writes one `data: <data>\n\n` event.
  void SendEvent(std::string_view data);
  // Ends the event stream; ends the exchange.
  void EndEventStream();

  bool started() const { return started_; }
  bool disconnected() const;
  // `callback` runs (once, on the strand) if the client goes away before the exchange ends.
  void OnDisconnect(std::function<void()> callback);
  // Runs `fn` on the session's strand; safe from any thread.
  void Post(std::function<void()> fn);

 private:
  std::shared_ptr<HttpSession> session_;
  bool started_ = false;
  bool finished_ = false;
};

// Answers one request: a route handler, or the router itself.
using RequestHandler =
    std::function<void(const HttpRequest& request, std::shared_ptr<ResponseWriter> writer)>;

struct HttpOptions {
  size_t max_body_bytes = 32 << 20;                  // larger bodies get 413
  std::chrono::seconds idle_timeout{120};            // a keep-alive connection's wait for a request
  std::vector<std::string> allowed_origins = {"*"};  // CORS; "*" allows every origin
};

class HttpSession : public std::enable_shared_from_this<HttpSession> {
 public:
  HttpSession(asio::ip::tcp::socket socket, const HttpOptions& options,
              const RequestHandler& handler);
  void Start();

 private:
  friend class ResponseWriter;

  void ReadRequest();
  void OnRequest(beast::error_code error);
  void Write(std::string bytes);
  void WriteNext();
  void EndExchange();
  void WatchForDisconnect(uint64_t exchange);
  void Close();
  // Closes after the response is out: stops sending, then reads and drops what the client is
  // still sending (up to a few seconds) so it can read the response before the socket goes.
  void LingeringClose();
  // The status line and headers every response carries.
  std::string Head(http::status status, std::string_view content_type) const;

  beast::tcp_stream stream_;
  const HttpOptions& options_;
  const RequestHandler& handler_;
  beast::flat_buffer buffer_;
  std::optional<http::request_parser<http::string_body>> parser_;
  bool keep_alive_ = false;
  std::string cors_origin_;  // what Access-Control-Allow-Origin says for this request; empty: none
  bool in_exchange_ = false;
  uint64_t exchange_count_ = 0;  // tells a stale disconnect watch from the current one
  bool disconnected_ = false;
  std::function<void()> on_disconnect_;
  std::deque<std::string> pending_writes_;
  bool writing_ = false;
  bool close_after_writes_ = false;
  bool linger_on_close_ = false;  // the request body was not read (413)
  bool read_after_writes_ = false;
};

}  // namespace vllm::server
