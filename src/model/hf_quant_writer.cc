#include "model/hf_quant_writer.h"

#include <algorithm>
#include <cfloat>
#include <cmath>
#include <cstring>
#include <map>
#include <random>
#include <regex>
#include <string_view>

#include "common/byte_hash.h"
#include "common/fp8.h"
#include "common/half.h"

namespace vllm {
namespace {

struct FormatName {
  const char* name;
  HfQuantFormat format;
};
constexpr FormatName kFormatNames[] = {{"gptq", HfQuantFormat::kGptq},
                                       {"gptq-act", HfQuantFormat::kGptqAct},
                                       {"gptq-v2", HfQuantFormat::kGptqV2},
                                       {"awq", HfQuantFormat::kAwq},
                                       {"awq-gemv", HfQuantFormat::kAwqGemv},
                                       {"fp8", HfQuantFormat::kFp8},
                                       {"fp8-block", HfQuantFormat::kFp8Block},
                                       {"w8a8", HfQuantFormat::kW8A8},
                                       {"w4a16", HfQuantFormat::kW4A16},
                                       {"ct-fp8", HfQuantFormat::kCtFp8},
                                       {"ct-fp8-tensor", HfQuantFormat::kCtFp8Tensor},
                                       {"bnb-nf4", HfQuantFormat::kBnbNf4},
                                       {"bnb-fp4", HfQuantFormat::kBnbFp4},
                                       {"bnb-int8", HfQuantFormat::kBnbInt8}};

constexpr int64_t kFp8BlockSize = 128;     // DeepSeek-V3 / Qwen3-FP8's weight_block_size
constexpr int64_t kNf4BlockSize = 64;      // bitsandbytes' default blocksize for 4-bit
constexpr int64_t kNestedBlockSize = 256;  // its blocksize for double-quantized absmax

// bitsandbytes' NF4 code values (the quantiles of a standard normal, scaled to [-1, 1]).
constexpr float kNf4Values[16] = {-1.0f,
                                  -0.6961928009986877f,
                                  -0.5250730514526367f,
                                  -0.39491748809814453f,
                                  -0.28444138169288635f,
                                  -0.18477343022823334f,
                                  -0.09105003625154495f,
                                  0.0f,
                                  0.07958029955625534f,
                                  0.16093020141124725f,
                                  0.24611230194568634f,
                                  0.33791524171829224f,
                                  0.44070982933044434f,
                                  0.5626170039176941f,
                                  0.7229568362236023f,
                                  1.0f};

// bitsandbytes' FP4 (e2m1 with bias 3 and no infinities): code bit 3 is the sign, codes 0-7 the
// magnitudes 0, 0.0625, 8, 12, 4, 6, 2, 3 divided by the largest, 12.
constexpr float kFp4Magnitudes[8] = {0.0f, 0.0625f, 8.0f, 12.0f, 4.0f, 6.0f, 2.0f, 3.0f};

float RoundToFp16(float value) { return Fp16ToFp32(Fp32ToFp16(value)); }
float RoundToBf16(float value) { return Bf16ToFp32(Fp32ToBf16(value)); }

// Bytes of `values` as stored (little-endian hosts only, as the safetensors writer).
template <typename T>
std::vector<uint8_t> BytesOf(const std::vector<T>& values) {
  std::vector<uint8_t> bytes(values.size() * sizeof(T));
  if (!bytes.empty()) std::memcpy(bytes.data(), values.data(), bytes.size());
  return bytes;
}

WrittenTensor Int32Tensor(const std::string& name, std::vector<int64_t> shape,
                          const std::vector<uint32_t>& words) {
  return {name, GgmlType::kI32, "I32", std::move(shape), BytesOf(words)};
}
WrittenTensor F16Tensor(const std::string& name, std::vector<int64_t> shape,
                        const std::vector<float>& values) {
  std::vector<uint16_t> halves(values.size());
  for (size_t i = 0; i < values.size(); ++i) halves[i] = Fp32ToFp16(values[i]);
  return {name, GgmlType::kF16, "F16", std::move(shape), BytesOf(halves)};
}
WrittenTensor Bf16Tensor(const std::string& name, std::vector<int64_t> shape,
                         const std::vector<float>& values) {
  std::vector<uint16_t> halves(values.size());
  for (size_t i = 0; i < values.size(); ++i) halves[i] = Fp32ToBf16(values[i]);
  return {name, GgmlType::kBF16, "BF16", std::move(shape), BytesOf(halves)};
}
WrittenTensor F32Tensor(const std::string& name, std::vector<int64_t> shape,
                        const std::vector<float>& values) {
  return {name, GgmlType::kF32, "F32", std::move(shape), BytesOf(values)};
}
// U8, I8 or F8_E4M3.
WrittenTensor ByteTensor(const std::string& name, const char* dtype, std::vector<int64_t> shape,
                         std::vector<uint8_t> bytes) {
  return {name, GgmlType::kI8, dtype, std::move(shape), std::move(bytes)};
}

// Packs `bits`-bit codes into int32 words as a little-endian bit stream per line: code k of a
// line starts at bit k · bits of the line's words. For 2, 4 and 8 bits that is 32 / bits codes
// per word, code j at bits · j; AutoGPTQ's 3-bit layout runs 32 codes across three words so.
// codes: [lines, count] → [lines, count · bits / 32] (count · bits a multiple of 32).
std::vector<uint32_t> PackLines(const std::vector<uint32_t>& codes, int64_t lines, int64_t count,
                                int bits) {
  const int64_t words_per_line = count * bits / 32;
  std::vector<uint32_t> words(lines * words_per_line, 0);
  for (int64_t line = 0; line < lines; ++line) {
    uint32_t* out = words.data() + line * words_per_line;
    for (int64_t k = 0; k < count; ++k) {
      const uint32_t code = codes[line * count + k];
      const int64_t bit = k * bits;
      const int shift = static_cast<int>(bit % 32);
      out[bit / 32] |= code << shift;
      if (shift + bits > 32) out[bit / 32 + 1] |= code >> (32 - shift);
    }
  }
  return words;
}

// values: [rows, cols] → [cols, rows].
template <typename T>
std::vector<T> Transpose(const std::vector<T>& values, int64_t rows, int64_t cols) {
  std::vector<T> out(values.size());
  for (int64_t r = 0; r < rows; ++r) {
    for (int64_t c = 0; c < cols; ++c) out[c * rows + r] = values[r * cols + c];
  }
  return out;
}

int64_t CeilDiv(int64_t a, int64_t b) { return (a + b - 1) / b; }

// Group size along a row: `group_size`, or the whole row for -1; an error unless it divides cols.
Expected<int64_t> RowGroupSize(const HfQuantWriterOptions& options, const std::string& module,
                               int64_t cols) {
  const int64_t group = options.group_size == -1 ? cols : options.group_size;
  if (group <= 0 || cols % group != 0) {
    return Error{module + ": " + std::to_string(cols) + " input features are not a multiple of " +
                 "the group size " + std::to_string(group)};
  }
  return group;
}

Status CheckPacking(const std::string& module, const char* what, int64_t count, int bits) {
  if (count * bits % 32 != 0) {
    return Error{module + ": " + std::to_string(count) + " " + what + " do not fill whole int32 " +
                 "words of " + std::to_string(bits) + "-bit values"};
  }
  return Status::Ok();
}

// What `module` reads its input from: the projections of one input (q, k and v; gate and up;
// Mixtral's w1 and w3) name it alike, since GPTQ's act order sorts columns by the Hessian of that
// input, one order for all of them (which lets the loader keep them fused).
std::string InputOf(const std::string& module) {
  static const std::map<std::string_view, std::string_view> kSharedInputs = {
      {"q_proj", "qkv_proj"},
      {"k_proj", "qkv_proj"},
      {"v_proj", "qkv_proj"},
      {"gate_proj", "gate_up_proj"},
      {"up_proj", "gate_up_proj"},
      {"w1", "w13"},
      {"w3", "w13"}};
  const size_t dot = module.rfind('.');
  const size_t stem = dot == std::string::npos ? 0 : dot + 1;
  const auto shared = kSharedInputs.find(std::string_view(module).substr(stem));
  return shared == kSharedInputs.end() ? module
                                       : module.substr(0, stem) + std::string(shared->second);
}

// The column permutation of one gptq-act layer, the same for the same seed and input (InputOf).
std::vector<int64_t> ColumnPermutation(uint64_t seed, const std::string& module, int64_t cols) {
  const std::string input = InputOf(module);
  uint64_t hash = FeedBytes(kByteHashSeed, &seed, sizeof(seed));
  hash = FinalizeHash(FeedBytes(hash, input.data(), input.size()));
  std::mt19937_64 generator(hash);
  std::vector<int64_t> permutation(cols);
  for (int64_t c = 0; c < cols; ++c) permutation[c] = c;
  for (int64_t c = cols - 1; c > 0; --c) {  // Fisher–Yates (std::shuffle differs by library)
    std::swap(permutation[c], permutation[generator() % static_cast<uint64_t>(c + 1)]);
  }
  return permutation;
}

// AutoGPTQ: W[o, i] = scales[g(i), o] · (q[o, i] − zero[g(i), o]), scales f16; round to nearest
// with AutoGPTQ's ranges (sym: ±max|w| with zero 2^(bits−1); asym: [min(w, 0), max(w, 0)]).
// checkpoint_format gptq stores zero − 1; gptq_v2 (GPTQModel) stores the zero itself.
Expected<QuantizedHfLinear> QuantizeGptq(const HfQuantWriterOptions& options, bool act_order,
                                         bool zeros_minus_one, const std::string& module,
                                         const float* weight, int64_t rows, int64_t cols) {
  auto group = RowGroupSize(options, module, cols);
  if (!group) return Error{group.error()};
  const int bits = options.bits;
  VLLM_RETURN_IF_ERROR(CheckPacking(module, "input features", cols, bits));
  VLLM_RETURN_IF_ERROR(CheckPacking(module, "output features", rows, bits));
  const int64_t num_groups = cols / *group;
  const uint32_t max_code = (1u << bits) - 1;

  // g_idx[i]: input column i's group; with act order, groups follow a permutation of columns.
  std::vector<int32_t> g_idx(cols);
  if (act_order) {
    const std::vector<int64_t> permutation = ColumnPermutation(options.seed, module, cols);
    for (int64_t k = 0; k < cols; ++k) g_idx[permutation[k]] = static_cast<int32_t>(k / *group);
  } else {
    for (int64_t i = 0; i < cols; ++i) g_idx[i] = static_cast<int32_t>(i / *group);
  }

  std::vector<float> scales(num_groups * rows);    // [groups, rows]
  std::vector<uint32_t> zeros(num_groups * rows);  // [groups, rows]
  std::vector<float> low(num_groups), high(num_groups);
  for (int64_t r = 0; r < rows; ++r) {
    std::fill(low.begin(), low.end(), 0.0f);
    std::fill(high.begin(), high.end(), 0.0f);
    for (int64_t i = 0; i < cols; ++i) {
      low[g_idx[i]] = std::min(low[g_idx[i]], weight[r * cols + i]);
      high[g_idx[i]] = std::max(high[g_idx[i]], weight[r * cols + i]);
    }
    for (int64_t g = 0; g < num_groups; ++g) {
      float lo = low[g], hi = high[g];
      if (options.symmetric) {
        hi = std::max(-lo, hi);
        if (lo < 0) lo = -hi;
      }
      if (lo == 0.0f && hi == 0.0f) lo = -1.0f, hi = 1.0f;
      float scale = RoundToFp16((hi - lo) / static_cast<float>(max_code));
      if (!(scale > 0.0f)) scale = Fp16ToFp32(1);  // the smallest f16 step
      // zero − 1 cannot hold a zero of 0: 1 at least there.
      const float lowest_zero = zeros_minus_one ? 1.0f : 0.0f;
      const float zero = options.symmetric ? static_cast<float>((max_code + 1) / 2)
                                           : std::clamp(std::nearbyint(-lo / scale), lowest_zero,
                                                        static_cast<float>(max_code));
      scales[g * rows + r] = scale;
      zeros[g * rows + r] = static_cast<uint32_t>(zero);
    }
  }

  QuantizedHfLinear out;
  out.dequantized.resize(rows * cols);
  std::vector<uint32_t> codes(rows * cols);  // [rows, cols]
  for (int64_t r = 0; r < rows; ++r) {
    for (int64_t i = 0; i < cols; ++i) {
      const float scale = scales[g_idx[i] * rows + r];
      const int64_t zero = zeros[g_idx[i] * rows + r];
      const int64_t code = std::clamp<int64_t>(
          static_cast<int64_t>(std::nearbyint(weight[r * cols + i] / scale)) + zero, 0, max_code);
      codes[r * cols + i] = static_cast<uint32_t>(code);
      out.dequantized[r * cols + i] = scale * static_cast<float>(code - zero);
    }
  }
  std::vector<uint32_t> stored_zeros(zeros.size());
  const uint32_t zero_offset = zeros_minus_one ? 1 : 0;
  for (size_t k = 0; k < zeros.size(); ++k) stored_zeros[k] = (zeros[k] - zero_offset) & max_code;
  // qweight packs along the input dim: [cols · bits / 32, rows].
  std::vector<uint32_t> qweight =
      Transpose(PackLines(codes, rows, cols, bits), rows, cols * bits / 32);
  std::vector<uint32_t> g_idx_words(g_idx.begin(), g_idx.end());
  out.tensors.push_back(Int32Tensor(module + ".qweight", {cols * bits / 32, rows}, qweight));
  out.tensors.push_back(Int32Tensor(module + ".qzeros", {num_groups, rows * bits / 32},
                                    PackLines(stored_zeros, num_groups, rows, bits)));
  out.tensors.push_back(F16Tensor(module + ".scales", {num_groups, rows}, scales));
  out.tensors.push_back(Int32Tensor(module + ".g_idx", {cols}, g_idx_words));
  return out;
}

// AutoAWQ's GEMV zeros width (calculate_zeros_width): ⌈groups / 8⌉ words, rounded up to a
// multiple of 1, 2 or 4 for group sizes ≥ 128, 64 and 32; 0 for the sizes its kernels lack.
int64_t AwqGemvZerosWidth(int64_t num_groups, int64_t group_size) {
  const int64_t multiple = group_size >= 128 ? 1 : group_size == 64 ? 2 : group_size == 32 ? 4 : 0;
  if (multiple == 0) return 0;
  return CeilDiv(CeilDiv(num_groups, 8), multiple) * multiple;
}

// AutoAWQ, 4 bits with zero points: W[o, i] = (q − z[g, o]) · s[g, o], g = i / group_size;
// s = (max − min) / 15 of the group (f16), z = −round(min / s). GEMM words pack along the output
// dim, nibble j holding column 8k + kAwqOrder[j]; GEMV words pack along the input dim in order,
// and each row's zeros and scales are padded to the zeros width (AwqGemvZerosWidth).
Expected<QuantizedHfLinear> QuantizeAwq(const HfQuantWriterOptions& options, bool gemv,
                                        const std::string& module, const float* weight,
                                        int64_t rows, int64_t cols) {
  static constexpr int kAwqOrder[8] = {0, 2, 4, 6, 1, 3, 5, 7};
  auto group = RowGroupSize(options, module, cols);
  if (!group) return Error{group.error()};
  VLLM_RETURN_IF_ERROR(CheckPacking(module, "output features", rows, 4));
  const int64_t num_groups = cols / *group;
  const int64_t gemv_width = AwqGemvZerosWidth(num_groups, *group);
  if (gemv) {
    VLLM_RETURN_IF_ERROR(CheckPacking(module, "input features", cols, 4));
    if (gemv_width == 0) {
      return Error{module + ": AWQ GEMV takes groups of 32, 64 or at least 128 values, not " +
                   std::to_string(*group)};
    }
  }
  std::vector<float> scales(num_groups * rows);    // [groups, rows]
  std::vector<uint32_t> zeros(num_groups * rows);  // [groups, rows]
  std::vector<uint32_t> codes(cols * rows);        // [cols, rows]
  QuantizedHfLinear out;
  out.dequantized.resize(rows * cols);
  for (int64_t r = 0; r < rows; ++r) {
    for (int64_t g = 0; g < num_groups; ++g) {
      const float* values = weight + r * cols + g * *group;
      const auto [lo, hi] = std::minmax_element(values, values + *group);
      const float scale = RoundToFp16(std::max(*hi - *lo, 1e-5f) / 15.0f);
      const float zero = std::clamp(-std::nearbyint(*lo / scale), 0.0f, 15.0f);
      scales[g * rows + r] = scale;
      zeros[g * rows + r] = static_cast<uint32_t>(zero);
      for (int64_t k = 0; k < *group; ++k) {
        const float code = std::clamp(std::nearbyint(values[k] / scale) + zero, 0.0f, 15.0f);
        codes[(g * *group + k) * rows + r] = static_cast<uint32_t>(code);
        out.dequantized[r * cols + g * *group + k] = (code - zero) * scale;
      }
    }
  }
  if (gemv) {
    // [rows, groups] → [rows, width · 8], the padding zero.
    auto padded_rows = [&](const auto& by_group) {
      std::vector<std::decay_t<decltype(by_group[0])>> padded(rows * gemv_width * 8, 0);
      for (int64_t r = 0; r < rows; ++r) {
        for (int64_t g = 0; g < num_groups; ++g) {
          padded[r * gemv_width * 8 + g] = by_group[g * rows + r];
        }
      }
      return padded;
    };
    out.tensors.push_back(Int32Tensor(module + ".qweight", {rows, cols / 8},
                                      PackLines(Transpose(codes, cols, rows), rows, cols, 4)));
    out.tensors.push_back(Int32Tensor(module + ".qzeros", {rows, gemv_width},
                                      PackLines(padded_rows(zeros), rows, gemv_width * 8, 4)));
    out.tensors.push_back(
        F16Tensor(module + ".scales", {rows, gemv_width * 8}, padded_rows(scales)));
    return out;
  }
  // [n, rows] → the same with each run of 8 output columns in AWQ's order (rows % 8 == 0).
  auto interleave = [](std::vector<uint32_t> lines) {
    for (size_t base = 0; base < lines.size(); base += 8) {
      uint32_t eight[8];
      for (int j = 0; j < 8; ++j) eight[j] = lines[base + kAwqOrder[j]];
      std::copy(eight, eight + 8, lines.begin() + static_cast<int64_t>(base));
    }
    return lines;
  };
  out.tensors.push_back(Int32Tensor(module + ".qweight", {cols, rows / 8},
                                    PackLines(interleave(codes), cols, rows, 4)));
  out.tensors.push_back(Int32Tensor(module + ".qzeros", {num_groups, rows / 8},
                                    PackLines(interleave(zeros), num_groups, rows, 4)));
  out.tensors.push_back(F16Tensor(module + ".scales", {num_groups, rows}, scales));
  return out;
}

// e4m3 codes of W / s, with s = max|W| / 448 per block of [block_rows, block_cols] values as the
// format stores it (`round_scale`): out.tensors holds the weight; scales [⌈rows / block_rows⌉,
// ⌈cols / block_cols⌉] are the caller's to store.
QuantizedHfLinear QuantizeFp8Blocks(const std::string& module, const float* weight, int64_t rows,
                                    int64_t cols, int64_t block_rows, int64_t block_cols,
                                    float (*round_scale)(float), std::vector<float>* scales) {
  const int64_t row_blocks = CeilDiv(rows, block_rows), col_blocks = CeilDiv(cols, block_cols);
  scales->assign(row_blocks * col_blocks, 0.0f);
  for (int64_t r = 0; r < rows; ++r) {
    for (int64_t c = 0; c < cols; ++c) {
      float& block_max = (*scales)[(r / block_rows) * col_blocks + c / block_cols];
      block_max = std::max(block_max, std::fabs(weight[r * cols + c]));
    }
  }
  for (float& scale : *scales) scale = scale > 0.0f ? round_scale(scale / kFp8E4m3Max) : 1.0f;
  QuantizedHfLinear out;
  out.dequantized.resize(rows * cols);
  std::vector<uint8_t> codes(rows * cols);
  for (int64_t r = 0; r < rows; ++r) {
    for (int64_t c = 0; c < cols; ++c) {
      const float scale = (*scales)[(r / block_rows) * col_blocks + c / block_cols];
      codes[r * cols + c] = EncodeFp8E4m3(weight[r * cols + c] / scale);  // saturating at 448
      out.dequantized[r * cols + c] = DecodeFp8E4m3(codes[r * cols + c]) * scale;
    }
  }
  out.tensors.push_back(ByteTensor(module + ".weight", "F8_E4M3", {rows, cols}, std::move(codes)));
  return out;
}

float KeepF32(float value) { return value; }

// quant_method fp8: per tensor (AutoFP8's weight_scale, a f32 scalar) or per 128 × 128 block
// (weight_scale_inv [⌈rows/128⌉, ⌈cols/128⌉], f32).
Expected<QuantizedHfLinear> QuantizeFp8(bool blocks, const std::string& module, const float* weight,
                                        int64_t rows, int64_t cols) {
  std::vector<float> scales;
  QuantizedHfLinear out =
      QuantizeFp8Blocks(module, weight, rows, cols, blocks ? kFp8BlockSize : rows,
                        blocks ? kFp8BlockSize : cols, KeepF32, &scales);
  if (blocks) {
    out.tensors.push_back(F32Tensor(module + ".weight_scale_inv",
                                    {CeilDiv(rows, kFp8BlockSize), CeilDiv(cols, kFp8BlockSize)},
                                    scales));
  } else {
    out.tensors.push_back(F32Tensor(module + ".weight_scale", {}, scales));
  }
  return out;
}

// compressed-tensors float-quantized, as llm-compressor's FP8 schemes store it: weight_scale in
// the model's dtype (bf16), [rows, 1] per channel or [1] per tensor.
Expected<QuantizedHfLinear> QuantizeCtFp8(bool per_channel, const std::string& module,
                                          const float* weight, int64_t rows, int64_t cols) {
  std::vector<float> scales;
  QuantizedHfLinear out = QuantizeFp8Blocks(module, weight, rows, cols, per_channel ? 1 : rows,
                                            cols, RoundToBf16, &scales);
  out.tensors.push_back(
      Bf16Tensor(module + ".weight_scale",
                 per_channel ? std::vector<int64_t>{rows, 1} : std::vector<int64_t>{1}, scales));
  return out;
}

// compressed-tensors int-quantized W8A8: per-row symmetric int8, scale = max|w| / 127 in bf16.
Expected<QuantizedHfLinear> QuantizeW8A8(const std::string& module, const float* weight,
                                         int64_t rows, int64_t cols) {
  std::vector<float> scales(rows);
  std::vector<uint8_t> codes(rows * cols);
  QuantizedHfLinear out;
  out.dequantized.resize(rows * cols);
  for (int64_t r = 0; r < rows; ++r) {
    float max_magnitude = 0.0f;
    for (int64_t c = 0; c < cols; ++c) {
      max_magnitude = std::max(max_magnitude, std::fabs(weight[r * cols + c]));
    }
    const float scale = RoundToBf16(std::max(max_magnitude / 127.0f, FLT_EPSILON));
    scales[r] = scale;
    for (int64_t c = 0; c < cols; ++c) {
      const float q = std::clamp(std::nearbyint(weight[r * cols + c] / scale), -128.0f, 127.0f);
      codes[r * cols + c] = static_cast<uint8_t>(static_cast<int8_t>(q));
      out.dequantized[r * cols + c] = q * scale;
    }
  }
  out.tensors.push_back(ByteTensor(module + ".weight", "I8", {rows, cols}, std::move(codes)));
  out.tensors.push_back(Bf16Tensor(module + ".weight_scale", {rows, 1}, scales));
  return out;
}

// compressed-tensors pack-quantized (W4A16, W8A16): signed values q in [−2^(b−1), 2^(b−1) − 1]
// stored as q + 2^(b−1), 32 / b per int32 along the row; W = (q − zp) · scale per group, scale
// in bf16 = max|w| / ((2^b − 1) / 2) (sym) or (max − min) / (2^b − 1) with zp = −2^(b−1) −
// round(min / scale) (asym; zero points packed likewise along the output dim).
Expected<QuantizedHfLinear> QuantizePacked(const HfQuantWriterOptions& options,
                                           const std::string& module, const float* weight,
                                           int64_t rows, int64_t cols) {
  auto group = RowGroupSize(options, module, cols);
  if (!group) return Error{group.error()};
  const int bits = options.bits;
  VLLM_RETURN_IF_ERROR(CheckPacking(module, "input features", cols, bits));
  if (!options.symmetric) {
    VLLM_RETURN_IF_ERROR(CheckPacking(module, "output features", rows, bits));
  }
  const int64_t num_groups = cols / *group;
  const float q_min = -static_cast<float>(1 << (bits - 1));
  const float q_max = static_cast<float>((1 << (bits - 1)) - 1);
  const uint32_t offset = 1u << (bits - 1);
  std::vector<float> scales(rows * num_groups);         // [rows, groups]
  std::vector<uint32_t> zero_codes(rows * num_groups);  // [rows, groups], zp + offset
  std::vector<uint32_t> codes(rows * cols);             // [rows, cols], q + offset
  QuantizedHfLinear out;
  out.dequantized.resize(rows * cols);
  for (int64_t r = 0; r < rows; ++r) {
    for (int64_t g = 0; g < num_groups; ++g) {
      const float* values = weight + r * cols + g * *group;
      const auto [lo_it, hi_it] = std::minmax_element(values, values + *group);
      const float lo = std::min(*lo_it, 0.0f), hi = std::max(*hi_it, 0.0f);
      float scale, zero = 0.0f;
      if (options.symmetric) {
        scale = RoundToBf16(std::max(std::max(-lo, hi) / ((q_max - q_min) / 2), FLT_EPSILON));
      } else {
        scale = RoundToBf16(std::max((hi - lo) / (q_max - q_min), FLT_EPSILON));
        zero = std::clamp(std::nearbyint(q_min - lo / scale), q_min, q_max);
      }
      scales[r * num_groups + g] = scale;
      zero_codes[r * num_groups + g] = static_cast<uint32_t>(zero + static_cast<float>(offset));
      for (int64_t k = 0; k < *group; ++k) {
        const float q = std::clamp(std::nearbyint(values[k] / scale) + zero, q_min, q_max);
        codes[r * cols + g * *group + k] = static_cast<uint32_t>(q + static_cast<float>(offset));
        out.dequantized[r * cols + g * *group + k] = (q - zero) * scale;
      }
    }
  }
  out.tensors.push_back(Int32Tensor(module + ".weight_packed", {rows, cols * bits / 32},
                                    PackLines(codes, rows, cols, bits)));
  out.tensors.push_back(Bf16Tensor(module + ".weight_scale", {rows, num_groups}, scales));
  out.tensors.push_back({module + ".weight_shape",
                         GgmlType::kI64,
                         "I64",
                         {2},
                         BytesOf(std::vector<int64_t>{rows, cols})});
  if (!options.symmetric) {
    // Packed along the output dim: [rows · bits / 32, groups].
    const std::vector<uint32_t> packed =
        PackLines(Transpose(zero_codes, rows, num_groups), num_groups, rows, bits);
    out.tensors.push_back(Int32Tensor(module + ".weight_zero_point", {rows * bits / 32, num_groups},
                                      Transpose(packed, num_groups, rows * bits / 32)));
  }
  return out;
}

// The index of the value of `table` (ascending) nearest to x.
uint8_t NearestIndex(const float* table, int size, float x) {
  const float* above = std::lower_bound(table, table + size, x);
  if (above == table) return 0;
  if (above == table + size) return static_cast<uint8_t>(size - 1);
  return static_cast<uint8_t>(x - above[-1] <= *above - x ? above - table - 1 : above - table);
}

// bitsandbytes' signed dynamic 8-bit map (create_dynamic_map: for each of 7 decades, the
// midpoints of a linear split of [0.1, 1] into 2^i parts, both signs, plus 0 and 1), ascending.
std::vector<float> DynamicMap() {
  std::vector<float> values;
  for (int i = 0; i < 7; ++i) {
    const int parts = 1 << i;
    const float decade = std::pow(10.0f, static_cast<float>(i - 6));
    for (int k = 0; k < parts; ++k) {
      const float left = 0.1f + 0.9f * static_cast<float>(k) / static_cast<float>(parts);
      const float right = 0.1f + 0.9f * static_cast<float>(k + 1) / static_cast<float>(parts);
      const float mean = (left + right) / 2.0f;
      values.push_back(decade * mean);
      values.push_back(-decade * mean);
    }
  }
  values.push_back(0.0f);
  values.push_back(1.0f);
  std::sort(values.begin(), values.end());
  return values;
}

// bitsandbytes' 16 levels of `quant_type` ("nf4" or "fp4"), by code (its quant_map).
std::vector<float> FourBitLevels(const std::string& quant_type) {
  if (quant_type == "nf4") return std::vector<float>(kNf4Values, kNf4Values + 16);
  std::vector<float> levels(16);
  for (int code = 0; code < 16; ++code) {
    const float magnitude = kFp4Magnitudes[code % 8] / kFp4Magnitudes[3];
    levels[code] = code < 8 ? magnitude : -magnitude;  // code 8 is -0
  }
  return levels;
}

// The code of the level nearest to x in [-1, 1] (bitsandbytes' quantizers pick the nearest,
// the lower on a tie; FP4's sign bit follows x's sign, so -0 for small negative x).
uint8_t NearestFourBitCode(const std::vector<float>& levels, bool fp4, float x) {
  if (!fp4) return NearestIndex(levels.data(), 16, x);  // NF4's levels ascend by code
  static constexpr uint8_t kAscendingCodes[8] = {0, 1, 6, 7, 4, 5, 2, 3};
  float magnitudes[8];
  for (int k = 0; k < 8; ++k) magnitudes[k] = levels[kAscendingCodes[k]];
  const uint8_t code = kAscendingCodes[NearestIndex(magnitudes, 8, std::fabs(x))];
  return std::signbit(x) ? static_cast<uint8_t>(code | 8) : code;
}

// bitsandbytes NF4 / FP4 as transformers saves a Linear4bit with bnb_4bit_use_double_quant: the
// weight flattened row-major in blocks of 64, each the nearest 4-bit code of w / absmax (two per
// byte, the first in the high nibble); the blocks' absmax less their mean, in blocks of 256, as
// the nearest dynamic-map code of absmax / nested_absmax.
Expected<QuantizedHfLinear> QuantizeBnb4Bit(const HfQuantWriterOptions& options, bool fp4,
                                            const std::string& module, const float* weight,
                                            int64_t rows, int64_t cols) {
  const std::string quant_type = fp4 ? "fp4" : "nf4";
  const std::vector<float> levels = FourBitLevels(quant_type);
  const int64_t count = rows * cols;
  const int64_t num_blocks = CeilDiv(count, kNf4BlockSize);
  std::vector<float> absmax(num_blocks, 0.0f);
  for (int64_t i = 0; i < count; ++i) {
    absmax[i / kNf4BlockSize] = std::max(absmax[i / kNf4BlockSize], std::fabs(weight[i]));
  }
  std::vector<uint8_t> packed((count + 1) / 2, 0);
  std::vector<uint8_t> codes(count);
  for (int64_t i = 0; i < count; ++i) {
    const float block_max = absmax[i / kNf4BlockSize];
    const float normalized = block_max > 0.0f ? weight[i] * (1.0f / block_max) : 0.0f;
    codes[i] = NearestFourBitCode(levels, fp4, normalized);
    packed[i / 2] |= static_cast<uint8_t>(i % 2 == 0 ? codes[i] << 4 : codes[i]);
  }

  // Double quantization of absmax.
  double sum = 0.0;
  for (float value : absmax) sum += value;
  const float mean = static_cast<float>(sum / static_cast<double>(num_blocks));
  const std::vector<float> dynamic_map = DynamicMap();
  const int64_t num_nested = CeilDiv(num_blocks, kNestedBlockSize);
  std::vector<float> nested_absmax(num_nested, 0.0f);
  for (int64_t b = 0; b < num_blocks; ++b) {
    float& nested = nested_absmax[b / kNestedBlockSize];
    nested = std::max(nested, std::fabs(absmax[b] - mean));
  }
  std::vector<uint8_t> absmax_codes(num_blocks);
  std::vector<float> stored_absmax(num_blocks);  // what the codes decode to
  for (int64_t b = 0; b < num_blocks; ++b) {
    const float nested = nested_absmax[b / kNestedBlockSize];
    const float normalized = nested > 0.0f ? (absmax[b] - mean) * (1.0f / nested) : 0.0f;
    absmax_codes[b] = NearestIndex(dynamic_map.data(), 256, normalized);
    stored_absmax[b] = dynamic_map[absmax_codes[b]] * nested + mean;
  }
  QuantizedHfLinear out;
  out.dequantized.resize(count);
  for (int64_t i = 0; i < count; ++i) {
    out.dequantized[i] = levels[codes[i]] * stored_absmax[i / kNf4BlockSize];
  }

  nlohmann::ordered_json state = {{"quant_type", quant_type},
                                  {"blocksize", kNf4BlockSize},
                                  {"dtype", options.torch_dtype},
                                  {"shape", {rows, cols}},
                                  {"nested_blocksize", kNestedBlockSize},
                                  {"nested_dtype", "float32"},
                                  {"nested_offset", static_cast<double>(mean)}};
  const std::string state_text = state.dump();
  const std::string weight_name = module + ".weight";
  out.tensors.push_back(ByteTensor(weight_name, "U8", {(count + 1) / 2, 1}, std::move(packed)));
  out.tensors.push_back(
      ByteTensor(weight_name + ".absmax", "U8", {num_blocks}, std::move(absmax_codes)));
  out.tensors.push_back(F32Tensor(weight_name + ".nested_absmax", {num_nested}, nested_absmax));
  out.tensors.push_back(F32Tensor(weight_name + ".nested_quant_map", {256}, dynamic_map));
  out.tensors.push_back(F32Tensor(weight_name + ".quant_map", {16}, levels));
  out.tensors.push_back(ByteTensor(weight_name + ".quant_state.bitsandbytes__" + quant_type, "U8",
                                   {static_cast<int64_t>(state_text.size())},
                                   std::vector<uint8_t>(state_text.begin(), state_text.end())));
  return out;
}

// bitsandbytes LLM.int8 (Linear8bitLt as transformers saves it): q = round(127 · w / SCB) with
// SCB the row's max |w|; W = q · SCB / 127. weight_format 0 is the "row" layout.
Expected<QuantizedHfLinear> QuantizeBnbInt8(const std::string& module, const float* weight,
                                            int64_t rows, int64_t cols) {
  std::vector<float> row_absmax(rows, 0.0f);
  std::vector<uint8_t> codes(rows * cols);
  QuantizedHfLinear out;
  out.dequantized.resize(rows * cols);
  for (int64_t r = 0; r < rows; ++r) {
    for (int64_t c = 0; c < cols; ++c) {
      row_absmax[r] = std::max(row_absmax[r], std::fabs(weight[r * cols + c]));
    }
    const float absmax = row_absmax[r] > 0.0f ? row_absmax[r] : 1.0f;
    row_absmax[r] = absmax;
    for (int64_t c = 0; c < cols; ++c) {
      const float q =
          std::clamp(std::nearbyint(weight[r * cols + c] * 127.0f / absmax), -127.0f, 127.0f);
      codes[r * cols + c] = static_cast<uint8_t>(static_cast<int8_t>(q));
      out.dequantized[r * cols + c] = q * absmax / 127.0f;
    }
  }
  out.tensors.push_back(ByteTensor(module + ".weight", "I8", {rows, cols}, std::move(codes)));
  out.tensors.push_back(F32Tensor(module + ".SCB", {rows}, row_absmax));
  out.tensors.push_back(ByteTensor(module + ".weight_format", "U8", {}, {0}));
  return out;
}

// compressed-tensors' QuantizationArgs as llm-compressor writes them.
nlohmann::json CtArgs(const char* type, int bits, bool symmetric, const char* strategy,
                      int64_t group_size, bool dynamic) {
  return {{"actorder", nullptr},
          {"block_structure", nullptr},
          {"dynamic", dynamic},
          {"group_size", group_size > 0 ? nlohmann::json(group_size) : nlohmann::json(nullptr)},
          {"num_bits", bits},
          {"observer", dynamic ? nlohmann::json(nullptr) : nlohmann::json("minmax")},
          {"observer_kwargs", nlohmann::json::object()},
          {"strategy", strategy},
          {"symmetric", symmetric},
          {"type", type}};
}

}  // namespace

nlohmann::json CompressedTensorsConfigJson(const std::string& format, nlohmann::json weights,
                                           nlohmann::json input_activations) {
  return {{"quant_method", "compressed-tensors"},
          {"format", format},
          {"quantization_status", "compressed"},
          {"config_groups",
           {{"group_0",
             {{"targets", {"Linear"}},
              {"weights", std::move(weights)},
              {"input_activations", std::move(input_activations)},
              {"output_activations", nullptr}}}}},
          {"ignore", {"lm_head"}},
          {"kv_cache_scheme", nullptr}};
}

const char* HfQuantFormatNames() {
  static const std::string names = [] {
    std::string joined;
    for (const FormatName& entry : kFormatNames) {
      joined += (joined.empty() ? "" : "|") + std::string(entry.name);
    }
    return joined;
  }();
  return names.c_str();
}

Expected<HfQuantWriterOptions> MakeHfQuantWriterOptions(const std::string& name, int bits,
                                                        int64_t group_size, bool asym,
                                                        uint64_t seed) {
  const FormatName* found = nullptr;
  for (const FormatName& entry : kFormatNames) {
    if (name == entry.name) found = &entry;
  }
  if (found == nullptr) {
    return Error{"--quantization: unknown format '" + name + "' (known: " + HfQuantFormatNames() +
                 ")"};
  }
  HfQuantWriterOptions options;
  options.format = found->format;
  options.seed = seed;
  const bool gptq = options.format == HfQuantFormat::kGptq ||
                    options.format == HfQuantFormat::kGptqAct ||
                    options.format == HfQuantFormat::kGptqV2;
  const bool packed = options.format == HfQuantFormat::kW4A16;
  const bool awq =
      options.format == HfQuantFormat::kAwq || options.format == HfQuantFormat::kAwqGemv;
  const bool grouped = gptq || packed || awq;
  if (options.format == HfQuantFormat::kGptqAct) {
    options.group_size = 64;
    options.symmetric = false;
  }
  if (bits != 0) {
    const bool allowed = gptq ? (bits == 2 || bits == 3 || bits == 4 || bits == 8)
                              : packed && (bits == 4 || bits == 8);
    if (!allowed) {
      return Error{"--bits " + std::to_string(bits) + " does not apply to " + name +
                   " (gptq, gptq-act, gptq-v2: 2, 3, 4, 8; w4a16: 4, 8)"};
    }
    options.bits = bits;
  }
  if (group_size != 0) {
    if (!grouped || (group_size < 1 && group_size != -1)) {
      return Error{"--group-size " + std::to_string(group_size) + " does not apply to " + name +
                   " (gptq, gptq-act, gptq-v2, awq, awq-gemv, w4a16: a positive size or -1)"};
    }
    if (options.format == HfQuantFormat::kAwqGemv && group_size != -1 &&
        AwqGemvZerosWidth(1, group_size) == 0) {
      return Error{"--group-size " + std::to_string(group_size) +
                   " does not apply to awq-gemv (32, 64, at least 128, or -1)"};
    }
    options.group_size = group_size;
  }
  if (asym) {
    if (!gptq && !packed) {
      return Error{"--asym does not apply to " + name + " (gptq, gptq-act, gptq-v2, w4a16)"};
    }
    options.symmetric = false;
  }
  return options;
}

bool IsQuantizedHfLinear(const std::string& name, size_t rank) {
  static const std::regex kLinear(
      R"(model\.layers\.\d+\..*\b(q_proj|k_proj|v_proj|o_proj|qkv_proj|gate_proj|up_proj|)"
      R"(down_proj|gate_up_proj|w1|w2|w3)\.weight)");
  return rank == 2 && std::regex_match(name, kLinear);
}

Expected<QuantizedHfLinear> QuantizeHfLinear(const HfQuantWriterOptions& options,
                                             const std::string& module, const float* weight,
                                             int64_t rows, int64_t cols) {
  switch (options.format) {
    case HfQuantFormat::kGptq:
    case HfQuantFormat::kGptqAct:
    case HfQuantFormat::kGptqV2:
      return QuantizeGptq(options, options.format == HfQuantFormat::kGptqAct,
                          options.format != HfQuantFormat::kGptqV2, module, weight, rows, cols);
    case HfQuantFormat::kAwq:
    case HfQuantFormat::kAwqGemv:
      return QuantizeAwq(options, options.format == HfQuantFormat::kAwqGemv, module, weight, rows,
                         cols);
    case HfQuantFormat::kFp8:
    case HfQuantFormat::kFp8Block:
      return QuantizeFp8(options.format == HfQuantFormat::kFp8Block, module, weight, rows, cols);
    case HfQuantFormat::kW8A8:
      return QuantizeW8A8(module, weight, rows, cols);
    case HfQuantFormat::kW4A16:
      return QuantizePacked(options, module, weight, rows, cols);
    case HfQuantFormat::kCtFp8:
    case HfQuantFormat::kCtFp8Tensor:
      return QuantizeCtFp8(options.format == HfQuantFormat::kCtFp8, module, weight, rows, cols);
    case HfQuantFormat::kBnbNf4:
    case HfQuantFormat::kBnbFp4:
      return QuantizeBnb4Bit(options, options.format == HfQuantFormat::kBnbFp4, module, weight,
                             rows, cols);
    case HfQuantFormat::kBnbInt8:
      break;
  }
  return QuantizeBnbInt8(module, weight, rows, cols);
}

nlohmann::json HfQuantizationConfigJson(const HfQuantWriterOptions& options) {
  switch (options.format) {
    case HfQuantFormat::kGptq:
    case HfQuantFormat::kGptqAct:
    case HfQuantFormat::kGptqV2:
      return {{"quant_method", "gptq"},
              {"bits", options.bits},
              {"group_size", options.group_size},
              {"desc_act", options.format == HfQuantFormat::kGptqAct},
              {"sym", options.symmetric},
              {"damp_percent", 0.01},
              {"true_sequential", true},
              {"static_groups", false},
              {"checkpoint_format", options.format == HfQuantFormat::kGptqV2 ? "gptq_v2" : "gptq"}};
    case HfQuantFormat::kAwq:
    case HfQuantFormat::kAwqGemv:
      return {{"quant_method", "awq"},
              {"bits", 4},
              {"group_size", options.group_size},
              {"zero_point", true},
              {"version", options.format == HfQuantFormat::kAwq ? "gemm" : "gemv"},
              {"modules_to_not_convert", nullptr}};
    case HfQuantFormat::kFp8:
      return {{"quant_method", "fp8"},
              {"activation_scheme", "dynamic"},
              {"ignored_layers", {"lm_head"}}};
    case HfQuantFormat::kFp8Block:
      return {{"quant_method", "fp8"},
              {"fmt", "e4m3"},
              {"activation_scheme", "dynamic"},
              {"weight_block_size", {kFp8BlockSize, kFp8BlockSize}}};
    case HfQuantFormat::kW8A8:
      return CompressedTensorsConfigJson("int-quantized",
                                         CtArgs("int", 8, true, "channel", 0, false),
                                         CtArgs("int", 8, true, "token", 0, true));
    case HfQuantFormat::kW4A16: {
      const bool channel = options.group_size == -1;
      return CompressedTensorsConfigJson(
          "pack-quantized",
          CtArgs("int", options.bits, options.symmetric, channel ? "channel" : "group",
                 channel ? 0 : options.group_size, false),
          nullptr);
    }
    case HfQuantFormat::kCtFp8:
    case HfQuantFormat::kCtFp8Tensor:
      return CompressedTensorsConfigJson(
          "float-quantized",
          CtArgs("float", 8, true, options.format == HfQuantFormat::kCtFp8 ? "channel" : "tensor",
                 0, false),
          CtArgs("float", 8, true, "token", 0, true));
    case HfQuantFormat::kBnbNf4:
    case HfQuantFormat::kBnbFp4:
    case HfQuantFormat::kBnbInt8:
      break;
  }
  const bool four_bit = options.format != HfQuantFormat::kBnbInt8;
  return {{"quant_method", "bitsandbytes"},
          {"_load_in_4bit", four_bit},
          {"_load_in_8bit", !four_bit},
          {"load_in_4bit", four_bit},
          {"load_in_8bit", !four_bit},
          {"bnb_4bit_compute_dtype", options.torch_dtype},
          {"bnb_4bit_quant_storage", "uint8"},
          {"bnb_4bit_quant_type", options.format == HfQuantFormat::kBnbFp4 ? "fp4" : "nf4"},
          {"bnb_4bit_use_double_quant", four_bit},
          {"llm_int8_enable_fp32_cpu_offload", false},
          {"llm_int8_has_fp16_weight", false},
          {"llm_int8_skip_modules", nullptr},
          {"llm_int8_threshold", 6.0}};
}

}  // namespace vllm
