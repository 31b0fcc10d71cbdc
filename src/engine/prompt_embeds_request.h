// A generation request whose prompt came as embeddings (--enable-prompt-embeds): what the engine
// checks of it and what it hands the core in place of token ids. As in vLLM, the scheduler sees
// one placeholder token id (0) per embedding row; the runner feeds the rows to the model.
#pragma once

#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "common/expected.h"
#include "vllm/prompt_embeds.h"
#include "vllm/sampling_params.h"

namespace vllm {

// vLLM's refusal when the engine was started without --enable-prompt-embeds.
inline constexpr const char* kPromptEmbedsNotEnabled =
    "You must set `--enable-prompt-embeds` to input `prompt_embeds`.";

// vLLM's _load_prompt_embeds: the (seq_len, hidden_size) tensor in `torch_saved` (the bytes of
// torch.save, float32, bfloat16 or float16), a leading batch dimension of 1 squeezed.
Expected<std::shared_ptr<const PromptEmbeds>> LoadPromptEmbeds(std::string_view torch_saved);

// The embeddings the request runs on: `embeds` checked against the engine (enabled, the model's
// hidden_size) and the request (no prompt_logprobs: there are no prompt tokens to score), then
// cut to their last truncate_prompt_tokens rows when the params ask.
Expected<std::shared_ptr<const PromptEmbeds>> PreparePromptEmbeds(
    std::shared_ptr<const PromptEmbeds> embeds, const SamplingParams& params, bool enabled,
    int64_t model_hidden_size);

// The cache salt of such a request: `cache_salt` plus a 128-bit digest of the embeddings, so its
// KV blocks are shared only with prompts of the same embeddings (their placeholder token ids
// are all alike).
std::string PromptEmbedsCacheSalt(const std::string& cache_salt, const PromptEmbeds& embeds);

}  // namespace vllm
