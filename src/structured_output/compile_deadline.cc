#include "structured_output/compile_deadline.h"

#include <time.h>

#include <utility>

namespace vllm {
namespace {

// Calls between two reads of the clock: a call marks a unit of work of well under a
// microsecond (an element, a trie node, a rule), so the deadline is seen within microseconds.
constexpr uint32_t kPollInterval = 64;

thread_local ScopedCompileDeadline* current_deadline = nullptr;

}  // namespace

double ThreadCpuSeconds() {
  timespec now{};
  clock_gettime(CLOCK_THREAD_CPUTIME_ID, &now);
  return static_cast<double>(now.tv_sec) + static_cast<double>(now.tv_nsec) * 1e-9;
}

ScopedCompileDeadline::ScopedCompileDeadline(double cpu_seconds, std::function<bool()> cancelled)
    : deadline_(cpu_seconds > 0 ? ThreadCpuSeconds() + cpu_seconds : 0),
      cancelled_(std::move(cancelled)),
      previous_(current_deadline) {
  current_deadline = this;
}

ScopedCompileDeadline::~ScopedCompileDeadline() { current_deadline = previous_; }

bool ScopedCompileDeadline::Poll(bool now) {
  if (state_ != State::kRunning) return true;
  if (--calls_until_poll_ > 0 && !now) return false;
  calls_until_poll_ = kPollInterval;
  if (deadline_ > 0 && ThreadCpuSeconds() >= deadline_) {
    state_ = State::kExpired;
  } else if (cancelled_ && cancelled_()) {
    state_ = State::kCancelled;
  }
  return state_ != State::kRunning;
}

bool CompileInterrupted() {
  return current_deadline != nullptr && current_deadline->Poll(/*now=*/false);
}

}  // namespace vllm
