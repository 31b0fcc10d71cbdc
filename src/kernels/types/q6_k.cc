// Q6_K: d sc (q − 32), q 6-bit (ql nibbles + qh 2-bit pairs), 16 sub-blocks of 16 with int8
// scales sc per 256 values (ggml's block_q6_K). Packed as nibbles and two crumb planes per chunk.
#include "kernels/types/k_quants.h"
#include "kernels/types/type_entry.h"

namespace vllm::kernels {
namespace {

using internal::FitSymmetricLevels;
using internal::kMaxSearchValues;
using internal::kNegligibleMagnitude;
using internal::kSubBlocksOf16;
using internal::LevelSums;
using internal::RequantizeSubBlocksOf16;
using internal::RoundToInt;
using internal::SearchScalesOf16;
using internal::SearchSymmetricLevels;

// Q6_K's 6-bit values of one 128-value half, minus 32: ql bytes [0, 64) give the low nibbles of
// values [0, 64) (low) and [64, 128) (high); qh byte l gives the 2 high bits of values l, l + 32,
// l + 64, l + 96.
void SplitQ6_KHalf(const uint8_t* __restrict ql, const uint8_t* __restrict qh,
                   int8_t* __restrict q) {
  for (int l = 0; l < 32; ++l) {
    q[l] = static_cast<int8_t>(((ql[l] & 0x0f) | (((qh[l] >> 0) & 3) << 4)) - 32);
    q[l + 32] = static_cast<int8_t>(((ql[l + 32] & 0x0f) | (((qh[l] >> 2) & 3) << 4)) - 32);
    q[l + 64] = static_cast<int8_t>(((ql[l] >> 4) | (((qh[l] >> 4) & 3) << 4)) - 32);
    q[l + 96] = static_cast<int8_t>(((ql[l + 32] >> 4) | (((qh[l] >> 6) & 3) << 4)) - 32);
  }
}

void DecodeQ6_K(const void* block, DecodedBlock* out) {
  const auto& b = *static_cast<const BlockQ6_K*>(block);
  SplitQ6_KHalf(b.ql, b.qh, out->q);
  SplitQ6_KHalf(b.ql + 64, b.qh + 32, out->q + 128);
  ScalesOf16(b.d, out, [&b](int s) { return b.scales[s]; });
}

// ggml's make_qx_quants (x²-weighted): x[0..n) ≈ scale * l with l in [-half_levels,
// half_levels - 1]; the least-squares scale of the levels at the best of 19 inverse scales
// -(half_levels + 0.1 k) / (value of largest magnitude), k = -9..9. Writes l + half_levels.
float SearchSymmetricScale(const float* x, int n, int half_levels, uint8_t* levels) {
  auto refine = [&](float largest, LevelSums sums, int8_t* best_levels) {
    int8_t candidate[kMaxSearchValues];
    float scale = sums.sum_l2 != 0.0f ? sums.sum_xl / sums.sum_l2 : 0.0f;
    float best_reduction = scale * sums.sum_xl;  // the weighted squared error it removes
    for (int step = -9; step <= 9; ++step) {
      if (step == 0) continue;
      const float inverse_scale = -(half_levels + 0.1f * step) / largest;
      sums = FitSymmetricLevels(x, n, half_levels, inverse_scale, candidate);
      if (sums.sum_l2 > 0.0f && sums.sum_xl * sums.sum_xl > best_reduction * sums.sum_l2) {
        std::copy_n(candidate, n, best_levels);
        scale = sums.sum_xl / sums.sum_l2;
        best_reduction = scale * sums.sum_xl;
      }
    }
    return scale;
  };
  return SearchSymmetricLevels(x, n, half_levels, levels, refine);
}

// ggml's quantize_row_q6_K_ref: 16 sub-blocks of 16 with x²-weighted scale searches, scales
// quantized to int8 against the one of largest magnitude, which maps to -128.
void QuantizeRowQ6_K(const float* x, int64_t n, void* out) {
  auto* blocks = static_cast<BlockQ6_K*>(out);
  for (int64_t b = 0; b < n / kSuperBlockSize; ++b, x += kSuperBlockSize) {
    BlockQ6_K& block = blocks[b];
    uint8_t levels[kSuperBlockSize];
    float scales[kSubBlocksOf16];
    const float max_scale = SearchScalesOf16(x, 32, SearchSymmetricScale, scales, levels);
    if (std::fabs(max_scale) < kNegligibleMagnitude) {
      std::memset(&block, 0, sizeof(block));
      continue;
    }
    const float inverse_step = -128.0f / max_scale;
    block.d = Fp32ToFp16(1.0f / inverse_step);
    for (int j = 0; j < kSubBlocksOf16; ++j) {
      block.scales[j] = static_cast<int8_t>(std::min(127, RoundToInt(inverse_step * scales[j])));
    }
    RequantizeSubBlocksOf16(x, block.d, block.scales, 32, levels);
    // Per 128-value half: ql byte l holds levels l (low nibble) and l + 64 (high), byte l + 32
    // levels l + 32 and l + 96; qh byte l their top 2 bits in that order.
    for (int half = 0; half < 2; ++half) {
      const uint8_t* half_levels = levels + 128 * half;
      uint8_t* ql = block.ql + 64 * half;
      for (int l = 0; l < 32; ++l) {
        ql[l] = static_cast<uint8_t>((half_levels[l] & 0x0f) | ((half_levels[l + 64] & 0x0f) << 4));
        ql[l + 32] = static_cast<uint8_t>((half_levels[l + 32] & 0x0f) |
                                          ((half_levels[l + 96] & 0x0f) << 4));
        block.qh[32 * half + l] = static_cast<uint8_t>(
            (half_levels[l] >> 4) | ((half_levels[l + 32] >> 4) << 2) |
            ((half_levels[l + 64] >> 4) << 4) | ((half_levels[l + 96] >> 4) << 6));
      }
    }
  }
}

}  // namespace

// Found by PackRecords<PackedQ6_KRecord> (argument-dependent lookup).
void PutLane(const uint8_t* bytes, int64_t lane, PackedQ6_KRecord& record) {
  const auto& block = *reinterpret_cast<const BlockQ6_K*>(bytes);
  DecodedBlock decoded;
  DecodeQ6_K(&block, &decoded);  // q - 32: -32..31
  int8_t codes[kSuperBlockSize];
  for (int i = 0; i < kSuperBlockSize; ++i) codes[i] = static_cast<int8_t>(decoded.q[i] + 32);
  record.d[lane] = block.d;
  for (int s = 0; s < 2 * kChunksPerSuperBlock; ++s) record.scales[s][lane] = block.scales[s];
  for (int chunk = 0; chunk < kChunksPerSuperBlock; ++chunk) {
    const int8_t* q = codes + 32 * chunk;
    StoreLowNibbles(q, lane, record.chunks[chunk].nibbles);
    PutChunkCrumbs([q](int v) { return q[v] >> 4; }, lane, record.chunks[chunk].high_crumbs);
  }
}

TypeTraits Q6_KEntry() {
  return WithQ8KActivations(IntegerType<GgmlType::kQ6_K>(
      16, DecodeQ6_K, QuantizeRowQ6_K, NibbleForm<PackedQ6_KRecord>(GgmlType::kQ6_K)));
}

}  // namespace vllm::kernels
