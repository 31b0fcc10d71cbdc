// vLLM's offline entry point: LLM(model).generate(prompts, params) runs a whole batch with
// continuous batching and returns one RequestOutput per prompt, in order.
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "vllm/engine_args.h"
#include "vllm/outputs.h"
#include "vllm/sampling_params.h"

namespace vllm {

class LLMEngine;

class LLM {
 public:
  // Loads the model; throws std::runtime_error with the reason when it cannot.
  explicit LLM(const EngineArgs& args);
  ~LLM();
  LLM(const LLM&) = delete;
  LLM& operator=(const LLM&) = delete;

  // One params for every prompt, or one per prompt. Throws std::invalid_argument for a prompt or
  // parameter the engine refuses (the message is vLLM's).
  std::vector<RequestOutput> Generate(const std::vector<std::string>& prompts,
                                      const SamplingParams& params, bool use_tqdm = true);
  std::vector<RequestOutput> Generate(const std::vector<std::string>& prompts,
                                      const std::vector<SamplingParams>& params,
                                      bool use_tqdm = true);
  // Prompts given as token ids (vLLM's prompt_token_ids).
  std::vector<RequestOutput> GenerateFromTokenIds(
      const std::vector<std::vector<int32_t>>& prompt_token_ids, const SamplingParams& params,
      bool use_tqdm = true);
  std::vector<RequestOutput> GenerateFromTokenIds(
      const std::vector<std::vector<int32_t>>& prompt_token_ids,
      const std::vector<SamplingParams>& params, bool use_tqdm = true);

  LLMEngine& engine() { return *engine_; }

 private:
  template <typename Prompt>
  std::vector<RequestOutput> Run(const std::vector<Prompt>& prompts,
                                 const std::vector<SamplingParams>& params, bool use_tqdm);

  std::unique_ptr<LLMEngine> engine_;
};

}  // namespace vllm
