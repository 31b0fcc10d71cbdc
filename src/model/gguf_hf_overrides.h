// --hf-overrides on a GGUF file: each config.json key with a twin in llama.cpp's metadata replaces
// the file's "<arch>.<key>" before the config is read, so the model sees the override exactly as
// it would see the value written in the file (rope_theta → rope.freq_base, rope_scaling →
// rope.scaling.*, max_position_embeddings → context_length, rms_norm_eps, sliding_window, the
// shapes, ...). The pooling keys are applied to the config afterwards (hf_overrides.h); any other
// key has no meaning for a GGUF file and is refused by name.
#pragma once

#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "common/expected.h"
#include "formats/gguf_file.h"

namespace vllm {

// Rewrites `file`'s metadata with the overrides' keys (a null value erases the key, as a null in
// config.json means "not set").
Status ApplyHfOverridesToGgufMetadata(const nlohmann::json& overrides, GgufFile* file);

// The config.json keys a GGUF file takes, for the docs and error messages.
std::vector<std::string> GgufOverridableKeys();

}  // namespace vllm
