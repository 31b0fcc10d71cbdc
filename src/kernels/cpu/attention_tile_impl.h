// AttendTile's body, written as fixed-width loops over the kAttentionTileKeys lanes of a tile that
// the compiler turns into SIMD for the flags of the file including it. Each cpu/attention_<isa>.cc
// includes this inside an anonymous namespace, so every ISA's copy stays private to its
// translation unit (no inline function compiled for AVX-512 can be picked for another path);
// for the same reason it calls compiler builtins, never std:: inline functions. At -O2 GCC
// vectorizes only loops whose trip count is a known multiple of the vector width, so every loop
// meant for SIMD runs over kLanes (16) lanes or 16-value chunks.
//
// Per tile:
//   kt: [head_dim, 16]     keys converted to f32 and transposed: row d holds lane j = key j's d
//   v:  [16, acc_stride]   values converted to f32, zero-padded to acc_stride (rows lo..hi)
// and per query row r that sees keys [lo, hi] of the tile:
//   s[0..16) = (q_r · kt) · scale      four partial sums over d mod 4, added (s0 + s1) + (s2 + s3)
//   m' = max(m, max_{lo..hi} s); p_j = exp(s_j - m') for j in [lo, hi], 0 elsewhere
//   acc_r = acc_r · exp(m - m') + Σ_{j = lo..hi} p_j v_j; sum_r likewise
// Nothing in a row's arithmetic depends on the other rows of the tile.

constexpr int kLanes = kAttentionTileKeys;

// a · b + c, fused where the translation unit's ISA has FMA.
inline float MulAdd(float a, float b, float c) {
#ifdef __FMA__
  return __builtin_fmaf(a, b, c);
#else
  return a * b + c;
#endif
}

// An e4m3fn byte as f32 (0x7f, e4m3fn's NaN, is never stored and decodes as 480): common/fp8.h's
// DecodeFp8E4m3 in builtins, so that each ISA's copy stays private (see above).
inline float DecodeFp8E4m3(uint32_t byte) {
  const uint32_t magnitude = byte & 0x7fu;
  const uint32_t sign = (byte & 0x80u) << 24;
  // Normal: exponent field e in [1, 15] with bias 7 → f32 exponent field e + 120.
  const float normal = __builtin_bit_cast(float, (magnitude << 20) + (120u << 23));
  const float subnormal = static_cast<float>(magnitude & 7u) * 0.001953125f;  // m · 2^-9
  const float value = (magnitude >> 3) != 0 ? normal : subnormal;
  return __builtin_bit_cast(float, __builtin_bit_cast(uint32_t, value) | sign);
}

// Stored value i of `row` as f32 (times `scale` for fp8 / int8).
inline float DecodeKvValue(KvCacheDtype dtype, const uint8_t* row, int64_t i, float scale) {
  switch (dtype) {
    case KvCacheDtype::kFloat32: {
      float value;
      __builtin_memcpy(&value, row + 4 * i, sizeof(value));
      return value;
    }
    case KvCacheDtype::kBFloat16: {
      uint16_t bits;
      __builtin_memcpy(&bits, row + 2 * i, sizeof(bits));
      return __builtin_bit_cast(float, static_cast<uint32_t>(bits) << 16);
    }
    case KvCacheDtype::kFp8E4m3:
      return DecodeFp8E4m3(row[i]) * scale;
    case KvCacheDtype::kInt8:
      break;
  }
  return static_cast<float>(static_cast<int8_t>(row[i])) * scale;
}

// out[i] = stored value i of `row` (times `scale` for fp8 / int8), i < n; whole chunks of
// kLanes values with the dtype's loop inside, so that each vectorizes.
inline void DecodeKvRow(KvCacheDtype dtype, const uint8_t* row, float scale, int64_t n,
                        float* out) {
  const int64_t whole = n / kLanes * kLanes;
  for (int64_t c = 0; c < whole; c += kLanes) {
    const uint8_t* bytes = row + c * KvValueBytes(dtype);
    float* chunk = out + c;
    switch (dtype) {
      case KvCacheDtype::kFloat32:
        __builtin_memcpy(chunk, bytes, kLanes * sizeof(float));
        break;
      case KvCacheDtype::kBFloat16: {
        uint16_t bits[kLanes];
        __builtin_memcpy(bits, bytes, sizeof(bits));
        for (int l = 0; l < kLanes; ++l) {
          chunk[l] = __builtin_bit_cast(float, static_cast<uint32_t>(bits[l]) << 16);
        }
        break;
      }
      case KvCacheDtype::kFp8E4m3:
        for (int l = 0; l < kLanes; ++l) chunk[l] = DecodeFp8E4m3(bytes[l]) * scale;
        break;
      case KvCacheDtype::kInt8:
        for (int l = 0; l < kLanes; ++l) {
          chunk[l] = static_cast<float>(static_cast<int8_t>(bytes[l])) * scale;
        }
        break;
    }
  }
  for (int64_t i = whole; i < n; ++i) out[i] = DecodeKvValue(dtype, row, i, scale);
}

