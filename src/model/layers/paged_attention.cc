#include "model/layers/paged_attention.h"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <vector>

#include "kernels/ops.h"

namespace vllm {

void WriteKv(const ForwardBatch& batch, int64_t layer, const float* k, const float* v,
             KvStorage& kv) {
  const int64_t row_size = kv.row_size();
  const std::vector<int64_t>& slot_mapping =
      batch.kv_groups[kv.layout().group_of_layer[layer]].slot_mapping;
  for (int64_t t = 0; t < batch.num_tokens(); ++t) {
    const int64_t slot = slot_mapping[t];
    std::memcpy(kv.key(layer, slot), k + t * row_size, row_size * sizeof(float));
    std::memcpy(kv.value(layer, slot), v + t * row_size, row_size * sizeof(float));
  }
}

void PagedAttention(const ForwardBatch& batch, int64_t layer, const float* q, int64_t num_heads,
                    const AttentionOptions& options, KvStorage& kv, ThreadPool& pool, float* out) {
  const int64_t num_tokens = batch.num_tokens();
  const int64_t head_dim = kv.options().head_dim;
  const int64_t block_size = kv.options().block_size;
  const int64_t heads_per_kv_head = num_heads / kv.options().num_kv_heads;
  const float scale = options.scale;
  const float softcap = options.logit_softcap;
  // sequence_of_token[t]: which sequence token t belongs to.
  std::vector<int32_t> sequence_of_token(num_tokens);
  for (int64_t s = 0; s < batch.num_seqs(); ++s) {
    for (int32_t t = batch.query_start_loc[s]; t < batch.query_start_loc[s + 1]; ++t) {
      sequence_of_token[t] = static_cast<int32_t>(s);
    }
  }
  const std::vector<std::vector<int32_t>>& block_tables =
      batch.kv_groups[kv.layout().group_of_layer[layer]].block_tables;
  const int64_t num_kv_heads = kv.options().num_kv_heads;
  const int64_t num_items = num_tokens * num_kv_heads;
  // An item is one token's group of query heads sharing a KV head: each key and value row is
  // read once for the group. Items are dealt round-robin: causal prefill makes later tokens
  // costlier, and interleaving keeps the threads balanced. Each head's arithmetic is the same
  // whichever thread runs it and whatever else is in the batch.
  pool.Run([&](int thread_index, int num_threads) {
    std::vector<float> scores;                         // [heads_per_kv_head, context_len]
    std::vector<float> key_scores(heads_per_kv_head);  // [heads_per_kv_head]
    std::vector<float> weights(heads_per_kv_head);     // [heads_per_kv_head]
    std::vector<float> inv_sums(heads_per_kv_head);    // [heads_per_kv_head]
    for (int64_t item = thread_index; item < num_items; item += num_threads) {
      const int64_t t = item / num_kv_heads;
      const int64_t kv_head = item % num_kv_heads;
      const int64_t first_head = kv_head * heads_per_kv_head;
      const std::vector<int32_t>& table = block_tables[sequence_of_token[t]];
      // Keys at positions [first_position, positions[t]]: the window's only, so a sliding group's
      // null entries (blocks before every window of the batch) are never read.
      const int64_t first_position =
          options.sliding_window > 0
              ? std::max<int64_t>(0, batch.positions[t] - options.sliding_window + 1)
              : 0;
      const int64_t context_len = int64_t{batch.positions[t]} + 1 - first_position;
      const float* queries = q + (t * num_heads + first_head) * head_dim;
      scores.resize(heads_per_kv_head * context_len);
      // Calls visit(j, block_id, offset) for position first_position + j, j in [0, context_len),
      // walking the block table without a division per position.
      auto for_each_position = [&](auto visit) {
        int64_t block = first_position / block_size;
        int64_t offset = first_position % block_size;
        for (int64_t j = 0; j < context_len; ++j) {
          visit(j, table[block], offset);
          if (++offset == block_size) {
            offset = 0;
            ++block;
          }
        }
      };
      for_each_position([&](int64_t j, int32_t block_id, int64_t offset) {
        kernels::DotF32Rows(queries, heads_per_kv_head,
                            kv.key(layer, block_id, offset) + kv_head * head_dim, head_dim,
                            key_scores.data());
        for (int64_t g = 0; g < heads_per_kv_head; ++g) {
          const float score = key_scores[g] * scale;
          scores[g * context_len + j] =
              softcap > 0.0f ? softcap * std::tanh(score / softcap) : score;
        }
      });
      for (int64_t g = 0; g < heads_per_kv_head; ++g) {
        float* row = scores.data() + g * context_len;
        float max_score = *std::max_element(row, row + context_len);
        // Head first_head + g's sink logit, or nullptr.
        const float* sink = options.sinks == nullptr ? nullptr : options.sinks + first_head + g;
        if (sink != nullptr) max_score = std::max(max_score, *sink);
        float sum = 0.0f;
        for (int64_t j = 0; j < context_len; ++j) {
          row[j] = std::exp(row[j] - max_score);
          sum += row[j];
        }
        if (sink != nullptr) sum += std::exp(*sink - max_score);
        inv_sums[g] = 1.0f / sum;
      }
      float* result = out + (t * num_heads + first_head) * head_dim;
      std::fill(result, result + heads_per_kv_head * head_dim, 0.0f);
      for_each_position([&](int64_t j, int32_t block_id, int64_t offset) {
        for (int64_t g = 0; g < heads_per_kv_head; ++g) {
          weights[g] = scores[g * context_len + j] * inv_sums[g];
        }
        kernels::AxpyF32Rows(weights.data(), heads_per_kv_head,
                             kv.value(layer, block_id, offset) + kv_head * head_dim, head_dim,
                             result);
      });
    }
  });
}

void PagedAttention(const ForwardBatch& batch, int64_t layer, const float* q, int64_t num_heads,
                    float scale, KvStorage& kv, ThreadPool& pool, float* out,
                    int64_t sliding_window) {
  PagedAttention(batch, layer, q, num_heads, {.scale = scale, .sliding_window = sliding_window}, kv,
                 pool, out);
}

}  // namespace vllm
