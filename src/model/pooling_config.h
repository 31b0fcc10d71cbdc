// How a pooling model turns a sequence's hidden states into its output, as the model's files say:
// sentence-transformers' modules.json + 1_Pooling/config.json (+ a Normalize module) in a model
// directory, or "<arch>.pooling_type" in a GGUF file; Matryoshka dimensions and a classifier
// made of output-head rows (vLLM's classifier_from_token, Qwen3-Reranker) from config.json or
// --hf-overrides. Only --pooler-config (pooler_config_flag.h) replaces what the model fixes here;
// requests only pick among what it allows.
#pragma once

#include <cstdint>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

#include "common/expected.h"
#include "formats/gguf_file.h"

namespace vllm {

// vLLM's pooling types. kUnset: the model's files name none (the task's default applies).
enum class PoolingType { kUnset, kCls, kMean, kLast, kAll };

struct PoolerConfig {
  PoolingType pooling_type = PoolingType::kUnset;
  // sentence-transformers lists a Normalize module (the embeddings are unit vectors).
  bool normalize = false;
  // The files mark a pooling model (a Hugging Face *Model / *ForSequenceClassification
  // architecture, a GGUF pooling_type): --runner auto picks the pooling runner.
  bool is_pooling_checkpoint = false;
  // Matryoshka: requests may ask for fewer `dimensions` (config.json is_matryoshka or
  // matryoshka_dimensions); a non-empty list restricts them to its values.
  bool is_matryoshka = false;
  std::vector<int64_t> matryoshka_dimensions;
  // vLLM's classifier_from_token: the classifier's rows are the output head's rows of these
  // tokens; with is_original_qwen3_reranker (two tokens, [false, true]) one row, true - false,
  // whose sigmoid is softmax([false, true])[1].
  std::vector<std::string> classifier_from_token;
  bool is_original_qwen3_reranker = false;
  std::vector<int32_t> classifier_token_ids;  // classifier_from_token resolved in the vocabulary
  // --pooler-config's defaults for requests that leave normalize / dimensions / use_activation
  // unset (unset here: vLLM's per-task defaults).
  std::optional<bool> default_normalize;
  std::optional<int64_t> default_dimensions;
  std::optional<bool> default_use_activation;
};

// "CLS", "MEAN", "LAST", "ALL" (vLLM's spelling, any case) → the type; an error names the others.
Expected<PoolingType> PoolingTypeFromName(const std::string& name);
const char* PoolingTypeName(PoolingType type);

// llama.cpp's pooling_type numbers: 0 none (kAll: per token), 1 mean, 2 cls, 3 last, 4 rank (a
// classifier over the CLS token; a decoder's over its last token).
Expected<PoolingType> PoolingTypeFromGguf(int64_t value, bool is_decoder = false);

// A decoder GGUF's "<arch>.pooling_type" (marking it a pooling checkpoint) when present.
Status ReadGgufDecoderPooling(const GgufFile& file, const std::string& architecture,
                              PoolerConfig* config);

// Reads `dir`/modules.json and the Pooling module's config.json when present; a directory
// without them leaves the config as it is. Malformed files are errors naming them.
Status ReadSentenceTransformersPooling(const std::string& dir, PoolerConfig* config);

// A sentence-transformers Dense module: its index in modules.json (llama.cpp names its weight
// dense_<index>.weight) and the directory of its model.safetensors ("linear.weight").
struct DenseModuleFiles {
  int64_t index = 0;
  std::string dir;
};
// The Dense modules `dir`/modules.json lists, in order, after checking each one's config.json:
// no bias, identity activation (EmbeddingGemma's). Errors name the file.
Expected<std::vector<DenseModuleFiles>> ReadSentenceTransformersDense(const std::string& dir);

// config.json's (or --hf-overrides') pooling keys: is_matryoshka, matryoshka_dimensions,
// classifier_from_token, is_original_qwen3_reranker. Values of the wrong kind are errors.
Status ReadHfPoolingKeys(const nlohmann::json& config_json, PoolerConfig* config);

// Resolves classifier_from_token into classifier_token_ids with `token_id` (a vocabulary lookup
// of the token's stored text, as Hugging Face's convert_tokens_to_ids; -1 when absent).
template <typename Lookup>
Status ResolveClassifierTokens(const Lookup& token_id, PoolerConfig* config) {
  config->classifier_token_ids.clear();
  for (const std::string& token : config->classifier_from_token) {
    const int64_t id = token_id(token);
    if (id < 0) return Error{"classifier_from_token: '" + token + "' is not in the vocabulary"};
    config->classifier_token_ids.push_back(static_cast<int32_t>(id));
  }
  return Status::Ok();
}

}  // namespace vllm
