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
const std::vector<double> kRequestParamsNBuckets = {1, 2, 5, 10, 20};

// vLLM's build_1_2_5_buckets: 1, 2, 5, 10, 20, 50, ... up to `max_value`.
std::vector<double> OneTwoFiveBuckets(int64_t max_value) {
  std::vector<double> buckets;
  for (int64_t power = 1; power <= max_value; power *= 10) {
    for (int64_t mantissa : {1, 2, 5}) {
      if (mantissa * power > max_value) return buckets;
      buckets.push_back(static_cast<double>(mantissa * power));
    }
    if (power > max_value / 10) break;
  }
  return buckets;
}

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

Histogram::Histogram(std::vector<double> upper_bounds, const std::vector<uint64_t>& counts,
                     double sum)
    : upper_bounds_(std::move(upper_bounds)), counts_(upper_bounds_.size(), 0), sum_(sum) {
  for (size_t i = 0; i < counts.size(); ++i) {
    if (i < counts_.size()) counts_[i] = counts[i];
    count_ += counts[i];
  }
}

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

std::vector<std::pair<std::string, std::string>> CacheConfigInfo(const EngineArgs& args,
                                                                 int64_t num_kv_blocks) {
  // Python's spelling of the values, as vLLM's str(value).
  return {{"block_size", std::to_string(args.block_size)},
          {"cache_dtype", args.kv_cache_dtype},
          {"enable_prefix_caching", args.enable_prefix_caching ? "True" : "False"},
          {"kv_cache_memory_bytes",
           args.kv_cache_memory_bytes ? std::to_string(*args.kv_cache_memory_bytes) : "None"},
          {"num_cpu_blocks", "None"},
          {"num_gpu_blocks", std::to_string(num_kv_blocks)}};
}

Metrics::Metrics(std::string model_name, int64_t max_model_len)
    : labels_("model_name=\"" + model_name + "\",engine=\"0\""),
      time_to_first_token_(kLatencyBuckets),
      inter_token_latency_(kTokenLatencyBuckets),
      e2e_latency_(kRequestSecondsBuckets),
      queue_time_(kRequestSecondsBuckets),
      request_prompt_tokens_(OneTwoFiveBuckets(max_model_len)),
      request_generation_tokens_(OneTwoFiveBuckets(max_model_len)),
      time_per_output_token_(kTokenLatencyBuckets),
      request_time_per_output_token_(kTokenLatencyBuckets),
      request_params_n_(kRequestParamsNBuckets),
      request_params_max_tokens_(OneTwoFiveBuckets(max_model_len)),
      request_max_num_generation_tokens_(OneTwoFiveBuckets(max_model_len)),
      request_prefill_time_(kRequestSecondsBuckets),
      request_decode_time_(kRequestSecondsBuckets),
      request_inference_time_(kRequestSecondsBuckets),
      logged_at_seconds_(NowSeconds()),
      spec_decoding_logged_at_seconds_(logged_at_seconds_) {}

void Metrics::ObserveTimeToFirstToken(double seconds) {
  std::lock_guard<std::mutex> lock(mutex_);
  time_to_first_token_.Observe(seconds);
}

void Metrics::ObserveInterTokenLatency(double seconds) {
  std::lock_guard<std::mutex> lock(mutex_);
  inter_token_latency_.Observe(seconds);
  time_per_output_token_.Observe(seconds);
}

