// Converting a quantized layer on a thread pool gives the bytes the calling thread alone gives,
// for every layout the writer produces and for fp8's quantization at load: each thread converts
// its own rows, so the split never shows in the result.
#include <gtest/gtest.h>

#include <cstring>
#include <deque>
#include <nlohmann/json.hpp>
#include <random>
#include <string>
#include <utility>
#include <vector>

#include "common/half.h"
#include "common/thread_pool.h"
#include "model/hf_quant/quantized_linear.h"
#include "model/hf_quant_writer.h"

namespace vllm {
namespace {

// 4 threads claim chunks of 14 rows: chunks start inside fp8's 128-row blocks and GPTQ's 64-row
// tiles. 224 outputs fill whole int32 words of 2-, 3-, 4- and 8-bit zeros.
constexpr int64_t kRows = 224;
constexpr int64_t kCols = 512;

// A random weight [kRows, kCols] of roughly unit scale.
std::vector<float> RandomWeight(uint32_t seed) {
  std::mt19937 rng(seed);
  std::normal_distribution<float> normal(0.0f, 1.0f);
  std::vector<float> weight(kRows * kCols);
  for (float& value : weight) value = normal(rng);
  return weight;
}

// A layer's written tensors, kept, seen as a checkpoint's stored parts.
class StoredLayer {
 public:
  StoredLayer(const std::string& module, std::vector<WrittenTensor> written)
      : written_(std::move(written)) {
    layer_.module = module;
    for (const WrittenTensor& tensor : written_) {
      SafetensorsTensor& stored = tensors_.emplace_back();
      stored.name = tensor.name;
      stored.type = tensor.type;
      stored.dtype = tensor.dtype;
      stored.shape = tensor.shape;
      stored.data = tensor.bytes.data();
      stored.num_bytes = static_cast<int64_t>(tensor.bytes.size());
      layer_.parts[tensor.name.substr(module.size() + 1)] = &stored;
    }
  }
  const QuantizedLinearTensors& layer() const { return layer_; }

