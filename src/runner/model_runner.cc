#include "runner/model_runner.h"

#include <algorithm>
#include <limits>

namespace vllm {
namespace {

// Sequences per thread that the pool's threads claim in turn when sampling: rows differ in cost
// (a grammar's mask, logprobs, a sort for top-p).
constexpr int kSamplingChunksPerThread = 4;

}  // namespace

Expected<std::unique_ptr<ModelRunner>> ModelRunner::Create(Model& model, const Options& options) {
  const ModelConfig& config = model.config();
  auto kv = KvStorage::Create(model.KvStorageOptionsOf({.num_layers = config.num_layers,
                                                        .num_blocks = options.num_kv_blocks,
                                                        .block_size = options.block_size,
                                                        .num_kv_heads = config.num_kv_heads,
                                                        .head_dim = config.head_dim,
                                                        .dtype = options.kv_cache_dtype,
                                                        .layout = options.kv_cache_layout}));
  if (!kv) return Error{kv.error()};
  const KvStorage::Options target_kv = (*kv)->options();
  std::unique_ptr<ModelRunner> runner(new ModelRunner(model, std::move(*kv), options.pool));
  if (options.ngram_proposer) runner->ngram_proposer_.emplace(*options.ngram_proposer);
  if (options.draft_model_proposer) {
    auto proposer = DraftModelProposer::Create(*options.draft_model_proposer, target_kv);
    if (!proposer) return Error{proposer.error()};
    runner->draft_model_proposer_ = std::move(*proposer);
  }
  return runner;
}

void ModelRunner::AddRequest(std::string request_id, SamplingInputs inputs,
                             std::shared_ptr<const PromptEmbeds> prompt_embeds,
                             std::shared_ptr<const lora::LoraWeights> lora) {
  samplers_.erase(request_id);
  prompt_embeds_.erase(request_id);
  loras_.erase(request_id);
  if (prompt_embeds) prompt_embeds_.emplace(request_id, std::move(prompt_embeds));
  if (lora) loras_.emplace(request_id, std::move(lora));
  samplers_.emplace(std::move(request_id), RequestSampler(std::move(inputs)));
}

void ModelRunner::AddPoolingRequest(std::string request_id,
                                    std::shared_ptr<const lora::LoraWeights> lora) {
  loras_.erase(request_id);
  if (lora) loras_.emplace(std::move(request_id), std::move(lora));
}

void ModelRunner::RemoveRequest(const std::string& request_id) {
  samplers_.erase(request_id);
  prompt_embeds_.erase(request_id);
  loras_.erase(request_id);
  PreemptRequest(request_id);
}

void ModelRunner::PreemptRequest(const std::string& request_id) {
  if (draft_model_proposer_) draft_model_proposer_->RemoveRequest(request_id);
}

Expected<std::vector<float>> ModelRunner::ComputeLogits(std::span<const SequenceChunk> chunks) {
  const int64_t block_size = kv_->options().block_size;
  batch_ = ForwardBatch();
  for (const SequenceChunk& chunk : chunks) {
    VLLM_RETURN_IF_ERROR(AppendSequence(chunk.new_token_ids, chunk.num_computed_tokens,
                                        chunk.block_tables, block_size, batch_));
    const auto num_new = static_cast<int32_t>(chunk.new_token_ids.size());
    const auto end = static_cast<int32_t>(batch_.token_ids.size());
    if (!chunk.new_embeds.empty()) batch_.input_embeds.push_back({end - num_new, chunk.new_embeds});
    if (chunk.lora != nullptr && batch_.seq_loras.empty()) {
      batch_.seq_loras.resize(batch_.num_seqs() - 1, nullptr);  // the sequences before it
    }
    if (chunk.lora != nullptr || !batch_.seq_loras.empty()) batch_.seq_loras.push_back(chunk.lora);
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

std::span<const float> ModelRunner::PromptEmbedsOf(std::string_view request_id, int64_t begin,
                                                   int64_t end) const {
  auto it = prompt_embeds_.find(request_id);
  if (it == prompt_embeds_.end() || begin >= it->second->num_tokens) return {};
  const PromptEmbeds& embeds = *it->second;
  const int64_t num_rows = std::min(end, embeds.num_tokens) - begin;
  return std::span(embeds.values)
      .subspan(begin * embeds.hidden_size, num_rows * embeds.hidden_size);
}

const lora::LoraWeights* ModelRunner::LoraOf(std::string_view request_id) const {
  auto it = loras_.find(request_id);
  return it == loras_.end() ? nullptr : it->second.get();
}

Expected<ModelRunnerOutput> ModelRunner::Execute(std::span<const ScheduledSequence> sequences) {
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
                      reaches_end, all_rows, static_cast<int32_t>(num_drafts),
                      PromptEmbedsOf(sequence.request_id, begin, end),
                      LoraOf(sequence.request_id)});
    if (all_rows || reaches_end) first_row[i] = num_rows;
    num_rows += all_rows ? sequence.num_new_tokens : (reaches_end ? 1 + num_drafts : 0);
  }
  auto logits = ComputeLogits(chunks);
  if (!logits) return Error{logits.error()};

