#include "cli/speculative_config_flag.h"

#include <cstdio>
#include <limits>
#include <nlohmann/json.hpp>
#include <string>

namespace vllm {
namespace {

constexpr const char* kKeys =
    "method, model, num_speculative_tokens, prompt_lookup_max, prompt_lookup_min";

Expected<std::string> StringOf(const std::string& key, const nlohmann::json& value) {
  if (!value.is_string()) return Error{"--speculative-config: \"" + key + "\" must be a string"};
  return value.get<std::string>();
}

Expected<int> IntOf(const std::string& key, const nlohmann::json& value) {
  if (!value.is_number_integer() || value.get<int64_t>() < std::numeric_limits<int>::min() ||
      value.get<int64_t>() > std::numeric_limits<int>::max()) {
    return Error{"--speculative-config: \"" + key + "\" must be an integer"};
  }
  return static_cast<int>(value.get<int64_t>());
}

}  // namespace

Expected<SpeculativeConfig> ParseSpeculativeConfig(std::string_view json_text) {
  const nlohmann::json root = nlohmann::json::parse(json_text, nullptr, /*allow_exceptions=*/false);
  if (root.is_discarded() || !root.is_object()) {
    return Error{
        "--speculative-config must be a JSON object, e.g. '{\"method\": \"ngram\", "
        "\"num_speculative_tokens\": 4, \"prompt_lookup_max\": 4}'"};
  }
  SpeculativeConfig config;
  for (const auto& [key, value] : root.items()) {
    if (value.is_null()) continue;  // unset, as vLLM's None
    if (key == "method" || key == "model") {
      auto text = StringOf(key, value);
      if (!text) return Error{text.error()};
      (key == "method" ? config.method : config.model) = *text;
      continue;
    }
    if (key != "num_speculative_tokens" && key != "prompt_lookup_max" &&
        key != "prompt_lookup_min") {
      return Error{"--speculative-config: unknown key \"" + key + "\" (supported: " + kKeys + ")"};
    }
    auto number = IntOf(key, value);
    if (!number) return Error{number.error()};
    if (key == "num_speculative_tokens") {
      config.num_speculative_tokens = *number;
    } else if (key == "prompt_lookup_max") {
      config.prompt_lookup_max = *number;
    } else {
      config.prompt_lookup_min = *number;
    }
  }
  return config;
}

std::string SpecDecodingSummary(const SpecDecodingStats& stats) {
  if (stats.num_drafts == 0) return "Speculative decoding: no drafts proposed";
  char line[200];
  std::snprintf(
      line, sizeof(line),
      "Speculative decoding: %lld drafts, %lld draft tokens, %lld accepted (%.1f%%), "
      "mean acceptance length %.2f",
      static_cast<long long>(stats.num_drafts), static_cast<long long>(stats.num_draft_tokens),
      static_cast<long long>(stats.num_accepted_tokens),
      stats.num_draft_tokens > 0 ? 100.0 * static_cast<double>(stats.num_accepted_tokens) /
                                       static_cast<double>(stats.num_draft_tokens)
                                 : 0.0,
      stats.mean_acceptance_length());
  return line;
}

}  // namespace vllm
