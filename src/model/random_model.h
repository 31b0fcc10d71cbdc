// Writes random-weight GGUF files of real model shapes, with llama.cpp's tensor
// names and metadata keys, so other engines read the same file. Benchmarks and tests use them;
// no trained model of these sizes exists here.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "common/expected.h"
#include "common/ggml_type.h"

namespace vllm {

struct ModelShape {
  std::string name;
  int64_t hidden_size;
  int64_t num_layers;
  int64_t num_heads;
  int64_t num_kv_heads;
  int64_t intermediate_size;  // dense FFN width, or each expert's with experts
  int64_t context_length;
  float rope_theta;
  bool tie_word_embeddings;
  // llama | qwen2 (Q/K/V biases) | qwen3 (Q/K RMSNorm) | qwen3moe | gemma2 | gemma3 | gpt-oss;
  // the architecture decides which tensors and keys beyond Llama's a file has.
  std::string architecture = "llama";
  int64_t head_dim = 0;  // 0: hidden_size / num_heads
  int64_t num_experts = 0;
  int64_t num_experts_per_token = 0;
  int64_t sliding_window = 0;  // gemma2 / gemma3 / gpt-oss: local layers' window
};

// Known shapes: real models' (tinyllama-1.1b, smollm2-135m, qwen3-0.6b, gemma3-1b,
// qwen3-30b-a3b, gpt-oss-20b) and test shapes of 4 layers, dim 128 (llama-tiny, qwen2-tiny,
// qwen3-tiny, mixtral-tiny, gemma2-tiny, gpt-oss-tiny) or 3 layers, rows of 256 for K-quants
// (llama-d256).
const std::vector<ModelShape>& KnownModelShapes();
const ModelShape* FindModelShape(const std::string& name);

struct RandomModelOptions {
  std::string shape = "llama-tiny";
  // Linear layers and embeddings (norms stay f32): a type name or a K-quant mix (QuantRecipe).
  std::string dtype = "f32";
  std::string vocab_path;  // a GGUF whose tokenizer.* metadata is copied
  std::string output_path;
  uint64_t seed = 0;
  int64_t num_layers_override = 0;  // > 0: use this many layers instead of the shape's
};

// The same seed gives the same f32 values whatever the dtype, so files of different dtypes
// are quantizations of one model.
Status WriteRandomModel(const RandomModelOptions& options);

}  // namespace vllm
