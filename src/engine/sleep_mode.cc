// vLLM's sleep mode (LLM.sleep / wake_up) and reset_prefix_cache: an idle engine gives back the
// memory of its KV cache, and at level 2 its weights', without unloading the model.
#include <algorithm>

#include "common/mapped_file.h"
#include "engine/engine_core.h"
#include "engine/llm_engine.h"
#include "engine/llm_engine_impl.h"

namespace vllm {

Status EngineCore::Sleep() {
  if (scheduler_->HasUnfinishedRequests()) {
    return Error{"the engine cannot sleep while requests are unfinished"};
  }
  // Every block is free, so this succeeds: the cached prefixes' KV is about to be gone.
  kv_cache_->ResetPrefixCache();
  runner_->ReleaseKvCache();
  return Status::Ok();
}

Status EngineCore::WakeUp() { return runner_->RestoreKvCache(); }

Status LLMEngine::Sleep(int level) {
  if (level != 1 && level != 2) {
    return Error{"sleep level must be 1 or 2, not " + std::to_string(level)};
  }
  VLLM_RETURN_IF_ERROR(impl_->core->Sleep());
  if (level == 2 && impl_->model.gguf) {
    // Weights used in place from the file leave memory; the next forward reads them back.
    for (const GgufTensor& tensor : impl_->model.gguf->tensors()) {
      ReleaseMappedPages(tensor.data, tensor.num_bytes);
    }
  }
  return Status::Ok();
}

Status LLMEngine::WakeUp(const std::vector<std::string>& tags) {
  for (const std::string& tag : tags) {
    if (tag != "weights" && tag != "kv_cache") {
      return Error{"unknown wake_up tag '" + tag + "' (expected 'weights' or 'kv_cache')"};
    }
  }
  // Released weight pages come back from the file as they are read: only the KV cache is mapped.
  if (tags.empty() || std::find(tags.begin(), tags.end(), "kv_cache") != tags.end()) {
    return impl_->core->WakeUp();
  }
  return Status::Ok();
}

bool LLMEngine::is_sleeping() const { return impl_->core->is_sleeping(); }

bool LLMEngine::ResetPrefixCache() { return impl_->core->ResetPrefixCache(); }

}  // namespace vllm
