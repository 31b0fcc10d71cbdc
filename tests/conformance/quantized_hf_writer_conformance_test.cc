// make-random-model --quantization's checkpoints, loaded: for every format the writer knows, a
// random model (2 layers) written quantized and as its dequantized twin (the same weights with
// every quantized linear layer replaced by the exact values its tensors stand for, in F32):
//   - every quantized layer, as the loader converts it, holds the twin's values within the
//     conversion's rounding (ExpectWithinRounding); so does one layer of non-uniform weights
//     written and converted directly, whose every group, block and zero point differs;
//   - the two models give the same logits and greedy tokens. The twin's greedy continuation of a
//     token-id prompt (16 steps) is fed to both models (teacher forcing, so one near-tie cannot
//     derail the rest).
//
// Logit tolerance: the loaded layers differ from the twin only by what the load and the kernels
// round — activations to 8 bits per 32 values in the Q4_0 / Q4_1 / Q8_0 dot products (at most
// half a step of max|x| / 127 per value, random in sign), FP8 products rounded once to BF16 (2^-9
// relative), bitsandbytes NF4 levels rounded to Q8_0 (at most half a step of max / 127). Through
// two layers that stays near 0.5 % of the largest logit (measured 0.25–0.5 %), so every logit
// must be within 2 % of the largest |logit| of the rows compared, and the greedy token must agree
// wherever the twin's top-2 margin exceeds twice that (then no pair of logits can swap). These
// random models' logits span about ±3 nats over 32000 tokens, so the shared oracles' 1-nat
// margins (for logits of a real model's scale) never occur here.
#include <gtest/gtest.h>
#include <unistd.h>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <random>
#include <set>

#include "common/thread_pool.h"
#include "formats/safetensors_index.h"
#include "kernels/ops.h"
#include "model/forward_batch.h"
#include "model/hf_export.h"
#include "model/hf_quant/quantized_linear.h"
#include "model/kv_storage.h"
#include "model/model_loader.h"
#include "model/random_model.h"

