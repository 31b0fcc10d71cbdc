// vLLM's vllm:lora_requests_info gauge (--enable-lora): the adapters of the running and of the
// waiting requests, each a comma-separated list of names, and --max-loras as labels; its value is
// the time of the update (unix seconds), so a scraper keeps the latest sample.
#pragma once

#include <string>
#include <vector>

namespace vllm::server {

struct LoraRequestsInfo {
  int max_loras = 1;
  std::vector<std::string> running_lora_adapters;  // distinct names, in the engine's order
  std::vector<std::string> waiting_lora_adapters;
  double unix_seconds = 0.0;  // when these were read
};

// The gauge's # HELP / # TYPE lines and its one sample, label values escaped as Prometheus'.
std::string RenderLoraRequestsInfo(const LoraRequestsInfo& info);

}  // namespace vllm::server
