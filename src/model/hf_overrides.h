// vLLM's --hf-overrides: a JSON object whose keys replace config.json's before the model is
// built (for GGUF files, the keys that have a meaning there). The supported keys are those the
// pooling models need: architectures (Qwen3ForSequenceClassification turns Qwen3-Reranker into a
// classifier), classifier_from_token, is_original_qwen3_reranker, is_matryoshka and
// matryoshka_dimensions; any other key is refused by name.
#pragma once

#include <nlohmann/json.hpp>
#include <string>

#include "common/expected.h"
#include "formats/gguf_file.h"
#include "model/model_config.h"

namespace vllm {

// The flag's text → the overrides object (empty text: none). Errors name the bad key or value.
Expected<nlohmann::json> ParseHfOverrides(const std::string& text);

// `config_json` with the overrides' keys replacing its own.
nlohmann::json MergeHfOverrides(nlohmann::json config_json, const nlohmann::json& overrides);

// A model directory's pooling configuration from its (merged) config.json, its
// sentence-transformers files and, for classifier_from_token, its tokenizer.json vocabulary.
// `hf_architecture` is the config's architectures entry.
Status ReadHfPoolerConfig(const std::string& dir, const nlohmann::json& config_json,
                          const std::string& hf_architecture, PoolerConfig* config);

// The overrides applied to a GGUF file's config: `architectures` must name a Hugging Face
// architecture of the file's own; classifier tokens are looked up in tokenizer.ggml.tokens.
Status ApplyHfOverridesToGguf(const nlohmann::json& overrides, const GgufFile& file,
                              ModelConfig* config);

}  // namespace vllm