namespace vllm {
namespace {

namespace fs = std::filesystem;

constexpr int kSteps = 16;
constexpr float kLogitTolerance = 0.02f;  // of the largest |logit|; see the top of the file

struct WriterCase {
  const char* shape;
  const char* format;
  int bits = 0;            // 0: the format's default
  int64_t group_size = 0;  // 0: the format's default
  bool asym = false;
};

void PrintTo(const WriterCase& test, std::ostream* out) {
  *out << test.shape << " " << test.format << " bits " << test.bits << " group " << test.group_size
       << (test.asym ? " asym" : "");
}

std::string CaseName(const ::testing::TestParamInfo<WriterCase>& param) {
  const WriterCase& test = param.param;
  std::string name = std::string(test.shape) + "_" + test.format;
  if (test.bits != 0) name += "_b" + std::to_string(test.bits);
  if (test.group_size != 0) {
    name += "_g" + (test.group_size < 0 ? std::string("row") : std::to_string(test.group_size));
  }
  if (test.asym) name += "_asym";
  for (char& c : name) {
    if (!std::isalnum(static_cast<unsigned char>(c))) c = '_';
  }
  return name;
}

// Logits [tokens.size(), vocab] of every position of `tokens`, run as one prefill.
std::vector<float> PrefillLogits(Model& model, const std::vector<int32_t>& tokens) {
  const ModelConfig& config = model.config();
  const int64_t block_size = 16;
  auto kv = KvStorage::Create({.num_layers = config.num_layers,
                               .num_blocks = 4,
                               .block_size = block_size,
                               .num_kv_heads = config.num_kv_heads,
                               .head_dim = config.head_dim});
  EXPECT_TRUE(kv.ok()) << kv.error();
  ForwardBatch batch;
  const std::vector<int32_t> block_table = {0, 1, 2, 3};
  Status appended = AppendSequence(tokens, 0, {&block_table, 1}, block_size, batch);
  EXPECT_TRUE(appended.ok()) << appended.message();
  for (size_t p = 0; p < tokens.size(); ++p) {
    batch.logits_indices.push_back(static_cast<int32_t>(p));
  }
  std::vector<float> logits(tokens.size() * config.vocab_size);
  Status status = model.Forward(batch, **kv, logits.data());
  EXPECT_TRUE(status.ok()) << status.message();
  return logits;
}

// The best and second-best logit of a row, and the best one's token.
struct TopTwo {
  int32_t token = 0;
  float margin = 0.0f;
};
TopTwo TopTwoOf(const float* logits, int64_t vocab) {
  int32_t best = 0;
  for (int64_t t = 1; t < vocab; ++t) {
    if (logits[t] > logits[best]) best = static_cast<int32_t>(t);
  }
  float second = -INFINITY;
  for (int64_t t = 0; t < vocab; ++t) {
    if (t != best) second = std::max(second, logits[t]);
  }
  return {best, logits[best] - second};
}

// Expects `converted` (a layer as the loader converts it) to hold `exact` ([rows, cols] f32, the
// writer's dequantized values) within the conversion's rounding: none for Q4_0 and exact Q8_0;
// Q4_1's f16 m, BF16's 2^-9 and F16's 2^-12 relative; for bitsandbytes' levels rounded to Q8_0,
// half a step d = max / 127 plus up to 127 times its f16 rounding (2^-11 · d): at most
// 1.13 / 254 of the largest |value| of each 32. Raises *worst to the largest error in units of
// max / 254.
void ExpectWithinRounding(const ConvertedLinear& converted, const float* exact, int64_t rows,
                          int64_t cols, float* worst) {
  const OwnedTensor& weight = converted.weight;
  ASSERT_EQ(weight.shape, (std::vector<int64_t>{cols, rows}));
  const std::vector<int32_t>& order = converted.input_order;
  ASSERT_TRUE(order.empty() || static_cast<int64_t>(order.size()) == cols);
  std::vector<float> loaded(cols), exact_row(cols);
  const int64_t row_bytes = static_cast<int64_t>(weight.bytes.size()) / rows;
  for (int64_t r = 0; r < rows; ++r) {
    kernels::DequantizeRow(weight.type, weight.bytes.data() + r * row_bytes, cols, loaded.data());
    for (int64_t j = 0; j < cols; ++j) {
      exact_row[j] = exact[r * cols + (order.empty() ? j : order[j])];
    }
    for (int64_t j = 0; j < cols; ++j) {
      const int64_t block = j / 32 * 32;
      float block_max = 0.0f;
      for (int64_t k = block; k < std::min(block + 32, cols); ++k) {
        block_max = std::max(block_max, std::fabs(exact_row[k]));
      }
      const float error = std::fabs(loaded[j] - exact_row[j]);
      if (error == 0.0f) continue;
      *worst = std::max(*worst, error * 254.0f / block_max);
      ASSERT_LE(error, block_max / 254.0f * 1.13f) << "row " << r << " loaded column " << j << ": "
                                                   << loaded[j] << " vs exact " << exact_row[j];
    }
  }
}

// Writes the case's random model (2 layers, bf16) quantized and as its dequantized twin.
class QuantizedHfWriterConformance : public ::testing::TestWithParam<WriterCase> {
 protected:
  void SetUp() override {
    const WriterCase& test = GetParam();
    root_ = fs::path(::testing::TempDir()) /
            ("quantized_hf_writer_" + CaseName({test, 0}) + "_" + std::to_string(::getpid()));
    fs::create_directories(root_);
    const std::string gguf_path = (root_ / "model.gguf").string();
    Status written = WriteRandomModel(
        {.shape = test.shape,
         .dtype = "bf16",
         .vocab_path = std::string(VLLM_SHARED_DIR) + "/vocab/ggml-vocab-llama-spm.gguf",
         .output_path = gguf_path,
         .seed = 21,
         .num_layers_override = 2});
    ASSERT_TRUE(written.ok()) << written.message();
    auto gguf = GgufFile::Open(gguf_path);
    ASSERT_TRUE(gguf.ok()) << gguf.error();
    auto options = MakeHfQuantWriterOptions(test.format, test.bits, test.group_size, test.asym, 21);
    ASSERT_TRUE(options.ok()) << options.error();
    Status exported = WriteQuantizedHfCheckpointFromGguf(
        **gguf, quantized_dir(), std::string(VLLM_SHARED_DIR) + "/tokenizers/llama2", *options,
        dequantized_dir());
    ASSERT_TRUE(exported.ok()) << exported.message();
  }
  void TearDown() override { fs::remove_all(root_); }

  std::string quantized_dir() const { return (root_ / "quantized").string(); }
  std::string dequantized_dir() const { return (root_ / "dequantized").string(); }

