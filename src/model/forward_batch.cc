#include "model/forward_batch.h"

#include <algorithm>
#include <string>

#include "model/lora_base_shape_of.h"

namespace vllm {
namespace {

// Checks group `group`'s tables of sequence `s`, whose tokens are [begin, end) of the batch.
//
//   sliding group, W = 6, block_size 4, the sequence's first token in the batch at p = 13:
//   positions   0  1  2  3 | 4  5  6  7 | 8  9 10 11 | 12 13
//   table      [  null     |   null     |    b7      |  b2  ]    first_visible = 8 / 4 = 2
//
// Null entries are allowed before first_visible only: no token of this batch sees them.
Status ValidateSequenceInGroup(const ForwardBatch& batch, const KvStorage& kv, int32_t group,
                               int64_t s, int32_t begin, int32_t end) {
  const int64_t block_size = kv.options().block_size;
  const int64_t window = kv.layout().groups[group].sliding_window;
  const bool null_reserved = kv.layout().has_sliding_group();
  const std::vector<int32_t>& table = batch.kv_groups[group].block_tables[s];
  if (static_cast<int64_t>(table.size()) * block_size < batch.seq_lens[s]) {
    return Error{"forward batch: block table too short for seq_len"};
  }
  int64_t first_visible = 0;
  if (window > 0 && begin < end) {
    const int32_t first_position =
        *std::min_element(batch.positions.begin() + begin, batch.positions.begin() + end);
    first_visible = std::max<int64_t>(0, first_position - window + 1) / block_size;
  }
  for (int64_t b = 0; b < static_cast<int64_t>(table.size()); ++b) {
    const int32_t block_id = table[b];
    if (block_id < 0 || block_id >= kv.options().num_blocks) {
      return Error{"forward batch: block id " + std::to_string(block_id) + " out of range"};
    }
    if (null_reserved && block_id == KvStorage::kNullBlockId && b >= first_visible) {
      return Error{"forward batch: the null block in a block table entry a token sees"};
    }
  }
  for (int32_t t = begin; t < end; ++t) {
    const int32_t position = batch.positions[t];
    const int64_t expected_slot =
        int64_t{table[position / block_size]} * block_size + position % block_size;
    if (batch.kv_groups[group].slot_mapping[t] != expected_slot) {
      return Error{"forward batch: slot_mapping disagrees with the block table"};
    }
  }
  return Status::Ok();
}

}  // namespace

Status AppendSequence(std::span<const int32_t> new_token_ids, int32_t num_computed_tokens,
                      std::span<const std::vector<int32_t>> block_tables, int64_t block_size,
                      ForwardBatch& batch) {
  const auto num_new = static_cast<int32_t>(new_token_ids.size());
  const int32_t seq_len = num_computed_tokens + num_new;
  if (num_new == 0) return Error{"a sequence chunk has no tokens"};
  if (batch.num_seqs() == 0 && batch.kv_groups.empty()) batch.kv_groups.resize(block_tables.size());
  if (block_tables.size() != batch.kv_groups.size()) {
    return Error{"a sequence has " + std::to_string(block_tables.size()) +
                 " block tables; the batch has " + std::to_string(batch.kv_groups.size()) +
                 " KV cache groups"};
  }
  for (const std::vector<int32_t>& table : block_tables) {
    if (static_cast<int64_t>(table.size()) * block_size < seq_len) {
      return Error{"a sequence's block table does not cover its tokens"};
    }
  }
  if (batch.query_start_loc.empty()) batch.query_start_loc.push_back(0);
  for (int32_t position = num_computed_tokens; position < seq_len; ++position) {
    batch.token_ids.push_back(new_token_ids[position - num_computed_tokens]);
    batch.positions.push_back(position);
  }
  for (size_t g = 0; g < block_tables.size(); ++g) {
    const std::vector<int32_t>& table = block_tables[g];
    KvGroupTables& group = batch.kv_groups[g];
    for (int32_t position = num_computed_tokens; position < seq_len; ++position) {
      group.slot_mapping.push_back(int64_t{table[position / block_size]} * block_size +
                                   position % block_size);
    }
    group.block_tables.push_back(table);
  }
  batch.query_start_loc.push_back(static_cast<int32_t>(batch.token_ids.size()));
  batch.seq_lens.push_back(seq_len);
  return Status::Ok();
}

Status ValidateForwardBatch(const ForwardBatch& batch, const KvStorage& kv) {
  const int64_t num_tokens = batch.num_tokens();
  const int64_t num_seqs = batch.num_seqs();
  if (static_cast<int64_t>(batch.positions.size()) != num_tokens) {
    return Error{"forward batch: token_ids and positions differ in length"};
  }
  if (static_cast<int64_t>(batch.query_start_loc.size()) != num_seqs + 1) {
    return Error{"forward batch: query_start_loc does not match seq_lens"};
  }
  if (batch.query_start_loc.front() != 0 || batch.query_start_loc.back() != num_tokens) {
    return Error{"forward batch: query_start_loc must span [0, num_tokens]"};
  }
  if (static_cast<int64_t>(batch.kv_groups.size()) != kv.layout().num_groups()) {
    return Error{"forward batch: " + std::to_string(batch.kv_groups.size()) +
                 " KV cache groups; the KV storage has " +
                 std::to_string(kv.layout().num_groups())};
  }
  for (const KvGroupTables& group : batch.kv_groups) {
    if (static_cast<int64_t>(group.slot_mapping.size()) != num_tokens ||
        static_cast<int64_t>(group.block_tables.size()) != num_seqs) {
      return Error{
          "forward batch: a KV cache group's slot_mapping / block_tables do not match "
          "the tokens / sequences"};
    }
  }
  for (int64_t s = 0; s < num_seqs; ++s) {
    const int32_t begin = batch.query_start_loc[s];
    const int32_t end = batch.query_start_loc[s + 1];
    const int64_t seq_len = batch.seq_lens[s];
    if (end < begin || begin < 0 || end > num_tokens || seq_len <= 0) {
      return Error{"forward batch: bad sequence extent"};
    }
    for (int32_t t = begin; t < end; ++t) {
      if (batch.positions[t] < 0 || batch.positions[t] >= seq_len) {
        return Error{"forward batch: position outside its sequence"};
      }
    }
    for (int32_t g = 0; g < kv.layout().num_groups(); ++g) {
      VLLM_RETURN_IF_ERROR(ValidateSequenceInGroup(batch, kv, g, s, begin, end));
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
  for (const InputEmbedsRows& rows : batch.input_embeds) {
    const auto num_values = static_cast<int64_t>(rows.values.size());
    if (num_values % config.hidden_size != 0 || rows.first_row < 0 ||
        rows.first_row + num_values / config.hidden_size > batch.num_tokens()) {
      return Error{"forward batch: input embeddings outside the batch or not hidden_size wide"};
    }
  }
  if (!batch.seq_loras.empty() &&
      static_cast<int64_t>(batch.seq_loras.size()) != batch.num_seqs()) {
    return Error{"forward batch: seq_loras does not match seq_lens"};
  }
  for (const lora::LoraWeights* adapter : batch.seq_loras) {
    if (adapter != nullptr) VLLM_RETURN_IF_ERROR(LoraFitsModel(*adapter, config));
  }
  if (kv.options().num_kv_heads != config.num_kv_heads ||
      kv.options().head_dim != config.head_dim || kv.options().num_layers != config.num_layers) {
    return Error{"KV storage shape does not match the model"};
  }
  for (int64_t layer = 0; layer < config.num_layers; ++layer) {
    const int64_t kept = kv.layout().groups[kv.layout().group_of_layer[layer]].sliding_window;
    const int64_t seen = config.LayerSlidingWindow(layer);
    if (kept > 0 && (seen <= 0 || seen > kept)) {
      return Error{"KV storage: layer " + std::to_string(layer) + " attends past the window (" +
                   std::to_string(kept) + ") of its KV cache group"};
    }
  }
  return Status::Ok();
}

Status LoraFitsModel(const lora::LoraWeights& adapter, const ModelConfig& config) {
  using lora::LoraTarget;
  // Runs for every sequence of every step: names are built only for an error.
  auto name = [&] { return "LoRA adapter '" + adapter.name + "'"; };
  if (static_cast<int64_t>(adapter.layers.size()) != config.num_layers) {
    return Error{name() + " has " + std::to_string(adapter.layers.size()) +
                 " layers; the model has " + std::to_string(config.num_layers)};
  }
  const lora::LoraBaseShape base = LoraBaseShapeOf(config, /*gguf_file=*/false);
  for (int64_t layer = 0; layer < config.num_layers; ++layer) {
    for (int t = 0; t < lora::kNumLoraTargets; ++t) {
      const std::optional<lora::LoraMatrices>& matrices = adapter.layers[layer].targets[t];
      if (!matrices) continue;
      const auto target = static_cast<LoraTarget>(t);
      auto where = [&] {
        return name() + " layer " + std::to_string(layer) + " " +
               std::string(lora::PeftModuleName(target));
      };
      if (!base.has_target[t]) {
        return Error{where() + ": LoRA on mixture-of-experts layers is not supported"};
      }
      const lora::LoraTargetShape shape = lora::TargetShape(base, target);
      const int64_t rank = matrices->rank;
      if (rank <= 0 || matrices->in_features != shape.in_features ||
          matrices->out_features != shape.out_features ||
          matrices->num_a_values() != rank * shape.in_features ||
          matrices->num_b_values() != shape.out_features * rank) {
        return Error{where() + ": rank " + std::to_string(rank) + ", " +
                     std::to_string(matrices->out_features) + " x " +
                     std::to_string(matrices->in_features) + " does not fit the base weight's " +
                     std::to_string(shape.out_features) + " x " +
                     std::to_string(shape.in_features)};
      }
    }
  }
  return Status::Ok();
}

}  // namespace vllm
