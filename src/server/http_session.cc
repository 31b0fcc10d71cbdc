#include "server/http_session.h"

#include <algorithm>
#include <array>
#include <cstdio>

#include "common/logging.h"
#include "server/header_value.h"
#include "server/http_limits.h"
#include "server/openai/api_error.h"
#include "server/tls_context.h"

// clang-format off
#include <boost/asio/ssl.hpp>
#include <boost/beast/ssl.hpp>
// clang-format on

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
template <class Socket>
beast::error_code PeekError(Socket& socket) {
  char byte;
  beast::error_code error;
  socket.receive(asio::buffer(&byte, 1), asio::socket_base::message_peek, error);
  return error;
}

template <class Socket>
void RefuseSocket(Socket& socket) {
  static const std::string response =
      ErrorResponse(ApiError::Unavailable("The server has too many open connections. Retry later."),
                    "Retry-After: 1\r\n", "", false);
  beast::error_code ignored;
  socket.non_blocking(true, ignored);
  // A new socket's send buffer takes a few hundred bytes whole; if not, the client gets part of
  // the answer, or none, and the close.
  socket.write_some(asio::buffer(response), ignored);
  socket.shutdown(asio::socket_base::shutdown_send, ignored);
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

}  // namespace

void RefuseConnection(asio::ip::tcp::socket& socket) { RefuseSocket(socket); }

void RefuseConnection(UnixSocket& socket) { RefuseSocket(socket); }

void ResponseWriter::Send(http::status status, std::string_view content_type, std::string body) {
  if (finished_) return;
  started_ = finished_ = true;
  std::string bytes = session_->Head(status, content_type);
  bytes += "Content-Length: " + std::to_string(body.size()) + "\r\n\r\n";
  if (!session_->head_only_) bytes += body;
  session_->Write(std::move(bytes));
  session_->EndExchange();
}

void ResponseWriter::StartEventStream() { StartStream("text/event-stream; charset=utf-8"); }

void ResponseWriter::StartStream(std::string_view content_type) {
  if (started_) return;
  started_ = true;
  std::string bytes = session_->Head(http::status::ok, content_type);
  bytes += "Cache-Control: no-cache\r\nTransfer-Encoding: chunked\r\n\r\n";
  session_->Write(std::move(bytes));
}

void ResponseWriter::SendEvent(std::string_view data) {
  std::string event;
  event.reserve(data.size() + 8);
  event += "data: ";
  event += data;
  event += "\n\n";
  SendChunk(event);
}

