// The LoRA product of a batch whose rows run different adapters (punica's SGMV): for each adapter's
// segment of rows, shrink t = x · Aᵀ ([num_rows, rank]) then expand y += t · Bᵀ. Adapters never
// merge into the base weight, and a row runs only its own adapter.
#pragma once

#include <cstdint>
#include <span>

#include "common/thread_pool.h"

namespace vllm::kernels {

// How an adapter's A and B are stored: f32, or bf16 widened to f32 as they are read.
enum class LoraWeightType { kF32, kBf16 };

// One adapter's rows of a batch.
struct LoraSegment {
  const void* a = nullptr;  // [rank, in_features], row-major, of `type`
  // Scale folded in. kF32: B, [out_features, rank]; kBf16: Bᵀ, [rank, out_features]. Row-major.
  const void* b = nullptr;
  int64_t rank = 0;
  std::span<const int32_t> rows;  // the batch rows that run this adapter
  LoraWeightType type = LoraWeightType::kF32;
};

// Shapes of the product: x's rows are in_features wide at a stride of x_stride floats, y's are
// out_features wide at a stride of y_stride (a column slice of a wider output, such as q of a
// fused QKV output, is y offset with the full stride).
struct LoraProductShape {
  int64_t in_features = 0;
  int64_t x_stride = 0;
  int64_t out_features = 0;
  int64_t y_stride = 0;
};

// y[r, :] += (x[r, :] · Aᵀ) · Bᵀ for every row r of every segment, in parallel over runs of a
// segment's rows: a run reads A once and each block of B once for all its rows (on AVX-512 bf16
// adapters, in tiles of the run's rows against several rows of A and columns of Bᵀ). A row's
// arithmetic depends only on its own values and its adapter (DotF32Rows or DotBf16Rows over
// in_features, then over the rank, in a fixed order), never on the segment's size, the runs or the
// thread count. The expand of an f32 B dots each B row with t (the oracle's exact path); that of a
// bf16 Bᵀ adds t[r] · Bᵀ[r, :] for r = 0, 1, ... in turn.
void LoraShrinkExpand(std::span<const LoraSegment> segments, const LoraProductShape& shape,
                      const float* x, float* y, ThreadPool& pool);

// One product of a group that reads the same x (q, k and v of one layer; gate and up): its
// adapters' segments and its output, out_features wide at y_stride.
struct LoraOutput {
  std::span<const LoraSegment> segments;
  int64_t out_features = 0;
  float* y = nullptr;
  int64_t y_stride = 0;
};

// LoraShrinkExpand for every output of the group in one pool call, x's rows in_features wide at
// x_stride: a row's bits are what LoraShrinkExpand gives it for that output alone.
void LoraShrinkExpandGroup(std::span<const LoraOutput> outputs, const float* x, int64_t in_features,
                           int64_t x_stride, ThreadPool& pool);

}  // namespace vllm::kernels
