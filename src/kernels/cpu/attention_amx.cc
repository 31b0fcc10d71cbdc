// AttendSpan on AMX tiles (UsesAmxAttention: bf16 keys and values, head_dim a multiple of 32).
// Everything runs transposed, so that query rows stay in the lanes and nothing is transposed per
// group: a span's slots make the 64 keys of one online-softmax step (slot i: keys 16 i, + 16).
// Per group of 16 query rows:
//   S^T [16 keys, 16 rows] per slot = K (bf16 rows, read from the cache where the slot holds 16
//   keys) · Q^T (bf16, QueriesToBf16's layout), summed in f32 by TDPBF16PS over head_dim
//   each row's online-softmax step over the span's keys in f32, a lane per row: p, rescale
//   acc^T = acc^T · rescale (where some row's max moved), then acc^T += V^T (bf16) · P^T (p rounded
//   to bf16) by TDPBF16PS over 32 keys (two slots) at a time
// Keys no row sees enter V^T and P^T as zeros (and their logits are masked), so the other rows'
// keys add exact zeros to a row's sums; a key's place depends only on its slot; rows are
// independent in the tiles. So a row's result depends only on its own query, range and keys: the
// same alone (decode, 16 rows padded) as in any group and batch.
#include <immintrin.h>

#include <algorithm>
#include <cstdint>
#include <type_traits>
#include <utility>
#include <vector>

#include "kernels/attention_internal.h"
#include "kernels/cpu/amx_tiles.h"
#include "kernels/cpu/exp_avx512.h"

