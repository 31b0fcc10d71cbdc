// Physical paged KV storage for every layer. The KV cache manager hands out block ids; this class
// owns the memory behind them.
//
// Per layer, K and V are each laid out [num_blocks, block_size, num_kv_heads, head_dim] (f32), so
// slot s = block_id * block_size + offset addresses one token's [num_kv_heads, head_dim] row.
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

namespace vllm {

class KvStorage {
 public:
  struct Options {
    int64_t num_layers = 0;
    int64_t num_blocks = 0;
    int64_t block_size = 16;
    int64_t num_kv_heads = 0;
    int64_t head_dim = 0;
  };

  static Expected<std::unique_ptr<KvStorage>> Create(const Options& options);
  // Bytes of K and V for one token across all layers.
  static int64_t BytesPerToken(const Options& options);

  const Options& options() const { return options_; }
  int64_t num_slots() const { return options_.num_blocks * options_.block_size; }
  int64_t row_size() const { return options_.num_kv_heads * options_.head_dim; }

  // The [num_kv_heads, head_dim] row of `slot` in `layer`.
  float* key(int64_t layer, int64_t slot) { return memory_.get() + Offset(layer, slot); }
  float* value(int64_t layer, int64_t slot) { return values_ + Offset(layer, slot); }

 private:
  struct Unmap {
    size_t bytes = 0;
    void operator()(float* p) const;
  };
  KvStorage(const Options& options, std::unique_ptr<float, Unmap> memory);
  int64_t Offset(int64_t layer, int64_t slot) const {
    return (layer * num_slots() + slot) * row_size();
  }
  Options options_;
  std::unique_ptr<float, Unmap> memory_;  // the keys of every layer, then their values
  float* values_;
};

}  // namespace vllm
