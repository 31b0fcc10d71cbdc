#include "model/forward_batch_split.h"

#include <algorithm>

namespace vllm {
namespace {

// The part of `batch` over rows [begin, end).
MicroBatch PartOf(const ForwardBatch& batch, int64_t begin, int64_t end, int64_t hidden_size) {
  MicroBatch part{.first_row = begin};
  ForwardBatch& out = part.batch;
  out.token_ids.assign(batch.token_ids.begin() + begin, batch.token_ids.begin() + end);
  out.positions.assign(batch.positions.begin() + begin, batch.positions.begin() + end);
  if (!batch.token_type_ids.empty()) {
    out.token_type_ids.assign(batch.token_type_ids.begin() + begin,
                              batch.token_type_ids.begin() + end);
  }
  out.kv_groups.resize(batch.kv_groups.size());
  for (size_t g = 0; g < batch.kv_groups.size(); ++g) {
    const std::vector<int64_t>& slots = batch.kv_groups[g].slot_mapping;
    out.kv_groups[g].slot_mapping.assign(slots.begin() + begin, slots.begin() + end);
  }
  out.query_start_loc.push_back(0);
  for (int64_t s = 0; s < batch.num_seqs(); ++s) {
    const int64_t first = std::max<int64_t>(batch.query_start_loc[s], begin);
    const int64_t last = std::min<int64_t>(batch.query_start_loc[s + 1], end);  // exclusive
    if (first >= last) continue;
    out.query_start_loc.push_back(static_cast<int32_t>(last - begin));
    // A chunk cut at `last` ends there: its context is the positions up to its last token.
    out.seq_lens.push_back(batch.positions[last - 1] + 1);
    for (size_t g = 0; g < batch.kv_groups.size(); ++g) {
      out.kv_groups[g].block_tables.push_back(batch.kv_groups[g].block_tables[s]);
    }
    if (!batch.seq_loras.empty()) out.seq_loras.push_back(batch.seq_loras[s]);
  }
  for (size_t i = 0; i < batch.logits_indices.size(); ++i) {
    const int32_t row = batch.logits_indices[i];
    if (row < begin || row >= end) continue;
    out.logits_indices.push_back(static_cast<int32_t>(row - begin));
    part.logits_rows.push_back(static_cast<int32_t>(i));
  }
  for (const InputEmbedsRows& rows : batch.input_embeds) {
    const int64_t num_rows = static_cast<int64_t>(rows.values.size()) / hidden_size;
    const int64_t first = std::max<int64_t>(rows.first_row, begin);
    const int64_t last = std::min<int64_t>(rows.first_row + num_rows, end);
    if (first >= last) continue;
    out.input_embeds.push_back(
        {.first_row = static_cast<int32_t>(first - begin),
         .values = rows.values.subspan((first - rows.first_row) * hidden_size,
                                       (last - first) * hidden_size)});
  }
  return part;
}

}  // namespace

std::vector<MicroBatch> SplitForwardBatch(const ForwardBatch& batch, int64_t num_parts,
                                          int64_t hidden_size) {
  const int64_t num_tokens = batch.num_tokens();
  num_parts = std::clamp<int64_t>(num_parts, 1, std::max<int64_t>(num_tokens, 1));
  std::vector<MicroBatch> parts;
  int64_t begin = 0;
  for (int64_t p = 0; p < num_parts; ++p) {
    const int64_t end = begin + num_tokens / num_parts + (p < num_tokens % num_parts ? 1 : 0);
    parts.push_back(PartOf(batch, begin, end, hidden_size));
    begin = end;
  }
  return parts;
}

}  // namespace vllm
