// A time limit for compiling one structured-output constraint, and its cancellation, as the
// compiler's own loops see it. StructuredOutputCompiler installs a deadline on the thread that
// compiles; the long loops (the literal-alternatives trie, the JSON Schema converter, the GBNF
// parser, the lowering to bytes) poll CompileInterrupted() and stop early once it is true,
// returning anything; the compiler then discards what the stage returned and answers the
// interruption as the error. Without an installed deadline nothing is interrupted.
//
// The limit is on the compiling thread's CPU time, not the wall clock: compile threads run at a
// lower priority than the engine's, so on a busy server a compile takes longer without doing
// more work, and a constraint accepted on an idle server is accepted on a busy one too.
#pragma once

#include <cstdint>
#include <functional>

namespace vllm {

// The calling thread's CPU time, in seconds.
double ThreadCpuSeconds();

class ScopedCompileDeadline {
 public:
  // Installs, on the calling thread until destroyed (restoring the one it replaced), a limit of
  // `cpu_seconds` of the thread's CPU time from now (0 or less: none). `cancelled` (may be
  // empty) is polled along with the clock; true stops the compile too.
  explicit ScopedCompileDeadline(double cpu_seconds, std::function<bool()> cancelled = {});
  ~ScopedCompileDeadline();
  ScopedCompileDeadline(const ScopedCompileDeadline&) = delete;
  ScopedCompileDeadline& operator=(const ScopedCompileDeadline&) = delete;

  // Reads the clock and `cancelled` now (between the stages of a compile): whether the compile
  // is interrupted.
  bool CheckNow() { return Poll(/*now=*/true); }
  // Whether a check has seen the interruption (without reading the clock), and why (the first
  // reason seen).
  bool interrupted() const { return state_ != State::kRunning; }
  bool expired() const { return state_ == State::kExpired; }
  bool cancelled() const { return state_ == State::kCancelled; }

 private:
  friend bool CompileInterrupted();
  enum class State : uint8_t { kRunning, kExpired, kCancelled };
  // Polls the clock and `cancelled` (now, or on every kPollInterval-th call and the first).
  bool Poll(bool now);

  double deadline_;  // in ThreadCpuSeconds(); 0: none
  std::function<bool()> cancelled_;
  State state_ = State::kRunning;
  uint32_t calls_until_poll_ = 1;
  ScopedCompileDeadline* previous_;
};

// True once the calling thread's compile deadline has passed or its compile was cancelled (and
// from then on); false without one. Cheap: reads the clock only every few dozen calls.
bool CompileInterrupted();

}  // namespace vllm
