// Causal grouped-query attention over paged KV storage.
#pragma once

#include <cstdint>

#include "common/thread_pool.h"
#include "model/forward_batch.h"
#include "model/kv_storage.h"

namespace vllm {

// Writes the batch's K and V rows of `layer` into their slots in the layer's KV cache group, in
// the storage's dtype: all of them, or those of tokens [begin, end) (calls for disjoint ranges may
// run at once).
// k, v: [num_tokens, num_kv_heads, head_dim]
void WriteKv(const ForwardBatch& batch, int64_t layer, const float* k, const float* v,
             KvStorage& kv);
void WriteKv(const ForwardBatch& batch, int64_t layer, int64_t begin, int64_t end, const float* k,
             const float* v, KvStorage& kv);

// What PagedAttention computes from q·k, besides the causal mask.
struct AttentionOptions {
  float scale = 1.0f;          // multiplies q·k
  int64_t sliding_window = 0;  // W > 0: a token sees only the last W positions; 0: all of them
  float logit_softcap = 0.0f;  // C > 0: a logit s becomes C·tanh(s / C) (Gemma 2); 0: none
  // [num_heads] per-head sink logits (gpt-oss), or nullptr: each joins its head's softmax
  // denominator with no value row; neither scaled nor soft-capped.
  const float* sinks = nullptr;
};

// out: [num_tokens, num_heads, head_dim], for token t of sequence s and query head h:
//   s_j = q·k_j · scale, then s_j = C·tanh(s_j / C) if logit_softcap C > 0, over the positions j t
//   sees: [0, positions[t]] of s; with a sliding_window W > 0 only the last W of them,
//   [max(0, positions[t] - W + 1), positions[t]], and no other position is read. Keys and values
//   are read through s's block table in the layer's KV cache group, whose window must cover W
//   (ValidateForwardBatch checks it);
//   out = Σ_j exp(s_j - m) v_j / (Σ_j exp(s_j - m) + exp(sink_h - m)), m = max(max_j s_j, sink_h),
//   where the sink terms are left out without sinks (plain softmax).
// Query head h uses KV head h / (num_heads / num_kv_heads). K and V are read in the storage's
// dtype and converted to f32 once per key tile; the softmax runs online over key tiles in
// position order with f32 accumulation (kernels::AttendTile). Each (token, head) is computed
// the same whatever else the batch holds, bit for bit.
// q: [num_tokens, num_heads, head_dim]
void PagedAttention(const ForwardBatch& batch, int64_t layer, const float* q, int64_t num_heads,
                    const AttentionOptions& options, KvStorage& kv, ThreadPool& pool, float* out);

// The same with options {.scale = scale, .sliding_window = sliding_window}.
void PagedAttention(const ForwardBatch& batch, int64_t layer, const float* q, int64_t num_heads,
                    float scale, KvStorage& kv, ThreadPool& pool, float* out,
                    int64_t sliding_window = 0);

}  // namespace vllm
