// A Hugging Face model directory must load as the same model as the GGUF it was written from:
// the same random weights in both formats give equal logits (f32) and the same greedy tokens.
#include "model/hf_checkpoint.h"

#include <gtest/gtest.h>
#include <unistd.h>

#include <cmath>
#include <cstring>
#include <filesystem>
#include <fstream>

#include "formats/gguf_writer.h"
#include "formats/safetensors_writer.h"
#include "kernels/ops.h"
#include "model/hf_export.h"
#include "model/model.h"
#include "model/model_loader.h"
#include "model/random_model.h"

namespace vllm {
namespace {

namespace fs = std::filesystem;

// Logits of every position of `tokens` run as one prefill.
std::vector<float> PrefillLogits(Model& model, const std::vector<int32_t>& tokens) {
  const ModelConfig& config = model.config();
  auto kv = KvStorage::Create({.num_layers = config.num_layers,
                               .num_blocks = 8,
                               .block_size = 16,
                               .num_kv_heads = config.num_kv_heads,
                               .head_dim = config.head_dim});
  EXPECT_TRUE(kv.ok());
  ForwardBatch batch;
  const std::vector<int32_t> block_table = {0, 1, 2, 3};
  EXPECT_TRUE(AppendSequence(tokens, 0, {&block_table, 1}, 16, batch).ok());
  for (size_t p = 0; p < tokens.size(); ++p)
    batch.logits_indices.push_back(static_cast<int32_t>(p));
  std::vector<float> logits(tokens.size() * config.vocab_size);
  Status status = model.Forward(batch, **kv, logits.data());
  EXPECT_TRUE(status.ok()) << status.message();
  return logits;
}

// Prefill logits of `actual` within `relative_tolerance` of max |logit| of `expected`'s.
void ExpectCloseLogits(Model& expected_model, Model& actual_model,
                       const std::vector<int32_t>& tokens, float relative_tolerance) {
  const std::vector<float> expected = PrefillLogits(expected_model, tokens);
  const std::vector<float> actual = PrefillLogits(actual_model, tokens);
  ASSERT_EQ(expected.size(), actual.size());
  float max_logit = 0.0f, max_difference = 0.0f;
  for (size_t i = 0; i < expected.size(); ++i) {
    max_logit = std::max(max_logit, std::fabs(expected[i]));
    max_difference = std::max(max_difference, std::fabs(expected[i] - actual[i]));
  }
  EXPECT_LE(max_difference, relative_tolerance * std::max(1.0f, max_logit))
      << "max |logit| " << max_logit << ", max difference " << max_difference;
}

// Writes `gguf_path` as a model directory under `root`, loads both, and expects equal logits.
void ExpectSameLogitsBothWays(const std::string& gguf_path, const fs::path& root,
                              const std::vector<int32_t>& tokens) {
  auto file = GgufFile::Open(gguf_path);
  ASSERT_TRUE(file.ok()) << file.error();
  Status exported = WriteHfCheckpointFromGguf(**file, (root / "hf").string(),
                                              std::string(VLLM_SHARED_DIR) + "/tokenizers/llama2");
  ASSERT_TRUE(exported.ok()) << exported.message();

  ThreadPool pool(ThreadPool::Options{.num_threads = 2});
  auto gguf_model = LoadModelFromGguf(**file, {.pool = &pool});
  ASSERT_TRUE(gguf_model.ok()) << gguf_model.error();
  auto checkpoint = OpenHfCheckpoint((root / "hf").string());
  ASSERT_TRUE(checkpoint.ok()) << checkpoint.error();
  const ModelConfig& expected_config = (*gguf_model)->config();
  EXPECT_EQ(checkpoint->config.rope_style, RopeStyle::kNeox);
  EXPECT_EQ(checkpoint->config.architecture, expected_config.architecture);
  EXPECT_EQ(checkpoint->config.head_dim, expected_config.head_dim);
  EXPECT_EQ(checkpoint->config.num_experts, expected_config.num_experts);
  for (int64_t layer = 0; layer < expected_config.num_layers; ++layer) {
    EXPECT_EQ(checkpoint->config.LayerSlidingWindow(layer),
              expected_config.LayerSlidingWindow(layer));
  }
  EXPECT_FLOAT_EQ(checkpoint->config.AttentionScale(), expected_config.AttentionScale());
  auto hf_model = LoadModel(*checkpoint->source, checkpoint->config, {.pool = &pool});
  ASSERT_TRUE(hf_model.ok()) << hf_model.error();
  ExpectCloseLogits(**gguf_model, **hf_model, tokens, 1e-5f);
}

fs::path TestDir(const std::string& name) {
  const fs::path root =
      fs::path(::testing::TempDir()) / ("hf_checkpoint_" + name + "_" + std::to_string(::getpid()));
  fs::create_directories(root);
  return root;
}

// Per shape (and dtype): a random GGUF, written again as a model directory, loaded both ways.
struct ShapeAndDtype {
  const char* shape;
  const char* dtype;
};
class HfCheckpointTest : public ::testing::TestWithParam<ShapeAndDtype> {};

TEST_P(HfCheckpointTest, SameWeightsGiveTheSameLogitsAsGguf) {
  const fs::path root = TestDir(std::string(GetParam().shape) + "_" + GetParam().dtype);
  const std::string gguf = (root / "model.gguf").string();
  Status written = WriteRandomModel(
      {.shape = GetParam().shape,
       .dtype = GetParam().dtype,
       .vocab_path = std::string(VLLM_SHARED_DIR) + "/vocab/ggml-vocab-llama-spm.gguf",
       .output_path = gguf,
       .seed = 3});
  ASSERT_TRUE(written.ok()) << written.message();
  ExpectSameLogitsBothWays(gguf, root,
                           {1,    9038, 2501, 263,   931, 727,  471, 263,  2217, 7826,
                            4257, 365,  2354, 29889, 450, 5360, 304, 1708, 3332, 29889});
  fs::remove_all(root);
}

// The architecture oracles (f32 GGUFs of Qwen3-MoE, Gemma 3 and Phi-3) as model directories.
class HfOracleCheckpointTest : public ::testing::TestWithParam<const char*> {};

TEST_P(HfOracleCheckpointTest, SameWeightsGiveTheSameLogitsAsGguf) {
  const fs::path root = TestDir(GetParam());
  // 20 tokens of the oracles' 512-token vocabulary: past Gemma 3's window of 12.
  ExpectSameLogitsBothWays(std::string(VLLM_SHARED_DIR) + "/oracles/models/" + GetParam() + ".gguf",
                           root, {1,   400, 261, 506, 271, 300, 420, 289, 311, 500,
                                  263, 401, 287, 312, 290, 450, 266, 270, 399, 280});
  fs::remove_all(root);
}

INSTANTIATE_TEST_SUITE_P(Oracles, HfOracleCheckpointTest,
                         ::testing::Values("tiny-qwen3moe", "tiny-gemma3", "tiny-phi3"));

INSTANTIATE_TEST_SUITE_P(
    Shapes, HfCheckpointTest,
    ::testing::Values(ShapeAndDtype{"llama-tiny", "f32"}, ShapeAndDtype{"qwen2-tiny", "f32"},
                      ShapeAndDtype{"qwen3-tiny", "f32"}, ShapeAndDtype{"mixtral-tiny", "f32"},
                      ShapeAndDtype{"gemma2-tiny", "f32"}, ShapeAndDtype{"gpt-oss-tiny", "bf16"},
                      ShapeAndDtype{"gpt-oss-tiny", "mxfp4_moe"}, ShapeAndDtype{"phi3-tiny", "f32"},
                      ShapeAndDtype{"gemma2-27b-tiny", "f32"}),
    [](const ::testing::TestParamInfo<ShapeAndDtype>& param_info) {
      std::string name = std::string(param_info.param.shape) + "_" + param_info.param.dtype;
      std::replace(name.begin(), name.end(), '-', '_');
      return name;
    });

// Expects every linear weight `quantized` converted at load to dequantize, once un-permuted by
// its input order, to `dequantized`'s F32 weight of the same name: exactly for Q4_0 / Q4_Z / Q8_0,
// within the f16 rounding of Q4_1's minimum otherwise. Returns how many weights it compared.
int ExpectSameLinearWeights(const HfTensorSource& quantized, const HfTensorSource& dequantized,
                            const ModelConfig& config) {
  std::vector<std::string> names;
  for (int64_t layer = 0; layer < config.num_layers; ++layer) {
    const std::string block = "blk." + std::to_string(layer) + ".";
    for (const char* kind : {"attn_q", "attn_k", "attn_v", "attn_output"}) {
      names.push_back(block + kind + ".weight");
    }
    for (const char* kind : {"ffn_gate", "ffn_up", "ffn_down"}) {
      if (config.num_experts == 0) names.push_back(block + kind + ".weight");
      for (int64_t expert = 0; expert < config.num_experts; ++expert) {
        names.push_back(block + kind + "." + std::to_string(expert) + ".weight");
      }
    }
  }
  int compared = 0;
  for (const std::string& name : names) {
    const GgufTensor* converted = quantized.Find(name);
    const GgufTensor* reference = dequantized.Find(name);
    if (converted == nullptr || reference == nullptr || reference->type != GgmlType::kF32 ||
        converted->type == GgmlType::kF32 || converted->shape != reference->shape) {
      ADD_FAILURE() << name << ": missing, not converted, or of another shape";
      continue;
    }
    const int64_t cols = converted->shape[0], rows = converted->shape[1];
    const std::vector<int32_t>* order = quantized.InputOrder(name);
    const int64_t row_bytes = RowBytes(*FindSupportedType(converted->type), cols);
    std::vector<float> row(cols), expected(cols);
    float max_weight = 0.0f, max_difference = 0.0f;
    for (int64_t r = 0; r < rows; ++r) {
      kernels::DequantizeRow(converted->type, converted->data + r * row_bytes, cols, row.data());
      std::memcpy(expected.data(), reference->data + r * cols * sizeof(float),
                  cols * sizeof(float));
      for (int64_t j = 0; j < cols; ++j) {
        const float want = expected[order == nullptr ? j : (*order)[j]];
        max_weight = std::max(max_weight, std::fabs(want));
        max_difference = std::max(max_difference, std::fabs(row[j] - want));
      }
    }
    const bool exact = converted->type == GgmlType::kQ4_0 || converted->type == GgmlType::kQ4_Z ||
                       converted->type == GgmlType::kQ8_0;
    EXPECT_LE(max_difference, exact ? 0.0f : 1e-3f * max_weight)
        << name << " as " << GgmlTypeName(static_cast<uint32_t>(converted->type));
    ++compared;
  }
  return compared;
}

// A quantized model directory in each tool's layout (GPTQ, GPTQ with desc_act, AWQ; dense and
// MoE) loads as the same model as its weights dequantized to F32: the same linear weights, and
// the same logits up to the quantized kernels' rounding of activations.
struct ShapeAndQuantization {
  const char* shape;
  const char* format;         // make-random-model --quantization
  int64_t group_size;         // 0: the format's default
  int64_t linears_per_layer;  // attention's 4, and 3 per expert (or 3 without experts)
  // Of max |logit|: the quantized kernels round activations to 8-bit blocks (an error of order
  // 1e-2, see quantized_logits_test.cc), which can flip MoE routing between near-tied experts.
  float logits_tolerance;
};
class HfQuantizedCheckpointTest : public ::testing::TestWithParam<ShapeAndQuantization> {};

TEST_P(HfQuantizedCheckpointTest, LogitsMatchTheDequantizedWeights) {
  const ShapeAndQuantization& param = GetParam();
  const fs::path root = TestDir(std::string("quantized_") + param.shape + "_" + param.format);
  const std::string gguf = (root / "model.gguf").string();
  Status written = WriteRandomModel(
      {.shape = param.shape,
       .vocab_path = std::string(VLLM_SHARED_DIR) + "/vocab/ggml-vocab-llama-spm.gguf",
       .output_path = gguf,
       .seed = 5});
  ASSERT_TRUE(written.ok()) << written.message();
  auto file = GgufFile::Open(gguf);
  ASSERT_TRUE(file.ok()) << file.error();
  auto options = MakeHfQuantWriterOptions(param.format, 0, param.group_size, false, 7);
  ASSERT_TRUE(options.ok()) << options.error();
  written = WriteQuantizedHfCheckpointFromGguf(**file, (root / "quantized").string(),
                                               std::string(VLLM_SHARED_DIR) + "/tokenizers/llama2",
                                               *options, (root / "dequantized").string());
  ASSERT_TRUE(written.ok()) << written.message();

  ThreadPool pool(ThreadPool::Options{.num_threads = 2});
  auto quantized = LoadModelFromPath((root / "quantized").string(), {.pool = &pool});
  ASSERT_TRUE(quantized.ok()) << quantized.error();
  auto dequantized = LoadModelFromPath((root / "dequantized").string(), {.pool = &pool});
  ASSERT_TRUE(dequantized.ok()) << dequantized.error();
  // The loaded model has let its source's converted layers go: compare a fresh conversion.
  auto converted =
      OpenHfCheckpoint((root / "quantized").string(), nlohmann::json::object(), "", &pool);
  ASSERT_TRUE(converted.ok()) << converted.error();
  const ModelConfig& config = converted->config;
  EXPECT_EQ(ExpectSameLinearWeights(*converted->source, *dequantized->checkpoint->source, config),
            config.num_layers * param.linears_per_layer);
  if (std::string(param.format) == "gptq-act") {
    // q, k and v load with one input order, gate and up with another, as from GPTQ's checkpoints
    // (one order per input): the loader keeps them fused.
    for (int64_t layer = 0; layer < config.num_layers; ++layer) {
      const std::string block = "blk." + std::to_string(layer) + ".";
      auto order = [&](const char* name) {
        const std::vector<int32_t>* input_order = converted->source->InputOrder(block + name);
        return input_order == nullptr ? std::vector<int32_t>() : *input_order;
      };
      ASSERT_FALSE(order("attn_q.weight").empty());
      EXPECT_EQ(order("attn_k.weight"), order("attn_q.weight"));
      EXPECT_EQ(order("attn_v.weight"), order("attn_q.weight"));
      EXPECT_FALSE(order("ffn_gate.weight").empty());
      EXPECT_EQ(order("ffn_up.weight"), order("ffn_gate.weight"));
      EXPECT_NE(order("ffn_gate.weight"), order("attn_q.weight"));
    }
  }
  ExpectCloseLogits(*dequantized->model, *quantized->model,
                    {1, 9038, 2501, 263, 931, 727, 471, 263, 2217, 7826, 4257, 365},
                    param.logits_tolerance);
  fs::remove_all(root);
}

INSTANTIATE_TEST_SUITE_P(
    Layouts, HfQuantizedCheckpointTest,
    ::testing::Values(ShapeAndQuantization{"llama-tiny", "gptq", 0, 7, 1e-2f},
                      ShapeAndQuantization{"llama-tiny", "gptq-act", 0, 7, 1e-2f},
                      ShapeAndQuantization{"llama-tiny", "awq", 0, 7, 1e-2f},
                      ShapeAndQuantization{"qwen3moe-tiny", "gptq", 32, 4 + 3 * 8, 1e-1f},
                      ShapeAndQuantization{"mixtral-tiny", "awq", 0, 4 + 3 * 8, 1e-1f}),
    [](const ::testing::TestParamInfo<ShapeAndQuantization>& param_info) {
      std::string name = std::string(param_info.param.shape) + "_" + param_info.param.format;
      std::replace(name.begin(), name.end(), '-', '_');
      return name;
    });

TEST(HfConfigTest, ReadsLlamaConfigAndRefusesOthers) {
  HfDerivedTensors derived;
  auto config = ModelConfigFromHfConfig(
      nlohmann::json::parse(R"({"architectures": ["LlamaForCausalLM"], "hidden_size": 64,
        "intermediate_size": 128, "num_attention_heads": 4, "num_hidden_layers": 2,
        "num_key_value_heads": 2, "vocab_size": 100, "rms_norm_eps": 1e-5,
        "rope_theta": 500000.0, "max_position_embeddings": 4096,
        "rope_scaling": {"rope_type": "llama3", "factor": 8.0, "low_freq_factor": 1.0,
                         "high_freq_factor": 4.0, "original_max_position_embeddings": 8192}})"),
      &derived);
  ASSERT_TRUE(config.ok()) << config.error();
  EXPECT_EQ(config->head_dim, 16);
  EXPECT_EQ(config->num_kv_heads, 2);
  const std::vector<float>& factors = derived.tensors["rope_freqs.weight"];
  ASSERT_EQ(factors.size(), 8u);
  EXPECT_FLOAT_EQ(factors.front(), 1.0f);  // high frequencies keep their speed
  EXPECT_FLOAT_EQ(factors.back(), 8.0f);   // low ones are slowed by the factor

