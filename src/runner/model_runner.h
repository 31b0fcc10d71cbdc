// Turns per-sequence work (new tokens over a block table per KV cache group) into one flat
// ForwardBatch, runs the model on it and hands back logits. Owns the physical KV storage.
#pragma once

#include <cstdint>
#include <memory>
#include <span>
#include <vector>

#include "common/expected.h"
#include "model/kv_cache_layout.h"
#include "model/model.h"

namespace vllm {

// One sequence's share of a step: `new_token_ids` sit at positions
// [num_computed_tokens, num_computed_tokens + new_token_ids.size()).
struct SequenceChunk {
  std::span<const int32_t> new_token_ids;
  int32_t num_computed_tokens = 0;
  // One block table per KV cache group, [num_groups][>= ceil(seq_len / block_size)], each
  // covering every position up to the chunk's end that the chunk's tokens see.
  std::span<const std::vector<int32_t>> block_tables;
  bool wants_logits = true;       // logits of the chunk's last token
  bool wants_all_logits = false;  // logits of every token of the chunk (prompt logprobs)
};

class ModelRunner {
 public:
  struct Options {
    int64_t num_kv_blocks = 0;
    int64_t block_size = 16;
    KvCacheLayout kv_cache_layout;  // how layers share blocks; empty: one group of all layers
  };
  static Expected<std::unique_ptr<ModelRunner>> Create(Model& model, const Options& options);

  // logits: one row per requested token, in chunk order: every token of a chunk with
  // wants_all_logits, else its last token when wants_logits. [num_rows, vocab_size]
  Expected<std::vector<float>> Execute(std::span<const SequenceChunk> chunks);

 private:
  ModelRunner(Model& model, std::unique_ptr<KvStorage> kv) : model_(model), kv_(std::move(kv)) {}
  Model& model_;
  std::unique_ptr<KvStorage> kv_;
  ForwardBatch batch_;
};

}  // namespace vllm
