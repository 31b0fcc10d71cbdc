// AutoAWQ linears, W[o][i] = (q − z[g][o]) · s[g][o] with g = i / group_size:
//   GEMM: qweight int32 [in, out / 8] and qzeros int32 [groups, out / 8] packed along out, the
//         8 codes of a word in the order 0 2 4 6 1 3 5 7; scales [groups, out].
//   GEMV: qweight int32 [out, in / 8] packed along in in order; scales [out, width · 8] and
//         qzeros int32 [out, width], groups along the row, padded to AutoAWQ's zeros width.
#include <algorithm>

#include "model/hf_quant/integer_groups.h"
#include "model/hf_quant/linear_parts.h"
#include "model/hf_quant/packed_codes.h"
#include "model/hf_quant/quantized_linear.h"

namespace vllm {
namespace {

constexpr int kBits = 4;
constexpr int64_t kCodesPerWord = 32 / kBits;
// GEMM: the nibble of a word that holds the word's k-th output column (inverse of 0 2 4 6 1 3 5 7).
constexpr int kGemmNibble[kCodesPerWord] = {0, 4, 1, 5, 2, 6, 3, 7};

int GemmCode(const uint32_t* words, int64_t index) {
  return static_cast<int>(
      (words[index / kCodesPerWord] >> (kBits * kGemmNibble[index % kCodesPerWord])) & 15);
}

// AutoAWQ's GEMV zeros width: ceil(groups / 8) words, rounded up to a multiple of 1, 2 or 4
// for group sizes ≥ 128, 64 or 32; 0 for other group sizes (not written by AutoAWQ).
int64_t GemvZerosWidth(int64_t num_groups, int64_t group_size) {
  const int64_t multiple = group_size >= 128 ? 1 : group_size == 64 ? 2 : group_size == 32 ? 4 : 0;
  if (multiple == 0) return 0;
  const int64_t words = (num_groups + kCodesPerWord - 1) / kCodesPerWord;
  return (words + multiple - 1) / multiple * multiple;
}

}  // namespace

Expected<ConvertedLinear> ConvertAwqLinear(const AwqConfig& config,
                                           const QuantizedLinearTensors& tensors,
                                           ThreadPool* pool) {
  if (config.bits != kBits) {
    return Error{"quantization_config.bits = " + std::to_string(config.bits) +
                 " is not supported for awq (supported: 4)"};
  }
  const bool gemv = config.version == "gemv";
  if (!gemv && config.version != "gemm") {
    return Error{"quantization_config.version = '" + config.version +
                 "' is not supported for awq (supported: gemm, gemv)"};
  }
  auto parts = RequirePackedIntegerParts(tensors);
  if (!parts) return Error{parts.error()};
  const SafetensorsTensor &qweight = *parts->qweight, &qzeros = *parts->qzeros,
                          &scales = *parts->scales;
  const std::vector<int64_t>& packed_shape = qweight.shape;
  if (packed_shape.size() != 2 || packed_shape[0] <= 0 || packed_shape[1] <= 0) {
    return Error{"tensor '" + qweight.name + "' has shape " + ShapeText(packed_shape) +
                 (gemv ? ", expected [out, in / 8]" : ", expected [in, out / 8]")};
  }
  const int64_t in = gemv ? packed_shape[1] * kCodesPerWord : packed_shape[0];
  const int64_t out = gemv ? packed_shape[0] : packed_shape[1] * kCodesPerWord;
  auto resolved_group_size = ResolveGroupSize(qweight, in, config.group_size);
  if (!resolved_group_size) return Error{resolved_group_size.error()};
  const int64_t group_size = *resolved_group_size, num_groups = in / group_size;
  auto words = ReadPackedWords(qweight, packed_shape);
  if (!words) return Error{words.error()};

  IntegerGroups groups{.rows = out, .cols = in, .group_size = group_size};
  groups.q.resize(out * in);
  groups.zeros.resize(out * num_groups);
  groups.scales.resize(out * num_groups);
  if (gemv) {
    const int64_t width = GemvZerosWidth(num_groups, group_size);
    if (width == 0) {
      return Error{"tensor '" + qweight.name + "': AWQ GEMV needs group_size 32, 64 or >= 128"};
    }
    auto zero_words = ReadPackedWords(qzeros, {out, width});
    if (!zero_words) return Error{zero_words.error()};
    VLLM_RETURN_IF_ERROR(CheckShape(scales, {out, width * kCodesPerWord}));
    auto scale_values = ReadFloats(scales);  // [out, width · 8], the first groups used
    if (!scale_values) return Error{scale_values.error()};
    ForRowRanges(pool, out, [&](int64_t begin, int64_t end) {
      for (int64_t o = begin; o < end; ++o) {
        const uint32_t* row = words->data() + o * (in / kCodesPerWord);
        for (int64_t i = 0; i < in; ++i) {
          groups.q[o * in + i] = static_cast<int16_t>(UnpackCode(row, 1, kBits, i));
        }
        for (int64_t g = 0; g < num_groups; ++g) {
          groups.zeros[o * num_groups + g] =
              static_cast<int16_t>(UnpackCode(zero_words->data() + o * width, 1, kBits, g));
          groups.scales[o * num_groups + g] = (*scale_values)[o * width * kCodesPerWord + g];
        }
      }
    });
  } else {
    auto zero_words = ReadPackedWords(qzeros, {num_groups, out / kCodesPerWord});
    if (!zero_words) return Error{zero_words.error()};
    VLLM_RETURN_IF_ERROR(CheckShape(scales, {num_groups, out}));
    auto scale_values = ReadFloats(scales);  // [groups, out]
    if (!scale_values) return Error{scale_values.error()};
    // Tiles of 32 inputs: the 8 outputs of a word get 32 codes in one stretch of their rows.
    // Threads take chunks of word columns (8 outputs each), 8 word columns (64 rows) at a time
    // so that the rows' pages stay in the TLB.
    const int64_t words_per_input = out / kCodesPerWord;
    constexpr int64_t kTileWords = 8;
    ForRowRanges(pool, words_per_input, [&](int64_t begin, int64_t end) {
      for (int64_t tile = begin; tile < end; tile += kTileWords) {
        const int64_t tile_end = std::min(end, tile + kTileWords);
        for (int64_t i0 = 0; i0 < in; i0 += 32) {
          const int64_t i1 = std::min(in, i0 + 32);
          for (int64_t w = tile; w < tile_end; ++w) {
            int16_t* rows = groups.q.data() + w * kCodesPerWord * in;
            for (int64_t i = i0; i < i1; ++i) {
              const uint32_t word = (*words)[i * words_per_input + w];
              for (int k = 0; k < kCodesPerWord; ++k) {
                rows[k * in + i] = static_cast<int16_t>((word >> (kBits * kGemmNibble[k])) & 15);
              }
            }
          }
        }
      }
    });
    for (int64_t g = 0; g < num_groups; ++g) {
      const uint32_t* row = zero_words->data() + g * (out / kCodesPerWord);
      for (int64_t o = 0; o < out; ++o) {
        groups.zeros[o * num_groups + g] = static_cast<int16_t>(GemmCode(row, o));
        groups.scales[o * num_groups + g] = (*scale_values)[g * out + o];
      }
    }
  }
  auto weight = IntegerGroupsToTensor(groups, PartName(tensors, "weight"), pool);
  if (!weight) return Error{weight.error()};
  return ConvertedLinear{std::move(*weight), {}};
}

}  // namespace vllm
