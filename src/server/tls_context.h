// HTTPS for `serve`: the server's certificate and key, and optionally the CAs client certificates
// must chain to (vLLM's --ssl-keyfile, --ssl-certfile, --ssl-ca-certs, --ssl-cert-reqs,
// --ssl-ciphers). Everything is read and checked at start, so a missing, unreadable, encrypted or
// mismatched file stops the server before it listens, never at the first request.
#pragma once

#include <memory>
#include <string>

#include "common/expected.h"

namespace boost::asio::ssl {
class context;
}

namespace vllm::server {

// Python's ssl.CERT_NONE / CERT_OPTIONAL / CERT_REQUIRED, the numbers vLLM's --ssl-cert-reqs
// takes: whether a client certificate is asked for, and whether a client without one is refused.
enum class ClientCertRequirement { kNone = 0, kOptional = 1, kRequired = 2 };

struct TlsOptions {
  std::string keyfile;   // PEM private key (unencrypted: vLLM passes no password)
  std::string certfile;  // PEM certificate chain, the server's first
  std::string ca_certs;  // PEM CAs client certificates are checked against; empty: none
  ClientCertRequirement cert_reqs = ClientCertRequirement::kNone;
  std::string
      ciphers;  // OpenSSL cipher list for TLS 1.2 (TLS 1.3 keeps its suites); empty: default
};

// An OpenSSL server context: TLS 1.2 and later, the server's cipher preference, no
// renegotiation, no compression. Shared by every connection of a server.
class TlsContext {
 public:
  static Expected<std::shared_ptr<TlsContext>> Create(const TlsOptions& options);
  ~TlsContext();

  boost::asio::ssl::context& native() { return *context_; }

 private:
  explicit TlsContext(std::unique_ptr<boost::asio::ssl::context> context);

  std::unique_ptr<boost::asio::ssl::context> context_;
};

}  // namespace vllm::server
