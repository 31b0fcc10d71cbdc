// Causal grouped-query attention over paged KV storage.
#pragma once

#include <cstdint>

#include "common/expected.h"
#include "common/thread_pool.h"
#include "model/forward_batch.h"
#include "model/kv_storage.h"
#include "model/model_config.h"

namespace vllm {

// Checks that a batch is consistent with itself and with the storage: sizes agree, every token's
// position lies inside its sequence, every block id and slot is inside the storage.
Status ValidateForwardBatch(const ForwardBatch& batch, const KvStorage& kv);
// The same, plus what a model's forward needs of them: every token id inside the vocabulary and
// the storage shaped for the model's layers and KV heads.
Status ValidateForwardBatch(const ForwardBatch& batch, const KvStorage& kv,
                            const ModelConfig& config);

// Writes the batch's K and V rows into their slots.
// k, v: [num_tokens, num_kv_heads, head_dim]
void WriteKv(const ForwardBatch& batch, int64_t layer, const float* k, const float* v,
             KvStorage& kv);

// out: [num_tokens, num_heads, head_dim] = softmax(q·Kᵀ · scale) · V per head, where token t of
// sequence s sees positions [0, positions[t]] of s, read through s's block table; with a
// sliding_window W > 0 only the last W of them, [max(0, positions[t] - W + 1), positions[t]].
// Query head h uses KV head h / (num_heads / num_kv_heads). Each (token, head) is computed
// independently of the rest of the batch.
// q: [num_tokens, num_heads, head_dim]
void PagedAttention(const ForwardBatch& batch, int64_t layer, const float* q, int64_t num_heads,
                    float scale, KvStorage& kv, ThreadPool& pool, float* out,
                    int64_t sliding_window = 0);

}  // namespace vllm