 private:
  std::vector<WrittenTensor> written_;
  QuantizedLinearTensors layer_;
  std::deque<SafetensorsTensor> tensors_;
};

// Converts `layer` on the calling thread and on pools of 1 and 4 threads; expects one result.
void ExpectSameOnEveryPool(const QuantizationConfig& config, const QuantizedLinearTensors& layer,
                           const std::string& what) {
  auto alone = ConvertQuantizedLinear(config, layer);
  ASSERT_TRUE(alone.ok()) << what << ": " << alone.error();
  for (int num_threads : {1, 4}) {
    ThreadPool pool(ThreadPool::Options{.num_threads = num_threads});
    auto pooled = ConvertQuantizedLinear(config, layer, &pool);
    ASSERT_TRUE(pooled.ok()) << what << ": " << pooled.error();
    EXPECT_EQ(pooled->weight.type, alone->weight.type) << what << ", " << num_threads;
    EXPECT_EQ(pooled->weight.shape, alone->weight.shape) << what << ", " << num_threads;
    EXPECT_TRUE(pooled->weight.bytes == alone->weight.bytes) << what << ", " << num_threads;
    EXPECT_EQ(pooled->input_order, alone->input_order) << what << ", " << num_threads;
  }
}

TEST(ThreadedConversionTest, PoolsOfOneAndFourThreadsGiveTheSameBytesForEveryLayout) {
  struct Layout {
    const char* format;
    int bits;  // 0: the format's default
    bool asym;
  };
  const std::string module = "model.layers.0.mlp.up_proj";
  const std::vector<float> weight = RandomWeight(11);
  for (const Layout& layout : std::vector<Layout>{{"gptq", 0, false},
                                                  {"gptq", 0, true},
                                                  {"gptq", 2, false},
                                                  {"gptq", 3, true},
                                                  {"gptq", 8, false},
                                                  {"gptq-act", 0, false},
                                                  {"awq", 0, false},
                                                  {"fp8", 0, false},
                                                  {"fp8-block", 0, false},
                                                  {"w8a8", 0, false},
                                                  {"w4a16", 0, false},
                                                  {"w4a16", 8, true},
                                                  {"bnb-nf4", 0, false},
                                                  {"bnb-int8", 0, false}}) {
    const std::string what = std::string(layout.format) + " bits " + std::to_string(layout.bits) +
                             (layout.asym ? " asym" : "");
    auto options = MakeHfQuantWriterOptions(layout.format, layout.bits, 0, layout.asym, 3);
    ASSERT_TRUE(options.ok()) << what << ": " << options.error();
    auto written = QuantizeHfLinear(*options, module, weight.data(), kRows, kCols);
    ASSERT_TRUE(written.ok()) << what << ": " << written.error();
    const nlohmann::json config_json = {
        {"quantization_config", HfQuantizationConfigJson(*options)}};
    auto config = ReadQuantizationConfig("", config_json, "");
    ASSERT_TRUE(config.ok()) << what << ": " << config.error();
    const StoredLayer stored(module, std::move(written->tensors));
    ExpectSameOnEveryPool(*config, stored.layer(), what);
  }
}

TEST(ThreadedConversionTest, Fp8QuantizationAtLoadIsTheSameOnEveryPool) {
  const std::string module = "model.layers.0.mlp.up_proj";
  const std::vector<float> weight = RandomWeight(12);
  std::vector<uint16_t> bf16(weight.size());
  for (size_t i = 0; i < weight.size(); ++i) bf16[i] = Fp32ToBf16(weight[i]);
  WrittenTensor stored{.name = module + ".weight",
                       .type = GgmlType::kBF16,
                       .dtype = "BF16",
                       .shape = {kRows, kCols},
                       .bytes = std::vector<uint8_t>(bf16.size() * sizeof(uint16_t))};
  std::memcpy(stored.bytes.data(), bf16.data(), stored.bytes.size());
  auto config = ReadQuantizationConfig("", nlohmann::json::object(), "fp8");
  ASSERT_TRUE(config.ok()) << config.error();
  ASSERT_TRUE(config->fp8.quantize_at_load);
  const StoredLayer layer(module, {stored});
  ExpectSameOnEveryPool(*config, layer.layer(), "fp8 at load");
}

TEST(ThreadedConversionTest, Fp8NanIsTheFirstInRowOrderOnEveryPool) {
  const std::string module = "model.layers.0.mlp.up_proj";
  WrittenTensor weight{.name = module + ".weight",
                       .type = GgmlType::kI8,
                       .dtype = "F8_E4M3",
                       .shape = {kRows, kCols},
                       .bytes = std::vector<uint8_t>(kRows * kCols, 0x38)};  // 1.0
  weight.bytes[150 * kCols + 3] = 0xff;                                      // in a later chunk
  weight.bytes[30 * kCols + 7] = 0x7f;                                       // in an earlier one
  const float one = 1.0f;
  WrittenTensor scale{.name = module + ".weight_scale",
                      .type = GgmlType::kF32,
                      .dtype = "F32",
                      .shape = {1},
                      .bytes = std::vector<uint8_t>(sizeof(one))};
  std::memcpy(scale.bytes.data(), &one, sizeof(one));
  auto config = ReadQuantizationConfig(
      "", {{"quantization_config", {{"quant_method", "fp8"}, {"activation_scheme", "dynamic"}}}},
      "");
  ASSERT_TRUE(config.ok()) << config.error();
  const StoredLayer layer(module, {weight, scale});
  for (int num_threads : {1, 4}) {
    ThreadPool pool(ThreadPool::Options{.num_threads = num_threads});
    auto converted = ConvertQuantizedLinear(*config, layer.layer(), &pool);
    ASSERT_FALSE(converted.ok()) << num_threads;
    EXPECT_EQ(converted.error(),
              "tensor '" + module + ".weight' holds an FP8 NaN (0x7f) at [30, 7]")
        << num_threads;
  }
}

}  // namespace
}  // namespace vllm
