#include "cli/loaded_tokenizer.h"

#include "tokenizer/tokenizer_mode.h"

namespace vllm {

Expected<LoadedTokenizer> LoadTokenizer(const std::string& model_path,
                                        const std::string& tokenizer_dir) {
  if (model_path.empty() == tokenizer_dir.empty()) {
    return Error{"give one of --model or --tokenizer"};
  }
  LoadedTokenizer loaded;
  if (!tokenizer_dir.empty()) {
    auto tokenizer = LoadTokenizerFromDirectory(tokenizer_dir, TokenizerMode::kAuto);
    if (!tokenizer) return Error{tokenizer.error()};
    loaded.tokenizer = std::move(tokenizer->tokenizer);
    return loaded;
  }
  auto file = GgufFile::Open(model_path);
  if (!file) return Error{file.error()};
  loaded.file = std::move(*file);
  auto tokenizer = LoadTokenizerFromGguf(*loaded.file);
  if (!tokenizer) return Error{tokenizer.error()};
  loaded.tokenizer = std::move(*tokenizer);
  return loaded;
}

}  // namespace vllm
