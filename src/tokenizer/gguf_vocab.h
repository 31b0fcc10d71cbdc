// A vocabulary as llama.cpp stores it in GGUF metadata (tokenizer.ggml.*), validated.
#pragma once

#include <cstdint>
#include <optional>
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
  int32_t cls_id = -1;
  // The file's add-BOS / add-EOS / add-SEP flags; nullopt when absent, so that each tokenizer
  // applies its model's default (llama.cpp's).
  std::optional<bool> add_bos;
  std::optional<bool> add_eos;
  std::optional<bool> add_sep;
  bool add_space_prefix = true;
  // With add_space_prefix: the prefix also goes in front of the text after each special token
  // (llama.cpp, transformers' legacy SentencePiece tokenizers); false: only at the text's start
  // (tokenizer_config.json's "legacy": false).
  bool space_prefix_after_special = true;
  // t5 (Unigram) vocabularies: SentencePiece's normalization rules (PrecompiledCharsmap's blob;
  // empty when absent) and whether whitespace runs collapse and end spaces drop.
  std::string precompiled_charsmap;
  bool remove_extra_whitespaces = false;
  std::unordered_map<std::string, int32_t> token_to_id;
};

// Reads and validates tokenizer.ggml.*: array lengths match the token count, special ids lie in
// the vocabulary, every merge is two tokens separated by a space. Special ids the file omits take
// llama.cpp's defaults for its model (llama: <unk> 0, <s> 1, </s> 2; bert: [PAD] 0, [UNK] 100,
// [CLS] 101, [SEP] 102; t5: <pad> 0, </s> 1, <unk> 2) when the vocabulary is large enough to hold
// them.
Expected<GgufVocab> LoadGgufVocab(const GgufFile& file);

}  // namespace vllm
