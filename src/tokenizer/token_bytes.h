// The bytes each token of a vocabulary appends to decoded text, as a grammar over the output
// text needs them: "▁the" is " the", "<0x0A>" is "\n", "Ġthe" is " the", "##ing" is "ing".
#pragma once

#include <string>
#include <vector>

#include "tokenizer/tokenizer.h"

namespace vllm {

// [tokenizer.vocab_size()]: the bytes token i adds when it follows other text (a partial UTF-8
// character for a byte token); empty for special tokens, which text never contains.
std::vector<std::string> TokenByteStrings(const Tokenizer& tokenizer);

}  // namespace vllm
