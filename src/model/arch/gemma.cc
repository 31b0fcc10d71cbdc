// Gemma 2 and Gemma 3 text decoders (layers/decoder.h): the token embedding scaled by
// sqrt(hidden), pre- and post-norm RMSNorm around attention and FFN (GGUF norm weights include
// Gemma's +1; Hugging Face ones do not), GELU(tanh)-gated FFN, tied output head, NeoX RoPE, and
// interleaved sliding-window layers: every sliding_window_pattern-th layer attends globally
// (Gemma 2: every other one; Gemma 3: one in six). Attention scaled by query_pre_attn_scalar^-1/2.
// Gemma 2 soft-caps attention logits and final logits; Gemma 3 instead normalizes each Q/K head
// (RMSNorm) and gives its local layers their own RoPE base (no position scaling).
// EmbeddingGemma (GGUF "gemma-embedding", Hugging Face Gemma3TextModel with
// use_bidirectional_attention) is Gemma 3 attending both ways (a local layer's window is
// symmetric: sliding_window / 2 on either side), mean-pooled, with sentence-transformers Dense
// modules dense_2 (hidden → 4 hidden) and dense_3 (back) before normalization
// (layers/pooling_decoder.h).
#include <cmath>

#include "model/architecture.h"
#include "model/hf_checkpoint.h"
#include "model/layers/decoder.h"
#include "model/layers/pooling_decoder.h"
#include "model/layers/rope.h"
#include "model/random_model_plan.h"
#include "model/registry.h"

