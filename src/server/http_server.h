// The HTTP listener: accepts connections on one io_context and gives each its own HttpSession
// (no thread per connection).
//
// Limits: past --max-connections open connections, a new one is still accepted, answered 503
// and closed at once without waiting on the client (RefuseConnection), so clients learn the
// server is full instead of waiting in the backlog, and a burst of them holds no descriptors.
// When accepting fails (out of file descriptors: EMFILE, ENFILE; or any other error) the listener
// pauses 100 ms and tries again; the waiting connections stay in the backlog.
//
// --uds: ListenUnix serves the same sessions (and HTTPS) on a UNIX domain socket instead of
// host:port, as vLLM does. Its file is created at start and removed when accepting stops.
#pragma once

#include <sys/types.h>

#include <optional>
#include <string>

#include "common/expected.h"
#include "server/connection_limits.h"
#include "server/http_session.h"

namespace vllm::server {

class HttpServer {
 public:
  // Raises the process's open-file limit (RaiseOpenFileLimit).
  HttpServer(asio::io_context& io_context, HttpOptions options, RequestHandler handler);
  // Removes the UNIX socket's file (StopAccepting).
  ~HttpServer();

  // Binds host:port (port 0 picks a free one) and starts accepting.
  Status Listen(const std::string& host, uint16_t port);
  uint16_t port() const { return acceptor_.local_endpoint().port(); }
  // Binds a UNIX domain socket at `path` and starts accepting. A socket file no server answers on
  // (left by one that was killed) is replaced; a path that exists and is not a socket, or a
  // socket a server still answers on, is refused.
  Status ListenUnix(const std::string& path);
  // Stops accepting new connections; removes the UNIX socket's file (if still the one bound).
  void StopAccepting();

 private:
  template <class Acceptor>
  void Accept(Acceptor& acceptor);
  void RemoveUnixSocketFile();

  asio::io_context& io_context_;
  HttpOptions options_;
  RequestHandler handler_;
  ConnectionLimits limits_;
  asio::ip::tcp::acceptor acceptor_;
  asio::local::stream_protocol::acceptor unix_acceptor_;
  // The bound socket file and its identity (so a file another process put there stays).
  struct BoundSocketFile {
    std::string path;
    dev_t device;
    ino_t inode;
  };
  std::optional<BoundSocketFile> unix_socket_file_;
  asio::steady_timer accept_retry_timer_;
  bool accept_failing_ = false;  // logs once per run of failures
};

}  // namespace vllm::server
