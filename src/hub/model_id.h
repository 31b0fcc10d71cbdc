// A Hugging Face model id as `serve` and LLM(model=...) take it: `org/name`, `org/name:TAG` (a
// GGUF repo's quantization, as llama.cpp's -hf) or `org/name/path/file.gguf` (one file of a GGUF
// repo).
#pragma once

#include <optional>
#include <string>

namespace vllm::hub {

struct ModelId {
  std::string repo;       // "org/name"
  std::string gguf_tag;   // "Q4_K_M" of "org/name:Q4_K_M"; empty: none
  std::string gguf_file;  // "sub/file.gguf" of "org/name/sub/file.gguf"; empty: none
};

// nullopt when `text` is not shaped like an id: each of org and name 1 to 96 of [A-Za-z0-9_.-],
// starting with a letter or digit, without "--" or ".." (the hub's rules). A name ending in
// ".gguf" is a mistyped local path, not an id.
std::optional<ModelId> ParseModelId(const std::string& text);

}  // namespace vllm::hub