namespace vllm {
namespace {

Expected<std::unique_ptr<Model>> CreateGemma(const TensorSource& source, const ModelConfig& config,
                                             const ModelLoadOptions& options) {
  ModelConfig local = config;  // the local layers' RoPE
  if (config.rope_theta_swa > 0) {
    local.rope_theta = config.rope_theta_swa;
    local.rope_position_scale = 1.0f;
  }
  auto global_rope = std::make_shared<Rope>(config);
  auto local_rope = std::make_shared<Rope>(local);
  DecoderOptions decoder_options{
      .gate_activation = GateActivation::kGeluTanh,
      .embedding_scale = std::sqrt(static_cast<float>(config.hidden_size)),
      .input_embeds_scaled = config.architecture != "gemma2",
  };
  auto decoder =
      CreateDecoder(source, config, options, decoder_options, [=](int64_t layer) -> const Rope& {
        return config.LayerSlidingWindow(layer) > 0 ? *local_rope : *global_rope;
      });
  if (!decoder) return Error{decoder.error()};
  return PoolingDecoder::Wrap(source, std::move(*decoder), *options.pool);
}

// Google's reference scales queries by (hidden / heads)^-1/2 in the 27B models and by
// head_dim^-1/2 in the others; GGUF files do not store query_pre_attn_scalar.
void SetGgufAttentionScale(ModelConfig* config, int64_t num_layers_of_27b) {
  if (config->num_layers == num_layers_of_27b) {
    config->attention_scale =
        1.0f / std::sqrt(static_cast<float>(config->hidden_size / config->num_heads));
  }
}

Status ReadGemma2Gguf(const GgufFile& file, ModelConfig* config) {
  const std::string& a = config->architecture;
  config->sliding_window = 4096;
  config->sliding_window_pattern = 2;
  VLLM_RETURN_IF_ERROR(ReadGgufInt(file, a + ".attention.sliding_window", &config->sliding_window));
  VLLM_RETURN_IF_ERROR(
      ReadGgufInt(file, a + ".attention.sliding_window_pattern", &config->sliding_window_pattern));
  VLLM_RETURN_IF_ERROR(
      ReadGgufFloat(file, a + ".attn_logit_softcapping", &config->attn_logit_softcap));
  VLLM_RETURN_IF_ERROR(
      ReadGgufFloat(file, a + ".final_logit_softcapping", &config->final_logit_softcap));
  SetGgufAttentionScale(config, 46);
  return Status::Ok();
}

Status ReadGemma3Gguf(const GgufFile& file, ModelConfig* config) {
  const std::string& a = config->architecture;
  config->sliding_window_pattern = 6;
  config->rope_theta_swa = 10000.0f;
  VLLM_RETURN_IF_ERROR(ReadGgufInt(file, a + ".attention.sliding_window", &config->sliding_window));
  VLLM_RETURN_IF_ERROR(
      ReadGgufInt(file, a + ".attention.sliding_window_pattern", &config->sliding_window_pattern));
  VLLM_RETURN_IF_ERROR(ReadGgufFloat(file, a + ".rope.freq_base_swa", &config->rope_theta_swa));
  VLLM_RETURN_IF_ERROR(
      ReadGgufFloat(file, a + ".final_logit_softcapping", &config->final_logit_softcap));
  SetGgufAttentionScale(config, 62);
  return Status::Ok();
}

Status ReadGemmaEmbeddingGguf(const GgufFile& file, ModelConfig* config) {
  VLLM_RETURN_IF_ERROR(ReadGemma3Gguf(file, config));
  auto causal = file.GetBool(config->architecture + ".attention.causal");
  if (!causal) return Error{causal.error()};
  config->bidirectional_attention = !causal->value_or(false);
  return ReadGgufDecoderPooling(file, config->architecture, &config->pooler);
}

// The keys Gemma 2 and 3 share; `pattern` is the family's default window pattern.
Status ReadGemmaHf(const nlohmann::json& text, ModelConfig* config, int64_t pattern) {
  config->sliding_window_pattern = pattern;
  VLLM_RETURN_IF_ERROR(
      ReadHfField(text, "sliding_window_pattern", &config->sliding_window_pattern));
  double query_pre_attn_scalar = static_cast<double>(config->head_dim);
  VLLM_RETURN_IF_ERROR(ReadHfField(text, "query_pre_attn_scalar", &query_pre_attn_scalar));
  if (!(query_pre_attn_scalar > 0)) {
    return Error{"config.json: query_pre_attn_scalar must be positive"};
  }
  config->attention_scale = static_cast<float>(1.0 / std::sqrt(query_pre_attn_scalar));
  VLLM_RETURN_IF_ERROR(ReadHfField(text, "attn_logit_softcapping", &config->attn_logit_softcap));
  return ReadHfField(text, "final_logit_softcapping", &config->final_logit_softcap);
}

Status ReadGemma2Hf(const nlohmann::json& text, ModelConfig* config, HfDerivedTensors*) {
  if (config->sliding_window == 0) config->sliding_window = 4096;
  return ReadGemmaHf(text, config, 2);
}

Status ReadGemma3Hf(const nlohmann::json& text, ModelConfig* config, HfDerivedTensors*) {
  if (config->sliding_window == 0) config->sliding_window = 4096;
  config->rope_theta_swa = 10000.0f;
  VLLM_RETURN_IF_ERROR(ReadHfField(text, "rope_local_base_freq", &config->rope_theta_swa));
  return ReadGemmaHf(text, config, 6);
}

Status ReadGemmaEmbeddingHf(const nlohmann::json& text, ModelConfig* config,
                            HfDerivedTensors* derived) {
  VLLM_RETURN_IF_ERROR(ReadGemma3Hf(text, config, derived));
  return ReadHfField(text, "use_bidirectional_attention", &config->bidirectional_attention);
}

Status WriteGemmaHf(const GgufFile&, const ModelConfig& config, nlohmann::json* out) {
  (*out)["sliding_window"] = config.sliding_window;
  (*out)["sliding_window_pattern"] = config.sliding_window_pattern;
  // An integer, as in Google's configs (transformers refuses a float).
  (*out)["query_pre_attn_scalar"] = std::lround(std::pow(config.AttentionScale(), -2.0f));
  (*out)["hidden_activation"] = "gelu_pytorch_tanh";
  (*out)["tie_word_embeddings"] = true;
  if (config.rope_theta_swa > 0) (*out)["rope_local_base_freq"] = config.rope_theta_swa;
  if (config.attn_logit_softcap > 0) (*out)["attn_logit_softcapping"] = config.attn_logit_softcap;
  if (config.final_logit_softcap > 0) {
    (*out)["final_logit_softcapping"] = config.final_logit_softcap;
  }
  return Status::Ok();
}

Status WriteGemmaEmbeddingHf(const GgufFile& file, const ModelConfig& config, nlohmann::json* out) {
  VLLM_RETURN_IF_ERROR(WriteGemmaHf(file, config, out));
  (*out)["architectures"] = {"Gemma3TextModel"};
  (*out)["use_bidirectional_attention"] = config.bidirectional_attention;
  return Status::Ok();
}

// Llama's names, with Gemma's norms around attention and MLP.
std::vector<TensorNamePair> GemmaNames() {
  std::vector<TensorNamePair> names = LlamaHfTensorNamesWithPostAttentionNorm();
  const std::string layer = "model.layers.{L}.";
  names.insert(names.end(),
               {{layer + "pre_feedforward_layernorm.weight", "blk.{L}.ffn_norm.weight"},
                {layer + "post_feedforward_layernorm.weight", "blk.{L}.post_ffw_norm.weight"}});
  return names;
}

// Norm weights around one (GGUF's include Gemma's +1), post-norms after attention and FFN.
void PlanGemma2Random(RandomModelPlan* plan) {
  plan->norm_scale = -0.5f;
  plan->AddKey("attn_logit_softcapping", GgufValue::Float32(50.0f));
  plan->AddKey("final_logit_softcapping", GgufValue::Float32(30.0f));
  plan->AddLayers({.post_norm = true}, {.post_norm = true});
}

void PlanGemma3Random(RandomModelPlan* plan) {
  plan->norm_scale = -0.5f;
  plan->AddKey("rope.freq_base_swa", GgufValue::Float32(1e4f));
  if (plan->shape().rope_scaling_factor > 0) {  // the global layers' linear position scaling
    plan->AddKey("rope.scaling.type", GgufValue::String("linear"));
    plan->AddKey("rope.scaling.factor", GgufValue::Float32(plan->shape().rope_scaling_factor));
  }
  plan->AddLayers({.qk_norm = true, .post_norm = true}, {.post_norm = true});
}

// Gemma 3 with mean pooling and EmbeddingGemma's two Dense modules (4x wide in between).
void PlanGemmaEmbeddingRandom(RandomModelPlan* plan) {
  PlanGemma3Random(plan);
  plan->AddPooling();
  const int64_t hidden = plan->shape().hidden_size;
  plan->AddMatrix("dense_2.weight", {hidden, 4 * hidden});
  plan->AddMatrix("dense_3.weight", {4 * hidden, hidden});
  // Their widths, as llama.cpp's converter writes them (its loader needs them).
  plan->AddKey("dense_2_feat_in", GgufValue::Uint32(hidden));
  plan->AddKey("dense_2_feat_out", GgufValue::Uint32(4 * hidden));
  plan->AddKey("dense_3_feat_in", GgufValue::Uint32(4 * hidden));
  plan->AddKey("dense_3_feat_out", GgufValue::Uint32(hidden));
}

}  // namespace

const Architecture kGemma2Architecture{
    .name = "gemma2",
    .hf_names = {"Gemma2ForCausalLM"},
    .read_gguf = ReadGemma2Gguf,
    .read_hf = ReadGemma2Hf,
    .write_hf = WriteGemmaHf,
    .hf_tensors = GemmaNames(),
    .hf_norms_offset_by_one = true,
    .create = CreateGemma,
    .plan_random_model = PlanGemma2Random,
};

const Architecture kGemma3Architecture{
    .name = "gemma3",
    .hf_names = {"Gemma3ForCausalLM", "Gemma3ForConditionalGeneration"},
    .hf_model_type = "gemma3_text",
    .read_gguf = ReadGemma3Gguf,
    .read_hf = ReadGemma3Hf,
    .write_hf = WriteGemmaHf,
    .hf_tensors = GemmaNames(),
    .hf_norms_offset_by_one = true,
    .create = CreateGemma,
    .plan_random_model = PlanGemma3Random,
};

const Architecture kGemmaEmbeddingArchitecture{
    .name = "gemma-embedding",
    .hf_names = {"Gemma3TextModel"},
    .hf_model_type = "gemma3_text",
    .read_gguf = ReadGemmaEmbeddingGguf,
    .read_hf = ReadGemmaEmbeddingHf,
    .write_hf = WriteGemmaEmbeddingHf,
    .hf_tensors = GemmaNames(),
    .hf_norms_offset_by_one = true,
    .create = CreateGemma,
    .plan_random_model = PlanGemmaEmbeddingRandom,
};

}  // namespace vllm
