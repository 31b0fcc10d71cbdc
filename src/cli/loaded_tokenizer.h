// A tokenizer from a GGUF model / vocabulary file or a Hugging Face tokenizer directory: what the
// tokenizer commands share.
#pragma once

#include <memory>
#include <string>

#include "common/expected.h"
#include "formats/gguf_file.h"
#include "tokenizer/tokenizer.h"

namespace vllm {

struct LoadedTokenizer {
  std::unique_ptr<GgufFile> file;  // GGUF only; the tokenizer copies what it needs
  std::unique_ptr<Tokenizer> tokenizer;
};

// Exactly one of `model_path` (GGUF) and `tokenizer_dir` (a directory's tokenizer as
// --tokenizer-mode auto picks it: tokenizer.json, tekken.json or tokenizer.model) must be given.
Expected<LoadedTokenizer> LoadTokenizer(const std::string& model_path,
                                        const std::string& tokenizer_dir);

}  // namespace vllm
