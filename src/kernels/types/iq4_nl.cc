// IQ4_NL: d kIq4NlValues[q], q a 4-bit index into the non-linear grid, 32 values per block (ggml's
// block_iq4_nl). Its grid search is IQ4_XS's too (quantizers.h).
#include "kernels/quantizers.h"
#include "kernels/types/nibble_blocks.h"
#include "kernels/types/type_entry.h"

namespace vllm::kernels {
namespace {

void DecodeIq4Nl(const void* block, DecodedBlock* out) {
  const auto& b = *static_cast<const BlockIq4Nl*>(block);
  SplitNibbles(b.qs, out->q);
  MapThroughGrid(kIq4NlValues, out->q);
  SetScale(Fp16ToFp32(b.d), 1, out);
}

// The index of the kIq4NlValues entry nearest to v (the larger one on ties).
int NearestIq4NlIndex(float v) {
  if (!(v > kIq4NlValues[0])) return 0;
  if (v >= kIq4NlValues[15]) return 15;
  const int upper =
      static_cast<int>(std::upper_bound(kIq4NlValues + 1, kIq4NlValues + 15, v) - kIq4NlValues);
  return v - kIq4NlValues[upper - 1] < kIq4NlValues[upper] - v ? upper - 1 : upper;
}

}  // namespace

namespace internal {

float BestIq4NlScale(const float* x) {
  const float largest = LargestMagnitude(x, kQuantBlockSize);
  if (std::fabs(largest) < kNegligibleMagnitude) return 0.0f;
  // Σ w q x and Σ w q² (w = x², q the grid value nearest to inverse_scale * x): the least-squares
  // scale is their ratio and it removes sum_qx² / sum_q2 from the weighted error.
  auto weighted_sums = [x](float inverse_scale, float* sum_qx, float* sum_q2) {
    *sum_qx = 0.0f;
    *sum_q2 = 0.0f;
    for (int j = 0; j < kQuantBlockSize; ++j) {
      const float q = kIq4NlValues[NearestIq4NlIndex(inverse_scale * x[j])];
      const float weight = x[j] * x[j];
      *sum_qx += weight * q * x[j];
      *sum_q2 += weight * q * q;
    }
  };
  float sum_qx, sum_q2;
  weighted_sums(1.0f / (-largest / kIq4NlValues[0]), &sum_qx, &sum_q2);
  float scale = sum_q2 > 0.0f ? sum_qx / sum_q2 : 0.0f;
  float best_reduction = scale * sum_qx;
  // Candidates map the largest value to the grid's negative end, shifted by -7..7 grid units.
  for (int shift = -7; shift <= 7; ++shift) {
    weighted_sums(static_cast<float>(shift + kIq4NlValues[0]) / largest, &sum_qx, &sum_q2);
    if (sum_q2 > 0.0f && sum_qx * sum_qx > best_reduction * sum_q2) {
      scale = sum_qx / sum_q2;
      best_reduction = scale * sum_qx;
    }
  }
  return scale;
}

void QuantizeIq4NlIndices(const float* x, float inverse_scale, uint8_t* qs) {
  uint8_t indices[kQuantBlockSize];
  for (int j = 0; j < kQuantBlockSize; ++j) {
    indices[j] = static_cast<uint8_t>(NearestIq4NlIndex(inverse_scale * x[j]));
  }
  PackNibbles(indices, qs);
}

}  // namespace internal

namespace {

// ggml's quantize_iq4_nl without an importance matrix: the best grid scale per block, then each
// value's nearest grid entry at that scale.
void QuantizeRowIq4Nl(const float* x, int64_t n, void* out) {
  auto* blocks = static_cast<BlockIq4Nl*>(out);
  for (int64_t b = 0; b < n / kQuantBlockSize; ++b) {
    const float* block_x = x + b * kQuantBlockSize;
    const float scale = internal::BestIq4NlScale(block_x);
    blocks[b].d = Fp32ToFp16(scale);
    internal::QuantizeIq4NlIndices(block_x, scale != 0.0f ? 1.0f / scale : 0.0f, blocks[b].qs);
  }
}

}  // namespace

TypeTraits Iq4NlEntry() {
  return IntegerType<GgmlType::kIQ4_NL>(32, DecodeIq4Nl, QuantizeRowIq4Nl,
                                        NibbleForm<PackedIq4NlRecord>(GgmlType::kIQ4_NL));
}

}  // namespace vllm::kernels
