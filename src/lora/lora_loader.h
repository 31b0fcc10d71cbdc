// Loads a LoRA adapter for a base model: a PEFT directory (peft_adapter.h) or a llama.cpp GGUF
// LoRA file (gguf_adapter.h), told apart by the path (a directory or a file). The result fits the
// base: every matrix's shape checked against LoraBaseShape, lora_B of q / k in the base's row
// order (qk_row_order.h), the scale folded into B (in f32), then stored as options.dtype.
#pragma once

#include <cstdint>
#include <memory>

#include "common/expected.h"
#include "lora/lora_base_shape.h"
#include "lora/lora_weights.h"
#include "vllm/lora_request.h"

namespace vllm::lora {

struct LoraLoadOptions {
  int64_t max_lora_rank = 16;             // vLLM's --max-lora-rank
  LoraDtype dtype = LoraDtype::kFloat32;  // vLLM's --lora-dtype, resolved (LoraDtypeFor)
};

// Errors read "Loading lora <name> failed: ..." and name the tensor or config field at fault;
// a path that does not exist gives vLLM's "No adapter found for <path>".
Expected<std::shared_ptr<const LoraWeights>> LoadLoraAdapter(const LoraRequest& request,
                                                             const LoraBaseShape& base,
                                                             const LoraLoadOptions& options);

}  // namespace vllm::lora
