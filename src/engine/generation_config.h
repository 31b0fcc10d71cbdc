// vLLM's --generation-config and --override-generation-config: the default sampling params a
// model's generation_config.json recommends (vLLM's ModelConfig.get_diff_sampling_param) and the
// extra EOS ids it names.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "common/expected.h"
#include "vllm/engine_args.h"
#include "vllm/sampling_params.h"

namespace vllm {

struct GenerationConfig {
  // SamplingParams' own defaults where the config says nothing: repetition_penalty,
  // temperature, top_k, top_p and min_p, and max_tokens from max_new_tokens.
  SamplingParams default_sampling_params;
  std::vector<int32_t> eos_token_ids;  // eos_token_id, one or a list
};

// The checks that need no model: generation_config is auto, vllm or a directory, and
// override_generation_config a JSON object of numbers (or null) when given. Errors name the flag.
Status CheckGenerationConfigArgs(const EngineArgs& args);

// Reads generation_config.json from `model_dir` (auto and vllm; empty: a GGUF model, which has
// none) or from the --generation-config directory, as vLLM: the sampling keys whose values differ
// from transformers' GenerationConfig defaults (temperature 1, top_k 50, top_p 1,
// repetition_penalty 1) become the defaults, then override_generation_config's keys replace them
// (null removes one); vllm keeps SamplingParams' defaults but still reads the EOS ids. A missing
// file is no config; one that is not a JSON object, or defaults SamplingParams refuses, an error.
Expected<GenerationConfig> LoadGenerationConfig(const EngineArgs& args,
                                                const std::string& model_dir);

}  // namespace vllm
