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
//
// Over TLS (HttpOptions::tls) the same, but TLS records cannot be peeked at: the watch reads
// through the TLS layer (a pipelined request's bytes are kept for the next exchange), and a
// close_notify or a TCP close without one counts as the client's EOF.
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
using UnixSocket = asio::local::stream_protocol::socket;  // --uds
class HttpSession;
class TlsContext;

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
  // Ends the event stream (or any chunked stream); ends the exchange.
  void EndEventStream();
  // A chunked 200 response of another type (/generate's JSON lines), written as it comes.
  void StartStream(std::string_view content_type);
  // Writes `data` as it is (one chunk; nothing when empty, which would end the stream).
  void SendChunk(std::string_view data);

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
  std::shared_ptr<TlsContext> tls;  // set: HTTPS only (tls_context.h)
};

// Refuses a connection none of whose requests was read (over --max-connections, or with the
// process out of descriptors): a 503 if the socket takes it without blocking, then the close, at
// once. It never waits on the client, so a burst of refused connections holds no descriptors.
void RefuseConnection(asio::ip::tcp::socket& socket);
void RefuseConnection(UnixSocket& socket);

// Serves one accepted connection: over TLS when options.tls is set (the handshake first, within
// idle_timeout), else plain HTTP. Takes a connection slot first; without one, a plain connection
// is refused (RefuseConnection) and a TLS one closed at once (no answer can reach a client that
// has not finished its handshake, and waiting for one would hold the descriptor).
void StartHttpSession(asio::ip::tcp::socket socket, const HttpOptions& options,
                      ConnectionLimits& limits, const RequestHandler& handler);
// The same over a UNIX domain socket (--uds): the same session code, HTTPS too.
void StartHttpSession(UnixSocket socket, const HttpOptions& options, ConnectionLimits& limits,
                      const RequestHandler& handler);

// What ResponseWriter needs of a connection; BasicHttpSession<Stream> (http_session.cc) is the
// connection itself, over a plain TCP or UNIX stream or a TLS one over either.
class HttpSession : public std::enable_shared_from_this<HttpSession> {
 public:
  virtual ~HttpSession() = default;

 protected:
  friend class ResponseWriter;

  HttpSession(const HttpOptions& options, const RequestHandler& handler)
      : options_(options), handler_(handler) {}

  virtual void Write(std::string bytes) = 0;
  virtual void EndExchange() = 0;
  // Runs `fn` on the connection's strand.
  virtual void Post(std::function<void()> fn) = 0;
  // The status line and headers every response carries.
  std::string Head(http::status status, std::string_view content_type) const;

  const HttpOptions& options_;
  const RequestHandler& handler_;
  bool keep_alive_ = false;   // false once the client half-closed
  bool head_only_ = false;    // a HEAD request: the response has no body
  std::string cors_headers_;  // CORS header lines of this request's response
  bool disconnected_ = false;
  std::function<void()> on_disconnect_;
};

}  // namespace vllm::server
