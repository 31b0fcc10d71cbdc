// What a request asks of the engine beyond its prompt and sampling parameters.
#pragma once

#include <string>

namespace vllm {

struct RequestOptions {
  int priority = 0;  // lower is scheduled first under the priority policy
  std::string cache_salt;
  // Structured output applies only after the output contains this text (a reasoning parser's
  // end of thinking, such as "</think>"); empty: from the first token.
  std::string structured_output_after;
};

}  // namespace vllm
