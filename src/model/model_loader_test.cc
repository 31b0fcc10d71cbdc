// --dtype and --quantization as the loader takes them: GGUF type names convert the linear weights,
// vLLM's method names go to a model directory's quantization_config, which is read (and an
// unsupported scheme refused by name) before any tensor.
#include "model/model_loader.h"

#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>

#include "common/temp_test_dir.h"
#include "common/thread_pool.h"
#include "formats/safetensors_writer.h"
#include "model/hf_export.h"
#include "model/hf_quant_writer.h"
#include "model/random_model.h"
#include "model/weight_loader.h"

namespace vllm {
namespace {

using Json = nlohmann::json;
namespace fs = std::filesystem;

std::string StoriesPath() { return std::string(VLLM_SHARED_DIR) + "/models/stories260K.gguf"; }

TEST(ModelLoaderTest, LinearTypeForGgufTypesAndDtypes) {
  EXPECT_EQ(*LinearTypeFor("auto", "q8_0"), GgmlType::kQ8_0);
  EXPECT_EQ(*LinearTypeFor("auto", "q6_k"), GgmlType::kQ6_K);
  EXPECT_EQ(*LinearTypeFor("bfloat16", "q4_k"), GgmlType::kQ4_K);  // --quantization wins
  EXPECT_EQ(*LinearTypeFor("auto", ""), std::nullopt);
  EXPECT_EQ(*LinearTypeFor("float", ""), GgmlType::kF32);
  EXPECT_EQ(*LinearTypeFor("half", ""), GgmlType::kF16);
  EXPECT_EQ(*LinearTypeFor("bfloat16", ""), GgmlType::kBF16);
  auto bad_dtype = LinearTypeFor("int8", "");
  ASSERT_FALSE(bad_dtype.ok());
  EXPECT_EQ(bad_dtype.error(),
            "unsupported --dtype 'int8' (supported: auto, float32, bfloat16, float16)");
}

TEST(ModelLoaderTest, MethodNamesSetNoLinearType) {
  for (const char* method :
       {"awq", "awq_marlin", "gptq", "gptq_marlin", "fp8", "compressed-tensors", "bitsandbytes"}) {
    auto linear_type = LinearTypeFor("auto", method);
    ASSERT_TRUE(linear_type.ok()) << method << ": " << linear_type.error();
    EXPECT_EQ(*linear_type, std::nullopt) << method;
    EXPECT_EQ(*LinearTypeFor("bfloat16", method), GgmlType::kBF16) << method;
  }
}

TEST(ModelLoaderTest, UnknownQuantizationListsTypesAndMethods) {
  auto linear_type = LinearTypeFor("auto", "bogus");
  ASSERT_FALSE(linear_type.ok());
  EXPECT_EQ(linear_type.error(),
            "unsupported --quantization 'bogus' (supported: q8_0, q6_k, q4_k to quantize at load, "
            "or a checkpoint's method: awq, awq_marlin, gptq, gptq_marlin, fp8, "
            "compressed-tensors, bitsandbytes)");
  EXPECT_FALSE(LinearTypeFor("auto", "q5_k").ok());  // a GGUF type not converted to at load
}

TEST(ModelLoaderTest, MethodNameForGgufFileIsAnError) {
  ThreadPool pool(ThreadPool::Options{.num_threads = 1});
  auto loaded = LoadModelFromPath(StoriesPath(), {.pool = &pool}, Json::object(), "gptq");
  ASSERT_FALSE(loaded.ok());
  EXPECT_EQ(loaded.error(),
            StoriesPath() +
                ": --quantization gptq names a Hugging Face checkpoint's quantization method; a "
                "GGUF file's tensors keep their own types (q8_0, q6_k or q4_k convert its linear "
                "weights at load)");
  // A GGUF type name is the linear type's business, not the loader's.
  EXPECT_TRUE(LoadModelFromPath(StoriesPath(), {.pool = &pool}, Json::object(), "q8_0").ok());
}

// stories260K written as a Hugging Face directory, whose config.json each test rewrites.
class ModelLoaderDirectoryTest : public ::testing::Test {
 protected:
  void SetUp() override {
    auto file = GgufFile::Open(StoriesPath());
    ASSERT_TRUE(file.ok()) << file.error();
    Status written = WriteHfCheckpointFromGguf(**file, dir_.File(""),
                                               std::string(VLLM_SHARED_DIR) + "/tokenizers/llama2");
    ASSERT_TRUE(written.ok()) << written.message();
    std::ifstream config_file(dir_.File("config.json"));
    config_ = Json::parse(config_file);
  }

