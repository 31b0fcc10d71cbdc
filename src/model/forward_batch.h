// One flat batch for a model forward: several sequences, each contributing a chunk of new tokens
// (a prefill chunk or a single decode token), laid out back to back.
//
//   tokens:           [ s0 t0 t1 t2 | s1 t0 | s2 t0 t1 ]      num_tokens = 6
//   query_start_loc:  [ 0,            3,      4,       6 ]    num_seqs + 1
//   positions:        position of each token within its sequence (its absolute index)
//   slot_mapping:     where each token's K/V is written: block_id * block_size + offset
//   seq_lens:         context length of each sequence after this step (cached + new tokens)
//   block_tables:     per sequence, the KV block ids covering positions [0, seq_len)
//
// Token i of a sequence attends to positions [0, positions[i]] of that sequence.
#pragma once

#include <cstdint>
#include <vector>

namespace vllm {

struct ForwardBatch {
  std::vector<int32_t> token_ids;                  // [num_tokens]
  std::vector<int32_t> positions;                  // [num_tokens]
  std::vector<int64_t> slot_mapping;               // [num_tokens]
  std::vector<int32_t> query_start_loc;            // [num_seqs + 1]
  std::vector<int32_t> seq_lens;                   // [num_seqs]
  std::vector<std::vector<int32_t>> block_tables;  // [num_seqs][ceil(seq_len / block_size)]
  std::vector<int32_t> logits_indices;  // token rows whose logits are wanted, in output order

  int64_t num_tokens() const { return static_cast<int64_t>(token_ids.size()); }
  int64_t num_seqs() const { return static_cast<int64_t>(seq_lens.size()); }
};

}  // namespace vllm
