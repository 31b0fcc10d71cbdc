// KV cache rows: quantization on write, the dtype names, and AttendTile's run-time dispatch.
#include <cmath>
#include <cstring>

#include "common/half.h"
#include "kernels/attention_internal.h"
#include "kernels/isa.h"

namespace vllm::kernels {
namespace {

constexpr float kFp8E4m3Max = 448.0f;
constexpr float kInt8Max = 127.0f;

// |x| ≤ 448 as an e4m3fn byte, rounded to nearest even.
uint8_t EncodeFp8E4m3(float x) {
  const auto sign = static_cast<uint8_t>((BitsFromFp32(x) >> 24) & 0x80u);
  const float magnitude = std::fabs(x);
  if (magnitude < 0.015625f) {  // below 2^-6, the smallest normal: multiples of 2^-9
    // 0..8, and 8 is the encoding of 2^-6 itself.
    return sign | static_cast<uint8_t>(std::nearbyint(magnitude * 512.0f));
  }
  uint32_t bits = BitsFromFp32(magnitude);
  bits += 0x7ffffu + ((bits >> 20) & 1u);  // round to 3 mantissa bits, ties to even
  uint32_t code = (((bits >> 23) - 120u) << 3) | ((bits >> 20) & 7u);
  if (code > 0x7eu) code = 0x7eu;  // 448, the largest finite value
  return sign | static_cast<uint8_t>(code);
}

}  // namespace

const char* KvCacheDtypeName(KvCacheDtype dtype) {
  switch (dtype) {
    case KvCacheDtype::kFloat32:
      return "float32";
    case KvCacheDtype::kBFloat16:
      return "bfloat16";
    case KvCacheDtype::kFp8E4m3:
      return "fp8_e4m3";
    case KvCacheDtype::kInt8:
      break;
  }
  return "int8";
}

void QuantizeKvRow(KvCacheDtype dtype, const float* x, int64_t n, void* out, float* scale) {
  if (dtype == KvCacheDtype::kFloat32) {
    std::memcpy(out, x, n * sizeof(float));
    return;
  }
  if (dtype == KvCacheDtype::kBFloat16) {
    auto* bf16 = static_cast<uint16_t*>(out);
    for (int64_t i = 0; i < n; ++i) bf16[i] = Fp32ToBf16(x[i]);
    return;
  }
  float max_magnitude = 0.0f;
  for (int64_t i = 0; i < n; ++i) max_magnitude = std::fmax(max_magnitude, std::fabs(x[i]));
  const float type_max = dtype == KvCacheDtype::kFp8E4m3 ? kFp8E4m3Max : kInt8Max;
  *scale = max_magnitude / type_max;
  const float inverse_scale = max_magnitude > 0.0f ? type_max / max_magnitude : 0.0f;
  auto* bytes = static_cast<uint8_t*>(out);
  for (int64_t i = 0; i < n; ++i) {
    const float scaled = std::fmin(std::fmax(x[i] * inverse_scale, -type_max), type_max);
    bytes[i] = dtype == KvCacheDtype::kFp8E4m3
                   ? EncodeFp8E4m3(scaled)
                   : static_cast<uint8_t>(static_cast<int8_t>(std::nearbyint(scaled)));
  }
}

void AttendTile(const AttentionTile& tile, const AttentionState& state, float* scratch) {
  switch (BestIsa()) {
    case Isa::kAvx512:
      if (UsesAmxAttention(tile)) return AttendTileAmx(tile, state, scratch);
      return AttendTileAvx512(tile, state, scratch);
    case Isa::kAvx2:
      return AttendTileAvx2(tile, state, scratch);
    case Isa::kScalar:
      break;
  }
  AttendTileScalar(tile, state, scratch);
}

}  // namespace vllm::kernels
