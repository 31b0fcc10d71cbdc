// A one-line progress display for weight loading, on stderr when it is a terminal (silent
// otherwise, so logs and tests stay clean).
#pragma once

#include <unistd.h>

#include <chrono>
#include <cstdint>
#include <cstdio>

namespace vllm {

class LoadProgress {
 public:
  explicit LoadProgress(int64_t total_steps)
      : total_(total_steps), enabled_(isatty(STDERR_FILENO) != 0) {}
  ~LoadProgress() {
    if (enabled_ && shown_) std::fputc('\n', stderr);
  }

  // Marks one more step (a layer) done.
  void Step() {
    ++done_;
    if (!enabled_) return;
    constexpr int kWidth = 30;
    const int filled = static_cast<int>(kWidth * done_ / (total_ > 0 ? total_ : 1));
    const double seconds =
        std::chrono::duration<double>(std::chrono::steady_clock::now() - start_).count();
    std::fprintf(stderr, "\rLoading weights [%.*s%*s] %lld/%lld layers, %.1f s", filled,
                 "==============================", kWidth - filled, "",
                 static_cast<long long>(done_), static_cast<long long>(total_), seconds);
    std::fflush(stderr);
    shown_ = true;
  }

 private:
  const int64_t total_;
  const bool enabled_;
  int64_t done_ = 0;
  bool shown_ = false;
  const std::chrono::steady_clock::time_point start_ = std::chrono::steady_clock::now();
};

}  // namespace vllm
