// Test helpers shared by the kernel and model tests: reproducible normal(0, 1) values and
// permutations of columns.
#pragma once

#include <algorithm>
#include <cstdint>
#include <numeric>
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

// A reproducible random permutation of 0 .. n − 1 (a linear weight's input order).
inline std::vector<int32_t> RandomPermutation(int64_t n, uint32_t seed) {
  std::vector<int32_t> order(n);
  std::iota(order.begin(), order.end(), 0);
  std::mt19937 rng(seed);
  std::shuffle(order.begin(), order.end(), rng);
  return order;
}

// x: [m, cols] with its columns in `order` ([cols]): x'[j] = x[order[j]].
inline std::vector<float> PermutedColumns(const std::vector<float>& x, int64_t m,
                                          const std::vector<int32_t>& order) {
  const auto cols = static_cast<int64_t>(order.size());
  std::vector<float> permuted(m * cols);
  for (int64_t i = 0; i < m; ++i) {
    for (int64_t j = 0; j < cols; ++j) permuted[i * cols + j] = x[i * cols + order[j]];
  }
  return permuted;
}

}  // namespace vllm::kernels
