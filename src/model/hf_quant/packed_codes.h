// Unsigned b-bit codes packed into int32 words, as GPTQ (2, 3, 4, 8 bits), AWQ and
// compressed-tensors' pack-quantized store them: a run of codes is a little-endian bit stream over
// its words, code k at bits b·k .. b·k + b − 1. For 2, 4 and 8 bits that is 32 / b codes per word,
// code j of a word at bit b·j; AutoGPTQ's 3-bit layout is the same stream, 32 codes in 3 words.
#pragma once

#include <cstdint>
#include <vector>

#include "common/expected.h"
#include "formats/safetensors_file.h"

namespace vllm {

// The words of I32 tensor `tensor`, which must have exactly `shape` (an error naming the tensor
// and both shapes otherwise).
Expected<std::vector<uint32_t>> ReadPackedWords(const SafetensorsTensor& tensor,
                                                const std::vector<int64_t>& shape);

// Code `index` of the run whose words are words[0], words[stride], words[2 · stride], ...
inline int UnpackCode(const uint32_t* words, int64_t stride, int bits, int64_t index) {
  const int64_t first_bit = index * bits;
  const int64_t word = first_bit / 32;
  const int shift = static_cast<int>(first_bit % 32);
  uint64_t pair = words[word * stride];
  if (shift + bits > 32) pair |= static_cast<uint64_t>(words[(word + 1) * stride]) << 32;
  return static_cast<int>((pair >> shift) & ((1u << bits) - 1));
}

// The 32 codes of one run of kBits words (words[0], words[stride], ... words[(kBits − 1) ·
// stride]).
template <int kBits>
inline void UnpackRunOf32(const uint32_t* words, int64_t stride, int16_t* codes) {
  constexpr uint32_t kMask = (1u << kBits) - 1;
  if constexpr (32 % kBits == 0) {  // whole codes per word: no code straddles two words
    constexpr int kCodesPerWord = 32 / kBits;
    for (int t = 0; t < kBits; ++t) {
      const uint32_t word = words[t * stride];
      for (int j = 0; j < kCodesPerWord; ++j) {
        codes[t * kCodesPerWord + j] = static_cast<int16_t>((word >> (kBits * j)) & kMask);
      }
    }
  } else {
    uint32_t run[kBits];
    for (int t = 0; t < kBits; ++t) run[t] = words[t * stride];
    for (int k = 0; k < 32; ++k) {
      const int first_bit = k * kBits, word = first_bit / 32, shift = first_bit % 32;
      uint32_t value = run[word] >> shift;
      if (shift + kBits > 32) value |= run[word + 1] << (32 - shift);
      codes[k] = static_cast<int16_t>(value & kMask);
    }
  }
}

}  // namespace vllm
