// Normalizers of tokenizer.json ("normalizer"): text rewrites applied to the text between added
// tokens before pre-tokenization. Supported types: Sequence, Prepend, Replace, NFC, NFD, NFKC,
// NFKD, Lowercase, Strip, StripAccents, BertNormalizer, ByteLevel, Precompiled.
#pragma once

#include <memory>
#include <string>

#include "common/expected.h"
#include "tokenizer/hf/json_fields.h"

namespace vllm::hf {

class Normalizer {
 public:
  virtual ~Normalizer() = default;
  virtual std::string Normalize(std::string text) const = 0;
};

// nullptr (no normalization) for a null normalizer; an Error names an unsupported type.
Expected<std::unique_ptr<Normalizer>> ParseNormalizer(const Json& json,
                                                      std::string_view context = "normalizer");

}  // namespace vllm::hf
