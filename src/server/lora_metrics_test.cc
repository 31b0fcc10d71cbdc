#include "server/lora_metrics.h"

#include <gtest/gtest.h>

namespace vllm::server {
namespace {

TEST(LoraMetricsTest, RendersVllmsGaugeWithTheAdaptersJoinedAndEscaped) {
  EXPECT_EQ(RenderLoraRequestsInfo({.max_loras = 2,
                                    .running_lora_adapters = {"sql", "poet"},
                                    .waiting_lora_adapters = {"a\"b\\c"},
                                    .unix_seconds = 1764950000.5}),
            "# HELP vllm:lora_requests_info Running stats on lora requests.\n"
            "# TYPE vllm:lora_requests_info gauge\n"
            "vllm:lora_requests_info{max_lora=\"2\",running_lora_adapters=\"sql,poet\","
            "waiting_lora_adapters=\"a\\\"b\\\\c\"} 1764950000.5\n");
  EXPECT_EQ(RenderLoraRequestsInfo({.max_loras = 1, .unix_seconds = 2.0}),
            "# HELP vllm:lora_requests_info Running stats on lora requests.\n"
            "# TYPE vllm:lora_requests_info gauge\n"
            "vllm:lora_requests_info{max_lora=\"1\",running_lora_adapters=\"\","
            "waiting_lora_adapters=\"\"} 2\n");
}

}  // namespace
}  // namespace vllm::server
