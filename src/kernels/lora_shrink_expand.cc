#include "kernels/lora_shrink_expand.h"

#include <algorithm>
#include <vector>

#include "kernels/ops.h"

namespace vllm::kernels {
namespace {

// Output columns expanded per pass, so that the delta stays in L1 before it is added to y and
// the pass's block of B (512 x rank 16: 16 KiB in bf16) stays there for every row of a run.
constexpr int64_t kExpandColumns = 512;
// Rows per run at most: enough to reuse A and B from L1, few enough to feed every thread.
constexpr int64_t kMaxRowsPerRun = 4;

// out[i] = row i of `matrix` (num_rows rows n wide, of `type`) · v.
void DotMatrixRows(LoraWeightType type, const void* matrix, int64_t num_rows, const float* v,
                   int64_t n, float* out) {
  if (type == LoraWeightType::kBf16) {
    DotBf16Rows(static_cast<const uint16_t*>(matrix), num_rows, v, n, out);
  } else {
    DotF32Rows(static_cast<const float*>(matrix), num_rows, v, n, out);
  }
}

struct Run {
  const LoraSegment* segment;
  int64_t begin, end;  // indices into segment->rows
};

}  // namespace

void LoraShrinkExpand(std::span<const LoraSegment> segments, const LoraProductShape& shape,
                      const float* x, float* y, ThreadPool& pool) {
  int64_t num_rows = 0, max_rank = 0;
  for (const LoraSegment& segment : segments) {
    num_rows += static_cast<int64_t>(segment.rows.size());
    max_rank = std::max(max_rank, segment.rank);
  }
  if (num_rows == 0) return;
  const int64_t rows_per_run =
      std::clamp<int64_t>(num_rows / pool.num_threads(), 1, kMaxRowsPerRun);
  std::vector<Run> runs;
  for (const LoraSegment& segment : segments) {
    const auto size = static_cast<int64_t>(segment.rows.size());
    for (int64_t begin = 0; begin < size; begin += rows_per_run) {
      runs.push_back({&segment, begin, std::min(size, begin + rows_per_run)});
    }
  }
  pool.ParallelFor(static_cast<int64_t>(runs.size()), [&](int64_t begin, int64_t end) {
    std::vector<float> shrunk(kMaxRowsPerRun * max_rank);  // t: [rows of the run, rank]
    std::vector<float> delta(std::min(kExpandColumns, shape.out_features));
    for (int64_t i = begin; i < end; ++i) {
      const LoraSegment& segment = *runs[i].segment;
      const int64_t rank = segment.rank;
      const std::span<const int32_t> rows =
          segment.rows.subspan(runs[i].begin, runs[i].end - runs[i].begin);
      for (size_t k = 0; k < rows.size(); ++k) {
        DotMatrixRows(segment.type, segment.a, rank, x + rows[k] * shape.x_stride,
                      shape.in_features, shrunk.data() + k * rank);
      }
      for (int64_t col = 0; col < shape.out_features; col += kExpandColumns) {
        const int64_t num_cols = std::min(kExpandColumns, shape.out_features - col);
        for (size_t k = 0; k < rows.size(); ++k) {
          const float* t = shrunk.data() + k * rank;
          if (segment.type == LoraWeightType::kBf16) {
            const auto* b_transposed = static_cast<const uint16_t*>(segment.b) + col;
            std::fill_n(delta.begin(), num_cols, 0.0f);
            for (int64_t r = 0; r < rank; ++r) {
              AxpyBf16(t[r], b_transposed + r * shape.out_features, num_cols, delta.data());
            }
          } else {
            DotF32Rows(static_cast<const float*>(segment.b) + col * rank, num_cols, t, rank,
                       delta.data());
          }
          AxpyF32(1.0f, delta.data(), num_cols, y + rows[k] * shape.y_stride + col);
        }
      }
    }
  });
}

}  // namespace vllm::kernels
