// vLLM's --hf-overrides: a JSON object whose keys replace config.json's before anything reads the
// config (the model's shapes, RoPE, context length, pooling keys). --rope-scaling and --rope-theta
// are two of its keys. For GGUF files the keys map onto the metadata they have a twin in
// (gguf_hf_overrides.h); the pooling keys (architectures naming a classifier,
// classifier_from_token, is_original_qwen3_reranker, is_matryoshka, matryoshka_dimensions) are
// applied to the config read.
#pragma once

#include <nlohmann/json.hpp>
#include <optional>
#include <string>

#include "common/expected.h"
#include "formats/gguf_file.h"
#include "model/model_config.h"

namespace vllm {

// The flag's text → the overrides object (empty text: none). Any key is taken; errors name a
// key whose value has the wrong shape.
Expected<nlohmann::json> ParseHfOverrides(const std::string& text);

// --rope-scaling's text (a JSON object; empty: none) and --rope-theta folded into `overrides` as
// vLLM folds them: they replace the overrides' own rope_scaling and rope_theta.
Expected<nlohmann::json> AddRopeOverrides(nlohmann::json overrides, const std::string& rope_scaling,
                                          std::optional<double> rope_theta);

// `config_json` with the overrides applied as vLLM applies them: a key replaces config.json's
// value, except that a nested config (text_config, vision_config, ...) is merged key by key,
// recursively; rope_scaling and other plain objects are replaced whole.
nlohmann::json MergeHfOverrides(nlohmann::json config_json, const nlohmann::json& overrides);

// A model directory's pooling configuration from its (merged) config.json, its
// sentence-transformers files and, for classifier_from_token, its tokenizer.json vocabulary.
// `hf_architecture` is the config's architectures entry.
Status ReadHfPoolerConfig(const std::string& dir, const nlohmann::json& config_json,
                          const std::string& hf_architecture, PoolerConfig* config);

// The pooling overrides applied to a GGUF file's config: `architectures` must name a Hugging
// Face architecture of the file's own; classifier tokens are looked up in tokenizer.ggml.tokens.
// The other keys were applied to the file's metadata (ApplyHfOverridesToGgufMetadata).
Status ApplyHfOverridesToGguf(const nlohmann::json& overrides, const GgufFile& file,
                              ModelConfig* config);

}  // namespace vllm
