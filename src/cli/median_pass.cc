#include "cli/median_pass.h"

#include <algorithm>
#include <chrono>
#include <vector>

namespace vllm {

double MedianPassSeconds(int repetitions, const std::function<void()>& pass) {
  pass();
  std::vector<double> seconds;
  for (int r = 0; r < repetitions; ++r) {
    const auto start = std::chrono::steady_clock::now();
    pass();
    seconds.push_back(
        std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count());
  }
  std::sort(seconds.begin(), seconds.end());
  return seconds[seconds.size() / 2];
}

}  // namespace vllm
