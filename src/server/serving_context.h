// What every route handler shares: the engine, the served model's names, the chat template
// and the metrics.
#pragma once

#include <atomic>
#include <string>
#include <vector>

#include "server/metrics.h"
#include "vllm/async_llm.h"

namespace vllm::server {

struct ServingContext {
  AsyncLLM& engine;
  std::vector<std::string> served_model_names;  // the first one is reported in responses
  std::string model_path;
  std::string chat_template;  // --chat-template, else the model's; empty when neither has one
  Metrics& metrics;
  // Generation requests under way (a graceful shutdown waits for them).
  std::atomic<int> num_active_requests{0};

  // True when a request's "model" names this server's model (an absent name does too).
  bool Serves(const std::string& model) const {
    if (model.empty()) return true;
    for (const auto& name : served_model_names) {
      if (name == model) return true;
    }
    return false;
  }
};

}  // namespace vllm::server
