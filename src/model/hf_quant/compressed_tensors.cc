// compressed-tensors linears (vLLM's CompressedTensorsLinearMethod), by the config's format:
//   int-quantized / naive-quantized: weight int8 (naive: integers in the weight's own dtype)
//     [out, in], weight_scale per tensor, per row or per group, weight_zero_point when
//     asymmetric: W = scale · (q − zero_point);
//   pack-quantized: weight_packed int32 [out, in · bits / 32], value j of a word at bits j,
//     stored as value + 2^(bits − 1); weight_shape {out, in}; weight_zero_point (asymmetric)
//     packed the same way along out: [out · bits / 32, groups];
//   float-quantized (and naive FP8): weight F8_E4M3 times weight_scale, as quant_method fp8.
// Integer weights become Q4_0 / Q4_1 / Q8_0 through IntegerGroupsToTensor, FP8 ones BF16.
//
// Input activations (W8A8's dynamic or static per-token / per-tensor int8 or fp8) need nothing
// stored but a static input_scale, which is only checked: the Q8_0 GEMM path quantizes
// activations per 32 values, finer than vLLM's per-token scales, and the FP8 ones run in BF16.
#include <string>
#include <utility>
#include <vector>

#include "model/hf_quant/fp8.h"
#include "model/hf_quant/integer_groups.h"
#include "model/hf_quant/linear_parts.h"
#include "model/hf_quant/packed_codes.h"
#include "model/hf_quant/quantized_linear.h"

