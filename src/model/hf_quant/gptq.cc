// GPTQ (AutoGPTQ / GPTQModel) linears: qweight int32 [in · bits / 32, out] packed along in,
// qzeros int32 [groups, out · bits / 32] packed along out, scales [groups, out], g_idx int32 [in]
// (optional). W[o][i] = scales[g(i)][o] · (q[i][o] − zero[g(i)][o]).
#include <algorithm>

#include "model/hf_quant/integer_groups.h"
#include "model/hf_quant/linear_parts.h"
#include "model/hf_quant/packed_codes.h"
#include "model/hf_quant/quantized_linear.h"

namespace vllm {
namespace {

// Rows [begin, end) of q ([out, in]) from the full runs of 32 inputs of qweight's words
// ([in · kBits / 32, out]): kBits words per output, contiguous across outputs, so each output's
// 32 codes land in one stretch of its row. Rows go in tiles of 64, so that each run writes to a
// few rows' pages rather than to every row of the layer.
template <int kBits>
void UnpackFullRuns(const uint32_t* words, int64_t in, int64_t out, int64_t begin, int64_t end,
                    int16_t* q) {
  constexpr int64_t kTileRows = 64;
  for (int64_t tile = begin; tile < end; tile += kTileRows) {
    const int64_t tile_end = std::min(end, tile + kTileRows);
    for (int64_t run = 0; run < in / 32; ++run) {
      const uint32_t* run_words = words + run * kBits * out;
      for (int64_t o = tile; o < tile_end; ++o) {
        UnpackRunOf32<kBits>(run_words + o, out, q + o * in + run * 32);
      }
    }
  }
}

}  // namespace

Expected<ConvertedLinear> ConvertGptqLinear(const GptqConfig& config,
                                            const QuantizedLinearTensors& tensors,
                                            ThreadPool* pool) {
  const int bits = config.bits;
  if (bits != 2 && bits != 3 && bits != 4 && bits != 8) {
    return Error{"quantization_config.bits = " + std::to_string(bits) +
                 " is not supported for gptq (supported: 2, 3, 4, 8)"};
  }
  auto parts = RequirePackedIntegerParts(tensors);
  if (!parts) return Error{parts.error()};
  const SafetensorsTensor &qweight = *parts->qweight, &qzeros = *parts->qzeros,
                          &scales = *parts->scales;

  // 32 / bits codes per word (AutoGPTQ's 3-bit layout: 32 codes per 3 words).
  const std::vector<int64_t>& packed_shape = qweight.shape;
  if (packed_shape.size() != 2 || packed_shape[0] <= 0 || packed_shape[1] <= 0 ||
      packed_shape[0] * 32 % bits != 0) {
    return Error{"tensor '" + qweight.name + "' has shape " + ShapeText(packed_shape) +
                 ", expected [in · " + std::to_string(bits) + " / 32, out]"};
  }
  const int64_t in = packed_shape[0] * 32 / bits, out = packed_shape[1];
  auto resolved_group_size = ResolveGroupSize(qweight, in, config.group_size);
  if (!resolved_group_size) return Error{resolved_group_size.error()};
  const int64_t group_size = *resolved_group_size;
  if (out * bits % 32 != 0) {
    return Error{"tensor '" + qzeros.name + "': " + std::to_string(out) +
                 " output features do not fill whole int32 words of " + std::to_string(bits) +
                 "-bit zeros"};
  }
  const int64_t num_groups = in / group_size, zero_words_per_group = out * bits / 32;
  auto words = ReadPackedWords(qweight, packed_shape);  // [in · bits / 32, out]
  if (!words) return Error{words.error()};
  auto zero_words = ReadPackedWords(qzeros, {num_groups, zero_words_per_group});
  if (!zero_words) return Error{zero_words.error()};
  VLLM_RETURN_IF_ERROR(CheckShape(scales, {num_groups, out}));
  auto scale_values = ReadFloats(scales);  // [groups, out]
  if (!scale_values) return Error{scale_values.error()};

  ConvertedLinear converted;
  if (const SafetensorsTensor* g_idx = FindPart(tensors, "g_idx")) {
    auto order = GroupInputOrder(*g_idx, in, group_size);
    if (!order) return Error{order.error()};
    converted.input_order = std::move(*order);
  }
  IntegerGroups groups{.rows = out, .cols = in, .group_size = group_size};
  groups.q.resize(out * in);
  // Threads take chunks of outputs (rows of q); the bit width is dispatched once per layer.
  auto unpack_full_runs = bits == 2   ? UnpackFullRuns<2>
                          : bits == 3 ? UnpackFullRuns<3>
                          : bits == 4 ? UnpackFullRuns<4>
                                      : UnpackFullRuns<8>;
  const int64_t full_runs = in / 32;
  const std::vector<int32_t>& input_order = converted.input_order;
  ForRowRanges(pool, out, [&](int64_t begin, int64_t end) {
    unpack_full_runs(words->data(), in, out, begin, end, groups.q.data());
    for (int64_t i = full_runs * 32; i < in; ++i) {  // 2- and 8-bit layers of in % 32 != 0
      for (int64_t o = begin; o < end; ++o) {
        groups.q[o * in + i] = static_cast<int16_t>(UnpackCode(words->data() + o, out, bits, i));
      }
    }
    if (input_order.empty()) return;
    std::vector<int16_t> sorted(in);  // columns sorted by group, one row at a time
    for (int64_t o = begin; o < end; ++o) {
      int16_t* row = groups.q.data() + o * in;
      for (int64_t j = 0; j < in; ++j) sorted[j] = row[input_order[j]];
      std::copy(sorted.begin(), sorted.end(), row);
    }
  });
  // checkpoint_format "gptq" stores zero − 1 (wrapping to 2^bits − 1 for a zero of 0, which
  // AutoGPTQ reads back as 2^bits: kept, it is what the checkpoint means).
  const int zero_offset = config.zeros_minus_one ? 1 : 0;
  groups.scales.resize(out * num_groups);
  groups.zeros.resize(out * num_groups);
  for (int64_t g = 0; g < num_groups; ++g) {
    const uint32_t* group_words = zero_words->data() + g * zero_words_per_group;
    for (int64_t o = 0; o < out; ++o) {
      groups.zeros[o * num_groups + g] =
          static_cast<int16_t>(UnpackCode(group_words, 1, bits, o) + zero_offset);
      groups.scales[o * num_groups + g] = (*scale_values)[g * out + o];
    }
  }
  auto weight = IntegerGroupsToTensor(groups, PartName(tensors, "weight"), pool);
  if (!weight) return Error{weight.error()};
  converted.weight = std::move(*weight);
  return converted;
}

}  // namespace vllm
