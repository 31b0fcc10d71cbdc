#include "model/layers/paged_attention.h"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <vector>

#include "kernels/ops.h"

namespace vllm {

Status ValidateForwardBatch(const ForwardBatch& batch, const KvStorage& kv) {
  const int64_t num_tokens = batch.num_tokens();
  const int64_t num_seqs = batch.num_seqs();
  const int64_t block_size = kv.options().block_size;
  if (static_cast<int64_t>(batch.positions.size()) != num_tokens ||
      static_cast<int64_t>(batch.slot_mapping.size()) != num_tokens) {
    return Error{"forward batch: token_ids, positions and slot_mapping differ in length"};
  }
  if (static_cast<int64_t>(batch.query_start_loc.size()) != num_seqs + 1 ||
      static_cast<int64_t>(batch.block_tables.size()) != num_seqs) {
    return Error{"forward batch: query_start_loc / block_tables do not match seq_lens"};
  }
  if (batch.query_start_loc.front() != 0 || batch.query_start_loc.back() != num_tokens) {
    return Error{"forward batch: query_start_loc must span [0, num_tokens]"};
  }
  for (int64_t s = 0; s < num_seqs; ++s) {
    int32_t begin = batch.query_start_loc[s];
    int32_t end = batch.query_start_loc[s + 1];
    int64_t seq_len = batch.seq_lens[s];
    if (end < begin || seq_len <= 0) return Error{"forward batch: bad sequence extent"};
    const auto& table = batch.block_tables[s];
    if (static_cast<int64_t>(table.size()) * block_size < seq_len) {
      return Error{"forward batch: block table too short for seq_len"};
    }
    for (int32_t block_id : table) {
      if (block_id < 0 || block_id >= kv.options().num_blocks) {
        return Error{"forward batch: block id " + std::to_string(block_id) + " out of range"};
      }
    }
    for (int32_t t = begin; t < end; ++t) {
      int32_t position = batch.positions[t];
      if (position < 0 || position >= seq_len) {
        return Error{"forward batch: position outside its sequence"};
      }
      int64_t expected_slot =
          int64_t{table[position / block_size]} * block_size + position % block_size;
      if (batch.slot_mapping[t] != expected_slot) {
        return Error{"forward batch: slot_mapping disagrees with the block table"};
      }
    }
  }
  for (int32_t row : batch.logits_indices) {
    if (row < 0 || row >= num_tokens) return Error{"forward batch: logits index out of range"};
  }
  return Status::Ok();
}

Status ValidateForwardBatch(const ForwardBatch& batch, const KvStorage& kv,
                            const ModelConfig& config) {
  VLLM_RETURN_IF_ERROR(ValidateForwardBatch(batch, kv));
  for (int32_t id : batch.token_ids) {
    if (id < 0 || id >= config.vocab_size) {
      return Error{"token id " + std::to_string(id) + " is outside the vocabulary"};
    }
  }
  if (kv.options().num_kv_heads != config.num_kv_heads ||
      kv.options().head_dim != config.head_dim || kv.options().num_layers != config.num_layers) {
    return Error{"KV storage shape does not match the model"};
  }
  return Status::Ok();
}

void WriteKv(const ForwardBatch& batch, int64_t layer, const float* k, const float* v,
             KvStorage& kv) {
  const int64_t row_size = kv.row_size();
  for (int64_t t = 0; t < batch.num_tokens(); ++t) {
    int64_t slot = batch.slot_mapping[t];
    std::memcpy(kv.key(layer, slot), k + t * row_size, row_size * sizeof(float));
    std::memcpy(kv.value(layer, slot), v + t * row_size, row_size * sizeof(float));
  }
}

void PagedAttention(const ForwardBatch& batch, int64_t layer, const float* q, int64_t num_heads,
                    float scale, KvStorage& kv, ThreadPool& pool, float* out,
                    int64_t sliding_window) {
  const int64_t num_tokens = batch.num_tokens();
  const int64_t head_dim = kv.options().head_dim;
  const int64_t block_size = kv.options().block_size;
  const int64_t heads_per_kv_head = num_heads / kv.options().num_kv_heads;
  // sequence_of_token[t]: which sequence token t belongs to.
  std::vector<int32_t> sequence_of_token(num_tokens);
  for (int64_t s = 0; s < batch.num_seqs(); ++s) {
    for (int32_t t = batch.query_start_loc[s]; t < batch.query_start_loc[s + 1]; ++t) {
      sequence_of_token[t] = static_cast<int32_t>(s);
    }
  }
  const int64_t num_kv_heads = kv.options().num_kv_heads;
  const int64_t num_items = num_tokens * num_kv_heads;
  // An item is one token's group of query heads sharing a KV head: each key and value row is
  // read once for the group. Items are dealt round-robin: causal prefill makes later tokens
  // costlier, and interleaving keeps the threads balanced. Each head's arithmetic is the same
  // whichever thread runs it and whatever else is in the batch.
  pool.Run([&](int thread_index, int num_threads) {
    std::vector<float> scores;      // [heads_per_kv_head, context_len]
    std::vector<float> key_scores;  // [heads_per_kv_head]
    std::vector<float> weights;     // [heads_per_kv_head]
    for (int64_t item = thread_index; item < num_items; item += num_threads) {
      const int64_t t = item / num_kv_heads;
      const int64_t kv_head = item % num_kv_heads;
      const int64_t first_head = kv_head * heads_per_kv_head;
      const auto& table = batch.block_tables[sequence_of_token[t]];
      // Keys at positions [first_position, positions[t]].
      const int64_t first_position =
          sliding_window > 0 ? std::max<int64_t>(0, batch.positions[t] - sliding_window + 1) : 0;
      const int64_t context_len = int64_t{batch.positions[t]} + 1 - first_position;
      const float* queries = q + (t * num_heads + first_head) * head_dim;
      scores.resize(heads_per_kv_head * context_len);
      key_scores.resize(heads_per_kv_head);
      weights.resize(heads_per_kv_head);
      for (int64_t j = 0; j < context_len; ++j) {
        const int64_t position = first_position + j;
        const int64_t slot =
            int64_t{table[position / block_size]} * block_size + position % block_size;
        kernels::DotF32Rows(queries, heads_per_kv_head, kv.key(layer, slot) + kv_head * head_dim,
                            head_dim, key_scores.data());
        for (int64_t g = 0; g < heads_per_kv_head; ++g) {
          scores[g * context_len + j] = key_scores[g] * scale;
        }
      }
      std::vector<float> inv_sums(heads_per_kv_head);
      for (int64_t g = 0; g < heads_per_kv_head; ++g) {
        float* row = scores.data() + g * context_len;
        const float max_score = *std::max_element(row, row + context_len);
        float sum = 0.0f;
        for (int64_t j = 0; j < context_len; ++j) {
          row[j] = std::exp(row[j] - max_score);
          sum += row[j];
        }
        inv_sums[g] = 1.0f / sum;
      }
      float* result = out + (t * num_heads + first_head) * head_dim;
      std::fill(result, result + heads_per_kv_head * head_dim, 0.0f);
      for (int64_t j = 0; j < context_len; ++j) {
        const int64_t position = first_position + j;
        const int64_t slot =
            int64_t{table[position / block_size]} * block_size + position % block_size;
        for (int64_t g = 0; g < heads_per_kv_head; ++g) {
          weights[g] = scores[g * context_len + j] * inv_sums[g];
        }
        kernels::AxpyF32Rows(weights.data(), heads_per_kv_head,
                             kv.value(layer, slot) + kv_head * head_dim, head_dim, result);
      }
    }
  });
}

}  // namespace vllm
