// vLLM's offline entry point: LLM(model).generate(prompts, params) runs a whole batch with
// continuous batching and returns one RequestOutput per prompt, in order.
#pragma once

#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <variant>
#include <vector>

#include "vllm/beam_search.h"
#include "vllm/engine_args.h"
#include "vllm/lora_request.h"
#include "vllm/outputs.h"
#include "vllm/pooling_params.h"
#include "vllm/sampling_params.h"
#include "vllm/validated_sampling_params.h"

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
  // The same with params checked already where they came in (they are not checked again).
  std::vector<RequestOutput> Generate(const std::vector<std::string>& prompts,
                                      const ValidatedSamplingParams& params, bool use_tqdm = true);
  std::vector<RequestOutput> Generate(const std::vector<std::string>& prompts,
                                      const std::vector<SamplingParams>& params,
                                      bool use_tqdm = true);
  // With LoRA adapters (vLLM's lora_request; --enable-lora): one for every prompt, or one per
  // prompt (nullopt: the base model).
  std::vector<RequestOutput> Generate(const std::vector<std::string>& prompts,
                                      const SamplingParams& params, const LoraRequest& lora_request,
                                      bool use_tqdm = true);
  std::vector<RequestOutput> Generate(const std::vector<std::string>& prompts,
                                      const std::vector<SamplingParams>& params,
                                      const std::vector<std::optional<LoraRequest>>& lora_requests,
                                      bool use_tqdm = true);
  // Prompts given as token ids (vLLM's prompt_token_ids).
  std::vector<RequestOutput> GenerateFromTokenIds(
      const std::vector<std::vector<int32_t>>& prompt_token_ids, const SamplingParams& params,
      bool use_tqdm = true);
  std::vector<RequestOutput> GenerateFromTokenIds(
      const std::vector<std::vector<int32_t>>& prompt_token_ids,
      const std::vector<SamplingParams>& params, bool use_tqdm = true);

  // vLLM's LLM.beam_search: one output per prompt (text, or token ids), its best
  // params.beam_width sequences first. Throws std::invalid_argument for params or a prompt the
  // engine refuses (the message is vLLM's). lora_requests: empty (the base model) or one adapter
  // per prompt, which every beam of that prompt runs with.
  std::vector<BeamSearchOutput> BeamSearch(
      const std::vector<std::variant<std::string, std::vector<int32_t>>>& prompts,
      const BeamSearchParams& params,
      const std::vector<std::optional<LoraRequest>>& lora_requests = {});

  // Pooling models (--runner pooling; llm_pooling.cc). Prompts are text or token ids; outputs
  // come in prompt order. Each throws std::invalid_argument with vLLM's message when the model
  // does not serve the task or refuses a prompt or parameter. lora_requests: empty (the base
  // model) or one adapter per prompt (decoder models; --enable-lora).
  using PoolingPrompt = std::variant<std::string, std::vector<int32_t>>;
  using LoraRequests = std::vector<std::optional<LoraRequest>>;
  std::vector<EmbeddingRequestOutput> Embed(const std::vector<PoolingPrompt>& prompts,
                                            const PoolingParams& params = {},
                                            const LoraRequests& lora_requests = {});
  std::vector<ClassificationRequestOutput> Classify(const std::vector<PoolingPrompt>& prompts,
                                                    const PoolingParams& params = {},
                                                    const LoraRequests& lora_requests = {});
  // vLLM's LLM.score: text_1 against each of text_2 (one text_1 for all, or one per text_2). A
  // cross-encoder (a classification head) reads each pair as one sequence; a bi-encoder scores
  // the cosine similarity of the two embeddings. lora_requests: empty or one per pair (both
  // texts of a pair run with its adapter).
  std::vector<ScoringRequestOutput> Score(const std::vector<std::string>& text_1,
                                          const std::vector<std::string>& text_2,
                                          const PoolingParams& params = {},
                                          const LoraRequests& lora_requests = {});
  // The pooler's raw output ("encode"), not normalized unless params.normalize says so.
  std::vector<PoolingRequestOutput> Encode(const std::vector<PoolingPrompt>& prompts,
                                           const PoolingParams& params = {},
                                           const LoraRequests& lora_requests = {});

  LLMEngine& engine() { return *engine_; }

  // Called between engine steps by the calls above, which run the engine until their requests
  // end. It may throw to end the call early: the call aborts its requests, then the exception
  // propagates. The Python package checks for Ctrl-C with it. Empty: nothing is checked.
  void SetInterruptCheck(std::function<void()> check) { interrupt_check_ = std::move(check); }

 private:
  // lora_requests: [prompts.size()], or empty: every prompt on the base model.
  template <typename Prompt>
  std::vector<RequestOutput> Run(const std::vector<Prompt>& prompts,
                                 const std::vector<ValidatedSamplingParams>& params, bool use_tqdm,
                                 const std::vector<std::optional<LoraRequest>>& lora_requests = {});

  // Runs interrupt_check_; if it throws, calls abort_requests before the exception propagates.
  void CheckInterrupt(const std::function<void()>& abort_requests) const;

  std::unique_ptr<LLMEngine> engine_;
  std::function<void()> interrupt_check_;
};

}  // namespace vllm
