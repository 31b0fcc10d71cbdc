// FP8 e4m3 weights times their scales, shared by quant_method fp8 (fp8.cc, ConvertFp8Linear) and
// compressed-tensors' float-quantized layers.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "common/expected.h"
#include "common/thread_pool.h"
#include "formats/safetensors_file.h"
#include "model/architecture.h"

namespace vllm {

// The scales of an FP8 weight [rows, cols]: one per block of [block_rows, block_cols] values
// (the last blocks of a row or column may be partial).
//   per tensor: block {rows, cols}, one value;
//   per row:    block {1, cols}, [rows] values;
//   blocks:     weight_block_size {br, bc}, [ceil(rows / br), ceil(cols / bc)] values.
struct Fp8BlockScales {
  int64_t block_rows = 0;
  int64_t block_cols = 0;
  std::vector<float> values;  // [ceil(rows / block_rows), ceil(cols / block_cols)], row-major
};

// The scales of weight [rows, cols] stored in `scales`: with `block_size` empty, shaped [] or [1]
// (per tensor) or [rows] or [rows, 1] (per row); with block_size {br, bc}, shaped
// [ceil(rows / br), ceil(cols / bc)]. Errors name the tensor.
Expected<Fp8BlockScales> ReadFp8Scales(const SafetensorsTensor& scales, int64_t rows, int64_t cols,
                                       const std::vector<int64_t>& block_size);

// W[r][c] = e4m3(weight[r][c]) · scale of its block as OwnedTensor `name`, ggml shape {cols,
// rows}: F8_E4M3_B32 (the codes as they are, each 32 with its scale: exact) where cols is a
// multiple of 32, block_cols a multiple of 32 or all of cols, and this CPU has that type's packed
// kernels (kernels::HasPackedKernels); otherwise BF16, each value the exact product rounded once
// (nearest even). `weight` is F8_E4M3 [rows, cols]; a NaN code (0x7f,
// 0xff) is an error naming the tensor. Rows are split across `pool`'s threads when given (the
// same bytes either way).
Expected<OwnedTensor> Fp8WeightToTensor(const SafetensorsTensor& weight,
                                        const Fp8BlockScales& scales, const std::string& name,
                                        ThreadPool* pool = nullptr);

}  // namespace vllm
