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

  Status Validate() const;
};

// Reads "<arch>.*" keys as llama.cpp writes them; vocab_size falls back to the token list length.
Expected<ModelConfig> ModelConfigFromGguf(const GgufFile& file);

}  // namespace vllm
