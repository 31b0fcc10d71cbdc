// --uds: HttpServer::ListenUnix serves the same sessions on a UNIX domain socket, replaces a
// stale socket file, refuses a live one or a non-socket path, and removes its file at the end.
#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <sys/socket.h>
#include <sys/stat.h>

#include <filesystem>
#include <fstream>
#include <optional>
#include <string>
#include <thread>

#include "common/temp_test_dir.h"
#include "server/http_server.h"

namespace vllm::server {
namespace {

using ::testing::HasSubstr;
using ::testing::StartsWith;

bool IsSocket(const std::string& path) {
  struct stat file_status {};
  return lstat(path.c_str(), &file_status) == 0 && S_ISSOCK(file_status.st_mode);
}

// An HttpServer on its own io thread whose handler answers every request with its target.
class UnixServer {
 public:
  UnixServer() : work_(io_context_.get_executor()) {
    server_.emplace(io_context_, HttpOptions{},
                    [](HttpRequest request, std::shared_ptr<ResponseWriter> writer) {
                      writer->Send(http::status::ok, "text/plain",
                                   "target " + std::string(request.target()));
                    });
  }
  ~UnixServer() {
    Stop();
    server_.reset();
  }

  Status Listen(const std::string& path) {
    Status listening = server_->ListenUnix(path);
    if (listening.ok()) thread_ = std::thread([this] { io_context_.run(); });
    return listening;
  }
  // StopAccepting on the io thread, then the thread's end.
  void Stop() {
    if (!thread_.joinable()) return;
    asio::post(io_context_, [this] {
      server_->StopAccepting();
      io_context_.stop();
    });
    thread_.join();
  }

 private:
  asio::io_context io_context_;
  asio::executor_work_guard<asio::io_context::executor_type> work_;
  std::optional<HttpServer> server_;
  std::thread thread_;
};

// One request over the socket at `path`; the whole response (the server closes after it).
std::string Get(const std::string& path, const std::string& target) {
  asio::io_context io_context;
  UnixSocket socket(io_context);
  socket.connect(asio::local::stream_protocol::endpoint(path));
  const std::string request =
      "GET " + target + " HTTP/1.1\r\nHost: localhost\r\nConnection: close\r\n\r\n";
  asio::write(socket, asio::buffer(request));
  std::string response;
  beast::error_code error;
  asio::read(socket, asio::dynamic_buffer(response), error);
  return response;
}

TEST(HttpServerUnixTest, ServesRequestsAndRemovesItsFileWhenStopped) {
  TempTestDir dir("http_server_unix_serves");
  const std::string path = dir.File("server.sock");
  UnixServer server;
  ASSERT_TRUE(server.Listen(path).ok());
  EXPECT_TRUE(IsSocket(path));
  const std::string response = Get(path, "/v1/models");
  EXPECT_THAT(response, StartsWith("HTTP/1.1 200 OK\r\n"));
  EXPECT_THAT(response, HasSubstr("\r\n\r\ntarget /v1/models"));
  EXPECT_THAT(Get(path, "/health"), HasSubstr("target /health"));  // a second connection
  server.Stop();
  EXPECT_FALSE(std::filesystem::exists(path));
}

TEST(HttpServerUnixTest, RemovesItsFileWhenDestroyed) {
  TempTestDir dir("http_server_unix_destroyed");
  const std::string path = dir.File("server.sock");
  {
    asio::io_context io_context;
    HttpServer server(io_context, HttpOptions{},
                      [](HttpRequest, std::shared_ptr<ResponseWriter>) {});
    ASSERT_TRUE(server.ListenUnix(path).ok());
    EXPECT_TRUE(IsSocket(path));
  }
  EXPECT_FALSE(std::filesystem::exists(path));
}

TEST(HttpServerUnixTest, ReplacesAStaleSocketFile) {
  TempTestDir dir("http_server_unix_stale");
  const std::string path = dir.File("server.sock");
  {
    // A socket bound and closed, as a killed server leaves it: the file stays, nobody listens.
    asio::io_context io_context;
    asio::local::stream_protocol::acceptor killed(io_context,
                                                  asio::local::stream_protocol::endpoint(path));
  }
  ASSERT_TRUE(IsSocket(path));
  UnixServer server;
  ASSERT_TRUE(server.Listen(path).ok());
  EXPECT_THAT(Get(path, "/health"), HasSubstr("target /health"));
}

TEST(HttpServerUnixTest, RefusesASocketAnotherServerListensOn) {
  TempTestDir dir("http_server_unix_live");
  const std::string path = dir.File("server.sock");
  UnixServer first;
  ASSERT_TRUE(first.Listen(path).ok());
  UnixServer second;
  const Status refused = second.Listen(path);
  ASSERT_FALSE(refused.ok());
  EXPECT_THAT(refused.message(), HasSubstr("'" + path + "': another server is listening on it"));
  second.Stop();
  // The first still serves, and its file was left alone.
  EXPECT_THAT(Get(path, "/health"), HasSubstr("target /health"));
}

TEST(HttpServerUnixTest, RefusesAPathThatIsNotASocket) {
  TempTestDir dir("http_server_unix_file");
  const std::string path = dir.File("notes.txt");
  std::ofstream(path) << "keep me";
  UnixServer server;
  const Status refused = server.Listen(path);
  ASSERT_FALSE(refused.ok());
  EXPECT_THAT(refused.message(), HasSubstr("it exists and is not a socket"));
  std::ifstream file(path);
  std::string text;
  std::getline(file, text);
  EXPECT_EQ(text, "keep me");
}

TEST(HttpServerUnixTest, RefusesAPathTooLongForASocketAddress) {
  const std::string path = "/tmp/" + std::string(200, 'x') + ".sock";
  UnixServer server;
  const Status refused = server.Listen(path);
  ASSERT_FALSE(refused.ok());
  EXPECT_THAT(refused.message(), HasSubstr("the path must be 1 to 107 bytes long"));
  const Status empty = server.Listen("");
  ASSERT_FALSE(empty.ok());
  EXPECT_THAT(empty.message(), HasSubstr("the path must be 1 to 107 bytes long"));
}

TEST(HttpServerUnixTest, ReportsAMissingDirectory) {
  TempTestDir dir("http_server_unix_missing");
  UnixServer server;
  const Status refused = server.Listen(dir.File("no/such/dir/server.sock"));
  ASSERT_FALSE(refused.ok());
  EXPECT_THAT(refused.message(), HasSubstr("cannot listen on UNIX socket"));
  EXPECT_THAT(refused.message(), HasSubstr("No such file or directory"));
}

}  // namespace
}  // namespace vllm::server