namespace vllm::kernels {
namespace {
#include "kernels/cpu/transpose_avx512.h"

constexpr int kGroupRows = 16;     // query rows per group: the columns of S^T, P^T and acc^T
constexpr int kDimsPerPart = 32;   // dims of one Q^T tile (16 dim pairs) and of a K tile's rows
constexpr int kDimsPerSlice = 16;  // dims of one acc^T tile (its rows)
constexpr int kSlicesPerPass = 4;  // acc^T tiles 0..3
constexpr int kSpanColumns = kAttentionSpanTiles * kAttentionTileKeys;  // 64 keys per span
constexpr int kKeysPerHalf = 32;  // keys of one P^T tile (16 key pairs) and of a V^T tile's rows
constexpr int kSlotsPerHalf = kKeysPerHalf / kAttentionTileKeys;
constexpr int kHalves = kSpanColumns / kKeysPerHalf;

// TILELOADD, TILESTORED, TDPBF16PS and TILEZERO on tile numbers known at compile time (GCC's
// intrinsics take literal numbers only), ordered against the memory they read and write.
template <int kTile>
void LoadTile(const void* base, int64_t row_bytes) {
  __asm__ volatile("tileloadd (%0,%1,1), %%tmm%c2"
                   :
                   : "r"(base), "r"(row_bytes), "i"(kTile)
                   : "memory");
}
template <int kTile>
void StoreTile(void* base, int64_t row_bytes) {
  __asm__ volatile("tilestored %%tmm%c2, (%0,%1,1)"
                   :
                   : "r"(base), "r"(row_bytes), "i"(kTile)
                   : "memory");
}
template <int kC, int kA, int kB>
void DotTiles() {
  __asm__ volatile("tdpbf16ps %%tmm%c2, %%tmm%c1, %%tmm%c0" : : "i"(kC), "i"(kA), "i"(kB));
}
template <int kTile>
void ZeroTile() {
  __asm__ volatile("tilezero %%tmm%c0" : : "i"(kTile));
}

// f(std::integral_constant<int, i>) for i in [0, n).
template <int n, typename F>
void ForEachTileNumber(F f) {
  [&]<int... i>(std::integer_sequence<int, i...>) { (f(std::integral_constant<int, i>()), ...); }
  (std::make_integer_sequence<int, n>());
}

// Every tile is 16 rows of 64 bytes. S phase:
//   0..3  S^T of slots 0..3           [16 keys, 16 rows] f32
//   4     Q^T part                    [16 dim pairs, 16 rows x 2] bf16
//   5, 6  K part of a slot            [16 keys, 32 dims] bf16
// PV phase:
//   0..3  acc^T slices                [16 dims, 16 rows] f32
//   4     P^T half                    [16 key pairs, 16 rows x 2] bf16
//   5, 6  V^T slice of a half         [16 dims, 32 keys] bf16
// K and V tiles alternate between 5 and 6 so that a load need not wait for the previous product.
constexpr int kQOrP = 4;
template <int i>
constexpr int kKOrV = 5 + i % 2;

// Element 2n of the result from element n of the first 16, 2n + 1 from element n of the second.
alignas(64) constexpr uint16_t kInterleave[32] = {0,  16, 1,  17, 2,  18, 3,  19, 4,  20, 5,
                                                  21, 6,  22, 7,  23, 8,  24, 9,  25, 10, 26,
                                                  11, 27, 12, 28, 13, 29, 14, 30, 15, 31};

// The slots some row of the span sees, [lo, hi] (hi < lo: none), and the keys of each slot that
// some row sees, [first, last] (first > last: none).
struct SeenSlots {
  bool Sees(int slot) const { return slot >= lo && slot <= hi; }
  int lo = kAttentionSpanTiles, hi = -1;
  int first[kAttentionSpanTiles], last[kAttentionSpanTiles];  // keys within the slot
};

SeenSlots FindSeenSlots(const AttentionSpan& span) {
  SeenSlots seen;
  for (int slot = 0; slot < kAttentionSpanTiles; ++slot) {
    const __m512i offset = _mm512_set1_epi32(span.key_offset[slot]);
    const __m512i last_key = _mm512_set1_epi32(span.tile_keys[slot] - 1);
    __m512i lowest = _mm512_set1_epi32(kAttentionTileKeys), highest = _mm512_set1_epi32(-1);
    for (int64_t r0 = 0; r0 < span.num_rows; r0 += 16) {
      const auto rows = static_cast<__mmask16>(
          span.num_rows - r0 >= 16 ? 0xffff : (1u << (span.num_rows - r0)) - 1);
      const __m512i first = _mm512_max_epi32(
          _mm512_sub_epi32(_mm512_maskz_loadu_epi32(rows, span.first_key + r0), offset),
          _mm512_setzero_si512());
      const __m512i last = _mm512_min_epi32(
          _mm512_sub_epi32(_mm512_maskz_loadu_epi32(rows, span.last_key + r0), offset), last_key);
      const __mmask16 sees = _mm512_mask_cmple_epi32_mask(rows, first, last);
      lowest = _mm512_mask_min_epi32(lowest, sees, lowest, first);
      highest = _mm512_mask_max_epi32(highest, sees, highest, last);
    }
    seen.first[slot] = _mm512_reduce_min_epi32(lowest);
    seen.last[slot] = _mm512_reduce_max_epi32(highest);
    if (seen.first[slot] <= seen.last[slot]) {
      seen.lo = std::min(seen.lo, slot);
      seen.hi = slot;
    }
  }
  return seen;
}

// Where each seen slot's K tile rows are: the cache rows themselves where the slot holds
// kAttentionTileKeys keys, else a copy in `copies` ([slot][16 keys][head_dim] bf16) with the keys
// no row sees as zeros.
struct KeyRows {
  const uint8_t* data[kAttentionSpanTiles];
  int64_t row_bytes[kAttentionSpanTiles];
};

KeyRows LocateKeys(const AttentionSpan& span, const SeenSlots& seen, uint16_t* copies) {
  KeyRows rows;
  const int64_t row_bytes = span.head_dim * 2;
  for (int slot = seen.lo; slot <= seen.hi; ++slot) {
    const KvRows& keys = span.keys[slot];
    if (span.tile_keys[slot] == kAttentionTileKeys) {
      rows.data[slot] = keys.data;
      rows.row_bytes[slot] = keys.row_stride_bytes;
      continue;
    }
    auto* copy = reinterpret_cast<uint8_t*>(copies + slot * kAttentionTileKeys * span.head_dim);
    for (int j = 0; j < kAttentionTileKeys; ++j) {
      uint8_t* row = copy + j * row_bytes;
      if (j >= seen.first[slot] && j <= seen.last[slot]) {
        std::copy_n(keys.data + j * keys.row_stride_bytes, row_bytes, row);
      } else {
        std::fill_n(row, row_bytes, uint8_t{0});
      }
    }
    rows.data[slot] = copy;
    rows.row_bytes[slot] = row_bytes;
  }
  return rows;
}

// v_tiles: [half][head_dim / 16 slices][16 dims][32 keys] bf16: half h's slice s has in row d the
// values of dim 16 s + d for the 32 keys of slots 2h, 2h + 1, as an A tile; keys no row sees are 0.
void PackValues(const AttentionSpan& span, const SeenSlots& seen, uint32_t* v_tiles) {
  const __m512i interleave = _mm512_load_si512(kInterleave);
  const int64_t slices = span.head_dim / kDimsPerSlice;
  auto dims_of = [&](int slot, int j, int64_t slice) {
    if (j < seen.first[slot] || j > seen.last[slot]) return _mm256_setzero_si256();
    const KvRows& values = span.values[slot];
    return _mm256_loadu_si256(reinterpret_cast<const __m256i*>(
        values.data + j * values.row_stride_bytes + slice * kDimsPerSlice * 2));
  };
  for (int half = seen.lo / kSlotsPerHalf; half <= seen.hi / kSlotsPerHalf; ++half) {
    for (int64_t slice = 0; slice < slices; ++slice) {
      // block[k]: keys 2k and 2k + 1 of the half side by side for each of the slice's 16 dims.
      __m512 block[16];
      for (int k = 0; k < 16; ++k) {
        const int slot = half * kSlotsPerHalf + k / 8;
        const int j = 2 * (k % 8);
        const __m512i pair = _mm512_inserti64x4(_mm512_castsi256_si512(dims_of(slot, j, slice)),
                                                dims_of(slot, j + 1, slice), 1);
        block[k] = _mm512_castsi512_ps(_mm512_permutexvar_epi16(interleave, pair));
      }
      Transpose16x16(block);  // block[d]: the 32 keys of dim d
      uint32_t* tile = v_tiles + (half * slices + slice) * 16 * 16;
      for (int d = 0; d < 16; ++d) _mm512_storeu_ps(tile + d * 16, block[d]);
    }
  }
}

// The query rows in QueriesToBf16's layout: the caller's, or laid out here.
const uint16_t* QueriesAsBf16(const AttentionSpan& span) {
  if (span.q_bf16 != nullptr) return span.q_bf16;
  thread_local std::vector<uint16_t> q;
  const int64_t padded_rows = (span.num_rows + kGroupRows - 1) / kGroupRows * kGroupRows;
  if (static_cast<int64_t>(q.size()) < padded_rows * span.head_dim) {
    q.resize(padded_rows * span.head_dim);
  }
  QueriesToBf16(span.q, span.num_rows, span.head_dim, q.data());
  return q.data();
}

// C·tanh(x / C) per lane, tanh(y) = sign(y) (1 - e^(-2|y|)) / (1 + e^(-2|y|)).
__m512 SoftCap(__m512 x, float cap) {
  const __m512 y = _mm512_div_ps(x, _mm512_set1_ps(cap));
  const __m512 abs_y = _mm512_abs_ps(y);
  const __m512 e = Exp(_mm512_mul_ps(abs_y, _mm512_set1_ps(-2.0f)));
  const __m512 one = _mm512_set1_ps(1.0f);
  const __m512 tanh_abs = _mm512_div_ps(_mm512_sub_ps(one, e), _mm512_add_ps(one, e));
  const __mmask16 negative = _mm512_cmp_ps_mask(y, _mm512_setzero_ps(), _CMP_LT_OQ);
  const __m512 tanh_y = _mm512_mask_sub_ps(tanh_abs, negative, _mm512_setzero_ps(), tanh_abs);
  return _mm512_mul_ps(tanh_y, _mm512_set1_ps(cap));
}

// The softmax's weights, 2^x per lane (x in base 2), 0 where `keep` is clear: x = floor(x) + f
// with f in [0, 1] from one vreduceps, 2^f = 1 + f q(f) (exp_polynomial.h: 3e-6 relative; p is
// rounded to bf16 for P · V anyway), times 2^floor(x) by vscalefps, which gives 0 below the float
// range and inf above, so x needs no clamp.
__m512 MaskzExp2(__mmask16 keep, __m512 x) {
  const __m512 f = _mm512_reduce_ps(x, _MM_FROUND_TO_NEG_INF | _MM_FROUND_NO_EXC);
  __m512 q = _mm512_set1_ps(kExp2Coefficients[0]);
#pragma GCC unroll 4
  for (int i = 1; i < kNumExp2Coefficients; ++i) {
    q = _mm512_fmadd_ps(q, f, _mm512_set1_ps(kExp2Coefficients[i]));
  }
  return _mm512_maskz_scalef_ps(keep, _mm512_fmadd_ps(q, f, _mm512_set1_ps(1.0f)), x);
}

// The rows of [r0, r0 + 16) that see each key of the seen slots (sees[c] for key c): `live` for
// the keys every live row sees (no comparison), 0 past a slot's keys. Returns true, leaving
// `sees` unset, where every live row sees every key of the seen slots (all of them full), as
// off the diagonal: then each key's rows are `live`.
bool RowsThatSee(const AttentionSpan& span, const SeenSlots& seen, int64_t r0, __mmask16 live,
                 __mmask16 (&sees)[kSpanColumns]) {
  const __m512i first = _mm512_maskz_loadu_epi32(live, span.first_key + r0);
  const __m512i last = _mm512_maskz_loadu_epi32(live, span.last_key + r0);
  // Positions every live row sees: [latest first, earliest last].
  const int32_t common_first = _mm512_mask_reduce_max_epi32(live, first);
  const int32_t common_last = _mm512_mask_reduce_min_epi32(live, last);
  bool full = true;
  for (int slot = seen.lo; slot <= seen.hi; ++slot) {
    full = full && span.tile_keys[slot] == kAttentionTileKeys;
  }
  if (full && common_first <= span.key_offset[seen.lo] &&
      common_last >= span.key_offset[seen.hi] + kAttentionTileKeys - 1) {
    return true;
  }
  for (int slot = seen.lo; slot <= seen.hi; ++slot) {
    for (int j = 0; j < kAttentionTileKeys; ++j) {
      const int c = slot * kAttentionTileKeys + j;
      const int32_t position = span.key_offset[slot] + j;
      if (j >= span.tile_keys[slot]) {
        sees[c] = 0;
      } else if (position >= common_first && position <= common_last) {
        sees[c] = live;
      } else {
        const __m512i at = _mm512_set1_epi32(position);
        sees[c] =
            _mm512_mask_cmple_epi32_mask(_mm512_mask_cmple_epi32_mask(live, first, at), at, last);
      }
    }
  }
  return false;
}

// The online-softmax step of rows [r0, r0 + 16), a lane per row, over the seen slots' products
// st ([key][row] q·k, as S^T's tiles stored them): each row's max m' over the logits s_j of the
// keys it sees, p_j = e^(s_j - m') there and 0 elsewhere, Σ p_j in key order, its state moved on;
// p_tiles gets P^T as B tiles ([half][16 key pairs][16 rows] pairs of bf16) for the seen halves.
// The exponent is taken in base 2, (s_j - m') log2 e. Without soft-capping s_j = q·k · scale
// enters it as one fused q·k · (scale log2 e) - m' log2 e (the max of q·k times scale is the max
// of the logits for scale > 0); with it, the capped logits are stored first. Returns each row's
// factor for acc. Rows past num_rows or seeing no key keep their state (factor 1, p = 0).
__m512 SoftmaxStep(const AttentionSpan& span, const SeenSlots& seen, const AttentionState& state,
                   int64_t r0, float (&st)[kSpanColumns][kGroupRows], uint32_t* p_tiles) {
  const int rows = static_cast<int>(std::min<int64_t>(kGroupRows, span.num_rows - r0));
  const auto live = static_cast<__mmask16>((1u << rows) - 1);
  __mmask16 sees[kSpanColumns];
  const bool all_see_all = RowsThatSee(span, seen, r0, live, sees);
  // Each key's rows: `live` as a constant where all see all, so that no loop reads a mask per key.
  const auto rows_of = [&](auto constant_live) {
    return [&, constant_live](int c) { return constant_live ? live : sees[c]; };
  };
  const bool fused_scale = span.logit_softcap == 0.0f && span.scale > 0.0f;
  const __m512 scale = _mm512_set1_ps(span.scale);
  const __m512 minus_infinity = _mm512_set1_ps(-__builtin_inff());
  const int begin = seen.lo * kAttentionTileKeys, end = (seen.hi + 1) * kAttentionTileKeys;
  // Four running maxima, of keys c mod 4, so that the loop is not one chain of vmaxps latencies
  // (a max is exact: their order does not change it).
  constexpr int kMaxima = 4;
  __m512 maxima[kMaxima] = {minus_infinity, minus_infinity, minus_infinity, minus_infinity};
  auto take_maxima = [&](auto rows_that_see) {
    for (int c0 = begin; c0 < end; c0 += kMaxima) {
#pragma GCC unroll 4
      for (int i = 0; i < kMaxima; ++i) {
        __m512 x = _mm512_load_ps(st[c0 + i]);
        if (!fused_scale) {
          x = _mm512_mul_ps(x, scale);
          if (span.logit_softcap > 0.0f) x = SoftCap(x, span.logit_softcap);
          _mm512_store_ps(st[c0 + i], x);
        }
        maxima[i] = _mm512_mask_max_ps(maxima[i], rows_that_see(c0 + i), maxima[i], x);
      }
    }
  };
  all_see_all ? take_maxima(rows_of(std::true_type())) : take_maxima(rows_of(std::false_type()));
  __m512 span_max =
      _mm512_max_ps(_mm512_max_ps(maxima[0], maxima[1]), _mm512_max_ps(maxima[2], maxima[3]));
  if (fused_scale) span_max = _mm512_mul_ps(span_max, scale);
  const __m512 old_max = _mm512_mask_loadu_ps(minus_infinity, live, state.row_max + r0);
  const __m512 new_max = _mm512_max_ps(old_max, span_max);
  const __m512 log2e = _mm512_set1_ps(kLog2e);
  const __m512 exp2_scale = fused_scale ? _mm512_set1_ps(span.scale * kLog2e) : log2e;
  const __m512 exp2_max = _mm512_mul_ps(new_max, log2e);
  __m512 span_sum = _mm512_setzero_ps();
  auto take_weights = [&](auto rows_that_see) {
    for (int c = begin; c < end; ++c) {
      const __m512 p =
          MaskzExp2(rows_that_see(c), _mm512_fmsub_ps(_mm512_load_ps(st[c]), exp2_scale, exp2_max));
      span_sum = _mm512_add_ps(span_sum, p);
      _mm512_store_ps(st[c], p);
    }
  };
  all_see_all ? take_weights(rows_of(std::true_type())) : take_weights(rows_of(std::false_type()));
  // e^(old - new): 0 on a row's first keys (old = -inf), exactly 1 while the max stays.
  const __m512 factor =
      _mm512_mask_blend_ps(_mm512_cmp_ps_mask(old_max, new_max, _CMP_EQ_OQ),
                           Exp(_mm512_sub_ps(old_max, new_max)), _mm512_set1_ps(1.0f));
  _mm512_mask_storeu_ps(state.row_max + r0, live, new_max);
  const __m512 old_sum = _mm512_maskz_loadu_ps(live, state.row_sum + r0);
  _mm512_mask_storeu_ps(state.row_sum + r0, live, _mm512_fmadd_ps(old_sum, factor, span_sum));
  const __m512i interleave = _mm512_load_si512(kInterleave);
  for (int c = begin / kKeysPerHalf * kKeysPerHalf;
       c < (end + kKeysPerHalf - 1) / kKeysPerHalf * kKeysPerHalf; c += 2) {
    __m512i pair = _mm512_setzero_si512();
    if (c >= begin && c < end) {
      pair = _mm512_permutexvar_epi16(
          interleave,
          (__m512i)_mm512_cvtne2ps_pbh(_mm512_load_ps(st[c + 1]), _mm512_load_ps(st[c])));
    }
    _mm512_store_si512(p_tiles + c / 2 * 16, pair);
  }
  return factor;
}

// acc^T of rows [r0, r0 + 16) = acc^T · rescale + V^T · P^T: the dims are scaled first where some
// row's max moved, then the tiles add V^T · P^T to them, half by half.
void AddValues(const AttentionSpan& span, const SeenSlots& seen, const AttentionState& state,
               int64_t r0, __m512 rescale, const uint32_t* p_tiles, const uint32_t* v_tiles) {
  const int64_t head_dim = span.head_dim;
  float* acc = state.acc + r0 * head_dim;  // [head_dim][16 rows]
  if (_mm512_cmp_ps_mask(rescale, _mm512_set1_ps(1.0f), _CMP_NEQ_UQ) != 0) {
    for (int64_t d = 0; d < head_dim; ++d) {
      _mm512_storeu_ps(acc + d * 16, _mm512_mul_ps(_mm512_loadu_ps(acc + d * 16), rescale));
    }
  }
  const int64_t num_slices = head_dim / kDimsPerSlice;
  for (int64_t s0 = 0; s0 < num_slices; s0 += kSlicesPerPass) {
    const int64_t slices = std::min<int64_t>(kSlicesPerPass, num_slices - s0);
    float* acc_pass = acc + s0 * kDimsPerSlice * 16;
    ForEachTileNumber<kSlicesPerPass>([&](auto i) {
      if (i < slices) LoadTile<i>(acc_pass + i * kDimsPerSlice * 16, 64);
    });
    for (int half = seen.lo / kSlotsPerHalf; half <= seen.hi / kSlotsPerHalf; ++half) {
      LoadTile<kQOrP>(p_tiles + half * 16 * 16, 64);
      const uint32_t* v_pass = v_tiles + (half * num_slices + s0) * 16 * 16;
      ForEachTileNumber<kSlicesPerPass>([&](auto i) {
        if (i >= slices) return;
        LoadTile<kKOrV<i>>(v_pass + i * 16 * 16, 64);
        DotTiles<i, kKOrV<i>, kQOrP>();
      });
    }
    ForEachTileNumber<kSlicesPerPass>([&](auto i) {
      if (i < slices) StoreTile<i>(acc_pass + i * kDimsPerSlice * 16, 64);
    });
  }
}

// S^T of query rows [r0, r0 + 16) in tiles 0..3 (the seen slots'), summed over head_dim.
void ScoreGroup(const AttentionSpan& span, const SeenSlots& seen, const uint16_t* q, int64_t r0,
                const KeyRows& keys) {
  const int64_t head_dim = span.head_dim;
  const int64_t parts = head_dim / kDimsPerPart;
  ForEachTileNumber<kAttentionSpanTiles>([&](auto slot) {
    if (seen.Sees(slot)) ZeroTile<slot>();
  });
  const uint16_t* q_group = q + r0 * head_dim;  // [parts][16 dim pairs][16 rows] pairs
  for (int64_t part = 0; part < parts; ++part) {
    LoadTile<kQOrP>(q_group + part * kDimsPerPart * kGroupRows, 64);
    ForEachTileNumber<kAttentionSpanTiles>([&](auto slot) {
      if (!seen.Sees(slot)) return;
      LoadTile<kKOrV<slot>>(keys.data[slot] + part * kDimsPerPart * 2, keys.row_bytes[slot]);
      DotTiles<slot, kKOrV<slot>, kQOrP>();
    });
  }
}

// Tiles 0..3 (the seen slots') into st ([key][row]).
void StoreScores(const SeenSlots& seen, float (&st)[kSpanColumns][kGroupRows]) {
  ForEachTileNumber<kAttentionSpanTiles>([&](auto slot) {
    if (seen.Sees(slot)) StoreTile<slot>(st[slot * kAttentionTileKeys], 64);
  });
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

void AttendSpanAmx(const AttentionSpan& span, const AttentionState& state, float* scratch) {
  const SeenSlots seen = FindSeenSlots(span);
  if (seen.hi < seen.lo) return;
  // scratch holds 64 head_dim floats: copies of short slots' keys take 4 x 16 x head_dim bf16,
  // V's tiles 2 halves x 32 keys x head_dim bf16.
  auto* key_copies = reinterpret_cast<uint16_t*>(scratch);
  auto* v_tiles = reinterpret_cast<uint32_t*>(key_copies + kSpanColumns * span.head_dim);
  const KeyRows keys = LocateKeys(span, seen, key_copies);
  PackValues(span, seen, v_tiles);
  const uint16_t* q = QueriesAsBf16(span);
  // The groups of 16 rows of which some row sees a key, from r0 on (num_rows: none).
  auto next_group = [&](int64_t r0) {
    for (; r0 < span.num_rows; r0 += kGroupRows) {
      for (int64_t r = r0; r < std::min<int64_t>(r0 + kGroupRows, span.num_rows); ++r) {
        if (span.first_key[r] <= span.last_key[r]) return r0;
      }
    }
    return span.num_rows;
  };
  ConfigureTiles({16, 16, 16, 16, 16, 16, 16, 16});
  // Software-pipelined: the next group's S^T products are issued before this group's softmax,
  // which does not wait for them, so that the tiles and the vector units work side by side.
  alignas(64) float st[2][kSpanColumns][kGroupRows];  // this group's S^T, the next one's
  alignas(64) uint32_t p_tiles[kHalves * 16 * 16];
  int64_t r0 = next_group(0);
  if (r0 < span.num_rows) {
    ScoreGroup(span, seen, q, r0, keys);
    StoreScores(seen, st[0]);
  }
  for (int current = 0; r0 < span.num_rows; current ^= 1) {
    const int64_t next = next_group(r0 + kGroupRows);
    if (next < span.num_rows) ScoreGroup(span, seen, q, next, keys);
    const __m512 rescale = SoftmaxStep(span, seen, state, r0, st[current], p_tiles);
    if (next < span.num_rows) StoreScores(seen, st[current ^ 1]);
    AddValues(span, seen, state, r0, rescale, p_tiles, v_tiles);
    r0 = next;
  }
  _tile_release();
}

}  // namespace vllm::kernels
