// The AMX kernel for packed BF16 weights (packed_q8_layout.h), where Bf16WeightPath() is kTiles.
// A packed group block (16 steps of 16 W rows x a pair of columns) is one B tile exactly as
// TDPBF16PS reads it; 16 x rows x 32 columns of x's bf16 bits are one A tile (64 contiguous bytes
// per row in PreparedActivations::bf16_tiles); a C tile holds the f32 sums of 16 x rows x 16 W
// rows. Every x row's sums are the same instructions over the same blocks in the same order
// whatever m is and wherever the row sits in its tile, so the results do not depend on the batch.
#include <immintrin.h>

#include <algorithm>
#include <cstdint>

#include "kernels/cpu/amx_tiles.h"
#include "kernels/packed_q8_layout.h"

namespace vllm::kernels {
namespace {

// Tile registers (literals: GCC's tile intrinsics are macros that paste the number into the
// assembly): C[x tile][group] = 2 * x tile + group, A[x tile] = 4 + x tile, B[group] = 6 + group.
// Every tile row is 64 bytes: 16 f32 sums, 32 bf16 x values, 16 pairs of bf16 weights.
constexpr int kTileBytesPerRow = 64;  // as ConfigureTiles sets
constexpr int64_t kBlockBytes = PackedBytesPerGroupBlock(GgmlType::kBF16);  // one B tile
// x rows whose A tiles stay in L2 while a pair of W groups (2 x 16 rows x cols x 2 bytes) is read
// from memory once for all of them: about kXBlockBytes of x, in pairs of tiles.
constexpr int64_t kXBlockBytes = int64_t{512} << 10;
int64_t XRowsPerBlock(int64_t cols) {
  return std::max<int64_t>(1, kXBlockBytes / (cols * 2 * 32)) * 32;
}

// A and C tiles of `x_rows` rows (16, or the last x rows of the batch), B tiles of 16.
void ConfigureXRows(int x_rows) {
  ConfigureTiles({x_rows, x_rows, x_rows, x_rows, x_rows, x_rows, 16, 16});
}

// y rows [first_x_row, + 16 XT) (fewer in the last tile, as configured) x W rows [16 group,
// + 16 G) = x tiles times W groups over every block of columns in order.
template <int XT, int G>
void TilesTimesGroups(const PackedWeightView& w, const PreparedActivations& x, int64_t group,
                      int64_t first_x_row, float* y) {
  const int64_t num_blocks = w.cols / kQuantBlockSize;
  const int64_t group_bytes = num_blocks * kBlockBytes;
  const uint8_t* values = w.data + group * group_bytes;
  // x tiles as bf16_tiles lays them out: 64 bytes per row of a block, tile_rows rows per block.
  const uint16_t* x_tile = x.bf16_tiles.data() + first_x_row * w.cols;
  const int64_t tile_rows = std::min<int64_t>(16, x.m - first_x_row);
  const int64_t x_tile_values = 16 * w.cols;
  _tile_zero(0);
  if constexpr (G > 1) _tile_zero(1);
  if constexpr (XT > 1) _tile_zero(2);
  if constexpr (XT > 1 && G > 1) _tile_zero(3);
  for (int64_t b = 0; b < num_blocks; ++b) {
    _tile_loadd(6, values + b * kBlockBytes, kTileBytesPerRow);
    if constexpr (G > 1) _tile_loadd(7, values + group_bytes + b * kBlockBytes, kTileBytesPerRow);
    _tile_loadd(4, x_tile + b * tile_rows * kQuantBlockSize, kTileBytesPerRow);
    _tile_dpbf16ps(0, 4, 6);
    if constexpr (G > 1) _tile_dpbf16ps(1, 4, 7);
    if constexpr (XT > 1) {
      _tile_loadd(5, x_tile + x_tile_values + b * 16 * kQuantBlockSize, kTileBytesPerRow);
      _tile_dpbf16ps(2, 5, 6);
      if constexpr (G > 1) _tile_dpbf16ps(3, 5, 7);
    }
  }
  float* y_tile = y + first_x_row * w.rows + group * kPackedRowsPerGroup;
  const int64_t y_row_bytes = w.rows * 4;
  _tile_stored(0, y_tile, y_row_bytes);
  if constexpr (G > 1) _tile_stored(1, y_tile + kPackedRowsPerGroup, y_row_bytes);
  if constexpr (XT > 1) _tile_stored(2, y_tile + 16 * w.rows, y_row_bytes);
  if constexpr (XT > 1 && G > 1)
    _tile_stored(3, y_tile + 16 * w.rows + kPackedRowsPerGroup, y_row_bytes);
}

// x rows [x_begin, x_end) (whole tiles, or one short last tile) x groups [group_begin, group_end):
// pairs of groups over pairs of x tiles.
void TilesOverGroups(const PackedWeightView& w, const PreparedActivations& x, int64_t group_begin,
                     int64_t group_end, int64_t x_begin, int64_t x_end, float* y) {
  auto x_tiles = [&]<int G>(int64_t group) {
    int64_t i = x_begin;
    for (; i + 32 <= x_end; i += 32) TilesTimesGroups<2, G>(w, x, group, i, y);
    if (i < x_end) TilesTimesGroups<1, G>(w, x, group, i, y);
  };
  int64_t group = group_begin;
  for (; group + 2 <= group_end; group += 2) x_tiles.template operator()<2>(group);
  if (group < group_end) x_tiles.template operator()<1>(group);
}

}  // namespace

void LinearRowsPackedBf16Amx(const PackedWeightView& w, const PreparedActivations& x,
                             int64_t row_begin, int64_t row_end, float* y) {
  const int64_t group_begin = row_begin / kPackedRowsPerGroup;
  const int64_t group_end = row_end / kPackedRowsPerGroup;
  const int64_t whole_tile_rows = x.m / 16 * 16;
  if (whole_tile_rows > 0) {
    ConfigureXRows(16);
    const int64_t x_rows_per_block = XRowsPerBlock(w.cols);
    for (int64_t x_begin = 0; x_begin < whole_tile_rows; x_begin += x_rows_per_block) {
      TilesOverGroups(w, x, group_begin, group_end, x_begin,
                      std::min(x_begin + x_rows_per_block, whole_tile_rows), y);
    }
  }
  if (x.m > whole_tile_rows) {
    ConfigureXRows(static_cast<int>(x.m - whole_tile_rows));
    TilesOverGroups(w, x, group_begin, group_end, whole_tile_rows, x.m, y);
  }
  _tile_release();
}

}  // namespace vllm::kernels
