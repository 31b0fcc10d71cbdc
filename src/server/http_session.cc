#include "server/http_session.h"

#include <algorithm>
#include <array>
#include <cstdio>

#include "common/logging.h"

namespace vllm::server {

void ResponseWriter::Send(http::status status, std::string_view content_type, std::string body) {
  if (finished_) return;
  started_ = finished_ = true;
  std::string bytes = session_->Head(status, content_type);
  bytes += "Content-Length: " + std::to_string(body.size()) + "\r\n\r\n";
  bytes += body;
  session_->Write(std::move(bytes));
  session_->EndExchange();
}

void ResponseWriter::StartEventStream() {
  if (started_) return;
  started_ = true;
  std::string bytes = session_->Head(http::status::ok, "text/event-stream; charset=utf-8");
  bytes += "Cache-Control: no-cache\r\nTransfer-Encoding: chunked\r\n\r\n";
  session_->Write(std::move(bytes));
}

void ResponseWriter::SendEvent(std::string_view data) {
  if (!started_ || finished_) return;
  const size_t payload_size = data.size() + 8;  // "data: " + data + "\n\n"
  char size_line[24];
  std::snprintf(size_line, sizeof(size_line), "%zx\r\n", payload_size);
  std::string bytes = size_line;
  bytes.reserve(bytes.size() + payload_size + 2);
  bytes += "data: ";
  bytes += data;
  bytes += "\n\n\r\n";
  session_->Write(std::move(bytes));
}

void ResponseWriter::EndEventStream() {
  if (!started_ || finished_) return;
  finished_ = true;
  session_->Write("0\r\n\r\n");
  session_->EndExchange();
}

bool ResponseWriter::disconnected() const { return session_->disconnected_; }

void ResponseWriter::OnDisconnect(std::function<void()> callback) {
  if (session_->disconnected_) {
    callback();
    return;
  }
  session_->on_disconnect_ = std::move(callback);
}

void ResponseWriter::Post(std::function<void()> fn) {
  asio::post(session_->stream_.get_executor(), std::move(fn));
}

HttpSession::HttpSession(asio::ip::tcp::socket socket, const HttpOptions& options,
                         const RequestHandler& handler)
    : stream_(std::move(socket)), options_(options), handler_(handler) {}

void HttpSession::Start() {
  asio::dispatch(stream_.get_executor(), [self = shared_from_this()] { self->ReadRequest(); });
}

void HttpSession::ReadRequest() {
  read_after_writes_ = false;
  parser_.emplace();
  parser_->body_limit(options_.max_body_bytes);
  parser_->header_limit(64 * 1024);
  stream_.expires_after(options_.idle_timeout);
  http::async_read(
      stream_, buffer_, *parser_,
      [self = shared_from_this()](beast::error_code error, size_t) { self->OnRequest(error); });
}

void HttpSession::OnRequest(beast::error_code error) {
  stream_.expires_never();
  if (error == http::error::body_limit) {
    keep_alive_ = false;
    linger_on_close_ = true;
    in_exchange_ = true;
    ResponseWriter writer(shared_from_this());
    writer.Send(http::status::payload_too_large, "application/json",
                R"({"error":{"message":"The request body exceeds the limit of )" +
                    std::to_string(options_.max_body_bytes) +
                    R"( bytes.","type":"RequestEntityTooLarge","param":null,"code":413}})");
    return;
  }
  if (error) {
    Close();
    return;
  }
  HttpRequest request = parser_->release();
  keep_alive_ = request.keep_alive();
  cors_origin_.clear();
  if (auto origin = request.find(http::field::origin); origin != request.end()) {
    const std::string value(origin->value().data(), origin->value().size());
    const auto& allowed = options_.allowed_origins;
    if (std::find(allowed.begin(), allowed.end(), "*") != allowed.end()) {
      cors_origin_ = "*";
    } else if (std::find(allowed.begin(), allowed.end(), value) != allowed.end()) {
      cors_origin_ = value;
    }
  }
  in_exchange_ = true;
  ++exchange_count_;
  on_disconnect_ = nullptr;
  WatchForDisconnect(exchange_count_);
  auto writer = std::make_shared<ResponseWriter>(shared_from_this());
  try {
    handler_(request, writer);
  } catch (const std::exception& e) {
    VLLM_LOG(kError) << "request handler failed: " << e.what();
    writer->Send(
        http::status::internal_server_error, "application/json",
        R"({"error":{"message":"Internal server error","type":"InternalServerError","param":null,"code":500}})");
  }
}

