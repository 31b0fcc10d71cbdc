// What make-random-model writes for one model, before any value is drawn: its GGUF metadata and
// its tensors (names in llama.cpp's convention, shapes, how values are drawn). The common parts
// (embeddings, head, the keys every family shares) come from random_model.cc; each architecture
// adds its own keys and layers (Architecture::plan_random_model) from the shared pieces below.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "common/expected.h"
#include "common/ggml_type.h"
#include "formats/gguf_value.h"
#include "model/random_model.h"

namespace vllm {

class GgufWriter;

struct RandomTensor {
  std::string name;
  std::vector<int64_t> shape;  // ggml order: shape[0] is the row length
  GgmlType type;               // kF32 for vectors; matrices take the recipe's type
  // Values uniform in [-scale, scale]; 0 means all ones; a negative scale s means uniform in
  // [1 + s, 1 - s] (norm weights around one). Ignored when `values` is set.
  float scale = 0.0f;
  std::vector<float> values;  // exact values (e.g. RoPE factors), all rows of the tensor
};

// The attention half of a pre-norm decoder layer.
struct AttentionPlanOptions {
  bool fused_qkv = false;        // one attn_qkv matrix (q, k, v rows) instead of three
  bool qkv_bias = false;         // biases on q, k and v
  bool qk_norm = false;          // per-head RMSNorm of q and k (attn_{q,k}_norm)
  bool output_bias = false;      // a bias on attn_output
  bool post_norm = false;        // post_attention_norm after attention (Gemma)
  bool attention_sinks = false;  // a learned sink logit per head (attn_sinks)
};

// The feed-forward half: a gated MLP, or a router and stacked experts when the shape has experts.
struct FeedForwardPlanOptions {
  std::string norm_name = "ffn_norm";  // the norm before the FFN
  bool fused_gate_up = false;          // ffn_up holds the gate rows then the up rows (no ffn_gate)
  bool expert_biases = false;          // biases on the router and on every expert projection
  bool post_norm = false;              // post_ffw_norm after the FFN (Gemma)
};

class RandomModelPlan {
 public:
  RandomModelPlan(const ModelShape& shape, GgmlType matrix_type);

  const ModelShape& shape() const { return shape_; }
  int64_t head_dim() const;
  // The scale of norm weights: 0 (all ones), or negative for weights around one (Gemma's
  // norms, whose GGUF weights include the +1).
  float norm_scale = 0.0f;
  // Multiplies the matrices that write into the residual stream (attn_output, ffn_down and the
  // experts' down projections): below 1, each layer changes the stream less, so that a cut of the
  // model to its first layers predicts its output (a draft model for speculative decoding).
  float residual_scale = 1.0f;

  // "<architecture>.<suffix>" = value.
  void AddKey(const std::string& suffix, GgufValue value);
  // A matrix of the recipe's type, values scaled by 1 / sqrt(its row length) unless `scale`
  // says otherwise.
  void AddMatrix(const std::string& name, std::vector<int64_t> shape,
                 std::optional<float> scale = std::nullopt);
  // A matrix writing into the residual stream: AddMatrix's scale times residual_scale.
  void AddResidualMatrix(const std::string& name, std::vector<int64_t> shape);
  void AddF32(const std::string& name, std::vector<int64_t> shape, float scale);
  void AddValues(const std::string& name, std::vector<float> values);
  void AddNorm(const std::string& name, int64_t length);

  // The shared layer pieces, for layer `layer`.
  void AddAttention(int64_t layer, const AttentionPlanOptions& options);
  void AddFeedForward(int64_t layer, const FeedForwardPlanOptions& options);
  // Both, for every layer of the shape.
  void AddLayers(const AttentionPlanOptions& attention, const FeedForwardPlanOptions& ffn);
  // A pooling model's keys when the shape has a pooling_type: "<arch>.pooling_type", and for
  // rank (4) llama.cpp's reranker head, cls.output.weight rows labelled "yes" and "no".
  void AddPooling();

  const std::vector<std::pair<std::string, GgufValue>>& keys() const { return keys_; }
  std::vector<RandomTensor>& tensors() { return tensors_; }

 private:
  ModelShape shape_;
  GgmlType matrix_type_;
  std::vector<std::pair<std::string, GgufValue>> keys_;
  std::vector<RandomTensor> tensors_;
};

// "blk.<layer>."
std::string LayerPrefix(int64_t layer);

// Adds `tensors` to `writer` (whose metadata is complete), then writes the file at `path` with
// their values: those a tensor gives, else drawn from (seed, tensor name, element index) only, so
// the same seed gives the same f32 values whatever the types and the order of the tensors.
Status WriteRandomTensors(const std::vector<RandomTensor>& tensors, uint64_t seed,
                          const std::string& path, GgufWriter* writer);

}  // namespace vllm
