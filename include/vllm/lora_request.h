// vLLM's LoRARequest: the adapter a request runs with. A request without one runs the base model.
#pragma once

#include <cstdint>
#include <string>

namespace vllm {

struct LoraRequest {
  std::string lora_name;        // unique among loaded adapters; what a request's "model" names
  int64_t lora_int_id = 0;      // > 0 and unique per adapter (vLLM's lora_int_id)
  std::string lora_path;        // a PEFT directory or a llama.cpp GGUF LoRA file
  std::string base_model_name;  // the model it was trained on ("" = the served base)
};

}  // namespace vllm
