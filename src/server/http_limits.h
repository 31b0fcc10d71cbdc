// Limits on the head of an HTTP request, shared by the session and the request fuzzer.
#pragma once

#include <cstddef>

namespace vllm::server {

inline constexpr size_t kMaxHeaderBytes = 64 << 10;  // the request line and header fields: 431
inline constexpr size_t kMaxTargetBytes = 8 << 10;   // the request target (URL): 414

}  // namespace vllm::server
