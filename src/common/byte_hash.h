// A 64-bit hash of bytes: FNV-1a, then a SplitMix64 finalizer for avalanche. Prefix-cache block
// hashes and checksums of the project's own files; it guards against accidents (any one changed
// byte changes it), not against someone forging a collision.
#pragma once

#include <cstddef>
#include <cstdint>

namespace vllm {

inline constexpr uint64_t kByteHashSeed = 0xcbf29ce484222325ull;  // FNV-1a's offset basis

// Folds `size` bytes at `data` into `hash` (kByteHashSeed to start); feeding a sequence in pieces
// gives the hash of the whole.
inline uint64_t FeedBytes(uint64_t hash, const void* data, size_t size) {
  constexpr uint64_t kFnvPrime = 0x100000001b3ull;
  const auto* bytes = static_cast<const unsigned char*>(data);
  for (size_t i = 0; i < size; ++i) hash = (hash ^ bytes[i]) * kFnvPrime;
  return hash;
}

// The hash of what was fed: every bit of `hash` reaches every bit of the result.
inline uint64_t FinalizeHash(uint64_t hash) {
  hash = (hash ^ (hash >> 30)) * 0xbf58476d1ce4e5b9ull;
  hash = (hash ^ (hash >> 27)) * 0x94d049bb133111ebull;
  return hash ^ (hash >> 31);
}

}  // namespace vllm