  fs::path root_;
};

// Every quantized layer as the loader converts it, against the twin's exact values.
TEST_P(QuantizedHfWriterConformance, LoadedLayersMatchTheDequantizedValues) {
  auto weights = SafetensorsModel::OpenDirectory(quantized_dir());
  ASSERT_TRUE(weights.ok()) << weights.error();
  auto twin = SafetensorsModel::OpenDirectory(dequantized_dir());
  ASSERT_TRUE(twin.ok()) << twin.error();
  std::ifstream config_file(fs::path(quantized_dir()) / "config.json");
  const nlohmann::json config = nlohmann::json::parse(config_file);
  auto quantization = ReadQuantizationConfig(quantized_dir(), config, "");
  ASSERT_TRUE(quantization.ok()) << quantization.error();
  auto linears = FindQuantizedLinears(**weights, *quantization);
  ASSERT_TRUE(linears.ok()) << linears.error();
  size_t expected_linears = 0;
  for (const SafetensorsTensor* tensor : (*twin)->tensors()) {
    expected_linears += IsQuantizedHfLinear(tensor->name, tensor->shape.size()) ? 1 : 0;
  }
  ASSERT_EQ(linears->size(), expected_linears);
  float worst = 0.0f;  // the largest error, in units of its block's largest |value| / 254
  std::set<std::string> types;
  for (const QuantizedLinearTensors& linear : *linears) {
    SCOPED_TRACE(linear.module);
    auto converted = ConvertQuantizedLinear(*quantization, linear);
    ASSERT_TRUE(converted.ok()) << converted.error();
    const SafetensorsTensor* exact_tensor = (*twin)->FindTensor(linear.module + ".weight");
    ASSERT_NE(exact_tensor, nullptr);
    ASSERT_EQ(exact_tensor->type, GgmlType::kF32);
    const int64_t rows = exact_tensor->shape[0], cols = exact_tensor->shape[1];
    types.insert(GgmlTypeName(static_cast<uint32_t>(converted->weight.type)));
    std::vector<float> exact(rows * cols);
    std::memcpy(exact.data(), exact_tensor->data, exact.size() * sizeof(float));
    ExpectWithinRounding(*converted, exact.data(), rows, cols, &worst);
    if (HasFatalFailure()) return;
  }
  std::string type_names;
  for (const std::string& type : types) type_names += " " + type;
  std::cerr << "[ " << CaseName({GetParam(), 0}) << " ] " << linears->size() << " layers loaded as"
            << type_names << "; worst error " << worst << " of max/254\n";
}

TEST_P(QuantizedHfWriterConformance, GreedyTokensMatchTheDequantizedTwin) {
  const WriterCase& test = GetParam();
  ThreadPool pool(ThreadPool::Options{.num_threads = 2});
  auto quantized = LoadModelFromPath(quantized_dir(), {.pool = &pool});
  ASSERT_TRUE(quantized.ok()) << quantized.error();
  auto twin = LoadModelFromPath(dequantized_dir(), {.pool = &pool});
  ASSERT_TRUE(twin.ok()) << twin.error();
  const int64_t vocab = twin->model->config().vocab_size;

  // The twin's greedy continuation, one step at a time.
  std::vector<int32_t> tokens = {1, 9038, 2501, 263, 931, 727, 471, 263};
  const size_t prompt_size = tokens.size();
  for (int step = 0; step < kSteps; ++step) {
    const std::vector<float> logits = PrefillLogits(*twin->model, tokens);
    tokens.push_back(TopTwoOf(logits.data() + (tokens.size() - 1) * vocab, vocab).token);
  }
  tokens.pop_back();  // the last step's logits come from the sequence without its own token
  const std::vector<float> expected = PrefillLogits(*twin->model, tokens);
  const std::vector<float> actual = PrefillLogits(*quantized->model, tokens);

  float max_logit = 0.0f;
  for (size_t p = prompt_size - 1; p < tokens.size(); ++p) {
    for (int64_t t = 0; t < vocab; ++t) {
      max_logit = std::max(max_logit, std::fabs(expected[p * vocab + t]));
    }
  }
  const float tolerance = kLogitTolerance * max_logit;
  int checked = 0, beyond_tolerance = 0;
  float max_difference = 0.0f;
  for (size_t p = prompt_size - 1; p < tokens.size(); ++p) {
    const float* expected_row = expected.data() + p * vocab;
    const float* actual_row = actual.data() + p * vocab;
    const int64_t step = static_cast<int64_t>(p + 1 - prompt_size);
    float row_difference = 0.0f;
    for (int64_t t = 0; t < vocab; ++t) {
      row_difference = std::max(row_difference, std::fabs(expected_row[t] - actual_row[t]));
    }
    max_difference = std::max(max_difference, row_difference);
    if (row_difference > tolerance) {
      ++beyond_tolerance;
      std::cerr << "step " << step << ": logits differ by up to " << row_difference << "\n";
    }
    const TopTwo want = TopTwoOf(expected_row, vocab);
    if (want.margin < 2 * tolerance) continue;
    ++checked;
    EXPECT_EQ(TopTwoOf(actual_row, vocab).token, want.token)
        << "step " << step << ": the twin's margin is " << want.margin;
  }
  std::cerr << "[ " << CaseName({test, 0}) << " ] max |logit| " << max_logit << ", max difference "
            << max_difference << " (" << 100 * max_difference / max_logit
            << " %); greedy tokens checked at " << checked << " of " << kSteps << " steps\n";
  EXPECT_GE(checked, kSteps / 8) << "too few steps with a margin of " << 2 * tolerance;
  // A mixture of experts picks its top-k experts by router scores: where two nearly tie, the
  // weights' rounding (bitsandbytes' levels to Q8_0) may swap them, and that token's logits move
  // by more than rounding. Its layers are within their rounding (the test above), so one such
  // step in 16 is allowed there.
  EXPECT_LE(beyond_tolerance, twin->model->config().num_experts > 0 ? 1 : 0)
      << "steps whose logits differ by more than " << tolerance;
}

INSTANTIATE_TEST_SUITE_P(
    Formats, QuantizedHfWriterConformance,
    ::testing::Values(
        // The quantized oracles' Llama shape (hidden 256, FFN 768), every format.
        WriterCase{"llama-d256", "gptq"}, WriterCase{"llama-d256", "gptq", 3},
        WriterCase{"llama-d256", "gptq", 2, 64}, WriterCase{"llama-d256", "gptq", 8, -1},
        WriterCase{"llama-d256", "gptq", 4, 32, true}, WriterCase{"llama-d256", "gptq-act"},
        WriterCase{"llama-d256", "awq"}, WriterCase{"llama-d256", "fp8"},
        WriterCase{"llama-d256", "fp8-block"}, WriterCase{"llama-d256", "w8a8"},
        WriterCase{"llama-d256", "w4a16"}, WriterCase{"llama-d256", "w4a16", 4, 64, true},
        WriterCase{"llama-d256", "w4a16", 8}, WriterCase{"llama-d256", "bnb-nf4"},
        WriterCase{"llama-d256", "bnb-int8"},
        // The formats the loader reads besides: GPTQModel's gptq_v2 zeros, AutoAWQ's GEMV
        // layout, compressed-tensors FP8, bitsandbytes FP4.
        WriterCase{"llama-d256", "gptq-v2"}, WriterCase{"llama-d256", "gptq-v2", 4, 32, true},
        WriterCase{"llama-d256", "gptq-v2", 3, 64, true}, WriterCase{"llama-d256", "awq-gemv"},
        WriterCase{"llama-d256", "awq-gemv", 0, 32}, WriterCase{"llama-d256", "ct-fp8"},
        WriterCase{"llama-d256", "ct-fp8-tensor"}, WriterCase{"llama-d256", "bnb-fp4"},
        // Experts: Qwen3-MoE (expert FFN 64, so groups of 32) and Mixtral (w1 / w2 / w3).
        WriterCase{"qwen3moe-tiny", "gptq", 4, 32}, WriterCase{"qwen3moe-tiny", "awq", 0, 32},
        WriterCase{"qwen3moe-tiny", "fp8-block"}, WriterCase{"qwen3moe-tiny", "w8a8"},
        WriterCase{"qwen3moe-tiny", "w4a16", 0, 32}, WriterCase{"qwen3moe-tiny", "bnb-nf4"},
        WriterCase{"mixtral-tiny", "gptq-act"}, WriterCase{"mixtral-tiny", "fp8"},
        WriterCase{"qwen3moe-tiny", "gptq-v2", 4, 32, true}, WriterCase{"qwen3moe-tiny", "ct-fp8"},
        WriterCase{"mixtral-tiny", "awq-gemv", 0, 64}, WriterCase{"mixtral-tiny", "bnb-fp4"}),
    CaseName);

// One layer straight from the writer to the loader's converter, with weights whose scale varies
// by row, by 128-column block and by 32-column group (the random models' weights are uniform, so
// their FP8 blocks all share one scale): every group, block and zero point has its own value.
class QuantizedHfWriterLayerConformance : public ::testing::TestWithParam<WriterCase> {};

TEST_P(QuantizedHfWriterLayerConformance, ConvertedLayerMatchesTheDequantizedValues) {
  const WriterCase& test = GetParam();
  const int64_t rows = 256, cols = 384;
  std::mt19937 generator(5);
  std::normal_distribution<float> normal(0.02f, 0.05f);  // off-centre: zero points move
  std::vector<float> weight(rows * cols);
  for (int64_t r = 0; r < rows; ++r) {
    for (int64_t c = 0; c < cols; ++c) {
      const float scale = static_cast<float>(1 + r % 7) * static_cast<float>(1 + (c / 128) * 3) *
                          static_cast<float>(1 + (c / 32) % 3);
      weight[r * cols + c] = normal(generator) * scale;
    }
  }
  auto options = MakeHfQuantWriterOptions(test.format, test.bits, test.group_size, test.asym, 3);
  ASSERT_TRUE(options.ok()) << options.error();
  const std::string module = "model.layers.0.mlp.down_proj";
  auto layer = QuantizeHfLinear(*options, module, weight.data(), rows, cols);
  ASSERT_TRUE(layer.ok()) << layer.error();

  auto quantization = ReadQuantizationConfig(
      ::testing::TempDir(), {{"quantization_config", HfQuantizationConfigJson(*options)}}, "");
  ASSERT_TRUE(quantization.ok()) << quantization.error();
  std::vector<SafetensorsTensor> views;
  views.reserve(layer->tensors.size());
  QuantizedLinearTensors tensors{module, {}};
  for (const WrittenTensor& part : layer->tensors) {
    views.push_back({part.name, part.type, part.shape, part.bytes.data(),
                     static_cast<int64_t>(part.bytes.size()), part.dtype});
    tensors.parts[part.name.substr(module.size() + 1)] = &views.back();
  }
  auto converted = ConvertQuantizedLinear(*quantization, tensors);
  ASSERT_TRUE(converted.ok()) << converted.error();
  float worst = 0.0f;
  ExpectWithinRounding(*converted, layer->dequantized.data(), rows, cols, &worst);
  std::cerr << "[ " << CaseName({test, 0}) << " ] loaded as "
            << GgmlTypeName(static_cast<uint32_t>(converted->weight.type)) << "; worst error "
            << worst << " of max/254\n";
}

INSTANTIATE_TEST_SUITE_P(
    Formats, QuantizedHfWriterLayerConformance,
    ::testing::Values(WriterCase{"layer", "gptq"}, WriterCase{"layer", "gptq", 3, 32, true},
                      WriterCase{"layer", "gptq", 2, -1}, WriterCase{"layer", "gptq", 8, 64, true},
                      WriterCase{"layer", "gptq-act"}, WriterCase{"layer", "gptq-act", 3, 128},
                      WriterCase{"layer", "awq"}, WriterCase{"layer", "awq", 0, 64},
                      WriterCase{"layer", "fp8"}, WriterCase{"layer", "fp8-block"},
                      WriterCase{"layer", "w8a8"}, WriterCase{"layer", "w4a16"},
                      WriterCase{"layer", "w4a16", 4, 32, true},
                      WriterCase{"layer", "w4a16", 8, -1, true}, WriterCase{"layer", "bnb-nf4"},
                      WriterCase{"layer", "bnb-int8"}, WriterCase{"layer", "gptq-v2", 4, 32, true},
                      WriterCase{"layer", "gptq-v2", 2, 64, true},
                      WriterCase{"layer", "gptq-v2", 8}, WriterCase{"layer", "awq-gemv"},
                      WriterCase{"layer", "awq-gemv", 0, 32},
                      WriterCase{"layer", "awq-gemv", 0, 64}, WriterCase{"layer", "ct-fp8"},
                      WriterCase{"layer", "ct-fp8-tensor"}, WriterCase{"layer", "bnb-fp4"}),
    CaseName);

}  // namespace
}  // namespace vllm
