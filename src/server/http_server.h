// The HTTP listener: accepts connections on one io_context and gives each its own HttpSession
// (no thread per connection).
#pragma once

#include <string>

#include "common/expected.h"
#include "server/http_session.h"

namespace vllm::server {

class HttpServer {
 public:
  HttpServer(asio::io_context& io_context, HttpOptions options, RequestHandler handler)
      : io_context_(io_context),
        options_(std::move(options)),
        handler_(std::move(handler)),
        acceptor_(io_context) {}

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
  asio::ip::tcp::acceptor acceptor_;
};

}  // namespace vllm::server