  auto qwen = ModelConfigFromHfConfig(
      nlohmann::json::parse(R"({"architectures": ["GPTNeoXForCausalLM"]})"), &derived);
  ASSERT_FALSE(qwen.ok());
  EXPECT_NE(qwen.error().find("supported: LlamaForCausalLM, MistralForCausalLM"),
            std::string::npos);
  auto scaling = ModelConfigFromHfConfig(
      nlohmann::json::parse(R"({"architectures": ["LlamaForCausalLM"], "hidden_size": 64,
        "intermediate_size": 128, "num_attention_heads": 4, "num_hidden_layers": 2,
        "vocab_size": 100, "rope_scaling": {"type": "dynamic", "factor": 4.0}})"),
      &derived);
  ASSERT_FALSE(scaling.ok());
  EXPECT_NE(scaling.error().find("dynamic"), std::string::npos);
}

// A quantized layer the architecture loads only through its own conversion (gpt-oss's stacked
// experts) is an error naming the tensor and the method, before anything is converted.
TEST(HfConfigTest, RefusesAQuantizedTensorTheArchitectureConverts) {
  const fs::path root = TestDir("quantized_converted");
  const std::vector<int32_t> words(16 * 64, 0);
  Status written = WriteSafetensors((root / "model.safetensors").string(),
                                    {{"model.layers.0.mlp.experts.gate_up_proj.qweight",
                                      GgmlType::kI32,
                                      {16, 64},
                                      words.data(),
                                      static_cast<int64_t>(words.size() * sizeof(int32_t))}},
                                    {});
  ASSERT_TRUE(written.ok()) << written.message();
  auto weights = SafetensorsModel::OpenDirectory(root.string());
  ASSERT_TRUE(weights.ok()) << weights.error();
  auto source = HfTensorSource::Create(**weights, *FindArchitecture("gpt-oss"), {},
                                       {.method = QuantMethod::kGptq});
  fs::remove_all(root);
  ASSERT_FALSE(source.ok());
  EXPECT_NE(source.error().find("'model.layers.0.mlp.experts.gate_up_proj.weight'"),
            std::string::npos)
      << source.error();
  EXPECT_NE(source.error().find("gptq"), std::string::npos) << source.error();
}

