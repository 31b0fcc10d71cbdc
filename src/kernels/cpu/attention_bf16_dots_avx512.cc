// AttendSpan on vdpbf16ps (AVX512_BF16 without AMX, where vdpbf16ps outpaces f32 FMAs; bf16 keys
// and values, head_dim a multiple of 32), transposed as attention_span_avx512.h describes, and
// QueriesToBf16, the query layout both transposed paths read. One vdpbf16ps adds to each row's
// lane the products of a pair of its bf16 values with a broadcast pair:
//   S^T: key j's logits += Q^T pair c (dims 2c, 2c + 1 of the 16 rows) · (k_j[2c], k_j[2c + 1])
//   acc^T: dim d += P^T pair i (keys 2i, 2i + 1 of the 16 rows) · (v_2i[d], v_2i+1[d])
// with 16 independent sums per loop (a slot's keys, a slice's dims), each in a fixed order (pairs
// ascending), so a row's bits do not depend on the other rows of its group.
#include <immintrin.h>

#include <algorithm>
#include <cstdint>
#include <cstring>
#include <type_traits>
#include <vector>  // attention_span_avx512.h

#include "kernels/attention_internal.h"
#include "kernels/cpu/exp_avx512.h"
#include "kernels/kv_line_prefetcher.h"

namespace vllm::kernels {
namespace {
#include "kernels/cpu/transpose_avx512.h"
// clang-format off: after the transpose it uses
#include "kernels/cpu/attention_span_avx512.h"
// clang-format on

// The 32-bit word at `bytes` (a pair of bf16 values) in every lane.
__m512bh BroadcastPair(const void* bytes) {
  int32_t pair;
  std::memcpy(&pair, bytes, sizeof(pair));
  return (__m512bh)_mm512_set1_epi32(pair);
}

// S^T of query rows [r0, r0 + 16) for the seen slots into st ([key][row]), summed over head_dim
// in pairs of dims, asking for a line of the next span per pair. q: QueriesToBf16's layout.
void ScoreGroupOnDots(const AttentionSpan& span, const SeenSlots& seen, const uint16_t* q,
                      int64_t r0, const KeyRows& keys, float (&st)[kSpanColumns][kGroupRows],
                      KvLinePrefetcher& prefetcher) {
  const int64_t pairs = span.head_dim / 2;
  // Dim pair c of the group's 16 rows: 16 words at q_pairs + 16 c.
  const auto* q_pairs = reinterpret_cast<const uint32_t*>(q + r0 * span.head_dim);
  for (int slot = seen.lo; slot <= seen.hi; ++slot) {
    const uint8_t* rows = keys.data[slot];
    const int64_t row_bytes = keys.row_bytes[slot];
    __m512 logits[kAttentionTileKeys];
#pragma GCC unroll 16
    for (__m512& sum : logits) sum = _mm512_setzero_ps();
    for (int64_t c = 0; c < pairs; ++c) {
      prefetcher.Issue(1);
      const __m512bh q_pair = (__m512bh)_mm512_loadu_si512(q_pairs + c * kGroupRows);
#pragma GCC unroll 16
      for (int j = 0; j < kAttentionTileKeys; ++j) {
        logits[j] =
            _mm512_dpbf16_ps(logits[j], q_pair, BroadcastPair(rows + j * row_bytes + 4 * c));
      }
    }
#pragma GCC unroll 16
    for (int j = 0; j < kAttentionTileKeys; ++j) {
      _mm512_store_ps(st[slot * kAttentionTileKeys + j], logits[j]);
    }
  }
}

// acc^T of rows [r0, r0 + 16) = acc^T · rescale + V^T · P^T over the key pairs of the seen slots,
// slice by slice of 16 dims (acc^T: [head_dim][16 rows], P^T as SoftmaxStep lays it out, V in
// PackValues' kPairRows), asking for a line of the next span per key pair.
void AddValuesOnDots(const AttentionSpan& span, const SeenSlots& seen, const AttentionState& state,
                     int64_t r0, __m512 rescale, const uint32_t* p_tiles, const uint32_t* v_tiles,
                     KvLinePrefetcher& prefetcher) {
  constexpr int kPairsPerHalf = kKeysPerHalf / 2;
  const int64_t num_slices = span.head_dim / kDimsPerSlice;
  float* acc = state.acc + r0 * span.head_dim;
  const bool rescaled = _mm512_cmp_ps_mask(rescale, _mm512_set1_ps(1.0f), _CMP_NEQ_UQ) != 0;
  const int first_pair = seen.lo * kAttentionTileKeys / 2;
  const int end_pair = (seen.hi + 1) * kAttentionTileKeys / 2;
  for (int64_t slice = 0; slice < num_slices; ++slice) {
    float* acc_slice = acc + slice * kDimsPerSlice * kGroupRows;
    __m512 sums[kDimsPerSlice];
#pragma GCC unroll 16
    for (int d = 0; d < kDimsPerSlice; ++d) {
      sums[d] = _mm512_loadu_ps(acc_slice + d * kGroupRows);
      if (rescaled) sums[d] = _mm512_mul_ps(sums[d], rescale);
    }
    for (int pair = first_pair; pair < end_pair; ++pair) {
      prefetcher.Issue(1);
      const __m512bh p_pair = (__m512bh)_mm512_load_si512(p_tiles + pair * kGroupRows);
      // The pair's values of the slice's 16 dims, one word each (ValueLayout::kPairRows).
      const uint32_t* v_pair =
          v_tiles +
          ((pair / kPairsPerHalf * num_slices + slice) * kPairsPerHalf + pair % kPairsPerHalf) *
              kDimsPerSlice;
#pragma GCC unroll 16
      for (int d = 0; d < kDimsPerSlice; ++d) {
        sums[d] = _mm512_dpbf16_ps(sums[d], p_pair, BroadcastPair(v_pair + d));
      }
    }
#pragma GCC unroll 16
    for (int d = 0; d < kDimsPerSlice; ++d) _mm512_storeu_ps(acc_slice + d * kGroupRows, sums[d]);
  }
}

}  // namespace

void QueriesToBf16(const float* q, int64_t num_rows, int64_t head_dim, uint16_t* out) {
  const int64_t parts = head_dim / kDimsPerPart;
  for (int64_t r0 = 0; r0 < num_rows; r0 += kGroupRows) {
    const int rows = static_cast<int>(std::min<int64_t>(kGroupRows, num_rows - r0));
    for (int64_t part = 0; part < parts; ++part) {
      __m512 block[kGroupRows];  // row i's 16 dim pairs, then dim pair k's 16 rows
      for (int i = 0; i < kGroupRows; ++i) {
        const float* dims = q + (r0 + i) * head_dim + part * kDimsPerPart;
        block[i] = i < rows ? (__m512)_mm512_cvtne2ps_pbh(_mm512_loadu_ps(dims + 16),
                                                          _mm512_loadu_ps(dims))
                            : _mm512_setzero_ps();
      }
      Transpose16x16(block);
      uint16_t* tile = out + r0 * head_dim + part * kDimsPerPart * kGroupRows;
      for (int k = 0; k < 16; ++k) _mm512_storeu_ps(tile + k * 32, block[k]);
    }
  }
}

void ScaleAccRowsFromTilesAvx512(const float* acc, int64_t num_rows, int64_t head_dim,
                                 const float* factors, float* const* out_rows) {
  const int64_t stride = AttentionAccStride(head_dim);
  for (int64_t r0 = 0; r0 < num_rows; r0 += kGroupRows) {
    const int rows = static_cast<int>(std::min<int64_t>(kGroupRows, num_rows - r0));
    const float* group = acc + r0 * stride;  // [stride][16 rows]
    for (int64_t d0 = 0; d0 < head_dim; d0 += kDimsPerSlice) {
      __m512 block[kGroupRows];  // dim d0 + k of the 16 rows, then row i's dims [d0, d0 + 16)
      for (int k = 0; k < kDimsPerSlice; ++k) block[k] = _mm512_loadu_ps(group + (d0 + k) * 16);
      Transpose16x16(block);
      for (int i = 0; i < rows; ++i) {
        _mm512_storeu_ps(out_rows[r0 + i] + d0,
                         _mm512_mul_ps(block[i], _mm512_set1_ps(factors[r0 + i])));
      }
    }
  }
}

void AttendSpanBf16Dots(const AttentionSpan& span, const AttentionState& state, float* scratch) {
  KvLinePrefetcher prefetcher(span.next, span.head_dim);
  const PreparedSpan prepared = PrepareSpan(span, ValueLayout::kPairRows, scratch);
  const SeenSlots& seen = prepared.seen;
  if (seen.hi < seen.lo) return prefetcher.IssueRest();
  alignas(64) float st[kSpanColumns][kGroupRows];
  alignas(64) uint32_t p_tiles[kHalves * 16 * 16];
  for (int64_t r0 = NextGroup(span, 0); r0 < span.num_rows; r0 = NextGroup(span, r0 + kGroupRows)) {
    ScoreGroupOnDots(span, seen, prepared.q, r0, prepared.keys, st, prefetcher);
    const __m512 rescale = SoftmaxStep(span, seen, state, r0, st, p_tiles);
    AddValuesOnDots(span, seen, state, r0, rescale, p_tiles, prepared.v_tiles, prefetcher);
  }
  prefetcher.IssueRest();
}

}  // namespace vllm::kernels
