#include "server/metrics.h"

#include <gtest/gtest.h>

namespace vllm::server {
namespace {

TEST(MetricsTest, RendersVllmNamesWithTheModelLabel) {
  Metrics metrics("tiny");
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
  EXPECT_NE(text.find("vllm:num_requests_running{model_name=\"tiny\"} 2\n"), std::string::npos);
  EXPECT_NE(text.find("vllm:kv_cache_usage_perc{model_name=\"tiny\"} 0.25\n"), std::string::npos);
  EXPECT_NE(text.find("vllm:prefix_cache_hits_total{model_name=\"tiny\"} 16\n"), std::string::npos);
  EXPECT_NE(text.find("vllm:prompt_tokens_total{model_name=\"tiny\"} 10\n"), std::string::npos);
  EXPECT_NE(text.find("vllm:generation_tokens_total{model_name=\"tiny\"} 3\n"), std::string::npos);
  EXPECT_NE(
      text.find("vllm:request_success_total{finished_reason=\"length\",model_name=\"tiny\"} 1"),
      std::string::npos);
  // Cumulative buckets: 0.03 falls in le=0.04 and every later bucket, not in le=0.02.
  EXPECT_NE(text.find("vllm:time_to_first_token_seconds_bucket{model_name=\"tiny\",le=\"0.02\"} 0"),
            std::string::npos);
  EXPECT_NE(text.find("vllm:time_to_first_token_seconds_bucket{model_name=\"tiny\",le=\"0.04\"} 1"),
            std::string::npos);
  EXPECT_NE(text.find("vllm:time_to_first_token_seconds_bucket{model_name=\"tiny\",le=\"+Inf\"} 1"),
            std::string::npos);
  EXPECT_NE(text.find("vllm:time_to_first_token_seconds_count{model_name=\"tiny\"} 1"),
            std::string::npos);
}

TEST(MetricsTest, LogLineReportsRatesAndUsage) {
  Metrics metrics("tiny");
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
  Metrics metrics("tiny");
  EngineStatsSnapshot stats;
  EXPECT_EQ(metrics.SpecDecodingLogLine(stats), "");  // no drafts yet
  // Two requests' steps with 3 drafts each: 3 accepted, then 1.
  stats.spec_decoding.Observe(3, 3);
  stats.spec_decoding.Observe(3, 1);
  const std::string text = metrics.Render(stats);
  EXPECT_NE(text.find("vllm:spec_decode_num_drafts_total{model_name=\"tiny\"} 2\n"),
            std::string::npos);
  EXPECT_NE(text.find("vllm:spec_decode_num_draft_tokens_total{model_name=\"tiny\"} 6\n"),
            std::string::npos);
  EXPECT_NE(text.find("vllm:spec_decode_num_accepted_tokens_total{model_name=\"tiny\"} 4\n"),
            std::string::npos);
  EXPECT_NE(text.find("vllm:spec_decode_num_accepted_tokens_per_pos_total{model_name=\"tiny\","
                      "position=\"0\"} 2\n"),
            std::string::npos);
  EXPECT_NE(text.find("vllm:spec_decode_num_accepted_tokens_per_pos_total{model_name=\"tiny\","
                      "position=\"2\"} 1\n"),
            std::string::npos);
  const std::string line = metrics.SpecDecodingLogLine(stats);
  EXPECT_NE(line.find("Mean acceptance length: 3.00"), std::string::npos) << line;
  EXPECT_NE(line.find("Accepted: 4 tokens, Drafted: 6 tokens"), std::string::npos) << line;
  EXPECT_NE(line.find("Per-position acceptance rate: 1.000, 0.500, 0.500"), std::string::npos)
      << line;
  EXPECT_NE(line.find("Avg Draft acceptance rate: 66.7%"), std::string::npos) << line;
  EXPECT_EQ(metrics.SpecDecodingLogLine(stats), "");  // nothing new since
}

}  // namespace
}  // namespace vllm::server
