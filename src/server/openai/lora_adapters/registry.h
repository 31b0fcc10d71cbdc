// The LoRA adapters this server serves (vLLM's OpenAIServingModels, adapter half): those of
// --lora-modules, loaded at start, and those of /v1/load_lora_adapter. A request's "model" naming
// one runs it; /v1/models lists them after the base. Thread-safe: request workers resolve names
// while another loads or unloads.
#pragma once

#include <cstdint>
#include <mutex>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "server/openai/api_error.h"
#include "vllm/async_llm.h"
#include "vllm/lora_request.h"

namespace vllm::server {

// One --lora-modules item (vLLM's LoRAModulePath).
struct LoraModulePath {
  std::string name;
  std::string path;
  std::string base_model_name;  // empty: the served base
};

// VLLM_ALLOW_RUNTIME_LORA_UPDATING as vLLM reads it (1 or true, any case); warns, as vLLM, when
// it is on.
bool RuntimeLoraUpdatingAllowed();

class LoraAdapterRegistry {
 public:
  // Loads the adapter into the engine under a new lora_int_id and records it. vLLM's errors: both
  // fields must be given, a name already loaded is 400 (unless `load_inplace`: the adapter is then
  // read again from the path, under its id), a path with no adapter 404 ("No adapter found"), any
  // other load failure 400 with the loader's message. `served_model_names`: a base_model_name
  // among them is kept (the card's parent), another dropped, as vLLM.
  std::optional<ApiError> Load(AsyncLLM& engine, const LoraModulePath& module,
                               const std::vector<std::string>& served_model_names,
                               bool load_inplace = false);
  // Forgets the adapter and drops it from the engine's cache; 404 when no adapter has the name.
  std::optional<ApiError> Unload(AsyncLLM& engine, const std::string& name);
  // The adapter a request's "model" names; nullopt when none has that name.
  std::optional<LoraRequest> Find(const std::string& name) const;
  // Every adapter, in load order.
  std::vector<LoraRequest> List() const;
  // The names of the adapters with these ids, in their order (ids of no adapter here skipped).
  std::vector<std::string> NamesOf(const std::vector<int64_t>& lora_int_ids) const;

 private:
  mutable std::mutex mutex_;
  std::vector<LoraRequest> adapters_;         // in load order
  std::set<std::string> names_being_loaded_;  // loads under way, outside the lock
  int64_t last_lora_int_id_ = 0;              // ids are never reused, as vLLM's counter
};

}  // namespace vllm::server
