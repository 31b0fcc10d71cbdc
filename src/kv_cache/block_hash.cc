#include "kv_cache/block_hash.h"

#include "common/byte_hash.h"

namespace vllm {

BlockHash HashBlockTokens(BlockHash parent, std::span<const int32_t> token_ids,
                          const BlockHashExtras& extras) {
  uint64_t hash = FeedBytes(kByteHashSeed, &parent, sizeof(parent));
  hash = FeedBytes(hash, token_ids.data(), token_ids.size_bytes());
  if (parent == 0 && !extras.cache_salt.empty()) {
    hash = FeedBytes(hash, extras.cache_salt.data(), extras.cache_salt.size());
  }
  hash = FeedBytes(hash, &extras.lora_id, sizeof(extras.lora_id));
  BlockHash result = FinalizeHash(hash);
  return result == 0 ? 1 : result;  // 0 is reserved for "no parent"
}

}  // namespace vllm
