// The LoRA adapters of the scheduler's queues, for vLLM's vllm:lora_requests_info.
#include <algorithm>

#include "sched/scheduler.h"

namespace vllm {
namespace {

template <typename Queue>
std::vector<int64_t> DistinctLoraIds(const Queue& requests) {
  std::vector<int64_t> ids;
  for (const Request* request : requests) {
    const int64_t id = request->cache_keys.lora_id;
    if (id > 0 && std::find(ids.begin(), ids.end(), id) == ids.end()) ids.push_back(id);
  }
  return ids;
}

}  // namespace

std::vector<int64_t> Scheduler::running_lora_ids() const { return DistinctLoraIds(running_); }

std::vector<int64_t> Scheduler::waiting_lora_ids() const { return DistinctLoraIds(waiting_); }

}  // namespace vllm
