#include "vllm/llm.h"

#include <chrono>
#include <cstdio>
#include <stdexcept>

#include "engine/llm_engine.h"
#include "engine/lora_requests_per_prompt.h"

namespace vllm {
namespace {

// A one-line progress bar on stderr, redrawn in place.
class ProgressBar {
 public:
  ProgressBar(size_t total, bool enabled)
      : total_(total), enabled_(enabled), start_(std::chrono::steady_clock::now()) {}
  void Update(size_t done, int64_t generated_tokens) {
    if (!enabled_) return;
    const double seconds =
        std::chrono::duration<double>(std::chrono::steady_clock::now() - start_).count();
    const int width = 30;
    const int filled = total_ == 0 ? width : static_cast<int>(width * done / total_);
    std::fprintf(stderr, "\rProcessed prompts: %3zu%% |%s%s| %zu/%zu [%.1fs, output %.1f tok/s]",
                 total_ == 0 ? 100 : 100 * done / total_, std::string(filled, '#').c_str(),
                 std::string(width - filled, ' ').c_str(), done, total_, seconds,
                 seconds > 0 ? generated_tokens / seconds : 0.0);
    if (done == total_) std::fprintf(stderr, "\n");
  }

 private:
  size_t total_;
  bool enabled_;
  std::chrono::steady_clock::time_point start_;
};

// The one check of a call's params, before any of its requests starts: std::invalid_argument
// with vLLM's message for invalid ones.
ValidatedSamplingParams Check(const SamplingParams& params) {
  auto validated = ValidatedSamplingParams::Validate(params);
  if (!validated) throw std::invalid_argument(validated.error());
  return std::move(*validated);
}

std::vector<ValidatedSamplingParams> Check(const std::vector<SamplingParams>& params) {
  std::vector<ValidatedSamplingParams> validated;
  for (const SamplingParams& request_params : params) validated.push_back(Check(request_params));
  return validated;
}

}  // namespace

LLM::LLM(const EngineArgs& args) {
  auto engine = LLMEngine::Create(args);
  if (!engine) throw std::runtime_error(engine.error());
  engine_ = std::move(*engine);
}

LLM::~LLM() = default;

void LLM::CheckInterrupt(const std::function<void()>& abort_requests) const {
  if (!interrupt_check_) return;
  try {
    interrupt_check_();
  } catch (...) {
    abort_requests();
    throw;
  }
}

template <typename Prompt>
std::vector<RequestOutput> LLM::Run(const std::vector<Prompt>& prompts,
                                    const std::vector<ValidatedSamplingParams>& params,
                                    bool use_tqdm,
                                    const std::vector<std::optional<LoraRequest>>& lora_requests) {
  if (params.size() != prompts.size()) {
    throw std::invalid_argument("The lengths of prompts and sampling_params must be the same.");
  }
  CheckLoraRequestsPerPrompt(lora_requests, prompts.size());
  for (size_t i = 0; i < prompts.size(); ++i) {
    RequestOptions options{.lora_request = LoraRequestOfPrompt(lora_requests, i)};
    Status status =
        engine_->AddRequest(std::to_string(i), prompts[i],
                            params[i].WithOutputKind(RequestOutputKind::kFinalOnly), options);
    if (!status.ok()) {
      std::vector<std::string> added;
      for (size_t j = 0; j < i; ++j) added.push_back(std::to_string(j));
      engine_->AbortRequests(added);
      throw std::invalid_argument(status.message());
    }
  }
  std::vector<RequestOutput> results(prompts.size());
  size_t num_done = 0;
  int64_t num_generated = 0;
  ProgressBar bar(prompts.size(), use_tqdm);
  while (engine_->HasUnfinishedRequests()) {
    CheckInterrupt([&] {
      std::vector<std::string> unfinished;
      for (size_t i = 0; i < prompts.size(); ++i) {
        if (!results[i].finished) unfinished.push_back(std::to_string(i));
      }
      engine_->AbortRequests(unfinished);
    });
    auto outputs = engine_->Step();
    if (!outputs) throw std::runtime_error(outputs.error());
    for (RequestOutput& output : *outputs) {
      if (!output.finished) continue;
      for (const auto& completion : output.outputs) num_generated += completion.token_ids.size();
      results[std::stoul(output.request_id)] = std::move(output);
      ++num_done;
      bar.Update(num_done, num_generated);
    }
  }
  return results;
}

std::vector<RequestOutput> LLM::Generate(const std::vector<std::string>& prompts,
                                         const SamplingParams& params, bool use_tqdm) {
  return Generate(prompts, Check(params), use_tqdm);
}

std::vector<RequestOutput> LLM::Generate(const std::vector<std::string>& prompts,
                                         const ValidatedSamplingParams& params, bool use_tqdm) {
  return Run(prompts, std::vector<ValidatedSamplingParams>(prompts.size(), params), use_tqdm);
}

std::vector<RequestOutput> LLM::Generate(const std::vector<std::string>& prompts,
                                         const std::vector<SamplingParams>& params, bool use_tqdm) {
  return Run(prompts, Check(params), use_tqdm);
}

std::vector<RequestOutput> LLM::Generate(const std::vector<std::string>& prompts,
                                         const SamplingParams& params,
                                         const LoraRequest& lora_request, bool use_tqdm) {
  return Run(prompts, std::vector<ValidatedSamplingParams>(prompts.size(), Check(params)), use_tqdm,
             std::vector<std::optional<LoraRequest>>(prompts.size(), lora_request));
}

std::vector<RequestOutput> LLM::Generate(
    const std::vector<std::string>& prompts, const std::vector<SamplingParams>& params,
    const std::vector<std::optional<LoraRequest>>& lora_requests, bool use_tqdm) {
  return Run(prompts, Check(params), use_tqdm, lora_requests);
}

std::vector<RequestOutput> LLM::GenerateFromTokenIds(
    const std::vector<std::vector<int32_t>>& prompt_token_ids, const SamplingParams& params,
    bool use_tqdm) {
  return Run(prompt_token_ids,
             std::vector<ValidatedSamplingParams>(prompt_token_ids.size(), Check(params)),
             use_tqdm);
}

std::vector<RequestOutput> LLM::GenerateFromTokenIds(
    const std::vector<std::vector<int32_t>>& prompt_token_ids,
    const std::vector<SamplingParams>& params, bool use_tqdm) {
  return Run(prompt_token_ids, Check(params), use_tqdm);
}

}  // namespace vllm
