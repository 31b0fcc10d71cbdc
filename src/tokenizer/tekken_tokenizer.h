// Mistral's tekken.json tokenizer (mistral-common's Tekkenizer, vLLM's --tokenizer-mode mistral):
// tiktoken-style byte-level BPE by rank. Ids below config.default_num_special_tokens are the
// special tokens (<unk>, <s>, </s>, [INST], ...; unnamed ones are <SPECIAL_n>); vocabulary
// entry of rank r is id r + num_special_tokens. Text is split by config.pattern, and the adjacent
// pair whose joined bytes have the lowest rank is merged until none is in the vocabulary.
#pragma once

#include <memory>
#include <string>
#include <string_view>

#include "common/expected.h"
#include "tokenizer/tokenizer.h"

namespace vllm {

// Parses tekken.json's text; errors name the field that is wrong.
Expected<std::unique_ptr<Tokenizer>> LoadTekkenTokenizerFromJson(std::string_view json);
// Reads and parses the file at `path`.
Expected<std::unique_ptr<Tokenizer>> LoadTekkenTokenizer(const std::string& path);

// The chat template for a tekken tokenizer whose model has none: mistral-common's instruct
// format as vLLM's MistralTokenizer renders it, "<s>[INST]user[/INST]assistant</s>[INST]...",
// the system messages joined before the last user message. Tools are refused, naming them.
std::string_view MistralInstructChatTemplate();

}  // namespace vllm
