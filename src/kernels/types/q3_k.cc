// Q3_K: d (sc − 32) q', q' = q − 4 where its hmask bit is clear, else q (q 2-bit), 16 sub-blocks
// of 16 with 6-bit scales sc per 256 values (ggml's block_q3_K). Packed as two crumb planes and a
// third-bit plane per chunk.
#include "kernels/types/k_quants.h"
#include "kernels/types/type_entry.h"

namespace vllm::kernels {
namespace {

using internal::kSubBlocksOf16;
using internal::LevelSums;
using internal::PackCrumbs;
using internal::RequantizeSubBlocksOf16;
using internal::RoundToInt;
using internal::SearchScalesOf16;
using internal::SearchSymmetricLevels;

void DecodeQ3_K(const void* block, DecodedBlock* out) {
  const auto& b = *static_cast<const BlockQ3_K*>(block);
  SplitCrumbs(b.qs, out->q);
  // The high bit: bit k of hmask byte l belongs to element 32 k + l; a clear bit subtracts 4
  // (without a branch: the bits are random, and a branch per value made the in-place kernels three
  // times slower).
  for (int k = 0; k < 8; ++k) {
    for (int l = 0; l < 32; ++l) {
      const int high = (b.hmask[l] >> k) & 1;
      out->q[32 * k + l] = static_cast<int8_t>(out->q[32 * k + l] - 4 + 4 * high);
    }
  }
  ScalesOf16(b.d, out, [&b](int s) { return Q3_KScale(b.scales, s); });
}

// ggml's make_q3_quants (x²-weighted, with refinement): x[0..n) ≈ scale * l with l in
// [-half_levels, half_levels - 1]. From the levels at scale (value of largest magnitude) /
// -half_levels, up to 5 passes move single levels to the one the other levels' least-squares fit
// asks for, whenever that lowers the weighted error. Writes l + half_levels.
float SearchQ3Scale(const float* x, int n, int half_levels, uint8_t* levels) {
  auto refine = [&](float /*largest*/, LevelSums sums, int8_t* signed_levels) {
    for (int pass = 0; pass < 5; ++pass) {
      bool changed = false;
      for (int i = 0; i < n; ++i) {
        const float weight = x[i] * x[i];
        // The sums without element i.
        float sum_xl = sums.sum_xl - weight * x[i] * signed_levels[i];
        if (!(sum_xl > 0.0f)) continue;
        float sum_l2 = sums.sum_l2 - weight * signed_levels[i] * signed_levels[i];
        const int level =
            std::clamp(RoundToInt(x[i] * sum_l2 / sum_xl), -half_levels, half_levels - 1);
        if (level == signed_levels[i]) continue;
        sum_xl += weight * x[i] * level;
        sum_l2 += weight * level * level;
        // Keep it if it raises sum_xl² / sum_l2, the error the fit removes.
        if (sum_l2 > 0.0f && sum_xl * sum_xl * sums.sum_l2 > sums.sum_xl * sums.sum_xl * sum_l2) {
          signed_levels[i] = static_cast<int8_t>(level);
          sums = {sum_xl, sum_l2};
          changed = true;
        }
      }
      if (!changed) break;
    }
    return sums.sum_l2 > 0.0f ? sums.sum_xl / sums.sum_l2 : 0.0f;
  };
  return SearchSymmetricLevels(x, n, half_levels, levels, refine);
}

// ggml's quantize_row_q3_K_ref: 16 sub-blocks of 16 with refined x²-weighted scales, quantized to
// 6 bits (stored + 32) against the one of largest magnitude, which maps to -32.
void QuantizeRowQ3_K(const float* x, int64_t n, void* out) {
  auto* blocks = static_cast<BlockQ3_K*>(out);
  for (int64_t b = 0; b < n / kSuperBlockSize; ++b, x += kSuperBlockSize) {
    BlockQ3_K& block = blocks[b];
    uint8_t levels[kSuperBlockSize];
    float scales[kSubBlocksOf16];
    const float max_scale = SearchScalesOf16(x, 4, SearchQ3Scale, scales, levels);
    int quantized_scales[kSubBlocksOf16] = {};  // signed, -32..31
    std::memset(block.scales, 0, sizeof(block.scales));
    if (max_scale != 0.0f) {
      const float inverse_step = -32.0f / max_scale;
      for (int j = 0; j < kSubBlocksOf16; ++j) {
        quantized_scales[j] = std::clamp(RoundToInt(inverse_step * scales[j]), -32, 31);
        // Low nibbles in bytes 0-7 (sub-blocks 8-15 in the high nibbles), top 2 bits in 8-11.
        const int stored = quantized_scales[j] + 32;
        block.scales[j % 8] |= static_cast<uint8_t>((stored & 0x0f) << (4 * (j / 8)));
        block.scales[8 + j % 4] |= static_cast<uint8_t>((stored >> 4) << (2 * (j / 4)));
      }
      block.d = Fp32ToFp16(1.0f / inverse_step);
    } else {
      block.d = Fp32ToFp16(0.0f);
    }
    RequantizeSubBlocksOf16(x, block.d, quantized_scales, 4, levels);
    // Levels 4..7 set their high bit in hmask (bit j / 32 of byte j % 32) and keep 2 bits.
    std::memset(block.hmask, 0, sizeof(block.hmask));
    for (int j = 0; j < kSuperBlockSize; ++j) {
      if (levels[j] > 3) {
        block.hmask[j % 32] |= static_cast<uint8_t>(1 << (j / 32));
        levels[j] -= 4;
      }
    }
    PackCrumbs(levels, block.qs);
  }
}

}  // namespace

// Found by PackRecords<PackedQ3_KRecord> (argument-dependent lookup).
void PutLane(const uint8_t* bytes, int64_t lane, PackedQ3_KRecord& record) {
  const auto& block = *reinterpret_cast<const BlockQ3_K*>(bytes);
  DecodedBlock decoded;
  DecodeQ3_K(&block, &decoded);  // q - 4: -4..3
  record.d[lane] = block.d;
  for (int s = 0; s < 2 * kChunksPerSuperBlock; ++s) {
    record.scales[s][lane] = static_cast<int8_t>(Q3_KScale(block.scales, s));
  }
  for (int chunk = 0; chunk < kChunksPerSuperBlock; ++chunk) {
    const int8_t* q = decoded.q + 32 * chunk;
    PackedQ3_KChunk& codes = record.chunks[chunk];
    PutChunkCrumbs([q](int v) { return (q[v] + 4) & 3; }, lane, codes.low_crumbs);
    PutChunkBitPlane([q](int v) { return (q[v] + 4) >> 2; }, lane, codes.third_bits);
  }
}

TypeTraits Q3_KEntry() {
  return WithQ8KActivations(IntegerType<GgmlType::kQ3_K>(
      16, DecodeQ3_K, QuantizeRowQ3_K, NibbleForm<PackedQ3_KRecord>(GgmlType::kQ3_K)));
}

}  // namespace vllm::kernels
