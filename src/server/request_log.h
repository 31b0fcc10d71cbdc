// vLLM's request log (--enable-log-requests, --max-log-len): one line per engine request as it
// is submitted, in vLLM's words and Python's notation, so a log reader built for vLLM reads it:
//   Received request cmpl-…: prompt: 'Hello', params: SamplingParams(n=1, …), prompt_token_ids:
//   [1, 15043], prompt_embeds shape: None, lora_request: None.
#pragma once

#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <string_view>

#include "vllm/prompt_embeds.h"
#include "vllm/sampling_params.h"

namespace vllm::server {

struct RequestLogOptions {
  bool enabled = false;
  // The prompt's characters and token ids logged at most; unset: all of them.
  std::optional<size_t> max_log_len;
};

// A prompt given as embeddings (`prompt_embeds` not null) logs as vLLM's does: no prompt or
// token ids, and the tensor's shape, e.g. "prompt_embeds shape: torch.Size([5, 64])".
std::string RequestLogLine(std::string_view request_id, std::string_view prompt,
                           std::span<const int32_t> prompt_token_ids, const SamplingParams& params,
                           std::optional<size_t> max_log_len,
                           const PromptEmbeds* prompt_embeds = nullptr);

// vLLM's SamplingParams.__repr__.
std::string SamplingParamsRepr(const SamplingParams& params);

// Python's repr() of a str: quoted, with control characters, backslashes and the quote escaped.
std::string PythonStringRepr(std::string_view text);

}  // namespace vllm::server
