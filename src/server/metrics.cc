#include "server/metrics.h"

#include <chrono>
#include <cstdio>
#include <cstdlib>

namespace vllm::server {
namespace {

const std::vector<double> kLatencyBuckets = {0.001, 0.005, 0.01, 0.02,  0.04,  0.06,  0.08, 0.1,
                                             0.25,  0.5,   0.75, 1.0,   2.5,   5.0,   7.5,  10.0,
                                             20.0,  40.0,  80.0, 160.0, 640.0, 2560.0};
const std::vector<double> kTokenLatencyBuckets = {0.01, 0.025, 0.05, 0.075, 0.1, 0.15, 0.2,
                                                  0.3,  0.4,   0.5,  0.75,  1.0, 2.5,  5.0,
                                                  7.5,  10.0,  20.0, 40.0,  80.0};
const std::vector<double> kRequestSecondsBuckets = {
    0.3,  0.5,  0.8,  1.0,  1.5,   2.0,   2.5,   5.0,   10.0,   15.0,  20.0,
    30.0, 40.0, 50.0, 60.0, 120.0, 240.0, 480.0, 960.0, 1920.0, 7680.0};
const std::vector<double> kTokenCountBuckets = {1,   2,    5,    10,   20,    50,    100,   200,
                                                500, 1000, 2000, 5000, 10000, 20000, 50000, 100000};

// The shortest text that reads back as `value` (0.04, not 0.040000000000000001).
std::string Number(double value) {
  char text[32];
  for (int precision = 6; precision <= 17; ++precision) {
    std::snprintf(text, sizeof(text), "%.*g", precision, value);
    if (std::strtod(text, nullptr) == value) break;
  }
  return text;
}

double NowSeconds() {
  return std::chrono::duration<double>(std::chrono::steady_clock::now().time_since_epoch()).count();
}

void Header(const char* name, const char* type, const char* help, std::string* out) {
  *out += std::string("# HELP ") + name + " " + help + "\n# TYPE " + name + " " + type + "\n";
}

}  // namespace

void Histogram::Observe(double value) {
  for (size_t i = 0; i < upper_bounds_.size(); ++i) {
    if (value <= upper_bounds_[i]) {
      ++counts_[i];
      break;
    }
  }
  ++count_;
  sum_ += value;
}

void Histogram::Render(const std::string& name, const std::string& labels, std::string* out) const {
  uint64_t cumulative = 0;
  for (size_t i = 0; i < upper_bounds_.size(); ++i) {
    cumulative += counts_[i];
    *out += name + "_bucket{" + labels + ",le=\"" + Number(upper_bounds_[i]) + "\"} " +
            std::to_string(cumulative) + "\n";
  }
  *out += name + "_bucket{" + labels + ",le=\"+Inf\"} " + std::to_string(count_) + "\n";
  *out += name + "_sum{" + labels + "} " + Number(sum_) + "\n";
  *out += name + "_count{" + labels + "} " + std::to_string(count_) + "\n";
}

Metrics::Metrics(std::string model_name)
    : labels_("model_name=\"" + model_name + "\""),
      time_to_first_token_(kLatencyBuckets),
      inter_token_latency_(kTokenLatencyBuckets),
      e2e_latency_(kRequestSecondsBuckets),
      queue_time_(kRequestSecondsBuckets),
      request_prompt_tokens_(kTokenCountBuckets),
      request_generation_tokens_(kTokenCountBuckets),
      logged_at_seconds_(NowSeconds()),
      spec_decoding_logged_at_seconds_(logged_at_seconds_) {}

void Metrics::ObserveTimeToFirstToken(double seconds) {
  std::lock_guard<std::mutex> lock(mutex_);
  time_to_first_token_.Observe(seconds);
}

void Metrics::ObserveInterTokenLatency(double seconds) {
  std::lock_guard<std::mutex> lock(mutex_);
  inter_token_latency_.Observe(seconds);
}

void Metrics::AddTokens(int64_t num_prompt_tokens, int64_t num_generation_tokens) {
  std::lock_guard<std::mutex> lock(mutex_);
  prompt_tokens_ += num_prompt_tokens;
  generation_tokens_ += num_generation_tokens;
}

void Metrics::FinishRequest(const RequestRecord& record) {
  std::lock_guard<std::mutex> lock(mutex_);
  for (const std::string& reason : record.finish_reasons) ++successes_by_reason_[reason];
  e2e_latency_.Observe(record.e2e_seconds);
  queue_time_.Observe(record.queue_seconds);
  request_prompt_tokens_.Observe(static_cast<double>(record.num_prompt_tokens));
  request_generation_tokens_.Observe(static_cast<double>(record.num_generation_tokens));
}

std::string Metrics::Render(const EngineStatsSnapshot& stats) const {
  std::lock_guard<std::mutex> lock(mutex_);
  std::string out;
  auto gauge = [&](const char* name, const char* help, double value) {
    Header(name, "gauge", help, &out);
    out += std::string(name) + "{" + labels_ + "} " + Number(value) + "\n";
  };
  auto counter = [&](const char* name, const char* help, double value) {
    Header(name, "counter", help, &out);
    out += std::string(name) + "{" + labels_ + "} " + Number(value) + "\n";
  };
  gauge("vllm:num_requests_running", "Number of requests in model execution batches.",
        stats.num_running);
  gauge("vllm:num_requests_waiting", "Number of requests waiting to be processed.",
        stats.num_waiting);
  gauge("vllm:kv_cache_usage_perc", "KV-cache usage. 1 means 100 percent usage.",
        stats.kv_cache_usage);
  counter("vllm:prefix_cache_queries_total",
          "Prefix cache queries, in terms of number of queried tokens.",
          static_cast<double>(stats.prefix_cache_queries));
  counter("vllm:prefix_cache_hits_total", "Prefix cache hits, in terms of number of cached tokens.",
          static_cast<double>(stats.prefix_cache_hits));
  counter("vllm:num_preemptions_total", "Cumulative number of preemption from the engine.",
          static_cast<double>(stats.num_preemptions));
  counter("vllm:prompt_tokens_total", "Number of prefill tokens processed.",
          static_cast<double>(prompt_tokens_));
  counter("vllm:generation_tokens_total", "Number of generation tokens processed.",
          static_cast<double>(generation_tokens_));
  const SpecDecodingStats& spec = stats.spec_decoding;
  counter("vllm:spec_decode_num_drafts_total", "Number of spec decoding drafts.",
          static_cast<double>(spec.num_drafts));
  counter("vllm:spec_decode_num_draft_tokens_total", "Number of draft tokens.",
          static_cast<double>(spec.num_draft_tokens));
  counter("vllm:spec_decode_num_accepted_tokens_total", "Number of accepted tokens.",
          static_cast<double>(spec.num_accepted_tokens));
  Header("vllm:spec_decode_num_accepted_tokens_per_pos_total", "counter",
         "Accepted tokens per draft position.", &out);
  for (size_t position = 0; position < spec.num_accepted_tokens_per_pos.size(); ++position) {
    out += "vllm:spec_decode_num_accepted_tokens_per_pos_total{" + labels_ + ",position=\"" +
           std::to_string(position) + "\"} " +
           std::to_string(spec.num_accepted_tokens_per_pos[position]) + "\n";
  }
  Header("vllm:request_success_total", "counter", "Count of successfully processed requests.",
         &out);
  for (const char* reason : {"stop", "length", "abort"}) {
    auto it = successes_by_reason_.find(reason);
    const int64_t count = it == successes_by_reason_.end() ? 0 : it->second;
    out += "vllm:request_success_total{finished_reason=\"" + std::string(reason) + "\"," + labels_ +
           "} " + std::to_string(count) + "\n";
  }
  auto histogram = [&](const char* name, const char* help, const Histogram& value) {
    Header(name, "histogram", help, &out);
    value.Render(name, labels_, &out);
  };
  histogram("vllm:time_to_first_token_seconds", "Histogram of time to first token in seconds.",
            time_to_first_token_);
  histogram("vllm:inter_token_latency_seconds", "Histogram of inter-token latency in seconds.",
            inter_token_latency_);
  histogram("vllm:e2e_request_latency_seconds", "Histogram of e2e request latency in seconds.",
            e2e_latency_);
  histogram("vllm:request_queue_time_seconds",
            "Histogram of time spent in WAITING phase for request.", queue_time_);
  histogram("vllm:request_prompt_tokens", "Number of prefill tokens processed.",
            request_prompt_tokens_);
  histogram("vllm:request_generation_tokens", "Number of generation tokens processed.",
            request_generation_tokens_);
  return out;
}

std::string Metrics::LogLine(const EngineStatsSnapshot& stats) {
  std::lock_guard<std::mutex> lock(mutex_);
  const double now = NowSeconds();
  const double elapsed = std::max(now - logged_at_seconds_, 1e-9);
  const double prompt_throughput =
      static_cast<double>(prompt_tokens_ - logged_prompt_tokens_) / elapsed;
  const double generation_throughput =
      static_cast<double>(generation_tokens_ - logged_generation_tokens_) / elapsed;
  const int64_t queries = stats.prefix_cache_queries - logged_queries_;
  const int64_t hits = stats.prefix_cache_hits - logged_hits_;
  const double hit_rate = queries > 0 ? 100.0 * static_cast<double>(hits) / queries : 0.0;
  logged_prompt_tokens_ = prompt_tokens_;
  logged_generation_tokens_ = generation_tokens_;
  logged_queries_ = stats.prefix_cache_queries;
  logged_hits_ = stats.prefix_cache_hits;
  logged_at_seconds_ = now;
  char line[320];
  std::snprintf(line, sizeof(line),
                "Engine 000: Avg prompt throughput: %.1f tokens/s, Avg generation throughput: "
                "%.1f tokens/s, Running: %d reqs, Waiting: %d reqs, KV cache usage: %.1f%%, "
                "Prefix cache hit rate: %.1f%%",
                prompt_throughput, generation_throughput, stats.num_running, stats.num_waiting,
                100.0 * stats.kv_cache_usage, hit_rate);
  return line;
}

std::string Metrics::SpecDecodingLogLine(const EngineStatsSnapshot& stats) {
  std::lock_guard<std::mutex> lock(mutex_);
  const SpecDecodingStats& total = stats.spec_decoding;
  const SpecDecodingStats& logged = logged_spec_decoding_;
  const int64_t num_drafts = total.num_drafts - logged.num_drafts;
  if (num_drafts <= 0) return "";
  const double now = NowSeconds();
  const double elapsed = std::max(now - spec_decoding_logged_at_seconds_, 1e-9);
  const int64_t num_draft_tokens = total.num_draft_tokens - logged.num_draft_tokens;
  const int64_t num_accepted = total.num_accepted_tokens - logged.num_accepted_tokens;
  std::string per_position;
  for (size_t position = 0; position < total.num_accepted_tokens_per_pos.size(); ++position) {
    const int64_t before = position < logged.num_accepted_tokens_per_pos.size()
                               ? logged.num_accepted_tokens_per_pos[position]
                               : 0;
    char rate[16];
    std::snprintf(rate, sizeof(rate), "%.3f",
                  static_cast<double>(total.num_accepted_tokens_per_pos[position] - before) /
                      static_cast<double>(num_drafts));
    per_position += (position == 0 ? "" : ", ") + std::string(rate);
  }
  char line[256];
  std::snprintf(line, sizeof(line),
                "SpecDecoding metrics: Mean acceptance length: %.2f, Accepted throughput: %.2f "
                "tokens/s, Drafted throughput: %.2f tokens/s, Accepted: %lld tokens, Drafted: "
                "%lld tokens, ",
                1.0 + static_cast<double>(num_accepted) / static_cast<double>(num_drafts),
                static_cast<double>(num_accepted) / elapsed,
                static_cast<double>(num_draft_tokens) / elapsed,
                static_cast<long long>(num_accepted), static_cast<long long>(num_draft_tokens));
  char acceptance[64];
  std::snprintf(acceptance, sizeof(acceptance), ", Avg Draft acceptance rate: %.1f%%",
                num_draft_tokens > 0 ? 100.0 * static_cast<double>(num_accepted) /
                                           static_cast<double>(num_draft_tokens)
                                     : 0.0);
  logged_spec_decoding_ = total;
  spec_decoding_logged_at_seconds_ = now;
  return line + std::string("Per-position acceptance rate: ") + per_position + acceptance;
}

}  // namespace vllm::server
