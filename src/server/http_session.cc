#include "server/http_session.h"

#include <algorithm>
#include <array>
#include <cstdio>

#include "common/logging.h"
#include "server/header_value.h"
#include "server/http_limits.h"
#include "server/openai/api_error.h"

namespace vllm::server {
namespace {

ApiError TargetTooLong() {
  return {http::status::uri_too_long,
          "The request target exceeds the limit of " + std::to_string(kMaxTargetBytes) + " bytes.",
          ""};
}

// The status line and the headers every response carries.
std::string ResponseHead(http::status status, std::string_view content_type,
                         std::string_view cors_headers, bool keep_alive) {
  std::string head = "HTTP/1.1 " + std::to_string(static_cast<int>(status)) + " ";
  const auto reason = http::obsolete_reason(status);
  head.append(reason.data(), reason.size());
  head += "\r\nServer: vllm-cpp\r\nContent-Type: ";
  head += content_type;
  head += "\r\n";
  head += cors_headers;
  head += keep_alive ? "Connection: keep-alive\r\n" : "Connection: close\r\n";
  return head;
}

// A whole response carrying `error` in the router's JSON shape.
std::string ErrorResponse(const ApiError& error, std::string_view extra_headers,
                          std::string_view cors_headers, bool keep_alive) {
  const std::string body = error.ToJson();
  std::string bytes = ResponseHead(error.status, "application/json", cors_headers, keep_alive);
  bytes.append(extra_headers);
  bytes += "Content-Length: " + std::to_string(body.size()) + "\r\n\r\n" + body;
  return bytes;
}

// What a read would report, without reading: eof after a half-close, an error after a reset,
// none when bytes are waiting.
beast::error_code PeekError(asio::ip::tcp::socket& socket) {
  char byte;
  beast::error_code error;
  socket.receive(asio::buffer(&byte, 1), asio::socket_base::message_peek, error);
  return error;
}

}  // namespace

void RefuseConnection(asio::ip::tcp::socket& socket) {
  static const std::string response =
      ErrorResponse(ApiError::Unavailable("The server has too many open connections. Retry later."),
                    "Retry-After: 1\r\n", "", false);
  beast::error_code ignored;
  socket.non_blocking(true, ignored);
  // A new socket's send buffer takes a few hundred bytes whole; if not, the client gets part of
  // the answer, or none, and the close.
  socket.write_some(asio::buffer(response), ignored);
  socket.shutdown(asio::ip::tcp::socket::shutdown_send, ignored);
  // Reads what the client has sent so far (a request, usually): a close with unread bytes is a
  // reset, which can destroy the answer before the client reads it.
  std::array<char, 4096> discard;
  for (size_t num_read = 0; num_read < 16 * discard.size();) {
    const size_t num_bytes = socket.read_some(asio::buffer(discard), ignored);
    if (num_bytes == 0) break;  // nothing more waiting (would block), or an error
    num_read += num_bytes;
  }
  socket.close(ignored);
}

void ResponseWriter::Send(http::status status, std::string_view content_type, std::string body) {
  if (finished_) return;
  started_ = finished_ = true;
  std::string bytes = session_->Head(status, content_type);
  bytes += "Content-Length: " + std::to_string(body.size()) + "\r\n\r\n";
  if (!session_->head_only_) bytes += body;
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
  if (!started_ || finished_ || session_->head_only_) return;
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
  if (!session_->head_only_) session_->Write("0\r\n\r\n");
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
                         ConnectionLimits& limits, const RequestHandler& handler)
    : stream_(std::move(socket)),
      options_(options),
      handler_(handler),
      connection_slot_(limits.connections),
      body_bytes_(limits.buffered_body_bytes) {}

void HttpSession::Start() {
  if (!connection_slot_.GrowTo(1)) {
    // No operation of this session has started: the socket is still the acceptor's to use.
    return RefuseConnection(stream_.socket());
  }
  asio::dispatch(stream_.get_executor(), [self = shared_from_this()] { self->ReadRequest(); });
}

void HttpSession::ReadRequest() {
  read_after_writes_ = false;
  head_only_ = false;
  cors_headers_.clear();
  parser_.emplace();
  parser_->body_limit(options_.max_body_bytes);
  parser_->header_limit(kMaxHeaderBytes);
  stream_.expires_after(options_.idle_timeout);
  http::async_read_header(
      stream_, buffer_, *parser_,
      [self = shared_from_this()](beast::error_code error, size_t) { self->OnHeader(error); });
}

void HttpSession::OnHeader(beast::error_code error) {
  if (error) return OnReadError(error);
  const HttpRequest& request = parser_->get();
  keep_alive_ = request.keep_alive();
  cors_headers_ =
      CorsResponseHeaders(options_.cors, HeaderValue(request, http::field::origin).value_or(""));
  if (request.target().size() > kMaxTargetBytes) {
    return Reject(TargetTooLong());
  }
  if (const auto length = parser_->content_length(); length && !ClaimBodyBytes(*length)) return;
  if (!parser_->is_done() && request.version() == 11 &&
      beast::iequals(request[http::field::expect], "100-continue")) {
    Write("HTTP/1.1 100 Continue\r\n\r\n");
  }
  ReadBody();
}

void HttpSession::ReadBody() {
  if (parser_->is_done()) return OnRequest();
  http::async_read_some(stream_, buffer_, *parser_,
                        [self = shared_from_this()](beast::error_code error, size_t) {
                          if (error) return self->OnReadError(error);
                          // Chunked bodies claim their bytes as they arrive.
                          if (self->ClaimBodyBytes(self->parser_->get().body().size()))
                            self->ReadBody();
                        });
}

bool HttpSession::ClaimBodyBytes(size_t amount) {
  if (body_bytes_.GrowTo(amount)) return true;
  Reject(ApiError::Unavailable("The server is buffering too many request bodies. Retry later."),
         "Retry-After: 1\r\n");
  return false;
}

void HttpSession::OnReadError(beast::error_code error) {
  if (error == http::error::body_limit) {
    cors_headers_ = CorsResponseHeaders(
        options_.cors, HeaderValue(parser_->get(), http::field::origin).value_or(""));
    return Reject({http::status::payload_too_large,
                   "The request body exceeds the limit of " +
                       std::to_string(options_.max_body_bytes) + " bytes.",
                   ""});
  }
  if (error == http::error::header_limit) {
    // The parser takes the request line as soon as it is whole: a target still missing, or
    // long, is what went over.
    const size_t target_size = parser_->get().target().size();
    if (target_size == 0 || target_size > kMaxTargetBytes) {
      return Reject(TargetTooLong());
    }
    return Reject({http::status::request_header_fields_too_large,
                   "The request header fields exceed the limit of " +
                       std::to_string(kMaxHeaderBytes) + " bytes.",
                   ""});
  }
  // The parser's errors, but for the client closing before or within a request: bad framing.
  if (error.category() == http::make_error_code(http::error::end_of_stream).category() &&
      error != http::error::end_of_stream && error != http::error::partial_message) {
    return Reject(ApiError::BadRequest("Invalid HTTP request: " + error.message() + "."));
  }
  Close();
}

void HttpSession::OnRequest() {
  stream_.expires_never();
  HttpRequest request = parser_->release();
  head_only_ = request.method() == http::verb::head;
  if (head_only_) request.method(http::verb::get);
  in_exchange_ = true;
  may_send_interim_ = request.version() >= 11;
  ++exchange_count_;
  on_disconnect_ = nullptr;
  WatchForDisconnect(exchange_count_);
  auto writer = std::make_shared<ResponseWriter>(shared_from_this());
  if (auto preflight = AnswerCorsPreflight(options_.cors, request)) {
    cors_headers_ = std::move(preflight->headers);
    return writer->Send(preflight->status, "text/plain; charset=utf-8", std::move(preflight->body));
  }
  try {
    handler_(std::move(request), writer);
  } catch (const std::exception& e) {
    VLLM_LOG(kError) << "request handler failed: " << e.what();
    const ApiError internal = ApiError::Internal("Internal server error");
    writer->Send(internal.status, "application/json", internal.ToJson());
  }
}

void HttpSession::Reject(const ApiError& error, std::string_view extra_headers) {
  stream_.expires_never();
  keep_alive_ = false;
  linger_on_close_ = true;
  Write(ErrorResponse(error, extra_headers, cors_headers_, keep_alive_));
  EndExchange();
}

std::string HttpSession::Head(http::status status, std::string_view content_type) const {
  return ResponseHead(status, content_type, cors_headers_, keep_alive_);
}

void HttpSession::Write(std::string bytes) {
  may_send_interim_ = false;
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
  body_bytes_.Reset();
  if (keep_alive_) {
    read_after_writes_ = true;
  } else {
    close_after_writes_ = true;
  }
  if (!writing_) WriteNext();
}

void HttpSession::WatchForDisconnect(uint64_t exchange) {
  auto on_readable = [self = shared_from_this(), exchange](beast::error_code error) {
    if (exchange != self->exchange_count_ || !self->in_exchange_ ||
        error == asio::error::operation_aborted) {
      return;
    }
    if (!error) error = PeekError(self->stream_.socket());
    if (error == asio::error::eof) {
      self->OnClientEof(exchange);
    } else if (error) {
      self->Close();
    }
    // Else bytes are waiting: a pipelined request, read after this exchange.
  };
  stream_.socket().async_wait(asio::ip::tcp::socket::wait_read, std::move(on_readable));
}

void HttpSession::OnClientEof(uint64_t exchange) {
  keep_alive_ = false;  // nothing more can come: answer, then close
  // A client must take unsolicited 1xx answers before the final one; a closed socket answers
  // this one with a reset.
  if (may_send_interim_) Write("HTTP/1.1 100 Continue\r\n\r\n");
  stream_.socket().async_wait(asio::ip::tcp::socket::wait_error,
                              [self = shared_from_this(), exchange](beast::error_code error) {
                                if (exchange == self->exchange_count_ && self->in_exchange_ &&
                                    error != asio::error::operation_aborted) {
                                  self->Close();  // reset (or hung up)
                                }
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
  connection_slot_.Reset();
  body_bytes_.Reset();
  if (auto callback = std::move(on_disconnect_)) {
    on_disconnect_ = nullptr;
    callback();
  }
}

}  // namespace vllm::server
