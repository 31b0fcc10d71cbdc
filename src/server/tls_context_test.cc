#include "server/tls_context.h"

#include <gtest/gtest.h>
#include <openssl/evp.h>
#include <openssl/pem.h>
#include <openssl/x509.h>

#include <cstdio>
#include <fstream>
#include <memory>
#include <string>

#include "common/temp_test_dir.h"

namespace vllm::server {
namespace {

using KeyPtr = std::unique_ptr<EVP_PKEY, decltype(&EVP_PKEY_free)>;
using CertPtr = std::unique_ptr<X509, decltype(&X509_free)>;

KeyPtr NewKey() { return KeyPtr(EVP_EC_gen("P-256"), EVP_PKEY_free); }

// A self-signed certificate for `key`, valid for a day.
CertPtr SelfSigned(EVP_PKEY* key) {
  CertPtr cert(X509_new(), X509_free);
  X509_set_version(cert.get(), 2);
  ASN1_INTEGER_set(X509_get_serialNumber(cert.get()), 1);
  X509_gmtime_adj(X509_getm_notBefore(cert.get()), 0);
  X509_gmtime_adj(X509_getm_notAfter(cert.get()), 24 * 3600);
  X509_NAME* name = X509_get_subject_name(cert.get());
  X509_NAME_add_entry_by_txt(name, "CN", MBSTRING_ASC,
                             reinterpret_cast<const unsigned char*>("localhost"), -1, -1, 0);
  X509_set_issuer_name(cert.get(), name);
  X509_set_pubkey(cert.get(), key);
  X509_sign(cert.get(), key, EVP_sha256());
  return cert;
}

void WriteCert(const std::string& path, X509* cert, const char* mode = "w") {
  FILE* file = std::fopen(path.c_str(), mode);
  ASSERT_NE(file, nullptr);
  PEM_write_X509(file, cert);
  std::fclose(file);
}

void WriteKey(const std::string& path, EVP_PKEY* key, const char* passphrase = nullptr,
              const char* mode = "w") {
  FILE* file = std::fopen(path.c_str(), mode);
  ASSERT_NE(file, nullptr);
  if (passphrase != nullptr) {
    PEM_write_PrivateKey(file, key, EVP_aes_128_cbc(),
                         reinterpret_cast<const unsigned char*>(passphrase),
                         static_cast<int>(std::string(passphrase).size()), nullptr, nullptr);
  } else {
    PEM_write_PrivateKey(file, key, nullptr, nullptr, 0, nullptr, nullptr);
  }
  std::fclose(file);
}

class TlsContextTest : public ::testing::Test {
 protected:
  void SetUp() override {
    WriteKey(key_path_, key_.get());
    WriteCert(cert_path_, cert_.get());
  }

  // The start-up error for `options`, or "" when the context was made.
  static std::string ErrorOf(const TlsOptions& options) {
    auto context = TlsContext::Create(options);
    return context.ok() ? "" : context.error();
  }