inline float RowScale(const KvRows& rows, int j) {
  return rows.scales != nullptr ? rows.scales[j * rows.scale_stride] : 1.0f;
}

// exp(x) for x ≤ 0 within 2 ulp, branch-free so that loops over lanes vectorize: x = n ln2 + r,
// exp(r) by a degree-6 polynomial, 2^n through the exponent bits. Below -87, returns exp(-87).
inline float ExpNonPositive(float x) {
  x = x < -87.0f ? -87.0f : x;
  const float rounder = 12582912.0f;  // 1.5 · 2^23: adding it rounds to an integer
  const float n = (x * 1.44269504088896341f + rounder) - rounder;
  const float r = (x - n * 0.693359375f) + n * 2.12194440e-4f;
  float p = 1.9875691500e-4f;
  p = p * r + 1.3981999507e-3f;
  p = p * r + 8.3334519073e-3f;
  p = p * r + 4.1665795894e-2f;
  p = p * r + 1.6666665459e-1f;
  p = p * r + 5.0000001201e-1f;
  p = p * r * r + r + 1.0f;
  const int32_t exponent = static_cast<int32_t>(n) + 127;
  return p * __builtin_bit_cast(float, static_cast<uint32_t>(exponent) << 23);
}

// The tile's keys [lo, hi] as kt: [head_dim, kLanes] (other lanes 0), each key row decoded into
// `row` ([head_dim] floats of scratch) and then moved into its lane of kt. An ISA's file may pass
// AttendTileImpl a faster loader that writes the same kt.
inline void LoadKeysByRow(const AttentionTile& tile, int lo, int hi, float* row, float* kt) {
  const int64_t head_dim = tile.head_dim;
  __builtin_memset(kt, 0, head_dim * kLanes * sizeof(float));
  for (int j = lo; j <= hi; ++j) {
    DecodeKvRow(tile.keys.dtype, tile.keys.data + j * tile.keys.row_stride_bytes,
                RowScale(tile.keys, j), head_dim, row);
    for (int64_t d = 0; d < head_dim; ++d) kt[d * kLanes + j] = row[d];
  }
}

// The tile's values [lo, hi] as rows of v: [kLanes, acc_stride], each padded with 0 to acc_stride
// (the other rows are left as they are: no query row reads them). An ISA's file may pass
// AttendTileImpl a faster loader that writes the same rows.
inline void LoadValuesByRow(const AttentionTile& tile, int lo, int hi, int64_t acc_stride,
                            float* v) {
  const int64_t head_dim = tile.head_dim;
  for (int j = lo; j <= hi; ++j) {
    float* row = v + j * acc_stride;
    DecodeKvRow(tile.values.dtype, tile.values.data + j * tile.values.row_stride_bytes,
                RowScale(tile.values, j), head_dim, row);
    __builtin_memset(row + head_dim, 0, (acc_stride - head_dim) * sizeof(float));
  }
}

// s[j] = q · kt[:, j] over head_dim, four partial sums by d mod 4.
inline void TileLogits(const float* q, const float* kt, int64_t head_dim, float* s) {
  float s0[kLanes] = {}, s1[kLanes] = {}, s2[kLanes] = {}, s3[kLanes] = {};
  int64_t d = 0;
  for (; d + 4 <= head_dim; d += 4) {
    const float* k = kt + d * kLanes;
    for (int j = 0; j < kLanes; ++j) {
      s0[j] = MulAdd(q[d], k[j], s0[j]);
      s1[j] = MulAdd(q[d + 1], k[kLanes + j], s1[j]);
      s2[j] = MulAdd(q[d + 2], k[2 * kLanes + j], s2[j]);
      s3[j] = MulAdd(q[d + 3], k[3 * kLanes + j], s3[j]);
    }
  }
  for (; d < head_dim; ++d) {
    for (int j = 0; j < kLanes; ++j) s0[j] = MulAdd(q[d], kt[d * kLanes + j], s0[j]);
  }
  for (int j = 0; j < kLanes; ++j) s[j] = (s0[j] + s1[j]) + (s2[j] + s3[j]);
}

