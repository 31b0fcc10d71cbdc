// Times a benchmark's pass: one warm-up run, then `repetitions` timed ones, of which the median
// counts, so that one pass slowed by another process (two cores, shared) does not move the figure.
#pragma once

#include <functional>

namespace vllm {

// Seconds of the median of `repetitions` (>= 1) timed runs of `pass`, after one untimed run.
double MedianPassSeconds(int repetitions, const std::function<void()>& pass);

}  // namespace vllm
