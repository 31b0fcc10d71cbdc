// What a request asks of the engine beyond its prompt and sampling parameters.
#pragma once

#include <memory>
#include <optional>
#include <string>

#include "vllm/lora_request.h"
#include "vllm/prompt_embeds.h"

namespace vllm {

struct RequestOptions {
  int priority = 0;  // lower is scheduled first under the priority policy
  std::string cache_salt;
  // Structured output applies only after the output contains this text (a reasoning parser's
  // end of thinking, such as "</think>"); empty: from the first token.
  std::string structured_output_after;
  // The prompt as embeddings (--enable-prompt-embeds); the prompt passed beside it must then be
  // empty (no text, no token ids).
  std::shared_ptr<const PromptEmbeds> prompt_embeds;
  // The LoRA adapter the request runs (vLLM's lora_request; --enable-lora); none: the base model.
  std::optional<LoraRequest> lora_request;
};

}  // namespace vllm
