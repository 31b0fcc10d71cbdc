// SHA-256 over bytes that come in pieces (OpenSSL's EVP), as hex: the hub names an LFS file's
// blob by it (X-Linked-Etag), so a download is checked against it as it is written.
#pragma once

#include <cstddef>
#include <filesystem>
#include <memory>
#include <string>

#include "common/expected.h"

namespace vllm::hub {

class Sha256Digest {
 public:
  Sha256Digest();
  ~Sha256Digest();
  Sha256Digest(const Sha256Digest&) = delete;
  Sha256Digest& operator=(const Sha256Digest&) = delete;

  void Update(const void* data, size_t size);
  // Hashes the first `num_bytes` of `path` (a resumed download's bytes already on disk).
  Status UpdateFromFile(const std::filesystem::path& path, int64_t num_bytes);
  // The digest of everything so far, 64 lowercase hex digits; the object is then spent.
  std::string HexDigest();

 private:
  struct Context;
  std::unique_ptr<Context> context_;
};

// True for 64 hex digits: an etag that is a sha256 (an LFS file's), not a git blob's sha1.
bool IsSha256Hex(const std::string& text);

}  // namespace vllm::hub
