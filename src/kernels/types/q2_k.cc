// Q2_K: d sc q − dmin mn, q 2-bit, 16 sub-blocks of 16 with 4-bit scales sc and mins mn per 256
// values (ggml's block_q2_K). Packed as two crumb planes per chunk.
#include "kernels/types/k_quants.h"
#include "kernels/types/type_entry.h"

namespace vllm::kernels {
namespace {

using internal::kSubBlocksOf16;
using internal::PackCrumbs;
using internal::RoundToInt;
using internal::ScaleMinSearch;
using internal::SearchScaleAndMin;

void DecodeQ2_K(const void* block, DecodedBlock* out) {
  const auto& b = *static_cast<const BlockQ2_K*>(block);
  SplitCrumbs(b.qs, out->q);
  const float d = Fp16ToFp32(b.d);
  const float dmin = Fp16ToFp32(b.dmin);
  for (int s = 0; s < 16; ++s) {
    out->scale[s] = d * (b.scales[s] & 0x0f);
    out->min[s] = dmin * (b.scales[s] >> 4);
  }
}

// ggml's quantize_row_q2_K_ref: 16 sub-blocks of 16 with |x|-weighted absolute-error searches;
// scales and mins quantized to 4 bits against their maxima.
void QuantizeRowQ2_K(const float* x, int64_t n, void* out) {
  constexpr ScaleMinSearch kSearch = {-0.5f, 0.1f, 15, true};
  auto* blocks = static_cast<BlockQ2_K*>(out);
  for (int64_t b = 0; b < n / kSuperBlockSize; ++b, x += kSuperBlockSize) {
    BlockQ2_K& block = blocks[b];
    uint8_t levels[kSuperBlockSize];
    float scales[kSubBlocksOf16];
    float mins[kSubBlocksOf16];
    float max_scale = 0.0f;
    float max_min = 0.0f;
    for (int j = 0; j < kSubBlocksOf16; ++j) {
      float weights[16];
      for (int l = 0; l < 16; ++l) weights[l] = std::fabs(x[16 * j + l]);
      scales[j] = SearchScaleAndMin(x + 16 * j, weights, 16, 3, kSearch, levels + 16 * j, &mins[j]);
      max_scale = std::max(max_scale, scales[j]);
      max_min = std::max(max_min, mins[j]);
    }
    int quantized_scales[kSubBlocksOf16] = {};
    int quantized_mins[kSubBlocksOf16] = {};
    if (max_scale > 0.0f) {
      const float inverse_step = 15.0f / max_scale;
      for (int j = 0; j < kSubBlocksOf16; ++j) {
        quantized_scales[j] = std::clamp(RoundToInt(inverse_step * scales[j]), 0, 15);
      }
    }
    if (max_min > 0.0f) {
      const float inverse_step = 15.0f / max_min;
      for (int j = 0; j < kSubBlocksOf16; ++j) {
        quantized_mins[j] = std::clamp(RoundToInt(inverse_step * mins[j]), 0, 15);
      }
    }
    block.d = Fp32ToFp16(max_scale > 0.0f ? max_scale / 15.0f : 0.0f);
    block.dmin = Fp32ToFp16(max_min > 0.0f ? max_min / 15.0f : 0.0f);
    for (int j = 0; j < kSubBlocksOf16; ++j) {
      block.scales[j] = static_cast<uint8_t>(quantized_scales[j] | (quantized_mins[j] << 4));
      const float d = Fp16ToFp32(block.d) * quantized_scales[j];
      if (d == 0.0f) continue;
      const float dm = Fp16ToFp32(block.dmin) * quantized_mins[j];
      for (int l = 0; l < 16; ++l) {
        levels[16 * j + l] =
            static_cast<uint8_t>(std::clamp(RoundToInt((x[16 * j + l] + dm) / d), 0, 3));
      }
    }
    PackCrumbs(levels, block.qs);
  }
}

}  // namespace

// Found by PackRecords<PackedQ2_KRecord> (argument-dependent lookup).
void PutLane(const uint8_t* bytes, int64_t lane, PackedQ2_KRecord& record) {
  const auto& block = *reinterpret_cast<const BlockQ2_K*>(bytes);
  DecodedBlock decoded;
  DecodeQ2_K(&block, &decoded);  // q: 0..3
  record.d[lane] = block.d;
  record.dmin[lane] = block.dmin;
  for (int s = 0; s < 2 * kChunksPerSuperBlock; ++s) {
    record.scale_min_pairs[s / 2][2 * lane + s % 2] = block.scales[s];
  }
  for (int chunk = 0; chunk < kChunksPerSuperBlock; ++chunk) {
    const int8_t* q = decoded.q + 32 * chunk;
    PutChunkCrumbs([q](int v) { return q[v]; }, lane, record.chunks[chunk].low_crumbs);
  }
}

TypeTraits Q2_KEntry() {
  return WithQ8KActivations(IntegerType<GgmlType::kQ2_K>(
      16, DecodeQ2_K, QuantizeRowQ2_K, NibbleForm<PackedQ2_KRecord>(GgmlType::kQ2_K)));
}

}  // namespace vllm::kernels
