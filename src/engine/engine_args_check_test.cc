#include "engine/engine_args_check.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <cstdlib>

#include "engine/llm_engine.h"
#include "engine/test_engine_args.h"
#include "vllm/llm.h"

namespace vllm {
namespace {

using ::testing::HasSubstr;

TEST(MaxModelLenCheckTest, RefusesMoreThanTheModelUnlessTheEnvironmentAllowsIt) {
  ::unsetenv("VLLM_ALLOW_LONG_MAX_MODEL_LEN");
  EXPECT_TRUE(CheckMaxModelLen(0, 2048).ok());
  EXPECT_TRUE(CheckMaxModelLen(2048, 2048).ok());
  Status refused = CheckMaxModelLen(100000, 2048);
  ASSERT_FALSE(refused.ok());
  EXPECT_THAT(refused.message(),
              HasSubstr("User-specified max_model_len (100000) is greater than the derived "
                        "max_model_len (max_position_embeddings=2048"));
  EXPECT_THAT(refused.message(), HasSubstr("VLLM_ALLOW_LONG_MAX_MODEL_LEN=1"));
  ::setenv("VLLM_ALLOW_LONG_MAX_MODEL_LEN", "1", 1);
  EXPECT_TRUE(CheckMaxModelLen(100000, 2048).ok());
  ::unsetenv("VLLM_ALLOW_LONG_MAX_MODEL_LEN");
}

TEST(MaxModelLenCheckTest, TheEngineRefusesALengthPastTheModelsContext) {
  ::unsetenv("VLLM_ALLOW_LONG_MAX_MODEL_LEN");
  EngineArgs args = StoriesArgs();
  args.max_model_len = 100000;
  auto engine = LLMEngine::Create(args);
  ASSERT_FALSE(engine.ok());
  EXPECT_THAT(engine.error(), HasSubstr("User-specified max_model_len (100000)"));
}

// vLLM's --seed: unseeded requests take seeds drawn in order from a generator it seeds, so a
// fresh engine with the same seed samples the same text.
TEST(EngineSeedTest, UnseededRequestsRepeatUnderTheSameSeed) {
  SamplingParams sampled;
  sampled.temperature = 1.0f;
  sampled.max_tokens = 24;
  auto run = [&](std::optional<int64_t> seed) {
    EngineArgs args = StoriesArgs();
    args.seed = seed;
    LLM llm(args);
    std::vector<std::string> texts;
    for (const auto& output :
         llm.Generate({"Once upon a time", "Once upon a time"}, sampled, false)) {
      texts.push_back(output.outputs[0].text);
    }
    return texts;
  };
  const auto first = run(7);
  EXPECT_EQ(run(7), first);
  EXPECT_NE(run(8), first);
  EXPECT_NE(first[0], first[1]);  // each request draws its own seed
}

}  // namespace
}  // namespace vllm
