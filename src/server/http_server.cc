#include "server/http_server.h"

namespace vllm::server {

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
}

void HttpServer::Accept() {
  acceptor_.async_accept(asio::make_strand(io_context_), [this](beast::error_code error,
                                                                asio::ip::tcp::socket socket) {
    if (error == asio::error::operation_aborted) return;
    if (!error) {
      socket.set_option(asio::ip::tcp::no_delay(true), error);
      std::make_shared<HttpSession>(std::move(socket), options_, handler_)->Start();
    }
    if (acceptor_.is_open()) Accept();
  });
}

}  // namespace vllm::server