  const int64_t vocab_size = model_.config().vocab_size;
  ModelRunnerOutput output(sequences.size());
  // Sequence i touches only its own sampler, logits rows and output entries.
  auto sample = [&](size_t i) {
    if (first_row[i] < 0) return;
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
        output.prompt_logprobs[i].push_back(
            ComputeLogprobs(logits->data() + (first_row[i] + p - begin) * vocab_size, vocab_size,
                            sequence.prompt_token_ids[p + 1], *sampler.params().prompt_logprobs));
        sampler.num_prompt_logprobs = p + 1;
      }
    }
    if (!chunks[i].wants_logits) return;
    // The rows of the chunk's last real token and its drafts: [num_drafts + 1, vocab_size].
    const int64_t verify_row =
        first_row[i] + (chunks[i].wants_all_logits ? sequence.num_new_tokens - 1 - num_drafts : 0);
    float* rows = logits->data() + verify_row * vocab_size;
    std::vector<SampledResult> sampled;
    if (num_drafts == 0) {
      sampled.push_back(
          sampler.Sample(sequence.prompt_token_ids, sequence.output_token_ids, rows, vocab_size));
    } else {
      sampled = sampler.SampleWithDrafts(sequence.prompt_token_ids, sequence.output_token_ids,
                                         sequence.spec_token_ids, rows, vocab_size);
    }
    for (SampledResult& token : sampled) {
      output.sampled_token_ids[i].push_back(token.token_id);
      if (token.logprobs) output.logprobs[i].push_back(std::move(*token.logprobs));
    }
    output.draft_token_ids[i] = ProposeNgramDrafts(sequence, output.sampled_token_ids[i]);
  };
  if (pool_ == nullptr) {
    for (size_t i = 0; i < sequences.size(); ++i) sample(i);
  } else {
    pool_->ParallelForChunks(static_cast<int64_t>(sequences.size()), kSamplingChunksPerThread,
                             [&](int64_t begin, int64_t end) {
                               for (int64_t i = begin; i < end; ++i) sample(i);
                             });
  }
  if (draft_model_proposer_) {
    VLLM_RETURN_IF_ERROR(ProposeDraftModelDrafts(sequences, samplers, output));
  }
  return output;
}

Status ModelRunner::ProposeDraftModelDrafts(std::span<const ScheduledSequence> sequences,
                                            std::span<RequestSampler* const> samplers,
                                            ModelRunnerOutput& output) {
  std::vector<DraftModelProposer::Sequence> inputs;
  for (size_t i = 0; i < sequences.size(); ++i) {
    const ScheduledSequence& sequence = sequences[i];
    const auto num_sampled = static_cast<int64_t>(output.sampled_token_ids[i].size());
    // The chunk's end (its drafts excluded), then the tokens sampled after it.
    const int64_t num_tokens = sequence.num_computed_tokens + sequence.num_new_tokens -
                               static_cast<int64_t>(sequence.spec_token_ids.size()) + num_sampled;
    int64_t max_num_drafts = 0;
    if (num_sampled > 0) {
      // As the scheduler trims them: the output stays within max_tokens with the bonus token.
      const std::optional<int>& max_tokens = samplers[i]->params().max_tokens;
      const auto num_output = static_cast<int64_t>(sequence.output_token_ids.size()) + num_sampled;
      max_num_drafts =
          max_tokens ? *max_tokens - num_output - 1 : std::numeric_limits<int64_t>::max();
    }
    inputs.push_back({.request_id = sequence.request_id,
                      .prompt_token_ids = sequence.prompt_token_ids,
                      .output_token_ids = sequence.output_token_ids,
                      .sampled_token_ids = output.sampled_token_ids[i],
                      .num_tokens = num_tokens,
                      .num_computed_tokens = sequence.num_computed_tokens,
                      .block_tables = sequence.block_tables,
                      .max_num_drafts = max_num_drafts});
  }
  auto drafts = draft_model_proposer_->Propose(inputs);
  if (!drafts) return Error{drafts.error()};
  for (size_t i = 0; i < sequences.size(); ++i) output.draft_token_ids[i] = std::move((*drafts)[i]);
  return Status::Ok();
}

std::vector<int32_t> ModelRunner::ProposeNgramDrafts(
    const ScheduledSequence& sequence, std::span<const int32_t> sampled_token_ids) const {
  if (!ngram_proposer_) return {};
  std::vector<int32_t> token_ids(sequence.prompt_token_ids.begin(),
                                 sequence.prompt_token_ids.end());
  token_ids.insert(token_ids.end(), sequence.output_token_ids.begin(),
                   sequence.output_token_ids.end());
  token_ids.insert(token_ids.end(), sampled_token_ids.begin(), sampled_token_ids.end());
  return ngram_proposer_->Propose(token_ids);
}

}  // namespace vllm