  // config.json with `quantization_config` (none when null).
  void WriteConfig(const Json& quantization_config) {
    Json config = config_;
    if (!quantization_config.is_null()) config["quantization_config"] = quantization_config;
    std::ofstream(dir_.File("config.json")) << config.dump();
  }

  // Adds a GPTQ qweight tensor (I32) for layer 0's q_proj to model.safetensors, which no loader
  // of unquantized checkpoints takes.
  void AddPackedTensor() {
    std::vector<uint8_t> bytes;
    std::vector<SafetensorsTensor> tensors;
    {
      auto weights = SafetensorsModel::OpenDirectory(dir_.File(""));
      ASSERT_TRUE(weights.ok()) << weights.error();
      for (const SafetensorsTensor* tensor : (*weights)->tensors()) tensors.push_back(*tensor);
      // qweight: [in / 8, out] int32, eight 4-bit codes per value.
      const std::vector<int32_t> qweight(8 * 64, 0x12345678);
      tensors.push_back({.name = "model.layers.0.self_attn.q_proj.qweight",
                         .type = GgmlType::kI32,
                         .shape = {8, 64},
                         .data = qweight.data(),
                         .num_bytes = static_cast<int64_t>(qweight.size() * sizeof(int32_t)),
                         .dtype = "I32"});
      Status status = WriteSafetensors(dir_.File("packed.safetensors"), tensors);
      ASSERT_TRUE(status.ok()) << status.message();
    }
    fs::rename(dir_.File("packed.safetensors"), dir_.File("model.safetensors"));
  }

  Expected<LoadedModel> Load(const std::string& quantization) {
    return LoadModelFromPath(dir_.File(""), {.pool = &pool_}, Json::object(), quantization);
  }

  TempTestDir dir_{"model_loader_directory"};
  Json config_;
  ThreadPool pool_{ThreadPool::Options{.num_threads = 1}};
};

TEST_F(ModelLoaderDirectoryTest, UnsupportedQuantizationFieldFailsAtLoadNamingIt) {
  ASSERT_NO_FATAL_FAILURE(AddPackedTensor());
  WriteConfig({{"quant_method", "gptq"}, {"bits", 5}, {"group_size", 128}, {"desc_act", false}});
  auto loaded = Load("");
  ASSERT_FALSE(loaded.ok());
  EXPECT_EQ(loaded.error(),
            dir_.File("") +
                ": quantization_config.bits = 5 is not supported for gptq (supported: 2, 3, 4, 8)");

  WriteConfig({{"quant_method", "awq"}, {"bits", 4}, {"group_size", 128}});
  loaded = Load("gptq_marlin");
  ASSERT_FALSE(loaded.ok());
  EXPECT_EQ(loaded.error(),
            dir_.File("") +
                ": Quantization method specified in the model config (awq) does not match the "
                "quantization method specified in the `quantization` argument (gptq_marlin).");
}

TEST_F(ModelLoaderDirectoryTest, MethodNamesReachTheCheckpoint) {
  WriteConfig(nullptr);
  auto loaded = Load("");
  ASSERT_TRUE(loaded.ok()) << loaded.error();
  EXPECT_EQ(loaded->checkpoint->quantization.method, QuantMethod::kNone);

  loaded = Load("awq");
  ASSERT_FALSE(loaded.ok());
  EXPECT_EQ(loaded.error(), dir_.File("") +
                                ": --quantization awq: the model has no quantization_config in "
                                "config.json (only fp8 quantizes an unquantized model at load)");

  // A GGUF type name is options.linear_type's business: the checkpoint takes no method from it.
  loaded = Load("q8_0");
  ASSERT_TRUE(loaded.ok()) << loaded.error();
  EXPECT_EQ(loaded->checkpoint->quantization.method, QuantMethod::kNone);

  loaded = Load("fp8");
  ASSERT_TRUE(loaded.ok()) << loaded.error();
  EXPECT_EQ(loaded->checkpoint->quantization.method, QuantMethod::kFp8);
  EXPECT_TRUE(loaded->checkpoint->quantization.fp8.quantize_at_load);
}

// llama-tiny written as a GPTQ checkpoint (4 bits, group 128, symmetric: Q4_0 at load) with an
// unquantized F32 lm_head. vLLM's --dtype is the activations' and unquantized weights' dtype: the
// quantized layers keep their types, and a GGUF type as --quantization is refused.
class ModelLoaderGptqDirectoryTest : public ::testing::Test {
 protected:
  void SetUp() override {
    Status status = WriteRandomModel(
        {.shape = "llama-tiny",
         .vocab_path = std::string(VLLM_SHARED_DIR) + "/vocab/ggml-vocab-llama-spm.gguf",
         .output_path = dir_.File("model.gguf"),
         .seed = 5});
    ASSERT_TRUE(status.ok()) << status.message();
    auto file = GgufFile::Open(dir_.File("model.gguf"));
    ASSERT_TRUE(file.ok()) << file.error();
    auto options = MakeHfQuantWriterOptions("gptq", 0, 0, false, 7);
    ASSERT_TRUE(options.ok()) << options.error();
    status = WriteQuantizedHfCheckpointFromGguf(**file, dir_.File("gptq"),
                                                std::string(VLLM_SHARED_DIR) + "/tokenizers/llama2",
                                                *options, "");
    ASSERT_TRUE(status.ok()) << status.message();
  }

