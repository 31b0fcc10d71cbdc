// What an adapter loader needs to know of the base model: the shapes of the seven target weights
// and the order in which the base holds the rows of q and k. The engine fills it from the base's
// ModelConfig and architecture (this room sees neither).
//
// Rows of q and k: llama.cpp's converter permutes them for RoPE in a GGUF file of the "llama"
// family (the family whose GGUF rope style is RopeStyle::kInterleaved: rotary pairs adjacent), and
// convert_lora_to_gguf.py applies the same permutation to the lora_B of q and k. Every other
// family's GGUF keeps Hugging Face order, and the model room loads an HF checkpoint of any family
// as it is (ModelConfig::rope_style kNeox) and a GGUF as it is, permuting nothing at load. So:
//   qk_rows_permuted_for_rope   = the base is a GGUF file && gguf_permutes_qk_rows
//   gguf_permutes_qk_rows       = the family's GGUF rope style is kInterleaved ("llama")
// A PEFT adapter's lora_B is in HF order; a GGUF adapter's lora_B of q / k is permuted when
// gguf_permutes_qk_rows. The loader brings both to the base's order.
#pragma once

#include <array>
#include <cstdint>
#include <string>

#include "lora/lora_weights.h"

namespace vllm::lora {

struct LoraBaseShape {
  std::string architecture;  // ModelConfig::architecture ("llama"); "" skips the GGUF check
  int64_t num_layers = 0;
  int64_t hidden_size = 0;
  int64_t q_size = 0;             // num_heads · head_dim: q's rows, o's columns
  int64_t kv_size = 0;            // num_kv_heads · head_dim: the rows of k and v
  int64_t intermediate_size = 0;  // the rows of gate and up, the columns of down
  int64_t num_heads = 0;
  int64_t num_kv_heads = 0;
  int64_t head_dim = 0;
  bool qk_rows_permuted_for_rope = false;  // the base holds q / k rows in llama.cpp's order
  bool gguf_permutes_qk_rows = false;      // a GGUF (base or adapter) of the family does
  // The targets the base has (a non-gated MLP has no gate; an MoE layer no dense gate/up/down).
  std::array<bool, kNumLoraTargets> has_target = {true, true, true, true, true, true, true};
};

struct LoraTargetShape {
  int64_t in_features = 0;   // the base weight's columns: lora_A's
  int64_t out_features = 0;  // the base weight's rows: lora_B's
};

// The shape of `target`'s base weight.
LoraTargetShape TargetShape(const LoraBaseShape& base, LoraTarget target);

}  // namespace vllm::lora
