// vLLM's draft-model proposer ("draft_model" speculative decoding): a small model of the target's
// vocabulary drafts the next k tokens greedily (one-hot draft probabilities, as the verifier
// assumes). Its KV lives in its own storage with the target's number of blocks and block size,
// addressed by the target's block table of one full-attention KV cache group, so the target's
// block bookkeeping (the scheduler allocates k lookahead slots) covers the draft too.
//
// Which draft KV is valid: the proposer tracks, per request, how many leading positions it
// computed itself (num_valid). It never trusts KV it did not write for this request: a new
// request (even one whose prefix came from the prefix cache) or a preempted one starts at 0, so
// its first proposals run the draft over the whole prompt + output (in budget-sized chunks; the
// draft also computes each prefill chunk in the step the target does, so a prompt computed
// without cache hits is caught up when its first token is sampled). Blocks shared through the
// prefix cache hold the same tokens at the same positions, and the draft computes a row the same
// way whatever the batch, so recomputing them rewrites identical values.
//
//   step's tokens:   p p p p p o o o s s |                 (s: sampled this step, N tokens)
//   draft forward 1:           ^^^^^^^^^ [num_valid, N)  → argmax: d1 at position N
//   draft forward j:  d(j-1) at position N + j - 2       → argmax: dj      (j = 2..k)
//
// The KV of d1 .. d(k-1) stays valid for as many of them as the next step accepts.
#pragma once

#include <cstdint>
#include <map>
#include <memory>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "common/expected.h"
#include "model/model.h"
#include "sampling/sampler.h"

namespace vllm {

class DraftModelProposer {
 public:
  struct Options {
    Model* model = nullptr;          // the draft model (required), of the target's vocabulary
    int num_speculative_tokens = 3;  // k
    int64_t max_model_len = 0;       // the engine's; no draft reaches position max_model_len - 1
    // The most tokens the draft computes for requests catching up in one step (prompts it has not
    // seen), as the scheduler's token budget.
    int64_t max_num_batched_tokens = 512;
  };
  // `target_kv`: the target's storage options (blocks, block size, KV dtype, layout). Refused when
  // no KV cache group of the target is full-attention.
  static Expected<std::unique_ptr<DraftModelProposer>> Create(const Options& options,
                                                              const KvStorage::Options& target_kv);

  // One scheduled request's tokens as the step leaves them: its first num_tokens tokens of
  // prompt + output + sampled (this step's), whose slots the target's block tables cover.
  struct Sequence {
    std::string_view request_id;
    std::span<const int32_t> prompt_token_ids;
    std::span<const int32_t> output_token_ids;
    std::span<const int32_t> sampled_token_ids;  // this step's; empty: the chunk sampled nothing
    int64_t num_tokens = 0;
    // The target's computed tokens before this step: the draft's positions before it are its
    // backlog (see Propose).
    int64_t num_computed_tokens = 0;
    std::span<const std::vector<int32_t>> block_tables;  // the target's, one per KV cache group
    int64_t max_num_drafts = 0;  // drafts wanted after the num_tokens tokens; 0: catch up only
  };
  // Brings every sequence's draft KV up to num_tokens and drafts up to min(k, max_num_drafts)
  // tokens (none past position max_model_len - 2) for those with max_num_drafts > 0. One draft
  // forward for all sequences, then one per further draft position. The positions the target
  // computed this step are always computed; a backlog (before num_computed_tokens) shares
  // max_num_batched_tokens with the others' in order, and a sequence it cuts short drafts nothing
  // this step. Returns [sequences.size()] drafts.
  Expected<std::vector<std::vector<int32_t>>> Propose(std::span<const Sequence> sequences);

  // The request's draft KV is gone (finished, or preempted: its blocks were freed).
  void RemoveRequest(std::string_view request_id);

  // Sleep mode (ModelRunner::ReleaseKvCache): frees the draft's KV storage; Restore maps it again.
  void ReleaseKvCache();
  Status RestoreKvCache();

 private:
  struct RequestState {
    int64_t num_valid = 0;            // leading positions whose draft KV this proposer wrote
    std::vector<int32_t> fed_drafts;  // drafts whose KV sits at positions num_valid onwards
  };
  DraftModelProposer(const Options& options, std::unique_ptr<KvStorage> kv, int64_t kv_group)
      : options_(options), kv_(std::move(kv)), kv_group_(kv_group), greedy_({.temperature = 0}) {}
  // Runs the draft over `batch_` and puts the argmax of every logits row in `tokens`.
  Status ForwardGreedy(std::vector<int32_t>& tokens);

  Options options_;
  std::unique_ptr<KvStorage> kv_;
  KvStorage::Options released_kv_options_;  // kv_'s, while ReleaseKvCache has freed it
  int64_t kv_group_;  // the target's KV cache group whose block tables address kv_
  Sampler greedy_;
  ForwardBatch batch_;
  std::vector<float> logits_;
  std::map<std::string, RequestState, std::less<>> states_;
};

}  // namespace vllm
