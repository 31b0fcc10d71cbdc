// The AMX loop for MeasureDotPeak (dot_peak_kernels.h): TDPBF16PS into four C tiles in turn.
#include <immintrin.h>

#include <cstdint>
#include <vector>

#include "kernels/cpu/amx_tiles.h"
#include "kernels/cpu/dot_peak_kernels.h"

namespace vllm::kernels {

float Bf16TileLoopAmx(int64_t iterations) {
  ConfigureTiles({16, 16, 16, 16, 16, 16, 16, 16});
  const std::vector<uint16_t> ones(16 * 32, 0x3f80);   // bf16 1.0
  const std::vector<uint16_t> small(16 * 32, 0x3c00);  // bf16 2^-7
  _tile_zero(0);
  _tile_zero(1);
  _tile_zero(2);
  _tile_zero(3);
  _tile_loadd(4, ones.data(), 64);
  _tile_loadd(5, small.data(), 64);
  _tile_loadd(6, small.data(), 64);
  _tile_loadd(7, ones.data(), 64);
  static_assert(kDotPeakChains == 12, "three rounds over the four C tiles");
  for (int64_t i = 0; i < iterations; ++i) {
    _tile_dpbf16ps(0, 4, 6);
    _tile_dpbf16ps(1, 4, 7);
    _tile_dpbf16ps(2, 5, 6);
    _tile_dpbf16ps(3, 5, 7);
    _tile_dpbf16ps(0, 5, 7);
    _tile_dpbf16ps(1, 5, 6);
    _tile_dpbf16ps(2, 4, 7);
    _tile_dpbf16ps(3, 4, 6);
    _tile_dpbf16ps(0, 4, 7);
    _tile_dpbf16ps(1, 5, 7);
    _tile_dpbf16ps(2, 4, 6);
    _tile_dpbf16ps(3, 5, 6);
  }
  float sums[4][16 * 16];
  _tile_stored(0, sums[0], 64);
  _tile_stored(1, sums[1], 64);
  _tile_stored(2, sums[2], 64);
  _tile_stored(3, sums[3], 64);
  _tile_release();
  return sums[0][0] + sums[1][17] + sums[2][34] + sums[3][255];
}

}  // namespace vllm::kernels
