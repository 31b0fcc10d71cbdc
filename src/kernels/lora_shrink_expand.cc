#include "kernels/lora_shrink_expand.h"

#include <algorithm>
#include <vector>

#include "kernels/linear_internal.h"
#include "kernels/ops.h"

namespace vllm::kernels {
namespace {

// Output columns expanded per pass, so that the delta stays in L1 before it is added to y and
// the pass's block of B (512 x rank 16: 16 KiB in bf16) stays there for every row of a run.
constexpr int64_t kExpandColumns = 512;
// Rows per run at most: enough to reuse A and B from L1 (the AVX-512 tiles take this many rows),
// few enough to feed every thread.
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

// Some rows of one segment for one output.
struct Run {
  const LoraOutput* output;
  const LoraSegment* segment;
  int64_t begin, end;  // indices into segment->rows
};

// The rows of a run through one segment's adapter: the shrink into `shrunk` ([rows, rank]) then
// the expand into y. On AVX-512 a bf16 adapter runs as tiles of all the run's rows (the same bits
// per row as the loops below, which the other paths and f32 adapters take).
void RunRows(const LoraSegment& segment, std::span<const int32_t> rows, const float* x,
             int64_t in_features, int64_t x_stride, const LoraOutput& output, float* shrunk,
             float* delta) {
  const int64_t rank = segment.rank, out_features = output.out_features;
  if (segment.type == LoraWeightType::kBf16 && BestIsa() == Isa::kAvx512) {
    const float* x_rows[kMaxRowsPerRun];
    float* y_rows[kMaxRowsPerRun];
    for (size_t k = 0; k < rows.size(); ++k) {
      x_rows[k] = x + rows[k] * x_stride;
      y_rows[k] = output.y + rows[k] * output.y_stride;
    }
    const int num_rows = static_cast<int>(rows.size());
    LoraShrinkBf16Avx512(static_cast<const uint16_t*>(segment.a), rank, x_rows, num_rows,
                         in_features, shrunk);
    LoraExpandBf16Avx512(static_cast<const uint16_t*>(segment.b), rank, out_features, shrunk,
                         y_rows, num_rows);
    return;
  }
  for (size_t k = 0; k < rows.size(); ++k) {
    DotMatrixRows(segment.type, segment.a, rank, x + rows[k] * x_stride, in_features,
                  shrunk + k * rank);
  }
  for (int64_t col = 0; col < out_features; col += kExpandColumns) {
    const int64_t num_cols = std::min(kExpandColumns, out_features - col);
    for (size_t k = 0; k < rows.size(); ++k) {
      const float* t = shrunk + k * rank;
      if (segment.type == LoraWeightType::kBf16) {
        const auto* b_transposed = static_cast<const uint16_t*>(segment.b) + col;
        std::fill_n(delta, num_cols, 0.0f);
        for (int64_t r = 0; r < rank; ++r) {
          AxpyBf16(t[r], b_transposed + r * out_features, num_cols, delta);
        }
      } else {
        DotF32Rows(static_cast<const float*>(segment.b) + col * rank, num_cols, t, rank, delta);
      }
      AxpyF32(1.0f, delta, num_cols, output.y + rows[k] * output.y_stride + col);
    }
  }
}

}  // namespace

void LoraShrinkExpand(std::span<const LoraSegment> segments, const LoraProductShape& shape,
                      const float* x, float* y, ThreadPool& pool) {
  const LoraOutput output{segments, shape.out_features, y, shape.y_stride};
  LoraShrinkExpandGroup({&output, 1}, x, shape.in_features, shape.x_stride, pool);
}

void LoraShrinkExpandGroup(std::span<const LoraOutput> outputs, const float* x, int64_t in_features,
                           int64_t x_stride, ThreadPool& pool) {
  int64_t max_rank = 0, max_out_features = 0;
  for (const LoraOutput& output : outputs) {
    max_out_features = std::max(max_out_features, output.out_features);
    for (const LoraSegment& segment : output.segments) {
      max_rank = std::max(max_rank, segment.rank);
    }
  }
  // The longest runs that still give every thread one: longer ones read A and B fewer times.
  const auto count_runs = [&](int64_t rows_per_run) {
    int64_t num_runs = 0;
    for (const LoraOutput& output : outputs) {
      for (const LoraSegment& segment : output.segments) {
        num_runs += (static_cast<int64_t>(segment.rows.size()) + rows_per_run - 1) / rows_per_run;
      }
    }
    return num_runs;
  };
  int64_t rows_per_run = kMaxRowsPerRun;
  while (rows_per_run > 1 && count_runs(rows_per_run) < pool.num_threads()) --rows_per_run;
  std::vector<Run> runs;
  for (const LoraOutput& output : outputs) {
    for (const LoraSegment& segment : output.segments) {
      const auto size = static_cast<int64_t>(segment.rows.size());
      for (int64_t begin = 0; begin < size; begin += rows_per_run) {
        runs.push_back({&output, &segment, begin, std::min(size, begin + rows_per_run)});
      }
    }
  }
  if (runs.empty()) return;
  // The costliest runs first, so that the threads' claims end close together.
  const auto cost = [in_features](const Run& run) {
    return run.segment->rank * (in_features + run.output->out_features) * (run.end - run.begin);
  };
  std::stable_sort(runs.begin(), runs.end(),
                   [&](const Run& a, const Run& b) { return cost(a) > cost(b); });
  pool.ParallelForGuided(static_cast<int64_t>(runs.size()), [&](int64_t begin, int64_t end) {
    std::vector<float> shrunk(kMaxRowsPerRun * max_rank);  // t: [rows of the run, rank]
    std::vector<float> delta(std::min(kExpandColumns, max_out_features));
    for (int64_t i = begin; i < end; ++i) {
      const Run& run = runs[i];
      RunRows(*run.segment, run.segment->rows.subspan(run.begin, run.end - run.begin), x,
              in_features, x_stride, *run.output, shrunk.data(), delta.data());
    }
  });
}

}  // namespace vllm::kernels
