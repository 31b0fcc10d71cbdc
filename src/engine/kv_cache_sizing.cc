#include "engine/kv_cache_sizing.h"

#include <algorithm>
#include <string>

#include "model/kv_cache_dtype.h"
#include "model/kv_storage.h"

namespace vllm {
namespace {

int64_t CeilDiv(int64_t a, int64_t b) { return (a + b - 1) / b; }

}  // namespace

int64_t MaxBlocksPerRequest(const KvCacheLayout& layout, const EngineArgs& args,
                            int64_t num_lookahead_tokens) {
  const int64_t blocks_of_max_len = CeilDiv(args.max_model_len, args.block_size);
  const int64_t step_tokens =
      std::min(args.max_num_batched_tokens + num_lookahead_tokens, args.max_model_len);
  int64_t num_blocks = 0;
  for (const KvCacheLayout::Group& group : layout.groups) {
    if (group.sliding_window <= 0) {
      num_blocks += blocks_of_max_len;
    } else {
      const int64_t blocks_in_window =
          CeilDiv(group.sliding_window - 1 + step_tokens, args.block_size) + 1;
      num_blocks += std::min(blocks_of_max_len, blocks_in_window);
    }
  }
  return num_blocks;
}

Expected<KvCacheSize> SizeKvCache(const ModelConfig& config, const KvCacheLayout& layout,
                                  const EngineArgs& args, const ModelConfig* draft_config) {
  KvCacheSize size;
  Expected<kernels::KvCacheDtype> dtype =
      ParseKvCacheDtype(args.kv_cache_dtype, kernels::KvCacheDtype::kFloat32);
  if (!dtype) return Error{dtype.error()};
  size.dtype = *dtype;
  size.bytes_per_block = KvStorage::BytesPerBlock({.num_layers = config.num_layers,
                                                   .block_size = args.block_size,
                                                   .num_kv_heads = config.num_kv_heads,
                                                   .head_dim = config.head_dim,
                                                   .dtype = size.dtype,
                                                   .layout = layout});
  int64_t num_lookahead_tokens = 0;
  if (draft_config != nullptr) {
    size.draft_bytes_per_block =
        KvStorage::BytesPerBlock({.num_layers = draft_config->num_layers,
                                  .block_size = args.block_size,
                                  .num_kv_heads = draft_config->num_kv_heads,
                                  .head_dim = draft_config->head_dim,
                                  .dtype = size.dtype});
    size.bytes_per_block += size.draft_bytes_per_block;
    if (args.speculative_config) {
      num_lookahead_tokens = args.speculative_config->num_speculative_tokens;
    }
  }
  // A layout with a sliding group reserves block 0 as the null block.
  const int64_t num_null_blocks = layout.has_sliding_group() ? 1 : 0;
  const int64_t blocks_per_request = MaxBlocksPerRequest(layout, args, num_lookahead_tokens);
  const int64_t blocks_for_all_seqs = args.max_num_seqs * blocks_per_request + num_null_blocks;
  const int64_t kv_cache_memory_bytes =
      args.kv_cache_memory_bytes.value_or(kDefaultKvCacheMemoryBytes);
  size.num_blocks = std::min(kv_cache_memory_bytes / size.bytes_per_block, blocks_for_all_seqs);
  size.capped_by_sequences = size.num_blocks == blocks_for_all_seqs;
  if (size.num_blocks < 1 + num_null_blocks) {
    return Error{"--kv-cache-memory-bytes is too small for one KV block (" +
                 std::to_string(size.bytes_per_block) + " bytes)"};
  }
  if (size.num_blocks - num_null_blocks < blocks_per_request) {
    return Error{"the KV cache holds " + std::to_string(size.num_blocks - num_null_blocks) +
                 " blocks, fewer than the " + std::to_string(blocks_per_request) +
                 " a sequence of max_model_len (" + std::to_string(args.max_model_len) +
                 ") needs; raise --kv-cache-memory-bytes or lower --max-model-len"};
  }
  return size;
}

}  // namespace vllm
