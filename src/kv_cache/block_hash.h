// Prefix-caching hashes of full KV blocks. A block's hash chains its parent's hash, its token ids
// and extra keys (cache salt, LoRA id), so equal hashes mean equal prefixes up to collisions;
// a hit is confirmed by comparing token ids.
#pragma once

#include <cstdint>
#include <span>
#include <string>

namespace vllm {

using BlockHash = uint64_t;

// Extra inputs that must match for two blocks to share KV (vLLM's extra keys).
struct BlockHashExtras {
  std::string cache_salt;  // only mixed into the first block, as vLLM does
  int64_t lora_id = 0;
};

// hash(parent, tokens, extras); parent is 0 for the first block.
BlockHash HashBlockTokens(BlockHash parent, std::span<const int32_t> token_ids,
                          const BlockHashExtras& extras);

}  // namespace vllm
