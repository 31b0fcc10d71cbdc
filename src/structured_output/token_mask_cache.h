// A bounded least-recently-used cache of token bitmasks keyed by the canonical form of a parser
// state; shared by every matcher of a compiled grammar, so it is mutex-protected.
#pragma once

#include <cstdint>
#include <list>
#include <mutex>
#include <span>
#include <unordered_map>
#include <vector>

namespace vllm {

class TokenMaskCache {
 public:
  explicit TokenMaskCache(size_t max_entries) : max_entries_(max_entries) {}

  // Copies the mask cached for `key` into `mask` (same size); false when there is none.
  bool Lookup(std::span<const int32_t> key, std::span<uint32_t> mask);
  void Insert(std::span<const int32_t> key, std::span<const uint32_t> mask);
  size_t size() const;

 private:
  struct Entry {
    std::vector<int32_t> key;
    std::vector<uint32_t> mask;
  };
  struct KeyHash {
    size_t operator()(std::span<const int32_t> key) const;
  };
  struct KeyEqual {
    bool operator()(std::span<const int32_t> a, std::span<const int32_t> b) const;
  };

  const size_t max_entries_;
  mutable std::mutex mutex_;
  std::list<Entry> entries_;  // most recently used first
  // Keys are spans over the entries' own key vectors.
  std::unordered_map<std::span<const int32_t>, std::list<Entry>::iterator, KeyHash, KeyEqual>
      index_;
};

}  // namespace vllm
