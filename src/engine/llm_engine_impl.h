// LLMEngine's state, for its own sources (llm_engine.cc, llm_engine_pooling.cc) only: it names
// the rooms below the engine, which llm_engine.h keeps from the engine's users.
#pragma once

#include <map>
#include <memory>
#include <random>
#include <string>
#include <vector>

#include "common/thread_pool.h"
#include "dist/communicator.h"
#include "engine/engine_core.h"
#include "engine/llm_engine.h"
#include "engine/lora_adapters.h"
#include "engine/output_processor.h"
#include "model/model_loader.h"
#include "structured_output/structured_output_compiler.h"
#include "tokenizer/tokenizer.h"

namespace vllm {

// Members are destroyed in reverse order: the core and the compiler before the tokenizer and the
// model they read, the thread pool last.
struct LLMEngine::Impl {
  const ModelConfig& model_config() const { return model.model->config(); }
  // This model's vocabulary as the grammar matcher reads it.
  std::shared_ptr<const IndexedVocabulary> IndexStructuredOutputVocabulary() const;

  std::unique_ptr<ThreadPool> pool;
  // The groups the model's ranks talk in (EngineModel::parallel_groups), kept beyond it.
  std::vector<std::unique_ptr<dist::Communicator>> parallel_groups;
  LoadedModel model;
  std::string chat_template;
  SamplingParams default_sampling_params;
  // generation_config.json's eos_token_id(s): requests also stop on them (unless ignore_eos).
  std::vector<int32_t> generation_eos_ids;
  std::unique_ptr<Tokenizer> tokenizer;
  std::unique_ptr<EngineCore> core;
  std::unique_ptr<OutputProcessor> output_processor;
  std::unique_ptr<StructuredOutputCompiler> structured_output_compiler;
  std::vector<std::string> pooling_tasks;
  std::string model_name;  // args.model, as vLLM names the model in pooling errors
  // Unfinished pooling requests' prompt token ids, by request id.
  std::map<std::string, std::vector<int32_t>> pooling_prompts;
  // EngineArgs::seed's generator of seeds for requests that have none.
  std::optional<std::mt19937_64> request_seeds;
  bool enable_prompt_embeds = false;            // EngineArgs::enable_prompt_embeds
  std::unique_ptr<LoraAdapters> lora_adapters;  // with --enable-lora; else null
};

}  // namespace vllm
