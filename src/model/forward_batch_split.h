// A ForwardBatch cut into micro-batches of consecutive token rows, for pipeline stages that work on
// one micro-batch while the next stage works on the one before (pipeline_parallel.h). A cut may
// fall inside a sequence's chunk: its first part runs as a chunk that ends at the cut, its second
// as the next chunk (its K/V written by the first part, which every stage runs first), so each
// token's attention reads the same keys as in the whole batch.
//
//   whole:  [ s0 t0 t1 t2 t3 | s1 t0 | s2 t0 t1 ]   rows 0 … 7
//   part 0: [ s0 t0 t1 t2 t3 ]                      rows 0 … 3
//   part 1: [ s1 t0 | s2 t0 t1 ]                    rows 4 … 7
#pragma once

#include <cstdint>
#include <vector>

#include "model/forward_batch.h"

namespace vllm {

struct MicroBatch {
  ForwardBatch batch;
  int64_t first_row = 0;  // the whole batch's row of batch's row 0
  // For each of batch.logits_indices, the row of the whole batch's logits it fills.
  std::vector<int32_t> logits_rows;
};

// `num_parts` (at least 1; at most the batch's tokens) micro-batches of equal token counts (the
// first ones one token more when they do not divide), in row order. Input embeddings (rows of
// `hidden_size` values, which the parts' spans view) and LoRA adapters go with their rows and
// sequences. The batch must be consistent (ValidateForwardBatch).
std::vector<MicroBatch> SplitForwardBatch(const ForwardBatch& batch, int64_t num_parts,
                                          int64_t hidden_size);

}  // namespace vllm
