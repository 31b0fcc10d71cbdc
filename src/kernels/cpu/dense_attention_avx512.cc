// AttendAllKeys (ops.h) on AVX-512, for head_dim a multiple of 16. Per call:
//   kt:     [head_dim, padded]   the keys transposed (lane j of row d = key j's d), 0 past num_keys
//   scores: [kRows, padded]      one block of query rows' logits, then their exp(s - max)
// with padded = num_keys rounded up to 32. Query rows go kRows at a time, so that each load of kt
// or of a value row serves kRows rows; within a row every sum runs in a fixed order (over d for
// a logit, over the 16-key chunks then a fixed lane tree for the max and the sum, over the keys
// in order for the output), so a row's result never depends on which rows share its block.
#include <immintrin.h>

#include <algorithm>

#include "kernels/attention_internal.h"
#include "kernels/cpu/exp_avx512.h"

namespace vllm::kernels {
namespace {

constexpr int kRows = 4;          // query rows per block
constexpr int kKeyChunks = 2;     // 16-key chunks per pass over d (kRows x 2 accumulators)
constexpr int kMaxDimChunks = 4;  // 16-value output chunks per pass over the keys

// scores[r, c + 16h + lane] = (q_r · k_{c + 16h + lane}) · scale, -inf past num_keys.
void BlockLogits(const float* const* q, const float* kt, int64_t head_dim, int64_t padded,
                 int64_t num_keys, float scale, float* scores) {
  const __m512 scale_v = _mm512_set1_ps(scale);
  const __m512 minus_inf = _mm512_set1_ps(-__builtin_inff());
  for (int64_t c = 0; c < padded; c += 16 * kKeyChunks) {
    __m512 acc[kRows][kKeyChunks];
#pragma GCC unroll 4
    for (int r = 0; r < kRows; ++r) {
#pragma GCC unroll 4
      for (int h = 0; h < kKeyChunks; ++h) acc[r][h] = _mm512_setzero_ps();
    }
    for (int64_t d = 0; d < head_dim; ++d) {
      __m512 k[kKeyChunks];
#pragma GCC unroll 4
      for (int h = 0; h < kKeyChunks; ++h) k[h] = _mm512_loadu_ps(kt + d * padded + c + 16 * h);
#pragma GCC unroll 4
      for (int r = 0; r < kRows; ++r) {
        const __m512 q_d = _mm512_set1_ps(q[r][d]);
#pragma GCC unroll 4
        for (int h = 0; h < kKeyChunks; ++h) acc[r][h] = _mm512_fmadd_ps(q_d, k[h], acc[r][h]);
      }
    }
#pragma GCC unroll 4
    for (int h = 0; h < kKeyChunks; ++h) {
      const int64_t first = c + 16 * h;
      const int64_t valid = std::clamp<int64_t>(num_keys - first, 0, 16);
      const __mmask16 mask = static_cast<__mmask16>((1u << valid) - 1);
#pragma GCC unroll 4
      for (int r = 0; r < kRows; ++r) {
        _mm512_storeu_ps(scores + r * padded + first,
                         _mm512_mask_mul_ps(minus_inf, mask, acc[r][h], scale_v));
      }
    }
  }
}

// Row r of scores becomes exp(s - max_r) (0 past num_keys); returns 1 / Σ_j of them.
float SoftmaxRow(float* row, int64_t padded) {
  __m512 max = _mm512_set1_ps(-__builtin_inff());
  for (int64_t c = 0; c < padded; c += 16) max = _mm512_max_ps(max, _mm512_loadu_ps(row + c));
  const __m512 row_max = _mm512_set1_ps(_mm512_reduce_max_ps(max));
  __m512 sum = _mm512_setzero_ps();
  for (int64_t c = 0; c < padded; c += 16) {
    const __m512 s = _mm512_loadu_ps(row + c);
    // Keys past num_keys hold -inf: their weight is exactly 0.
    const __mmask16 valid = _mm512_cmp_ps_mask(s, _mm512_set1_ps(-__builtin_inff()), _CMP_NEQ_OQ);
    const __m512 p = _mm512_maskz_mov_ps(valid, Exp(_mm512_sub_ps(s, row_max)));
    _mm512_storeu_ps(row + c, p);
    sum = _mm512_add_ps(sum, p);
  }
  return 1.0f / _mm512_reduce_add_ps(sum);
}

// out_r[16 first_chunk, + 16 kChunks) = Σ_j p_r[j] v_j[...] · inv_sum_r, over the keys in order.
template <int kChunks>
void BlockOutput(const DenseAttention& a, const float* scores, int64_t padded, const float* inv_sum,
                 int64_t first_chunk, float* const* out) {
  __m512 acc[kRows][kChunks];
#pragma GCC unroll 4
  for (int r = 0; r < kRows; ++r) {
#pragma GCC unroll 4
    for (int c = 0; c < kChunks; ++c) acc[r][c] = _mm512_setzero_ps();
  }
  for (int64_t j = 0; j < a.num_keys; ++j) {
    const float* value = a.v + j * a.kv_row_stride + 16 * first_chunk;
    __m512 v[kChunks];
#pragma GCC unroll 4
    for (int c = 0; c < kChunks; ++c) v[c] = _mm512_loadu_ps(value + 16 * c);
#pragma GCC unroll 4
    for (int r = 0; r < kRows; ++r) {
      const __m512 p = _mm512_set1_ps(scores[r * padded + j]);
#pragma GCC unroll 4
      for (int c = 0; c < kChunks; ++c) acc[r][c] = _mm512_fmadd_ps(p, v[c], acc[r][c]);
    }
  }
#pragma GCC unroll 4
  for (int r = 0; r < kRows; ++r) {
    const __m512 scale = _mm512_set1_ps(inv_sum[r]);
#pragma GCC unroll 4
    for (int c = 0; c < kChunks; ++c) {
      _mm512_storeu_ps(out[r] + 16 * (first_chunk + c), _mm512_mul_ps(acc[r][c], scale));
    }
  }
}

}  // namespace

void AttendAllKeysAvx512(const DenseAttention& a, float* scratch) {
  const int64_t padded = (a.num_keys + 16 * kKeyChunks - 1) / (16 * kKeyChunks) * 16 * kKeyChunks;
  float* kt = scratch;                            // [head_dim, padded]
  float* scores = scratch + a.head_dim * padded;  // [kRows, padded]
  for (int64_t d = 0; d < a.head_dim; ++d) {
    float* row = kt + d * padded;
    for (int64_t j = 0; j < a.num_keys; ++j) row[j] = a.k[j * a.kv_row_stride + d];
    std::fill(row + a.num_keys, row + padded, 0.0f);
  }
  const int64_t num_dim_chunks = a.head_dim / 16;
  for (int64_t first = 0; first < a.num_rows; first += kRows) {
    // A block past the last row repeats it (writing the same values again): each row's
    // arithmetic is the same whatever its block holds.
    const float* q[kRows];
    float* out[kRows];
#pragma GCC unroll 4
    for (int r = 0; r < kRows; ++r) {
      const int64_t row = std::min<int64_t>(first + r, a.num_rows - 1);
      q[r] = a.q + row * a.q_row_stride;
      out[r] = a.out + row * a.out_row_stride;
    }
    BlockLogits(q, kt, a.head_dim, padded, a.num_keys, a.scale, scores);
    float inv_sum[kRows];
#pragma GCC unroll 4
    for (int r = 0; r < kRows; ++r) inv_sum[r] = SoftmaxRow(scores + r * padded, padded);
    for (int64_t c = 0; c < num_dim_chunks; c += kMaxDimChunks) {
      switch (std::min<int64_t>(kMaxDimChunks, num_dim_chunks - c)) {
        case 1:
          BlockOutput<1>(a, scores, padded, inv_sum, c, out);
          break;
        case 2:
          BlockOutput<2>(a, scores, padded, inv_sum, c, out);
          break;
        case 3:
          BlockOutput<3>(a, scores, padded, inv_sum, c, out);
          break;
        default:
          BlockOutput<4>(a, scores, padded, inv_sum, c, out);
          break;
      }
    }
  }
}

}  // namespace vllm::kernels