// U8 tensors are only inputs of conversions (gpt-oss's MXFP4 blocks): as a weight, an error.
TEST(HfConfigTest, RefusesAByteTensorAsAWeight) {
  const fs::path root = TestDir("u8_weight");
  const std::vector<uint8_t> bytes(64, 1);
  Status written = WriteSafetensors(
      (root / "model.safetensors").string(),
      {{"model.layers.0.input_layernorm.weight", GgmlType::kI8, {64}, bytes.data(), 64}}, {});
  ASSERT_TRUE(written.ok()) << written.message();
  auto weights = SafetensorsModel::OpenDirectory(root.string());
  ASSERT_TRUE(weights.ok()) << weights.error();
  auto source = HfTensorSource::Create(**weights, *FindArchitecture("gemma3"), {});
  fs::remove_all(root);
  ASSERT_FALSE(source.ok());
  EXPECT_NE(source.error().find("must be F32, F16 or BF16"), std::string::npos) << source.error();
}

// FP8 checkpoints' KV-cache scales load as nothing (this KV cache scales each row itself), while
// an unknown tensor beside them is still an error naming it.
TEST(HfConfigTest, SkipsFp8KvCacheScales) {
  const fs::path root = TestDir("kv_scales");
  const float scale = 0.5f;
  std::vector<SafetensorsTensor> tensors;
  for (const char* name :
       {"model.layers.0.self_attn.k_scale", "model.layers.0.self_attn.v_scale",
        "model.layers.0.self_attn.q_scale", "model.layers.0.self_attn.prob_scale"}) {
    tensors.push_back({name, GgmlType::kF32, {}, &scale, 4});
  }
  ASSERT_TRUE(WriteSafetensors((root / "model.safetensors").string(), tensors, {}).ok());
  auto weights = SafetensorsModel::OpenDirectory(root.string());
  ASSERT_TRUE(weights.ok()) << weights.error();
  auto source = HfTensorSource::Create(**weights, *FindArchitecture("llama"), {});
  ASSERT_TRUE(source.ok()) << source.error();
  EXPECT_EQ((*source)->num_values(), 0);

  tensors.push_back({"model.layers.0.self_attn.z_scale", GgmlType::kF32, {}, &scale, 4});
  ASSERT_TRUE(WriteSafetensors((root / "model.safetensors").string(), tensors, {}).ok());
  weights = SafetensorsModel::OpenDirectory(root.string());
  ASSERT_TRUE(weights.ok()) << weights.error();
  source = HfTensorSource::Create(**weights, *FindArchitecture("llama"), {});
  fs::remove_all(root);
  ASSERT_FALSE(source.ok());
  EXPECT_NE(source.error().find("'model.layers.0.self_attn.z_scale'"), std::string::npos)
      << source.error();
}

