// Which files of a repo a model needs: a Hugging Face checkpoint's config, tokenizer and
// safetensors, or one GGUF file picked by its quantization tag as llama.cpp's -hf does.
#pragma once

#include <string>
#include <vector>

#include "common/expected.h"

namespace vllm::hub {

enum class RepoPart {
  kModel,      // weights, config and tokenizer
  kTokenizer,  // the tokenizer and its chat template only (--tokenizer)
};

// The repo holds safetensors weights with a config.json (else it is taken as a GGUF repo).
bool IsSafetensorsRepo(const std::vector<std::string>& files);

// The files of a safetensors repo to fetch, config.json last (its presence in a snapshot then
// means the rest arrived): top-level JSON, tokenizer and template files, and the safetensors
// shards (consolidated*.safetensors left out beside model*.safetensors, as vLLM does); never
// .bin, .pt, .h5, .msgpack or ONNX weights. An error when kModel finds no safetensors.
Expected<std::vector<std::string>> SelectCheckpointFiles(const std::vector<std::string>& files,
                                                         RepoPart part, const std::string& repo);

// The GGUF file of `files` that `tag` names: the one whose file name carries the tag
// (case-insensitive, between separators: Q4_K is not Q4_K_M, Q4_K_M not IQ4_K_M); with no tag
// the only file, else the Q4_K_M one (the hub's default). mmproj files are never picked. Errors:
// no GGUF file, no match, several matches (the ambiguous tag). A split set (-00001-of-0000N.gguf
// ...) is one candidate, its first shard the answer.
Expected<std::string> ChooseGgufFile(const std::vector<std::string>& files, const std::string& tag,
                                     const std::string& repo);

// The files a chosen GGUF file needs: itself, or every shard of its split set when it is a
// first shard (the loader finds the others beside it). Errors: a shard other than the first,
// and a shard `files` lacks, by name.
Expected<std::vector<std::string>> GgufSetFiles(const std::vector<std::string>& files,
                                                const std::string& chosen, const std::string& repo);

}  // namespace vllm::hub
