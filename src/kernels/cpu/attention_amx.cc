// AttendSpan on AMX tiles (UsesAmxAttention: bf16 keys and values, head_dim a multiple of 32).
// A span's slots become the 64 columns of one online-softmax step (slot i: columns 16 i, + 16).
// Per group of 16 query rows:
//   S [16 rows, 16 keys] per slot = Q (bf16) · K (bf16), summed in f32 by TDPBF16PS over head_dim
//   each row's online-softmax step over the span's columns in f32 (SoftmaxColumns: the 16 rows
//   side by side in the lanes): p, rescale
//   acc = acc · rescale (rows whose max moved), then acc += P (p rounded to bf16) · V (bf16) by
//   TDPBF16PS over 32 keys (two slots) at a time, on acc's own rows
// Keys no row sees enter K and V as zeros, so the other rows' keys add exact zeros to a row's
// sums; a key's column depends only on its slot; rows are independent in the tiles. So a row's
// result depends only on its own query, range and keys: the same alone (decode, 16 rows padded)
// as in any group and batch.
#include <immintrin.h>

#include <algorithm>
#include <cstdint>
#include <utility>
#include <vector>

#include "kernels/attention_internal.h"
#include "kernels/cpu/amx_tiles.h"
#include "kernels/cpu/exp_avx512.h"

