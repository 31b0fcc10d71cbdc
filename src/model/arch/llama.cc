// The Llama family of pre-norm decoders (layers/decoder.h): Llama 1/2/3, TinyLlama, Mistral
// (sliding window from config.json), Mixtral (a mixture of experts in every layer: softmax
// router, top-k renormalized), Qwen2 (Q/K/V biases), Qwen3 (per-head Q/K RMSNorm) and Qwen3-MoE
// (Qwen3 attention, 128 experts top-8). RMSNorm, SwiGLU, RoPE with llama3 per-frequency factors
// (rope_freqs.weight) when present. Qwen3 also as an embedder (Qwen3-Embedding: LAST pooling, GGUF
// pooling_type 3, Hugging Face Qwen3Model / sentence-transformers files) and as a reranker
// (Qwen3-Reranker: Qwen3ForSequenceClassification, layers/pooling_decoder.h).
#include <cstring>

#include "model/architecture.h"
#include "model/hf_checkpoint.h"
#include "model/layers/decoder.h"
#include "model/layers/pooling_decoder.h"
#include "model/layers/rope.h"
#include "model/layers/tensor_ops.h"
#include "model/random_model_plan.h"
#include "model/registry.h"
#include "model/weight_loader.h"

namespace vllm {
namespace {

Expected<std::unique_ptr<Model>> CreateLlama(const TensorSource& source, const ModelConfig& config,
                                             const ModelLoadOptions& options) {
  WeightLoader loader(source);
  std::vector<float> freq_factors;  // [rope_dim / 2]; empty: none
  if (loader.Has("rope_freqs.weight")) {
    VLLM_RETURN_IF_ERROR(
        Assign(loader.Vector("rope_freqs.weight", config.rope_dim / 2), &freq_factors));
  }
  auto rope = std::make_shared<Rope>(RopeForConfig(config, std::move(freq_factors)));
  auto decoder =
      CreateDecoder(source, config, options, {}, [rope](int64_t) -> const Rope& { return *rope; });
  if (!decoder) return Error{decoder.error()};
  return PoolingDecoder::Wrap(source, std::move(*decoder), *options.pool);
}

Status ReadLlamaHf(const nlohmann::json& text, ModelConfig* config, HfDerivedTensors*) {
  VLLM_RETURN_IF_ERROR(ReadHfField(text, "num_local_experts", &config->num_experts));
  VLLM_RETURN_IF_ERROR(ReadHfField(text, "num_experts_per_tok", &config->num_experts_per_token));
  config->expert_intermediate_size = config->intermediate_size;
  return Status::Ok();
}

Status WriteLlamaHf(const GgufFile&, const ModelConfig& config, nlohmann::json* out) {
  if (config.num_experts > 0) {
    (*out)["architectures"] = {"MixtralForCausalLM"};
    (*out)["model_type"] = "mixtral";
    (*out)["num_local_experts"] = config.num_experts;
    (*out)["num_experts_per_tok"] = config.num_experts_per_token;
  }
  return Status::Ok();
}

// Qwen2 / Qwen3 configs carry a sliding_window that applies only with use_sliding_window.
Status ReadQwenHf(const nlohmann::json& text, ModelConfig* config, HfDerivedTensors*) {
  bool use_sliding_window = false;
  VLLM_RETURN_IF_ERROR(ReadHfField(text, "use_sliding_window", &use_sliding_window));
  if (use_sliding_window) {
    return Error{"config.json: use_sliding_window (Qwen's per-layer windows) is not supported"};
  }
  config->sliding_window = 0;
  return Status::Ok();
}

// Qwen3-Embedding (pooling_type 3, last token; trained for Matryoshka truncation) and llama.cpp's
// Qwen3-Reranker (pooling_type 4 with a "yes"/"no" rank head, cls.output.weight).
Status ReadQwen3Gguf(const GgufFile& file, ModelConfig* config) {
  VLLM_RETURN_IF_ERROR(ReadGgufDecoderPooling(file, config->architecture, &config->pooler));
  if (config->pooler.pooling_type == PoolingType::kLast &&
      file.FindTensor("cls.output.weight") == nullptr) {
    config->pooler.is_matryoshka = true;
  }
  auto labels = file.GetStringArray(config->architecture + ".classifier.output_labels");
  if (!labels) return Error{labels.error()};
  if (labels->has_value()) config->id2label = **labels;
  return Status::Ok();
}

// A GGUF Qwen3 embedder or reranker as the Hugging Face forms vLLM loads: an embedder as
// Qwen3ForCausalLM (its sentence-transformers files come from hf_export), a reranker as a
// converted Qwen3ForSequenceClassification with one score row.
Status WriteQwen3Hf(const GgufFile& file, const ModelConfig& config, nlohmann::json* out) {
  if (config.pooler.is_matryoshka) (*out)["is_matryoshka"] = true;
  if (file.FindTensor("cls.output.weight") == nullptr) return Status::Ok();
  (*out)["architectures"] = {"Qwen3ForSequenceClassification"};
  (*out)["num_labels"] = 1;
  return Status::Ok();
}

// Export: the rank head's "yes" and "no" rows become the one score row yes - no.
Expected<bool> ExportQwen3Tensor(const GgufFile& file, const GgufTensor& tensor,
                                 std::vector<OwnedTensor>* out) {
  if (tensor.name != "cls.output.weight") return false;
  auto config = ModelConfigFromGguf(file);
  if (!config) return Error{config.error()};
  if (config->id2label != std::vector<std::string>{"yes", "no"} || tensor.type != GgmlType::kF32) {
    return Error{"only an f32 rank head labelled yes, no exports (as score.weight)"};
  }
  const int64_t hidden = tensor.shape[0];
  const float* rows = reinterpret_cast<const float*>(tensor.data);
  std::vector<float> score(hidden);  // [1, hidden]
  for (int64_t i = 0; i < hidden; ++i) score[i] = rows[i] - rows[hidden + i];
  OwnedTensor exported{"score.weight", GgmlType::kF32, {1, hidden}, {}};
  exported.bytes.resize(hidden * sizeof(float));
  std::memcpy(exported.bytes.data(), score.data(), exported.bytes.size());
  out->push_back(std::move(exported));
  return true;
}

// Qwen3's names (Qwen3Model's bare ones map through TextModelTensorName) and the sequence
// classifier's score.
std::vector<TensorNamePair> Qwen3Names() {
  std::vector<TensorNamePair> names = LlamaHfTensorNames();
  names.push_back({"score.weight", "cls.output.weight"});
  return names;
}

Status ReadQwen3MoeGguf(const GgufFile&, ModelConfig* config) {
  if (config->num_experts <= 0) return Error{"qwen3moe file has no expert_count"};
  return Status::Ok();
}

Status ReadQwen3MoeHf(const nlohmann::json& text, ModelConfig* config, HfDerivedTensors* derived) {
  VLLM_RETURN_IF_ERROR(ReadQwenHf(text, config, derived));
  VLLM_RETURN_IF_ERROR(ReadHfField(text, "num_experts", &config->num_experts));
  VLLM_RETURN_IF_ERROR(ReadHfField(text, "num_experts_per_tok", &config->num_experts_per_token));
  VLLM_RETURN_IF_ERROR(
      ReadHfField(text, "moe_intermediate_size", &config->expert_intermediate_size));
  VLLM_RETURN_IF_ERROR(ReadHfField(text, "norm_topk_prob", &config->moe_normalize_top_k));
  int64_t sparse_step = 1;
  VLLM_RETURN_IF_ERROR(ReadHfField(text, "decoder_sparse_step", &sparse_step));
  auto dense_layers = text.find("mlp_only_layers");
  if (sparse_step != 1 ||
      (dense_layers != text.end() && dense_layers->is_array() && !dense_layers->empty())) {
    return Error{"config.json: dense layers between MoE layers are not supported"};
  }
  return Status::Ok();
}

Status WriteQwen3MoeHf(const GgufFile&, const ModelConfig& config, nlohmann::json* out) {
  (*out)["num_experts"] = config.num_experts;
  (*out)["num_experts_per_tok"] = config.num_experts_per_token;
  (*out)["moe_intermediate_size"] = config.expert_intermediate_size;
  (*out)["norm_topk_prob"] = config.moe_normalize_top_k;
  return Status::Ok();
}

// Llama's names plus Mixtral's router and per-expert w1 (gate), w2 (down), w3 (up).
std::vector<TensorNamePair> LlamaAndMixtralNames() {
  std::vector<TensorNamePair> names = LlamaHfTensorNames();
  const std::string moe = "model.layers.{L}.block_sparse_moe.";
  names.insert(names.end(), {{moe + "gate.weight", "blk.{L}.ffn_gate_inp.weight"},
                             {moe + "experts.{E}.w1.weight", "blk.{L}.ffn_gate.{E}.weight"},
                             {moe + "experts.{E}.w2.weight", "blk.{L}.ffn_down.{E}.weight"},
                             {moe + "experts.{E}.w3.weight", "blk.{L}.ffn_up.{E}.weight"}});
  return names;
}

// Llama's attention names plus Qwen3-MoE's router and per-expert projections.
std::vector<TensorNamePair> Qwen3MoeNames() {
  std::vector<TensorNamePair> names = LlamaHfTensorNames();
  const std::string mlp = "model.layers.{L}.mlp.";
  names.insert(names.end(),
               {{mlp + "gate.weight", "blk.{L}.ffn_gate_inp.weight"},
                {mlp + "experts.{E}.gate_proj.weight", "blk.{L}.ffn_gate.{E}.weight"},
                {mlp + "experts.{E}.up_proj.weight", "blk.{L}.ffn_up.{E}.weight"},
                {mlp + "experts.{E}.down_proj.weight", "blk.{L}.ffn_down.{E}.weight"}});
  return names;
}

void PlanLlamaRandom(RandomModelPlan* plan) { plan->AddLayers({}, {}); }
void PlanQwen2Random(RandomModelPlan* plan) { plan->AddLayers({.qkv_bias = true}, {}); }
void PlanQwen3Random(RandomModelPlan* plan) {
  plan->AddLayers({.qk_norm = true}, {});
  plan->AddPooling();
}

}  // namespace

// llama.cpp permutes Llama's Q/K rows so that rotary pairs are adjacent.
const Architecture kLlamaArchitecture{
    .name = "llama",
    .hf_names = {"LlamaForCausalLM", "MistralForCausalLM", "MixtralForCausalLM"},
    .gguf_rope_style = RopeStyle::kInterleaved,
    .read_hf = ReadLlamaHf,
    .write_hf = WriteLlamaHf,
    .hf_tensors = LlamaAndMixtralNames(),
    .create = CreateLlama,
    .plan_random_model = PlanLlamaRandom,
};

const Architecture kQwen2Architecture{
    .name = "qwen2",
    .hf_names = {"Qwen2ForCausalLM"},
    .read_hf = ReadQwenHf,
    .hf_tensors = LlamaHfTensorNames(),
    .create = CreateLlama,
    .plan_random_model = PlanQwen2Random,
};

const Architecture kQwen3Architecture{
    .name = "qwen3",
    .hf_names = {"Qwen3ForCausalLM", "Qwen3Model", "Qwen3ForSequenceClassification"},
    .read_gguf = ReadQwen3Gguf,
    .read_hf = ReadQwenHf,
    .write_hf = WriteQwen3Hf,
    .hf_tensors = Qwen3Names(),
    .export_hf_tensor = ExportQwen3Tensor,
    .create = CreateLlama,
    .plan_random_model = PlanQwen3Random,
};

const Architecture kQwen3MoeArchitecture{
    .name = "qwen3moe",
    .hf_names = {"Qwen3MoeForCausalLM"},
    .hf_model_type = "qwen3_moe",
    .read_gguf = ReadQwen3MoeGguf,
    .read_hf = ReadQwen3MoeHf,
    .write_hf = WriteQwen3MoeHf,
    .hf_tensors = Qwen3MoeNames(),
    .create = CreateLlama,
    .plan_random_model = PlanQwen3Random,
};

}  // namespace vllm
