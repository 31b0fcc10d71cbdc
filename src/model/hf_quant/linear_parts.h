// Reading the stored parts of one quantized linear layer (QuantizedLinearTensors) for the
// per-method converters. Every error names the tensor and says what is wrong.
#pragma once

#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "common/expected.h"
#include "common/thread_pool.h"
#include "model/hf_quant/quantized_linear.h"

namespace vllm {

// "<module>.<suffix>".
std::string PartName(const QuantizedLinearTensors& tensors, const std::string& suffix);
// The part stored under `suffix`, or nullptr.
const SafetensorsTensor* FindPart(const QuantizedLinearTensors& tensors, const std::string& suffix);
// The part stored under `suffix`, or an error naming the missing tensor.
Expected<const SafetensorsTensor*> RequirePart(const QuantizedLinearTensors& tensors,
                                               const std::string& suffix);
// RequirePart of a 2-D [out, in] weight with both sizes positive.
Expected<const SafetensorsTensor*> RequireMatrixPart(const QuantizedLinearTensors& tensors,
                                                     const std::string& suffix);

// The three stored parts of a GPTQ or AWQ layer: packed codes, packed zero points and scales.
struct PackedIntegerParts {
  const SafetensorsTensor* qweight;
  const SafetensorsTensor* qzeros;
  const SafetensorsTensor* scales;
};
// All three, or an error naming the first one missing.
Expected<PackedIntegerParts> RequirePackedIntegerParts(const QuantizedLinearTensors& tensors);
// quantization_config.group_size of a layer whose `weight` holds `in` input features: -1 is one
// group per row; any other size must divide `in` (an error naming the weight otherwise).
Expected<int64_t> ResolveGroupSize(const SafetensorsTensor& weight, int64_t in, int64_t group_size);

// The file's dtype name ("F8_E4M3", "U8", "I32", ...), also for tensors built without one.
std::string DtypeName(const SafetensorsTensor& tensor);
// "[4096, 1]".
std::string ShapeText(const std::vector<int64_t>& shape);
// Ok when `tensor` has exactly `shape`, otherwise an error naming the tensor and both shapes.
Status CheckShape(const SafetensorsTensor& tensor, const std::vector<int64_t>& shape);
int64_t NumElements(const SafetensorsTensor& tensor);

// The values of an F32 / F16 / BF16 tensor as f32 (exact), each finite.
Expected<std::vector<float>> ReadFloats(const SafetensorsTensor& tensor);
// The values of an integer tensor (I8, U8, I16, I32, I64), or of a float one whose values are
// all integers (compressed-tensors' naive-quantized weights).
Expected<std::vector<int64_t>> ReadIntegers(const SafetensorsTensor& tensor);
// The same as int16 (IntegerGroups' code type), a value beyond it an error naming the tensor; I8
// and U8 weights are read without the wider copy.
Expected<std::vector<int16_t>> ReadInt16s(const SafetensorsTensor& tensor);

// Whether a per-group tensor (scales, zero points) of a weight [rows, cols] quantized in
// num_groups groups along each row holds one value for the whole weight (shaped [] or [1]);
// false when shaped [rows] or [rows, 1] (num_groups 1) or [rows, num_groups]; an error otherwise.
Expected<bool> IsPerTensor(const SafetensorsTensor& tensor, int64_t rows, int64_t num_groups);
// The scales of such a tensor as [rows, num_groups] values.
Expected<std::vector<float>> ReadGroupScales(const SafetensorsTensor& scales, int64_t rows,
                                             int64_t num_groups);

// A static activation scale (fp8 input_scale, compressed-tensors' static input quantization):
// activations are computed in f32 / bf16 here, so it is only checked to be one positive value.
Status CheckInputScale(const SafetensorsTensor& input_scale);

// The input permutation that makes the groups of `group_index` (g_idx: the group of each of the
// cols input columns, desc_act / actorder) contiguous: columns sorted by group, stably. Empty
// when the groups already are (group_index[c] = c / group_size). Errors: a size other than cols,
// a group out of range, or a group that does not hold exactly group_size columns.
Expected<std::vector<int32_t>> GroupInputOrder(const SafetensorsTensor& group_index, int64_t cols,
                                               int64_t group_size);

// fn(begin, end) over [0, count) in chunks that `pool`'s threads claim in turn (a few per thread,
// so a thread that other processes hold up takes fewer), or once on the calling thread without a
// pool. The converters split a layer's rows this way, each chunk writing only its own rows, so the
// converted bytes depend neither on the number of threads nor on which thread took which chunk.
void ForRowRanges(ThreadPool* pool, int64_t count,
                  const std::function<void(int64_t begin, int64_t end)>& fn);

}  // namespace vllm
