// LLMEngine's pooling requests: tokenize (a pair through Tokenizer::EncodePair), truncate as
// truncate_prompt_tokens says, resolve PoolingParams against the model, and hand the core a
// prefill-only request; its finished outputs become PoolingRequestOutputs.
#include <algorithm>

#include "engine/llm_engine.h"
#include "engine/llm_engine_impl.h"
#include "engine/pooling_tasks.h"
#include "engine/skip_tokenizer_init.h"

namespace vllm {
namespace {

// vLLM's refusal when the model does not serve `task`.
std::string UnsupportedTaskMessage(const std::string& task) {
  if (task == "embed") {
    return "Embedding API is not supported by this model. Try converting the model using "
           "`--convert embed`.";
  }
  if (task == "classify") {
    return "Classification API is not supported by this model. Try converting the model using "
           "`--convert classify`.";
  }
  if (task == "score") {
    return "Score API is not supported by this model. Try converting the model using "
           "`--convert embed` or `--convert classify`.";
  }
  return "LLM.encode() is only supported for pooling models. Try passing `--runner pooling` to "
         "use the model as a pooling model.";
}

}  // namespace

Status LLMEngine::AddPoolingRequest(const std::string& request_id, const PoolingInput& prompt,
                                    const std::string& task, const PoolingParams& params,
                                    const std::optional<LoraRequest>& lora_request) {
  if (std::find(impl_->pooling_tasks.begin(), impl_->pooling_tasks.end(), task) ==
      impl_->pooling_tasks.end()) {
    return Error{UnsupportedTaskMessage(task)};
  }
  if (impl_->pooling_prompts.count(request_id) != 0) {
    return Error{"request id '" + request_id + "' is already in use"};
  }
  auto spec = ResolvePoolingSpec(task, params, model_config(), impl_->model_name);
  if (!spec) return Error{spec.error()};
  auto lora = ResolveLoraRequest(impl_->lora_adapters.get(), lora_request);
  if (!lora) return Error{lora.error()};
  if (!impl_->tokenizer && !std::holds_alternative<std::vector<int32_t>>(prompt)) {
    return Error{kTextPromptWithoutTokenizer};
  }
  std::vector<int32_t> token_ids;
  if (const auto* text = std::get_if<std::string>(&prompt)) {
    token_ids = impl_->tokenizer->Encode(*text, /*add_special_tokens=*/true);
  } else if (const auto* pair = std::get_if<TextPair>(&prompt)) {
    Tokenizer::EncodedPair encoded = impl_->tokenizer->EncodePair(pair->first, pair->second);
    token_ids = std::move(encoded.ids);
    // Models with one token type (XLM-R) read every token as segment 0.
    if (model_config().type_vocab_size > 1)
      spec->token_type_ids = std::move(encoded.token_type_ids);
  } else {
    token_ids = std::get<std::vector<int32_t>>(prompt);
  }
  if (params.truncate_prompt_tokens) {
    int64_t keep = *params.truncate_prompt_tokens;
    if (keep == -1) keep = max_model_len();
    if (keep < 1 && keep != -1) {
      return Error{"truncate_prompt_tokens must be -1 or at least 1, got " + std::to_string(keep)};
    }
    if (keep > max_model_len()) {
      return Error{"truncate_prompt_tokens value (" + std::to_string(keep) +
                   ") is greater than max_model_len (" + std::to_string(max_model_len()) +
                   "). Please, select a smaller truncation size."};
    }
    // vLLM truncates from the left: the last `keep` tokens stay.
    if (static_cast<int64_t>(token_ids.size()) > keep) {
      const int64_t drop = static_cast<int64_t>(token_ids.size()) - keep;
      token_ids.erase(token_ids.begin(), token_ids.begin() + drop);
      if (!spec->token_type_ids.empty()) {
        spec->token_type_ids.erase(spec->token_type_ids.begin(),
                                   spec->token_type_ids.begin() + drop);
      }
    }
  }
  EngineCoreRequest request;
  request.request_id = request_id;
  request.prompt_token_ids = token_ids;
  request.pooling = std::move(*spec);
  request.lora = std::move(*lora);
  VLLM_RETURN_IF_ERROR(impl_->core->AddRequest(std::move(request)));
  impl_->pooling_prompts[request_id] = std::move(token_ids);
  return Status::Ok();
}

Expected<std::vector<PoolingRequestOutput>> LLMEngine::StepPooling() {
  auto core_outputs = impl_->core->Step();
  if (!core_outputs) return Error{core_outputs.error()};
  std::vector<PoolingRequestOutput> outputs;
  for (EngineCoreOutput& core_output : *core_outputs) {
    auto prompt = impl_->pooling_prompts.find(core_output.request_id);
    if (prompt == impl_->pooling_prompts.end()) continue;
    outputs.push_back({.request_id = core_output.request_id,
                       .prompt_token_ids = std::move(prompt->second),
                       .finished = true,
                       .outputs = {.data = std::move(core_output.pooled)}});
    impl_->pooling_prompts.erase(prompt);
  }
  return outputs;
}

void LLMEngine::AbortPoolingRequests(const std::vector<std::string>& request_ids) {
  impl_->core->FinishRequests(request_ids, RequestStatus::kFinishedAborted);
  for (const std::string& id : request_ids) impl_->pooling_prompts.erase(id);
}

}  // namespace vllm
