#include "sched/scheduler.h"

#include <algorithm>
#include <chrono>
#include <cstddef>
#include <set>

namespace vllm {

Scheduler::Scheduler(const SchedulerConfig& config, KvCacheManager& kv_cache)
    : config_(config), kv_cache_(kv_cache) {}

Status Scheduler::AddRequest(std::unique_ptr<Request> request) {
  if (request->num_prompt_tokens() == 0) return Error{"The prompt cannot be empty."};
  // A pooling prompt may fill the context: nothing is generated after it.
  const int64_t max_prompt_tokens = config_.max_model_len - (request->is_pooling ? 0 : 1);
  if (request->num_prompt_tokens() > max_prompt_tokens) {
    return Error{"This model's maximum context length is " + std::to_string(config_.max_model_len) +
                 " tokens. However, your request has " +
                 std::to_string(request->num_prompt_tokens()) +
                 " input tokens. Please reduce the length of the input messages."};
  }
  if (requests_.count(request->request_id) != 0) {
    return Error{"request id '" + request->request_id + "' is already in use"};
  }
  request->arrival_order = next_arrival_order_++;
  request->status = RequestStatus::kWaiting;
  Request* raw = request.get();
  requests_.emplace(request->request_id, std::move(request));
  InsertWaiting(raw);
  return Status::Ok();
}

bool Scheduler::Precedes(const Request& a, const Request& b) const {
  if (config_.policy == SchedulingPolicy::kPriority && a.priority != b.priority) {
    return a.priority < b.priority;
  }
  return a.arrival_order < b.arrival_order;
}

void Scheduler::InsertWaiting(Request* request) {
  auto position =
      std::upper_bound(waiting_.begin(), waiting_.end(), request,
                       [this](const Request* a, const Request* b) { return Precedes(*a, *b); });
  waiting_.insert(position, request);
}

Request* Scheduler::PickPreemptionVictim() const {
  // FCFS: the latest admitted. Priority: the one scheduled last by (priority, arrival).
  if (config_.policy == SchedulingPolicy::kFcfs) return running_.back();
  return *std::max_element(running_.begin(), running_.end(),
                           [this](const Request* a, const Request* b) { return Precedes(*a, *b); });
}

void Scheduler::Preempt(Request* request) {
  kv_cache_.Free(request->request_id);
  running_.erase(std::find(running_.begin(), running_.end(), request));
  request->status = RequestStatus::kPreempted;
  request->num_computed_tokens = 0;  // recompute prompt + output so far
  request->spec_token_ids.clear();
  ++request->num_preemptions;
  ++num_preemptions_;
  InsertWaiting(request);
}

SchedulerOutput Scheduler::Schedule() {
  SchedulerOutput output;
  int64_t budget = config_.max_num_batched_tokens;

  // Running requests first, in admission order.
  for (size_t i = 0; i < running_.size() && budget > 0;) {
    Request* request = running_[i];
    // Drafts ride along after the request's last token (vLLM's spec decode scheduling).
    int64_t num_new = std::min(
        request->num_tokens() + NumSchedulableDrafts(*request) - request->num_computed_tokens,
        budget);
    if (num_new <= 0) {
      ++i;
      continue;
    }
    std::optional<KvCacheManager::BlockTables> tables;
    while (!(tables = kv_cache_.AllocateSlots(
                 request->request_id, request->num_computed_tokens,
                 NumTokensToAllocate(request->num_computed_tokens, num_new)))) {
      Request* victim = PickPreemptionVictim();
      // A victim scheduled earlier in this step gives its tokens back to the budget.
      auto scheduled = std::find_if(output.scheduled.begin(), output.scheduled.end(),
                                    [victim](const auto& s) { return s.request == victim; });
      if (scheduled != output.scheduled.end()) {
        budget += scheduled->num_new_tokens;
        output.scheduled.erase(scheduled);
      }
      output.preempted_request_ids.push_back(victim->request_id);
      Preempt(victim);
      if (victim == request) break;
    }
    if (!tables) continue;  // `request` itself was preempted; running_[i] is now the next one
    // The budget may have cut the drafts short.
    const int64_t num_drafts =
        std::max<int64_t>(0, request->num_computed_tokens + num_new - request->num_tokens());
    std::vector<int32_t> drafts(request->spec_token_ids.begin(),
                                request->spec_token_ids.begin() + num_drafts);
    request->spec_token_ids.clear();
    output.scheduled.push_back({request, num_new, *tables, std::move(drafts)});
    budget -= num_new;
    // Preemption may have removed requests before this one; continue after it.
    i = std::find(running_.begin(), running_.end(), request) - running_.begin() + 1;
  }

  // Then waiting requests, unless this step had to preempt; those whose adapter would exceed
  // max_loras stay where they are in the queue.
  std::set<int64_t> running_loras;
  for (const Request* request : running_) {
    if (request->cache_keys.lora_id > 0) running_loras.insert(request->cache_keys.lora_id);
  }
  size_t next_waiting = 0;
  while (output.preempted_request_ids.empty() && next_waiting < waiting_.size() && budget > 0 &&
         static_cast<int>(running_.size()) < config_.max_num_seqs) {
    Request* request = waiting_[next_waiting];
    const int64_t lora_id = request->cache_keys.lora_id;
    if (config_.max_loras > 0 && lora_id > 0 && !running_loras.contains(lora_id) &&
        static_cast<int>(running_loras.size()) >= config_.max_loras) {
      ++next_waiting;
      continue;
    }
    KvCacheManager::ComputedBlocks computed;
    // Prompt logprobs need every prompt position computed, so such requests skip the cache;
    // so do pooling requests, whose pooler reads every position's hidden state.
    if (request->num_computed_tokens == 0 && !request->params.prompt_logprobs &&
        !request->is_pooling) {
      computed = kv_cache_.GetComputedBlocks(request->all_token_ids(), request->cache_keys);
    }
    const int64_t num_computed = computed.num_computed_tokens;
    const int64_t num_new = std::min(request->num_tokens() - num_computed, budget);
    // A pooling request waits for a step with room for all of it.
    if (request->is_pooling && num_new < request->num_tokens()) break;
    std::optional<KvCacheManager::BlockTables> tables;
    if (request->uses_kv_cache) {
      tables = kv_cache_.AllocateSlots(request->request_id, num_computed,
                                       NumTokensToAllocate(num_computed, num_new), computed);
    } else {
      tables.emplace();
    }
    if (!tables) break;  // wait for blocks to be freed
    waiting_.erase(waiting_.begin() + static_cast<std::ptrdiff_t>(next_waiting));
    if (lora_id > 0) running_loras.insert(lora_id);
    request->num_computed_tokens = num_computed;
    if (request->num_cached_tokens < 0) {  // its first scheduling
      request->num_cached_tokens = num_computed;
      request->queue_seconds =
          std::chrono::duration<double>(std::chrono::steady_clock::now() - request->arrival_time)
              .count();
    }
    request->status = RequestStatus::kRunning;
    running_.push_back(request);
    output.scheduled.push_back({request, num_new, *tables});
    budget -= num_new;
  }
  for (const auto& s : output.scheduled) output.total_num_scheduled_tokens += s.num_new_tokens;
  return output;
}

bool Scheduler::CheckStop(Request& request) const {
  const int64_t num_output = request.num_output_tokens();
  const int32_t last = request.output_token_ids.back();
  if (num_output >= request.params.min_tokens) {
    if (!request.params.ignore_eos && request.eos_token_id && last == *request.eos_token_id) {
      request.status = RequestStatus::kFinishedStopped;
      return true;
    }
    const auto& stop_ids = request.params.stop_token_ids;
    if (std::find(stop_ids.begin(), stop_ids.end(), last) != stop_ids.end()) {
      request.status = RequestStatus::kFinishedStopped;
      request.stop_token_id = last;
      return true;
    }
  }
  if ((request.params.max_tokens && num_output >= *request.params.max_tokens) ||
      request.num_tokens() >= config_.max_model_len) {
    request.status = RequestStatus::kFinishedLengthCapped;
    return true;
  }
  return false;
}

int64_t Scheduler::NumSchedulableDrafts(const Request& request) const {
  auto num_drafts = static_cast<int64_t>(request.spec_token_ids.size());
  num_drafts = std::min(num_drafts, config_.max_model_len - 1 - request.num_tokens());
  if (request.params.max_tokens) {
    num_drafts =
        std::min<int64_t>(num_drafts, *request.params.max_tokens - request.num_output_tokens() - 1);
  }
  return std::max<int64_t>(0, num_drafts);
}

int64_t Scheduler::NumTokensToAllocate(int64_t num_computed_tokens, int64_t num_new_tokens) const {
  const int64_t num_tokens_after_step = num_computed_tokens + num_new_tokens;
  const int64_t num_lookahead =
      std::min(config_.num_lookahead_tokens, config_.max_model_len - num_tokens_after_step);
  return num_new_tokens + std::max<int64_t>(0, num_lookahead);
}

void Scheduler::UpdateDraftTokens(const std::string& request_id,
                                  std::vector<int32_t> draft_token_ids) {
  auto it = requests_.find(request_id);
  if (it == requests_.end() || it->second->status != RequestStatus::kRunning) return;
  it->second->spec_token_ids = std::move(draft_token_ids);
}

std::vector<std::unique_ptr<Request>> Scheduler::Update(
    const SchedulerOutput& output, std::span<std::vector<int32_t>> sampled_token_ids) {
  std::vector<std::unique_ptr<Request>> finished;
  for (size_t i = 0; i < output.scheduled.size(); ++i) {
    const ScheduledRequest& scheduled = output.scheduled[i];
    Request* request = scheduled.request;
    const auto num_drafts = static_cast<int64_t>(scheduled.spec_token_ids.size());
    request->num_computed_tokens += scheduled.num_new_tokens;  // the one place this advances
    if (request->is_pooling) {  // its prompt is computed: its output is the pooled vector
      finished.push_back(Release(request, RequestStatus::kFinishedStopped));
      continue;
    }
    std::vector<int32_t>& tokens = sampled_token_ids[i];
    if (request->num_computed_tokens - num_drafts < request->num_tokens() || tokens.empty()) {
      // A prefill chunk that did not reach the end of the prompt: no new tokens.
      tokens.clear();
      kv_cache_.CacheFullBlocks(request->request_id, request->all_token_ids(),
                                request->num_computed_tokens, request->cache_keys);
      continue;
    }
    // The KV of rejected drafts is invalid: those positions are computed again (their slots
    // overwritten) once the request's real tokens reach them.
    const auto num_accepted = static_cast<int64_t>(tokens.size()) - 1;
    request->num_computed_tokens -= std::max<int64_t>(0, num_drafts - num_accepted);
    bool stopped = false;
    size_t num_appended = 0;
    while (!stopped && num_appended < tokens.size()) {
      request->output_token_ids.push_back(tokens[num_appended++]);
      stopped = CheckStop(*request);
    }
    tokens.resize(num_appended);  // the tokens after a stop are dropped
    request->num_computed_tokens = std::min(request->num_computed_tokens, request->num_tokens());
    // Only accepted tokens' blocks are hashed: a block holding a rejected draft's KV is past
    // num_computed_tokens until recomputed.
    kv_cache_.CacheFullBlocks(request->request_id, request->all_token_ids(),
                              request->num_computed_tokens, request->cache_keys);
    if (stopped) finished.push_back(Release(request, request->status));
  }
  return finished;
}

std::unique_ptr<Request> Scheduler::Release(Request* request, RequestStatus status) {
  kv_cache_.Free(request->request_id);
  if (auto it = std::find(running_.begin(), running_.end(), request); it != running_.end()) {
    running_.erase(it);
  }
  if (auto it = std::find(waiting_.begin(), waiting_.end(), request); it != waiting_.end()) {
    waiting_.erase(it);
  }
  request->status = status;
  auto node = requests_.extract(request->request_id);
  return std::move(node.mapped());
}

std::vector<std::unique_ptr<Request>> Scheduler::FinishRequests(
    std::span<const std::string> request_ids, RequestStatus status) {
  std::vector<std::unique_ptr<Request>> finished;
  for (const auto& id : request_ids) {
    auto it = requests_.find(id);
    if (it == requests_.end()) continue;
    finished.push_back(Release(it->second.get(), status));
  }
  return finished;
}

const Request* Scheduler::Find(const std::string& request_id) const {
  auto it = requests_.find(request_id);
  return it == requests_.end() ? nullptr : it->second.get();
}

}  // namespace vllm
