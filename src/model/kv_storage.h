// Physical paged KV storage for every layer. The KV cache manager hands out block ids; this class
// owns the memory behind them.
//
// The layers share blocks by KV cache group (kv_cache_layout.h): one block id holds the K/V of the
// group_size layers of a group, each at its place in the group. K and V values are each laid out
//   [num_blocks][group_size][num_kv_heads][block_size][head_dim]   (in `dtype`)
// so a layer's slot s = block_id * block_size + offset, read through its group's block table,
// addresses one token's head_dim row in each KV head's run of block_size rows: attention reads one
// KV head's rows of a block as one contiguous run. With one group of every layer (the default) a
// block holds all layers. fp8 and int8 rows carry one f32 scale per (token, KV head), after the
// values: K scales, then V scales, each [num_blocks][group_size][num_kv_heads][block_size]
// (kernels/kv_cache_dtype.h says why per row).
//
// As vLLM reserves its KV cache at start, Create allocates every byte and makes it resident at
// once: the process's RSS holds the whole cache from the start (flat under load), and a cache
// larger than the memory available fails at creation with a message naming
// --kv-cache-memory-bytes instead of swapping or being killed later.
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>

#include "common/expected.h"
#include "kernels/ops.h"
#include "model/kv_cache_layout.h"

namespace vllm {

class KvStorage {
 public:
  // The block id a sliding group's block table holds for a block that left its window (the KV
  // cache manager's null block, reserved whenever the layout has a sliding group). Never read.
  static constexpr int32_t kNullBlockId = 0;

  struct Options {
    int64_t num_layers = 0;
    int64_t num_blocks = 0;
    int64_t block_size = 16;
    int64_t num_kv_heads = 0;
    int64_t head_dim = 0;
    kernels::KvCacheDtype dtype = kernels::KvCacheDtype::kFloat32;
    // How layers share blocks; empty (no groups): one full-attention group of all layers.
    KvCacheLayout layout;
  };

  static Expected<std::unique_ptr<KvStorage>> Create(const Options& options);
  // Bytes of K and V (and their scales) that one block holds: block_size tokens of its group's
  // group_size layers.
  static int64_t BytesPerBlock(const Options& options);

  const Options& options() const { return options_; }
  const KvCacheLayout& layout() const { return options_.layout; }
  int64_t num_slots() const { return options_.num_blocks * options_.block_size; }
  int64_t row_size() const { return options_.num_kv_heads * options_.head_dim; }

  kernels::KvCacheDtype dtype() const { return options_.dtype; }

  // Stores one token's K and V rows of `layer` at `slot` (block_id * block_size + offset) in the
  // storage's dtype, each KV head's row with its own scale (fp8 / int8).
  // k, v: [num_kv_heads, head_dim]
  void Write(int64_t layer, int64_t slot, const float* k, const float* v);

  // The stored keys (values) of `layer`'s KV head `kv_head` at offsets [offset, block_size) of
  // block `block_id`: one row per offset, consecutive.
  kernels::KvRows keys(int64_t layer, int64_t block_id, int64_t offset, int64_t kv_head) const {
    return Rows(memory_.get(), key_scales_, layer, block_id, offset, kv_head);
  }
  kernels::KvRows values(int64_t layer, int64_t block_id, int64_t offset, int64_t kv_head) const {
    return Rows(values_, value_scales_, layer, block_id, offset, kv_head);
  }

  // Float32 storage only: the head_dim row of `layer`'s KV head `kv_head` at `offset` in block
  // `block_id`.
  float* key(int64_t layer, int64_t block_id, int64_t offset, int64_t kv_head) {
    return reinterpret_cast<float*>(memory_.get()) + Offset(layer, block_id, offset, kv_head);
  }
  float* value(int64_t layer, int64_t block_id, int64_t offset, int64_t kv_head) {
    return reinterpret_cast<float*>(values_) + Offset(layer, block_id, offset, kv_head);
  }

 private:
  struct Unmap {
    size_t bytes = 0;
    void operator()(uint8_t* p) const;
  };
  KvStorage(const Options& options, std::unique_ptr<uint8_t, Unmap> memory);
  // Values (not bytes) before the row of `layer`'s KV head `kv_head` at (block_id, offset);
  // / head_dim: scales before its scale.
  int64_t Offset(int64_t layer, int64_t block_id, int64_t offset, int64_t kv_head) const {
    const int64_t place = options_.layout.place_in_group[layer];
    return (((block_id * options_.layout.group_size + place) * options_.num_kv_heads + kv_head) *
                options_.block_size +
            offset) *
           options_.head_dim;
  }
  kernels::KvRows Rows(uint8_t* data, float* scales, int64_t layer, int64_t block_id,
                       int64_t offset, int64_t kv_head) const;
  Options options_;                         // with its layout filled in
  std::unique_ptr<uint8_t, Unmap> memory_;  // every block's keys, then values, then scales
  uint8_t* values_;
  float* key_scales_;    // fp8 / int8: [num_slots of all layers, num_kv_heads]; else null
  float* value_scales_;  // likewise
};

}  // namespace vllm