std::string HttpSession::Head(http::status status, std::string_view content_type) const {
  std::string head = "HTTP/1.1 " + std::to_string(static_cast<int>(status)) + " ";
  const auto reason = http::obsolete_reason(status);
  head.append(reason.data(), reason.size());
  head += "\r\nServer: vllm-cpp\r\nContent-Type: ";
  head += content_type;
  head += "\r\n";
  if (!cors_origin_.empty()) {
    head += "Access-Control-Allow-Origin: " + cors_origin_ + "\r\n";
    head += "Access-Control-Allow-Credentials: true\r\n";
  }
  head += keep_alive_ ? "Connection: keep-alive\r\n" : "Connection: close\r\n";
  return head;
}

void HttpSession::Write(std::string bytes) {
  if (disconnected_) return;
  pending_writes_.push_back(std::move(bytes));
  if (!writing_) WriteNext();
}

void HttpSession::WriteNext() {
  if (disconnected_) return;
  if (pending_writes_.empty()) {
    writing_ = false;
    if (close_after_writes_) {
      linger_on_close_ ? LingeringClose() : Close();
    } else if (read_after_writes_) {
      ReadRequest();
    }
    return;
  }
  writing_ = true;
  asio::async_write(stream_, asio::buffer(pending_writes_.front()),
                    [self = shared_from_this()](beast::error_code error, size_t) {
                      if (error) {
                        self->Close();
                        return;
                      }
                      self->pending_writes_.pop_front();
                      self->WriteNext();
                    });
}

void HttpSession::EndExchange() {
  in_exchange_ = false;
  on_disconnect_ = nullptr;
  if (keep_alive_) {
    read_after_writes_ = true;
  } else {
    close_after_writes_ = true;
  }
  if (!writing_) WriteNext();
}

void HttpSession::WatchForDisconnect(uint64_t exchange) {
  stream_.socket().async_wait(asio::ip::tcp::socket::wait_read,
                              [self = shared_from_this(), exchange](beast::error_code error) {
                                if (exchange != self->exchange_count_ || !self->in_exchange_ ||
                                    error == asio::error::operation_aborted) {
                                  return;
                                }
                                beast::error_code available_error;
                                const size_t available =
                                    self->stream_.socket().available(available_error);
                                // Readable with nothing to read: the peer closed its end. (Bytes
                                // waiting are a pipelined request, read after this exchange.)
                                if (error || available_error || available == 0) self->Close();
                              });
}

void HttpSession::LingeringClose() {
  beast::error_code ignored;
  stream_.socket().shutdown(asio::ip::tcp::socket::shutdown_send, ignored);
  stream_.expires_after(std::chrono::seconds(5));
  auto discard = std::make_shared<std::array<char, 16384>>();
  auto read_more = std::make_shared<std::function<void()>>();
  *read_more = [self = shared_from_this(), discard, read_more] {
    self->stream_.async_read_some(asio::buffer(*discard),
                                  [self, discard, read_more](beast::error_code error, size_t) {
                                    if (error) {
                                      self->Close();
                                      *read_more = nullptr;  // breaks the cycle
                                      return;
                                    }
                                    (*read_more)();
                                  });
  };
  (*read_more)();
}

void HttpSession::Close() {
  if (disconnected_) return;
  disconnected_ = true;
  beast::error_code ignored;
  stream_.socket().shutdown(asio::ip::tcp::socket::shutdown_both, ignored);
  stream_.socket().close(ignored);
  if (auto callback = std::move(on_disconnect_)) {
    on_disconnect_ = nullptr;
    callback();
  }
}

}  // namespace vllm::server
