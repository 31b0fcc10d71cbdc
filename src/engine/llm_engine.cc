#include "engine/llm_engine.h"

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <sstream>
#include <type_traits>

#include "engine/engine_args_check.h"
#include "engine/llm_engine_impl.h"
#include "engine/model_paths.h"
#include "engine/pooling_tasks.h"
#include "model/hf_overrides.h"
#include "model/kv_cache_dtype.h"
#include "model/model_loader.h"
#include "tokenizer/hf/hf_tokenizer.h"
#include "tokenizer/token_bytes.h"

namespace vllm {

// generation_config.json → sampling defaults and extra EOS ids (absent file: none).
Status ReadGenerationConfig(const std::string& dir, SamplingParams* defaults,
                            std::vector<int32_t>* eos_ids) {
  const std::filesystem::path path = std::filesystem::path(dir) / "generation_config.json";
  std::error_code error;
  if (!std::filesystem::is_regular_file(path, error)) return Status::Ok();
  std::ifstream file(path, std::ios::binary);
  std::stringstream text;
  text << file.rdbuf();
  const nlohmann::json config = nlohmann::json::parse(text.str(), nullptr, false);
  if (!config.is_object()) return Error{path.string() + " is not a JSON object"};
  ForEachSamplingField([&](const auto& field) {
    using Number = typename std::decay_t<decltype(field)>::Type;
    if constexpr (std::is_arithmetic_v<Number>) {
      auto it = config.find(field.name);
      if (field.sources.generation_config && it != config.end() && it->is_number()) {
        defaults->*field.member = it->template get<Number>();
      }
    }
  });
  if (auto it = config.find("eos_token_id"); it != config.end()) {
    if (it->is_number_integer()) eos_ids->push_back(it->get<int32_t>());
    if (it->is_array()) {
      for (const auto& id : *it) {
        if (id.is_number_integer()) eos_ids->push_back(id.get<int32_t>());
      }
    }
  }
  if (std::string invalid = defaults->Validate(); !invalid.empty()) {
    return Error{path.string() + ": " + invalid};
  }
  return Status::Ok();
}

Status LLMEngine::LoadTokenizer(const std::string& model_path, const std::string& tokenizer_path) {
  std::error_code error;
  if (!std::filesystem::is_directory(tokenizer_path, error)) {
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
  } else {
    auto tokenizer = LoadTokenizerFromHfDir(tokenizer_path);
    if (!tokenizer) return Error{tokenizer.error()};
    impl_->tokenizer = std::move(*tokenizer);
    auto chat_template = ReadHfChatTemplate(tokenizer_path);
    if (!chat_template) return Error{tokenizer_path + ": " + chat_template.error()};
    impl_->chat_template = std::move(*chat_template);
  }
  if (!impl_->model.is_directory()) return Status::Ok();
  return ReadGenerationConfig(model_path, &impl_->default_sampling_params,
                              &impl_->generation_eos_ids);
}

Expected<std::unique_ptr<LLMEngine>> LLMEngine::Create(const EngineArgs& args) {
  VLLM_RETURN_IF_ERROR(CheckEngineArgs(args));
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
  std::unique_ptr<LLMEngine> engine(new LLMEngine());
  Impl& impl = *engine->impl_;
  impl.pool = std::make_unique<ThreadPool>(ThreadPool::Options{.num_threads = args.num_threads});
  auto linear_type = LinearTypeFor(args.dtype, args.quantization);
  if (!linear_type) return Error{linear_type.error()};
  auto hf_overrides = ParseHfOverrides(args.hf_overrides);
  if (!hf_overrides) return Error{hf_overrides.error()};
  auto paths = ResolveModelPaths(args);
  if (!paths) return Error{paths.error()};
  auto model = LoadModelFromPath(
      paths->model,
      {.pool = impl.pool.get(), .linear_type = *linear_type, .max_model_len = args.max_model_len},
      *hf_overrides, args.quantization);
  if (!model) return Error{model.error()};
  impl.model = std::move(*model);
  VLLM_RETURN_IF_ERROR(engine->LoadTokenizer(paths->model, paths->tokenizer));
  // --kv-cache-dtype auto becomes the model's activation dtype, which the core cannot see.
  auto kv_cache_dtype =
      ParseKvCacheDtype(args.kv_cache_dtype, AutoKvCacheDtype(impl.model, *linear_type));
  if (!kv_cache_dtype) return Error{kv_cache_dtype.error()};
  EngineArgs core_args = args;
  core_args.kv_cache_dtype = kernels::KvCacheDtypeName(*kv_cache_dtype);
  if (!paths->draft_model.empty()) core_args.speculative_config->model = paths->draft_model;
  auto core = EngineCore::Create(*impl.model.model, core_args, impl.pool.get());
  if (!core) return Error{core.error()};
  impl.core = std::move(*core);
  if (impl.core->is_pooling()) {
    auto tasks = SupportedPoolingTasks(args, impl.model_config());
    if (!tasks) return Error{tasks.error()};
    impl.pooling_tasks = std::move(*tasks);
    impl.model_name = args.model;
  }
  impl.output_processor = std::make_unique<OutputProcessor>(*impl.tokenizer);
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
const Tokenizer& LLMEngine::tokenizer() const { return *impl_->tokenizer; }
int64_t LLMEngine::max_model_len() const { return impl_->core->max_model_len(); }
const std::string& LLMEngine::chat_template() const { return impl_->chat_template; }
const SamplingParams& LLMEngine::default_sampling_params() const {
  return impl_->default_sampling_params;
}
const ModelConfig& LLMEngine::model_config() const { return impl_->model_config(); }
EngineStats LLMEngine::stats() const { return impl_->core->stats(); }

Status LLMEngine::AddRequest(const std::string& request_id, const PromptInput& prompt,
                             const SamplingParams& params, const RequestOptions& options) {
  if (std::string error = params.Validate(); !error.empty()) return Error{error};
  if (impl_->output_processor->Has(request_id)) {
    return Error{"request id '" + request_id + "' is already in use"};
  }
  std::shared_ptr<const CompiledGrammar> grammar;
  if (params.structured_outputs) {
    auto compiled = impl_->structured_output_compiler->Compile(*params.structured_outputs);
    if (!compiled) return Error{compiled.error()};
    grammar = std::move(*compiled);
  }
  return AddValidatedRequest(request_id, prompt, params, options, std::move(grammar));
}

Status LLMEngine::AddRequest(const std::string& request_id, const PromptInput& prompt,
                             const SamplingParams& params, const RequestOptions& options,
                             std::shared_ptr<const CompiledGrammar> grammar) {
  if (std::string error = params.Validate(); !error.empty()) return Error{error};
  return AddValidatedRequest(request_id, prompt, params, options, std::move(grammar));
}

Status LLMEngine::AddValidatedRequest(const std::string& request_id, const PromptInput& prompt,
                                      const SamplingParams& params, const RequestOptions& options,
                                      std::shared_ptr<const CompiledGrammar> grammar) {
  if (impl_->output_processor->Has(request_id)) {
    return Error{"request id '" + request_id + "' is already in use"};
  }
  if (params.structured_outputs.has_value() != (grammar != nullptr)) {
    return Error{grammar ? "a grammar was given for a request without structured outputs"
                         : "the request's structured outputs constraint was not compiled"};
  }
  std::vector<int32_t> grammar_after_token_ids;
  if (grammar && !options.structured_output_after.empty()) {
    grammar_after_token_ids = impl_->tokenizer->Encode(options.structured_output_after, false);
  }
  std::vector<int32_t> token_ids;
  std::string text;
  if (const auto* prompt_text = std::get_if<std::string>(&prompt)) {
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
    if (impl_->tokenizer->eos_id() >= 0) eos_id = impl_->tokenizer->eos_id();
    if (!params.ignore_eos) {  // the generation config's other EOS ids stop it too
      for (int32_t id : impl_->generation_eos_ids) {
        if (id != impl_->tokenizer->eos_id()) child_params.stop_token_ids.push_back(id);
      }
    }
    Status status = impl_->core->AddRequest({.request_id = child_ids[i],
                                             .prompt_token_ids = token_ids,
                                             .params = child_params,
                                             .eos_token_id = eos_id,
                                             .priority = options.priority,
                                             .cache_salt = options.cache_salt,
                                             .bad_words_token_ids = bad_words_token_ids,
                                             .grammar = grammar,
                                             .grammar_after_token_ids = grammar_after_token_ids});
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
