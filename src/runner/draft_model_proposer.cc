// The draft-model proposer: per-request draft KV validity, the catch-up forward and the greedy
// draft steps.
#include "runner/draft_model_proposer.h"

#include <algorithm>

namespace vllm {
namespace {

// Token `position` of prompt + output + sampled.
int32_t TokenAt(const DraftModelProposer::Sequence& sequence, int64_t position) {
  const auto num_prompt = static_cast<int64_t>(sequence.prompt_token_ids.size());
  const auto num_output = static_cast<int64_t>(sequence.output_token_ids.size());
  if (position < num_prompt) return sequence.prompt_token_ids[position];
  if (position < num_prompt + num_output) return sequence.output_token_ids[position - num_prompt];
  return sequence.sampled_token_ids[position - num_prompt - num_output];
}

}  // namespace

Expected<std::unique_ptr<DraftModelProposer>> DraftModelProposer::Create(
    const Options& options, const KvStorage::Options& target_kv) {
  if (options.model == nullptr) return Error{"the draft model proposer needs a draft model"};
  if (options.num_speculative_tokens <= 0) {
    return Error{"num_speculative_tokens must be > 0, got " +
                 std::to_string(options.num_speculative_tokens)};
  }
  // An empty layout is one full-attention group.
  const std::vector<KvCacheLayout::Group>& groups = target_kv.layout.groups;
  auto full = std::find_if(groups.begin(), groups.end(), [](const KvCacheLayout::Group& group) {
    return group.sliding_window <= 0;
  });
  if (!groups.empty() && full == groups.end()) {
    return Error{
        "speculative decoding with a draft model needs a full-attention KV cache group in the "
        "target model, whose layers all use a sliding window; pass "
        "--disable-hybrid-kv-cache-manager"};
  }
  // The draft's layers form one group (a sliding-window draft masks its window in attention).
  const ModelConfig& config = options.model->config();
  auto kv = KvStorage::Create({.num_layers = config.num_layers,
                               .num_blocks = target_kv.num_blocks,
                               .block_size = target_kv.block_size,
                               .num_kv_heads = config.num_kv_heads,
                               .head_dim = config.head_dim,
                               .dtype = target_kv.dtype});
  if (!kv) return Error{"draft model KV cache: " + kv.error()};
  return std::unique_ptr<DraftModelProposer>(
      new DraftModelProposer(options, std::move(*kv), full - groups.begin()));
}

Expected<std::vector<std::vector<int32_t>>> DraftModelProposer::Propose(
    std::span<const Sequence> sequences) {
  const int64_t block_size = kv_->options().block_size;
  std::vector<std::vector<int32_t>> drafts(sequences.size());
  std::vector<int64_t> num_wanted(sequences.size(), 0);  // drafts each sequence will get
  std::vector<RequestState*> states(sequences.size());
  std::vector<size_t> drafting;  // sequences getting drafts, in order
  std::vector<int32_t> chunk;    // one sequence's tokens of a forward
  int64_t backlog_budget = options_.max_num_batched_tokens;

  // Forward 1: every sequence's tokens the draft has not computed, logits of the drafting ones'
  // last token.
  batch_ = ForwardBatch();
  for (size_t i = 0; i < sequences.size(); ++i) {
    const Sequence& sequence = sequences[i];
    auto it = states_.find(sequence.request_id);
    if (it == states_.end()) {
      it = states_.emplace(std::string(sequence.request_id), RequestState()).first;
    }
    RequestState& state = *(states[i] = &it->second);
    // The drafts fed last step hold valid KV as far as the request's tokens agree with them.
    size_t num_agreeing = 0;
    while (num_agreeing < state.fed_drafts.size() &&
           state.num_valid + static_cast<int64_t>(num_agreeing) < sequence.num_tokens &&
           TokenAt(sequence, state.num_valid + num_agreeing) == state.fed_drafts[num_agreeing]) {
      ++num_agreeing;
    }
    state.num_valid =
        std::min(state.num_valid + static_cast<int64_t>(num_agreeing), sequence.num_tokens);
    state.fed_drafts.clear();
    const int64_t room = options_.max_model_len - 1 - sequence.num_tokens;
    const int64_t wanted =
        std::min<int64_t>({options_.num_speculative_tokens, sequence.max_num_drafts, room});
    // A drafting sequence computes at least its last token, whose logits it needs.
    const int64_t begin =
        wanted > 0 ? std::min(state.num_valid, sequence.num_tokens - 1) : state.num_valid;
    const int64_t backlog = std::max<int64_t>(0, sequence.num_computed_tokens - begin);
    const int64_t backlog_done = std::min(backlog, backlog_budget);
    backlog_budget -= backlog_done;
    const int64_t end = backlog_done < backlog ? begin + backlog_done : sequence.num_tokens;
    if (end <= begin) continue;
    chunk.clear();
    for (int64_t p = begin; p < end; ++p) chunk.push_back(TokenAt(sequence, p));
    VLLM_RETURN_IF_ERROR(AppendSequence(chunk, static_cast<int32_t>(begin),
                                        sequence.block_tables.subspan(kv_group_, 1), block_size,
                                        batch_));
    state.num_valid = end;
    if (wanted > 0 && end == sequence.num_tokens) {
      batch_.logits_indices.push_back(static_cast<int32_t>(batch_.token_ids.size()) - 1);
      drafting.push_back(i);
      num_wanted[i] = wanted;
    }
  }
  if (batch_.token_ids.empty()) return drafts;
  std::vector<int32_t> next;
  VLLM_RETURN_IF_ERROR(ForwardGreedy(next));
  for (size_t r = 0; r < drafting.size(); ++r) drafts[drafting[r]].push_back(next[r]);

  // Forward j: each drafting sequence's draft j at position num_tokens + j - 1 → draft j + 1.
  for (int64_t j = 1; j < options_.num_speculative_tokens; ++j) {
    batch_ = ForwardBatch();
    std::vector<size_t> fed;
    for (size_t i : drafting) {
      if (num_wanted[i] <= j) continue;
      const Sequence& sequence = sequences[i];
      const int32_t token = drafts[i].back();
      VLLM_RETURN_IF_ERROR(AppendSequence(
          std::span<const int32_t>(&token, 1), static_cast<int32_t>(sequence.num_tokens + j - 1),
          sequence.block_tables.subspan(kv_group_, 1), block_size, batch_));
      batch_.logits_indices.push_back(static_cast<int32_t>(batch_.token_ids.size()) - 1);
      states[i]->fed_drafts.push_back(token);
      fed.push_back(i);
    }
    if (fed.empty()) break;
    VLLM_RETURN_IF_ERROR(ForwardGreedy(next));
    for (size_t r = 0; r < fed.size(); ++r) drafts[fed[r]].push_back(next[r]);
  }
  return drafts;
}

Status DraftModelProposer::ForwardGreedy(std::vector<int32_t>& tokens) {
  const int64_t vocab_size = options_.model->config().vocab_size;
  // logits: [batch_.logits_indices.size(), vocab_size]
  logits_.resize(batch_.logits_indices.size() * vocab_size);
  VLLM_RETURN_IF_ERROR(options_.model->Forward(batch_, *kv_, logits_.data()));
  tokens.clear();
  for (size_t row = 0; row < batch_.logits_indices.size(); ++row) {
    tokens.push_back(greedy_.Sample(logits_.data() + row * vocab_size, vocab_size));
  }
  return Status::Ok();
}

void DraftModelProposer::RemoveRequest(std::string_view request_id) {
  if (auto it = states_.find(request_id); it != states_.end()) states_.erase(it);
}

}  // namespace vllm
