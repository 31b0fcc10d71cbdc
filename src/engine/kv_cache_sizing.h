// How many KV blocks --kv-cache-memory-bytes buys for a model's KV cache groups, as vLLM sizes
// its cache: every block holds block_size tokens of one group's group_size layers, and all
// groups draw from one pool.
#pragma once

#include <cstdint>

#include "common/expected.h"
#include "kernels/kv_cache_dtype.h"
#include "model/kv_cache_layout.h"
#include "model/model_config.h"
#include "vllm/engine_args.h"

namespace vllm {

struct KvCacheSize {
  int64_t num_blocks = 0;       // blocks of the storage, the null block included
  int64_t bytes_per_block = 0;  // K and V of block_size tokens of group_size layers (+ draft's)
  // Of those, the draft model's: K and V of block_size tokens of all its layers (speculative
  // decoding with a draft model, whose KV is addressed by the target's block ids).
  int64_t draft_bytes_per_block = 0;
  kernels::KvCacheDtype dtype = kernels::KvCacheDtype::kFloat32;  // what K and V are stored as
  // Fewer blocks than the memory allows: what max_num_seqs requests of max_model_len tokens hold.
  bool capped_by_sequences = false;
};

// The most blocks one request of max_model_len tokens holds at once, over all groups: every block
// of its length in a full-attention group; in a sliding group (window W) those that the tokens of
// one step (at most C = max_num_batched_tokens of them) see, W - 1 + C positions, so at most
// ceil((W - 1 + C) / block_size) + 1 blocks. num_lookahead_tokens slots allocated past a step's
// tokens (a draft model's) add to C.
int64_t MaxBlocksPerRequest(const KvCacheLayout& layout, const EngineArgs& args,
                            int64_t num_lookahead_tokens = 0);

// The blocks for `args` (max_model_len resolved, kv_cache_memory_bytes by KvCacheMemory; unset:
// the default): kv_cache_memory_bytes / bytes_per_block, capped at what max_num_seqs requests can
// hold, for K and V stored as args.kv_cache_dtype (which the caller has resolved from `auto`, see
// model/kv_cache_dtype.h; a bare `auto` here is float32).
// Refused when a request of max_model_len would not fit, or the dtype is unknown. With
// `draft_config` (speculative decoding with a draft model) every block also holds the draft's K
// and V, in the same dtype, and args.speculative_config's k lookahead slots are counted.
Expected<KvCacheSize> SizeKvCache(const ModelConfig& config, const KvCacheLayout& layout,
                                  const EngineArgs& args,
                                  const ModelConfig* draft_config = nullptr);

}  // namespace vllm
