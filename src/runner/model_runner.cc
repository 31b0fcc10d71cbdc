#include "runner/model_runner.h"

namespace vllm {

Expected<std::unique_ptr<ModelRunner>> ModelRunner::Create(Model& model, const Options& options) {
  const ModelConfig& config = model.config();
  auto kv = KvStorage::Create({.num_layers = config.num_layers,
                               .num_blocks = options.num_kv_blocks,
                               .block_size = options.block_size,
                               .num_kv_heads = config.num_kv_heads,
                               .head_dim = config.head_dim,
                               .dtype = options.kv_cache_dtype,
                               .layout = options.kv_cache_layout});
  if (!kv) return Error{kv.error()};
  return std::unique_ptr<ModelRunner>(
      new ModelRunner(model, std::move(*kv), options.ngram_proposer));
}

void ModelRunner::AddRequest(std::string request_id, SamplingInputs inputs) {
  samplers_.erase(request_id);
  samplers_.emplace(std::move(request_id), RequestSampler(std::move(inputs)));
}

void ModelRunner::RemoveRequest(const std::string& request_id) { samplers_.erase(request_id); }

Expected<std::vector<float>> ModelRunner::ComputeLogits(std::span<const SequenceChunk> chunks) {
  const int64_t block_size = kv_->options().block_size;
  batch_ = ForwardBatch();
  for (const SequenceChunk& chunk : chunks) {
    VLLM_RETURN_IF_ERROR(AppendSequence(chunk.new_token_ids, chunk.num_computed_tokens,
                                        chunk.block_tables, block_size, batch_));
    const auto num_new = static_cast<int32_t>(chunk.new_token_ids.size());
    const auto end = static_cast<int32_t>(batch_.token_ids.size());
    if (chunk.wants_all_logits) {
      for (int32_t row = end - num_new; row < end; ++row) batch_.logits_indices.push_back(row);
    } else if (chunk.wants_logits) {
      for (int32_t row = end - 1 - chunk.num_draft_tokens; row < end; ++row) {
        batch_.logits_indices.push_back(row);
      }
    }
  }
  std::vector<float> logits(batch_.logits_indices.size() * model_.config().vocab_size);
  VLLM_RETURN_IF_ERROR(model_.Forward(batch_, *kv_, logits.data()));
  return logits;
}

Expected<std::vector<SequenceResult>> ModelRunner::Execute(
    std::span<const ScheduledSequence> sequences) {
  // Logits rows: the chunk's last token and its drafts, or all its tokens while prompt logprobs
  // are wanted.
  std::vector<std::vector<int32_t>> new_tokens(sequences.size());
  std::vector<SequenceChunk> chunks;
  std::vector<RequestSampler*> samplers;
  std::vector<int64_t> first_row(sequences.size(), -1);
  int64_t num_rows = 0;
  for (size_t i = 0; i < sequences.size(); ++i) {
    const ScheduledSequence& sequence = sequences[i];
    auto sampler = samplers_.find(sequence.request_id);
    if (sampler == samplers_.end()) {
      return Error{"request " + std::string(sequence.request_id) + " was not added to the runner"};
    }
    samplers.push_back(&sampler->second);
    const auto num_prompt = static_cast<int64_t>(sequence.prompt_token_ids.size());
    const auto num_drafts = static_cast<int64_t>(sequence.spec_token_ids.size());
    const int64_t begin = sequence.num_computed_tokens;
    const int64_t end = begin + sequence.num_new_tokens - num_drafts;  // drafts excluded
    for (int64_t t = begin; t < end; ++t) {
      new_tokens[i].push_back(t < num_prompt ? sequence.prompt_token_ids[t]
                                             : sequence.output_token_ids[t - num_prompt]);
    }
    new_tokens[i].insert(new_tokens[i].end(), sequence.spec_token_ids.begin(),
                         sequence.spec_token_ids.end());
    const bool reaches_end =
        end == num_prompt + static_cast<int64_t>(sequence.output_token_ids.size());
    const bool all_rows = sampler->second.params().prompt_logprobs &&
                          sampler->second.num_prompt_logprobs < end && begin < num_prompt;
    chunks.push_back({new_tokens[i], static_cast<int32_t>(begin), sequence.block_tables,
                      reaches_end, all_rows, static_cast<int32_t>(num_drafts)});
    if (all_rows || reaches_end) first_row[i] = num_rows;
    num_rows += all_rows ? sequence.num_new_tokens : (reaches_end ? 1 + num_drafts : 0);
  }
  auto logits = ComputeLogits(chunks);
  if (!logits) return Error{logits.error()};

  const int64_t vocab_size = model_.config().vocab_size;
  std::vector<SequenceResult> results(sequences.size());
  for (size_t i = 0; i < sequences.size(); ++i) {
    if (first_row[i] < 0) continue;
    const ScheduledSequence& sequence = sequences[i];
    RequestSampler& sampler = *samplers[i];
    const auto num_prompt = static_cast<int64_t>(sequence.prompt_token_ids.size());
    const auto num_drafts = static_cast<int64_t>(sequence.spec_token_ids.size());
    const int64_t begin = sequence.num_computed_tokens;
    if (chunks[i].wants_all_logits) {
      // Row of position p predicts prompt token p + 1; each is reported once, even after a
      // preemption recomputes it.
      for (int64_t p = begin; p < begin + sequence.num_new_tokens; ++p) {
        if (p + 1 >= num_prompt || p + 1 <= sampler.num_prompt_logprobs) continue;
        results[i].prompt_logprobs.push_back(
            ComputeLogprobs(logits->data() + (first_row[i] + p - begin) * vocab_size, vocab_size,
                            sequence.prompt_token_ids[p + 1], *sampler.params().prompt_logprobs));
        sampler.num_prompt_logprobs = p + 1;
      }
    }
    if (!chunks[i].wants_logits) continue;
    // The rows of the chunk's last real token and its drafts: [num_drafts + 1, vocab_size].
    const int64_t verify_row =
        first_row[i] + (chunks[i].wants_all_logits ? sequence.num_new_tokens - 1 - num_drafts : 0);
    float* rows = logits->data() + verify_row * vocab_size;
    if (num_drafts == 0) {
      results[i].sampled.push_back(
          sampler.Sample(sequence.prompt_token_ids, sequence.output_token_ids, rows, vocab_size));
    } else {
      results[i].sampled =
          sampler.SampleWithDrafts(sequence.prompt_token_ids, sequence.output_token_ids,
                                   sequence.spec_token_ids, rows, vocab_size);
    }
    results[i].draft_token_ids = ProposeDrafts(sequence, results[i].sampled);
  }
  return results;
}

std::vector<int32_t> ModelRunner::ProposeDrafts(const ScheduledSequence& sequence,
                                                std::span<const SampledResult> sampled) const {
  if (!ngram_proposer_) return {};
  std::vector<int32_t> token_ids(sequence.prompt_token_ids.begin(),
                                 sequence.prompt_token_ids.end());
  token_ids.insert(token_ids.end(), sequence.output_token_ids.begin(),
                   sequence.output_token_ids.end());
  for (const SampledResult& result : sampled) token_ids.push_back(result.token_id);
  return ngram_proposer_->Propose(token_ids);
}

}  // namespace vllm
