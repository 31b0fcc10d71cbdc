// Tokenizers from a SentencePiece model (tokenizer.model) with no tokenizer.json: the older
// Llama-2, Mistral and T5-style repositories that vLLM loads through transformers' slow
// LlamaTokenizer / T5Tokenizer (or the fast tokenizer converted from the same file). The model's
// pieces become a GGUF-style vocabulary: BPE models run on SpmTokenizer (llama.cpp's "llama"
// path), Unigram models on UgmTokenizer (its "t5" path) with the model's precompiled charsmap.
//
// tokenizer_config.json and special_tokens_map.json, each optional, as transformers reads them:
//  - add_bos_token / add_eos_token; else LlamaTokenizer's defaults for BPE models (BOS, no EOS)
//    and T5Tokenizer's for Unigram ones (EOS, no BOS);
//  - bos_token / eos_token / unk_token (tokenizer_config.json first) name those ids (null: none);
//    absent, the trainer spec's ids stand;
//  - legacy: false puts the space prefix only at the start of the text, not also after each
//    special token (BPE models; LlamaTokenizer's default is legacy);
//  - added_tokens_decoder: tokens split out of the text before the model sees it; ids past the
//    model's pieces extend the vocabulary, without gaps. Special ones are dropped by Decode with
//    skip_special_tokens. Their lstrip / rstrip / single_word flags are not applied.
// BPE models are tokenized without their normalizer's rules, as transformers' LlamaConverter
// builds the fast tokenizer vLLM uses by default (Llama's and Mistral's rules are "identity").
#pragma once

#include <memory>
#include <string>
#include <string_view>

#include "common/expected.h"
#include "tokenizer/tokenizer.h"

namespace vllm {

// The three files' contents; the JSON ones may be empty (absent).
Expected<std::unique_ptr<Tokenizer>> LoadSentencePieceTokenizer(
    std::string_view model_bytes, std::string_view config_json,
    std::string_view special_tokens_map_json);

// `dir`'s tokenizer.model, tokenizer_config.json and special_tokens_map.json.
Expected<std::unique_ptr<Tokenizer>> LoadSentencePieceTokenizerFromDir(const std::string& dir);

}  // namespace vllm
