// A small HTTP/1.1 client for the hub: GET and HEAD over http or https (OpenSSL; the server's
// certificate checked against the system store and its host name, SNI sent), one connection per
// request, redirects followed (301, 302, 303, 307, 308; absolute and relative Location), every
// network step under a timeout so a silent server cannot hang the caller.
#pragma once

#include <cstdint>
#include <functional>
#include <map>
#include <string>

#include "common/expected.h"

namespace vllm::hub {

struct Url {
  std::string scheme;  // "http" or "https"
  std::string host;
  std::string port;            // "80" / "443" when the URL names none
  std::string target;          // path and query, "/" at least
  std::string Origin() const;  // scheme://host:port
};

// An absolute http(s) URL; anything else is an error.
Expected<Url> ParseUrl(const std::string& text);

// `location` (a redirect's Location header) taken relative to `base`.
Expected<Url> ResolveLocation(const Url& base, const std::string& location);

// Percent-encodes all but unreserved characters (and '/' when `keep_slash`).
std::string PercentEncode(const std::string& text, bool keep_slash);

struct HttpResponse {
  int status = 0;
  std::map<std::string, std::string> headers;  // names in lowercase
  std::string body;  // the body of GetText, and the start of an error's body (for its message)
  Url url;           // the URL that answered, after redirects
  std::string Header(const std::string& lowercase_name) const;
};

class HttpClient {
 public:
  struct Options {
    std::string bearer_token;     // sent as Authorization to the first URL's origin only
    double timeout_seconds = 60;  // each connect, handshake, write or read
    int max_redirects = 10;
    int64_t max_text_bytes = 64 << 20;  // GetText's limit
  };
  explicit HttpClient(Options options) : options_(std::move(options)) {}

  // The response of HEAD `url`, following only relative redirects (the hub's own, e.g. to
  // /api/resolve-cache/), as huggingface_hub does: an absolute one (to a CDN) is returned with
  // the hub's headers (X-Linked-Etag, X-Linked-Size) and its Location.
  Expected<HttpResponse> Head(const std::string& url) const;

  // GET `url` (redirects followed) with its body in `body`.
  Expected<HttpResponse> GetText(const std::string& url) const;

  // Where Download puts a 2xx response: its status and headers first (206 or 200 tells whether
  // the Range was honoured), then the body's bytes as they arrive. An error from either stops
  // the download with it.
  struct BodySink {
    std::function<Status(const HttpResponse& response)> on_start;
    std::function<Status(const char* data, size_t size)> on_bytes;
  };

  // GET `url` (redirects followed) from byte `offset` (a Range request when above 0), a 2xx
  // response going to `sink`. Any other status returns with the start of its body in `body`.
  // A connection lost mid-body is an error after the bytes that came went to the sink.
  Expected<HttpResponse> Download(const std::string& url, int64_t offset,
                                  const BodySink& sink) const;

 private:
  enum class Redirects { kRelative, kAll };
  // sink null: the body goes to the response.
  Expected<HttpResponse> Request(bool head, const std::string& url, int64_t offset,
                                 const BodySink* sink, Redirects redirects) const;
  Options options_;
};

}  // namespace vllm::hub
