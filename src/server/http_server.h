// The HTTP listener: accepts connections on one io_context and gives each its own HttpSession
// (no thread per connection).
//
// Limits: past --max-connections open connections, a new one is still accepted, answered 503
// and closed at once (RefuseConnection), so clients learn the server is full instead of waiting
// in the backlog, and a burst of them holds no descriptors. Out of file descriptors (EMFILE), the
// listener frees a descriptor it keeps in reserve, accepts and refuses the same way what waits
// in the backlog, then takes the reserve back. When accepting fails otherwise (ENFILE, no
// reserve, any other error) it pauses 100 ms and tries again; the waiting connections stay in
// the backlog.
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
  ~HttpServer();
  HttpServer(const HttpServer&) = delete;
  HttpServer& operator=(const HttpServer&) = delete;

  // Binds host:port (port 0 picks a free one) and starts accepting.
  Status Listen(const std::string& host, uint16_t port);
  uint16_t port() const { return acceptor_.local_endpoint().port(); }
  // Stops accepting new connections.
  void StopAccepting();

 private:
  void Accept();
  // Out of descriptors: frees the reserve to accept and refuse what waits in the backlog, then
  // takes it back. False when it has no reserve or refused nothing: the caller retries later.
  bool RefuseBacklog();

  asio::io_context& io_context_;
  HttpOptions options_;
  RequestHandler handler_;
  ConnectionLimits limits_;
  asio::ip::tcp::acceptor acceptor_;
  asio::steady_timer accept_retry_timer_;
  bool accept_failing_ = false;  // logs once per run of failures
  int reserve_fd_ = -1;          // a descriptor held for RefuseBacklog; -1 when lost
};

}  // namespace vllm::server
