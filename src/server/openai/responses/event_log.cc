#include "server/openai/responses/event_log.h"

#include <utility>

namespace vllm::server {

void ResponseEventLogs::Create(const std::string& id) {
  std::lock_guard lock(mutex_);
  if (auto it = logs_.find(id); it != logs_.end()) Forget(it);
  while (!creation_order_.empty() && logs_.size() >= options_.max_logs) {
    Forget(logs_.find(creation_order_.front()));
  }
  creation_order_.push_back(id);
  logs_[id].age = std::prev(creation_order_.end());
}

void ResponseEventLogs::Append(const std::string& id, std::string event) {
  std::lock_guard lock(mutex_);
  auto it = logs_.find(id);
  if (it == logs_.end() || it->second.closed) return;
  Log& log = it->second;
  for (auto& [handle, follower] : log.followers) follower(event, false);
  log.num_bytes += event.size();
  total_bytes_ += event.size();
  log.events.push_back(std::move(event));
  // The newest event stays even alone over the cap: followers resume from it.
  while (log.events.size() > 1 && log.num_bytes > options_.max_bytes_per_log) {
    DropOldestEvent(log);
  }
  while (total_bytes_ > options_.max_total_bytes && creation_order_.front() != id) {
    Forget(logs_.find(creation_order_.front()));
  }
}

void ResponseEventLogs::Close(const std::string& id) {
  std::lock_guard lock(mutex_);
  auto it = logs_.find(id);
  if (it == logs_.end() || it->second.closed) return;
  it->second.closed = true;
  for (auto& [handle, follower] : it->second.followers) follower("", true);
  it->second.followers.clear();
}

Expected<uint64_t> ResponseEventLogs::Follow(const std::string& id, int64_t starting_after,
                                             Follower follower) {
  std::lock_guard lock(mutex_);
  auto it = logs_.find(id);
  if (it == logs_.end()) {
    return Error{"Response with id '" + id +
                 "' has no event stream: only background responses created with stream=true "
                 "can be streamed again, and only while the server keeps their events."};
  }
  Log& log = it->second;
  const int64_t first_wanted = starting_after + 1;
  if (first_wanted < log.first_sequence_number) {
    return Error{"starting_after: events before sequence number " +
                 std::to_string(log.first_sequence_number) + " are no longer kept for response '" +
                 id + "'."};
  }
  const int64_t next_sequence_number =
      log.first_sequence_number + static_cast<int64_t>(log.events.size());
  for (int64_t number = first_wanted; number < next_sequence_number; ++number) {
    follower(log.events[number - log.first_sequence_number], false);
  }
  if (log.closed) {
    follower("", true);
    return next_handle_++;  // nothing left to follow: Unfollow finds nothing
  }
  const uint64_t handle = next_handle_++;
  log.followers.emplace(handle, std::move(follower));
  return handle;
}

void ResponseEventLogs::Unfollow(const std::string& id, uint64_t handle) {
  std::lock_guard lock(mutex_);
  if (auto it = logs_.find(id); it != logs_.end()) it->second.followers.erase(handle);
}

size_t ResponseEventLogs::num_logs() const {
  std::lock_guard lock(mutex_);
  return logs_.size();
}

size_t ResponseEventLogs::num_bytes() const {
  std::lock_guard lock(mutex_);
  return total_bytes_;
}

void ResponseEventLogs::DropOldestEvent(Log& log) {
  log.num_bytes -= log.events.front().size();
  total_bytes_ -= log.events.front().size();
  log.events.pop_front();
  ++log.first_sequence_number;
}

void ResponseEventLogs::Forget(std::unordered_map<std::string, Log>::iterator it) {
  Log& log = it->second;
  for (auto& [handle, follower] : log.followers) follower("", true);
  total_bytes_ -= log.num_bytes;
  creation_order_.erase(log.age);
  logs_.erase(it);
}

}  // namespace vllm::server
