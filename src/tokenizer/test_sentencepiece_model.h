// Tests only: writes a SentencePiece model file (tokenizer.model, a serialized ModelProto) from
// a GGUF vocabulary, so tests can give the tokenizer.model loader the pieces, scores and types of
// a real vocabulary and compare it with the GGUF tokenizer of the same vocabulary.
#pragma once

#include <bit>
#include <cstdint>
#include <string>
#include <string_view>

#include "tokenizer/gguf_vocab.h"
#include "tokenizer/sentencepiece_model.h"

namespace vllm::test {

inline void AppendVarint(uint64_t value, std::string* out) {
  while (value >= 0x80) {
    *out += static_cast<char>((value & 0x7f) | 0x80);
    value >>= 7;
  }
  *out += static_cast<char>(value);
}

inline void AppendKey(uint32_t field, uint32_t wire_type, std::string* out) {
  AppendVarint((uint64_t{field} << 3) | wire_type, out);
}

// int32 and bool fields; negative numbers sign-extended to 10 bytes, as protobuf writes them.
inline void AppendVarintField(uint32_t field, int64_t value, std::string* out) {
  AppendKey(field, 0, out);
  AppendVarint(static_cast<uint64_t>(value), out);
}

inline void AppendBytesField(uint32_t field, std::string_view bytes, std::string* out) {
  AppendKey(field, 2, out);
  AppendVarint(bytes.size(), out);
  out->append(bytes);
}

inline void AppendFloatField(uint32_t field, float value, std::string* out) {
  AppendKey(field, 5, out);
  const auto bits = std::bit_cast<uint32_t>(value);
  for (int i = 0; i < 4; ++i) *out += static_cast<char>((bits >> (8 * i)) & 0xff);
}

// `vocab`'s pieces and special ids as a `type` model; the normalizer spec carries the vocabulary's
// charsmap, add_space_prefix and remove_extra_whitespaces.
inline std::string SentencePieceModelFromVocab(const GgufVocab& vocab,
                                               SentencePieceModel::Type type) {
  std::string out;
  bool has_byte_pieces = false;
  for (size_t id = 0; id < vocab.tokens.size(); ++id) {
    std::string piece;
    AppendBytesField(1, vocab.tokens[id], &piece);
    AppendFloatField(2, vocab.scores[id], &piece);
    if (vocab.types[id] != TokenType::kNormal) {
      AppendVarintField(3, static_cast<int32_t>(vocab.types[id]), &piece);
    }
    has_byte_pieces |= vocab.types[id] == TokenType::kByte;
    AppendBytesField(1, piece, &out);
  }
  std::string trainer;
  AppendVarintField(3, static_cast<int32_t>(type), &trainer);
  AppendVarintField(35, has_byte_pieces, &trainer);
  AppendVarintField(40, vocab.unk_id, &trainer);
  AppendVarintField(41, vocab.bos_id, &trainer);
  AppendVarintField(42, vocab.eos_id, &trainer);
  AppendVarintField(43, vocab.pad_id, &trainer);
  AppendBytesField(2, trainer, &out);
  std::string normalizer;
  AppendBytesField(1, vocab.precompiled_charsmap.empty() ? "identity" : "nmt_nfkc", &normalizer);
  if (!vocab.precompiled_charsmap.empty()) {
    AppendBytesField(2, vocab.precompiled_charsmap, &normalizer);
  }
  AppendVarintField(3, vocab.add_space_prefix, &normalizer);
  AppendVarintField(4, vocab.remove_extra_whitespaces, &normalizer);
  AppendBytesField(3, normalizer, &out);
  return out;
}

}  // namespace vllm::test
