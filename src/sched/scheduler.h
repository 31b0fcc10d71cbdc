// vLLM v1's scheduler: one token budget per step, running requests first, then waiting ones,
// each asking for num_tokens - num_computed_tokens capped by what is left. Prefill and decode are
// the same thing with different counts, so chunked prefill falls out. When the KV cache runs out,
// the latest-admitted running request is preempted (freed, recomputed later).
#pragma once

#include <cstdint>
#include <deque>
#include <map>
#include <memory>
#include <span>
#include <string>
#include <vector>

#include "common/expected.h"
#include "kv_cache/kv_cache_manager.h"
#include "sched/request.h"

namespace vllm {

enum class SchedulingPolicy { kFcfs, kPriority };

struct SchedulerConfig {
  int max_num_seqs = 256;
  int64_t max_num_batched_tokens = 2048;
  int64_t max_model_len = 2048;
  SchedulingPolicy policy = SchedulingPolicy::kFcfs;
  // Slots allocated past each request's scheduled tokens (vLLM's num_lookahead_tokens): a draft
  // model writes the KV of its proposals there before they are verified. Capped at max_model_len.
  int64_t num_lookahead_tokens = 0;
  // The most distinct LoRA adapters (Request::cache_keys.lora_id > 0) among the running requests
  // (vLLM's max_loras); a waiting request whose adapter would exceed it is skipped for the step.
  // 0: no limit.
  int max_loras = 0;
};

struct ScheduledRequest {
  Request* request;
  int64_t num_new_tokens;  // tokens computed for it this step, spec_token_ids included
  // Its block table in each KV cache group after allocation: [num_groups][num_table_blocks].
  KvCacheManager::BlockTables block_tables;
  // The drafts computed after the request's tokens (the last of the num_new_tokens) to be
  // verified; the scheduler moved them out of the request.
  std::vector<int32_t> spec_token_ids;
};

struct SchedulerOutput {
  std::vector<ScheduledRequest> scheduled;  // running ones first, then newly admitted ones
  int64_t total_num_scheduled_tokens = 0;
  std::vector<std::string> preempted_request_ids;
};

class Scheduler {
 public:
  Scheduler(const SchedulerConfig& config, KvCacheManager& kv_cache);

  // Admission: a prompt of max_model_len tokens or more is refused with vLLM's message.
  Status AddRequest(std::unique_ptr<Request> request);
  SchedulerOutput Schedule();
  // Advances num_computed_tokens of every scheduled request over the tokens whose KV is valid
  // (rejected drafts' slots are overwritten later), appends the sampled tokens one by one,
  // checking the stop conditions after each, caches the full blocks and frees finished requests.
  // sampled_token_ids: [output.scheduled.size()], each request's accepted drafts then the token
  // sampled after them (empty when its chunk did not reach the end of its tokens). The tokens
  // after a stop are dropped: each entry is trimmed to the tokens appended, the request's new
  // tokens of the step (as vLLM's update_from_output trims them). Returns the requests that
  // finished this step, their blocks freed, released to the caller.
  std::vector<std::unique_ptr<Request>> Update(const SchedulerOutput& output,
                                               std::span<std::vector<int32_t>> sampled_token_ids);
  // Sets the drafts a running request verifies the next time it is scheduled (vLLM's
  // update_draft_token_ids); unknown or waiting requests are ignored. Schedule trims them to
  // what max_model_len and max_tokens leave room for.
  void UpdateDraftTokens(const std::string& request_id, std::vector<int32_t> draft_token_ids);
  // Finishes requests for a reason decided outside (stop strings, aborts); unknown ids are ignored.
  // Call between steps only, never between Schedule and Update.
  std::vector<std::unique_ptr<Request>> FinishRequests(std::span<const std::string> request_ids,
                                                       RequestStatus status);

  bool HasUnfinishedRequests() const { return !running_.empty() || !waiting_.empty(); }
  int num_running() const { return static_cast<int>(running_.size()); }
  int num_waiting() const { return static_cast<int>(waiting_.size()); }
  int64_t num_preemptions() const { return num_preemptions_; }
  const Request* Find(const std::string& request_id) const;
  // The LoRA adapters (cache_keys.lora_id > 0) of the running and of the waiting requests, each
  // once, in queue order: vLLM's running_lora_adapters / waiting_lora_adapters
  // (scheduler_lora_stats.cc).
  std::vector<int64_t> running_lora_ids() const;
  std::vector<int64_t> waiting_lora_ids() const;

 private:
  bool Precedes(const Request& a, const Request& b) const;
  void InsertWaiting(Request* request);
  Request* PickPreemptionVictim() const;
  void Preempt(Request* request);
  std::unique_ptr<Request> Release(Request* request, RequestStatus status);
  bool CheckStop(Request& request) const;
  // How many of the request's drafts fit: its last position stays below max_model_len - 1 and
  // its output within max_tokens.
  int64_t NumSchedulableDrafts(const Request& request) const;
  // The new tokens to allocate slots for: the scheduled ones, then the lookahead slots after them
  // while the request stays within max_model_len tokens.
  int64_t NumTokensToAllocate(int64_t num_computed_tokens, int64_t num_new_tokens) const;

  SchedulerConfig config_;
  KvCacheManager& kv_cache_;
  std::map<std::string, std::unique_ptr<Request>> requests_;
  std::deque<Request*> waiting_;   // in scheduling order
  std::vector<Request*> running_;  // in admission order
  uint64_t next_arrival_order_ = 0;
  int64_t num_preemptions_ = 0;
};

}  // namespace vllm