TEST(HfConfigTest, NamesMapBothWays) {
  const auto& names = FindArchitecture("llama")->hf_tensors;
  EXPECT_EQ(TranslateTensorName(names, "blk.3.attn_q.weight", false),
            "model.layers.3.self_attn.q_proj.weight");
  EXPECT_EQ(TranslateTensorName(names, "model.layers.12.self_attn.q_proj.weight", true),
            "blk.12.attn_q.weight");
  EXPECT_EQ(TranslateTensorName(names, "token_embd.weight", false), "model.embed_tokens.weight");
  EXPECT_EQ(TranslateTensorName(names, "output.weight", false), "lm_head.weight");
  EXPECT_EQ(TranslateTensorName(names, "blk.0.unknown.weight", false), "");
  EXPECT_EQ(TranslateTensorName(names, "model.layers.x.self_attn.q_proj.weight", true), "");
  // Mixtral's per-expert tensors.
  EXPECT_EQ(TranslateTensorName(names, "model.layers.2.block_sparse_moe.experts.7.w3.weight", true),
            "blk.2.ffn_up.7.weight");
  EXPECT_EQ(TranslateTensorName(names, "blk.2.ffn_down.5.weight", false),
            "model.layers.2.block_sparse_moe.experts.5.w2.weight");
  // Multimodal wrappers' text tensors; vision tensors are skipped.
  EXPECT_EQ(TextModelTensorName("model.language_model.layers.0.mlp.up_proj.weight"),
            "model.layers.0.mlp.up_proj.weight");
  EXPECT_EQ(TextModelTensorName("language_model.model.norm.weight"), "model.norm.weight");
  EXPECT_EQ(TextModelTensorName("vision_tower.vision_model.embeddings.patch.weight"), "");
}