void Metrics::SetCacheConfigInfo(std::vector<std::pair<std::string, std::string>> labels) {
  std::lock_guard<std::mutex> lock(mutex_);
  cache_config_info_ = std::move(labels);
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
  request_params_n_.Observe(record.n);
  request_params_max_tokens_.Observe(static_cast<double>(record.max_tokens));
  request_max_num_generation_tokens_.Observe(static_cast<double>(record.max_num_generation_tokens));
  request_prefill_time_.Observe(record.prefill_seconds);
  request_decode_time_.Observe(record.decode_seconds);
  request_inference_time_.Observe(record.prefill_seconds + record.decode_seconds);
  // vLLM observes the mean gap after the first token, for requests with more than one token.
  if (record.num_generation_tokens > 1) {
    request_time_per_output_token_.Observe(record.decode_seconds /
                                           static_cast<double>(record.num_generation_tokens - 1));
  }
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
  // The draft tokens accepted over those verified; and vLLM 0.6's system efficiency: the tokens
  // the drafting steps emitted (the accepted ones and one sampled after them) over the most they
  // could have (every draft accepted).
  const int64_t num_emitted_tokens = spec.num_accepted_tokens + spec.num_drafts;
  gauge("vllm:spec_decode_draft_acceptance_rate", "Speculative token acceptance rate.",
        spec.num_draft_tokens == 0 ? 0.0
                                   : static_cast<double>(spec.num_accepted_tokens) /
                                         static_cast<double>(spec.num_draft_tokens));
  gauge("vllm:spec_decode_efficiency", "Speculative decoding system efficiency.",
        spec.num_drafts == 0 ? 0.0
                             : static_cast<double>(num_emitted_tokens) /
                                   static_cast<double>(spec.num_draft_tokens + spec.num_drafts));
  counter("vllm:spec_decode_num_emitted_tokens_total", "Number of emitted tokens.",
          static_cast<double>(num_emitted_tokens));
  Header("vllm:request_success_total", "counter", "Count of successfully processed requests.",
         &out);
  for (const char* reason : {"stop", "length", "abort"}) {
    auto it = successes_by_reason_.find(reason);
    const int64_t count = it == successes_by_reason_.end() ? 0 : it->second;
    out += "vllm:request_success_total{" + labels_ + ",finished_reason=\"" + std::string(reason) +
           "\"} " + std::to_string(count) + "\n";
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
  RenderOlderNames(stats, &out);
  return out;
}

void Metrics::RenderOlderNames(const EngineStatsSnapshot& stats, std::string* out) const {
  auto sample = [&](const char* name, const char* type, const char* help, double value) {
    Header(name, type, help, out);
    *out += std::string(name) + "{" + labels_ + "} " + Number(value) + "\n";
  };
  auto histogram = [&](const char* name, const char* help, const Histogram& value) {
    Header(name, "histogram", help, out);
    value.Render(name, labels_, out);
  };
  sample("vllm:gpu_cache_usage_perc", "gauge", "GPU KV-cache usage. 1 means 100 percent usage.",
         stats.kv_cache_usage);
  // vLLM 0.6's CPU cache is the swap space preempted requests moved to; there is none here (a
  // preempted request is recomputed), so it and the swapped requests are 0.
  sample("vllm:cpu_cache_usage_perc", "gauge", "CPU KV-cache usage. 1 means 100 percent usage.",
         0.0);
  sample("vllm:num_requests_swapped", "gauge", "Number of requests swapped to CPU.", 0.0);
  sample("vllm:gpu_prefix_cache_queries_total", "counter",
         "GPU prefix cache queries, in terms of number of queried tokens. DEPRECATED: Use "
         "vllm:prefix_cache_queries instead.",
         static_cast<double>(stats.prefix_cache_queries));
  sample("vllm:gpu_prefix_cache_hits_total", "counter",
         "GPU prefix cache hits, in terms of number of cached tokens. DEPRECATED: Use "
         "vllm:prefix_cache_hits instead.",
         static_cast<double>(stats.prefix_cache_hits));
  if (!cache_config_info_.empty()) {
    Header("vllm:cache_config_info", "gauge", "Information of the LLMEngine CacheConfig", out);
    *out += "vllm:cache_config_info{";
    for (const auto& [name, value] : cache_config_info_) *out += name + "=\"" + value + "\",";
    *out += "engine=\"0\"} 1\n";
  }
  const IterationTokensStats& iterations = stats.iteration_tokens;
  histogram(
      "vllm:iteration_tokens_total", "Histogram of number of tokens per engine_step.",
      Histogram(
          {IterationTokensStats::kUpperBounds.begin(), IterationTokensStats::kUpperBounds.end()},
          {iterations.num_steps_by_bucket.begin(), iterations.num_steps_by_bucket.end()},
          static_cast<double>(iterations.num_tokens)));
  histogram("vllm:time_per_output_token_seconds", "Histogram of time per output token in seconds.",
            time_per_output_token_);
  histogram("vllm:request_time_per_output_token_seconds",
            "Histogram of time_per_output_token_seconds per request.",
            request_time_per_output_token_);
  histogram("vllm:request_params_n", "Histogram of the n request parameter.", request_params_n_);
  histogram("vllm:request_params_max_tokens", "Histogram of the max_tokens request parameter.",
            request_params_max_tokens_);
  histogram("vllm:request_max_num_generation_tokens",
            "Histogram of maximum number of requested generation tokens.",
            request_max_num_generation_tokens_);
  histogram("vllm:request_inference_time_seconds",
            "Histogram of time spent in RUNNING phase for request.", request_inference_time_);
  histogram("vllm:request_prefill_time_seconds",
            "Histogram of time spent in PREFILL phase for request.", request_prefill_time_);
  histogram("vllm:request_decode_time_seconds",
            "Histogram of time spent in DECODE phase for request.", request_decode_time_);
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
