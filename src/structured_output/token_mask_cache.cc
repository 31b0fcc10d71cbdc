// The token mask LRU: a list in recency order and a hash index over the entries' keys.
#include "structured_output/token_mask_cache.h"

#include <algorithm>

namespace vllm {

size_t TokenMaskCache::KeyHash::operator()(std::span<const int32_t> key) const {
  uint64_t hash = 0xCBF29CE484222325ull ^ key.size();
  for (int32_t value : key) {
    hash = (hash ^ static_cast<uint32_t>(value)) * 0x100000001B3ull;
    hash ^= hash >> 29;
  }
  return static_cast<size_t>(hash);
}

bool TokenMaskCache::KeyEqual::operator()(std::span<const int32_t> a,
                                          std::span<const int32_t> b) const {
  return std::equal(a.begin(), a.end(), b.begin(), b.end());
}

bool TokenMaskCache::Lookup(std::span<const int32_t> key, std::span<uint32_t> mask) {
  std::lock_guard<std::mutex> lock(mutex_);
  auto it = index_.find(key);
  if (it == index_.end() || it->second->mask.size() != mask.size()) return false;
  entries_.splice(entries_.begin(), entries_, it->second);
  std::copy(it->second->mask.begin(), it->second->mask.end(), mask.begin());
  return true;
}

void TokenMaskCache::Insert(std::span<const int32_t> key, std::span<const uint32_t> mask) {
  if (max_entries_ == 0) return;
  std::lock_guard<std::mutex> lock(mutex_);
  if (index_.contains(key)) return;
  while (entries_.size() >= max_entries_) {
    index_.erase(std::span<const int32_t>(entries_.back().key));
    entries_.pop_back();
  }
  entries_.push_front(Entry{std::vector<int32_t>(key.begin(), key.end()),
                            std::vector<uint32_t>(mask.begin(), mask.end())});
  index_.emplace(std::span<const int32_t>(entries_.front().key), entries_.begin());
}

size_t TokenMaskCache::size() const {
  std::lock_guard<std::mutex> lock(mutex_);
  return entries_.size();
}

}  // namespace vllm