TEST(HfConfigTest, QwenSlidingWindowAppliesOnlyWhenEnabled) {
  HfDerivedTensors derived;
  auto qwen = ModelConfigFromHfConfig(
      nlohmann::json::parse(R"({"architectures": ["Qwen2ForCausalLM"], "hidden_size": 64,
        "intermediate_size": 128, "num_attention_heads": 4, "num_hidden_layers": 2,
        "vocab_size": 100, "sliding_window": 32768, "use_sliding_window": false})"),
      &derived);
  ASSERT_TRUE(qwen.ok()) << qwen.error();
  EXPECT_EQ(qwen->LayerSlidingWindow(0), 0);
  auto mistral = ModelConfigFromHfConfig(
      nlohmann::json::parse(R"({"architectures": ["MistralForCausalLM"], "hidden_size": 64,
        "intermediate_size": 128, "num_attention_heads": 4, "num_hidden_layers": 2,
        "vocab_size": 100, "sliding_window": 4096})"),
      &derived);
  ASSERT_TRUE(mistral.ok()) << mistral.error();
  EXPECT_EQ(mistral->LayerSlidingWindow(0), 4096);
  EXPECT_EQ(mistral->LayerSlidingWindow(1), 4096);
}

TEST(HfConfigTest, GemmaLayerTypesAndMultimodalTextConfig) {
  HfDerivedTensors derived;
  auto gemma = ModelConfigFromHfConfig(
      nlohmann::json::parse(R"({"architectures": ["Gemma3ForConditionalGeneration"],
        "text_config": {"hidden_size": 64, "intermediate_size": 128, "num_attention_heads": 4,
          "num_key_value_heads": 1, "head_dim": 32, "num_hidden_layers": 3, "vocab_size": 100,
          "sliding_window": 16, "sliding_window_pattern": 3, "query_pre_attn_scalar": 64,
          "rope_local_base_freq": 10000.0, "rope_theta": 1000000.0,
          "layer_types": ["sliding_attention", "sliding_attention", "full_attention"]}})"),
      &derived);
  ASSERT_TRUE(gemma.ok()) << gemma.error();
  EXPECT_EQ(gemma->architecture, "gemma3");
  EXPECT_EQ(gemma->LayerSlidingWindow(0), 16);
  EXPECT_EQ(gemma->LayerSlidingWindow(2), 0);
  EXPECT_FLOAT_EQ(gemma->AttentionScale(), 0.125f);
  EXPECT_FLOAT_EQ(gemma->rope_theta_swa, 10000.0f);
  auto wrong = ModelConfigFromHfConfig(
      nlohmann::json::parse(R"({"architectures": ["Gemma2ForCausalLM"], "hidden_size": 64,
        "intermediate_size": 128, "num_attention_heads": 4, "num_hidden_layers": 2,
        "vocab_size": 100, "layer_types": ["full_attention", "sliding_attention"]})"),
      &derived);
  ASSERT_FALSE(wrong.ok());
  EXPECT_NE(wrong.error().find("layer_types"), std::string::npos);
}

