// Bounds on what one request may ask of the server (serve flags).
#pragma once

#include <chrono>
#include <cstddef>
#include <cstdint>

#include "chat_template/chat_template.h"

namespace vllm::server {

struct RequestLimits {
  // Bytes of one prompt: each text prompt, each message's content, and the rendered chat
  // template's output (which is also the template's output limit).
  size_t max_prompt_bytes = size_t{1} << 20;
  // Sequences one request may start: prompts × n (best_of).
  int64_t max_sequences = 256;
  // Chat templates in requests (chat_template, chat_template_kwargs.chat_template) are refused
  // unless the server trusts them (--trust-request-chat-template), as vLLM does.
  bool trust_request_chat_template = false;
  // --max-logprobs: the most logprobs a request may ask for per position (-1: the vocabulary).
  int max_logprobs = 20;
  // Steps of one rendering (ChatTemplate::RenderLimits says what a step is).
  int64_t max_template_steps = 1'000'000;
  double max_template_seconds = 2.0;  // wall time of one rendering

  // The limits of one chat-template rendering.
  ChatTemplate::RenderLimits TemplateLimits() const {
    return {.max_output_bytes = max_prompt_bytes,
            .max_steps = max_template_steps,
            .max_duration =
                std::chrono::milliseconds(static_cast<int64_t>(max_template_seconds * 1000))};
  }
};

}  // namespace vllm::server
