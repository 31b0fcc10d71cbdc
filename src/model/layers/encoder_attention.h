// Bidirectional attention over a packed batch of encoder sequences: every token attends to every
// token of its own sequence, none of another's. No KV cache: K and V are this pass's projections.
//
//   tokens:           [ s0 t0 t1 t2 | s1 t0 t1 ]
//   query_start_loc:  [ 0,            3,        5 ]
//   token t0 of s1 sees keys 3 and 4; token t2 of s0 sees keys 0, 1 and 2.
#pragma once

#include <cstdint>
#include <span>

#include "common/thread_pool.h"

namespace vllm {

struct EncoderAttentionShape {
  int64_t num_heads = 0;
  int64_t num_kv_heads = 0;  // query head h reads KV head h / (num_heads / num_kv_heads)
  int64_t head_dim = 0;
  float scale = 1.0f;  // multiplies q·k
  // W > 0: token t sees only the keys j of its sequence with |t - j| <= W (the symmetric
  // sliding window of bidirectional decoders, EmbeddingGemma); 0: all of them.
  int64_t window = 0;
};

// out[t, h] = Σ_j softmax_j(q[t, h]·k[j, h'] · scale) v[j, h'] over the tokens j of t's sequence,
// in f32: over all of the sequence's keys at once (kernels::AttendAllKeys) where the CPU has a
// vector path for head_dim, else online over key tiles in position order (kernels::AttendTile).
// Either way a token's result depends only on its own sequence, whatever else the batch holds.
// query_start_loc: [num_seqs + 1]; q, out: [num_tokens, num_heads, head_dim];
// k, v: [num_tokens, num_kv_heads, head_dim]
void EncoderAttention(std::span<const int32_t> query_start_loc, const float* q, const float* k,
                      const float* v, const EncoderAttentionShape& shape, ThreadPool& pool,
                      float* out);

}  // namespace vllm
