#include "server/openai/responses/store.h"

namespace vllm::server {

ApiError ResponseNotFound(const std::string& id) {
  return ApiError::NotFound("Response with id '" + id + "' not found.");
}

void ResponseStore::Put(const std::string& id, StoredResponse stored) {
  const size_t num_bytes = DumpJson(stored.response).size() + DumpJson(stored.conversation).size();
  std::lock_guard lock(mutex_);
  auto it = entries_.find(id);
  if (it != entries_.end()) {
    if (it->second.stored.response.value("status", "") == "cancelled") return;
    num_bytes_ -= it->second.num_bytes;
    it->second.stored = std::move(stored);
    it->second.num_bytes = num_bytes;
    Touch(it->second);
  } else {
    recency_.push_front(id);
    entries_.emplace(id, Entry{std::move(stored), num_bytes, recency_.begin()});
  }
  num_bytes_ += num_bytes;
  EvictOverflow();
}

std::optional<StoredResponse> ResponseStore::Get(const std::string& id) {
  std::lock_guard lock(mutex_);
  auto it = entries_.find(id);
  if (it == entries_.end()) return std::nullopt;
  Touch(it->second);
  return it->second.stored;
}

std::optional<ApiError> ResponseStore::Cancel(const std::string& id, Json* response) {
  std::lock_guard lock(mutex_);
  auto it = entries_.find(id);
  if (it == entries_.end()) return ResponseNotFound(id);
  Json& stored = it->second.stored.response;
  const std::string status = stored.value("status", "");
  if (status != "queued" && status != "in_progress") {
    return ApiError::BadRequest("Cannot cancel a synchronous response.");
  }
  stored["status"] = "cancelled";
  Touch(it->second);
  *response = stored;
  return std::nullopt;
}

size_t ResponseStore::size() const {
  std::lock_guard lock(mutex_);
  return entries_.size();
}

size_t ResponseStore::num_bytes() const {
  std::lock_guard lock(mutex_);
  return num_bytes_;
}

void ResponseStore::Touch(Entry& entry) {
  recency_.splice(recency_.begin(), recency_, entry.recency);
}

void ResponseStore::EvictOverflow() {
  // The newest entry stays even when it alone is over the byte cap: its creator may read it.
  while (entries_.size() > 1 &&
         (entries_.size() > options_.max_responses || num_bytes_ > options_.max_bytes)) {
    auto oldest = entries_.find(recency_.back());
    num_bytes_ -= oldest->second.num_bytes;
    entries_.erase(oldest);
    recency_.pop_back();
  }
}

}  // namespace vllm::server
