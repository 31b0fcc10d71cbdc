#include "kv_cache/block_hash.h"

namespace vllm {
namespace {
// 64-bit FNV-1a over bytes, then a SplitMix64 finalizer for avalanche.
constexpr uint64_t kFnvOffset = 0xcbf29ce484222325ull;
constexpr uint64_t kFnvPrime = 0x100000001b3ull;

uint64_t FeedBytes(uint64_t hash, const void* data, size_t size) {
  const auto* bytes = static_cast<const unsigned char*>(data);
  for (size_t i = 0; i < size; ++i) hash = (hash ^ bytes[i]) * kFnvPrime;
  return hash;
}

uint64_t Finalize(uint64_t x) {
  x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ull;
  x = (x ^ (x >> 27)) * 0x94d049bb133111ebull;
  return x ^ (x >> 31);
}
}  // namespace

BlockHash HashBlockTokens(BlockHash parent, std::span<const int32_t> token_ids,
                          const BlockHashExtras& extras) {
  uint64_t hash = FeedBytes(kFnvOffset, &parent, sizeof(parent));
  hash = FeedBytes(hash, token_ids.data(), token_ids.size_bytes());
  if (parent == 0 && !extras.cache_salt.empty()) {
    hash = FeedBytes(hash, extras.cache_salt.data(), extras.cache_salt.size());
  }
  hash = FeedBytes(hash, &extras.lora_id, sizeof(extras.lora_id));
  BlockHash result = Finalize(hash);
  return result == 0 ? 1 : result;  // 0 is reserved for "no parent"
}

}  // namespace vllm
