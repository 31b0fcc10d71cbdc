// A forward's rows grouped by the LoRA adapter their sequence runs (punica's segments), built
// once per forward; each layer adds the product of every segment's adapter for its targets after
// its base product (kernels::LoraShrinkExpand). Rows of sequences without an adapter are never
// touched, so a batch of the base model alone computes exactly what it computes without LoRA.
//
//   seq_loras:        [ sql      | none | poet | sql ]
//   query_start_loc:  [ 0,         3,     4,     6,    7 ]
//   segments:         sql → rows {0, 1, 2, 6}, poet → rows {4, 5}
#pragma once

#include <cstdint>
#include <initializer_list>
#include <span>
#include <vector>

#include "common/thread_pool.h"
#include "lora/lora_weights.h"
#include "model/forward_batch.h"

namespace vllm {

// One target of a group that reads the same x (q, k and v; gate and up): its output rows at y,
// the target's out_features wide at y_stride.
struct LoraTargetOutput {
  lora::LoraTarget target;
  float* y;
  int64_t y_stride;
};

class LoraSegments {
 public:
  LoraSegments() = default;
  // batch.seq_loras must be empty or [num_seqs] (ValidateForwardBatch).
  explicit LoraSegments(const ForwardBatch& batch);

  bool empty() const { return segments_.empty(); }
  // Whether some adapter of the batch targets `target` in `layer`.
  bool Targets(int64_t layer, lora::LoraTarget target) const;
  // For the batch rows [row_begin, row_end): y[r] += (x[r] · Aᵀ) · Bᵀ with the (A, B) of
  // `target` in `layer` of row r's adapter, where it has one. x and y point at row row_begin;
  // x's rows are the target's in_features wide at x_stride, y's out_features at y_stride.
  void Apply(int64_t layer, lora::LoraTarget target, int64_t row_begin, int64_t row_end,
             const float* x, int64_t x_stride, float* y, int64_t y_stride, ThreadPool& pool) const;
  // Apply for every target of `outputs`, which all read x, in one pool call.
  void Apply(int64_t layer, std::span<const LoraTargetOutput> outputs, int64_t row_begin,
             int64_t row_end, const float* x, int64_t x_stride, ThreadPool& pool) const;

 private:
  struct Segment {
    const lora::LoraWeights* adapter;
    std::vector<int32_t> rows;  // ascending batch rows
  };
  std::vector<Segment> segments_;
};

// What a layer's Forward takes: the batch's segments (null: no adapter in the batch) and the
// layer's index in the model.
struct LayerLora {
  const LoraSegments* segments = nullptr;
  int64_t layer = 0;

  bool Targets(lora::LoraTarget target) const {
    return segments != nullptr && segments->Targets(layer, target);
  }
  // LoraSegments::Apply for this layer over rows [row_begin, row_end); nothing without segments.
  void Apply(lora::LoraTarget target, int64_t row_begin, int64_t row_end, const float* x,
             int64_t x_stride, float* y, int64_t y_stride, ThreadPool& pool) const {
    if (segments != nullptr) {
      segments->Apply(layer, target, row_begin, row_end, x, x_stride, y, y_stride, pool);
    }
  }
  // The same for several targets that read x (LoraSegments::Apply's group form).
  void Apply(std::initializer_list<LoraTargetOutput> outputs, int64_t row_begin, int64_t row_end,
             const float* x, int64_t x_stride, ThreadPool& pool) const {
    if (segments != nullptr) {
      segments->Apply(layer, std::span(outputs.begin(), outputs.size()), row_begin, row_end, x,
                      x_stride, pool);
    }
  }
};

}  // namespace vllm
