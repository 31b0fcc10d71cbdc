#include "server/http_server.h"

#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <type_traits>

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
      unix_acceptor_(io_context),
      accept_retry_timer_(io_context) {}

HttpServer::~HttpServer() { RemoveUnixSocketFile(); }

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
  Accept(acceptor_);
  return Status::Ok();
}

Status HttpServer::ListenUnix(const std::string& path) {
  const std::string where = "cannot listen on UNIX socket '" + path + "': ";
  if (path.empty() || path.size() >= sizeof(sockaddr_un::sun_path)) {
    return Error{where + "the path must be 1 to " +
                 std::to_string(sizeof(sockaddr_un::sun_path) - 1) + " bytes long"};
  }
  const asio::local::stream_protocol::endpoint endpoint(path);
  struct stat file_status {};
  if (lstat(path.c_str(), &file_status) == 0) {
    if (!S_ISSOCK(file_status.st_mode)) return Error{where + "it exists and is not a socket"};
    // A socket file outlives a killed server: replace it unless a server still answers on it.
    asio::local::stream_protocol::socket probe(io_context_);
    beast::error_code connect_error;
    probe.connect(endpoint, connect_error);
    if (!connect_error) return Error{where + "another server is listening on it"};
    if (connect_error != asio::error::connection_refused) {
      return Error{where + connect_error.message()};
    }
    if (unlink(path.c_str()) != 0) {
      return Error{where + "cannot remove the stale socket: " + std::strerror(errno)};
    }
    VLLM_LOG(kInfo) << "removed the stale socket " << path;
  } else if (errno != ENOENT) {
    return Error{where + std::strerror(errno)};
  }
  beast::error_code error;
  unix_acceptor_.open(endpoint.protocol(), error);
  if (!error) unix_acceptor_.bind(endpoint, error);
  if (!error) unix_acceptor_.listen(asio::socket_base::max_listen_connections, error);
  if (error) return Error{where + error.message()};
  if (lstat(path.c_str(), &file_status) == 0) {
    unix_socket_file_ = BoundSocketFile{path, file_status.st_dev, file_status.st_ino};
  }
  Accept(unix_acceptor_);
  return Status::Ok();
}

void HttpServer::StopAccepting() {
  beast::error_code ignored;
  acceptor_.close(ignored);
  unix_acceptor_.close(ignored);
  accept_retry_timer_.cancel();
  RemoveUnixSocketFile();
}

void HttpServer::RemoveUnixSocketFile() {
  if (!unix_socket_file_) return;
  struct stat file_status {};
  if (lstat(unix_socket_file_->path.c_str(), &file_status) == 0 &&
      file_status.st_dev == unix_socket_file_->device &&
      file_status.st_ino == unix_socket_file_->inode) {
    unlink(unix_socket_file_->path.c_str());
  }
  unix_socket_file_.reset();
}

template <class Acceptor>
void HttpServer::Accept(Acceptor& acceptor) {
  acceptor.async_accept(
      asio::make_strand(io_context_),
      [this, &acceptor](beast::error_code error, typename Acceptor::protocol_type::socket socket) {
        if (error == asio::error::operation_aborted || !acceptor.is_open()) return;
        if (error) {
          // The connection stays in the backlog: retrying at once would spin.
          if (!accept_failing_) {
            VLLM_LOG(kWarning) << "cannot accept connections (" << error.message()
                               << "); retrying every 100 ms";
          }
          accept_failing_ = true;
          accept_retry_timer_.expires_after(std::chrono::milliseconds(100));
          accept_retry_timer_.async_wait([this, &acceptor](beast::error_code timer_error) {
            if (!timer_error && acceptor.is_open()) Accept(acceptor);
          });
          return;
        }
        accept_failing_ = false;
        if constexpr (std::is_same_v<Acceptor, asio::ip::tcp::acceptor>) {
          socket.set_option(asio::ip::tcp::no_delay(true), error);
        }
        StartHttpSession(std::move(socket), options_, limits_, handler_);
        Accept(acceptor);
      });
}

}  // namespace vllm::server
