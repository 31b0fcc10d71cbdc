#include "tokenizer/tokenizer.h"

#include "tokenizer/bpe_tokenizer.h"
#include "tokenizer/gguf_vocab.h"
#include "tokenizer/spm_tokenizer.h"
#include "tokenizer/ugm_tokenizer.h"
#include "tokenizer/wordpiece_tokenizer.h"

namespace vllm {

Expected<std::unique_ptr<Tokenizer>> LoadTokenizerFromGguf(const GgufFile& file) {
  auto vocab = LoadGgufVocab(file);
  if (!vocab) return Error{vocab.error()};
  if (vocab->model == "llama")
    return std::unique_ptr<Tokenizer>(new SpmTokenizer(std::move(*vocab)));
  if (vocab->model == "gpt2") return BpeTokenizer::Create(std::move(*vocab));
  if (vocab->model == "bert") {
    return std::unique_ptr<Tokenizer>(new WordPieceTokenizer(std::move(*vocab)));
  }
  if (vocab->model == "t5") return UgmTokenizer::Create(std::move(*vocab));
  return Error{"unsupported tokenizer model '" + vocab->model +
               "' (supported: llama, gpt2, bert, t5)"};
}

}  // namespace vllm
