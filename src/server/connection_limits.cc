#include "server/connection_limits.h"

#include <sys/resource.h>

#include <algorithm>

namespace vllm::server {

bool SharedBudget::Claim::GrowTo(size_t amount) {
  if (amount <= amount_) return true;
  if (!budget_.TryTake(amount - amount_)) return false;
  amount_ = amount;
  return true;
}

void SharedBudget::Claim::Reset() {
  budget_.Give(amount_);
  amount_ = 0;
}

bool SharedBudget::TryTake(size_t amount) {
  size_t used = used_.load(std::memory_order_relaxed);
  do {
    if (amount > capacity_ - used) return false;
  } while (!used_.compare_exchange_weak(used, used + amount, std::memory_order_relaxed));
  return true;
}

size_t RaiseOpenFileLimit() {
  rlimit limit{};
  if (getrlimit(RLIMIT_NOFILE, &limit) != 0) return 1024;
  if (limit.rlim_cur < limit.rlim_max) {
    rlimit raised = limit;
    raised.rlim_cur = limit.rlim_max;
    // Fails when the hard limit is unlimited and above the kernel's nr_open: keep the soft one.
    if (setrlimit(RLIMIT_NOFILE, &raised) == 0) limit = raised;
  }
  return static_cast<size_t>(limit.rlim_cur);
}

size_t DefaultMaxConnections(size_t open_file_limit) {
  constexpr size_t kReservedFiles = 64;
  constexpr size_t kMaxDefaultConnections = 4096;
  const size_t available =
      open_file_limit > 2 * kReservedFiles ? open_file_limit - kReservedFiles : open_file_limit / 2;
  return std::clamp<size_t>(available, 1, kMaxDefaultConnections);
}

}  // namespace vllm::server
