#include "model/pooler_config_flag.h"

#include <gtest/gtest.h>

namespace vllm {
namespace {

TEST(PoolerConfigFlagTest, ReadsVllmsKeysAndReplacesTheFilesPooling) {
  auto flag = ParsePoolerConfigFlag(
      R"({"pooling_type": "MEAN", "normalize": false, "dimensions": 32, "softmax": false,
          "step_tag_id": null, "enable_chunked_processing": null})");
  ASSERT_TRUE(flag.ok()) << flag.error();
  PoolerConfig config;
  config.pooling_type = PoolingType::kLast;
  config.is_matryoshka = true;
  ApplyPoolerConfigFlag(*flag, &config);
  EXPECT_EQ(config.pooling_type, PoolingType::kMean);
  EXPECT_EQ(config.default_normalize, false);
  EXPECT_EQ(config.default_dimensions, 32);
  EXPECT_EQ(config.default_use_activation, false);
  EXPECT_TRUE(config.is_matryoshka);  // keys the flag does not set stay as the files say

  PoolerConfig untouched;
  untouched.pooling_type = PoolingType::kCls;
  auto empty = ParsePoolerConfigFlag("");
  ASSERT_TRUE(empty.ok());
  ApplyPoolerConfigFlag(*empty, &untouched);
  EXPECT_EQ(untouched.pooling_type, PoolingType::kCls);
  EXPECT_FALSE(untouched.default_normalize.has_value());
}

TEST(PoolerConfigFlagTest, RefusesWhatThisBuildCannotDoByName) {
  const std::pair<const char*, const char*> cases[] = {
      {R"({"pooling_type": "STEP"})", "pooling_type STEP (process reward models)"},
      {R"({"pooling_type": "MAX"})", "unknown pooling type 'MAX'"},
      {R"({"step_tag_id": 7})", "step_tag_id is not supported"},
      {R"({"returned_token_ids": [1, 2]})", "returned_token_ids is not supported"},
      {R"({"logit_bias": 0.5})", "logit_bias is not supported"},
      {R"({"max_embed_len": 4096})", "max_embed_len is not supported"},
      {R"({"normalise": true})", "unknown key 'normalise'"},
      {R"({"normalize": "yes"})", "normalize must be true or false"},
      {R"({"dimensions": 0})", "dimensions must be a positive integer"},
      {R"(["MEAN"])", "must be a JSON object"},
      {"{", "must be a JSON object"},
  };
  for (const auto& [text, message] : cases) {
    auto flag = ParsePoolerConfigFlag(text);
    ASSERT_FALSE(flag.ok()) << text;
    EXPECT_NE(flag.error().find(message), std::string::npos) << text << ": " << flag.error();
  }
}

}  // namespace
}  // namespace vllm