// The largest of 16 values, by halves: lanes l and l + 8, then l and l + 4, ...
inline float ReduceMax(const float* x) {
  float half[kLanes / 2];
  for (int l = 0; l < 8; ++l) half[l] = x[l] > x[l + 8] ? x[l] : x[l + 8];
  for (int l = 0; l < 4; ++l) half[l] = half[l] > half[l + 4] ? half[l] : half[l + 4];
  for (int l = 0; l < 2; ++l) half[l] = half[l] > half[l + 2] ? half[l] : half[l + 2];
  return half[0] > half[1] ? half[0] : half[1];
}

// The sum of 16 values, by halves as ReduceMax.
inline float ReduceSum(const float* x) {
  float half[kLanes / 2];
  for (int l = 0; l < 8; ++l) half[l] = x[l] + x[l + 8];
  for (int l = 0; l < 4; ++l) half[l] = half[l] + half[l + 4];
  for (int l = 0; l < 2; ++l) half[l] = half[l] + half[l + 2];
  return half[0] + half[1];
}

// acc[0, 16) = acc · rescale + Σ_{j = first..last} p[j] · v[j · stride + (0, 16)], held in a
// register across the keys.
inline void AccumulateValues(const float* p, int first, int last, const float* v, int64_t stride,
                             float rescale, float* acc) {
  float a[kLanes];
  for (int l = 0; l < kLanes; ++l) a[l] = acc[l] * rescale;
  for (int j = first; j <= last; ++j) {
    const float* value = v + j * stride;
    for (int l = 0; l < kLanes; ++l) a[l] = MulAdd(p[j], value[l], a[l]);
  }
  for (int l = 0; l < kLanes; ++l) acc[l] = a[l];
}

// The same over 64 dimensions: four independent chains, each dimension's arithmetic the same as
// in AccumulateValues.
inline void AccumulateValues64(const float* p, int first, int last, const float* v, int64_t stride,
                               float rescale, float* acc) {
  float a0[kLanes], a1[kLanes], a2[kLanes], a3[kLanes];
  for (int l = 0; l < kLanes; ++l) {
    a0[l] = acc[l] * rescale;
    a1[l] = acc[kLanes + l] * rescale;
    a2[l] = acc[2 * kLanes + l] * rescale;
    a3[l] = acc[3 * kLanes + l] * rescale;
  }
  for (int j = first; j <= last; ++j) {
    const float* value = v + j * stride;
    for (int l = 0; l < kLanes; ++l) {
      a0[l] = MulAdd(p[j], value[l], a0[l]);
      a1[l] = MulAdd(p[j], value[kLanes + l], a1[l]);
      a2[l] = MulAdd(p[j], value[2 * kLanes + l], a2[l]);
      a3[l] = MulAdd(p[j], value[3 * kLanes + l], a3[l]);
    }
  }
  for (int l = 0; l < kLanes; ++l) {
    acc[l] = a0[l];
    acc[kLanes + l] = a1[l];
    acc[2 * kLanes + l] = a2[l];
    acc[3 * kLanes + l] = a3[l];
  }
}

// The keys some row of the tile sees: [lo, hi]; hi < lo when no row sees any.
inline void TileKeyBounds(const AttentionTile& tile, int& lo, int& hi) {
  lo = kLanes;
  hi = -1;
  for (int64_t r = 0; r < tile.num_rows; ++r) {
    if (tile.first_key[r] > tile.last_key[r]) continue;
    lo = tile.first_key[r] < lo ? tile.first_key[r] : lo;
    hi = tile.last_key[r] > hi ? tile.last_key[r] : hi;
  }
}