void ResponseWriter::SendChunk(std::string_view data) {
  if (!started_ || finished_ || session_->head_only_ || data.empty()) return;
  char size_line[24];
  std::snprintf(size_line, sizeof(size_line), "%zx\r\n", data.size());
  std::string bytes = size_line;
  bytes.reserve(bytes.size() + data.size() + 2);
  bytes += data;
  bytes += "\r\n";
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

void ResponseWriter::Post(std::function<void()> fn) { session_->Post(std::move(fn)); }

std::string HttpSession::Head(http::status status, std::string_view content_type) const {
  return ResponseHead(status, content_type, cors_headers_, keep_alive_);
}

namespace {

using UnixStream = beast::basic_stream<asio::local::stream_protocol>;

template <class Stream>
constexpr bool kIsTlsStream = false;
template <class NextLayer>
constexpr bool kIsTlsStream<beast::ssl_stream<NextLayer>> = true;

// One connection over `Stream`: beast::tcp_stream or UnixStream (plain HTTP), or an ssl_stream
// over either (HTTPS). Plain and TLS differ only where `kTls` says; the plain path is the same
// code it was before TLS, and TCP and UNIX sockets differ in nothing here.
template <class Stream>
class BasicHttpSession final : public HttpSession {
 public:
  static constexpr bool kTls = kIsTlsStream<Stream>;

  BasicHttpSession(Stream stream, const HttpOptions& options, ConnectionLimits& limits,
                   const RequestHandler& handler)
      : HttpSession(options, handler),
        stream_(std::move(stream)),
        connection_slot_(limits.connections),
        body_bytes_(limits.buffered_body_bytes) {}

  void Start();

 private:
  std::shared_ptr<BasicHttpSession> self() {
    return std::static_pointer_cast<BasicHttpSession>(shared_from_this());
  }
  // The TCP or UNIX stream below any TLS layer, and its socket.
  auto& transport() { return beast::get_lowest_layer(stream_); }
  auto& socket() { return transport().socket(); }

  void Write(std::string bytes) override;
  void EndExchange() override;
  void Post(std::function<void()> fn) override {
    asio::post(stream_.get_executor(), std::move(fn));
  }

  void ReadRequest();
  void OnHeader(beast::error_code error);
  void ReadBody();
  void OnRequest();
  // Raises the request's claim on the shared body budget to `amount`; false after answering 503
  // when the budget has no room.
  bool ClaimBodyBytes(size_t amount);
  void OnReadError(beast::error_code error);
  // Answers with `error` (its JSON shape) and closes, reading no more of the request.
  void Reject(const ApiError& error, std::string_view extra_headers = "");
  void WriteNext();
  void WatchForDisconnect(uint64_t exchange);
  // TLS: the watch is a read through the TLS layer (its records cannot be peeked at); what it
  // reads is the next request's start, kept in buffer_.
  void WatchTlsForDisconnect(uint64_t exchange);
  // The client sent EOF during `exchange`: probes it, then waits for a reset.
  void OnClientEof(uint64_t exchange);
  void Close();
  // TLS: sends close_notify (waiting up to a few seconds for the client's), then closes.
  void CloseTls();
  // Closes after the response is out: stops sending, then reads and drops what the client is
  // still sending (up to a few seconds) so it can read the response before the socket goes.
  void LingeringClose();

  Stream stream_;
  SharedBudget::Claim connection_slot_;
  // The request body's bytes, from its header until its exchange ends (the router may keep
  // copies of the body as long as it answers).
  SharedBudget::Claim body_bytes_;
  beast::flat_buffer buffer_;
  std::optional<http::request_parser<http::string_body>> parser_;
  bool in_exchange_ = false;
  bool may_send_interim_ = false;  // an HTTP/1.1 exchange with nothing of its response written
  uint64_t exchange_count_ = 0;    // tells a stale disconnect watch from the current one
  std::deque<std::string> pending_writes_;
  bool writing_ = false;
  bool close_after_writes_ = false;
  bool linger_on_close_ = false;  // the request was not read to its end (Reject)
  bool read_after_writes_ = false;
  // TLS: a watch read is under way; a TLS stream takes one read at a time, so the next request
  // (or the close) waits for it.
  bool tls_watch_reading_ = false;
  bool read_request_after_watch_ = false;
  std::optional<asio::steady_timer> idle_timer_;  // TLS: idle_timeout while the watch reads
};

template <class Stream>
void BasicHttpSession<Stream>::Start() {
  if (!connection_slot_.GrowTo(1)) {
    // No operation of this session has started: the socket is still the acceptor's to use.
    if constexpr (kTls) {
      beast::error_code ignored;
      socket().close(ignored);
      return;
    } else {
      return RefuseConnection(socket());
    }
  }
  if constexpr (kTls) {
    asio::dispatch(stream_.get_executor(), [self = self()] {
      // A client that stalls in the handshake, or speaks plain HTTP, goes within idle_timeout.
      self->transport().expires_after(self->options_.idle_timeout);
      self->stream_.async_handshake(
          asio::ssl::stream_base::server, [self](beast::error_code error) {
            if (error) {
              VLLM_LOG(kDebug) << "TLS handshake failed: " << error.message();
              return self->Close();
            }
            self->ReadRequest();
          });
    });
  } else {
    asio::dispatch(stream_.get_executor(), [self = self()] { self->ReadRequest(); });
  }
}

template <class Stream>
void BasicHttpSession<Stream>::ReadRequest() {
  read_after_writes_ = false;
  head_only_ = false;
  cors_headers_.clear();
  transport().expires_after(options_.idle_timeout);
  if constexpr (kTls) {
    if (tls_watch_reading_) {  // the watch's read is this request's first read
      read_request_after_watch_ = true;
      // The pending read took no timeout (beast's applies from an operation's start).
      if (!idle_timer_) idle_timer_.emplace(stream_.get_executor());
      idle_timer_->expires_after(options_.idle_timeout);
      idle_timer_->async_wait([self = self()](beast::error_code error) {
        if (!error && self->read_request_after_watch_) self->Close();
      });
      return;
    }
  }
  parser_.emplace();
  parser_->body_limit(options_.max_body_bytes);
  parser_->header_limit(kMaxHeaderBytes);
  http::async_read_header(
      stream_, buffer_, *parser_,
      [self = self()](beast::error_code error, size_t) { self->OnHeader(error); });
}

template <class Stream>
void BasicHttpSession<Stream>::OnHeader(beast::error_code error) {
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

template <class Stream>
void BasicHttpSession<Stream>::ReadBody() {
  if (parser_->is_done()) return OnRequest();
  http::async_read_some(stream_, buffer_, *parser_,
                        [self = self()](beast::error_code error, size_t) {
                          if (error) return self->OnReadError(error);
                          // Chunked bodies claim their bytes as they arrive.
                          if (self->ClaimBodyBytes(self->parser_->get().body().size()))
                            self->ReadBody();
                        });
}

template <class Stream>
bool BasicHttpSession<Stream>::ClaimBodyBytes(size_t amount) {
  if (body_bytes_.GrowTo(amount)) return true;
  Reject(ApiError::Unavailable("The server is buffering too many request bodies. Retry later."),
         "Retry-After: 1\r\n");
  return false;
}

template <class Stream>
void BasicHttpSession<Stream>::OnReadError(beast::error_code error) {
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

template <class Stream>
void BasicHttpSession<Stream>::OnRequest() {
  transport().expires_never();
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

template <class Stream>
void BasicHttpSession<Stream>::Reject(const ApiError& error, std::string_view extra_headers) {
  transport().expires_never();
  keep_alive_ = false;
  linger_on_close_ = true;
  Write(ErrorResponse(error, extra_headers, cors_headers_, keep_alive_));
  EndExchange();
}

template <class Stream>
void BasicHttpSession<Stream>::Write(std::string bytes) {
  may_send_interim_ = false;
  if (disconnected_) return;
  pending_writes_.push_back(std::move(bytes));
  if (!writing_) WriteNext();
}

template <class Stream>
void BasicHttpSession<Stream>::WriteNext() {
  if (disconnected_) return;
  if (pending_writes_.empty()) {
    writing_ = false;
    if (close_after_writes_) {
      if (linger_on_close_) {
        LingeringClose();
      } else if constexpr (kTls) {
        CloseTls();
      } else {
        Close();
      }
    } else if (read_after_writes_) {
      ReadRequest();
    }
    return;
  }
  writing_ = true;
  asio::async_write(stream_, asio::buffer(pending_writes_.front()),
                    [self = self()](beast::error_code error, size_t) {
                      if (error) {
                        self->Close();
                        return;
                      }
                      self->pending_writes_.pop_front();
                      self->WriteNext();
                    });
}

template <class Stream>
void BasicHttpSession<Stream>::EndExchange() {
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

template <class Stream>
void BasicHttpSession<Stream>::WatchForDisconnect(uint64_t exchange) {
  if constexpr (kTls) {
    return WatchTlsForDisconnect(exchange);
  } else {
    auto on_readable = [self = self(), exchange](beast::error_code error) {
      if (exchange != self->exchange_count_ || !self->in_exchange_ ||
          error == asio::error::operation_aborted) {
        return;
      }
      if (!error) error = PeekError(self->socket());
      if (error == asio::error::eof) {
        self->OnClientEof(exchange);
      } else if (error) {
        self->Close();
      }
      // Else bytes are waiting: a pipelined request, read after this exchange.
    };
    socket().async_wait(asio::socket_base::wait_read, std::move(on_readable));
  }
}

template <class Stream>
void BasicHttpSession<Stream>::WatchTlsForDisconnect(uint64_t exchange) {
  // Bytes already here are a pipelined request, and the watch stops at them, as the plain one
  // does: a read left waiting behind a whole request would hold that request back.
  if (tls_watch_reading_ || buffer_.size() > 0) return;
  tls_watch_reading_ = true;
  stream_.async_read_some(
      buffer_.prepare(4096), [self = self(), exchange](beast::error_code error, size_t num_read) {
        self->tls_watch_reading_ = false;
        self->buffer_.commit(num_read);
        if (self->disconnected_ || error == asio::error::operation_aborted) return;
        const bool client_done =
            error == asio::error::eof || error == asio::ssl::error::stream_truncated;
        if (self->read_request_after_watch_) {  // the exchange is over: this read was the next
          self->read_request_after_watch_ = false;
          self->idle_timer_->cancel();
          return error ? self->Close() : self->ReadRequest();
        }
        // The exchange ended while its last writes are under way: they end the connection, or
        // read the next request, as they would have.
        if (exchange != self->exchange_count_ || !self->in_exchange_) return;
        if (client_done) {
          self->OnClientEof(exchange);
        } else if (error) {
          self->Close();
        }
        // Else the bytes read start a pipelined request, read after this exchange.
      });
}

template <class Stream>
void BasicHttpSession<Stream>::OnClientEof(uint64_t exchange) {
  keep_alive_ = false;  // nothing more can come: answer, then close
  // A client must take unsolicited 1xx answers before the final one; a closed socket answers
  // this one with a reset.
  if (may_send_interim_) Write("HTTP/1.1 100 Continue\r\n\r\n");
  socket().async_wait(asio::socket_base::wait_error,
                      [self = self(), exchange](beast::error_code error) {
                        if (exchange == self->exchange_count_ && self->in_exchange_ &&
                            error != asio::error::operation_aborted) {
                          self->Close();  // reset (or hung up)
                        }
                      });
}

template <class Stream>
void BasicHttpSession<Stream>::CloseTls() {
  if (tls_watch_reading_) return Close();  // one read at a time: no wait for close_notify
  transport().expires_after(std::chrono::seconds(5));
  stream_.async_shutdown([self = self()](beast::error_code) { self->Close(); });
}

template <class Stream>
void BasicHttpSession<Stream>::LingeringClose() {
  if (tls_watch_reading_) return Close();
  // Over TLS too the bytes are dropped unread, below the TLS layer: no close_notify is sent, the
  // response being complete in itself (Content-Length, Connection: close).
  beast::error_code ignored;
  socket().shutdown(asio::socket_base::shutdown_send, ignored);
  transport().expires_after(std::chrono::seconds(5));
  auto discard = std::make_shared<std::array<char, 16384>>();
  auto read_more = std::make_shared<std::function<void()>>();
  *read_more = [self = self(), discard, read_more] {
    self->transport().async_read_some(asio::buffer(*discard),
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

template <class Stream>
void BasicHttpSession<Stream>::Close() {
  if (disconnected_) return;
  disconnected_ = true;
  beast::error_code ignored;
  socket().shutdown(asio::socket_base::shutdown_both, ignored);
  socket().close(ignored);
  connection_slot_.Reset();
  body_bytes_.Reset();
  if (idle_timer_) idle_timer_->cancel();
  if (auto callback = std::move(on_disconnect_)) {
    on_disconnect_ = nullptr;
    callback();
  }
}

}  // namespace

namespace {

// `Transport` is beast::tcp_stream or UnixStream.
template <class Transport, class Socket>
void StartSession(Socket socket, const HttpOptions& options, ConnectionLimits& limits,
                  const RequestHandler& handler) {
  if (options.tls) {
    using Tls = beast::ssl_stream<Transport>;
    std::make_shared<BasicHttpSession<Tls>>(
        Tls(Transport(std::move(socket)), options.tls->native()), options, limits, handler)
        ->Start();
  } else {
    std::make_shared<BasicHttpSession<Transport>>(Transport(std::move(socket)), options, limits,
                                                  handler)
        ->Start();
  }
}

}  // namespace

void StartHttpSession(asio::ip::tcp::socket socket, const HttpOptions& options,
                      ConnectionLimits& limits, const RequestHandler& handler) {
  StartSession<beast::tcp_stream>(std::move(socket), options, limits, handler);
}

void StartHttpSession(UnixSocket socket, const HttpOptions& options, ConnectionLimits& limits,
                      const RequestHandler& handler) {
  StartSession<UnixStream>(std::move(socket), options, limits, handler);
}

}  // namespace vllm::server
