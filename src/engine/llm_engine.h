// vLLM's LLMEngine: text in, RequestOutputs out. Loads the model and tokenizer, tokenizes
// prompts, fans n > 1 out into n sequences (which share the prompt's KV blocks through the
// prefix cache), runs the engine core one step at a time and detokenizes its outputs.
#pragma once

#include <map>
#include <memory>
#include <optional>
#include <string>
#include <variant>
#include <vector>

#include "common/expected.h"
#include "common/thread_pool.h"
#include "engine/engine_core.h"
#include "engine/output_processor.h"
#include "formats/gguf_file.h"
#include "model/model_loader.h"
#include "structured_output/structured_output_compiler.h"
#include "tokenizer/tokenizer.h"
#include "vllm/engine_args.h"
#include "vllm/outputs.h"
#include "vllm/pooling_params.h"
#include "vllm/request_options.h"

namespace vllm {

// A prompt as text (tokenized with BOS as the vocabulary asks) or as token ids.
using PromptInput = std::variant<std::string, std::vector<int32_t>>;
// A pooling prompt: text, token ids, or two texts a cross-encoder reads as one pair sequence
// (Tokenizer::EncodePair, with its token types).
struct TextPair {
  std::string first, second;
};
using PoolingInput = std::variant<std::string, std::vector<int32_t>, TextPair>;

class LLMEngine {
 public:
  static Expected<std::unique_ptr<LLMEngine>> Create(const EngineArgs& args);

  // A structured output constraint in `params` is compiled here, on the calling thread, within
  // the compiler's limits (an invalid one, or one over a limit, is refused).
  Status AddRequest(const std::string& request_id, const PromptInput& prompt,
                    const SamplingParams& params, const RequestOptions& options = {});
  // The same with the constraint already compiled (AsyncLLM compiles off the engine thread):
  // `grammar` is structured_output_compiler()'s grammar of params.structured_outputs, null
  // when it has none. Compiles nothing.
  Status AddRequest(const std::string& request_id, const PromptInput& prompt,
                    const SamplingParams& params, const RequestOptions& options,
                    std::shared_ptr<const CompiledGrammar> grammar);
  // Compiles structured-output constraints over this model's vocabulary (indexed on the first
  // compile), within the --structured-outputs-* limits. Thread-safe: use it from any thread.
  StructuredOutputCompiler& structured_output_compiler() { return *structured_output_compiler_; }
  Expected<std::vector<RequestOutput>> Step();
  // Finishes the requests with finish_reason "abort"; returns their final outputs.
  std::vector<RequestOutput> AbortRequests(const std::vector<std::string>& request_ids);
  // Pooling runners (llm_engine_pooling.cc): `task` is "embed", "classify", "score" or
  // "encode"; errors carry vLLM's messages when the model does not serve it.
  Status AddPoolingRequest(const std::string& request_id, const PoolingInput& prompt,
                           const std::string& task, const PoolingParams& params);
  // One engine step of a pooling runner: the requests it finished, with their pooled outputs.
  Expected<std::vector<PoolingRequestOutput>> StepPooling();
  // Finishes unfinished pooling requests without outputs.
  void AbortPoolingRequests(const std::vector<std::string>& request_ids);
  // The pooling tasks this engine serves (empty for a generate runner).
  const std::vector<std::string>& pooling_tasks() const { return pooling_tasks_; }
  bool HasUnfinishedRequests() const { return core_->HasUnfinishedRequests(); }

  const Tokenizer& tokenizer() const { return *tokenizer_; }
  int64_t max_model_len() const { return core_->max_model_len(); }
  // The model's chat template (GGUF tokenizer.chat_template or the directory's); may be empty.
  const std::string& chat_template() const { return chat_template_; }
  // Sampling defaults from the directory's generation_config.json (vLLM's --generation-config
  // auto): SamplingParams' own defaults where it says nothing.
  const SamplingParams& default_sampling_params() const { return default_sampling_params_; }
  const ModelConfig& model_config() const { return model_.model->config(); }
  EngineStats stats() const { return core_->stats(); }

 private:
  LLMEngine() = default;

  // Loads the loaded model's tokenizer and chat template (and a model directory's generation
  // config) from `path`.
  Status LoadTokenizer(const std::string& path);
  // This model's vocabulary as the grammar matcher reads it.
  std::shared_ptr<const IndexedVocabulary> IndexStructuredOutputVocabulary() const;

  std::unique_ptr<ThreadPool> pool_;
  LoadedModel model_;
  std::string chat_template_;
  SamplingParams default_sampling_params_;
  // generation_config.json's eos_token_id(s): requests also stop on them (unless ignore_eos).
  std::vector<int32_t> generation_eos_ids_;
  std::unique_ptr<Tokenizer> tokenizer_;
  std::unique_ptr<EngineCore> core_;
  std::unique_ptr<OutputProcessor> output_processor_;
  std::unique_ptr<StructuredOutputCompiler> structured_output_compiler_;
  std::vector<std::string> pooling_tasks_;
  std::string model_name_;  // args.model, as vLLM names the model in pooling errors
  // Unfinished pooling requests' prompt token ids, by request id.
  std::map<std::string, std::vector<int32_t>> pooling_prompts_;
};

}  // namespace vllm
