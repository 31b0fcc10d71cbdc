// Internal to the AMX translation units (built with -mamx-tile): the tile configuration that
// LDTILECFG loads into the calling thread's tile registers.
#pragma once

#include <immintrin.h>

#include <cstdint>

namespace vllm::kernels {

// Palette 1's layout: rows and bytes per row of each of the 8 tile registers.
struct TileConfig {
  uint8_t palette = 1;
  uint8_t start_row = 0;
  uint8_t reserved[14] = {};
  uint16_t bytes_per_row[16] = {};
  uint8_t rows[16] = {};
};
static_assert(sizeof(TileConfig) == 64);

// Tile t gets rows[t] rows of bytes_per_row[t] bytes (64 by default: 16 f32, 32 bf16 or 16 bf16
// pairs).
inline void ConfigureTiles(const int (&rows)[8],
                           const int (&bytes_per_row)[8] = {64, 64, 64, 64, 64, 64, 64, 64}) {
  TileConfig config;
  for (int t = 0; t < 8; ++t) {
    config.bytes_per_row[t] = static_cast<uint16_t>(bytes_per_row[t]);
    config.rows[t] = static_cast<uint8_t>(rows[t]);
  }
  // GCC's _tile_loadconfig tells the compiler it reads 8 bytes only, so the other stores would be
  // dropped as dead; handing the address to an empty asm keeps all 64.
  __asm__ volatile("" : : "r"(&config) : "memory");
  _tile_loadconfig(&config);
}

}  // namespace vllm::kernels
