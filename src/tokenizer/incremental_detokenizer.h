// Turns a growing list of token ids into text deltas, as vLLM's detokenize_incrementally: each
// step decodes a short window of recent tokens and emits what it adds beyond the window's
// previous text, holding back anything that ends inside a UTF-8 character. The deltas
// concatenate to the decode of the generated tokens in the context of the prompt.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "tokenizer/tokenizer.h"

namespace vllm {

class IncrementalDetokenizer {
 public:
  // Tokens already present (the prompt) give the window its left context; they are not emitted.
  IncrementalDetokenizer(const Tokenizer& tokenizer, std::vector<int32_t> prompt_ids,
                         bool skip_special_tokens);

  // Adds one token; returns the new complete text (possibly empty).
  std::string Step(int32_t token_id);
  // Text still held back at the end (a truncated UTF-8 character), emitted as is.
  std::string Flush();

 private:
  // vLLM's INITIAL_INCREMENTAL_DETOKENIZATION_OFFSET: prompt tokens kept as left context.
  static constexpr size_t kInitialContextTokens = 5;

  const Tokenizer& tokenizer_;
  std::vector<int32_t> ids_;
  bool skip_special_tokens_;
  size_t prefix_offset_;  // window start
  size_t read_offset_;    // tokens before this are emitted
};

}  // namespace vllm
