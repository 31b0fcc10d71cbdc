#include "tokenizer/tokenizer_mode.h"

#include <filesystem>

#include "tokenizer/hf/hf_tokenizer.h"
#include "tokenizer/sentencepiece_loader.h"
#include "tokenizer/tekken_tokenizer.h"

namespace vllm {

Expected<TokenizerMode> ParseTokenizerMode(std::string_view mode) {
  if (mode == "auto") return TokenizerMode::kAuto;
  if (mode == "slow") return TokenizerMode::kSlow;
  if (mode == "mistral") return TokenizerMode::kMistral;
  if (mode == "custom") {
    return Error{
        "--tokenizer-mode custom loads a Python tokenizer class, which this build cannot "
        "run; use auto, slow or mistral"};
  }
  return Error{"--tokenizer-mode '" + std::string(mode) +
               "' is not a tokenizer mode (auto, slow, mistral)"};
}

Expected<DirectoryTokenizer> LoadTokenizerFromDirectory(const std::string& dir,
                                                        TokenizerMode mode) {
  namespace fs = std::filesystem;
  std::error_code error;
  const fs::path tekken = fs::path(dir) / "tekken.json";
  const bool has_tekken = fs::is_regular_file(tekken, error);
  const bool has_hf = fs::is_regular_file(fs::path(dir) / "tokenizer.json", error);
  const bool has_spm = fs::is_regular_file(fs::path(dir) / "tokenizer.model", error);
  if (mode == TokenizerMode::kMistral && !has_tekken) {
    return Error{"--tokenizer-mode mistral: no tekken.json in '" + dir +
                 "' (SentencePiece tokenizer.model.v* files are not supported)"};
  }
  // vLLM's auto mode also takes a Mistral repository's tekken.json when there is no tokenizer.json.
  if (mode == TokenizerMode::kMistral || (has_tekken && !has_hf)) {
    auto tokenizer = LoadTekkenTokenizer(tekken.string());
    if (!tokenizer) return Error{tokenizer.error()};
    return DirectoryTokenizer{.tokenizer = std::move(*tokenizer), .is_tekken = true};
  }
  // Older Llama-2 / Mistral / T5 repositories ship only SentencePiece's tokenizer.model, which
  // vLLM reads through transformers' LlamaTokenizer / T5Tokenizer; slow mode reads it even beside
  // a tokenizer.json, as transformers' slow classes do (use_fast=False).
  if (has_spm && (!has_hf || mode == TokenizerMode::kSlow)) {
    auto tokenizer = LoadSentencePieceTokenizerFromDir(dir);
    if (!tokenizer) return Error{tokenizer.error()};
    return DirectoryTokenizer{.tokenizer = std::move(*tokenizer)};
  }
  if (!has_hf) {
    return Error{"no tokenizer.json, tekken.json or tokenizer.model in '" + dir + "'"};
  }
  auto tokenizer = LoadTokenizerFromHfDir(dir);
  if (!tokenizer) return Error{tokenizer.error()};
  return DirectoryTokenizer{.tokenizer = std::move(*tokenizer)};
}

}  // namespace vllm
