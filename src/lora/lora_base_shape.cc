#include "lora/lora_base_shape.h"

namespace vllm::lora {

LoraTargetShape TargetShape(const LoraBaseShape& base, LoraTarget target) {
  switch (target) {
    case LoraTarget::kQ:
      return {base.hidden_size, base.q_size};
    case LoraTarget::kK:
    case LoraTarget::kV:
      return {base.hidden_size, base.kv_size};
    case LoraTarget::kO:
      return {base.q_size, base.hidden_size};
    case LoraTarget::kGate:
    case LoraTarget::kUp:
      return {base.hidden_size, base.intermediate_size};
    case LoraTarget::kDown:
      return {base.intermediate_size, base.hidden_size};
  }
  return {};
}

}  // namespace vllm::lora
