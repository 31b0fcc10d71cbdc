#include "server/serving_context.h"

namespace vllm::server {

uint64_t ActiveRequests::Add(std::function<void()> cancel) {
  std::lock_guard<std::mutex> lock(mutex_);
  const uint64_t handle = next_handle_++;
  cancels_.emplace(handle, std::move(cancel));
  return handle;
}

void ActiveRequests::Remove(uint64_t handle) {
  std::lock_guard<std::mutex> lock(mutex_);
  cancels_.erase(handle);
}

int ActiveRequests::count() const {
  std::lock_guard<std::mutex> lock(mutex_);
  return static_cast<int>(cancels_.size());
}

void ActiveRequests::CancelAll() {
  std::map<uint64_t, std::function<void()>> cancels;
  {
    std::lock_guard<std::mutex> lock(mutex_);
    cancels = cancels_;
  }
  for (auto& [handle, cancel] : cancels) cancel();
}

}  // namespace vllm::server
