// What the PEFT and GGUF readers hand the loader: an adapter's (A, B) pairs as its file holds
// them, before the checks against the base, the row order of q / k and the scale
// (AssembleLoraWeights).
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "common/expected.h"
#include "common/ggml_type.h"
#include "lora/lora_base_shape.h"
#include "lora/lora_weights.h"
#include "vllm/lora_request.h"

namespace vllm::lora {

struct LoraFilePair {
  int64_t layer = 0;
  LoraTarget target = LoraTarget::kQ;
  std::string tensor_name;  // lora_A's tensor, for errors
  LoraMatrices matrices;    // b not yet scaled; a fused module's part already split off
  float scale = 1.0f;       // alpha / r (or alpha / sqrt(r) for rsLoRA)
};

struct LoraFilePairs {
  std::vector<LoraFilePair> pairs;
  bool qk_rows_permuted_for_rope = false;  // lora_B of q and k in llama.cpp's row order
};

// A tensor's values in f32: `rows` rows of `cols` values of `type` at `data` (`num_bytes` of
// them, any alignment). F32, F16, BF16 and every quantized type the kernels' table decodes.
Expected<std::vector<float>> TensorValuesF32(const std::string& name, GgmlType type,
                                             const void* data, int64_t num_bytes, int64_t rows,
                                             int64_t cols);

// Appends the pair of `target`, or of a fused module's targets (q, k, v of qkv_proj / attn_qkv;
// gate, up of gate_up_proj), with B's rows split in that order and A shared.
// fused_targets: the targets in B's row order, one for an unfused module.
Status AddLoraFilePairs(const LoraBaseShape& base, const std::vector<LoraTarget>& fused_targets,
                        LoraFilePair pair, LoraFilePairs* out);

// The adapter as the layers take it: each pair checked against the base (layer, target, shape,
// rank ≤ max_lora_rank), lora_B of q / k brought to the base's row order, the scale folded into B.
Expected<LoraWeights> AssembleLoraWeights(const LoraRequest& request, const LoraBaseShape& base,
                                          int64_t max_lora_rank, LoraFilePairs file_pairs);

}  // namespace vllm::lora
