#include "server/openai/lora_adapters/registry.h"

#include <algorithm>
#include <cctype>
#include <cstdlib>

#include "common/expected.h"
#include "common/logging.h"

namespace vllm::server {
namespace {

// vLLM's loader error for a path with no adapter, which its server answers with 404.
constexpr std::string_view kNoAdapterFound = "No adapter found";

template <typename Adapters>
auto FindByName(Adapters& adapters, const std::string& name) {
  return std::find_if(adapters.begin(), adapters.end(),
                      [&](const LoraRequest& adapter) { return adapter.lora_name == name; });
}

}  // namespace

bool RuntimeLoraUpdatingAllowed() {
  const char* value = std::getenv("VLLM_ALLOW_RUNTIME_LORA_UPDATING");
  std::string text = value != nullptr ? value : "0";
  text.erase(0, text.find_first_not_of(" \t\n"));
  text.erase(text.find_last_not_of(" \t\n") + 1);
  std::transform(text.begin(), text.end(), text.begin(),
                 [](unsigned char c) { return std::tolower(c); });
  if (text != "1" && text != "true") return false;
  VLLM_LOG(kWarning) << "LoRA dynamic loading & unloading is enabled in the API server. This "
                        "should ONLY be used for local development!";
  return true;
}

std::optional<ApiError> LoraAdapterRegistry::Load(
    AsyncLLM& engine, const LoraModulePath& module,
    const std::vector<std::string>& served_model_names, bool load_inplace) {
  if (module.name.empty() || module.path.empty()) {
    return ApiError::BadRequest("Both 'lora_name' and 'lora_path' must be provided.");
  }
  LoraRequest request{.lora_name = module.name, .lora_path = module.path};
  if (std::find(served_model_names.begin(), served_model_names.end(), module.base_model_name) !=
      served_model_names.end()) {
    request.base_model_name = module.base_model_name;
  }
  std::optional<LoraRequest> replaced;
  {
    std::lock_guard lock(mutex_);
    auto loaded = FindByName(adapters_, module.name);
    if (names_being_loaded_.contains(module.name) || (loaded != adapters_.end() && !load_inplace)) {
      return ApiError::BadRequest("The lora adapter '" + module.name +
                                  "' has already been loaded. If you want to load the adapter in "
                                  "place, set 'load_inplace' to True.");
    }
    names_being_loaded_.insert(module.name);
    if (loaded != adapters_.end()) replaced = *loaded;
    request.lora_int_id = replaced ? replaced->lora_int_id : ++last_lora_int_id_;
  }
  // The adapter is read and checked against the base here, off the lock: requests naming other
  // adapters resolve meanwhile. In place, the engine's copy under the id is dropped first (steps
  // under way keep theirs).
  if (replaced) engine.RemoveLora(replaced->lora_int_id);
  const Status added = engine.AddLora(request);
  std::lock_guard lock(mutex_);
  names_being_loaded_.erase(module.name);
  // A failed reload in place keeps the adapter listed: its files load again on first use.
  if (!added.ok()) {
    if (added.message().find(kNoAdapterFound) != std::string::npos) {
      return ApiError::NotFound(added.message());
    }
    return ApiError::BadRequest(added.message());
  }
  // In place: where it was listed (unless an unload came meanwhile).
  if (auto listed = FindByName(adapters_, module.name); listed != adapters_.end()) {
    *listed = request;
  } else {
    adapters_.push_back(request);
  }
  VLLM_LOG(kInfo) << "Loaded new LoRA adapter: name '" << module.name << "', path '" << module.path
                  << "'";
  return std::nullopt;
}

std::optional<ApiError> LoraAdapterRegistry::Unload(AsyncLLM& engine, const std::string& name) {
  if (name.empty()) {
    return ApiError::BadRequest("'lora_name' needs to be provided to unload a LoRA adapter.");
  }
  std::lock_guard lock(mutex_);
  auto adapter = FindByName(adapters_, name);
  if (adapter == adapters_.end()) {
    return ApiError::NotFound("The lora adapter '" + name + "' cannot be found.");
  }
  // The engine's cache may have evicted it already (--max-cpu-loras): nothing more to drop then.
  engine.RemoveLora(adapter->lora_int_id);
  adapters_.erase(adapter);
  VLLM_LOG(kInfo) << "Removed LoRA adapter: name '" << name << "'";
  return std::nullopt;
}

std::optional<LoraRequest> LoraAdapterRegistry::Find(const std::string& name) const {
  std::lock_guard lock(mutex_);
  auto adapter = FindByName(adapters_, name);
  if (adapter == adapters_.end()) return std::nullopt;
  return *adapter;
}

std::vector<std::string> LoraAdapterRegistry::NamesOf(
    const std::vector<int64_t>& lora_int_ids) const {
  std::lock_guard lock(mutex_);
  std::vector<std::string> names;
  for (int64_t id : lora_int_ids) {
    auto adapter =
        std::find_if(adapters_.begin(), adapters_.end(),
                     [id](const LoraRequest& loaded) { return loaded.lora_int_id == id; });
    if (adapter != adapters_.end()) names.push_back(adapter->lora_name);
  }
  return names;
}

std::vector<LoraRequest> LoraAdapterRegistry::List() const {
  std::lock_guard lock(mutex_);
  return adapters_;
}

}  // namespace vllm::server
