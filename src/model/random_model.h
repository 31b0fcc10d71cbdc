// Writes random-weight Llama-architecture GGUF files of real model shapes, with llama.cpp's tensor
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
  int64_t intermediate_size;
  int64_t context_length;
  float rope_theta;
  bool tie_word_embeddings;
  std::string architecture = "llama";  // llama | qwen2 (Q/K/V biases) | qwen3 (Q/K RMSNorm)
  int64_t head_dim = 0;                // 0: hidden_size / num_heads
};

// Known shapes: tinyllama-1.1b, smollm2-135m, qwen3-0.6b, and the test shapes llama-tiny,
// qwen2-tiny, qwen3-tiny (4 layers, dim 128) and llama-d256 (3 layers, rows of 256 for K-quants).
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
