#include "model/layers/paged_attention.h"

#include <algorithm>
#include <cmath>
#include <vector>

#include "kernels/ops.h"

namespace vllm {
namespace {

// Query tokens of one sequence that share the loads of each key tile (and, on AMX, each span's
// values laid out as tiles: with 8 query heads per KV head, as TinyLlama, 64 tokens make 32 groups
// of 16 rows per layout; its pp8192 +5 % over 16 tokens).
constexpr int64_t kTileTokens = 64;

// One thread's buffers, grown to the largest tile seen and reused by every call after it.
struct AttentionScratch {
  std::vector<float> q;            // [rows, head_dim]: the tile's queries, row = token · G + head
  std::vector<uint16_t> q_bf16;    // [rows rounded up to 16, head_dim]: QueriesToBf16's layout
  std::vector<float> row_max;      // [rows]
  std::vector<float> row_sum;      // [rows]
  std::vector<float> acc;          // AttentionAccFloats(rows, head_dim)
  std::vector<float> tile;         // AttentionSpanScratchFloats(head_dim)
  std::vector<int32_t> first_key;  // [rows]
  std::vector<int32_t> last_key;   // [rows]
  std::vector<float> factor;       // [rows]: 1 / the softmax's denominator
  std::vector<float*> out_rows;    // [rows]: where each row's result goes

  // Makes room for a tile of num_rows query rows; allocates only when a tile is the largest yet.
  void Reserve(int64_t num_rows, int64_t head_dim) {
    auto grow = [](auto& buffer, int64_t size) {
      if (static_cast<int64_t>(buffer.size()) < size) buffer.resize(size);
    };
    grow(q, num_rows * head_dim);
    grow(q_bf16, (num_rows + 15) / 16 * 16 * head_dim);
    grow(row_max, num_rows);
    grow(row_sum, num_rows);
    grow(acc, kernels::AttentionAccFloats(num_rows, head_dim));
    grow(tile, kernels::AttentionSpanScratchFloats(head_dim));
    grow(first_key, num_rows);
    grow(last_key, num_rows);
    grow(factor, num_rows);
    grow(out_rows, num_rows);
  }
};

thread_local AttentionScratch scratch_of_thread;

// Work items: (sequence, query tile, KV head), numbered sequence by sequence.
// items_before[s]: items of the sequences before s; [num_seqs + 1].
thread_local std::vector<int64_t> items_before;

int64_t NumQueryTiles(const ForwardBatch& batch, int64_t s) {
  return (batch.query_start_loc[s + 1] - batch.query_start_loc[s] + kTileTokens - 1) / kTileTokens;
}

}  // namespace

void WriteKv(const ForwardBatch& batch, int64_t layer, const float* k, const float* v,
             KvStorage& kv) {
  WriteKv(batch, layer, 0, batch.num_tokens(), k, v, kv);
}

void WriteKv(const ForwardBatch& batch, int64_t layer, int64_t begin, int64_t end, const float* k,
             const float* v, KvStorage& kv) {
  const int64_t row_size = kv.row_size();
  const std::vector<int64_t>& slot_mapping =
      batch.kv_groups[kv.layout().group_of_layer[layer]].slot_mapping;
  for (int64_t t = begin; t < end; ++t) {
    kv.Write(layer, slot_mapping[t], k + t * row_size, v + t * row_size);
  }
}

namespace {

// One work item: the query tokens [begin, begin + num_tokens) of sequence `seq` with the query
// heads of KV head `kv_head`, and the key tiles [first_tile, last_tile] its rows see.
struct WorkItem {
  int64_t seq, kv_head, begin, num_tokens;
  int64_t first_tile, last_tile;
};

// One PagedAttention call: its inputs and the shapes every work item shares.
struct AttentionCall {
  const ForwardBatch& batch;
  int64_t layer;
  const float* q;  // [num_tokens, num_heads, head_dim]
  int64_t num_heads;
  const AttentionOptions& options;
  const KvStorage& kv;
  float* out;  // [num_tokens, num_heads, head_dim]
  int64_t head_dim, block_size, num_kv_heads, heads_per_kv_head;
  const std::vector<std::vector<int32_t>>& block_tables;  // the layer's group's
  const std::vector<int64_t>& item_offsets;               // items_before of this call

  // Tile t of a sequence: block t / tiles_per_block, keys from kAttentionTileKeys · (t mod
  // tiles_per_block) on; spans take kAttentionSpanTiles tiles each, counted from position 0.
  static constexpr int64_t kTileKeys = kernels::kAttentionTileKeys;
  static constexpr int64_t kSpanTiles = kernels::kAttentionSpanTiles;
  int64_t TilesPerBlock() const { return (block_size + kTileKeys - 1) / kTileKeys; }
  int64_t TileOf(int64_t position) const {
    return position / block_size * TilesPerBlock() + position % block_size / kTileKeys;
  }
  int64_t TilePosition(int64_t tile) const {
    return tile / TilesPerBlock() * block_size + tile % TilesPerBlock() * kTileKeys;
  }
  // The first position token t sees (its window's, so a sliding group's null blocks, before every
  // window of the batch, are never read).
  int64_t FirstPosition(int64_t t) const {
    return options.sliding_window > 0
               ? std::max<int64_t>(0, batch.positions[t] - options.sliding_window + 1)
               : int64_t{0};
  }

