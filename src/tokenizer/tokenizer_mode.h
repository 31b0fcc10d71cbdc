// vLLM's --tokenizer-mode and the tokenizer file of a model directory it picks.
#pragma once

#include <memory>
#include <string>
#include <string_view>

#include "common/expected.h"
#include "tokenizer/tokenizer.h"

namespace vllm {

enum class TokenizerMode {
  kAuto,     // tokenizer.json; else tekken.json; else SentencePiece's tokenizer.model
  kSlow,     // vLLM's slow (Python) tokenizer: SentencePiece's tokenizer.model when there is
             // one, else the files auto reads
  kMistral,  // tekken.json (mistral-common's format)
};

// "auto", "slow" or "mistral"; "custom" (a Python tokenizer class) and any other name are
// refused, naming the mode.
Expected<TokenizerMode> ParseTokenizerMode(std::string_view mode);

struct DirectoryTokenizer {
  std::unique_ptr<Tokenizer> tokenizer;
  bool is_tekken = false;  // loaded from tekken.json: Mistral's chat format is the default
};

// The tokenizer of a Hugging Face model directory as `mode` chooses its file.
Expected<DirectoryTokenizer> LoadTokenizerFromDirectory(const std::string& dir, TokenizerMode mode);

}  // namespace vllm
