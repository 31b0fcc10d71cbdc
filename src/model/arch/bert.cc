// BERT-style encoders (layers/encoder.h): BERT (GGUF "bert", Hugging Face BertModel and
// BertForSequenceClassification; bge-small/base, all-MiniLM) and XLM-RoBERTa (XLMRobertaModel,
// XLMRobertaForSequenceClassification; bge-m3, multilingual-e5, bge-reranker), which differ only
// in where positions start (XLM-R: at padding_idx + 1) and in their classifier's names.
// llama.cpp writes both as "bert", dropping XLM-R's first padding_idx + 1 position rows.
#include <cstdlib>

#include "model/architecture.h"
#include "model/hf_checkpoint.h"
#include "model/layers/encoder.h"
#include "model/registry.h"

namespace vllm {
namespace {

// XLM-R's padding_idx (its <pad> id) when config.json names none; positions start after it.
constexpr int64_t kXlmRobertaPadTokenId = 1;

// The embeddings and encoder layers of BertModel under `prefix` ("", "bert.", "roberta.").
std::vector<TensorNamePair> EncoderBodyNames(const std::string& prefix) {
  const std::string e = prefix + "embeddings.";
  const std::string l = prefix + "encoder.layer.{L}.";
  std::vector<TensorNamePair> names = {
      {e + "word_embeddings.weight", "token_embd.weight"},
      {e + "position_embeddings.weight", "position_embd.weight"},
      {e + "token_type_embeddings.weight", "token_types.weight"},
  };
  const std::pair<std::string, std::string> parts[] = {
      {e + "LayerNorm", "token_embd_norm"},
      {l + "attention.self.query", "blk.{L}.attn_q"},
      {l + "attention.self.key", "blk.{L}.attn_k"},
      {l + "attention.self.value", "blk.{L}.attn_v"},
      {l + "attention.output.dense", "blk.{L}.attn_output"},
      {l + "attention.output.LayerNorm", "blk.{L}.attn_output_norm"},
      {l + "intermediate.dense", "blk.{L}.ffn_up"},
      {l + "output.dense", "blk.{L}.ffn_down"},
      {l + "output.LayerNorm", "blk.{L}.layer_output_norm"},
  };
  for (const auto& [hf, gguf] : parts) {
    names.push_back({hf + ".weight", gguf + ".weight"});
    names.push_back({hf + ".bias", gguf + ".bias"});
  }
  return names;
}

// `names` plus each HF module → GGUF stem pair as .weight and .bias.
std::vector<TensorNamePair> WithLinears(
    std::vector<TensorNamePair> names,
    std::initializer_list<std::pair<const char*, const char*>> linears) {
  for (const auto& [hf, gguf] : linears) {
    names.push_back({std::string(hf) + ".weight", std::string(gguf) + ".weight"});
    names.push_back({std::string(hf) + ".bias", std::string(gguf) + ".bias"});
  }
  return names;
}

std::vector<TensorNamePair> Concat(std::vector<TensorNamePair> a,
                                   const std::vector<TensorNamePair>& b) {
  a.insert(a.end(), b.begin(), b.end());
  return a;
}

// BertModel (unprefixed, its pooler as the classifier's dense layer) first, so that export
// writes it; then BertForSequenceClassification's "bert." body, pooler and classifier.
std::vector<TensorNamePair> BertNames() {
  return WithLinears(
      Concat(EncoderBodyNames(""), EncoderBodyNames("bert.")),
      {{"pooler.dense", "cls"}, {"bert.pooler.dense", "cls"}, {"classifier", "cls.output"}});
}

// XLMRobertaModel, then XLMRobertaForSequenceClassification's "roberta." body and classifier.
std::vector<TensorNamePair> XlmRobertaClassifierNames() {
  return WithLinears(EncoderBodyNames("roberta."),
                     {{"classifier.dense", "cls"}, {"classifier.out_proj", "cls.output"}});
}
std::vector<TensorNamePair> XlmRobertaNames() {
  return Concat(WithLinears(EncoderBodyNames(""), {{"pooler.dense", "cls"}}),
                XlmRobertaClassifierNames());
}

Status ReadBertGguf(const GgufFile& file, ModelConfig* config) {
  const std::string a = config->architecture + ".";
  auto causal = file.GetBool(a + "attention.causal");
  if (!causal) return Error{causal.error()};
  if (causal->value_or(false)) return Error{"causal BERT models are not supported"};
  config->is_encoder = true;
  VLLM_RETURN_IF_ERROR(
      ReadGgufFloat(file, a + "attention.layer_norm_epsilon", &config->layer_norm_eps));
  VLLM_RETURN_IF_ERROR(
      ReadGgufInt(file, "tokenizer.ggml.token_type_count", &config->type_vocab_size));
  auto pooling = file.GetInt(a + "pooling_type");
  if (!pooling) return Error{pooling.error()};
  if (pooling->has_value()) {
    auto type = PoolingTypeFromGguf(**pooling);
    if (!type) return Error{type.error()};
    config->pooler.pooling_type = *type;
  }
  auto labels = file.GetStringArray(a + "classifier.output_labels");
  if (!labels) return Error{labels.error()};
  if (labels->has_value()) config->id2label = **labels;
  return Status::Ok();
}

Status ReadBertHf(const nlohmann::json& text, ModelConfig* config, HfDerivedTensors*) {
  config->is_encoder = true;
  VLLM_RETURN_IF_ERROR(ReadHfField(text, "layer_norm_eps", &config->layer_norm_eps));
  VLLM_RETURN_IF_ERROR(ReadHfField(text, "type_vocab_size", &config->type_vocab_size));
  if (text.value("is_decoder", false)) return Error{"config.json: decoder BERT is not supported"};
  const std::string activation = text.value("hidden_act", std::string("gelu"));
  if (activation != "gelu") {
    return Error{"config.json: hidden_act '" + activation + "' is not supported (gelu)"};
  }
  const std::string positions = text.value("position_embedding_type", std::string("absolute"));
  if (positions != "absolute") {
    return Error{"config.json: position_embedding_type '" + positions +
                 "' is not supported (absolute)"};
  }
  // id2label: {"0": "LABEL_0", ...} → labels by index.
  if (auto it = text.find("id2label"); it != text.end() && it->is_object()) {
    config->id2label.assign(it->size(), "");
    for (const auto& [key, value] : it->items()) {
      char* end = nullptr;
      const long index = std::strtol(key.c_str(), &end, 10);
      if (*end != '\0' || index < 0 || index >= static_cast<long>(it->size()) ||
          !value.is_string()) {
        return Error{"config.json: id2label must map 0 .. n-1 to label names"};
      }
      config->id2label[index] = value.get<std::string>();
    }
  }
  return Status::Ok();
}

Status ReadXlmRobertaHf(const nlohmann::json& text, ModelConfig* config,
                        HfDerivedTensors* derived) {
  VLLM_RETURN_IF_ERROR(ReadBertHf(text, config, derived));
  int64_t pad_token_id = kXlmRobertaPadTokenId;
  VLLM_RETURN_IF_ERROR(ReadHfField(text, "pad_token_id", &pad_token_id));
  if (pad_token_id < 0) return Error{"config.json: pad_token_id must not be negative"};
  config->position_offset = pad_token_id + 1;
  return Status::Ok();
}

// The position_ids buffer some checkpoints store is recomputed, not loaded.
Expected<bool> DropPositionIds(const SafetensorsModel&, const SafetensorsTensor& tensor,
                               std::vector<OwnedTensor>*) {
  return tensor.name.ends_with("embeddings.position_ids");
}

// Export: a GGUF "bert" file with a classifier (cls.output) becomes an
// XLMRobertaForSequenceClassification directory (the rerankers' layout): "roberta."-prefixed
// names, and the position table with padding_idx + 1 rows of zeros put back in front.
Expected<bool> ExportBertTensor(const GgufFile& file, const GgufTensor& tensor,
                                std::vector<OwnedTensor>* out) {
  if (file.FindTensor("cls.output.weight") == nullptr) return false;
  static const std::vector<TensorNamePair> names = XlmRobertaClassifierNames();
  OwnedTensor exported;
  exported.name = TranslateTensorName(names, tensor.name, false);
  if (exported.name.empty()) return Error{"no Hugging Face name"};
  exported.type = tensor.type;
  exported.shape.assign(tensor.shape.rbegin(), tensor.shape.rend());
  int64_t num_padding_bytes = 0;
  if (tensor.name == "position_embd.weight") {
    const int64_t num_padding_rows = kXlmRobertaPadTokenId + 1;
    num_padding_bytes = tensor.num_bytes / tensor.shape[1] * num_padding_rows;
    exported.shape[0] += num_padding_rows;
  }
  exported.bytes.assign(num_padding_bytes, 0);
  exported.bytes.insert(exported.bytes.end(), tensor.data, tensor.data + tensor.num_bytes);
  out->push_back(std::move(exported));
  return true;
}

Status WriteBertHf(const GgufFile& file, const ModelConfig& config, nlohmann::json* out) {
  (*out)["layer_norm_eps"] = config.layer_norm_eps;
  (*out)["hidden_act"] = "gelu";
  (*out)["position_embedding_type"] = "absolute";
  if (const GgufTensor* types = file.FindTensor("token_types.weight"); types != nullptr) {
    (*out)["type_vocab_size"] = types->shape[1];
  }
  const GgufTensor* classifier = file.FindTensor("cls.output.weight");
  if (classifier == nullptr) return Status::Ok();
  (*out)["architectures"] = {"XLMRobertaForSequenceClassification"};
  (*out)["model_type"] = "xlm-roberta";
  (*out)["pad_token_id"] = kXlmRobertaPadTokenId;
  (*out)["max_position_embeddings"] = config.max_position_embeddings + kXlmRobertaPadTokenId + 1;
  nlohmann::json labels = nlohmann::json::object();
  for (int64_t i = 0; i < classifier->shape[1]; ++i) {
    labels[std::to_string(i)] = i < static_cast<int64_t>(config.id2label.size())
                                    ? config.id2label[i]
                                    : "LABEL_" + std::to_string(i);
  }
  (*out)["id2label"] = labels;
  return Status::Ok();
}

}  // namespace

const Architecture kBertArchitecture{
    .name = "bert",
    .hf_names = {"BertModel", "BertForSequenceClassification"},
    .read_gguf = ReadBertGguf,
    .read_hf = ReadBertHf,
    .write_hf = WriteBertHf,
    .hf_tensors = BertNames(),
    .convert_hf_tensor = DropPositionIds,
    .export_hf_tensor = ExportBertTensor,
    .create = CreateEncoder,
};

// Loaded from Hugging Face directories only (llama.cpp writes these models as "bert").
const Architecture kXlmRobertaArchitecture{
    .name = "xlm-roberta",
    .hf_names = {"XLMRobertaModel", "XLMRobertaForSequenceClassification"},
    .read_hf = ReadXlmRobertaHf,
    .hf_tensors = XlmRobertaNames(),
    .convert_hf_tensor = DropPositionIds,
    .create = CreateEncoder,
};

}  // namespace vllm
