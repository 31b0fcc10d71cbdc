// One flat batch for a model forward: several sequences, each contributing a chunk of new tokens
// (a prefill chunk or a single decode token), laid out back to back.
//
//   tokens:           [ s0 t0 t1 t2 | s1 t0 | s2 t0 t1 ]      num_tokens = 6
//   query_start_loc:  [ 0,            3,      4,       6 ]    num_seqs + 1
//   positions:        position of each token within its sequence (its absolute index)
//   seq_lens:         context length of each sequence after this step (cached + new tokens)
//   kv_groups:        per KV cache group (kv_cache_layout.h), where its layers' K/V lives:
//     slot_mapping:   where each token's K/V is written: block_id * block_size + offset
//     block_tables:   per sequence, the KV block ids covering positions [0, seq_len); in a
//                     sliding group, entries before the window hold the null block
//
// Token i of a sequence attends to positions [0, positions[i]] of that sequence (the last W of
// them in a sliding-window layer), read through the tables of its layer's group.
#pragma once

#include <cstdint>
#include <span>
#include <vector>

#include "common/expected.h"
#include "lora/lora_weights.h"
#include "model/kv_storage.h"
#include "model/model_config.h"

namespace vllm {

struct KvGroupTables {
  std::vector<int64_t> slot_mapping;               // [num_tokens]
  std::vector<std::vector<int32_t>> block_tables;  // [num_seqs][ceil(seq_len / block_size)]
};

// Batch rows whose input embedding is given instead of looked up from token_ids (vLLM's prompt
// embeddings); their token ids are placeholders.
struct InputEmbedsRows {
  int32_t first_row = 0;          // the batch row of values' first row
  std::span<const float> values;  // [num_rows, hidden_size]; must outlive the forward
};

struct ForwardBatch {
  std::vector<int32_t> token_ids;        // [num_tokens]
  std::vector<int32_t> positions;        // [num_tokens]
  std::vector<int32_t> query_start_loc;  // [num_seqs + 1]
  std::vector<int32_t> seq_lens;         // [num_seqs]
  std::vector<KvGroupTables> kv_groups;  // [num_groups]
  std::vector<int32_t> logits_indices;   // token rows whose logits are wanted, in output order
  std::vector<int32_t> token_type_ids;   // [num_tokens] segment ids (encoders); empty: all 0
  // Given input embeddings; only for models that accept_input_embeds().
  std::vector<InputEmbedsRows> input_embeds;
  // The LoRA adapter each sequence runs, kept alive by the caller through the forward
  // ([num_seqs], null: the base model); empty: no sequence runs one.
  std::vector<const lora::LoraWeights*> seq_loras;

  int64_t num_tokens() const { return static_cast<int64_t>(token_ids.size()); }
  int64_t num_seqs() const { return static_cast<int64_t>(seq_lens.size()); }
};

// Appends a sequence whose `new_token_ids` sit at positions [num_computed_tokens,
// num_computed_tokens + new_token_ids.size()), with its block table in each KV cache group
// (block_tables: [num_groups][>= ceil(seq_len / block_size)]): its tokens, positions, slots and
// tables. Leaves logits_indices to the caller. Errors when a table does not cover the tokens or
// the number of groups differs from the sequences already in the batch.
Status AppendSequence(std::span<const int32_t> new_token_ids, int32_t num_computed_tokens,
                      std::span<const std::vector<int32_t>> block_tables, int64_t block_size,
                      ForwardBatch& batch);

// Checks that a batch is consistent with itself and with the storage: sizes agree, every token's
// position lies inside its sequence, and in every KV cache group of the storage's layout every
// block id is inside the storage and every slot agrees with the block table. The null block may
// appear only in a sliding group, before the window of each of the sequence's tokens.
Status ValidateForwardBatch(const ForwardBatch& batch, const KvStorage& kv);
// The same, plus what a model's forward needs of them: every token id inside the vocabulary, the
// input embeddings' rows inside the batch and hidden_size wide, every LoRA adapter shaped for the
// model's layers (LoraFitsModel), the
// storage shaped for the model's layers and KV heads, and every sliding-window layer in a group
// whose window covers the layer's (a group frees the blocks that leave its window).
Status ValidateForwardBatch(const ForwardBatch& batch, const KvStorage& kv,
                            const ModelConfig& config);

// Whether an adapter fits the model: one layer per model layer, each matrix of a target shaped as
// that target's base weight ([rank, in] and [out, rank] for q, k, v, o, gate, up, down of a dense
// decoder; MoE layers take no gate / up / down adapter). The error names the layer and target.
Status LoraFitsModel(const lora::LoraWeights& adapter, const ModelConfig& config);

}  // namespace vllm
