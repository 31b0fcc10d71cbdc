// bitsandbytes pre-quantized linears as transformers saves them (unsloth's and HF's bnb-4bit /
// 8-bit checkpoints):
//   4-bit NF4 / FP4: weight U8 [ceil(out · in / 2), 1], two codes per byte (high nibble first),
//     over the row-major [out, in] values; W = quant_map[code] · absmax[i / blocksize] for value
//     i. With double quantization absmax is U8 codes too: absmax[j] =
//     nested_quant_map[code j] · nested_absmax[j / nested_blocksize] + nested_offset. The
//     non-tensor fields are a JSON object stored as the U8 bytes of
//     weight.quant_state.bitsandbytes__<quant_type>.
//   8-bit LLM.int8: weight I8 [out, in], SCB f32 [out]; W = weight · SCB / 127.
// Both load as Q8_0 (F16 when a row is not whole blocks of 32): 8 bits per value hold NF4's 16
// levels within half a Q8_0 step, at most 1 / 254 (0.4 %) of the largest value of its 32, itself
// at most the block's absmax.
#include <cmath>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "common/json_depth.h"
#include "kernels/ops.h"
#include "model/hf_quant/integer_groups.h"
#include "model/hf_quant/linear_parts.h"
#include "model/hf_quant/quantized_linear.h"

