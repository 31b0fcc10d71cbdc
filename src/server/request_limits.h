// Bounds on what one request may ask of the server (serve flags).
#pragma once

#include <cstddef>
#include <cstdint>

namespace vllm::server {

// Bounds on what one request may ask of the server.
struct RequestLimits {
  // Bytes of one prompt: each text prompt, each message's content, and the rendered chat
  // template's output (which is also the template's output limit).
  size_t max_prompt_bytes = size_t{1} << 20;
  // Sequences one request may start: prompts × n (best_of).
  int64_t max_sequences = 256;
  // Chat templates in requests (chat_template, chat_template_kwargs.chat_template) are refused
  // unless the server trusts them (--trust-request-chat-template), as vLLM does.
  bool trust_request_chat_template = false;
  int64_t max_template_steps = 1'000'000;  // loop iterations and macro calls in one rendering
  double max_template_seconds = 2.0;       // wall time of one rendering
};

}  // namespace vllm::server
