#include "model/layers/lora_segments.h"

#include <algorithm>

#include "kernels/lora_shrink_expand.h"

namespace vllm {

LoraSegments::LoraSegments(const ForwardBatch& batch) {
  for (size_t s = 0; s < batch.seq_loras.size(); ++s) {
    const lora::LoraWeights* adapter = batch.seq_loras[s];
    if (adapter == nullptr) continue;
    auto segment = std::find_if(segments_.begin(), segments_.end(),
                                [adapter](const Segment& g) { return g.adapter == adapter; });
    if (segment == segments_.end()) segment = segments_.insert(segments_.end(), {adapter, {}});
    for (int32_t row = batch.query_start_loc[s]; row < batch.query_start_loc[s + 1]; ++row) {
      segment->rows.push_back(row);
    }
  }
}

bool LoraSegments::Targets(int64_t layer, lora::LoraTarget target) const {
  return std::any_of(segments_.begin(), segments_.end(), [&](const Segment& segment) {
    return segment.adapter->layers[layer].targets[static_cast<int>(target)].has_value();
  });
}

void LoraSegments::Apply(int64_t layer, lora::LoraTarget target, int64_t row_begin, int64_t row_end,
                         const float* x, int64_t x_stride, float* y, int64_t y_stride,
                         ThreadPool& pool) const {
  std::vector<std::vector<int32_t>> window_rows;  // each segment's rows in the window, shifted
  window_rows.reserve(segments_.size());
  std::vector<kernels::LoraSegment> jobs;
  kernels::LoraProductShape shape{.x_stride = x_stride, .y_stride = y_stride};
  for (const Segment& segment : segments_) {
    const std::optional<lora::LoraMatrices>& matrices =
        segment.adapter->layers[layer].targets[static_cast<int>(target)];
    if (!matrices) continue;
    std::vector<int32_t>& rows = window_rows.emplace_back();
    for (int32_t row : segment.rows) {
      if (row >= row_begin && row < row_end) rows.push_back(static_cast<int32_t>(row - row_begin));
    }
    if (rows.empty()) continue;
    // Every adapter of a target has the base weight's shape (LoraFitsModel).
    shape.in_features = matrices->in_features;
    shape.out_features = matrices->out_features;
    if (matrices->dtype == lora::LoraDtype::kBfloat16) {
      jobs.push_back({matrices->a_bf16.data(), matrices->b_bf16.data(), matrices->rank, rows,
                      kernels::LoraWeightType::kBf16});
    } else {
      jobs.push_back({matrices->a.data(), matrices->b.data(), matrices->rank, rows});
    }
  }
  if (!jobs.empty()) kernels::LoraShrinkExpand(jobs, shape, x, y, pool);
}

}  // namespace vllm
