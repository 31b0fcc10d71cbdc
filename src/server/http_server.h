// The HTTP listener: accepts connections on one io_context and gives each its own HttpSession
// (no thread per connection).
//
// Limits: past --max-connections open connections, a new one is still accepted, answered 503
// and closed at once without waiting on the client (RefuseConnection), so clients learn the
// server is full instead of waiting in the backlog, and a burst of them holds no descriptors.
// When accepting fails (out of file descriptors: EMFILE, ENFILE; or any other error) the listener
// pauses 100 ms and tries again; the waiting connections stay in the backlog.
#pragma once

#include <string>

#include "common/expected.h"
#include "server/connection_limits.h"
#include "server/http_session.h"

namespace vllm::server {

class HttpServer {
 public:
  // Raises the process's open-file limit (RaiseOpenFileLimit).
  HttpServer(asio::io_context& io_context, HttpOptions options, RequestHandler handler);

  // Binds host:port (port 0 picks a free one) and starts accepting.
  Status Listen(const std::string& host, uint16_t port);
  uint16_t port() const { return acceptor_.local_endpoint().port(); }
  // Stops accepting new connections.
  void StopAccepting();

 private:
  void Accept();

  asio::io_context& io_context_;
  HttpOptions options_;
  RequestHandler handler_;
  ConnectionLimits limits_;
  asio::ip::tcp::acceptor acceptor_;
  asio::steady_timer accept_retry_timer_;
  bool accept_failing_ = false;  // logs once per run of failures
};

}  // namespace vllm::server
