#include "lora/lora_cache.h"

namespace vllm::lora {

Expected<std::unique_ptr<LoraCache>> LoraCache::Create(LoraCacheOptions options) {
  if (options.max_cpu_loras < 1) {
    return Error{"max_cpu_loras must be at least 1, got " + std::to_string(options.max_cpu_loras)};
  }
  return std::unique_ptr<LoraCache>(new LoraCache(std::move(options)));
}

Expected<LoraCache::Entry*> LoraCache::FindLocked(const LoraRequest& request) {
  for (auto& [id, entry] : entries_) {
    const LoraRequest& held = entry.request;
    if (id != request.lora_int_id && held.lora_name == request.lora_name) {
      return Error{"LoRA adapter '" + request.lora_name + "' is already loaded with id " +
                   std::to_string(id)};
    }
  }
  auto it = entries_.find(request.lora_int_id);
  if (it == entries_.end()) return static_cast<Entry*>(nullptr);
  const LoraRequest& held = it->second.request;
  if (held.lora_name != request.lora_name || held.lora_path != request.lora_path) {
    return Error{"LoRA id " + std::to_string(request.lora_int_id) + " is already loaded as '" +
                 held.lora_name + "' from " + held.lora_path + ", not '" + request.lora_name +
                 "' from " + request.lora_path};
  }
  return &it->second;
}

std::shared_ptr<const LoraWeights> LoraCache::UseLocked(Entry* entry) {
  recency_.splice(recency_.begin(), recency_, entry->recency);
  return entry->weights;
}

Expected<std::shared_ptr<const LoraWeights>> LoraCache::Get(const LoraRequest& request) {
  if (request.lora_int_id < 1) {
    return Error{"lora_int_id must be greater than 0, got " + std::to_string(request.lora_int_id)};
  }
  {
    std::lock_guard lock(mutex_);
    auto held = FindLocked(request);
    if (!held) return Error{held.error()};
    if (*held != nullptr) return UseLocked(*held);
  }
  // Loading takes long: other adapters stay usable meanwhile. Two threads that load the same
  // adapter at once keep the first one in.
  auto loaded = LoadLoraAdapter(request, options_.base, options_.load);
  if (!loaded) return Error{loaded.error()};
  std::lock_guard lock(mutex_);
  auto held = FindLocked(request);
  if (!held) return Error{held.error()};
  if (*held != nullptr) return UseLocked(*held);
  recency_.push_front(request.lora_int_id);
  entries_[request.lora_int_id] = Entry{request, *loaded, recency_.begin()};
  while (static_cast<int64_t>(entries_.size()) > options_.max_cpu_loras) {
    entries_.erase(recency_.back());
    recency_.pop_back();
  }
  return *loaded;
}

bool LoraCache::Remove(int64_t lora_int_id) {
  std::lock_guard lock(mutex_);
  auto it = entries_.find(lora_int_id);
  if (it == entries_.end()) return false;
  recency_.erase(it->second.recency);
  entries_.erase(it);
  return true;
}

std::vector<int64_t> LoraCache::Ids() const {
  std::lock_guard lock(mutex_);
  return {recency_.begin(), recency_.end()};
}

}  // namespace vllm::lora
