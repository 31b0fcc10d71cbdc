// Pipeline parallelism of a decoder, the model side (vLLM's pipeline parallel): stage s of N holds
// a contiguous range of layers; the first stage also the token embedding, the last the final norm
// and the output head. A step's batch (which every stage gets, with the KV slots of its layers) is
// cut into micro-batches that flow through the stages, so that while stage s runs micro-batch m,
// stage s - 1 runs micro-batch m + 1:
//
//   stage 0:  embed, layers [0, L1)  ── residual [tokens, hidden] ──►  stage 1: layers [L1, L2) ──►
//   … last stage: layers [Lk, L), final norm and head ── logits of every micro-batch ──► stage 0
//
//   time ─►   stage 0 │ m0 │ m1 │    │          the empty boxes are the bubble: a stage waiting
//             stage 1 │    │ m0 │ m1 │          for its input (reported by each stage at exit)
#pragma once

#include <cstdint>
#include <string>

#include "common/expected.h"

namespace vllm {

struct PipelineStage {
  int stage = 0;  // 0 … num_stages - 1
  int num_stages = 1;
  int64_t first_layer = 0, end_layer = 0;  // the layers [first_layer, end_layer) this stage runs

  bool is_first() const { return stage == 0; }
  bool is_last() const { return stage == num_stages - 1; }
};

// Stage `stage`'s layers of `num_layers` over `num_stages` stages, by vLLM's rule: num_layers /
// num_stages each, the remainder one more each for the stages just before the last (which also
// runs the head); or the counts of `partition` when it is not empty (vLLM's
// VLLM_PP_LAYER_PARTITION, "4,4" for two stages of four layers). Errors when a stage would get no
// layer or the partition does not fit.
Expected<PipelineStage> PipelineStageOf(int64_t num_layers, int stage, int num_stages,
                                        const std::string& partition);

// The micro-batches a step of `num_tokens` is cut into over `num_stages` stages: up to four per
// stage (a bubble of (stages - 1) / (micro-batches + stages - 1) of a step), each of at least
// kMinMicroBatchTokens. A smaller step runs whole: its stages would read their weights once per
// micro-batch while they are bound by reading them (decode), and the overlap would not pay for
// that. (TinyLlama Q4_K_M, 2 stages, 2048-token steps on 2 cores: a bubble of 20 % with two
// micro-batches per stage, 9-12 % with four, no clear gain with eight.)
constexpr int64_t kMinMicroBatchTokens = 64;
int64_t NumMicroBatches(int64_t num_tokens, int num_stages);

}  // namespace vllm