  TempTestDir dir_{"model_loader_gptq"};
  ThreadPool pool_{ThreadPool::Options{.num_threads = 2}};
};

TEST_F(ModelLoaderGptqDirectoryTest, DtypeKeepsQuantizedLayersAndConvertsTheOthers) {
  auto automatic = LoadModelFromPath(dir_.File("gptq"), {.pool = &pool_});
  ASSERT_TRUE(automatic.ok()) << automatic.error();
  auto bf16 =
      LoadModelFromPath(dir_.File("gptq"), {.pool = &pool_, .linear_type = GgmlType::kBF16});
  ASSERT_TRUE(bf16.ok()) << bf16.error();
  // Only the F32 lm_head changes: to half its bytes.
  const GgufTensor* head = bf16->checkpoint->source->Find("output.weight");
  ASSERT_NE(head, nullptr);
  ASSERT_EQ(head->type, GgmlType::kF32);
  EXPECT_EQ(bf16->model->weight_bytes(), automatic->model->weight_bytes() - head->num_bytes / 2);
  // The model holds its own copies of the converted layers: the source has let them go.
  EXPECT_EQ(bf16->checkpoint->source->Find("blk.0.attn_q.weight"), nullptr);

  auto checkpoint = OpenHfCheckpoint(dir_.File("gptq"), Json::object(), "", &pool_);
  ASSERT_TRUE(checkpoint.ok()) << checkpoint.error();
  const HfTensorSource& source = *checkpoint->source;
  const ModelConfig& config = checkpoint->config;

  const int64_t hidden = config.hidden_size, q_rows = config.num_heads * config.head_dim;
  const int64_t kv_rows = config.num_kv_heads * config.head_dim;
  for (GgmlType linear_type : {GgmlType::kBF16, GgmlType::kF32, GgmlType::kQ8_0}) {
    const std::string type_name = GgmlTypeName(static_cast<uint32_t>(linear_type));
    WeightLoader loader(source, linear_type);
    EXPECT_TRUE(source.IsQuantizedLinear("blk.0.attn_q.weight"));
    auto q = loader.Linear("blk.0.attn_q.weight", q_rows, hidden);
    ASSERT_TRUE(q.ok()) << q.error();
    EXPECT_EQ((*q)->type(), GgmlType::kQ4_0) << type_name;
    auto qkv = loader.FusedLinear({{"blk.0.attn_q.weight", q_rows},
                                   {"blk.0.attn_k.weight", kv_rows},
                                   {"blk.0.attn_v.weight", kv_rows}},
                                  hidden);
    ASSERT_TRUE(qkv.ok()) << qkv.error();
    ASSERT_NE(*qkv, nullptr) << type_name;
    EXPECT_EQ((*qkv)->type(), GgmlType::kQ4_0) << type_name;
    auto gate_up = loader.GatedPairLinear("blk.0.ffn_gate.weight", "blk.0.ffn_up.weight",
                                          config.intermediate_size, hidden);
    ASSERT_TRUE(gate_up.ok()) << gate_up.error();
    ASSERT_NE(*gate_up, nullptr) << type_name;
    EXPECT_EQ((*gate_up)->type(), GgmlType::kQ4_0) << type_name;
    EXPECT_FALSE(source.IsQuantizedLinear("output.weight"));
    auto output = loader.Linear("output.weight", config.vocab_size, hidden);
    ASSERT_TRUE(output.ok()) << output.error();
    EXPECT_EQ((*output)->type(), linear_type) << type_name;
  }
}

TEST_F(ModelLoaderGptqDirectoryTest, GgufTypeAsQuantizationIsRefusedNamingTheMethod) {
  auto loaded = LoadModelFromPath(
      dir_.File("gptq"), {.pool = &pool_, .linear_type = GgmlType::kQ8_0}, Json::object(), "q8_0");
  ASSERT_FALSE(loaded.ok());
  EXPECT_EQ(loaded.error(),
            dir_.File("gptq") +
                ": --quantization q8_0 quantizes unquantized weights at load, but the checkpoint "
                "is already quantized with gptq (quantization_config.quant_method); leave "
                "--quantization out or give gptq");
}

}  // namespace
}  // namespace vllm
