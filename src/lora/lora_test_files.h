// Tests only: small LoRA adapters written in both forms, PEFT directories and GGUF LoRA files,
// through the formats room's writers, for a tiny base (TinyBase) whose shapes a test can bend.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "common/expected.h"
#include "common/ggml_type.h"
#include "lora/lora_base_shape.h"

namespace vllm::lora {

// 2 layers, hidden 32, 4 heads (2 KV) of 8, ffn 64; a GGUF "llama" base (q / k rows permuted).
LoraBaseShape TinyBase();

// A tensor as a test writes it: shape row-major (outermost first, PyTorch's order; the GGUF writer
// reverses it), values in f32, stored as `type` (F32, F16, BF16 or any GGUF quantized type).
struct TestTensor {
  std::string name;
  std::vector<int64_t> shape;
  std::vector<float> values;
  GgmlType type = GgmlType::kF32;
};

// shape's values: a fixed smooth pattern that `seed` varies, in (-1, 1).
TestTensor MakeTestTensor(std::string name, std::vector<int64_t> shape, int seed);

// PEFT's name of layer `layer`'s module (`self_attn.q_proj`, `mlp.down_proj`) A or B matrix.
std::string PeftTensorName(int layer, const std::string& module, char a_or_b);

// An adapter_config.json of r, lora_alpha and target_modules (a JSON list or string), with
// `extra` ("\"use_rslora\": true") added when not empty.
std::string PeftConfig(int64_t r, double alpha, const std::string& target_modules,
                       const std::string& extra = "");

// Writes directory/adapter_config.json and directory/adapter_model.safetensors (creating the
// directory).
Status WritePeftAdapter(const std::string& directory, const std::string& config,
                        const std::vector<TestTensor>& tensors);

struct GgufAdapterHeader {
  std::string architecture = "llama";
  std::string type = "adapter";
  std::string adapter_type = "lora";
  std::optional<float> alpha = 16.0f;
};

// Writes a GGUF LoRA file with `header`'s metadata and `tensors`.
Status WriteGgufAdapter(const std::string& path, const GgufAdapterHeader& header,
                        const std::vector<TestTensor>& tensors);

}  // namespace vllm::lora
