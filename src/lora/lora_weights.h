// One LoRA adapter as the model's layers apply it: per layer and target module, the pair
// (A, B) with delta W = scale · B · A, scale already folded into B.
//   y[t, :] += (x[t, :] · Aᵀ) · Bᵀ      for every token t of a request that runs the adapter
// The rows of B follow the base weight's rows as the model holds them at run time (for q and k of
// a GGUF llama base: llama.cpp's RoPE-permuted order), so layers add the product as it comes.
#pragma once

#include <array>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace vllm::lora {

// The modules an adapter may target, in the order of LoraLayer::targets.
enum class LoraTarget : int { kQ, kK, kV, kO, kGate, kUp, kDown };
inline constexpr int kNumLoraTargets = 7;

// PEFT's module name of a target: "q_proj", "k_proj", "v_proj", "o_proj", "gate_proj",
// "up_proj", "down_proj".
std::string_view PeftModuleName(LoraTarget target);

// How an adapter's matrices are stored (vLLM's --lora-dtype); the product runs in f32 either way.
// bf16 halves the bytes a step reads per adapter, which is what a mixed-adapter step pays for.
enum class LoraDtype { kFloat32, kBfloat16 };

struct LoraMatrices {
  int64_t rank = 0;
  int64_t in_features = 0;   // the base weight's columns
  int64_t out_features = 0;  // the base weight's rows
  // dtype kFloat32: a and b hold the matrices, a_bf16 and b_bf16 are empty; kBfloat16: the
  // reverse.
  std::vector<float> a;  // [rank, in_features], row-major
  std::vector<float> b;  // [out_features, rank], row-major, times the adapter's scale
  LoraDtype dtype = LoraDtype::kFloat32;
  std::vector<uint16_t> a_bf16;  // a rounded to bf16 (nearest even), same layout
  // b rounded to bf16, transposed: [rank, out_features], so that the expand runs along the
  // outputs (rank multiply-adds per output in vector lanes, no sum across lanes per output).
  std::vector<uint16_t> b_bf16;

  int64_t num_a_values() const {
    return static_cast<int64_t>(dtype == LoraDtype::kBfloat16 ? a_bf16.size() : a.size());
  }
  int64_t num_b_values() const {
    return static_cast<int64_t>(dtype == LoraDtype::kBfloat16 ? b_bf16.size() : b.size());
  }
};

// Stores f32 matrices as `dtype`: kBfloat16 rounds a and b (transposed) to a_bf16 and b_bf16
// and frees them.
void StoreLoraMatricesAs(LoraDtype dtype, LoraMatrices& matrices);

struct LoraLayer {
  std::array<std::optional<LoraMatrices>, kNumLoraTargets> targets;  // indexed by LoraTarget
};

struct LoraWeights {
  std::string name;               // LoraRequest::lora_name
  int64_t id = 0;                 // LoraRequest::lora_int_id
  int64_t rank = 0;               // the largest rank of its matrices
  std::vector<LoraLayer> layers;  // [num_layers of the base]
};

}  // namespace vllm::lora
