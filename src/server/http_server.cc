#include "server/http_server.h"

#include <algorithm>

#include "common/logging.h"

namespace vllm::server {

HttpServer::HttpServer(asio::io_context& io_context, HttpOptions options, RequestHandler handler)
    : io_context_(io_context),
      options_(std::move(options)),
      handler_(std::move(handler)),
      limits_{
          SharedBudget(options_.max_connections > 0 ? options_.max_connections
                                                    : DefaultMaxConnections(RaiseOpenFileLimit())),
          SharedBudget(std::max(options_.max_buffered_body_bytes, options_.max_body_bytes))},
      acceptor_(io_context),
      accept_retry_timer_(io_context) {}

Status HttpServer::Listen(const std::string& host, uint16_t port) {
  beast::error_code error;
  asio::ip::tcp::resolver resolver(io_context_);
  auto endpoints =
      resolver.resolve(host, std::to_string(port), asio::ip::tcp::resolver::passive, error);
  if (error || endpoints.empty()) {
    return Error{"cannot resolve host '" + host + "': " + error.message()};
  }
  const asio::ip::tcp::endpoint endpoint = endpoints.begin()->endpoint();
  acceptor_.open(endpoint.protocol(), error);
  if (!error) acceptor_.set_option(asio::socket_base::reuse_address(true), error);
  if (!error) acceptor_.bind(endpoint, error);
  if (!error) acceptor_.listen(asio::socket_base::max_listen_connections, error);
  if (error) {
    return Error{"cannot listen on " + host + ":" + std::to_string(port) + ": " + error.message()};
  }
  Accept();
  return Status::Ok();
}

void HttpServer::StopAccepting() {
  beast::error_code ignored;
  acceptor_.close(ignored);
  accept_retry_timer_.cancel();
}

void HttpServer::Accept() {
  acceptor_.async_accept(asio::make_strand(io_context_),
                         [this](beast::error_code error, asio::ip::tcp::socket socket) {
                           if (error == asio::error::operation_aborted || !acceptor_.is_open())
                             return;
                           if (error) {
                             // The connection stays in the backlog: retrying at once would spin.
                             if (!accept_failing_) {
                               VLLM_LOG(kWarning) << "cannot accept connections ("
                                                  << error.message() << "); retrying every 100 ms";
                             }
                             accept_failing_ = true;
                             accept_retry_timer_.expires_after(std::chrono::milliseconds(100));
                             accept_retry_timer_.async_wait([this](beast::error_code timer_error) {
                               if (!timer_error && acceptor_.is_open()) Accept();
                             });
                             return;
                           }
                           accept_failing_ = false;
                           socket.set_option(asio::ip::tcp::no_delay(true), error);
                           StartHttpSession(std::move(socket), options_, limits_, handler_);
                           Accept();
                         });
}

}  // namespace vllm::server
