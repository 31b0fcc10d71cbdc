// A vocabulary as llama.cpp stores it in GGUF metadata (tokenizer.ggml.*), validated.
#pragma once

#include <cstdint>
#include <string>
#include <unordered_map>
#include <vector>

#include "common/expected.h"
#include "formats/gguf_file.h"

namespace vllm {

// tokenizer.ggml.token_type values.
enum class TokenType : int32_t {
  kUndefined = 0,
  kNormal = 1,
  kUnknown = 2,
  kControl = 3,
  kUserDefined = 4,
  kUnused = 5,
  kByte = 6,
};

struct GgufVocab {
  std::string model;  // tokenizer.ggml.model: "llama", "gpt2", "bert", ...
  std::string pre;    // tokenizer.ggml.pre
  std::vector<std::string> tokens;
  std::vector<float> scores;        // [tokens.size()]; zeros when absent
  std::vector<TokenType> types;     // [tokens.size()]; kNormal when absent
  std::vector<std::string> merges;  // "left right", in rank order
  int32_t bos_id = -1;
  int32_t eos_id = -1;
  int32_t unk_id = -1;
  int32_t pad_id = -1;
  int32_t sep_id = -1;
  bool add_bos = false;
  bool add_eos = false;
  bool add_space_prefix = true;
  std::unordered_map<std::string, int32_t> token_to_id;

  bool IsControlOrUserDefined(int32_t id) const {
    return types[id] == TokenType::kControl || types[id] == TokenType::kUserDefined;
  }
};

Expected<GgufVocab> LoadGgufVocab(const GgufFile& file);

}  // namespace vllm