// --hf-overrides and --rope-scaling as the loader applies them: the logits of a model whose
// config.json (or GGUF metadata) says what the override says.
class HfOverridesLogitsTest : public ::testing::Test {
 protected:
  std::vector<float> Logits(const std::string& path, const nlohmann::json& overrides) {
    auto loaded = LoadModelFromPath(path, {.pool = &pool_}, overrides);
    EXPECT_TRUE(loaded.ok()) << loaded.error();
    if (!loaded.ok()) return {};
    return PrefillLogits(*loaded->model, tokens_);
  }

  const std::string stories_ = std::string(VLLM_SHARED_DIR) + "/models/stories260K.gguf";
  const std::vector<int32_t> tokens_ = {1, 400, 261, 306, 271, 300, 420, 289, 311, 500, 263};
  const fs::path root_ = TestDir("overrides");
  ThreadPool pool_{ThreadPool::Options{.num_threads = 2}};
};

TEST_F(HfOverridesLogitsTest, RopeThetaOverrideOfADirectoryIsItsConfigSayingSo) {
  auto file = GgufFile::Open(stories_);
  ASSERT_TRUE(file.ok()) << file.error();
  const std::string dir = (root_ / "hf").string();
  Status exported =
      WriteHfCheckpointFromGguf(**file, dir, std::string(VLLM_SHARED_DIR) + "/tokenizers/llama2");
  ASSERT_TRUE(exported.ok()) << exported.message();
  const std::vector<float> original = Logits(dir, nlohmann::json::object());
  const std::vector<float> overridden = Logits(dir, {{"rope_theta", 1e6}});
  EXPECT_NE(overridden, original);

  std::ifstream config_file(fs::path(dir) / "config.json");
  nlohmann::json config = nlohmann::json::parse(config_file);
  config_file.close();
  config["rope_theta"] = 1e6;
  std::ofstream(fs::path(dir) / "config.json") << config.dump();
  EXPECT_EQ(Logits(dir, nlohmann::json::object()), overridden);
  fs::remove_all(root_);
}

