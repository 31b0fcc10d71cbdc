// --pooler-config through the engine on the stories260K decoder run as an embedder: it replaces
// the pooling the model's files give (LAST, normalized) and sets the requests' defaults.
#include <gtest/gtest.h>

#include <cmath>
#include <stdexcept>
#include <string>
#include <vector>

#include "engine/test_engine_args.h"
#include "vllm/llm.h"

namespace vllm {
namespace {

EngineArgs EmbedderArgs(const std::string& pooler_config) {
  EngineArgs args = StoriesArgs();
  args.runner = "pooling";
  args.convert = "embed";
  args.pooler_config = pooler_config;
  return args;
}

constexpr const char* kPrompt = "Once upon a time there was a dog";

TEST(PoolerConfigEngineTest, MeanPoolingIsTheMeanOfTheTokensHiddenStates) {
  LLM all_tokens(EmbedderArgs(R"({"pooling_type": "ALL"})"));
  const auto per_token = all_tokens.Encode({kPrompt})[0];
  const size_t hidden = 64;
  const size_t num_tokens = per_token.prompt_token_ids.size();
  ASSERT_GT(num_tokens, 1u);
  ASSERT_EQ(per_token.outputs.data.size(), num_tokens * hidden);
  std::vector<double> mean(hidden, 0.0);
  for (size_t t = 0; t < num_tokens; ++t) {
    for (size_t i = 0; i < hidden; ++i) mean[i] += per_token.outputs.data[t * hidden + i];
  }
  LLM mean_pooled(EmbedderArgs(R"({"pooling_type": "MEAN", "normalize": false})"));
  const std::vector<float> embedding = mean_pooled.Embed({kPrompt})[0].outputs.embedding;
  ASSERT_EQ(embedding.size(), hidden);
  double norm = 0.0;
  for (size_t i = 0; i < hidden; ++i) {
    EXPECT_NEAR(embedding[i], mean[i] / num_tokens, 1e-4) << i;
    norm += double{embedding[i]} * embedding[i];
  }
  EXPECT_GT(std::abs(std::sqrt(norm) - 1.0), 1e-3);  // normalize: false is the default now

  LLM last_pooled(EmbedderArgs(""));
  EXPECT_NE(last_pooled.Embed({kPrompt})[0].outputs.embedding, embedding);
  // A request's own normalize still wins over the default.
  PoolingParams normalized;
  normalized.normalize = true;
  const std::vector<float> unit = mean_pooled.Embed({kPrompt}, normalized)[0].outputs.embedding;
  double unit_norm = 0.0;
  for (float x : unit) unit_norm += double{x} * x;
  EXPECT_NEAR(std::sqrt(unit_norm), 1.0, 1e-5);
}

TEST(PoolerConfigEngineTest, DefaultDimensionsFollowVllmsMatryoshkaRule) {
  EngineArgs args = EmbedderArgs(R"({"dimensions": 16})");
  args.hf_overrides = R"({"is_matryoshka": true})";
  LLM truncating(args);
  EXPECT_EQ(truncating.Embed({kPrompt})[0].outputs.embedding.size(), 16u);
  LLM not_matryoshka(EmbedderArgs(R"({"dimensions": 16})"));
  try {
    not_matryoshka.Embed({kPrompt});
    ADD_FAILURE() << "dimensions on a model that is not Matryoshka was accepted";
  } catch (const std::invalid_argument& error) {
    EXPECT_NE(std::string(error.what()).find("does not support matryoshka"), std::string::npos);
  }
}

TEST(PoolerConfigEngineTest, RefusesKeysWithNoMeaningHere) {
  try {
    LLM llm(EmbedderArgs(R"({"enable_chunked_processing": true})"));
    ADD_FAILURE() << "enable_chunked_processing was accepted";
  } catch (const std::exception& error) {
    EXPECT_NE(std::string(error.what()).find("enable_chunked_processing is not supported"),
              std::string::npos)
        << error.what();
  }
}

}  // namespace
}  // namespace vllm
