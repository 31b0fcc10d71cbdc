// Applying a token bitmask (bit i % 32 of word i / 32 set: token i allowed) to a row of logits,
// as structured output masks the tokens its grammar forbids.
#pragma once

#include <cstdint>
#include <span>

namespace vllm {

// logits: [vocab_size]; forbidden tokens (and ids past the mask) get -infinity. Returns whether
// any token is still finite.
bool ApplyTokenBitmask(std::span<const uint32_t> bitmask, int64_t vocab_size, float* logits);

}  // namespace vllm
