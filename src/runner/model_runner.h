// Runs one step of the engine on the model: turns the scheduled requests' new tokens (over one
// block table per KV cache group) into one flat ForwardBatch, runs the model, and samples the
// next token of every request whose chunk reached its end. Owns the physical KV storage and each
// running request's sampling state (vLLM's GPUModelRunner with its InputBatch).
#pragma once

#include <cstdint>
#include <map>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "common/expected.h"
#include "kernels/kv_cache_dtype.h"
#include "lora/lora_weights.h"
#include "model/kv_cache_layout.h"
#include "model/model.h"
#include "runner/draft_model_proposer.h"
#include "runner/ngram_proposer.h"
#include "runner/pooling.h"
#include "runner/request_sampler.h"
#include "vllm/prompt_embeds.h"

namespace vllm {

// One sequence's share of a forward pass: `new_token_ids` sit at positions
// [num_computed_tokens, num_computed_tokens + new_token_ids.size()).
struct SequenceChunk {
  std::span<const int32_t> new_token_ids;
  int32_t num_computed_tokens = 0;
  // One block table per KV cache group, [num_groups][>= ceil(seq_len / block_size)], each
  // covering every position up to the chunk's end that the chunk's tokens see.
  std::span<const std::vector<int32_t>> block_tables;
  bool wants_logits = true;       // logits of the chunk's last token
  bool wants_all_logits = false;  // logits of every token of the chunk (prompt logprobs)
  // With wants_logits: the chunk ends with this many draft tokens, and the logits of the last
  // num_draft_tokens + 1 tokens are wanted (speculative decoding's verification rows).
  int32_t num_draft_tokens = 0;
  // The input embeddings of the chunk's first new_embeds.size() / hidden_size tokens (prompt
  // embeddings), in place of their token ids' lookup; empty: every token is looked up.
  std::span<const float> new_embeds;
  // The LoRA adapter the sequence runs (kept alive by the caller through the forward); null: the
  // base model.
  const lora::LoraWeights* lora = nullptr;
};

// One scheduled request's share of a step: tokens [num_computed_tokens, + num_new_tokens) of
// prompt + output + spec_token_ids, the draft tokens to verify (speculative decoding):
//
//   prompt + output:  p p p p p o o o |          num_new_tokens = 1 + 3
//                                   ^ num_computed_tokens
//   chunk:                          o d d d      spec_token_ids = d d d
struct ScheduledSequence {
  std::string_view request_id;
  std::span<const int32_t> prompt_token_ids;
  std::span<const int32_t> output_token_ids;
  int64_t num_computed_tokens = 0;
  int64_t num_new_tokens = 0;                          // spec_token_ids included
  std::span<const std::vector<int32_t>> block_tables;  // as SequenceChunk's
  std::span<const int32_t> spec_token_ids;
};

// What one step produced, one entry per scheduled sequence in the order given (vLLM's
// ModelRunnerOutput); every vector is [num_sequences].
struct ModelRunnerOutput {
  explicit ModelRunnerOutput(size_t num_sequences)
      : sampled_token_ids(num_sequences),
        logprobs(num_sequences),
        draft_token_ids(num_sequences),
        prompt_logprobs(num_sequences),
        pooled(num_sequences) {}

  // When the chunk reached the end of prompt + output: the accepted drafts, then the token
  // sampled after them ([num_accepted_drafts + 1]); else empty.
  std::vector<std::vector<int32_t>> sampled_token_ids;
  // The sampled tokens' logprobs when the request asks for them ([sampled_token_ids[i].size()]),
  // else empty.
  std::vector<std::vector<TokenLogprobs>> logprobs;
  // Drafts for the next step after prompt + output + sampled (with a proposer; else empty).
  std::vector<std::vector<int32_t>> draft_token_ids;
  // Logprobs of the prompt tokens this chunk was the first to score (prompt token 1 onwards).
  std::vector<std::vector<TokenLogprobs>> prompt_logprobs;
  // A pooling request's output, as PoolOutput gives it for its spec; else empty.
  std::vector<std::vector<float>> pooled;
};

class ModelRunner {
 public:
  struct Options {
    int64_t num_kv_blocks = 0;
    int64_t block_size = 16;
    KvCacheLayout kv_cache_layout;  // how layers share blocks; empty: one group of all layers
    // Speculative decoding's drafter, run after sampling: n-grams or a draft model (whose KV
    // storage gets num_kv_blocks blocks of block_size, as the target's); none: no drafts.
    std::optional<NgramProposer::Options> ngram_proposer;
    std::optional<DraftModelProposer::Options> draft_model_proposer;
    kernels::KvCacheDtype kv_cache_dtype =
        kernels::KvCacheDtype::kFloat32;  // what K/V are stored as
    // The threads that sample a step's sequences side by side (each request's sampler is its
    // own); null: the calling thread alone.
    ThreadPool* pool = nullptr;
  };
  static Expected<std::unique_ptr<ModelRunner>> Create(Model& model, const Options& options);