TEST_F(HfOverridesLogitsTest, GgufRopeScalingOverrideIsTheMetadataWritten) {
  auto file = GgufFile::Open(stories_);
  ASSERT_TRUE(file.ok()) << file.error();
  // stories260K again, with linear scaling x2 written in its metadata.
  const std::string scaled = (root_ / "scaled.gguf").string();
  GgufWriter writer;
  for (const auto& key : (*file)->metadata_order()) writer.AddMetadata(key, *(*file)->Find(key));
  writer.AddMetadata("llama.rope.scaling.type", GgufValue::String("linear"));
  writer.AddMetadata("llama.rope.scaling.factor", GgufValue::Float32(2.0f));
  for (const GgufTensor& tensor : (*file)->tensors()) {
    writer.AddTensor(tensor.name, tensor.shape, tensor.type);
  }
  ASSERT_TRUE(writer.Begin(scaled).ok());
  for (size_t i = 0; i < (*file)->tensors().size(); ++i) {
    const GgufTensor& tensor = (*file)->tensors()[i];
    ASSERT_TRUE(writer.WriteTensorData(i, tensor.data, tensor.num_bytes).ok());
  }
  ASSERT_TRUE(writer.Finish().ok());

  const nlohmann::json linear = {{"rope_scaling", {{"rope_type", "linear"}, {"factor", 2.0}}}};
  const std::vector<float> overridden = Logits(stories_, linear);
  EXPECT_NE(overridden, Logits(stories_, nlohmann::json::object()));
  EXPECT_EQ(overridden, Logits(scaled, nlohmann::json::object()));
  // And the override undoes it: rope_scaling replaced by none.
  EXPECT_EQ(Logits(scaled, {{"rope_scaling", nullptr}}),
            Logits(stories_, nlohmann::json::object()));
  fs::remove_all(root_);
}

TEST_F(HfOverridesLogitsTest, AShapeOverrideFailsOnTheLoadersErrorNamingTheTensor) {
  auto loaded = LoadModelFromPath(stories_, {.pool = &pool_}, {{"hidden_size", 96}});
  ASSERT_FALSE(loaded.ok());
  EXPECT_NE(loaded.error().find("token_embd.weight"), std::string::npos) << loaded.error();
}

}  // namespace
}  // namespace vllm
