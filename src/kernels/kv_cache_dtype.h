// The types the paged KV cache stores keys and values in (vLLM's --kv-cache-dtype).
//
// fp8 (e4m3fn) and int8 rows carry one f32 scale per stored row of head_dim values (one token's
// key or value of one KV head): scale = max|x| / 448 (fp8) or / 127 (int8). A row's bytes and
// scale depend only on that row, so a token's K/V are stored the same whatever batch wrote them
// (batch invariance), and a later token with larger values cannot overflow an earlier scale.
#pragma once

#include <cstdint>

namespace vllm::kernels {

enum class KvCacheDtype { kFloat32, kBFloat16, kFp8E4m3, kInt8 };

// Bytes of one stored value.
constexpr int64_t KvValueBytes(KvCacheDtype dtype) {
  switch (dtype) {
    case KvCacheDtype::kFloat32:
      return 4;
    case KvCacheDtype::kBFloat16:
      return 2;
    case KvCacheDtype::kFp8E4m3:
    case KvCacheDtype::kInt8:
      break;
  }
  return 1;
}

// Whether each stored row carries an f32 scale.
constexpr bool KvHasRowScales(KvCacheDtype dtype) {
  return dtype == KvCacheDtype::kFp8E4m3 || dtype == KvCacheDtype::kInt8;
}

// "float32", "bfloat16", "fp8_e4m3", "int8".
const char* KvCacheDtypeName(KvCacheDtype dtype);

}  // namespace vllm::kernels
