// Phi-3 / Phi-4-mini (layers/decoder.h): pre-norm RMSNorm blocks, one fused QKV projection
// (attn_qkv rows: q, k, v), a SwiGLU FFN whose ffn_up holds the gate rows then the up rows, and
// NeoX RoPE (partial when configured) with LongRoPE: per-frequency divisors, rope_factors_long
// for every position when the engine's max_model_len exceeds the original context length and
// rope_factors_short otherwise (vLLM's rule), cos and sin scaled by the attention factor.
#include <cmath>

#include "model/architecture.h"
#include "model/hf_checkpoint.h"
#include "model/layers/decoder.h"
#include "model/layers/rope.h"
#include "model/layers/tensor_ops.h"
#include "model/random_model_plan.h"
#include "model/registry.h"
#include "model/weight_loader.h"

namespace vllm {
namespace {

Expected<std::unique_ptr<Model>> CreatePhi3(const TensorSource& source, const ModelConfig& config,
                                            const ModelLoadOptions& options) {
  WeightLoader loader(source);
  const int64_t num_freqs = config.rope_dim / 2;
  std::vector<float> short_factors, long_factors;  // [rope_dim / 2] each; empty: none
  if (loader.Has("rope_factors_short.weight")) {
    VLLM_RETURN_IF_ERROR(
        Assign(loader.Vector("rope_factors_short.weight", num_freqs), &short_factors));
  }
  if (loader.Has("rope_factors_long.weight")) {
    VLLM_RETURN_IF_ERROR(
        Assign(loader.Vector("rope_factors_long.weight", num_freqs), &long_factors));
  }
  const int64_t max_model_len =
      options.max_model_len > 0 ? options.max_model_len : config.max_position_embeddings;
  const bool use_long_factors = config.rope_original_context_length > 0 &&
                                max_model_len > config.rope_original_context_length;
  auto rope =
      std::make_shared<Rope>(config, std::move(use_long_factors ? long_factors : short_factors));
  return CreateDecoder(source, config, options, {},
                       [rope](int64_t) -> const Rope& { return *rope; });
}

Status ReadPhi3Gguf(const GgufFile& file, ModelConfig* config) {
  const std::string& a = config->architecture;
  VLLM_RETURN_IF_ERROR(ReadGgufInt(file, a + ".rope.scaling.original_context_length",
                                   &config->rope_original_context_length));
  return ReadGgufFloat(file, a + ".rope.scaling.attn_factor", &config->rope_attn_factor);
}

// LongRoPE's factor tensors and attention factor into config.json's rope_scaling.
Status WritePhi3Hf(const GgufFile& file, const ModelConfig& config, nlohmann::json* out) {
  // transformers' Phi3Config would otherwise pad with id 32000, outside smaller vocabularies.
  (*out)["pad_token_id"] = nullptr;
  const GgufTensor* short_factors = file.FindTensor("rope_factors_short.weight");
  const GgufTensor* long_factors = file.FindTensor("rope_factors_long.weight");
  if (short_factors == nullptr || long_factors == nullptr) return Status::Ok();
  auto values = [](const GgufTensor* tensor) {
    std::vector<float> factors(tensor->shape[0]);
    kernels::DequantizeRow(tensor->type, tensor->data, tensor->shape[0], factors.data());
    return factors;
  };
  (*out)["original_max_position_embeddings"] = config.rope_original_context_length;
  (*out)["rope_scaling"] = {{"type", "longrope"},
                            {"short_factor", values(short_factors)},
                            {"long_factor", values(long_factors)},
                            {"attention_factor", config.rope_attn_factor}};
  return Status::Ok();
}

// The fused projections (the fused gate_up is llama.cpp's ffn_up), then Llama's names: the
// first pair that matches a name translates it.
std::vector<TensorNamePair> Phi3Names() {
  std::vector<TensorNamePair> names = LlamaHfTensorNames();
  const std::string layer = "model.layers.{L}.";
  names.insert(names.begin(), {{layer + "self_attn.qkv_proj.weight", "blk.{L}.attn_qkv.weight"},
                               {layer + "mlp.gate_up_proj.weight", "blk.{L}.ffn_up.weight"}});
  return names;
}

// Fused projections and LongRoPE factors shaped like Phi-3's: short ones near 1, long ones
// growing towards the low frequencies; the attention factor of the context extension.
void PlanPhi3Random(RandomModelPlan* plan) {
  const ModelShape& shape = plan->shape();
  const int64_t original = shape.rope_original_context_length;
  plan->AddKey("rope.scaling.original_context_length", GgufValue::Uint32(original));
  const double extension = static_cast<double>(shape.context_length) / original;
  plan->AddKey("rope.scaling.attn_factor",
               GgufValue::Float32(static_cast<float>(std::sqrt(
                   1.0 + std::log(extension) / std::log(static_cast<double>(original))))));
  const int64_t num_freqs = (shape.rope_dim > 0 ? shape.rope_dim : plan->head_dim()) / 2;
  std::vector<float> short_factors(num_freqs), long_factors(num_freqs);
  for (int64_t i = 0; i < num_freqs; ++i) {
    const float fraction = static_cast<float>(i) / static_cast<float>(num_freqs);
    short_factors[i] = 1.0f + 0.5f * fraction;
    long_factors[i] = 1.0f + 40.0f * fraction * fraction;
  }
  plan->AddValues("rope_factors_long.weight", std::move(long_factors));
  plan->AddValues("rope_factors_short.weight", std::move(short_factors));
  plan->AddLayers({.fused_qkv = true}, {.fused_gate_up = true});
}

}  // namespace

const Architecture kPhi3Architecture{
    .name = "phi3",
    .hf_names = {"Phi3ForCausalLM"},
    .read_gguf = ReadPhi3Gguf,
    .write_hf = WritePhi3Hf,
    .hf_tensors = Phi3Names(),
    .create = CreatePhi3,
    .plan_random_model = PlanPhi3Random,
};

}  // namespace vllm
