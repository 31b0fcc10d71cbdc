// Bounds that keep a hostile or broken template from exhausting memory, stack or time: the
// per-rendering ones of ChatTemplate::RenderLimits, kept by a RenderBudget, and fixed ones.
#pragma once

#include <chrono>
#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

#include "chat_template/errors.h"

namespace vllm::jinja {

// Most items in a list a template builds (range(), repetition).
inline constexpr int64_t kMaxListItems = 1'000'000;
// Deepest chain of macro calls.
inline constexpr int kMaxMacroDepth = 256;
// Deepest nesting of expressions and statements being evaluated at once, macro calls included.
inline constexpr int kMaxEvaluationDepth = 1024;
// Deepest nesting the parser accepts, in tags and in expressions.
inline constexpr int kMaxSyntaxDepth = 256;
// Deepest nesting of lists and dicts that are printed, compared or read from JSON.
inline constexpr int kMaxValueDepth = 512;

// Throws RenderError when a list would grow past kMaxListItems.
inline void CheckListSize(size_t items) {
  if (items > static_cast<size_t>(kMaxListItems)) {
    throw RenderError("list longer than " + std::to_string(kMaxListItems) + " items");
  }
}

// What one rendering may spend, under the limits ChatTemplate::RenderLimits describes (with
// max_string_bytes for its max_output_bytes): it counts the steps taken, and the time from its
// making. Each rendering has its own; it is not shared between threads.
class RenderBudget {
 public:
  RenderBudget(size_t max_string_bytes, int64_t max_steps,
               std::optional<std::chrono::milliseconds> max_duration)
      : max_string_bytes_(max_string_bytes),
        max_steps_(max_steps),
        max_duration_(max_duration),
        start_(std::chrono::steady_clock::now()) {}

  // Throws RenderError when a string of `bytes` bytes would be longer than max_string_bytes.
  void CheckStringSize(size_t bytes) const { CheckSize(bytes, "string"); }
  // Appends `piece` to `out`, or throws RenderError when `out` would then be too long.
  void Append(std::string& out, std::string_view piece) const {
    CheckSize(out.size() + piece.size(), "string");
    out += piece;
  }
  // The same for the template's output (or the output of a macro or block set it captures).
  void AppendOutput(std::string& out, std::string_view piece) const {
    CheckSize(out.size() + piece.size(), "template output");
    out += piece;
  }
  // `text`, or RenderError when it is longer than max_string_bytes.
  std::string WithinLimit(std::string text) const {
    CheckStringSize(text.size());
    return text;
  }

  // Counts a step. Throws RenderError past max_steps, or when a reading of the clock, at every
  // kStepsPerClockCheck steps, finds max_duration passed.
  void CountStep() {
    if (steps_ >= max_steps_) {
      throw RenderError("template ran more than " + std::to_string(max_steps_) +
                        " steps (loop iterations, macro calls, items that filters walk through "
                        "and values compared)");
    }
    ++steps_;
    if (max_duration_ && steps_ >= next_clock_check_) {
      next_clock_check_ = steps_ + kStepsPerClockCheck;
      auto elapsed = std::chrono::steady_clock::now() - start_;
      if (std::chrono::duration_cast<std::chrono::milliseconds>(elapsed) > *max_duration_) {
        throw RenderError("template rendering took longer than " +
                          std::to_string(max_duration_->count()) + " ms");
      }
    }
  }

 private:
  static constexpr int64_t kStepsPerClockCheck = 32;

  void CheckSize(size_t bytes, std::string_view what) const {
    if (bytes > max_string_bytes_) {
      throw RenderError(std::string(what) + " longer than " + std::to_string(max_string_bytes_) +
                        " bytes");
    }
  }

  size_t max_string_bytes_;
  int64_t max_steps_;
  std::optional<std::chrono::milliseconds> max_duration_;
  std::chrono::steady_clock::time_point start_;
  int64_t steps_ = 0;
  int64_t next_clock_check_ = 0;
};

}  // namespace vllm::jinja
