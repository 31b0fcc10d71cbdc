#include "engine/llm_engine.h"

#include <algorithm>
#include <filesystem>

#include "common/available_memory.h"
#include "dist/mpi_communicator.h"
#include "engine/attention_dtype_override.h"
#include "engine/engine_args_check.h"
#include "engine/engine_model.h"
#include "engine/generation_config.h"
#include "engine/kv_cache_memory.h"
#include "engine/llm_engine_impl.h"
#include "engine/model_paths.h"
#include "engine/pooling_tasks.h"
#include "engine/prompt_embeds_request.h"
#include "engine/skip_tokenizer_init.h"
#include "engine/tensor_parallel_model.h"
#include "engine/tensor_parallel_step.h"
#include "model/hf_overrides.h"
#include "model/kv_cache_dtype.h"
#include "model/model_loader.h"
#include "model/pooler_config_flag.h"
#include "tokenizer/hf/hf_tokenizer.h"
#include "tokenizer/tekken_tokenizer.h"
#include "tokenizer/token_bytes.h"
#include "tokenizer/tokenizer_mode.h"

namespace vllm {

Status LLMEngine::LoadTokenizer(const std::string& model_path, const std::string& tokenizer_path,
                                const std::string& tokenizer_mode) {
  auto mode = ParseTokenizerMode(tokenizer_mode);
  if (!mode) return Error{mode.error()};
  std::error_code error;
  if (std::filesystem::is_directory(tokenizer_path, error)) {
    auto loaded = LoadTokenizerFromDirectory(tokenizer_path, *mode);
    if (!loaded) return Error{loaded.error()};
    impl_->tokenizer = std::move(loaded->tokenizer);
    auto chat_template = ReadHfChatTemplate(tokenizer_path);
    if (!chat_template) return Error{tokenizer_path + ": " + chat_template.error()};
    impl_->chat_template = std::move(*chat_template);
    if (impl_->chat_template.empty() && loaded->is_tekken) {
      impl_->chat_template = MistralInstructChatTemplate();
    }
    return Status::Ok();
  }
  if (tokenizer_path.ends_with(".json")) {  // --tokenizer .../tekken.json
    auto tokenizer = LoadTekkenTokenizer(tokenizer_path);
    if (!tokenizer) return Error{"--tokenizer " + tokenizer.error()};
    impl_->tokenizer = std::move(*tokenizer);
    impl_->chat_template = MistralInstructChatTemplate();
    return Status::Ok();
  }
  if (*mode == TokenizerMode::kMistral) {
    return Error{
        "--tokenizer-mode mistral needs a tekken.json, beside the model or named by "
        "--tokenizer; " +
        tokenizer_path + " is a GGUF file"};
  }
  // The model's own GGUF file, or another whose vocabulary --tokenizer names (read, then closed:
  // the tokenizer copies what it needs).
  std::unique_ptr<GgufFile> opened;
  if (tokenizer_path != model_path || impl_->model.is_directory()) {
    auto file = GgufFile::Open(tokenizer_path);
    if (!file) return Error{"--tokenizer " + tokenizer_path + ": " + file.error()};
    opened = std::move(*file);
  }
  const GgufFile& file = opened ? *opened : *impl_->model.gguf;
  auto tokenizer = LoadTokenizerFromGguf(file);
  if (!tokenizer) return Error{tokenizer_path + ": " + tokenizer.error()};
  impl_->tokenizer = std::move(*tokenizer);
  auto chat_template = file.GetString("tokenizer.chat_template");
  if (chat_template.ok() && chat_template->has_value()) impl_->chat_template = **chat_template;
  return Status::Ok();
}

Expected<std::unique_ptr<LLMEngine>> LLMEngine::Create(const EngineArgs& args) {
  VLLM_RETURN_IF_ERROR(CheckEngineArgs(args));
  VLLM_RETURN_IF_ERROR(CheckGenerationConfigArgs(args));
  VLLM_RETURN_IF_ERROR(CheckLoraArgs(args));
  if (args.structured_outputs_compile_threads < 1 || args.structured_outputs_compile_threads > 64) {
    return Error{"--structured-outputs-compile-threads must be between 1 and 64, not " +
                 std::to_string(args.structured_outputs_compile_threads)};
  }
  if (!(args.structured_outputs_compile_timeout >= 0)) {
    return Error{"--structured-outputs-compile-timeout must be 0 (no limit) or more seconds"};
  }
  if (args.structured_outputs_max_bytes < 1) {
    return Error{"--structured-outputs-max-bytes must be at least 1"};
  }
  std::string kv_cache_dtype_name = args.kv_cache_dtype;
  VLLM_RETURN_IF_ERROR(
      ApplyOverrideAttentionDtype(args.override_attention_dtype, &kv_cache_dtype_name));
  // The memory is measured before the model loads: its weights are then subtracted as stored.
  auto kv_cache_memory = KvCacheMemory::Plan(args, AvailableMemoryBytes());
  if (!kv_cache_memory) return Error{kv_cache_memory.error()};
  std::unique_ptr<LLMEngine> engine(new LLMEngine());
  Impl& impl = *engine->impl_;
  impl.pool = std::make_unique<ThreadPool>(ThreadPool::Options{.num_threads = args.num_threads});
  // Tensor or pipeline parallel: this process is rank 0 of the job (the others run
  // RunTensorParallelWorker).
  dist::Communicator* model_ranks = nullptr;
  if (NumModelRanks(args) > 1) {
    auto ranks = JoinModelRanks(args);
    if (!ranks) return Error{ranks.error()};
    if ((*ranks)->rank() != 0) {
      return Error{ParallelismName(args) + ": the engine runs on rank 0; rank " +
                   std::to_string((*ranks)->rank()) + " runs RunTensorParallelWorker"};
    }
    if (args.enable_lora) {
      return Error{"--enable-lora: LoRA adapters are not supported with " + ParallelismName(args) +
                   " yet"};
    }
    model_ranks = *ranks;
  }
  auto engine_model = LoadEngineModel(args, impl.pool.get(), model_ranks);
  if (!engine_model) return Error{engine_model.error()};
  const ModelPaths& paths = engine_model->paths;
  const std::optional<GgmlType>& linear_type = engine_model->linear_type;
  impl.parallel_groups = std::move(engine_model->parallel_groups);
  impl.model = std::move(engine_model->loaded);
  TensorParallelModel* tensor_parallel_model = nullptr;
  if (model_ranks != nullptr) {
    auto step_timeout = ExecuteModelTimeout();
    if (!step_timeout) return Error{step_timeout.error()};
    auto wrapped = std::make_unique<TensorParallelModel>(
        std::move(impl.model.model),
        TensorParallelModel::Options{.ranks = model_ranks,
                                     .on_workers_stopped =
                                         [] {
                                           if (auto world = dist::MpiCommunicator::World()) {
                                             (*world)->FinalizeAtExit();
                                           }
                                         },
                                     .step_timeout = *step_timeout,
                                     .on_hang =
                                         [] {
                                           if (auto world = dist::MpiCommunicator::World()) {
                                             (*world)->Abort(1);
                                           }
                                         }});
    tensor_parallel_model = wrapped.get();
    impl.model.model = std::move(wrapped);
    // Every rank's shard loaded before this one says it is ready (RunTensorParallelWorker).
    VLLM_RETURN_IF_ERROR(model_ranks->Barrier());
  }
  if (args.enable_prompt_embeds && !impl.model.model->accepts_input_embeds()) {
    return Error{"--enable-prompt-embeds: the " + impl.model_config().architecture +
                 " model does not take prompt embeddings here"};
  }
  impl.enable_prompt_embeds = args.enable_prompt_embeds;
  if (args.enable_lora) {
    auto lora_adapters = LoraAdapters::Create(args, impl.model);
    if (!lora_adapters) return Error{lora_adapters.error()};
    impl.lora_adapters = std::move(*lora_adapters);
  }
  if (args.skip_tokenizer_init) {
    // An unknown mode is refused even so, as vLLM's argument choices refuse it.
    if (auto mode = ParseTokenizerMode(args.tokenizer_mode); !mode) return Error{mode.error()};
  } else {
    VLLM_RETURN_IF_ERROR(engine->LoadTokenizer(paths.model, paths.tokenizer, args.tokenizer_mode));
  }
  auto generation_config =
      LoadGenerationConfig(args, impl.model.is_directory() ? paths.model : std::string());
  if (!generation_config) return Error{generation_config.error()};
  impl.default_sampling_params = std::move(generation_config->default_sampling_params);
  impl.generation_eos_ids = std::move(generation_config->eos_token_ids);
  // --kv-cache-dtype auto becomes the model's activation dtype, which the core cannot see.
  auto kv_cache_dtype =
      ParseKvCacheDtype(kv_cache_dtype_name, AutoKvCacheDtype(impl.model, linear_type));
  if (!kv_cache_dtype) return Error{kv_cache_dtype.error()};
  EngineArgs core_args = args;
  core_args.kv_cache_dtype = kernels::KvCacheDtypeName(*kv_cache_dtype);
  auto kv_cache_memory_bytes = kv_cache_memory->BytesBeside(StoredWeightBytes(impl.model));
  if (!kv_cache_memory_bytes) return Error{kv_cache_memory_bytes.error()};
  core_args.kv_cache_memory_bytes = *kv_cache_memory_bytes;
  if (!paths.draft_model.empty()) core_args.speculative_config->model = paths.draft_model;
  auto core = EngineCore::Create(*impl.model.model, core_args, impl.pool.get());
  if (!core) return Error{core.error()};
  impl.core = std::move(*core);
  if (tensor_parallel_model != nullptr) {
    if (impl.core->is_pooling()) {
      return Error{"pooling models are not supported with " + ParallelismName(args) + " yet"};
    }
    VLLM_RETURN_IF_ERROR(tensor_parallel_model->AnnounceKvStorage(*impl.core->kv_storage()));
  }
  if (impl.core->is_pooling()) {
    auto tasks = SupportedPoolingTasks(args, impl.model_config());
    if (!tasks) return Error{tasks.error()};
    impl.pooling_tasks = std::move(*tasks);
    impl.model_name = args.model;
  }
  impl.output_processor = std::make_unique<OutputProcessor>(impl.tokenizer.get());
  if (args.seed) impl.request_seeds.emplace(static_cast<uint64_t>(*args.seed));
  Impl* built = &impl;
  impl.structured_output_compiler = std::make_unique<StructuredOutputCompiler>(
      [built] { return built->IndexStructuredOutputVocabulary(); },
      StructuredOutputLimits{
          .max_constraint_bytes = static_cast<size_t>(args.structured_outputs_max_bytes),
          .compile_timeout_seconds = args.structured_outputs_compile_timeout});
  return engine;
}

LLMEngine::LLMEngine() : impl_(std::make_unique<Impl>()) {}
LLMEngine::~LLMEngine() = default;

std::shared_ptr<const IndexedVocabulary> LLMEngine::Impl::IndexStructuredOutputVocabulary() const {
  // The model's logits may have more rows than the tokenizer has tokens: those never come.
  TokenVocabulary vocabulary{.token_bytes = TokenByteStrings(*tokenizer)};
  vocabulary.token_bytes.resize(model_config().vocab_size);
  if (tokenizer->eos_id() >= 0) vocabulary.stop_token_ids.push_back(tokenizer->eos_id());
  for (int32_t id : generation_eos_ids) {
    if (id >= 0 && id < model_config().vocab_size) vocabulary.stop_token_ids.push_back(id);
  }
  return IndexVocabulary(std::move(vocabulary));
}

StructuredOutputCompiler& LLMEngine::structured_output_compiler() {
  return *impl_->structured_output_compiler;
}
const std::vector<std::string>& LLMEngine::pooling_tasks() const { return impl_->pooling_tasks; }
bool LLMEngine::HasUnfinishedRequests() const { return impl_->core->HasUnfinishedRequests(); }
bool LLMEngine::has_tokenizer() const { return impl_->tokenizer != nullptr; }
const Tokenizer& LLMEngine::tokenizer() const { return *impl_->tokenizer; }
int64_t LLMEngine::max_model_len() const { return impl_->core->max_model_len(); }
bool LLMEngine::enable_prompt_embeds() const { return impl_->enable_prompt_embeds; }
const std::string& LLMEngine::chat_template() const { return impl_->chat_template; }
const SamplingParams& LLMEngine::default_sampling_params() const {
  return impl_->default_sampling_params;
}
const ModelConfig& LLMEngine::model_config() const { return impl_->model_config(); }
EngineStats LLMEngine::stats() const { return impl_->core->stats(); }
std::optional<std::string> LLMEngine::failure() const { return impl_->model.model->failure(); }

Status LLMEngine::AddRequest(const std::string& request_id, const PromptInput& prompt,
                             const ValidatedSamplingParams& params, const RequestOptions& options) {
  if (impl_->output_processor->Has(request_id)) {
    return Error{"request id '" + request_id + "' is already in use"};
  }
  if (!impl_->tokenizer) VLLM_RETURN_IF_ERROR(CheckRequestWithoutTokenizer(prompt, *params));
  std::shared_ptr<const CompiledGrammar> grammar;
  if (params->structured_outputs) {
    auto compiled = impl_->structured_output_compiler->Compile(*params->structured_outputs);
    if (!compiled) return Error{compiled.error()};
    grammar = std::move(*compiled);
  }
  return AddRequest(request_id, prompt, params, options, std::move(grammar));
}

Status LLMEngine::AddRequest(const std::string& request_id, const PromptInput& prompt,
                             const ValidatedSamplingParams& validated,
                             const RequestOptions& options,
                             std::shared_ptr<const CompiledGrammar> grammar) {
  const SamplingParams& params = *validated;
  if (impl_->output_processor->Has(request_id)) {
    return Error{"request id '" + request_id + "' is already in use"};
  }
  if (!impl_->tokenizer) VLLM_RETURN_IF_ERROR(CheckRequestWithoutTokenizer(prompt, params));
  if (params.structured_outputs.has_value() != (grammar != nullptr)) {
    return Error{grammar ? "a grammar was given for a request without structured outputs"
                         : "the request's structured outputs constraint was not compiled"};
  }
  std::vector<int32_t> grammar_after_token_ids;
  if (grammar && !options.structured_output_after.empty()) {
    grammar_after_token_ids = impl_->tokenizer->Encode(options.structured_output_after, false);
  }
  auto lora = ResolveLoraRequest(impl_->lora_adapters.get(), options.lora_request);
  if (!lora) return Error{lora.error()};
  std::vector<int32_t> token_ids;
  std::string text;
  std::shared_ptr<const PromptEmbeds> prompt_embeds;
  std::string cache_salt = options.cache_salt;
  if (options.prompt_embeds) {
    const auto* ids = std::get_if<std::vector<int32_t>>(&prompt);
    if (!(ids ? ids->empty() : std::get<std::string>(prompt).empty())) {
      return Error{"a prompt given as embeddings comes without text or token ids"};
    }
    auto prepared = PreparePromptEmbeds(options.prompt_embeds, params, impl_->enable_prompt_embeds,
                                        model_config().hidden_size);
    if (!prepared) return Error{prepared.error()};
    prompt_embeds = std::move(*prepared);
    token_ids.assign(prompt_embeds->num_tokens, 0);
    cache_salt = PromptEmbedsCacheSalt(options.cache_salt, *prompt_embeds);
  } else if (const auto* prompt_text = std::get_if<std::string>(&prompt)) {
    text = *prompt_text;
    token_ids = impl_->tokenizer->Encode(text, /*add_special_tokens=*/true);
  } else {
    token_ids = std::get<std::vector<int32_t>>(prompt);
  }
  if (params.truncate_prompt_tokens &&
      static_cast<int64_t>(token_ids.size()) > *params.truncate_prompt_tokens) {
    token_ids.erase(token_ids.begin(), token_ids.end() - *params.truncate_prompt_tokens);
  }
  // Bad words as token id sequences, written with and without a leading space (as vLLM does).
  std::vector<std::vector<int32_t>> bad_words_token_ids;
  for (const std::string& word : params.bad_words) {
    for (const std::string& variant : {word, " " + word}) {
      auto ids = impl_->tokenizer->Encode(variant, /*add_special_tokens=*/false);
      if (!ids.empty() && std::find(bad_words_token_ids.begin(), bad_words_token_ids.end(), ids) ==
                              bad_words_token_ids.end()) {
        bad_words_token_ids.push_back(std::move(ids));
      }
    }
  }
  // n > 1: n sequences with ids "i_<id>"; a seeded request gives sequence i the seed seed + i.
  std::vector<std::string> child_ids;
  for (int i = 0; i < params.n; ++i) {
    child_ids.push_back(params.n == 1 ? request_id : std::to_string(i) + "_" + request_id);
  }
  std::optional<int64_t> seed = params.seed;
  if (!seed && impl_->request_seeds) seed = static_cast<int64_t>((*impl_->request_seeds)() >> 2);
  std::vector<std::string> added;
  for (int i = 0; i < params.n; ++i) {
    SamplingParams child_params = params;
    child_params.n = 1;
    if (seed) child_params.seed = *seed + i;
    std::optional<int32_t> eos_id;
    // Without a tokenizer only generation_config.json's EOS ids stop a sequence, as in vLLM.
    const int32_t tokenizer_eos_id = impl_->tokenizer ? impl_->tokenizer->eos_id() : -1;
    if (tokenizer_eos_id >= 0) eos_id = tokenizer_eos_id;
    if (!params.ignore_eos) {  // the generation config's other EOS ids stop it too
      for (int32_t id : impl_->generation_eos_ids) {
        if (id != tokenizer_eos_id) child_params.stop_token_ids.push_back(id);
      }
    }
    Status status = impl_->core->AddRequest({.request_id = child_ids[i],
                                             .prompt_token_ids = token_ids,
                                             .params = child_params,
                                             .eos_token_id = eos_id,
                                             .priority = options.priority,
                                             .cache_salt = cache_salt,
                                             .bad_words_token_ids = bad_words_token_ids,
                                             .grammar = grammar,
                                             .grammar_after_token_ids = grammar_after_token_ids,
                                             .prompt_embeds = prompt_embeds,
                                             .lora = *lora});
    if (!status.ok()) {
      impl_->core->FinishRequests(added, RequestStatus::kFinishedAborted);
      return status;
    }
    added.push_back(child_ids[i]);
  }
  impl_->output_processor->AddRequest(request_id, text, token_ids, params, child_ids);
  return Status::Ok();
}

Expected<std::vector<RequestOutput>> LLMEngine::Step() {
  auto core_outputs = impl_->core->Step();
  if (!core_outputs) return Error{core_outputs.error()};
  std::vector<std::string> stopped;
  std::vector<RequestOutput> outputs = impl_->output_processor->Process(*core_outputs, &stopped);
  if (!stopped.empty()) {
    // Stop strings end sequences the core still runs: free their blocks now.
    auto finished = impl_->core->FinishRequests(stopped, RequestStatus::kFinishedStopped);
    auto more = impl_->output_processor->Process(finished, &stopped);
    outputs.insert(outputs.end(), more.begin(), more.end());
  }
  return outputs;
}

std::vector<RequestOutput> LLMEngine::AbortRequests(const std::vector<std::string>& request_ids) {
  std::vector<std::string> child_ids;
  for (const auto& id : request_ids) {
    for (const auto& child : impl_->output_processor->ChildIds(id)) child_ids.push_back(child);
  }
  std::vector<std::string> stopped;
  return impl_->output_processor->Process(
      impl_->core->FinishRequests(child_ids, RequestStatus::kFinishedAborted), &stopped);
}

}  // namespace vllm