namespace vllm::kernels {
namespace {
#include "kernels/cpu/transpose_avx512.h"

constexpr int kGroupRows = 16;     // query rows per A tile
constexpr int kDimsPerPart = 32;   // bf16 dims per 64-byte row of a Q tile and of K's B tile rows
constexpr int kDimsPerSlice = 16;  // f32 dims per 64-byte row of an acc tile
constexpr int kSlicesPerPass = 4;  // acc tiles 0..3
constexpr int kSpanColumns = kAttentionSpanTiles * kAttentionTileKeys;  // 64
constexpr int kKeysPerHalf = 32;  // keys of one P tile's row / one V tile (16 key pairs)
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

// Every tile is 16 rows of 64 bytes:
//   S phase:  0..3: S of slots 0..3 [16 rows, 16 keys f32]   4: Q part [16 rows, 32 bf16]
//             5, 6: K part of a slot [16 dim pairs, 16 keys x 2 bf16]
//   PV phase: 0..3: acc slices [16 rows, 16 dims f32]          4: P half [16 rows, 32 keys bf16]
//             5, 6: V slice of a half [16 key pairs, 16 dims x 2 bf16]
// K and V tiles alternate between 5 and 6 so that a load need not wait for the previous product.
constexpr int kQOrP = 4;
template <int i>
constexpr int kKOrV = 5 + i % 2;

// The slots some row of the span sees, [lo, hi] (hi < lo: none), and the keys of each it sees.
struct SeenSlots {
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

// k_tiles: [slot][head_dim / 32 parts][16 dim pairs][16 keys] pairs of bf16: part p's row k holds
// dims (32 p + 2k, + 1) of each of the slot's keys, as a B tile; keys no row sees are 0.
void PackKeys(const AttentionSpan& span, const SeenSlots& seen, uint32_t* k_tiles) {
  const int64_t parts = span.head_dim / kDimsPerPart;
  for (int slot = seen.lo; slot <= seen.hi; ++slot) {
    const KvRows& keys = span.keys[slot];
    for (int64_t part = 0; part < parts; ++part) {
      __m512 block[kAttentionTileKeys];
      for (int j = 0; j < kAttentionTileKeys; ++j) {
        block[j] = j >= seen.first[slot] && j <= seen.last[slot]
                       ? _mm512_loadu_ps(keys.data + j * keys.row_stride_bytes + part * 64)
                       : _mm512_setzero_ps();
      }
      Transpose16x16(block);
      uint32_t* tile = k_tiles + (slot * parts + part) * 16 * 16;
      for (int k = 0; k < 16; ++k) _mm512_storeu_ps(tile + k * 16, block[k]);
    }
  }
}

// v_tiles: [half][head_dim / 16 slices][16 key pairs][16 dims] pairs of bf16: half h's slice s
// has in row k keys 2k and 2k + 1 of slots 2h, 2h + 1 (8 pairs each) for dims [16 s, + 16) side
// by side, as a B tile; keys no row sees are 0.
void PackValues(const AttentionSpan& span, const SeenSlots& seen, uint32_t* v_tiles) {
  // Element 2n of the result from element n of the lower key, 2n + 1 from n of the upper.
  alignas(64) static constexpr uint16_t kInterleave[32] = {
      0, 16, 1, 17, 2,  18, 3,  19, 4,  20, 5,  21, 6,  22, 7,  23,
      8, 24, 9, 25, 10, 26, 11, 27, 12, 28, 13, 29, 14, 30, 15, 31};
  const __m512i interleave = _mm512_load_si512(kInterleave);
  const int64_t slices = span.head_dim / kDimsPerSlice;
  for (int slot = seen.lo / kSlotsPerHalf * kSlotsPerHalf;
       slot < (seen.hi / kSlotsPerHalf + 1) * kSlotsPerHalf; ++slot) {
    const KvRows& values = span.values[slot];
    const bool seen_slot = slot >= seen.lo && slot <= seen.hi;
    auto slice_of = [&](int j, int64_t slice) {
      if (!seen_slot || j < seen.first[slot] || j > seen.last[slot]) {
        return _mm256_setzero_si256();
      }
      return _mm256_loadu_si256(reinterpret_cast<const __m256i*>(
          values.data + j * values.row_stride_bytes + slice * kDimsPerSlice * 2));
    };
    const int half = slot / kSlotsPerHalf;
    const int first_pair = slot % kSlotsPerHalf * kAttentionTileKeys / 2;
    for (int64_t slice = 0; slice < slices; ++slice) {
      uint32_t* tile = v_tiles + (half * slices + slice) * 16 * 16;
      for (int k = 0; k < kAttentionTileKeys / 2; ++k) {
        const __m512i pair = _mm512_inserti64x4(_mm512_castsi256_si512(slice_of(2 * k, slice)),
                                                slice_of(2 * k + 1, slice), 1);
        _mm512_storeu_si512(tile + (first_pair + k) * 16,
                            _mm512_permutexvar_epi16(interleave, pair));
      }
    }
  }
}

// The query rows as bf16, [rows padded to 16][head_dim]: the caller's, or rounded here.
const uint16_t* QueriesAsBf16(const AttentionSpan& span) {
  if (span.q_bf16 != nullptr) return span.q_bf16;
  thread_local std::vector<uint16_t> q;
  const int64_t padded_rows = (span.num_rows + kGroupRows - 1) / kGroupRows * kGroupRows;
  if (static_cast<int64_t>(q.size()) < padded_rows * span.head_dim) {
    q.resize(padded_rows * span.head_dim);
  }
  QueriesToBf16(span.q, span.num_rows * span.head_dim, q.data());
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

// The online-softmax step of rows [r0, r0 + 16) over the seen slots' columns, the rows side by
// side in the lanes (s transposed): each row's max over the keys it sees, p_j = e^(s_j - m')
// there and 0 elsewhere, Σ p_j in column order, its state moved on; p_bf16 gets the rows of p in
// the seen slots' columns, rescale each row's factor for acc. Rows past num_rows or seeing no key
// keep their state (factor 1, p = 0).
void SoftmaxColumns(const AttentionSpan& span, const SeenSlots& seen, const AttentionState& state,
                    int64_t r0, const float (&s)[kGroupRows][kSpanColumns],
                    uint16_t (&p_bf16)[kGroupRows][kSpanColumns], float (&rescale)[kGroupRows]) {
  const int rows = static_cast<int>(std::min<int64_t>(kGroupRows, span.num_rows - r0));
  const auto live = static_cast<__mmask16>((1u << rows) - 1);
  const __m512i first = _mm512_maskz_loadu_epi32(live, span.first_key + r0);
  const __m512i last = _mm512_maskz_loadu_epi32(live, span.last_key + r0);
  alignas(64) float columns[kSpanColumns][kGroupRows];  // logits, then p: [column] lanes = rows
  __mmask16 sees[kSpanColumns];                         // rows that see column c's key
  const __m512 minus_infinity = _mm512_set1_ps(-__builtin_inff());
  __m512 span_max = minus_infinity;
  for (int slot = seen.lo; slot <= seen.hi; ++slot) {
    __m512 block[kAttentionTileKeys];
    for (int i = 0; i < kGroupRows; ++i) block[i] = _mm512_load_ps(s[i] + slot * 16);
    Transpose16x16(block);
    for (int j = 0; j < kAttentionTileKeys; ++j) {
      const int c = slot * kAttentionTileKeys + j;
      const __m512i position = _mm512_set1_epi32(span.key_offset[slot] + j);
      sees[c] = j < span.tile_keys[slot]
                    ? _mm512_mask_cmple_epi32_mask(
                          _mm512_mask_cmple_epi32_mask(live, first, position), position, last)
                    : __mmask16{0};
      __m512 logit = _mm512_mul_ps(block[j], _mm512_set1_ps(span.scale));
      if (span.logit_softcap > 0.0f) logit = SoftCap(logit, span.logit_softcap);
      span_max = _mm512_mask_max_ps(span_max, sees[c], span_max, logit);
      _mm512_store_ps(columns[c], logit);
    }
  }
  const __m512 old_max = _mm512_mask_loadu_ps(minus_infinity, live, state.row_max + r0);
  const __m512 new_max = _mm512_max_ps(old_max, span_max);
  __m512 span_sum = _mm512_setzero_ps();
  for (int c = seen.lo * kAttentionTileKeys; c < (seen.hi + 1) * kAttentionTileKeys; ++c) {
    const __m512 p =
        _mm512_maskz_mov_ps(sees[c], Exp(_mm512_sub_ps(_mm512_load_ps(columns[c]), new_max)));
    span_sum = _mm512_add_ps(span_sum, p);
    _mm512_store_ps(columns[c], p);
  }
  // e^(old - new): 0 on a row's first keys (old = -inf), exactly 1 while the max stays.
  const __m512 factor =
      _mm512_mask_blend_ps(_mm512_cmp_ps_mask(old_max, new_max, _CMP_EQ_OQ),
                           Exp(_mm512_sub_ps(old_max, new_max)), _mm512_set1_ps(1.0f));
  _mm512_storeu_ps(rescale, factor);
  _mm512_mask_storeu_ps(state.row_max + r0, live, new_max);
  const __m512 old_sum = _mm512_maskz_loadu_ps(live, state.row_sum + r0);
  _mm512_mask_storeu_ps(state.row_sum + r0, live, _mm512_fmadd_ps(old_sum, factor, span_sum));
  for (int slot = seen.lo; slot <= seen.hi; ++slot) {
    __m512 block[kAttentionTileKeys];
    for (int j = 0; j < kAttentionTileKeys; ++j) {
      block[j] = _mm512_load_ps(columns[slot * kAttentionTileKeys + j]);
    }
    Transpose16x16(block);  // now p by rows
    for (int i = 0; i < kGroupRows; ++i) {
      _mm256_store_si256(reinterpret_cast<__m256i*>(p_bf16[i] + slot * kAttentionTileKeys),
                         (__m256i)_mm512_cvtneps_pbh(block[i]));
    }
  }
}

// acc of rows [r0, r0 + 16) = acc · rescale + P · V: the rows whose max moved scale their acc
// first, then the tiles add P · V to it, half by half (through a padded copy for a last group
// of fewer rows).
void AddValues(const AttentionSpan& span, const SeenSlots& seen, const AttentionState& state,
               int64_t r0, const uint16_t (&p_bf16)[kGroupRows][kSpanColumns],
               const float (&rescale)[kGroupRows], const uint32_t* v_tiles) {
  const int64_t head_dim = span.head_dim;
  const int rows = static_cast<int>(std::min<int64_t>(kGroupRows, span.num_rows - r0));
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
  const int64_t num_slices = head_dim / kDimsPerSlice;
  for (int64_t s0 = 0; s0 < num_slices; s0 += kSlicesPerPass) {
    const int64_t slices = std::min<int64_t>(kSlicesPerPass, num_slices - s0);
    float* acc_pass = acc + s0 * kDimsPerSlice;
    ForEachTileNumber<kSlicesPerPass>([&](auto i) {
      if (i < slices) LoadTile<i>(acc_pass + i * kDimsPerSlice, acc_row_bytes);
    });
    for (int half = seen.lo / kSlotsPerHalf; half <= seen.hi / kSlotsPerHalf; ++half) {
      LoadTile<kQOrP>(p_bf16[0] + half * kKeysPerHalf, kSpanColumns * 2);
      const uint32_t* v_pass = v_tiles + (half * num_slices + s0) * 16 * 16;
      ForEachTileNumber<kSlicesPerPass>([&](auto i) {
        if (i >= slices) return;
        LoadTile<kKOrV<i>>(v_pass + i * 16 * 16, 64);
        DotTiles<i, kQOrP, kKOrV<i>>();
      });
    }
    ForEachTileNumber<kSlicesPerPass>([&](auto i) {
      if (i < slices) StoreTile<i>(acc_pass + i * kDimsPerSlice, acc_row_bytes);
    });
  }
  if (acc == padded) std::copy_n(padded, rows * head_dim, state.acc + r0 * head_dim);
}

// Query rows [r0, r0 + 16) against the packed keys and values; p_bf16 holds 0 outside the seen
// slots' columns.
void AttendGroup(const AttentionSpan& span, const SeenSlots& seen, const AttentionState& state,
                 const uint16_t* q, int64_t r0, const uint32_t* k_tiles, const uint32_t* v_tiles,
                 uint16_t (&p_bf16)[kGroupRows][kSpanColumns]) {
  const int64_t head_dim = span.head_dim;
  const int64_t parts = head_dim / kDimsPerPart;
  auto seen_slot = [&](int slot) { return slot >= seen.lo && slot <= seen.hi; };
  ForEachTileNumber<kAttentionSpanTiles>([&](auto slot) {
    if (seen_slot(slot)) ZeroTile<slot>();
  });
  for (int64_t part = 0; part < parts; ++part) {
    LoadTile<kQOrP>(q + r0 * head_dim + part * kDimsPerPart, head_dim * 2);
    ForEachTileNumber<kAttentionSpanTiles>([&](auto slot) {
      if (!seen_slot(slot)) return;
      LoadTile<kKOrV<slot>>(k_tiles + (slot * parts + part) * 16 * 16, 64);
      DotTiles<slot, kQOrP, kKOrV<slot>>();
    });
  }
  alignas(64) float s[kGroupRows][kSpanColumns];
  ForEachTileNumber<kAttentionSpanTiles>([&](auto slot) {
    if (seen_slot(slot)) StoreTile<slot>(s[0] + slot * kAttentionTileKeys, kSpanColumns * 4);
  });
  float rescale[kGroupRows];
  SoftmaxColumns(span, seen, state, r0, s, p_bf16, rescale);
  AddValues(span, seen, state, r0, p_bf16, rescale, v_tiles);
}

}  // namespace

void QueriesToBf16(const float* q, int64_t n, uint16_t* out) {
  for (int64_t i = 0; i < n; i += kDimsPerPart) {
    const __m512bh pair = _mm512_cvtne2ps_pbh(_mm512_loadu_ps(q + i + 16), _mm512_loadu_ps(q + i));
    _mm512_storeu_si512(out + i, (__m512i)pair);
  }
}

void AttendSpanAmx(const AttentionSpan& span, const AttentionState& state, float* scratch) {
  const SeenSlots seen = FindSeenSlots(span);
  if (seen.hi < seen.lo) return;
  // scratch holds 64 head_dim floats; K's tiles take 4 slots x 16 keys x head_dim bf16, V's
  // 2 halves x 32 keys x head_dim bf16.
  auto* k_tiles = reinterpret_cast<uint32_t*>(scratch);
  uint32_t* v_tiles = k_tiles + kSpanColumns * span.head_dim / 2;
  PackKeys(span, seen, k_tiles);
  PackValues(span, seen, v_tiles);
  const uint16_t* q = QueriesAsBf16(span);
  alignas(64) uint16_t p_bf16[kGroupRows][kSpanColumns] = {};
  ConfigureTiles({16, 16, 16, 16, 16, 16, 16, 16});
  for (int64_t r0 = 0; r0 < span.num_rows; r0 += kGroupRows) {
    bool any_keys = false;
    for (int64_t r = r0; r < std::min<int64_t>(r0 + kGroupRows, span.num_rows); ++r) {
      any_keys = any_keys || span.first_key[r] <= span.last_key[r];
    }
    if (any_keys) AttendGroup(span, seen, state, q, r0, k_tiles, v_tiles, p_bf16);
  }
  _tile_release();
}

}  // namespace vllm::kernels
