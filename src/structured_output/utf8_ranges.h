// Splits sets of Unicode code point ranges into the UTF-8 byte-range sequences that encode
// exactly them (each sequence: one byte range per byte of the encoding).
#pragma once

#include <array>
#include <cstdint>
#include <span>
#include <vector>

#include "structured_output/grammar.h"

namespace vllm {

struct ByteRange {
  uint8_t first = 0;
  uint8_t last = 0;
  bool operator==(const ByteRange&) const = default;
  auto operator<=>(const ByteRange&) const = default;
};

struct Utf8RangeSequence {
  std::array<ByteRange, 4> bytes;
  int32_t length = 0;  // 1..4
};

// The sequences matching exactly the UTF-8 encodings of the code points in `ranges` (which hold
// no surrogates); shorter encodings first, each length in increasing code point order.
std::vector<Utf8RangeSequence> SplitIntoUtf8Sequences(std::span<const UnicodeRange> ranges);

// The UTF-8 encoding of a code point (no surrogates, at most kMaxUnicodeScalar): 1 to 4 bytes.
int32_t EncodeUtf8(uint32_t code_point, uint8_t* out);

}  // namespace vllm
