// Prometheus metrics with vLLM's names (vllm:...), each labelled with model_name and engine (vLLM
// 0.10's labels), and the older names (vLLM 0.6-0.8) that dashboards still query. Thread-safe.
#pragma once

#include <array>
#include <cstdint>
#include <map>
#include <mutex>
#include <string>
#include <utility>
#include <vector>

#include "vllm/async_llm.h"

namespace vllm::server {

// A cumulative histogram with fixed bucket upper bounds.
class Histogram {
 public:
  explicit Histogram(std::vector<double> upper_bounds)
      : upper_bounds_(std::move(upper_bounds)), counts_(upper_bounds_.size(), 0) {}
  // Observed elsewhere: `counts` per bucket (not cumulative), one more for those above the last.
  Histogram(std::vector<double> upper_bounds, const std::vector<uint64_t>& counts, double sum);
  void Observe(double value);
  // Appends the _bucket / _sum / _count lines for `name` with `labels` (`model_name="m"`).
  void Render(const std::string& name, const std::string& labels, std::string* out) const;

 private:
  std::vector<double> upper_bounds_;
  std::vector<uint64_t> counts_;  // per bucket, not cumulative
  uint64_t count_ = 0;
  double sum_ = 0.0;
};

// What one finished request reports.
struct RequestRecord {
  double queue_seconds = 0.0;  // added to the engine → first scheduled
  double e2e_seconds = 0.0;
  int64_t num_prompt_tokens = 0;
  int64_t num_generation_tokens = 0;
  std::vector<std::string> finish_reasons;  // one per sequence
  // The request's parameters: n and max_tokens (the one the engine ran with).
  int n = 1;
  int64_t max_tokens = 0;
  // The most tokens one of its sequences generated.
  int64_t max_num_generation_tokens = 0;
  // First scheduled → first token, first token → last token (vLLM's PREFILL and DECODE phases, as
  // the engine timed its steps).
  double prefill_seconds = 0.0;
  double decode_seconds = 0.0;
};

// vLLM's cache_config_info labels for `args`, with the KV blocks the engine made (num_gpu_blocks:
// the cache is in RAM here, there are no other blocks).
std::vector<std::pair<std::string, std::string>> CacheConfigInfo(const EngineArgs& args,
                                                                 int64_t num_kv_blocks);

class Metrics {
 public:
  // Token-count histograms get vLLM's 1-2-5 buckets up to `max_model_len`.
  Metrics(std::string model_name, int64_t max_model_len);

  // Exported as vllm:cache_config_info (a gauge at 1 with these labels).
  void SetCacheConfigInfo(std::vector<std::pair<std::string, std::string>> labels);

  void ObserveTimeToFirstToken(double seconds);
  void ObserveInterTokenLatency(double seconds);
  void AddTokens(int64_t num_prompt_tokens, int64_t num_generation_tokens);
  void FinishRequest(const RequestRecord& record);

  // The exposition text for GET /metrics.
  std::string Render(const EngineStatsSnapshot& stats) const;
  // vLLM's periodic log line; throughputs are over the time since the previous call.
  std::string LogLine(const EngineStatsSnapshot& stats);
  // vLLM's "SpecDecoding metrics" line over the drafts since the previous call; empty when there
  // were none.
  std::string SpecDecodingLogLine(const EngineStatsSnapshot& stats);

 private:
  // The names of vLLM 0.6-0.10 that Render adds (mutex_ held).
  void RenderOlderNames(const EngineStatsSnapshot& stats, std::string* out) const;

  const std::string labels_;  // model_name="...",engine="0"
  std::vector<std::pair<std::string, std::string>> cache_config_info_;
  mutable std::mutex mutex_;
  int64_t prompt_tokens_ = 0;
  int64_t generation_tokens_ = 0;
  std::map<std::string, int64_t> successes_by_reason_;
  Histogram time_to_first_token_;
  Histogram inter_token_latency_;
  Histogram e2e_latency_;
  Histogram queue_time_;
  Histogram request_prompt_tokens_;
  Histogram request_generation_tokens_;
  Histogram time_per_output_token_;          // every inter-token gap, vLLM 0.6's name
  Histogram request_time_per_output_token_;  // a request's decode time per token after the first
  Histogram request_params_n_;
  Histogram request_params_max_tokens_;
  Histogram request_max_num_generation_tokens_;
  Histogram request_prefill_time_;
  Histogram request_decode_time_;
  Histogram request_inference_time_;
  // For LogLine: totals at the previous call.
  int64_t logged_prompt_tokens_ = 0;
  int64_t logged_generation_tokens_ = 0;
  int64_t logged_queries_ = 0;
  int64_t logged_hits_ = 0;
  double logged_at_seconds_ = 0.0;
  // For SpecDecodingLogLine: the counters and time at its previous call.
  SpecDecodingStats logged_spec_decoding_;
  double spec_decoding_logged_at_seconds_ = 0.0;
};

}  // namespace vllm::server
