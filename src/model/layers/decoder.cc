#include "model/layers/decoder.h"

#include <algorithm>

#include "dist/communicator.h"
#include "model/layers/paged_attention.h"
#include "model/layers/tensor_ops.h"
#include "model/load_progress.h"
#include "model/weight_loader.h"

namespace vllm {

Decoder::Decoder(const ModelConfig& config, ThreadPool& pool, DecoderOptions options,
                 LayerRope rope)
    : config_(config),
      pool_(pool),
      options_(std::move(options)),
      rope_(std::move(rope)),
      stage_{.first_layer = 0, .end_layer = config.num_layers} {}

Status Decoder::Load(const TensorSource& source, std::optional<GgmlType> linear_type) {
  WeightLoader loader(source, linear_type);
  const int64_t hidden = config_.hidden_size;
  VLLM_RETURN_IF_ERROR(
      ends_.Load(loader, config_, options_.embedding_scale, tensor_parallel_, stage_.is_last()));
  layers_.resize(config_.num_layers);  // only the stage's are loaded
  LoadProgress progress(stage_.end_layer - stage_.first_layer);
  int64_t expert_bytes = 0;  // routers and experts
  auto optional_norm = [&](const std::string& name, std::vector<float>* out) -> Status {
    if (!loader.Has(name)) return Status::Ok();
    return Assign(loader.Vector(name, hidden), out);
  };
  for (int64_t i = stage_.first_layer; i < stage_.end_layer; ++i) {
    const std::string prefix = "blk." + std::to_string(i) + ".";
    Layer& layer = layers_[i];
    VLLM_RETURN_IF_ERROR(
        Assign(loader.Vector(prefix + "attn_norm.weight", hidden), &layer.attn_norm));
    VLLM_RETURN_IF_ERROR(layer.attention.Load(loader, i, config_, tensor_parallel_));
    const std::string ffn_norm = prefix + options_.ffn_norm_name + ".weight";
    if (options_.ffn_norm_name != "post_attention_norm") {
      VLLM_RETURN_IF_ERROR(
          optional_norm(prefix + "post_attention_norm.weight", &layer.post_attention_norm));
    }
    VLLM_RETURN_IF_ERROR(Assign(loader.Vector(ffn_norm, hidden), &layer.ffn_norm));
    if (config_.num_experts > 0) {
      const int64_t bytes_before = loader.linear_bytes();
      auto moe = MoeFeedForward::Load(loader, prefix, config_, options_.expert_activation);
      if (!moe) return Error{moe.error()};
      layer.moe = std::move(*moe);
      expert_bytes += loader.linear_bytes() - bytes_before;
    } else {
      layer.mlp.emplace();
      VLLM_RETURN_IF_ERROR(layer.mlp->Load(loader, prefix, hidden, config_.intermediate_size,
                                           options_.gate_activation));
    }
    VLLM_RETURN_IF_ERROR(optional_norm(prefix + "post_ffw_norm.weight", &layer.post_ffw_norm));
    if (shard_ != nullptr) shard_->ReleaseCopies();  // the layer packed its own copies
    progress.Step();
  }
  // A token reads only its num_experts_per_token experts (the small routers are counted in the
  // same share).
  weight_bytes_ = loader.linear_bytes() - expert_bytes;
  if (config_.num_experts > 0) {
    weight_bytes_ += expert_bytes * config_.num_experts_per_token / config_.num_experts;
  }
  return Status::Ok();
}

Status Decoder::LoadShard(std::unique_ptr<TensorParallelSource> shard, dist::Communicator* group,
                          std::optional<GgmlType> linear_type) {
  shard_ = std::move(shard);
  tensor_parallel_ = group;
  return Load(*shard_, linear_type);
}

Status Decoder::Forward(const ForwardBatch& batch, KvStorage& kv, float* logits) {
  if (pipeline_ != nullptr) return ForwardStage(batch, kv, logits);
  std::vector<float> x;  // [num_tokens, hidden]
  VLLM_RETURN_IF_ERROR(CheckBatch(batch, kv));
  VLLM_RETURN_IF_ERROR(RunLayers(batch, kv, &x));
  return ends_.Logits(x.data(), batch.logits_indices, pool_, logits);
}

Status Decoder::ForwardHidden(const ForwardBatch& batch, KvStorage& kv, float* hidden) {
  if (pipeline_ != nullptr) return Error{"hidden states with pipeline parallel"};
  std::vector<float> x;  // [num_tokens, hidden]
  VLLM_RETURN_IF_ERROR(CheckBatch(batch, kv));
  VLLM_RETURN_IF_ERROR(RunLayers(batch, kv, &x));
  ends_.FinalNorm(x.data(), batch.num_tokens(), hidden);
  return Status::Ok();
}

Status Decoder::CheckBatch(const ForwardBatch& batch, const KvStorage& kv) const {
  // Every rank sees the same batch, so all refuse it before any collective.
  if ((tensor_parallel_ != nullptr || pipeline_ != nullptr) &&
      std::any_of(batch.seq_loras.begin(), batch.seq_loras.end(),
                  [](const lora::LoraWeights* adapter) { return adapter != nullptr; })) {
    return Error{"LoRA adapters with tensor or pipeline parallel are not supported yet"};
  }
  return ValidateForwardBatch(batch, kv, config_);
}

Status Decoder::RunLayers(const ForwardBatch& batch, KvStorage& kv, std::vector<float>* residual) {
  const int64_t num_tokens = batch.num_tokens();
  const int64_t hidden = config_.hidden_size;
  const float eps = config_.rms_norm_eps;
  // Activations, each [num_tokens, hidden].
  std::vector<float>& x = *residual;
  std::vector<float> normed(num_tokens * hidden);
  std::vector<float> projected(num_tokens * hidden);
  // Over token rows in parallel (each row's arithmetic the same whatever the split): the
  // sublayer's output in `projected` (post-normed where the layer has a post norm) is added to x,
  // then x is normed by `next_norm` into `normed` (none after the last layer). Without a sublayer
  // (`post_norm` null) only the norm runs.
  auto add_and_norm = [&](const std::vector<float>* post_norm,
                          const std::vector<float>* next_norm) {
    // Row by row, so that a row's residual is normed while still in L1.
    pool_.ParallelFor(num_tokens, [&](int64_t begin, int64_t end) {
      for (int64_t row = begin; row < end; ++row) {
        float* residual_row = x.data() + row * hidden;
        if (post_norm != nullptr) {
          float* sublayer_row = projected.data() + row * hidden;
          if (!post_norm->empty()) {
            kernels::RmsNorm(sublayer_row, post_norm->data(), 1, hidden, eps, sublayer_row);
          }
          kernels::AxpyF32(1.0f, sublayer_row, hidden, residual_row);
        }
        if (next_norm != nullptr) {
          kernels::RmsNorm(residual_row, next_norm->data(), 1, hidden, eps,
                           normed.data() + row * hidden);
        }
      }
    });
  };

  if (stage_.is_first()) {
    x.assign(num_tokens * hidden, 0.0f);
    VLLM_RETURN_IF_ERROR(ends_.Embed(batch.token_ids, x.data()));
    for (const InputEmbedsRows& rows : batch.input_embeds) {
      ends_.ReplaceRows(rows.values, options_.input_embeds_scaled,
                        x.data() + int64_t{rows.first_row} * hidden);
    }
  }  // else x holds the previous stage's residual stream
  const int64_t first = stage_.first_layer, end = stage_.end_layer;
  add_and_norm(nullptr, first < end ? &layers_[first].attn_norm : nullptr);
  const LoraSegments lora_segments(batch);  // grouped once, used by every layer
  const LoraSegments* lora = lora_segments.empty() ? nullptr : &lora_segments;
  for (int64_t l = first; l < end; ++l) {
    const Layer& layer = layers_[l];
    VLLM_RETURN_IF_ERROR(
        layer.attention.Forward(normed.data(), batch, rope_(l), kv, pool_, projected.data(), lora));
    add_and_norm(&layer.post_attention_norm, &layer.ffn_norm);
    if (layer.moe) {
      layer.moe->Forward(normed.data(), num_tokens, pool_, projected.data());
    } else {
      layer.mlp->Forward(normed.data(), num_tokens, pool_, projected.data(), {lora, l});
    }
    if (tensor_parallel_ != nullptr) {  // the FFN's partial sums (down's columns, experts' too)
      VLLM_RETURN_IF_ERROR(tensor_parallel_->AllReduceSum(projected.data(), num_tokens * hidden));
    }
    add_and_norm(&layer.post_ffw_norm, l + 1 < end ? &layers_[l + 1].attn_norm : nullptr);
  }
  return Status::Ok();
}

Expected<std::unique_ptr<Model>> CreateDecoder(const TensorSource& source,
                                               const ModelConfig& config,
                                               const ModelLoadOptions& options,
                                               DecoderOptions decoder_options, LayerRope rope) {
  dist::Communicator* group = options.tensor_parallel;
  dist::Communicator* stages = options.pipeline_parallel;
  std::optional<PipelineStage> stage;
  if (stages != nullptr && stages->size() > 1) {
    auto layers = PipelineStageOf(config.num_layers, stages->rank(), stages->size(),
                                  options.pipeline_layer_partition);
    if (!layers) return Error{layers.error()};
    stage = *layers;
  }
  if (group == nullptr || group->size() == 1) {
    auto model = std::make_unique<Decoder>(config, *options.pool, std::move(decoder_options),
                                           std::move(rope));
    if (stage) model->SetStage(stages, *stage);
    VLLM_RETURN_IF_ERROR(model->Load(source, options.linear_type));
    return std::unique_ptr<Model>(std::move(model));
  }
  auto shard = TensorParallelSource::Create(source, config, group->rank(), group->size());
  if (!shard) return Error{shard.error()};
  auto model = std::make_unique<Decoder>((*shard)->local_config(), *options.pool,
                                         std::move(decoder_options), std::move(rope));
  if (stage) model->SetStage(stages, *stage);
  VLLM_RETURN_IF_ERROR(model->LoadShard(std::move(*shard), group, options.linear_type));
  return std::unique_ptr<Model>(std::move(model));
}

}  // namespace vllm
