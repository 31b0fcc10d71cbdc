// Test helper shared by the engine and conformance tests: steps an engine whose requests are
// named "0", "1", … until none is left, collecting each finished request's token ids.
#pragma once

#include <gtest/gtest.h>

#include <cstdint>
#include <string>
#include <vector>

#include "engine/llm_engine.h"

namespace vllm {

// token ids: [num_requests][its output tokens], by the request's number. A failed step is a test
// failure and ends the loop.
inline std::vector<std::vector<int32_t>> StepToFinishedTokenIds(LLMEngine& engine,
                                                                size_t num_requests) {
  std::vector<std::vector<int32_t>> token_ids(num_requests);
  while (engine.HasUnfinishedRequests()) {
    auto outputs = engine.Step();
    if (!outputs.ok()) {
      ADD_FAILURE() << outputs.error();
      break;
    }
    for (const RequestOutput& output : *outputs) {
      if (output.finished) token_ids[std::stoul(output.request_id)] = output.outputs[0].token_ids;
    }
  }
  return token_ids;
}

}  // namespace vllm
