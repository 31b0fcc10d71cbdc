// The responses /v1/responses keeps (store: true) for GET /v1/responses/{id}, for
// previous_response_id and for background requests: in memory, bounded by a count and a byte
// total, the least recently used evicted first. vLLM's store grows without bound; this one
// forgets old responses instead (their ids then answer 404).
#pragma once

#include <cstddef>
#include <list>
#include <mutex>
#include <optional>
#include <string>
#include <unordered_map>

#include "server/openai/api_error.h"
#include "server/openai/json.h"

namespace vllm::server {

struct StoredResponse {
  Json response;      // the response object, as GET returns it
  Json conversation;  // its messages (chat shape) with its output appended, for continuations
};

class ResponseStore {
 public:
  struct Options {
    size_t max_responses = 1024;
    size_t max_bytes = size_t{64} << 20;  // of the responses and conversations, serialized
  };

  ResponseStore() : ResponseStore(Options{}) {}
  explicit ResponseStore(Options options) : options_(options) {}

  // Adds or replaces `id`, unless it was cancelled (a background request's late result).
  void Put(const std::string& id, StoredResponse stored);
  // The response and its conversation; nullopt when unknown (never stored, or evicted).
  std::optional<StoredResponse> Get(const std::string& id);
  // Marks a queued or in-progress response cancelled and returns it: a 404 for an unknown id,
  // a 400 for one that is not running in the background.
  std::optional<ApiError> Cancel(const std::string& id, Json* response);

  size_t size() const;
  size_t num_bytes() const;

 private:
  struct Entry {
    StoredResponse stored;
    size_t num_bytes = 0;
    std::list<std::string>::iterator recency;  // in recency_, most recent first
  };

  void Touch(Entry& entry);
  void EvictOverflow();

  const Options options_;
  mutable std::mutex mutex_;
  std::unordered_map<std::string, Entry> entries_;
  std::list<std::string> recency_;
  size_t num_bytes_ = 0;
};

// vLLM's 404 for a response id the store does not hold.
ApiError ResponseNotFound(const std::string& id);

}  // namespace vllm::server
