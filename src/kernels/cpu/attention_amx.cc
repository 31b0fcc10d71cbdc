// AttendTile on AMX tiles (UsesAmxAttention: bf16 keys and values, head_dim a multiple of 32).
// Per group of 16 query rows:
//   S [16 rows, 16 keys] = Q (bf16) · K (bf16), summed in f32 by TDPBF16PS over head_dim
//   each row's online-softmax step on S in f32 (SoftmaxColumns: the 16 rows side by side; row by
//   row through SoftmaxStep where logits are soft-capped): p, rescale
//   acc = acc · rescale (rows whose max moved), then acc += P (p rounded to bf16) · V (bf16) by
//   TDPBF16PS over the 16 keys, on acc's own rows
// Keys no row sees enter K and V as zeros, so the other rows' keys add exact zeros to a row's
// sums; rows are independent in the tiles, so a row's result depends only on its own query, range
// and keys: the same alone (decode, 16 rows padded) as in any tile and batch.
#include <immintrin.h>

#include <algorithm>
#include <cstdint>
#include <vector>

#include "kernels/attention_internal.h"
#include "kernels/cpu/amx_tiles.h"
#include "kernels/cpu/exp_avx512.h"
#include "kernels/isa.h"

namespace vllm::kernels {
namespace {
#include "kernels/cpu/attention_tile_impl.h"
#include "kernels/cpu/transpose_avx512.h"

constexpr int kGroupRows = 16;     // query rows per A tile
constexpr int kDimsPerPart = 32;   // bf16 dims per 64-byte row of a Q tile and of K's B tile rows
constexpr int kDimsPerSlice = 16;  // f32 dims per 64-byte row of a PV tile
constexpr int kSlicesPerPass = 4;  // PV's C tiles: 0, 5, 6, 7
constexpr int64_t kMaxAmxHeadDim = 256;

// Tiles (literal numbers: GCC's tile intrinsics paste them into the assembly):
//   0: S, then acc slice 0  [16 rows, 16 f32]      1: Q part   [16 rows, 32 bf16]
//   2: K part [16 dim pairs, 16 keys x 2 bf16]     3: P        [16 rows, 16 bf16]
//   4: V slice [8 key pairs, 16 dims x 2 bf16]     5, 6, 7: acc slices 1, 2, 3
void ConfigureAttentionTiles() {
  ConfigureTiles({16, 16, 16, 16, 8, 16, 16, 16}, {64, 64, 64, 32, 64, 64, 64, 64});
}

// k_tiles: [head_dim / 32 parts][16 dim pairs][16 keys] pairs of bf16: part p's row k holds dims
// (32 p + 2k, + 1) of every key, as a B tile; keys outside [lo, hi] are 0.
void PackKeys(const AttentionTile& tile, int lo, int hi, uint32_t* k_tiles) {
  for (int64_t part = 0; part < tile.head_dim / kDimsPerPart; ++part) {
    __m512 block[kAttentionTileKeys];
    for (int j = 0; j < kAttentionTileKeys; ++j) {
      const uint8_t* row = tile.keys.data + j * tile.keys.row_stride_bytes + part * 64;
      block[j] = j >= lo && j <= hi ? _mm512_loadu_ps(row) : _mm512_setzero_ps();
    }
    Transpose16x16(block);
    for (int k = 0; k < 16; ++k) _mm512_storeu_ps(k_tiles + (part * 16 + k) * 16, block[k]);
  }
}

// v_tiles: [head_dim / 16 slices][8 key pairs][16 dims] pairs of bf16: slice s's row k holds keys
// 2k and 2k + 1 of dims [16 s, + 16) side by side, as a B tile; keys outside [lo, hi] are 0.
void PackValues(const AttentionTile& tile, int lo, int hi, uint32_t* v_tiles) {
  // Element 2n of the result from element n of the lower key, 2n + 1 from n of the upper.
  alignas(64) static constexpr uint16_t kInterleave[32] = {
      0, 16, 1, 17, 2,  18, 3,  19, 4,  20, 5,  21, 6,  22, 7,  23,
      8, 24, 9, 25, 10, 26, 11, 27, 12, 28, 13, 29, 14, 30, 15, 31};
  const __m512i interleave = _mm512_load_si512(kInterleave);
  auto slice_of = [&](int j, int64_t slice) {
    if (j < lo || j > hi) return _mm256_setzero_si256();
    return _mm256_loadu_si256(reinterpret_cast<const __m256i*>(
        tile.values.data + j * tile.values.row_stride_bytes + slice * kDimsPerSlice * 2));
  };
  for (int64_t slice = 0; slice < tile.head_dim / kDimsPerSlice; ++slice) {
    for (int k = 0; k < kAttentionTileKeys / 2; ++k) {
      const __m512i pair = _mm512_inserti64x4(_mm512_castsi256_si512(slice_of(2 * k, slice)),
                                              slice_of(2 * k + 1, slice), 1);
      _mm512_storeu_si512(v_tiles + (slice * 8 + k) * 16,
                          _mm512_permutexvar_epi16(interleave, pair));
    }
  }
}

// The query rows as bf16, [rows padded to 16][head_dim]: the caller's, or rounded here.
const uint16_t* QueriesAsBf16(const AttentionTile& tile) {
  if (tile.q_bf16 != nullptr) return tile.q_bf16;
  thread_local std::vector<uint16_t> q;
  const int64_t padded_rows = (tile.num_rows + kGroupRows - 1) / kGroupRows * kGroupRows;
  if (static_cast<int64_t>(q.size()) < padded_rows * tile.head_dim) {
    q.resize(padded_rows * tile.head_dim);
  }
  QueriesToBf16(tile.q, tile.num_rows * tile.head_dim, q.data());
  return q.data();
}

// The online-softmax step of rows [r0, r0 + 16) side by side, lanes = rows (s transposed): each
// row's max over the keys it sees, p_j = e^(s_j - m') there and 0 elsewhere, Σ p_j in key order,
// its state moved on; p_bf16 gets the rows of p, rescale each row's factor for acc. Rows past
// num_rows or seeing no key of the tile keep their state (factor 1, p = 0).
void SoftmaxColumns(const AttentionTile& tile, const AttentionState& state, int64_t r0,
                    float (&s)[kGroupRows][kAttentionTileKeys],
                    uint16_t (&p_bf16)[kGroupRows][kAttentionTileKeys],
                    float (&rescale)[kGroupRows]) {
  const int rows = static_cast<int>(std::min<int64_t>(kGroupRows, tile.num_rows - r0));
  const auto live = static_cast<__mmask16>((1u << rows) - 1);
  const __m512i first = _mm512_maskz_loadu_epi32(live, tile.first_key + r0);
  const __m512i last = _mm512_maskz_loadu_epi32(live, tile.last_key + r0);
  __m512 logits[kAttentionTileKeys];  // [key] lanes = rows
  for (int i = 0; i < kGroupRows; ++i) logits[i] = _mm512_load_ps(s[i]);
  Transpose16x16(logits);
  const __m512 minus_infinity = _mm512_set1_ps(-__builtin_inff());
  __mmask16 seen[kAttentionTileKeys];  // rows that see key j
  __m512 tile_max = minus_infinity;
  for (int j = 0; j < kAttentionTileKeys; ++j) {
    const __m512i key = _mm512_set1_epi32(j);
    seen[j] =
        _mm512_mask_cmple_epi32_mask(_mm512_mask_cmple_epi32_mask(live, first, key), key, last);
    logits[j] = _mm512_mul_ps(logits[j], _mm512_set1_ps(tile.scale));
    tile_max = _mm512_mask_max_ps(tile_max, seen[j], tile_max, logits[j]);
  }
  const __m512 old_max = _mm512_mask_loadu_ps(minus_infinity, live, state.row_max + r0);
  const __m512 new_max = _mm512_max_ps(old_max, tile_max);
  __m512 tile_sum = _mm512_setzero_ps();
  for (int j = 0; j < kAttentionTileKeys; ++j) {
    logits[j] = _mm512_maskz_mov_ps(seen[j], Exp(_mm512_sub_ps(logits[j], new_max)));
    tile_sum = _mm512_add_ps(tile_sum, logits[j]);
  }
  // e^(old - new): 0 on a row's first keys (old = -inf), exactly 1 while the max stays.
  const __m512 factor =
      _mm512_mask_blend_ps(_mm512_cmp_ps_mask(old_max, new_max, _CMP_EQ_OQ),
                           Exp(_mm512_sub_ps(old_max, new_max)), _mm512_set1_ps(1.0f));
  _mm512_storeu_ps(rescale, factor);
  _mm512_mask_storeu_ps(state.row_max + r0, live, new_max);
  const __m512 old_sum = _mm512_maskz_loadu_ps(live, state.row_sum + r0);
  _mm512_mask_storeu_ps(state.row_sum + r0, live, _mm512_fmadd_ps(old_sum, factor, tile_sum));
  Transpose16x16(logits);  // now p by rows
  for (int i = 0; i < kGroupRows; ++i) {
    _mm256_store_si256(reinterpret_cast<__m256i*>(p_bf16[i]),
                       (__m256i)_mm512_cvtneps_pbh(logits[i]));
  }
}

// acc of rows [r0, r0 + 16) = acc · rescale + P · V: the rows whose max moved scale their acc
// first, then the tiles add P · V to it (through a padded copy for a last group of fewer rows).
void AddValues(const AttentionTile& tile, const AttentionState& state, int64_t r0,
               const uint16_t (&p_bf16)[kGroupRows][kAttentionTileKeys],
               const float (&rescale)[kGroupRows], const uint32_t* v_tiles) {
  const int64_t head_dim = tile.head_dim;
  const int rows = static_cast<int>(std::min<int64_t>(kGroupRows, tile.num_rows - r0));
  float* acc = state.acc + r0 * head_dim;
  for (int i = 0; i < rows; ++i) {
    if (rescale[i] == 1.0f) continue;
    const __m512 factor = _mm512_set1_ps(rescale[i]);
    for (int64_t d = 0; d < head_dim; d += kDimsPerSlice) {
      float* dims = acc + i * head_dim + d;
      _mm512_storeu_ps(dims, _mm512_mul_ps(_mm512_loadu_ps(dims), factor));
    }
  }
  alignas(64) float padded[kGroupRows * kMaxAmxHeadDim];
  if (rows < kGroupRows) {
    std::copy_n(acc, rows * head_dim, padded);
    acc = padded;
  }
  const int64_t acc_row_bytes = head_dim * 4;
  _tile_loadd(3, p_bf16, 32);
  const int64_t num_slices = head_dim / kDimsPerSlice;
  for (int64_t s0 = 0; s0 < num_slices; s0 += kSlicesPerPass) {
    const int64_t slices = std::min<int64_t>(kSlicesPerPass, num_slices - s0);
    const uint32_t* v_pass = v_tiles + s0 * 8 * 16;
    float* acc_pass = acc + s0 * kDimsPerSlice;
    _tile_loadd(0, acc_pass, acc_row_bytes);
    _tile_loadd(4, v_pass, 64);
    _tile_dpbf16ps(0, 3, 4);
    _tile_stored(0, acc_pass, acc_row_bytes);
    if (slices > 1) {
      _tile_loadd(5, acc_pass + kDimsPerSlice, acc_row_bytes);
      _tile_loadd(4, v_pass + 8 * 16, 64);
      _tile_dpbf16ps(5, 3, 4);
      _tile_stored(5, acc_pass + kDimsPerSlice, acc_row_bytes);
    }
    if (slices > 2) {
      _tile_loadd(6, acc_pass + 2 * kDimsPerSlice, acc_row_bytes);
      _tile_loadd(4, v_pass + 2 * 8 * 16, 64);
      _tile_dpbf16ps(6, 3, 4);
      _tile_stored(6, acc_pass + 2 * kDimsPerSlice, acc_row_bytes);
    }
    if (slices > 3) {
      _tile_loadd(7, acc_pass + 3 * kDimsPerSlice, acc_row_bytes);
      _tile_loadd(4, v_pass + 3 * 8 * 16, 64);
      _tile_dpbf16ps(7, 3, 4);
      _tile_stored(7, acc_pass + 3 * kDimsPerSlice, acc_row_bytes);
    }
  }
  if (acc == padded) std::copy_n(padded, rows * head_dim, state.acc + r0 * head_dim);
}

// Query rows [r0, r0 + 16) against the packed keys and values.
void AttendGroup(const AttentionTile& tile, const AttentionState& state, const uint16_t* q,
                 int64_t r0, const uint32_t* k_tiles, const uint32_t* v_tiles) {
  const int64_t head_dim = tile.head_dim;
  _tile_zero(0);
  for (int64_t part = 0; part < head_dim / kDimsPerPart; ++part) {
    _tile_loadd(1, q + r0 * head_dim + part * kDimsPerPart, head_dim * 2);
    _tile_loadd(2, k_tiles + part * 16 * 16, 64);
    _tile_dpbf16ps(0, 1, 2);
  }
  alignas(64) float s[kGroupRows][kAttentionTileKeys];
  _tile_stored(0, s, 64);
  alignas(64) uint16_t p_bf16[kGroupRows][kAttentionTileKeys] = {};
  float rescale[kGroupRows];
  if (tile.logit_softcap > 0.0f) {  // tanh per logit: row by row
    for (int i = 0; i < kGroupRows; ++i) {
      rescale[i] = 1.0f;
      if (r0 + i >= tile.num_rows || tile.first_key[r0 + i] > tile.last_key[r0 + i]) continue;
      float p[kAttentionTileKeys];
      rescale[i] = SoftmaxStep(tile, state, r0 + i, s[i], p);
      _mm256_store_si256(reinterpret_cast<__m256i*>(p_bf16[i]),
                         (__m256i)_mm512_cvtneps_pbh(_mm512_loadu_ps(p)));
    }
  } else {
    SoftmaxColumns(tile, state, r0, s, p_bf16, rescale);
  }
  AddValues(tile, state, r0, p_bf16, rescale, v_tiles);
}

}  // namespace

bool UsesAmxAttention(const AttentionTile& tile) {
  return tile.keys.dtype == tile.values.dtype &&
         AttentionTakesBf16Queries(tile.keys.dtype, tile.head_dim);
}

bool AttentionTakesBf16Queries(KvCacheDtype dtype, int64_t head_dim) {
  return AmxBf16Usable() && dtype == KvCacheDtype::kBFloat16 && head_dim % kDimsPerPart == 0 &&
         head_dim <= kMaxAmxHeadDim;
}

void QueriesToBf16(const float* q, int64_t n, uint16_t* out) {
  for (int64_t i = 0; i < n; i += kDimsPerPart) {
    const __m512bh pair = _mm512_cvtne2ps_pbh(_mm512_loadu_ps(q + i + 16), _mm512_loadu_ps(q + i));
    _mm512_storeu_si512(out + i, (__m512i)pair);
  }
}

void AttendTileAmx(const AttentionTile& tile, const AttentionState& state, float* scratch) {
  int lo, hi;
  TileKeyBounds(tile, lo, hi);
  if (hi < lo) return;
  // scratch holds 32 head_dim floats; K's and V's tiles take 8 head_dim pairs of bf16 each.
  auto* k_tiles = reinterpret_cast<uint32_t*>(scratch);
  uint32_t* v_tiles = k_tiles + kAttentionTileKeys * tile.head_dim / 2;
  PackKeys(tile, lo, hi, k_tiles);
  PackValues(tile, lo, hi, v_tiles);
  const uint16_t* q = QueriesAsBf16(tile);
  ConfigureAttentionTiles();
  for (int64_t r0 = 0; r0 < tile.num_rows; r0 += kGroupRows) {
    bool any_keys = false;
    for (int64_t r = r0; r < std::min<int64_t>(r0 + kGroupRows, tile.num_rows); ++r) {
      any_keys = any_keys || tile.first_key[r] <= tile.last_key[r];
    }
    if (any_keys) AttendGroup(tile, state, q, r0, k_tiles, v_tiles);
  }
  _tile_release();
}

}  // namespace vllm::kernels
