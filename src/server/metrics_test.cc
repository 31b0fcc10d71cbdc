#include "server/metrics.h"

#include <gtest/gtest.h>

namespace vllm::server {
namespace {

TEST(MetricsTest, RendersVllmNamesWithTheModelLabel) {
  Metrics metrics("tiny", 2048);
  metrics.AddTokens(10, 3);
  metrics.ObserveTimeToFirstToken(0.03);
  metrics.FinishRequest({.queue_seconds = 0.01,
                         .e2e_seconds = 0.2,
                         .num_prompt_tokens = 10,
                         .num_generation_tokens = 3,
                         .finish_reasons = {"length"}});
  EngineStatsSnapshot stats;
  stats.num_running = 2;
  stats.kv_cache_usage = 0.25;
  stats.prefix_cache_queries = 40;
  stats.prefix_cache_hits = 16;
  const std::string text = metrics.Render(stats);
  EXPECT_NE(text.find("vllm:num_requests_running{model_name=\"tiny\",engine=\"0\"} 2\n"),
            std::string::npos);
  EXPECT_NE(text.find("vllm:kv_cache_usage_perc{model_name=\"tiny\",engine=\"0\"} 0.25\n"),
            std::string::npos);
  EXPECT_NE(text.find("vllm:prefix_cache_hits_total{model_name=\"tiny\",engine=\"0\"} 16\n"),
            std::string::npos);
  EXPECT_NE(text.find("vllm:prompt_tokens_total{model_name=\"tiny\",engine=\"0\"} 10\n"),
            std::string::npos);
  EXPECT_NE(text.find("vllm:generation_tokens_total{model_name=\"tiny\",engine=\"0\"} 3\n"),
            std::string::npos);
  EXPECT_NE(text.find("vllm:request_success_total{model_name=\"tiny\",engine=\"0\",finished_reason="
                      "\"length\"} 1"),
            std::string::npos);
  // Cumulative buckets: 0.03 falls in le=0.04 and every later bucket, not in le=0.02.
  EXPECT_NE(text.find("vllm:time_to_first_token_seconds_bucket{model_name=\"tiny\",engine=\"0\",le="
                      "\"0.02\"} 0"),
            std::string::npos);
  EXPECT_NE(text.find("vllm:time_to_first_token_seconds_bucket{model_name=\"tiny\",engine=\"0\",le="
                      "\"0.04\"} 1"),
            std::string::npos);
  EXPECT_NE(text.find("vllm:time_to_first_token_seconds_bucket{model_name=\"tiny\",engine=\"0\",le="
                      "\"+Inf\"} 1"),
            std::string::npos);
  EXPECT_NE(text.find("vllm:time_to_first_token_seconds_count{model_name=\"tiny\",engine=\"0\"} 1"),
            std::string::npos);
}

TEST(MetricsTest, LogLineReportsRatesAndUsage) {
  Metrics metrics("tiny", 2048);
  metrics.AddTokens(100, 50);
  EngineStatsSnapshot stats;
  stats.num_running = 3;
  stats.num_waiting = 1;
  stats.kv_cache_usage = 0.5;
  stats.prefix_cache_queries = 10;
  stats.prefix_cache_hits = 5;
  const std::string line = metrics.LogLine(stats);
  EXPECT_NE(line.find("Running: 3 reqs, Waiting: 1 reqs, KV cache usage: 50.0%, Prefix cache hit "
                      "rate: 50.0%"),
            std::string::npos)
      << line;
  EXPECT_NE(metrics.LogLine(stats).find("Avg prompt throughput: 0.0 tokens/s"), std::string::npos);
}

TEST(MetricsTest, SpecDecodingCountersAndLogLine) {
  Metrics metrics("tiny", 2048);
  EngineStatsSnapshot stats;
  EXPECT_EQ(metrics.SpecDecodingLogLine(stats), "");  // no drafts yet
  // Two requests' steps with 3 drafts each: 3 accepted, then 1.
  stats.spec_decoding.Observe(3, 3);
  stats.spec_decoding.Observe(3, 1);
  const std::string text = metrics.Render(stats);
  EXPECT_NE(text.find("vllm:spec_decode_num_drafts_total{model_name=\"tiny\",engine=\"0\"} 2\n"),
            std::string::npos);
  EXPECT_NE(
      text.find("vllm:spec_decode_num_draft_tokens_total{model_name=\"tiny\",engine=\"0\"} 6\n"),
      std::string::npos);
  EXPECT_NE(
      text.find("vllm:spec_decode_num_accepted_tokens_total{model_name=\"tiny\",engine=\"0\"} 4\n"),
      std::string::npos);
  EXPECT_NE(
      text.find(
          "vllm:spec_decode_num_accepted_tokens_per_pos_total{model_name=\"tiny\",engine=\"0\","
          "position=\"0\"} 2\n"),
      std::string::npos);
  EXPECT_NE(
      text.find(
          "vllm:spec_decode_num_accepted_tokens_per_pos_total{model_name=\"tiny\",engine=\"0\","
          "position=\"2\"} 1\n"),
      std::string::npos);
  // vLLM 0.6's gauges: 4 of 6 drafts accepted; 6 tokens emitted (4 and one after each of the 2
  // drafting steps) of the 8 possible.
  EXPECT_NE(text.find("vllm:spec_decode_draft_acceptance_rate{model_name=\"tiny\",engine=\"0\"} "
                      "0.6666666666666666\n"),
            std::string::npos);
  EXPECT_NE(text.find("vllm:spec_decode_efficiency{model_name=\"tiny\",engine=\"0\"} 0.75\n"),
            std::string::npos);
  EXPECT_NE(
      text.find("vllm:spec_decode_num_emitted_tokens_total{model_name=\"tiny\",engine=\"0\"} 6\n"),
      std::string::npos);
  const std::string line = metrics.SpecDecodingLogLine(stats);
  EXPECT_NE(line.find("Mean acceptance length: 3.00"), std::string::npos) << line;
  EXPECT_NE(line.find("Accepted: 4 tokens, Drafted: 6 tokens"), std::string::npos) << line;
  EXPECT_NE(line.find("Per-position acceptance rate: 1.000, 0.500, 0.500"), std::string::npos)
      << line;
  EXPECT_NE(line.find("Avg Draft acceptance rate: 66.7%"), std::string::npos) << line;
  EXPECT_EQ(metrics.SpecDecodingLogLine(stats), "");  // nothing new since
}

// The names of vLLM 0.6-0.10 dashboards, fed by the same requests and engine counters.
TEST(MetricsTest, OlderDashboardNamesCountRequestsAndSteps) {
  Metrics metrics("tiny", 2048);
  EngineStatsSnapshot stats;
  stats.kv_cache_usage = 0.25;
  stats.prefix_cache_queries = 40;
  stats.prefix_cache_hits = 16;
  const std::string before = metrics.Render(stats);
  for (const char* name :
       {"vllm:request_params_n_count", "vllm:request_params_max_tokens_count",
        "vllm:request_max_num_generation_tokens_count", "vllm:request_prefill_time_seconds_count",
        "vllm:request_decode_time_seconds_count", "vllm:request_inference_time_seconds_count",
        "vllm:time_per_output_token_seconds_count", "vllm:iteration_tokens_total_count"}) {
    EXPECT_NE(before.find(std::string(name) + "{model_name=\"tiny\",engine=\"0\"} 0\n"),
              std::string::npos)
        << name;
  }
  EXPECT_EQ(before.find("vllm:cache_config_info"), std::string::npos);  // not set yet

  metrics.ObserveInterTokenLatency(0.03);
  metrics.FinishRequest({.num_prompt_tokens = 10,
                         .num_generation_tokens = 4,
                         .finish_reasons = {"length", "stop"},
                         .n = 2,
                         .max_tokens = 100,
                         .max_num_generation_tokens = 3,
                         .prefill_seconds = 0.25,
                         .decode_seconds = 0.75});
  stats.iteration_tokens.Observe(20);
  stats.iteration_tokens.Observe(1);
  EngineArgs args;
  args.block_size = 32;
  args.kv_cache_memory_bytes = int64_t{2} << 30;
  metrics.SetCacheConfigInfo(CacheConfigInfo(args, 512));
  const std::string text = metrics.Render(stats);
  auto has = [&](const std::string& sample) {
    return text.find(sample + "\n") != std::string::npos;
  };
  const std::string labels = "{model_name=\"tiny\",engine=\"0\"";
  EXPECT_TRUE(has("vllm:gpu_cache_usage_perc" + labels + "} 0.25"));
  EXPECT_TRUE(has("vllm:cpu_cache_usage_perc" + labels + "} 0"));
  EXPECT_TRUE(has("vllm:num_requests_swapped" + labels + "} 0"));
  EXPECT_TRUE(has("vllm:gpu_prefix_cache_queries_total" + labels + "} 40"));
  EXPECT_TRUE(has("vllm:gpu_prefix_cache_hits_total" + labels + "} 16"));
  EXPECT_TRUE(has("# TYPE vllm:request_params_n histogram"));
  EXPECT_TRUE(has("vllm:request_params_n_bucket" + labels + ",le=\"1\"} 0"));
  EXPECT_TRUE(has("vllm:request_params_n_bucket" + labels + ",le=\"2\"} 1"));
  EXPECT_TRUE(has("vllm:request_params_max_tokens_bucket" + labels + ",le=\"50\"} 0"));
  EXPECT_TRUE(has("vllm:request_params_max_tokens_bucket" + labels + ",le=\"100\"} 1"));
  // vLLM's 1-2-5 buckets stop at the context length.
  EXPECT_TRUE(has("vllm:request_params_max_tokens_bucket" + labels + ",le=\"2000\"} 1"));
  EXPECT_FALSE(has("vllm:request_params_max_tokens_bucket" + labels + ",le=\"5000\"} 1"));
  EXPECT_TRUE(has("vllm:request_max_num_generation_tokens_bucket" + labels + ",le=\"2\"} 0"));
  EXPECT_TRUE(has("vllm:request_max_num_generation_tokens_bucket" + labels + ",le=\"5\"} 1"));
  EXPECT_TRUE(has("vllm:request_prefill_time_seconds_bucket" + labels + ",le=\"0.3\"} 1"));
  EXPECT_TRUE(has("vllm:request_decode_time_seconds_bucket" + labels + ",le=\"0.5\"} 0"));
  EXPECT_TRUE(has("vllm:request_decode_time_seconds_bucket" + labels + ",le=\"0.8\"} 1"));
  EXPECT_TRUE(has("vllm:request_inference_time_seconds_sum" + labels + "} 1"));
  // 0.75 s over the 3 tokens after the first.
  EXPECT_TRUE(has("vllm:request_time_per_output_token_seconds_sum" + labels + "} 0.25"));
  EXPECT_TRUE(has("vllm:time_per_output_token_seconds_bucket" + labels + ",le=\"0.025\"} 0"));
  EXPECT_TRUE(has("vllm:time_per_output_token_seconds_bucket" + labels + ",le=\"0.05\"} 1"));
  EXPECT_TRUE(has("vllm:iteration_tokens_total_bucket" + labels + ",le=\"1\"} 1"));
  EXPECT_TRUE(has("vllm:iteration_tokens_total_bucket" + labels + ",le=\"16\"} 1"));
  EXPECT_TRUE(has("vllm:iteration_tokens_total_bucket" + labels + ",le=\"32\"} 2"));
  EXPECT_TRUE(has("vllm:iteration_tokens_total_sum" + labels + "} 21"));
  EXPECT_TRUE(has("vllm:iteration_tokens_total_count" + labels + "} 2"));
  EXPECT_TRUE(has("vllm:request_success_total" + labels + ",finished_reason=\"stop\"} 1"));
  EXPECT_TRUE(
      has("vllm:cache_config_info{block_size=\"32\",cache_dtype=\"auto\","
          "enable_prefix_caching=\"True\",kv_cache_memory_bytes=\"2147483648\","
          "num_cpu_blocks=\"None\",num_gpu_blocks=\"512\",engine=\"0\"} 1"));
}

}  // namespace
}  // namespace vllm::server
