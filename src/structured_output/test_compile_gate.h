// Tests: holds chosen structured-output compiles in flight (through the compiler's test hook)
// until released, so a test can act while a compile is deterministically under way; and makes a
// compile pass its time limit.
#pragma once

#include <condition_variable>
#include <mutex>
#include <string>

#include "structured_output/compile_deadline.h"
#include "structured_output/structured_output_compiler.h"

namespace vllm {

// Spends `seconds` of the calling thread's CPU time (a compile hook that passes a time limit).
inline void BurnCpuSeconds(double seconds) {
  const double end = ThreadCpuSeconds() + seconds;
  while (ThreadCpuSeconds() < end) {
  }
}

class TestCompileGate {
 public:
  // Holds every compile of a constraint whose regex is `regex`.
  explicit TestCompileGate(std::string regex) : regex_(std::move(regex)) {
    SetStructuredOutputCompileHookForTesting([this](const StructuredOutputsParams& params) {
      if (params.regex != regex_) return;
      std::unique_lock<std::mutex> lock(mutex_);
      ++num_entered_;
      changed_.notify_all();
      changed_.wait(lock, [this] { return released_; });
    });
  }
  // Releases the held compiles; destroy the gate only after they have ended.
  ~TestCompileGate() {
    Release();
    SetStructuredOutputCompileHookForTesting({});
  }
  TestCompileGate(const TestCompileGate&) = delete;
  TestCompileGate& operator=(const TestCompileGate&) = delete;

  // Waits until `count` compiles have reached the gate.
  void WaitForEntered(int count = 1) {
    std::unique_lock<std::mutex> lock(mutex_);
    changed_.wait(lock, [&] { return num_entered_ >= count; });
  }
  int num_entered() {
    std::lock_guard<std::mutex> lock(mutex_);
    return num_entered_;
  }
  // Releases the gate when it goes out of scope: declared after the engine, it lets a failed test
  // (an assertion that returns early) tear the engine down instead of hanging.
  struct ReleaseAtExit {
    TestCompileGate& gate;
    ~ReleaseAtExit() { gate.Release(); }
  };

  void Release() {
    {
      std::lock_guard<std::mutex> lock(mutex_);
      released_ = true;
    }
    changed_.notify_all();
  }

 private:
  const std::string regex_;
  std::mutex mutex_;
  std::condition_variable changed_;
  int num_entered_ = 0;
  bool released_ = false;
};

}  // namespace vllm
