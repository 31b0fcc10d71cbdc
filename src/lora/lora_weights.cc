#include "lora/lora_weights.h"

namespace vllm::lora {

std::string_view PeftModuleName(LoraTarget target) {
  switch (target) {
    case LoraTarget::kQ:
      return "q_proj";
    case LoraTarget::kK:
      return "k_proj";
    case LoraTarget::kV:
      return "v_proj";
    case LoraTarget::kO:
      return "o_proj";
    case LoraTarget::kGate:
      return "gate_proj";
    case LoraTarget::kUp:
      return "up_proj";
    case LoraTarget::kDown:
      return "down_proj";
  }
  return "";
}

}  // namespace vllm::lora
