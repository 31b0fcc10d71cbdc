// SentencePiece's model file (tokenizer.model: a serialized sentencepiece.ModelProto), read with
// a small protobuf wire-format reader rather than a protobuf library: the pieces (text, score,
// type), the trainer spec's model type, byte fallback and special ids, and the normalizer spec.
// Fields this build does not use are skipped. Every length and count is checked against the
// bytes: malformed input is an Error, never a crash or an unbounded allocation.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "common/expected.h"
#include "tokenizer/gguf_vocab.h"

namespace vllm {

struct SentencePieceModel {
  // TrainerSpec.ModelType.
  enum class Type : int32_t { kUnigram = 1, kBpe = 2, kWord = 3, kChar = 4 };
  struct Piece {
    std::string text;
    float score = 0.0f;
    // SentencePiece.Type has GGUF's token-type numbers (NORMAL 1 ... BYTE 6).
    TokenType type = TokenType::kNormal;
  };

  std::vector<Piece> pieces;
  // trainer_spec, with the proto's defaults where the file omits a field.
  Type model_type = Type::kUnigram;
  bool byte_fallback = false;
  int32_t unk_id = 0;
  int32_t bos_id = 1;   // -1: none
  int32_t eos_id = 2;   // -1: none
  int32_t pad_id = -1;  // -1: none
  // normalizer_spec.
  std::string normalizer_name;       // "nmt_nfkc", "identity", ...
  std::string precompiled_charsmap;  // PrecompiledCharsmap's blob; empty for "identity"
  bool add_dummy_prefix = true;
  bool remove_extra_whitespaces = true;
  bool escape_whitespaces = true;
};

// Parses and validates a ModelProto: at least one piece, none empty or repeated, types and model
// type known, special ids -1 or inside the vocabulary.
Expected<SentencePieceModel> ParseSentencePieceModel(std::string_view bytes);

}  // namespace vllm
