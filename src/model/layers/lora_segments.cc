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
  const LoraTargetOutput output{target, y, y_stride};
  Apply(layer, {&output, 1}, row_begin, row_end, x, x_stride, pool);
}

void LoraSegments::Apply(int64_t layer, std::span<const LoraTargetOutput> outputs,
                         int64_t row_begin, int64_t row_end, const float* x, int64_t x_stride,
                         ThreadPool& pool) const {
  std::vector<std::vector<int32_t>> window_rows;  // each segment's rows in the window, shifted
  window_rows.reserve(segments_.size());
  for (const Segment& segment : segments_) {
    std::vector<int32_t>& rows = window_rows.emplace_back();
    for (int32_t row : segment.rows) {
      if (row >= row_begin && row < row_end) rows.push_back(static_cast<int32_t>(row - row_begin));
    }
  }
  // jobs[i]: the segments of outputs[i]'s target, sized up front so that the spans stay valid.
  std::vector<std::vector<kernels::LoraSegment>> jobs(outputs.size());
  std::vector<kernels::LoraOutput> products;
  int64_t in_features = 0;
  for (size_t i = 0; i < outputs.size(); ++i) {
    int64_t out_features = 0;
    for (size_t s = 0; s < segments_.size(); ++s) {
      const std::optional<lora::LoraMatrices>& matrices =
          segments_[s].adapter->layers[layer].targets[static_cast<int>(outputs[i].target)];
      if (!matrices || window_rows[s].empty()) continue;
      // Every adapter of a target has the base weight's shape (LoraFitsModel), and the targets of
      // a group read the same x.
      in_features = matrices->in_features;
      out_features = matrices->out_features;
      if (matrices->dtype == lora::LoraDtype::kBfloat16) {
        jobs[i].push_back({matrices->a_bf16.data(), matrices->b_bf16.data(), matrices->rank,
                           window_rows[s], kernels::LoraWeightType::kBf16});
      } else {
        jobs[i].push_back({matrices->a.data(), matrices->b.data(), matrices->rank, window_rows[s]});
      }
    }
    if (!jobs[i].empty()) {
      products.push_back({jobs[i], out_features, outputs[i].y, outputs[i].y_stride});
    }
  }
  if (!products.empty()) kernels::LoraShrinkExpandGroup(products, x, in_features, x_stride, pool);
}

}  // namespace vllm
