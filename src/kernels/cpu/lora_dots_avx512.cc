// DotBf16Rows and AxpyBf16 on AVX-512: bf16 values widened to f32 in registers (a shift of 16
// bits, exact), then exactly DotF32RowsAvx512's / AxpyF32Avx512's arithmetic.
#include <immintrin.h>

#include "kernels/linear_internal.h"

namespace vllm::kernels {
namespace {

inline __mmask16 ChunkMask(int64_t remaining) {
  return remaining >= 16 ? static_cast<__mmask16>(0xffff)
                         : static_cast<__mmask16>((1u << remaining) - 1);
}

// 16 bf16 values (masked-off lanes 0) as f32.
inline __m512 LoadBf16(__mmask16 mask, const uint16_t* values) {
  const __m512i widened = _mm512_cvtepu16_epi32(_mm256_maskz_loadu_epi16(mask, values));
  return _mm512_castsi512_ps(_mm512_slli_epi32(widened, 16));
}

}  // namespace

void DotBf16RowsAvx512(const uint16_t* a, int64_t num_rows, const float* b, int64_t n, float* out) {
  if (n > 64) {  // DotF32Avx512 per row
    for (int64_t r = 0; r < num_rows; ++r) {
      const uint16_t* row = a + r * n;
      __m512 acc = _mm512_setzero_ps();
      for (int64_t i = 0; i < n; i += 16) {
        const __mmask16 mask = ChunkMask(n - i);
        acc = _mm512_fmadd_ps(LoadBf16(mask, row + i), _mm512_maskz_loadu_ps(mask, b + i), acc);
      }
      out[r] = _mm512_reduce_add_ps(acc);
    }
    return;
  }
  // b stays in registers across rows (the rank of an adapter's B rows).
  __m512 bv[4];
  __mmask16 masks[4];
  const int chunks = static_cast<int>((n + 15) / 16);
  for (int c = 0; c < chunks; ++c) {
    masks[c] = ChunkMask(n - 16 * c);
    bv[c] = _mm512_maskz_loadu_ps(masks[c], b + 16 * c);
  }
  for (int64_t r = 0; r < num_rows; ++r) {
    const uint16_t* row = a + r * n;
    __m512 acc = _mm512_setzero_ps();
    for (int c = 0; c < chunks; ++c) {
      acc = _mm512_fmadd_ps(LoadBf16(masks[c], row + 16 * c), bv[c], acc);
    }
    out[r] = _mm512_reduce_add_ps(acc);
  }
}

void AxpyBf16Avx512(float alpha, const uint16_t* x, int64_t n, float* y) {
  const __m512 scale = _mm512_set1_ps(alpha);
  for (int64_t i = 0; i < n; i += 16) {
    const __mmask16 mask = ChunkMask(n - i);
    _mm512_mask_storeu_ps(
        y + i, mask,
        _mm512_fmadd_ps(scale, LoadBf16(mask, x + i), _mm512_maskz_loadu_ps(mask, y + i)));
  }
}

}  // namespace vllm::kernels