// Row r's online-softmax step over its logits s (q·k, all lanes; scaled and soft-capped here):
// p[j] = exp(s_j − m') for j in [first, last], 0 elsewhere; row_max and row_sum move on, and the
// factor that scales the row's acc is returned. Always inlined: its loops vectorize only where
// the compiler sees s and p as the caller's own arrays.
[[gnu::always_inline]] inline float SoftmaxStep(const AttentionTile& tile,
                                                const AttentionState& state, int64_t r, float* s,
                                                float* p) {
  const int first = tile.first_key[r];
  const int last = tile.last_key[r];
  for (int j = 0; j < kLanes; ++j) s[j] *= tile.scale;
  if (tile.logit_softcap > 0.0f) {
    for (int j = first; j <= last; ++j) {
      s[j] = tile.logit_softcap * __builtin_tanhf(s[j] / tile.logit_softcap);
    }
  }
  // Lanes outside [first, last] are -inf for the max and 0 for the sum, which leaves both as
  // they are, so the reductions run over all lanes in a fixed tree order (vector halves).
  float masked[kLanes];
  for (int j = 0; j < kLanes; ++j) masked[j] = j >= first && j <= last ? s[j] : -__builtin_inff();
  const float tile_max = ReduceMax(masked);
  const float old_max = state.row_max[r];
  const float new_max = old_max > tile_max ? old_max : tile_max;
  for (int j = 0; j < kLanes; ++j) {
    const float e = ExpNonPositive(s[j] - new_max);
    p[j] = j >= first && j <= last ? e : 0.0f;
  }
  const float tile_sum = ReduceSum(p);
  // exp(-inf) = 0 on a row's first tile; exactly 1 while the max stays.
  const float rescale = old_max == new_max ? 1.0f : __builtin_expf(old_max - new_max);
  state.row_max[r] = new_max;
  state.row_sum[r] = state.row_sum[r] * rescale + tile_sum;
  return rescale;
}

// Row r of the tile against kt and v (as AttendTileImpl loads them).
[[gnu::always_inline]] inline void AttendRow(const AttentionTile& tile, const AttentionState& state,
                                             int64_t r, const float* kt, const float* v) {
  const int first = tile.first_key[r];
  const int last = tile.last_key[r];
  if (first > last) return;
  const int64_t acc_stride = AttentionAccStride(tile.head_dim);
  float s[kLanes];
  TileLogits(tile.q + r * tile.head_dim, kt, tile.head_dim, s);
  float p[kLanes];
  const float rescale = SoftmaxStep(tile, state, r, s, p);
  float* acc = state.acc + r * acc_stride;
  int64_t c = 0;
  for (; c + 4 * kLanes <= acc_stride; c += 4 * kLanes) {
    AccumulateValues64(p, first, last, v + c, acc_stride, rescale, acc + c);
  }
  for (; c < acc_stride; c += kLanes) {
    AccumulateValues(p, first, last, v + c, acc_stride, rescale, acc + c);
  }
}

// load_keys(tile, lo, hi, row, kt) fills kt as LoadKeysByRow does, load_values(tile, lo, hi,
// acc_stride, v) the rows of v as LoadValuesByRow does; then attend_rows(r, kt, v) runs one or
// more rows from r on, each with AttendRow's arithmetic, and returns the first row it left.
template <typename LoadKeys, typename LoadValues, typename AttendRows>
inline void AttendTileImpl(const AttentionTile& tile, const AttentionState& state, float* scratch,
                           LoadKeys load_keys, LoadValues load_values, AttendRows attend_rows) {
  int lo, hi;
  TileKeyBounds(tile, lo, hi);
  if (hi < lo) return;
  const int64_t acc_stride = AttentionAccStride(tile.head_dim);
  float* kt = scratch;                       // [head_dim, kLanes]
  float* v = scratch + kLanes * acc_stride;  // [kLanes, acc_stride]
  load_keys(tile, lo, hi, /*row=*/v, kt);    // v is free until the values go in
  load_values(tile, lo, hi, acc_stride, v);
  for (int64_t r = 0; r < tile.num_rows;) r = attend_rows(r, kt, v);
}

// One row at a time.
template <typename LoadKeys, typename LoadValues>
inline void AttendTileImpl(const AttentionTile& tile, const AttentionState& state, float* scratch,
                           LoadKeys load_keys, LoadValues load_values) {
  AttendTileImpl(tile, state, scratch, load_keys, load_values,
                 [&](int64_t r, const float* kt, const float* v) {
                   AttendRow(tile, state, r, kt, v);
                   return r + 1;
                 });
}
