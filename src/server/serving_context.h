// What every route handler shares: the engine, the served model's names, the chat template,
// the per-request limits, the request workers and the metrics.
#pragma once

#include <atomic>
#include <cstdint>
#include <functional>
#include <map>
#include <mutex>
#include <optional>
#include <string>
#include <vector>

#include "server/metrics.h"
#include "server/openai/lora_adapters/registry.h"
#include "server/openai/responses/event_log.h"
#include "server/openai/responses/store.h"
#include "server/openai/structured_outputs_request.h"
#include "server/request_limits.h"
#include "server/request_log.h"
#include "server/request_workers.h"
#include "vllm/async_llm.h"

namespace vllm::server {

// Generation requests under way, each with a way to end it at once (graceful shutdown's end).
class ActiveRequests {
 public:
  // Registers a request; `cancel` may be called from any thread. Returns its handle.
  uint64_t Add(std::function<void()> cancel);
  void Remove(uint64_t handle);
  int count() const;
  // Calls every registered request's `cancel`.
  void CancelAll();

 private:
  mutable std::mutex mutex_;
  uint64_t next_handle_ = 0;
  std::map<uint64_t, std::function<void()>> cancels_;
};

struct ServingContext {
  AsyncLLM& engine;
  std::vector<std::string> served_model_names;  // the first one is reported in responses
  std::string model_path;
  std::string chat_template;  // --chat-template, else the model's; empty when neither has one
  Metrics& metrics;
  RequestWorkers& workers;
  RequestLimits limits;
  std::string tool_call_parser;  // --tool-call-parser with --enable-auto-tool-choice; or empty
  std::string reasoning_parser;  // --reasoning-parser; or empty
  StructuredOutputsConfig structured_outputs_config;  // --structured-outputs-config
  // --response-role: the role of chat replies to requests with add_generation_prompt.
  std::string response_role = "assistant";
  RequestLogOptions request_log;  // --enable-log-requests, --max-log-len
  ActiveRequests active_requests;
  ResponseStore responses;            // /v1/responses' stored responses
  ResponseEventLogs response_events;  // the events of background streamed responses
  // Set once a shutdown began: new generation requests get 503.
  std::atomic<bool> shutting_down{false};
  // --enable-lora: the adapters a request's "model" may name; /v1/load_lora_adapter and
  // /v1/unload_lora_adapter answer only with VLLM_ALLOW_RUNTIME_LORA_UPDATING true (else 404).
  LoraAdapterRegistry lora_adapters;
  bool runtime_lora_updating = false;
  int max_loras = 0;  // --max-loras with --enable-lora (vllm:lora_requests_info); 0: LoRA off

  // True when a request's "model" names this server's model (an absent name does too).
  bool Serves(const std::string& model) const {
    if (model.empty()) return true;
    for (const auto& name : served_model_names) {
      if (name == model) return true;
    }
    return false;
  }
  // Serves(model), or else the adapter it names in `lora_request`; false when it is neither.
  bool ResolveModel(const std::string& model, std::optional<LoraRequest>* lora_request) const {
    if (Serves(model)) return true;
    *lora_request = lora_adapters.Find(model);
    return lora_request->has_value();
  }
  // The name responses report: the adapter's, else the served model's first.
  const std::string& ResponseModelName(const std::optional<LoraRequest>& lora_request) const {
    return lora_request ? lora_request->lora_name : served_model_names.front();
  }
};

}  // namespace vllm::server
