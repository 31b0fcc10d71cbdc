#include "hub/sha256_digest.h"

#include <openssl/evp.h>

#include <algorithm>
#include <cctype>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <vector>

namespace vllm::hub {

struct Sha256Digest::Context {
  EVP_MD_CTX* md = EVP_MD_CTX_new();
  ~Context() { EVP_MD_CTX_free(md); }
};

Sha256Digest::Sha256Digest() : context_(std::make_unique<Context>()) {
  EVP_DigestInit_ex(context_->md, EVP_sha256(), nullptr);
}

Sha256Digest::~Sha256Digest() = default;

void Sha256Digest::Update(const void* data, size_t size) {
  EVP_DigestUpdate(context_->md, data, size);
}

Status Sha256Digest::UpdateFromFile(const std::filesystem::path& path, int64_t num_bytes) {
  std::FILE* file = std::fopen(path.c_str(), "rb");
  if (file == nullptr) return Error{"cannot read " + path.string() + ": " + std::strerror(errno)};
  std::vector<char> buffer(size_t{1} << 20);
  while (num_bytes > 0) {
    const size_t wanted = std::min(buffer.size(), static_cast<size_t>(num_bytes));
    const size_t got = std::fread(buffer.data(), 1, wanted, file);
    if (got == 0) break;
    Update(buffer.data(), got);
    num_bytes -= static_cast<int64_t>(got);
  }
  std::fclose(file);
  if (num_bytes > 0) return Error{"cannot read " + path.string() + ": it is shorter than expected"};
  return Status::Ok();
}

std::string Sha256Digest::HexDigest() {
  unsigned char digest[EVP_MAX_MD_SIZE];
  unsigned int size = 0;
  EVP_DigestFinal_ex(context_->md, digest, &size);
  static constexpr char kHex[] = "0123456789abcdef";
  std::string hex;
  for (unsigned int i = 0; i < size; ++i) {
    hex += kHex[digest[i] >> 4];
    hex += kHex[digest[i] & 15];
  }
  return hex;
}

bool IsSha256Hex(const std::string& text) {
  if (text.size() != 64) return false;
  for (char c : text) {
    if (!std::isxdigit(static_cast<unsigned char>(c))) return false;
  }
  return true;
}

}  // namespace vllm::hub
