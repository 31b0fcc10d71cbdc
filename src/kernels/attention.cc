// KV cache rows: quantization on write, the dtype names, and AttendTile's run-time dispatch.
#include <algorithm>
#include <cmath>
#include <cstring>
#include <vector>

#include "common/cpu_features.h"
#include "common/fp8.h"
#include "common/half.h"
#include "kernels/attention_internal.h"
#include "kernels/isa.h"
#include "kernels/kv_line_prefetcher.h"

namespace vllm::kernels {
namespace {

constexpr float kInt8Max = 127.0f;
// Head dims the transposed bf16 paths take: multiples of one Q^T part (32 dims), up to 256.
constexpr int64_t kBf16HeadDimStep = 32;
constexpr int64_t kMaxBf16HeadDim = 256;

// Whether attention runs on vdpbf16ps where there is no AMX: where it can, and vdpbf16ps
// multiplies faster than f32 FMAs (Zen 4 / Zen 5; not the Intel cores of bench/RESULTS.md, which
// take half an FMA's rate).
bool Bf16DotsOutpaceFmas() {
  static const bool outpace = CanAttendOnBf16Dots() && !Bf16DotsOnFma();
  return outpace;
}

}  // namespace

bool CanAttendOnBf16Dots() { return BestIsa() == Isa::kAvx512 && GetCpuFeatures().avx512dq; }

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

void PrefetchKvRows(const KvPrefetch& rows, int64_t head_dim) {
  KvLinePrefetcher(rows, head_dim).IssueRest();
}

void AttendTile(const AttentionTile& tile, const AttentionState& state, float* scratch) {
  switch (BestIsa()) {
    case Isa::kAvx512:
      return AttendTileAvx512(tile, state, scratch);
    case Isa::kAvx2:
      return AttendTileAvx2(tile, state, scratch);
    case Isa::kNeon:
    case Isa::kNeonDotprod:
    case Isa::kNeonI8mm:
    case Isa::kScalar:
      break;
  }
  AttendTileScalar(tile, state, scratch);
}

void AttendSpanByTiles(const AttentionSpan& span, const AttentionState& state, float* scratch) {
  thread_local std::vector<int32_t> first_key, last_key;  // [num_rows]: a slot's ranges
  if (static_cast<int64_t>(first_key.size()) < span.num_rows) {
    first_key.resize(span.num_rows);
    last_key.resize(span.num_rows);
  }
  KvLinePrefetcher prefetcher(span.next, span.head_dim);
  const int lines_per_slot =
      (prefetcher.num_lines() + kAttentionSpanTiles - 1) / kAttentionSpanTiles;
  for (int slot = 0; slot < kAttentionSpanTiles; ++slot) {
    prefetcher.Issue(lines_per_slot);
    const int32_t num_keys = span.tile_keys[slot];
    if (num_keys == 0) continue;
    const int32_t offset = span.key_offset[slot];
    for (int64_t r = 0; r < span.num_rows; ++r) {
      first_key[r] = std::max(span.first_key[r] - offset, 0);
      last_key[r] = std::min(span.last_key[r] - offset, num_keys - 1);
    }
    AttendTile({.q = span.q,
                .num_rows = span.num_rows,
                .head_dim = span.head_dim,
                .keys = span.keys[slot],
                .values = span.values[slot],
                .first_key = first_key.data(),
                .last_key = last_key.data(),
                .scale = span.scale,
                .logit_softcap = span.logit_softcap},
               state, scratch);
  }
}

bool AttentionTakesBf16Queries(KvCacheDtype dtype, int64_t head_dim) {
  return (AmxBf16Usable() || Bf16DotsOutpaceFmas()) && dtype == KvCacheDtype::kBFloat16 &&
         head_dim % kBf16HeadDimStep == 0 && head_dim <= kMaxBf16HeadDim;
}

bool UsesBf16Attention(const AttentionSpan& span) {
  for (int slot = 0; slot < kAttentionSpanTiles; ++slot) {
    if (span.tile_keys[slot] == 0) continue;
    return AttentionTakesBf16Queries(span.keys[slot].dtype, span.head_dim);
  }
  return false;
}

void AttendSpan(const AttentionSpan& span, const AttentionState& state, float* scratch) {
  if (UsesBf16Attention(span)) {
    return AmxBf16Usable() ? AttendSpanAmx(span, state, scratch)
                           : AttendSpanBf16Dots(span, state, scratch);
  }
  AttendSpanByTiles(span, state, scratch);
}

void ScaleAccRows(const float* acc, bool tile_layout, int64_t num_rows, int64_t head_dim,
                  const float* factors, float* const* out_rows) {
  if (tile_layout) return ScaleAccRowsFromTilesAvx512(acc, num_rows, head_dim, factors, out_rows);
  const int64_t stride = AttentionAccStride(head_dim);
  for (int64_t r = 0; r < num_rows; ++r) {
    for (int64_t d = 0; d < head_dim; ++d) out_rows[r][d] = acc[r * stride + d] * factors[r];
  }
}

}  // namespace vllm::kernels
