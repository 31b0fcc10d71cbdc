// Test helper shared by the kernel tests: reproducible normal(0, 1) values.
#pragma once

#include <cstdint>
#include <random>
#include <vector>

namespace vllm::kernels {

inline std::vector<float> RandomNormalValues(int64_t count, uint32_t seed) {
  std::mt19937 rng(seed);
  std::normal_distribution<float> normal(0.0f, 1.0f);
  std::vector<float> values(count);
  for (float& v : values) v = normal(rng);
  return values;
}

}  // namespace vllm::kernels
