// vLLM's human-readable integers (--max-model-len 32k): a number with a lowercase suffix
// k / m / g / t is decimal (1.5k = 1500), an uppercase K / M / G / T binary (2K = 2048).
#pragma once

#include <cstdint>
#include <string>

#include "common/expected.h"

namespace vllm {

Expected<int64_t> ParseHumanReadableInt(const std::string& text);

}  // namespace vllm
