#include "runner/model_runner.h"

namespace vllm {

Expected<std::unique_ptr<ModelRunner>> ModelRunner::Create(Model& model, const Options& options) {
  const ModelConfig& config = model.config();
  auto kv = KvStorage::Create({.num_layers = config.num_layers,
                               .num_blocks = options.num_kv_blocks,
                               .block_size = options.block_size,
                               .num_kv_heads = config.num_kv_heads,
                               .head_dim = config.head_dim});
  if (!kv) return Error{kv.error()};
  return std::unique_ptr<ModelRunner>(new ModelRunner(model, std::move(*kv)));
}

Expected<std::vector<float>> ModelRunner::Execute(std::span<const SequenceChunk> chunks) {
  const int64_t block_size = kv_->options().block_size;
  batch_ = ForwardBatch();
  batch_.query_start_loc.push_back(0);
  for (const SequenceChunk& chunk : chunks) {
    const int32_t num_new = static_cast<int32_t>(chunk.new_token_ids.size());
    const int32_t seq_len = chunk.num_computed_tokens + num_new;
    if (num_new == 0) return Error{"a sequence chunk has no tokens"};
    if (static_cast<int64_t>(chunk.block_table.size()) * block_size < seq_len) {
      return Error{"a sequence's block table does not cover its tokens"};
    }
    for (int32_t i = 0; i < num_new; ++i) {
      const int32_t position = chunk.num_computed_tokens + i;
      batch_.token_ids.push_back(chunk.new_token_ids[i]);
      batch_.positions.push_back(position);
      batch_.slot_mapping.push_back(int64_t{chunk.block_table[position / block_size]} * block_size +
                                    position % block_size);
    }
    const int32_t end = static_cast<int32_t>(batch_.token_ids.size());
    if (chunk.wants_all_logits) {
      for (int32_t row = end - num_new; row < end; ++row) batch_.logits_indices.push_back(row);
    } else if (chunk.wants_logits) {
      batch_.logits_indices.push_back(end - 1);
    }
    batch_.query_start_loc.push_back(static_cast<int32_t>(batch_.token_ids.size()));
    batch_.seq_lens.push_back(seq_len);
    batch_.block_tables.emplace_back(chunk.block_table.begin(), chunk.block_table.end());
  }
  std::vector<float> logits(batch_.logits_indices.size() * model_.config().vocab_size);
  VLLM_RETURN_IF_ERROR(model_.Forward(batch_, *kv_, logits.data()));
  return logits;
}

}  // namespace vllm
