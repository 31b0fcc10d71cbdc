#include "sampling/token_bitmask.h"

#include <cmath>
#include <limits>

namespace vllm {

bool ApplyTokenBitmask(std::span<const uint32_t> bitmask, int64_t vocab_size, float* logits) {
  constexpr float kMasked = -std::numeric_limits<float>::infinity();
  bool any_finite = false;
  for (int64_t id = 0; id < vocab_size; ++id) {
    const size_t word = static_cast<size_t>(id / 32);
    const bool allowed = word < bitmask.size() && ((bitmask[word] >> (id % 32)) & 1u) != 0;
    if (!allowed) {
      logits[id] = kMasked;
    } else if (std::isfinite(logits[id])) {
      any_finite = true;
    }
  }
  return any_finite;
}

}  // namespace vllm
