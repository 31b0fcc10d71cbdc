// Decoders of tokenizer.json ("decoder"): they turn the tokens' text back into the text they
// stand for, as a chain over the list of token strings. Supported types: Sequence, ByteLevel,
// Replace, ByteFallback, Fuse, Strip, Metaspace, WordPiece, BPEDecoder.
//
// Bytes that are not valid UTF-8 become U+FFFD as in Hugging Face, except an incomplete UTF-8
// character at the very end of the decoded text, whose bytes are kept (Tokenizer::Decode's
// contract, which incremental detokenization relies on).
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "common/expected.h"
#include "tokenizer/hf/json_fields.h"

namespace vllm::hf {

class Decoder {
 public:
  virtual ~Decoder() = default;
  virtual void DecodeChain(std::vector<std::string>* tokens) const = 0;
  // The same, but bytes that are not valid UTF-8 stay as they are (a token's raw bytes).
  virtual void DecodeChainKeepingBytes(std::vector<std::string>* tokens) const {
    DecodeChain(tokens);
  }
};

// nullptr for a null decoder (tokens are then joined with spaces).
Expected<std::unique_ptr<Decoder>> ParseDecoder(const Json& json,
                                                std::string_view context = "decoder");

// `bytes` with each maximal invalid UTF-8 subsequence replaced by U+FFFD (Rust's
// String::from_utf8_lossy); with keep_incomplete_tail, a truncated character at the end is kept.
std::string ToValidUtf8(std::string_view bytes, bool keep_incomplete_tail);

// Hugging Face's clean_up_tokenization: " ." → ".", " n't" → "n't", ...
std::string CleanUpTokenization(std::string text);

}  // namespace vllm::hf
