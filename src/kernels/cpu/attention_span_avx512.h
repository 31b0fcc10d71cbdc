// Internal to the translation units that run AttendSpan transposed (attention_amx.cc on AMX
// tiles, attention_bf16_dots_avx512.cc on vdpbf16ps), included inside their anonymous namespaces
// after transpose_avx512.h, with exp_avx512.h, <algorithm>, <type_traits> and <vector> included
// before the namespace, as attention_tile_impl.h is.
//
// Everything runs transposed, so that query rows stay in the lanes and nothing is transposed per
// group: a span's slots make the 64 keys of one online-softmax step (slot i: keys 16 i, + 16).
// Per group of 16 query rows:
//   S^T [16 keys, 16 rows] per slot = K (bf16 rows, read from the cache where the slot holds 16
//   keys, else from a copy with zeros for the keys no row sees) · Q^T (bf16, QueriesToBf16's
//   layout), summed in f32 over head_dim in pairs of dims
//   each row's online-softmax step over the span's keys in f32, a lane per row: p, rescale
//   acc^T = acc^T · rescale (where some row's max moved), then acc^T += V^T (bf16) · P^T (p rounded
//   to bf16) over pairs of keys
// Keys no row sees enter V^T and P^T as zeros (and their logits are masked), so the other rows'
// keys add exact zeros to a row's sums; a key's place depends only on its slot; rows are
// independent in the lanes. So a row's result depends only on its own query, range and keys: the
// same alone (decode, 16 rows padded) as in any group and batch.
#pragma once

constexpr int kGroupRows = 16;     // query rows per group: the columns of S^T, P^T and acc^T
constexpr int kDimsPerPart = 32;   // dims of one Q^T tile (16 dim pairs) and of a K tile's rows
constexpr int kDimsPerSlice = 16;  // dims of one acc^T tile (its rows)
constexpr int kSpanColumns = kAttentionSpanTiles * kAttentionTileKeys;  // 64 keys per span
constexpr int kKeysPerHalf = 32;  // keys of one P^T tile (16 key pairs) and of a V^T tile's rows
constexpr int kSlotsPerHalf = kKeysPerHalf / kAttentionTileKeys;
constexpr int kHalves = kSpanColumns / kKeysPerHalf;

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

// How PackValues lays out each half's slice of 16 dims x 16 key pairs (pairs of bf16 words):
// kDimRows as AMX's A tiles ([16 dims][16 key pairs]), kPairRows as they come
// ([16 key pairs][16 dims]) for vdpbf16ps, which broadcasts single words and saves the transpose.
enum class ValueLayout { kDimRows, kPairRows };

// v_tiles: [half][head_dim / 16 slices][16 x 16 key pairs] (pairs of bf16): half h's slice s holds
// the values of dims [16 s, + 16) for the 32 keys of slots 2h, 2h + 1, key 2i beside key 2i + 1
// (pair i), in `layout`; keys no row sees are 0.
void PackValues(const AttentionSpan& span, const SeenSlots& seen, ValueLayout layout,
                uint32_t* v_tiles) {
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
      if (layout == ValueLayout::kDimRows) Transpose16x16(block);  // block[d]: dim d's 32 keys
      uint32_t* tile = v_tiles + (half * slices + slice) * 16 * 16;
      for (int row = 0; row < 16; ++row) _mm512_storeu_ps(tile + row * 16, block[row]);
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

// The first group of 16 rows from r0 on of which some row sees a key (num_rows: none).
int64_t NextGroup(const AttentionSpan& span, int64_t r0) {
  for (; r0 < span.num_rows; r0 += kGroupRows) {
    for (int64_t r = r0; r < std::min<int64_t>(r0 + kGroupRows, span.num_rows); ++r) {
      if (span.first_key[r] <= span.last_key[r]) return r0;
    }
  }
  return span.num_rows;
}

// What a span's groups share: its seen slots (hi < lo: no row sees a key, nothing else is set),
// where its K rows are, V^T's tiles and the queries in QueriesToBf16's layout. scratch
// (AttentionSpanScratchFloats: 64 head_dim floats) holds copies of short slots' keys (4 x 16 x
// head_dim bf16) and V^T's tiles (2 halves x 32 keys x head_dim bf16).
struct PreparedSpan {
  SeenSlots seen;
  KeyRows keys;
  const uint32_t* v_tiles;
  const uint16_t* q;
};

PreparedSpan PrepareSpan(const AttentionSpan& span, ValueLayout value_layout, float* scratch) {
  PreparedSpan prepared{.seen = FindSeenSlots(span)};
  if (prepared.seen.hi < prepared.seen.lo) return prepared;
  auto* key_copies = reinterpret_cast<uint16_t*>(scratch);
  auto* v_tiles = reinterpret_cast<uint32_t*>(key_copies + kSpanColumns * span.head_dim);
  prepared.keys = LocateKeys(span, prepared.seen, key_copies);
  PackValues(span, prepared.seen, value_layout, v_tiles);
  prepared.v_tiles = v_tiles;
  prepared.q = QueriesAsBf16(span);
  return prepared;
}
