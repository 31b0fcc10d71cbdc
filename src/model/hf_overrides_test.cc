// --hf-overrides, --rope-scaling and --rope-theta as vLLM applies them: any config.json key,
// nested configs merged, and for GGUF files the keys with a metadata twin rewriting the metadata
// the config is read from.
#include "model/hf_overrides.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "model/gguf_hf_overrides.h"
#include "model/hf_checkpoint.h"

namespace vllm {
namespace {

using Json = nlohmann::json;
using ::testing::HasSubstr;

std::string StoriesPath() { return std::string(VLLM_SHARED_DIR) + "/models/stories260K.gguf"; }

TEST(HfOverridesTest, KeysReplaceAndNestedConfigsMerge) {
  const Json config = {
      {"rope_theta", 10000.0},
      {"rope_scaling", {{"rope_type", "yarn"}, {"factor", 4.0}, {"beta_fast", 16}}},
      {"text_config",
       {{"num_hidden_layers", 4}, {"hidden_size", 64}, {"inner", {{"a", 1}, {"b", 2}}}}},
      {"quantization_config", {{"quant_method", "gptq"}, {"bits", 4}}}};
  const Json merged =
      MergeHfOverrides(config, {{"rope_theta", 1e6},
                                {"rope_scaling", {{"rope_type", "linear"}, {"factor", 2.0}}},
                                {"text_config", {{"num_hidden_layers", 2}, {"inner", {{"b", 3}}}}},
                                {"quantization_config", {{"quant_method", "awq"}}},
                                {"new_key", "x"}});
  EXPECT_EQ(merged["rope_theta"], 1e6);
  // A plain object is replaced whole: no beta_fast left over from the file's yarn.
  EXPECT_EQ(merged["rope_scaling"], Json({{"rope_type", "linear"}, {"factor", 2.0}}));
  // A nested config is merged key by key, at every depth.
  EXPECT_EQ(merged["text_config"],
            Json({{"num_hidden_layers", 2}, {"hidden_size", 64}, {"inner", {{"a", 1}, {"b", 3}}}}));
  EXPECT_EQ(merged["quantization_config"], Json({{"quant_method", "awq"}}));
  EXPECT_EQ(merged["new_key"], "x");
}

TEST(HfOverridesTest, ParseTakesAnyKeyAndChecksShapes) {
  auto overrides = ParseHfOverrides(
      R"({"num_hidden_layers": 2, "tie_word_embeddings": false, "rope_scaling": null})");
  ASSERT_TRUE(overrides.ok()) << overrides.error();
  EXPECT_EQ((*overrides)["num_hidden_layers"], 2);
  EXPECT_EQ(ParseHfOverrides("").value(), Json::object());
  EXPECT_EQ(ParseHfOverrides("[1]").error(), "--hf-overrides must be a JSON object");
  EXPECT_THAT(ParseHfOverrides(R"({"rope_scaling": 2})").error(),
              HasSubstr("--hf-overrides: rope_scaling must be a JSON object, e.g."));
  EXPECT_EQ(ParseHfOverrides(R"({"rope_theta": -1})").error(),
            "--hf-overrides: rope_theta must be a positive number");
  EXPECT_EQ(ParseHfOverrides(R"({"architectures": "LlamaForCausalLM"})").error(),
            "--hf-overrides: architectures must be a list of one architecture name");
}

TEST(HfOverridesTest, RopeFlagsReplaceTheOverridesKeys) {
  auto overrides =
      AddRopeOverrides({{"rope_theta", 5.0}, {"rope_scaling", {{"rope_type", "yarn"}}}},
                       R"({"rope_type": "linear", "factor": 2})", 20000.0);
  ASSERT_TRUE(overrides.ok()) << overrides.error();
  EXPECT_EQ(*overrides, Json({{"rope_theta", 20000.0},
                              {"rope_scaling", {{"rope_type", "linear"}, {"factor", 2}}}}));
  // Neither given: the overrides as they were.
  EXPECT_EQ(AddRopeOverrides({{"a", 1}}, "", std::nullopt).value(), Json({{"a", 1}}));
  EXPECT_EQ(AddRopeOverrides(Json::object(), "{", std::nullopt).error(),
            "--rope-scaling must be a JSON object");
  EXPECT_THAT(AddRopeOverrides(Json::object(), "4", std::nullopt).error(),
              HasSubstr("--rope-scaling: rope_scaling must be a JSON object, e.g."));
  EXPECT_EQ(AddRopeOverrides(Json::object(), "", 0.0).error(),
            "--rope-theta: rope_theta must be a positive number");
}

// stories260K's config after `overrides` rewrote its metadata.
Expected<ModelConfig> OverriddenStoriesConfig(const Json& overrides) {
  auto file = GgufFile::Open(StoriesPath());
  if (!file) return Error{file.error()};
  VLLM_RETURN_IF_ERROR(ApplyHfOverridesToGgufMetadata(overrides, file->get()));
  return ModelConfigFromGguf(**file);
}

TEST(GgufHfOverridesTest, KeysRewriteTheMetadataTheConfigReads) {
  auto original = OverriddenStoriesConfig(Json::object());
  ASSERT_TRUE(original.ok()) << original.error();
  EXPECT_EQ(original->rope_theta, 10000.0f);
  EXPECT_EQ(original->sliding_window, 0);
  auto config = OverriddenStoriesConfig({{"rope_theta", 1e6},
                                         {"max_position_embeddings", 512},
                                         {"rms_norm_eps", 1e-6},
                                         {"sliding_window", 64},
                                         {"num_hidden_layers", 3},
                                         {"is_matryoshka", true}});
  ASSERT_TRUE(config.ok()) << config.error();
  EXPECT_EQ(config->rope_theta, 1e6f);
  EXPECT_EQ(config->max_position_embeddings, 512);
  EXPECT_EQ(config->rms_norm_eps, 1e-6f);
  EXPECT_EQ(config->sliding_window, 64);
  EXPECT_EQ(config->num_layers, 3);
  EXPECT_EQ(config->hidden_size, original->hidden_size);
  // A null erases the key: the family's default.
  auto unset = OverriddenStoriesConfig({{"rope_theta", nullptr}});
  ASSERT_TRUE(unset.ok()) << unset.error();
  EXPECT_EQ(unset->rope_theta, 10000.0f);
}

TEST(GgufHfOverridesTest, RopeScalingReplacesTheFilesScaling) {
  auto linear = OverriddenStoriesConfig({{"rope_scaling", {{"type", "linear"}, {"factor", 2}}}});
  ASSERT_TRUE(linear.ok()) << linear.error();
  EXPECT_EQ(linear->rope_position_scale, 0.5f);
  EXPECT_EQ(linear->DerivedMaxModelLen(), 2 * linear->max_position_embeddings);
  auto yarn = OverriddenStoriesConfig({{"rope_scaling",
                                        {{"rope_type", "yarn"},
                                         {"factor", 4.0},
                                         {"original_max_position_embeddings", 256},
                                         {"beta_fast", 16}}}});
  ASSERT_TRUE(yarn.ok()) << yarn.error();
  EXPECT_EQ(yarn->rope_yarn_factor, 4.0f);
  EXPECT_EQ(yarn->rope_original_context_length, 256);
  EXPECT_EQ(yarn->rope_yarn_beta_fast, 16.0f);
  EXPECT_EQ(yarn->rope_yarn_beta_slow, 1.0f);
  EXPECT_EQ(yarn->DerivedMaxModelLen(), 1024);  // vLLM: the original context times the factor
  for (const Json& none : {Json(nullptr), Json({{"rope_type", "default"}})}) {
    auto config = OverriddenStoriesConfig({{"rope_scaling", none}});
    ASSERT_TRUE(config.ok()) << config.error();
    EXPECT_EQ(config->rope_position_scale, 1.0f);
    EXPECT_EQ(config->rope_yarn_factor, 0.0f);
  }
}

TEST(GgufHfOverridesTest, RefusesWhatHasNoGgufTwinNamingIt) {
  auto untied = OverriddenStoriesConfig({{"tie_word_embeddings", false}});
  ASSERT_FALSE(untied.ok());
  EXPECT_THAT(untied.error(),
              HasSubstr("--hf-overrides: key 'tie_word_embeddings' has no GGUF metadata twin, so "
                        "it cannot override a GGUF file (keys a GGUF file takes: "
                        "max_position_embeddings, rope_theta,"));
  EXPECT_EQ(OverriddenStoriesConfig({{"rope_scaling", {{"rope_type", "llama3"}}}}).error(),
            "--rope-scaling / --hf-overrides: rope_scaling type 'llama3' has no GGUF metadata (a "
            "GGUF file takes "
            "linear and yarn; llama3 and longrope factors are tensors of the file)");
  EXPECT_THAT(
      OverriddenStoriesConfig({{"rope_scaling", {{"type", "dynamic"}, {"factor", 2}}}}).error(),
      HasSubstr(
          "--rope-scaling / --hf-overrides: rope_scaling type 'dynamic' has no GGUF metadata"));
  EXPECT_EQ(OverriddenStoriesConfig({{"rope_scaling",
                                      {{"rope_type", "yarn"},
                                       {"factor", 2},
                                       {"original_max_position_embeddings", 64},
                                       {"attention_factor", 1.5}}}})
                .error(),
            "--rope-scaling / --hf-overrides: rope_scaling.attention_factor has no GGUF metadata "
            "and is not "
            "supported");
  EXPECT_EQ(OverriddenStoriesConfig({{"num_hidden_layers", 2.5}}).error(),
            "--hf-overrides: num_hidden_layers must be a whole number of at least 0");
  EXPECT_EQ(OverriddenStoriesConfig({{"rope_theta", "big"}}).error(),
            "--hf-overrides: rope_theta must be a number");
}

// A Llama config.json with `rope_scaling` (and the architecture `name`).
Expected<ModelConfig> HfConfigWithScaling(const Json& rope_scaling,
                                          const std::string& name = "LlamaForCausalLM") {
  const Json config = {
      {"architectures", {name}},         {"vocab_size", 512},           {"hidden_size", 64},
      {"num_hidden_layers", 2},          {"num_attention_heads", 8},    {"intermediate_size", 128},
      {"max_position_embeddings", 2048}, {"rope_scaling", rope_scaling}};
  HfDerivedTensors derived;
  return ModelConfigFromHfConfig(config, &derived);
}

TEST(HfConfigRopeScalingTest, DerivedMaxModelLenFollowsVllm) {
  EXPECT_EQ(HfConfigWithScaling(nullptr)->DerivedMaxModelLen(), 2048);
  EXPECT_EQ(HfConfigWithScaling({{"rope_type", "linear"}, {"factor", 2.0}})->DerivedMaxModelLen(),
            4096);
  // The legacy "type" key, as transformers still reads it.
  EXPECT_EQ(HfConfigWithScaling({{"type", "linear"}, {"factor", 4}})->DerivedMaxModelLen(), 8192);
  EXPECT_EQ(
      HfConfigWithScaling(
          {{"rope_type", "yarn"}, {"factor", 4.0}, {"original_max_position_embeddings", 1024}})
          ->DerivedMaxModelLen(),
      4096);
  // llama3 scaling keeps max_position_embeddings, as vLLM's derivation does.
  EXPECT_EQ(
      HfConfigWithScaling(
          {{"rope_type", "llama3"}, {"factor", 8.0}, {"original_max_position_embeddings", 1024}})
          ->DerivedMaxModelLen(),
      2048);
  // Gemma 3's context already counts its global layers' linear scaling.
  EXPECT_EQ(HfConfigWithScaling({{"rope_type", "linear"}, {"factor", 8.0}}, "Gemma3ForCausalLM")
                ->DerivedMaxModelLen(),
            2048);
}

TEST(HfConfigRopeScalingTest, UnsupportedTypeIsAnErrorNamingIt) {
  auto dynamic = HfConfigWithScaling({{"rope_type", "dynamic"}, {"factor", 2.0}});
  ASSERT_FALSE(dynamic.ok());
  EXPECT_EQ(dynamic.error(),
            "unsupported rope_scaling type 'dynamic' (supported: linear, llama3, yarn, longrope)");
}

}  // namespace
}  // namespace vllm
