#include "cli/read_bandwidth.h"

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstring>
#include <memory>

namespace vllm {

double MeasureReadBandwidth(ThreadPool& pool, int64_t num_bytes, int repetitions) {
  const int64_t num_words = num_bytes / 8;
  std::unique_ptr<uint64_t[]> buffer(new uint64_t[num_words]);
  // Touch every page first, so the timed passes read memory rather than fault it in.
  pool.ParallelFor(num_words, [&](int64_t begin, int64_t end) {
    std::memset(buffer.get() + begin, 1, (end - begin) * 8);
  });
  std::atomic<uint64_t> sink{0};
  double best = 0.0;
  for (int r = 0; r < repetitions; ++r) {
    auto start = std::chrono::steady_clock::now();
    pool.ParallelFor(num_words, [&](int64_t begin, int64_t end) {
      // Eight independent sums keep several loads in flight; the compiler vectorizes them.
      uint64_t sums[8] = {};
      int64_t i = begin;
      for (; i + 8 <= end; i += 8) {
        for (int k = 0; k < 8; ++k) sums[k] += buffer[i + k];
      }
      for (; i < end; ++i) sums[0] += buffer[i];
      uint64_t total = 0;
      for (uint64_t s : sums) total += s;
      sink += total;
    });
    double seconds =
        std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    best = std::max(best, static_cast<double>(num_words * 8) / seconds);
  }
  return sink.load() == 0 ? 0.0 : best;  // the sum is never 0: the buffer holds 0x01 bytes
}

}  // namespace vllm
