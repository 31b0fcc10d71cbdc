// The tokenizer interface the engine uses: text ↔ token ids.
#pragma once

#include <cstdint>
#include <memory>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "common/expected.h"
#include "formats/gguf_file.h"

namespace vllm {

class Tokenizer {
 public:
  virtual ~Tokenizer() = default;

  // Special-token text in `text` (control and user-defined tokens) becomes that single id.
  // add_special_tokens adds BOS / EOS as the vocabulary asks.
  virtual std::vector<int32_t> Encode(std::string_view text, bool add_special_tokens) const = 0;
  // The bytes of the text; a sequence cut inside a UTF-8 character ends with a partial one.
  virtual std::string Decode(std::span<const int32_t> ids, bool skip_special_tokens) const = 0;
  // Decode skipping special tokens, but bytes that are not valid UTF-8 stay as the tokens give
  // them instead of becoming U+FFFD (what a token adds to a byte stream).
  virtual std::string DecodeBytes(std::span<const int32_t> ids) const {
    return Decode(ids, /*skip_special_tokens=*/true);
  }

  // The vocabulary's text for `id` as stored ("▁Once", "Ġthe", "<0x0A>", "##ing"); empty when
  // `id` is outside the vocabulary. Decode({id}) gives the text the token stands for.
  virtual std::string_view TokenToPiece(int32_t id) const = 0;
  virtual int64_t vocab_size() const = 0;
  virtual int32_t bos_id() const = 0;  // -1 when the vocabulary has none
  virtual int32_t eos_id() const = 0;  // -1 when the vocabulary has none
  virtual bool IsSpecial(int32_t id) const = 0;

  // A cross-encoder's input: both texts with the special tokens the tokenizer's post-processor
  // puts around a pair, and the segment of each token (0: first text, 1: second) as the model's
  // token_type_ids expect.
  struct EncodedPair {
    std::vector<int32_t> ids;
    std::vector<int32_t> token_type_ids;  // [ids.size()]
  };
  // This default adds no special tokens: the first text's ids (segment 0), then the second's
  // (segment 1). Tokenizers that know their pair template override it.
  virtual EncodedPair EncodePair(std::string_view first, std::string_view second) const;
};

// Builds the tokenizer that tokenizer.ggml.model names; errors name what is wrong or unsupported.
Expected<std::unique_ptr<Tokenizer>> LoadTokenizerFromGguf(const GgufFile& file);

}  // namespace vllm
