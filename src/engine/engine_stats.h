// The engine core's counters (EngineCore::stats, LLMEngine::stats): apart from engine_core.h so
// the rooms above the engine can read them without seeing the core's scheduler and runner.
#pragma once

#include <cstdint>
#include <vector>

#include "vllm/iteration_tokens_stats.h"
#include "vllm/spec_decoding_stats.h"

namespace vllm {

struct EngineStats {
  int num_running = 0;
  int num_waiting = 0;
  double kv_cache_usage = 0.0;
  int64_t num_free_blocks = 0;
  int64_t num_preemptions = 0;
  int64_t prefix_cache_queries = 0;
  int64_t prefix_cache_hits = 0;
  int64_t num_scheduled_tokens = 0;  // in the last step
  SpecDecodingStats spec_decoding;
  // The most KV blocks requests held at once since the engine started (counted after each step's
  // scheduling), and the bytes of KV one block stands for (over the layers its group spans): the
  // KV memory the load needed is their product.
  int64_t peak_kv_blocks_in_use = 0;
  int64_t kv_bytes_per_block = 0;
  IterationTokensStats iteration_tokens;  // the steps that scheduled tokens
  // The LoRA adapters (lora_int_id) of the running and of the waiting requests, each once.
  std::vector<int64_t> running_lora_ids;
  std::vector<int64_t> waiting_lora_ids;
};

}  // namespace vllm