  WorkItem Locate(int64_t item) const;
  // The first tile of the item's first span.
  static int64_t FirstSpanTile(const WorkItem& item) {
    return item.first_tile / kSpanTiles * kSpanTiles;
  }
  // The stored rows of the item's tiles in [span_tile, span_tile + kSpanTiles), by slot.
  kernels::KvPrefetch SpanRows(const WorkItem& item, int64_t span_tile) const;
  // Attends `item`, asking for the first span of `next` (null: none) during its last span.
  void Attend(const WorkItem& item, const WorkItem* next, AttentionScratch& scratch) const;
  // softmax · V = acc / row_sum for the tile's rows (a sink joins the denominator at its own
  // max), into `out`; acc in the tile layout (AttentionAccOffset) where tile_layout.
  void WriteRows(int64_t begin, int64_t num_rows, int64_t first_head, bool tile_layout,
                 AttentionScratch& scratch) const;
};

WorkItem AttentionCall::Locate(int64_t item) const {
  const int64_t s =
      std::upper_bound(item_offsets.begin(), item_offsets.end(), item) - item_offsets.begin() - 1;
  const int64_t index_in_seq = item - item_offsets[s];
  const int64_t begin = batch.query_start_loc[s] + index_in_seq / num_kv_heads * kTileTokens;
  const int64_t num_tokens = std::min<int64_t>(kTileTokens, batch.query_start_loc[s + 1] - begin);
  int64_t lowest = batch.positions[begin], highest = batch.positions[begin];
  for (int64_t t = begin; t < begin + num_tokens; ++t) {
    lowest = std::min(lowest, FirstPosition(t));
    highest = std::max<int64_t>(highest, batch.positions[t]);
  }
  return {.seq = s,
          .kv_head = index_in_seq % num_kv_heads,
          .begin = begin,
          .num_tokens = num_tokens,
          .first_tile = TileOf(lowest),
          .last_tile = TileOf(highest)};
}

kernels::KvPrefetch AttentionCall::SpanRows(const WorkItem& item, int64_t span_tile) const {
  kernels::KvPrefetch rows;
  const std::vector<int32_t>& table = block_tables[item.seq];
  for (int64_t slot = 0; slot < kSpanTiles; ++slot) {
    const int64_t tile = span_tile + slot;
    if (tile < item.first_tile || tile > item.last_tile) continue;
    const int64_t block = tile / TilesPerBlock();
    const int64_t offset = tile % TilesPerBlock() * kTileKeys;
    rows.keys[slot] = kv.keys(layer, table[block], offset, item.kv_head);
    rows.values[slot] = kv.values(layer, table[block], offset, item.kv_head);
    rows.num_keys[slot] = static_cast<int32_t>(std::min(kTileKeys, block_size - offset));
  }
  return rows;
}

// Each item attends the tokens [begin, end) of one sequence (at most kTileTokens of them) with
// the G = num_heads / num_kv_heads query heads of one KV head, as rows token · G + head of one
// tile: spans of kAttentionSpanTiles key tiles (each of up to kAttentionTileKeys positions of one
// block) go by in position order, from the first tile any row sees to the last, and each row
// folds in exactly the keys its own range [first position, position] touches, in spans and slots
// fixed by the keys' positions. A row's arithmetic therefore depends only on its query, its
// position and the keys: the same alone (decode), in any tile and any batch. Each span asks for
// the next one's keys and values while it computes (decode is bound by these reads).
//
//   keys:  | block b0 | block b1 | block b2 | ...    (block_size positions each, via the table)
//   row of token at position p (window W):  sees [max(0, p - W + 1), p]
void AttentionCall::Attend(const WorkItem& item, const WorkItem* next,
                           AttentionScratch& scratch) const {
  const int64_t num_rows = item.num_tokens * heads_per_kv_head;
  const int64_t first_head = item.kv_head * heads_per_kv_head;
  scratch.Reserve(num_rows, head_dim);
  for (int64_t i = 0; i < item.num_tokens; ++i) {
    std::copy_n(q + ((item.begin + i) * num_heads + first_head) * head_dim,
                heads_per_kv_head * head_dim, scratch.q.data() + i * heads_per_kv_head * head_dim);
  }
  const bool bf16_queries = kernels::AttentionTakesBf16Queries(kv.dtype(), head_dim);
  if (bf16_queries) {
    kernels::QueriesToBf16(scratch.q.data(), num_rows, head_dim, scratch.q_bf16.data());
  }
  std::fill_n(scratch.row_max.data(), num_rows, -INFINITY);
  std::fill_n(scratch.row_sum.data(), num_rows, 0.0f);
  std::fill_n(scratch.acc.data(), kernels::AttentionAccFloats(num_rows, head_dim), 0.0f);
  const kernels::AttentionState state = {.row_max = scratch.row_max.data(),
                                         .row_sum = scratch.row_sum.data(),
                                         .acc = scratch.acc.data()};
  const int64_t first_span_tile = FirstSpanTile(item);
  kernels::KvPrefetch rows = SpanRows(item, first_span_tile);
  for (int64_t span_tile = first_span_tile; span_tile <= item.last_tile; span_tile += kSpanTiles) {
    const int64_t span_position = TilePosition(span_tile);
    const int64_t span_keys = TilePosition(span_tile + kSpanTiles) - span_position;
    kernels::AttentionSpan span = {.q = scratch.q.data(),
                                   .q_bf16 = bf16_queries ? scratch.q_bf16.data() : nullptr,
                                   .num_rows = num_rows,
                                   .head_dim = head_dim,
                                   .scale = options.scale,
                                   .logit_softcap = options.logit_softcap};
    for (int64_t slot = 0; slot < kSpanTiles; ++slot) {
      span.key_offset[slot] = static_cast<int32_t>(TilePosition(span_tile + slot) - span_position);
      span.keys[slot] = rows.keys[slot];
      span.values[slot] = rows.values[slot];
      span.tile_keys[slot] = rows.num_keys[slot];
    }
    const bool last_span = span_tile + kSpanTiles > item.last_tile;
    if (!last_span) {
      span.next = SpanRows(item, span_tile + kSpanTiles);
    } else if (next != nullptr) {
      span.next = SpanRows(*next, FirstSpanTile(*next));
    }
    rows = span.next;
    for (int64_t i = 0; i < item.num_tokens; ++i) {
      const int64_t t = item.begin + i;
      const auto first =
          static_cast<int32_t>(std::clamp<int64_t>(FirstPosition(t) - span_position, 0, span_keys));
      const auto last = static_cast<int32_t>(
          std::clamp<int64_t>(batch.positions[t] - span_position, -1, span_keys - 1));
      std::fill_n(scratch.first_key.data() + i * heads_per_kv_head, heads_per_kv_head, first);
      std::fill_n(scratch.last_key.data() + i * heads_per_kv_head, heads_per_kv_head, last);
    }
    span.first_key = scratch.first_key.data();
    span.last_key = scratch.last_key.data();
    kernels::AttendSpan(span, state, scratch.tile.data());
  }
  WriteRows(item.begin, num_rows, first_head, bf16_queries, scratch);
}

void AttentionCall::WriteRows(int64_t begin, int64_t num_rows, int64_t first_head, bool tile_layout,
                              AttentionScratch& scratch) const {
  for (int64_t r = 0; r < num_rows; ++r) {
    const int64_t i = r / heads_per_kv_head;
    const int64_t head = first_head + r % heads_per_kv_head;
    float factor = 1.0f / scratch.row_sum[r];
    if (options.sinks != nullptr) {
      const float sink = options.sinks[head];
      const float max = std::max(scratch.row_max[r], sink);
      const float rescale = std::exp(scratch.row_max[r] - max);
      factor = rescale / (scratch.row_sum[r] * rescale + std::exp(sink - max));
    }
    scratch.factor[r] = factor;
    scratch.out_rows[r] = out + ((begin + i) * num_heads + head) * head_dim;
  }
  kernels::ScaleAccRows(scratch.acc.data(), tile_layout, num_rows, head_dim, scratch.factor.data(),
                        scratch.out_rows.data());
}

}  // namespace

void PagedAttention(const ForwardBatch& batch, int64_t layer, const float* q, int64_t num_heads,
                    const AttentionOptions& options, KvStorage& kv, ThreadPool& pool, float* out) {
  const int64_t num_kv_heads = kv.options().num_kv_heads;
  items_before.resize(batch.num_seqs() + 1);
  items_before[0] = 0;
  for (int64_t s = 0; s < batch.num_seqs(); ++s) {
    items_before[s + 1] = items_before[s] + NumQueryTiles(batch, s) * num_kv_heads;
  }
  const AttentionCall call{
      .batch = batch,
      .layer = layer,
      .q = q,
      .num_heads = num_heads,
      .options = options,
      .kv = kv,
      .out = out,
      .head_dim = kv.options().head_dim,
      .block_size = kv.options().block_size,
      .num_kv_heads = num_kv_heads,
      .heads_per_kv_head = num_heads / num_kv_heads,
      .block_tables = batch.kv_groups[kv.layout().group_of_layer[layer]].block_tables,
      .item_offsets = items_before,  // the caller's thread's, read by every thread
  };
  // Chunks of items claimed in turn: later query tiles of a prompt cost more (causal), and a
  // thread that falls behind takes fewer. What an item computes does not depend on who runs it.
  pool.ParallelForChunks(call.item_offsets.back(), 8, [&](int64_t begin, int64_t end) {
    // Each item asks for the next one's first span during its last; the first item's, at once.
    WorkItem item = call.Locate(begin);
    kernels::PrefetchKvRows(call.SpanRows(item, AttentionCall::FirstSpanTile(item)), call.head_dim);
    for (int64_t i = begin; i < end; ++i) {
      const WorkItem next = i + 1 < end ? call.Locate(i + 1) : WorkItem{};
      call.Attend(item, i + 1 < end ? &next : nullptr, scratch_of_thread);
      item = next;
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
