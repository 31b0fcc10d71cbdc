// One random model written as F32 and as F16/BF16/Q8_0/Q4_0: each type's logits must stay within
// a stated relative error of the F32 logits on the same prompts.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdio>
#include <numeric>
#include <optional>

#include "model/model.h"
#include "model/random_model.h"

namespace vllm {
namespace {

struct TypeTolerance {
  GgmlType type;
  // Bound on ||logits - logits_f32|| / ||logits_f32||, from each format's rounding:
  // f16 keeps 11 mantissa bits, bf16 8 (and rounds activations to bf16), q8_0 quantizes
  // weights and activations to 8 bits per 32-value block, q4_0 weights to 4 bits.
  double max_relative_error;
};

// Logits of the random model written as `type`; `linear_type` converts its linear weights at load.
std::vector<float> LogitsFor(GgmlType type, const std::vector<int32_t>& prompt,
                             std::optional<GgmlType> linear_type = std::nullopt) {
  std::string path = ::testing::TempDir() + "/quant_" + GetSupportedTypeTraits(type)->name +
                     std::to_string(::getpid()) + ".gguf";
  Status written = WriteRandomModel(
      {.shape = "llama-d256",
       .dtype = GetSupportedTypeTraits(type)->name,
       .vocab_path = std::string(VLLM_SHARED_DIR) + "/vocab/ggml-vocab-llama-spm.gguf",
       .output_path = path,
       .seed = 21});
  EXPECT_TRUE(written.ok()) << written.message();
  auto file = GgufFile::Open(path);
  std::remove(path.c_str());
  EXPECT_TRUE(file.ok()) << file.error();
  ThreadPool pool(ThreadPool::Options{.num_threads = 2});
  auto model = LoadModelFromGguf(**file, {.pool = &pool, .linear_type = linear_type});
  EXPECT_TRUE(model.ok()) << model.error();
  const ModelConfig& config = (*model)->config();
  auto kv = KvStorage::Create({.num_layers = config.num_layers,
                               .num_blocks = 8,
                               .block_size = 16,
                               .num_kv_heads = config.num_kv_heads,
                               .head_dim = config.head_dim});
  ForwardBatch batch;
  const int32_t n = static_cast<int32_t>(prompt.size());
  const std::vector<int32_t> block_table = {0, 1, 2, 3, 4, 5, 6, 7};
  EXPECT_TRUE(AppendSequence(prompt, 0, {&block_table, 1}, 16, batch).ok());
  batch.logits_indices.resize(n);  // logits of every position
  std::iota(batch.logits_indices.begin(), batch.logits_indices.end(), 0);
  std::vector<float> logits(n * config.vocab_size);
  Status status = (*model)->Forward(batch, **kv, logits.data());
  EXPECT_TRUE(status.ok()) << status.message();
  return logits;
}

const std::vector<int32_t> kPrompt = {1,     450,   4996, 17354, 1701, 432, 17204, 975, 278, 17366,
                                      11203, 29889, 13,   1576,  3144, 338, 2038,  297, 278, 1559};

double RelativeError(const std::vector<float>& logits, const std::vector<float>& reference) {
  double diff_norm = 0.0;
  double reference_norm = 0.0;
  for (size_t i = 0; i < logits.size(); ++i) {
    diff_norm += (logits[i] - reference[i]) * (logits[i] - reference[i]);
    reference_norm += reference[i] * reference[i];
  }
  return std::sqrt(diff_norm / reference_norm);
}

TEST(QuantizedLogitsTest, EveryTypeStaysCloseToF32) {
  const std::vector<int32_t>& prompt = kPrompt;
  const std::vector<float> reference = LogitsFor(GgmlType::kF32, prompt);
  const std::vector<TypeTolerance> tolerances = {
      {GgmlType::kF16, 2e-3},      {GgmlType::kBF16, 3e-2},     {GgmlType::kQ8_0, 3e-2},
      {GgmlType::kQ4_0, 1.7e-1},   {GgmlType::kQ4_1, 1.6e-1},   {GgmlType::kQ5_0, 8e-2},
      {GgmlType::kQ5_1, 8e-2},     {GgmlType::kQ2_K, 5.5e-1},   {GgmlType::kQ3_K, 3e-1},
      {GgmlType::kQ4_K, 1.4e-1},   {GgmlType::kQ5_K, 7e-2},     {GgmlType::kQ6_K, 3.5e-2},
      {GgmlType::kIQ4_NL, 1.6e-1}, {GgmlType::kIQ4_XS, 1.6e-1}, {GgmlType::kMXFP4, 3e-1}};
  for (const auto& [type, max_relative_error] : tolerances) {
    std::vector<float> logits = LogitsFor(type, prompt);
    ASSERT_EQ(logits.size(), reference.size());
    const double relative_error = RelativeError(logits, reference);
    std::printf("%-6s relative logits error vs f32: %.2e (bound %.0e)\n",
                GetSupportedTypeTraits(type)->name, relative_error, max_relative_error);
    EXPECT_LT(relative_error, max_relative_error) << GetSupportedTypeTraits(type)->name;
  }
}

// --quantization q8_0 / q6_k / q4_k and --dtype bfloat16 on an F32 file: converted at load, the
// logits are as close to F32 as the files written in those types (only the embedding stays F32).
TEST(QuantizedLogitsTest, ConversionAtLoadStaysCloseToF32) {
  const std::vector<float> reference = LogitsFor(GgmlType::kF32, kPrompt);
  const std::vector<std::pair<GgmlType, double>> tolerances = {{GgmlType::kQ8_0, 3e-2},
                                                               {GgmlType::kBF16, 3e-2},
                                                               {GgmlType::kF16, 2e-3},
                                                               {GgmlType::kQ6_K, 3.5e-2},
                                                               {GgmlType::kQ4_K, 1.4e-1}};
  for (const auto& [type, max_relative_error] : tolerances) {
    const std::vector<float> converted = LogitsFor(GgmlType::kF32, kPrompt, type);
    const double relative_error = RelativeError(converted, reference);
    EXPECT_GT(relative_error, 0.0) << "the conversion must change something";
    EXPECT_LT(relative_error, max_relative_error) << GetSupportedTypeTraits(type)->name;
  }
}

}  // namespace
}  // namespace vllm