  // A request's sampling state lives from AddRequest to RemoveRequest (preemptions included), and
  // so do its prompt embeddings when its prompt came as embeddings (its prompt token ids are
  // then placeholders; the model must accept_input_embeds()) and its LoRA adapter (null: the
  // base model), which the runner keeps alive while the request lives.
  void AddRequest(std::string request_id, SamplingInputs inputs,
                  std::shared_ptr<const PromptEmbeds> prompt_embeds = nullptr,
                  std::shared_ptr<const lora::LoraWeights> lora = nullptr);
  // A pooling request's LoRA adapter (it has no sampling state), kept alive until RemoveRequest.
  void AddPoolingRequest(std::string request_id, std::shared_ptr<const lora::LoraWeights> lora);
  void RemoveRequest(const std::string& request_id);
  // The scheduler preempted the request: its blocks, and the draft model's KV in them, are gone
  // (its sampling state stays).
  void PreemptRequest(const std::string& request_id);

  // Forward + sampling for requests added before.
  Expected<ModelRunnerOutput> Execute(std::span<const ScheduledSequence> sequences);

  // The forward pass alone. logits: one row per requested token, in chunk order: every token of
  // a chunk with wants_all_logits, else its last token when wants_logits. [num_rows, vocab_size]
  Expected<std::vector<float>> ComputeLogits(std::span<const SequenceChunk> chunks);

  // Pooling requests (runner/pooling.cc), each computed whole in this step: the output's pooled
  // entries, as PoolOutput gives them for specs[i].
  Expected<ModelRunnerOutput> ExecutePooling(std::span<const ScheduledSequence> sequences,
                                             std::span<const PoolingSpec* const> specs);

  // vLLM's sleep mode (model_runner_sleep.cc): frees the KV cache storage, the draft model's
  // too, while no request is under way; RestoreKvCache maps it again, all blocks empty. Nothing
  // may execute in between.
  void ReleaseKvCache();
  Status RestoreKvCache();
  bool has_kv_cache() const { return kv_ != nullptr; }
  const KvStorage* kv_cache() const { return kv_.get(); }  // null while released

 private:
  ModelRunner(Model& model, std::unique_ptr<KvStorage> kv, ThreadPool* pool)
      : model_(model), kv_(std::move(kv)), pool_(pool) {}
  // The prompt embeddings of tokens [begin, end) of the request, up to its prompt's end; empty
  // when it has none there.
  std::span<const float> PromptEmbedsOf(std::string_view request_id, int64_t begin,
                                        int64_t end) const;
  // The request's LoRA adapter; null: none.
  const lora::LoraWeights* LoraOf(std::string_view request_id) const;
  // The n-gram drafts after prompt + output + sampled.
  std::vector<int32_t> ProposeNgramDrafts(const ScheduledSequence& sequence,
                                          std::span<const int32_t> sampled_token_ids) const;
  // The draft model's drafts of every sequence that sampled, into output.draft_token_ids
  // (samplers: [sequences.size()]); the others' chunks only extend the draft's KV.
  Status ProposeDraftModelDrafts(std::span<const ScheduledSequence> sequences,
                                 std::span<RequestSampler* const> samplers,
                                 ModelRunnerOutput& output);

  Model& model_;
  std::unique_ptr<KvStorage> kv_;
  KvStorage::Options released_kv_options_;  // kv_'s, while ReleaseKvCache has freed it
  ThreadPool* pool_;                        // may be null
  std::optional<NgramProposer> ngram_proposer_;
  std::unique_ptr<DraftModelProposer> draft_model_proposer_;
  ForwardBatch batch_;
  std::map<std::string, RequestSampler, std::less<>> samplers_;
  std::map<std::string, std::shared_ptr<const PromptEmbeds>, std::less<>> prompt_embeds_;
  std::map<std::string, std::shared_ptr<const lora::LoraWeights>, std::less<>> loras_;
};

}  // namespace vllm
