#include "engine/generation_config.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>

namespace vllm {
namespace {

using ::testing::ElementsAre;
using ::testing::HasSubstr;

class GenerationConfigTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = std::filesystem::temp_directory_path() /
           ("generation_config_test_" +
            std::to_string(::testing::UnitTest::GetInstance()->random_seed()) +
            ::testing::UnitTest::GetInstance()->current_test_info()->name());
    std::filesystem::create_directories(dir_ / "other");
    // Llama 3's recommendation, with transformers' own defaults (left out, as vLLM does).
    Write(dir_, R"({"eos_token_id": [128001, 128009], "temperature": 0.6, "top_p": 0.9,
                    "top_k": 50, "repetition_penalty": 1.0, "max_new_tokens": 64,
                    "do_sample": true})");
    Write(dir_ / "other", R"({"eos_token_id": 7, "top_k": 20, "min_p": 0.05})");
  }
  void TearDown() override { std::filesystem::remove_all(dir_); }
  static void Write(const std::filesystem::path& dir, const std::string& json) {
    std::ofstream(dir / "generation_config.json") << json;
  }
  EngineArgs Args(std::string source, std::string overrides = "") const {
    EngineArgs args;
    args.generation_config = std::move(source);
    args.override_generation_config = std::move(overrides);
    return args;
  }

  std::filesystem::path dir_;
};

TEST_F(GenerationConfigTest, AutoTakesTheModelsRecommendationsThatDifferFromTransformers) {
  auto config = LoadGenerationConfig(Args("auto"), dir_.string());
  ASSERT_TRUE(config.ok()) << config.error();
  const SamplingParams& defaults = config->default_sampling_params;
  EXPECT_FLOAT_EQ(defaults.temperature, 0.6f);
  EXPECT_FLOAT_EQ(defaults.top_p, 0.9f);
  EXPECT_EQ(defaults.top_k, SamplingParams().top_k);  // 50 is transformers' default: left out
  EXPECT_EQ(defaults.max_tokens, 64);                 // max_new_tokens
  EXPECT_THAT(config->eos_token_ids, ElementsAre(128001, 128009));
}

TEST_F(GenerationConfigTest, VllmKeepsVllmsDefaultsButStillStopsOnTheModelsEosIds) {
  auto config = LoadGenerationConfig(Args("vllm"), dir_.string());
  ASSERT_TRUE(config.ok()) << config.error();
  EXPECT_FLOAT_EQ(config->default_sampling_params.temperature, SamplingParams().temperature);
  EXPECT_EQ(config->default_sampling_params.max_tokens, SamplingParams().max_tokens);
  EXPECT_THAT(config->eos_token_ids, ElementsAre(128001, 128009));
}

TEST_F(GenerationConfigTest, ADirectoryIsReadInsteadOfTheModels) {
  auto config = LoadGenerationConfig(Args((dir_ / "other").string()), dir_.string());
  ASSERT_TRUE(config.ok()) << config.error();
  EXPECT_EQ(config->default_sampling_params.top_k, 20);
  EXPECT_FLOAT_EQ(config->default_sampling_params.min_p, 0.05f);
  EXPECT_FLOAT_EQ(config->default_sampling_params.temperature, SamplingParams().temperature);
  EXPECT_THAT(config->eos_token_ids, ElementsAre(7));
  // A GGUF model (no directory) takes one too.
  EXPECT_EQ(
      LoadGenerationConfig(Args((dir_ / "other").string()), "")->default_sampling_params.top_k, 20);
}

TEST_F(GenerationConfigTest, OverridesReplaceTheFilesKeysAndNullRemovesOne) {
  auto config = LoadGenerationConfig(
      Args("auto", R"({"temperature": 0.2, "top_p": null, "max_new_tokens": 8, "top_k": 50})"),
      dir_.string());
  ASSERT_TRUE(config.ok()) << config.error();
  const SamplingParams& defaults = config->default_sampling_params;
  EXPECT_FLOAT_EQ(defaults.temperature, 0.2f);
  EXPECT_FLOAT_EQ(defaults.top_p, SamplingParams().top_p);
  EXPECT_EQ(defaults.top_k, 50);  // an override is taken as given
  EXPECT_EQ(defaults.max_tokens, 8);
  // With vllm, the overrides alone.
  auto alone = LoadGenerationConfig(Args("vllm", R"({"repetition_penalty": 1.2})"), dir_.string());
  ASSERT_TRUE(alone.ok()) << alone.error();
  EXPECT_FLOAT_EQ(alone->default_sampling_params.repetition_penalty, 1.2f);
  EXPECT_FLOAT_EQ(alone->default_sampling_params.temperature, SamplingParams().temperature);
}

TEST_F(GenerationConfigTest, RefusesWhatItCannotReadNamingTheFlag) {
  EXPECT_THAT(CheckGenerationConfigArgs(Args((dir_ / "missing").string())).message(),
              HasSubstr("--generation-config " + (dir_ / "missing").string() +
                        ": not auto, vllm or a directory"));
  EXPECT_THAT(CheckGenerationConfigArgs(Args("auto", "[1]")).message(),
              HasSubstr("--override-generation-config must be a JSON object"));
  EXPECT_THAT(CheckGenerationConfigArgs(Args("auto", R"({"temperature": "hot"})")).message(),
              HasSubstr("\"temperature\" must be a number or null"));
  EXPECT_THAT(LoadGenerationConfig(Args("auto", R"({"top_p": 2})"), dir_.string()).error(),
              HasSubstr("top_p must be in (0, 1]"));
  Write(dir_, "[]");
  EXPECT_THAT(LoadGenerationConfig(Args("auto"), dir_.string()).error(),
              HasSubstr("generation_config.json is not a JSON object"));
}

}  // namespace
}  // namespace vllm
