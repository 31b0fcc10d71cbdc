// The loop nest every SIMD Linear path shares: x rows in blocks that stay in L2, W rows in tiles
// that stay in L1, and within a tile passes of kPassRows... x rows (largest first, ending with 1)
// that meet each W row while it is loaded. Each ISA supplies dot.operator()<R>(j, i, out): W row
// j against x rows [i, i + R). The split into passes never changes an element's arithmetic.
#pragma once

#include <algorithm>
#include <cstdint>

#include "kernels/linear_internal.h"

namespace vllm::kernels {

constexpr int64_t kXRowsPerBlock = 64;
constexpr int64_t kWRowsPerTile = 16;

template <int... kPassRows, typename Dot>
inline void LinearRowsTiled(const WeightView& w, const PreparedActivations& x, int64_t row_begin,
                            int64_t row_end, float* y, const Dot& dot) {
  constexpr int kMaxPassRows = std::max({kPassRows...});
  float out[kMaxPassRows];
  for (int64_t x_begin = 0; x_begin < x.m; x_begin += kXRowsPerBlock) {
    const int64_t x_end = std::min(x_begin + kXRowsPerBlock, x.m);
    for (int64_t tile = row_begin; tile < row_end; tile += kWRowsPerTile) {
      const int64_t tile_end = std::min(tile + kWRowsPerTile, row_end);
      int64_t i = x_begin;
      auto passes = [&]<int kRows>() {
        for (; i + kRows <= x_end; i += kRows) {
          for (int64_t j = tile; j < tile_end; ++j) {
            dot.template operator()<kRows>(j, i, out);
            for (int r = 0; r < kRows; ++r) y[(i + r) * w.rows + j] = out[r];
          }
        }
      };
      (passes.template operator()<kPassRows>(), ...);
    }
  }
}

// LinearRowsTiled over a dot on W row bytes: dot.template operator()<R>(row j's bytes, x, i, out).
template <int... kPassRows, typename Dot>
inline void LinearRowBytesTiled(const WeightView& w, const PreparedActivations& x,
                                int64_t row_begin, int64_t row_end, float* y, const Dot& dot) {
  LinearRowsTiled<kPassRows...>(w, x, row_begin, row_end, y,
                                [&]<int R>(int64_t j, int64_t i, float* out) {
                                  dot.template operator()<R>(w.data + j * w.row_bytes, x, i, out);
                                });
}

// LinearRowBytesTiled over W rows of F32, F16 or BF16 (w's type, chosen once per call: a path's
// dots are compiled per type): dot.template operator()<kType, R>(row j's bytes, x, i, out).
template <int... kPassRows, typename Dot>
inline void LinearFloatRowsTiled(const WeightView& w, const PreparedActivations& x,
                                 int64_t row_begin, int64_t row_end, float* y, const Dot& dot) {
  const auto rows = [&]<GgmlType kType>() {
    LinearRowBytesTiled<kPassRows...>(
        w, x, row_begin, row_end, y,
        [&]<int R>(const uint8_t* row, const PreparedActivations& xs, int64_t i, float* out) {
          dot.template operator()<kType, R>(row, xs, i, out);
        });
  };
  switch (w.traits->layout.type) {
    case GgmlType::kF32:
      return rows.template operator()<GgmlType::kF32>();
    case GgmlType::kF16:
      return rows.template operator()<GgmlType::kF16>();
    default:  // BF16, the third type FloatType entries have
      return rows.template operator()<GgmlType::kBF16>();
  }
}

}  // namespace vllm::kernels
