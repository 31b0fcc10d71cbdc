#include "server/lora_metrics.h"

#include <cstdio>

namespace vllm::server {
namespace {

// A label value as the exposition format writes it: backslash, quote and newline escaped.
std::string EscapeLabelValue(const std::string& value) {
  std::string escaped;
  for (char c : value) {
    if (c == '\\' || c == '"') {
      escaped += '\\';
      escaped += c;
    } else if (c == '\n') {
      escaped += "\\n";
    } else {
      escaped += c;
    }
  }
  return escaped;
}

std::string JoinNames(const std::vector<std::string>& names) {
  std::string joined;
  for (const std::string& name : names) joined += (joined.empty() ? "" : ",") + name;
  return EscapeLabelValue(joined);
}

}  // namespace

std::string RenderLoraRequestsInfo(const LoraRequestsInfo& info) {
  char value[32];
  std::snprintf(value, sizeof(value), "%.17g", info.unix_seconds);
  return "# HELP vllm:lora_requests_info Running stats on lora requests.\n"
         "# TYPE vllm:lora_requests_info gauge\n"
         "vllm:lora_requests_info{max_lora=\"" +
         std::to_string(info.max_loras) + "\",running_lora_adapters=\"" +
         JoinNames(info.running_lora_adapters) + "\",waiting_lora_adapters=\"" +
         JoinNames(info.waiting_lora_adapters) + "\"} " + value + "\n";
}

}  // namespace vllm::server