  TempTestDir dir_{"tls_context_test"};
  KeyPtr key_ = NewKey();
  CertPtr cert_ = SelfSigned(key_.get());
  const std::string key_path_ = dir_.File("key.pem");
  const std::string cert_path_ = dir_.File("cert.pem");
};

TEST_F(TlsContextTest, LoadsAMatchingKeyAndCertificate) {
  EXPECT_EQ(ErrorOf({.keyfile = key_path_, .certfile = cert_path_}), "");
  // Mutual TLS, with the certificate as its own CA.
  EXPECT_EQ(ErrorOf({.keyfile = key_path_,
                     .certfile = cert_path_,
                     .ca_certs = cert_path_,
                     .cert_reqs = ClientCertRequirement::kRequired}),
            "");
}

TEST_F(TlsContextTest, ReadsTheKeyFromTheCertificateFileWhenNoKeyfileIsGiven) {
  const std::string combined = dir_.File("combined.pem");
  WriteCert(combined, cert_.get());
  WriteKey(combined, key_.get(), nullptr, "a");
  EXPECT_EQ(ErrorOf({.certfile = combined}), "");
  EXPECT_NE(ErrorOf({.certfile = cert_path_})
                .find("--ssl-certfile " + cert_path_ + ": no PEM private key"),
            std::string::npos);
}

TEST_F(TlsContextTest, MissingOrUnreadableFilesNameTheFlagAndTheFile) {
  const std::string missing = dir_.File("missing.pem");
  EXPECT_EQ(ErrorOf({.keyfile = key_path_, .certfile = missing}),
            "--ssl-certfile " + missing + ": cannot read it (No such file or directory)");
  EXPECT_EQ(ErrorOf({.keyfile = missing, .certfile = cert_path_}),
            "--ssl-keyfile " + missing + ": cannot read it (No such file or directory)");
  EXPECT_EQ(ErrorOf({.keyfile = key_path_, .certfile = cert_path_, .ca_certs = missing}),
            "--ssl-ca-certs " + missing + ": cannot read it (No such file or directory)");
  const std::string empty = dir_.File("empty.pem");
  std::ofstream{empty};
  EXPECT_EQ(ErrorOf({.keyfile = empty, .certfile = cert_path_}),
            "--ssl-keyfile " + empty + ": cannot read it (the file is empty)");
  EXPECT_NE(ErrorOf({.keyfile = key_path_}).find("--ssl-certfile is required"), std::string::npos);
}

TEST_F(TlsContextTest, FilesThatAreNotPemAreErrors) {
  const std::string garbage = dir_.File("garbage.pem");
  std::ofstream(garbage) << "not a certificate\n";
  EXPECT_NE(ErrorOf({.keyfile = key_path_, .certfile = garbage})
                .find("--ssl-certfile " + garbage + ": no PEM certificate could be read"),
            std::string::npos);
  EXPECT_NE(ErrorOf({.keyfile = garbage, .certfile = cert_path_})
                .find("--ssl-keyfile " + garbage + ": no PEM private key could be read"),
            std::string::npos);
  // A key where the certificate should be, and the other way round.
  EXPECT_NE(ErrorOf({.keyfile = cert_path_, .certfile = key_path_}).find("--ssl-certfile"),
            std::string::npos);
}

TEST_F(TlsContextTest, AnEncryptedKeyIsAnErrorNotAPrompt) {
  const std::string encrypted = dir_.File("encrypted.pem");
  WriteKey(encrypted, key_.get(), "secret");
  const std::string error = ErrorOf({.keyfile = encrypted, .certfile = cert_path_});
  EXPECT_NE(error.find("--ssl-keyfile " + encrypted + ": the private key is encrypted"),
            std::string::npos)
      << error;
}

TEST_F(TlsContextTest, AKeyOfAnotherCertificateIsAnError) {
  KeyPtr other = NewKey();
  const std::string other_path = dir_.File("other_key.pem");
  WriteKey(other_path, other.get());
  const std::string error = ErrorOf({.keyfile = other_path, .certfile = cert_path_});
  EXPECT_NE(error.find("--ssl-keyfile " + other_path +
                       ": the private key does not match the certificate in --ssl-certfile " +
                       cert_path_),
            std::string::npos)
      << error;
}

TEST_F(TlsContextTest, ClientCertificatesNeedCasAndCiphersMustBeKnown) {
  EXPECT_EQ(ErrorOf({.keyfile = key_path_,
                     .certfile = cert_path_,
                     .cert_reqs = ClientCertRequirement::kRequired}),
            "--ssl-cert-reqs 2 checks client certificates: it needs --ssl-ca-certs");
  EXPECT_NE(ErrorOf({.keyfile = key_path_, .certfile = cert_path_, .ciphers = "NO-SUCH-CIPHER"})
                .find("--ssl-ciphers 'NO-SUCH-CIPHER'"),
            std::string::npos);
  EXPECT_EQ(ErrorOf({.keyfile = key_path_,
                     .certfile = cert_path_,
                     .ciphers = "ECDHE-ECDSA-AES128-GCM-SHA256"}),
            "");
}

}  // namespace
}  // namespace vllm::server
