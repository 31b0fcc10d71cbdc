// vLLM's LLMEngine: text in, RequestOutputs out. Loads the model and tokenizer, tokenizes
// prompts, fans n > 1 out into n sequences (which share the prompt's KV blocks through the
// prefix cache), runs the engine core one step at a time and detokenizes its outputs.
#pragma once

#include <memory>
#include <optional>
#include <string>
#include <variant>
#include <vector>

#include "common/expected.h"
#include "engine/engine_stats.h"
#include "vllm/engine_args.h"
#include "vllm/lora_request.h"
#include "vllm/outputs.h"
#include "vllm/pooling_params.h"
#include "vllm/request_options.h"
#include "vllm/sampling_params.h"
#include "vllm/validated_sampling_params.h"

namespace vllm {

// Only declared: the rooms that include this header (cli, python) see none below the engine.
class CompiledGrammar;
struct ModelConfig;
class StructuredOutputCompiler;
class Tokenizer;

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
  ~LLMEngine();

  // `params` were checked where the request came in (ValidatedSamplingParams), so they are not
  // checked again here. A structured output constraint in them is compiled here, on the calling
  // thread, within the compiler's limits (one over a limit, or one that cannot compile, is
  // refused).
  Status AddRequest(const std::string& request_id, const PromptInput& prompt,
                    const ValidatedSamplingParams& params, const RequestOptions& options = {});
  // The same with the constraint already compiled (AsyncLLM compiles off the engine thread):
  // `grammar` is structured_output_compiler()'s grammar of params->structured_outputs, null
  // when it has none. Compiles nothing.
  Status AddRequest(const std::string& request_id, const PromptInput& prompt,
                    const ValidatedSamplingParams& params, const RequestOptions& options,
                    std::shared_ptr<const CompiledGrammar> grammar);
  // Compiles structured-output constraints over this model's vocabulary (indexed on the first
  // compile), within the --structured-outputs-* limits. Thread-safe: use it from any thread.
  StructuredOutputCompiler& structured_output_compiler();
  Expected<std::vector<RequestOutput>> Step();
  // Finishes the requests with finish_reason "abort"; returns their final outputs.
  std::vector<RequestOutput> AbortRequests(const std::vector<std::string>& request_ids);
  // Pooling runners (llm_engine_pooling.cc): `task` is "embed", "classify", "score" or
  // "encode"; errors carry vLLM's messages when the model does not serve it. `lora_request`: the
  // adapter the prompt's forward pass runs (--enable-lora; decoder models), none: the base model.
  Status AddPoolingRequest(const std::string& request_id, const PoolingInput& prompt,
                           const std::string& task, const PoolingParams& params,
                           const std::optional<LoraRequest>& lora_request = std::nullopt);
  // One engine step of a pooling runner: the requests it finished, with their pooled outputs.
  Expected<std::vector<PoolingRequestOutput>> StepPooling();
  // Finishes unfinished pooling requests without outputs.
  void AbortPoolingRequests(const std::vector<std::string>& request_ids);
  // The pooling tasks this engine serves (empty for a generate runner).
  const std::vector<std::string>& pooling_tasks() const;
  bool HasUnfinishedRequests() const;

  // false under --skip-tokenizer-init: then tokenizer() must not be called, prompts are token
  // ids and outputs have empty text.
  bool has_tokenizer() const;
  const Tokenizer& tokenizer() const;
  int64_t max_model_len() const;
  bool enable_prompt_embeds() const;  // EngineArgs::enable_prompt_embeds
  // The model's chat template (GGUF tokenizer.chat_template or the directory's); may be empty.
  const std::string& chat_template() const;
  // Sampling defaults from the directory's generation_config.json (vLLM's --generation-config
  // auto): SamplingParams' own defaults where it says nothing.
  const SamplingParams& default_sampling_params() const;
  const ModelConfig& model_config() const;
  // Why the engine can run no more steps (a rank of its parallel job stopped answering), once it
  // is so (Model::failure); safe to call from any thread.
  std::optional<std::string> failure() const;
  EngineStats stats() const;
  // vLLM's sleep mode (sleep_mode.cc), with no request unfinished: level 1 frees the KV cache
  // (and forgets the prefix cache), level 2 also the weights' memory (a GGUF file's pages, read
  // back from the file when used again). WakeUp restores what `tags` name ("weights",
  // "kv_cache"; empty: both). Requests are refused while the KV cache is freed.
  Status Sleep(int level);
  Status WakeUp(const std::vector<std::string>& tags = {});
  bool is_sleeping() const;
  // vLLM's reset_prefix_cache: false (nothing done) while a request holds KV blocks.
  bool ResetPrefixCache();
  // vLLM's add_lora / remove_lora / list_loras (--enable-lora; without it AddLora is refused,
  // RemoveLora is false and ListLoras empty). AddLora loads the adapter into the CPU cache
  // (--max-cpu-loras, least recently used evicted); a request's options.lora_request loads it on
  // first use as well. ListLoras: the ids held, most recently used first.
  Status AddLora(const LoraRequest& lora_request);
  bool RemoveLora(int64_t lora_int_id);
  std::vector<int64_t> ListLoras() const;

 private:
  // What the engine holds (llm_engine_impl.h): the model, tokenizer, core and output processor,
  // behind one pointer so this header names no room below the engine.
  struct Impl;

  LLMEngine();

  // Loads the tokenizer and chat template from `tokenizer_path` (the loaded model's GGUF file
  // when it is `model_path`, else a tokenizer directory, a GGUF file or a tekken.json file) as
  // --tokenizer-mode chooses.
  Status LoadTokenizer(const std::string& model_path, const std::string& tokenizer_path,
                       const std::string& tokenizer_mode);

  std::unique_ptr<Impl> impl_;
};

}  // namespace vllm
