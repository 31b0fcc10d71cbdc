// Prometheus metrics with vLLM's names (vllm:...), each labelled with model_name. Thread-safe.
#pragma once

#include <array>
#include <cstdint>
#include <map>
#include <mutex>
#include <string>
#include <vector>

#include "vllm/async_llm.h"

namespace vllm::server {

// A cumulative histogram with fixed bucket upper bounds.
class Histogram {
 public:
  explicit Histogram(std::vector<double> upper_bounds)
      : upper_bounds_(std::move(upper_bounds)), counts_(upper_bounds_.size(), 0) {}
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
};

class Metrics {
 public:
  explicit Metrics(std::string model_name);

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
  const std::string labels_;  // model_name="..."
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