namespace vllm {
namespace {

// Values per group along a row of `cols` input features for the weights' strategy.
Expected<int64_t> GroupSize(const CtQuantArgs& weights, int64_t cols, const std::string& name) {
  if (weights.strategy == "tensor" || weights.strategy == "channel") return cols;
  if (weights.strategy == "group") {
    if (weights.group_size <= 0 || cols % weights.group_size != 0) {
      return Error{"tensor '" + name + "': group_size " + std::to_string(weights.group_size) +
                   " does not divide its " + std::to_string(cols) + " input features"};
    }
    return weights.group_size;
  }
  return Error{"tensor '" + name + "': compressed-tensors weight strategy '" + weights.strategy +
               "' is not supported for integer weights (supported: tensor, channel, group)"};
}

// Checks that every value fits a signed `bits`-bit integer.
Status CheckSignedRange(const std::vector<int16_t>& values, int bits, const std::string& name) {
  const int64_t low = -(int64_t{1} << (bits - 1)), high = (int64_t{1} << (bits - 1)) - 1;
  for (size_t i = 0; i < values.size(); ++i) {
    if (values[i] < low || values[i] > high) {
      return Error{"tensor '" + name + "' holds " + std::to_string(values[i]) + " at index " +
                   std::to_string(i) + ", outside the " + std::to_string(bits) + "-bit range [" +
                   std::to_string(low) + ", " + std::to_string(high) + "]"};
    }
  }
  return Status::Ok();
}

// Unpacked zero points [rows, num_groups], shaped like the scales (ReadGroupScales).
Expected<std::vector<int16_t>> ReadGroupZeros(const SafetensorsTensor& zeros, int64_t rows,
                                              int64_t num_groups) {
  auto per_tensor = IsPerTensor(zeros, rows, num_groups);
  if (!per_tensor) return Error{per_tensor.error()};
  auto values = ReadInt16s(zeros);
  if (!values) return Error{values.error()};
  if (*per_tensor) values->assign(rows * num_groups, values->front());
  return values;
}

// The layer of `groups`, with weight_g_idx (actorder) applied: the columns sorted by group, and
// their order.
Expected<ConvertedLinear> OrderedGroupsToLinear(const QuantizedLinearTensors& tensors,
                                                IntegerGroups groups, ThreadPool* pool) {
  ConvertedLinear linear;
  if (const SafetensorsTensor* group_index = FindPart(tensors, "weight_g_idx")) {
    auto order = GroupInputOrder(*group_index, groups.cols, groups.group_size);
    if (!order) return Error{order.error()};
    if (!order->empty()) {
      std::vector<int16_t> permuted(groups.q.size());
      ForRowRanges(pool, groups.rows, [&](int64_t begin, int64_t end) {
        for (int64_t r = begin; r < end; ++r) {
          for (int64_t j = 0; j < groups.cols; ++j) {
            permuted[r * groups.cols + j] = groups.q[r * groups.cols + (*order)[j]];
          }
        }
      });
      groups.q = std::move(permuted);
      linear.input_order = std::move(*order);
    }
  }
  auto tensor = IntegerGroupsToTensor(groups, PartName(tensors, "weight"), pool);
  if (!tensor) return Error{tensor.error()};
  linear.weight = std::move(*tensor);
  return linear;
}

// int-quantized / naive-quantized integers: weight [rows, cols] as stored.
Expected<ConvertedLinear> ConvertUnpackedIntegers(const CtQuantArgs& weights,
                                                  const QuantizedLinearTensors& tensors,
                                                  ThreadPool* pool) {
  auto weight = RequireMatrixPart(tensors, "weight");
  if (!weight) return Error{weight.error()};
  const SafetensorsTensor& stored = **weight;
  if (weights.num_bits < 2 || weights.num_bits > 8) {
    return Error{"tensor '" + stored.name + "': num_bits " + std::to_string(weights.num_bits) +
                 " is not supported for compressed-tensors integer weights (supported: 2 to 8)"};
  }
  IntegerGroups groups{.rows = stored.shape[0], .cols = stored.shape[1]};
  auto group_size = GroupSize(weights, groups.cols, stored.name);
  if (!group_size) return Error{group_size.error()};
  groups.group_size = *group_size;
  const int64_t num_groups = groups.cols / groups.group_size;
  auto values = ReadInt16s(stored);
  if (!values) return Error{values.error()};
  VLLM_RETURN_IF_ERROR(CheckSignedRange(*values, weights.num_bits, stored.name));
  groups.q = std::move(*values);
  auto scale_part = RequirePart(tensors, "weight_scale");
  if (!scale_part) return Error{scale_part.error()};
  auto scales = ReadGroupScales(**scale_part, groups.rows, num_groups);
  if (!scales) return Error{scales.error()};
  groups.scales = std::move(*scales);
  if (!weights.symmetric) {
    auto zero_part = RequirePart(tensors, "weight_zero_point");
    if (!zero_part) return Error{zero_part.error()};
    auto zeros = ReadGroupZeros(**zero_part, groups.rows, num_groups);
    if (!zeros) return Error{zeros.error()};
    VLLM_RETURN_IF_ERROR(CheckSignedRange(*zeros, weights.num_bits, (*zero_part)->name));
    groups.zeros = std::move(*zeros);
  }
  return OrderedGroupsToLinear(tensors, std::move(groups), pool);
}

// pack-quantized: `bits`-bit codes, 32 / bits per int32 word, value j of a word at bits · j.
//
//   weight_packed [rows, cols · bits / 32]      word w of row r holds columns w·per .. w·per+per−1
//   weight_zero_point [rows · bits / 32, groups] word w of column g holds rows w·per .. w·per+per−1
Expected<ConvertedLinear> ConvertPacked(const CtQuantArgs& weights,
                                        const QuantizedLinearTensors& tensors, ThreadPool* pool) {
  auto packed_part = RequirePart(tensors, "weight_packed");
  if (!packed_part) return Error{packed_part.error()};
  const SafetensorsTensor& packed = **packed_part;
  if (weights.num_bits != 4 && weights.num_bits != 8) {
    return Error{"tensor '" + packed.name + "': num_bits " + std::to_string(weights.num_bits) +
                 " is not supported for pack-quantized weights (supported: 4, 8)"};
  }
  const int bits = weights.num_bits;
  const int64_t per_word = 32 / bits;
  const int64_t offset = int64_t{1} << (bits - 1);  // stored code of the value 0
  auto shape_part = RequirePart(tensors, "weight_shape");
  if (!shape_part) return Error{shape_part.error()};
  auto shape = ReadIntegers(**shape_part);
  if (!shape) return Error{shape.error()};
  // 2^31 bounds any real layer and keeps the size arithmetic below from overflowing.
  if (shape->size() != 2 || (*shape)[0] <= 0 || (*shape)[1] <= 0 ||
      (*shape)[0] > (int64_t{1} << 31) || (*shape)[1] > (int64_t{1} << 31)) {
    return Error{"tensor '" + (*shape_part)->name + "' must hold two positive sizes {out, in}"};
  }
  IntegerGroups groups{.rows = (*shape)[0], .cols = (*shape)[1]};
  const int64_t words_per_row = (groups.cols + per_word - 1) / per_word;
  auto words = ReadPackedWords(packed, {groups.rows, words_per_row});
  if (!words) return Error{words.error()};
  groups.q.resize(groups.rows * groups.cols);
  ForRowRanges(pool, groups.rows, [&](int64_t begin, int64_t end) {
    for (int64_t r = begin; r < end; ++r) {
      for (int64_t c = 0; c < groups.cols; ++c) {
        groups.q[r * groups.cols + c] =
            static_cast<int16_t>(UnpackCode(words->data() + r * words_per_row, 1, bits, c));
      }
    }
  });
  auto group_size = GroupSize(weights, groups.cols, packed.name);
  if (!group_size) return Error{group_size.error()};
  groups.group_size = *group_size;
  const int64_t num_groups = groups.cols / groups.group_size;
  auto scale_part = RequirePart(tensors, "weight_scale");
  if (!scale_part) return Error{scale_part.error()};
  auto scales = ReadGroupScales(**scale_part, groups.rows, num_groups);
  if (!scales) return Error{scales.error()};
  groups.scales = std::move(*scales);
  if (weights.symmetric) {
    groups.zeros.assign(groups.rows * num_groups, static_cast<int16_t>(offset));
  } else {
    auto zero_part = RequirePart(tensors, "weight_zero_point");
    if (!zero_part) return Error{zero_part.error()};
    const int64_t zero_words = (groups.rows + per_word - 1) / per_word;
    auto zero_values = ReadPackedWords(**zero_part, {zero_words, num_groups});
    if (!zero_values) return Error{zero_values.error()};
    groups.zeros.resize(groups.rows * num_groups);
    for (int64_t r = 0; r < groups.rows; ++r) {
      for (int64_t g = 0; g < num_groups; ++g) {
        groups.zeros[r * num_groups + g] =
            static_cast<int16_t>(UnpackCode(zero_values->data() + g, num_groups, bits, r));
      }
    }
  }
  return OrderedGroupsToLinear(tensors, std::move(groups), pool);
}

// float-quantized FP8: weight F8_E4M3 [rows, cols] times weight_scale per tensor, row or block.
Expected<ConvertedLinear> ConvertFloat(const CtQuantArgs& weights,
                                       const QuantizedLinearTensors& tensors, ThreadPool* pool) {
  auto weight = RequireMatrixPart(tensors, "weight");
  if (!weight) return Error{weight.error()};
  const SafetensorsTensor& stored = **weight;
  if (weights.num_bits != 8 || weights.type != "float") {
    return Error{"tensor '" + stored.name + "': compressed-tensors float weights must be 8-bit " +
                 "FP8 (num_bits " + std::to_string(weights.num_bits) + ", type " + weights.type +
                 ")"};
  }
  std::vector<int64_t> block_size;
  if (weights.strategy == "block") {
    block_size = weights.block_structure;
  } else if (weights.strategy != "tensor" && weights.strategy != "channel") {
    return Error{"tensor '" + stored.name + "': compressed-tensors weight strategy '" +
                 weights.strategy +
                 "' is not supported for FP8 weights (supported: tensor, channel, block)"};
  }
  auto scale_part = RequirePart(tensors, "weight_scale");
  if (!scale_part) return Error{scale_part.error()};
  auto scales = ReadFp8Scales(**scale_part, stored.shape[0], stored.shape[1], block_size);
  if (!scales) return Error{scales.error()};
  auto converted = Fp8WeightToTensor(stored, *scales, PartName(tensors, "weight"), pool);
  if (!converted) return Error{converted.error()};
  ConvertedLinear linear;
  linear.weight = std::move(*converted);
  return linear;
}

}  // namespace

Expected<ConvertedLinear> ConvertCompressedTensorsLinear(const CtScheme& scheme,
                                                         const std::string& format,
                                                         const QuantizedLinearTensors& tensors,
                                                         ThreadPool* pool) {
  if (scheme.input_activations && !scheme.input_activations->dynamic) {
    if (const SafetensorsTensor* input_scale = FindPart(tensors, "input_scale")) {
      VLLM_RETURN_IF_ERROR(CheckInputScale(*input_scale));
    }
  }
  const SafetensorsTensor* weight = FindPart(tensors, "weight");
  const bool fp8_weight = weight != nullptr && DtypeName(*weight) == "F8_E4M3";
  if (format == "float-quantized" || (format == "naive-quantized" && fp8_weight)) {
    return ConvertFloat(scheme.weights, tensors, pool);
  }
  if (format != "int-quantized" && format != "naive-quantized" && format != "pack-quantized") {
    return Error{"module '" + tensors.module + "': compressed-tensors format '" + format +
                 "' is not supported (supported: int-quantized, float-quantized, "
                 "pack-quantized, naive-quantized)"};
  }
  if (scheme.weights.type != "int") {
    return Error{"module '" + tensors.module + "': compressed-tensors format '" + format +
                 "' holds integer weights, but the scheme's weights have type '" +
                 scheme.weights.type + "'"};
  }
  if (format == "pack-quantized") return ConvertPacked(scheme.weights, tensors, pool);
  return ConvertUnpackedIntegers(scheme.weights, tensors, pool);
}

}  // namespace vllm
