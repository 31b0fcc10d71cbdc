// A download's progress on stderr: a bar redrawn in place when stderr is a terminal, else a log
// line every few seconds (what a service's journal can hold).
#pragma once

#include <chrono>
#include <cstdint>
#include <string>

namespace vllm::hub {

class DownloadProgress {
 public:
  // total_bytes 0: unknown. done_bytes: what an earlier, interrupted try left.
  DownloadProgress(std::string name, int64_t total_bytes, int64_t done_bytes);
  void Advance(int64_t bytes);
  void Finish();  // the last line, with the rate

 private:
  void Show(bool last);
  std::string name_;
  int64_t total_bytes_;
  int64_t done_bytes_;
  int64_t resumed_bytes_;
  bool on_terminal_;
  std::chrono::steady_clock::time_point start_;
  std::chrono::steady_clock::time_point last_shown_;
};

}  // namespace vllm::hub
