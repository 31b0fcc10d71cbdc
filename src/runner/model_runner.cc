#include "runner/model_runner.h"

namespace vllm {

Expected<std::unique_ptr<ModelRunner>> ModelRunner::Create(Model& model, const Options& options) {
  const ModelConfig& config = model.config();
  auto kv = KvStorage::Create({.num_layers = config.num_layers,
                               .num_blocks = options.num_kv_blocks,
                               .block_size = options.block_size,
                               .num_kv_heads = config.num_kv_heads,
                               .head_dim = config.head_dim,
                               .layout = options.kv_cache_layout});
  if (!kv) return Error{kv.error()};
  return std::unique_ptr<ModelRunner>(new ModelRunner(model, std::move(*kv)));
}

Expected<std::vector<float>> ModelRunner::Execute(std::span<const SequenceChunk> chunks) {
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
      batch_.logits_indices.push_back(end - 1);
    }
  }
  std::vector<float> logits(batch_.logits_indices.size() * model_.config().vocab_size);
  VLLM_RETURN_IF_ERROR(model_.Forward(batch_, *kv_, logits.data()));
  return logits;
}

}  // namespace vllm
