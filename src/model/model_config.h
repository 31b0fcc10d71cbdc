// Architecture hyper-parameters of a decoder-only transformer, read from model metadata.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "common/expected.h"
#include "formats/gguf_file.h"

namespace vllm {

// How RoPE pairs the dimensions of a head.
enum class RopeStyle {
  kInterleaved,  // (x[2i], x[2i+1]) — GGUF Llama (llama.cpp permutes Q/K at conversion)
  kNeox,         // (x[i], x[i + rope_dim / 2]) — Hugging Face layout, Qwen2/Qwen3 GGUFs
};

struct ModelConfig {
  std::string architecture;  // e.g. "llama"
  int64_t vocab_size = 0;
  int64_t hidden_size = 0;
  int64_t num_layers = 0;
  int64_t num_heads = 0;
  int64_t num_kv_heads = 0;
  int64_t head_dim = 0;
  int64_t intermediate_size = 0;
  int64_t max_position_embeddings = 0;
  float rms_norm_eps = 1e-5f;
  float rope_theta = 10000.0f;
  int64_t rope_dim = 0;              // leading dims of each head that rotate (usually head_dim)
  float rope_position_scale = 1.0f;  // linear scaling: positions are multiplied by this
  RopeStyle rope_style = RopeStyle::kInterleaved;

  // Mixture of experts (qwen3moe)
  int64_t num_experts = 0;               // experts per MoE layer
  int64_t num_experts_per_token = 0;     // experts each token is routed to (top-k)
  int64_t expert_intermediate_size = 0;  // each expert's FFN width
  // LongRoPE (phi3)
  int64_t rope_original_context_length = 0;  // short factors apply below it
  float rope_attn_factor = 1.0f;             // multiplies the rotation's cos and sin
  // Gemma 3
  int64_t sliding_window = 0;          // keys a local-attention layer sees (0: all layers global)
  int64_t sliding_window_pattern = 6;  // every pattern-th layer (1-based) attends globally
  float rope_theta_swa = 10000.0f;     // RoPE base of the local layers (no position scaling)

  Status Validate() const;
};

// Reads "<arch>.*" keys as llama.cpp writes them; vocab_size falls back to the token list length.
Expected<ModelConfig> ModelConfigFromGguf(const GgufFile& file);

}  // namespace vllm
