#include "server/tls_context.h"

#include <openssl/err.h>
#include <openssl/ssl.h>
#include <openssl/x509.h>

#include <cerrno>
#include <cstring>
#include <fstream>

// clang-format off
#include <utility>
#include <boost/asio/ssl/context.hpp>
// clang-format on

namespace vllm::server {
namespace {

// OpenSSL's queued errors as one line (and the queue emptied).
std::string OpenSslErrors() {
  std::string text;
  while (const unsigned long code = ERR_get_error()) {
    char line[256];
    ERR_error_string_n(code, line, sizeof(line));
    text += (text.empty() ? "" : "; ") + std::string(line);
  }
  return text.empty() ? "unknown OpenSSL error" : text;
}

// An error naming the flag and the file for a file that cannot be opened (missing, a directory,
// no permission), before OpenSSL's less telling messages.
Status CheckReadable(const char* flag, const std::string& path) {
  std::ifstream file(path, std::ios::binary);
  if (!file || file.peek() == std::ifstream::traits_type::eof()) {
    const std::string reason = !file ? std::strerror(errno) : "the file is empty";
    return Error{std::string(flag) + " " + path + ": cannot read it (" + reason + ")"};
  }
  return Status::Ok();
}

// OpenSSL asks for a passphrase only when the key is encrypted: none is given (vLLM has no flag
// for one), and the asking is remembered for the error.
int RefusePassphrase(char*, int, int, void* asked) {
  *static_cast<bool*>(asked) = true;
  return 0;
}

}  // namespace

TlsContext::TlsContext(std::unique_ptr<boost::asio::ssl::context> context)
    : context_(std::move(context)) {}

TlsContext::~TlsContext() = default;

Expected<std::shared_ptr<TlsContext>> TlsContext::Create(const TlsOptions& options) {
  if (options.certfile.empty()) {
    return Error{"--ssl-certfile is required for HTTPS (--ssl-keyfile alone is not enough)"};
  }
  if (options.cert_reqs != ClientCertRequirement::kNone && options.ca_certs.empty()) {
    return Error{"--ssl-cert-reqs " + std::to_string(static_cast<int>(options.cert_reqs)) +
                 " checks client certificates: it needs --ssl-ca-certs"};
  }
  VLLM_RETURN_IF_ERROR(CheckReadable("--ssl-certfile", options.certfile));
  // Without --ssl-keyfile the key is read from the certificate file, as Python's ssl does.
  const std::string& keyfile = options.keyfile.empty() ? options.certfile : options.keyfile;
  const char* key_flag = options.keyfile.empty() ? "--ssl-certfile" : "--ssl-keyfile";
  VLLM_RETURN_IF_ERROR(CheckReadable(key_flag, keyfile));
  if (!options.ca_certs.empty())
    VLLM_RETURN_IF_ERROR(CheckReadable("--ssl-ca-certs", options.ca_certs));

  ERR_clear_error();
  auto context = std::make_unique<boost::asio::ssl::context>(boost::asio::ssl::context::tls_server);
  SSL_CTX* ssl = context->native_handle();
  SSL_CTX_set_min_proto_version(ssl, TLS1_2_VERSION);
  SSL_CTX_set_options(ssl, SSL_OP_CIPHER_SERVER_PREFERENCE | SSL_OP_NO_RENEGOTIATION |
                               SSL_OP_NO_COMPRESSION | SSL_OP_SINGLE_DH_USE);
  SSL_CTX_set_mode(ssl, SSL_MODE_RELEASE_BUFFERS);  // idle keep-alive connections hold no buffers
  if (SSL_CTX_use_certificate_chain_file(ssl, options.certfile.c_str()) != 1) {
    return Error{"--ssl-certfile " + options.certfile +
                 ": no PEM certificate could be read from it (" + OpenSslErrors() + ")"};
  }
  bool passphrase_asked = false;
  SSL_CTX_set_default_passwd_cb(ssl, RefusePassphrase);
  SSL_CTX_set_default_passwd_cb_userdata(ssl, &passphrase_asked);
  const int key_loaded = SSL_CTX_use_PrivateKey_file(ssl, keyfile.c_str(), SSL_FILETYPE_PEM);
  SSL_CTX_set_default_passwd_cb(ssl, nullptr);
  SSL_CTX_set_default_passwd_cb_userdata(ssl, nullptr);
  if (passphrase_asked) {
    ERR_clear_error();
    return Error{std::string(key_flag) + " " + keyfile +
                 ": the private key is encrypted, and no passphrase can be given (vLLM has no "
                 "flag for one); decrypt it, e.g. `openssl pkey -in KEY -out KEY.plain`"};
  }
  const bool mismatched = ERR_GET_REASON(ERR_peek_last_error()) == X509_R_KEY_VALUES_MISMATCH;
  if (key_loaded != 1 && !mismatched) {
    return Error{std::string(key_flag) + " " + keyfile +
                 ": no PEM private key could be read from it (" + OpenSslErrors() + ")"};
  }
  if (mismatched || SSL_CTX_check_private_key(ssl) != 1) {
    return Error{std::string(key_flag) + " " + keyfile +
                 ": the private key does not match the certificate in --ssl-certfile " +
                 options.certfile + " (" + OpenSslErrors() + ")"};
  }
  if (!options.ciphers.empty() && SSL_CTX_set_cipher_list(ssl, options.ciphers.c_str()) != 1) {
    return Error{"--ssl-ciphers '" + options.ciphers + "': no cipher in it is known to OpenSSL (" +
                 OpenSslErrors() + ")"};
  }
  if (!options.ca_certs.empty()) {
    if (SSL_CTX_load_verify_locations(ssl, options.ca_certs.c_str(), nullptr) != 1) {
      return Error{"--ssl-ca-certs " + options.ca_certs +
                   ": no PEM certificate could be read from it (" + OpenSslErrors() + ")"};
    }
    // The CAs a client is told to pick its certificate by.
    if (STACK_OF(X509_NAME)* names = SSL_load_client_CA_file(options.ca_certs.c_str())) {
      SSL_CTX_set_client_CA_list(ssl, names);
    }
  }
  switch (options.cert_reqs) {
    case ClientCertRequirement::kNone:
      SSL_CTX_set_verify(ssl, SSL_VERIFY_NONE, nullptr);
      break;
    case ClientCertRequirement::kOptional:
      SSL_CTX_set_verify(ssl, SSL_VERIFY_PEER, nullptr);
      break;
    case ClientCertRequirement::kRequired:
      SSL_CTX_set_verify(ssl, SSL_VERIFY_PEER | SSL_VERIFY_FAIL_IF_NO_PEER_CERT, nullptr);
      break;
  }
  // Session resumption with client certificates needs a session id context.
  static constexpr unsigned char kSessionContext[] = "vllm-cpp";
  SSL_CTX_set_session_id_context(ssl, kSessionContext, sizeof(kSessionContext) - 1);
  ERR_clear_error();
  return std::shared_ptr<TlsContext>(new TlsContext(std::move(context)));
}

}  // namespace vllm::server
