// A request as the scheduler sees it: token ids, how many are computed, and its status.
// Only the scheduler's update step advances num_computed_tokens.
#pragma once

#include <chrono>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "kv_cache/block_hash.h"
#include "vllm/sampling_params.h"

namespace vllm {

// Ordered: every status after kPreempted is a finished one.
enum class RequestStatus {
  kWaiting,
  kRunning,
  kPreempted,
  kFinishedStopped,       // EOS, a stop token id or a stop string
  kFinishedLengthCapped,  // max_tokens or max_model_len
  kFinishedAborted,       // the client went away or asked
  kFinishedIgnored,       // refused at admission
};

inline bool IsFinished(RequestStatus status) { return status > RequestStatus::kPreempted; }

// vLLM's finish_reason strings: "stop", "length", "abort"; empty while unfinished.
const char* FinishReason(RequestStatus status);

struct Request {
  std::string request_id;
  std::vector<int32_t> prompt_token_ids;
  std::vector<int32_t> output_token_ids;
  SamplingParams params;
  std::optional<int32_t> eos_token_id;
  int priority = 0;            // lower is scheduled first under the priority policy
  uint64_t arrival_order = 0;  // set by the scheduler: ties broken first come, first served
  BlockHashExtras cache_keys;

  RequestStatus status = RequestStatus::kWaiting;
  int64_t num_computed_tokens = 0;
  int64_t num_cached_tokens = -1;  // prefix-cache hit on first scheduling; -1 until then
  std::chrono::steady_clock::time_point arrival_time = std::chrono::steady_clock::now();
  // Seconds from arrival to first scheduling, set then; the step's output takes it.
  std::optional<double> queue_seconds;
  int num_preemptions = 0;
  std::optional<int32_t> stop_token_id;  // the stop_token_ids entry that finished it
  // Draft tokens proposed after the last output token (speculative decoding), verified the next
  // time it is scheduled; never part of num_tokens().
  std::vector<int32_t> spec_token_ids;
  // Pooling (embed, classify, score): prefill only, scheduled whole (never chunked, never from
  // the prefix cache), finished in the step that computes its prompt.
  bool is_pooling = false;
  // Encoders attend within the step's packed batch: no KV blocks are allocated or cached.
  bool uses_kv_cache = true;

  int64_t num_prompt_tokens() const { return static_cast<int64_t>(prompt_token_ids.size()); }
  int64_t num_output_tokens() const { return static_cast<int64_t>(output_token_ids.size()); }
  int64_t num_tokens() const { return num_prompt_tokens() + num_output_tokens(); }
  // Token i of prompt + output.
  int32_t token(int64_t i) const {
    return i < num_prompt_tokens() ? prompt_token_ids[i]
                                   : output_token_ids[i - num_prompt_tokens()];
  }
  std::vector<int32_t> all_token_ids() const;
};

}  // namespace vllm
