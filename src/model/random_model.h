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
  // A registered architecture (llama, qwen2, qwen3, qwen3moe, phi3, gemma2, gemma3, gpt-oss,
  // gemma-embedding): its plan_random_model decides which tensors and keys beyond the common
  // ones a file has.
  std::string architecture = "llama";
  int64_t head_dim = 0;  // 0: hidden_size / num_heads
  int64_t num_experts = 0;
  int64_t num_experts_per_token = 0;
  int64_t sliding_window = 0;  // gemma2 / gemma3 / gpt-oss: local layers' window
  int64_t rope_dim = 0;        // rotated dimensions of a head (partial rotary); 0: head_dim
  int64_t rope_original_context_length = 0;  // phi3: LongRoPE's pretraining context
  float rope_scaling_factor = 0.0f;          // gemma3: linear position scaling of the global layers
  // >= 0: llama.cpp's "<arch>.pooling_type" of an embedder (3 last) or reranker (4 rank).
  int64_t pooling_type = -1;

  int64_t resolved_head_dim() const { return head_dim > 0 ? head_dim : hidden_size / num_heads; }
};

// Known shapes: real models' (stories260k, tinyllama-1.1b, smollm2-135m, qwen3-0.6b, mixtral-8x7b,
// qwen3-30b-a3b, gpt-oss-20b, gemma2-2b, gemma3-1b, gemma3-4b, phi4-mini) and test shapes of 4
// layers, dim 128 (llama-tiny, qwen2-tiny, qwen3-tiny, mixtral-tiny, qwen3moe-tiny, gemma2-tiny,
// gpt-oss-tiny, phi3-tiny; gemma3-tiny has 6), gemma2-27b-tiny (46 layers of dim 128) or 3 layers,
// rows of 256 for K-quants (llama-d256; llama-d512, 2 layers, for K-quants split over 2
// tensor-parallel ranks); pooling models: qwen3-embedding-0.6b, embeddinggemma-300m,
// and test shapes qwen3-embedding-tiny, qwen3-reranker-tiny (qwen3-tiny with a rank head),
// embeddinggemma-tiny (6 layers of dim 128, window 8).
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
  float residual_scale = 1.0f;      // RandomModelPlan::residual_scale
};

// The same seed gives the same f32 values whatever the dtype, so files of different dtypes
// are quantizations of one model.
Status WriteRandomModel(const RandomModelOptions& options);

}  // namespace vllm
