// A Hugging Face model directory must load as the same model as the GGUF it was written from:
// the same random weights in both formats give equal logits (f32) and the same greedy tokens.
#include "model/hf_checkpoint.h"

#include <gtest/gtest.h>
#include <unistd.h>

#include <cmath>
#include <filesystem>
#include <fstream>

#include "model/hf_export.h"
#include "model/model.h"
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
  batch.query_start_loc = {0, static_cast<int32_t>(tokens.size())};
  batch.seq_lens = {static_cast<int32_t>(tokens.size())};
  batch.block_tables = {{0, 1, 2, 3}};
  for (size_t p = 0; p < tokens.size(); ++p) {
    batch.token_ids.push_back(tokens[p]);
    batch.positions.push_back(static_cast<int32_t>(p));
    batch.slot_mapping.push_back(static_cast<int64_t>(p));
    batch.logits_indices.push_back(static_cast<int32_t>(p));
  }
  std::vector<float> logits(tokens.size() * config.vocab_size);
  Status status = model.Forward(batch, **kv, logits.data());
  EXPECT_TRUE(status.ok()) << status.message();
  return logits;
}

// Per shape: a random f32 GGUF, written again as a model directory, loaded both ways.
class HfCheckpointTest : public ::testing::TestWithParam<const char*> {};

TEST_P(HfCheckpointTest, SameWeightsGiveTheSameLogitsAsGguf) {
  const fs::path root =
      fs::path(::testing::TempDir()) /
      ("hf_checkpoint_" + std::string(GetParam()) + "_" + std::to_string(::getpid()));
  fs::create_directories(root);
  const std::string gguf = (root / "model.gguf").string();
  Status written = WriteRandomModel(
      {.shape = GetParam(),
       .vocab_path = std::string(VLLM_SHARED_DIR) + "/vocab/ggml-vocab-llama-spm.gguf",
       .output_path = gguf,
       .seed = 3});
  ASSERT_TRUE(written.ok()) << written.message();
  auto file = GgufFile::Open(gguf);
  ASSERT_TRUE(file.ok()) << file.error();
  Status exported = WriteHfCheckpointFromGguf(**file, (root / "hf").string(),
                                              std::string(VLLM_SHARED_DIR) + "/tokenizers/llama2");
  ASSERT_TRUE(exported.ok()) << exported.message();

  ThreadPool pool(ThreadPool::Options{.num_threads = 2});
  auto gguf_model = LoadModelFromGguf(**file, {.pool = &pool});
  ASSERT_TRUE(gguf_model.ok()) << gguf_model.error();
  auto checkpoint = OpenHfCheckpoint((root / "hf").string());
  ASSERT_TRUE(checkpoint.ok()) << checkpoint.error();
  EXPECT_EQ(checkpoint->config.rope_style, RopeStyle::kNeox);
  EXPECT_EQ(checkpoint->config.architecture, (*gguf_model)->config().architecture);
  EXPECT_EQ(checkpoint->config.head_dim, (*gguf_model)->config().head_dim);
  auto hf_model = LoadModel(*checkpoint->source, checkpoint->config, {.pool = &pool});
  ASSERT_TRUE(hf_model.ok()) << hf_model.error();

  const std::vector<int32_t> tokens = {1,    9038, 2501, 263,   931, 727,  471, 263,  2217, 7826,
                                       4257, 365,  2354, 29889, 450, 5360, 304, 1708, 3332, 29889};
  const std::vector<float> expected = PrefillLogits(**gguf_model, tokens);
  const std::vector<float> actual = PrefillLogits(**hf_model, tokens);
  fs::remove_all(root);
  ASSERT_EQ(expected.size(), actual.size());
  float max_logit = 0.0f, max_difference = 0.0f;
  for (size_t i = 0; i < expected.size(); ++i) {
    max_logit = std::max(max_logit, std::fabs(expected[i]));
    max_difference = std::max(max_difference, std::fabs(expected[i] - actual[i]));
  }
  EXPECT_LE(max_difference, 1e-5f * std::max(1.0f, max_logit))
      << "max |logit| " << max_logit << ", max difference " << max_difference;
}

INSTANTIATE_TEST_SUITE_P(Shapes, HfCheckpointTest,
                         ::testing::Values("llama-tiny", "qwen2-tiny", "qwen3-tiny"));

TEST(HfConfigTest, ReadsLlamaConfigAndRefusesOthers) {
  std::vector<float> factors;
  auto config = ModelConfigFromHfConfig(
      nlohmann::json::parse(R"({"architectures": ["LlamaForCausalLM"], "hidden_size": 64,
        "intermediate_size": 128, "num_attention_heads": 4, "num_hidden_layers": 2,
        "num_key_value_heads": 2, "vocab_size": 100, "rms_norm_eps": 1e-5,
        "rope_theta": 500000.0, "max_position_embeddings": 4096,
        "rope_scaling": {"rope_type": "llama3", "factor": 8.0, "low_freq_factor": 1.0,
                         "high_freq_factor": 4.0, "original_max_position_embeddings": 8192}})"),
      &factors);
  ASSERT_TRUE(config.ok()) << config.error();
  EXPECT_EQ(config->head_dim, 16);
  EXPECT_EQ(config->num_kv_heads, 2);
  ASSERT_EQ(factors.size(), 8u);
  EXPECT_FLOAT_EQ(factors.front(), 1.0f);  // high frequencies keep their speed
  EXPECT_FLOAT_EQ(factors.back(), 8.0f);   // low ones are slowed by the factor

  auto qwen = ModelConfigFromHfConfig(
      nlohmann::json::parse(R"({"architectures": ["GPTNeoXForCausalLM"]})"), &factors);
  ASSERT_FALSE(qwen.ok());
  EXPECT_NE(qwen.error().find("supported: LlamaForCausalLM, MistralForCausalLM"),
            std::string::npos);
  auto scaling = ModelConfigFromHfConfig(
      nlohmann::json::parse(R"({"architectures": ["LlamaForCausalLM"], "hidden_size": 64,
        "intermediate_size": 128, "num_attention_heads": 4, "num_hidden_layers": 2,
        "vocab_size": 100, "rope_scaling": {"type": "yarn", "factor": 4.0}})"),
      &factors);
  ASSERT_FALSE(scaling.ok());
  EXPECT_NE(scaling.error().find("yarn"), std::string::npos);
}

TEST(HfConfigTest, NamesMapBothWays) {
  EXPECT_EQ(HfTensorName("blk.3.attn_q.weight"), "model.layers.3.self_attn.q_proj.weight");
  EXPECT_EQ(HfTensorName("token_embd.weight"), "model.embed_tokens.weight");
  EXPECT_EQ(HfTensorName("output.weight"), "lm_head.weight");
  EXPECT_EQ(HfTensorName("blk.0.unknown.weight"), "");
}

}  // namespace
}  // namespace vllm
