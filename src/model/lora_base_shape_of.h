// The shapes a LoRA adapter of this model must have (lora::LoraBaseShape), from its config: the
// loaders check adapter files against it, the forward checks each batch's adapters.
#pragma once

#include "lora/lora_base_shape.h"
#include "model/model_config.h"

namespace vllm {

// gguf_file: the base was loaded from a GGUF file (whose llama-family q / k rows llama.cpp's
// converter permuted for RoPE) rather than a Hugging Face directory. MoE layers have no dense
// gate / up / down to adapt.
lora::LoraBaseShape LoraBaseShapeOf(const ModelConfig& config, bool gguf_file);

}  // namespace vllm
