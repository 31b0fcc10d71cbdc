// Measures the machine's memory read bandwidth, so benchmark figures can be reported as a ratio
// to the roofline measured in the same run.
#pragma once

#include <cstdint>

#include "common/thread_pool.h"

namespace vllm {

// Reads a buffer of `num_bytes` (far larger than the caches) on every pool thread, `repetitions`
// times; returns the best rate in bytes/s.
double MeasureReadBandwidth(ThreadPool& pool, int64_t num_bytes = int64_t{1} << 30,
                            int repetitions = 3);

}  // namespace vllm
