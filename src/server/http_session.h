// One HTTP/1.1 connection: reads requests (keep-alive, limits), hands each to the router and
// writes its response — a whole body, or a server-sent event stream in chunked encoding.
// Everything here runs on the connection's strand; other threads reach it through Post().
//
// Protocol edges, answered here with the router's JSON error shape and then a close: a request
// header block over 64 KiB is a 431, a target over 8 KiB a 414 (http_limits.h), malformed
// framing a 400, a body over --max-request-body-bytes a 413 (without reading it), a connection
// over --max-connections a 503 and a close at once (RefuseConnection), a body that would take
// the bytes buffered by all connections over --max-buffered-request-bytes a 503 with
// Retry-After. `Expect: 100-continue` gets its 100 once the headers pass. HEAD is answered as
// GET, without the body. CORS preflights are answered here (cors.h); the router never sees them.
//
// Disconnects: while an exchange is under way the session watches the socket. A reset, or a
// failed write, is a disconnect: OnDisconnect's callback runs. A read EOF may be a half-close
// (the client sent all it will and still reads) or a close; the exchange goes on and the
// connection closes after the response. To tell the two apart the session writes something
// the client's kernel answers with a reset if the socket is closed: the response's next bytes
// for a stream, or — when nothing of the response is out yet, on HTTP/1.1 — an interim
// `100 Continue`, which a client must accept before the final response. A half-closed client
// reads it and gets its whole response; a closed one resets, and the request is aborted.
#pragma once

#include <deque>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "server/asio.h"
#include "server/connection_limits.h"
#include "server/cors.h"
#include "server/openai/api_error.h"

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

// Answers one request: a route handler, or the router itself. The request is the handler's to
// keep (its body may move on to a worker).
using RequestHandler =
    std::function<void(HttpRequest request, std::shared_ptr<ResponseWriter> writer)>;

struct HttpOptions {
  size_t max_body_bytes = 32 << 20;        // larger bodies get 413
  std::chrono::seconds idle_timeout{120};  // a keep-alive connection's wait for a request
  CorsOptions cors;
  size_t max_connections = 0;  // more get 503; 0: DefaultMaxConnections (connection_limits.h)
  // Request bodies all connections may buffer together (at least max_body_bytes); a request
  // that would go over gets 503.
  size_t max_buffered_body_bytes = size_t{256} << 20;
};

// Refuses a connection none of whose requests was read (over --max-connections, or with the
// process out of descriptors): a 503 if the socket takes it without blocking, then the close, at
// once. It never waits on the client, so a burst of refused connections holds no descriptors.
void RefuseConnection(asio::ip::tcp::socket& socket);

class HttpSession : public std::enable_shared_from_this<HttpSession> {
 public:
  HttpSession(asio::ip::tcp::socket socket, const HttpOptions& options, ConnectionLimits& limits,
              const RequestHandler& handler);
  // Takes a connection slot and starts reading requests; without a free slot, refuses the
  // connection (RefuseConnection).
  void Start();

 private:
  friend class ResponseWriter;

  void ReadRequest();
  void OnHeader(beast::error_code error);
  void ReadBody();
  void OnRequest();
  // Raises the request's claim on the shared body budget to `amount`; false after answering 503
  // when the budget has no room.
  bool ClaimBodyBytes(size_t amount);
  void OnReadError(beast::error_code error);
  // Answers with `error` (its JSON shape) and closes, reading no more of the request.
  void Reject(const ApiError& error, std::string_view extra_headers = "");
  void Write(std::string bytes);
  void WriteNext();
  void EndExchange();
  void WatchForDisconnect(uint64_t exchange);
  // The client sent EOF during `exchange`: probes it, then waits for a reset.
  void OnClientEof(uint64_t exchange);
  void Close();
  // Closes after the response is out: stops sending, then reads and drops what the client is
  // still sending (up to a few seconds) so it can read the response before the socket goes.
  void LingeringClose();
  // The status line and headers every response carries.
  std::string Head(http::status status, std::string_view content_type) const;

  beast::tcp_stream stream_;
  const HttpOptions& options_;
  const RequestHandler& handler_;
  SharedBudget::Claim connection_slot_;
  // The request body's bytes, from its header until its exchange ends (the router may keep
  // copies of the body as long as it answers).
  SharedBudget::Claim body_bytes_;
  beast::flat_buffer buffer_;
  std::optional<http::request_parser<http::string_body>> parser_;
  bool keep_alive_ = false;   // false once the client half-closed
  bool head_only_ = false;    // a HEAD request: the response has no body
  std::string cors_headers_;  // CORS header lines of this request's response
  bool in_exchange_ = false;
  bool may_send_interim_ = false;  // an HTTP/1.1 exchange with nothing of its response written
  uint64_t exchange_count_ = 0;    // tells a stale disconnect watch from the current one
  bool disconnected_ = false;
  std::function<void()> on_disconnect_;
  std::deque<std::string> pending_writes_;
  bool writing_ = false;
  bool close_after_writes_ = false;
  bool linger_on_close_ = false;  // the request was not read to its end (Reject)
  bool read_after_writes_ = false;
};

}  // namespace vllm::server
