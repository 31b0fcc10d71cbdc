// LLMEngine's LoRA adapter calls (vLLM's add_lora / remove_lora / list_loras).
#include "engine/llm_engine.h"
#include "engine/llm_engine_impl.h"

namespace vllm {

Status LLMEngine::AddLora(const LoraRequest& lora_request) {
  if (!impl_->lora_adapters) return Error{LoraNotEnabledMessage(lora_request)};
  return impl_->lora_adapters->Add(lora_request);
}

bool LLMEngine::RemoveLora(int64_t lora_int_id) {
  return impl_->lora_adapters != nullptr && impl_->lora_adapters->Remove(lora_int_id);
}

std::vector<int64_t> LLMEngine::ListLoras() const {
  if (!impl_->lora_adapters) return {};
  return impl_->lora_adapters->List();
}

}  // namespace vllm
