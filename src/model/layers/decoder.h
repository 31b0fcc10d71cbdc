// The pre-norm decoder the architectures in arch/ are built from: token embedding (optionally
// scaled), then per layer
//   x += [post_attention_norm](attention(attn_norm(x)))
//   x += [post_ffw_norm](ffn(<ffn norm>(x)))
// where the bracketed norms apply when the layer has them (Gemma), ffn is a dense gated MLP or a
// mixture of experts (when the config has experts), and the norm before the FFN is ffn_norm (or
// post_attention_norm in gpt-oss's naming); then the final norm and the output head over the rows
// whose logits are wanted. The architecture supplies the rotary embedding of each layer.
// With ModelLoadOptions::tensor_parallel the decoder is one rank's shard (tensor_parallel.h): its
// layers hold their slices and the residual stream, replicated on every rank, gets each
// attention's and FFN's partial sums all-reduced over the group. With
// ModelLoadOptions::pipeline_parallel it is one stage of a pipeline (pipeline_parallel.h): it
// holds and runs its range of layers, and passes the residual stream on.
#pragma once

#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "model/layers/attention_block.h"
#include "model/layers/embedding_and_head.h"
#include "model/layers/gated_mlp.h"
#include "model/layers/moe.h"
#include "model/layers/rope.h"
#include "model/model.h"
#include "model/pipeline_parallel.h"
#include "model/tensor_parallel.h"
#include "model/tensor_source.h"

namespace vllm {

struct DecoderOptions {
  GateActivation gate_activation = GateActivation::kSilu;        // dense FFN
  ExpertActivation expert_activation = ExpertActivation::kSilu;  // MoE FFN
  float embedding_scale = 1.0f;
  // Given input embeddings already carry embedding_scale, as the Hugging Face model's embedding
  // module yields them (Gemma 3's scaled embedding; Gemma 2 scales after its plain one).
  bool input_embeds_scaled = false;
  std::string ffn_norm_name = "ffn_norm";  // the norm before the FFN
};

// The rotary embedding of layer `layer`.
using LayerRope = std::function<const Rope&(int64_t layer)>;

class Decoder : public Model {
 public:
  Decoder(const ModelConfig& config, ThreadPool& pool, DecoderOptions options, LayerRope rope);

  Status Load(const TensorSource& source, std::optional<GgmlType> linear_type);
  // Loads `group`'s rank's shard from `shard` (made for this decoder's config), which the decoder
  // keeps: its slices are the embedding's rows.
  Status LoadShard(std::unique_ptr<TensorParallelSource> shard, dist::Communicator* group,
                   std::optional<GgmlType> linear_type);
  // Before Load or LoadShard: the decoder is stage `group->rank()` of `group` (whose ranks are
  // the stages in order): it loads and runs `stage`'s layers (the embedding on the first stage,
  // the head on the last). With a tensor-parallel group too, each stage is split across it.
  void SetStage(dist::Communicator* group, PipelineStage stage);
  // A pipeline stage logs its bubble: the share of its forward time it waited for its input.
  ~Decoder() override;
  const ModelConfig& config() const override { return config_; }
  int64_t weight_bytes() const override { return weight_bytes_; }
  bool accepts_input_embeds() const override { return true; }
  KvStorage::Options KvStorageOptionsOf(const KvStorage::Options& whole) const override;
  Status Forward(const ForwardBatch& batch, KvStorage& kv, float* logits) override;
  // Decoders as embedders: the final-normed hidden states of every batch token.
  Status ForwardHidden(const ForwardBatch& batch, KvStorage& kv, float* hidden) override;

 private:
  struct Layer {
    std::vector<float> attn_norm;  // [hidden]
    AttentionBlock attention;
    std::vector<float> post_attention_norm;  // [hidden]; empty: none
    std::vector<float> ffn_norm;             // [hidden]
    std::optional<GatedMlp> mlp;             // dense FFN, or
    std::optional<MoeFeedForward> moe;       // mixture of experts
    std::vector<float> post_ffw_norm;        // [hidden]; empty: none
  };

  // The stage's layers over a batch that passed CheckBatch: x: [num_tokens, hidden], the residual
  // stream: the previous stage's on entry (a stage after the first), after the stage's last layer
  // on return.
  Status RunLayers(const ForwardBatch& batch, KvStorage& kv, std::vector<float>* x);
  // Forward as a pipeline stage: the micro-batches of the step through this stage's layers
  // (pipeline_parallel.h); logits (the whole step's) are filled on the first stage.
  Status ForwardStage(const ForwardBatch& batch, KvStorage& kv, float* logits);
  // The checks of a batch before it runs (ValidateForwardBatch; no LoRA adapter across ranks):
  // every rank of a group makes them alike, so that all refuse a batch together.
  Status CheckBatch(const ForwardBatch& batch, const KvStorage& kv) const;

  ModelConfig config_;
  ThreadPool& pool_;
  DecoderOptions options_;
  LayerRope rope_;
  EmbeddingAndHead ends_;
  std::vector<Layer> layers_;
  dist::Communicator* tensor_parallel_ = nullptr;  // null: the whole model
  std::unique_ptr<TensorParallelSource> shard_;
  dist::Communicator* pipeline_ = nullptr;  // null: one stage of every layer
  PipelineStage stage_;
  double forward_seconds_ = 0, waited_seconds_ = 0;  // a pipeline stage's, for its bubble
  int64_t weight_bytes_ = 0;
};

// Builds and loads a Decoder (the factories of arch/ call it).
Expected<std::unique_ptr<Model>> CreateDecoder(const TensorSource& source,
                                               const ModelConfig& config,
                                               const ModelLoadOptions& options,
                                               DecoderOptions decoder_options, LayerRope rope);

}  // namespace vllm
