// AttendSpan on AMX tiles (AmxBf16Usable, and bf16 keys and values, head_dim a multiple of 32),
// transposed as attention_span_avx512.h describes: S^T and acc^T += V^T · P^T by TDPBF16PS, the
// latter over 32 keys (two slots) at a time.
#include <immintrin.h>

#include <algorithm>
#include <cstdint>
#include <type_traits>
#include <utility>
#include <vector>  // attention_span_avx512.h

#include "kernels/attention_internal.h"
#include "kernels/cpu/amx_tiles.h"
#include "kernels/cpu/exp_avx512.h"
#include "kernels/kv_line_prefetcher.h"

namespace vllm::kernels {
namespace {
#include "kernels/cpu/transpose_avx512.h"
// clang-format off: after the transpose it uses
#include "kernels/cpu/attention_span_avx512.h"
// clang-format on

constexpr int kSlicesPerPass = 4;  // acc^T tiles 0..3

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

void AttendSpanAmx(const AttentionSpan& span, const AttentionState& state, float* scratch) {
  // The next span's lines at once, as the caller asked for them before (no CPU with AMX was at
  // hand to time a spread like AttendSpanBf16Dots').
  KvLinePrefetcher(span.next, span.head_dim).IssueRest();
  const PreparedSpan prepared = PrepareSpan(span, ValueLayout::kDimRows, scratch);
  const SeenSlots& seen = prepared.seen;
  if (seen.hi < seen.lo) return;
  ConfigureTiles({16, 16, 16, 16, 16, 16, 16, 16});
  // Software-pipelined: the next group's S^T products are issued before this group's softmax,
  // which does not wait for them, so that the tiles and the vector units work side by side.
  alignas(64) float st[2][kSpanColumns][kGroupRows];  // this group's S^T, the next one's
  alignas(64) uint32_t p_tiles[kHalves * 16 * 16];
  int64_t r0 = NextGroup(span, 0);
  if (r0 < span.num_rows) {
    ScoreGroup(span, seen, prepared.q, r0, prepared.keys);
    StoreScores(seen, st[0]);
  }
  for (int current = 0; r0 < span.num_rows; current ^= 1) {
    const int64_t next = NextGroup(span, r0 + kGroupRows);
    if (next < span.num_rows) ScoreGroup(span, seen, prepared.q, next, prepared.keys);
    const __m512 rescale = SoftmaxStep(span, seen, state, r0, st[current], p_tiles);
    if (next < span.num_rows) StoreScores(seen, st[current ^ 1]);
    AddValues(span, seen, state, r0, rescale, p_tiles, prepared.v_tiles);
    r0 = next;
  }
  _tile_release();
}

}  // namespace vllm::kernels
