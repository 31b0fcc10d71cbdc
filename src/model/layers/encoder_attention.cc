#include "model/layers/encoder_attention.h"

#include <algorithm>
#include <cmath>
#include <vector>

#include "kernels/ops.h"

namespace vllm {
namespace {

// Query tokens of one sequence that share the loads of each key tile: a whole 128-token
// sequence, so that each key tile is converted once per KV head rather than once per 16 queries.
constexpr int64_t kQueryTileTokens = 128;

int64_t NumQueryTiles(std::span<const int32_t> query_start_loc, int64_t s) {
  return (query_start_loc[s + 1] - query_start_loc[s] + kQueryTileTokens - 1) / kQueryTileTokens;
}

// Each item is one (sequence, query head): kernels::AttendAllKeys over the whole sequence.
void DenseEncoderAttention(std::span<const int32_t> query_start_loc, const float* q, const float* k,
                           const float* v, const EncoderAttentionShape& shape, ThreadPool& pool,
                           float* out) {
  const int64_t num_seqs = static_cast<int64_t>(query_start_loc.size()) - 1;
  const int64_t head_dim = shape.head_dim;
  const int64_t heads_per_kv_head = shape.num_heads / shape.num_kv_heads;
  const int64_t q_width = shape.num_heads * head_dim;
  const int64_t kv_width = shape.num_kv_heads * head_dim;
  int64_t longest = 0;
  for (int64_t s = 0; s < num_seqs; ++s) {
    longest = std::max<int64_t>(longest, query_start_loc[s + 1] - query_start_loc[s]);
  }
  pool.ParallelForChunks(num_seqs * shape.num_heads, 8, [&](int64_t first, int64_t end) {
    std::vector<float> scratch(kernels::DenseAttentionScratchFloats(longest, head_dim));
    for (int64_t item = first; item < end; ++item) {
      const int64_t s = item / shape.num_heads;
      const int64_t head = item % shape.num_heads;
      const int64_t begin = query_start_loc[s];
      const int64_t seq_len = query_start_loc[s + 1] - begin;
      const int64_t kv_offset = begin * kv_width + head / heads_per_kv_head * head_dim;
      kernels::AttendAllKeys({.q = q + begin * q_width + head * head_dim,
                              .q_row_stride = q_width,
                              .num_rows = seq_len,
                              .k = k + kv_offset,
                              .v = v + kv_offset,
                              .kv_row_stride = kv_width,
                              .num_keys = seq_len,
                              .head_dim = head_dim,
                              .scale = shape.scale,
                              .out = out + begin * q_width + head * head_dim,
                              .out_row_stride = q_width},
                             scratch.data());
    }
  });
}

// Each item is one (sequence, query tile, KV head): its rows are token · G + head for the
// G = num_heads / num_kv_heads query heads of the KV head, and every key tile of the sequence
// folds into every row, in position order.
void TiledEncoderAttention(std::span<const int32_t> query_start_loc, const float* q, const float* k,
                           const float* v, const EncoderAttentionShape& shape, ThreadPool& pool,
                           float* out) {
  const int64_t num_seqs = static_cast<int64_t>(query_start_loc.size()) - 1;
  const int64_t head_dim = shape.head_dim;
  const int64_t num_kv_heads = shape.num_kv_heads;
  const int64_t heads_per_kv_head = shape.num_heads / num_kv_heads;
  const int64_t kv_width = num_kv_heads * head_dim;
  const int64_t acc_stride = kernels::AttentionAccStride(head_dim);
  std::vector<int64_t> items_before(num_seqs + 1, 0);  // [num_seqs + 1]
  for (int64_t s = 0; s < num_seqs; ++s) {
    items_before[s + 1] = items_before[s] + NumQueryTiles(query_start_loc, s) * num_kv_heads;
  }

  auto attend_item = [&](int64_t item) {
    const int64_t s =
        std::upper_bound(items_before.begin(), items_before.end(), item) - items_before.begin() - 1;
    const int64_t index_in_seq = item - items_before[s];
    const int64_t kv_head = index_in_seq % num_kv_heads;
    const int64_t seq_begin = query_start_loc[s];
    const int64_t seq_len = query_start_loc[s + 1] - seq_begin;
    const int64_t begin = seq_begin + index_in_seq / num_kv_heads * kQueryTileTokens;
    const int64_t num_tile_tokens =
        std::min<int64_t>(kQueryTileTokens, query_start_loc[s + 1] - begin);
    const int64_t num_rows = num_tile_tokens * heads_per_kv_head;
    const int64_t first_head = kv_head * heads_per_kv_head;

    std::vector<float> queries(num_rows * head_dim);  // [num_rows, head_dim]
    for (int64_t i = 0; i < num_tile_tokens; ++i) {
      std::copy_n(q + ((begin + i) * shape.num_heads + first_head) * head_dim,
                  heads_per_kv_head * head_dim, queries.data() + i * heads_per_kv_head * head_dim);
    }
    std::vector<float> row_max(num_rows, -INFINITY), row_sum(num_rows, 0.0f);
    std::vector<float> acc(num_rows * acc_stride, 0.0f);
    std::vector<float> tile_scratch(kernels::AttentionTileScratchFloats(head_dim));
    std::vector<int32_t> first_key(num_rows, 0), last_key(num_rows);
    const kernels::AttentionState state = {
        .row_max = row_max.data(), .row_sum = row_sum.data(), .acc = acc.data()};
    for (int64_t key = 0; key < seq_len; key += kernels::kAttentionTileKeys) {
      const int64_t num_keys = std::min<int64_t>(kernels::kAttentionTileKeys, seq_len - key);
      std::fill(last_key.begin(), last_key.end(), static_cast<int32_t>(num_keys - 1));
      if (shape.window > 0) {  // row r (token position p) sees tile keys [p - W, p + W]
        const int64_t tile_first = begin - seq_begin;  // the query tile's first position
        if (key > tile_first + num_tile_tokens - 1 + shape.window ||
            key + num_keys - 1 < tile_first - shape.window) {
          continue;  // no row sees this key tile
        }
        for (int64_t r = 0; r < num_rows; ++r) {
          const int64_t position = tile_first + r / heads_per_kv_head;
          first_key[r] =
              static_cast<int32_t>(std::clamp<int64_t>(position - shape.window - key, 0, num_keys));
          last_key[r] = static_cast<int32_t>(
              std::clamp<int64_t>(position + shape.window - key, -1, num_keys - 1));
        }
      }
      const int64_t row_offset = (seq_begin + key) * kv_width + kv_head * head_dim;
      const kernels::KvRows keys = {.data = reinterpret_cast<const uint8_t*>(k + row_offset),
                                    .row_stride_bytes = kv_width * int64_t{sizeof(float)}};
      const kernels::KvRows values = {.data = reinterpret_cast<const uint8_t*>(v + row_offset),
                                      .row_stride_bytes = kv_width * int64_t{sizeof(float)}};
      kernels::AttendTile({.q = queries.data(),
                           .num_rows = num_rows,
                           .head_dim = head_dim,
                           .keys = keys,
                           .values = values,
                           .first_key = first_key.data(),
                           .last_key = last_key.data(),
                           .scale = shape.scale},
                          state, tile_scratch.data());
    }
    for (int64_t r = 0; r < num_rows; ++r) {
      const int64_t token = begin + r / heads_per_kv_head;
      const int64_t head = first_head + r % heads_per_kv_head;
      const float inv_sum = 1.0f / row_sum[r];
      const float* row_acc = acc.data() + r * acc_stride;
      float* result = out + (token * shape.num_heads + head) * head_dim;
      for (int64_t d = 0; d < head_dim; ++d) result[d] = row_acc[d] * inv_sum;
    }
  };
  pool.ParallelForChunks(items_before.back(), 8, [&](int64_t first, int64_t end) {
    for (int64_t item = first; item < end; ++item) attend_item(item);
  });
}

}  // namespace

void EncoderAttention(std::span<const int32_t> query_start_loc, const float* q, const float* k,
                      const float* v, const EncoderAttentionShape& shape, ThreadPool& pool,
                      float* out) {
  if (shape.window == 0 && kernels::HasVectorDenseAttention(shape.head_dim)) {
    DenseEncoderAttention(query_start_loc, q, k, v, shape, pool, out);
  } else {
    TiledEncoderAttention(query_start_loc, q, k, v, shape, pool, out);
  }
}

}  // namespace vllm
