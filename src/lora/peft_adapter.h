// A PEFT LoRA directory: adapter_config.json (r, lora_alpha, use_rslora, target_modules,
// rank_pattern / alpha_pattern) and adapter_model.safetensors, whose tensors are named
//   base_model.model.model.layers.N.self_attn.q_proj.lora_A[.<adapter>][.weight]   [r, in]
//   base_model.model.model.layers.N.mlp.down_proj.lora_B[.<adapter>][.weight]      [out, r]
// lora_B rows are in Hugging Face order.
#pragma once

#include <string>

#include "common/expected.h"
#include "formats/safetensors_file.h"
#include "lora/lora_base_shape.h"
#include "lora/lora_file_pairs.h"

namespace vllm::lora {

// The directory's two files; a missing one, or adapter_model.bin in place of the safetensors, is
// an error that says so.
Expected<LoraFilePairs> ReadPeftDirectory(const std::string& directory, const LoraBaseShape& base);
// The adapter of an adapter_config.json's text and its weights.
Expected<LoraFilePairs> ReadPeftAdapter(const std::string& config_text,
                                        const SafetensorsFile& weights, const LoraBaseShape& base);

}  // namespace vllm::lora