namespace vllm {
namespace {

// The quant_state JSON of one 4-bit weight.
struct QuantState {
  std::string quant_type;  // "nf4" or "fp4"
  int64_t blocksize = 0;   // values per absmax
  int64_t rows = 0, cols = 0;
  bool nested = false;  // double quantization: absmax stored as U8 codes
  int64_t nested_blocksize = 0;
  float nested_offset = 0.0f;
};

// A positive JSON integer field of `state`, or an error naming the tensor.
Expected<int64_t> PositiveField(const nlohmann::json& state, const char* key,
                                const std::string& name) {
  auto it = state.find(key);
  if (it == state.end() || !it->is_number_integer() || it->get<int64_t>() <= 0) {
    return Error{"tensor '" + name + "': quant_state field '" + key +
                 "' must be a positive integer"};
  }
  return it->get<int64_t>();
}

Expected<QuantState> ReadQuantState(const QuantizedLinearTensors& tensors) {
  const SafetensorsTensor* stored = nullptr;
  std::string suffix_type;
  for (const char* quant_type : {"nf4", "fp4"}) {
    if (const auto* part =
            FindPart(tensors, std::string("weight.quant_state.bitsandbytes__") + quant_type)) {
      stored = part, suffix_type = quant_type;
    }
  }
  if (stored == nullptr) {
    return Error{"tensor '" + PartName(tensors, "weight.quant_state.bitsandbytes__nf4") +
                 "' (or __fp4) is missing"};
  }
  const std::string& name = stored->name;
  if (DtypeName(*stored) != "U8" || NumElements(*stored) != stored->num_bytes) {
    return Error{"tensor '" + name + "' must hold the U8 bytes of a JSON object"};
  }
  const std::string_view text(static_cast<const char*>(stored->data), stored->num_bytes);
  if (JsonNestsDeeperThan(text, 4)) return Error{"tensor '" + name + "' nests too deeply"};
  const nlohmann::json state =
      nlohmann::json::parse(text.begin(), text.end(), nullptr, /*allow_exceptions=*/false);
  if (state.is_discarded() || !state.is_object()) {
    return Error{"tensor '" + name + "' does not hold a JSON object"};
  }
  QuantState result;
  result.quant_type = state.value("quant_type", std::string());
  if (result.quant_type != suffix_type) {
    return Error{"tensor '" + name + "': quant_state quant_type '" + result.quant_type +
                 "' disagrees with the tensor's name"};
  }
  auto blocksize = PositiveField(state, "blocksize", name);
  if (!blocksize) return Error{blocksize.error()};
  result.blocksize = *blocksize;
  auto shape = state.find("shape");
  if (shape == state.end() || !shape->is_array() || shape->size() != 2 ||
      !(*shape)[0].is_number_integer() || !(*shape)[1].is_number_integer() ||
      (*shape)[0].get<int64_t>() <= 0 || (*shape)[1].get<int64_t>() <= 0 ||
      (*shape)[0].get<int64_t>() > (int64_t{1} << 31) ||
      (*shape)[1].get<int64_t>() > (int64_t{1} << 31)) {
    return Error{"tensor '" + name + "': quant_state shape must be two positive sizes [out, in]"};
  }
  result.rows = (*shape)[0].get<int64_t>();
  result.cols = (*shape)[1].get<int64_t>();
  result.nested = state.contains("nested_blocksize");
  if (result.nested) {
    auto nested_blocksize = PositiveField(state, "nested_blocksize", name);
    if (!nested_blocksize) return Error{nested_blocksize.error()};
    result.nested_blocksize = *nested_blocksize;
    auto offset = state.find("nested_offset");
    if (offset == state.end() || !offset->is_number() || !std::isfinite(offset->get<double>())) {
      return Error{"tensor '" + name + "': quant_state nested_offset must be a number"};
    }
    result.nested_offset = offset->get<float>();
  }
  return result;
}

// The f32 values of a part that must hold exactly `count` of them.
Expected<std::vector<float>> ReadFloatPart(const QuantizedLinearTensors& tensors,
                                           const std::string& suffix, int64_t count) {
  auto part = RequirePart(tensors, suffix);
  if (!part) return Error{part.error()};
  if (NumElements(**part) != count) {
    return Error{"tensor '" + (*part)->name + "' has shape " + ShapeText((*part)->shape) +
                 ", expected " + std::to_string(count) + " values"};
  }
  return ReadFloats(**part);
}

// The U8 bytes of a part that must hold exactly `count` of them.
Expected<const uint8_t*> ReadBytePart(const QuantizedLinearTensors& tensors,
                                      const std::string& suffix, int64_t count) {
  auto part = RequirePart(tensors, suffix);
  if (!part) return Error{part.error()};
  const SafetensorsTensor& tensor = **part;
  if (DtypeName(tensor) != "U8" || NumElements(tensor) != count || tensor.num_bytes != count) {
    return Error{"tensor '" + tensor.name + "' is " + DtypeName(tensor) + " " +
                 ShapeText(tensor.shape) + ", expected " + std::to_string(count) + " U8 values"};
  }
  return static_cast<const uint8_t*>(tensor.data);
}

// absmax per block of state.blocksize values: [ceil(rows · cols / blocksize)].
Expected<std::vector<float>> ReadAbsmax(const QuantizedLinearTensors& tensors,
                                        const QuantState& state) {
  const int64_t count = (state.rows * state.cols + state.blocksize - 1) / state.blocksize;
  if (!state.nested) return ReadFloatPart(tensors, "weight.absmax", count);
  auto codes = ReadBytePart(tensors, "weight.absmax", count);
  if (!codes) return Error{codes.error()};
  const int64_t nested_count = (count + state.nested_blocksize - 1) / state.nested_blocksize;
  auto nested_absmax = ReadFloatPart(tensors, "weight.nested_absmax", nested_count);
  if (!nested_absmax) return Error{nested_absmax.error()};
  auto nested_map = ReadFloatPart(tensors, "weight.nested_quant_map", 256);
  if (!nested_map) return Error{nested_map.error()};
  std::vector<float> absmax(count);
  for (int64_t j = 0; j < count; ++j) {
    absmax[j] = (*nested_map)[(*codes)[j]] * (*nested_absmax)[j / state.nested_blocksize] +
                state.nested_offset;
  }
  return absmax;
}

Expected<ConvertedLinear> Convert4Bit(const QuantizedLinearTensors& tensors, ThreadPool* pool) {
  auto state = ReadQuantState(tensors);
  if (!state) return Error{state.error()};
  const int64_t rows = state->rows, cols = state->cols;
  auto codes = ReadBytePart(tensors, "weight", (rows * cols + 1) / 2);
  if (!codes) return Error{codes.error()};
  auto quant_map = ReadFloatPart(tensors, "weight.quant_map", 16);
  if (!quant_map) return Error{quant_map.error()};
  auto absmax = ReadAbsmax(tensors, *state);
  if (!absmax) return Error{absmax.error()};
  // Rows of whole Q8_0 blocks; any other width loads as F16 (as integer_groups.h's rule does).
  const GgmlType type = cols % 32 == 0 ? GgmlType::kQ8_0 : GgmlType::kF16;
  ConvertedLinear linear;
  linear.weight = {.name = PartName(tensors, "weight"), .type = type, .shape = {cols, rows}};
  const int64_t row_bytes = RowBytes(*FindSupportedType(type), cols);
  linear.weight.bytes.resize(rows * row_bytes);
  ForRowRanges(pool, rows, [&](int64_t begin, int64_t end) {
    std::vector<float> row(cols);
    for (int64_t r = begin; r < end; ++r) {
      for (int64_t c = 0; c < cols; ++c) {
        const int64_t i = r * cols + c;
        const uint8_t byte = (*codes)[i / 2];
        const int code = i % 2 == 0 ? byte >> 4 : byte & 0xf;
        row[c] = (*quant_map)[code] * (*absmax)[i / state->blocksize];
      }
      kernels::QuantizeRow(type, row.data(), cols, linear.weight.bytes.data() + r * row_bytes);
    }
  });
  return linear;
}

Expected<ConvertedLinear> Convert8Bit(const QuantizedLinearTensors& tensors, ThreadPool* pool) {
  auto weight = RequirePart(tensors, "weight");
  if (!weight) return Error{weight.error()};
  const SafetensorsTensor& stored = **weight;
  if (DtypeName(stored) != "I8" || stored.shape.size() != 2 || stored.shape[0] <= 0 ||
      stored.shape[1] <= 0) {
    return Error{"tensor '" + stored.name + "' is " + DtypeName(stored) + " " +
                 ShapeText(stored.shape) + ", expected an I8 [out, in] weight"};
  }
  if (const SafetensorsTensor* format = FindPart(tensors, "weight_format")) {
    auto value = ReadIntegers(*format);
    if (!value) return Error{value.error()};
    if (value->size() != 1 || value->front() != 0) {
      return Error{"tensor '" + format->name +
                   "': only the row-major weight format (0) is supported"};
    }
  }
  IntegerGroups groups{.rows = stored.shape[0], .cols = stored.shape[1]};
  groups.group_size = groups.cols;
  auto values = ReadInt16s(stored);
  if (!values) return Error{values.error()};
  groups.q = std::move(*values);
  auto row_scales = RequirePart(tensors, "SCB");
  if (!row_scales) return Error{row_scales.error()};
  auto scales = ReadGroupScales(**row_scales, groups.rows, 1);
  if (!scales) return Error{scales.error()};
  for (float& scale : *scales) scale /= 127.0f;
  groups.scales = std::move(*scales);
  auto tensor = IntegerGroupsToTensor(groups, PartName(tensors, "weight"), pool);
  if (!tensor) return Error{tensor.error()};
  ConvertedLinear linear;
  linear.weight = std::move(*tensor);
  return linear;
}

}  // namespace

Expected<ConvertedLinear> ConvertBitsAndBytesLinear(const BitsAndBytesConfig& config,
                                                    const QuantizedLinearTensors& tensors,
                                                    ThreadPool* pool) {
  if (config.load_in_4bit) return Convert4Bit(tensors, pool);
  if (config.load_in_8bit) return Convert8Bit(tensors, pool);
  return Error{"module '" + tensors.module +
               "': bitsandbytes quantization_config sets neither load_in_4bit nor load_in_8bit"};
}

}  // namespace vllm
