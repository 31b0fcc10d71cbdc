// The README's C++ example: offline generation through the public LLM API.
// Usage: generate_example MODEL.gguf
#include <iostream>

#include "vllm/llm.h"

int main(int argc, char** argv) {
  if (argc != 2) {
    std::cerr << "usage: " << argv[0] << " MODEL.gguf\n";
    return 2;
  }
  vllm::LLM llm({.model = argv[1]});
  vllm::SamplingParams params;  // vLLM's fields, defaults and validation messages
  params.temperature = 0.8f;
  params.seed = 1;
  params.max_tokens = 64;
  for (const vllm::RequestOutput& output : llm.Generate({"Once upon a time", "The dog"}, params)) {
    std::cout << output.outputs[0].text << "\n";
  }
  return 0;
}
