// LLM's pooling entry points (vLLM's LLM.embed / classify / score / encode): every prompt is
// added as a pooling request and the engine steps until all are done; they batch together under
// the engine's one token budget.
#include <functional>
#include <stdexcept>

#include "engine/llm_engine.h"
#include "engine/lora_requests_per_prompt.h"
#include "model/layers/pooler.h"
#include "model/model_config.h"
#include "vllm/llm.h"

namespace vllm {
namespace {

// Runs `inputs` as `task` requests, input i with lora_requests[i] (empty: none); outputs in input
// order. Throws std::invalid_argument when a request is refused (those added before it are
// aborted). `check_interrupt(abort_requests)` runs
// before each step (LLM::CheckInterrupt).
using InterruptCheck = std::function<void(const std::function<void()>& abort_requests)>;
std::vector<PoolingRequestOutput> RunPooling(LLMEngine& engine,
                                             const std::vector<PoolingInput>& inputs,
                                             const std::string& task, const PoolingParams& params,
                                             const LLM::LoraRequests& lora_requests,
                                             const InterruptCheck& check_interrupt) {
  CheckLoraRequestsPerPrompt(lora_requests, inputs.size());
  std::vector<std::string> added;
  for (size_t i = 0; i < inputs.size(); ++i) {
    Status status = engine.AddPoolingRequest(std::to_string(i), inputs[i], task, params,
                                             LoraRequestOfPrompt(lora_requests, i));
    if (!status.ok()) {
      engine.AbortPoolingRequests(added);
      throw std::invalid_argument(status.message());
    }
    added.push_back(std::to_string(i));
  }
  std::vector<PoolingRequestOutput> results(inputs.size());
  while (engine.HasUnfinishedRequests()) {
    check_interrupt([&] { engine.AbortPoolingRequests(added); });
    auto outputs = engine.StepPooling();
    if (!outputs) throw std::runtime_error(outputs.error());
    for (PoolingRequestOutput& output : *outputs) {
      results[std::stoul(output.request_id)] = std::move(output);
    }
  }
  return results;
}

std::vector<PoolingInput> AsInputs(const std::vector<LLM::PoolingPrompt>& prompts) {
  std::vector<PoolingInput> inputs;
  for (const LLM::PoolingPrompt& prompt : prompts) {
    if (const auto* text = std::get_if<std::string>(&prompt)) {
      inputs.emplace_back(*text);
    } else {
      inputs.emplace_back(std::get<std::vector<int32_t>>(prompt));
    }
  }
  return inputs;
}

// The same request with its pooled data as another output form.
template <typename Output>
PoolingRequestOutputOf<Output> Convert(PoolingRequestOutput output, Output converted) {
  return {.request_id = std::move(output.request_id),
          .prompt_token_ids = std::move(output.prompt_token_ids),
          .finished = output.finished,
          .outputs = std::move(converted)};
}

// `prompts` as `task` requests, each output's data as the task's output form (its one vector).
template <typename Output>
std::vector<PoolingRequestOutputOf<Output>> RunAs(LLMEngine& engine,
                                                  const std::vector<LLM::PoolingPrompt>& prompts,
                                                  const std::string& task,
                                                  const PoolingParams& params,
                                                  const LLM::LoraRequests& lora_requests,
                                                  const InterruptCheck& check_interrupt) {
  std::vector<PoolingRequestOutputOf<Output>> results;
  for (PoolingRequestOutput& output :
       RunPooling(engine, AsInputs(prompts), task, params, lora_requests, check_interrupt)) {
    std::vector<float> data = std::move(output.outputs.data);
    results.push_back(Convert(std::move(output), Output{std::move(data)}));
  }
  return results;
}

}  // namespace

std::vector<EmbeddingRequestOutput> LLM::Embed(const std::vector<PoolingPrompt>& prompts,
                                               const PoolingParams& params,
                                               const LoraRequests& lora_requests) {
  return RunAs<EmbeddingOutput>(*engine_, prompts, "embed", params, lora_requests,
                                [this](const auto& abort) { CheckInterrupt(abort); });
}

std::vector<ClassificationRequestOutput> LLM::Classify(const std::vector<PoolingPrompt>& prompts,
                                                       const PoolingParams& params,
                                                       const LoraRequests& lora_requests) {
  return RunAs<ClassificationOutput>(*engine_, prompts, "classify", params, lora_requests,
                                     [this](const auto& abort) { CheckInterrupt(abort); });
}

std::vector<PoolingRequestOutput> LLM::Encode(const std::vector<PoolingPrompt>& prompts,
                                              const PoolingParams& params,
                                              const LoraRequests& lora_requests) {
  return RunPooling(*engine_, AsInputs(prompts), "encode", params, lora_requests,
                    [this](const auto& abort) { CheckInterrupt(abort); });
}

std::vector<ScoringRequestOutput> LLM::Score(const std::vector<std::string>& text_1,
                                             const std::vector<std::string>& text_2,
                                             const PoolingParams& params,
                                             const LoraRequests& lora_requests) {
  if (text_1.empty() || text_2.empty() || (text_1.size() != 1 && text_1.size() != text_2.size())) {
    throw std::invalid_argument("Input lengths must be either 1:1, 1:N or N:N");
  }
  CheckLoraRequestsPerPrompt(lora_requests, text_2.size());
  const InterruptCheck check_interrupt = [this](const auto& abort) { CheckInterrupt(abort); };
  const auto first_of = [&](size_t i) -> const std::string& {
    return text_1.size() == 1 ? text_1[0] : text_1[i];
  };
  std::vector<ScoringRequestOutput> results;
  if (engine_->model_config().num_labels > 0) {  // a cross-encoder: one pair sequence each
    std::vector<PoolingInput> pairs;
    for (size_t i = 0; i < text_2.size(); ++i) pairs.emplace_back(TextPair{first_of(i), text_2[i]});
    for (PoolingRequestOutput& output :
         RunPooling(*engine_, pairs, "score", params, lora_requests, check_interrupt)) {
      if (output.outputs.data.size() != 1) {
        throw std::invalid_argument("Score API needs a classifier with a single label");
      }
      const float score = output.outputs.data[0];
      results.push_back(Convert(std::move(output), ScoringOutput{score}));
    }
    return results;
  }
  // A bi-encoder: the cosine similarity of the two embeddings.
  std::vector<PoolingInput> texts;
  LoraRequests text_loras;  // each pair's adapter for both of its texts
  for (size_t i = 0; i < text_2.size(); ++i) {
    texts.emplace_back(first_of(i));
    texts.emplace_back(text_2[i]);
    if (!lora_requests.empty()) text_loras.insert(text_loras.end(), 2, lora_requests[i]);
  }
  std::vector<PoolingRequestOutput> embeddings =
      RunPooling(*engine_, texts, "score", params, text_loras, check_interrupt);
  for (size_t i = 0; i < text_2.size(); ++i) {
    PoolingRequestOutput& first = embeddings[2 * i];
    const PoolingRequestOutput& second = embeddings[2 * i + 1];
    const float score = CosineSimilarity(first.outputs.data, second.outputs.data);
    first.prompt_token_ids.insert(first.prompt_token_ids.end(), second.prompt_token_ids.begin(),
                                  second.prompt_token_ids.end());
    first.request_id = std::to_string(i);
    results.push_back(Convert(std::move(first), ScoringOutput{score}));
  }
  return results;
}

}  // namespace vllm
