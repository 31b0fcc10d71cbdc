// quant_method fp8 (vLLM's Fp8LinearMethod): F8_E4M3 weights times per-tensor, per-row or block
// scales, or a BF16 / F16 / F32 checkpoint quantized at load (--quantization fp8); each stays 8-bit
// as F8_E4M3_B32 where every 32 values of a row share a scale (quantized_linear.h's rule), else
// becomes BF16.
#include "model/hf_quant/fp8.h"

#include <algorithm>
#include <array>
#include <cmath>
#include <cstring>
#include <mutex>

#include "common/fp8.h"
#include "common/half.h"
#include "kernels/ops.h"
#include "kernels/quant_blocks.h"
#include "model/hf_quant/linear_parts.h"
#include "model/hf_quant/quantized_linear.h"

namespace vllm {
namespace {

// The exact product a · b rounded once to bf16 (nearest even). An e4m3 value has 4 significant
// bits and an f32 scale 24, so the product is exact in a double; rounding that to f32 with
// round-to-odd keeps the second rounding, to bf16's 8 bits, equal to a single one.
uint16_t ProductToBf16(float a, float b) {
  const double exact = static_cast<double>(a) * static_cast<double>(b);
  float rounded = static_cast<float>(exact);
  if (static_cast<double>(rounded) != exact) {
    uint32_t bits = BitsFromFp32(rounded);
    if (std::fabs(static_cast<double>(rounded)) > std::fabs(exact)) --bits;  // toward zero
    rounded = Fp32FromBits(bits | 1u);
  }
  return Fp32ToBf16(rounded);
}

// The error for the first NaN code at `index` (row-major) of codes [rows, cols].
Error Fp8NanError(const uint8_t* codes, int64_t cols, int64_t index,
                  const std::string& source_name) {
  return Error{"tensor '" + source_name + "' holds an FP8 NaN (0x" +
               (codes[index] == 0x7f ? std::string("7f") : std::string("ff")) + ") at [" +
               std::to_string(index / cols) + ", " + std::to_string(index % cols) + "]"};
}

// codes: [rows, cols] e4m3 bytes → BF16 `name` {cols, rows}. Each block's 256 possible products
// are tabulated once per chunk of rows, so a weight costs one lookup per value. Threads take
// chunks of rows; the first NaN in row-major order is the one reported, whatever the split.
Expected<OwnedTensor> Fp8CodesToBf16(const uint8_t* codes, int64_t rows, int64_t cols,
                                     const Fp8BlockScales& scales, const std::string& source_name,
                                     const std::string& name, ThreadPool* pool) {
  const int64_t num_block_cols = (cols + scales.block_cols - 1) / scales.block_cols;
  OwnedTensor tensor{.name = name, .type = GgmlType::kBF16, .shape = {cols, rows}};
  tensor.bytes.resize(rows * cols * sizeof(uint16_t));
  std::mutex mutex;
  int64_t first_nan = rows * cols;  // index of the first NaN code, rows · cols: none
  ForRowRanges(pool, rows, [&](int64_t begin, int64_t end) {
    std::vector<std::array<uint16_t, 256>> products(num_block_cols);  // [block col][code]
    for (int64_t r = begin; r < end; ++r) {
      const int64_t block_row = r / scales.block_rows;
      if (r == begin || r % scales.block_rows == 0) {
        for (int64_t block_col = 0; block_col < num_block_cols; ++block_col) {
          const float scale = scales.values[block_row * num_block_cols + block_col];
          for (int code = 0; code < 256; ++code) {
            products[block_col][code] = ProductToBf16(DecodeFp8E4m3(code), scale);
          }
        }
      }
      for (int64_t c = 0; c < cols; ++c) {
        const uint8_t code = codes[r * cols + c];
        if (IsFp8E4m3Nan(code)) {
          std::lock_guard<std::mutex> lock(mutex);
          first_nan = std::min(first_nan, r * cols + c);
          return;
        }
        std::memcpy(tensor.bytes.data() + (r * cols + c) * sizeof(uint16_t),
                    &products[c / scales.block_cols][code], sizeof(uint16_t));
      }
    }
  });
  if (first_nan < rows * cols) return Fp8NanError(codes, cols, first_nan, source_name);
  return tensor;
}

// Whether every 32 values of a row share one scale, so the codes stay as F8_E4M3_B32 blocks, and
// this CPU has its packed kernels (elsewhere, ARM for now, BF16's vector kernels beat its scalar
// reference kernel).
bool FitsF8Blocks(int64_t cols, const Fp8BlockScales& scales) {
  return cols % kQuantBlockSize == 0 &&
         (scales.block_cols % kQuantBlockSize == 0 || scales.block_cols >= cols) &&
         kernels::HasPackedKernels(GgmlType::kF8_E4M3_B32);
}

// codes: [rows, cols] e4m3 bytes (FitsF8Blocks) → F8_E4M3_B32 `name` {cols, rows}: the same
// bytes, each 32 with its scale, so e4m3 · scale is the checkpoint's value exactly as vLLM
// computes it in f32. NaN codes are reported as Fp8CodesToBf16 does.
Expected<OwnedTensor> Fp8CodesToBlocks(const uint8_t* codes, int64_t rows, int64_t cols,
                                       const Fp8BlockScales& scales, const std::string& source_name,
                                       const std::string& name, ThreadPool* pool) {
  const int64_t num_block_cols = (cols + scales.block_cols - 1) / scales.block_cols;
  const int64_t blocks_per_row = cols / kQuantBlockSize;
  OwnedTensor tensor{.name = name, .type = GgmlType::kF8_E4M3_B32, .shape = {cols, rows}};
  tensor.bytes.resize(rows * blocks_per_row * sizeof(kernels::BlockF8_E4M3_B32));
  auto* blocks = reinterpret_cast<kernels::BlockF8_E4M3_B32*>(tensor.bytes.data());
  std::mutex mutex;
  int64_t first_nan = rows * cols;  // index of the first NaN code, rows · cols: none
  ForRowRanges(pool, rows, [&](int64_t begin, int64_t end) {
    for (int64_t r = begin; r < end; ++r) {
      const float* row_scales = scales.values.data() + (r / scales.block_rows) * num_block_cols;
      for (int64_t b = 0; b < blocks_per_row; ++b) {
        const int64_t c = b * kQuantBlockSize;
        const uint8_t* block_codes = codes + r * cols + c;
        for (int k = 0; k < kQuantBlockSize; ++k) {
          if (IsFp8E4m3Nan(block_codes[k])) {
            std::lock_guard<std::mutex> lock(mutex);
            first_nan = std::min(first_nan, r * cols + c + k);
            return;
          }
        }
        kernels::BlockF8_E4M3_B32& block = blocks[r * blocks_per_row + b];
        block.d = row_scales[c / scales.block_cols];
        std::memcpy(block.codes, block_codes, kQuantBlockSize);
      }
    }
  });
  if (first_nan < rows * cols) return Fp8NanError(codes, cols, first_nan, source_name);
  return tensor;
}

// Codes [rows, cols] as F8_E4M3_B32 where their scales allow it, else as BF16.
Expected<OwnedTensor> Fp8CodesToTensor(const uint8_t* codes, int64_t rows, int64_t cols,
                                       const Fp8BlockScales& scales, const std::string& source_name,
                                       const std::string& name, ThreadPool* pool) {
  if (FitsF8Blocks(cols, scales)) {
    return Fp8CodesToBlocks(codes, rows, cols, scales, source_name, name, pool);
  }
  return Fp8CodesToBf16(codes, rows, cols, scales, source_name, name, pool);
}

// vLLM's online dynamic FP8 of an unquantized weight [rows, cols]: one scale amax / 448, each
// value rounded to the nearest e4m3 (saturating), then as a stored FP8 weight.
Expected<OwnedTensor> QuantizeAtLoad(const SafetensorsTensor& weight, int64_t rows, int64_t cols,
                                     const std::string& name, ThreadPool* pool) {
  auto values = ReadFloats(weight);  // [rows, cols]
  if (!values) return Error{values.error()};
  float max_magnitude = 0.0f;
  std::mutex mutex;
  ForRowRanges(pool, rows, [&](int64_t begin, int64_t end) {
    float rows_max = 0.0f;
    for (int64_t i = begin * cols; i < end * cols; ++i) {
      rows_max = std::max(rows_max, std::fabs((*values)[i]));
    }
    std::lock_guard<std::mutex> lock(mutex);
    max_magnitude = std::max(max_magnitude, rows_max);
  });
  const float scale = max_magnitude / kFp8E4m3Max;
  std::vector<uint8_t> codes(values->size(), 0);  // an all-zero weight stays zero
  if (scale > 0.0f) {
    ForRowRanges(pool, rows, [&](int64_t begin, int64_t end) {
      for (int64_t i = begin * cols; i < end * cols; ++i) {
        codes[i] = EncodeFp8E4m3((*values)[i] / scale);
      }
    });
  }
  const Fp8BlockScales scales{.block_rows = rows, .block_cols = cols, .values = {scale}};
  return Fp8CodesToTensor(codes.data(), rows, cols, scales, weight.name, name, pool);
}

}  // namespace

Expected<Fp8BlockScales> ReadFp8Scales(const SafetensorsTensor& scales, int64_t rows, int64_t cols,
                                       const std::vector<int64_t>& block_size) {
  Fp8BlockScales result;
  if (!block_size.empty()) {
    if (block_size.size() != 2 || block_size[0] <= 0 || block_size[1] <= 0) {
      return Error{"tensor '" + scales.name + "': weight_block_size " + ShapeText(block_size) +
                   " must be two positive sizes"};
    }
    result.block_rows = block_size[0];
    result.block_cols = block_size[1];
    const std::vector<int64_t> expected_shape = {(rows + block_size[0] - 1) / block_size[0],
                                                 (cols + block_size[1] - 1) / block_size[1]};
    if (scales.shape != expected_shape) {
      return Error{"tensor '" + scales.name + "' has shape " + ShapeText(scales.shape) +
                   ", expected " + ShapeText(expected_shape) + " (one scale per " +
                   ShapeText(block_size) + " block of a " + ShapeText({rows, cols}) + " weight)"};
    }
  } else if (NumElements(scales) == 1 && scales.shape.size() <= 2) {
    result.block_rows = rows;
    result.block_cols = cols;
  } else if (scales.shape == std::vector<int64_t>{rows} ||
             scales.shape == std::vector<int64_t>{rows, 1}) {
    result.block_rows = 1;
    result.block_cols = cols;
  } else {
    return Error{"tensor '" + scales.name + "' has shape " + ShapeText(scales.shape) +
                 ", expected [1] (per tensor) or " + ShapeText({rows, 1}) + " (per row)"};
  }
  auto values = ReadFloats(scales);
  if (!values) return Error{values.error()};
  result.values = std::move(*values);
  return result;
}

Expected<OwnedTensor> Fp8WeightToTensor(const SafetensorsTensor& weight,
                                        const Fp8BlockScales& scales, const std::string& name,
                                        ThreadPool* pool) {
  if (DtypeName(weight) != "F8_E4M3") {
    return Error{"tensor '" + weight.name + "' has dtype " + DtypeName(weight) +
                 ", expected F8_E4M3"};
  }
  if (weight.shape.size() != 2 || weight.shape[0] <= 0 || weight.shape[1] <= 0 ||
      weight.num_bytes != weight.shape[0] * weight.shape[1]) {
    return Error{"tensor '" + weight.name + "' has shape " + ShapeText(weight.shape) + " and " +
                 std::to_string(weight.num_bytes) + " bytes, expected a 2-D [out, in] weight"};
  }
  return Fp8CodesToTensor(static_cast<const uint8_t*>(weight.data), weight.shape[0],
                          weight.shape[1], scales, weight.name, name, pool);
}

Expected<ConvertedLinear> ConvertFp8Linear(const Fp8Config& config,
                                           const QuantizedLinearTensors& tensors,
                                           ThreadPool* pool) {
  auto weight = RequireMatrixPart(tensors, "weight");
  if (!weight) return Error{weight.error()};
  const SafetensorsTensor& stored = **weight;
  const int64_t rows = stored.shape[0], cols = stored.shape[1];
  const std::string name = PartName(tensors, "weight");
  ConvertedLinear linear;
  if (DtypeName(stored) != "F8_E4M3") {
    if (!config.quantize_at_load || !IsSafetensorsFloatType(stored.type)) {
      return Error{"tensor '" + stored.name + "' has dtype " + DtypeName(stored) +
                   ", but quant_method fp8 expects F8_E4M3 weights (or F32 / F16 / BF16 ones "
                   "with --quantization fp8)"};
    }
    auto quantized = QuantizeAtLoad(stored, rows, cols, name, pool);
    if (!quantized) return Error{quantized.error()};
    linear.weight = std::move(*quantized);
    return linear;
  }
  if (const SafetensorsTensor* input_scale = FindPart(tensors, "input_scale")) {
    VLLM_RETURN_IF_ERROR(CheckInputScale(*input_scale));
  }
  const bool blocked = !config.weight_block_size.empty();
  auto scale_part = RequirePart(tensors, blocked ? "weight_scale_inv" : "weight_scale");
  if (!scale_part) return Error{scale_part.error()};
  auto scales = ReadFp8Scales(**scale_part, rows, cols, config.weight_block_size);
  if (!scales) return Error{scales.error()};
  auto converted = Fp8WeightToTensor(stored, *scales, name, pool);
  if (!converted) return Error{converted.error()};
  linear.weight = std::move(*converted);
  return linear;
}

}  // namespace vllm
